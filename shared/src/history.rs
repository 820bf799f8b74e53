//! A team's history: the index that lists a folder's or a bucket's runs without reading them,
//! and one metric at one level across the runs of a label, ordered by date, with the runs where
//! it changed beyond the noise marked.
//!
//! **The index** ([`INDEX_NAME`], beside the bundles) is a [`FolderListing`] whose entries carry
//! a [`RunSummary`]: label, host, engine and version, GPUs, each sweep's workload and headline,
//! and at every level a few key numbers with their 95 % intervals. It is a cache, never the
//! truth: an entry counts only while the bundle's size and version tag (a store's ETag, a file's
//! modification time) are the ones it was made from, so a stale or lost index costs a re-read,
//! never a wrong number.
//!
//! **Change detection** ([`changes`]) walks a history in date order. Each run is tested against
//! the runs since the last change (at most [`WINDOW`] of them), pooled by inverse variance on
//! the log scale; the runs' own intervals give the variance, and when the runs of that segment
//! scatter more than their intervals say, the excess (DerSimonian–Laird's between-run
//! variance) is added to every run's, so a host whose runs differ more than each run's own
//! noise is not flagged for it. A run is a change when it lies beyond the critical value that
//! keeps the chance of any false alarm in the whole history at [`FALSE_ALARM`] (Bonferroni over
//! the runs tested) and by at least [`NEUTRAL_PCT`] per cent. It never uses a fixed ratio: a
//! ±1 % run resolves a 4 % change, a ±10 % run does not.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Bundle;
use crate::bundle::{Api, FlagKind, Sweep, SweepKind};
use crate::compare::interval::{Spread, estimate, normal_quantile};
use crate::compare::{NEUTRAL_PCT, level_key};
use crate::curves::Metric;
use crate::folder::{FolderEntry, FolderListing};
use crate::hash::fnv1a;

/// The index's file (or object) name, beside the bundles it lists: a hidden name, so that
/// `llmsweep compare results/*.json` does not take it for a bundle.
pub const INDEX_NAME: &str = ".llmsweep-index.json";
/// The index format this version writes; an index of another format is rebuilt.
pub const INDEX_FORMAT: u32 = 3;
/// The chance of one or more false alarms in a whole history with no change.
pub const FALSE_ALARM: f64 = 0.05;
/// Runs before a run that it is tested against, at most (those since the last change).
pub const WINDOW: usize = 8;

/// Degrees of freedom from which Student's t is taken for the normal: a steady rate has a few
/// dozen at most, and t's tail at absurd counts is not computed.
const NORMAL_DF: f64 = 1e4;

/// The two-sided normal quantile of a 95 % interval.
const Z95: f64 = 1.959_963_985;

/// The index of a folder or a bucket prefix: its bundles as a listing, each entry with its
/// [`RunSummary`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Index {
    /// [`INDEX_FORMAT`].
    pub llmsweep_index: u32,
    #[serde(flatten)]
    pub listing: FolderListing,
}

impl Index {
    /// Reads an index; `None` when the text is not one of this format (then it is rebuilt).
    pub fn parse(text: &[u8]) -> Option<Index> {
        serde_json::from_slice::<Index>(text)
            .ok()
            .filter(|i| i.llmsweep_index == INDEX_FORMAT)
    }
}

/// What a history needs of one run, kept in the index so a thousand runs list without reading
/// a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The client host that ran it.
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_version: Option<String>,
    /// GPUs serving the model, when known (see [`crate::deploy::gpus`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    /// The most requests the server runs at once, when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_running: Option<u64>,
    /// A hash of the server's arguments as the probe read them, so a history can say they
    /// changed between two runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_args: Option<String>,
    #[serde(default)]
    pub sweeps: Vec<SweepSummary>,
}

/// One sweep of a run, summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    pub kind: SweepKind,
    /// The load in words ([`workload_words`]): two runs are in one history only when theirs
    /// agree.
    pub workload: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<String>,
    #[serde(default)]
    pub levels: Vec<LevelSummary>,
}

/// One level's key numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelSummary {
    /// [`level_key`]: the concurrency, the input length, or the offered rate × 1000.
    pub key: u64,
    /// Metric key ([`Metric::key`]) → value with its interval.
    #[serde(default)]
    pub values: BTreeMap<String, Estimated>,
    /// Flags that may explain a change here: `stall`, `other-traffic`, `capped`, ….
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<FlagKind>,
}

/// A number and how far its 95 % interval reaches below and above it on the log scale (absent
/// when the run could not say: an imported number, too few requests).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimated {
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<f64>,
    /// The degrees of freedom of Student's t the interval was drawn with (a steady rate's, over
    /// its cycles); absent for a normal interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
}

impl Estimated {
    /// The standard error of the log of the value, from its interval; `None` without one.
    pub fn log_se(&self) -> Option<f64> {
        let (d, u) = (self.down?, self.up?);
        let se = (d + u) / 2.0 / Z95;
        (se.is_finite() && se > 0.0).then_some(se)
    }

    /// Half the interval in per cent of the value, as tables print `±1.8 %`.
    pub fn half_width_pct(&self) -> Option<f64> {
        let (d, u) = (self.down?, self.up?);
        Some(((u.exp() - 1.0) + (1.0 - (-d).exp())) / 2.0 * 100.0)
    }
}

