//! [`Plot`] → pixels on any plotters backend, and back: where each mark landed.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{AxisKind, format_value, linear_ticks, widen};
use super::plot::{ErrorBar, LegendEntry, Line, Mark, MarkStyle, Plot, PointRef, Rgb, Rule};
use super::{ChartError, Theme};
use crate::text::inert;

/// Where a mark was drawn, in backend pixels, and what hovering it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub x: i32,
    pub y: i32,
    pub text: String,
    pub source: Option<PointRef>,
}

/// The hit after (or, with `forward` false, before) `current` when points are walked left to
/// right, bottom to top within a column: how the keyboard moves between points. From no current
/// point, the walk starts at the first (or last); it stops at either end. `None` without hits.
pub fn step(hits: &[Hit], current: Option<usize>, forward: bool) -> Option<usize> {
    let mut order: Vec<usize> = (0..hits.len()).collect();
    order.sort_by_key(|&i| (hits[i].x, std::cmp::Reverse(hits[i].y)));
    let at = current.and_then(|c| order.iter().position(|&i| i == c));
    let next = match (at, forward) {
        (None, true) => 0,
        (None, false) => order.len().checked_sub(1)?,
        (Some(p), true) => (p + 1).min(order.len() - 1),
        (Some(p), false) => p.saturating_sub(1),
    };
    order.get(next).copied()
}

/// The hit nearest to `(x, y)` within `max_px` pixels.
pub fn nearest(hits: &[Hit], x: i32, y: i32, max_px: i32) -> Option<&Hit> {
    let d2 = |h: &Hit| {
        let (dx, dy) = ((h.x - x) as i64, (h.y - y) as i64);
        dx * dx + dy * dy
    };
    let max = (max_px as i64).pow(2);
    hits.iter().filter(|h| d2(h) <= max).min_by_key(|h| d2(h))
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for ChartError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        ChartError(e.to_string())
    }
}

fn rgb(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

fn font<'a>(size: u32, c: Rgb) -> TextStyle<'a> {
    ("sans-serif", size).into_font().color(&rgb(c))
}

const PAD: i32 = 14;

/// Draws `plot` filling `root`; returns a [`Hit`] per mark. With the `png` feature the embedded
/// font is registered first, since plotters then measures text with registered fonts only.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    plot: &Plot,
    theme: &Theme,
) -> Result<Vec<Hit>, ChartError> {
    #[cfg(feature = "png")]
    super::font::register()?;
    root.fill(&rgb(theme.background))?;
    // Natively the bold face has to be chosen when the font is made (`FontDesc::style` keeps the
    // regular face's glyphs); in the browser the style is CSS either way, and that build keeps
    // its form so the committed viewer stays byte-identical.
    #[cfg(not(feature = "png"))]
    let title = ("sans-serif", 16)
        .into_font()
        .style(FontStyle::Bold)
        .color(&rgb(theme.text));
    #[cfg(feature = "png")]
    let title = ("sans-serif", 16, FontStyle::Bold)
        .into_font()
        .color(&rgb(theme.text));
    root.draw(&Text::new(
        inert(&plot.title).into_owned(),
        (PAD, 10),
        title,
    ))?;
    let (w, _) = root.dim_in_pixel();
    let legend_bottom = draw_legend(root, &plot.legend, theme, 36, w as i32)?;
    let (_, area) = root.split_vertically(legend_bottom + 6);
    match plot.bounds() {
        Some(bounds) => draw_data(root, &area, plot, theme, bounds),
        None => {
            let (aw, ah) = area.dim_in_pixel();
            let style = font(14, theme.muted).pos(Pos::new(HPos::Center, VPos::Center));
            let at = (aw as i32 / 2, ah as i32 / 2);
            area.draw(&Text::new(inert(&plot.empty_note).into_owned(), at, style))?;
            Ok(Vec::new())
        }
    }
}

