//! The CI gate (`compare --fail-if-slower`): pure logic over a [`Comparison`], beside the
//! verdict it shares its rule with (a change counts beyond the noise and the threshold).

use crate::bundle::SweepKind;
use crate::compare::interval::{Change, NO_SPREAD, TOO_FEW};
use crate::compare::verdict::{
    MetricVerdict, change_text, headline_verdicts, level_list, level_text, requests_for_interval,
};
use crate::compare::{Comparison, Level, SweepComparison, kind_name};
use crate::curves::Metric;

/// What the gate found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateResult {
    /// Changes worse than the threshold and beyond the noise, one line each.
    pub regressions: Vec<String>,
    /// What was gated, one line per run and sweep.
    pub gated: Vec<String>,
    /// What was not gated and why, one line each.
    pub not_gated: Vec<String>,
    /// Changes not counted as regressions that could still be one beyond the threshold: the
    /// runs cannot tell at that level, one line each.
    pub unresolved: Vec<String>,
    /// The smallest throughput change the runs resolve, per level: half the width of its
    /// interval, one line per run and sweep.
    pub resolution: Vec<String>,
}

/// Why the gate refuses to judge: the runs ran different workloads, or nothing could be gated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct GateError(pub String);

/// The gate: at every level both runs measured, steady throughput (aggregate against an imported
/// run, which has no steady window) lower, or TTFT p50, TTFT p99 or e2e p99 higher, by more than
/// `pct` and beyond the noise (a p99 only where both runs had the requests for its interval); in a rate sweep, at every offered rate, TTFT p50, TPOT p50 or e2e p99 higher (an open
/// loop's "slower" is latency: the rate is the same by construction). A sweep or level only one run has is named and not gated. It refuses (exit 2) only when
/// a run ran a different workload, or nothing at all could be gated.
pub fn gate(cmp: &Comparison, pct: f64, only: Option<SweepKind>) -> Result<GateResult, GateError> {
    let mut r = GateResult::default();
    for s in &cmp.sweeps {
        let name = s.name();
        if only.is_some_and(|k| k != s.kind) {
            r.not_gated
                .push(format!("{name} sweep: not gated (--gate)"));
            continue;
        }
        if let Some(m) = s.mismatched.first() {
            return Err(GateError(format!(
                "refusing to gate on {} against {}: they ran different {name} workloads ({})",
                cmp.labels[m.run],
                cmp.labels[cmp.baseline],
                m.reasons.join("; ")
            )));
        }
        for &i in &s.absent {
            r.not_gated
                .push(format!("{} has no {name} sweep — not gated", cmp.labels[i]));
        }
        for (i, keys) in &s.only_in {
            r.not_gated.push(format!(
                "only in {}: {} — not gated",
                cmp.labels[*i],
                level_list(s.kind, keys)
            ));
            // A candidate still being written (or interrupted) has not measured these yet:
            // passing it on the levels it has would pass what it has not run.
            if *i == cmp.baseline {
                for &run in s.runs.iter().filter(|&&run| run != cmp.baseline) {
                    if cmp.incomplete.get(run).copied().unwrap_or(false) {
                        r.unresolved.push(format!(
                            "{} is incomplete (interrupted, or still being written): it lacks {} that {} has, so the gate cannot tell there; finish it with --resume, or gate the complete run",
                            cmp.labels[run],
                            level_list(s.kind, keys),
                            cmp.labels[cmp.baseline]
                        ));
                    }
                }
            }
        }
        if s.levels.is_empty() {
            continue;
        }
        for (n, &run) in s.runs.iter().enumerate().skip(1) {
            // Levels both runs skipped (the default levels end at saturation) are not gated.
            let levels: Vec<&Level> = s.levels.iter().filter(|l| l.measured_by_both(n)).collect();
            if levels.is_empty() {
                continue;
            }
            let keys: Vec<u64> = levels.iter().map(|l| l.key).collect();
            // What the verdict counts worse, all its judgements taken together at the gate's
            // threshold: the gate fails on nothing the verdict calls no change.
            let judged = headline_verdicts(s, n, pct);
            r.gated.push(format!(
                "{} against {}: {name} sweep at {}",
                cmp.labels[run],
                cmp.labels[cmp.baseline],
                level_list(s.kind, &keys)
            ));
            if let Some(line) = resolution_line(s, n) {
                r.resolution.push(format!(
                    "{} against {}: {line}",
                    cmp.labels[run], cmp.labels[cmp.baseline]
                ));
            }
            let mut few: Vec<u64> = Vec::new();
            let mut queued: Vec<u64> = Vec::new();
            for level in levels {
                r.not_gated.extend(cut_off_lines(cmp, s, level, n));
                let queues = s.kind == SweepKind::Throughput
                    && [cmp.baseline, run].iter().any(|&i| {
                        cmp.running
                            .get(i)
                            .copied()
                            .flatten()
                            .is_some_and(|m| level.key > m)
                    });
                if queues {
                    queued.push(level.key);
                }
                if gate_level(&mut r, cmp, s, level, (n, run), &judged, pct, queues) {
                    few.push(level.key);
                }
            }
            if !queued.is_empty() {
                r.not_gated.push(format!(
                    "{}: latencies not gated at {}: above the server's running limit a closed loop's TTFT is its queue, set by the throughput gated there, and its first wave's climb by place in the queue",
                    cmp.labels[run],
                    level_list(s.kind, &queued)
                ));
            }
            if !few.is_empty() {
                r.not_gated.push(format!(
                    "{}: TTFT p99 and e2e p99 not gated at {}: a p99 needs at least {} requests per level for an interval",
                    cmp.labels[run],
                    level_list(s.kind, &few),
                    requests_for_interval(0.99)
                ));
            }
        }
    }
    if r.gated.is_empty() {
        return Err(GateError(format!(
            "nothing to gate: no sweep{} has a level in common with the baseline{}",
            only.map(|k| format!(" of kind {}", kind_name(k)))
                .unwrap_or_default(),
            if r.not_gated.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.not_gated.join("; "))
            }
        )));
    }
    Ok(r)
}