/// The metrics a summary keeps, per kind of sweep.
pub fn summary_metrics(kind: SweepKind) -> &'static [Metric] {
    match kind {
        SweepKind::Context => &[
            Metric::TtftP50,
            Metric::TtftP99,
            Metric::PrefillTokSP50,
            Metric::DecodeTokSP50,
            Metric::E2eP50,
        ],
        SweepKind::Rate => &[
            Metric::TtftP50,
            Metric::TtftP99,
            Metric::TpotP50,
            Metric::E2eP50,
            Metric::E2eP99,
            Metric::AchievedRps,
            Metric::GoodputFraction,
        ],
        _ => &[
            Metric::SteadyTokS,
            Metric::AggTokS,
            Metric::DecodeTokSP50,
            Metric::TtftP50,
            Metric::TtftP99,
            Metric::E2eP50,
            Metric::E2eP99,
            Metric::AcceptLength,
        ],
    }
}

impl RunSummary {
    pub fn of(b: &Bundle) -> RunSummary {
        RunSummary {
            host: b.hosts.client.hostname.clone(),
            engine: b.target.engine.clone(),
            engine_version: b.target.engine_version.clone(),
            gpus: crate::deploy::gpus(b).map(|g| g.count),
            max_running: b.target.max_running_requests,
            server_args: b
                .target
                .server_args
                .as_ref()
                .map(|a| format!("{:016x}", fnv1a(settings(a).to_string().as_bytes()))),
            sweeps: b.sweeps.iter().map(|s| SweepSummary::of(b, s)).collect(),
        }
    }

    /// The engine as a history shows it, e.g. `sglang 0.5.11`.
    pub fn engine_words(&self) -> String {
        match (&self.engine, &self.engine_version) {
            (Some(e), Some(v)) => format!("{e} {v}"),
            (Some(e), None) => e.clone(),
            (None, Some(v)) => v.clone(),
            (None, None) => "unknown engine".into(),
        }
    }
}

impl SweepSummary {
    fn of(b: &Bundle, s: &Sweep) -> SweepSummary {
        let metrics = summary_metrics(s.kind);
        SweepSummary {
            kind: s.kind,
            workload: workload_words(b, s),
            headline: crate::headline::headline(s),
            levels: s
                .points
                .iter()
                .filter_map(|p| {
                    let values: BTreeMap<String, Estimated> = metrics
                        .iter()
                        .filter_map(|&m| {
                            let e = estimate(m, p)?;
                            let (down, up, df) = match e.spread {
                                Spread::LogSe(se) => (Some(Z95 * se), Some(Z95 * se), None),
                                Spread::LogSeT { se, df } => {
                                    (Some(Z95 * se), Some(Z95 * se), Some(df))
                                }
                                Spread::LogBounds { down, up } => (Some(down), Some(up), None),
                                _ => (None, None, None),
                            };
                            Some((
                                m.key().to_string(),
                                Estimated {
                                    value: e.value,
                                    down: down.filter(|d| d.is_finite()),
                                    up: up.filter(|u| u.is_finite()),
                                    df: df.filter(|d: &f64| d.is_finite() && *d >= 1.0),
                                },
                            ))
                        })
                        .collect();
                    (!values.is_empty()).then(|| LevelSummary {
                        key: level_key(s.kind, p),
                        values,
                        flags: p.flags.iter().map(|f| f.kind).collect(),
                    })
                })
                .collect(),
        }
    }
}

/// The load of a sweep in words, the same for two runs that sent the same kind of work
/// (prompt seeds aside): its kind, lengths, length spread, shared prefix, API, dataset and
/// extra request fields, e.g. `throughput 1000×500 tokens, chat`.
pub fn workload_words(b: &Bundle, s: &Sweep) -> String {
    let lens = |v: &[u64]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v.dedup();
        v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
    };
    let mut w = match s.kind {
        SweepKind::Context => format!(
            "context at C={}, {} output tokens",
            s.concurrency.first().copied().unwrap_or(1),
            s.output_len
        ),
        SweepKind::Rate => {
            let arrival = s
                .rate
                .as_ref()
                .map(|r| format!(", {:?} arrivals", r.arrival).to_lowercase())
                .unwrap_or_default();
            format!(
                "rate {}×{} tokens{arrival}",
                lens(&s.input_lens),
                s.output_len
            )
        }
        _ => format!("throughput {}×{} tokens", lens(&s.input_lens), s.output_len),
    };
    if let Some(spread) = s.length_spread.filter(|x| *x > 0.0) {
        w.push_str(&format!(", lengths ±{:.0} %", spread * 100.0));
    }
    if b.workload.shared_prefix_len > 0 {
        w.push_str(&format!(
            ", {}-token shared prefix",
            b.workload.shared_prefix_len
        ));
    }
    w.push_str(match b.target.api {
        Api::Chat => ", chat",
        Api::Completions => ", completions",
        _ => "",
    });
    if let Some(d) = &b.workload.dataset {
        w.push_str(&format!(
            ", dataset {}",
            d.sha256.get(..12).unwrap_or(&d.sha256)
        ));
    }
    if let Some(x) = &b.workload.extra_body {
        w.push_str(&format!(
            ", extra body {:08x}",
            fnv1a(x.to_string().as_bytes()) >> 32
        ));
    }
    w
}

