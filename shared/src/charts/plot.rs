//! The picture as data: what a chart shows, before any pixel. Built by [`super::build`], drawn by
//! [`super::draw`], so what is drawn can be tested without drawing it.

use super::axis::AxisKind;

/// A color, `0..=255` per channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`, for CSS.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

/// Which point of which run a mark stands for: `run` is the caller's index into the runs it
/// passed; `sweep` and `point` index into that run's bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointRef {
    pub run: usize,
    pub sweep: usize,
    pub point: usize,
}

/// How a mark is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkStyle {
    /// A measured point.
    Dot,
    /// A measured point with flags: drawn with a warning ring.
    Flagged,
    /// A prediction, not a measurement: hollow.
    Predicted,
    /// One request in the per-request view.
    Small,
    /// A failed request.
    Cross,
    /// Shapes that tell series of one color apart (the delta chart's metrics).
    Square,
    Triangle,
    Diamond,
    /// Legend samples only: an error bar, and a shaded band.
    Bar,
    Band,
}

/// One point on the chart, with what hovering it says.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub x: f64,
    pub y: f64,
    pub color: Rgb,
    pub style: MarkStyle,
    /// Text written next to the point (the concurrency on the trade-off chart).
    pub tag: Option<String>,
    /// Exact values and flag explanations, one fact per line.
    pub hover: String,
    pub source: Option<PointRef>,
}

/// A connected line through data points.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub color: Rgb,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

/// A vertical line at a server limit, with its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub x: f64,
    pub text: String,
}

/// A vertical error bar: the interval `lo..=hi` around a mark at `x`.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorBar {
    pub x: f64,
    pub lo: f64,
    pub hi: f64,
    pub color: Rgb,
}

/// A horizontal band `lo..=hi` across the whole chart (a threshold's ± range), with a solid line
/// at `line` (zero) when given.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub lo: f64,
    pub hi: f64,
    pub line: Option<f64>,
    /// Written at its top right; empty for none (the legend can say it instead).
    pub text: String,
}

/// One legend entry.
#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    pub text: String,
    pub color: Rgb,
    pub dashed: bool,
    /// A mark instead of a line sample.
    pub mark: Option<MarkStyle>,
}

/// Everything one chart shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    pub title: String,
    pub x_kind: AxisKind,
    pub x_label: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub marks: Vec<Mark>,
    pub rules: Vec<Rule>,
    pub bars: Vec<ErrorBar>,
    pub band: Option<Band>,
    /// The x range shown, in data units, instead of the data's (charts stacked on one time
    /// axis share it).
    pub x_range: Option<(f64, f64)>,
    pub legend: Vec<LegendEntry>,
    /// Said in the middle of the chart when there is nothing to draw.
    pub empty_note: String,
}

impl Plot {
    /// A plot with axes and nothing on them yet.
    pub fn new(title: &str, x_kind: AxisKind, x_label: &str, y_label: &str) -> Plot {
        Plot {
            title: title.into(),
            x_kind,
            x_label: x_label.into(),
            y_label: y_label.into(),
            lines: Vec::new(),
            marks: Vec::new(),
            rules: Vec::new(),
            bars: Vec::new(),
            band: None,
            x_range: None,
            legend: Vec::new(),
            empty_note: "Nothing to show".into(),
        }
    }

    /// The plot for a picture nobody can hover (an image file, a report's fallback): legend
    /// hints that point at hovering point at the bundle instead.
    pub fn for_print(mut self) -> Plot {
        for e in &mut self.legend {
            if e.mark == Some(MarkStyle::Flagged) {
                e.text = "flagged (see the warnings in the bundle)".into();
            }
        }
        self
    }

    /// Whether there is any data (rules alone do not count).
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty() && self.lines.iter().all(|l| l.points.is_empty())
    }

    /// Smallest and largest x and y over marks, lines and rules; `None` when empty.
    pub fn bounds(&self) -> Option<((f64, f64), (f64, f64))> {
        let pts = self
            .marks
            .iter()
            .map(|m| (m.x, m.y))
            .chain(self.lines.iter().flat_map(|l| l.points.iter().copied()))
            .filter(|(x, y)| x.is_finite() && y.is_finite());
        let mut b: Option<((f64, f64), (f64, f64))> = None;
        for (x, y) in pts {
            let ((x0, x1), (y0, y1)) = b.unwrap_or(((x, x), (y, y)));
            b = Some(((x0.min(x), x1.max(x)), (y0.min(y), y1.max(y))));
        }
        let ((mut x0, mut x1), (mut y0, mut y1)) = b?;
        for r in self.rules.iter().filter(|r| r.x.is_finite()) {
            x0 = x0.min(r.x);
            x1 = x1.max(r.x);
        }
        let extra_ys = self
            .bars
            .iter()
            .flat_map(|b| [b.lo, b.hi])
            .chain(self.band.iter().flat_map(|b| [b.lo, b.hi]));
        for y in extra_ys.filter(|y| y.is_finite()) {
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if let Some((a, b)) = self.x_range.filter(|(a, b)| a.is_finite() && b > a) {
            (x0, x1) = (a, b);
        }
        Some(((x0, x1), (y0, y1)))
    }
}