/// What the gate checks at each offered rate of a rate sweep.
pub const RATE_GATED: [Metric; 3] = [Metric::TtftP50, Metric::TpotP50, Metric::E2eP99];

/// Gates one level; true when a tail (p99) there had too few requests to be gated. Where the
/// closed loop `queues` (a level above a server's running limit) only throughput is gated.
#[allow(clippy::too_many_arguments)]
fn gate_level(
    r: &mut GateResult,
    cmp: &Comparison,
    s: &SweepComparison,
    level: &Level,
    (n, run): (usize, usize),
    judged: &[MetricVerdict],
    pct: f64,
    queues: bool,
) -> bool {
    let change = |m: Metric| {
        level
            .rows
            .iter()
            .find(|row| row.metric == m)
            .and_then(|row| row.cells.get(n)?.change)
    };
    let at = match s.kind {
        SweepKind::Context => format!("input {}", level.key),
        _ => level_text(s.kind, level.key),
    };
    let mut few = false;
    let gated: Vec<(Metric, Change)> = if s.kind == SweepKind::Rate {
        RATE_GATED
            .iter()
            .filter_map(|&m| Some((m, change(m)?)))
            .collect()
    } else {
        // Steady throughput when both runs have it; an imported run has only the aggregate.
        let throughput = change(Metric::SteadyTokS)
            .map(|c| (Metric::SteadyTokS, c))
            .or_else(|| change(Metric::AggTokS).map(|c| (Metric::AggTokS, c)));
        let ttft = change(Metric::TtftP50).map(|c| (Metric::TtftP50, c));
        // The tails under load, where a run had enough requests for their interval.
        let tails = [Metric::TtftP99, Metric::E2eP99]
            .into_iter()
            .filter_map(|m| {
                let c = change(m)?;
                if c.no_interval == Some(TOO_FEW) {
                    few = true;
                    return None;
                }
                Some((m, c))
            });
        let tails: Vec<(Metric, Change)> = tails.collect();
        if queues {
            few = false;
            throughput.into_iter().collect()
        } else {
            [throughput, ttft]
                .into_iter()
                .flatten()
                .chain(tails)
                .collect()
        }
    };
    let label = &cmp.labels[run];
    for (m, c) in gated {
        let text = change_text(&c);
        // A metric outside the verdict's judgements is judged on its own interval.
        let worse = match judged.iter().find(|v| v.metric == m) {
            Some(v) => v.worse.contains(&level.key),
            None => c.significant(pct) && !m.improved_by(c.pct),
        };
        if worse {
            r.regressions
                .push(format!("{label}: {} {text} at {at}", m.label()));
        } else if could_be_worse(m, &c, pct) {
            r.unresolved.push(match c.interval {
                Some(_) => format!(
                    "{label}: {} {text} at {at} could be more than {} % worse",
                    m.label(),
                    crate::text::number(pct)
                ),
                None => format!(
                    "{label}: {} {text} at {at} has no interval ({}), so a {} % change cannot be told",
                    m.label(),
                    c.no_interval.unwrap_or("its spread is not known"),
                    crate::text::number(pct)
                ),
            });
        }
    }
    few
}

