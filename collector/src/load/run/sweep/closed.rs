//! The closed-loop throughput sweep: one level per concurrency, in the plan's order, with the
//! time the levels still to run will take.

use llmsweep_shared::bundle::{LevelPrecision, Point, Sweep, SweepKind};

use crate::load::events::Event;
use crate::load::plan::ThroughputPlan;
use crate::load::run::generator::{LoadSpec, MIN_PRECISE_CYCLES, StopRule};
use crate::load::run::session::Session;

use super::point::{gave_up, measure, resuming_note, stream_id};

/// Runs a throughput sweep into the session's bundle, writing it after every level.
pub(crate) async fn levels(
    s: &mut Session,
    plan: &ThroughputPlan,
    warmup: u64,
) -> anyhow::Result<()> {
    if s.gave_up {
        return Ok(());
    }
    let sweep = s.start_sweep(Sweep {
        kind: SweepKind::Throughput,
        concurrency: plan.concurrency.clone(),
        input_lens: vec![plan.input_len],
        output_len: plan.output_len,
        requests: plan.requests,
        duration_s: plan.duration.map(|d| d.as_secs_f64()),
        warmup,
        timeout_s: s.options.timeout.as_secs_f64(),
        repeats: (plan.repeats > 1).then_some(u64::from(plan.repeats)),
        prefill_fit: None,
        preopened: Some(s.options.preopen),
        rate: None,
        slo: None,
        length_spread: plan.length_spread(),
        precision: plan.precision.map(|p| LevelPrecision {
            steady_pct: p.steady_pct,
            cap_s: p.cap.as_secs_f64(),
        }),
        points: Vec::new(),
    });
    let have: Vec<String> = plan
        .concurrency
        .iter()
        .filter(|&&c| s.writer.point(sweep, c, plan.input_len).is_some())
        .map(|c| format!("C={c}"))
        .collect();
    resuming_note(s, &have);
    // Before any level: the whole sweep's time from one request's pace in the warm-up.
    if have.is_empty()
        && let Some((ttft, tpot)) = s.warmup_pace
    {
        let e2e = ttft + plan.output_len.saturating_sub(1) as f64 * tpot;
        let rate = if e2e > 0.0 {
            plan.output_len as f64 / e2e
        } else {
            0.0
        };
        if let Some((lo, hi)) =
            remaining_from(plan, e2e, rate, &plan.concurrency).filter(|&(_, hi)| hi >= 20.0)
        {
            s.tell(Event::TimeLeft {
                low_s: lo,
                high_s: hi,
                levels: &plan.concurrency,
            });
        }
    }
    for (i, &c) in plan.concurrency.iter().enumerate() {
        if let Some(p) = s.writer.point(sweep, c, plan.input_len) {
            s.tell(Event::Point {
                kind: SweepKind::Throughput,
                point: p,
            });
            continue;
        }
        if plan.requests_at(c) < u64::from(c) {
            s.note(&format!(
                "C={c}: --requests {} is fewer than {c} slots, so the level never has {c} requests in flight",
                plan.requests_at(c)
            ));
        }
        let running = s.writer.bundle().target.max_running_requests;
        let load = spec(plan, c, running);
        let Some(point) = measure(s, load, plan.repeats, format!("C={c}")).await else {
            break;
        };
        s.tell(Event::Point {
            kind: SweepKind::Throughput,
            point: &point,
        });
        if s.gave_up {
            s.writer.add_point(sweep, point);
            gave_up(
                s,
                &plan.concurrency[i + 1..]
                    .iter()
                    .map(|c| format!("C={c}"))
                    .collect::<Vec<_>>(),
            );
            break;
        }
        let rest = &plan.concurrency[i + 1..];
        // Told only when it is worth waiting for.
        if let Some((lo, hi)) = remaining_s(plan, &point, rest).filter(|&(_, hi)| hi >= 20.0) {
            s.tell(Event::TimeLeft {
                low_s: lo,
                high_s: hi,
                levels: rest,
            });
        }
        s.writer.add_point(sweep, point);
    }
    // A resumed sweep's levels in the plan's order, whatever order they were measured in.
    let order = |p: &Point| plan.concurrency.iter().position(|&c| c == p.concurrency);
    s.writer.sweep_mut(sweep).points.sort_by_key(order);
    if let Some(h) = llmsweep_shared::headline::headline(s.writer.sweep(sweep)) {
        s.tell(Event::Headline(&h));
    }
    Ok(())
}

