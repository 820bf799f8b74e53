//! The index of a folder or a bucket prefix ([`llmsweep_shared::history`]): a place named on the
//! command line, its listing refreshed from the index kept beside the bundles, and one entry
//! updated when a run writes its bundle.
//!
//! An entry is reused while the bundle's size and version (a store's ETag, a file's modification
//! time to the nanosecond) are those it was made from; any other bundle is read again, several at
//! once from a store. The index is written back when anything changed, and a place that cannot
//! take it (a read-only folder, a public bucket) is listed all the same.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use futures_util::StreamExt;
use llmsweep_shared::Bundle;
use llmsweep_shared::folder::{
    BundleFacts, FolderEntry, FolderListing, bundle_url, is_bundle_name,
};
use llmsweep_shared::history::{
    ACCEPTED_FORMAT, ACCEPTED_NAME, Accepted, AcceptedRun, INDEX_FORMAT, INDEX_NAME, Index,
    RunSummary,
};

use super::bucket::{self, Bucket};

/// Bundles read at once from a store while an index is rebuilt.
const PARALLEL_READS: usize = 8;

/// Bundles read from a store between two writes of the index being rebuilt.
const CHECKPOINT_EVERY: usize = 1000;

/// Most megabytes of bundles being read at once from a store while an index is rebuilt.
const READ_BUDGET_MIB: u32 = 128;

/// Where bundles are: a local folder or a bucket prefix.
#[derive(Debug, Clone)]
pub(crate) enum Place {
    Local(PathBuf),
    Bucket(Bucket),
}

impl Place {
    /// A folder, or a bucket prefix when `text` is an `s3://` URL.
    pub(crate) fn parse(text: &Path) -> anyhow::Result<Place> {
        if let Some(why) = text.to_str().and_then(bucket::other_scheme) {
            anyhow::bail!(why);
        }
        match text.to_str().filter(|t| bucket::is_bucket_url(t)) {
            Some(url) => Ok(Place::Bucket(Bucket::open(url)?)),
            None => Ok(Place::Local(text.to_path_buf())),
        }
    }

    /// As messages show it.
    pub(crate) fn shown(&self) -> String {
        match self {
            Place::Local(p) => p.display().to_string(),
            Place::Bucket(b) => b.url().to_string(),
        }
    }
}

/// A bundle as the place lists it: its name, size and version.
#[derive(Debug, Clone)]
struct Listed {
    name: String,
    size: u64,
    /// RFC 3339 UTC to the nanosecond (a file's), or a store's last-modified time.
    modified: Option<String>,
    etag: Option<String>,
}

/// What a refresh did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Refreshed {
    /// Entries taken from the index as they were.
    pub reused: usize,
    /// Bundles read because the index had no valid entry for them.
    pub read: usize,
    /// The index was written back.
    pub written: bool,
}

/// The index of `place`: every bundle directly in it, newest first, each with its facts and
/// summary (or why it cannot be read), from the index where it is still valid.
pub(crate) async fn refresh(place: &Place) -> anyhow::Result<(Index, Refreshed)> {
    match place {
        Place::Local(dir) => {
            let dir = dir.clone();
            tokio::task::spawn_blocking(move || refresh_local(&dir))
                .await
                .map_err(|e| anyhow::anyhow!("reading the folder failed: {e}"))?
        }
        Place::Bucket(b) => refresh_bucket(b).await,
    }
}

/// [`refresh`] of a local folder, from synchronous code.
pub(crate) fn refresh_local(dir: &Path) -> anyhow::Result<(Index, Refreshed)> {
    let shown = dir.display().to_string();
    let root = std::fs::canonicalize(dir)
        .map_err(|e| anyhow::anyhow!("cannot read the folder {shown}: {e}"))?;
    let listed = list_local(&root)?;
    let old = read_local_index(&root);
    let mut done = Refreshed::default();
    let (entries, changed) = merge(old.as_ref(), &listed, &mut done, |l| {
        let read = super::read_bundle_plain(&root.join(&l.name));
        entry_of(l, read)
    });
    let index = Index {
        llmsweep_index: INDEX_FORMAT,
        listing: FolderListing {
            folder: shown,
            bundles: entries,
        },
    };
    if changed && let Ok(text) = serde_json::to_vec(&index) {
        done.written = super::write_file_atomic(&root.join(INDEX_NAME), &text).is_ok();
    }
    Ok((index, done))
}

