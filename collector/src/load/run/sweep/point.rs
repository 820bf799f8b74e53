//! The point measurer every sweep shares: one point from its load spec to its bundle entry, run
//! again from its start when the server goes away during it; its notes (what the server cached,
//! reasoning, turns); and the words a sweep says when resuming or giving up.
use std::time::{Duration, Instant};

use llmsweep_shared::bundle::{
    ChunkTokens, DiscardedAttempt, ErrorKind, Flag, FlagKind, Point, PointStatus, RequestRecord,
    SweepKind,
};
use llmsweep_shared::metrics::{
    Stats, cache_counter_flag, client_bound_flag, degenerate, host_busy_flag, level_flags,
    other_traffic_flag, summarize,
};

use crate::load::events::Event;
use crate::load::run::generator::{self, LoadResult, LoadSpec, Pass, StopRule};
use crate::load::run::session::Session;
use crate::load::run::stream::trace::Finished;
use crate::load::workload::PromptBuilder;
use crate::telemetry::{Sampler, with_tokens};

/// How often server metrics and GPUs are sampled during a point.
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// Characters of generated text kept as a point's output sample.
const SAMPLE_CHARS: usize = 300;

/// The prompt stream of a point, from its parameters, so prompts do not depend on run order.
pub(crate) fn stream_id(kind: SweepKind, concurrency: u32, input_len: u64) -> u64 {
    let k = match kind {
        SweepKind::Throughput => 1u64,
        SweepKind::Context => 2,
        SweepKind::Unknown => 3,
        SweepKind::Rate => 4,
    };
    (k << 56) ^ ((concurrency as u64) << 40) ^ input_len
}

/// When resuming, says which levels the bundle has and are not run again.
pub(crate) fn resuming_note(s: &Session, have: &[String]) {
    if s.writer.is_resuming() && !have.is_empty() {
        s.note(&format!(
            "resuming {}: {} {} in the bundle and {} not run again",
            s.writer.path().display(),
            have.join(", "),
            if have.len() == 1 { "is" } else { "are" },
            if have.len() == 1 { "is" } else { "are" },
        ));
    }
}

/// Says why the run stops (the server did not come back, or refused its first point whole),
/// and what is left unrun.
pub(crate) fn gave_up(s: &Session, rest: &[String]) {
    let left = if rest.is_empty() {
        String::new()
    } else {
        format!("; not run: {}", rest.join(", "))
    };
    let why = s
        .gave_up_why
        .as_deref()
        .unwrap_or("the server did not answer again");
    s.note(&format!("stopping: {why}{left}"));
}

/// Stops the run when `point`, named `label`, had requests and none succeeded, and no point
/// before it in the run had a successful request either: a server that refuses the workload
/// (a model it does not serve, a header it rejects, a 400 for every request) or takes requests
/// and never answers does the same at every level after it, each a whole level's time (a
/// silent server's after its time cap and a grace). A point that fails after
/// others succeeded is a measurement, and the sweep goes on. The sweeps whose later points
/// load the server more with the same requests (levels, rates, longer prompts) call it; a
/// context sweep whose next length is shorter does not.
pub(crate) fn stop_when_refused_from_the_start(s: &mut Session, point: &Point, label: &str) {
    if s.gave_up || s.interrupt.is_stopped() || point.requests.is_empty() {
        return;
    }
    let ok = |p: &Point| p.requests.iter().any(RequestRecord::is_ok);
    let earlier_ok = s
        .writer
        .bundle()
        .sweeps
        .iter()
        .flat_map(|w| &w.points)
        .any(ok);
    if ok(point) || earlier_ok {
        return;
    }
    s.gave_up = true;
    s.gave_up_why = Some(format!(
        "no request of {label}, the run's first point, succeeded (its row says why), and the points after it would fail the same way"
    ));
}

/// Most attempts at one point when the server keeps going away during it.
const MAX_ATTEMPTS: usize = 3;