/// The index entries of `listing` that count: readable, with a summary.
pub fn summaries(listing: &FolderListing) -> impl Iterator<Item = (&FolderEntry, &RunSummary)> {
    listing
        .bundles
        .iter()
        .filter_map(|e| Some((e, e.summary.as_ref()?)))
}

/// One run of a history.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRun {
    /// The bundle's name in its folder or prefix.
    pub name: String,
    /// When it ran, RFC 3339.
    pub date: String,
    pub complete: bool,
    pub engine: String,
    pub gpus: Option<u32>,
    pub max_running: Option<u64>,
    pub server_args: Option<String>,
    pub host: String,
    /// The metric at the level, when the run measured it.
    pub value: Option<Estimated>,
    pub flags: Vec<FlagKind>,
}

/// A run where the metric changed beyond the noise.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Index of the run in [`History::runs`].
    pub at: usize,
    /// The run before it with a value (the last of the runs it was tested against).
    pub before: usize,
    /// The runs it was tested against pooled, their value.
    pub baseline: f64,
    /// `(value − baseline) / baseline × 100`.
    pub pct: f64,
    /// The 95 % interval of `pct`.
    pub interval: (f64, f64),
    /// What else differs between `before` and `at`: engine version, GPUs, server arguments,
    /// the client host, flags.
    pub what_else: Vec<String>,
}

/// One metric at one level across the runs of one label and one workload, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub label: String,
    pub kind: SweepKind,
    pub workload: String,
    pub metric: Metric,
    /// [`level_key`] of the level.
    pub key: u64,
    pub runs: Vec<HistoryRun>,
    pub steps: Vec<Step>,
    /// The critical value of the test (in standard errors), from [`FALSE_ALARM`] and the runs
    /// tested.
    pub critical_z: f64,
    /// Runs with a value but no interval: shown, not tested.
    pub untested: usize,
}

/// The histories in a listing: per label (or only `label`), per sweep kind and workload, per
/// level, of `metric`. A level appears when at least two runs measured it. Runs are ordered by
/// date, then name.
pub fn histories(
    listing: &FolderListing,
    label: Option<&str>,
    metric: Metric,
    kind: Option<SweepKind>,
) -> Vec<History> {
    // (label, kind, workload) → runs with their sweep summary.
    type Key = (String, SweepKind, String);
    let mut groups: BTreeMap<Key, Vec<(&FolderEntry, &RunSummary, &SweepSummary)>> =
        BTreeMap::new();
    for (e, s) in summaries(listing) {
        let Some(facts) = &e.bundle else { continue };
        if label.is_some_and(|l| l != facts.label) || facts.selftest {
            continue;
        }
        for w in &s.sweeps {
            if kind.is_some_and(|k| k != w.kind) || !metric_applies(metric, w.kind) {
                continue;
            }
            groups
                .entry((facts.label.clone(), w.kind, w.workload.clone()))
                .or_default()
                .push((e, s, w));
        }
    }
    let mut out = Vec::new();
    for ((label, kind, workload), mut runs) in groups {
        runs.sort_by(|a, b| {
            date_of(a.0)
                .cmp(date_of(b.0))
                .then_with(|| a.0.name.cmp(&b.0.name))
        });
        let mut keys: BTreeMap<u64, usize> = BTreeMap::new();
        for (_, _, w) in &runs {
            for l in &w.levels {
                if l.values.contains_key(metric.key()) {
                    *keys.entry(l.key).or_default() += 1;
                }
            }
        }
        for (key, _) in keys.into_iter().filter(|&(_, n)| n >= 2) {
            let rows: Vec<HistoryRun> = runs
                .iter()
                .map(|(e, s, w)| {
                    let level = w.levels.iter().find(|l| l.key == key);
                    HistoryRun {
                        name: e.name.clone(),
                        date: date_of(e).to_string(),
                        complete: e.bundle.as_ref().is_some_and(|f| f.complete),
                        engine: s.engine_words(),
                        gpus: s.gpus,
                        max_running: s.max_running,
                        server_args: s.server_args.clone(),
                        host: s.host.clone(),
                        value: level.and_then(|l| l.values.get(metric.key()).copied()),
                        flags: level.map(|l| l.flags.clone()).unwrap_or_default(),
                    }
                })
                .collect();
            out.push(History::new(
                label.clone(),
                kind,
                workload.clone(),
                metric,
                key,
                rows,
            ));
        }
    }
    out
}

/// The file beside the runs (in a folder or a bucket prefix) that lists the changes a team has
/// accepted (`llmsweep history PLACE --accept RUN`): the gate judges later runs against them.
pub const ACCEPTED_NAME: &str = ".llmsweep-accepted.json";

/// The format number of [`Accepted`].
pub const ACCEPTED_FORMAT: u32 = 1;

/// The changes accepted in a place: each a run (a bundle's file name) from which its label's
/// numbers are the new baseline.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Accepted {
    pub llmsweep_accepted: u32,
    pub accepted: Vec<AcceptedRun>,
}

