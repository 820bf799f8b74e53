//! The `llmsweep` binary as a user runs it, and the files it reads and writes: sweeps and bad
//! input ([`run`]), `compare` and its gate ([`compare`]), `import` ([`import`]) and `plot`
//! ([`plot`]), signals ([`signals`]), and secrets kept out of everything written ([`secrets`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod compare;
mod import;
mod plot;
mod run;
mod secrets;
mod signals;