/// How often a server that stopped answering is asked whether it is back.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// Runs one point and builds its bundle entry; `None` when interrupted before anything was
/// sent. When the server stops answering during it, the attempt is kept as discarded, the
/// server is waited for (`--wait-server`), and the point runs again from its start.
pub(crate) async fn measure(
    s: &mut Session,
    spec: LoadSpec,
    passes: u32,
    label: String,
) -> Option<Point> {
    let run_prompts = s.prompts.clone();
    let mut point = attempts(s, spec, passes, label, &run_prompts).await;
    s.prompts = run_prompts;
    // What the client gave up on may still hold the server's step in flight: the next point
    // starts once it is over.
    let given_up = |r: &RequestRecord| {
        r.error
            .as_ref()
            .is_some_and(|e| matches!(e.kind, ErrorKind::Cancelled | ErrorKind::Timeout))
    };
    if let Some(p) = point.as_ref().filter(|p| p.requests.iter().any(given_up)) {
        // The step in flight is at most about a cohort's prefill, which the level's slowest
        // first token shows; a level that had none is not waited on long.
        let ttft = p
            .requests
            .iter()
            .filter_map(|r| r.ttft_s)
            .fold(0.0, f64::max);
        let bound = Duration::from_secs_f64(2.0 * ttft + 1.0).min(s.options.timeout);
        s.settle(bound).await;
    }
    // Say which prefixes the point's prompts began with when they are not the bundle's.
    if let Some(p) = point.as_mut() {
        let seed = p
            .discarded
            .is_empty()
            .then_some(s.prompts.prefix_seed)
            .flatten();
        let bundle_seed = s.writer.bundle().workload.prefix_seed;
        p.prefix_seed = match seed {
            Some(seed) if Some(seed) == bundle_seed => None,
            Some(seed) => Some(seed),
            None => p.prefix_seed,
        };
    }
    point
}

