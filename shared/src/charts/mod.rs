//! Chart drawing, once for every front end: the viewer (plotters-canvas), SVG export and the
//! collector draw the same picture from the same code.
//!
//! [`build`] turns runs into a [`Plot`] (pure data, tested without pixels); [`draw`] renders a
//! plot on any plotters [`DrawingBackend`](plotters::prelude::DrawingBackend) and returns where each
//! point landed, so a front end can explain the point under the mouse. Nothing here panics:
//! drawing errors come back as [`ChartError`].

pub mod axis;
pub mod build;
mod draw;
pub mod plot;

pub use axis::AxisKind;
pub use build::{ChartKind, ChartRun, build, requests_plot};
pub use draw::{Hit, draw, nearest, step, svg};
pub use plot::{LegendEntry, Line, Mark, MarkStyle, Plot, PointRef, Rgb, Rule};

/// Run colors, in the order runs get them; distinguishable on light and dark backgrounds.
pub const PALETTE: [Rgb; 8] = [
    Rgb(0x4e, 0x79, 0xa7),
    Rgb(0xf2, 0x8e, 0x2b),
    Rgb(0x59, 0xa1, 0x4f),
    Rgb(0xe1, 0x57, 0x59),
    Rgb(0xb0, 0x7a, 0xa1),
    Rgb(0x76, 0xb7, 0xb2),
    Rgb(0xed, 0xc9, 0x48),
    Rgb(0x9c, 0x75, 0x5f),
];

/// The color of the `i`-th run (the palette repeats after eight).
pub fn run_color(i: usize) -> Rgb {
    PALETTE[i % PALETTE.len()]
}

/// Colors of everything that is not data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub background: Rgb,
    pub text: Rgb,
    pub muted: Rgb,
    pub grid: Rgb,
    /// Rings around flagged points.
    pub warn: Rgb,
}

impl Theme {
    pub const LIGHT: Theme = Theme {
        background: Rgb(0xff, 0xff, 0xff),
        text: Rgb(0x1f, 0x23, 0x28),
        muted: Rgb(0x65, 0x6d, 0x76),
        grid: Rgb(0xe4, 0xe7, 0xeb),
        warn: Rgb(0xc2, 0x41, 0x0c),
    };
    pub const DARK: Theme = Theme {
        background: Rgb(0x16, 0x1b, 0x22),
        text: Rgb(0xe6, 0xed, 0xf3),
        muted: Rgb(0x9d, 0xa7, 0xb3),
        grid: Rgb(0x30, 0x36, 0x3d),
        warn: Rgb(0xfb, 0x92, 0x3c),
    };
}

/// Why a chart could not be drawn, in words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("chart could not be drawn: {0}")]
pub struct ChartError(pub String);

// Natively drawn PNG charts, for the collector; never in the WebAssembly build.
#[cfg(feature = "png")]
mod font;
#[cfg(feature = "png")]
mod png;
#[cfg(feature = "png")]
pub use png::{MAX_SIDE, png};
