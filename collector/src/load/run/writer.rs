//! The bundle of a run as it fills: sweeps handed out as handles, each finished point added and
//! the file written at once, so a crash or a full disk loses nothing that was measured.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{ErrorKind, FlagKind, Point, PointStatus, Slo, Sweep, SweepKind};

use crate::load::events::{Event, Sink};
use crate::load::run::lock::RunLock;
use crate::load::workload::digest;
use crate::store;

/// One sweep of the bundle being written: what the sweep drivers hold instead of an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SweepHandle(usize);

/// The bundle in memory and on disk, written after every change that matters.
#[derive(Debug)]
pub(crate) struct BundleWriter {
    bundle: Bundle,
    path: PathBuf,
    /// This run's lock of `path`, held while the run writes it.
    _lock: RunLock,
    /// `--goodput`: every sweep and point of the run counts goodput against it.
    slo: Option<Slo>,
    /// Where a write that fails (and one that works again) is told.
    events: Arc<dyn Sink>,
    /// Prompt hashes of every recorded request, in order (for the workload digest).
    hashes: Vec<String>,
    /// Levels measured since the last write that succeeded.
    unsaved: Vec<String>,
    /// The last write failed.
    write_failing: bool,
    /// The bundle is an interrupted one being finished (`--resume`).
    resuming: bool,
    /// `--out s3://…`: every checkpoint is also put into the bucket, under this name.
    upload: Option<(store::upload::Uploader, String)>,
}

impl BundleWriter {
    /// A writer of `bundle` to `path`, which `lock` holds; nothing is written until the first
    /// sweep starts.
    pub(crate) fn new(
        bundle: Bundle,
        path: PathBuf,
        lock: RunLock,
        slo: Option<Slo>,
        events: Arc<dyn Sink>,
    ) -> BundleWriter {
        BundleWriter {
            bundle,
            path,
            _lock: lock,
            slo,
            events,
            hashes: Vec::new(),
            unsaved: Vec::new(),
            write_failing: false,
            resuming: false,
            upload: None,
        }
    }

    /// Copies every checkpoint from now on into a bucket too (`--out s3://…`).
    pub(crate) fn upload_to(&mut self, uploader: store::upload::Uploader) {
        self.upload = Some((uploader, self.file_name()));
    }

    /// Waits (up to `wait`) for the last checkpoint to reach the bucket, when the run has one;
    /// says where the copy is.
    pub(crate) async fn settle_upload(
        &mut self,
        wait: std::time::Duration,
        cut: impl std::future::Future<Output = String>,
    ) -> Option<store::upload::Copy> {
        let (mut u, name) = self.upload.take()?;
        Some(u.settle(&name, wait, cut).await)
    }

    fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    pub(crate) fn bundle(&self) -> &Bundle {
        &self.bundle
    }

    pub(crate) fn bundle_mut(&mut self) -> &mut Bundle {
        &mut self.bundle
    }

    /// Where the bundle is written.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Takes over an interrupted bundle (`--resume`) at `path`: its levels so far, its workload.
    pub(crate) fn adopt(&mut self, mut bundle: Bundle, path: PathBuf) {
        bundle.complete = false;
        self.bundle = bundle;
        self.path = path;
        self.resuming = true;
        // Its copy in the bucket keeps the resumed bundle's name.
        let name = self.file_name();
        if let Some((_, upload_name)) = &mut self.upload {
            *upload_name = name;
        }
        self.refresh_digest();
    }

    /// Whether this run finishes an interrupted bundle (`--resume`).
    pub(crate) fn is_resuming(&self) -> bool {
        self.resuming
    }

    /// Adds a sweep to the bundle and writes it. When resuming, the bundle's own sweep of that
    /// kind, without the levels an interruption or an outage cut short (they run again).
    pub(crate) fn start_sweep(&mut self, mut sweep: Sweep) -> SweepHandle {
        sweep.slo = self.slo;
        if self.resuming
            && let Some(i) = self.bundle.sweeps.iter().position(|w| {
                // A `--shapes` run's throughput sweeps are told apart by their shape.
                w.kind == sweep.kind
                    && (sweep.kind != SweepKind::Throughput
                        || llmsweep_shared::shapes::Shape::of(w)
                            == llmsweep_shared::shapes::Shape::of(&sweep))
            })
        {
            self.bundle.sweeps[i].points.retain(|p| match p.status {
                PointStatus::Ok => !p.flags.iter().any(|f| f.kind == FlagKind::Interrupted),
                PointStatus::Skipped => true,
                _ => false,
            });
            return SweepHandle(i);
        }
        self.bundle.sweeps.push(sweep);
        self.checkpoint();
        SweepHandle(self.bundle.sweeps.len() - 1)
    }

    pub(crate) fn sweep(&self, h: SweepHandle) -> &Sweep {
        &self.bundle.sweeps[h.0]
    }

    pub(crate) fn sweep_mut(&mut self, h: SweepHandle) -> &mut Sweep {
        &mut self.bundle.sweeps[h.0]
    }

    /// The sweep's point at concurrency `c` and input length `len`, when it has one (a resumed
    /// bundle's).
    pub(crate) fn point(&self, h: SweepHandle, c: u32, len: u64) -> Option<&Point> {
        self.sweep(h)
            .points
            .iter()
            .find(|p| p.concurrency == c && p.input_len == len)
    }

