//! `llmsweep history`, `llmsweep index` and `llmsweep push`: a team's runs in a folder or a
//! bucket, listed from its index, and one metric at one level across the runs of a label.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use llmsweep_shared::bundle::SweepKind;
use llmsweep_shared::curves::Metric;
use llmsweep_shared::history::{History, histories};

use crate::output::history::render;
use crate::output::terminal::inert;
use crate::store::index::{self, Place};

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # How kpro5's steady throughput at C=16 moved over its nightly runs
  llmsweep history s3://team-bench/llmsweep --label kpro5 --at C=16

  # Every level of every label in a local folder, changes summed up
  llmsweep history results

  # A nightly CI gate: exit 1 while the newest run is worse beyond the noise
  llmsweep history s3://team-bench/llmsweep --label kpro5 --at C=16 --fail-on-change

  # The change was meant (a new model, fewer GPUs): from this run on, it is the baseline
  llmsweep history s3://team-bench/llmsweep --accept kpro5-run-20261207T020000Z.json")]
pub struct HistoryArgs {
    /// Folder or bucket prefix (s3://BUCKET/PREFIX) of bundles.
    #[arg(value_name = "DIR|s3://…")]
    pub place: PathBuf,
    /// Only the runs of this label (host).
    #[arg(long)]
    pub label: Option<String>,
    /// The metric, by its name in bundles, e.g. steady_tok_s, ttft_p50_s, decode_tok_s_p50.
    ///
    /// The metric, by its name in bundles: steady_tok_s (the default), agg_tok_s,
    /// decode_tok_s_p50, ttft_p50_s, ttft_p99_s, e2e_p50_s, e2e_p99_s, accept_length
    /// (throughput); ttft_p50_s, ttft_p99_s, prefill_tok_s_p50, decode_tok_s_p50, e2e_p50_s
    /// (context); ttft_p50_s, ttft_p99_s, tpot_p50_s, e2e_p50_s, e2e_p99_s, achieved_rps,
    /// goodput_fraction (rate).
    #[arg(long, default_value = "steady_tok_s", value_parser = parse_metric)]
    pub metric: Metric,
    /// The level: C=16 (throughput), input=8000 (context) or rate=2 (requests/s).
    ///
    /// The level: C=16 (throughput), input=8000 (context) or rate=2 (offered requests/s).
    /// Without it, every level is summed up in a line, and each change is listed.
    #[arg(long, value_name = "LEVEL", value_parser = parse_level)]
    pub at: Option<Level>,
    /// Exit 1 while the newest run is worse beyond the noise than the accepted baseline.
    ///
    /// A nightly job's gate: exit 1 while the newest run of a history shown is worse beyond the
    /// noise (lower throughput, higher latency) than the runs before the last change nobody
    /// accepted, however many runs since have been as slow; exit 3 when the newest run has no
    /// interval at a level, or no history has two runs to tell a change by.
    #[arg(long)]
    pub fail_on_change: bool,
    /// Accept the change at this run (a bundle's file name in the place).
    ///
    /// Recorded in the place beside the runs (.llmsweep-accepted.json), so the whole team's
    /// gate takes it: from this run on, its numbers are the baseline.
    #[arg(long, value_name = "RUN")]
    pub accept: Option<String>,
}

/// A level as `--at` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Level {
    pub kind: SweepKind,
    pub key: u64,
}

fn parse_metric(text: &str) -> Result<Metric, String> {
    Metric::from_key(text.trim()).ok_or_else(|| {
        let known: Vec<&str> = [SweepKind::Throughput, SweepKind::Context, SweepKind::Rate]
            .iter()
            .flat_map(|k| llmsweep_shared::history::summary_metrics(*k))
            .map(|m| m.key())
            .fold(Vec::new(), |mut v, k| {
                if !v.contains(&k) {
                    v.push(k);
                }
                v
            });
        format!(
            "{text:?} is not a metric a history keeps: give one of {}",
            known.join(", ")
        )
    })
}

