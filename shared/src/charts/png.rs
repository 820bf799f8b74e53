//! [`Plot`] → PNG (feature `png`): drawn by the same [`draw`] as every other picture, on plotters'
//! bitmap backend, with the embedded font.

use plotters::backend::{BitMapBackend, RGBPixel};
use plotters::prelude::IntoDrawingArea;

use super::plot::Plot;
use super::{ChartError, Theme, draw};

/// Largest width or height accepted, pixels (a 3-byte pixel buffer of 8000 × 8000 is 192 MB).
pub const MAX_SIDE: u32 = 8000;

/// The plot as a PNG image of `size` pixels (8-bit RGB).
pub fn png(plot: &Plot, theme: &Theme, size: (u32, u32)) -> Result<Vec<u8>, ChartError> {
    let (w, h) = size;
    if !(1..=MAX_SIDE).contains(&w) || !(1..=MAX_SIDE).contains(&h) {
        return Err(ChartError(format!(
            "{w}x{h} pixels is not a size between 1 and {MAX_SIDE} on each side"
        )));
    }
    let mut pixels = vec![0u8; 3 * w as usize * h as usize];
    {
        let backend = BitMapBackend::<RGBPixel>::with_buffer_and_format(&mut pixels, size)
            .map_err(|e| ChartError(e.to_string()))?;
        let root = backend.into_drawing_area();
        draw(&root, plot, theme)?;
        root.present()?;
    }
    encode(&pixels, size).map_err(|e| ChartError(format!("PNG encoding failed: {e}")))
}

fn encode(rgb: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::{ChartKind, ChartRun, build, run_color};
    use crate::curves::tests::bundle;

    fn decode(bytes: &[u8]) -> (png::OutputInfo, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (info, buf)
    }

    #[test]
    fn png_has_the_size_asked_and_the_run_color() {
        let a = bundle("kpro5");
        let runs = [ChartRun {
            label: "kpro5",
            color: run_color(0),
            bundle: &a,
        }];
        let plot = build(ChartKind::OutputTokS, &runs);
        let bytes = png(&plot, &Theme::DARK, (640, 360)).unwrap();
        let (info, rgb) = decode(&bytes);
        assert_eq!((info.width, info.height), (640, 360));
        let c = run_color(0);
        assert!(rgb.chunks(3).any(|p| p == [c.0, c.1, c.2]), "no line drawn");
        let bg = Theme::DARK.background;
        assert_eq!(&rgb[..3], [bg.0, bg.1, bg.2], "the theme's background");
    }

    #[test]
    fn sizes_out_of_range_are_refused() {
        let plot = build(ChartKind::Tradeoff, &[]);
        assert!(png(&plot, &Theme::LIGHT, (0, 10)).is_err());
        assert!(png(&plot, &Theme::LIGHT, (10, MAX_SIDE + 1)).is_err());
    }
}
