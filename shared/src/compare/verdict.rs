//! The verdict: for each sweep and each run against the baseline, a few lines that say which is
//! faster, where, by how much, and whether it is beyond the noise — the first thing `compare`,
//! the viewer's Compare tab and a report show, worded once, here.

use crate::bundle::{Bundle, SweepKind};
use crate::charts::axis::fixed;
use crate::curves::Metric;
use crate::hash::{FNV_START, fnv1a_extend};

use super::{Change, Comparison, SweepComparison};

/// The metrics a verdict speaks of, per sweep kind (the table has more).
pub fn headline_metrics(kind: SweepKind) -> &'static [Metric] {
    match kind {
        SweepKind::Context => &[Metric::TtftP50, Metric::PrefillTokSP50],
        SweepKind::Rate => &[
            Metric::TtftP50,
            Metric::TtftP99,
            Metric::TpotP50,
            Metric::E2eP99,
            Metric::GoodputFraction,
        ],
        // Capacity first, then the tails under load, then each user's speed.
        _ => &[
            Metric::SteadyTokS,
            Metric::AggTokS,
            Metric::TtftP99,
            Metric::E2eP99,
            Metric::DecodeTokSP50,
            Metric::TtftP50,
        ],
    }
}

/// How far the worse end of a capacity change's interval may reach before a sweep whose users
/// got faster is not called faster: its capacity is then not known well enough (5 %, the
/// threshold the README's gate uses).
pub const CAPACITY_BLIND_PCT: f64 = 5.0;

/// Whether a metric is a server's capacity: the tokens it serves per second at a load.
pub fn is_capacity(m: Metric) -> bool {
    matches!(m, Metric::SteadyTokS | Metric::AggTokS)
}

/// Whether a metric is a latency tail under load.
pub fn is_tail(m: Metric) -> bool {
    matches!(m, Metric::TtftP99 | Metric::E2eP99)
}

/// The fewest requests whose order statistics give a [`super::interval::CONFIDENCE`] interval
/// of the `q` quantile (299 for a p99).
pub fn requests_for_interval(q: f64) -> usize {
    (2..100_000)
        .find(|&n| super::interval::order_ranks(n, q).is_some())
        .unwrap_or(100_000)
}

/// One word for a run against the baseline in one sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Better beyond the noise somewhere, worse nowhere.
    Faster,
    /// Worse beyond the noise somewhere, better nowhere.
    Slower,
    /// Better at some levels or metrics, worse at others.
    Mixed,
    /// Nothing beyond the noise and the threshold.
    NoSignificantChange,
    /// Each user is faster, but whether the server serves as many tokens at that load is not
    /// known well enough to say (capacity has no interval, or one too wide).
    Unresolved,
    /// Nothing to compare: the sweep is missing on one side, or no level is in common.
    NotCompared,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Faster => "faster",
            Outcome::Slower => "slower",
            Outcome::Mixed => "mixed",
            Outcome::NoSignificantChange => "no significant change",
            Outcome::Unresolved => "cannot tell",
            Outcome::NotCompared => "not compared",
        }
    }
}

/// A level's change of one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtLevel {
    pub key: u64,
    pub change: Change,
}

/// One headline metric over the levels both runs measured.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricVerdict {
    pub metric: Metric,
    /// Levels with a change, in level order.
    pub changes: Vec<AtLevel>,
    /// Levels where the metric is better / worse beyond the noise and the threshold.
    pub better: Vec<u64>,
    pub worse: Vec<u64>,
}

impl MetricVerdict {
    /// The level where the change is best for the metric, and where it is worst.
    pub fn best_and_worst(&self) -> Option<(AtLevel, AtLevel)> {
        let gain = |a: &AtLevel| {
            if self.metric.improved_by(1.0) {
                a.change.pct
            } else {
                -a.change.pct
            }
        };
        let best = self
            .changes
            .iter()
            .copied()
            .max_by(|a, b| gain(a).total_cmp(&gain(b)))?;
        let worst = self
            .changes
            .iter()
            .copied()
            .min_by(|a, b| gain(a).total_cmp(&gain(b)))?;
        Some((best, worst))
    }
}

/// A run against the baseline in one sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepVerdict {
    pub kind: SweepKind,
    /// The shape of the sweeps judged, when a run has several (`--shapes`).
    pub shape: Option<crate::shapes::Shape>,
    /// Index of the run (into the comparison's labels).
    pub run: usize,
    pub outcome: Outcome,
    /// The levels of the table.
    pub levels: Vec<u64>,
    pub metrics: Vec<MetricVerdict>,
    /// Lines that qualify the verdict: levels only one run has, why nothing was compared, how
    /// an imported run is judged.
    pub notes: Vec<String>,
}

impl SweepVerdict {
    /// How the verdict counts `metric`'s change at level `key`: better or worse beyond the noise
    /// of its judgements taken together, else the same; `None` for a metric it does not judge.
    pub fn counted(&self, metric: Metric, key: u64) -> Option<super::Verdict> {
        let m = self.metrics.iter().find(|m| m.metric == metric)?;
        Some(if m.better.contains(&key) {
            super::Verdict::Better
        } else if m.worse.contains(&key) {
            super::Verdict::Worse
        } else {
            super::Verdict::Same
        })
    }
}

/// Every run's verdict against the baseline, per sweep; `threshold_pct` is the smallest change
/// that counts (the gate's `--fail-if-slower`, or [`super::NEUTRAL_PCT`] for display).
pub fn verdicts(cmp: &Comparison, threshold_pct: f64) -> Vec<SweepVerdict> {
    let mut out = Vec::new();
    for s in &cmp.sweeps {
        let others: Vec<usize> = (0..cmp.labels.len())
            .filter(|&i| i != cmp.baseline)
            .collect();
        for run in others {
            out.push(sweep_verdict(cmp, s, run, threshold_pct));
        }
    }
    out
}

/// Run `run`'s verdict against the baseline in sweep `s`, `pct` the smallest change that counts.
fn sweep_verdict(cmp: &Comparison, s: &SweepComparison, run: usize, pct: f64) -> SweepVerdict {
    let mut v = SweepVerdict {
        kind: s.kind,
        shape: s.shape,
        run,
        outcome: Outcome::NotCompared,
        levels: s.levels.iter().map(|l| l.key).collect(),
        metrics: Vec::new(),
        notes: Vec::new(),
    };
    if let Some(why) = why_not_compared(cmp, s, run) {
        v.notes.push(why);
        v.levels.clear();
        return v;
    }
    let Some(n) = s.runs.iter().position(|&r| r == run) else {
        return v;
    };
    // A level one of the two did not measure (skipped by both, once the default levels ended at
    // saturation) has no change to speak of, not "no significant change".
    v.levels = s
        .levels
        .iter()
        .filter(|l| l.measured_by_both(n))
        .map(|l| l.key)
        .collect();
    v.notes = only_in_notes(cmp, s);
    v.metrics = headline_verdicts(s, n, pct);
    if v.levels.is_empty() {
        v.notes.push(format!(
            "no {} level in common between {} and {}",
            s.name(),
            cmp.labels[cmp.baseline],
            cmp.labels[run]
        ));
        return v;
    }
    v.outcome = outcome(&v.metrics);
    let (capacity, blind) = capacity_blind(&v.metrics);
    // Faster users where capacity is unknown, or nothing changed where it could not have been
    // seen, cannot be told.
    if matches!(v.outcome, Outcome::Faster | Outcome::NoSignificantChange) && !blind.is_empty() {
        v.outcome = Outcome::Unresolved;
    }
    v.notes.extend(blind_notes(
        s.kind,
        capacity,
        &blind,
        &imported_labels(cmp, run),
    ));
    v.notes.extend(tail_notes(s.kind, &v.metrics));
    v.notes.extend(cause_notes(cmp, s, n));
    v.notes.extend(accept_notes(cmp, s, n, pct));
    v.notes.extend(per_gpu_note(cmp, s, n, &v.metrics));
    v.notes.extend(cut_off_notes(cmp, s, n));
    v.notes.extend(queue_notes(cmp, s, n));
    v.notes.extend(imported_notes(cmp, run));
    v.notes.extend(incomplete_notes(cmp, run));
    v
}

/// The levels where capacity is not known well enough to call a run faster: its change has no
/// interval (a measured run with too few waves), or one reaching past [`CAPACITY_BLIND_PCT`]
/// the worse way; with the change, and the capacity metric compared (steady tok/s, or the
/// aggregate when a run has no steady rate).
fn capacity_blind(metrics: &[MetricVerdict]) -> (Metric, Vec<AtLevel>) {
    let Some(m) = metrics.iter().find(|m| is_capacity(m.metric)) else {
        return (Metric::SteadyTokS, Vec::new());
    };
    let blind = m
        .changes
        .iter()
        .copied()
        .filter(|a| !m.worse.contains(&a.key))
        .filter(|a| super::gate::could_be_worse(m.metric, &a.change, CAPACITY_BLIND_PCT))
        .collect();
    (m.metric, blind)
}

/// A note naming the levels whose capacity the runs cannot tell apart, by the metric compared,
/// and what would narrow it: rerunning both runs, or, when one is imported (a number with no
/// spread that cannot be rerun), the measured one alone.
fn blind_notes(
    kind: SweepKind,
    metric: Metric,
    blind: &[AtLevel],
    imported: &[&str],
) -> Option<String> {
    let first = blind.first()?;
    let keys: Vec<u64> = blind.iter().map(|a| a.key).collect();
    let how = match first.change.interval {
        Some(_) => format!(
            "{} at {}",
            change_text(&first.change),
            level_text(kind, first.key)
        ),
        None => format!(
            "{} at {} ({})",
            change_text(&first.change),
            level_text(kind, first.key),
            first.change.no_interval.unwrap_or("no interval")
        ),
    };
    let rerun = match imported {
        [] => "rerun both with --precision for levels that run until they are precise".to_string(),
        [one] => format!(
            "{one} is imported, so the interval is the measured run's alone: a tighter --precision or a longer --duration narrows it"
        ),
        _ => "both runs are imported".to_string(),
    };
    Some(format!(
        "capacity cannot be told at {}: {} could be more than {CAPACITY_BLIND_PCT} % lower ({how}); {rerun}",
        level_list(kind, &keys),
        metric.label()
    ))
}