    /// Adds a finished point to a sweep, with its goodput when the run counts it, and writes
    /// the bundle.
    pub(crate) fn add_point(&mut self, h: SweepHandle, mut point: Point) {
        let name = match self.sweep(h).kind {
            SweepKind::Context => format!("{} tokens at C={}", point.input_len, point.concurrency),
            SweepKind::Rate => format!("{} req/s", point.rate.map_or(0.0, |r| r.offered_rps)),
            _ => format!("C={}", point.concurrency),
        };
        if let (Some(slo), Some(summary)) = (&self.slo, &point.summary) {
            point.goodput =
                llmsweep_shared::metrics::goodput(&counted(&point), slo, summary.wall_s);
        }
        self.sweep_mut(h).points.push(point);
        self.unsaved.push(name);
        self.checkpoint();
    }

    /// The workload digest over every kept point's prompts, in bundle order (after a resume put
    /// its levels in order and dropped the ones it ran again).
    pub(crate) fn refresh_digest(&mut self) {
        self.hashes = self
            .bundle
            .sweeps
            .iter()
            .flat_map(|w| &w.points)
            .flat_map(|p| &p.requests)
            .map(|r| r.prompt_hash.clone())
            .collect();
        self.bundle.workload.prompt_digest = digest(self.hashes.iter().map(String::as_str));
    }

    /// Records prompt hashes of a finished point, in request order.
    pub(crate) fn add_hashes<'a>(&mut self, hashes: impl IntoIterator<Item = &'a str>) {
        self.hashes.extend(hashes.into_iter().map(String::from));
        self.bundle.workload.prompt_digest = digest(self.hashes.iter().map(String::as_str));
    }

    /// Writes the bundle as it stands. A write that fails (a full disk, a folder gone) is tried
    /// once more; then the bundle stays in memory, the watcher is told which levels are only
    /// there, and the next checkpoint tries again. The sweep goes on either way.
    pub(crate) fn checkpoint(&mut self) {
        let bytes = match self.serialize() {
            Ok(b) => b,
            Err(e) => {
                self.note(&format!("warning: {e:#}"));
                return;
            }
        };
        // The bucket gets every version, whether or not the local folder could take it: a
        // full disk must not leave an older copy there named as the run's.
        self.share(bytes.clone());
        match self.write(&bytes) {
            Ok(()) => {
                if self.write_failing {
                    self.note(&format!(
                        "the bundle is written again: {} holds every level",
                        self.path.display()
                    ));
                }
                self.write_failing = false;
                self.unsaved.clear();
            }
            Err(e) => {
                self.write_failing = true;
                let only = if self.unsaved.is_empty() {
                    String::new()
                } else {
                    format!("{} only in memory; ", self.unsaved.join(", "))
                };
                self.note(&format!(
                    "warning: {e:#}; {only}trying again after the next level, and in {} at the end if it still fails",
                    std::env::temp_dir().display()
                ));
            }
        }
    }

    /// The bundle as it stands, as the bytes of its file.
    fn serialize(&self) -> anyhow::Result<bytes::Bytes> {
        let mut text = self
            .bundle
            .to_json()
            .context("the bundle cannot be written as JSON")?;
        text.push('\n');
        Ok(bytes::Bytes::from(text))
    }

    /// Writes `bytes` to the bundle's path (tried twice).
    fn write(&self, bytes: &[u8]) -> anyhow::Result<()> {
        store::write_file_atomic(&self.path, bytes)
            .or_else(|_| store::write_file_atomic(&self.path, bytes))
            .with_context(|| format!("cannot write the bundle {}", self.path.display()))
    }

    /// After a write: the bucket's copy, when the run has one. (A local folder's index is
    /// brought up to date when the folder is listed: a run adds nothing beside its bundle.)
    fn share(&mut self, bytes: bytes::Bytes) {
        if let Some((u, name)) = &mut self.upload {
            u.offer(
                name,
                bytes,
                llmsweep_shared::folder::BundleFacts::of(&self.bundle),
                llmsweep_shared::history::RunSummary::of(&self.bundle),
            );
        }
    }

    /// The last write, `complete` or not: to the bundle's path, else to a new file of the same
    /// name (or `NAME-2.json`, … when that is taken) in the temp folder. Returns where the
    /// bundle is; fails only when neither can be written.
    pub(crate) fn finish(&mut self, complete: bool) -> anyhow::Result<PathBuf> {
        self.bundle.complete = complete;
        self.refresh_digest();
        let bytes = self.serialize()?;
        self.share(bytes.clone());
        let e = match self.write(&bytes) {
            Ok(()) => return Ok(self.path.clone()),
            Err(e) => e,
        };
        let name = self.path.file_name().unwrap_or_default();
        // The temp folder is shared: a new file, its owner's only, never over one there.
        let fallback = store::write_new_private(&std::env::temp_dir(), name, &self.bundle)
            .with_context(|| format!("{e:#}, and the fallback in the temp folder failed too"))?;
        self.note(&format!(
            "warning: {e:#}; the bundle was written to {} instead",
            fallback.display()
        ));
        self.path = fallback.clone();
        Ok(fallback)
    }

    fn note(&self, line: &str) {
        self.events.event(Event::Note(line));
    }
}

/// A point's requests but those an interrupt or the level's end aborted: as in the summary,
/// they are not the server's doing.
pub(crate) fn counted(point: &Point) -> Vec<llmsweep_shared::bundle::RequestRecord> {
    point
        .requests
        .iter()
        .filter(|r| {
            r.error
                .as_ref()
                .is_none_or(|e| e.kind != ErrorKind::Cancelled)
        })
        .cloned()
        .collect()
}
