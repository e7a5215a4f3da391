//! Tests of the module root: the output-format rule every chart flag shares.

use std::path::Path;

use super::ImageFormat::{self, Png, Svg};

#[test]
fn the_extension_picks_the_format_or_is_refused_naming_flag_value_and_extensions() {
    let pick = |flag, path: &str, accepted: &[ImageFormat]| {
        ImageFormat::for_output(flag, Path::new(path), accepted).map_err(|e| e.to_string())
    };
    assert_eq!(pick("--out", "p.svg", &[Png, Svg]), Ok(Svg));
    assert_eq!(pick("--out", "p.SVG", &[Png, Svg]), Ok(Svg));
    assert_eq!(pick("--out", "dir.v2/p.png", &[Png, Svg]), Ok(Png));
    assert_eq!(pick("--out", "p", &[Png, Svg]), Ok(Png));
    assert_eq!(pick("--png", "out", &[Png]), Ok(Png));
    assert_eq!(pick("--svg", "out", &[Svg]), Ok(Svg));
    assert_eq!(
        pick("--png", "out.svg", &[Png]),
        Err(
            "invalid --png: out.svg; accepted extensions: .png, or none for PNG; for SVG use --svg"
                .into()
        )
    );
    assert_eq!(
        pick("--svg", "a/out.png", &[Svg]),
        Err("invalid --svg: a/out.png; accepted extensions: .svg, or none for SVG; for PNG use --png".into())
    );
    assert_eq!(
        pick("--png", "out.jpg", &[Png]),
        Err("invalid --png: out.jpg; accepted extensions: .png, or none for PNG".into())
    );
    assert_eq!(
        pick("--out", "p.jpg", &[Png, Svg]),
        Err("invalid --out: p.jpg; accepted extensions: .png, .svg (the extension picks the format), or none for PNG".into())
    );
}