/// [`measure`]'s attempts: each after the first sends fresh prompt prefixes (the server may
/// hold a lost attempt's prompts in its cache), recorded in the point.
async fn attempts(
    s: &mut Session,
    spec: LoadSpec,
    passes: u32,
    label: String,
    run_prompts: &std::sync::Arc<PromptBuilder>,
) -> Option<Point> {
    let mut discarded: Vec<DiscardedAttempt> = Vec::new();
    let mut fresh: Option<u64> = None;
    loop {
        if !discarded.is_empty() {
            let seed = crate::load::random_prefix_seed();
            fresh = Some(seed);
            s.prompts = std::sync::Arc::new(PromptBuilder {
                prefix_seed: Some(seed),
                ..(**run_prompts).clone()
            });
        }
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
            s.writer.add_hashes(hashes.iter().map(String::as_str));
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
            point.prefix_seed = fresh;
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
            s.options.wait_server.as_secs()
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
                    s.options.wait_server.as_secs()
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
        if generator::server_answers(&s.server.client).await {
            return Waited {
                back: true,
                elapsed_s: began.elapsed().as_secs_f64(),
            };
        }
        let left = s.options.wait_server.saturating_sub(began.elapsed());
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
    if s.options.preopen {
        // Open loop: the cap's worth of connections, else about a second's arrivals.
        let n = match spec.open {
            Some(o) if spec.concurrency == 0 => (o.rate.ceil() as u32).min(1024),
            _ => spec.concurrency,
        };
        s.server.client.preopen(n).await;
    }
    let origin = Instant::now();
    let sampler = Sampler::start_with(
        s.server.telemetry_http.clone(),
        &s.server.client.url(""),
        origin,
        SAMPLE_EVERY,
        s.server.nvidia_smi,
    )
    .await;
    let cpu_before = crate::load::server::host::client_cpu_s();
    let lateness = crate::load::server::host::LatenessProbe::start();
    let result = run_passes(s, spec, passes, label, origin).await;
    let lateness = lateness.finish().await;
    let (server_samples, gpu_samples) = sampler.stop().await;
    if result.finished.is_empty() {
        return None;
    }
    let wall = result.origin.elapsed().as_secs_f64();
    let client_cpu = match (cpu_before, crate::load::server::host::client_cpu_s()) {
        (Some(a), Some(b)) if wall > 0.0 => Some((b - a) / wall),
        _ => None,
    };
    let shared = s.prompts.shared_prefix;
    let mut point = build_point(&spec, &result, shared);
    if s.prompts.dataset.is_some() {
        asked_lengths(&mut point, spec.output_len);
    }
    point.client_cpu = client_cpu;
    // A conversation's later turns resend its history to be served from the cache: the
    // server's counter cannot tell those hits from others. Where the server said per request
    // how many prompt tokens it served from its cache, that is the answer, and the server-wide
    // counter (which counts other clients' traffic too) is not asked.
    let per_request = point.requests.iter().any(|r| r.cached_tokens.is_some());
    if !point.flags.iter().any(|f| f.kind == FlagKind::PrefixCache)
        && !per_request
        && spec.turns <= 1
        && let Some(samples) = &server_samples
    {
        let n = point.requests.len() as u64;
        point.flags.extend(cache_counter_flag(samples, n, shared));
    }
    // A closed loop knows how many requests it has out; more on the server is someone else's.
    if spec.open.is_none()
        && spec.concurrency > 0
        && let Some(samples) = &server_samples
    {
        point
            .flags
            .extend(other_traffic_flag(samples, spec.concurrency));
    }
    tell_what_the_server_did(s, &point, label, shared);
    point.server_samples = server_samples;
    let tokens = point.summary.as_ref().map_or(0, |x| x.output_tokens);
    point.gpu_samples = gpu_samples.map(|g| with_tokens(g, tokens));
    point
        .flags
        .extend(client_bound(s, &point, client_cpu, wall));
    point
        .flags
        .extend(lateness.as_ref().and_then(host_busy_flag));
    point.client_lateness = lateness;
    Some((point, result.outage))
}

/// The point's passes back to back, their requests together; the passes stop early when the
/// run is interrupted or the server goes away.
async fn run_passes(
    s: &Session,
    spec: LoadSpec,
    passes: u32,
    label: &str,
    origin: Instant,
) -> LoadResult {
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
    result
}

/// Tells what the server reported doing beyond the numbers: the shared prefix it cached, the
/// reasoning before the answer, the turns of conversations.
fn tell_what_the_server_did(s: &Session, point: &Point, label: &str, shared: u64) {
    if shared > 0 {
        s.note(&format!("{label}: {}", shared_prefix_words(point, shared)));
    }
    if let Some(words) = reasoning_words(point) {
        s.note(&format!("{label}: {words}"));
    }
    if let Some(words) = turn_words(point) {
        s.note(&format!("{label}: {words}"));
    }
}

/// One client-bound flag: the measured capacity's when it speaks (`llmsweep selftest` was run
/// here), else the CPU's.
fn client_bound(s: &Session, point: &Point, client_cpu: Option<f64>, wall: f64) -> Option<Flag> {
    let near = s.server.capacity.as_ref().and_then(|c| {
        let events: u64 = point
            .requests
            .iter()
            .filter(|r| r.is_ok())
            .map(|r| r.chunks)
            .sum();
        let wall = point.summary.as_ref().map_or(0.0, |x| x.wall_s);
        (wall > 0.0)
            .then(|| crate::load::server::capacity::near_capacity_flag(events as f64 / wall, c))?
    });
    near.or_else(|| client_cpu.and_then(|cores| client_bound_flag(cores, wall)))
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
    let mean = cached.iter().map(|&c| c as f64).sum::<f64>() / cached.len() as f64;
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
        StopRule::Deadline(_) | StopRule::Precise(_) => 1 << 32,
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
        StopRule::Deadline(_) | StopRule::Precise(_) => None,
    };
    s.tell(Event::Sending {
        label: &label,
        total,
    });
    let result = generator::run(
        s.server.client.clone(),
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
pub(crate) fn build_point(spec: &LoadSpec, result: &LoadResult, expected_cached: u64) -> Point {
    let records: Vec<_> = result.finished.iter().map(|f| f.record.clone()).collect();
    // Requests aborted by an interrupt are kept in the records but are not the server's doing:
    // they count neither as failures nor in any number.
    let counted: Vec<_> = records
        .iter()
        .filter(|r| !is_cancelled(r))
        .cloned()
        .collect();
    let aborted = records.len() - counted.len();
    // Sized first: a level's gaps run to millions, and a growing list copies them each time
    // it doubles.
    let ok = || result.finished.iter().filter(|f| f.record.is_ok());
    let mut gaps: Vec<f64> = Vec::with_capacity(ok().map(|f| f.itl_gaps_s.len()).sum());
    for f in ok() {
        gaps.extend_from_slice(&f.itl_gaps_s);
    }
    let summary = summarize(&records, spec.concurrency, spec.output_len, &gaps);
    let mut chunk_tokens = ChunkTokens::new();
    for f in ok() {
        chunk_tokens.merge(&f.chunk_tokens);
    }
    let mut flags = level_flags(&counted, spec.output_len, expected_cached);
    flags.extend(degenerate_flag(&result.finished));
    if spec.open.is_none() && spec.concurrency > 1 {
        flags.extend(llmsweep_shared::metrics::checks::queue_filling_flag(
            &counted,
        ));
    }
    // A level stopped by its cap is flagged when its interval, drawn over the whole level, is
    // still wider than asked: while it ran, the last decode's tokens were not yet known, so a
    // level can reach the cap and still end precise.
    if let StopRule::Precise(p) = spec.stop
        && result.capped
        && summary.steady_pm_pct.is_none_or(|pm| pm > p.steady_pct)
    {
        let reached = summary.steady_pm_pct.map_or_else(
            || "not known (too few waves for an interval)".to_string(),
            |pm| format!("±{pm:.1} %"),
        );
        flags.push(Flag {
            kind: FlagKind::Capped,
            message: format!(
                "stopped sending at the {:.0} s cap (--max-level-time) with steady tok/s known to {reached}, short of the ±{} % asked (--precision)",
                p.cap.as_secs_f64(),
                p.steady_pct
            ),
            count: None,
        });
    }
    if let StopRule::Precise(p) = spec.stop
        && !result.capped
        && !result.interrupted
        && let Some(pm) = summary.steady_pm_pct.filter(|&pm| pm > p.steady_pct)
    {
        flags.push(Flag {
            kind: FlagKind::Imprecise,
            message: format!(
                "stopped sending when its cycles so far agreed to within ±{} %; over the whole level steady tok/s is known to ±{pm:.1} % (--precision)",
                p.steady_pct
            ),
            count: None,
        });
    }
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
        let why = first.map_or("no request succeeded".to_string(), |e| {
            let said = match e.status {
                Some(code) => format!("HTTP {code}: {}", e.message),
                None => e.message.clone(),
            };
            // Only the server's own words are quoted as what it said: a refused connection, a
            // timeout or a bound of llmsweep's are not.
            if crate::load::run::client::is_server_text(e) {
                format!("the server said: {said}")
            } else {
                said
            }
        });
        let n = counted.len();
        (
            PointStatus::Failed,
            Some(format!("all {n} requests failed; {why}")),
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
        chunk_tokens: (chunk_tokens.chunks > 0).then_some(chunk_tokens),
        ..empty_point(spec)
    }
}

/// A dataset's point: its lengths are what its requests asked, not the unused `--input-len` and
/// `--output-len`. The input length is the mean of the prompt tokens the server counted (else
/// of those the prompt was built to, where known), the output length the mean of the tokens
/// each request asked (a line's own `output_len`, else `--output-len`), both rounded; an input
/// length nothing tells stays 0.
pub(crate) fn asked_lengths(point: &mut Point, output_len: u64) {
    let mean = |v: Vec<u64>| -> Option<u64> {
        (!v.is_empty()).then(|| (v.iter().sum::<u64>() as f64 / v.len() as f64).round() as u64)
    };
    let counted: Vec<u64> = point
        .requests
        .iter()
        .filter_map(|r| {
            r.prompt_tokens
                .or((r.input_tokens > 0).then_some(r.input_tokens))
        })
        .collect();
    point.input_len = mean(counted).unwrap_or(0);
    let asked: Vec<u64> = point.requests.iter().map(|r| r.asked(output_len)).collect();
    if let Some(o) = mean(asked) {
        point.output_len = o;
    }
}

/// A point with its parameters and nothing measured.
pub(crate) fn empty_point(spec: &LoadSpec) -> Point {
    Point::empty(spec.concurrency, spec.input_len, spec.output_len)
}

/// Flags the point when the generated text of its successful requests is one thing repeated.
fn degenerate_flag(finished: &[Finished]) -> Option<Flag> {
    let ok = finished.iter().filter(|f| f.record.is_ok());
    let (mut first, mut bad, mut n) = (None, 0u64, 0u64);
    for f in ok {
        n += 1;
        if let Some(d) = degenerate(&f.text) {
            bad += 1;
            first.get_or_insert(d);
        }
    }
    let first = first?;
    Some(Flag {
        kind: FlagKind::Degenerate,
        message: format!(
            "{bad} of {n} requests generated degenerate text ({first}); throughput of garbage is not throughput"
        ),
        count: Some(bad),
    })
}

fn is_cancelled(r: &RequestRecord) -> bool {
    r.error
        .as_ref()
        .is_some_and(|e| e.kind == ErrorKind::Cancelled)
}
