//! The closed-loop throughput sweep: one level per concurrency, in the plan's order, with the
//! time the levels still to run will take.

use llmsweep_shared::bundle::{LevelPrecision, Point, PointStatus, Sweep, SweepKind};
use llmsweep_shared::headline::SATURATION_PCT;

use crate::load::events::Event;
use crate::load::plan::ThroughputPlan;
use crate::load::run::generator::{LoadSpec, MIN_PRECISE_REQUESTS_ONE_SLOT, StopRule};
use crate::load::run::session::Session;
use crate::load::run::writer::SweepHandle;

use super::point::{gave_up, measure, resuming_note, stop_when_refused_from_the_start, stream_id};

/// Runs a throughput sweep into the session's bundle, writing it after every level.
pub(crate) async fn levels(
    s: &mut Session,
    plan: &ThroughputPlan,
    warmup: u64,
) -> anyhow::Result<()> {
    if s.gave_up {
        return Ok(());
    }
    let shape = (!plan.shapes.is_empty()).then_some(llmsweep_shared::shapes::Shape {
        input: plan.input_len,
        output: plan.output_len,
    });
    let sweep = s.start_sweep(
        shape,
        Sweep {
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
        },
    );
    let have: Vec<String> = plan
        .concurrency
        .iter()
        .filter(|&&c| s.writer.point(sweep, c, plan.input_len).is_some())
        .map(|c| format!("C={c}"))
        .collect();
    resuming_note(s, &have);
    // Before any level: the whole sweep's time from one request's pace in the warm-up.
    if have.is_empty()
        && let Some(e2e) = s.alone_s(plan.output_len)
    {
        let rate = if e2e > 0.0 {
            plan.output_len as f64 / e2e
        } else {
            0.0
        };
        let running = running_limit(s);
        let expected = expected_levels(plan, &[], &plan.concurrency, running);
        let estimate = match plan.precision {
            Some(p) if plan.requests.is_none() => {
                Some(precise_range(p.cap.as_secs_f64(), e2e, running, expected))
            }
            _ => remaining_from(plan, e2e, rate, expected),
        };
        if let Some((lo, hi)) = estimate.filter(|&(_, hi)| hi >= 20.0) {
            s.tell(Event::TimeLeft {
                low_s: lo,
                high_s: hi,
                levels: expected,
                ends: expected.len() < plan.concurrency.len(),
            });
        }
    }
    for (i, &c) in plan.concurrency.iter().enumerate() {
        if let Some(p) = s.writer.point(sweep, c, plan.input_len) {
            s.tell(Event::Point {
                kind: SweepKind::Throughput,
                point: p,
            });
            // A resumed sweep ends where the levels it has show the server saturated.
            if let Some(why) = ends_at(s, sweep, plan, c) {
                skip_the_rest(s, sweep, plan, &plan.concurrency[i + 1..], &why);
                break;
            }
            continue;
        }
        if plan.requests_at(c) < u64::from(c) {
            s.note(&format!(
                "C={c}: --requests {} is fewer than {c} slots, so the level never has {c} requests in flight",
                plan.requests_at(c)
            ));
        }
        let running = s.writer.bundle().target.max_running_requests;
        let load = spec(plan, c, running, s.alone_s(plan.output_len));
        let Some(point) = measure(s, load, plan.repeats, format!("C={c}")).await else {
            break;
        };
        stop_when_refused_from_the_start(s, &point, &format!("C={c}"));
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
        s.writer.add_point(sweep, point);
        if let Some(why) = ends_at(s, sweep, plan, c) {
            skip_the_rest(s, sweep, plan, rest, &why);
            break;
        }
        let running = running_limit(s);
        let expected = expected_levels(plan, &plan.concurrency[..=i], rest, running);
        let measured: Vec<&Point> = s.writer.sweep(sweep).points.iter().collect();
        let estimate = match (plan.precision, s.writer.point(sweep, c, plan.input_len)) {
            (Some(p), _) if plan.requests.is_none() => {
                precise_left(p.cap.as_secs_f64(), &measured, running, expected).map(|t| (t, t))
            }
            (_, Some(last)) => remaining_s(plan, last, expected),
            _ => None,
        };
        // Told only when it is worth waiting for.
        if let Some((lo, hi)) = estimate.filter(|&(_, hi)| hi >= 20.0) {
            s.tell(Event::TimeLeft {
                low_s: lo,
                high_s: hi,
                levels: expected,
                ends: expected.len() < rest.len(),
            });
        }
    }
    // A resumed sweep's levels in the plan's order, whatever order they were measured in.
    let order = |p: &Point| plan.concurrency.iter().position(|&c| c == p.concurrency);
    s.writer.sweep_mut(sweep).points.sort_by_key(order);
    if let Some(h) = llmsweep_shared::headline::headline(s.writer.sweep(sweep)) {
        s.tell(Event::Headline(&h));
    }
    Ok(())
}

