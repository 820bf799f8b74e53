//! The one closed-loop load generator: C workers, each sending its next request as soon as its
//! previous one ends, until the point's budget (a request count or a deadline) is spent.
//!
//! The hot loop only sends, timestamps and forwards records; summaries are computed afterwards.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::load::client::Client;
use crate::load::stream::trace::Finished;
use crate::load::workload::PromptBuilder;

/// When a point stops sending.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StopRule {
    /// After this many requests have been sent.
    Count(u64),
    /// No request is sent after this long; requests in flight finish.
    Deadline(Duration),
}

/// Ways a run is interrupted: stop sending (the first Ctrl-C), and abort what is in flight (after
/// a grace period, or the second Ctrl-C).
#[derive(Debug, Clone, Default)]
pub struct Interrupt {
    pub stop_sending: CancellationToken,
    pub abort: CancellationToken,
    /// The signal that stopped the run, when one did.
    pub signal: Arc<std::sync::OnceLock<Signal>>,
}

/// The signals a run stops on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C.
    Int,
    /// `kill`, `timeout`, `docker stop`, systemd, CI cancellation.
    Term,
    /// The terminal closed.
    Hup,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::Int => "Ctrl-C",
            Signal::Term => "SIGTERM",
            Signal::Hup => "SIGHUP",
        }
    }

    /// The conventional exit status of a process stopped by it: 128 + its number.
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Int => 130,
            Signal::Term => 143,
            Signal::Hup => 129,
        }
    }
}

impl Interrupt {
    pub fn is_stopped(&self) -> bool {
        self.stop_sending.is_cancelled()
    }
}

/// One point to run.
#[derive(Debug, Clone, Copy)]
pub struct LoadSpec {
    pub concurrency: u32,
    pub stop: StopRule,
    pub input_len: u64,
    pub output_len: u64,
    /// Which prompt stream (see [`PromptBuilder::prompt`]).
    pub stream: u64,
    /// The pass over the level this run is (`--repeats`): its records are tagged with it, and
    /// its prompts continue the stream where the previous pass ended.
    pub pass: Option<Pass>,
}

/// One pass of a level that runs several.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// 0-based.
    pub index: u32,
    /// The stream index of this pass's first prompt.
    pub first_prompt: u64,
}

/// What a point produced, in request order.
#[derive(Debug)]
pub struct LoadResult {
    pub finished: Vec<Finished>,
    /// The point's clock origin (records' `start_s` count from here).
    pub origin: Instant,
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// The run was interrupted while this point was running.
    pub interrupted: bool,
}

/// Runs one point (or one pass of it); `origin` is its clock's zero, and a deadline counts from
/// the call. `on_done` sees each finished request as it completes (for progress display).
pub async fn run(
    client: Arc<Client>,
    prompts: Arc<PromptBuilder>,
    spec: LoadSpec,
    origin: Instant,
    interrupt: &Interrupt,
    mut on_done: impl FnMut(&Finished),
) -> LoadResult {
    let started_at = chrono::Utc::now();
    let begun = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let (tx, mut rx) = mpsc::unbounded_channel();
    for _ in 0..spec.concurrency {
        let worker = Worker {
            client: client.clone(),
            prompts: prompts.clone(),
            next: next.clone(),
            tx: tx.clone(),
            interrupt: interrupt.clone(),
            spec,
            origin,
            begun,
        };
        tokio::spawn(worker.run());
    }
    drop(tx);
    let mut finished = Vec::new();
    while let Some((index, f)) = rx.recv().await {
        on_done(&f);
        finished.push((index, f));
    }
    finished.sort_by_key(|(i, _)| *i);
    LoadResult {
        finished: finished.into_iter().map(|(_, f)| f).collect(),
        origin,
        started_at,
        interrupted: interrupt.is_stopped(),
    }
}

struct Worker {
    client: Arc<Client>,
    prompts: Arc<PromptBuilder>,
    next: Arc<AtomicU64>,
    tx: mpsc::UnboundedSender<(u64, Finished)>,
    interrupt: Interrupt,
    spec: LoadSpec,
    origin: Instant,
    /// When this run began, for its deadline.
    begun: Instant,
}

impl Worker {
    async fn run(self) {
        loop {
            if self.interrupt.is_stopped() {
                return;
            }
            if let StopRule::Deadline(d) = self.spec.stop
                && self.begun.elapsed() >= d
            {
                return;
            }
            let index = self.next.fetch_add(1, Ordering::Relaxed);
            if let StopRule::Count(n) = self.spec.stop
                && index >= n
            {
                return;
            }
            let first = self.spec.pass.map_or(0, |p| p.first_prompt);
            let prompt = self
                .prompts
                .prompt(self.spec.stream, first + index, self.spec.input_len);
            let mut f = self
                .client
                .generate(
                    &prompt,
                    self.spec.output_len,
                    self.origin,
                    &self.interrupt.abort,
                )
                .await;
            f.record.repeat = self.spec.pass.map(|p| p.index);
            if self.tx.send((index, f)).is_err() {
                return;
            }
        }
    }
}
