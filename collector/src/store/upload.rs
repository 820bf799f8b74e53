//! A run's bundle copied into a bucket as it is written (`--out s3://…`): every checkpoint, once
//! written to the local folder, is offered to an uploader task that puts the newest one whole and
//! then the bucket's index entry. The sweep never waits for the store: a store that cannot be
//! reached costs no measurement, the newest checkpoint is tried again (after 1 s, 2 s, … up to
//! 30 s, and at once when a newer one comes), and the end says where each copy is.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use llmsweep_shared::folder::BundleFacts;
use llmsweep_shared::history::RunSummary;
use tokio::sync::watch;

use super::bucket::Bucket;
use super::index::{self, Place};
use crate::load::events::{Event, Sink};

/// The longest wait between two tries of an upload that fails.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The index is rewritten at most this often while a run uploads (and always at its end).
const INDEX_EVERY: Duration = Duration::from_secs(60);
/// How long the end of a run waits for a store that has been failing.
const FAILING_WAIT: Duration = Duration::from_secs(10);

/// One checkpoint of the bundle: its bytes, and its index entry's facts.
#[derive(Debug)]
pub(crate) struct Version {
    pub seq: u64,
    pub name: String,
    pub bytes: Bytes,
    pub facts: BundleFacts,
    pub summary: RunSummary,
}

#[derive(Debug, Default)]
struct State {
    /// The newest version in the bucket.
    uploaded: u64,
    /// Why the last try failed, while uploads fail.
    failing: Option<String>,
}

/// The uploader of one run's bundle.
#[derive(Debug)]
pub(crate) struct Uploader {
    bucket: Bucket,
    tx: Option<watch::Sender<Option<Arc<Version>>>>,
    task: Option<tokio::task::JoinHandle<()>>,
    state: Arc<Mutex<State>>,
    offered: u64,
}

/// Where the bundle's copy in the bucket stands at the end of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Copy {
    /// The newest version is in the bucket, at this URL.
    Uploaded(String),
    /// It is not: why, and the URL it was meant for.
    Missing { url: String, why: String },
}

impl Uploader {
    /// Starts the uploader task (on the current runtime) for bundles put into `bucket`; what
    /// it has to say goes to `events`.
    pub(crate) fn start(bucket: Bucket, events: Arc<dyn Sink>) -> Uploader {
        let (tx, rx) = watch::channel(None);
        let state = Arc::new(Mutex::new(State::default()));
        let task = tokio::spawn(run(bucket.clone(), rx, Arc::clone(&state), events));
        Uploader {
            bucket,
            tx: Some(tx),
            task: Some(task),
            state,
            offered: 0,
        }
    }

    /// Offers a checkpoint: it replaces any older one not yet uploaded.
    pub(crate) fn offer(
        &mut self,
        name: &str,
        bytes: Bytes,
        facts: BundleFacts,
        summary: RunSummary,
    ) {
        self.offered += 1;
        if let Some(tx) = &self.tx {
            let _ = tx.send(Some(Arc::new(Version {
                seq: self.offered,
                name: name.to_string(),
                bytes,
                facts,
                summary,
            })));
        }
    }

    /// Waits up to `wait` for the newest checkpoint to reach the bucket (up to
    /// [`FAILING_WAIT`] while uploads fail: one more try, not a minute of them), then stops
    /// trying.
    ///
    /// `cut` ends the wait at once (a signal): it gives why, and the copy is then what the
    /// bucket holds, said as such.
    pub(crate) async fn settle(
        &mut self,
        name: &str,
        wait: Duration,
        cut: impl std::future::Future<Output = String>,
    ) -> Copy {
        let failing = self
            .state
            .lock()
            .map(|s| s.failing.is_some())
            .unwrap_or(false);
        let wait = if failing {
            wait.min(FAILING_WAIT)
        } else {
            wait
        };
        self.tx = None;
        let mut cut_why = None;
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            tokio::select! {
                r = tokio::time::timeout(wait, task) => {
                    if r.is_err() {
                        abort.abort();
                    }
                }
                why = cut => {
                    abort.abort();
                    cut_why = Some(why);
                }
            }
        }
        let url = self.bucket.object_url(name);
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.uploaded >= self.offered {
            Copy::Uploaded(url)
        } else {
            let why = match (cut_why, &s.failing) {
                (Some(cut), _) => cut,
                (None, Some(f)) => f.clone(),
                (None, None) => format!("the upload did not finish within {} s", wait.as_secs()),
            };
            let stale = s.uploaded > 0;
            Copy::Missing {
                url,
                why: if stale {
                    format!("{why}; the copy there is an older version of the run")
                } else {
                    why
                },
            }
        }
    }
}

impl Drop for Uploader {
    fn drop(&mut self) {
        if let Some(t) = &self.task {
            t.abort();
        }
    }
}

async fn run(
    bucket: Bucket,
    mut rx: watch::Receiver<Option<Arc<Version>>>,
    state: Arc<Mutex<State>>,
    events: Arc<dyn Sink>,
) {
    let place = Place::Bucket(bucket.clone());
    let mut backoff = Duration::from_secs(1);
    let mut closed = false;
    // The index (the whole team's, so not small) is rewritten for the first copy, the last,
    // and at most once a minute between: an entry that lags is re-read by a listing, never
    // trusted.
    let mut indexed: Option<std::time::Instant> = None;
    // The newest version in the bucket that its index does not have yet, with its ETag.
    let mut unindexed: Option<(Arc<Version>, Option<String>)> = None;
    loop {
        let newest = rx.borrow_and_update().clone();
        let uploaded = state.lock().map(|s| s.uploaded).unwrap_or(0);
        if let Some(v) = newest.filter(|v| v.seq > uploaded) {
            match bucket.put(&v.name, v.bytes.clone()).await {
                Ok(etag) => {
                    let was_failing = {
                        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
                        s.uploaded = v.seq;
                        s.failing.take().is_some()
                    };
                    unindexed = Some((Arc::clone(&v), etag));
                    if indexed.is_none_or(|t| t.elapsed() >= INDEX_EVERY) {
                        index_entry(&place, &mut unindexed).await;
                        indexed = Some(std::time::Instant::now());
                    }
                    if was_failing {
                        events.event(Event::Note(&format!(
                            "the bundle is in the bucket again: {}",
                            bucket.object_url(&v.name)
                        )));
                    }
                    backoff = Duration::from_secs(1);
                }
                Err(e) => {
                    let why = format!("{e:#}");
                    let first = {
                        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
                        s.failing.replace(why.clone()).is_none()
                    };
                    if first {
                        events.event(Event::Note(&format!(
                            "warning: {why}; the bundle is kept in the local folder and the upload is tried again"
                        )));
                    }
                    if closed {
                        tokio::time::sleep(backoff).await;
                    } else {
                        tokio::select! {
                            () = tokio::time::sleep(backoff) => {}
                            r = rx.changed() => closed = r.is_err(),
                        }
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            }
        }
        if closed || rx.changed().await.is_err() {
            // The run has ended and its last version is in the bucket: the index gets it.
            index_entry(&place, &mut unindexed).await;
            return;
        }
    }
}

/// Puts the entry of the version in `unindexed` (taken) into the bucket's index; a failure is
/// repaired by the next listing, which re-reads a bundle its index entry does not match.
async fn index_entry(place: &Place, unindexed: &mut Option<(Arc<Version>, Option<String>)>) {
    if let Some((v, etag)) = unindexed.take() {
        let _ = index::record_entry(
            place,
            &v.name,
            v.bytes.len() as u64,
            etag,
            v.facts.clone(),
            v.summary.clone(),
        )
        .await;
    }
}
