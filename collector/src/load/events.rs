//! What the engine tells as a run goes, as typed events to a sink it is given. The engine never
//! writes to the terminal: the terminal printer of `output` is one sink, a recorder in tests another.

use std::sync::Mutex;

use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{Point, Sweep, SweepKind};

/// One thing that happened in a run, in the order it happened.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The server answered and the bundle is open: where load goes, the server's facts, how
    /// prompts are sized. `gpus_read`: this host's GPUs are read as the server's.
    Target { bundle: &'a Bundle, gpus_read: bool },
    /// Something to tell now: a request option the server refused, a server that went away, a
    /// bundle that could not be written, what the server cached.
    Note(&'a str),
    /// A sweep of this kind begins; `after_another`: an earlier sweep of the run came first.
    SweepStarted {
        kind: SweepKind,
        after_another: bool,
        /// The sweep's shape when it is one of a `--shapes` run's.
        shape: Option<llmsweep_shared::shapes::Shape>,
    },
    /// A point of the running sweep is done: measured, skipped, failed, or already in the
    /// bundle being resumed.
    Point { kind: SweepKind, point: &'a Point },
    /// Requests of a point (or of one pass of it) begin; `total` when the point sends a fixed
    /// number.
    Sending { label: &'a str, total: Option<u64> },
    /// One request of the running point finished.
    Finished { output_tokens: u64, ok: bool },
    /// The running point sends no more requests.
    Sent,
    /// How long the levels still to run will take, as a range, and which they are; `ends`
    /// when the default levels are expected to end at the last of them, once the server is
    /// saturated, before the plan's own last level.
    TimeLeft {
        low_s: f64,
        high_s: f64,
        levels: &'a [u32],
        ends: bool,
    },
    /// A context sweep is done: its prefill fit, if any, and the points it predicts.
    PrefillFit(&'a Sweep),
    /// The sentence that sums up a sweep or a search.
    Headline(&'a str),
}

/// Where a run's events go.
pub trait Sink: Send + Sync + std::fmt::Debug {
    fn event(&self, event: Event<'_>);
}

/// A sink that drops every event: a run nobody watches.
#[derive(Debug, Default)]
pub struct Silent;

impl Sink for Silent {
    fn event(&self, _: Event<'_>) {}
}

/// An event as a recorder keeps it: owned, in a few words.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    Target(String),
    Note(String),
    SweepStarted(SweepKind),
    Point(SweepKind, u32, u64),
    Sending(String, Option<u64>),
    Finished(bool),
    Sent,
    TimeLeft(Vec<u32>),
    PrefillFit,
    Headline(String),
}

/// A sink that keeps every event, for tests and for whoever wants a run's story afterwards.
#[derive(Debug, Default)]
pub struct Recorder(Mutex<Vec<Recorded>>);

impl Recorder {
    /// The events so far, in order.
    pub fn events(&self) -> Vec<Recorded> {
        match self.0.lock() {
            Ok(v) => v.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

impl Sink for Recorder {
    fn event(&self, event: Event<'_>) {
        let r = match event {
            Event::Target { bundle, .. } => Recorded::Target(bundle.label.clone()),
            Event::Note(n) => Recorded::Note(n.to_string()),
            Event::SweepStarted { kind, .. } => Recorded::SweepStarted(kind),
            Event::Point { kind, point } => {
                Recorded::Point(kind, point.concurrency, point.input_len)
            }
            Event::Sending { label, total } => Recorded::Sending(label.to_string(), total),
            Event::Finished { ok, .. } => Recorded::Finished(ok),
            Event::Sent => Recorded::Sent,
            Event::TimeLeft { levels, .. } => Recorded::TimeLeft(levels.to_vec()),
            Event::PrefillFit(_) => Recorded::PrefillFit,
            Event::Headline(h) => Recorded::Headline(h.to_string()),
        };
        match self.0.lock() {
            Ok(mut v) => v.push(r),
            Err(poisoned) => poisoned.into_inner().push(r),
        }
    }
}
