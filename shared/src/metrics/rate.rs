//! Open-loop numbers: what a rate point achieved against its schedule, and goodput under an
//! SLO (for every sweep kind).

use crate::bundle::{Goodput, RatePoint, RequestRecord, Slo};

use super::request::{end_s, tpot_s};
use super::stats::Stats;

/// Whether `r` succeeded and met every bound of `slo`. A bound on TPOT needs at least two
/// output tokens to be met.
pub fn meets(r: &RequestRecord, slo: &Slo) -> bool {
    if !r.is_ok() {
        return false;
    }
    let within = |bound: Option<f64>, value: Option<f64>| match bound {
        None => true,
        Some(b) => value.is_some_and(|v| v <= b),
    };
    within(slo.ttft_s, r.ttft_s)
        && within(slo.tpot_s, tpot_s(r))
        && within(slo.e2e_s, Some(r.e2e_s))
}

/// The requests of a point that met `slo`, over its wall time `wall_s`; `None` without
/// requests or wall time.
pub fn goodput(records: &[RequestRecord], slo: &Slo, wall_s: f64) -> Option<Goodput> {
    if records.is_empty() || wall_s.is_nan() || wall_s <= 0.0 {
        return None;
    }
    let good: Vec<&RequestRecord> = records.iter().filter(|r| meets(r, slo)).collect();
    let tokens = good
        .iter()
        .map(|r| r.output_tokens)
        .fold(0, u64::saturating_add);
    Some(Goodput {
        good: good.len() as u64,
        requests: records.len() as u64,
        fraction: good.len() as f64 / records.len() as f64,
        good_rps: good.len() as f64 / wall_s,
        good_tok_s: tokens as f64 / wall_s,
    })
}

/// What a rate point's records say about its schedule and the concurrency it reached;
/// `offered_rps` is the rate asked for, `duration_s` the point's `--duration` when it had one.
/// `None` without records.
///
/// The achieved rate is the requests sent over the schedule's window, which is known: from the
/// point's start (the first arrival is due at 0) to `--duration`, or, for a count of arrivals,
/// to one mean gap (1 / `offered_rps`) after the last one due, so that n arrivals count n gaps
/// (n / rate for evenly spaced ones). When the client sent the last arrival late (it could not
/// keep up, or `--max-concurrency` held it), the window ends that much later. Records without
/// due times (older bundles) fall back to the span of their sends, stretched by one mean gap.
pub fn rate_point(
    records: &[RequestRecord],
    offered_rps: f64,
    duration_s: Option<f64>,
) -> Option<RatePoint> {
    let first = records.iter().map(|r| r.start_s).reduce(f64::min)?;
    let last = records.iter().map(|r| r.start_s).reduce(f64::max)?;
    let n = records.len() as f64;
    let achieved_rps = match achieved_window_s(records, offered_rps, duration_s) {
        Some(window) => Some(n / window),
        // n sends span n − 1 gaps; one more mean gap makes the span count n of them.
        None => (n > 1.0 && last > first).then(|| n / ((last - first) * n / (n - 1.0))),
    };
    let lag = records
        .iter()
        .filter_map(|r| r.due.map(|d| r.start_s - d.due_s - d.queued_s));
    let queued: Vec<f64> = records
        .iter()
        .filter_map(|r| r.due.map(|d| d.queued_s))
        .collect();
    let queued_s = queued
        .iter()
        .any(|&q| q > 0.0)
        .then(|| Stats::from_values(queued.iter().copied()))
        .flatten();
    let (peak, mean) = concurrency_reached(records);
    Some(RatePoint {
        offered_rps,
        achieved_rps,
        lag_s: Stats::from_values(lag),
        queued_s,
        peak_concurrency: Some(peak),
        mean_concurrency: Some(mean),
    })
}

/// The window a rate point's arrivals were offered over, seconds from its start: `--duration`,
/// else one mean gap after the last arrival due; stretched by how late the last one due was
/// sent. `None` when the records do not say when they were due.
fn achieved_window_s(
    records: &[RequestRecord],
    offered_rps: f64,
    duration_s: Option<f64>,
) -> Option<f64> {
    let (due, start) = records
        .iter()
        .filter_map(|r| r.due.map(|d| (d.due_s, r.start_s)))
        .max_by(|a, b| a.0.total_cmp(&b.0))?;
    let planned = match duration_s {
        Some(d) if d.is_finite() && d > 0.0 => d.max(due),
        _ if offered_rps.is_finite() && offered_rps > 0.0 => due + 1.0 / offered_rps,
        _ => return None,
    };
    let window = planned + (start - due).max(0.0);
    (window.is_finite() && window > 0.0).then_some(window)
}