/// The bundle files directly in folder `dir` whose real path is in it too, by name.
pub(crate) fn bundle_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let root = std::fs::canonicalize(dir)
        .map_err(|e| anyhow::anyhow!("cannot read the folder {}: {e}", dir.display()))?;
    let mut names: Vec<String> = list_local(&root)?.into_iter().map(|l| l.name).collect();
    names.sort();
    Ok(names.into_iter().map(|n| dir.join(n)).collect())
}

/// The bundles a command line names: a bundle file or object as it is; a folder's bundle files
/// and a bucket prefix's bundle objects (`s3://BUCKET/PREFIX`), by name. Returns whether it was
/// a place of several, and their paths (an object's as its `s3://` URL, which
/// [`super::read_bundle`] reads).
pub(crate) fn bundles_of(given: &Path) -> anyhow::Result<(bool, Vec<PathBuf>)> {
    if let Some(why) = given.to_str().and_then(bucket::other_scheme) {
        anyhow::bail!(why);
    }
    match given.to_str().filter(|t| bucket::is_bucket_url(t)) {
        Some(url) if bucket::split_object(url).is_some() => Ok((false, vec![given.to_path_buf()])),
        Some(url) => {
            let b = Bucket::open(url)?;
            let listed = bucket::block_on(async { b.list().await })?;
            let mut names: Vec<String> = listed
                .into_iter()
                .map(|(name, _)| name)
                .filter(|n| is_bundle_name(n))
                .collect();
            names.sort();
            Ok((
                true,
                names
                    .iter()
                    .map(|n| PathBuf::from(b.object_url(n)))
                    .collect(),
            ))
        }
        None if given.is_dir() => Ok((true, bundle_files(given)?)),
        None => Ok((false, vec![given.to_path_buf()])),
    }
}

/// The bundle files directly in `root` (a canonical folder) whose real path is in it too.
fn list_local(root: &Path) -> anyhow::Result<Vec<Listed>> {
    let mut out = Vec::new();
    let dir = std::fs::read_dir(root)
        .map_err(|e| anyhow::anyhow!("cannot read the folder {}: {e}", root.display()))?;
    for e in dir.flatten() {
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        if !is_bundle_name(&name) {
            continue;
        }
        let Some(real) = std::fs::canonicalize(root.join(&name)).ok() else {
            continue;
        };
        if real.parent() != Some(root) {
            continue;
        }
        let Ok(meta) = std::fs::metadata(&real) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        out.push(Listed {
            name,
            size: meta.len(),
            modified: meta.modified().ok().map(|t| {
                chrono::DateTime::<chrono::Utc>::from(t)
                    .to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
            }),
            etag: None,
        });
    }
    Ok(out)
}