/// A note for the levels where a tail (p99) could not be judged for want of requests.
fn tail_notes(kind: SweepKind, metrics: &[MetricVerdict]) -> Option<String> {
    let mut keys: Vec<u64> = metrics
        .iter()
        .filter(|m| is_tail(m.metric))
        .flat_map(|m| &m.changes)
        .filter(|a| a.change.no_interval == Some(super::interval::TOO_FEW))
        .map(|a| a.key)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    (!keys.is_empty()).then(|| {
        format!(
            "TTFT p99 and e2e p99 not judged at {}: a p99 needs at least {} requests per level for an interval",
            level_list(kind, &keys),
            requests_for_interval(0.99)
        )
    })
}

/// A note for the baseline and for run `run` when its bundle is not complete: its levels so
/// far are compared, and the others are missing, not failed.
fn incomplete_notes(cmp: &Comparison, run: usize) -> Vec<String> {
    [cmp.baseline, run]
        .into_iter()
        .filter(|&i| cmp.incomplete.get(i).copied().unwrap_or(false))
        .map(|i| {
            format!(
                "{} is incomplete (interrupted, or still being written): only the levels it has so far are compared",
                cmp.labels[i]
            )
        })
        .collect()
}

/// A note for every level where the baseline's or the run's row was cut off in its source.
fn cut_off_notes(cmp: &Comparison, s: &SweepComparison, n: usize) -> Vec<String> {
    let mut notes = Vec::new();
    for level in &s.levels {
        for col in [0, n] {
            if level.cut_off.get(col).copied().unwrap_or(false) {
                notes.push(format!(
                    "{}'s row at {} was cut off in its source: only its intact cells are compared",
                    cmp.labels[s.runs[col]],
                    level_text(s.kind, level.key)
                ));
            }
        }
    }
    notes
}

/// One note per run whose levels' TTFT is of a queue still filling (`queue-filling`): a TTFT
/// there grows with how long the level ran, so a change in it compares the levels' lengths
/// as much as the servers.
fn queue_notes(cmp: &Comparison, s: &SweepComparison, n: usize) -> Vec<String> {
    let mut notes = Vec::new();
    for col in [0, n] {
        let keys: Vec<u64> = s
            .levels
            .iter()
            .filter(|l| l.queue_filling.get(col).copied().unwrap_or(false))
            .map(|l| l.key)
            .collect();
        if !keys.is_empty() {
            notes.push(format!(
                "{}'s TTFT at {} is of a queue still filling (queue-filling): it grows with how long the level ran, so a change there is partly the levels' lengths",
                cmp.labels[s.runs[col]],
                level_list(s.kind, &keys)
            ));
        }
    }
    notes
}

/// A note for every level where the baseline or the run at column `n` carries a flag that can
/// explain a change by itself ([`super::Level::causes`]: a stall, a busy client host, other
/// traffic, outputs shorter than asked): a change there may be that, not the server's speed.
fn cause_notes(cmp: &Comparison, s: &SweepComparison, n: usize) -> Vec<String> {
    let mut notes = Vec::new();
    for level in &s.levels {
        for col in [0, n] {
            if let Some(Some(words)) = level.causes.get(col) {
                notes.push(format!(
                    "{} at {}: {words}; a change there may be that, not the server's speed",
                    cmp.labels[s.runs[col]],
                    level_text(s.kind, level.key)
                ));
            }
        }
    }
    notes
}

/// A note when speculative decoding's acceptance changed beyond the noise at some levels: the
/// drafts the server accepts per step set its decode speed, so the change explains (or hides
/// in) a change of decode speed. Named with both values at the level of the largest change.
/// The levels are taken together, as the verdict's judgements are (see [`holm`]): at 95 % each,
/// one of eight levels of two runs of one configuration would read as a change in about one
/// pair of six.
fn accept_notes(cmp: &Comparison, s: &SweepComparison, n: usize, pct: f64) -> Option<String> {
    let mut seen: Vec<(u64, f64, f64, Change)> = Vec::new();
    for level in &s.levels {
        let Some(row) = level.rows.iter().find(|r| r.metric == Metric::AcceptLength) else {
            continue;
        };
        let (Some(base), Some(cell)) = (row.cells.first(), row.cells.get(n)) else {
            continue;
        };
        if let (Some(b), Some(v), Some(c)) = (base.value, cell.value, cell.change) {
            seen.push((level.key, b, v, c));
        }
    }
    let p_values: Vec<f64> = seen.iter().map(|x| x.3.p_value().unwrap_or(1.0)).collect();
    let counted = holm(&p_values);
    let changed: Vec<(u64, f64, f64, Change)> = seen
        .iter()
        .enumerate()
        .filter(|(i, x)| x.3.significant(pct) && (x.3.interval.is_none() || counted.contains(i)))
        .map(|(_, x)| *x)
        .collect();
    let &(key, b, v, c) = changed
        .iter()
        .max_by(|x, y| x.3.pct.abs().total_cmp(&y.3.pct.abs()))?;
    let keys: Vec<u64> = changed.iter().map(|c| c.0).collect();
    Some(format!(
        "speculative decoding: {} accepts {} tokens per step against {}'s {} at {} ({}), a change beyond the noise at {}; decode speed moves with it",
        cmp.labels[s.runs[n]],
        fixed(v, 2),
        cmp.labels[s.runs[0]],
        fixed(b, 2),
        level_text(s.kind, key),
        change_text(&c),
        level_list(s.kind, &keys),
    ))
}

/// When the two runs served on different numbers of GPUs: capacity per GPU at the level where
/// capacity changed most, the change and its interval scaled by the GPU counts (a ratio of
/// two positive numbers divided by a constant keeps its relative interval).
fn per_gpu_note(
    cmp: &Comparison,
    s: &SweepComparison,
    n: usize,
    metrics: &[MetricVerdict],
) -> Option<String> {
    let (base, run) = (s.runs[0], s.runs[n]);
    let (Some(g0), Some(g1)) = (*cmp.gpus.get(base)?, *cmp.gpus.get(run)?) else {
        return None;
    };
    if g0 == g1 || g0 == 0 || g1 == 0 {
        return None;
    }
    let m = metrics.iter().find(|m| is_capacity(m.metric))?;
    let at = m
        .changes
        .iter()
        .max_by(|a, b| a.change.pct.abs().total_cmp(&b.change.pct.abs()))?;
    let scale = f64::from(g0) / f64::from(g1);
    let per = |pct: f64| ((1.0 + pct / 100.0) * scale - 1.0) * 100.0;
    let change = Change {
        pct: per(at.change.pct),
        interval: at.change.interval.map(|(lo, hi)| (per(lo), per(hi))),
        ..at.change
    };
    Some(format!(
        "{} served on {g1} GPUs and {} on {g0}: per GPU, {} at {} is {}",
        cmp.labels[run],
        cmp.labels[base],
        m.metric.label(),
        level_text(s.kind, at.key),
        change_text(&change)
    ))
}

/// Why run `run` is not compared with the baseline in sweep `s`: the sweep is missing on one
/// side, or the run sent another workload; `None` when it is compared.
fn why_not_compared(cmp: &Comparison, s: &SweepComparison, run: usize) -> Option<String> {
    let name = s.name();
    let base = cmp.baseline;
    if s.absent.contains(&base) {
        return Some(format!(
            "{} (baseline) has no {name} sweep",
            cmp.labels[base]
        ));
    }
    if s.absent.contains(&run) {
        return Some(format!("{} has no {name} sweep", cmp.labels[run]));
    }
    let m = s.mismatched.iter().find(|m| m.run == run)?;
    Some(format!("a different workload: {}", m.reasons.join("; ")))
}

/// One note per compared run with levels outside the table: `only in kpro5: C = 4`.
fn only_in_notes(cmp: &Comparison, s: &SweepComparison) -> Vec<String> {
    s.only_in
        .iter()
        .map(|(i, keys)| format!("only in {}: {}", cmp.labels[*i], level_list(s.kind, keys)))
        .collect()
}

/// The headline metrics with a change at some level, for the compared run at column `n`.
/// Aggregate throughput speaks only where steady throughput could not (imported runs).
pub(crate) fn headline_verdicts(s: &SweepComparison, n: usize, pct: f64) -> Vec<MetricVerdict> {
    let mut metrics: Vec<MetricVerdict> = headline_metrics(s.kind)
        .iter()
        .map(|&metric| metric_verdict(s, n, metric))
        .filter(|mv| !mv.changes.is_empty())
        .collect();
    if metrics.iter().any(|m| m.metric == Metric::SteadyTokS) {
        metrics.retain(|m| m.metric != Metric::AggTokS);
    }
    judge(&mut metrics, pct);
    metrics
}

/// The chance, over all of a verdict's judgements together, of calling a change where there is
/// none.
pub const FAMILY_ERROR: f64 = 1.0 - super::interval::CONFIDENCE;

