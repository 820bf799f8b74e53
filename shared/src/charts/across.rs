//! What every run has where the mouse is: the hovered point's level (a concurrency or an input
//! length) in each run shown, with each value's change against the baseline, so a tooltip
//! compares the runs without a trip to the Compare tab.

use super::axis::{format_exact, format_tokens};
use super::build::{ChartKind, ChartRun};
use super::plot::PointRef;
use crate::bundle::{Point, PointStatus, SweepKind};
use crate::compare::interval::estimate;
use crate::compare::verdict::change_text;
use crate::compare::{Change, delta_pct, level_key};
use crate::curves::{Metric, sweep_of};

impl ChartKind {
    /// The metrics the chart draws, as [`across_runs`] lists them.
    pub fn metrics(self) -> &'static [Metric] {
        match self {
            ChartKind::OutputTokS => &[Metric::SteadyTokS, Metric::AggTokS],
            ChartKind::DecodeVsConcurrency | ChartKind::DecodeVsLength => &[Metric::DecodeTokSP50],
            ChartKind::TtftVsConcurrency => &[Metric::TtftP50, Metric::TtftP99],
            // Total throughput is steady where there is a steady window, else aggregate.
            ChartKind::Tradeoff => &[Metric::SteadyTokS, Metric::AggTokS, Metric::DecodeTokSP50],
            ChartKind::TtftVsLength => &[Metric::TtftP50],
            ChartKind::PrefillVsLength => &[Metric::PrefillTokSP50],
            ChartKind::RateTtft => &[Metric::TtftP50, Metric::TtftP99],
            ChartKind::RateTpot => &[Metric::TpotP50],
            ChartKind::RateE2e => &[Metric::E2eP50, Metric::E2eP99],
            ChartKind::RateGoodput => &[Metric::GoodRps, Metric::AchievedRps],
            ChartKind::RateLag => &[Metric::LagP99],
            ChartKind::Acceptance => &[Metric::AcceptLength],
        }
    }
}

/// Lines for a tooltip: at the level of `at` (a mark's source), for each metric of `kind`, every
/// run's value there and its change against `runs[baseline]`. Empty with fewer than two runs or
/// when `at` names no point; a metric no run has at that level is left out.
pub fn across_runs(kind: ChartKind, runs: &[ChartRun], at: PointRef, baseline: usize) -> String {
    let Some(sweep) = runs.get(at.run).and_then(|r| r.bundle.sweeps.get(at.sweep)) else {
        return String::new();
    };
    let Some(point) = sweep.points.get(at.point) else {
        return String::new();
    };
    if runs.len() < 2 {
        return String::new();
    }
    let key = level_key(sweep.kind, point);
    let level = match sweep.kind {
        SweepKind::Context => format!("{} input tokens", format_tokens(key as f64)),
        _ => crate::compare::verdict::level_text(sweep.kind, key),
    };
    // Each run's point at this level, in its first sweep of the kind.
    let points: Vec<Option<&Point>> = runs
        .iter()
        .map(|r| {
            let s = if r.bundle.sweeps.get(at.sweep).map(|s| s.kind) == Some(sweep.kind) {
                r.bundle.sweeps.get(at.sweep)
            } else {
                sweep_of(r.bundle, sweep.kind)
            }?;
            s.points.iter().find(|p| level_key(s.kind, p) == key)
        })
        .collect();
    let base = points.get(baseline).copied().flatten();
    let mut out = format!("every run at {level}:");
    for &metric in kind.metrics() {
        if !points.iter().flatten().any(|p| metric.of(p).is_some()) {
            continue;
        }
        out.push_str(&format!("\n{}", metric.label()));
        for (i, (run, p)) in runs.iter().zip(&points).enumerate() {
            let value = match p {
                Some(p) => match metric.of(p) {
                    Some(v) => match p.summary.as_ref().and_then(|s| s.steady_pm_pct) {
                        Some(pm) if metric == Metric::SteadyTokS => {
                            format!(
                                "{} ±{}%",
                                format_exact(v),
                                crate::charts::axis::fixed(pm, 1)
                            )
                        }
                        _ => format_exact(metric.display(v)),
                    },
                    None if p.status == PointStatus::Skipped => "skipped".into(),
                    None if p.status == PointStatus::Failed => "failed".into(),
                    None => "—".into(),
                },
                None => "not run".into(),
            };
            let change = if i == baseline {
                " (baseline)".to_string()
            } else {
                change_against(metric, base, *p)
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default()
            };
            out.push_str(&format!("\n  {}: {value}{change}", run.label));
        }
    }
    out
}

/// `+8.6 ±1.2 %` when both points have the metric (the interval when their spreads allow one).
fn change_against(metric: Metric, base: Option<&Point>, p: Option<&Point>) -> Option<String> {
    let (base, p) = (base?, p?);
    let change = estimate(metric, base)
        .zip(estimate(metric, p))
        .and_then(|(b, o)| Change::between(b, o));
    match change {
        Some(c) => Some(change_text(&c)),
        None => delta_pct(metric.of(base), metric.of(p)).map(|d| format!("{d:+.1} %")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Bundle;
    use crate::charts::run_color;

    fn run(label: &str, k: f64) -> Bundle {
        let mut b = crate::curves::tests::bundle(label);
        for p in b.sweeps.iter_mut().flat_map(|s| &mut s.points) {
            if let Some(s) = &mut p.summary {
                s.steady_tok_s = s.steady_tok_s.map(|v| v * k);
                s.agg_tok_s *= k;
            }
        }
        b
    }

    #[test]
    fn every_run_at_the_hovered_level_with_its_change() {
        let (a, b) = (run("kpro5", 1.0), run("kpro6", 1.5));
        let runs = [
            ChartRun {
                label: "kpro5",
                color: run_color(0),
                bundle: &a,
            },
            ChartRun {
                label: "kpro6",
                color: run_color(1),
                bundle: &b,
            },
        ];
        let (si, pi) = a
            .sweeps
            .iter()
            .enumerate()
            .find_map(|(si, s)| {
                (s.kind == SweepKind::Throughput)
                    .then(|| {
                        s.points
                            .iter()
                            .position(|p| p.summary.is_some())
                            .map(|pi| (si, pi))
                    })
                    .flatten()
            })
            .unwrap();
        let c = a.sweeps[si].points[pi].concurrency;
        let at = PointRef {
            run: 1,
            sweep: si,
            point: pi,
        };
        let text = across_runs(ChartKind::OutputTokS, &runs, at, 0);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("every run at C={c}:"));
        let agg = lines
            .iter()
            .position(|l| *l == "aggregate output tok/s")
            .unwrap();
        assert!(lines[agg + 1].starts_with("  kpro5: ") && lines[agg + 1].ends_with(" (baseline)"));
        assert!(lines[agg + 2].starts_with("  kpro6: "), "{text}");
        assert!(lines[agg + 2].contains("(+50.0"), "{text}");
        assert_eq!(across_runs(ChartKind::OutputTokS, &runs[..1], at, 0), "");
    }
}