/// Most requests in flight at once, and the mean over the span from the first start to the
/// last end (weighted by time).
fn concurrency_reached(records: &[RequestRecord]) -> (u32, f64) {
    let mut events: Vec<(f64, i32)> = records
        .iter()
        .flat_map(|r| [(r.start_s, 1), (end_s(r), -1)])
        .filter(|(t, _)| t.is_finite())
        .collect();
    // Ends before starts at the same instant: a request that ends as another starts is not
    // in flight with it.
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (Some(&(t0, _)), Some(&(t1, _))) = (events.first(), events.last()) else {
        return (0, 0.0);
    };
    let (mut now, mut peak, mut area, mut prev) = (0i32, 0i32, 0.0, t0);
    for (t, step) in events {
        area += f64::from(now) * (t - prev);
        prev = t;
        now += step;
        peak = peak.max(now);
    }
    let mean = if t1 > t0 { area / (t1 - t0) } else { 0.0 };
    (peak.max(0) as u32, mean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Due;
    use crate::metrics::request::tests::{failed, rec};

    #[test]
    fn goodput_counts_requests_within_every_bound() {
        // TTFT 0.1 / 0.3 / 0.1 s; TPOT (e2e − TTFT) / 9: 0.1, 0.1 and 0.5 s.
        let rs = [
            rec(0.0, 0.1, 1.0, 10),
            rec(0.0, 0.3, 1.2, 10),
            rec(0.0, 0.1, 4.6, 10),
            failed(0.0, 0.5),
        ];
        let slo = Slo {
            ttft_s: Some(0.2),
            tpot_s: Some(0.2),
            e2e_s: None,
        };
        let g = goodput(&rs, &slo, 2.0).unwrap();
        assert_eq!((g.good, g.requests), (1, 4));
        assert_eq!((g.fraction, g.good_rps, g.good_tok_s), (0.25, 0.5, 5.0));
        // No bounds: every successful request is good; failed ones never are.
        let all = goodput(&rs, &Slo::default(), 2.0).unwrap();
        assert_eq!(all.good, 3);
        assert_eq!(goodput(&rs, &slo, 0.0), None);
        assert_eq!(goodput(&[], &slo, 1.0), None);
    }

    #[test]
    fn a_rate_point_has_its_lag_queue_and_concurrency() {
        // Due at 0, 1, 2, 3 s; sent 1 ms late, the last after 0.5 s queued; each takes 1.5 s.
        let rs: Vec<RequestRecord> = (0..4)
            .map(|i| {
                let queued = if i == 3 { 0.5 } else { 0.0 };
                let due = f64::from(i);
                let mut r = rec(due + 0.001 + queued, 0.1, 1.5, 10);
                r.due = Some(Due {
                    due_s: due,
                    queued_s: queued,
                });
                r
            })
            .collect();
        let p = rate_point(&rs, 1.0, None).unwrap();
        assert_eq!(p.offered_rps, 1.0);
        // Four arrivals due 1 s apart: a window of 4 s, stretched by the 0.501 s the last one
        // due was sent late (queued behind the cap).
        assert!((p.achieved_rps.unwrap() - 4.0 / 4.501).abs() < 1e-12);
        let lag = p.lag_s.unwrap();
        assert!((lag.max - 0.001).abs() < 1e-9 && (lag.min - 0.001).abs() < 1e-9);
        assert_eq!(p.queued_s.unwrap().max, 0.5);
        // In flight: [0.001, 1.501], [1.001, 2.501], [2.001, 3.501], [3.501, 5.001]; two at
        // once at most; 6 s of requests over 5 s.
        assert_eq!(p.peak_concurrency, Some(2));
        assert!(
            (p.mean_concurrency.unwrap() - 6.0 / 5.0).abs() < 1e-9,
            "{:?}",
            p.mean_concurrency
        );
    }

    /// Requests due at `due` (seconds from the point's start), each sent `late` s after.
    fn sent(due: &[f64], late: f64) -> Vec<RequestRecord> {
        due.iter()
            .map(|&d| {
                let mut r = rec(d + late, 0.1, 1.0, 10);
                r.due = Some(Due {
                    due_s: d,
                    queued_s: 0.0,
                });
                r
            })
            .collect()
    }

    #[test]
    fn the_achieved_rate_is_over_the_known_window_not_the_first_to_last_send() {
        // --duration 15 at 0.105 req/s: four arrivals drawn in the 15 s, sent on schedule. The
        // span of their sends (0 to 1.5 s) would say 4 / (1.5 × 4 / 3) = 2 req/s; the window
        // is the 15 s: 4 / 15.
        let four = sent(&[0.0, 0.5, 1.0, 1.5], 0.0);
        let p = rate_point(&four, 0.105, Some(15.0)).unwrap();
        assert_eq!(p.achieved_rps, Some(4.0 / 15.0));
        // A count of arrivals at 0.5 req/s, 2 s apart: n gaps of 1 / rate, so exactly the rate.
        let even = sent(&[0.0, 2.0, 4.0, 6.0], 0.0);
        assert_eq!(
            rate_point(&even, 0.5, None).unwrap().achieved_rps,
            Some(0.5)
        );
        // One arrival: one gap; with --duration, one over the window.
        let one = sent(&[0.0], 0.0);
        assert_eq!(rate_point(&one, 0.5, None).unwrap().achieved_rps, Some(0.5));
        assert_eq!(
            rate_point(&one, 0.5, Some(8.0)).unwrap().achieved_rps,
            Some(0.125)
        );
        // A client that fell 2 s behind by its last send offered the count over 10 s.
        let mut behind = sent(&[0.0, 2.0, 4.0, 6.0], 0.0);
        behind[3].start_s = 8.0;
        assert_eq!(
            rate_point(&behind, 0.5, None).unwrap().achieved_rps,
            Some(0.4)
        );
        // Records without due times (an older bundle): the span of their sends.
        let undue: Vec<RequestRecord> = [0.0, 1.0, 2.0, 3.0]
            .iter()
            .map(|&t| rec(t, 0.1, 1.0, 10))
            .collect();
        assert_eq!(
            rate_point(&undue, 9.0, None).unwrap().achieved_rps,
            Some(1.0)
        );
    }
}