/// Legend entries left to right, wrapping; returns the y below the last row.
fn draw_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    legend: &[LegendEntry],
    theme: &Theme,
    top: i32,
    width: i32,
) -> Result<i32, ChartError> {
    const ROW: i32 = 20;
    const SAMPLE: i32 = 22;
    let style = font(13, theme.text);
    let (mut x, mut y) = (PAD, top);
    for e in legend {
        let (tw, _) = root.estimate_text_size(&inert(&e.text), &style)?;
        let need = SAMPLE + 6 + tw as i32;
        if x > PAD && x + need > width - PAD {
            x = PAD;
            y += ROW;
        }
        let mid = y + 8;
        match e.mark {
            Some(m) => draw_mark(root, (x + SAMPLE / 2, mid), m, e.color, theme)?,
            None => draw_path(root, vec![(x, mid), (x + SAMPLE, mid)], e.color, e.dashed)?,
        }
        let centered = style.clone().pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(
            inert(&e.text).into_owned(),
            (x + SAMPLE + 6, mid),
            centered,
        ))?;
        x += need + 16;
    }
    Ok(if legend.is_empty() { top } else { y + ROW })
}

fn draw_path<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    points: Vec<(i32, i32)>,
    color: Rgb,
    dashed: bool,
) -> Result<(), ChartError> {
    let style = rgb(color).stroke_width(2);
    if dashed {
        area.draw(&DashedPathElement::new(points, 6, 4, style))?;
    } else {
        area.draw(&PathElement::new(points, style))?;
    }
    Ok(())
}

/// One mark at backend pixel `at`, in the look its style asks for.
fn draw_mark<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    style: MarkStyle,
    color: Rgb,
    theme: &Theme,
) -> Result<(), ChartError> {
    let c = rgb(color);
    match style {
        MarkStyle::Dot => area.draw(&Circle::new(at, 4, c.filled()))?,
        MarkStyle::Small => area.draw(&Circle::new(at, 3, c.filled()))?,
        MarkStyle::Flagged => {
            area.draw(&Circle::new(at, 8, rgb(theme.warn).stroke_width(2)))?;
            area.draw(&TriangleMarker::new(at, 6, c.filled()))?;
        }
        MarkStyle::Predicted => {
            area.draw(&Circle::new(at, 5, rgb(theme.background).filled()))?;
            area.draw(&Circle::new(at, 5, c.stroke_width(2)))?;
        }
        MarkStyle::Cross => area.draw(&Cross::new(at, 4, c.stroke_width(2)))?,
        MarkStyle::Square => {
            let (x, y) = at;
            area.draw(&Rectangle::new(
                [(x - 4, y - 4), (x + 4, y + 4)],
                c.filled(),
            ))?;
        }
        MarkStyle::Triangle => area.draw(&TriangleMarker::new(at, 6, c.filled()))?,
        MarkStyle::Bar => {
            let (x, y) = at;
            let style = c.stroke_width(1);
            area.draw(&PathElement::new(vec![(x, y - 7), (x, y + 7)], style))?;
            for end in [y - 7, y + 7] {
                area.draw(&PathElement::new(vec![(x - 4, end), (x + 4, end)], style))?;
            }
        }
        MarkStyle::Band => {
            let (x, y) = at;
            let m = theme.muted;
            let shade = RGBAColor(m.0, m.1, m.2, 0.16);
            area.draw(&Rectangle::new(
                [(x - 10, y - 6), (x + 10, y + 6)],
                shade.filled(),
            ))?;
            area.draw(&PathElement::new(vec![(x - 10, y), (x + 10, y)], rgb(m)))?;
        }
        MarkStyle::Diamond => {
            let (x, y) = at;
            let corners = vec![(x, y - 5), (x + 5, y), (x, y + 5), (x - 5, y)];
            area.draw(&Polygon::new(corners, c.filled()))?;
        }
    }
    Ok(())
}