/// One accepted run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcceptedRun {
    /// The bundle's file name in the place.
    pub run: String,
    /// Its label.
    pub label: String,
    /// When it was accepted, RFC 3339 UTC.
    pub at: String,
}

impl Accepted {
    /// The accepted runs of a file's bytes, when it is of this format.
    pub fn parse(bytes: &[u8]) -> Option<Accepted> {
        serde_json::from_slice::<Accepted>(bytes)
            .ok()
            .filter(|a| a.llmsweep_accepted == ACCEPTED_FORMAT)
    }

    /// Whether run `name` was accepted.
    pub fn has(&self, name: &str) -> bool {
        self.accepted.iter().any(|a| a.run == name)
    }
}

/// What the history gate says of one history.
#[derive(Debug, Clone, PartialEq)]
pub enum Gate {
    /// The newest run is not worse than the accepted baseline beyond the noise.
    Pass,
    /// Worse since run `since` (index into [`History::runs`], the first change not accepted),
    /// by `pct` in all from the baseline before it.
    Worse { since: usize, pct: f64 },
    /// The newest run has a value at this level but no interval: a change cannot be told.
    CannotTell,
}

/// The gate of history `h`: the changes beyond the noise since the last accepted run, taken
/// together. A change for the worse keeps the gate failing while the runs after it stay where
/// it put them (a rerun that is as slow is not a new change, but it is not the old baseline
/// either), until someone accepts it; a later recovery back to the baseline passes.
pub fn gate(h: &History, accepted: &Accepted) -> Gate {
    let Some(last) = h.runs.len().checked_sub(1) else {
        return Gate::Pass;
    };
    let newest = &h.runs[last];
    if newest
        .value
        .is_some_and(|v| v.log_se().is_none() && v.value.is_finite())
    {
        return Gate::CannotTell;
    }
    let from = h
        .runs
        .iter()
        .rposition(|r| accepted.has(&r.name))
        .unwrap_or(0);
    let open: Vec<&Step> = h.steps.iter().filter(|s| s.at > from).collect();
    let Some(first_worse) = open.iter().find(|s| !h.metric.improved_by(s.pct)) else {
        return Gate::Pass;
    };
    let total = open.iter().map(|s| (1.0 + s.pct / 100.0).ln()).sum::<f64>();
    let pct = (total.exp() - 1.0) * 100.0;
    if h.metric.improved_by(pct) || pct == 0.0 {
        return Gate::Pass;
    }
    Gate::Worse {
        since: first_worse.at,
        pct,
    }
}

