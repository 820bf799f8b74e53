//! The page's parts. Thin: each reads [`crate::state::ViewerState`] through its view models
//! ([`crate::state::view_model`]) and calls its methods; the charts and comparisons come from
//! `llmsweep-shared`.

// Leptos' `#[component]` gives every component and its props struct the visibility it is
// written with, and makes the props' builder public; `pub` here is what the macro needs.
#![allow(unreachable_pub)]

mod chart;
mod compare;
mod folder;
mod history;
mod layout;
mod open;
mod requests;
mod run_options;
mod runs;
mod selftest;

pub use folder::FolderList;
pub use history::HistoryView;
pub use layout::Main;
pub use open::{EmptyState, ErrorList, OpenButton};
