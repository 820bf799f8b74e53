//! `llmsweep-shared`: what the collector writes and the viewer reads — the bundle schema, the
//! metric math, the bundle → chart series extraction, the comparison of runs, the chart drawing,
//! and the folder listing `llmsweep view` serves.
//!
//! This crate compiles for native targets and for `wasm32-unknown-unknown`: it holds no I/O, no
//! threads and no clocks. Every number in a bundle is computed by a function in [`metrics`], so the
//! terminal, the viewer and a report can never disagree about what a metric means.

pub mod bundle;
pub mod charts;
pub mod compare;
pub mod curves;
pub mod deploy;
pub mod export;
pub mod folder;
pub mod hash;
pub mod headline;
pub mod history;
pub mod metrics;
pub mod selftest;
pub mod shapes;
pub mod shorten;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod text;

pub use bundle::{Bundle, BundleError};