/// A server's arguments without its live state: SGLang's `server_info` carries its
/// `internal_states` (throughput, memory, queue lengths as the probe found them), which differ
/// on every run and are no change of configuration.
fn settings(args: &serde_json::Value) -> serde_json::Value {
    const LIVE: [&str; 1] = ["internal_states"];
    match args {
        serde_json::Value::Object(m) => serde_json::Value::Object(
            m.iter()
                .filter(|(k, _)| !LIVE.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether a sweep of `kind` summarises `metric`.
pub fn metric_applies(metric: Metric, kind: SweepKind) -> bool {
    summary_metrics(kind).contains(&metric)
}

fn date_of(e: &FolderEntry) -> &str {
    e.bundle.as_ref().map_or("", |f| f.created_at.as_str())
}

impl History {
    /// A history of `runs` (oldest first), with its changes found.
    pub fn new(
        label: String,
        kind: SweepKind,
        workload: String,
        metric: Metric,
        key: u64,
        runs: Vec<HistoryRun>,
    ) -> History {
        let obs: Vec<Option<Obs>> = runs
            .iter()
            .map(|r| {
                let v = r.value?;
                (v.value > 0.0 && v.value.is_finite()).then_some(())?;
                Some(Obs {
                    log: v.value.ln(),
                    se: v.log_se()?,
                    df: v.df,
                })
            })
            .collect();
        let untested = runs
            .iter()
            .zip(&obs)
            .filter(|(r, o)| r.value.is_some() && o.is_none())
            .count();
        let found = changes(&obs);
        let steps = found
            .steps
            .into_iter()
            .map(|s| Step {
                what_else: what_else(&runs[s.before], &runs[s.at]),
                at: s.at,
                before: s.before,
                baseline: s.baseline_log.exp(),
                pct: s.pct,
                interval: s.interval,
            })
            .collect();
        History {
            label,
            kind,
            workload,
            metric,
            key,
            runs,
            steps,
            critical_z: found.critical_z,
            untested,
        }
    }

    /// The level in words: `C=16`, `input=8000`, `2 req/s`.
    pub fn level_text(&self) -> String {
        crate::compare::verdict::level_text(self.kind, self.key)
    }
}

/// One run's number on the log scale and its standard error: the normal one, or, with `df`,
/// Student's t's over that many degrees of freedom expressed as the normal standard error of the
/// same 95 % interval (a steady rate's, drawn from a few cycles).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Obs {
    pub log: f64,
    pub se: f64,
    pub df: Option<f64>,
}

/// A change found by [`changes`], by index into its input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    pub at: usize,
    pub before: usize,
    pub baseline_log: f64,
    pub pct: f64,
    pub interval: (f64, f64),
}

/// What [`changes`] found, and the critical value it used.
#[derive(Debug, Clone, PartialEq)]
pub struct Changes {
    pub steps: Vec<Found>,
    pub critical_z: f64,
}

/// The changes beyond the noise in a series (oldest first; `None` for a run without a number
/// and an interval): see the module's words.
pub fn changes(series: &[Option<Obs>]) -> Changes {
    let tested = series.iter().flatten().count().saturating_sub(1).max(1);
    let critical_z = normal_quantile(1.0 - FALSE_ALARM / (2.0 * tested as f64));
    let floor = scatter(series);
    let mut steps = Vec::new();
    let mut segment: Vec<Obs> = Vec::new();
    let mut before = None;
    for (i, o) in series.iter().enumerate() {
        let Some(o) = *o else { continue };
        if let (Some(b), Some((mean, var_mean, tau2))) = (before, pooled(&segment, floor)) {
            let d = o.log - mean;
            let sd = (o.se * o.se + tau2 + var_mean).sqrt();
            let pct = (d.exp() - 1.0) * 100.0;
            if beyond(d, &o, &segment, tau2 + var_mean, tested, critical_z)
                && pct.abs() >= NEUTRAL_PCT
            {
                steps.push(Found {
                    at: i,
                    before: b,
                    baseline_log: mean,
                    pct,
                    interval: (
                        ((d - Z95 * sd).exp() - 1.0) * 100.0,
                        ((d + Z95 * sd).exp() - 1.0) * 100.0,
                    ),
                });
                segment.clear();
            }
        }
        segment.push(o);
        if segment.len() > WINDOW {
            segment.remove(0);
        }
        before = Some(i);
    }
    Changes { steps, critical_z }
}

/// Whether a run `d` from its segment's mean (on the log scale) is beyond the noise, its own
/// error `o` and the segment's `rest` (the mean's variance and the between-run one) together:
/// past `critical_z` standard errors for a normal interval.
///
/// A run whose interval is Student's t over a few cycles (a steady rate's) is tested in t's tail
/// instead, far out where the Bonferroni bound reads and t's tail is many times the normal's.
/// Its error is not its own estimate alone: three or four cycles estimate it so loosely that a
/// run whose cycles agreed by chance stands out from the others for nothing (read as a normal, a
/// quarter of simulated histories of such runs raised a false alarm), and t's tail at three
/// degrees of freedom is so heavy that only a change of many times the interval would count.
/// The runs of one level of one host estimate the same error, so their estimates, unscaled from
/// the 95 % intervals they were stated as, are pooled with the run's own by their degrees of
/// freedom, and the run is tested with the larger of its own and the pooled one, in the tail of
/// all their degrees of freedom together.
///
/// Degrees of freedom past [`NORMAL_DF`] (an index is a file, and may say anything) are the
/// normal's.
fn beyond(d: f64, o: &Obs, segment: &[Obs], rest: f64, tested: usize, critical_z: f64) -> bool {
    let raw = |x: &Obs| {
        let df = x.df.filter(|df| (1.0..=NORMAL_DF).contains(df))?;
        Some((crate::metrics::student::unscaled_se(x.se, df).powi(2), df))
    };
    let Some((own, _)) = raw(o) else {
        return d.abs() > critical_z * (o.se * o.se + rest).sqrt();
    };
    let (sum, df) = segment
        .iter()
        .chain(std::iter::once(o))
        .filter_map(raw)
        .fold((0.0, 0.0), |(s, n), (v, df)| (s + v * df, n + df));
    let var = own.max(sum / df) + rest;
    if var.is_nan() || var <= 0.0 {
        return false;
    }
    2.0 * crate::metrics::student::upper_tail(d.abs() / var.sqrt(), df)
        < FALSE_ALARM / tested as f64
}

/// The inverse-variance mean of a segment on the log scale, its variance, and the between-run
/// variance its runs show beyond their own intervals (DerSimonian–Laird; zero for fewer than
/// three runs). `None` for an empty segment.
fn pooled(segment: &[Obs], floor: f64) -> Option<(f64, f64, f64)> {
    if segment.is_empty() {
        return None;
    }
    let mean_with = |tau2: f64| {
        let (mut sw, mut swy) = (0.0, 0.0);
        for o in segment {
            let w = 1.0 / (o.se * o.se + tau2);
            sw += w;
            swy += w * o.log;
        }
        (swy / sw, 1.0 / sw)
    };
    let (m0, _) = mean_with(0.0);
    let mut tau2 = floor;
    if segment.len() >= 3 {
        let w: Vec<f64> = segment.iter().map(|o| 1.0 / (o.se * o.se)).collect();
        let sw: f64 = w.iter().sum();
        let sw2: f64 = w.iter().map(|w| w * w).sum();
        let q: f64 = segment
            .iter()
            .zip(&w)
            .map(|(o, w)| w * (o.log - m0).powi(2))
            .sum();
        let c = sw - sw2 / sw;
        let df = segment.len() as f64 - 1.0;
        // Only a scatter the intervals cannot explain (Cochran's Q beyond its 95th percentile)
        // widens the noise: an estimate of zero excess is noisy, and taken always it would
        // blunt every test.
        if c > 0.0 && q > chi2_95(df) {
            tau2 = ((q - df) / c).max(floor);
        }
    }
    let (m, var) = mean_with(tau2);
    Some((m, var, tau2))
}

/// How much more consecutive runs of a whole series differ than their intervals say, as a
/// variance on the log scale (zero when they do not clearly, and for fewer than six runs): from
/// the median of the absolute differences of neighbours, which a few real changes hardly move.
fn scatter(series: &[Option<Obs>]) -> f64 {
    let obs: Vec<Obs> = series.iter().flatten().copied().collect();
    if obs.len() < 6 {
        return 0.0;
    }
    let mut d: Vec<f64> = obs
        .windows(2)
        .map(|w| (w[1].log - w[0].log).abs())
        .collect();
    let mut own: Vec<f64> = obs
        .windows(2)
        .map(|w| w[0].se * w[0].se + w[1].se * w[1].se)
        .collect();
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    // The median absolute value of a normal difference is 0.6745 of its standard deviation;
    // that estimate of it is off by about 1.17/√m (m differences) in relative terms, so only a
    // scatter beyond its one-sided 99 % bound counts.
    let m = d.len() as f64;
    let var_d = (median(&mut d) / 0.674_489_75).powi(2);
    let own = median(&mut own);
    let bound = (1.0 + 2.326 * 1.17 / m.sqrt()).powi(2);
    if var_d > own * bound {
        ((var_d - own) / 2.0).max(0.0)
    } else {
        0.0
    }
}

/// The 95th percentile of the chi-square distribution with `df` degrees of freedom
/// (Wilson–Hilferty; within 1 % from 2 degrees of freedom on).
fn chi2_95(df: f64) -> f64 {
    let a = 2.0 / (9.0 * df);
    df * (1.0 - a + 1.644_853_627 * a.sqrt()).powi(3)
}

/// What differs between two runs besides the metric: engine, GPUs, the server's running
/// limit and arguments, the client host, and the flags of the later run's level.
fn what_else(a: &HistoryRun, b: &HistoryRun) -> Vec<String> {
    let mut out = Vec::new();
    if a.engine != b.engine {
        out.push(format!("engine {} → {}", a.engine, b.engine));
    }
    if a.gpus != b.gpus {
        let g = |n: Option<u32>| n.map_or("unknown".to_string(), |n| n.to_string());
        out.push(format!("GPUs {} → {}", g(a.gpus), g(b.gpus)));
    }
    if a.max_running != b.max_running {
        let g = |n: Option<u64>| n.map_or("unstated".to_string(), |n| n.to_string());
        out.push(format!(
            "max running requests {} → {}",
            g(a.max_running),
            g(b.max_running)
        ));
    } else if a.server_args != b.server_args {
        out.push("server arguments changed".into());
    }
    if a.host != b.host {
        out.push(format!("client host {} → {}", a.host, b.host));
    }
    for f in &b.flags {
        if !a.flags.contains(f)
            && matches!(
                f,
                FlagKind::Stall
                    | FlagKind::OtherTraffic
                    | FlagKind::Capped
                    | FlagKind::Imprecise
                    | FlagKind::HostBusy
                    | FlagKind::ClientBound
                    | FlagKind::PrefixCache
            )
        {
            out.push(format!("flagged {}", f.as_str()));
        }
    }
    if !b.complete {
        out.push("the later run is incomplete".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Normal;

    /// A history of `n` runs whose true value is 100 (× `factor` from run `from` on), each
    /// measured with relative standard error `se`.
    fn history(g: &mut Normal, n: usize, se: f64, step: Option<(usize, f64)>) -> Vec<Option<Obs>> {
        (0..n)
            .map(|i| {
                let truth = match step {
                    Some((from, f)) if i >= from => 100.0 * f,
                    _ => 100.0,
                };
                Some(Obs {
                    log: truth.ln() + se * g.draw(),
                    se,
                    df: None,
                })
            })
            .collect()
    }

    #[test]
    fn a_flat_series_has_no_change_and_a_step_is_found_where_it_is() {
        let flat: Vec<Option<Obs>> = (0..20)
            .map(|i| {
                Some(Obs {
                    log: (100.0_f64 + if i % 2 == 0 { 0.5 } else { -0.5 }).ln(),
                    se: 0.01,
                    df: None,
                })
            })
            .collect();
        assert!(changes(&flat).steps.is_empty());
        let mut stepped = flat.clone();
        for o in stepped.iter_mut().skip(12).flatten() {
            o.log += 0.95f64.ln();
        }
        let c = changes(&stepped);
        assert_eq!(c.steps.len(), 1, "{c:?}");
        let s = c.steps[0];
        assert_eq!((s.at, s.before), (12, 11));
        assert!((s.pct - -5.0).abs() < 0.6, "{}", s.pct);
        assert!(s.interval.0 < s.pct && s.pct < s.interval.1);
        // 19 tests at 5 % in all: the Bonferroni critical value.
        assert!((c.critical_z - 3.0).abs() < 0.05, "{}", c.critical_z);
    }

    /// Runs of steady tok/s at ±1 %: `values`, each a run named `r{i}.json`; `None` is a run
    /// with a value of 100 but no interval.
    fn steady_history(values: &[Option<f64>]) -> History {
        let runs = values
            .iter()
            .enumerate()
            .map(|(i, v)| HistoryRun {
                name: format!("r{i}.json"),
                date: format!("2026-10-{:02}T00:00:00Z", i + 1),
                complete: true,
                engine: "sglang 0.5.11".into(),
                gpus: Some(2),
                max_running: Some(16),
                server_args: None,
                host: "kpro5".into(),
                value: Some(Estimated {
                    value: v.unwrap_or(100.0),
                    down: v.map(|_| 0.01),
                    up: v.map(|_| 0.01),
                    df: None,
                }),
                flags: vec![],
            })
            .collect();
        History::new(
            "kpro5".into(),
            SweepKind::Throughput,
            "w".into(),
            Metric::SteadyTokS,
            16,
            runs,
        )
    }

    #[test]
    fn the_gate_keeps_failing_on_a_slow_down_until_it_is_accepted() {
        let none = Accepted::default();
        let mut v: Vec<Option<f64>> = vec![Some(100.0); 10];
        assert_eq!(gate(&steady_history(&v), &none), Gate::Pass);
        // The first slower run fails; so do the second and the third (a retry is no fix).
        for n in 1..=3 {
            v.push(Some(90.0));
            match gate(&steady_history(&v), &none) {
                Gate::Worse { since, pct } => {
                    assert_eq!(since, 10, "{n}");
                    assert!((pct + 10.0).abs() < 0.5, "{pct}");
                }
                other => panic!("{n} slower runs: {other:?}"),
            }
        }
        // Accepted: the new level is the baseline.
        let accepted = Accepted {
            llmsweep_accepted: ACCEPTED_FORMAT,
            accepted: vec![AcceptedRun {
                run: "r10.json".into(),
                label: "kpro5".into(),
                at: "2026-12-07T00:00:00Z".into(),
            }],
        };
        assert_eq!(gate(&steady_history(&v), &accepted), Gate::Pass);
        // A recovery to the old baseline, unaccepted, passes: nothing is worse than it.
        let mut back = v.clone();
        back.extend([Some(100.0), Some(100.0)]);
        assert_eq!(gate(&steady_history(&back), &none), Gate::Pass);
        // The newest run without an interval: cannot tell.
        v.push(None);
        assert_eq!(gate(&steady_history(&v), &accepted), Gate::CannotTell);
    }

    #[test]
    fn live_state_is_no_change_of_server_arguments() {
        let a =
            serde_json::json!({"tp_size": 2, "internal_states": [{"last_gen_throughput": 240.0}]});
        let b =
            serde_json::json!({"tp_size": 2, "internal_states": [{"last_gen_throughput": 310.5}]});
        let c =
            serde_json::json!({"tp_size": 4, "internal_states": [{"last_gen_throughput": 240.0}]});
        assert_eq!(settings(&a), settings(&b));
        assert_ne!(settings(&a), settings(&c));
    }

    #[test]
    fn runs_without_an_interval_are_skipped_not_tested() {
        let o = |v: f64| {
            Some(Obs {
                log: v.ln(),
                se: 0.01,
                df: None,
            })
        };
        let series = vec![o(100.0), None, o(100.5), None, o(80.0)];
        let c = changes(&series);
        assert_eq!(c.steps.len(), 1);
        assert_eq!((c.steps[0].at, c.steps[0].before), (4, 2));
    }

    /// Histories of 50 runs measured at ±2 % (the default precision), no change: the chance of
    /// any false alarm in a whole history stays within [`FALSE_ALARM`]; one 5 % slow-down from
    /// run 25 on is found at that run, or at the next, in nine histories of ten.
    #[test]
    fn false_alarms_and_detection_over_simulated_histories() {
        let mut g = Normal(0x9e37_79b9_7f4a_7c15);
        let se = 0.02 / Z95;
        let n = 2000;
        let alarms = (0..n)
            .filter(|_| !changes(&history(&mut g, 50, se, None)).steps.is_empty())
            .count();
        let rate = alarms as f64 / n as f64;
        eprintln!("false alarms in {rate:.3} of histories");
        assert!(rate <= 0.06, "false alarms in {rate:.3} of histories");
        let (mut exact, mut next) = (0, 0);
        for _ in 0..n {
            let c = changes(&history(&mut g, 50, se, Some((25, 0.95))));
            match c.steps.iter().find(|s| s.pct < 0.0).map(|s| s.at) {
                Some(25) => exact += 1,
                Some(26) => next += 1,
                _ => {}
            }
        }
        let (exact, within) = (exact as f64 / n as f64, (exact + next) as f64 / n as f64);
        eprintln!("found at the slow run in {exact:.3}, by the run after in {within:.3}");
        assert!(
            exact >= 0.8 && within >= 0.9,
            "found at the slow run in {exact:.3}, by the run after in {within:.3}"
        );
    }

    /// A history of 50 runs whose true value is 100 (× `step` from run 25 on), each run's
    /// steady rate drawn from four cycles: its log off by σ = 1.2 % times a normal draw, and its
    /// own estimate of σ from its cycles, σ·√(χ²₃/3), stated as a bundle states it (Student's t
    /// with 3 degrees of freedom scaled to the normal's 95 %; ±2 % at the median).
    fn t_history(g: &mut Normal, step: f64) -> Vec<Option<Obs>> {
        let (sigma, df) = (0.012, 3.0);
        let t = crate::metrics::t_quantile(df);
        (0..50)
            .map(|i| {
                let chi2: f64 = (0..3).map(|_| g.draw().powi(2)).sum();
                let truth = if i >= 25 { 100.0 * step } else { 100.0 };
                Some(Obs {
                    log: f64::ln(truth) + sigma * g.draw(),
                    se: sigma * (chi2 / df).sqrt() * t / Z95,
                    df: Some(df),
                })
            })
            .collect()
    }

    /// Histories of [`t_history`]: with no change, the chance of any false alarm in a whole
    /// history stays within [`FALSE_ALARM`] (read in the normal's tail, 28 % of histories raised
    /// one); a 10 % step from run 25 on is found there or at the next run in nine histories of
    /// ten.
    #[test]
    fn runs_measured_over_a_few_cycles_are_tested_with_t_not_the_normal() {
        let mut g = Normal(0x2545_f491_4f6c_dd1d);
        let n = 2000;
        let alarms = (0..n)
            .filter(|_| !changes(&t_history(&mut g, 1.0)).steps.is_empty())
            .count();
        let rate = alarms as f64 / n as f64;
        eprintln!("false alarms in {rate:.3} of histories");
        assert!(rate <= 0.06, "false alarms in {rate:.3} of histories");
        let n = 500;
        for step in [0.95, 0.90] {
            let found = (0..n)
                .filter(|_| {
                    changes(&t_history(&mut g, step))
                        .steps
                        .iter()
                        .any(|s| s.pct < 0.0 && (25..=26).contains(&s.at))
                })
                .count();
            let rate = found as f64 / n as f64;
            eprintln!(
                "a {:.0} % step found by the run after in {rate:.3}",
                (1.0 - step) * 100.0
            );
            if step == 0.90 {
                assert!(rate >= 0.9, "a 10 % step found in {rate:.3} of histories");
            }
        }
    }

    #[test]
    fn degrees_of_freedom_an_index_could_not_hold_are_read_as_the_normal() {
        // Seven runs at 100 ±2 %, then one at 50: a change whatever the runs' degrees of
        // freedom say, an index's absurd ones included.
        for df in [
            None,
            Some(3.0),
            Some(1e6),
            Some(1e308),
            Some(0.5),
            Some(-5.0),
        ] {
            let series: Vec<Option<Obs>> = (0..8)
                .map(|i| {
                    Some(Obs {
                        log: if i < 7 { 100f64.ln() } else { 50f64.ln() },
                        se: 0.01,
                        df,
                    })
                })
                .collect();
            let c = changes(&series);
            assert_eq!(c.steps.len(), 1, "df {df:?}: {c:?}");
            assert_eq!(c.steps[0].at, 7, "df {df:?}");
        }
    }

    /// Runs that scatter twice as widely as their own intervals say: the between-run variance
    /// keeps the false alarms down instead of flagging every other run.
    #[test]
    fn runs_noisier_than_their_intervals_do_not_raise_alarms_everywhere() {
        let mut g = Normal(0xd1b5_4a32_d192_ed03);
        let se = 0.01;
        let n = 1000;
        let alarms = (0..n)
            .filter(|_| {
                let mut h = history(&mut g, 50, 2.0 * se, None);
                for o in h.iter_mut().flatten() {
                    o.se = se;
                }
                changes(&h).steps.len() > 1
            })
            .count();
        eprintln!("two or more alarms in {alarms} of {n} noisy histories");
        assert!(
            (alarms as f64 / n as f64) < 0.5,
            "{alarms} of {n} histories had two or more alarms"
        );
    }

    #[test]
    fn an_index_round_trips_and_another_format_is_refused() {
        let i = Index {
            llmsweep_index: INDEX_FORMAT,
            listing: FolderListing {
                folder: "s3://team/llmsweep".into(),
                bundles: Vec::new(),
            },
        };
        let text = serde_json::to_vec(&i).unwrap();
        assert_eq!(Index::parse(&text), Some(i));
        assert_eq!(
            Index::parse(br#"{"llmsweep_index": 99, "folder": "x", "bundles": []}"#),
            None
        );
        assert_eq!(Index::parse(b"not json"), None);
    }

    #[test]
    fn a_half_width_reads_back_from_the_log_bounds() {
        let e = Estimated {
            value: 100.0,
            down: Some(-(0.98f64.ln())),
            up: Some(1.02f64.ln()),
            df: None,
        };
        assert!((e.half_width_pct().unwrap() - 2.0).abs() < 1e-9);
        assert!((e.log_se().unwrap() - 0.02 / Z95).abs() < 2e-4);
        let none = Estimated {
            value: 1.0,
            down: None,
            up: None,
            df: None,
        };
        assert_eq!(none.log_se(), None);
    }
}
