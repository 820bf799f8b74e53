//! The engine task: owns the [`Model`], runs its virtual time on the real clock, and hands each
//! request its tokens.
//!
//! Virtual time 0 is the instant the engine started. Every phase end is slept to as an
//! **absolute** deadline (`origin + virtual time`), so lateness of one wake-up never shifts the
//! following ones; when the task wakes late it processes every overdue phase at once instead of
//! sleeping.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

use super::SimConfig;
use super::model::{Emit, Job, Model, Nanos, Snapshot};

/// Tokens for one request, as the engine hands them over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Progress {
    pub tokens: u32,
    /// This was the request's last token.
    pub done: bool,
}

#[derive(Debug)]
enum Command {
    Submit {
        at: Instant,
        job: Job,
        tx: mpsc::UnboundedSender<Progress>,
    },
    Cancel(u64),
}

/// Request-level counters, updated by the server and by [`Ticket`]s.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub requests: AtomicU64,
    pub rejected: AtomicU64,
    pub completed: AtomicU64,
    pub cancelled: AtomicU64,
}

impl Tally {
    pub(super) fn bump(counter: &AtomicU64) -> u64 {
        counter.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// Handle to the engine task. Cheap to share; the task ends on [`Engine::stop`].
#[derive(Debug)]
pub(super) struct Engine {
    cmds: mpsc::UnboundedSender<Command>,
    snapshot: Arc<Mutex<Snapshot>>,
    stop: Arc<Notify>,
    pub tally: Arc<Tally>,
}

impl Engine {
    /// Starts the engine task on the current tokio runtime.
    pub(super) fn spawn(cfg: &SimConfig) -> Engine {
        let (cmds, rx) = mpsc::unbounded_channel();
        let snapshot = Arc::new(Mutex::new(Snapshot::default()));
        let stop = Arc::new(Notify::new());
        let task = Task {
            model: Model::new(cfg.clone()),
            origin: Instant::now(),
            subscribers: HashMap::new(),
            snapshot: Arc::clone(&snapshot),
        };
        tokio::spawn(task.run(rx, Arc::clone(&stop)));
        Engine {
            cmds,
            snapshot,
            stop,
            tally: Arc::default(),
        }
    }

    /// Queues `job` as having arrived at `at` (now or a moment ago). Dropping the ticket before
    /// its last token cancels the job.
    pub(super) fn submit(&self, at: Instant, job: Job) -> Ticket {
        let (tx, rx) = mpsc::unbounded_channel();
        // A stopped engine drops the sender, which the ticket sees as an ended stream.
        let _ = self.cmds.send(Command::Submit { at, job, tx });
        Ticket {
            id: job.id,
            rx,
            cmds: self.cmds.clone(),
            tally: Arc::clone(&self.tally),
            done: false,
        }
    }

    /// The model's gauges and counters as of the engine's last wake-up.
    pub(super) fn snapshot(&self) -> Snapshot {
        *self
            .snapshot
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Ends the engine task; every open ticket then sees the end of its tokens.
    pub(super) fn stop(&self) {
        self.stop.notify_one();
    }
}

/// One request's claim on the engine: its tokens arrive here.
#[derive(Debug)]
pub(super) struct Ticket {
    id: u64,
    rx: mpsc::UnboundedReceiver<Progress>,
    cmds: mpsc::UnboundedSender<Command>,
    tally: Arc<Tally>,
    done: bool,
}

impl Ticket {
    /// The next tokens, or `None` once the request is done or the engine has stopped.
    pub(super) async fn next(&mut self) -> Option<Progress> {
        if self.done {
            return None;
        }
        let progress = self.rx.recv().await?;
        if progress.done {
            self.done = true;
            Tally::bump(&self.tally.completed);
        }
        Some(progress)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if !self.done {
            Tally::bump(&self.tally.cancelled);
            // If the engine is gone there is no slot left to free.
            let _ = self.cmds.send(Command::Cancel(self.id));
        }
    }
}

struct Task {
    model: Model,
    origin: Instant,
    subscribers: HashMap<u64, mpsc::UnboundedSender<Progress>>,
    snapshot: Arc<Mutex<Snapshot>>,
}

impl Task {
    async fn run(mut self, mut cmds: mpsc::UnboundedReceiver<Command>, stop: Arc<Notify>) {
        loop {
            let events = self.model.advance(self.virtual_now());
            self.deliver(events);
            self.publish();
            let wake = self
                .model
                .next_deadline()
                .map(|t| self.origin + Duration::from_nanos(t));
            tokio::select! {
                biased;
                () = stop.notified() => return,
                cmd = cmds.recv() => match cmd {
                    Some(cmd) => self.apply(cmd),
                    None => return,
                },
                () = sleep_until_or_forever(wake) => {}
            }
        }
    }

    fn virtual_now(&self) -> Nanos {
        self.virtual_at(Instant::now())
    }

    fn virtual_at(&self, at: Instant) -> Nanos {
        let since = at.saturating_duration_since(self.origin);
        Nanos::try_from(since.as_nanos()).unwrap_or(Nanos::MAX)
    }

    fn apply(&mut self, cmd: Command) {
        match cmd {
            Command::Submit { at, job, tx } => {
                self.subscribers.insert(job.id, tx);
                self.model.submit(self.virtual_at(at), job);
            }
            Command::Cancel(id) => {
                self.subscribers.remove(&id);
                self.model.cancel(id);
            }
        }
    }

    fn deliver(&mut self, events: Vec<Emit>) {
        for e in events {
            let Some(tx) = self.subscribers.get(&e.id) else {
                continue;
            };
            let sent = tx
                .send(Progress {
                    tokens: e.tokens,
                    done: e.done,
                })
                .is_ok();
            if !sent {
                // The request's receiver is gone without a Cancel yet: free the slot now.
                self.model.cancel(e.id);
            }
            if e.done || !sent {
                self.subscribers.remove(&e.id);
            }
        }
    }

    fn publish(&self) {
        *self
            .snapshot
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = self.model.snapshot();
    }
}

async fn sleep_until_or_forever(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
