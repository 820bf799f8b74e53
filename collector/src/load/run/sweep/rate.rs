//! The open-loop rate sweep (`--rates`) and the search for the highest rate that meets the SLO
//! (`--find-max-rate`), which starts from a closed-loop level at the server's running limit.

use llmsweep_shared::bundle::{
    Arrival, FlagKind, Point, RatePlan, RateSearch, RequestRecord, Slo, Sweep, SweepKind,
};

use crate::load::events::Event;
use crate::load::plan::{
    MAX_RATE, MAX_RATE_POINT_S, OpenPlan, SearchPlan, ThroughputPlan, rate_words, time_words,
};
use crate::load::run::generator::{LoadSpec, OpenLoop, StopRule};
use crate::load::run::session::Session;
use crate::load::run::writer::SweepHandle;

use super::point::{gave_up, measure, stop_when_refused_from_the_start, stream_id};

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
    let sweep = s.start_sweep(
        None,
        rate_sweep(s, plan, open, open.rates.clone(), None, warmup),
    );
    s.note(&sweep_estimate(plan, &open.rates));
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
        let Some(point) = measure_rate(s, plan, open, rate, plan.stop_at_rate(rate)).await else {
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

/// The time a rate sweep will take, told before its first point: each point's arrivals
/// (`--duration`, or its requests / its rate), and the sum.
fn sweep_estimate(plan: &ThroughputPlan, rates: &[f64]) -> String {
    let each: Vec<f64> = rates.iter().map(|&r| plan.seconds_at_rate(r)).collect();
    let total: f64 = each.iter().sum();
    let per = match (plan.duration, rates.len()) {
        (Some(d), n) => format!("{} at each of {n} rates", time_words(d.as_secs_f64())),
        (None, 1) => format!("{} requests", plan.requests_at_rate(rates[0]).unwrap_or(0)),
        (None, _) => rates
            .iter()
            .zip(&each)
            .map(|(r, t)| format!("{} req/s {}", rate_words(*r), time_words(*t)))
            .collect::<Vec<_>>()
            .join(", "),
    };
    format!(
        "the rate sweep sends about {} of arrivals ({per}), and each point waits for its last requests to finish",
        time_words(total)
    )
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
    stop: StopRule,
) -> Option<Point> {
    let spec = LoadSpec {
        concurrency: open.max_concurrency.unwrap_or(0),
        stop,
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
    let label = format!("{} req/s", rate_text(rate));
    let mut point = measure(s, spec, 1, label.clone()).await?;
    stop_when_refused_from_the_start(s, &point, &label);
    // An interrupted point stopped sending before its --duration was over: its window is not
    // known, only its sends.
    let interrupted = point.flags.iter().any(|f| f.kind == FlagKind::Interrupted);
    let duration = match stop {
        StopRule::Deadline(d) if !interrupted => Some(d.as_secs_f64()),
        _ => None,
    };
    point.rate = Some(
        llmsweep_shared::metrics::rate_point(&point.requests, rate, duration).unwrap_or(
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

/// Requests in flight on average (Little's law: rate × the time one request takes) at or below
/// which the server is all but idle: a request rarely meets another, so a lower rate cannot
/// make requests faster.
const IDLE_IN_FLIGHT: f64 = 0.1;

/// `--find-max-rate`: a closed-loop level at the server's running limit gives the rate it
/// completes requests at; open-loop rates are then bisected between a rate that met the SLO
/// (or none) and one that did not, until the bracket is narrower than the precision. The search
/// never asks more than the client showed it can offer (nor the `--rates` cap), nor less than a
/// rate at which the server is idle or a point could not be judged; it says why it stopped.
/// Every point measured is kept: the closed-loop level as a throughput sweep, the rates as a
/// rate sweep whose plan holds the search and its result.
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
    let mut result = RateSearch {
        slo_fraction: search.slo_fraction,
        precision: search.precision,
        closed_loop_rps: closed_rps,
        closed_loop_concurrency: c0,
        found_rps: None,
        failed_rps: None,
    };
    let mut bounds = Bounds::new(plan, search, fastest_e2e(&closed_loop_records(s, c0)), c0);
    let sweep = s.start_sweep(None, rate_sweep(s, plan, open, Vec::new(), Some(result), 0));
    // A resumed search lists the rates it kept (one an interruption cut short runs again).
    let kept: Vec<f64> = s.writer.sweep(sweep).points.iter().map(rate_of).collect();
    if let Some(rp) = s.writer.sweep_mut(sweep).rate.as_mut() {
        rp.rates = kept;
    }
    // Open loop rarely sustains more than the closed loop completed: start there.
    let mut next = Ok(closed_rps.min(bounds.ceiling).max(bounds.floor));
    let mut measured = 0;
    let stopped = loop {
        let rate = match next {
            Ok(rate) => rate,
            Err(why) => break why,
        };
        if measured == MAX_SEARCH_POINTS {
            break format!(
                "stopped: {MAX_SEARCH_POINTS} rates measured, the most one search measures; {}",
                bracket_words(&result)
            );
        }
        measured += 1;
        // A resumed search takes its steps again over the points it kept, measuring none twice.
        let point = match take_kept(s, sweep, rate) {
            Some(p) => p,
            None => {
                match measure_rate(s, plan, open, rate, search_stop(plan, search, rate)).await {
                    Some(p) => p,
                    None => break "stopped: the run was interrupted".to_string(),
                }
            }
        };
        let verdict = judge(&point, rate, &slo, search, open);
        bounds.saw(&point.requests);
        match &verdict {
            Verdict::Met => {
                result.found_rps = Some(result.found_rps.map_or(rate, |f| f.max(rate)));
            }
            Verdict::Missed | Verdict::Short { .. } => {
                result.failed_rps = Some(result.failed_rps.map_or(rate, |f| f.min(rate)));
            }
            Verdict::TooFew { .. } => {}
        }
        let alone = point
            .rate
            .and_then(|r| r.peak_concurrency)
            .is_some_and(|p| p <= 1);
        if verdict == Verdict::Missed && alone {
            bounds.missed_alone(rate);
        }
        if let Verdict::Short { achieved } = verdict {
            s.note(&format!(
                "{} req/s: its arrivals reached only {} req/s, so it does not count as meeting the SLO",
                rate_words(rate),
                rate_words(achieved)
            ));
            bounds.client_short(rate, achieved, open.max_concurrency);
        }
        if let Some(rp) = s.writer.sweep_mut(sweep).rate.as_mut() {
            if !rp.rates.contains(&rate) {
                rp.rates.push(rate);
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
        if s.gave_up {
            let why = s.gave_up_why.as_deref();
            break format!(
                "stopped: {}",
                why.unwrap_or("the server did not answer again")
            );
        }
        if s.interrupt.is_stopped() {
            break "stopped: the run was interrupted".to_string();
        }
        if let Verdict::TooFew { sent } = verdict {
            break format!(
                "stopped: {} req/s sent {sent} requests, too few to judge (at least {}): give a longer --duration or more --requests",
                rate_words(rate),
                search.min_requests()
            );
        }
        next = next_rate(&result, search.precision, &bounds);
    };
    s.note(&stopped);
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

/// When a search point stops sending: `--duration`, else `--requests`, else
/// [`crate::load::plan::RATE_POINT_S`] seconds of arrivals; never fewer than the search judges
/// a rate on.
fn search_stop(plan: &ThroughputPlan, search: SearchPlan, rate: f64) -> StopRule {
    match plan.stop_at_rate(rate) {
        StopRule::Count(n) => StopRule::Count(n.max(search.min_requests())),
        other => other,
    }
}

/// The search's closed-loop level at concurrency `c0`, once measured.
fn closed_loop_point(s: &Session, c0: u32) -> Option<&Point> {
    s.writer
        .bundle()
        .sweeps
        .iter()
        .rev()
        .find(|w| w.kind == SweepKind::Throughput)
        .and_then(|w| w.points.iter().find(|p| p.concurrency == c0))
}

/// The requests of the search's closed-loop level.
fn closed_loop_records(s: &Session, c0: u32) -> Vec<RequestRecord> {
    closed_loop_point(s, c0)
        .map(|p| p.requests.clone())
        .unwrap_or_default()
}

/// The quickest e2e of the successful requests: the nearest measure of the time one request
/// takes on an idle server.
fn fastest_e2e<'a>(records: impl IntoIterator<Item = &'a RequestRecord>) -> Option<f64> {
    records
        .into_iter()
        .filter(|r| r.is_ok() && r.e2e_s.is_finite() && r.e2e_s > 0.0)
        .map(|r| r.e2e_s)
        .reduce(f64::min)
}

/// What a search point says about its rate.
#[derive(Debug, Clone, PartialEq)]
enum Verdict {
    /// Its arrivals reached the rate, and enough of its requests met the SLO.
    Met,
    /// Its arrivals reached the rate, and too few of its requests met the SLO.
    Missed,
    /// Its arrivals fell short of the rate: the client (or `--max-concurrency`) offered only
    /// `achieved` requests per second.
    Short { achieved: f64 },
    /// Too few requests to judge.
    TooFew { sent: u64 },
}

/// Judges a search point at offered `rate`: it meets the SLO only when it sent at least
/// [`SearchPlan::min_requests`], its arrivals reached the rate (within [`rate_room`]), and its
/// goodput (the good requests over its arrivals' window) is at least the SLO's fraction of that
/// share of the rate: a point the client could not offer, or too short to show a sustained
/// rate, does not count.
fn judge(point: &Point, rate: f64, slo: &Slo, search: SearchPlan, open: &OpenPlan) -> Verdict {
    let counted = crate::load::run::writer::counted(point);
    let n = counted.len() as u64;
    if n < search.min_requests() {
        return Verdict::TooFew { sent: n };
    }
    let share = 1.0 - rate_room(open.arrival, open.burstiness, n);
    let achieved = point
        .rate
        .and_then(|r| r.achieved_rps)
        .filter(|a| a.is_finite())
        .unwrap_or(0.0);
    if achieved < share * rate {
        return Verdict::Short { achieved };
    }
    let window = n as f64 / achieved;
    let Some(g) = llmsweep_shared::metrics::goodput(&counted, slo, window) else {
        return Verdict::Missed;
    };
    let met = g.fraction >= search.slo_fraction
        && g.good_rps >= search.slo_fraction * share * rate * (1.0 - 1e-9);
    if met { Verdict::Met } else { Verdict::Missed }
}

/// How far below the asked rate a point's achieved rate may fall and still count as offering
/// it: 10 %, or, for drawn arrivals, two standard errors of the rate `n` of them estimate
/// (a gamma schedule of shape k has gaps with a coefficient of variation 1/√k, Poisson's 1), so
/// a schedule that happened to draw long gaps is not taken for a client that fell behind.
fn rate_room(arrival: Arrival, burstiness: f64, n: u64) -> f64 {
    let cv = match arrival {
        Arrival::Constant => 0.0,
        Arrival::Poisson => 1.0,
        Arrival::Gamma | Arrival::Unknown => 1.0 / burstiness.max(1e-6).sqrt(),
    };
    (2.0 * cv / (n.max(1) as f64).sqrt()).clamp(0.1, 0.5)
}

/// The rates a search may ask for, and why none outside them.
#[derive(Debug, Clone, PartialEq)]
struct Bounds {
    /// The highest rate worth asking: the `--rates` cap, or the rate the client's arrivals
    /// reached when they fell short of one asked.
    ceiling: f64,
    ceiling_why: Ceiling,
    /// The lowest rate worth asking.
    floor: f64,
    floor_why: Floor,
    /// The quickest request measured, seconds: how long one takes on an idle server.
    fastest_e2e_s: Option<f64>,
    /// The closed loop's concurrency, to name it.
    closed_c: u32,
    /// Seconds of `--duration`, when given.
    duration_s: Option<f64>,
    /// Fewest requests a point is judged on.
    min_requests: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Ceiling {
    /// `--rates`' own cap.
    Cap,
    /// The client's arrivals reached only `ceiling` when `asked` was asked.
    Client { asked: f64, capped: Option<u32> },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Floor {
    /// Nothing measured bounds the search from below yet.
    None,
    /// Below the floor a request rarely meets another: the server is idle.
    Idle,
    /// The floor missed the SLO with one request in flight at a time.
    Alone,
    /// Below the floor `--duration` holds too few arrivals to judge.
    Duration,
    /// Below the floor a point of `n` requests would take longer than [`MAX_RATE_POINT_S`].
    Time { requests: u64 },
}

impl Bounds {
    fn new(plan: &ThroughputPlan, search: SearchPlan, fastest: Option<f64>, closed_c: u32) -> Self {
        let mut b = Bounds {
            ceiling: MAX_RATE,
            ceiling_why: Ceiling::Cap,
            floor: 0.0,
            floor_why: Floor::None,
            fastest_e2e_s: fastest,
            closed_c,
            duration_s: plan.duration.map(|d| d.as_secs_f64()),
            min_requests: search.min_requests(),
        };
        match b.duration_s {
            Some(d) => b.raise_floor(b.min_requests as f64 / d, Floor::Duration),
            None => {
                // At the lowest rates a point sends the fewest requests it may be judged on.
                let n = plan.requests.unwrap_or(0).max(b.min_requests);
                b.raise_floor(n as f64 / MAX_RATE_POINT_S, Floor::Time { requests: n });
            }
        }
        b.idle_floor();
        b
    }

    fn raise_floor(&mut self, rate: f64, why: Floor) {
        if rate.is_finite() && rate > self.floor {
            self.floor = rate;
            self.floor_why = why;
        }
    }

    fn idle_floor(&mut self) {
        if let Some(e2e) = self.fastest_e2e_s {
            self.raise_floor(IDLE_IN_FLIGHT / e2e, Floor::Idle);
        }
    }

    /// Takes a measured point's requests into the quickest request seen.
    fn saw(&mut self, records: &[RequestRecord]) {
        if let Some(q) = fastest_e2e(records)
            && self.fastest_e2e_s.is_none_or(|f| q < f)
        {
            self.fastest_e2e_s = Some(q);
            self.idle_floor();
        }
    }

    /// A point at `rate` missed the SLO with never two requests in flight at once: lower
    /// rates leave the server just as idle, and no better.
    fn missed_alone(&mut self, rate: f64) {
        self.raise_floor(rate, Floor::Alone);
    }

    /// The client's arrivals reached only `achieved` when `asked` was asked: no higher rate is
    /// worth asking.
    fn client_short(&mut self, asked: f64, achieved: f64, capped: Option<u32>) {
        if achieved < self.ceiling {
            self.ceiling = achieved.max(0.0);
            self.ceiling_why = Ceiling::Client { asked, capped };
        }
    }

    /// Why the search asks no more than `found`, which met the SLO.
    fn ceiling_words(&self, found: f64) -> String {
        match self.ceiling_why {
            Ceiling::Cap => format!(
                "stopped: {} req/s met the SLO, and {} req/s is the most --rates offers",
                rate_words(found),
                rate_words(MAX_RATE)
            ),
            Ceiling::Client { asked, capped } => {
                let cap = capped.map_or(String::new(), |c| {
                    format!(", with --max-concurrency {c} holding arrivals")
                });
                format!(
                    "stopped: the client could not offer more than {} req/s (asked {} req/s, its arrivals reached {}{cap}); {} req/s met the SLO",
                    rate_words(self.ceiling),
                    rate_words(asked),
                    rate_words(self.ceiling),
                    rate_words(found)
                )
            }
        }
    }

    /// Why the search asks no less than `failed`, which missed the SLO.
    fn floor_words(&self, failed: f64) -> String {
        let missed = format!("stopped: even {} req/s missed the SLO", rate_words(failed));
        match (self.floor_why, self.fastest_e2e_s) {
            (Floor::Idle, Some(e2e)) => format!(
                "{missed}, and no lower rate does better: one request takes {} s even on an idle server (the quickest measured, in the closed loop at C={} or at a rate), so at {} req/s or less requests rarely overlap",
                secs_words(e2e),
                self.closed_c,
                rate_words(self.floor)
            ),
            (Floor::Alone, e2e) => format!(
                "{missed} with never two requests in flight at once: the server was idle, so no lower rate does better{}",
                e2e.map_or(String::new(), |e| format!(
                    " (one request takes {} s at the quickest)",
                    secs_words(e)
                ))
            ),
            (Floor::Duration, _) => format!(
                "{missed}; below {} req/s the {} of --duration hold fewer than the {} arrivals a rate is judged on: give a longer --duration to search lower",
                rate_words(self.floor),
                time_words(self.duration_s.unwrap_or(0.0)),
                self.min_requests
            ),
            (Floor::Time { requests }, _) => format!(
                "{missed}; below {} req/s a point of {requests} requests would take over {}: give --duration to search lower",
                rate_words(self.floor),
                time_words(MAX_RATE_POINT_S)
            ),
            (Floor::None | Floor::Idle, _) => format!("{missed}; no lower rate is worth asking"),
        }
    }
}

/// Seconds with three significant digits: `4.2`, `0.0513`.
fn secs_words(s: f64) -> String {
    rate_words(s)
}

/// The bracket so far, in words.
fn bracket_words(r: &RateSearch) -> String {
    match (r.found_rps, r.failed_rps) {
        (Some(lo), Some(hi)) => format!(
            "{} req/s met the SLO and {} did not, wider apart than {:.0} %",
            rate_words(lo),
            rate_words(hi),
            r.precision * 100.0
        ),
        (Some(lo), None) => format!(
            "{} req/s met the SLO, and no rate missed it",
            rate_words(lo)
        ),
        (None, Some(hi)) => format!("even {} req/s missed the SLO", rate_words(hi)),
        (None, None) => "no rate was judged".to_string(),
    }
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
    let rps = closed_loop_point(s, c0)
        .and_then(|p| p.summary.as_ref())
        .map_or(0.0, |x| x.request_s);
    let usable = rps.is_finite() && rps > 0.0 && !s.gave_up && !s.interrupt.is_stopped();
    Ok(usable.then_some((c0, rps)))
}

/// The search's next rate: the middle of the bracket, double the best rate while every rate met
/// the SLO, half the lowest while none did, within `bounds`; `Err` with the line that says why
/// the search stops: the bracket is within the precision, or the next rate would be outside
/// the bounds.
fn next_rate(r: &RateSearch, precision: f64, bounds: &Bounds) -> Result<f64, String> {
    let want = match (r.found_rps, r.failed_rps) {
        (Some(lo), Some(hi)) if hi - lo <= precision * hi => {
            return Err(format!(
                "stopped: {} req/s met the SLO and {} did not, within {} %",
                rate_words(lo),
                rate_words(hi),
                rate_words(precision * 100.0)
            ));
        }
        (Some(lo), Some(hi)) => (lo + hi) / 2.0,
        (Some(lo), None) => lo * 2.0,
        (None, Some(hi)) => hi / 2.0,
        (None, None) => return Err("stopped: no rate was judged".to_string()),
    };
    let next = want.min(bounds.ceiling).max(bounds.floor);
    if let Some(lo) = r.found_rps
        && next <= lo
    {
        return Err(bounds.ceiling_words(lo));
    }
    if let Some(hi) = r.failed_rps
        && next >= hi
    {
        return Err(bounds.floor_words(hi));
    }
    Ok(next)
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
    use llmsweep_shared::bundle::Due;

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

    const SEARCH: SearchPlan = SearchPlan {
        slo_fraction: 0.9,
        precision: 0.05,
    };

    fn plan(requests: Option<u64>, duration_s: Option<f64>) -> ThroughputPlan {
        ThroughputPlan {
            concurrency: vec![1],
            until_saturated: false,
            input_len: 16,
            output_len: 4,
            shapes: Vec::new(),
            requests,
            duration: duration_s.map(std::time::Duration::from_secs_f64),
            repeats: 1,
            open: None,
            spread: 0.0,
            turns: 1,
            precision: None,
        }
    }

    /// Bounds with nothing measured but the quickest request, `e2e` s.
    fn bounds(e2e: Option<f64>) -> Bounds {
        Bounds::new(&plan(Some(40), None), SEARCH, e2e, 32)
    }

    fn open() -> OpenPlan {
        OpenPlan {
            rates: Vec::new(),
            search: Some(SEARCH),
            arrival: Arrival::Constant,
            burstiness: 1.0,
            max_concurrency: None,
        }
    }

    /// A point at `rate` of `n` evenly spaced arrivals, sent `late` s behind by its end, of
    /// which the first `good` met a TTFT bound of 1 s.
    fn point(rate: f64, n: u64, late: f64, good: u64) -> Point {
        let mut p = Point::empty(0, 16, 4);
        p.requests = (0..n)
            .map(|i| {
                let due = i as f64 / rate;
                let start = due + late * i as f64 / (n - 1).max(1) as f64;
                let ttft = if i < good { 0.1 } else { 2.0 };
                let mut r = RequestRecord::test_ok(start, ttft, ttft + 0.1, 4);
                r.due = Some(Due {
                    due_s: due,
                    queued_s: 0.0,
                });
                r
            })
            .collect();
        p.rate = llmsweep_shared::metrics::rate_point(&p.requests, rate, None);
        p
    }

    fn ttft_1s() -> Slo {
        Slo {
            ttft_s: Some(1.0),
            tpot_s: None,
            e2e_s: None,
        }
    }

    #[test]
    fn a_rate_meets_the_slo_only_when_its_arrivals_and_goodput_reach_it() {
        let slo = ttft_1s();
        // 20 arrivals on schedule, 18 good: met. 17 good: missed.
        assert_eq!(
            judge(&point(10.0, 20, 0.0, 18), 10.0, &slo, SEARCH, &open()),
            Verdict::Met
        );
        assert_eq!(
            judge(&point(10.0, 20, 0.0, 17), 10.0, &slo, SEARCH, &open()),
            Verdict::Missed
        );
        // Every request good, but the client sent 20 arrivals asked over 2 s in 3.9 s: it
        // offered 20 / 3.9 = 5.13 req/s, not 10.
        let behind = point(10.0, 20, 1.9, 20);
        assert_eq!(
            judge(&behind, 10.0, &slo, SEARCH, &open()),
            Verdict::Short {
                achieved: 20.0 / 3.9
            }
        );
        // The report's case: 8 requests, all good, at a rate the client could not send: too
        // few to judge, whatever they say.
        assert_eq!(
            judge(
                &point(273_919.0, 8, 0.0, 8),
                273_919.0,
                &slo,
                SEARCH,
                &open()
            ),
            Verdict::TooFew { sent: 8 }
        );
        // Aborted requests are not counted toward the minimum.
        let mut cut = point(10.0, 20, 0.0, 20);
        cut.requests[19].error = Some(llmsweep_shared::bundle::RequestError {
            kind: llmsweep_shared::bundle::ErrorKind::Cancelled,
            status: None,
            message: "aborted".into(),
        });
        assert_eq!(
            judge(&cut, 10.0, &slo, SEARCH, &open()),
            Verdict::TooFew { sent: 19 }
        );
    }

    #[test]
    fn drawn_arrivals_get_room_for_their_own_spread() {
        // Constant: 10 %. Poisson: two standard errors of the rate 100 gaps estimate, 20 %;
        // of 10 000 gaps, still 10 %. Gamma of shape 4: half Poisson's.
        assert_eq!(rate_room(Arrival::Constant, 1.0, 20), 0.1);
        assert_eq!(rate_room(Arrival::Poisson, 1.0, 100), 0.2);
        assert_eq!(rate_room(Arrival::Poisson, 1.0, 10_000), 0.1);
        assert_eq!(rate_room(Arrival::Gamma, 4.0, 100), 0.1);
        assert_eq!(rate_room(Arrival::Poisson, 1.0, 4), 0.5);
    }

    #[test]
    fn the_search_bisects_doubles_halves_and_stops_within_the_precision() {
        let b = bounds(None);
        assert_eq!(next_rate(&search(Some(4.0), Some(8.0)), 0.05, &b), Ok(6.0));
        assert_eq!(next_rate(&search(Some(8.0), None), 0.05, &b), Ok(16.0));
        assert_eq!(next_rate(&search(None, Some(8.0)), 0.05, &b), Ok(4.0));
        assert_eq!(
            next_rate(&search(Some(12.5), Some(13.0)), 0.05, &b),
            Err("stopped: 12.5 req/s met the SLO and 13 did not, within 5 %".into())
        );
        assert_eq!(
            next_rate(&search(None, None), 0.05, &b),
            Err("stopped: no rate was judged".into())
        );
    }

    #[test]
    fn the_search_never_asks_above_the_cap_or_what_the_client_offered() {
        // Every rate met the SLO up to the --rates cap: it is asked once, and no higher.
        let b = bounds(None);
        assert_eq!(
            next_rate(&search(Some(60_000.0), None), 0.05, &b),
            Ok(MAX_RATE)
        );
        assert_eq!(
            next_rate(&search(Some(MAX_RATE), None), 0.05, &b),
            Err(
                "stopped: 100,000 req/s met the SLO, and 100,000 req/s is the most --rates offers"
                    .into()
            )
        );
        // Asked 26 000, the client's arrivals reached 13 000: nothing above 13 000 is asked,
        // and once 13 000 met the SLO the search stops there.
        let mut b = bounds(None);
        b.client_short(26_000.0, 13_000.0, None);
        assert_eq!(
            next_rate(&search(Some(12_000.0), Some(26_000.0)), 0.05, &b),
            Ok(13_000.0)
        );
        assert_eq!(
            next_rate(&search(Some(13_000.0), Some(26_000.0)), 0.05, &b),
            Err("stopped: the client could not offer more than 13,000 req/s (asked 26,000 req/s, its arrivals reached 13,000); 13,000 req/s met the SLO".into())
        );
    }

    #[test]
    fn the_search_never_halves_below_an_idle_server_or_a_judgeable_point() {
        // One request takes 4.2 s at the quickest: at 0.1 / 4.2 = 0.0238 req/s or less the
        // server is idle. Halving from 0.04 goes no lower than that, and a miss there stops.
        let b = bounds(Some(4.2));
        assert_eq!(b.floor, 0.1 / 4.2);
        assert_eq!(
            next_rate(&search(None, Some(0.04)), 0.05, &b),
            Ok(0.1 / 4.2)
        );
        assert_eq!(
            next_rate(&search(None, Some(0.1 / 4.2)), 0.05, &b),
            Err("stopped: even 0.0238 req/s missed the SLO, and no lower rate does better: one request takes 4.2 s even on an idle server (the quickest measured, in the closed loop at C=32 or at a rate), so at 0.0238 req/s or less requests rarely overlap".into())
        );
        // A miss with never two requests in flight at once stops at once.
        let mut b = bounds(Some(0.5));
        b.missed_alone(0.5);
        assert_eq!(
            next_rate(&search(None, Some(0.5)), 0.05, &b),
            Err("stopped: even 0.5 req/s missed the SLO with never two requests in flight at once: the server was idle, so no lower rate does better (one request takes 0.5 s at the quickest)".into())
        );
        // --duration 10 holds 20 arrivals (the fewest a rate is judged on) at 2 req/s.
        let b = Bounds::new(&plan(None, Some(10.0)), SEARCH, None, 32);
        assert_eq!(next_rate(&search(None, Some(3.0)), 0.05, &b), Ok(2.0));
        assert_eq!(
            next_rate(&search(None, Some(2.0)), 0.05, &b),
            Err("stopped: even 2 req/s missed the SLO; below 2 req/s the 10 s of --duration hold fewer than the 20 arrivals a rate is judged on: give a longer --duration to search lower".into())
        );
        // 40 requests a point: below 40 per hour a point takes over an hour.
        let b = bounds(None);
        assert_eq!(
            next_rate(&search(None, Some(40.0 / 3600.0)), 0.05, &b),
            Err("stopped: even 0.0111 req/s missed the SLO; below 0.0111 req/s a point of 40 requests would take over 60 min: give --duration to search lower".into())
        );
    }

    #[test]
    fn a_rate_sweep_tells_its_time_before_its_first_point() {
        // 30 s of arrivals per point by default, at least 16: 160 s at 0.1 req/s.
        assert_eq!(
            sweep_estimate(&plan(None, None), &[0.1, 1.0, 8.0]),
            "the rate sweep sends about 4 min of arrivals (0.1 req/s 3 min, 1 req/s 30 s, 8 req/s 30 s), and each point waits for its last requests to finish"
        );
        assert_eq!(
            sweep_estimate(&plan(None, Some(10.0)), &[1.0, 2.0, 4.0, 8.0]),
            "the rate sweep sends about 40 s of arrivals (10 s at each of 4 rates), and each point waits for its last requests to finish"
        );
        assert_eq!(
            sweep_estimate(&plan(Some(64), None), &[0.02]),
            "the rate sweep sends about 53 min of arrivals (64 requests), and each point waits for its last requests to finish"
        );
    }

    #[test]
    fn the_fewest_requests_a_rate_is_judged_on_leave_room_for_two_misses() {
        let at = |f: f64| {
            SearchPlan {
                slo_fraction: f,
                precision: 0.05,
            }
            .min_requests()
        };
        assert_eq!(
            (at(0.9), at(0.95), at(0.5), at(1.0), at(0.999)),
            (20, 40, 10, 10, 200)
        );
        // A search point at a rate whose 30 s of arrivals are fewer sends that many anyway.
        assert_eq!(
            search_stop(&plan(None, None), SEARCH, 0.1),
            StopRule::Count(20)
        );
        assert_eq!(
            search_stop(&plan(None, None), SEARCH, 10.0),
            StopRule::Count(300)
        );
    }
}
