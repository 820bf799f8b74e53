//! Sweeps: run each point, summarise it, flag it, write the bundle, print its row.

use llmsweep_shared::bundle::{
    DiscardedAttempt, ErrorKind, Flag, FlagKind, Point, PointStatus, RatePlan, RequestRecord,
    Sweep, SweepKind,
};
use llmsweep_shared::metrics::{
    PrefillFit, Stats, cache_counter_flag, client_bound_flag, degenerate_text, fit_prefill,
    level_flags, summarize,
};

use std::time::{Duration, Instant};

use crate::load::events::Event;
use crate::load::generator::{self, LoadResult, LoadSpec, OpenLoop, Pass, StopRule};
use crate::load::plan::{ContextPlan, OpenPlan, SearchPlan, ThroughputPlan};
use crate::load::session::Session;
use crate::load::stream::trace::Finished;
use crate::telemetry::{Sampler, with_tokens};

/// How often server metrics and GPUs are sampled during a point.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// Characters of generated text kept as a point's output sample.
const SAMPLE_CHARS: usize = 300;

/// The prompt stream of a point, from its parameters, so prompts do not depend on run order.
pub fn stream_id(kind: SweepKind, concurrency: u32, input_len: u64) -> u64 {
    let k = match kind {
        SweepKind::Throughput => 1u64,
        SweepKind::Context => 2,
        SweepKind::Unknown => 3,
        SweepKind::Rate => 4,
    };
    (k << 56) ^ ((concurrency as u64) << 40) ^ input_len
}

/// Runs a throughput sweep into the session's bundle, writing it after every level.
pub async fn throughput(s: &mut Session, plan: &ThroughputPlan, warmup: u64) -> anyhow::Result<()> {
    match &plan.open {
        Some(
            open @ OpenPlan {
                search: Some(search),
                ..
            },
        ) => {
            return Box::pin(find_max_rate(s, plan, open, *search, warmup)).await;
        }
        Some(open) => return rates(s, plan, open, warmup).await,
        None => {}
    }
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
        timeout_s: s.timeout.as_secs_f64(),
        repeats: (plan.repeats > 1).then_some(u64::from(plan.repeats)),
        prefill_fit: None,
        preopened: Some(s.preopen),
        rate: None,
        slo: None,
        length_spread: plan.length_spread(),
        points: Vec::new(),
    });
    let have: Vec<String> = plan
        .concurrency
        .iter()
        .filter(|&&c| s.has_point(sweep, c, plan.input_len))
        .map(|c| format!("C={c}"))
        .collect();
    resuming_note(s, &have);
    for (i, &c) in plan.concurrency.iter().enumerate() {
        if let Some(p) = s.bundle.sweeps[sweep]
            .points
            .iter()
            .find(|p| p.concurrency == c && p.input_len == plan.input_len)
        {
            s.tell(Event::Point {
                kind: SweepKind::Throughput,
                point: p,
            });
            continue;
        }
        let spec = LoadSpec {
            concurrency: c,
            stop: plan.stop_at(c),
            input_len: plan.input_len,
            output_len: plan.output_len,
            stream: stream_id(SweepKind::Throughput, c, plan.input_len),
            pass: None,
            open: None,
            spread: plan.spread,
            turns: plan.turns,
        };
        let Some(point) = measure(s, spec, plan.repeats, format!("C={c}")).await else {
            break;
        };
        s.tell(Event::Point {
            kind: SweepKind::Throughput,
            point: &point,
        });
        if s.gave_up {
            s.add_point(sweep, point);
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
        if let Some((lo, hi)) = remaining_s(plan, &point, rest).filter(|&(_, hi)| hi >= 20.0) {
            s.tell(Event::TimeLeft {
                low_s: lo,
                high_s: hi,
                levels: rest,
            });
        }
        s.add_point(sweep, point);
    }
    // A resumed sweep's levels in the plan's order, whatever order they were measured in.
    let order = |p: &Point| plan.concurrency.iter().position(|&c| c == p.concurrency);
    s.bundle.sweeps[sweep].points.sort_by_key(order);
    if let Some(h) = llmsweep_shared::headline::headline(&s.bundle.sweeps[sweep]) {
        s.tell(Event::Headline(&h));
    }
    Ok(())
}

