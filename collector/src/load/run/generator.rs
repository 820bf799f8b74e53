//! The load generator: in a closed loop, C workers, each sending its next request as soon as its
//! previous one ends, until the point's budget (a request count, a deadline, or a precision
//! reached within a time cap) is spent; in an open loop, requests sent on a schedule of arrivals, whether or not earlier ones finished.
//!
//! The hot loop only sends, timestamps and forwards records; summaries are computed afterwards.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use llmsweep_shared::bundle::{Due, ErrorKind, RequestError, RequestRecord};

use crate::load::run::client::Client;
use crate::load::run::stream::trace::{Finished, FirstToken, Follow, Keep};
use crate::load::workload::PromptBuilder;
use crate::load::workload::conversation::{Conversation, Ready};

/// When a point stops sending.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StopRule {
    /// After this many requests have been sent.
    Count(u64),
    /// No request is sent after this long; requests in flight finish.
    Deadline(Duration),
    /// Closed loop: no request is sent once the level is as precise as asked, or after the
    /// cap; requests in flight finish, less those the level does not need (see
    /// [`InFlight::cut`]).
    Precise(Precision),
}

/// When a closed-loop level is precise enough to stop sending.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Precision {
    /// Half the 95 % interval of the steady output throughput, in per cent of it.
    pub steady_pct: f64,
    /// No request is sent after this long, precise or not.
    pub cap: Duration,
    /// The server's running limit, when it says: once the level is precise, requests queued
    /// behind it are cut instead of waited for (see [`InFlight::cut`]).
    pub running: Option<u32>,
    /// Seconds one request took alone (the warm-up's), when known: the grace a level waits at
    /// its end when none of its own requests finished (see [`abandon_the_lost`]).
    pub alone_s: Option<f64>,
}

/// Cycles (see [`llmsweep_shared::metrics::steady_cycles`]) a level runs at least before its
/// precision is judged: a few waves of the server's batch, so one odd wave is seen as such.
/// Three cycles' spread (two degrees of freedom) can agree by chance: a level whose interval
/// over all its cycles then comes out wider than asked is flagged `imprecise` (the kpro5 story's
/// C=2 once stopped at ±1.8 % over three and ended at ±2.4 % over four). Asking four costs every
/// level another wave, about 17 s at kpro5's saturation.
pub(crate) const MIN_PRECISE_CYCLES: usize = 3;

/// [`MIN_PRECISE_CYCLES`] below the server's running limit, where a cycle is one decode of a
/// small batch and a level needs more of them anyway: each request's speed varies with its
/// accepted drafts, so a few cycles can agree by chance. Over 75 pairs of default runs against
/// the kpro5 preset (BENCHMARKS.md), five instead of three took `imprecise` levels from 29 to 24
/// of 1,200 (none left at C=8, where they were 2), C=8's interval from ±1.42 to ±1.15 % at the
/// median, and the gate's passes of same-configuration pairs from 24 to 33 of 75, for 3.4 % more
/// time. At and above the limit a cycle is a full batch's decode (17 s at kpro5's saturation):
/// two more at each of the story's four saturated levels could cost two minutes.
pub(crate) const MIN_PRECISE_CYCLES_BELOW_LIMIT: usize = 5;

/// Requests a one-slot level runs at least before its precision is judged. At C=1 a cycle is one
/// request, so [`MIN_PRECISE_CYCLES_BELOW_LIMIT`] would judge five requests' spread, and a few
/// requests can agree by chance: a level stops on a spread that happened to look small and
/// claims an interval its requests do not bear out. Over the 495 C=1 levels of five campaigns of
/// same-configuration runs against the kpro5 preset (BENCHMARKS.md), the interval of a level
/// that stopped at 6 or 7 requests held the runs' mean in 67 % of them, at 8 to 11 in 87 %, at
/// 12 or more in 98 %: one such level (7 requests, 3.9 % slow) was a false "faster" in both
/// builds of a campaign. Twelve cost C=1 about 1.5 requests on average.
pub(crate) const MIN_PRECISE_REQUESTS_ONE_SLOT: usize = 12;

impl Precision {
    /// Whether the requests finished so far at concurrency `c` pin the level down: its steady
    /// throughput over at least [`MIN_PRECISE_CYCLES`] cycles (below the server's running
    /// limit, [`MIN_PRECISE_CYCLES_BELOW_LIMIT`]; at C=1, [`MIN_PRECISE_REQUESTS_ONE_SLOT`])
    /// within the asked share, and enough requests for its TTFT p50 to have an interval.
    /// `decoding_since` is the earliest first token of the requests still in flight (infinite
    /// when none has had one): the cycles after it wait for their tokens (see
    /// [`running_cycles`](llmsweep_shared::metrics::running_cycles)).
    ///
    /// The level stops at the asked width itself, with no margin kept for its final interval:
    /// that one is drawn again over the whole steady window, which adds the wave whose end the
    /// judgement waited for (a cycle counts only once a later completion shows where it ended
    /// and the requests that decoded in it have finished). Over 800 default runs against the
    /// kpro5 preset with 90 % of the asked width as the mark, no final interval came out wider
    /// than asked, and the median ones were ±1.2 to ±1.9 % of the ±2 % asked; that margin cost
    /// the story's C = 2 and C = 16 a wave each (BENCHMARKS.md).
    ///
    /// TTFT p50 is not held to a width: a closed loop's TTFTs cluster by place in the queue
    /// (at C=2 on a server that prefills one at a time, half wait for the other's prefill), and
    /// a median between two clusters stays as wide as the gap however long the level runs.
    ///
    /// When it does: the time the last of those cycles closed. What was sent after it is not
    /// needed (see [`InFlight::cut`]).
    pub fn reached(&self, records: &[RequestRecord], c: u32, decoding_since: f64) -> Option<f64> {
        use llmsweep_shared::compare::interval::latency_log_bounds;
        use llmsweep_shared::metrics::{cycle_pm_pct, percentile, running_cycles};
        let cycles = running_cycles(records, c, decoding_since);
        let least = match self.running {
            _ if c == 1 => MIN_PRECISE_REQUESTS_ONE_SLOT,
            Some(limit) if c < limit => MIN_PRECISE_CYCLES_BELOW_LIMIT,
            _ => MIN_PRECISE_CYCLES,
        };
        if cycles.len() < least {
            return None;
        }
        if !cycle_pm_pct(&cycles).is_some_and(|pm| pm <= self.steady_pct) {
            return None;
        }
        let ttft: Vec<f64> = records
            .iter()
            .filter(|r| r.is_ok())
            .filter_map(|r| r.ttft_s)
            .collect();
        let p50 = percentile(&ttft, 50.0)?;
        latency_log_bounds(ttft, 0.5, p50)?;
        cycles.last().map(|last| last.end_s)
    }
}

