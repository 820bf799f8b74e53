//! Real inference engines on loopback (llama.cpp's `llama-server`, llama-cpp-python's server),
//! each serving a tiny GGUF model the harness writes: the harness itself ([`harness`]), then the
//! collector end to end against them ([`e2e`]); and telemetry against live processes, the
//! simulator's and llama-server's `/metrics` and a fake `nvidia-smi` ([`telemetry`]).
//!
//! Skipped with a notice when an engine is not installed, unless `LLMSWEEP_REQUIRE_ENGINES=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod e2e;
mod harness;
mod telemetry;
