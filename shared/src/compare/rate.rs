//! Rate sweeps in a comparison: what makes two of them the same schedule, and an offered rate
//! (a level key in milli-requests/s, see [`super::level_key`]) in words.

use std::collections::BTreeSet;

use super::level_key;
use crate::bundle::{Arrival, RatePlan, Sweep, SweepKind};

/// What makes two rate sweeps different schedules: no offered rate in common, another arrival
/// process (or gamma shape), another arrival seed, another `--max-concurrency`.
pub(super) fn rate_mismatch(a: &Sweep, b: &Sweep, reasons: &mut Vec<String>) {
    // A point keyed by its offered rate must say it: an imported run's points may not (vLLM's
    // result gives the rate only per file), and guessing would pair the wrong points.
    let unkeyed = |s: &Sweep| s.points.iter().filter(|p| p.rate.is_none()).count();
    for (s, which) in [(a, "the baseline's"), (b, "this run's")] {
        if unkeyed(s) > 0 {
            reasons.push(format!(
                "{} of {which} rate points do not record their offered rate, so rates cannot be paired",
                unkeyed(s)
            ));
        }
    }
    if !reasons.is_empty() {
        return;
    }
    let keys = |s: &Sweep| -> BTreeSet<u64> {
        s.points
            .iter()
            .map(|p| level_key(SweepKind::Rate, p))
            .collect()
    };
    let (ka, kb) = (keys(a), keys(b));
    if !ka.is_empty() && !kb.is_empty() && ka.is_disjoint(&kb) {
        let list = |k: &BTreeSet<u64>| k.iter().map(|&k| rate_text(k)).collect::<Vec<_>>();
        reasons.push(format!(
            "no offered rate in common: {} vs {} req/s",
            list(&ka).join(","),
            list(&kb).join(",")
        ));
    }
    // A rate sweep imported from an older file may not record its plan: compared, its
    // workload unproven (the workload check says so).
    let (Some(pa), Some(pb)) = (&a.rate, &b.rate) else {
        return;
    };
    let arrival = |p: &RatePlan| match p.arrival {
        Arrival::Constant => "constant".to_string(),
        Arrival::Poisson => "poisson".to_string(),
        Arrival::Gamma => format!("gamma (burstiness {})", p.burstiness),
        Arrival::Unknown => "unknown".to_string(),
    };
    let gamma = pa.arrival == Arrival::Gamma;
    if pa.arrival != pb.arrival || (gamma && pa.burstiness != pb.burstiness) {
        reasons.push(format!(
            "arrival processes differ: {} vs {}",
            arrival(pa),
            arrival(pb)
        ));
    }
    // Evenly spaced arrivals draw nothing: their seed does not matter.
    let drawn = pa.arrival != Arrival::Constant;
    // An imported run's seed is not known: its schedule is unproven, not another one.
    if let (true, Some(sa), Some(sb)) = (drawn && pa.arrival == pb.arrival, pa.seed, pb.seed)
        && sa != sb
    {
        reasons.push(format!(
            "arrival seeds differ: {sa} vs {sb} (another schedule of arrivals)"
        ));
    }
    if pa.max_concurrency != pb.max_concurrency {
        let mc = |m: Option<u32>| m.map_or_else(|| "none".to_string(), |m| m.to_string());
        reasons.push(format!(
            "--max-concurrency differs: {} vs {}",
            mc(pa.max_concurrency),
            mc(pb.max_concurrency)
        ));
    }
}

