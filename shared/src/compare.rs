//! Comparing runs against a baseline: the same-workload rule, per-level deltas, metadata diff.
//!
//! The viewer's compare tab and the terminal's `compare` command both render a [`Comparison`],
//! so they can never disagree about a delta or about whether two runs are comparable.

mod csv;
pub mod gate;
pub mod interval;
mod meta;
mod rate;
pub mod verdict;
mod workload;

pub use csv::csv_line;

#[cfg(test)]
pub(crate) use rate::tests as rate_tests;

use std::collections::BTreeSet;

use crate::bundle::{Bundle, FlagKind, Point, PointStatus, SweepKind};
use crate::charts::axis::fixed;
use crate::curves::Metric;
use crate::shapes::{self, Shape, sweep_at};

pub use interval::{Change, Estimate, RESOLUTION_S, Spread};
pub use rate::rate_text;
pub use verdict::{Outcome, SweepVerdict, WorkloadCheck, verdicts, workload_checks};
pub use workload::workload_mismatch;

/// Changes smaller than this many percent are shown as unchanged, not better or worse, even when
/// beyond the noise.
pub const NEUTRAL_PCT: f64 = 1.0;

/// One run given to [`compare`]: its display label and bundle.
#[derive(Debug, Clone, Copy)]
pub struct RunInput<'a> {
    pub label: &'a str,
    pub bundle: &'a Bundle,
}

/// How a value compares with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Better beyond the noise (see [`interval`]) and by at least [`NEUTRAL_PCT`].
    Better,
    /// Worse beyond the noise and by at least [`NEUTRAL_PCT`].
    Worse,
    /// No significant change: within the noise, or within ±[`NEUTRAL_PCT`].
    Same,
    /// The baseline itself, or no value to compare.
    None,
}

/// One run's value of one metric at one level.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub value: Option<f64>,
    /// `(value − baseline) / baseline × 100`; absent for the baseline and missing values.
    pub delta_pct: Option<f64>,
    /// The change with its confidence interval; absent where `delta_pct` is.
    pub change: Option<Change>,
    pub verdict: Verdict,
    /// Why there is no value: "skipped", "failed", "not run".
    pub note: Option<String>,
    /// Why the value is not quite what the metric's name says (an imported number whose
    /// statistic its source did not state); see [`Metric::caveat`].
    pub caveat: Option<&'static str>,
}

/// A metric at one level, a cell per compared run (baseline first).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricRow {
    pub metric: Metric,
    pub cells: Vec<Cell>,
}

/// One level: a concurrency (throughput), an input length (context) or an offered rate (rate).
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// See [`level_key`]; [`verdict::level_text`] says it in words.
    pub key: u64,
    pub rows: Vec<MetricRow>,
    /// What the server said of its load at this level, per compared run (baseline first):
    /// shown beside the metrics, not judged.
    pub peaks: Vec<ServerPeaks>,
    /// The words of each compared run's flags here that can explain a change by themselves
    /// (baseline first): a stall, a busy client host, other traffic on the server, outputs
    /// shorter than asked. A change at this level may be theirs rather than the server's speed.
    pub causes: Vec<Option<String>>,
    /// Whether each compared run's row here was cut off in its source (an imported table's
    /// `cut-off` flag): only its intact cells are compared (baseline first).
    pub cut_off: Vec<bool>,
    /// Whether each compared run's point here is flagged `queue-filling`: its TTFT is of a
    /// queue still filling and grows with the level's length (baseline first).
    pub queue_filling: Vec<bool>,
}

impl Level {
    /// Whether the baseline and the run in column `n` both measured this level (a value in some
    /// row): a level both skipped is in the table but has no change to judge.
    pub fn measured_by_both(&self, n: usize) -> bool {
        self.rows.iter().any(|r| {
            r.cells.first().is_some_and(|c| c.value.is_some())
                && r.cells.get(n).is_some_and(|c| c.value.is_some())
        })
    }
}

/// A point's peak queue and KV-cache usage, from its server samples.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServerPeaks {
    /// Most requests waiting in the server's queue.
    pub queue: Option<f64>,
    /// Highest KV-cache usage, a fraction `0..=1`.
    pub kv: Option<f64>,
}

impl ServerPeaks {
    fn of(p: &Point) -> ServerPeaks {
        let s = p.server_samples.as_ref();
        ServerPeaks {
            queue: s.and_then(|s| s.queue_peak()),
            kv: s.and_then(|s| s.kv_peak()),
        }
    }
}

/// A run left out of a sweep's comparison, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub run: usize,
    pub reasons: Vec<String>,
}

/// The comparison of one kind of sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepComparison {
    pub kind: SweepKind,
    /// The shape of the throughput sweeps compared, when a run has several (`--shapes`): the
    /// sweeps of that shape are paired; `None` pairs each run's first sweep of the kind.
    pub shape: Option<Shape>,
    /// Runs compared, as indices into the input; the baseline first.
    pub runs: Vec<usize>,
    pub levels: Vec<Level>,
    /// Runs that ran a different workload than the baseline: not compared.
    pub mismatched: Vec<Mismatch>,
    /// Runs without this kind of sweep (the baseline among them: then nothing is compared).
    pub absent: Vec<usize>,
    /// Levels a compared run measured that are not in the table (the table holds the levels the
    /// baseline and at least one other run have), per run: `(run, keys)`.
    pub only_in: Vec<(usize, Vec<u64>)>,
}

/// A metadata field across runs.
#[derive(Debug, Clone, PartialEq)]
pub struct MetaRow {
    pub name: String,
    /// One per input run, in input order.
    pub values: Vec<String>,
    pub differs: bool,
}

/// Everything the compare view shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub baseline: usize,
    pub labels: Vec<String>,
    /// Throughput first, then context, then rate; a kind no run has is left out.
    pub sweeps: Vec<SweepComparison>,
    pub metadata: Vec<MetaRow>,
    /// Per input run: for an imported run, where its numbers come from, in one line (e.g.
    /// "imported from vllm bench serve (c1.json, c8.json): vLLM's definitions apply").
    pub sources: Vec<Option<String>>,
    /// For every run but the baseline: whether it sent the same prompts (see
    /// [`workload_checks`]).
    pub workload: Vec<WorkloadCheck>,
    /// Per input run: its bundle is not complete (interrupted, or still being written).
    pub incomplete: Vec<bool>,
    /// Per input run: the most requests its server runs at once, when it said.
    pub running: Vec<Option<u64>>,
    /// Per input run: the GPUs serving its model, when known (see [`crate::deploy::gpus`]).
    pub gpus: Vec<Option<u32>>,
}