/// The load of level `c`, against a server that runs at most `running` requests at once when
/// it says so.
fn spec(plan: &ThroughputPlan, c: u32, running: Option<u64>) -> LoadSpec {
    let mut stop = plan.stop_at(c);
    if let StopRule::Precise(p) = &mut stop {
        p.running = running.and_then(|m| u32::try_from(m).ok());
    }
    LoadSpec {
        concurrency: c,
        stop,
        input_len: plan.input_len,
        output_len: plan.output_len,
        stream: stream_id(SweepKind::Throughput, c, plan.input_len),
        pass: None,
        open: None,
        spread: plan.spread,
        turns: plan.turns,
    }
}

/// How long the levels `rest` will take, as a range. Low end: a level sends its requests in
/// rounds of `c`, and a request takes at least as long as one of `last`'s (its median). High
/// end: a level's tokens at the last level's rate, which a server only grows on until it
/// saturates. A `--duration` level takes its duration.
fn remaining_s(plan: &ThroughputPlan, last: &Point, rest: &[u32]) -> Option<(f64, f64)> {
    let s = last.summary.as_ref()?;
    let e2e = s.e2e_s?.p50;
    let rate = s.steady_tok_s.unwrap_or(s.agg_tok_s);
    remaining_from(plan, e2e, rate, rest)
}

/// [`remaining_s`] from a request time `e2e` and a token rate `rate` taken as the last level's.
fn remaining_from(plan: &ThroughputPlan, e2e: f64, rate: f64, rest: &[u32]) -> Option<(f64, f64)> {
    if rest.is_empty() {
        return None;
    }
    let passes = f64::from(plan.repeats);
    if let Some(d) = plan.duration {
        let t = d.as_secs_f64() * rest.len() as f64 * passes;
        return Some((t, t));
    }
    if let (Some(p), None) = (plan.precision, plan.requests) {
        // A precise level runs a few waves at least, and at most its cap.
        let waves = (MIN_PRECISE_CYCLES + 1) as f64;
        let cap = p.cap.as_secs_f64();
        let lo = rest.len() as f64 * waves * e2e;
        let hi: f64 = rest
            .iter()
            .map(|&c| {
                let tokens = waves * f64::from(c) * plan.output_len as f64;
                (if rate > 0.0 { tokens / rate } else { cap })
                    .clamp(waves * e2e, cap.max(waves * e2e))
            })
            .sum();
        return Some((lo, hi));
    }
    let lo: f64 = rest
        .iter()
        .map(|&c| plan.requests_at(c).div_ceil(u64::from(c)) as f64 * e2e)
        .sum();
    let hi: f64 = if rate > 0.0 {
        rest.iter()
            .map(|&c| (plan.requests_at(c) * plan.output_len) as f64 / rate)
            .sum::<f64>()
            .max(lo)
    } else {
        lo
    };
    Some((lo * passes, hi * passes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_is_a_range_from_request_rounds_to_tokens_at_the_last_rate() {
        let plan = ThroughputPlan {
            concurrency: vec![4, 8, 16],
            input_len: 1000,
            output_len: 500,
            requests: None,
            duration: None,
            repeats: 1,
            open: None,
            spread: 0.0,
            turns: 1,
            precision: None,
        };
        let mut last = Point::empty(4, 1000, 500);
        let mut s = llmsweep_shared::metrics::summarize(&[], 4, 500, &[]);
        s.steady_tok_s = Some(250.0);
        s.e2e_s = llmsweep_shared::metrics::Stats::from_values([10.0]);
        last.summary = Some(s);
        // C=8 and C=16 send 16 and 32 requests: 2 rounds each at ≥ 10 s, and 24,000 tokens at
        // ≤ 250 tok/s.
        let (lo, hi) = remaining_s(&plan, &last, &[8, 16]).unwrap();
        assert_eq!((lo, hi), (40.0, 96.0));
        assert_eq!(remaining_s(&plan, &last, &[]), None);
    }
}
