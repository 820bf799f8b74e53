//! The open-loop rate sweep (`--rates`) and the search for the highest rate that meets the SLO
//! (`--find-max-rate`), which starts from a closed-loop level at the server's running limit.

use llmsweep_shared::bundle::{Point, RatePlan, Sweep, SweepKind};

use crate::load::events::Event;
use crate::load::plan::{OpenPlan, SearchPlan, ThroughputPlan};
use crate::load::run::generator::{LoadSpec, OpenLoop};
use crate::load::run::session::Session;
use crate::load::run::writer::SweepHandle;

use super::point::{gave_up, measure, stream_id};

/// Runs a rate sweep (`--rates`): one open-loop point per offered rate, writing the bundle
/// after every point.
pub(crate) async fn rates(
    s: &mut Session,
    plan: &ThroughputPlan,
    open: &OpenPlan,
    warmup: u64,
) -> anyhow::Result<()> {
    if s.gave_up {
        return Ok(());
    }
    let sweep = s.start_sweep(rate_sweep(s, plan, open, open.rates.clone(), None, warmup));
    for (i, &rate) in open.rates.iter().enumerate() {
        let done = s
            .writer
            .sweep(sweep)
            .points
            .iter()
            .find(|p| p.rate.is_some_and(|r| r.offered_rps == rate));
        if let Some(p) = done {
            s.tell(Event::Point {
                kind: SweepKind::Rate,
                point: p,
            });
            continue;
        }
        let Some(point) = measure_rate(s, plan, open, rate).await else {
            break;
        };
        s.writer.add_point(sweep, point);
        if let Some(p) = s.writer.sweep(sweep).points.last() {
            s.tell(Event::Point {
                kind: SweepKind::Rate,
                point: p,
            });
        }
        if s.gave_up {
            let rest: Vec<String> = open.rates[i + 1..]
                .iter()
                .map(|r| format!("{r} req/s"))
                .collect();
            gave_up(s, &rest);
            break;
        }
    }
    Ok(())
}

/// A rate sweep's bundle entry, before its points: `rates` offered (those of a search are
/// added as it measures them).
fn rate_sweep(
    s: &Session,
    plan: &ThroughputPlan,
    open: &OpenPlan,
    rates: Vec<f64>,
    search: Option<llmsweep_shared::bundle::RateSearch>,
    warmup: u64,
) -> Sweep {
    Sweep {
        kind: SweepKind::Rate,
        concurrency: open.max_concurrency.into_iter().collect(),
        input_lens: vec![plan.input_len],
        output_len: plan.output_len,
        requests: plan.requests,
        duration_s: plan.duration.map(|d| d.as_secs_f64()),
        warmup,
        timeout_s: s.options.timeout.as_secs_f64(),
        repeats: None,
        prefill_fit: None,
        preopened: Some(s.options.preopen),
        rate: Some(RatePlan {
            rates,
            arrival: open.arrival,
            burstiness: open.burstiness,
            seed: Some(s.writer.bundle().workload.seed),
            max_concurrency: open.max_concurrency,
            search,
        }),
        slo: None,
        length_spread: plan.length_spread(),
        precision: None,
        points: Vec::new(),
    }
}

/// One open-loop point at `rate`, with its rate numbers; `None` when interrupted before it sent
/// anything.
async fn measure_rate(
    s: &mut Session,
    plan: &ThroughputPlan,
    open: &OpenPlan,
    rate: f64,
) -> Option<Point> {
    let spec = LoadSpec {
        concurrency: open.max_concurrency.unwrap_or(0),
        stop: plan.stop_at_rate(rate),
        input_len: plan.input_len,
        output_len: plan.output_len,
        stream: stream_id(
            SweepKind::Rate,
            (rate * 1000.0).round() as u32,
            plan.input_len,
        ),
        pass: None,
        spread: plan.spread,
        turns: plan.turns,
        open: Some(OpenLoop {
            rate,
            arrival: open.arrival,
            burstiness: open.burstiness,
            seed: s.writer.bundle().workload.seed,
        }),
    };
    let mut point = measure(s, spec, 1, format!("{} req/s", rate_text(rate))).await?;
    point.rate = Some(
        llmsweep_shared::metrics::rate_point(&point.requests, rate).unwrap_or(
            llmsweep_shared::bundle::RatePoint {
                offered_rps: rate,
                achieved_rps: None,
                lag_s: None,
                queued_s: None,
                peak_concurrency: None,
                mean_concurrency: None,
            },
        ),
    );
    Some(point)
}

