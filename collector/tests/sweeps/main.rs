//! Sweeps against the simulated server, whose timing is known: exact counts, flags, failures and
//! interruption ([`throughput`], [`context`]), outages ([`outage`]), unwritable bundles ([`disk`]), resuming ([`resume`]), servers that answer to hurt ([`hostile`]) and the measured numbers against the simulator's
//! ground truth ([`ground_truth`]). Sweeps in this process run one at a time
//! (`common::sim`), so timing checks do not measure each other.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod context;
mod disk;
mod ground_truth;
mod hostile;
mod outage;
mod rate;
mod resume;
mod throughput;