/// Runs a rate sweep (`--rates`): one open-loop point per offered rate, writing the bundle
/// after every point.
pub async fn rates(
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
        let done = s.bundle.sweeps[sweep]
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
        s.add_point(sweep, point);
        if let Some(p) = s.bundle.sweeps[sweep].points.last() {
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
        timeout_s: s.timeout.as_secs_f64(),
        repeats: None,
        prefill_fit: None,
        preopened: Some(s.preopen),
        rate: Some(RatePlan {
            rates,
            arrival: open.arrival,
            burstiness: open.burstiness,
            seed: Some(s.bundle.workload.seed),
            max_concurrency: open.max_concurrency,
            search,
        }),
        slo: None,
        length_spread: plan.length_spread(),
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
            seed: s.bundle.workload.seed,
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
pub fn rate_text(rate: f64) -> String {
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
pub async fn find_max_rate(
    s: &mut Session,
    plan: &ThroughputPlan,
    open: &OpenPlan,
    search: SearchPlan,
    warmup: u64,
) -> anyhow::Result<()> {
    let Some(slo) = s.slo else {
        anyhow::bail!("--find-max-rate needs --goodput bounds to search against");
    };
    let c0 = s
        .bundle
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
    Box::pin(throughput(s, &closed, warmup)).await?;
    let closed_rps = s
        .bundle
        .sweeps
        .iter()
        .rev()
        .find(|w| w.kind == SweepKind::Throughput)
        .and_then(|w| w.points.iter().find(|p| p.concurrency == c0))
        .and_then(|p| p.summary.as_ref())
        .map_or(0.0, |x| x.request_s);
    if closed_rps.is_nan() || closed_rps <= 0.0 || s.gave_up || s.interrupt.is_stopped() {
        s.note("the closed-loop level completed no requests: no rate to search from");
        return Ok(());
    }
    let mut result = llmsweep_shared::bundle::RateSearch {
        slo_fraction: search.slo_fraction,
        precision: search.precision,
        closed_loop_rps: closed_rps,
        closed_loop_concurrency: c0,
        found_rps: None,
        failed_rps: None,
    };
    let sweep = s.start_sweep(rate_sweep(s, plan, open, Vec::new(), Some(result), 0));
    // Open loop rarely sustains more than the closed loop completed: start there.
    let mut next = closed_rps;
    for _ in 0..MAX_SEARCH_POINTS {
        let Some(point) = measure_rate(s, plan, open, next).await else {
            break;
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
        if let Some(rp) = s.bundle.sweeps[sweep].rate.as_mut() {
            rp.rates.push(next);
            rp.search = Some(result);
        }
        s.add_point(sweep, point);
        if let Some(p) = s.bundle.sweeps[sweep].points.last() {
            s.tell(Event::Point {
                kind: SweepKind::Rate,
                point: p,
            });
        }
        if s.gave_up || s.interrupt.is_stopped() {
            break;
        }
        next = match (result.found_rps, result.failed_rps) {
            (Some(lo), Some(hi)) if hi - lo <= search.precision * hi => break,
            (Some(lo), Some(hi)) => (lo + hi) / 2.0,
            // Every rate so far met it: go up.
            (Some(lo), None) => lo * 2.0,
            (None, Some(hi)) => hi / 2.0,
            (None, None) => break,
        };
        if next < closed_rps / 1000.0 {
            break;
        }
    }
    s.bundle.sweeps[sweep]
        .points
        .sort_by(|a, b| rate_of(a).total_cmp(&rate_of(b)));
    s.checkpoint();
    s.tell(Event::Headline(&llmsweep_shared::headline::search_words(
        &result, &slo,
    )));
    Ok(())
}

fn rate_of(p: &Point) -> f64 {
    p.rate.map_or(0.0, |r| r.offered_rps)
}

/// When resuming, says which levels the bundle has and are not run again.
fn resuming_note(s: &Session, have: &[String]) {
    if s.is_resuming() && !have.is_empty() {
        s.note(&format!(
            "resuming {}: {} {} in the bundle and {} not run again",
            s.path.display(),
            have.join(", "),
            if have.len() == 1 { "is" } else { "are" },
            if have.len() == 1 { "is" } else { "are" },
        ));
    }
}

/// Says that the run stops because the server did not come back, and what is left unrun.
fn gave_up(s: &Session, rest: &[String]) {
    let left = if rest.is_empty() {
        String::new()
    } else {
        format!("; not run: {}", rest.join(", "))
    };
    s.note(&format!("stopping: the server did not answer again{left}"));
}

/// How long the levels `rest` will take, as a range. Low end: a level sends its requests in
/// rounds of `c`, and a request takes at least as long as one of `last`'s (its median). High
/// end: a level's tokens at the last level's rate, which a server only grows on until it
/// saturates. A `--duration` level takes its duration.
fn remaining_s(plan: &ThroughputPlan, last: &Point, rest: &[u32]) -> Option<(f64, f64)> {
    if rest.is_empty() {
        return None;
    }
    let passes = f64::from(plan.repeats);
    if let Some(d) = plan.duration {
        let t = d.as_secs_f64() * rest.len() as f64 * passes;
        return Some((t, t));
    }
    let s = last.summary.as_ref()?;
    let e2e = s.e2e_s?.p50;
    let rate = s.steady_tok_s.unwrap_or(s.agg_tok_s);
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

/// Runs a context sweep: every length at every concurrency; lengths that cannot fit the server's
/// context are skipped with the reason, then the prefill curve is fitted and predicts them.
pub async fn context(s: &mut Session, plan: &ContextPlan, warmup: u64) -> anyhow::Result<()> {
    if s.gave_up {
        return Ok(());
    }
    let sweep = s.start_sweep(Sweep {
        kind: SweepKind::Context,
        concurrency: plan.concurrency.clone(),
        input_lens: plan.lengths.clone(),
        output_len: plan.output_len,
        requests: None,
        duration_s: None,
        warmup,
        timeout_s: s.timeout.as_secs_f64(),
        repeats: Some(plan.repeats),
        prefill_fit: None,
        preopened: Some(s.preopen),
        rate: None,
        slo: None,
        length_spread: None,
        points: Vec::new(),
    });
    let max_context = s.bundle.target.max_context;
    let have: Vec<String> = plan
        .lengths
        .iter()
        .flat_map(|&len| plan.concurrency.iter().map(move |&c| (len, c)))
        .filter(|&(len, c)| s.has_point(sweep, c, len))
        .map(|(len, c)| format!("{len} tokens at C={c}"))
        .collect();
    resuming_note(s, &have);
    'lengths: for &len in &plan.lengths {
        for &c in &plan.concurrency {
            if let Some(p) = s.bundle.sweeps[sweep]
                .points
                .iter()
                .find(|p| p.concurrency == c && p.input_len == len)
            {
                s.tell(Event::Point {
                    kind: SweepKind::Context,
                    point: p,
                });
                continue;
            }
            let spec = LoadSpec {
                concurrency: c,
                stop: StopRule::Count(plan.repeats * c as u64),
                input_len: len,
                output_len: plan.output_len,
                stream: stream_id(SweepKind::Context, c, len),
                pass: None,
                open: None,
                spread: 0.0,
                turns: 1,
            };
            let point = match too_long(&spec, max_context) {
                Some(reason) if !plan.force => skipped_point(&spec, reason),
                _ => match measure(s, spec, 1, format!("{len} tokens, C={c}")).await {
                    Some(p) => p,
                    None => break 'lengths,
                },
            };
            s.tell(Event::Point {
                kind: SweepKind::Context,
                point: &point,
            });
            s.add_point(sweep, point);
            if s.gave_up {
                gave_up(s, &[]);
                break 'lengths;
            }
        }
    }
    let order = |p: &Point| {
        let l = plan.lengths.iter().position(|&l| l == p.input_len);
        let c = plan.concurrency.iter().position(|&c| c == p.concurrency);
        (l, c)
    };
    s.bundle.sweeps[sweep].points.sort_by_key(order);
    fit_context(&mut s.bundle.sweeps[sweep]);
    s.checkpoint();
    s.tell(Event::PrefillFit(&s.bundle.sweeps[sweep]));
    if let Some(h) = llmsweep_shared::headline::headline(&s.bundle.sweeps[sweep]) {
        s.tell(Event::Headline(&h));
    }
    Ok(())
}

/// Why a point cannot fit the server's context, when it cannot.
fn too_long(spec: &LoadSpec, max_context: Option<u64>) -> Option<String> {
    let needed = spec.input_len + spec.output_len;
    let ctx = max_context?;
    (needed > ctx).then(|| format!("needs {needed} tokens, server context is {ctx}"))
}

fn skipped_point(spec: &LoadSpec, reason: String) -> Point {
    Point {
        status: PointStatus::Skipped,
        reason: Some(reason),
        summary: None,
        started_at: None,
        ..empty_point(spec)
    }
}

/// Fits the prefill curve over the successful requests at the sweep's lowest concurrency (higher
/// ones add queueing to TTFT), stores it, and predicts the skipped points.
pub fn fit_context(sweep: &mut Sweep) -> Option<PrefillFit> {
    let c = sweep.concurrency.iter().copied().min()?;
    let samples: Vec<(u64, f64)> = sweep
        .points
        .iter()
        .filter(|p| p.concurrency == c && p.status == PointStatus::Ok)
        .flat_map(|p| &p.requests)
        .filter(|r| r.is_ok())
        .filter_map(|r| Some((r.prompt_tokens.unwrap_or(r.input_tokens), r.ttft_s?)))
        .collect();
    let fit = fit_prefill(&samples)?;
    for p in sweep
        .points
        .iter_mut()
        .filter(|p| p.status == PointStatus::Skipped)
    {
        p.predicted_ttft_s = Some(fit.predict_s(p.input_len));
    }
    sweep.prefill_fit = Some(fit);
    Some(fit)
}

/// Most attempts at one point when the server keeps going away during it.
const MAX_ATTEMPTS: usize = 3;

/// How often a server that stopped answering is asked whether it is back.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// Runs one point and builds its bundle entry; `None` when interrupted before anything was
/// sent. When the server stops answering during it, the attempt is kept as discarded, the
/// server is waited for (`--wait-server`), and the point runs again from its start.
async fn measure(s: &mut Session, spec: LoadSpec, passes: u32, label: String) -> Option<Point> {
    let mut discarded: Vec<DiscardedAttempt> = Vec::new();
    loop {
        let (mut point, outage) = match measure_once(s, spec, passes, &label).await {
            Some(attempt) => attempt,
            None if discarded.is_empty() => return None,
            None => {
                return Some(failed_after(
                    &spec,
                    discarded,
                    "the run was interrupted".into(),
                ));
            }
        };
        let Some(why) = outage else {
            let hashes = point.requests.iter().map(|r| r.prompt_hash.clone());
            let hashes: Vec<String> = hashes.collect();
            s.add_hashes(hashes.iter().map(String::as_str));
            if let Some(last) = discarded.last() {
                let waited: f64 = discarded.iter().filter_map(|d| d.waited_s).sum();
                point.flags.push(Flag {
                    kind: FlagKind::Rerun,
                    message: format!(
                        "run again from its start: {} (waited {waited:.1} s for it); the {} discarded attempt{} kept in the bundle",
                        last.reason,
                        discarded.len(),
                        if discarded.len() == 1 { " is" } else { "s are" }
                    ),
                    count: Some(discarded.len() as u64),
                });
            }
            point.discarded = discarded;
            return Some(point);
        };
        discarded.push(DiscardedAttempt {
            started_at: point.started_at.clone(),
            reason: why.clone(),
            waited_s: None,
            requests: std::mem::take(&mut point.requests),
        });
        if discarded.len() >= MAX_ATTEMPTS {
            let reason = format!("{why}, in each of {MAX_ATTEMPTS} attempts");
            return Some(failed_after(&spec, discarded, reason));
        }
        s.note(&format!(
            "{label}: {why}; waiting up to {} s for it to answer again (--wait-server)",
            s.wait_server.as_secs()
        ));
        let waited = wait_for_server(s).await;
        if let Some(last) = discarded.last_mut() {
            last.waited_s = Some(waited.elapsed_s);
        }
        match waited.back {
            true => s.note(&format!(
                "{label}: the server answers again after {:.1} s; running {label} again from its start",
                waited.elapsed_s
            )),
            false if s.interrupt.is_stopped() => {
                let reason = format!("{why}; the run was interrupted while waiting for it");
                return Some(failed_after(&spec, discarded, reason));
            }
            false => {
                s.gave_up = true;
                let reason = format!(
                    "{why} and did not answer again within {} s (--wait-server)",
                    s.wait_server.as_secs()
                );
                return Some(failed_after(&spec, discarded, reason));
            }
        }
    }
}

/// A point that could not be measured, with the attempts that were thrown away.
fn failed_after(spec: &LoadSpec, discarded: Vec<DiscardedAttempt>, reason: String) -> Point {
    Point {
        status: PointStatus::Failed,
        reason: Some(reason),
        discarded,
        ..empty_point(spec)
    }
}

/// How waiting for the server ended.
struct Waited {
    back: bool,
    elapsed_s: f64,
}

/// Asks the server every [`PROBE_EVERY`] whether it answers (any HTTP answer but a proxy's
/// 502/503/504), until it does, `--wait-server` runs out, or the run is interrupted.
async fn wait_for_server(s: &Session) -> Waited {
    let began = Instant::now();
    loop {
        if generator::server_answers(&s.client).await {
            return Waited {
                back: true,
                elapsed_s: began.elapsed().as_secs_f64(),
            };
        }
        let left = s.wait_server.saturating_sub(began.elapsed());
        if left.is_zero() || s.interrupt.is_stopped() {
            return Waited {
                back: false,
                elapsed_s: began.elapsed().as_secs_f64(),
            };
        }
        tokio::select! {
            _ = tokio::time::sleep(PROBE_EVERY.min(left)) => {}
            _ = s.interrupt.stop_sending.cancelled() => {}
        }
    }
}

/// One attempt at a point, in `passes` passes back to back: its bundle entry, and why it
/// stopped early when the server looked down. `None` when interrupted before anything was sent.
async fn measure_once(
    s: &mut Session,
    spec: LoadSpec,
    passes: u32,
    label: &str,
) -> Option<(Point, Option<String>)> {
    if s.interrupt.is_stopped() {
        return None;
    }
    if s.preopen {
        // Open loop: the cap's worth of connections, else about a second's arrivals.
        let n = match spec.open {
            Some(o) if spec.concurrency == 0 => (o.rate.ceil() as u32).min(1024),
            _ => spec.concurrency,
        };
        s.client.preopen(n).await;
    }
    let origin = Instant::now();
    let sampler = Sampler::start_with(
        s.telemetry_http.clone(),
        &s.client.url(""),
        origin,
        SAMPLE_EVERY,
        s.nvidia_smi,
    )
    .await;
    let cpu_before = crate::load::host::client_cpu_s();
    let mut result = run_point(
        s,
        pass_spec(spec, 0, passes),
        label_of(label, 0, passes),
        origin,
    )
    .await;
    for pass in 1..passes {
        if s.interrupt.is_stopped() || result.outage.is_some() {
            break;
        }
        let more = run_point(
            s,
            pass_spec(spec, pass, passes),
            label_of(label, pass, passes),
            origin,
        )
        .await;
        result.finished.extend(more.finished);
        result.interrupted |= more.interrupted;
        result.outage = more.outage;
    }
    let (server_samples, gpu_samples) = sampler.stop().await;
    if result.finished.is_empty() {
        return None;
    }
    let wall = result.origin.elapsed().as_secs_f64();
    let client_cpu = match (cpu_before, crate::load::host::client_cpu_s()) {
        (Some(a), Some(b)) if wall > 0.0 => Some((b - a) / wall),
        _ => None,
    };
    let shared = s.prompts.shared_prefix;
    let mut point = build_point(&spec, &result, shared);
    point.client_cpu = client_cpu;
    // A conversation's later turns resend its history to be served from the cache: the
    // server's counter cannot tell those hits from others.
    if !point.flags.iter().any(|f| f.kind == FlagKind::PrefixCache)
        && spec.turns <= 1
        && let Some(samples) = &server_samples
    {
        let n = point.requests.len() as u64;
        point.flags.extend(cache_counter_flag(samples, n, shared));
    }
    if shared > 0 {
        s.note(&format!("{label}: {}", shared_prefix_words(&point, shared)));
    }
    if let Some(words) = reasoning_words(&point) {
        s.note(&format!("{label}: {words}"));
    }
    if let Some(words) = turn_words(&point) {
        s.note(&format!("{label}: {words}"));
    }
    point.server_samples = server_samples;
    let tokens = point.summary.as_ref().map_or(0, |x| x.output_tokens);
    point.gpu_samples = gpu_samples.map(|g| with_tokens(g, tokens));
    let near = s.capacity.as_ref().and_then(|c| {
        let events: u64 = point
            .requests
            .iter()
            .filter(|r| r.is_ok())
            .map(|r| r.chunks)
            .sum();
        let wall = point.summary.as_ref().map_or(0.0, |x| x.wall_s);
        (wall > 0.0).then(|| crate::load::capacity::near_capacity_flag(events as f64 / wall, c))?
    });
    // One client-bound flag: the measured capacity's when it speaks, else the CPU's.
    match near {
        Some(f) => point.flags.push(f),
        None => point
            .flags
            .extend(client_cpu.and_then(|cores| client_bound_flag(cores, wall))),
    }
    Some((point, result.outage))
}

/// `--turns`: TTFT p50 and the cached prompt tokens the server reported, by turn, so what the
/// prefix cache saves shows; `None` without conversations.
fn turn_words(p: &Point) -> Option<String> {
    let ok: Vec<_> = p.requests.iter().filter(|r| r.is_ok()).collect();
    let most = ok.iter().filter_map(|r| r.turn).max()?;
    let parts: Vec<String> = (0..=most)
        .filter_map(|t| {
            let of: Vec<_> = ok.iter().filter(|r| r.turn == Some(t)).collect();
            let ttft = Stats::from_values(of.iter().filter_map(|r| r.ttft_s))?;
            let cached =
                Stats::from_values(of.iter().filter_map(|r| r.cached_tokens.map(|c| c as f64)));
            Some(match cached {
                Some(c) => format!(
                    "turn {}: TTFT {:.3} s, {:.0} cached",
                    t + 1,
                    ttft.p50,
                    c.p50
                ),
                None => format!("turn {}: TTFT {:.3} s", t + 1, ttft.p50),
            })
        })
        .collect();
    Some(format!("by turn (p50): {}", parts.join(" · ")))
}

/// A reasoning model's split: when the answer began against TTFT, and how much reasoning came
/// first; `None` when no request streamed reasoning.
fn reasoning_words(p: &Point) -> Option<String> {
    let ok: Vec<_> = p.requests.iter().filter(|r| r.is_ok()).collect();
    let with: Vec<_> = ok
        .iter()
        .filter_map(|r| r.reasoning.map(|x| (r, x)))
        .collect();
    if with.is_empty() {
        return None;
    }
    let answer = Stats::from_values(with.iter().filter_map(|(_, x)| x.first_answer_s))?;
    let chunks = Stats::from_values(with.iter().map(|(_, x)| x.chunks as f64))?;
    let ttft = Stats::from_values(ok.iter().filter_map(|r| r.ttft_s))?;
    // The server's own count, when its usage gives one, else the streamed chunks.
    let tokens = Stats::from_values(with.iter().filter_map(|(_, x)| x.tokens.map(|t| t as f64)));
    let spent = match tokens {
        Some(t) => format!(
            "{:.0} reasoning tokens per request at p50 (the server's count)",
            t.p50
        ),
        None => format!("{:.0} reasoning chunks per request at p50", chunks.p50),
    };
    Some(format!(
        "{} of {} requests reasoned before answering: first answer token p50 {:.3} s (TTFT p50 {:.3} s counts the reasoning), {spent}",
        with.len(),
        ok.len(),
        answer.p50,
        ttft.p50,
    ))
}

/// What the server said of the shared prefix: the cached prompt tokens it reported.
fn shared_prefix_words(p: &Point, shared: u64) -> String {
    let ok: Vec<_> = p.requests.iter().filter(|r| r.is_ok()).collect();
    let cached: Vec<u64> = ok.iter().filter_map(|r| r.cached_tokens).collect();
    if cached.is_empty() {
        return format!(
            "the server reported no cached prompt tokens, so whether it reused the {shared}-token shared prefix is not known"
        );
    }
    let mean = cached.iter().sum::<u64>() as f64 / cached.len() as f64;
    let hit = cached.iter().filter(|&&c| c > 0).count();
    format!(
        "the server served {hit} of {} requests partly from its prefix cache, {mean:.0} cached prompt tokens on average (the shared prefix is {shared})",
        cached.len()
    )
}

/// The spec of pass `pass` of `passes`: untagged when the level runs once.
fn pass_spec(spec: LoadSpec, pass: u32, passes: u32) -> LoadSpec {
    let per_pass = match spec.stop {
        StopRule::Count(n) => n,
        // A timed pass sends as many as it can: give each pass its own range of prompts.
        StopRule::Deadline(_) => 1 << 32,
    };
    LoadSpec {
        pass: (passes > 1).then_some(Pass {
            index: pass,
            first_prompt: u64::from(pass) * per_pass,
        }),
        ..spec
    }
}

fn label_of(label: &str, pass: u32, passes: u32) -> String {
    if passes > 1 {
        format!("{label} pass {}/{passes}", pass + 1)
    } else {
        label.to_string()
    }
}

async fn run_point(s: &Session, spec: LoadSpec, label: String, origin: Instant) -> LoadResult {
    let total = match spec.stop {
        StopRule::Count(n) => Some(n),
        StopRule::Deadline(_) => None,
    };
    s.tell(Event::Sending {
        label: &label,
        total,
    });
    let result = generator::run(
        s.client.clone(),
        s.prompts.clone(),
        spec,
        origin,
        &s.interrupt,
        |f| {
            s.tell(Event::Finished {
                output_tokens: f.record.output_tokens,
                ok: f.record.is_ok(),
            })
        },
    )
    .await;
    s.tell(Event::Sent);
    result
}

/// Turns a point's finished requests into its bundle entry: summary, flags, status, sample.
/// `expected_cached`: prompt tokens every request shares (`--shared-prefix-len`), which the
/// server may serve from its cache without a flag.
pub fn build_point(spec: &LoadSpec, result: &LoadResult, expected_cached: u64) -> Point {
    let records: Vec<_> = result.finished.iter().map(|f| f.record.clone()).collect();
    // Requests aborted by an interrupt are kept in the records but are not the server's doing:
    // they count neither as failures nor in any number.
    let counted: Vec<_> = records
        .iter()
        .filter(|r| !is_cancelled(r))
        .cloned()
        .collect();
    let aborted = records.len() - counted.len();
    let gaps: Vec<f64> = result
        .finished
        .iter()
        .filter(|f| f.record.is_ok())
        .flat_map(|f| f.itl_gaps_s.iter().copied())
        .collect();
    let summary = summarize(&counted, spec.concurrency, spec.output_len, &gaps);
    let mut flags = level_flags(&counted, spec.output_len, expected_cached);
    flags.extend(degenerate_flag(&result.finished));
    if result.interrupted {
        flags.push(Flag {
            kind: FlagKind::Interrupted,
            message: format!(
                "the run was interrupted during this point: its numbers cover the {} requests that finished; {aborted} aborted in flight are recorded but not counted",
                counted.len()
            ),
            count: Some(aborted as u64),
        });
    }
    let (status, reason) = if summary.ok > 0 {
        (PointStatus::Ok, None)
    } else if counted.is_empty() {
        let why = "interrupted before any request finished".to_string();
        (PointStatus::Failed, Some(why))
    } else {
        let first = counted.iter().find_map(|r| r.error.as_ref());
        let why = first.map_or("no request succeeded".to_string(), |e| match e.status {
            Some(code) => format!("HTTP {code}: {}", e.message),
            None => e.message.clone(),
        });
        let n = counted.len();
        (
            PointStatus::Failed,
            Some(format!("all {n} requests failed; the server said: {why}")),
        )
    };
    let sample = result
        .finished
        .iter()
        .find(|f| f.record.is_ok() && !f.text.is_empty())
        .map(|f| f.text.chars().take(SAMPLE_CHARS).collect());
    Point {
        status,
        reason,
        started_at: Some(
            result
                .started_at
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        ),
        summary: Some(summary),
        flags,
        requests: records,
        output_sample: sample,
        ..empty_point(spec)
    }
}

/// A point with its parameters and nothing measured.
fn empty_point(spec: &LoadSpec) -> Point {
    Point::empty(spec.concurrency, spec.input_len, spec.output_len)
}

/// Flags the point when the generated text of its successful requests is one thing repeated.
fn degenerate_flag(finished: &[Finished]) -> Option<Flag> {
    let ok: Vec<&Finished> = finished.iter().filter(|f| f.record.is_ok()).collect();
    let bad: Vec<String> = ok.iter().filter_map(|f| degenerate_text(&f.text)).collect();
    let first = bad.first()?;
    Some(Flag {
        kind: FlagKind::Degenerate,
        message: format!(
            "{} of {} requests generated degenerate text ({first}); throughput of garbage is not throughput",
            bad.len(),
            ok.len()
        ),
        count: Some(bad.len() as u64),
    })
}

fn is_cancelled(r: &RequestRecord) -> bool {
    r.error
        .as_ref()
        .is_some_and(|e| e.kind == ErrorKind::Cancelled)
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