/// Why the default levels end at level `c`, measured and in the sweep, when they do
/// ([`saturated`] over the levels below it); never for levels the user named.
fn ends_at(s: &Session, sweep: SweepHandle, plan: &ThroughputPlan, c: u32) -> Option<String> {
    if !plan.until_saturated {
        return None;
    }
    let points = &s.writer.sweep(sweep).points;
    let below: Vec<&Point> = points.iter().filter(|q| q.concurrency < c).collect();
    let last = s.writer.point(sweep, c, plan.input_len)?;
    saturated(&below, last, running_limit(s))
}

/// Why the default levels end at `last`, when they do: it is above the server's running limit
/// (or, when the server does not say one, at least twice the best level below it) and serves at
/// most [`SATURATION_PCT`] more output tokens per second than the best level below, even at the
/// top of its steady interval. The levels after it would only queue behind the same batch:
/// against the kpro5 preset (at most 16 running) C = 32, 64 and 100 served 457.6, 457.4 and
/// 458.1 tok/s where C=16 served 458.0, and C = 64 and 100 took 112 and 130 s without their
/// queues settling (a request there waits about C / 16 decodes, 68 and 106 s, as long as the
/// level). A level that stalled, ran on a busy client host or shared the server with other
/// traffic does not end the sweep: its rate may be theirs.
pub(crate) fn saturated(below: &[&Point], last: &Point, running: Option<u32>) -> Option<String> {
    use llmsweep_shared::bundle::FlagKind;
    if last.status != PointStatus::Ok
        || last.flags.iter().any(|f| {
            matches!(
                f.kind,
                FlagKind::Stall
                    | FlagKind::HostBusy
                    | FlagKind::OtherTraffic
                    | FlagKind::Interrupted
            )
        })
    {
        return None;
    }
    let summary = last.summary.as_ref()?;
    let (rate, pm) = (summary.steady_tok_s?, summary.steady_pm_pct?);
    let (best_c, best) = below
        .iter()
        .filter(|p| p.status == PointStatus::Ok && p.concurrency < last.concurrency)
        .filter_map(|p| Some((p.concurrency, p.summary.as_ref()?.steady_tok_s?)))
        .filter(|&(_, v)| v.is_finite() && v > 0.0)
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let c = last.concurrency;
    let beyond = match running {
        Some(r) => c > r,
        None => c >= 2 * best_c,
    };
    if !(beyond && rate.is_finite() && pm.is_finite()) {
        return None;
    }
    if rate * (1.0 + pm / 100.0) > best * (1.0 + SATURATION_PCT / 100.0) {
        return None;
    }
    let change = (rate / best - 1.0) * 100.0;
    // Less only beyond its own interval; else within the noise of no more.
    let serves = if change >= -pm {
        format!(
            "no more than C={best_c}: {rate:.1} tok/s ±{pm:.1}%, {change:+.1} % on its {best:.1}"
        )
    } else {
        format!(
            "{:.1} % less than C={best_c}: {rate:.1} tok/s ±{pm:.1}% against {best:.1}",
            -change
        )
    };
    let limit = match running {
        Some(r) => format!(", and more than the {r} requests the server runs at once"),
        None => String::new(),
    };
    Some(format!("C={c} serves {serves}{limit}"))
}

