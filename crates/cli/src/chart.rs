//! PNG bar charts, for `rollsim bench`: a row per bar, a label and a value beside each, drawn
//! with an 8x8 bitmap font and encoded by the `png` crate.

use std::io::Write;

/// One bar: its label, the value written after it, its length as a fraction of the longest,
/// and its colour.
pub struct Bar {
    pub label: String,
    pub value: String,
    pub fraction: f64,
    pub color: [u8; 3],
}

const SCALE: usize = 2;
const GLYPH: usize = 8 * SCALE;
const ROW: usize = GLYPH + 10;
const MARGIN: usize = 16;
const BAR_WIDTH: usize = 480;

struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: usize, height: usize) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![255; 3 * width * height],
        }
    }

    fn rect(&mut self, x: usize, y: usize, w: usize, h: usize, color: [u8; 3]) {
        for yy in y..(y + h).min(self.height) {
            for xx in x..(x + w).min(self.width) {
                let at = 3 * (yy * self.width + xx);
                self.pixels[at..at + 3].copy_from_slice(&color);
            }
        }
    }

    /// Draws ASCII `text` at (x, y), top left; other characters as `?`.
    fn text(&mut self, x: usize, y: usize, text: &str, color: [u8; 3]) {
        for (k, c) in text.chars().enumerate() {
            let code = if c.is_ascii() {
                c as usize
            } else {
                '?' as usize
            };
            let glyph = font8x8::legacy::BASIC_LEGACY[code];
            for (row, bits) in glyph.iter().enumerate() {
                for col in 0..8 {
                    if bits >> col & 1 == 1 {
                        let px = x + k * GLYPH + col * SCALE;
                        self.rect(px, y + row * SCALE, SCALE, SCALE, color);
                    }
                }
            }
        }
    }
}

/// Draws `bars` under `title` and writes the PNG to `out`.
pub fn bar_chart(title: &str, bars: &[Bar], out: &mut impl Write) -> std::io::Result<()> {
    let label_chars = bars.iter().map(|b| b.label.len()).max().unwrap_or(0);
    let value_chars = bars.iter().map(|b| b.value.len()).max().unwrap_or(0);
    let label_width = label_chars * GLYPH;
    let width = (2 * MARGIN + label_width + MARGIN + BAR_WIDTH + MARGIN + value_chars * GLYPH)
        .max(2 * MARGIN + title.len() * GLYPH);
    let height = 2 * MARGIN + 2 * ROW + bars.len() * ROW;
    let mut c = Canvas::new(width, height);
    let ink = [30, 30, 30];
    c.text(MARGIN, MARGIN, title, ink);
    let bar_x = MARGIN + label_width + MARGIN;
    for (i, b) in bars.iter().enumerate() {
        let y = MARGIN + 2 * ROW + i * ROW;
        c.text(MARGIN, y + 4, &b.label, ink);
        let len = (b.fraction.clamp(0.0, 1.0) * BAR_WIDTH as f64).round() as usize;
        c.rect(bar_x, y + 2, len.max(1), ROW - 4, b.color);
        c.text(bar_x + BAR_WIDTH + MARGIN, y + 4, &b.value, ink);
    }
    let mut encoder = png::Encoder::new(out, width as u32, height as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(std::io::Error::other)?;
    writer
        .write_image_data(&c.pixels)
        .map_err(std::io::Error::other)?;
    writer.finish().map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_png_of_the_right_size_with_the_bars_drawn() {
        let bars = [
            Bar {
                label: "cpu".into(),
                value: "10 /s".into(),
                fraction: 1.0,
                color: [0, 0, 200],
            },
            Bar {
                label: "gpu".into(),
                value: "5 /s".into(),
                fraction: 0.5,
                color: [200, 0, 0],
            },
        ];
        let mut bytes = Vec::new();
        bar_chart("speed", &bars, &mut bytes).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let (w, h) = (info.width as usize, info.height as usize);
        assert_eq!(h, 2 * MARGIN + 4 * ROW);
        // The middle of each bar has its colour: the full one and the half one.
        let pixel = |x: usize, y: usize| &buf[3 * (y * w + x)..3 * (y * w + x) + 3];
        let bar_x = MARGIN + 3 * GLYPH + MARGIN;
        let mid = |i: usize| MARGIN + 2 * ROW + i * ROW + ROW / 2;
        assert_eq!(pixel(bar_x + BAR_WIDTH - 2, mid(0)), [0, 0, 200]);
        assert_eq!(pixel(bar_x + BAR_WIDTH / 2 - 2, mid(1)), [200, 0, 0]);
        assert_eq!(pixel(bar_x + BAR_WIDTH / 2 + 4, mid(1)), [255, 255, 255]);
    }
}
