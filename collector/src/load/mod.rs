//! The load engine: a checked [`RunPlan`] in, a bundle on disk out, and what happens on the way
//! told as [`events`] to a sink it is given. It knows no flag and writes nothing to a terminal.
//!
//! ```text
//! plan/       what to measure, where, and where results go; secrets: credentials and redaction
//! server/     what is known of the two ends: the server's fingerprint and tokenizer, this host
//! workload/   what to send: prompts from a seed, dataset lines, conversations, arrival times
//! run/        how it is sent and measured: session → sweep → generator → client → stream
//! events      what the engine tells as a run goes
//! ```

pub mod events;
pub(crate) mod plan;
pub(crate) mod run;
pub(crate) mod server;
pub(crate) mod workload;

pub use events::{Event, Recorded, Recorder, Silent, Sink};
pub use plan::secrets::redacted_command_line;
pub use plan::{
    ContextPlan, DEFAULT_CONCURRENCY, MAX_CONCURRENCY, MAX_RATE, MAX_RATE_POINT_S, MAX_REPEATS,
    OpenPlan, OutputPlan, Resume, RunPlan, SearchPlan, Sweeps, TargetPlan, ThroughputPlan,
    is_loopback, random_prefix_seed, rate_words, time_words,
};
pub use run::generator::{Interrupt, Precision, Signal, Stopped};
pub use run::{Outcome, run_plan};