/// Records the levels of `rest` the sweep has no point for as skipped, because the server was
/// saturated (`why`), and says so with the flag that runs them.
fn skip_the_rest(
    s: &mut Session,
    sweep: SweepHandle,
    plan: &ThroughputPlan,
    rest: &[u32],
    why: &str,
) {
    let skipped: Vec<u32> = rest
        .iter()
        .copied()
        .filter(|&c| s.writer.point(sweep, c, plan.input_len).is_none())
        .collect();
    if skipped.is_empty() {
        return;
    }
    let all: Vec<String> = plan.concurrency.iter().map(u32::to_string).collect();
    let levels: Vec<String> = skipped.iter().map(|c| c.to_string()).collect();
    let last = plan
        .concurrency
        .iter()
        .take_while(|c| !rest.contains(c))
        .last()
        .copied()
        .unwrap_or_default();
    s.note(&format!(
        "{why}. The server is saturated: C = {} would only queue, and are not run (--concurrency {} runs every level)",
        levels.join(", "),
        all.join(",")
    ));
    for c in skipped {
        let point = Point {
            status: PointStatus::Skipped,
            reason: Some(format!(
                "not run: the default levels ended at C={last}, where the server was saturated: {why} (--concurrency runs every level given)"
            )),
            ..Point::empty(c, plan.input_len, plan.output_len)
        };
        // The note above says it; the bundle keeps a point per level, with its reason.
        s.writer.add_point(sweep, point);
    }
}

/// The levels of `rest` a sweep expects to run after the levels `done`: all of them, except
/// that default levels against a server that says its running limit are expected to end at
/// the first level above the limit that follows one at or above it, where [`saturated`]
/// usually ends them (the kpro5 preset's 16: at C=32). The estimate of the time left is for
/// these; the levels measured decide.
fn expected_levels<'a>(
    plan: &ThroughputPlan,
    done: &[u32],
    rest: &'a [u32],
    running: Option<u32>,
) -> &'a [u32] {
    let Some(r) = running.filter(|_| plan.until_saturated) else {
        return rest;
    };
    let mut reached = done.iter().any(|&c| c >= r);
    for (i, &c) in rest.iter().enumerate() {
        if reached && c > r {
            return &rest[..=i];
        }
        reached |= c >= r;
    }
    rest
}