/// One line saying where an imported run's numbers come from; `None` for a measured run.
pub fn source_line(b: &Bundle) -> Option<String> {
    let s = b.source.as_ref()?;
    let version = s
        .version
        .as_deref()
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    let files = if s.files.is_empty() {
        String::new()
    } else {
        format!(" ({})", s.files.join(", "))
    };
    Some(format!(
        "imported from {}{version}{files}: its own definitions apply, not llmsweep's",
        s.tool
    ))
}

/// The definition a bundle gives for what `metric` shows: llmsweep's for a measured run, the
/// source's for an imported one.
pub fn definition(b: &Bundle, metric: Metric) -> Option<&str> {
    let key = match metric {
        Metric::SteadyTokS => "steady_tok_s",
        Metric::AggTokS => "agg_tok_s",
        Metric::DecodeTokSP50 => "decode_tok_s",
        Metric::TtftP50 | Metric::TtftP99 | Metric::TtftMean | Metric::TtftP90 => "ttft_s",
        Metric::E2eP50 | Metric::E2eP99 | Metric::E2eMean | Metric::E2eP90 => "e2e_s",
        Metric::TpotP50 | Metric::TpotMean | Metric::TpotP90 => "tpot_s",
        // An imported run's achieved rate is the request rate its tool counted.
        Metric::AchievedRps if b.is_imported() => "request_s",
        Metric::AchievedRps => "achieved_rps",
        Metric::GoodputFraction | Metric::GoodRps => "goodput",
        Metric::LagP99 => "schedule_lag_s",
        Metric::ItlP50 => "itl_s",
        Metric::PrefillTokSP50 => "prefill_tok_s",
        Metric::RequestS => "request_s",
        Metric::AcceptLength => "accept_length",
    };
    b.definitions.get(key).map(String::as_str)
}

/// Compares every run with `runs[baseline]`.
pub fn compare(runs: &[RunInput], baseline: usize) -> Comparison {
    let baseline = baseline.min(runs.len().saturating_sub(1));
    let sweeps = [SweepKind::Throughput, SweepKind::Context, SweepKind::Rate]
        .into_iter()
        .flat_map(|kind| sweep_keys(runs, baseline, kind))
        .filter_map(|(kind, shape)| compare_sweep(runs, baseline, kind, shape))
        .collect();
    let mut cmp = Comparison {
        baseline,
        labels: runs
            .iter()
            .map(|r| crate::shorten::label(r.label).into_owned())
            .collect(),
        sweeps,
        metadata: meta::metadata(runs),
        sources: runs.iter().map(|r| source_line(r.bundle)).collect(),
        workload: Vec::new(),
        incomplete: runs.iter().map(|r| !r.bundle.complete).collect(),
        running: runs
            .iter()
            .map(|r| r.bundle.target.max_running_requests)
            .collect(),
        gpus: runs
            .iter()
            .map(|r| crate::deploy::gpus(r.bundle).map(|g| g.count))
            .collect(),
    };
    cmp.workload = workload_checks(runs, &cmp);
    mark_as_judged(&mut cmp, NEUTRAL_PCT);
    cmp
}

/// Marks each cell with a change better or worse as the gate judges it: by the cell's own
/// interval, beyond the noise of that level and at least `threshold_pct` (see [`verdict_at`]),
/// so that a table printed with `--fail-if-slower` marks what the gate fails on.
pub fn mark_as_gated(cmp: &mut Comparison, threshold_pct: f64) {
    mark_cells(cmp, threshold_pct, &[]);
}

/// Marks each cell better or worse as the verdict counts it, `threshold_pct` the smallest
/// change that counts: for a metric the verdict judges, only where its judgements taken
/// together find the change beyond the noise (see [`verdict::verdicts`]), so that a table, a
/// chart or a report never marks as worse what the verdict above it calls within the noise
/// (the kpro5 story's C=2 aggregate, −9.6 ±8.7 % against an imported kpro6, was marked
/// WORSE under "no level beyond the noise"); for a metric it does not judge, by the cell's
/// own interval ([`verdict_at`]).
pub fn mark_as_judged(cmp: &mut Comparison, threshold_pct: f64) {
    let judged = verdict::verdicts(cmp, threshold_pct);
    mark_cells(cmp, threshold_pct, &judged);
}

/// Each run's cells marked as `judged` counts them, and by their own interval where it does
/// not judge the metric (or says nothing of the run).
fn mark_cells(cmp: &mut Comparison, threshold_pct: f64, judged: &[verdict::SweepVerdict]) {
    for s in &mut cmp.sweeps {
        for level in &mut s.levels {
            for row in &mut level.rows {
                for (n, cell) in row.cells.iter_mut().enumerate().skip(1) {
                    let counted = s.runs.get(n).and_then(|&run| {
                        judged
                            .iter()
                            .find(|v| v.kind == s.kind && v.shape == s.shape && v.run == run)
                            .and_then(|v| v.counted(row.metric, level.key))
                    });
                    cell.verdict = match (cell.change, counted) {
                        (Some(_), Some(v)) => v,
                        (change, _) => verdict_at(row.metric, change.as_ref(), threshold_pct),
                    };
                }
            }
        }
    }
}

/// The sweeps to compare of `kind`: one per shape of the baseline's throughput sweeps when a
/// run has several (`--shapes`), else the first sweep of the kind.
fn sweep_keys(
    runs: &[RunInput],
    baseline: usize,
    kind: SweepKind,
) -> Vec<(SweepKind, Option<Shape>)> {
    let shaped = kind == SweepKind::Throughput && runs.iter().any(|r| shapes::shaped(r.bundle));
    let base = runs.get(baseline).map(|r| r.bundle);
    let shapes: Vec<Shape> = base
        .filter(|_| shaped)
        .map(|b| b.sweeps.iter().filter_map(Shape::of).collect())
        .unwrap_or_default();
    if shapes.is_empty() {
        vec![(kind, None)]
    } else {
        shapes.into_iter().map(|s| (kind, Some(s))).collect()
    }
}