/// Ways a run is interrupted: stop sending (the first Ctrl-C), and abort what is in flight (after
/// a grace period, or the second Ctrl-C).
#[derive(Debug, Clone, Default)]
pub struct Interrupt {
    pub stop_sending: CancellationToken,
    pub abort: CancellationToken,
    /// The signal that stopped the run, when one did.
    pub signal: Arc<std::sync::OnceLock<Signal>>,
}

/// The signals a run stops on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C.
    Int,
    /// `kill`, `timeout`, `docker stop`, systemd, CI cancellation.
    Term,
    /// The terminal closed.
    Hup,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::Int => "Ctrl-C",
            Signal::Term => "SIGTERM",
            Signal::Hup => "SIGHUP",
        }
    }

    /// The conventional exit status of a process stopped by it: 128 + its number.
    pub fn exit_code(self) -> u8 {
        match self {
            Signal::Int => 130,
            Signal::Term => 143,
            Signal::Hup => 129,
        }
    }
}

impl Interrupt {
    pub fn is_stopped(&self) -> bool {
        self.stop_sending.is_cancelled()
    }

    /// Runs `work` unless a signal comes first: then it is dropped (a listing or an upload in
    /// flight ends there) and the error says which signal, before anything was measured.
    pub(crate) async fn or_stopped<T>(
        &self,
        work: impl std::future::Future<Output = anyhow::Result<T>>,
    ) -> anyhow::Result<T> {
        tokio::select! {
            r = work => r,
            () = self.stop_sending.cancelled() => {
                let sig = self.signal.get().copied().unwrap_or(Signal::Int);
                Err(anyhow::Error::new(Stopped(sig)))
            }
        }
    }
}

/// A run stopped by a signal before its first request: nothing was measured.
#[derive(Debug, Clone, Copy)]
pub struct Stopped(pub Signal);

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: stopped before the first request; nothing was measured or written",
            self.0.name()
        )
    }
}

impl std::error::Error for Stopped {}

/// One point to run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadSpec {
    pub concurrency: u32,
    pub stop: StopRule,
    pub input_len: u64,
    pub output_len: u64,
    /// Which prompt stream (see [`PromptBuilder::prompt`]).
    pub stream: u64,
    /// The pass over the level this run is (`--repeats`): its records are tagged with it, and
    /// its prompts continue the stream where the previous pass ended.
    pub pass: Option<Pass>,
    /// `--length-spread`: each request's lengths drawn from ±this share (0: fixed).
    pub spread: f64,
    /// `--turns`: requests per conversation (1: every request stands alone).
    pub turns: u32,
    /// Open loop: requests are sent on this schedule instead of by `concurrency` workers,
    /// which is then the cap on those in flight (0: none). The stop rule bounds the schedule.
    pub open: Option<OpenLoop>,
}

/// The input and output length of request `index` of a point: the spec's, or with a spread,
/// each drawn uniformly (whole tokens, at least 1) from ±`spread` around them, from the prompt
/// seed, the point's stream and the index, so a rerun or another host draws the same.
pub(crate) fn lengths(spec: &LoadSpec, seed: u64, index: u64) -> (u64, u64) {
    if spec.spread <= 0.0 {
        return (spec.input_len, spec.output_len);
    }
    let mut rng = crate::load::workload::SplitMix64::new(
        seed ^ spec.stream.rotate_left(17) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x1E46,
    );
    let mut draw = |mid: u64| {
        let lo = ((mid as f64) * (1.0 - spec.spread)).round().max(1.0) as u64;
        let hi = ((mid as f64) * (1.0 + spec.spread)).round() as u64;
        lo + rng.below(hi - lo + 1)
    };
    (draw(spec.input_len), draw(spec.output_len))
}

/// An open-loop point's arrivals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OpenLoop {
    pub rate: f64,
    pub arrival: llmsweep_shared::bundle::Arrival,
    pub burstiness: f64,
    pub seed: u64,
}

/// One pass of a level that runs several.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pass {
    /// 0-based.
    pub index: u32,
    /// The stream index of this pass's first prompt.
    pub first_prompt: u64,
}

/// What a point produced, in request order.
#[derive(Debug)]
pub(crate) struct LoadResult {
    pub finished: Vec<Finished>,
    /// The point's clock origin (records' `start_s` count from here).
    pub origin: Instant,
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// The run was interrupted while this point was running.
    pub interrupted: bool,
    /// Why the point stopped early because the server looked down, when it did.
    pub outage: Option<String>,
    /// A [`StopRule::Precise`] level stopped by its cap before it was precise.
    pub capped: bool,
}

/// Consecutive failures that look like the server is down before a point stops: a blip of one
/// or two is recorded as failures, an outage is waited out.
const OUTAGE_FAILURES: u32 = 3;

/// Follows finished requests for signs that the server is down: connections refused, or a
/// proxy's 502/503/504, one after another with nothing else in between.
///
/// A 502/503/504 is also what a server says when it refuses work it cannot take: when the
/// server still answers `/v1/models`, those are its answers, and the point goes on (see
/// [`OutageWatch::server_answers`]).
#[derive(Debug, Default)]
pub(crate) struct OutageWatch {
    count: u32,
    first: Option<String>,
    /// The last sign was an HTTP status, which the caller should check with a probe.
    http: bool,
    /// The server answered a probe while refusing requests: statuses no longer count.
    refusing: bool,
}