/// Axes, rules, lines and marks over the data's bounds.
fn draw_data<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    plot: &Plot,
    theme: &Theme,
    ((x0, x1), (y0, y1)): ((f64, f64), (f64, f64)),
) -> Result<Vec<Hit>, ChartError> {
    let xk = plot.x_kind;
    let (px0, px1) = xk.plot_range(x0, x1);
    let (ylo, yhi) = y_range(y0, y1);
    let x = TickedAxis {
        range: px0..px1,
        ticks: x_ticks(xk, (x0, x1), (px0, px1)),
    };
    let y = TickedAxis {
        range: ylo..yhi,
        ticks: linear_ticks(ylo, yhi, 6),
    };
    let chart = draw_axes(area, plot, theme, x, y)?;
    let to_px = |x: f64, y: f64| chart.backend_coord(&(xk.to_plot(x), y));
    if let Some(b) = &plot.band {
        draw_band(
            root,
            b,
            theme,
            |y| chart.backend_coord(&(px0, y)),
            |y| chart.backend_coord(&(px1, y)),
        )?;
    }
    draw_rules(root, &plot.rules, theme, to_px, (ylo, yhi))?;
    draw_lines(root, &plot.lines, to_px)?;
    draw_bars(root, &plot.bars, to_px)?;
    draw_marks(root, &plot.marks, theme, to_px)
}

/// The x axis's ticks in plot units, for data spanning `x0..x1` drawn over the plot range
/// `px0..px1`: evenly spaced on a linear axis, the axis kind's own (powers of two, 1-2-5)
/// inside the range on a log one.
fn x_ticks(xk: AxisKind, (x0, x1): (f64, f64), (px0, px1): (f64, f64)) -> Vec<f64> {
    match xk {
        AxisKind::Linear => linear_ticks(px0, px1, 8),
        _ => xk
            .ticks(x0, x1)
            .into_iter()
            .map(|t| xk.to_plot(t))
            .filter(|t| (px0..=px1).contains(t))
            .collect(),
    }
}

/// The chart over `area` with axes `x` and `y` (in plot units), its grid, tick labels and
/// axis names drawn; the chart maps data to pixels for what is drawn on it.
fn draw_axes<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    plot: &Plot,
    theme: &Theme,
    x: TickedAxis,
    y: TickedAxis,
) -> Result<ChartContext<'a, DB, Cartesian2d<TickedAxis, TickedAxis>>, ChartError> {
    let xk = plot.x_kind;
    let mut chart = ChartBuilder::on(area)
        .margin_left(8)
        .margin_right(24)
        .margin_top(6)
        .margin_bottom(4)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x, y)?;
    let fmt_x = |v: &f64| match xk {
        AxisKind::Linear => format_value(*v),
        _ => xk.format(2f64.powf(*v)),
    };
    let fmt_y = |v: &f64| format_value(*v);
    chart
        .configure_mesh()
        .bold_line_style(rgb(theme.grid))
        .light_line_style(rgb(theme.background))
        .axis_style(rgb(theme.muted))
        .label_style(font(12, theme.muted))
        .axis_desc_style(font(13, theme.text))
        .x_desc(inert(&plot.x_label).into_owned())
        .y_desc(inert(&plot.y_label).into_owned())
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y)
        .draw()?;
    Ok(chart)
}

/// Each rule: a dashed vertical line from `yhi` down to `ylo`, its label at its top left.
fn draw_rules<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    rules: &[Rule],
    theme: &Theme,
    to_px: impl Fn(f64, f64) -> (i32, i32),
    (ylo, yhi): (f64, f64),
) -> Result<(), ChartError> {
    for r in rules {
        let (top, bottom) = (to_px(r.x, yhi), to_px(r.x, ylo));
        root.draw(&DashedPathElement::new(
            vec![top, bottom],
            4,
            4,
            rgb(theme.muted).stroke_width(1),
        ))?;
        let style = font(11, theme.muted).pos(Pos::new(HPos::Right, VPos::Top));
        root.draw(&Text::new(
            inert(&r.text).into_owned(),
            (top.0 - 4, top.1 + 4),
            style,
        ))?;
    }
    Ok(())
}

