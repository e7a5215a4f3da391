//! A decoded RGB picture, shared by the chart tests: read a PNG the binary wrote, then look at
//! its pixels. Each test module adds the measurements it needs in its own `impl Picture`.

use std::path::Path;

/// A decoded RGB picture.
pub struct Picture {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    rgb: Vec<u8>,
}

impl Picture {
    /// Decodes the PNG at `path`, which must be 8-bit RGB.
    pub fn read(path: &Path) -> Picture {
        let decoder =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut reader = decoder.read_info().unwrap();
        let mut rgb = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut rgb).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        rgb.truncate(info.buffer_size());
        Picture {
            width: info.width as usize,
            height: info.height as usize,
            rgb,
        }
    }

    /// The colour at column `x`, row `y`.
    pub fn at(&self, x: usize, y: usize) -> (u8, u8, u8) {
        let i = (y * self.width + x) * 3;
        (self.rgb[i], self.rgb[i + 1], self.rgb[i + 2])
    }
}
