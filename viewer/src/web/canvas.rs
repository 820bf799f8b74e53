//! A plotters backend on a `<canvas>`: plotters-canvas, sharp on high-density screens, with
//! text measured by the canvas itself (plotters' own web font code would insert a DOM node and
//! force a layout for every label).

use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};
use plotters_canvas::CanvasBackend;
use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

type Error = <CanvasBackend as DrawingBackend>::ErrorType;

/// A canvas of `size` CSS pixels, drawn at the screen's pixel density.
pub(crate) struct Canvas {
    inner: CanvasBackend,
    context: CanvasRenderingContext2d,
    size: (u32, u32),
}

impl Canvas {
    /// Sizes `el` for `size` CSS pixels and clears it; `None` when it has no 2D context.
    pub(crate) fn new(el: &HtmlCanvasElement, size: (u32, u32)) -> Option<Canvas> {
        let dpr = web_sys::window()?.device_pixel_ratio().clamp(1.0, 4.0);
        el.set_width((size.0 as f64 * dpr).round() as u32);
        el.set_height((size.1 as f64 * dpr).round() as u32);
        let context: CanvasRenderingContext2d = el.get_context("2d").ok()??.dyn_into().ok()?;
        context.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0).ok()?;
        let inner = CanvasBackend::with_canvas_object(el.clone())?;
        Some(Canvas {
            inner,
            context,
            size,
        })
    }
}

impl DrawingBackend for Canvas {
    type ErrorType = Error;

    fn get_size(&self) -> (u32, u32) {
        self.size
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        p: BackendCoord,
        c: BackendColor,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_pixel(p, c)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        ul: BackendCoord,
        br: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_rect(ul, br, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.fill_polygon(vert, style)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Error>> {
        self.inner.draw_text(text, style, pos)
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Error>> {
        self.context.set_font(&format!(
            "{} {}px {}",
            style.style().as_str(),
            style.size(),
            style.family().as_str()
        ));
        let width = self
            .context
            .measure_text(text)
            .map(|m| m.width())
            .unwrap_or(0.0);
        Ok((width.ceil() as u32, style.size().ceil() as u32))
    }
}