/// Each line through its finite points; a line of fewer than two is not drawn.
fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    lines: &[Line],
    to_px: impl Fn(f64, f64) -> (i32, i32),
) -> Result<(), ChartError> {
    for l in lines {
        let px: Vec<(i32, i32)> = l
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|&(x, y)| to_px(x, y))
            .collect();
        if px.len() > 1 {
            draw_path(root, px, l.color, l.dashed)?;
        }
    }
    Ok(())
}

/// Each error bar: a vertical line from `lo` to `hi` with a short cap at both ends.
fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    bars: &[ErrorBar],
    to_px: impl Fn(f64, f64) -> (i32, i32),
) -> Result<(), ChartError> {
    for b in bars {
        let (lo, hi) = (to_px(b.x, b.lo), to_px(b.x, b.hi));
        let style = rgb(b.color).stroke_width(1);
        root.draw(&PathElement::new(vec![lo, hi], style))?;
        for end in [lo, hi] {
            root.draw(&PathElement::new(
                vec![(end.0 - 4, end.1), (end.0 + 4, end.1)],
                style,
            ))?;
        }
    }
    Ok(())
}

/// The shaded band across the plot area, its line, and its label at the top right.
fn draw_band<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    b: &super::plot::Band,
    theme: &Theme,
    left: impl Fn(f64) -> (i32, i32),
    right: impl Fn(f64) -> (i32, i32),
) -> Result<(), ChartError> {
    let m = theme.muted;
    let shade = RGBAColor(m.0, m.1, m.2, 0.16);
    root.draw(&Rectangle::new([left(b.hi), right(b.lo)], shade.filled()))?;
    if let Some(y) = b.line {
        root.draw(&PathElement::new(
            vec![left(y), right(y)],
            rgb(theme.muted).stroke_width(1),
        ))?;
    }
    if !b.text.is_empty() {
        let style = font(11, theme.muted).pos(Pos::new(HPos::Right, VPos::Bottom));
        let at = right(b.hi);
        root.draw(&Text::new(
            inert(&b.text).into_owned(),
            (at.0 - 4, at.1 - 2),
            style,
        ))?;
    }
    Ok(())
}

fn draw_marks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    marks: &[Mark],
    theme: &Theme,
    to_px: impl Fn(f64, f64) -> (i32, i32),
) -> Result<Vec<Hit>, ChartError> {
    let mut hits = Vec::with_capacity(marks.len());
    // Tags that would overprint one already written are left out; hovering still tells.
    let mut tagged: Vec<(i32, i32)> = Vec::new();
    // A value that is not a number has no place on the chart (the bounds leave it out too).
    for m in marks.iter().filter(|m| m.x.is_finite() && m.y.is_finite()) {
        let at = to_px(m.x, m.y);
        draw_mark(root, at, m.style, m.color, theme)?;
        let free = !tagged
            .iter()
            .any(|t| (t.0 - at.0).abs() < 22 && (t.1 - at.1).abs() < 12);
        if let Some(tag) = m.tag.as_ref().filter(|_| free) {
            let style = font(11, theme.text).pos(Pos::new(HPos::Left, VPos::Bottom));
            root.draw(&Text::new(
                inert(tag).into_owned(),
                (at.0 + 6, at.1 - 5),
                style,
            ))?;
            tagged.push(at);
        }
        hits.push(Hit {
            x: at.0,
            y: at.1,
            text: m.hover.clone(),
            source: m.source,
        });
    }
    Ok(hits)
}