fn parse_level(text: &str) -> Result<Level, String> {
    let bad = || {
        format!(
            "{text:?} is not a level: give C=16 (throughput), input=8000 (context) or rate=2 (requests/s)"
        )
    };
    let (name, value) = text.split_once('=').ok_or_else(bad)?;
    let value = value.trim();
    match name.trim().to_ascii_lowercase().as_str() {
        "c" => Ok(Level {
            kind: SweepKind::Throughput,
            key: value.parse().map_err(|_| bad())?,
        }),
        "input" | "in" => Ok(Level {
            kind: SweepKind::Context,
            key: value.parse().map_err(|_| bad())?,
        }),
        "rate" => {
            let r: f64 = value.parse().map_err(|_| bad())?;
            if !(r.is_finite() && r > 0.0) {
                return Err(bad());
            }
            Ok(Level {
                kind: SweepKind::Rate,
                key: (r * 1000.0).round() as u64,
            })
        }
        _ => Err(bad()),
    }
}

/// `llmsweep history`: the histories of a place, printed; the gate's exit code.
pub(crate) async fn run(a: HistoryArgs) -> anyhow::Result<ExitCode> {
    let place = Place::parse(&a.place)?;
    check_local(&place)?;
    let (index, _) = index::refresh(&place).await?;
    let (listing, future) = without_future(index.listing, chrono::Utc::now());
    let listing = &listing;
    if let Some(run) = &a.accept {
        accept(&place, listing, run).await?;
    }
    if let Some(l) = &a.label
        && !listing
            .bundles
            .iter()
            .any(|e| e.bundle.as_ref().is_some_and(|f| &f.label == l))
    {
        let mut labels: Vec<&str> = listing
            .bundles
            .iter()
            .filter_map(|e| Some(e.bundle.as_ref()?.label.as_str()))
            .collect();
        labels.sort_unstable();
        labels.dedup();
        bail!(
            "no run labelled {} in {}: its labels are {}",
            inert(l),
            place.shown(),
            if labels.is_empty() {
                "none (no readable bundle)".to_string()
            } else {
                inert(&labels.join(", ")).into_owned()
            }
        );
    }
    let mut found: Vec<History> =
        histories(listing, a.label.as_deref(), a.metric, a.at.map(|l| l.kind));
    if let Some(at) = a.at {
        found.retain(|h| h.key == at.key);
    }
    out!("{}", render(&place.shown(), &found, a.at.is_some()));
    if let Some(note) = unread_note(listing) {
        errln!("{}", inert(&note));
    }
    if let Some(note) = future_note(&future) {
        errln!("{}", inert(&note));
    }
    if found.is_empty() {
        errln!(
            "no history of {} in {}{}: a history needs two runs of one label and workload that measured it{}",
            a.metric.key(),
            inert(&place.shown()),
            a.label
                .as_ref()
                .map(|l| format!(" for {}", inert(l)))
                .unwrap_or_default(),
            a.at.map(|l| format!(
                " at {}",
                llmsweep_shared::compare::verdict::level_text(l.kind, l.key)
            ))
            .unwrap_or_default()
        );
        return Ok(ExitCode::from(if a.fail_on_change { 3 } else { 0 }));
    }
    if a.fail_on_change {
        let accepted = index::accepted(&place).await;
        return Ok(judge(&found, &accepted, &place.shown()));
    }
    Ok(ExitCode::SUCCESS)
}

/// The gate over `found`: exit 1 while a newest run is worse than its accepted baseline, 3
/// when a newest run cannot be told, else 0; what it found is said on standard error.
fn judge(
    found: &[History],
    accepted: &llmsweep_shared::history::Accepted,
    shown: &str,
) -> ExitCode {
    use llmsweep_shared::history::{Gate, gate};
    let mut worse = Vec::new();
    let mut untold = Vec::new();
    for h in found {
        match gate(h, accepted) {
            Gate::Pass => {}
            Gate::Worse { since, pct } => worse.push((h, since, pct)),
            Gate::CannotTell => untold.push(format!("{} at {}", h.label, h.level_text())),
        }
    }
    if !worse.is_empty() {
        let said: Vec<String> = worse
            .iter()
            .map(|(h, since, pct)| {
                format!(
                    "{} at {}: {pct:+.1} % since {}",
                    h.label,
                    h.level_text(),
                    h.runs[*since].name
                )
            })
            .collect();
        let first = worse[0].0.runs[worse[0].1].name.clone();
        errln!(
            "gate: the newest run is worse beyond the noise than the accepted baseline: {}",
            inert(&said.join("; "))
        );
        errln!(
            "  if the change is meant, accept it: llmsweep history {} --accept {}",
            inert(shown),
            inert(&first)
        );
        return ExitCode::from(1);
    }
    if !untold.is_empty() {
        errln!(
            "gate: cannot tell: the newest run has no interval at {} (a level of too few requests, or an imported run): rerun it with llmsweep's defaults, or gate another level with --at",
            inert(&untold.join(", "))
        );
        return ExitCode::from(3);
    }
    errln!("gate: passed — no newest run is worse beyond the noise than its accepted baseline");
    ExitCode::SUCCESS
}

