//! `llmsweep-viewer`: a Leptos single-page app that loads llmsweep bundles and plots, overlays
//! and compares them. Chart drawing and comparison live in `llmsweep-shared`; this crate holds the
//! viewer's state ([`state`]), the reading of files ([`load`]) and, in the browser only, the thin
//! components that wire them to the page.

pub mod load;
pub mod state;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod components;
#[cfg(target_arch = "wasm32")]
mod web;

#[cfg(target_arch = "wasm32")]
pub use app::start;