/// A linear f64 axis whose grid lines and labels sit exactly at given ticks (in plot units).
/// The ticks are computed here, never by plotters, whose key-point search does not end on a
/// range near `f64::MAX` or one narrower than its values' resolution.
struct TickedAxis {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Ranged for TickedAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    /// In halves, so a range of nearly `2 × f64::MAX` maps without overflowing; a value far
    /// outside the range lands far outside the pixels (saturated), never at NaN.
    fn map(&self, value: &f64, (p0, p1): (i32, i32)) -> i32 {
        let (lo, hi) = (self.range.start, self.range.end);
        let t = (value / 2.0 - lo / 2.0) / (hi / 2.0 - lo / 2.0);
        if !t.is_finite() {
            return if t > 0.0 { p1 } else { p0 };
        }
        let px = f64::from(p1 - p0) * t.clamp(-100.0, 100.0);
        // Rounded as plotters rounds, so pixels land where they always did.
        p0 + if p1 > p0 {
            (px + 1e-3).floor()
        } else {
            (px - 1e-3).ceil()
        } as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// From zero for non-negative data, with headroom above the top value; data below zero gets
/// the same headroom at both ends. Finite and wider than zero for any data (headroom past
/// `f64::MAX` stops there).
fn y_range(lo: f64, hi: f64) -> (f64, f64) {
    if lo < 0.0 {
        // In parts, so a span of nearly 2 × f64::MAX does not overflow.
        let pad = if hi > lo {
            hi * 0.08 - lo * 0.08
        } else {
            lo.abs() * 0.5
        };
        return widen(lo - pad, hi + pad);
    }
    let hi = if hi > 0.0 { hi * 1.08 } else { 1.0 };
    widen(0.0, hi)
}

/// The plot as an SVG document of `size` pixels.
pub fn svg(plot: &Plot, theme: &Theme, size: (u32, u32)) -> Result<String, ChartError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        draw(&root, plot, theme)?;
        root.present()?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keyboard_walks_points_left_to_right_and_stops_at_the_ends() {
        let hit = |x, y| Hit {
            x,
            y,
            text: format!("{x},{y}"),
            source: None,
        };
        // Drawn run by run; walked by position: (10, 50), (10, 20), (30, 40), (60, 10).
        let hits = [hit(30, 40), hit(10, 20), hit(60, 10), hit(10, 50)];
        let walk = |from, forward| step(&hits, from, forward);
        assert_eq!(walk(None, true), Some(3));
        assert_eq!(walk(Some(3), true), Some(1));
        assert_eq!(walk(Some(1), true), Some(0));
        assert_eq!(walk(Some(0), true), Some(2));
        assert_eq!(walk(Some(2), true), Some(2), "stops at the right end");
        assert_eq!(walk(Some(3), false), Some(3), "stops at the left end");
        assert_eq!(walk(None, false), Some(2));
        assert_eq!(step(&[], None, true), None);
    }
    use crate::charts::{ChartKind, ChartRun, build, run_color};
    use crate::curves::tests::bundle;

    #[test]
    fn svg_of_every_chart_has_its_title_and_marks() {
        let (mut a, mut b) = (bundle("kpro5"), bundle("kpro6"));
        // Chunks of 2 and 3 tokens: a speculative server, so the acceptance chart has marks.
        for p in a
            .sweeps
            .iter_mut()
            .chain(&mut b.sweeps)
            .flat_map(|s| &mut s.points)
        {
            let mut t = crate::bundle::ChunkTokens::new();
            t.add(2);
            t.add(3);
            p.chunk_tokens = Some(t);
        }
        let runs = [
            ChartRun {
                label: "kpro5",
                color: run_color(0),
                bundle: &a,
            },
            ChartRun {
                label: "kpro6",
                color: run_color(1),
                bundle: &b,
            },
        ];
        for kind in ChartKind::THROUGHPUT.into_iter().chain(ChartKind::CONTEXT) {
            let plot = build(kind, &runs);
            let doc = svg(&plot, &Theme::LIGHT, (720, 420)).unwrap();
            assert!(doc.starts_with("<svg"), "{kind:?}");
            assert!(doc.contains(&plot.title), "{kind:?}");
            assert!(doc.contains("kpro6"), "{kind:?} legend");
            assert!(
                doc.contains("<circle") || doc.contains("<polygon"),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn hits_land_inside_the_canvas_in_x_order() {
        let a = bundle("a");
        let runs = [ChartRun {
            label: "a",
            color: run_color(0),
            bundle: &a,
        }];
        let plot = build(ChartKind::DecodeVsConcurrency, &runs);
        let mut out = String::new();
        let root = SVGBackend::with_string(&mut out, (720, 420)).into_drawing_area();
        let hits = draw(&root, &plot, &Theme::DARK).unwrap();
        assert_eq!(hits.len(), 3);
        assert!(hits.windows(2).all(|w| w[0].x < w[1].x));
        assert!(
            hits.iter()
                .all(|h| (0..720).contains(&h.x) && (0..420).contains(&h.y))
        );
        let h = nearest(&hits, hits[1].x + 3, hits[1].y - 3, 8).unwrap();
        assert_eq!(h.source.unwrap().point, 1);
        assert!(nearest(&hits, 0, 0, 8).is_none());
    }

    #[test]
    fn an_empty_plot_says_why() {
        let plot = build(ChartKind::TtftVsLength, &[]);
        let doc = svg(&plot, &Theme::LIGHT, (600, 300)).unwrap();
        assert!(doc.contains("No context sweep in the runs shown"));
    }

    #[test]
    fn x_ticks_of_a_log_axis_are_its_own_inside_the_plot_range() {
        // Concurrency 3 to 6: ticks at 2, 4 and 8, in plot units log2; only 4 is inside.
        let xk = AxisKind::Concurrency;
        assert_eq!(x_ticks(xk, (3.0, 6.0), (1.285, 2.885)), [2.0]);
        assert_eq!(x_ticks(xk, (3.0, 6.0), (0.5, 3.0)), [1.0, 2.0, 3.0]);
        // A linear axis spaces its ticks over the plot range, not the data's.
        let linear = x_ticks(AxisKind::Linear, (0.0, 10.0), (-1.0, 11.0));
        assert_eq!(linear, linear_ticks(-1.0, 11.0, 8));
    }

    #[test]
    fn y_range_starts_at_zero_with_headroom() {
        assert_eq!(y_range(5.0, 10.0), (0.0, 10.8));
        assert_eq!(y_range(0.0, 0.0), (0.0, 1.0));
        assert_eq!(y_range(-10.0, 40.0), (-14.0, 44.0));
        assert_eq!(y_range(-10.0, -10.0), (-15.0, -5.0));
    }

    /// Issue 10: a chart of 1.7e308 (or `f64::MAX`, or a NaN a computation made) never finished
    /// drawing; now it draws, with the numbers on the axis in scientific notation.
    #[test]
    fn enormous_tiny_and_non_finite_values_draw() {
        use crate::charts::plot::Line;
        for v in [1.7e308, f64::MAX, -f64::MAX, 1e-308, -1.7e308, 5e-324] {
            for kind in [AxisKind::Linear, AxisKind::Concurrency, AxisKind::Tokens] {
                let mut plot = Plot::new("huge", kind, "x", "y");
                let points = vec![(1.0, 0.0), (2.0, v), (f64::NAN, 1.0), (4.0, f64::INFINITY)];
                plot.lines.push(Line {
                    color: Rgb(0, 0, 0),
                    dashed: false,
                    points: points.clone(),
                });
                let mut tradeoff = Plot::new("huge x", AxisKind::Linear, "x", "y");
                tradeoff.lines.push(Line {
                    color: Rgb(0, 0, 0),
                    dashed: false,
                    points: points.iter().map(|&(x, y)| (y, x)).collect(),
                });
                for p in [plot, tradeoff] {
                    let doc = svg(&p, &Theme::LIGHT, (600, 300)).unwrap();
                    assert!(doc.contains("huge"), "{v} {kind:?}");
                    assert!(!doc.contains("NaN") && !doc.contains("inf"), "{v} {kind:?}");
                }
            }
        }
        let (lo, hi) = y_range(0.0, 1.7e308);
        assert_eq!((lo, hi), (0.0, f64::MAX));
    }
}