/// How finely the run at column `n` and the baseline resolve a throughput change at each level:
/// `steady output tok/s to ±0.3 % at C=1, ±0.5 % at C=2`; levels without an interval say so.
fn resolution_line(s: &SweepComparison, n: usize) -> Option<String> {
    if s.kind == SweepKind::Rate {
        return None;
    }
    let mut metric = None;
    let parts: Vec<String> = s
        .levels
        .iter()
        .filter_map(|level| {
            let (m, c) = [Metric::SteadyTokS, Metric::AggTokS]
                .into_iter()
                .find_map(|m| {
                    let row = level.rows.iter().find(|row| row.metric == m)?;
                    Some((m, row.cells.get(n)?.change?))
                })?;
            metric.get_or_insert(m);
            let at = level_text(s.kind, level.key);
            Some(match c.half_width() {
                Some(h) => format!("±{} % at {at}", crate::charts::axis::fixed(h, 1)),
                None => format!("no interval at {at}"),
            })
        })
        .collect();
    let m = metric?;
    Some(format!(
        "{} changes resolved to {}",
        m.label(),
        parts.join(", ")
    ))
}

/// A line for the baseline and for the run at column `n` when its row at `level` was cut off in
/// its source: its intact cells are gated, the cut-off ones cannot be.
fn cut_off_lines(cmp: &Comparison, s: &SweepComparison, level: &Level, n: usize) -> Vec<String> {
    [0, n]
        .into_iter()
        .filter(|&col| level.cut_off.get(col).copied().unwrap_or(false))
        .map(|col| {
            format!(
                "{}'s row at {} is cut off in its source: only its intact cells are gated",
                cmp.labels[s.runs[col]],
                level_text(s.kind, level.key)
            )
        })
        .collect()
}

/// Whether a change the gate does not count could still be a regression beyond `pct`: its
/// interval reaches further than `pct` the worse way, or there is no interval to tell (a
/// measured run's spread unknown; imported numbers count as exact).
pub(crate) fn could_be_worse(m: Metric, c: &Change, pct: f64) -> bool {
    if c.below_resolution {
        return false;
    }
    match c.interval {
        Some((lo, hi)) => {
            let worse_end = if m.improved_by(1.0) { -lo } else { hi };
            worse_end > pct
        }
        None => c.no_interval != Some(NO_SPREAD),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(pct: f64, interval: Option<(f64, f64)>, no_interval: Option<&'static str>) -> Change {
        Change {
            pct,
            interval,
            no_interval,
            below_resolution: false,
            df: None,
        }
    }

    #[test]
    fn a_change_whose_interval_reaches_past_the_threshold_the_worse_way_cannot_be_told() {
        // Throughput: worse is down. +0.1 ±51 % reaches −51 %; −2 % (−4 to 0) does not reach −5 %.
        let wide = change(0.1, Some((-51.0, 51.2)), None);
        assert!(could_be_worse(Metric::SteadyTokS, &wide, 5.0));
        let tight = change(-2.0, Some((-4.0, 0.0)), None);
        assert!(!could_be_worse(Metric::SteadyTokS, &tight, 5.0));
        // TTFT: worse is up. −79 % (−79.5 to −57.8) never reaches +5 %.
        let better = change(-79.0, Some((-79.5, -57.8)), None);
        assert!(!could_be_worse(Metric::TtftP50, &better, 5.0));
        assert!(could_be_worse(
            Metric::TtftP50,
            &change(1.0, Some((-3.0, 6.0)), None),
            5.0
        ));
        // No interval: too few requests cannot tell; imported numbers count as exact.
        let few = change(-76.4, None, Some("too few requests for an interval"));
        assert!(could_be_worse(Metric::E2eP99, &few, 5.0));
        assert!(!could_be_worse(
            Metric::AggTokS,
            &change(-3.0, None, Some(NO_SPREAD)),
            5.0
        ));
    }

    #[test]
    fn a_cut_off_row_is_gated_on_its_intact_cells_and_says_so() {
        use crate::compare::{RunInput, compare};
        let a = crate::curves::tests::bundle("a");
        let mut b = crate::curves::tests::bundle("b");
        b.sweeps[0].points[1].flags.push(crate::bundle::Flag {
            kind: crate::bundle::FlagKind::CutOff,
            message: "cut off".into(),
            count: None,
        });
        let inputs = [
            RunInput {
                label: "a",
                bundle: &a,
            },
            RunInput {
                label: "b",
                bundle: &b,
            },
        ];
        let r = gate(&compare(&inputs, 0), 5.0, Some(SweepKind::Throughput)).unwrap();
        assert!(
            r.not_gated.contains(
                &"b's row at C=2 is cut off in its source: only its intact cells are gated"
                    .to_string()
            ),
            "{:?}",
            r.not_gated
        );
    }
}
