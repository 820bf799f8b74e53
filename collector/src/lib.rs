//! `llmsweep`: the collector. It drives an OpenAI-compatible server with a closed-loop load,
//! timestamps every streamed chunk as its bytes arrive, and writes a self-describing bundle.
//!
//! The folders follow the data:
//!
//! ```text
//! cli          the subcommands (clap's top level)
//! commands/    one file per subcommand: its flags and handler; plan: flags into checked plans;
//!   │          resume: the plan that finishes an interrupted bundle
//!   ▼
//! output/      what a person sees: terminal (the printer of a run's events, the live table),
//!   │          table (the text table), compare (terminal tables), report (one HTML file),
//!   │          plot (SVG/PNG), view (the local results browser), dist (the viewer, embedded)
//!   ▼
//! load/        the load engine, silent: plan → run (session → sweep → generator → client →
//!   │          stream), workload (what to send), server (what is known of both ends),
//!   │          events (what it tells a sink as it goes)
//!   │    └──── telemetry/   the server's /metrics and the GPUs during a level
//!   ▼
//! store        the bundle on disk: named, read and written atomically
//!
//! selftest/    the client's own capacity and accuracy, against a loopback endpoint
//! sim/         serve-sim: a simulated server with known timing, the tests' ground truth
//! import/      other tools' results (text tables, vLLM, SGLang) as bundles
//! ```
//!
//! Public are only what the binary's tests, the viewer's tests and the benchmarks drive:
//! [`cli`] and [`commands`] (parse and run a command line), [`load`] (run a plan in-process),
//! [`output`] (the report and the view server), [`telemetry`], [`sim`] and [`import`].

/// `println!` that never panics: standard output closed under a run (`| head`, a reader that
/// went away) must not stop a sweep or a server, nor lose what it measured.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::terminal::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that never panics, as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::terminal::write_out(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics, as [`outln!`].
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::terminal::write_err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) mod boundary;
pub mod cli;
pub mod commands;
pub mod import;
pub mod load;
pub mod output;
pub(crate) mod selftest;
pub mod sim;
pub mod store;
pub mod telemetry;

#[cfg(test)]
mod prop_config;

/// The hot path's parts, for `collector/benches/` only: not a stable interface.
#[doc(hidden)]
pub mod bench_api {
    pub use crate::load::run::api::{ChunkEvent, ChunkReader, parse_chunk};
    pub use crate::load::run::stream::sse::{SseDecoder, SseEvent};
    pub use crate::load::run::stream::trace::{Finished, RequestMeta, Trace};
}