async fn refresh_bucket(b: &Bucket) -> anyhow::Result<(Index, Refreshed)> {
    let listed: Vec<Listed> = b
        .list()
        .await?
        .into_iter()
        .filter(|(name, _)| is_bundle_name(name))
        .map(|(name, m)| Listed {
            name,
            size: m.size,
            modified: Some(
                m.last_modified
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            ),
            etag: m.e_tag,
        })
        .collect();
    let old = match b.get(INDEX_NAME, index_limit()).await {
        Ok((bytes, _)) => Index::parse(&bytes),
        Err(_) => None,
    };
    // The bundles the index cannot vouch for, read several at once.
    let known = by_name(old.as_ref());
    let stale: Vec<Listed> = listed
        .iter()
        .filter(|l| valid(&known, l).is_none())
        .cloned()
        .collect();
    // Several at once, within a budget of bytes in flight: a bundle as large as the budget is
    // read alone, so a prefix of large bundles never holds eight of them at once.
    let budget = std::sync::Arc::new(tokio::sync::Semaphore::new(READ_BUDGET_MIB as usize));
    let many = stale.len() > CHECKPOINT_EVERY;
    let mut reads = futures_util::stream::iter(stale)
        .map(|l| {
            let budget = std::sync::Arc::clone(&budget);
            async move {
                let mib = u32::try_from(l.size >> 20)
                    .unwrap_or(u32::MAX)
                    .clamp(1, READ_BUDGET_MIB);
                let _permit = budget.acquire_many(mib).await;
                let read = match super::too_big(l.size) {
                    Some(why) => Err(why),
                    None => b.read_bundle(&l.name).await,
                };
                (l.name.clone(), entry_of(&l, read))
            }
        })
        .buffer_unordered(PARALLEL_READS);
    let mut fresh: HashMap<String, FolderEntry> = HashMap::new();
    while let Some((name, entry)) = reads.next().await {
        fresh.insert(name, entry);
        // A first listing of a large prefix keeps what it has read as it goes: one cut short
        // (Ctrl-C, a store that goes away) starts the next from there, not from nothing.
        if many && fresh.len().is_multiple_of(CHECKPOINT_EVERY) {
            let so_far: Vec<FolderEntry> = listed
                .iter()
                .filter_map(|l| valid(&known, l).or_else(|| fresh.get(&l.name)).cloned())
                .collect();
            let partial = Index {
                llmsweep_index: INDEX_FORMAT,
                listing: FolderListing {
                    folder: b.url().to_string(),
                    bundles: so_far,
                },
            };
            if let Ok(text) = serde_json::to_vec(&partial) {
                let _ = b.put(INDEX_NAME, Bytes::from(text)).await;
            }
        }
    }
    drop(reads);
    let mut done = Refreshed::default();
    let (entries, changed) = merge(old.as_ref(), &listed, &mut done, |l| {
        fresh
            .get(&l.name)
            .cloned()
            .unwrap_or_else(|| entry_of(l, Err("cannot be read".into())))
    });
    // A store's times are upload times (a `push` of a year's runs has one): newest run first,
    // by the bundle's own date.
    let mut entries = entries;
    entries.sort_by(|a, b| {
        let date = |e: &FolderEntry| e.bundle.as_ref().map(|f| f.created_at.clone());
        date(b).cmp(&date(a)).then_with(|| a.name.cmp(&b.name))
    });
    let index = Index {
        llmsweep_index: INDEX_FORMAT,
        listing: FolderListing {
            folder: b.url().to_string(),
            bundles: entries,
        },
    };
    if changed && let Ok(text) = serde_json::to_vec(&index) {
        done.written = b.put(INDEX_NAME, Bytes::from(text)).await.is_ok();
    }
    Ok((index, done))
}

/// A folder's index, when it is one of this format and not over [`index_limit`].
fn read_local_index(dir: &Path) -> Option<Index> {
    let path = dir.join(INDEX_NAME);
    Index::parse(&crate::boundary::file::read(&path, index_limit()).ok()?)
}

/// The most of an index that is read: about fifty thousand runs' summaries. A bigger one (or
/// one a store sends without end) is not read, and the listing is rebuilt from the bundles.
fn index_limit() -> u64 {
    256 << 20
}

/// The old index's entries by name: looked up once per bundle listed, so a rebuild of ten
/// thousand runs is linear, not ten thousand searches of ten thousand entries.
fn by_name(old: Option<&Index>) -> HashMap<&str, &FolderEntry> {
    old.map(|o| {
        o.listing
            .bundles
            .iter()
            .map(|e| (e.name.as_str(), e))
            .collect()
    })
    .unwrap_or_default()
}

/// The old index's entry for `l` (from [`by_name`]), when it was made from these bytes.
fn valid<'a>(old: &HashMap<&str, &'a FolderEntry>, l: &Listed) -> Option<&'a FolderEntry> {
    old.get(l.name.as_str()).copied().filter(|e| {
        e.size_bytes == l.size
            && match (&l.etag, &e.etag) {
                (Some(a), Some(b)) => a == b,
                (None, None) => l.modified.is_some() && e.modified == l.modified,
                _ => false,
            }
    })
}

/// The entries of `listed`, newest first: the old index's where valid, else `read`'s. Returns
/// whether they differ from the old index.
fn merge(
    old: Option<&Index>,
    listed: &[Listed],
    done: &mut Refreshed,
    mut read: impl FnMut(&Listed) -> FolderEntry,
) -> (Vec<FolderEntry>, bool) {
    let known = by_name(old);
    let mut entries: Vec<FolderEntry> = listed
        .iter()
        .map(|l| match valid(&known, l) {
            Some(e) => {
                done.reused += 1;
                e.clone()
            }
            None => {
                done.read += 1;
                read(l)
            }
        })
        .collect();
    entries.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.name.cmp(&b.name))
    });
    let changed = done.read > 0 || old.is_none_or(|o| o.listing.bundles.len() != entries.len());
    (entries, changed)
}

/// The index entry of a bundle read (or why it could not be).
fn entry_of(l: &Listed, read: Result<Bundle, String>) -> FolderEntry {
    let (bundle, summary, error) = match read {
        Ok(b) => (Some(BundleFacts::of(&b)), Some(RunSummary::of(&b)), None),
        Err(e) => (None, None, Some(e)),
    };
    FolderEntry {
        name: l.name.clone(),
        url: bundle_url(&l.name),
        size_bytes: l.size,
        modified: l.modified.clone(),
        bundle,
        error,
        etag: l.etag.clone(),
        summary,
    }
}