/// A rate with the digits that matter: `2`, `0.75`, `3.41`.
pub(crate) fn rate_text(rate: f64) -> String {
    let t = format!("{rate:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Most open-loop points one search measures.
const MAX_SEARCH_POINTS: usize = 12;

/// `--find-max-rate`: a closed-loop level at the server's running limit gives the rate it
/// completes requests at; open-loop rates are then bisected between a rate that met the SLO
/// (or none) and one that did not, until the bracket is narrower than the precision. Every
/// point measured is kept: the closed-loop level as a throughput sweep, the rates as a rate
/// sweep whose plan holds the search and its result.
pub(crate) async fn find_max_rate(
    s: &mut Session,
    plan: &ThroughputPlan,
    open: &OpenPlan,
    search: SearchPlan,
    warmup: u64,
) -> anyhow::Result<()> {
    let Some(slo) = s.options.slo else {
        anyhow::bail!("--find-max-rate needs --goodput bounds to search against");
    };
    let Some((c0, closed_rps)) = closed_loop_rate(s, plan, open, search, warmup).await? else {
        s.note("the closed-loop level completed no requests: no rate to search from");
        return Ok(());
    };
    let mut result = llmsweep_shared::bundle::RateSearch {
        slo_fraction: search.slo_fraction,
        precision: search.precision,
        closed_loop_rps: closed_rps,
        closed_loop_concurrency: c0,
        found_rps: None,
        failed_rps: None,
    };
    let sweep = s.start_sweep(rate_sweep(s, plan, open, Vec::new(), Some(result), 0));
    // A resumed search lists the rates it kept (one an interruption cut short runs again).
    let kept: Vec<f64> = s.writer.sweep(sweep).points.iter().map(rate_of).collect();
    if let Some(rp) = s.writer.sweep_mut(sweep).rate.as_mut() {
        rp.rates = kept;
    }
    // Open loop rarely sustains more than the closed loop completed: start there.
    let mut next = closed_rps;
    for _ in 0..MAX_SEARCH_POINTS {
        // A resumed search takes its steps again over the points it kept, measuring none twice.
        let point = match take_kept(s, sweep, next) {
            Some(p) => p,
            None => match measure_rate(s, plan, open, next).await {
                Some(p) => p,
                None => break,
            },
        };
        let fraction = point
            .summary
            .as_ref()
            .and_then(|x| llmsweep_shared::metrics::goodput(&point.requests, &slo, x.wall_s))
            .map_or(0.0, |g| g.fraction);
        if fraction >= search.slo_fraction {
            result.found_rps = Some(result.found_rps.map_or(next, |f| f.max(next)));
        } else {
            result.failed_rps = Some(result.failed_rps.map_or(next, |f| f.min(next)));
        }
        if let Some(rp) = s.writer.sweep_mut(sweep).rate.as_mut() {
            if !rp.rates.contains(&next) {
                rp.rates.push(next);
            }
            rp.search = Some(result);
        }
        s.writer.add_point(sweep, point);
        if let Some(p) = s.writer.sweep(sweep).points.last() {
            s.tell(Event::Point {
                kind: SweepKind::Rate,
                point: p,
            });
        }
        if s.gave_up || s.interrupt.is_stopped() {
            break;
        }
        match next_rate(&result, search.precision) {
            Some(rate) => next = rate,
            None => break,
        }
    }
    s.writer
        .sweep_mut(sweep)
        .points
        .sort_by(|a, b| rate_of(a).total_cmp(&rate_of(b)));
    s.writer.checkpoint();
    s.tell(Event::Headline(&llmsweep_shared::headline::search_words(
        &result, &slo,
    )));
    Ok(())
}

/// The closed-loop level a search starts from, at the server's running limit (32 when it does
/// not say, at most `--max-concurrency`): its concurrency and the rate it completed requests
/// at; `None` when it completed none, or the run stopped.
async fn closed_loop_rate(
    s: &mut Session,
    plan: &ThroughputPlan,
    open: &OpenPlan,
    search: SearchPlan,
    warmup: u64,
) -> anyhow::Result<Option<(u32, f64)>> {
    let c0 = s
        .writer
        .bundle()
        .target
        .max_running_requests
        .map_or(32, |m| m as u32)
        .clamp(
            1,
            open.max_concurrency
                .unwrap_or(crate::load::plan::MAX_CONCURRENCY),
        );
    let closed = ThroughputPlan {
        concurrency: vec![c0],
        requests: Some(plan.requests.unwrap_or(0).max(4 * u64::from(c0)).max(32)),
        open: None,
        ..plan.clone()
    };
    s.note(&format!(
        "finding the highest rate at which {:.0} % of requests meet the SLO: first a closed loop at C={c0}",
        search.slo_fraction * 100.0
    ));
    super::closed::levels(s, &closed, warmup).await?;
    let rps = s
        .writer
        .bundle()
        .sweeps
        .iter()
        .rev()
        .find(|w| w.kind == SweepKind::Throughput)
        .and_then(|w| w.points.iter().find(|p| p.concurrency == c0))
        .and_then(|p| p.summary.as_ref())
        .map_or(0.0, |x| x.request_s);
    let usable = rps.is_finite() && rps > 0.0 && !s.gave_up && !s.interrupt.is_stopped();
    Ok(usable.then_some((c0, rps)))
}

/// The search's next rate: the middle of the bracket, double the best rate while every rate met
/// the SLO, half the lowest while none did; `None` when the bracket is within the precision or
/// the rate fell a thousandfold below the closed loop's.
fn next_rate(result: &llmsweep_shared::bundle::RateSearch, precision: f64) -> Option<f64> {
    let next = match (result.found_rps, result.failed_rps) {
        (Some(lo), Some(hi)) if hi - lo <= precision * hi => return None,
        (Some(lo), Some(hi)) => (lo + hi) / 2.0,
        (Some(lo), None) => lo * 2.0,
        (None, Some(hi)) => hi / 2.0,
        (None, None) => return None,
    };
    (next >= result.closed_loop_rps / 1000.0).then_some(next)
}

/// The point at `rate` a resumed search kept, taken out of the sweep to be judged and added
/// again in its place in the search.
fn take_kept(s: &mut Session, sweep: SweepHandle, rate: f64) -> Option<Point> {
    let points = &mut s.writer.sweep_mut(sweep).points;
    let i = points
        .iter()
        .position(|p| (rate_of(p) - rate).abs() <= 1e-9 * rate.abs())?;
    Some(points.remove(i))
}

fn rate_of(p: &Point) -> f64 {
    p.rate.map_or(0.0, |r| r.offered_rps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmsweep_shared::bundle::RateSearch;

    fn search(found: Option<f64>, failed: Option<f64>) -> RateSearch {
        RateSearch {
            slo_fraction: 0.9,
            precision: 0.05,
            closed_loop_rps: 8.0,
            closed_loop_concurrency: 16,
            found_rps: found,
            failed_rps: failed,
        }
    }

    #[test]
    fn the_search_bisects_doubles_halves_and_stops_within_the_precision() {
        assert_eq!(next_rate(&search(Some(4.0), Some(8.0)), 0.05), Some(6.0));
        assert_eq!(next_rate(&search(Some(8.0), None), 0.05), Some(16.0));
        assert_eq!(next_rate(&search(None, Some(8.0)), 0.05), Some(4.0));
        assert_eq!(next_rate(&search(Some(7.7), Some(8.0)), 0.05), None);
        assert_eq!(next_rate(&search(None, None), 0.05), None);
        // A thousandfold below the closed loop's 8 req/s: no rate is worth measuring.
        assert_eq!(next_rate(&search(None, Some(0.015)), 0.05), None);
    }
}
