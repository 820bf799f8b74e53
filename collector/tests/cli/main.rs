//! The `llmsweep` binary as a user runs it, and the files it reads and writes: sweeps and bad
//! input ([`run`]), `compare` and its gate ([`compare`]), `export` ([`export`]), `import` ([`import`]) and `plot`
//! ([`plot`]), one writer per bundle ([`resume`]), signals ([`signals`]), secrets kept out of everything written ([`secrets`]), and
//! numbers at the edges of `f64` through all of them with a deadline ([`finite`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod compare;
mod export;
mod finite;
mod history;
#[path = "../common/store.rs"]
#[allow(dead_code)]
mod hostile_store;
mod import;
mod plot;
mod resume;
mod run;
mod secrets;
mod signals;
mod store;
mod store_hostile;
mod support;