/// The changes accepted in `place` ([`ACCEPTED_NAME`]): none when there is no such file or it
/// cannot be read as one.
pub(crate) async fn accepted(place: &Place) -> Accepted {
    let bytes = match place {
        Place::Local(dir) => {
            crate::boundary::file::read(&dir.join(ACCEPTED_NAME), index_limit()).ok()
        }
        Place::Bucket(b) => b
            .get(ACCEPTED_NAME, index_limit())
            .await
            .ok()
            .map(|(b, _)| b.to_vec()),
    };
    bytes.and_then(|b| Accepted::parse(&b)).unwrap_or_default()
}

/// Records in `place` that run `name` (of `label`) is accepted: kept beside the runs, so the
/// team's gate and every `history` read it. Said again, it is recorded once.
pub(crate) async fn accept(place: &Place, name: &str, label: &str) -> anyhow::Result<()> {
    let mut a = accepted(place).await;
    a.llmsweep_accepted = ACCEPTED_FORMAT;
    if !a.has(name) {
        a.accepted.push(AcceptedRun {
            run: name.to_string(),
            label: label.to_string(),
            at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        });
    }
    let text = serde_json::to_vec_pretty(&a)?;
    match place {
        Place::Local(dir) => {
            super::write_file_atomic(&dir.join(ACCEPTED_NAME), &text).map_err(|e| {
                anyhow::anyhow!("cannot write {}: {e}", dir.join(ACCEPTED_NAME).display())
            })
        }
        Place::Bucket(b) => b.put(ACCEPTED_NAME, Bytes::from(text)).await.map(|_| ()),
    }
}

/// A bundle just written, for its index entry: its name, size, version in a store, facts and
/// summary.
#[derive(Debug, Clone)]
pub(crate) struct Written {
    pub name: String,
    pub size: u64,
    pub etag: Option<String>,
    pub facts: BundleFacts,
    pub summary: RunSummary,
}

/// Puts the entry of a bundle just written into the index of `place` (see [`record_entries`]).
pub(crate) async fn record_entry(
    place: &Place,
    name: &str,
    size: u64,
    etag: Option<String>,
    facts: BundleFacts,
    summary: RunSummary,
) -> anyhow::Result<()> {
    let w = Written {
        name: name.to_string(),
        size,
        etag,
        facts,
        summary,
    };
    match place {
        Place::Local(dir) => record_local(dir, &w.name, w.facts, w.summary),
        Place::Bucket(_) => record_entries(place, vec![w]).await,
    }
}

/// Puts the entries of bundles just written into a bucket's index, read once and written back
/// once; the other entries stay as they were. A bucket that cannot take the index is left as it
/// is: a later listing rebuilds it.
pub(crate) async fn record_entries(place: &Place, written: Vec<Written>) -> anyhow::Result<()> {
    let Place::Bucket(b) = place else {
        anyhow::bail!("record_entries is for a bucket");
    };
    let mut index = match b.get(INDEX_NAME, index_limit()).await {
        Ok((bytes, _)) => Index::parse(&bytes),
        Err(_) => None,
    };
    // A store's own time is known only from a listing: an entry is checked by its ETag.
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for w in written {
        let listed = Listed {
            name: w.name,
            size: w.size,
            modified: Some(now.clone()),
            etag: w.etag,
        };
        index = Some(with_entry(
            index,
            b.url(),
            entry(&listed, w.facts, w.summary),
        ));
    }
    if let Some(index) = index {
        b.put(INDEX_NAME, Bytes::from(serde_json::to_vec(&index)?))
            .await?;
    }
    Ok(())
}

/// [`record_entry`] for a local folder, where the file's own size and time are read.
pub(crate) fn record_local(
    dir: &Path,
    name: &str,
    facts: BundleFacts,
    summary: RunSummary,
) -> anyhow::Result<()> {
    let meta = std::fs::metadata(dir.join(name))?;
    let old = read_local_index(dir);
    let listed = Listed {
        name: name.to_string(),
        size: meta.len(),
        modified: meta.modified().ok().map(|t| {
            chrono::DateTime::<chrono::Utc>::from(t)
                .to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
        }),
        etag: None,
    };
    let index = with_entry(
        old,
        &dir.display().to_string(),
        entry(&listed, facts, summary),
    );
    super::write_file_atomic(&dir.join(INDEX_NAME), &serde_json::to_vec(&index)?)?;
    Ok(())
}