impl OutageWatch {
    /// Sees one finished request; the reason once the server looks down.
    pub(crate) fn see(&mut self, r: &RequestRecord) -> Option<String> {
        let Some((sign, http)) = outage_sign(r).filter(|(_, http)| !(*http && self.refusing))
        else {
            let refusing = self.refusing;
            *self = OutageWatch {
                refusing,
                ..OutageWatch::default()
            };
            return None;
        };
        self.count += 1;
        self.http = http;
        let first = self.first.get_or_insert(sign);
        (self.count >= OUTAGE_FAILURES).then(|| format!("the server stopped answering ({first})"))
    }

    /// Whether the outage just seen needs a probe to tell it from a server refusing work.
    pub(crate) fn needs_probe(&self) -> bool {
        self.http
    }

    /// The probe found the server answering: its statuses are refusals, not an outage.
    pub(crate) fn server_answers(&mut self) {
        *self = OutageWatch {
            refusing: true,
            ..OutageWatch::default()
        };
    }
}

/// What in a failed request says the server is not there, and whether it is an HTTP status.
fn outage_sign(r: &RequestRecord) -> Option<(String, bool)> {
    let e = r.error.as_ref()?;
    match (e.kind, e.status) {
        // The last cause is the one that says it: "Connection refused (os error 111)".
        (ErrorKind::Connect, _) => {
            let cause = e.message.rsplit(": ").next().unwrap_or(&e.message);
            Some((cause.to_string(), false))
        }
        (ErrorKind::Http, Some(code @ (502..=504))) => {
            Some((format!("HTTP {code}: {}", e.message), true))
        }
        _ => None,
    }
}

/// Whether the server answers at all: any HTTP answer to `GET /v1/models` but a gateway's
/// 502/503/504.
pub(crate) async fn server_answers(client: &Client) -> bool {
    let answer = client
        .http()
        .get(client.url("/v1/models"))
        .timeout(Duration::from_secs(2))
        .send()
        .await;
    answer.is_ok_and(|r| !matches!(r.status().as_u16(), 502..=504))
}

/// Runs one point (or one pass of it); `origin` is its clock's zero, and a deadline counts from
/// the call. `on_done` sees each finished request as it completes (for progress display).
pub(crate) async fn run(
    client: Arc<Client>,
    prompts: Arc<PromptBuilder>,
    spec: LoadSpec,
    origin: Instant,
    interrupt: &Interrupt,
    mut on_done: impl FnMut(&Finished),
) -> LoadResult {
    if let Some(open) = spec.open {
        return run_open(client, prompts, spec, open, origin, interrupt, on_done).await;
    }
    let started_at = chrono::Utc::now();
    let begun = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    // An outage stops this point's sending and aborts what it has in flight; an interrupt does
    // both for the whole run.
    let down = CancellationToken::new();
    // Cancelled once a precise level is precise enough.
    let enough = CancellationToken::new();
    let abort = interrupt.abort.child_token();
    let (tx, rx) = mpsc::unbounded_channel();
    let judge = match spec.stop {
        StopRule::Precise(p) => Some(Arc::new(std::sync::Mutex::new(Judge {
            precision: p,
            concurrency: spec.concurrency,
            enough: enough.clone(),
            records: Vec::new(),
            in_flight: InFlight::default(),
        }))),
        _ => None,
    };
    for slot in 0..spec.concurrency {
        let worker = Worker {
            slot: slot as usize,
            client: client.clone(),
            prompts: prompts.clone(),
            next: next.clone(),
            tx: tx.clone(),
            stop_sending: interrupt.stop_sending.clone(),
            down: down.clone(),
            enough: enough.clone(),
            judge: judge.clone(),
            abort: abort.clone(),
            spec,
            origin,
            begun,
        };
        tokio::spawn(worker.run());
    }
    drop(tx);
    let watchdog = match (&judge, spec.stop) {
        (Some(judge), StopRule::Precise(p)) => Some(tokio::spawn(abandon_the_lost(
            judge.clone(),
            enough.clone(),
            begun + p.cap,
            interrupt.stop_sending.clone(),
        ))),
        _ => None,
    };
    let (finished, outage) = collect(&client, rx, &down, &abort, &mut on_done).await;
    if let Some(w) = watchdog {
        w.abort();
    }
    let interrupted = interrupt.is_stopped();
    LoadResult {
        finished,
        origin,
        started_at,
        interrupted,
        capped: matches!(spec.stop, StopRule::Precise(_))
            && !enough.is_cancelled()
            && !interrupted
            && outage.is_none(),
        outage,
    }
}

/// A precise level's requests in flight, by index: when each was sent, how to abort it, and
/// when its first token came.
#[derive(Default)]
struct InFlight {
    sent: std::collections::HashMap<u64, Sent>,
    /// The requests ended by the level rather than by the server, and how each is recorded.
    cut: std::collections::HashMap<u64, Cut>,
}

/// A request of a precise level in flight.
struct Sent {
    at_s: f64,
    abort: CancellationToken,
    first_token: Arc<FirstToken>,
}

/// How a request the level ended is recorded.
struct Cut {
    kind: ErrorKind,
    message: String,
}

/// Why a request cut at a precise level's end has no numbers.
const CUT: &str = "cut at the level's end: it was queued behind the server's running limit when the level became precise, and is not counted";

/// Why a request that had no token before the last cycle a precise level was judged on has no
/// numbers.
const CUT_AFTER: &str = "cut at the level's end: it had no token before the last cycle the level was judged precise on closed, and is not counted";

/// Why a request cut at a level's time cap has no numbers.
const CUT_AT_CAP: &str = "cut at the level's end: it was queued behind the server's running limit when the level reached its time cap (--max-level-time), and is not counted";

