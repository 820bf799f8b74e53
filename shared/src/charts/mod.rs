//! Chart drawing, once for every front end: the viewer (plotters-canvas), SVG export and the
//! collector draw the same picture from the same code.
//!
//! [`build`] turns runs into a [`Plot`] (pure data, tested without pixels); [`draw`] renders a
//! plot on any plotters [`DrawingBackend`](plotters::prelude::DrawingBackend) and returns where each
//! point landed, so a front end can explain the point under the mouse. Nothing here panics:
//! drawing errors come back as [`ChartError`].

mod across;
pub mod axis;
pub mod build;
pub mod delta;
mod draw;
pub mod history;
pub mod plot;
mod server;

use crate::bundle::Bundle;
pub use across::across_runs;
pub use axis::AxisKind;
pub use build::{ChartKind, ChartRun, build, requests_plot};
pub use delta::{DeltaChart, DeltaPoint, delta_chart};
pub use draw::{Hit, draw, nearest, step, svg};
pub use history::history_plot;
pub use server::{ServerPlots, server_plots};

pub use plot::{Band, ErrorBar, LegendEntry, Line, Mark, MarkStyle, Plot, PointRef, Rgb, Rule};

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

/// The color of palette slot `i` (the palette repeats after eight).
pub fn run_color(i: usize) -> Rgb {
    PALETTE[i % PALETTE.len()]
}

/// The palette slot of each of `bundles` (in the order given), chosen from the runs themselves:
/// the set is ranked by bundle `id`, then `created_at`, then the bundle's own label, and the
/// k-th run of that ranking gets slot k. The same set of runs gets the same colors however it
/// is ordered — loaded in another order, passed to `plot` in another order — and up to eight
/// runs never share a color. The viewer, a report and `llmsweep plot` all color by this rule.
///
/// Identical runs (the same bundle twice) keep the order given among themselves.
pub fn color_slots(bundles: &[&Bundle]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..bundles.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |i: usize| {
            let b = bundles[i];
            (b.id.as_str(), b.created_at.as_str(), b.label.as_str())
        };
        key(a).cmp(&key(b))
    });
    let mut slots = vec![0; bundles.len()];
    for (rank, i) in order.into_iter().enumerate() {
        slots[i] = rank;
    }
    slots
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

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, label: &str) -> Bundle {
        let mut b = Bundle::from_json(include_str!("../../tests/fixtures/minimal.json")).unwrap();
        b.id = id.into();
        b.label = label.into();
        b
    }

    #[test]
    fn a_run_keeps_its_color_whatever_the_order() {
        let (a, b, c) = (
            run("b-id", "kpro5"),
            run("a-id", "kpro6"),
            run("c-id", "kpro7"),
        );
        assert_eq!(color_slots(&[&a, &b, &c]), [1, 0, 2]);
        assert_eq!(color_slots(&[&c, &a, &b]), [2, 1, 0]);
        assert_eq!(color_slots(&[&b, &c, &a]), [0, 2, 1]);
    }

    #[test]
    fn the_same_id_is_told_apart_by_date_then_label() {
        let (a, mut b) = (run("x", "kpro6"), run("x", "kpro5"));
        assert_eq!(color_slots(&[&a, &b]), [1, 0], "by label");
        b.created_at = "2026-01-01T00:00:00Z".into();
        assert_eq!(color_slots(&[&a, &b]), [0, 1], "by date first");
        assert_eq!(color_slots(&[]), Vec::<usize>::new());
    }
}
