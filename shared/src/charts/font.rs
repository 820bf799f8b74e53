//! The font of natively drawn charts (feature `png`): DejaVu Sans, embedded so a machine without
//! system fonts still draws text, registered with plotters before the first chart is drawn.

use std::sync::OnceLock;

use plotters::style::{FontStyle, register_font};

use super::ChartError;

/// The family every chart asks for; see `draw.rs`.
const FAMILY: &str = "sans-serif";
pub(super) const REGULAR: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
pub(super) const BOLD: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-Bold.ttf");

/// Registers the embedded font once per process; later calls only return the first outcome.
pub(crate) fn register() -> Result<(), ChartError> {
    static DONE: OnceLock<Result<(), ChartError>> = OnceLock::new();
    DONE.get_or_init(|| {
        for (style, bytes) in [(FontStyle::Normal, REGULAR), (FontStyle::Bold, BOLD)] {
            register_font(FAMILY, style, bytes).map_err(|_| {
                ChartError(format!(
                    "the embedded {} font is unreadable",
                    style.as_str()
                ))
            })?;
        }
        Ok(())
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use plotters::style::IntoFont;

    #[test]
    fn text_is_measured_with_the_embedded_font() {
        super::register().unwrap();
        let font = ("sans-serif", 20).into_font();
        let (w, h) = font.box_size("Output throughput").unwrap();
        assert!((120..260).contains(&w) && (10..30).contains(&h), "{w}x{h}");
        let bold = ("sans-serif", 20, plotters::style::FontStyle::Bold).into_font();
        assert!(bold.box_size("Output throughput").unwrap().0 > w);
    }
}