/// A rate key (milli-requests/s) as requests/s: `2`, `0.5`, `1.25`.
pub fn rate_text(key: u64) -> String {
    let rps = key as f64 / 1000.0;
    let s = format!("{rps:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bundle::{Bundle, Goodput, Point, RatePoint, RequestRecord};
    use crate::compare::verdict::{Outcome, level_list, verdicts};
    use crate::compare::{RunInput, Verdict, compare, interval};
    use crate::curves::Metric;
    use crate::curves::tests::{bundle, stats};
    use crate::metrics::request::tests::rec;
    use crate::metrics::summarize;

    /// Requests per rate point.
    const N: u64 = 20;

    /// A rate point at `rps` offered: its requests have TTFT `0.1·k·(1 + j/100)` s and TPOT
    /// `0.01·k·(1 + j/100)` s over 32 tokens, `j` = 0 … 19 in a shuffled order (`11·i mod 20`
    /// for the `i`-th sent, so the latencies do not trend with sending order), so every
    /// latency scales with `k`; `good` of them met the SLO; the client achieved 99 % of the
    /// offered rate, lag p99 `lag` s.
    pub(crate) fn rate_point(rps: f64, k: f64, good: u64, lag: f64) -> Point {
        let records: Vec<RequestRecord> = (0..N)
            .map(|i| {
                let f = 1.0 + ((11 * i) % N) as f64 / 100.0;
                let (ttft, tpot) = (0.1 * k * f, 0.01 * k * f);
                let mut r = rec(i as f64 / rps, ttft, ttft + 31.0 * tpot, 32);
                r.content_hash = Some(format!("{rps}-{i}"));
                r
            })
            .collect();
        let summary = summarize(&records, 1, 32, &[]);
        Point {
            rate: Some(RatePoint {
                offered_rps: rps,
                achieved_rps: Some(rps * 0.99),
                lag_s: Some(stats(lag / 2.0, lag)),
                queued_s: None,
                peak_concurrency: Some(4),
                mean_concurrency: Some(2.0),
            }),
            goodput: Some(Goodput {
                good,
                requests: N,
                fraction: good as f64 / N as f64,
                good_rps: good as f64 / summary.wall_s,
                good_tok_s: 32.0 * good as f64 / summary.wall_s,
            }),
            summary: Some(summary),
            requests: records,
            ..Point::empty(0, 1000, 32)
        }
    }

    /// A bundle whose only sweep is a poisson rate sweep (seed 1) at 1, 2 and 8 req/s, latency
    /// scaled by `k8` at 8 req/s (1 elsewhere) and `good8` of 20 good there (18 elsewhere).
    pub(crate) fn rate_bundle(label: &str, k8: f64, good8: u64) -> Bundle {
        let mut b = bundle(label);
        let points = vec![
            rate_point(1.0, 1.0, 18, 0.001),
            rate_point(2.0, 1.0, 18, 0.001),
            rate_point(8.0, k8, good8, 0.004),
        ];
        let mut s = crate::curves::tests::sweep(SweepKind::Rate, points);
        s.output_len = 32;
        s.concurrency = Vec::new();
        s.rate = Some(RatePlan {
            rates: vec![1.0, 2.0, 8.0],
            arrival: Arrival::Poisson,
            burstiness: 1.0,
            seed: Some(1),
            max_concurrency: None,
            search: None,
        });
        b.sweeps = vec![s];
        b
    }

    fn inputs(bs: &[Bundle]) -> Vec<RunInput<'_>> {
        bs.iter()
            .map(|b| RunInput {
                label: &b.label,
                bundle: b,
            })
            .collect()
    }

    #[test]
    fn rates_are_keyed_in_milli_requests_and_said_in_requests_per_second() {
        assert_eq!(rate_text(2000), "2");
        assert_eq!(rate_text(500), "0.5");
        assert_eq!(rate_text(1250), "1.25");
        assert_eq!(
            level_list(SweepKind::Rate, &[500, 1000, 8000]),
            "0.5, 1, 8 req/s"
        );
        let p = rate_point(0.5, 1.0, 18, 0.0);
        assert_eq!(level_key(SweepKind::Rate, &p), 500);
    }

    #[test]
    fn rate_sweeps_pair_by_offered_rate_and_the_verdict_names_the_rate() {
        let bs = [rate_bundle("A", 1.0, 18), rate_bundle("B", 1.5, 10)];
        let c = compare(&inputs(&bs), 0);
        assert_eq!(c.sweeps.len(), 1);
        let s = &c.sweeps[0];
        assert_eq!(s.kind, SweepKind::Rate);
        let keys: Vec<u64> = s.levels.iter().map(|l| l.key).collect();
        assert_eq!(keys, [1000, 2000, 8000]);
        let metrics: Vec<Metric> = s.levels[0].rows.iter().map(|r| r.metric).collect();
        assert_eq!(metrics, Metric::RATE);
        let cell = |level: usize, m: Metric| {
            s.levels[level]
                .rows
                .iter()
                .find(|r| r.metric == m)
                .unwrap()
                .cells[1]
                .clone()
        };
        // TTFT p50 of 0.1·(1 + j/100), j = 0..19: between ranks 10 and 11, 0.1095 s.
        assert!((cell(2, Metric::TtftP50).value.unwrap() - 0.1095 * 1.5).abs() < 1e-12);
        for m in [Metric::TtftP50, Metric::TpotP50] {
            let at_8 = cell(2, m);
            assert!((at_8.delta_pct.unwrap() - 50.0).abs() < 1e-9, "{m:?}");
            let (lo, hi) = at_8.change.unwrap().interval.unwrap();
            assert!(lo > 40.0 && hi < 60.0, "{m:?}: {lo} to {hi}");
            assert_eq!(at_8.verdict, Verdict::Worse, "{m:?}");
            assert_eq!(cell(0, m).verdict, Verdict::Same, "{m:?}");
            assert_eq!(cell(0, m).delta_pct, Some(0.0), "{m:?}");
        }
        // A p99 of 20 requests has no interval: shown, not judged.
        let p99 = cell(2, Metric::E2eP99);
        assert_eq!(
            p99.change.unwrap().no_interval,
            Some("too few requests for an interval")
        );
        assert_eq!(p99.verdict, Verdict::Same);
        // The achieved rate is the schedule's: never an interval.
        let achieved = cell(2, Metric::AchievedRps);
        assert_eq!(achieved.value, Some(8.0 * 0.99));
        assert_eq!(
            achieved.change.unwrap().no_interval,
            Some(interval::ACHIEVED_NO_INTERVAL)
        );
        // Goodput 18 → 10 of 20: -44.4 %, Wilson intervals combined: -66.9 to -15.3 %.
        let g = cell(2, Metric::GoodputFraction);
        assert_eq!(g.value, Some(0.5));
        let ch = g.change.unwrap();
        assert!((ch.pct - (0.5 / 0.9 - 1.0) * 100.0).abs() < 1e-9);
        let (lo, hi) = ch.interval.unwrap();
        assert!(
            (lo - -66.936).abs() < 0.01 && (hi - -15.307).abs() < 0.01,
            "{lo} {hi}"
        );
        assert_eq!(g.verdict, Verdict::Worse);

        let v = verdicts(&c, 5.0);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].outcome, Outcome::Slower);
        assert_eq!(
            v[0].headline(&c.labels, 0),
            "rate sweep: B is slower than A at 8 req/s; no significant change at 1, 2 req/s"
        );
        let lines = v[0].metric_lines();
        let ttft = &lines.iter().find(|(m, _)| *m == Metric::TtftP50).unwrap().1;
        // Identical levels differ by nothing, under the timing resolution.
        assert_eq!(
            ttft,
            "worse at 1 of 3 (8 req/s), changes under 1 ms are within timing resolution; best +0.0 ±5.6 % at 2 req/s, worst +50.0 ±8.4 % at 8 req/s"
        );
        assert_eq!(c.workload[0].same, Some(true), "{}", c.workload[0].line);

        // The other way round, the faster run is faster at 8 req/s.
        let bs = [bs[1].clone(), bs[0].clone()];
        let c = compare(&inputs(&bs), 0);
        assert_eq!(
            verdicts(&c, 5.0)[0].headline(&c.labels, 0),
            "rate sweep: A is faster than B at 8 req/s; no significant change at 1, 2 req/s"
        );
        let csv = c.sweeps[0].to_csv(&c.labels);
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("offered_rps,metric,B,A,A change %"));
        assert!(lines.next().unwrap().starts_with("1,TTFT p50 (s),"));
    }

    #[test]
    fn goodput_rows_only_when_both_runs_counted_it() {
        let a = rate_bundle("A", 1.0, 18);
        let mut b = rate_bundle("B", 1.0, 18);
        for p in &mut b.sweeps[0].points {
            p.goodput = None;
        }
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        let metrics: Vec<Metric> = c.sweeps[0].levels[0]
            .rows
            .iter()
            .map(|r| r.metric)
            .collect();
        assert_eq!(
            metrics,
            [
                Metric::TtftP50,
                Metric::TtftP99,
                Metric::TpotP50,
                Metric::E2eP50,
                Metric::E2eP99,
                Metric::AchievedRps,
                Metric::TtftMean,
                Metric::TtftP90,
                Metric::TpotMean,
                Metric::TpotP90,
                Metric::E2eMean,
                Metric::E2eP90,
            ]
        );
    }

    #[test]
    fn another_arrival_process_or_seed_is_another_workload() {
        let a = rate_bundle("A", 1.0, 18);
        let mut b = rate_bundle("B", 1.0, 18);
        b.sweeps[0].rate.as_mut().unwrap().seed = Some(2);
        let mut c = rate_bundle("C", 1.0, 18);
        c.sweeps[0].rate.as_mut().unwrap().arrival = Arrival::Gamma;
        c.sweeps[0].rate.as_mut().unwrap().burstiness = 0.5;
        let mut d = rate_bundle("D", 1.0, 18);
        d.sweeps[0].rate.as_mut().unwrap().max_concurrency = Some(8);
        let mut e = rate_bundle("E", 1.0, 18);
        for p in &mut e.sweeps[0].points {
            p.rate.as_mut().unwrap().offered_rps *= 10.0;
        }
        let bs = [a, b, c, d, e];
        let cmp = compare(&inputs(&bs), 0);
        let s = &cmp.sweeps[0];
        assert_eq!(s.runs, [0]);
        let reasons: Vec<Vec<String>> = s.mismatched.iter().map(|m| m.reasons.clone()).collect();
        assert_eq!(
            reasons,
            [
                vec!["arrival seeds differ: 1 vs 2 (another schedule of arrivals)".to_string()],
                vec!["arrival processes differ: poisson vs gamma (burstiness 0.5)".to_string()],
                vec!["--max-concurrency differs: none vs 8".to_string()],
                vec!["no offered rate in common: 1,2,8 vs 10,20,80 req/s".to_string()],
            ]
        );
        // The plans side by side, among what differs besides the numbers.
        let plans = cmp
            .metadata
            .iter()
            .find(|m| m.name == "rate sweep")
            .unwrap();
        assert!(plans.differs);
        assert_eq!(
            plans.values,
            [
                "1, 2, 8 req/s · poisson, seed 1 · input 1000 · output 32",
                "1, 2, 8 req/s · poisson, seed 2 · input 1000 · output 32",
                "1, 2, 8 req/s · gamma 0.5, seed 1 · input 1000 · output 32",
                "1, 2, 8 req/s · poisson, seed 1 · cap 8 · input 1000 · output 32",
                "1, 2, 8 req/s · poisson, seed 1 · input 1000 · output 32",
            ]
        );
        let v = verdicts(&cmp, 5.0);
        assert_eq!(v[0].outcome, Outcome::NotCompared);
        assert_eq!(
            v[0].notes,
            ["a different workload: arrival seeds differ: 1 vs 2 (another schedule of arrivals)"]
        );
        // Evenly spaced arrivals draw nothing: their seed does not matter.
        let mut a = rate_bundle("A", 1.0, 18);
        a.sweeps[0].rate.as_mut().unwrap().arrival = Arrival::Constant;
        let mut b = a.clone();
        b.label = "B".into();
        b.sweeps[0].rate.as_mut().unwrap().seed = Some(9);
        let bs = [a, b];
        assert!(compare(&inputs(&bs), 0).sweeps[0].mismatched.is_empty());
        // A sweep that does not record its schedule (an imported one) is compared.
        let a = rate_bundle("A", 1.0, 18);
        let mut b = rate_bundle("B", 1.0, 18);
        b.sweeps[0].rate = None;
        let bs = [a, b.clone()];
        assert_eq!(compare(&inputs(&bs), 0).sweeps[0].runs, [0, 1]);
        // Points that do not say their offered rate are not paired by guess.
        for p in &mut b.sweeps[0].points {
            p.rate = None;
        }
        let bs = [bs[0].clone(), b];
        assert_eq!(
            compare(&inputs(&bs), 0).sweeps[0].mismatched[0].reasons,
            [
                "3 of this run's rate points do not record their offered rate, so rates cannot be paired"
            ]
        );
    }

    #[test]
    fn a_rate_sweep_against_a_throughput_sweep_is_not_compared_not_mixed() {
        let a = rate_bundle("A", 1.0, 18);
        let mut b = bundle("B");
        b.sweeps.truncate(1);
        let bs = [a, b];
        let c = compare(&inputs(&bs), 0);
        let kinds: Vec<(SweepKind, Vec<usize>)> = c
            .sweeps
            .iter()
            .map(|s| (s.kind, s.absent.clone()))
            .collect();
        assert_eq!(
            kinds,
            [(SweepKind::Throughput, vec![0]), (SweepKind::Rate, vec![1])]
        );
        let v = verdicts(&c, 1.0);
        assert!(v.iter().all(|v| v.outcome == Outcome::NotCompared), "{v:?}");
        assert_eq!(v[1].notes, ["B has no rate sweep"]);
    }
}
