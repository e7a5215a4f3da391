//! `--html PATH`: results as one self-contained HTML page a reviewer opens without tools, for
//! a run ([`run`]), a sweep ([`sweep`]), a boundary search ([`boundary`]), a phase diagram
//! (a boundary search over two axes, [`phase`]) and a tune ([`tune`]). No network and no external asset: the style, the
//! charts (inline SVG, drawn by [`crate::chart`]), the font their text uses (the binary's
//! DejaVu Sans as a data URL, so the page does not depend on the viewer's fonts) and the data
//! are all in the file.
//!
//! Every page is built on one skeleton ([`Skeleton`]): the same head and style, a heading,
//! the scenario in words, a summary table whose cells carry their column's name
//! (`data-key`), the charts, what reproduces the results (the command, the seed and the
//! config) and the data as blocks a reader's tools can load. The pages work with scripts off,
//! print, and keep their text selectable.
//!
//! Colours are the Okabe–Ito palette ([`crate::chart::palette`]), the charts' own, safe for the common
//! colour-vision deficiencies; the phase diagram's heat map has its own scale, which its page
//! states ([`crate::chart::phase::scale_words`]). Pure: the same inputs give the same bytes.

pub mod boundary;
pub mod phase;
pub mod run;
pub mod sweep;
pub mod tune;

use std::fmt::Write;

use crate::chart::palette;

pub use self::boundary::{render_boundary, BoundaryPage};
pub use self::phase::render_phase;
pub use self::run::{render, summary_rows, HtmlPage, TIMELINE_ATTEMPTS_MAX, TIMELINE_CLIENTS_MAX};
pub use self::sweep::{render_sweep, SweepPage, SWEEP_ROWS_MAX};
pub use self::tune::{render_tune, TunePage};

/// DejaVu Sans, the font the charts are laid out with.
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