/// Which of `p_values` count as beyond the noise taken together, by Holm's step-down at
/// [`FAMILY_ERROR`]: their indices, in order.
///
/// Worked example: 0.001, 0.04, 0.013 and 0.2 sort to 0.001 ≤ 0.05/4, 0.013 ≤ 0.05/3, then
/// 0.04 > 0.05/2 stops: the first and third count.
pub fn holm(p_values: &[f64]) -> Vec<usize> {
    holm_in_families(p_values, &vec![0; p_values.len()], &[1.0])
}

/// The share of [`FAMILY_ERROR`] a throughput verdict gives its capacity judgements (steady
/// tok/s at each level), the rest going to the tails and each user's speed: 3 % of the 5 %.
///
/// Capacity is what the verdict judges first and what a comparison of hosts asks. Taken in
/// one family with the other metrics, each of its eight levels had to clear 0.05/40 where a
/// uniform 5 % slow-down is about four standard errors at C = 1 and 2: it was called at every
/// level in 64 of 90 pairs. A family of its own holding 2 % called it in 115 of 130 pairs
/// (88.5 %); holding 3 %, in 119 of the same 130 and 36 of 40 new ones (35 at 2 %), while
/// pairs of one configuration read "faster" or "slower" in 12 of 515 (2.3 %, against 7 at
/// 2 %): the 5 % bound holds whatever the split (BENCHMARKS.md, "Capacity's share of the 5 %").
pub const CAPACITY_SHARE: f64 = 0.6;

/// Holm's step-down run in families, each holding `shares[f]` of [`FAMILY_ERROR`] (the shares
/// summing to 1): a p-value counts when it is at most its family's error over the judgements
/// of that family not yet counted. When every judgement of a family has counted (or it has
/// none), its share passes to the families left, in proportion to theirs, and their bounds
/// grow. This is the graphical form of Holm's procedure (Bretz et al., 2009): the chance of
/// any false count stays at most [`FAMILY_ERROR`] whatever the dependence between the
/// judgements. `family[i]` names the family of `p_values[i]`; a p-value that is not a number
/// never counts but stays among its family's judgements.
///
/// Worked example, shares 0.4 and 0.6 of 0.05: 0.004 and 0.009 in the first family, 0.04 in
/// the second. 0.004 ≤ 0.02/2 counts; then 0.009 ≤ 0.02/1 counts; the first family is done
/// and the second holds all 0.05, so 0.04 counts. With 0.004 and 0.03 in the first family,
/// 0.03 > 0.02 never counts, and 0.04 > 0.03 in the second does not either.
pub fn holm_in_families(p_values: &[f64], family: &[usize], shares: &[f64]) -> Vec<usize> {
    debug_assert_eq!(p_values.len(), family.len());
    let mut counted = vec![false; p_values.len()];
    loop {
        let mut open = vec![0usize; shares.len()];
        for (i, &f) in family.iter().enumerate() {
            if !counted[i] {
                open[f] += 1;
            }
        }
        let live: f64 = (0..shares.len())
            .filter(|&f| open[f] > 0)
            .map(|f| shares[f])
            .sum();
        if live <= 0.0 {
            break;
        }
        let mut more = false;
        for (i, &p) in p_values.iter().enumerate() {
            let f = family[i];
            if counted[i] || p.is_nan() {
                continue;
            }
            let bound = FAMILY_ERROR * shares[f] / live / open[f] as f64;
            if p <= bound {
                counted[i] = true;
                more = true;
            }
        }
        if !more {
            break;
        }
    }
    (0..p_values.len()).filter(|&i| counted[i]).collect()
}

/// Where each metric is better or worse: beyond the noise of every judgement the verdict makes
/// at once (each level of each metric), and by at least `pct`.
///
/// A verdict reads eight levels and five metrics: at 95 % each, two runs of one configuration
/// would differ "beyond the noise" somewhere in about one pair of three (7 of 24 pairs of
/// kpro5 simulator runs with different seeds, every one a single level's steady tok/s). The
/// judgements are taken together by Holm's step-down in two families ([`holm_in_families`]):
/// capacity's levels with [`CAPACITY_SHARE`] of the 5 %, every other metric's with the rest,
/// a family's share passing to the other once all of its judgements count. So a false verdict
/// anywhere has at most a 5 % chance, and a real change seen at many levels still counts at
/// each. Each change's own interval, in the tables, stays a 95 % one. Two imported numbers,
/// with no noise to be beyond, count by the threshold alone.
fn judge(metrics: &mut [MetricVerdict], pct: f64) {
    let mut tests: Vec<(f64, usize, usize)> = Vec::new();
    for (mi, m) in metrics.iter().enumerate() {
        for (li, a) in m.changes.iter().enumerate() {
            if let Some(p) = a.change.p_value() {
                tests.push((p, mi, li));
            }
        }
    }
    let p_values: Vec<f64> = tests.iter().map(|t| t.0).collect();
    let family: Vec<usize> = tests
        .iter()
        .map(|t| usize::from(!is_capacity(metrics[t.1].metric)))
        .collect();
    let shares = [CAPACITY_SHARE, 1.0 - CAPACITY_SHARE];
    let counted: std::collections::HashSet<(usize, usize)> =
        holm_in_families(&p_values, &family, &shares)
            .into_iter()
            .map(|i| (tests[i].1, tests[i].2))
            .collect();
    for (mi, m) in metrics.iter_mut().enumerate() {
        let metric = m.metric;
        for (li, a) in m.changes.iter().enumerate() {
            let beyond = if a.change.interval.is_some() {
                counted.contains(&(mi, li)) && a.change.significant(0.0)
            } else {
                a.change.significant(0.0)
            };
            if beyond && a.change.pct.abs() >= pct {
                if metric.improved_by(a.change.pct) {
                    m.better.push(a.key);
                } else {
                    m.worse.push(a.key);
                }
            }
        }
    }
}

/// One metric's changes over the levels for the compared run at column `n` (where each is
/// better or worse is left to [`judge`]).
fn metric_verdict(s: &SweepComparison, n: usize, metric: Metric) -> MetricVerdict {
    let mut mv = MetricVerdict {
        metric,
        changes: Vec::new(),
        better: Vec::new(),
        worse: Vec::new(),
    };
    for level in &s.levels {
        let Some(change) = level
            .rows
            .iter()
            .find(|r| r.metric == metric)
            .and_then(|r| r.cells.get(n)?.change)
        else {
            continue;
        };
        mv.changes.push(AtLevel {
            key: level.key,
            change,
        });
    }
    mv
}

/// Faster, slower, mixed or no significant change, from where the metrics are better or worse.
fn outcome(metrics: &[MetricVerdict]) -> Outcome {
    let better = metrics.iter().any(|m| !m.better.is_empty());
    let worse = metrics.iter().any(|m| !m.worse.is_empty());
    match (better, worse) {
        (true, false) => Outcome::Faster,
        (false, true) => Outcome::Slower,
        (true, true) => Outcome::Mixed,
        (false, false) => Outcome::NoSignificantChange,
    }
}

/// A note for the baseline and for run `run` when it is imported: how its intervals are made.
fn imported_notes(cmp: &Comparison, run: usize) -> Vec<String> {
    imported_labels(cmp, run)
        .into_iter()
        .map(|label| {
            format!(
                "{label} is imported: its numbers have no spread, so the intervals are the measured run's alone"
            )
        })
        .collect()
}

/// The labels of the baseline and of run `run` that are imported, in that order.
fn imported_labels(cmp: &Comparison, run: usize) -> Vec<&str> {
    [cmp.baseline, run]
        .into_iter()
        .filter(|&i| cmp.sources[i].is_some())
        .map(|i| cmp.labels[i].as_str())
        .collect()
}

/// `C = 1, 2, 4`, `input = 1000, 8000` or `1, 2, 0.5 req/s`.
pub fn level_list(kind: SweepKind, keys: &[u64]) -> String {
    if kind == SweepKind::Rate {
        let list: Vec<String> = keys.iter().map(|&k| super::rate_text(k)).collect();
        return format!("{} req/s", list.join(", "));
    }
    let list: Vec<String> = keys.iter().map(u64::to_string).collect();
    format!("{} = {}", level_name(kind), list.join(", "))
}

/// One level in words: `C=4`, `input=8000` or `2 req/s`.
pub fn level_text(kind: SweepKind, key: u64) -> String {
    match kind {
        SweepKind::Rate => format!("{} req/s", super::rate_text(key)),
        _ => format!("{}={}", level_name(kind), key),
    }
}

/// A table cell naming a level: `4`, `8000`, or `2 req/s`.
pub fn level_cell(kind: SweepKind, key: u64) -> String {
    match kind {
        SweepKind::Rate => level_text(kind, key),
        _ => key.to_string(),
    }
}

/// `C`, `input` or `offered` (a column heading).
pub fn level_name(kind: SweepKind) -> &'static str {
    match kind {
        SweepKind::Context => "input",
        SweepKind::Rate => "offered",
        _ => "C",
    }
}

