//! The one palette of every chart and page: Okabe and Ito's eight colours ("Color Universal
//! Design", Okabe & Ito 2008, <https://jfly.uni-koeln.de/color/>), chosen to stay apart under
//! the common colour-vision deficiencies (protanopia, deuteranopia, tritanopia). Each role has
//! one colour everywhere: retries and started calls blue, served and succeeded bluish green,
//! refused vermillion, timed out reddish purple; a line chart's lines take [`LINES`] in order.
//! Greys (axes, grid, markers, points off a frontier) are neutral and not part of it.

/// An sRGB colour as bytes.
pub type Rgb = (u8, u8, u8);

/// Black.
pub const BLACK: Rgb = (0, 0, 0);
/// Orange `#E69F00`.
pub const ORANGE: Rgb = (230, 159, 0);
/// Sky blue `#56B4E9`.
pub const SKY_BLUE: Rgb = (86, 180, 233);
/// Bluish green `#009E73`.
pub const BLUISH_GREEN: Rgb = (0, 158, 115);
/// Yellow `#F0E442`.
pub const YELLOW: Rgb = (240, 228, 66);
/// Blue `#0072B2`.
pub const BLUE: Rgb = (0, 114, 178);
/// Vermillion `#D55E00`.
pub const VERMILLION: Rgb = (213, 94, 0);
/// Reddish purple `#CC79A7`.
pub const REDDISH_PURPLE: Rgb = (204, 121, 167);

/// The colours of a line chart's lines, in order (then again from the first): yellow, the
/// palette's faintest on white, last.
pub const LINES: [Rgb; 8] = [
    BLUE,
    ORANGE,
    BLUISH_GREEN,
    VERMILLION,
    REDDISH_PURPLE,
    SKY_BLUE,
    BLACK,
    YELLOW,
];

/// Retries, and calls started.
pub const RETRIES: Rgb = BLUE;
/// Requests served, calls succeeded.
pub const SERVED: Rgb = BLUISH_GREEN;
/// Requests refused.
pub const REFUSED: Rgb = VERMILLION;
/// Attempts timed out.
pub const TIMED_OUT: Rgb = REDDISH_PURPLE;

/// `#RRGGBB`, as plotters' SVG and the HTML pages write a colour.
pub fn hex((r, g, b): Rgb) -> String {
    format!("#{r:02X}{g:02X}{b:02X}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_colours_are_okabe_and_itos() {
        // Okabe & Ito's table of RGB values, as published.
        assert_eq!(hex(ORANGE), "#E69F00");
        assert_eq!(hex(SKY_BLUE), "#56B4E9");
        assert_eq!(hex(BLUISH_GREEN), "#009E73");
        assert_eq!(hex(YELLOW), "#F0E442");
        assert_eq!(hex(BLUE), "#0072B2");
        assert_eq!(hex(VERMILLION), "#D55E00");
        assert_eq!(hex(REDDISH_PURPLE), "#CC79A7");
        assert_eq!(hex(BLACK), "#000000");
        // Every line colour is distinct.
        for (i, a) in LINES.iter().enumerate() {
            assert!(!LINES[i + 1..].contains(a));
        }
    }
}