fn compare_sweep(
    runs: &[RunInput],
    baseline: usize,
    kind: SweepKind,
    shape: Option<Shape>,
) -> Option<SweepComparison> {
    let base_sweep = runs
        .get(baseline)
        .and_then(|r| sweep_at(r.bundle, kind, shape));
    let mut out = SweepComparison {
        kind,
        shape,
        runs: Vec::new(),
        levels: Vec::new(),
        mismatched: Vec::new(),
        absent: Vec::new(),
        only_in: Vec::new(),
    };
    for (i, r) in runs.iter().enumerate() {
        match (sweep_at(r.bundle, kind, shape), base_sweep) {
            (None, _) => out.absent.push(i),
            // A sweep the baseline lacks is not compared, and not a different workload either.
            (Some(_), None) => {}
            (Some(s), Some(b)) => {
                let reasons = workload_mismatch(b, s, r.bundle, runs[baseline].bundle);
                if reasons.is_empty() || i == baseline {
                    out.runs.push(i);
                } else {
                    out.mismatched.push(Mismatch { run: i, reasons });
                }
            }
        }
    }
    if out.absent.len() == runs.len() {
        return None;
    }
    out.runs.sort_by_key(|&i| (i != baseline, i));
    if base_sweep.is_some() {
        let (levels, only_in) = levels(runs, &out.runs, kind, shape);
        out.levels = levels;
        out.only_in = only_in;
    }
    Some(out)
}

/// A compared sweep's name in text: its kind's, with its shape when it is one of several
/// (`throughput 128×128`).
pub fn sweep_name(kind: SweepKind, shape: Option<Shape>) -> String {
    match shape {
        Some(s) => format!("{} {}", kind_name(kind), s.name()),
        None => kind_name(kind).to_string(),
    }
}

/// "throughput" or "context".
pub fn kind_name(kind: SweepKind) -> &'static str {
    match kind {
        SweepKind::Throughput => "throughput",
        SweepKind::Context => "context",
        SweepKind::Rate => "rate",
        SweepKind::Unknown => "unknown",
    }
}

/// The level key of a point: its concurrency (throughput), its input length (context) or its
/// offered rate in milli-requests per second (rate: `2000` is 2 req/s, so rates such as 0.5 or
/// 1.25 req/s pair exactly; a point without its rate record has key 0).
pub fn level_key(kind: SweepKind, p: &Point) -> u64 {
    match kind {
        SweepKind::Context => p.input_len,
        SweepKind::Rate => p
            .rate
            .map(|r| r.offered_rps * 1000.0)
            .filter(|m| m.is_finite() && *m >= 0.0)
            .map_or(0, |m| m.round() as u64),
        _ => u64::from(p.concurrency),
    }
}

/// The table's levels (those the baseline, `compared[0]`, and at least one other run have) and
/// each run's levels left out of it.
fn levels(
    runs: &[RunInput],
    compared: &[usize],
    kind: SweepKind,
    shape: Option<Shape>,
) -> (Vec<Level>, Vec<(usize, Vec<u64>)>) {
    let metrics = table_metrics(runs, compared, kind, shape);
    let keys: Vec<BTreeSet<u64>> = compared
        .iter()
        .map(|&i| level_keys(runs[i].bundle, kind, shape))
        .collect();
    let table = table_keys(&keys);
    let only_in = compared
        .iter()
        .zip(&keys)
        .filter_map(|(&i, k)| {
            let left = left_out_levels(runs[i].bundle, kind, shape, k, &table);
            (!left.is_empty()).then_some((i, left))
        })
        .collect();
    let levels = table
        .into_iter()
        .map(|key| Level {
            key,
            peaks: level_peaks(runs, compared, kind, shape, key),
            causes: level_causes(runs, compared, kind, shape, key),
            cut_off: level_flagged(runs, compared, kind, shape, key, FlagKind::CutOff),
            queue_filling: level_flagged(runs, compared, kind, shape, key, FlagKind::QueueFilling),
            rows: metrics
                .iter()
                .map(|&m| MetricRow {
                    metric: m,
                    cells: row_cells(runs, compared, kind, shape, m, |p| {
                        level_key(kind, p) == key
                    }),
                })
                .collect(),
        })
        .collect();
    (levels, only_in)
}

/// The metrics a table of `kind` has a row for. A rate table has goodput rows only when every
/// compared run counted it: a run without --goodput has nothing to set beside them.
fn table_metrics(
    runs: &[RunInput],
    compared: &[usize],
    kind: SweepKind,
    shape: Option<Shape>,
) -> Vec<Metric> {
    match kind {
        SweepKind::Context => Metric::CONTEXT.to_vec(),
        SweepKind::Rate => Metric::RATE
            .into_iter()
            .filter(|m| {
                !matches!(m, Metric::GoodputFraction | Metric::GoodRps)
                    || compared.iter().all(|&i| {
                        sweep_at(runs[i].bundle, kind, shape)
                            .is_some_and(|s| s.points.iter().any(|p| p.goodput.is_some()))
                    })
            })
            .collect(),
        // Acceptance only where a run shown has speculative decoding.
        _ => Metric::THROUGHPUT
            .into_iter()
            .filter(|m| {
                *m != Metric::AcceptLength
                    || compared.iter().any(|&i| {
                        sweep_at(runs[i].bundle, kind, shape)
                            .is_some_and(|s| s.points.iter().any(|p| m.of(p).is_some()))
                    })
            })
            .collect(),
    }
}

/// The level keys of a bundle's sweep of `kind`; none without that sweep.
fn level_keys(b: &Bundle, kind: SweepKind, shape: Option<Shape>) -> BTreeSet<u64> {
    sweep_at(b, kind, shape)
        .map(|s| s.points.iter().map(|p| level_key(kind, p)).collect())
        .unwrap_or_default()
}

/// The keys of the table, from each compared run's keys (the baseline's first): the baseline's
/// keys that at least one other run has too. None without runs.
fn table_keys(keys: &[BTreeSet<u64>]) -> BTreeSet<u64> {
    let Some((base, others)) = keys.split_first() else {
        return BTreeSet::new();
    };
    base.iter()
        .copied()
        .filter(|k| others.iter().any(|o| o.contains(k)))
        .collect()
}