/// The least a level waits, once it has ended, for the requests the server is running.
const LEAST_GRACE: Duration = Duration::from_secs(10);

/// How many times its slowest finished request a level waits, once it has ended, for the
/// requests the server is running.
const GRACE_E2E: f64 = 3.0;

impl InFlight {
    /// Once the level is precise, what is in flight and not needed is aborted rather than waited
    /// for, and the level is every request sent before the first of them — a prefix in sending
    /// order, as a fixed count would give, so no request is left out for being slow:
    ///
    /// - what had no token by `judged_s`, the close of the last cycle the level was judged on
    ///   (the longest such run at the end of the sending order). A level is judged about a wave
    ///   after that close, since only a later completion shows where its wave ended, and by then
    ///   that wave's slots were refilled; above the server's running limit, what was queued at
    ///   the close has been admitted since. Each of those requests would run a whole decode for
    ///   a level that has its numbers: at kpro5's C=16, 14 of them kept the level 12 s longer.
    ///   What did decode in the judged cycles finishes, so their tokens are whole;
    /// - what waits in the server's queue (when it says its running limit): the `running`
    ///   oldest in flight are being served; waiting out the rest would take a whole queue's
    ///   worth of time.
    fn cut(&mut self, judged_s: Option<f64>, running: Option<u32>, queued: &'static str) {
        if !self.cut.is_empty() {
            return;
        }
        let mut by_start: Vec<(f64, u64, Option<f64>)> = self
            .sent
            .iter()
            .map(|(&i, s)| (s.at_s, i, s.first_token.get()))
            .collect();
        by_start.sort_by(|a, b| a.0.total_cmp(&b.0));
        let idle = |&(_, _, first): &(f64, u64, Option<f64>)| {
            judged_s.is_some_and(|j| first.is_none_or(|f| f > j))
        };
        let after = by_start.len() - by_start.iter().rev().take_while(|s| idle(s)).count();
        let behind = running.map_or(by_start.len(), |r| (r as usize).min(by_start.len()));
        for (k, &(_, i, _)) in by_start.iter().enumerate().skip(after.min(behind)) {
            if let Some(s) = self.sent.get(&i) {
                s.abort.cancel();
                let why = if k >= after { CUT_AFTER } else { queued };
                self.cut.insert(
                    i,
                    Cut {
                        kind: ErrorKind::Cancelled,
                        message: why.to_string(),
                    },
                );
            }
        }
    }

    /// The earliest first token of the requests in flight; infinite when none has had one.
    fn decoding_since(&self) -> f64 {
        self.sent
            .values()
            .filter_map(|s| s.first_token.get())
            .fold(f64::INFINITY, f64::min)
    }

    /// Once the level has ended and waited its grace: what the server still has not finished
    /// is aborted and counted as failed. A server can lose a request (a real engine once left
    /// one unanswered with its connection open), and the level would otherwise wait the whole
    /// `--timeout` for it while no other request is sent.
    fn abandon(&mut self, waited: Duration, slowest: f64, of: Slowest) {
        let basis = match of {
            Slowest::Level => "the level's slowest request",
            Slowest::Alone => "one request alone in the warm-up, as the level finished none",
        };
        let ids: Vec<u64> = self
            .sent
            .keys()
            .filter(|i| !self.cut.contains_key(i))
            .copied()
            .collect();
        for i in ids {
            if let Some(s) = self.sent.get(&i) {
                s.abort.cancel();
                let message = format!(
                    "unfinished {:.0} s after its level ended ({GRACE_E2E:.0}× {basis}, {slowest:.1} s, and at least {} s): abandoned and counted as failed",
                    waited.as_secs_f64(),
                    LEAST_GRACE.as_secs()
                );
                self.cut.insert(
                    i,
                    Cut {
                        kind: ErrorKind::Timeout,
                        message,
                    },
                );
            }
        }
    }
}

/// Watches a precise level's finished requests and says when it is precise enough.
struct Judge {
    precision: Precision,
    concurrency: u32,
    enough: CancellationToken,
    records: Vec<RequestRecord>,
    in_flight: InFlight,
}

impl Judge {
    /// Takes one finished request and judges the level with it: a worker calls it before it
    /// sends its next request, so none is sent once the level is precise.
    fn see(&mut self, r: &RequestRecord) {
        if self.enough.is_cancelled() {
            return;
        }
        self.records.push(r.clone());
        // A level whose every request fails has no throughput to be precise about: it stops
        // where a fixed level of `max(8, 2C)` requests would have.
        let fixed = (2 * self.concurrency as usize).max(8);
        let none_ok = self.records.len() >= fixed && !self.records.iter().any(|r| r.is_ok());
        let judged = self.precision.reached(
            &self.records,
            self.concurrency,
            self.in_flight.decoding_since(),
        );
        if none_ok || judged.is_some() {
            self.enough.cancel();
            self.in_flight.cut(judged, self.precision.running, CUT);
        }
    }

    /// The longest end-to-end time of the level's successful requests seen so far.
    fn slowest_s(&self) -> Option<f64> {
        self.records
            .iter()
            .filter(|r| r.is_ok())
            .map(|r| r.e2e_s)
            .max_by(f64::total_cmp)
    }

    /// The level reached its time cap before it was precise: as when it is precise, the
    /// requests queued behind the server's running limit are cut rather than waited for (at
    /// C=100 against kpro5 they were 84 requests, about 100 s of waiting).
    fn at_cap(&mut self) {
        if self.enough.is_cancelled() {
            return;
        }
        self.in_flight.cut(None, self.precision.running, CUT_AT_CAP);
    }
}