/// `--accept RUN`: the run must be a bundle of the place that is in a history.
async fn accept(
    place: &Place,
    listing: &llmsweep_shared::folder::FolderListing,
    run: &str,
) -> anyhow::Result<()> {
    let Some(facts) = listing
        .bundles
        .iter()
        .find(|e| e.name == run)
        .and_then(|e| e.bundle.as_ref())
    else {
        bail!(
            "--accept {}: no readable bundle of that name in {}; give a run's file name as `llmsweep history` lists it",
            inert(run),
            inert(&place.shown())
        );
    };
    index::accept(place, run, &facts.label).await?;
    errln!(
        "accepted: {} ({}): the gate takes its numbers as the baseline from now on",
        inert(run),
        inert(&facts.label)
    );
    Ok(())
}

/// Files of the listing that are not in any history because they cannot be read as bundles,
/// named with why (the first few): a nightly gate must not pass over a newest run it never
/// read. `None` when every file was read.
fn unread_note(listing: &llmsweep_shared::folder::FolderListing) -> Option<String> {
    const SHOWN: usize = 5;
    let unread: Vec<String> = listing
        .bundles
        .iter()
        .filter(|e| e.bundle.is_none())
        .map(|e| match &e.error {
            Some(why) => format!("{} ({why})", e.name),
            None => e.name.clone(),
        })
        .collect();
    let first = unread.first()?;
    let more = match unread.len() {
        1 => String::new(),
        n if n <= SHOWN => format!("; {}", unread[1..].join("; ")),
        n => format!("; {}; and {} more", unread[1..SHOWN].join("; "), n - SHOWN),
    };
    Some(format!(
        "note: {} not in any history: {first}{more}",
        match unread.len() {
            1 => "1 file is not a readable bundle, so it is".to_string(),
            n => format!("{n} files are not readable bundles, so they are"),
        }
    ))
}

/// How far ahead of this machine's clock a run's date may be (another host's clock) and still
/// be placed in time.
const CLOCK_SKEW: chrono::Duration = chrono::Duration::days(1);

/// The listing without the runs dated after `now` (give or take [`CLOCK_SKEW`]), and those
/// runs: a bundle that says it was made in 2099 would sort after every real run and be taken
/// for the newest, hiding the real newest from the gate.
fn without_future(
    mut listing: llmsweep_shared::folder::FolderListing,
    now: chrono::DateTime<chrono::Utc>,
) -> (
    llmsweep_shared::folder::FolderListing,
    Vec<llmsweep_shared::folder::FolderEntry>,
) {
    let limit = now + CLOCK_SKEW;
    let (future, kept) = listing.bundles.into_iter().partition(|e| {
        e.bundle.as_ref().is_some_and(|f| {
            chrono::DateTime::parse_from_rfc3339(&f.created_at)
                .is_ok_and(|d| d.with_timezone(&chrono::Utc) > limit)
        })
    });
    listing.bundles = kept;
    (listing, future)
}

/// What is said of runs left out because of their date.
fn future_note(future: &[llmsweep_shared::folder::FolderEntry]) -> Option<String> {
    let first = future.first()?;
    let date = first.bundle.as_ref().map_or("", |f| f.created_at.as_str());
    Some(format!(
        "note: {} dated in the future ({} says {date}{}), so where {} in time is unknown: left out of every history; check the clock of the host that wrote {}",
        match future.len() {
            1 => "1 run is".to_string(),
            n => format!("{n} runs are"),
        },
        first.name,
        if future.len() > 1 { ", and others" } else { "" },
        if future.len() == 1 {
            "it is"
        } else {
            "they are"
        },
        if future.len() == 1 { "it" } else { "them" },
    ))
}