/// A run's `keys` that are not in the `table` and that it measured: a level it skipped (beyond
/// the server's context) was not measured anywhere.
fn left_out_levels(
    b: &Bundle,
    kind: SweepKind,
    shape: Option<Shape>,
    keys: &BTreeSet<u64>,
    table: &BTreeSet<u64>,
) -> Vec<u64> {
    let measured = |k: u64| {
        sweep_at(b, kind, shape).is_some_and(|s| {
            s.points
                .iter()
                .any(|p| level_key(kind, p) == k && p.status != PointStatus::Skipped)
        })
    };
    keys.difference(table)
        .copied()
        .filter(|&k| measured(k))
        .collect()
}

/// Each compared run's server peaks at level `key`: none where it did not run or skipped it.
fn level_peaks(
    runs: &[RunInput],
    compared: &[usize],
    kind: SweepKind,
    shape: Option<Shape>,
    key: u64,
) -> Vec<ServerPeaks> {
    compared
        .iter()
        .map(|&i| {
            sweep_at(runs[i].bundle, kind, shape)
                .and_then(|s| s.points.iter().find(|p| level_key(kind, p) == key))
                .filter(|p| p.status != PointStatus::Skipped)
                .map(ServerPeaks::of)
                .unwrap_or_default()
        })
        .collect()
}

/// Each compared run's flags at level `key` that can explain a change ([`Level::causes`]), in
/// their own words.
fn level_causes(
    runs: &[RunInput],
    compared: &[usize],
    kind: SweepKind,
    shape: Option<Shape>,
    key: u64,
) -> Vec<Option<String>> {
    compared
        .iter()
        .map(|&i| {
            let p = sweep_at(runs[i].bundle, kind, shape)?
                .points
                .iter()
                .find(|p| level_key(kind, p) == key)?;
            let words: Vec<&str> = p
                .flags
                .iter()
                .filter(|f| {
                    matches!(
                        f.kind,
                        FlagKind::Stall
                            | FlagKind::HostBusy
                            | FlagKind::OtherTraffic
                            | FlagKind::Short
                    )
                })
                .map(|f| f.message.as_str())
                .collect();
            (!words.is_empty()).then(|| words.join("; "))
        })
        .collect()
}

/// Whether each compared run's point at level `key` carries a flag of `kind`.
fn level_flagged(
    runs: &[RunInput],
    compared: &[usize],
    kind: SweepKind,
    shape: Option<Shape>,
    key: u64,
    flag: FlagKind,
) -> Vec<bool> {
    compared
        .iter()
        .map(|&i| {
            sweep_at(runs[i].bundle, kind, shape)
                .and_then(|s| s.points.iter().find(|p| level_key(kind, p) == key))
                .is_some_and(|p| p.flags.iter().any(|f| f.kind == flag))
        })
        .collect()
}

fn row_cells(
    runs: &[RunInput],
    compared: &[usize],
    kind: SweepKind,
    shape: Option<Shape>,
    metric: Metric,
    at: impl Fn(&Point) -> bool,
) -> Vec<Cell> {
    type Found = (Option<Estimate>, Option<String>, Option<&'static str>);
    let values: Vec<Found> = compared
        .iter()
        .map(|&i| {
            let sweep = sweep_at(runs[i].bundle, kind, shape);
            let point = sweep.and_then(|s| s.points.iter().find(|p| at(p)));
            // A cut-off row lacks the cells after the cut, not the columns its table never had.
            let reported = sweep.is_some_and(|s| s.points.iter().any(|q| metric.of(q).is_some()));
            match point {
                None => (None, Some("not run".into()), None),
                Some(p) if p.status != PointStatus::Ok => {
                    (None, Some(status_word(p.status).into()), None)
                }
                Some(p) => {
                    let est = interval::estimate(metric, p);
                    let cut = p
                        .flags
                        .iter()
                        .any(|f| f.kind == crate::bundle::FlagKind::CutOff);
                    let note = (est.is_none() && cut && reported)
                        .then(|| "cut off in the source".to_string());
                    (est, note, est.and(metric.caveat(p)))
                }
            }
        })
        .collect();
    let base = values.first().and_then(|v| v.0);
    values
        .into_iter()
        .enumerate()
        .map(|(n, (est, note, caveat))| {
            let change = match (n, base, est) {
                (0, _, _) => None,
                (_, Some(b), Some(e)) => Change::between(b, e).map(|c| {
                    if metric.is_latency() {
                        c.of_latency(b.value, e.value)
                    } else {
                        c
                    }
                }),
                _ => None,
            };
            Cell {
                value: est.map(|e| metric.display(e.value)),
                delta_pct: change.map(|c| c.pct),
                change,
                verdict: verdict(metric, change.as_ref()),
                note,
                caveat,
            }
        })
        .collect()
}

fn status_word(s: PointStatus) -> &'static str {
    match s {
        PointStatus::Ok => "ok",
        PointStatus::Skipped => "skipped",
        PointStatus::Failed => "failed",
        PointStatus::Unknown => "unknown",
    }
}

/// `(value − base) / |base| × 100`; `None` when either is missing, the base is zero or the
/// change is past `f64`'s range.
pub fn delta_pct(base: Option<f64>, value: Option<f64>) -> Option<f64> {
    let (b, v) = (base?, value?);
    // A change past f64's range (a foreign file's 1.7e308 against a tiny baseline) has no
    // percentage: none rather than infinity.
    (b != 0.0)
        .then(|| (v - b) / b.abs() * 100.0)
        .filter(|d| d.is_finite())
}

/// Better or worse, given which way the metric improves, when the change is significant at
/// [`NEUTRAL_PCT`] (beyond the noise and at least that large); otherwise the same.
pub fn verdict(metric: Metric, change: Option<&Change>) -> Verdict {
    verdict_at(metric, change, NEUTRAL_PCT)
}