/// Once a precise level has ended (precise, or at its time cap `cap_at`), waits a grace for the
/// requests the server is running and then abandons the rest ([`InFlight::abandon`]). The grace
/// is [`GRACE_E2E`] times the slowest request the level finished, and at least
/// [`LEAST_GRACE`]; a level that finished none has nothing to measure a grace by, and its
/// requests run to `--timeout`. An interrupted run (`stopped`) ends its requests its own way.
async fn abandon_the_lost(
    judge: Arc<std::sync::Mutex<Judge>>,
    enough: CancellationToken,
    cap_at: Instant,
    stopped: CancellationToken,
) {
    tokio::select! {
        _ = enough.cancelled() => {}
        _ = tokio::time::sleep_until(cap_at.into()) => {}
        _ = stopped.cancelled() => return,
    }
    let ended = Instant::now();
    // The level's slowest request; when none finished, one request alone (the warm-up's): a
    // server that answered the warm-up and then nothing in a whole level has lost the
    // requests, and waiting `--timeout` for them runs no faster.
    let basis = match judge.lock() {
        Ok(j) => match (j.slowest_s(), j.precision.alone_s) {
            (Some(s), _) => Some((s, Slowest::Level)),
            (None, Some(a)) if a.is_finite() && a > 0.0 => Some((a, Slowest::Alone)),
            _ => None,
        },
        Err(_) => return,
    };
    let Some((slowest, of)) = basis else { return };
    let grace = LEAST_GRACE.max(Duration::from_secs_f64(GRACE_E2E * slowest));
    tokio::select! {
        _ = tokio::time::sleep_until((ended + grace).into()) => {}
        _ = stopped.cancelled() => return,
    }
    if let Ok(mut j) = judge.lock() {
        j.in_flight.abandon(grace, slowest, of);
    }
}

/// What a level's grace at its end is measured by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slowest {
    /// The slowest request the level finished.
    Level,
    /// No request of the level finished: one request alone, in the warm-up.
    Alone,
}

/// Gathers a point's finished requests in the order they were sent, watching for an outage
/// (which cancels `down` and `abort`).
async fn collect(
    client: &Client,
    mut rx: mpsc::UnboundedReceiver<(u64, Finished)>,
    down: &CancellationToken,
    abort: &CancellationToken,
    on_done: &mut impl FnMut(&Finished),
) -> (Vec<Finished>, Option<String>) {
    let mut finished = Vec::new();
    let mut watch = OutageWatch::default();
    let mut outage = None;
    while let Some((index, f)) = rx.recv().await {
        on_done(&f);
        if outage.is_none()
            && let Some(why) = watch.see(&f.record)
        {
            if watch.needs_probe() && server_answers(client).await {
                watch.server_answers();
            } else {
                outage = Some(why);
                down.cancel();
                abort.cancel();
            }
        }
        finished.push((index, f));
    }
    finished.sort_by_key(|(i, _)| *i);
    (finished.into_iter().map(|(_, f)| f).collect(), outage)
}

/// An open-loop point: each request is sent when the schedule has it due, whether or not
/// earlier ones finished; with a cap (`spec.concurrency` > 0) a due request waits in the
/// client for one in flight to end, and the wait is recorded apart from the client's lag.
/// With `--turns` each arrival is the next turn of the oldest conversation ready for one, or
/// the first of a new one (see [`Ready`]).
async fn run_open(
    client: Arc<Client>,
    prompts: Arc<PromptBuilder>,
    spec: LoadSpec,
    open: OpenLoop,
    origin: Instant,
    interrupt: &Interrupt,
    mut on_done: impl FnMut(&Finished),
) -> LoadResult {
    use crate::load::workload::arrivals::{Span, schedule};
    let started_at = chrono::Utc::now();
    let span = match spec.stop {
        StopRule::Count(n) => Span::Count(n),
        StopRule::Deadline(d) => Span::Seconds(d.as_secs_f64()),
        StopRule::Precise(p) => Span::Seconds(p.cap.as_secs_f64()),
    };
    let due = schedule(open.arrival, open.rate, open.burstiness, open.seed, span);
    let down = CancellationToken::new();
    let abort = interrupt.abort.child_token();
    let stop = interrupt.stop_sending.clone();
    // The dispatcher releases each arrival at its due time into a queue; the sender takes
    // them in order, waits for the cap when there is one, and starts each request.
    let (due_tx, mut due_rx) = mpsc::unbounded_channel::<(u64, f64, Instant)>();
    let dispatcher = release_arrivals(due, origin, stop.clone(), down.clone(), due_tx);
    let cap = (spec.concurrency > 0)
        .then(|| Arc::new(tokio::sync::Semaphore::new(spec.concurrency as usize)));
    let (tx, rx) = mpsc::unbounded_channel();
    // Conversations come back here when their turn is answered and they have turns left.
    let (back_tx, mut back_rx) = mpsc::unbounded_channel::<Conversation>();
    let sender = {
        let (client, abort, stop, down) =
            (client.clone(), abort.clone(), stop.clone(), down.clone());
        tokio::spawn(async move {
            let mut ready = Ready::default();
            while let Some((index, due_s, released)) = due_rx.recv().await {
                if stop.is_cancelled() || down.is_cancelled() {
                    return;
                }
                let Some(permit) = slot(cap.as_ref(), &stop, &down).await else {
                    return;
                };
                let queued_s = cap
                    .as_ref()
                    .map_or(0.0, |_| released.elapsed().as_secs_f64());
                // Taken after the cap's wait: the request that freed the slot may have made
                // its conversation ready.
                let conversation = (spec.turns > 1).then(|| next_turn(&mut ready, &mut back_rx));
                let arrival = Arrival {
                    conversation,
                    permit,
                    ..Arrival::of(&spec, &prompts, index, Due { due_s, queued_s })
                };
                let to = Replies {
                    done: tx.clone(),
                    back: back_tx.clone(),
                };
                tokio::spawn(send_arrival(
                    arrival,
                    client.clone(),
                    spec,
                    origin,
                    abort.clone(),
                    to,
                ));
            }
        })
    };
    let (finished, outage) = collect(&client, rx, &down, &abort, &mut on_done).await;
    dispatcher.abort();
    let _ = sender.await;
    LoadResult {
        finished,
        origin,
        started_at,
        interrupted: interrupt.is_stopped(),
        outage,
        capped: false,
    }
}

