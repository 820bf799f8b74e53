//! The load engine: a checked [`RunPlan`] in, a bundle on disk out.
//!
//! [`plan`] checks the flags; [`session`] probes the server, calibrates prompts and warms up;
//! [`sweep`] runs the levels and checkpoints the bundle after each; [`generator`] is the one
//! closed-loop load loop and the open loop's sender, [`conversation`] the `--turns` they hold;
//! [`client`] sends one request ([`connect`] times its connections and
//! picks their source addresses) and hands its bytes to [`stream`], which
//! turns them into a request record; [`workload`] builds the prompts and [`tokenize`] measures
//! them with the server's tokenizer; [`probe`] reads the server's fingerprint and [`host`] the
//! client's.

pub(crate) mod api;
pub(crate) mod arrivals;
pub(crate) mod capacity;
pub(crate) mod client;
pub(crate) mod connect;
pub(crate) mod conversation;
pub(crate) mod dataset;
pub mod events;
pub(crate) mod generator;
pub(crate) mod host;
pub(crate) mod plan;
pub(crate) mod probe;
mod run;
pub(crate) mod secrets;
pub(crate) mod session;
pub(crate) mod stream;
pub(crate) mod sweep;
pub(crate) mod tokenize;
pub(crate) mod workload;

pub use events::{Event, Recorded, Recorder, Silent, Sink};
pub use generator::{Interrupt, Signal};
pub use plan::{
    ContextPlan, MAX_CONCURRENCY, MAX_RATE, MAX_REPEATS, OpenPlan, OutputPlan, Resume, RunPlan,
    SearchPlan, Sweeps, TargetPlan, ThroughputPlan, is_loopback, random_prefix_seed,
};
pub use run::{Outcome, run_plan};
pub use secrets::redacted_command_line;