/// The load of level `c`, against a server that runs at most `running` requests at once when
/// it says so.
fn spec(plan: &ThroughputPlan, c: u32, running: Option<u64>, alone_s: Option<f64>) -> LoadSpec {
    let mut stop = plan.stop_at(c);
    if let StopRule::Precise(p) = &mut stop {
        p.running = running.and_then(|m| u32::try_from(m).ok());
        p.alone_s = alone_s;
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

/// The server's running limit as the bundle has it, if it said.
fn running_limit(s: &Session) -> Option<u32> {
    s.writer
        .bundle()
        .target
        .max_running_requests
        .and_then(|m| u32::try_from(m).ok())
        .filter(|&m| m > 0)
}

/// Waves a precise level takes at the server's running limit, once its slots are filled: the
/// start-up wave left out, its cycles (at least
/// [`MIN_PRECISE_CYCLES`](crate::load::run::generator::MIN_PRECISE_CYCLES), each one or two waves),
/// and the wave until the last of them is known to be over, when what it no longer needs is cut.
/// Measured over 90 runs of the kpro5 preset at C=16 (`BENCHMARKS.md`): 5.3 at the median, 5.2
/// to 7.0 from the 10th to the 90th percentile.
const PRECISE_WAVES: f64 = 5.5;

/// The same below the server's running limit, where a level needs at least
/// [`MIN_PRECISE_CYCLES_BELOW_LIMIT`](crate::load::run::generator::MIN_PRECISE_CYCLES_BELOW_LIMIT)
/// cycles: 7.3, 8.1 and 11.1 at the median at C = 8, 4 and 2
/// (a smaller batch varies more from wave to wave).
const PRECISE_WAVES_BELOW_LIMIT: f64 = 8.0;

/// The same above the server's running limit, where what still waits in its queue once the level
/// is precise is cut rather than waited for: 2.5 waves after the fill on the simulator's kpro5
/// preset at C = 32, 64 and 100 (`BENCHMARKS.md`).
const PRECISE_WAVES_QUEUED: f64 = 2.5;

/// How long a precise level of concurrency `c` takes, in a model of a batching server: a wave (one
/// request's time in a batch of `min(c, running)`, `unit` at batch 1, growing by `slowdown` per
/// request added to the batch) times [`PRECISE_WAVES`] (below the running limit,
/// [`PRECISE_WAVES_BELOW_LIMIT`]; above it, [`PRECISE_WAVES_QUEUED`] plus the waves that fill the
/// queue before the level's first cycle can open); at most the level's cap. One slot sends one
/// request at a time and is judged from its [`MIN_PRECISE_REQUESTS_ONE_SLOT`]th on.
fn precise_level_s(c: u32, unit: f64, slowdown: f64, running: Option<u32>, cap: f64) -> f64 {
    let batch = running.map_or(c, |r| c.min(r));
    let wave = unit * (1.0 + slowdown * f64::from(batch.saturating_sub(1)));
    let (waves, fill) = match running {
        _ if c == 1 => (MIN_PRECISE_REQUESTS_ONE_SLOT as f64, 0.0),
        Some(r) if c > r => (PRECISE_WAVES_QUEUED, f64::from(c - r) / f64::from(r)),
        Some(r) if c < r => (PRECISE_WAVES_BELOW_LIMIT, 0.0),
        _ => (PRECISE_WAVES, 0.0),
    };
    (wave * (waves + fill)).min(cap)
}

/// The slowdown per request added to a batch assumed before any level has shown one: a request
/// takes twice as long in a full batch as alone (a memory-bound decode shares its step time; the
/// levels measured replace this at once).
fn prior_slowdown(running: Option<u32>, levels: &[u32]) -> f64 {
    let full = running.unwrap_or_else(|| levels.iter().copied().max().unwrap_or(1));
    1.0 / f64::from(full.saturating_sub(1).max(1))
}

/// Before any level: the precise levels' time from one request's time alone (`unit`, the
/// warm-up's). At the low end a steady server with no slowdown with batch size; at the high end a
/// noisy one (a speculative decoder's requests finish after different numbers of steps), whose
/// every level runs to its cap and then waits for a wave in flight, a request taking twice the
/// assumed slowdown. The warm-up cannot tell the two apart; the levels measured then do.
fn precise_range(cap: f64, unit: f64, running: Option<u32>, levels: &[u32]) -> (f64, f64) {
    let prior = prior_slowdown(running, levels);
    let low = levels
        .iter()
        .map(|&c| precise_level_s(c, unit, 0.0, running, cap))
        .sum();
    let high = levels
        .iter()
        .map(|&c| {
            let batch = running.map_or(c, |r| c.min(r));
            cap + unit * (1.0 + 2.0 * prior * f64::from(batch.saturating_sub(1)))
        })
        .sum();
    (low, high)
}

/// After some levels: the rest's time in the same model, with a request's time alone from the
/// lowest level measured and the slowdown per batched request from the last level measured in a
/// larger batch than that (else the prior).
fn precise_left(cap: f64, measured: &[&Point], running: Option<u32>, rest: &[u32]) -> Option<f64> {
    if rest.is_empty() {
        return None;
    }
    // A request's own time in a batch of `min(C, running)`: its decode, plus the TTFT of a
    // request that did not queue (a level above the running limit queues the rest).
    let unqueued_ttft = measured
        .iter()
        .filter(|p| running.is_none_or(|r| p.concurrency <= r))
        .filter_map(|p| Some(p.summary.as_ref()?.ttft_s.as_ref()?.p50))
        .next_back()
        .unwrap_or(0.0);
    let unit_of = |p: &Point| -> Option<(u32, f64)> {
        let s = p.summary.as_ref()?;
        let e2e = s.e2e_s.as_ref()?.p50;
        let ttft = s.ttft_s.as_ref().map_or(0.0, |t| t.p50);
        let batch = running.map_or(p.concurrency, |r| p.concurrency.min(r));
        let t = e2e - ttft + unqueued_ttft.min(ttft);
        (t.is_finite() && t > 0.0).then_some((batch, t))
    };
    let units: Vec<(u32, f64)> = measured.iter().filter_map(|p| unit_of(p)).collect();
    let &(b0, u0) = units.iter().min_by_key(|(b, _)| *b)?;
    let slowdown = units
        .iter()
        .rev()
        .find(|(b, _)| *b > b0)
        .map(|&(b, u)| (u / u0 - 1.0).max(0.0) / f64::from(b - b0))
        .unwrap_or_else(|| prior_slowdown(running, rest));
    // The unit at batch 1, from the lowest level's.
    let unit = u0 / (1.0 + slowdown * f64::from(b0.saturating_sub(1)));
    // How much longer than the model's waves the levels so far ran until precise (a server
    // whose requests vary, a speculative decoder's, needs more waves): the geometric mean of
    // each level's wall time over the model's, from half to ten times.
    let ratios: Vec<f64> = measured
        .iter()
        .filter_map(|p| {
            let wall = p.summary.as_ref()?.wall_s;
            let model = precise_level_s(p.concurrency, unit, slowdown, running, f64::INFINITY);
            (wall > 0.0 && model > 0.0).then(|| (wall / model).ln())
        })
        .collect();
    let waves = if ratios.is_empty() {
        1.0
    } else {
        (ratios.iter().sum::<f64>() / ratios.len() as f64)
            .exp()
            .clamp(0.5, 10.0)
    };
    Some(
        rest.iter()
            .map(|&c| (precise_level_s(c, unit, slowdown, running, f64::INFINITY) * waves).min(cap))
            .sum(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmsweep_shared::bundle::FlagKind;

    /// A closed-loop plan of 1000×500-token levels `concurrency`, sized by its default rule.
    fn plan(concurrency: &[u32], until_saturated: bool) -> ThroughputPlan {
        ThroughputPlan {
            concurrency: concurrency.to_vec(),
            until_saturated,
            input_len: 1000,
            output_len: 500,
            shapes: Vec::new(),
            requests: None,
            duration: None,
            repeats: 1,
            open: None,
            spread: 0.0,
            turns: 1,
            precision: None,
        }
    }

    #[test]
    fn the_time_left_is_a_range_from_request_rounds_to_tokens_at_the_last_rate() {
        let plan = plan(&[4, 8, 16], false);
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

    /// A precise level's summary: e2e and TTFT p50 in seconds.
    fn level(c: u32, e2e: f64, ttft: f64) -> Point {
        let mut p = Point::empty(c, 1000, 500);
        let mut s = llmsweep_shared::metrics::summarize(&[], c, 500, &[]);
        s.e2e_s = llmsweep_shared::metrics::Stats::from_values([e2e]);
        s.ttft_s = llmsweep_shared::metrics::Stats::from_values([ttft]);
        p.summary = Some(s);
        p
    }

    #[test]
    fn precise_levels_take_a_few_waves_of_a_batch_slowing_with_its_size_plus_the_queue_fill() {
        // Alone a request takes 1 s; the server runs 16. Before any level: a steady server with
        // no slowdown at the low end; at the high end every level runs to its 120 s cap and then
        // finishes a wave of requests taking 3 s in a full batch (twice the prior).
        let (lo, hi) = precise_range(120.0, 1.0, Some(16), &[1, 32]);
        // C=1: its twelve requests of 1 s. C=32: 2.5 waves, plus one to fill the queue of 16.
        assert_eq!(lo, 12.0 + 3.5);
        assert_eq!(hi, (120.0 + 1.0) + (120.0 + 3.0));
        // After C=1 (1 s a request): the prior, twice as long at 16. C=16: 5.5 waves of 2 s.
        let c1 = level(1, 1.0, 0.1);
        let left = precise_left(120.0, &[&c1], Some(16), &[16, 32]).unwrap();
        assert!((left - (11.0 + 7.0)).abs() < 1e-9, "{left}");
        // After C=4 took 1.6 s a request: 0.2 s more per request in the batch, measured.
        let c4 = level(4, 1.6, 0.1);
        let left = precise_left(120.0, &[&c1, &c4], Some(16), &[16, 32]).unwrap();
        let wave16 = 1.0 + 0.2 * 15.0;
        assert!((left - wave16 * (5.5 + 3.5)).abs() < 1e-9, "{left}");
        // Above the limit a request's queueing (its TTFT) is not its batch's time.
        let c32 = level(32, 10.0 + wave16, 10.0);
        let left = precise_left(120.0, &[&c1, &c4, &c32], Some(16), &[64]).unwrap();
        let wave = 1.0 + ((wave16 + 0.1 - 1.0) / 15.0) * 15.0;
        assert!((left - wave * (2.5 + 3.0)).abs() < 1e-6, "{left}");
        // The cap bounds every level, and nothing is left after the last.
        assert_eq!(precise_left(5.0, &[&c1], Some(16), &[16, 32]), Some(10.0));
        assert_eq!(precise_left(120.0, &[&c1], Some(16), &[]), None);
        // A C=1 that ran 24 s, twice the model's twelve requests (a server whose requests vary
        // needs more of them): the rest are twice as long too, each within the cap.
        let mut slow = level(1, 1.0, 0.1);
        slow.summary.as_mut().unwrap().wall_s = 24.0;
        let left = precise_left(120.0, &[&slow], Some(16), &[16, 32]).unwrap();
        assert!((left - 2.0 * (11.0 + 7.0)).abs() < 1e-9, "{left}");
        let left = precise_left(20.0, &[&slow], Some(16), &[16, 32]).unwrap();
        assert!((left - (20.0 + 14.0)).abs() < 1e-9, "{left}");
    }

    /// A measured level: steady tok/s and half its interval in per cent.
    fn steady(c: u32, rate: f64, pm: f64) -> Point {
        let mut p = Point::empty(c, 1000, 500);
        let mut s = llmsweep_shared::metrics::summarize(&[], c, 500, &[]);
        s.steady_tok_s = Some(rate);
        s.steady_pm_pct = Some(pm);
        p.summary = Some(s);
        p
    }

    #[test]
    fn the_default_levels_end_above_the_running_limit_once_a_level_serves_no_more() {
        let (c8, c16) = (steady(8, 336.0, 1.5), steady(16, 458.0, 1.2));
        let below = [&c8, &c16];
        // The kpro5 story's C=32: as much as C=16, above its limit of 16.
        let why = saturated(&below, &steady(32, 457.6, 0.6), Some(16)).unwrap();
        assert_eq!(
            why,
            "C=32 serves no more than C=16: 457.6 tok/s ±0.6%, -0.1 % on its 458.0, and more than the 16 requests the server runs at once"
        );
        // A fall beyond the limit ends it too, and says by how much.
        let why = saturated(&below, &steady(32, 366.4, 0.6), Some(16)).unwrap();
        assert!(
            why.starts_with("C=32 serves 20.0 % less than C=16"),
            "{why}"
        );
        // 4.6 % more, but its interval reaches past 5 %: it may still be rising.
        assert_eq!(saturated(&below, &steady(32, 479.0, 1.0), Some(16)), None);
        assert!(saturated(&below, &steady(32, 479.0, 0.3), Some(16)).is_some());
        // At or below the limit a flat level does not end it: the batch still grows.
        assert_eq!(saturated(&[&c8], &steady(16, 340.0, 0.5), Some(16)), None);
        assert_eq!(saturated(&[&c8], &steady(16, 340.0, 0.5), Some(32)), None);
        // With no limit said: at least twice the best level below.
        assert!(saturated(&below, &steady(32, 458.0, 0.5), None).is_some());
        let c24 = steady(24, 458.0, 0.5);
        assert_eq!(
            saturated(&[&c8, &c16, &c24], &steady(32, 458.0, 0.5), None),
            None
        );
        // No interval, nothing below, or a level whose rate may be a stall's or a busy host's:
        // the sweep goes on.
        let mut bare = steady(32, 458.0, 0.5);
        bare.summary.as_mut().unwrap().steady_pm_pct = None;
        assert_eq!(saturated(&below, &bare, Some(16)), None);
        assert_eq!(saturated(&[], &steady(32, 458.0, 0.5), Some(16)), None);
        for kind in [FlagKind::Stall, FlagKind::HostBusy, FlagKind::OtherTraffic] {
            let mut p = steady(32, 400.0, 0.5);
            p.flags.push(llmsweep_shared::bundle::Flag {
                kind,
                message: String::new(),
                count: None,
            });
            assert_eq!(saturated(&below, &p, Some(16)), None, "{kind:?}");
        }
    }

    #[test]
    fn the_time_left_is_for_the_levels_expected_before_saturation_ends_the_sweep() {
        let mut plan = plan(&[1, 2, 4, 8, 16, 32, 64, 100], true);
        let all = plan.concurrency.clone();
        // kpro5 runs 16: C=32 is the first above it after one at it.
        assert_eq!(
            expected_levels(&plan, &[], &all, Some(16)),
            [1, 2, 4, 8, 16, 32]
        );
        assert_eq!(expected_levels(&plan, &all[..5], &all[5..], Some(16)), [32]);
        // 12: C=16 is above it but follows none at it.
        assert_eq!(
            expected_levels(&plan, &all[..1], &all[1..], Some(12)),
            [2, 4, 8, 16, 32]
        );
        // A limit the levels never pass, or none said: all of them.
        assert_eq!(expected_levels(&plan, &[], &all, Some(256)), all);
        assert_eq!(expected_levels(&plan, &[], &all, None), all);
        // Levels given are all run.
        plan.until_saturated = false;
        assert_eq!(expected_levels(&plan, &[], &all, Some(16)), all);
    }
}