/// [`verdict`] at another smallest change that counts (`--fail-if-slower`'s), so that a table
/// marks what the verdict above it names.
pub fn verdict_at(metric: Metric, change: Option<&Change>, threshold_pct: f64) -> Verdict {
    let Some(c) = change else {
        return Verdict::None;
    };
    if !c.significant(threshold_pct) {
        return Verdict::Same;
    }
    if metric.improved_by(c.pct) {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

impl SweepComparison {
    /// The sweep's name in text: `throughput`, or `throughput 128×128` for one of several.
    pub fn name(&self) -> String {
        sweep_name(self.kind, self.shape)
    }

    /// Whether any compared run has a peak queue (the first) or a peak KV-cache usage (the
    /// second) at any level: the tables show those rows only then.
    pub fn has_peaks(&self) -> (bool, bool) {
        let all = || self.levels.iter().flat_map(|l| &l.peaks);
        (
            all().any(|p| p.queue.is_some()),
            all().any(|p| p.kv.is_some()),
        )
    }

    /// The level's peak rows, shown only when some run of the sweep has them: `peak queue`
    /// (requests, no decimals) and `peak KV cache` (`87 %`), a cell per compared run, `None`
    /// where that run's point has none. Not judged: they explain the numbers, they are not one.
    pub fn peak_rows(&self, level: &Level) -> Vec<(&'static str, Vec<Option<String>>)> {
        let (queue, kv) = self.has_peaks();
        let row = |f: fn(&ServerPeaks) -> Option<String>| level.peaks.iter().map(f).collect();
        let mut rows = Vec::new();
        if queue {
            rows.push(("peak queue", row(|p| p.queue.map(|q| format!("{q:.0}")))));
        }
        if kv {
            rows.push((
                "peak KV cache",
                row(|p| p.kv.map(crate::bundle::kv_percent_text)),
            ));
        }
        rows
    }

    /// Every distinct caveat of the table's cells (see [`Cell::caveat`]), sorted: the footnotes
    /// under the table.
    pub fn caveats(&self) -> Vec<&'static str> {
        let mut caveats: Vec<&'static str> = self
            .levels
            .iter()
            .flat_map(|l| &l.rows)
            .flat_map(|r| &r.cells)
            .filter_map(|c| c.caveat)
            .collect();
        caveats.sort_unstable();
        caveats.dedup();
        caveats
    }

    /// The table as CSV: `key,metric,<label>,<label> Δ%,…`, one line per level and metric.
    pub fn to_csv(&self, labels: &[String]) -> String {
        let key = match self.kind {
            SweepKind::Context => "input_tokens",
            SweepKind::Rate => "offered_rps",
            _ => "concurrency",
        };
        let mut head = vec![key.to_string(), "metric".to_string()];
        for (n, &i) in self.runs.iter().enumerate() {
            let l = labels.get(i).map(String::as_str).unwrap_or("?");
            head.push(l.to_string());
            if n > 0 {
                head.push(format!("{l} change %"));
            }
        }
        let mut lines = vec![csv_line(&head)];
        for level in &self.levels {
            for row in &level.rows {
                let key = match self.kind {
                    SweepKind::Rate => rate_text(level.key),
                    _ => level.key.to_string(),
                };
                let mut f = vec![key, row.metric.label().to_string()];
                for (n, c) in row.cells.iter().enumerate() {
                    f.push(c.value.map(|v| format!("{v}")).unwrap_or_default());
                    if n > 0 {
                        f.push(c.delta_pct.map(|d| fixed(d, 2)).unwrap_or_default());
                    }
                }
                lines.push(csv_line(&f));
            }
        }
        lines.join("\n") + "\n"
    }
}

impl Comparison {
    /// The metadata diff as CSV: `field,<label>,…,differs`.
    pub fn metadata_csv(&self) -> String {
        let mut head = vec!["field".to_string()];
        head.extend(self.labels.iter().cloned());
        head.push("differs".into());
        let mut lines = vec![csv_line(&head)];
        for row in &self.metadata {
            let mut f = vec![row.name.clone()];
            f.extend(row.values.iter().cloned());
            f.push(row.differs.to_string());
            lines.push(csv_line(&f));
        }
        lines.join("\n") + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Api, Sweep};
    use crate::curves::tests::bundle;

    fn inputs<'a>(bs: &'a [Bundle]) -> Vec<RunInput<'a>> {
        bs.iter()
            .map(|b| RunInput {
                label: &b.label,
                bundle: b,
            })
            .collect()
    }

    fn scale_steady(b: &mut Bundle, f: f64) {
        for p in &mut b.sweeps[0].points {
            let s = p.summary.as_mut().unwrap();
            s.steady_tok_s = s.steady_tok_s.map(|v| v * f);
            s.ttft_s.as_mut().unwrap().p50 *= f;
        }
    }

    #[test]
    fn delta_and_verdict_by_hand() {
        assert_eq!(delta_pct(Some(200.0), Some(250.0)), Some(25.0));
        assert_eq!(delta_pct(Some(0.0), Some(1.0)), None);
        assert_eq!(delta_pct(None, Some(1.0)), None);
        let sure = |pct: f64| Change {
            pct,
            interval: Some((pct - 0.1, pct + 0.1)),
            no_interval: None,
            below_resolution: false,
            df: None,
        };
        let v = |m, pct| verdict(m, Some(&sure(pct)));
        assert_eq!(v(Metric::SteadyTokS, 25.0), Verdict::Better);
        assert_eq!(v(Metric::TtftP50, 25.0), Verdict::Worse);
        assert_eq!(v(Metric::TtftP50, -5.0), Verdict::Better);
        assert_eq!(v(Metric::AggTokS, 0.5), Verdict::Same);
        assert_eq!(verdict(Metric::AggTokS, None), Verdict::None);
        // +25 % within the noise is no verdict.
        let unsure = Change {
            interval: Some((-3.0, 53.0)),
            ..sure(25.0)
        };
        assert_eq!(verdict(Metric::SteadyTokS, Some(&unsure)), Verdict::Same);
    }

    #[test]
    fn deltas_against_the_baseline() {
        let a = bundle("kpro5");
        let mut b = bundle("kpro6");
        scale_steady(&mut b, 1.5);
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        let tp = &c.sweeps[0];
        assert_eq!(tp.kind, SweepKind::Throughput);
        assert_eq!(tp.runs, [0, 1]);
        let keys: Vec<u64> = tp.levels.iter().map(|l| l.key).collect();
        assert_eq!(keys, [1, 2, 4]);
        let steady = &tp.levels[1].rows[0];
        assert_eq!(steady.metric, Metric::SteadyTokS);
        assert_eq!(steady.cells[0].value, Some(200.0));
        assert_eq!(steady.cells[1].value, Some(300.0));
        assert!((steady.cells[1].delta_pct.unwrap() - 50.0).abs() < 1e-9);
        // Summaries without request records: the change is shown but not judged.
        let change = steady.cells[1].change.unwrap();
        assert_eq!(change.interval, None);
        assert_eq!(change.no_interval, Some("too few requests for an interval"));
        assert_eq!(steady.cells[1].verdict, Verdict::Same);
        let ttft = &tp.levels[1].rows[3];
        assert_eq!(ttft.metric, Metric::TtftP50);
        assert!((ttft.cells[1].delta_pct.unwrap() - 50.0).abs() < 1e-9);
    }

    #[test]
    fn the_baseline_comes_first_whichever_it_is() {
        let a = bundle("a");
        let mut b = bundle("b");
        scale_steady(&mut b, 2.0);
        let bs = [a, b];
        let c = compare(&inputs(&bs), 1);
        assert_eq!(c.sweeps[0].runs, [1, 0]);
        let cell = &c.sweeps[0].levels[0].rows[0].cells[1];
        assert!((cell.delta_pct.unwrap() + 50.0).abs() < 1e-9);
    }

    #[test]
    fn different_workloads_are_not_compared() {
        let a = bundle("a");
        let mut b = bundle("b");
        b.sweeps[0].concurrency = vec![16, 32];
        b.sweeps[1].output_len = 50;
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        for s in &c.sweeps {
            assert_eq!(s.runs, [0], "{:?} compared anyway", s.kind);
            assert_eq!(s.mismatched[0].run, 1);
        }
        assert_eq!(
            c.sweeps[0].mismatched[0].reasons,
            ["no concurrency level in common: 1,2,4 vs 16,32"]
        );
        assert_eq!(
            c.sweeps[1].mismatched[0].reasons,
            ["output lengths differ: 100 vs 50"]
        );
    }

    #[test]
    fn a_level_only_one_run_has_is_named_only_when_it_was_measured() {
        // a's context sweep measured 1000 and 2000 and skipped 8000; b has none.
        let a = bundle("a");
        let mut b = bundle("b");
        b.sweeps.truncate(1);
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        let ctx = c
            .sweeps
            .iter()
            .find(|s| s.kind == SweepKind::Context)
            .unwrap();
        assert_eq!(ctx.only_in, [(0, vec![1000, 2000])]);
    }

    #[test]
    fn runs_with_some_levels_in_common_are_compared_at_those() {
        let a = bundle("a");
        let mut b = bundle("b");
        b.sweeps[0].points.remove(2);
        b.sweeps[0].concurrency = vec![1, 2];
        scale_steady(&mut b, 2.0);
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        let s = &c.sweeps[0];
        assert_eq!(s.runs, [0, 1]);
        let steady = |level: usize| s.levels[level].rows[0].cells[1].clone();
        assert!((steady(1).delta_pct.unwrap() - 100.0).abs() < 1e-9);
        // C=4 is only in the baseline: named, not shown as a row of "not run".
        assert_eq!(s.levels.len(), 2);
        assert_eq!(s.only_in, [(0, vec![4])]);
        // The other way round, the candidate's extra level is named too.
        let bs = [bs[1].clone(), bs[0].clone()];
        let c = compare(&inputs(&bs), 0);
        assert_eq!(c.sweeps[0].levels.len(), 2);
        assert_eq!(c.sweeps[0].only_in, [(1, vec![4])]);
    }

    #[test]
    fn an_imported_run_with_an_unstated_api_is_compared_and_says_where_it_is_from() {
        use crate::bundle::{Imported, Quantiles, Source};
        let a = bundle("a");
        let mut b = bundle("b");
        b.target.api = Api::Unknown;
        b.source = Some(Source {
            tool: "a text table".into(),
            version: None,
            format: crate::bundle::ImportFormat::Table,
            files: vec!["old.txt".into()],
            notes: Vec::new(),
            measured_at: None,
        });
        for p in &mut b.sweeps[0].points {
            p.summary = None;
            p.imported = Some(Imported {
                output_tok_s: Some(100.0 * f64::from(p.concurrency)),
                ttft_s: Quantiles {
                    unstated: Some(0.5),
                    ..Quantiles::default()
                },
                ..Imported::default()
            });
        }
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        assert_eq!(c.sweeps[0].runs, [0, 1]);
        assert_eq!(c.sources[0], None);
        assert_eq!(
            c.sources[1].as_deref(),
            Some("imported from a text table (old.txt): its own definitions apply, not llmsweep's")
        );
        let row = |m: Metric| {
            c.sweeps[0].levels[2]
                .rows
                .iter()
                .find(|r| r.metric == m)
                .unwrap()
                .cells[1]
                .clone()
        };
        assert_eq!(row(Metric::AggTokS).value, Some(400.0));
        assert_eq!(row(Metric::TtftP50).value, Some(0.5));
        assert_eq!(
            row(Metric::TtftP50).caveat,
            Some("the source's number; whether mean or median is not stated")
        );
        assert_eq!(row(Metric::AggTokS).caveat, None);
        assert_eq!(row(Metric::SteadyTokS).value, None);
        assert_eq!(row(Metric::TtftP99).value, None);
        let measured_by = c.metadata.iter().find(|m| m.name == "measured by").unwrap();
        assert_eq!(measured_by.values, ["llmsweep", "a text table"]);
    }

    #[test]
    fn the_table_holds_the_baselines_levels_that_another_run_has() {
        let set = |v: &[u64]| v.iter().copied().collect::<BTreeSet<u64>>();
        let keys = [set(&[1, 2, 4]), set(&[2, 8]), set(&[4])];
        assert_eq!(table_keys(&keys), set(&[2, 4]));
        assert_eq!(table_keys(&keys[..1]), set(&[]));
        assert_eq!(table_keys(&[]), set(&[]));
    }

    #[test]
    fn each_kind_checks_the_lengths_that_matter_to_all_its_levels() {
        let sweep = |kind, concurrency: &[u32], input_lens: &[u64]| Sweep {
            kind,
            concurrency: concurrency.to_vec(),
            input_lens: input_lens.to_vec(),
            ..bundle("a").sweeps[0].clone()
        };
        // Throughput: a concurrency level in common is enough; input lengths must agree.
        let (a, b) = (
            sweep(SweepKind::Throughput, &[1, 2], &[512]),
            sweep(SweepKind::Throughput, &[2, 4], &[512, 1024]),
        );
        assert_eq!(
            workload::level_lists_mismatch(&a, &b),
            ["input lengths differ: 512 vs 512,1024"]
        );
        // Context: the other way round, in that order.
        let (a, b) = (
            sweep(SweepKind::Context, &[1], &[1000, 2000]),
            sweep(SweepKind::Context, &[1, 2], &[4000]),
        );
        assert_eq!(
            workload::level_lists_mismatch(&a, &b),
            [
                "no input length in common: 1000,2000 vs 4000",
                "concurrency differs: 1 vs 1,2"
            ]
        );
        // Rate: input lengths only (its rates are rate_mismatch's).
        let (a, b) = (
            sweep(SweepKind::Rate, &[1], &[512]),
            sweep(SweepKind::Rate, &[8], &[512]),
        );
        assert!(workload::level_lists_mismatch(&a, &b).is_empty());
    }

    #[test]
    fn length_spreads_and_datasets_in_words() {
        assert_eq!(workload::spread_text(None), "none");
        assert_eq!(workload::spread_text(Some(0.1)), "±10 %");
        let facts = |sha256: &str| {
            Some(crate::bundle::DatasetFacts {
                file: "chats.jsonl".into(),
                sha256: sha256.into(),
                lines: 4,
            })
        };
        assert_eq!(workload::dataset_text(&None), "generated prompts");
        assert_eq!(
            workload::dataset_text(&facts("0123456789abcdef")),
            "chats.jsonl (sha256 0123456789ab)"
        );
        // A digest shorter than its 12 characters is written whole.
        assert_eq!(
            workload::dataset_text(&facts("abc")),
            "chats.jsonl (sha256 abc)"
        );
    }

    #[test]
    fn another_length_spread_is_another_workload() {
        let a = bundle("a");
        let mut b = bundle("b");
        b.sweeps[0].length_spread = Some(0.1);
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        assert_eq!(
            c.sweeps[0].mismatched[0].reasons,
            ["length spreads differ: none vs ±10 %"]
        );
        assert!(c.sweeps[1].mismatched.is_empty());
    }

    #[test]
    fn other_request_extras_prompts_or_turns_are_another_workload() {
        use crate::bundle::DatasetFacts;
        let a = bundle("a");
        let mut b = bundle("b");
        b.workload.extra_body = Some(serde_json::json!({"temperature": 0}));
        b.workload.dataset = Some(DatasetFacts {
            file: "chats.jsonl".into(),
            sha256: "0123456789abcdef0123".into(),
            lines: 4,
        });
        let mut second = crate::metrics::request::tests::rec(0.0, 0.1, 1.0, 100);
        second.turn = Some(1);
        b.sweeps[0].points[0].requests.push(second);
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        assert_eq!(
            c.sweeps[0].mismatched[0].reasons,
            [
                "turns per conversation differ (--turns): 1 vs 2",
                "request extras differ (--extra-body): none vs {\"temperature\":0}",
                "prompts differ (--dataset): generated prompts vs chats.jsonl (sha256 0123456789ab)",
            ]
        );
        // The same file under another name is the same prompts.
        let mut a = bs[1].clone();
        a.label = "a".into();
        a.workload.dataset.as_mut().unwrap().file = "copy.jsonl".into();
        let bs = [a, bs[1].clone()];
        let c = compare(&inputs(&bs), 0);
        assert!(c.sweeps.iter().all(|s| s.mismatched.is_empty()));
    }

    #[test]
    fn runs_without_requests_at_a_level_in_common_are_not_called_the_same_workload() {
        let a = bundle("a");
        let mut b = bundle("b");
        b.sweeps.clear();
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        assert_eq!(c.workload[0].same, None);
        assert_eq!(
            c.workload[0].line,
            "a and b sent no requests at a level in common: the same workload is not proven"
        );
    }

    #[test]
    fn a_different_seed_is_still_the_same_workload() {
        let a = bundle("a");
        let mut b = bundle("b");
        b.workload.seed = 99;
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        assert!(c.sweeps.iter().all(|s| s.mismatched.is_empty()));
        let seed = c
            .metadata
            .iter()
            .find(|r| r.name == "workload seed")
            .unwrap();
        assert!(seed.differs);
        assert_eq!(seed.values, ["7", "99"]);
    }

    #[test]
    fn a_run_without_the_sweep_is_absent_and_skipped_points_say_so() {
        let a = bundle("a");
        let mut b = bundle("b");
        b.sweeps.truncate(1);
        let bs = [a.clone(), b];
        let c = compare(&inputs(&bs), 0);
        assert_eq!(c.sweeps[1].absent, [1]);
        let bs = [a.clone(), a];
        let c = compare(&inputs(&bs), 0);
        let ctx = &c.sweeps[1];
        assert_eq!(ctx.levels.last().unwrap().key, 8000);
        let cell = &ctx.levels.last().unwrap().rows[0].cells[1];
        assert_eq!((cell.value, cell.note.as_deref()), (None, Some("skipped")));
    }

    #[test]
    fn levels_carry_each_runs_server_peaks() {
        use crate::bundle::ServerSamples;
        let a = bundle("a");
        let mut b = bundle("b");
        b.sweeps[0].points[2].server_samples = Some(ServerSamples {
            peak_queue: Some(12.0),
            peak_kv: Some(0.875),
            ..ServerSamples::default()
        });
        let bs = [a.clone(), b];
        let c = compare(&inputs(&bs), 0);
        let tp = &c.sweeps[0];
        assert_eq!(tp.has_peaks(), (true, true));
        assert_eq!(tp.levels[0].peaks, [ServerPeaks::default(); 2]);
        let at_4 = &tp.levels[2];
        assert_eq!(at_4.key, 4);
        assert_eq!(at_4.peaks[0], ServerPeaks::default());
        assert_eq!(
            at_4.peaks[1],
            ServerPeaks {
                queue: Some(12.0),
                kv: Some(0.875)
            }
        );
        let rows = tp.peak_rows(at_4);
        assert_eq!(
            rows,
            [
                ("peak queue", vec![None, Some("12".to_string())]),
                ("peak KV cache", vec![None, Some("88 %".to_string())]),
            ]
        );
        let bs = [a.clone(), a];
        let none = &compare(&inputs(&bs), 0).sweeps[0];
        assert_eq!(none.has_peaks(), (false, false));
        assert!(none.peak_rows(&none.levels[0]).is_empty());
    }

    /// A one-level run of 60 requests whose TTFTs cycle through 0.10 to 0.29 s, times `f`.
    fn with_ttft(label: &str, f: f64) -> Bundle {
        use crate::bundle::RequestRecord;
        let mut b = bundle(label);
        let p = &mut b.sweeps[0].points[0];
        p.requests = (0..60)
            .map(|i| {
                let t = f * (0.1 + 0.01 * f64::from(i % 20));
                RequestRecord::test_ok(f64::from(i), t, t + 1.0, 100)
            })
            .collect();
        p.summary = Some(crate::metrics::summarize(&p.requests, 1, 100, &[]));
        b
    }

    /// A judged metric's cell is marked as the verdict counts it: a TTFT p50 whose own interval
    /// leaves out zero, but which the verdict's judgements taken together find within the
    /// noise, is not marked worse; a doubled one is. A metric the verdict does not judge (the
    /// TTFT mean) is marked by its own interval.
    #[test]
    fn a_cell_is_marked_worse_only_where_the_verdict_counts_it() {
        let judged = |f: f64| {
            let bs = [with_ttft("a", 1.0), with_ttft("b", f)];
            let c = compare(&inputs(&bs), 0);
            let level = &c.sweeps[0].levels[0];
            let cell = |m: Metric| {
                let row = level.rows.iter().find(|r| r.metric == m).unwrap();
                (
                    row.cells[1].verdict,
                    verdict(m, row.cells[1].change.as_ref()),
                )
            };
            (cell(Metric::TtftP50), cell(Metric::TtftMean))
        };
        // Between a change within every interval and one the verdict counts, a TTFT p50 its
        // own interval calls worse.
        let between = (1..400)
            .map(|k| 1.0 + f64::from(k) * 0.0025)
            .find(|&f| judged(f).0.1 == Verdict::Worse)
            .unwrap();
        let ((marked, own), (mean_marked, mean_own)) = judged(between);
        assert_eq!(
            (marked, own),
            (Verdict::Same, Verdict::Worse),
            "at ×{between}"
        );
        assert_eq!(mean_marked, mean_own, "at ×{between}");
        assert_eq!(judged(2.0).0, (Verdict::Worse, Verdict::Worse));
    }

    /// The mean and p90 rows of TTFT, TPOT and e2e: the summaries' numbers, with an interval
    /// from the requests (the p90's by order statistics, the mean's by its standard error).
    #[test]
    fn mean_and_p90_rows_carry_the_summaries_and_an_interval() {
        let bs = [with_ttft("a", 1.0), with_ttft("b", 2.0)];
        let c = compare(&inputs(&bs), 0);
        let level = &c.sweeps[0].levels[0];
        let row = |m: Metric| level.rows.iter().find(|r| r.metric == m).unwrap();
        let s0 = bs[0].sweeps[0].points[0].summary.clone().unwrap();
        let s1 = bs[1].sweeps[0].points[0].summary.clone().unwrap();
        let (t0, t1) = (s0.ttft_s.unwrap(), s1.ttft_s.unwrap());
        assert_eq!(row(Metric::TtftMean).cells[0].value, Some(t0.mean));
        assert_eq!(row(Metric::TtftP90).cells[1].value, Some(t1.p90));
        assert_eq!(
            row(Metric::E2eMean).cells[0].value,
            Some(s0.e2e_s.unwrap().mean)
        );
        assert_eq!(
            row(Metric::E2eP90).cells[0].value,
            Some(s0.e2e_s.unwrap().p90)
        );
        assert_eq!(
            row(Metric::TpotMean).cells[0].value,
            Some(s0.tpot_s.unwrap().mean)
        );
        assert_eq!(
            row(Metric::TpotP90).cells[0].value,
            Some(s0.tpot_s.unwrap().p90)
        );
        // TTFT doubled: +100 % in its mean and its p90, each beyond the noise, and worse.
        for m in [Metric::TtftMean, Metric::TtftP90] {
            let cell = &row(m).cells[1];
            let ch = cell.change.unwrap();
            assert!((ch.pct - 100.0).abs() < 1e-9, "{m:?}: {ch:?}");
            let (lo, hi) = ch.interval.unwrap();
            assert!(lo > 0.0 && lo < 100.0 && hi > 100.0, "{m:?}: {ch:?}");
            assert_eq!(cell.verdict, Verdict::Worse);
        }
        // They are shown in the table, not spoken of in the verdict nor gated.
        let v = &verdicts(&c, NEUTRAL_PCT)[0];
        assert!(v.metrics.iter().all(|m| !matches!(
            m.metric,
            Metric::TtftMean | Metric::TtftP90 | Metric::E2eMean | Metric::E2eP90
        )));
        let g = gate::gate(&c, 5.0, None).unwrap();
        assert!(
            g.regressions
                .iter()
                .chain(&g.unresolved)
                .all(|l| !l.contains("mean") && !l.contains("p90")),
            "{g:?}"
        );
        assert!(
            g.regressions.iter().any(|l| l.contains("TTFT p50")),
            "{g:?}"
        );
    }

    #[test]
    fn csv_has_values_and_changes() {
        let a = bundle("a");
        let mut b = bundle("b,\"x\"");
        scale_steady(&mut b, 1.5);
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        let csv = c.sweeps[0].to_csv(&c.labels);
        let mut lines = csv.lines();
        assert_eq!(
            lines.next().unwrap(),
            "concurrency,metric,a,\"b,\"\"x\"\"\",\"b,\"\"x\"\" change %\""
        );
        assert_eq!(lines.next().unwrap(), "1,steady output tok/s,100,150,50.00");
        assert!(c.metadata_csv().starts_with("field,a,"));
    }
}