/// `+8.6 ±1.2 %` when the change has an interval about centred on it; `+76.9 % (-36.0 to
/// +77.0)` when it is lopsided (a percentile at the edge of its spread), so the reader sees
/// which side is open; `+8.6 %` without one.
pub fn change_text(c: &Change) -> String {
    match (c.interval, c.half_width()) {
        (Some((lo, hi)), Some(h)) if lo.is_finite() && hi.is_finite() && h.is_finite() => {
            // Lopsided on the log scale, where a rate's interval is symmetric by construction.
            let ln = |pct: f64| (1.0 + pct / 100.0).max(f64::MIN_POSITIVE).ln();
            let (below, above) = (ln(c.pct) - ln(lo), ln(hi) - ln(c.pct));
            if (below - above).abs() > 0.25 * below.max(above) && (below - above).abs() > 0.01 {
                format!("{} % ({} to {})", signed(c.pct), signed(lo), signed(hi))
            } else {
                format!("{} ±{} %", signed(c.pct), fixed(h, 1))
            }
        }
        _ => format!("{} %", signed(c.pct)),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A clause after "while": `it serves …` where the phrase starts with its verb.
fn with_subject(clause: &str) -> String {
    if clause.starts_with("serves") {
        format!("it {clause}")
    } else {
        clause.to_string()
    }
}

/// A metric's name without its unit: `TTFT p99`.
fn short_label(m: Metric) -> &'static str {
    let l = m.label();
    l.split(" (").next().unwrap_or(l)
}

/// `+8.6` or `-3.0`; scientific for a huge change.
fn signed(pct: f64) -> String {
    let s = fixed(pct, 1);
    if pct >= 0.0 { format!("+{s}") } else { s }
}

impl SweepVerdict {
    /// The levels where any headline metric is in `pick` (its better or its worse levels).
    fn levels_where(&self, pick: impl Fn(&MetricVerdict) -> &Vec<u64>) -> Vec<u64> {
        let mut keys: Vec<u64> = self.metrics.iter().flat_map(|m| pick(m).clone()).collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The table's levels not in `keys`, in order.
    fn levels_but(&self, keys: &[u64]) -> Vec<u64> {
        self.levels
            .iter()
            .copied()
            .filter(|k| !keys.contains(k))
            .collect()
    }

    /// The verdict's first line, e.g.
    /// `throughput sweep: kpro5 is faster than kpro6 at every level (C = 1, 2, 4)`.
    pub fn headline(&self, labels: &[String], baseline: usize) -> String {
        let name = super::sweep_name(self.kind, self.shape);
        let (run, base) = (&labels[self.run], &labels[baseline]);
        let at = if self.levels.is_empty() {
            String::new()
        } else {
            format!(" ({})", level_list(self.kind, &self.levels))
        };
        // Levels whose capacity the runs cannot tell apart are not "no significant change".
        let blind: Vec<u64> = capacity_blind(&self.metrics)
            .1
            .iter()
            .map(|a| a.key)
            .collect();
        // `; no significant change at C = 1; cannot tell at C = 8` for the levels in `rest`.
        let the_rest = |rest: Vec<u64>| {
            let (untold, same): (Vec<u64>, Vec<u64>) =
                rest.into_iter().partition(|k| blind.contains(k));
            let mut out = String::new();
            if !same.is_empty() {
                out += &format!(
                    "; no significant change at {}",
                    level_list(self.kind, &same)
                );
            }
            if !untold.is_empty() {
                out += &format!("; cannot tell at {}", level_list(self.kind, &untold));
            }
            out
        };
        let direction = |word: &str, keys: Vec<u64>| {
            if keys.len() == self.levels.len() {
                format!("{name} sweep: {run} is {word} than {base} at every level{at}")
            } else {
                format!(
                    "{name} sweep: {run} is {word} than {base} at {}{}",
                    level_list(self.kind, &keys),
                    the_rest(self.levels_but(&keys))
                )
            }
        };
        let won = self.phrases(true);
        match self.outcome {
            Outcome::Faster => direction("faster", self.levels_where(|m| &m.better)),
            Outcome::Slower => direction("slower", self.levels_where(|m| &m.worse)),
            Outcome::Mixed => format!(
                "{name} sweep: mixed: against {base}, {run} {}, while {}",
                and_list(&self.phrases(false)),
                with_subject(&and_list(&won))
            ),
            Outcome::Unresolved if !won.is_empty() => format!(
                "{name} sweep: cannot tell: against {base}, {run} {}, but its capacity there is not resolved",
                and_list(&won)
            ),
            // Nothing changed beyond the noise, but not everywhere could a change be seen.
            Outcome::Unresolved | Outcome::NoSignificantChange
                if blind.len() == self.levels.len() =>
            {
                format!(
                    "{name} sweep: cannot tell {run} from {base}{at}: capacity is not resolved at any level"
                )
            }
            Outcome::Unresolved | Outcome::NoSignificantChange if !blind.is_empty() => format!(
                "{name} sweep: no significant change from {base} to {run} at {}; cannot tell at {}",
                level_list(self.kind, &self.levels_but(&blind)),
                level_list(self.kind, &blind)
            ),
            Outcome::NoSignificantChange | Outcome::Unresolved => {
                format!("{name} sweep: no significant change from {base} to {run}{at}")
            }
            Outcome::NotCompared => format!("{name} sweep: {run} not compared with {base}"),
        }
    }

    /// What changed beyond the noise, each metric at its most changed level, the better ones
    /// (`better`) or the worse: `serves 15.1 % fewer tokens/s at C=16`.
    fn phrases(&self, better: bool) -> Vec<String> {
        self.metrics
            .iter()
            .filter_map(|m| {
                let keys = if better { &m.better } else { &m.worse };
                let a = m
                    .changes
                    .iter()
                    .filter(|a| keys.contains(&a.key))
                    .max_by(|x, y| x.change.pct.abs().total_cmp(&y.change.pct.abs()))?;
                let x = fixed(a.change.pct.abs(), 1);
                let up = a.change.pct > 0.0;
                let what = match m.metric {
                    Metric::SteadyTokS | Metric::AggTokS => {
                        format!(
                            "serves {x} % {} tokens/s",
                            if up { "more" } else { "fewer" }
                        )
                    }
                    Metric::DecodeTokSP50 => format!(
                        "each user decodes {x} % {}",
                        if up { "faster" } else { "slower" }
                    ),
                    other => format!(
                        "its {} is {x} % {}",
                        short_label(other),
                        if up { "higher" } else { "lower" }
                    ),
                };
                Some(format!("{what} at {}", level_text(self.kind, a.key)))
            })
            .collect()
    }

    /// One line per headline metric: its range of change, where it is beyond the noise, and
    /// its best and worst level.
    pub fn metric_lines(&self) -> Vec<(Metric, String)> {
        self.metrics
            .iter()
            .filter_map(|m| {
                let (best, worst) = m.best_and_worst()?;
                let total = m.changes.len();
                let mut judged = Vec::new();
                if !m.better.is_empty() {
                    judged.push(format!("better at {}", self.some_levels(&m.better, total)));
                }
                if !m.worse.is_empty() {
                    judged.push(format!("worse at {}", self.some_levels(&m.worse, total)));
                }
                if judged.is_empty() {
                    judged.push("no level beyond the noise".into());
                }
                if m.changes.iter().any(|a| a.change.below_resolution) {
                    judged.push(format!(
                        "changes under {:.0} ms are within timing resolution",
                        super::RESOLUTION_S * 1e3
                    ));
                }
                let key = |a: &AtLevel| level_text(self.kind, a.key);
                let range = if total == 1 {
                    format!("{} at {}", change_text(&best.change), key(&best))
                } else {
                    format!(
                        "best {} at {}, worst {} at {}",
                        change_text(&best.change),
                        key(&best),
                        change_text(&worst.change),
                        key(&worst)
                    )
                };
                Some((m.metric, format!("{}; {range}", judged.join(", "))))
            })
            .collect()
    }

    fn some_levels(&self, keys: &[u64], total: usize) -> String {
        if keys.len() == total && total > 1 {
            format!("all {total} levels")
        } else {
            format!(
                "{} of {total} ({})",
                keys.len(),
                level_list(self.kind, keys)
            )
        }
    }
}

/// Whether a run sent the baseline the same prompts.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadCheck {
    pub run: usize,
    /// `Some(true)`: the same prompts at every level compared; `Some(false)`: different;
    /// `None`: cannot tell (an imported run, or a bundle of an earlier version).
    pub same: Option<bool>,
    /// The sentence to show, naming the run, e.g. "kpro6: same workload ✓ (digest 2f6c…)".
    pub line: String,
}

/// For every run but the baseline: did it send the same prompts as the baseline at the levels
/// the comparison's tables hold? Prompts are compared by the hash of their content after the
/// per-run prefix (see `RequestRecord::content_hash`), as a multiset per level, so the order in
/// which requests finished does not matter.
pub fn workload_checks(runs: &[super::RunInput], cmp: &Comparison) -> Vec<WorkloadCheck> {
    (0..runs.len())
        .filter(|&run| run != cmp.baseline)
        .filter_map(|run| workload_check(runs, cmp, run))
        .collect()
}

/// Whether run `run` sent the baseline's prompts; `None` when no prompts were compared because
/// its sweeps ran another workload, which their own lines say.
fn workload_check(runs: &[super::RunInput], cmp: &Comparison, run: usize) -> Option<WorkloadCheck> {
    if let Some(line) = imported_line(runs, cmp, run) {
        return Some(WorkloadCheck {
            run,
            same: None,
            line,
        });
    }
    let (same, line) = PromptMatch::of(runs, cmp, run).answer(runs, cmp, run)?;
    Some(WorkloadCheck { run, same, line })
}

/// Why the workload of run `run` cannot be proven when it or the baseline is imported (the
/// baseline named first); `None` when both were measured.
fn imported_line(runs: &[super::RunInput], cmp: &Comparison, run: usize) -> Option<String> {
    let i = [cmp.baseline, run]
        .into_iter()
        .find(|&i| runs[i].bundle.is_imported())?;
    Some(format!(
        "{} is imported: its prompts are not known, so the same workload is not proven",
        cmp.labels[i]
    ))
}

/// The prompts of a run against the baseline's, over the levels of the tables it is in.
#[derive(Debug, PartialEq)]
struct PromptMatch {
    /// Every level compared had content hashes on both sides.
    known: bool,
    /// Levels where one run's prompts are not all among the other's.
    differs: Vec<String>,
    /// Levels where one run sent more of the same prompt stream: `C=4 (64 vs 32)`, the run's
    /// count first.
    more: Vec<String>,
    /// FNV-1a of the prompts both sent, level by level, each level's hashes sorted.
    digest: u64,
    /// Prompts the two runs were compared on: none when no level was in common.
    compared: usize,
}

impl PromptMatch {
    /// Nothing compared yet: every level known, none differing, the digest at its start.
    fn new() -> PromptMatch {
        PromptMatch {
            known: true,
            differs: Vec::new(),
            more: Vec::new(),
            digest: FNV_START,
            compared: 0,
        }
    }

    /// Run `run`'s prompts against the baseline's at every level of every table it is in.
    fn of(runs: &[super::RunInput], cmp: &Comparison, run: usize) -> PromptMatch {
        let mut m = PromptMatch::new();
        for s in cmp.sweeps.iter().filter(|s| s.runs.contains(&run)) {
            for level in &s.levels {
                let hashes = |i: usize| prompt_hashes(runs[i].bundle, s.kind, s.shape, level.key);
                let text = level_text(s.kind, level.key);
                m.add_level(&text, hashes(cmp.baseline), hashes(run));
            }
        }
        m
    }

    /// Adds one level, named `text`, of the baseline's and the run's sorted prompt hashes
    /// (`None` where they are not known).
    fn add_level(&mut self, text: &str, base: Option<Vec<&str>>, run: Option<Vec<&str>>) {
        let (Some(a), Some(b)) = (base, run) else {
            self.known = false;
            return;
        };
        if a.is_empty() && b.is_empty() {
            return;
        }
        // A run that sent more requests (more passes, a larger --requests) continues the
        // same prompt stream: the smaller set is inside it.
        let (small, big) = if a.len() <= b.len() {
            (&a, &b)
        } else {
            (&b, &a)
        };
        if !contains_all(big, small) {
            self.differs.push(text.to_string());
            return;
        }
        self.compared += small.len();
        for x in small {
            self.digest = fnv1a_extend(self.digest, x.as_bytes());
        }
        if a.len() != b.len() {
            self.more
                .push(format!("{text} ({} vs {})", b.len(), a.len()));
        }
    }

    /// The check's answer and sentence for run `run`; `None` when nothing was compared because
    /// its sweeps ran another workload.
    fn answer(
        &self,
        runs: &[super::RunInput],
        cmp: &Comparison,
        run: usize,
    ) -> Option<(Option<bool>, String)> {
        let (base, this) = (&cmp.labels[cmp.baseline], &cmp.labels[run]);
        let same = self.differs.is_empty();
        let digest = self.digest;
        if !self.known {
            return Some((
                None,
                format!(
                    "{base} or {this} was written by an earlier llmsweep without prompt content hashes: the same workload is not proven"
                ),
            ));
        }
        if same && self.compared == 0 {
            let mismatched = cmp
                .sweeps
                .iter()
                .any(|s| s.mismatched.iter().any(|m| m.run == run));
            return (!mismatched).then(|| {
                (
                    None,
                    format!(
                        "{base} and {this} sent no requests at a level in common: the same workload is not proven"
                    ),
                )
            });
        }
        if same && self.more.is_empty() {
            return Some((
                Some(true),
                format!("{this}: same workload ✓ (digest {digest:016x})"),
            ));
        }
        if same {
            return Some((
                Some(true),
                format!(
                    "{this}: same workload ✓ (digest {digest:016x} over the prompts both sent; the runs sent different numbers of requests at {})",
                    self.more.join(", ")
                ),
            ));
        }
        let seeds = (
            runs[cmp.baseline].bundle.workload.seed,
            runs[run].bundle.workload.seed,
        );
        Some((
            Some(false),
            format!(
                "{this}: different prompts at {} (seeds {} and {}): not the same workload; the same seed, lengths and tokenizer give the same prompts",
                self.differs.join(", "),
                seeds.0,
                seeds.1
            ),
        ))
    }
}

/// The sorted content hashes of the prompts a bundle sent at level `key` of its sweep of
/// `kind` (and `shape`); `None` without that sweep or when a prompt has no hash (an earlier
/// llmsweep).
fn prompt_hashes(
    b: &Bundle,
    kind: SweepKind,
    shape: Option<crate::shapes::Shape>,
    key: u64,
) -> Option<Vec<&str>> {
    let sweep = crate::shapes::sweep_at(b, kind, shape)?;
    let mut h: Vec<&str> = sweep
        .points
        .iter()
        .filter(|p| super::level_key(kind, p) == key)
        .flat_map(|p| &p.requests)
        .map(|q| q.content_hash.as_deref())
        .collect::<Option<Vec<&str>>>()?;
    h.sort_unstable();
    Some(h)
}

/// Whether the sorted `big` holds every element of the sorted `small`, as many times.
fn contains_all(big: &[&str], small: &[&str]) -> bool {
    let mut it = big.iter();
    small.iter().all(|x| it.by_ref().any(|y| y == x))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Bundle, Point};
    use crate::compare::{NEUTRAL_PCT, RunInput, compare};
    use crate::curves::tests::bundle;
    use crate::metrics::request::tests::rec;
    use crate::metrics::summarize;

    /// A change of `pct` % whose 95 % interval reaches `half` % either way on the log scale.
    fn change(pct: f64, half_log: f64) -> Change {
        let l = (1.0 + pct / 100.0f64).ln();
        Change {
            pct,
            interval: Some((
                ((l - half_log).exp() - 1.0) * 100.0,
                ((l + half_log).exp() - 1.0) * 100.0,
            )),
            no_interval: None,
            below_resolution: false,
            df: None,
        }
    }

    #[test]
    fn a_blind_capacity_is_named_by_its_metric_and_an_imported_run_is_not_asked_to_rerun() {
        let at = |pct| AtLevel {
            key: 2,
            change: change(pct, 0.085),
        };
        let note = blind_notes(
            SweepKind::Throughput,
            Metric::AggTokS,
            &[at(-9.5)],
            &["kpro6"],
        )
        .unwrap();
        assert!(
            note.starts_with(
                "capacity cannot be told at C = 2: aggregate output tok/s could be more than 5 % lower (-9.5 "
            ),
            "{note}"
        );
        assert!(
            note.ends_with(
                "kpro6 is imported, so the interval is the measured run's alone: a tighter --precision or a longer --duration narrows it"
            ),
            "{note}"
        );
        let both =
            blind_notes(SweepKind::Throughput, Metric::SteadyTokS, &[at(-3.0)], &[]).unwrap();
        assert!(
            both.contains(": steady output tok/s could be more than 5 % lower"),
            "{both}"
        );
        assert!(
            both.ends_with(
                "rerun both with --precision for levels that run until they are precise"
            )
        );
        assert_eq!(
            blind_notes(SweepKind::Throughput, Metric::SteadyTokS, &[], &[]),
            None
        );
    }

    fn steady(changes: &[Change]) -> Vec<MetricVerdict> {
        vec![MetricVerdict {
            metric: Metric::SteadyTokS,
            changes: changes
                .iter()
                .enumerate()
                .map(|(i, &change)| AtLevel {
                    key: 1 << i,
                    change,
                })
                .collect(),
            better: Vec::new(),
            worse: Vec::new(),
        }]
    }

    /// The worked example of [`holm`]; a p-value that is not a number never counts.
    #[test]
    fn holms_step_down_by_hand() {
        assert_eq!(holm(&[0.001, 0.04, 0.013, 0.2]), vec![0, 2]);
        assert_eq!(holm(&[0.03, 0.04]), Vec::<usize>::new());
        assert_eq!(holm(&[0.02, 0.04]), vec![0, 1]);
        assert_eq!(holm(&[f64::NAN, 0.001]), vec![1]);
        assert!(holm(&[]).is_empty());
    }

    /// The worked example of [`holm_in_families`], and a family whose judgements all count
    /// passing its share to the other.
    #[test]
    fn holms_step_down_in_families_by_hand() {
        let shares = [0.4, 0.6];
        let families = [0, 0, 1];
        assert_eq!(
            holm_in_families(&[0.004, 0.009, 0.04], &families, &shares),
            vec![0, 1, 2]
        );
        assert_eq!(
            holm_in_families(&[0.004, 0.03, 0.04], &families, &shares),
            vec![0]
        );
        // 0.021 > 0.02 until the second family is done (0.001 ≤ 0.03); then 0.021 ≤ 0.05.
        assert_eq!(
            holm_in_families(&[0.021, 0.001], &[0, 1], &shares),
            vec![0, 1]
        );
        // A family with no judgement passes its whole share at once.
        assert_eq!(holm_in_families(&[0.04], &[1], &shares), vec![0]);
        assert_eq!(
            holm_in_families(&[f64::NAN, 0.001], &[0, 1], &shares),
            vec![1]
        );
    }

    /// With no change anywhere (every p-value uniform), the chance that anything counts is at
    /// most [`FAMILY_ERROR`]: 20,000 verdicts of 8 capacity and 32 other independent
    /// judgements, and of 8 and 32 judgements that each move together (one p-value for each
    /// family).
    #[test]
    fn families_hold_the_chance_of_any_false_count_to_five_per_cent() {
        let mut state: u64 = 0x5eed_0ff0_0d0d;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let family: Vec<usize> = (0..40).map(|i| usize::from(i >= 8)).collect();
        let shares = [CAPACITY_SHARE, 1.0 - CAPACITY_SHARE];
        let trials = 20_000;
        let (mut independent, mut together) = (0, 0);
        for _ in 0..trials {
            let p: Vec<f64> = (0..40).map(|_| uniform()).collect();
            if !holm_in_families(&p, &family, &shares).is_empty() {
                independent += 1;
            }
            let (a, b) = (uniform(), uniform());
            let p: Vec<f64> = family.iter().map(|&f| if f == 0 { a } else { b }).collect();
            if !holm_in_families(&p, &family, &shares).is_empty() {
                together += 1;
            }
        }
        let rate = |n: i32| f64::from(n) / f64::from(trials);
        // Independent: 1 − (1 − 0.03/8)^8 (1 − 0.02/32)^32 ≈ 4.9 %; sd of the estimate 0.15 %.
        assert!(rate(independent) < 0.0545, "{}", rate(independent));
        assert!(rate(independent) > 0.044, "{}", rate(independent));
        // Together: a family counts only when its one p-value clears its share over all of
        // its judgements at once: 0.03/8 + 0.02/32, about 0.44 %.
        assert!(rate(together) < 0.0545, "{}", rate(together));
    }

    #[test]
    fn a_p_value_is_read_off_the_interval() {
        // −2 % with a log-scale reach of ln(0.98)·(−1): exactly at the edge: p = 0.05.
        let edge = change(-2.0, -(0.98f64.ln()));
        assert!((edge.p_value().unwrap() - 0.05).abs() < 1e-4, "{edge:?}");
        // Twice as far out as its reach: z = 3.92, p ≈ 8.9e-5.
        let far = change(-2.0, -(0.98f64.ln()) / 2.0);
        assert!((far.p_value().unwrap() - 8.86e-5).abs() < 1e-6, "{far:?}");
        assert!(change(0.0, 0.01).p_value().unwrap() > 0.999_999);
    }

    #[test]
    fn one_level_of_eight_just_beyond_the_noise_is_no_verdict_but_a_change_seen_everywhere_is() {
        // One level of eight at p ≈ 0.04, the rest nowhere near: at 95 % each it would be called
        // slower; taken together it is not.
        let mut one: Vec<Change> = vec![change(0.3, 0.02); 7];
        one.push(change(-3.0, 0.0295));
        let mut m = steady(&one);
        judge(&mut m, NEUTRAL_PCT);
        assert!(m[0].worse.is_empty() && m[0].better.is_empty(), "{m:?}");
        assert_eq!(outcome(&m), Outcome::NoSignificantChange);
        // A uniform −4.8 % known to ±2 % at every level: p ≈ 3e-6 each: slower at all eight.
        let mut all = steady(&[change(-4.8, 0.02); 8]);
        judge(&mut all, NEUTRAL_PCT);
        assert_eq!(all[0].worse.len(), 8, "{all:?}");
        assert_eq!(outcome(&all), Outcome::Slower);
        // Under the threshold it counts nowhere, however sure.
        let mut small = steady(&[change(-0.5, 0.001); 8]);
        judge(&mut small, NEUTRAL_PCT);
        assert!(small[0].worse.is_empty());
    }

    /// A uniform slow-down read with the spread of a default run's lowest levels: six levels
    /// far beyond the noise, C = 1 at p ≈ 0.014 and C = 2 at p ≈ 0.008, beside 32 judgements
    /// of other metrics that did not move. In one family of 40, C = 1 and 2 stay under the
    /// noise (0.014 > 0.05/34); capacity's own 3 % counts all eight (0.008 ≤ 0.03/2, then
    /// 0.014 ≤ 0.03/1), and the others' 2 % still counts none of theirs.
    #[test]
    fn capacity_judged_in_its_own_family_counts_a_slow_down_at_every_level() {
        let mut levels = vec![change(-2.6, 0.0210), change(-3.2, 0.0240)];
        levels.extend([change(-4.8, 0.01); 6]);
        assert!((levels[0].p_value().unwrap() - 0.014).abs() < 0.001);
        assert!((levels[1].p_value().unwrap() - 0.008).abs() < 0.001);
        let mut m = steady(&levels);
        for metric in [
            Metric::TtftP99,
            Metric::E2eP99,
            Metric::DecodeTokSP50,
            Metric::TtftP50,
        ] {
            let mut other = steady(&[change(1.0, 0.3); 8]).remove(0);
            other.metric = metric;
            m.push(other);
        }
        let mut alone = m.clone();
        judge(&mut m, NEUTRAL_PCT);
        assert_eq!(m[0].worse, vec![1, 2, 4, 8, 16, 32, 64, 128], "{m:?}");
        assert!(
            m[1..]
                .iter()
                .all(|o| o.worse.is_empty() && o.better.is_empty())
        );
        // The same judgements as one family: Holm's bound for the 7th of 40 is 0.05/34.
        let p: Vec<f64> = alone
            .iter()
            .flat_map(|mv| mv.changes.iter().map(|a| a.change.p_value().unwrap()))
            .collect();
        assert_eq!(holm(&p), (2..8).collect::<Vec<usize>>());
        alone[0].changes.truncate(2);
        judge(&mut alone, NEUTRAL_PCT);
        // Two capacity levels alone in their family: 0.008 ≤ 0.03/2 and 0.014 ≤ 0.03.
        assert_eq!(alone[0].worse, vec![1, 2]);
    }

    /// Capacity's 3 %: a slow-down seen far beyond the noise at seven levels and at C=1 with
    /// p ≈ 0.025 (a −2.6 % change read at ±2.3 %) counts at all eight, where a 2 % share would
    /// have left C=1 out (0.025 > 0.02/1).
    #[test]
    fn the_last_capacity_level_counts_up_to_capacitys_whole_share() {
        let mut levels = vec![change(-2.6, 0.0230)];
        levels.extend([change(-4.8, 0.01); 7]);
        let p = levels[0].p_value().unwrap();
        assert!((0.02..0.03).contains(&p), "{p}");
        let mut m = steady(&levels);
        let mut other = steady(&[change(1.0, 0.3); 8]).remove(0);
        other.metric = Metric::TtftP50;
        m.push(other);
        judge(&mut m, NEUTRAL_PCT);
        assert_eq!(m[0].worse, vec![1, 2, 4, 8, 16, 32, 64, 128], "{m:?}");
    }

    /// A throughput point at concurrency `c` of `n` requests whose TTFT is `ttft` ± 5 % (a
    /// fixed spread, so two runs of one configuration give the same numbers) and whose 101
    /// tokens take `decode` seconds after it.
    fn point(c: u32, n: usize, ttft: f64, decode: f64) -> Point {
        let mut records = Vec::new();
        // A closed loop: each slot sends its next request when its last one ends.
        let mut free: Vec<f64> = (0..c).map(|slot| f64::from(slot) * 0.01).collect();
        for i in 0..n {
            let jitter = 1.0 + 0.05 * ((i * 7 % 11) as f64 / 5.0 - 1.0);
            let t = ttft * jitter;
            let slot = i % c as usize;
            records.push(rec(free[slot], t, t + decode, 101));
            free[slot] += t + decode;
        }
        let mut p = Point::empty(c, 512, 100);
        p.summary = Some(summarize(&records, c, 101, &[]));
        p.requests = records;
        p
    }

    fn run(label: &str, ttft: f64, decode: f64) -> Bundle {
        let mut b = bundle(label);
        b.sweeps[0].points = [1, 2, 4].map(|c| point(c, 32, ttft, decode)).to_vec();
        b
    }

    /// The note of every run of 32 requests a level.
    const TAILS: &str = "TTFT p99 and e2e p99 not judged at C = 1, 2, 4: a p99 needs at least 368 requests per level for an interval";

    /// `b` compared with `a`, the baseline.
    fn comparison(a: &Bundle, b: &Bundle) -> Comparison {
        let inputs = [
            RunInput {
                label: &a.label,
                bundle: a,
            },
            RunInput {
                label: &b.label,
                bundle: b,
            },
        ];
        compare(&inputs, 0)
    }

    fn verdict_of(a: &Bundle, b: &Bundle) -> (Comparison, SweepVerdict) {
        let cmp = comparison(a, b);
        let v = verdicts(&cmp, NEUTRAL_PCT).remove(0);
        (cmp, v)
    }

    #[test]
    fn a_level_that_stalled_is_named_beside_the_verdict() {
        let old = run("kpro6", 0.30, 2.0);
        let mut new = run("kpro5", 0.30, 2.0);
        new.sweeps[0].points[1].flags.push(crate::bundle::Flag {
            kind: crate::bundle::FlagKind::Stall,
            message: "1 of 32 requests stalled: up to 150.6 s between two tokens".into(),
            count: Some(1),
        });
        let (_, v) = verdict_of(&old, &new);
        assert_eq!(
            v.notes,
            [
                TAILS,
                "kpro5 at C=2: 1 of 32 requests stalled: up to 150.6 s between two tokens; a change there may be that, not the server's speed"
            ]
        );
        let (_, clean) = verdict_of(&old, &run("kpro5", 0.30, 2.0));
        assert_eq!(clean.notes, [TAILS]);
    }

    /// Gives every level of `b` SGLang's acceptance gauge, read twelve times (sd 0.10 about
    /// 2.59), times `k`.
    fn with_accept(mut b: Bundle, k: f64) -> Bundle {
        let readings = [
            2.45, 2.62, 2.64, 2.52, 2.57, 2.67, 2.55, 2.6, 2.57, 2.6, 2.55, 2.85,
        ];
        for p in &mut b.sweeps[0].points {
            let mut gauges = std::collections::BTreeMap::new();
            gauges.insert(
                "sglang:spec_accept_length".to_string(),
                readings.iter().map(|r| Some(r * k)).collect(),
            );
            p.server_samples = Some(crate::bundle::ServerSamples {
                scheme: crate::bundle::MetricScheme::Sglang,
                gauges,
                ..crate::bundle::ServerSamples::default()
            });
        }
        b
    }

    #[test]
    fn an_acceptance_change_is_named_when_it_is_beyond_the_noise_of_sglangs_gauge() {
        let old = with_accept(run("kpro6", 0.30, 2.0), 1.0);
        // 2.9 % more accepted at every level, within a dozen readings' noise: no note (the
        // requests' chunks, the same in both, would have called it one at every level).
        let (_, v) = verdict_of(&old, &with_accept(run("kpro5", 0.30, 2.0), 1.029));
        assert_eq!(v.notes, [TAILS]);
        // 15 % fewer at every level is beyond it, and named at each: −12.1 to −17.8 % from
        // two sets of readings whose mean's relative standard error, widened by t(11), is
        // 1.22 % each.
        let (_, v) = verdict_of(&old, &with_accept(run("kpro5", 0.30, 2.0), 0.85));
        assert_eq!(
            v.notes,
            [
                TAILS,
                "speculative decoding: kpro5 accepts 2.21 tokens per step against kpro6's 2.60 at C=4 (-15.0 ±2.9 %), a change beyond the noise at C = 1, 2, 4; decode speed moves with it"
            ]
        );
    }

    #[test]
    fn a_cut_off_row_is_named_beside_the_verdict() {
        let old = run("kpro6", 0.30, 2.0);
        let mut new = run("kpro5", 0.30, 2.0);
        new.sweeps[0].points[2].flags.push(crate::bundle::Flag {
            kind: crate::bundle::FlagKind::CutOff,
            message: "cut off".into(),
            count: None,
        });
        let (_, v) = verdict_of(&old, &new);
        assert_eq!(
            v.notes,
            [
                TAILS,
                "kpro5's row at C=4 was cut off in its source: only its intact cells are compared"
            ]
        );
    }

    #[test]
    fn a_queue_still_filling_is_named_once_per_run_with_its_levels() {
        let old = run("kpro6", 0.30, 2.0);
        let mut new = run("kpro5", 0.30, 2.0);
        for p in &mut new.sweeps[0].points[1..] {
            p.flags.push(crate::bundle::Flag {
                kind: crate::bundle::FlagKind::QueueFilling,
                message: "the server's queue was still filling".into(),
                count: None,
            });
        }
        let (_, v) = verdict_of(&old, &new);
        assert_eq!(
            v.notes,
            [
                TAILS,
                "kpro5's TTFT at C = 2, 4 is of a queue still filling (queue-filling): it grows with how long the level ran, so a change there is partly the levels' lengths"
            ]
        );
    }

    #[test]
    fn an_incomplete_bundle_is_named() {
        let old = run("kpro6", 0.30, 2.0);
        let mut new = run("kpro5", 0.30, 2.0);
        new.complete = false;
        let (_, v) = verdict_of(&old, &new);
        assert_eq!(
            v.notes,
            [
                TAILS,
                "kpro5 is incomplete (interrupted, or still being written): only the levels it has so far are compared"
            ]
        );
    }

    #[test]
    fn a_faster_host_is_faster_everywhere_with_its_margins() {
        let old = run("kpro6", 0.30, 2.0);
        let new = run("kpro5", 0.15, 1.6);
        let (cmp, v) = verdict_of(&old, &new);
        assert_eq!(v.kind, SweepKind::Throughput);
        assert_eq!(v.outcome, Outcome::Faster);
        assert_eq!(v.levels, [1, 2, 4]);
        assert_eq!(
            v.headline(&cmp.labels, 0),
            "throughput sweep: kpro5 is faster than kpro6 at every level (C = 1, 2, 4)"
        );
        let ttft = v
            .metrics
            .iter()
            .find(|m| m.metric == Metric::TtftP50)
            .unwrap();
        assert_eq!(ttft.better, [1, 2, 4]);
        for a in &ttft.changes {
            // Half the TTFT: −50 % exactly, since the spread is the same in both runs.
            assert!((a.change.pct + 50.0).abs() < 1e-9, "{a:?}");
            let (lo, hi) = a.change.interval.unwrap();
            assert!(lo < -50.0 && -50.0 < hi && hi < 0.0, "{a:?}");
        }
        let decode = v
            .metrics
            .iter()
            .find(|m| m.metric == Metric::DecodeTokSP50)
            .unwrap();
        // 100 tokens in 2.0 s → 1.6 s: +25 %.
        assert!((decode.changes[0].change.pct - 25.0).abs() < 1e-6);
        let lines = v.metric_lines();
        assert!(
            lines[0].1.starts_with("better at all 3 levels; best +"),
            "{lines:?}"
        );
        // The steady rate speaks; the aggregate is left to imported runs.
        assert!(v.metrics.iter().all(|m| m.metric != Metric::AggTokS));
    }

    #[test]
    fn less_capacity_with_faster_users_is_mixed_capacity_first() {
        // A server that admits fewer at once: each user decodes 25 % faster (2.0 → 1.6 s), but
        // requests queue (TTFT 0.3 → 1.5 s), so a slot's cycle grows from 2.3 to 3.1 s and the
        // server serves about 2.3 / 3.1 − 1 = −26 % tokens/s.
        let old = run("a16", 0.30, 2.0);
        let new = run("b12", 1.50, 1.6);
        let (cmp, v) = verdict_of(&old, &new);
        assert_eq!(v.outcome, Outcome::Mixed);
        let h = v.headline(&cmp.labels, 0);
        assert!(
            h.starts_with("throughput sweep: mixed: against a16, b12 serves 25.9 % fewer tokens/s at C=2 and its TTFT p50 is 400.0 % higher at C=4, while"),
            "{h}"
        );
        assert!(
            h.contains(" while each user decodes 25.0 % faster at C="),
            "{h}"
        );
    }

    #[test]
    fn faster_users_with_capacity_unknown_is_not_called_faster() {
        // The faster host of the test above, but 8 requests a level: at C=4 two waves, too few
        // for capacity's interval.
        let few = |label: &str, ttft: f64, decode: f64| {
            let mut b = bundle(label);
            b.sweeps[0].points = [1, 2, 4].map(|c| point(c, 8, ttft, decode)).to_vec();
            b
        };
        let (cmp, v) = verdict_of(&few("kpro6", 0.30, 2.0), &few("kpro5", 0.15, 1.6));
        assert_eq!(v.outcome, Outcome::Unresolved, "{:?}", v.notes);
        let h = v.headline(&cmp.labels, 0);
        assert!(
            h.starts_with("throughput sweep: cannot tell: against kpro6, kpro5 "),
            "{h}"
        );
        assert!(
            h.ends_with(", but its capacity there is not resolved"),
            "{h}"
        );
        assert!(
            v.notes
                .iter()
                .any(|n| n.starts_with("capacity cannot be told at C = ")),
            "{:?}",
            v.notes
        );
    }

    #[test]
    fn above_the_running_limit_the_gate_judges_throughput_not_the_queue_it_builds() {
        // TTFT doubled everywhere; both servers run at most 2 at once, so at C=4 the TTFT is
        // the closed loop's queue and only throughput is gated there.
        let mut old = run("a", 0.30, 2.0);
        let mut new = run("b", 0.60, 2.0);
        old.target.max_running_requests = Some(2);
        new.target.max_running_requests = Some(2);
        let (cmp, _) = verdict_of(&old, &new);
        let g = crate::compare::gate::gate(&cmp, 5.0, None).unwrap();
        assert!(
            g.not_gated
                .iter()
                .any(|l| l.starts_with("b: latencies not gated at C = 4: above")),
            "{:?}",
            g.not_gated
        );
        assert!(
            g.regressions
                .iter()
                .any(|l| l.contains("TTFT p50 (s)") && l.ends_with("at C=2"))
        );
        assert!(
            !g.regressions
                .iter()
                .any(|l| l.contains("TTFT") && l.ends_with("at C=4"))
        );
        // The loop's slots wait longer per request, so throughput at C=4 is gated and lower.
        assert!(
            g.regressions
                .iter()
                .any(|l| l.starts_with("b: steady output tok/s") && l.ends_with("at C=4")),
            "{:?}",
            g.regressions
        );
    }

    #[test]
    fn two_runs_of_one_configuration_are_no_significant_change() {
        let (_, v) = verdict_of(&run("a", 0.3, 2.0), &run("b", 0.3, 2.0));
        assert_eq!(v.outcome, Outcome::NoSignificantChange);
        assert!(
            v.metrics
                .iter()
                .all(|m| m.better.is_empty() && m.worse.is_empty())
        );
    }

    #[test]
    fn a_host_faster_at_one_level_says_where() {
        let old = run("a", 0.3, 2.0);
        let mut new = run("b", 0.3, 2.0);
        new.sweeps[0].points[0] = point(1, 32, 0.2, 2.0);
        let (cmp, v) = verdict_of(&old, &new);
        assert_eq!(v.outcome, Outcome::Faster);
        assert_eq!(
            v.headline(&cmp.labels, 0),
            "throughput sweep: b is faster than a at C = 1; no significant change at C = 2, 4"
        );
    }

    /// A TTFT p50 44 % higher at one level on its own interval (p = 0.04), as two runs of one
    /// configuration once read (+43.7 %, +1.8 to +67.2, at C=8: a closed loop's TTFT p50 moves
    /// between batched and lone prefills): beyond the noise alone, not among all the verdict's
    /// judgements. The verdict says no significant change, and the gate does not fail on it: it
    /// cannot tell.
    #[test]
    fn the_gate_fails_on_nothing_the_verdict_calls_no_change() {
        let (a, b) = (run("a", 0.3, 2.0), run("b", 0.3, 2.0));
        let mut cmp = comparison(&a, &b);
        let row = cmp.sweeps[0].levels[1]
            .rows
            .iter_mut()
            .find(|r| r.metric == Metric::TtftP50)
            .unwrap();
        let one = Change {
            pct: 43.7,
            interval: Some((1.8, 67.2)),
            no_interval: None,
            below_resolution: false,
            df: None,
        };
        assert!(one.significant(5.0), "beyond the noise on its own");
        row.cells[1].change = Some(one);
        let v = verdicts(&cmp, 5.0).remove(0);
        assert_eq!(v.outcome, Outcome::NoSignificantChange);
        let r = crate::compare::gate::gate(&cmp, 5.0, None).unwrap();
        assert!(r.regressions.is_empty(), "{:?}", r.regressions);
        assert!(
            r.unresolved
                .iter()
                .any(|l| l.starts_with("b: TTFT p50 (s) +43.7 %")
                    && l.ends_with("could be more than 5 % worse")),
            "{:?}",
            r.unresolved
        );
    }

    /// Levels both runs skipped (the default levels end at saturation, the rest are recorded
    /// as not run) are in the table but have no change: the verdict does not call them "no
    /// significant change".
    #[test]
    fn levels_neither_run_measured_are_not_no_significant_change() {
        let skipped = |c: u32| {
            let mut p = Point::empty(c, 512, 100);
            p.status = crate::bundle::PointStatus::Skipped;
            p.reason = Some("not run: the default levels ended at C=4".into());
            p
        };
        let mut old = run("a", 0.3, 2.0);
        let mut new = run("b", 0.3, 2.0);
        new.sweeps[0].points[0] = point(1, 32, 0.2, 2.0);
        for b in [&mut old, &mut new] {
            b.sweeps[0].points.extend([skipped(64), skipped(100)]);
        }
        let (cmp, v) = verdict_of(&old, &new);
        assert_eq!(cmp.sweeps[0].levels.len(), 5, "the table keeps them");
        assert_eq!(v.levels, [1, 2, 4]);
        assert_eq!(
            v.headline(&cmp.labels, 0),
            "throughput sweep: b is faster than a at C = 1; no significant change at C = 2, 4"
        );
        let (cmp, v) = verdict_of(&old, &old.clone());
        assert_eq!(
            v.headline(&cmp.labels, 0),
            "throughput sweep: no significant change from a to a (C = 1, 2, 4)"
        );
    }

    /// A level's change in steady tok/s: (level, pct, interval).
    type LevelChange = (u64, f64, Option<(f64, f64)>);

    /// A verdict of steady tok/s alone, its changes at C = 1, 8, 16.
    fn capacity_only(changes: [LevelChange; 3], worse: Vec<u64>) -> SweepVerdict {
        let changes: Vec<AtLevel> = changes
            .into_iter()
            .map(|(key, pct, interval)| AtLevel {
                key,
                change: Change {
                    pct,
                    interval,
                    no_interval: interval.is_none().then_some("too few waves"),
                    below_resolution: false,
                    df: None,
                },
            })
            .collect();
        let metrics = vec![MetricVerdict {
            metric: Metric::SteadyTokS,
            changes,
            better: Vec::new(),
            worse,
        }];
        SweepVerdict {
            kind: SweepKind::Throughput,
            shape: None,
            run: 1,
            outcome: outcome(&metrics),
            levels: vec![1, 8, 16],
            metrics,
            notes: Vec::new(),
        }
    }

    #[test]
    fn a_level_whose_capacity_cannot_be_told_is_not_called_unchanged() {
        let labels = ["a".to_string(), "b".to_string()];
        // Slower at C=16; C=1 resolved and unchanged; C=8 could be 30 % lower.
        let v = capacity_only(
            [
                (1, 0.2, Some((-1.0, 1.4))),
                (8, -1.0, Some((-30.0, 28.0))),
                (16, -15.0, Some((-18.0, -12.0))),
            ],
            vec![16],
        );
        assert_eq!(
            v.headline(&labels, 0),
            "throughput sweep: b is slower than a at C = 16; no significant change at C = 1; cannot tell at C = 8"
        );
        // Nothing beyond the noise, C=8 unresolved.
        let v = capacity_only(
            [
                (1, 0.2, Some((-1.0, 1.4))),
                (8, -1.0, None),
                (16, 0.5, Some((-2.0, 3.0))),
            ],
            Vec::new(),
        );
        assert_eq!(
            v.headline(&labels, 0),
            "throughput sweep: no significant change from a to b at C = 1, 16; cannot tell at C = 8"
        );
        // Nothing resolved anywhere.
        let v = capacity_only(
            [(1, 0.2, None), (8, -1.0, None), (16, 0.5, None)],
            Vec::new(),
        );
        assert_eq!(
            v.headline(&labels, 0),
            "throughput sweep: cannot tell b from a (C = 1, 8, 16): capacity is not resolved at any level"
        );
    }

    #[test]
    fn a_faster_ttft_by_less_than_a_millisecond_is_no_change() {
        // 5.0 → 4.5 ms TTFT: −10 % with a tight interval, but under the timing resolution.
        let (_, v) = verdict_of(&run("a", 0.005, 2.0), &run("b", 0.0045, 2.0));
        assert_eq!(v.outcome, Outcome::NoSignificantChange);
        let (_, v) = verdict_of(&run("a", 0.050, 2.0), &run("b", 0.045, 2.0));
        assert_eq!(v.outcome, Outcome::Faster);
    }

    #[test]
    fn a_slower_host_and_a_mixed_one() {
        let (_, v) = verdict_of(&run("a", 0.3, 2.0), &run("b", 0.6, 4.0));
        assert_eq!(v.outcome, Outcome::Slower);
        let (_, v) = verdict_of(&run("a", 0.3, 2.0), &run("b", 0.6, 1.0));
        assert_eq!(v.outcome, Outcome::Mixed);
    }

    #[test]
    fn missing_sweeps_and_levels_are_named_not_refused() {
        let a = run("kpro5", 0.15, 1.6);
        let mut b = run("kpro6", 0.3, 2.0);
        b.sweeps.truncate(1);
        b.sweeps[0].points.truncate(2);
        let inputs = [
            RunInput {
                label: &b.label,
                bundle: &b,
            },
            RunInput {
                label: &a.label,
                bundle: &a,
            },
        ];
        let cmp = compare(&inputs, 0);
        let vs = verdicts(&cmp, NEUTRAL_PCT);
        assert_eq!(vs.len(), 2);
        assert_eq!(vs[0].outcome, Outcome::Faster);
        assert_eq!(vs[0].levels, [1, 2]);
        assert_eq!(
            vs[0].notes,
            [
                "only in kpro5: C = 4",
                "TTFT p99 and e2e p99 not judged at C = 1, 2: a p99 needs at least 368 requests per level for an interval"
            ]
        );
        assert_eq!(vs[1].kind, SweepKind::Context);
        assert_eq!(vs[1].outcome, Outcome::NotCompared);
        assert_eq!(vs[1].notes, ["kpro6 (baseline) has no context sweep"]);
    }

    #[test]
    fn the_outcome_follows_where_metrics_are_better_or_worse() {
        let mv = |better: &[u64], worse: &[u64]| MetricVerdict {
            metric: Metric::TtftP50,
            changes: Vec::new(),
            better: better.to_vec(),
            worse: worse.to_vec(),
        };
        assert_eq!(outcome(&[]), Outcome::NoSignificantChange);
        assert_eq!(outcome(&[mv(&[], &[]), mv(&[1], &[])]), Outcome::Faster);
        assert_eq!(outcome(&[mv(&[], &[2])]), Outcome::Slower);
        assert_eq!(outcome(&[mv(&[1], &[]), mv(&[], &[4])]), Outcome::Mixed);
    }

    #[test]
    fn prompts_match_as_multisets_and_a_longer_run_continues_the_stream() {
        let mut m = PromptMatch::new();
        // The run sent one prompt more: compared on the two both sent, its count first.
        m.add_level("C=1", Some(vec!["a", "b"]), Some(vec!["a", "b", "c"]));
        assert_eq!(
            (m.compared, m.more.as_slice()),
            (2, ["C=1 (3 vs 2)".to_string()].as_slice())
        );
        assert_eq!(m.digest, fnv1a_extend(fnv1a_extend(FNV_START, b"a"), b"b"));
        // As many of a prompt as the other sent, not just the same ones.
        m.add_level("C=2", Some(vec!["a", "a"]), Some(vec!["a", "b"]));
        assert_eq!(m.differs, ["C=2"]);
        // A level where neither sent anything is not compared; one without hashes is unknown.
        m.add_level("C=4", Some(Vec::new()), Some(Vec::new()));
        assert!(m.known);
        m.add_level("C=8", Some(vec!["a"]), None);
        assert!(!m.known);
        assert_eq!(m.compared, 2);
    }

    #[test]
    fn a_lopsided_interval_is_shown_with_both_ends() {
        let c = |pct, lo, hi| Change {
            pct,
            interval: Some((lo, hi)),
            no_interval: None,
            below_resolution: false,
            df: None,
        };
        assert_eq!(change_text(&c(8.6, 7.4, 9.8)), "+8.6 ±1.2 %");
        // Ends that are not numbers are left out (found by the property test).
        assert_eq!(change_text(&c(1.07e286, f64::NAN, f64::NAN)), "+1.07e286 %");
        // Lopsided by a fraction of a point is still "±".
        assert_eq!(change_text(&c(-52.6, -52.7, -52.5)), "-52.6 ±0.1 %");
        // Symmetric on the log scale (a rate's interval) is "±", however lopsided in percent.
        assert_eq!(change_text(&c(-50.0, -67.0, -24.3)), "-50.0 ±21.4 %");
        assert_eq!(
            change_text(&c(76.9, -36.0, 77.0)),
            "+76.9 % (-36.0 to +77.0)"
        );
    }
}