/// A local place must be a folder.
fn check_local(place: &Place) -> anyhow::Result<()> {
    if let Place::Local(dir) = place {
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!(
                "{} is not a folder: give the folder (or s3://BUCKET/PREFIX) the bundles are in",
                dir.display()
            ),
            Err(e) => bail!(
                "cannot open the folder {}: {e}; give the folder (or s3://BUCKET/PREFIX) the bundles are in",
                dir.display()
            ),
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # Rebuild the index of a team's bucket (after copying bundles in by other means)
  llmsweep index s3://team-bench/llmsweep

  # The local results folder's
  llmsweep index results")]
pub struct IndexArgs {
    /// Folder or bucket prefix (s3://BUCKET/PREFIX) of bundles.
    #[arg(value_name = "DIR|s3://…")]
    pub place: PathBuf,
}

/// `llmsweep index`: the index refreshed, and what it holds.
pub(crate) async fn index(a: IndexArgs) -> anyhow::Result<ExitCode> {
    let place = Place::parse(&a.place)?;
    check_local(&place)?;
    let started = std::time::Instant::now();
    let (index, done) = index::refresh(&place).await?;
    let unreadable = index
        .listing
        .bundles
        .iter()
        .filter(|e| e.error.is_some())
        .count();
    outln!(
        "{}: {} bundle{}{}; {} read, {} from the index; {} in {:.2} s",
        inert(&place.shown()),
        index.listing.bundles.len(),
        if index.listing.bundles.len() == 1 {
            ""
        } else {
            "s"
        },
        if unreadable > 0 {
            format!(" ({unreadable} unreadable)")
        } else {
            String::new()
        },
        done.read,
        done.reused,
        if done.written {
            "index written"
        } else if done.read == 0 {
            "index unchanged"
        } else {
            "index NOT written (the place does not take it)"
        },
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # A run the bucket could not be reached for, copied there now
  llmsweep push results/kpro5-run-20261201T192003Z.json --to s3://team-bench/llmsweep

  # Every local result
  llmsweep push results/*.json --to s3://team-bench/llmsweep")]
pub struct PushArgs {
    /// Bundles to copy (.json, .json.gz).
    #[arg(required = true, value_name = "BUNDLE")]
    pub files: Vec<PathBuf>,
    /// The bucket prefix (s3://BUCKET/PREFIX) to copy them into.
    #[arg(long, value_name = "s3://…")]
    pub to: String,
}

/// `llmsweep push`: bundles copied into a bucket, each checked as a bundle first, and the
/// bucket's index updated.
pub(crate) async fn push(a: PushArgs) -> anyhow::Result<ExitCode> {
    if !crate::store::bucket::is_bucket_url(&a.to) {
        bail!(
            "--to {}: give a bucket prefix, s3://BUCKET/PREFIX (to copy into a folder, use cp)",
            inert(&a.to)
        );
    }
    use crate::store::bucket::key_char;
    let bucket = crate::store::bucket::Bucket::open(&a.to)?;
    bucket.check_write().await?;
    let place = Place::Bucket(bucket.clone());
    let mut failed = 0;
    let mut written = Vec::new();
    for f in &a.files {
        let shown = f.display().to_string();
        let name = match f.file_name().and_then(|n| n.to_str()) {
            Some(llmsweep_shared::history::INDEX_NAME) => {
                // `results/*.json` takes the folder's index too: it is the bucket's own to keep.
                errln!(
                    "{}: skipped: a folder's index, not a bundle (the bucket keeps its own)",
                    inert(&shown)
                );
                continue;
            }
            Some(n) if llmsweep_shared::folder::is_bundle_name(n) && n.chars().all(key_char) => {
                n.to_string()
            }
            Some(n) if llmsweep_shared::folder::is_bundle_name(n) => {
                // A `%`, a space, a control or non-ASCII character would be stored so that a
                // listing could not give the same name back.
                errln!(
                    "{}: not copied: a name in a bucket is letters, digits, '-', '_' and '.'; rename the file (its bundle is unchanged)",
                    llmsweep_shared::text::one_line(&shown)
                );
                failed += 1;
                continue;
            }
            _ => {
                errln!(
                    "{}: not copied: only .json and .json.gz bundles are",
                    llmsweep_shared::text::one_line(&shown)
                );
                failed += 1;
                continue;
            }
        };
        // Read as a bundle first, so nothing but bundles goes into a team's bucket.
        let b = match crate::store::read_bundle(f) {
            Ok(b) => b,
            Err(e) => {
                errln!(
                    "{}: not copied: {}",
                    inert(&shown),
                    inert(&format!("{e:#}"))
                );
                failed += 1;
                continue;
            }
        };
        let read =
            crate::boundary::file::read(f, llmsweep_shared::bundle::MAX_INFLATED_BYTES as u64);
        let bytes = match read {
            Ok(b) => bytes::Bytes::from(b),
            Err(e) => {
                errln!("{}: not copied: {e}", inert(&shown));
                failed += 1;
                continue;
            }
        };
        let size = bytes.len() as u64;
        match bucket.put(&name, bytes).await {
            Ok(etag) => {
                written.push(index::Written {
                    name: name.clone(),
                    size,
                    etag,
                    facts: llmsweep_shared::folder::BundleFacts::of(&b),
                    summary: llmsweep_shared::history::RunSummary::of(&b),
                });
                outln!("{} → {}", inert(&shown), bucket.object_url(&name));
            }
            Err(e) => {
                errln!(
                    "{}: not copied: {}",
                    inert(&shown),
                    inert(&format!("{e:#}"))
                );
                failed += 1;
            }
        }
    }
    // One update of the index for all of them; a failure is repaired by the next listing.
    if !written.is_empty()
        && let Err(e) = index::record_entries(&place, written).await
    {
        errln!(
            "note: the bucket's index was not updated ({}); the next `llmsweep index {}` or listing rebuilds it",
            inert(&format!("{e:#}")),
            bucket.url()
        );
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_no_history_could_read_are_named_with_why() {
        use llmsweep_shared::folder::{FolderEntry, FolderListing};
        let entry = |name: &str, error: Option<&str>| FolderEntry {
            name: name.into(),
            url: format!("bundles/{name}"),
            size_bytes: 1,
            modified: None,
            bundle: None,
            error: error.map(String::from),
            etag: None,
            summary: None,
        };
        let mut listing = FolderListing {
            folder: "results".into(),
            bundles: Vec::new(),
        };
        assert_eq!(unread_note(&listing), None);
        listing
            .bundles
            .push(entry("big.json", Some("1024 MB, more than 512 MB")));
        assert_eq!(
            unread_note(&listing).unwrap(),
            "note: 1 file is not a readable bundle, so it is not in any history: big.json (1024 MB, more than 512 MB)"
        );
        for i in 0..6 {
            listing.bundles.push(entry(&format!("x{i}.json"), None));
        }
        let note = unread_note(&listing).unwrap();
        assert!(
            note.starts_with("note: 7 files are not readable bundles, so they are not in any history: big.json (1024 MB, more than 512 MB); x0.json; x1.json; x2.json; x3.json; and 2 more"),
            "{note}"
        );
    }

    #[test]
    fn levels_and_metrics_are_read_or_refused_with_what_to_give() {
        assert_eq!(
            parse_level("C=16"),
            Ok(Level {
                kind: SweepKind::Throughput,
                key: 16
            })
        );
        assert_eq!(parse_level("input=8000").unwrap().kind, SweepKind::Context);
        assert_eq!(parse_level("rate=2.5").unwrap().key, 2500);
        for bad in ["16", "C=x", "rate=-1", "q=3"] {
            assert!(parse_level(bad).unwrap_err().contains("give C=16"), "{bad}");
        }
        assert_eq!(parse_metric("ttft_p50_s"), Ok(Metric::TtftP50));
        let e = parse_metric("tok_s").unwrap_err();
        assert!(
            e.contains("steady_tok_s") && e.contains("goodput_fraction"),
            "{e}"
        );
    }
}