/// `old` (or a new index of `folder`) with `e` in place of any entry of its name, first.
fn with_entry(old: Option<Index>, folder: &str, e: FolderEntry) -> Index {
    let mut index = old.unwrap_or_else(|| Index {
        llmsweep_index: INDEX_FORMAT,
        listing: FolderListing {
            folder: folder.to_string(),
            bundles: Vec::new(),
        },
    });
    index.listing.bundles.retain(|x| x.name != e.name);
    index.listing.bundles.insert(0, e);
    index
}

fn entry(l: &Listed, facts: BundleFacts, summary: RunSummary) -> FolderEntry {
    FolderEntry {
        bundle: Some(facts),
        summary: Some(summary),
        error: None,
        ..entry_of(l, Err(String::new()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(label: &str) -> Bundle {
        crate::store::new_bundle(
            format!("id-{label}"),
            label.into(),
            "2026-12-01T00:00:00Z".into(),
            vec![],
            llmsweep_shared::bundle::Target {
                url: "http://127.0.0.1:1".into(),
                api: llmsweep_shared::bundle::Api::Chat,
                model: "m".into(),
                engine: Some("sglang".into()),
                engine_version: Some("0.5.11".into()),
                max_context: None,
                max_running_requests: Some(16),
                server_args: None,
                simulated: true,
                probes: Default::default(),
            },
        )
    }

    #[test]
    fn a_folder_index_is_built_reused_and_follows_changes() {
        let dir = tempfile::tempdir().unwrap();
        for l in ["a", "b"] {
            crate::store::write_atomic(&dir.path().join(format!("{l}.json")), &bundle(l)).unwrap();
        }
        std::fs::write(dir.path().join("bad.json"), b"{").unwrap();
        let (i, r) = refresh_local(dir.path()).unwrap();
        assert_eq!((r.read, r.reused, r.written), (3, 0, true));
        assert_eq!(i.listing.bundles.len(), 3);
        let b = i
            .listing
            .bundles
            .iter()
            .find(|e| e.name == "b.json")
            .unwrap();
        assert_eq!(b.bundle.as_ref().unwrap().label, "b");
        let s = b.summary.as_ref().unwrap();
        assert_eq!(s.engine_words(), "sglang 0.5.11");
        assert!(i.listing.bundles.iter().any(|e| e.error.is_some()));
        // Nothing changed: every entry reused, nothing written.
        let (_, r) = refresh_local(dir.path()).unwrap();
        assert_eq!((r.read, r.reused, r.written), (0, 3, false));
        // One bundle rewritten, one removed: only that one read again.
        crate::store::write_atomic(&dir.path().join("a.json"), &bundle("a2")).unwrap();
        std::fs::remove_file(dir.path().join("bad.json")).unwrap();
        let (i, r) = refresh_local(dir.path()).unwrap();
        assert_eq!((r.read, r.reused, r.written), (1, 1, true));
        let a = i
            .listing
            .bundles
            .iter()
            .find(|e| e.name == "a.json")
            .unwrap();
        assert_eq!(a.bundle.as_ref().unwrap().label, "a2");
        // The index itself is not listed as a bundle, nor is a broken index trusted.
        assert!(i.listing.bundles.iter().all(|e| e.name != INDEX_NAME));
        std::fs::write(dir.path().join(INDEX_NAME), b"[1,2").unwrap();
        let (_, r) = refresh_local(dir.path()).unwrap();
        assert_eq!((r.read, r.reused), (2, 0));
    }

    #[tokio::test]
    async fn a_recorded_entry_is_reused_by_the_next_listing() {
        let dir = tempfile::tempdir().unwrap();
        let b = bundle("kpro5");
        let path = dir.path().join("kpro5.json");
        crate::store::write_atomic(&path, &b).unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        let place = Place::Local(dir.path().to_path_buf());
        let _ = size;
        record_entry(
            &place,
            "kpro5.json",
            0,
            None,
            BundleFacts::of(&b),
            RunSummary::of(&b),
        )
        .await
        .unwrap();
        let (i, r) = refresh(&place).await.unwrap();
        assert_eq!((r.read, r.reused), (0, 1));
        assert_eq!(i.listing.bundles[0].bundle.as_ref().unwrap().label, "kpro5");
    }
}