/// Releases each arrival at its due time (seconds after `origin`) into `to`, in order, until
/// the run stops sending or the point is over.
fn release_arrivals(
    due: Vec<f64>,
    origin: Instant,
    stop: CancellationToken,
    down: CancellationToken,
    to: mpsc::UnboundedSender<(u64, f64, Instant)>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        for (i, &t) in due.iter().enumerate() {
            let at = origin + Duration::from_secs_f64(t);
            tokio::select! {
                _ = tokio::time::sleep_until(at.into()) => {}
                _ = stop.cancelled() => return,
                _ = down.cancelled() => return,
            }
            if to.send((i as u64, t, Instant::now())).is_err() {
                return;
            }
        }
    })
}

/// One open-loop arrival, ready to send: its prompt and output length, when it was due and how
/// long it waited for the cap, the conversation it continues, and its slot under the cap.
struct Arrival {
    index: u64,
    due: Due,
    user: crate::load::workload::Prompt,
    output_len: u64,
    /// The output length is the request's own (a spread or a dataset line's), so it is recorded.
    own_len: bool,
    conversation: Option<Conversation>,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Arrival {
    /// Arrival `index` of the point, its prompt and lengths from the plan, no conversation yet
    /// and no slot.
    fn of(spec: &LoadSpec, prompts: &PromptBuilder, index: u64, due: Due) -> Arrival {
        let (input_len, output_len) = lengths(spec, prompts.seed, index);
        let user = prompts.request(spec.stream, index, input_len);
        Arrival {
            index,
            due,
            output_len: user.output_len.unwrap_or(output_len),
            own_len: spec.spread > 0.0 || user.output_len.is_some(),
            user,
            conversation: None,
            permit: None,
        }
    }
}

/// The conversation the next arrival continues: the oldest whose last turn was answered (those
/// answered since are taken in first), or a new one.
fn next_turn(ready: &mut Ready, back: &mut mpsc::UnboundedReceiver<Conversation>) -> Conversation {
    while let Ok(c) = back.try_recv() {
        ready.put(c);
    }
    ready.next()
}

/// A slot under the cap, when there is one (`Some(None)` without a cap); `None` when the run
/// stops sending or the point ends first.
async fn slot(
    cap: Option<&Arc<tokio::sync::Semaphore>>,
    stop: &CancellationToken,
    down: &CancellationToken,
) -> Option<Option<tokio::sync::OwnedSemaphorePermit>> {
    let Some(sem) = cap else {
        return Some(None);
    };
    tokio::select! {
        p = sem.clone().acquire_owned() => Some(p.ok()),
        _ = stop.cancelled() => None,
        _ = down.cancelled() => None,
    }
}

/// Where an arrival's request reports: the finished request, and its conversation when it has
/// turns left.
struct Replies {
    done: mpsc::UnboundedSender<(u64, Finished)>,
    back: mpsc::UnboundedSender<Conversation>,
}

/// Sends one arrival's request and hands its record on; its conversation is ready again before
/// its slot is freed, so the arrival waiting for the slot finds it.
async fn send_arrival(
    a: Arrival,
    client: Arc<Client>,
    spec: LoadSpec,
    origin: Instant,
    abort: CancellationToken,
    to: Replies,
) {
    let resent = a
        .conversation
        .as_ref()
        .and_then(|c| c.prompt(&a.user, client.api));
    let keep = a
        .conversation
        .as_ref()
        .map_or(Keep::Start, |c| c.keep(spec.turns));
    let mut f = client
        .generate(
            a.index as usize,
            resent.as_ref().unwrap_or(&a.user),
            a.output_len,
            origin,
            &abort,
            keep.into(),
        )
        .await;
    if let Some(c) = a
        .conversation
        .and_then(|c| c.answered(a.user.text, &mut f, spec.turns))
    {
        let _ = to.back.send(c);
    }
    drop(a.permit);
    f.record.due = Some(a.due);
    if a.own_len {
        f.record.output_asked = Some(a.output_len);
    }
    let _ = to.done.send((a.index, f));
}

const YIELDS: usize = 4;

struct Worker {
    /// Which of the level's workers: picks its connection pool.
    slot: usize,
    client: Arc<Client>,
    prompts: Arc<PromptBuilder>,
    next: Arc<AtomicU64>,
    tx: mpsc::UnboundedSender<(u64, Finished)>,
    stop_sending: CancellationToken,
    /// The server looks down: stop sending.
    down: CancellationToken,
    /// The level is precise enough: stop sending.
    enough: CancellationToken,
    /// A precise level's judge, shared by its workers.
    judge: Option<Arc<std::sync::Mutex<Judge>>>,
    abort: CancellationToken,
    spec: LoadSpec,
    origin: Instant,
    /// When this run began, for its deadline.
    begun: Instant,
}

impl Worker {
    async fn run(self) {
        // The conversation in progress (`--turns`).
        let mut conversation = Conversation::default();
        loop {
            if self.stop_sending.is_cancelled()
                || self.down.is_cancelled()
                || self.enough.is_cancelled()
            {
                return;
            }
            let deadline = match self.spec.stop {
                StopRule::Deadline(d) => Some(d),
                StopRule::Precise(p) => Some(p.cap),
                StopRule::Count(_) => None,
            };
            if deadline.is_some_and(|d| self.begun.elapsed() >= d) {
                if let Some(judge) = &self.judge
                    && let Ok(mut j) = judge.lock()
                {
                    j.at_cap();
                }
                return;
            }
            let index = self.next.fetch_add(1, Ordering::Relaxed);
            if let StopRule::Count(n) = self.spec.stop
                && index >= n
            {
                return;
            }
            let first = self.spec.pass.map_or(0, |p| p.first_prompt);
            let (input_len, output_len) = lengths(&self.spec, self.prompts.seed, first + index);
            let user = self
                .prompts
                .request(self.spec.stream, first + index, input_len);
            let resent = conversation.prompt(&user, self.client.api);
            let prompt = resent.as_ref().unwrap_or(&user);
            let output_len = prompt.output_len.unwrap_or(output_len);
            let own_len = self.spec.spread > 0.0 || prompt.output_len.is_some();
            // A precise level's request can be cut alone at the level's end, and its judge
            // follows its first token.
            let keep = conversation.keep(self.spec.turns);
            let (abort, follow) = match &self.judge {
                Some(judge) => {
                    let abort = self.abort.child_token();
                    let first_token = Arc::new(FirstToken::default());
                    if let Ok(mut j) = judge.lock() {
                        // Judged precise since this worker last looked: sending now would put
                        // a request after those the level cut.
                        if j.enough.is_cancelled() {
                            return;
                        }
                        let sent = Sent {
                            at_s: self.origin.elapsed().as_secs_f64(),
                            abort: abort.clone(),
                            first_token: first_token.clone(),
                        };
                        j.in_flight.sent.insert(index, sent);
                    }
                    let follow = Follow {
                        keep,
                        first_token: Some(first_token),
                    };
                    (abort, follow)
                }
                None => (self.abort.clone(), keep.into()),
            };
            let mut f = self
                .client
                .generate(self.slot, prompt, output_len, self.origin, &abort, follow)
                .await;
            if own_len {
                f.record.output_asked = Some(output_len);
            }
            f.record.repeat = self.spec.pass.map(|p| p.index);
            if let Some(judge) = &self.judge
                && let Ok(mut j) = judge.lock()
            {
                j.in_flight.sent.remove(&index);
                if let Some(cut) = j.in_flight.cut.remove(&index) {
                    if let Some(e) = f.record.error.as_mut() {
                        e.kind = cut.kind;
                        e.message = cut.message;
                    } else if cut.kind == ErrorKind::Cancelled {
                        // Cut as it finished, it is still cut: the level is a prefix in sending
                        // order, and its steady window closed before this one was sent.
                        f.record.error = Some(RequestError {
                            kind: cut.kind,
                            status: None,
                            message: cut.message,
                        });
                    }
                } else {
                    j.see(&f.record);
                }
            }
            if self.spec.turns > 1 {
                conversation = std::mem::take(&mut conversation)
                    .answered(user.text, &mut f, self.spec.turns)
                    .unwrap_or_default();
            }
            if self.tx.send((index, f)).is_err() {
                return;
            }
            // The connection goes back to the pool a few task hops after the body ends; the
            // next request, sent before that, would open a connection of its own. Meanwhile
            // the collector sees the record, and a precise level may have had enough.
            for _ in 0..YIELDS {
                tokio::task::yield_now().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(kind: ErrorKind, status: Option<u16>) -> RequestRecord {
        RequestRecord {
            error: Some(RequestError {
                kind,
                status,
                message: "connection refused".into(),
            }),
            ..RequestRecord::test_failed(0.0, 0.001)
        }
    }

    #[test]
    fn below_the_running_limit_a_level_needs_five_cycles_and_three_at_it() {
        use llmsweep_shared::metrics::running_cycles;
        // Two slots in lock step, 100 tokens in exactly 2 s a request: every cycle agrees.
        let waves = |n: usize| -> Vec<RequestRecord> {
            (0..2 * n)
                .map(|i| RequestRecord::test_ok(2.0 * (i / 2) as f64, 0.1, 2.0, 100))
                .collect()
        };
        let p = asked_2_pct;
        let four = (1..20)
            .map(waves)
            .find(|rs| running_cycles(rs, 2, f64::INFINITY).len() == 4)
            .unwrap();
        // Four cycles: enough at the server's running limit (or when it says none), not below.
        assert!(p(Some(2)).reached(&four, 2, f64::INFINITY).is_some());
        assert!(p(None).reached(&four, 2, f64::INFINITY).is_some());
        assert!(p(Some(16)).reached(&four, 2, f64::INFINITY).is_none());
        let five = (1..20)
            .map(waves)
            .find(|rs| running_cycles(rs, 2, f64::INFINITY).len() == 5)
            .unwrap();
        assert!(p(Some(16)).reached(&five, 2, f64::INFINITY).is_some());
    }

    /// The default rule: ±2 % within a 120 s cap, against a server running `running`.
    fn asked_2_pct(running: Option<u32>) -> Precision {
        Precision {
            steady_pct: 2.0,
            cap: Duration::from_secs(120),
            running,
            alone_s: None,
        }
    }

    #[test]
    fn one_slot_is_judged_from_its_twelfth_request() {
        // Requests that agree exactly: any number of them is precise, but fewer than twelve
        // are not judged.
        let level = |n: usize| -> Vec<RequestRecord> {
            (0..n)
                .map(|i| RequestRecord::test_ok(2.0 * i as f64, 0.1, 2.0, 100))
                .collect()
        };
        let p = asked_2_pct(Some(16));
        assert!(p.reached(&level(11), 1, f64::INFINITY).is_none());
        assert!(p.reached(&level(12), 1, f64::INFINITY).is_some());
    }

    #[test]
    fn one_slot_is_not_held_back_by_a_drift_below_the_timing_resolution() {
        // The story's C=1 level: 18 requests of about 7 s, one after another, whose TTFTs rose
        // by a millisecond over the level (0.1508 to 0.1522 s). Taken at the microsecond, that
        // drift left their median no interval from the 16th request on, and the level ran to
        // its 120 s cap; its steady rate was within the asked ±2 % all along.
        let mut at = 0.0;
        let rs: Vec<RequestRecord> = llmsweep_shared::test_support::ONE_SLOT_TTFTS
            .iter()
            .enumerate()
            .map(|(i, &ttft)| {
                let e2e = if i % 2 == 0 { 6.9 } else { 7.1 };
                let r = RequestRecord::test_ok(at, ttft, e2e, 500);
                at += e2e;
                r
            })
            .collect();
        let p = asked_2_pct(Some(16));
        for n in 12..=18 {
            assert!(
                p.reached(&rs[..n], 1, f64::INFINITY).is_some(),
                "{n} requests"
            );
        }
    }

    #[test]
    fn a_level_stops_at_the_asked_precision_itself() {
        use llmsweep_shared::metrics::{cycle_pm_pct, running_cycles};
        // `c` slots in lock step, twelve waves of 100-token requests back to back, each wave
        // taking 2 s less and more by turns.
        let level = |c: u32, x: f64| -> Vec<RequestRecord> {
            let mut at = 0.0;
            (0..12)
                .flat_map(|i| {
                    let e2e = if i % 2 == 0 { 2.0 - x } else { 2.0 + x };
                    let wave = (0..c).map(move |_| RequestRecord::test_ok(at, 0.1, e2e, 100));
                    at += e2e;
                    wave.collect::<Vec<_>>()
                })
                .collect()
        };
        let p = asked_2_pct(Some(16));
        for c in [1, 2] {
            let pm = |rs: &[RequestRecord]| cycle_pm_pct(&running_cycles(rs, c, f64::INFINITY));
            let spread = |lo: f64, hi: f64| {
                (1..2000)
                    .map(|k| level(c, k as f64 * 0.0002))
                    .find(|rs| pm(rs).is_some_and(|pm| pm > lo && pm < hi))
                    .unwrap()
            };
            // Just inside the asked ±2 %, where a tenth kept as margin would have gone on.
            let inside = spread(1.9, 2.0);
            assert!(
                p.reached(&inside, c, f64::INFINITY).is_some(),
                "C={c}: {:?}",
                pm(&inside)
            );
            let outside = spread(2.0, 2.1);
            assert!(
                p.reached(&outside, c, f64::INFINITY).is_none(),
                "C={c}: {:?}",
                pm(&outside)
            );
        }
    }

    #[test]
    fn a_request_still_decoding_holds_back_the_cycles_it_decoded_in() {
        // Two slots, 100 tokens a request, the first at 0.1 s: slot A's take 2 s each from
        // t = 0; slot B's first takes 5 s, the rest 2 s. Finished by t = 20: A's ten and B's
        // seven; their waves close at 2 (left out), 5, 8, 11, 14 and 17 (see shared's
        // `running_cycles`).
        let mut rs: Vec<RequestRecord> = (0..10)
            .map(|i| RequestRecord::test_ok(2.0 * i as f64, 0.1, 2.0, 100))
            .collect();
        rs.push(RequestRecord::test_ok(0.0, 0.1, 5.0, 100));
        rs.extend((0..7).map(|i| RequestRecord::test_ok(5.0 + 2.0 * i as f64, 0.1, 2.0, 100)));
        // Below the running limit a level needs five cycles; the width asked is loose enough
        // that the cycles' count alone decides.
        let p = Precision {
            steady_pct: 50.0,
            cap: Duration::from_secs(120),
            running: Some(16),
            alone_s: None,
        };
        let send = |in_flight: &mut InFlight, index: u64, first_token: Option<f64>| {
            let told = Arc::new(FirstToken::default());
            if let Some(t) = first_token {
                told.set(t);
            }
            let sent = Sent {
                at_s: 0.0,
                abort: CancellationToken::new(),
                first_token: told,
            };
            in_flight.sent.insert(index, sent);
        };
        // B's next request, sent at 19, not decoding yet: every closed wave counts.
        let mut in_flight = InFlight::default();
        send(&mut in_flight, 17, None);
        assert_eq!(in_flight.decoding_since(), f64::INFINITY);
        assert!(p.reached(&rs, 2, in_flight.decoding_since()).is_some());
        // Its first token at 19.1, after the last closed wave: still five cycles.
        let mut in_flight = InFlight::default();
        send(&mut in_flight, 17, Some(19.1));
        assert_eq!(in_flight.decoding_since(), 19.1);
        assert!(p.reached(&rs, 2, in_flight.decoding_since()).is_some());
        // Another, decoding since 16: the wave closing at 17 waits for its tokens.
        send(&mut in_flight, 18, Some(16.0));
        assert_eq!(in_flight.decoding_since(), 16.0);
        assert!(p.reached(&rs, 2, in_flight.decoding_since()).is_none());
    }

    #[test]
    fn an_outage_is_three_refusals_in_a_row() {
        let refused = failed(ErrorKind::Connect, None);
        let mut w = OutageWatch::default();
        assert_eq!(w.see(&refused), None);
        assert_eq!(w.see(&refused), None, "a blip");
        assert_eq!(
            w.see(&refused).as_deref(),
            Some("the server stopped answering (connection refused)")
        );
        // Anything else in between starts the count again: a success, a timeout, a 400.
        let mut w = OutageWatch::default();
        w.see(&refused);
        w.see(&refused);
        w.see(&failed(ErrorKind::Timeout, None));
        w.see(&refused);
        assert_eq!(w.see(&refused), None);
        assert!(w.see(&refused).is_some());
        // A proxy's 503 counts, to be checked with a probe; a server's own 500 does not.
        let mut w = OutageWatch::default();
        for _ in 0..5 {
            assert_eq!(w.see(&failed(ErrorKind::Http, Some(500))), None);
        }
        w.see(&failed(ErrorKind::Http, Some(503)));
        w.see(&failed(ErrorKind::Http, Some(502)));
        let why = w.see(&failed(ErrorKind::Http, Some(503))).unwrap();
        assert!(why.contains("HTTP 503") && w.needs_probe(), "{why}");
        // The server answers the probe: from then on its 503s are its answers, but a refused
        // connection still means it went away.
        w.server_answers();
        for _ in 0..5 {
            assert_eq!(w.see(&failed(ErrorKind::Http, Some(503))), None);
        }
        w.see(&refused);
        w.see(&refused);
        assert!(w.see(&refused).is_some() && !w.needs_probe());
    }
}