const STYLE: &str = r##"
@font-face { font-family: "HerdSans"; src: url(data:font/ttf;base64,FONT) format("truetype"); }
body { font-family: "HerdSans", sans-serif; max-width: 72rem; margin: 1.5rem auto; padding: 0 1rem; color: #1a1a1a; line-height: 1.45; }
svg text { font-family: "HerdSans", sans-serif; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 0.5rem 0; }
th, td { border: 1px solid #bbb; padding: 0.2rem 0.5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.scroll { overflow-x: auto; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; }
pre { background: #f4f4f4; padding: 0.6rem; overflow-x: auto; white-space: pre-wrap; }
.served { color: SERVED; } .refused { color: REFUSED; } .timed_out { color: TIMED_OUT; } .retries { color: RETRIES; }
.key span { margin-right: 1rem; }
@media print { body { max-width: none; margin: 0; } #picker { display: none; } figure, table { break-inside: avoid; } }
"##;

/// Text made safe inside HTML elements and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Data made safe inside a `<script>` block: `</` cannot end it early.
fn script_data(text: &str) -> String {
    text.replace("</", "<\\/")
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A chart's SVG for the page: without its XML declaration.
fn inline_svg(svg: &[u8]) -> String {
    let text = String::from_utf8_lossy(svg);
    match text.find("<svg") {
        Some(at) => text[at..].to_string(),
        None => text.into_owned(),
    }
}

/// `text` with the palette's role names (`SERVED`, `REFUSED`, `TIMED_OUT`, `RETRIES`)
/// replaced by their colours: the pages' style and script take the charts' colours from the
/// one definition.
fn coloured(text: &str) -> String {
    text.replace("TIMED_OUT", &palette::hex(palette::TIMED_OUT))
        .replace("SERVED", &palette::hex(palette::SERVED))
        .replace("REFUSED", &palette::hex(palette::REFUSED))
        .replace("RETRIES", &palette::hex(palette::RETRIES))
}

/// A page being written: the one head, style and order of sections every page shares.
pub struct Skeleton {
    out: String,
}

impl Skeleton {
    /// The head (style, font) and the heading.
    pub fn start(title: &str) -> Skeleton {
        let mut out = String::new();
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"herd-sim {}\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n",
            env!("CARGO_PKG_VERSION"),
            escape(title),
            coloured(STYLE).replace("FONT", &base64(FONT))
        );
        let _ = writeln!(out, "<h1>{}</h1>", escape(title));
        Skeleton { out }
    }

    /// The scenario in words.
    pub fn scenario(&mut self, words: &str) {
        let _ = writeln!(self.out, "<p id=\"scenario\">{}</p>", escape(words));
    }

    /// A section heading.
    pub fn heading(&mut self, text: &str) {
        let _ = writeln!(self.out, "<h2>{}</h2>", escape(text));
    }

    /// A paragraph of text.
    pub fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.out, "<p>{}</p>", escape(text));
    }

    /// A table with id `id`: the header, then one row a record, each cell carrying its
    /// column's name (`data-key`) so a reader's tools find a figure by name.
    pub fn table(&mut self, id: &str, header: &[String], rows: &[Vec<String>]) {
        let _ = writeln!(
            self.out,
            "<div class=\"scroll\"><table id=\"{}\"><thead><tr>",
            escape(id)
        );
        for h in header {
            let _ = write!(self.out, "<th>{}</th>", escape(h));
        }
        self.out.push_str("</tr></thead><tbody>\n");
        for row in rows {
            self.out.push_str("<tr>");
            for (h, cell) in header.iter().zip(row) {
                let _ = write!(
                    self.out,
                    "<td data-key=\"{}\">{}</td>",
                    escape(h),
                    escape(cell)
                );
            }
            self.out.push_str("</tr>\n");
        }
        self.out.push_str("</tbody></table></div>\n");
    }

    /// The charts (SVG documents), each a figure, under a heading when there are any.
    pub fn charts(&mut self, charts: &[Vec<u8>]) {
        if charts.is_empty() {
            return;
        }
        self.out.push_str("<h2>Charts</h2>\n");
        for chart in charts {
            let _ = writeln!(self.out, "<figure>{}</figure>", inline_svg(chart));
        }
    }

    /// What reproduces the page: the seed, the command and the config file, introduced by
    /// `config_intro` (which says how to run it).
    pub fn reproduce(&mut self, seed: u64, command: &str, config_intro: &str, config: &str) {
        self.reproduce_seeds("Seed", &seed.to_string(), command, config_intro, config);
    }

    /// [`Skeleton::reproduce`] where the seeds are text (`label` before them: `Seed`, or
    /// `Seeds` for one a scenario).
    pub fn reproduce_seeds(
        &mut self,
        label: &str,
        seeds: &str,
        command: &str,
        config_intro: &str,
        config: &str,
    ) {
        self.out.push_str("<h2>Reproduce</h2>\n");
        let _ = writeln!(
            self.out,
            "<p>{} <span id=\"seed\">{}</span>. The command:</p>\n<pre id=\"command\">{}</pre>",
            escape(label),
            escape(seeds),
            escape(command)
        );
        let _ = writeln!(
            self.out,
            "<p>{config_intro}</p>\n<pre id=\"config\">{}</pre>",
            escape(config)
        );
    }

    /// The palette and the version.
    pub fn colophon(&mut self, colours: &str) {
        self.colophon_colours(&format!(
            "the Okabe–Ito palette ({colours}), safe for the common colour-vision deficiencies"
        ));
    }

    /// The colours as `words` say them (markup, escaped already), and the version.
    pub fn colophon_colours(&mut self, words: &str) {
        let _ = writeln!(
            self.out,
            "<p>Colours: {words}. Written by herd-sim {}.</p>",
            env!("CARGO_PKG_VERSION")
        );
    }

    /// A data block: `text` in a `<script>` of type `mime`, which no browser runs.
    pub fn data(&mut self, id: &str, mime: &str, text: &str) {
        let _ = writeln!(
            self.out,
            "<script type=\"{mime}\" id=\"{id}\">\n{}</script>",
            script_data(text)
        );
    }

    /// Markup the caller built (escaped already).
    pub fn raw(&mut self, markup: &str) {
        self.out.push_str(markup);
    }

    /// The closed page.
    pub fn finish(mut self) -> String {
        self.out.push_str("</body>\n</html>\n");
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_follows_the_rfc_test_vectors() {
        // RFC 4648 §10.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
    }

    #[test]
    fn text_and_data_are_escaped() {
        assert_eq!(escape("b<&\""), "b&lt;&amp;&quot;");
        assert_eq!(script_data("a</script>"), "a<\\/script>");
        let mut page = Skeleton::start("t");
        page.table("x", &["a<".to_string()], &[vec!["1&".to_string()]]);
        let text = page.finish();
        assert!(text.contains("<th>a&lt;</th>"), "{text}");
        assert!(
            text.contains("<td data-key=\"a&lt;\">1&amp;</td>"),
            "{text}"
        );
        assert!(text.ends_with("</body>\n</html>\n"));
    }
}
