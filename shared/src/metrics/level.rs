//! Summarising one point (level) of a sweep from its request records.

use crate::bundle::{RequestRecord, Summary};

use super::request::{decode_tok_s, end_s, prefill_tok_s, tpot_s};
use super::stats::Stats;
use super::student::Z;

/// Summarises a point's records.
///
/// - `concurrency`: the number of slots the load generator kept busy (for `steady_tok_s`).
/// - `output_len`: tokens asked per request (for `short` and `output_tokens_asked`).
/// - `itl_gaps_s`: every inter-token gap of every successful request, in seconds per token; the
///   records keep only a per-request summary, so the collector passes the raw gaps in.
pub fn summarize(
    records: &[RequestRecord],
    concurrency: u32,
    output_len: u64,
    itl_gaps_s: &[f64],
) -> Summary {
    // A request aborted by the client (an interrupt, or cut at a precise level's end) is not
    // the server's doing: it is not counted, though it held its slot while it lasted, so the
    // steady window and the wall time still see it.
    let counted: Vec<&RequestRecord> = records.iter().filter(|r| !is_aborted(r)).collect();
    let ok: Vec<&RequestRecord> = records.iter().filter(|r| r.is_ok()).collect();
    // Saturating: the counts are the server's, and a broken one can send any number.
    let output_tokens = ok
        .iter()
        .map(|r| r.output_tokens)
        .fold(0, u64::saturating_add);
    // What the server streamed in the level's wall time: a request cut at a precise level's end
    // (or interrupted) had its tokens from the server too, and its slot's time is in the wall.
    let streamed = records
        .iter()
        .filter(|r| is_aborted(r))
        .map(|r| r.output_tokens)
        .fold(output_tokens, u64::saturating_add);
    let wall_s = wall_s(records);
    let per_wall = |x: f64| if wall_s > 0.0 { x / wall_s } else { 0.0 };
    let windows = steady_windows(records, concurrency);
    let steady_len: f64 = windows.iter().map(SteadyWindow::len_s).sum();
    let steady_tokens: f64 = windows.iter().map(|w| w.tokens).sum();
    let steady = (!windows.is_empty()).then_some((steady_tokens, steady_len));
    let cycles = steady_cycles(records, concurrency);
    Summary {
        requests: counted.len() as u64,
        ok: ok.len() as u64,
        failed: (counted.len() - ok.len()) as u64,
        short: ok
            .iter()
            .filter(|r| r.output_tokens < r.asked(output_len))
            .count() as u64,
        output_tokens,
        output_tokens_asked: counted
            .iter()
            .map(|r| r.asked(output_len))
            .fold(0, u64::saturating_add),
        wall_s,
        agg_tok_s: per_wall(streamed as f64),
        steady_tok_s: steady.map(|(tokens, len)| tokens / len),
        steady_window_s: steady.map(|(_, len)| len),
        steady_pm_pct: steady.and(cycle_pm_pct(&cycles)),
        request_s: per_wall(ok.len() as f64),
        ttft_s: Stats::from_values(ok.iter().filter_map(|r| r.ttft_s)),
        e2e_s: Stats::from_values(ok.iter().map(|r| r.e2e_s)),
        tpot_s: Stats::from_values(ok.iter().filter_map(|r| tpot_s(r))),
        decode_tok_s: Stats::from_values(ok.iter().filter_map(|r| decode_tok_s(r))),
        itl_s: Stats::from_values(itl_gaps_s.iter().copied()),
        prefill_tok_s: Stats::from_values(ok.iter().filter_map(|r| prefill_tok_s(r))),
    }
}

/// Whether the client aborted the request (it has no numbers of its own; the tokens it received
/// are the server's all the same).
pub(crate) fn is_aborted(r: &RequestRecord) -> bool {
    r.error
        .as_ref()
        .is_some_and(|e| e.kind == crate::bundle::ErrorKind::Cancelled)
}

/// A level's records split by the pass that sent them ([`RequestRecord::repeat`]), in pass
/// order; a level run once is one pass.
pub fn passes(records: &[RequestRecord]) -> Vec<Vec<&RequestRecord>> {
    let mut by_pass: std::collections::BTreeMap<Option<u32>, Vec<&RequestRecord>> =
        Default::default();
    for r in records {
        by_pass.entry(r.repeat).or_default().push(r);
    }
    by_pass.into_values().collect()
}

/// The time the level was sending: first request start → last request end of each pass, summed
/// over its passes (failed requests held a slot too; the pause between passes is not counted).
pub fn wall_s(records: &[RequestRecord]) -> f64 {
    passes(records).iter().map(|p| span_s(p)).sum()
}

/// First start → last end of `records`, or 0.
fn span_s(records: &[&RequestRecord]) -> f64 {
    match span(records) {
        Some((first, last)) => last - first,
        None => 0.0,
    }
}

/// First start and last end of `records`, when they enclose some time.
pub fn span(records: &[&RequestRecord]) -> Option<(f64, f64)> {
    let first = records
        .iter()
        .map(|r| r.start_s)
        .fold(f64::INFINITY, f64::min);
    let last = records
        .iter()
        .map(|r| end_s(r))
        .fold(f64::NEG_INFINITY, f64::max);
    (first.is_finite() && last > first).then_some((first, last))
}

/// The interval in which all `concurrency` slots were busy, and the output tokens in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyWindow {
    pub start_s: f64,
    pub end_s: f64,
    /// Output tokens of successful requests that arrived inside the window.
    pub tokens: f64,
}

impl SteadyWindow {
    pub fn len_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// The steady window of a closed-loop point.
///
/// Every slot is busy from the `concurrency`-th start on (a closed loop refills a slot as soon as
/// it frees) until the first request ending after the last request's start ends (from then on a
/// freed slot is not refilled: the drain), and before the first token of any request the client
/// aborted: its tokens are not counted (see [`steady_part`]). The window opens where the first wave of completions
/// after that start ends (the first cycle of [`steady_cycles`]): the requests sent together at
/// the start prefilled together, a transient the loop does not repeat once its completions drift
/// apart (it cost a speculative decoder's kpro5 about 5 % in that wave). A level too short to
/// close a first wave keeps the transient, and has no interval. It closes at the drain. Tokens are
/// counted from the records: each successful request's first token at `start + ttft`, its other
/// `n − 1` tokens spread evenly over `(start + ttft, start + e2e]`.
///
/// `None` when fewer requests than slots were sent or the window is empty. For a level run in
/// several passes, see [`steady_windows`].
pub fn steady_window(records: &[RequestRecord], concurrency: u32) -> Option<SteadyWindow> {
    let refs: Vec<&RequestRecord> = records.iter().collect();
    window_of(&refs, concurrency)
}

/// The steady window of each pass of a level that has one, in pass order.
pub fn steady_windows(records: &[RequestRecord], concurrency: u32) -> Vec<SteadyWindow> {
    passes(records)
        .iter()
        .filter_map(|p| window_of(p, concurrency))
        .collect()
}

/// The requests of a pass whose tokens a steady window and its cycles count (every one the
/// client did not abort), and the span in which every slot was busy ([`busy_span`]) and every
/// token produced was one of theirs.
///
/// A request the client aborted (cut at a precise level's end, or in flight when a run was
/// interrupted) held its slot like any other, but its count of tokens ended with it and is not
/// counted: the span closes at the last completion before the first token of any such request
/// (not at the token itself: the requests admitted at that completion prefilled before it, a
/// lull of their own wave; in a lock-step loop at twice the running limit, ending at the token
/// took 11.6 % off the steady rate). One cut while queued behind the server's running limit
/// produced nothing, and the span runs on through it.
fn steady_part<'a>(
    records: &[&'a RequestRecord],
    concurrency: u32,
) -> Option<(Vec<&'a RequestRecord>, f64, f64)> {
    let (lo, hi) = busy_span(records, concurrency)?;
    let counted: Vec<&RequestRecord> = records.iter().copied().filter(|r| !is_aborted(r)).collect();
    let first_cut_token = records
        .iter()
        .filter(|r| is_aborted(r))
        .filter_map(|r| Some(r.start_s + r.ttft_s?))
        .fold(f64::INFINITY, f64::min);
    // At the last completion before it: the requests admitted after that completion prefilled
    // before their first token, a lull that belongs to their wave, not to the window's.
    let hi = if first_cut_token.is_finite() {
        counted
            .iter()
            .map(|r| end_s(r))
            .filter(|&e| e <= first_cut_token)
            .fold(f64::NEG_INFINITY, f64::max)
            .min(hi)
    } else {
        hi
    };
    (hi > lo).then_some((counted, lo, hi))
}

fn window_of(records: &[&RequestRecord], concurrency: u32) -> Option<SteadyWindow> {
    let (records, busy, end_s) = steady_part(records, concurrency)?;
    let records = &records[..];
    // The first wave is the start's transient: every slot was filled at once, so its requests
    // prefilled together and no one decoded meanwhile, a lull the loop never has again once its
    // completions drift apart. The window opens where that wave ends, when the level ran long
    // enough to show it; a level too short to (fewer than about two waves) keeps it. One slot
    // has no cohort: its first request is like the others.
    let start_s = if concurrency > 1 {
        wave_ends(records, busy, end_s)
            .first()
            .copied()
            .filter(|&t| t < end_s)
            .unwrap_or(busy)
    } else {
        busy
    };
    let tokens = records
        .iter()
        .filter(|r| r.is_ok())
        .map(|r| tokens_between(r, start_s, end_s))
        .sum();
    Some(SteadyWindow {
        start_s,
        end_s,
        tokens,
    })
}

/// When every slot of a pass was busy: from the `concurrency`-th start to the first end after
/// the last start (the drain).
fn busy_span(records: &[&RequestRecord], concurrency: u32) -> Option<(f64, f64)> {
    let c = concurrency as usize;
    if c == 0 || records.len() < c {
        return None;
    }
    let mut starts: Vec<f64> = records.iter().map(|r| r.start_s).collect();
    starts.sort_by(f64::total_cmp);
    let start_s = starts[c - 1];
    let last_start = starts[starts.len() - 1];
    let end_s = records
        .iter()
        .map(|r| end_s(r))
        .filter(|&e| e > last_start)
        .fold(f64::INFINITY, f64::min);
    (end_s.is_finite() && end_s > start_s).then_some((start_s, end_s))
}

/// Output tokens of `r` that arrived in `[lo, hi]`, under the even-spread model above.
pub fn tokens_between(r: &RequestRecord, lo: f64, hi: f64) -> f64 {
    let Some(ttft) = r.ttft_s else { return 0.0 };
    if r.output_tokens == 0 {
        return 0.0;
    }
    let first = r.start_s + ttft;
    let end = end_s(r);
    let mut n = if (lo..=hi).contains(&first) { 1.0 } else { 0.0 };
    let rest = (r.output_tokens - 1) as f64;
    if rest > 0.0 && end > first {
        let overlap = (end.min(hi) - first.max(lo)).max(0.0);
        n += rest * overlap / (end - first);
    }
    n
}

/// Fewest cycles a steady rate's interval is drawn from.
pub const MIN_CYCLES: usize = 3;

/// One cycle of a closed loop's steady part: the output tokens produced in it, its length, and
/// when it closed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cycle {
    pub tokens: f64,
    pub len_s: f64,
    pub end_s: f64,
}

/// The cycles of a closed-loop level's steady part, over every pass, from which its steady
/// throughput's interval is drawn.
///
/// A closed loop's token rate is not noise around a constant: the requests admitted together
/// prefill together (no tokens) and then decode together, so the rate rises and falls with
/// each wave, and a wave is the server's behaviour, not a random error. Slices of fixed length
/// cut those waves at arbitrary phases and take them for noise. A cycle instead opens and
/// closes at the end of a wave of completions ([`wave_ends`]), at least one request's decode
/// time (p50 of `e2e − ttft`) apart:
/// requests admitted together complete together, so every cycle holds whole waves and the
/// same phase of the rhythm, however synchronised the slots are. A cycle's tokens are those
/// produced in it, each request's spread evenly over its decode time as for the steady rate
/// ([`tokens_between`]): counting the tokens of the requests that completed in it instead
/// (renewal-reward) adds the noise of whole requests falling on one side of a boundary or the
/// other, which is most of a level's spread once completions drift apart (a speculative
/// decoder's requests finish after different numbers of steps). Only cycles inside each
/// pass's steady window count: not the first wave (the start's transient, see
/// [`steady_window`]), not the drain.
///
/// Leaving the first wave out is what makes the interval honest at saturation: against
/// `serve-sim --preset kpro5` (speculative, ×0.1 speed), that wave ran about 5 % below the
/// rest in every run, and with it the interval of a 120-second level at C=16 was ±3.8 % where
/// 22 runs with different seeds spread ±0.7 % (1.96 standard deviations); without it, ±0.95 %.
pub fn steady_cycles(records: &[RequestRecord], concurrency: u32) -> Vec<Cycle> {
    passes(records)
        .iter()
        .filter_map(|p| {
            let (p, lo, hi) = steady_part(p, concurrency)?;
            Some(cycles_in(&p, lo, hi, concurrency))
        })
        .flatten()
        .collect()
}

/// The cycles of a level still running, from the requests finished so far: completions after
/// the `concurrency`-th start, with no drain yet to leave out. A cycle counts only once no
/// request still in flight produced tokens in it (their tokens are not in the records yet):
/// once it closed before `decoding_since`, the earliest first token of the requests in flight
/// (infinite when none has had one).
///
/// A request that has decoded longer than any finished one (a stall, or one the server lost)
/// holds the cycles back no further than the last completion less that longest decode: the
/// level is judged without its tokens, as a level that abandons it ends without them. (Not a
/// longest `e2e`: above the server's running limit most of a request's time is spent queued,
/// producing nothing.) Before the first tokens of those in flight were known, that bound held
/// every judgement back; replayed over the kpro5 story's records, C = 2 to 32 were judged 8 to
/// 12 s sooner with them.
pub fn running_cycles(
    records: &[RequestRecord],
    concurrency: u32,
    decoding_since: f64,
) -> Vec<Cycle> {
    let c = concurrency as usize;
    if c == 0 || records.len() < c {
        return Vec::new();
    }
    let mut starts: Vec<f64> = records.iter().map(|r| r.start_s).collect();
    starts.sort_by(f64::total_cmp);
    let last_end = records.iter().map(end_s).fold(f64::NEG_INFINITY, f64::max);
    let longest = records
        .iter()
        .map(|r| r.e2e_s - r.ttft_s.unwrap_or(0.0))
        .fold(0.0, f64::max);
    let hi = last_end.min(decoding_since.max(last_end - longest));
    let refs: Vec<&RequestRecord> = records.iter().collect();
    cycles_in(&refs, starts[c - 1], hi, concurrency)
}

/// The cycles of `records` between `lo` (when every slot has just been filled) and `hi`: one
/// between each two successive [`wave_ends`], with the tokens produced in it. The first wave,
/// from `lo` to its end, is left out: it is the start's transient (see [`steady_window`]). One
/// slot has no waves and no transient: each request is a cycle of its own, from the previous
/// completion (or `lo`) to its end.
fn cycles_in(records: &[&RequestRecord], lo: f64, hi: f64, concurrency: u32) -> Vec<Cycle> {
    let ends = if concurrency == 1 {
        let mut ends: Vec<f64> = records
            .iter()
            .map(|r| end_s(r))
            .filter(|&e| lo < e && e <= hi)
            .collect();
        ends.sort_by(f64::total_cmp);
        ends.insert(0, lo);
        ends
    } else {
        wave_ends(records, lo, hi)
    };
    if ends.len() < 2 {
        return Vec::new();
    }
    let produced = Produced::of(records);
    ends.windows(2)
        .map(|w| Cycle {
            tokens: produced.at(w[1]) - produced.at(w[0]),
            len_s: w[1] - w[0],
            end_s: w[1],
        })
        .collect()
}

/// Where the waves of completions of `records` end, between `lo` and `hi`: the first wave opens
/// at `lo`, when every slot has just been filled, and each closes between one and two decode
/// times (p50 of `e2e − ttft`) after it opened, at the completion followed by the longest lull;
/// the next one opens there. A wave closes only once a completion past its two decode times is
/// seen (until then it may go on), and at or before `hi`.
fn wave_ends(records: &[&RequestRecord], lo: f64, hi: f64) -> Vec<f64> {
    let decode: Vec<f64> = records
        .iter()
        .filter(|r| r.is_ok())
        .filter_map(|r| Some(r.e2e_s - r.ttft_s?))
        .collect();
    let Some(min_len) = crate::metrics::percentile(&decode, 50.0).filter(|&d| d > 0.0) else {
        return Vec::new();
    };
    let mut ends: Vec<f64> = records
        .iter()
        .map(|r| end_s(r))
        .filter(|&e| lo <= e)
        .collect();
    ends.sort_by(f64::total_cmp);
    let mut opened = lo;
    let mut closes = Vec::new();
    let mut first = 0;
    while let Some(from) = (first..ends.len()).find(|&i| ends[i] - opened >= min_len) {
        // Until a completion past the range is seen, the range may not have ended its wave.
        let Some(past) = (from..ends.len()).find(|&i| ends[i] - opened > 2.0 * min_len) else {
            break;
        };
        let to = past.saturating_sub(1).max(from);
        let lull = |i: usize| ends.get(i + 1).map_or(f64::NEG_INFINITY, |n| n - ends[i]);
        let Some(close) = (from..=to).max_by(|&a, &b| lull(a).total_cmp(&lull(b))) else {
            break;
        };
        if ends[close] > hi {
            break;
        }
        closes.push(ends[close]);
        opened = ends[close];
        first = close + 1;
    }
    closes
}

/// Output tokens produced by successful requests up to a time, under the even-spread model
/// of [`tokens_between`]: each request's first token at its first-token time, the rest at an
/// even pace to its end. A piecewise-linear function, so each lookup is a binary search.
struct Produced {
    /// Times where the function bends or jumps, ascending, with its value and slope just after.
    knots: Vec<(f64, f64, f64)>,
}

impl Produced {
    fn of(records: &[&RequestRecord]) -> Produced {
        // (time, jump, slope change)
        let mut events: Vec<(f64, f64, f64)> = Vec::new();
        for r in records.iter().filter(|r| r.is_ok() && r.output_tokens > 0) {
            let Some(ttft) = r.ttft_s else { continue };
            let first = r.start_s + ttft;
            let end = end_s(r);
            let rest = (r.output_tokens - 1) as f64;
            events.push((first, 1.0, 0.0));
            if rest > 0.0 && end > first {
                let slope = rest / (end - first);
                events.push((first, 0.0, slope));
                events.push((end, 0.0, -slope));
            }
        }
        events.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut knots = Vec::with_capacity(events.len());
        let (mut value, mut slope, mut last) = (0.0, 0.0, f64::NEG_INFINITY);
        for (t, jump, dslope) in events {
            if last.is_finite() {
                value += slope * (t - last);
            }
            value += jump;
            slope += dslope;
            last = t;
            knots.push((t, value, slope));
        }
        Produced { knots }
    }

    /// Tokens produced up to and including `t`.
    fn at(&self, t: f64) -> f64 {
        let i = self.knots.partition_point(|k| k.0 <= t);
        match i.checked_sub(1).and_then(|i| self.knots.get(i)) {
            Some(&(k, value, slope)) => value + slope * (t - k),
            None => 0.0,
        }
    }
}

/// The standard error of the log of the token rate of `cycles` (their tokens over their
/// time, a ratio estimate), with Student's t for their number less one expressed as the
/// equivalent normal standard error; `None` under [`MIN_CYCLES`] or without tokens.
pub fn cycle_log_se(cycles: &[Cycle]) -> Option<f64> {
    cycle_log_se_df(cycles).map(|(se, _)| se)
}

/// [`cycle_log_se`] and the degrees of freedom of its Student's t (the cycles less one), for
/// a test that reads a p-value far out in the tail, where t's tails are heavier than the
/// normal's its interval was scaled to.
pub fn cycle_log_se_df(cycles: &[Cycle]) -> Option<(f64, f64)> {
    let m = cycles.len();
    if m < MIN_CYCLES {
        return None;
    }
    let tokens: f64 = cycles.iter().map(|c| c.tokens).sum();
    let time: f64 = cycles.iter().map(|c| c.len_s).sum();
    if !(tokens > 0.0 && time > 0.0) {
        return None;
    }
    let rate = tokens / time;
    let mf = m as f64;
    let mean_len = time / mf;
    let ss: f64 = cycles
        .iter()
        .map(|c| (c.tokens - rate * c.len_s).powi(2))
        .sum();
    let se = (ss / (mf * (mf - 1.0))).sqrt() / mean_len;
    Some((se / rate * (super::t_quantile(mf - 1.0) / Z), mf - 1.0))
}

/// Half the 95 % interval of the token rate of `cycles`, in per cent of it.
pub fn cycle_pm_pct(cycles: &[Cycle]) -> Option<f64> {
    let se = cycle_log_se(cycles)?;
    Some(((Z * se).exp() - (-Z * se).exp()) / 2.0 * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::request::tests::{failed, rec};

    #[test]
    fn single_stream_summary_by_hand() {
        // Two sequential requests of 11 tokens: ttft 0.5 s, e2e 1.5 s each.
        let rs = [rec(0.0, 0.5, 1.5, 11), rec(1.5, 0.5, 1.5, 11)];
        let s = summarize(&rs, 1, 11, &[0.1; 20]);
        assert_eq!((s.requests, s.ok, s.failed, s.short), (2, 2, 0, 0));
        assert_eq!(s.output_tokens, 22);
        assert_eq!(s.output_tokens_asked, 22);
        assert!((s.wall_s - 3.0).abs() < 1e-12);
        assert!((s.agg_tok_s - 22.0 / 3.0).abs() < 1e-12);
        // At concurrency 1 the steady window is the whole run.
        assert!((s.steady_tok_s.unwrap() - 22.0 / 3.0).abs() < 1e-12);
        assert!((s.request_s - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.decode_tok_s.unwrap().p50 - 10.0).abs() < 1e-9);
        assert_eq!(s.ttft_s.unwrap().p50, 0.5);
        assert_eq!(s.itl_s.unwrap().count, 20);
    }

    /// Counts are the server's: two requests each claiming 2^64 − 1 tokens (or asking as
    /// many) saturate the sums instead of wrapping them (or panicking in a debug build).
    #[test]
    fn token_sums_saturate() {
        let mut big = rec(0.0, 0.5, 1.5, u64::MAX);
        big.output_asked = Some(u64::MAX);
        let rs = [big.clone(), big];
        let s = summarize(&rs, 2, 11, &[]);
        assert_eq!(s.output_tokens, u64::MAX);
        assert_eq!(s.output_tokens_asked, u64::MAX);
        let slo = crate::bundle::Slo::default();
        let g = crate::metrics::rate::goodput(&rs, &slo, 1.0).unwrap();
        assert_eq!(g.good_tok_s, u64::MAX as f64);
    }

    #[test]
    fn failed_requests_count_in_wall_but_not_tokens() {
        let rs = [rec(0.0, 0.5, 1.5, 11), failed(0.0, 3.0)];
        let s = summarize(&rs, 2, 11, &[]);
        assert_eq!((s.ok, s.failed), (1, 1));
        assert_eq!(s.output_tokens, 11);
        assert_eq!(s.output_tokens_asked, 22);
        assert!((s.wall_s - 3.0).abs() < 1e-12);
        assert!(s.itl_s.is_none());
    }

    #[test]
    fn short_requests_are_counted() {
        let rs = [rec(0.0, 0.5, 1.5, 11), rec(0.0, 0.5, 1.0, 6)];
        assert_eq!(summarize(&rs, 2, 11, &[]).short, 1);
    }

    #[test]
    fn steady_window_excludes_ramp_and_drain() {
        // Two slots. Slot A: requests [0,2], [2,4]. Slot B starts late: [1,3], [3,5].
        // All busy from t=1 (2nd start) until the first end after the last start (t=3): t=4.
        let rs = [
            rec(0.0, 0.0, 2.0, 21),
            rec(2.0, 0.0, 2.0, 21),
            rec(1.0, 0.0, 2.0, 21),
            rec(3.0, 0.0, 2.0, 21),
        ];
        let w = steady_window(&rs, 2).unwrap();
        assert_eq!((w.start_s, w.end_s), (1.0, 4.0));
        // Each request: first token at its start, 20 more spread over 2 s = 10 tok/s.
        // [0,2]: 1..2 → 10; [2,4]: first + 20 → 21; [1,3]: first + 20 → 21; [3,5]: first + 3..4 → 11.
        assert!((w.tokens - 63.0).abs() < 1e-9, "{}", w.tokens);
        let s = summarize(&rs, 2, 21, &[]);
        assert!((s.steady_tok_s.unwrap() - 21.0).abs() < 1e-9);
        assert!((s.steady_window_s.unwrap() - 3.0).abs() < 1e-12);
    }

    #[test]
    fn no_steady_window_when_slots_were_never_all_busy() {
        let rs = [rec(0.0, 0.5, 1.5, 11)];
        assert_eq!(steady_window(&rs, 2), None);
        assert_eq!(steady_window(&[], 1), None);
        assert_eq!(summarize(&[], 4, 10, &[]).agg_tok_s, 0.0);
    }

    #[test]
    fn passes_are_summarised_each_on_its_own_and_pooled() {
        // Two passes of one slot, with a 10 s pause between them that is no one's throughput.
        // Pass 0: two requests of 11 tokens over [0, 3]; pass 1: one of 21 tokens over [13, 15].
        let tag = |mut r: RequestRecord, pass| {
            r.repeat = Some(pass);
            r
        };
        let rs = [
            tag(rec(0.0, 0.5, 1.5, 11), 0),
            tag(rec(1.5, 0.5, 1.5, 11), 0),
            tag(rec(13.0, 0.0, 2.0, 21), 1),
        ];
        assert_eq!(passes(&rs).len(), 2);
        let s = summarize(&rs, 1, 11, &[]);
        assert!((s.wall_s - 5.0).abs() < 1e-12, "{}", s.wall_s);
        assert!((s.agg_tok_s - 43.0 / 5.0).abs() < 1e-12);
        // The windows are [0, 3] with 22 tokens and [13, 15] with 21: 43 tokens in 5 s.
        assert_eq!(steady_windows(&rs, 1).len(), 2);
        assert!((s.steady_tok_s.unwrap() - 43.0 / 5.0).abs() < 1e-9);
        assert!((s.steady_window_s.unwrap() - 5.0).abs() < 1e-12);
        // Untagged, the same records would be one level with the pause inside it.
        let untagged: Vec<_> = rs
            .iter()
            .cloned()
            .map(|mut r| {
                r.repeat = None;
                r
            })
            .collect();
        assert!((wall_s(&untagged) - 15.0).abs() < 1e-12);
    }

    /// A closed loop of `c` slots in lock step: every wave starts together, its requests
    /// prefill one after another (request `k` of a wave first answers at `(k + 1) · 0.1 s`),
    /// and all end together `period` seconds after the wave began.
    fn lock_step(c: usize, waves: usize, period: impl Fn(usize) -> f64) -> Vec<RequestRecord> {
        let mut at = 0.0;
        let mut out = Vec::new();
        for w in 0..waves {
            let len = period(w);
            for k in 0..c {
                out.push(rec(at, (k + 1) as f64 * 0.1, len, 101));
            }
            at += len;
        }
        out
    }

    #[test]
    fn tokens_produced_up_to_a_time_agree_with_tokens_between() {
        let rs = [
            rec(0.0, 0.5, 2.5, 11),
            rec(1.0, 0.2, 4.2, 5),
            rec(2.0, 1.0, 3.0, 1),
        ];
        let refs: Vec<&RequestRecord> = rs.iter().collect();
        let p = Produced::of(&refs);
        for (lo, hi) in [(0.6, 2.0), (1.3, 3.7), (0.0, 10.0), (2.9, 3.1)] {
            let want: f64 = rs.iter().map(|r| tokens_between(r, lo, hi)).sum();
            let got = p.at(hi) - p.at(lo);
            assert!(
                (got - want).abs() < 1e-9,
                "[{lo}, {hi}]: {got} against {want}"
            );
        }
        assert_eq!(p.at(-1.0), 0.0);
        assert!((p.at(100.0) - 17.0).abs() < 1e-9);
    }

    #[test]
    fn cycles_of_a_lock_step_loop_hold_whole_waves_and_know_its_rate_exactly() {
        // 16 slots, 8 waves of 10 s: 16 × 101 tokens per 10 s is 161.6 tok/s, with no noise
        // at all although the rate inside each wave swings from 0 (all prefilling) to its top.
        let rs = lock_step(16, 8, |_| 10.0);
        let cycles = steady_cycles(&rs, 16);
        // Every slot is busy from the 16th start (t = 0) to the first end after the last start
        // (t = 80). The first wave (0 to 10) is the start's transient; then a cycle between
        // each two waves' completions at 10, 20, …, 70; the last wave's is not closed, since
        // nothing after it shows that it ended.
        assert_eq!(cycles.len(), 6, "{cycles:?}");
        for c in &cycles {
            assert!((c.len_s - 10.0).abs() < 1e-9 && (c.tokens - 1616.0).abs() < 1e-9);
        }
        assert!(cycle_pm_pct(&cycles).unwrap() < 1e-6);
        let s = summarize(&rs, 16, 101, &[]);
        assert!(s.steady_pm_pct.unwrap() < 1e-6, "{:?}", s.steady_pm_pct);
        // Fixed slices of the same window take the waves for noise (about ±3 %).
        let window = steady_window(&rs, 16).unwrap();
        assert_eq!((window.start_s, window.end_s), (10.0, 80.0));
        let slices =
            crate::compare::interval::rate_log_se(&rs, &[(window.start_s, window.end_s)]).unwrap();
        assert!(slices > 0.01, "{slices}");
    }

    /// Two slots, every request 100 tokens with its first at 0.1 s: slot A's take 2 s each
    /// from t = 0; slot B's first takes 5 s (a slow one, decoding 4.9 s), the rest 2 s. Finished
    /// by t = 20: A's ten, B's seven (the last ending at 19); B's next, sent at 19, is in flight.
    fn a_slow_one_then_lock_step() -> Vec<RequestRecord> {
        let mut rs: Vec<RequestRecord> = (0..10)
            .map(|i| rec(2.0 * i as f64, 0.1, 2.0, 100))
            .collect();
        rs.push(rec(0.0, 0.1, 5.0, 100));
        rs.extend((0..7).map(|i| rec(5.0 + 2.0 * i as f64, 0.1, 2.0, 100)));
        rs
    }

    #[test]
    fn a_running_level_counts_a_cycle_once_no_request_in_flight_decoded_in_it() {
        let rs = a_slow_one_then_lock_step();
        // Completions come every second from t = 4, and the waves close every 3 s (a decode is
        // 1.9 s; each closes at the longest lull between one and two decodes after it opened):
        // at 2 (the start's wave, left out), 5, 8, 11, 14 and 17. The one at 17 is seen once a
        // completion past 17 + 2 × 1.9 is, at 20.
        //
        // B's request in flight had its first token at 19.1, after the wave that closed at 17:
        // every wave closed so far counts, five cycles.
        assert_eq!(running_cycles(&rs, 2, 19.1).len(), 5);
        assert_eq!(
            running_cycles(&rs, 2, f64::INFINITY).len(),
            5,
            "none decoding"
        );
        // Had it been decoding since 16, the cycle closing at 17 would miss its tokens.
        assert_eq!(running_cycles(&rs, 2, 16.0).len(), 4);
        // Decoding since 12, it has run longer than any finished request (8 s against 4.9): a
        // stall holds the level back no further than the longest decode before the last
        // completion, 15.1 (the wave at 17 waits; the one at 14 counts).
        assert_eq!(running_cycles(&rs, 2, 12.0).len(), 4);
        assert_eq!(running_cycles(&rs, 2, 1.0).len(), 4);
    }

    #[test]
    fn a_wave_that_took_longer_widens_the_interval_and_too_few_give_none() {
        let rs = lock_step(4, 8, |w| if w == 3 { 13.0 } else { 10.0 });
        let pm = cycle_pm_pct(&steady_cycles(&rs, 4)).unwrap();
        assert!(pm > 2.0 && pm < 30.0, "{pm}");
        // Two waves: one cycle, no interval.
        let two = lock_step(4, 2, |_| 10.0);
        assert_eq!(cycle_pm_pct(&steady_cycles(&two, 4)), None);
        assert_eq!(summarize(&two, 4, 101, &[]).steady_pm_pct, None);
    }

    #[test]
    fn the_cycle_interval_covers_the_true_rate_about_95_times_in_100() {
        // One slot serving requests of 101 tokens whose length is 1 s + exponential(1 s): the
        // true rate is 101 / 2 tok/s. 400 runs of 40 requests each.
        let mut state = 7u64;
        let mut uniform = move || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        };
        let truth: f64 = 101.0 / 2.0;
        let mut covered = 0;
        for _ in 0..400 {
            let mut at = 0.0;
            let rs: Vec<RequestRecord> = (0..40)
                .map(|_| {
                    let len = 1.0 - (1.0 - uniform()).ln();
                    let r = rec(at, 0.05, len, 101);
                    at += len;
                    r
                })
                .collect();
            let cycles = steady_cycles(&rs, 1);
            let tokens: f64 = cycles.iter().map(|c| c.tokens).sum();
            let time: f64 = cycles.iter().map(|c| c.len_s).sum();
            let half = cycle_log_se(&cycles).unwrap() * Z;
            if ((tokens / time).ln() - truth.ln()).abs() <= half {
                covered += 1;
            }
        }
        assert!((360..=395).contains(&covered), "covered {covered} of 400");
    }

    /// `r` as a request cut at its level's end: aborted by the client, not counted.
    fn cut(mut r: RequestRecord) -> RequestRecord {
        r.error = Some(crate::bundle::RequestError {
            kind: crate::bundle::ErrorKind::Cancelled,
            status: None,
            message: "cut at the level's end".into(),
        });
        r
    }

    #[test]
    fn a_window_cut_short_by_the_next_wave_ends_at_its_last_completion_not_in_its_prefill() {
        // Two slots in lock-step: each wave prefills 0.5 s (no tokens), then decodes 16 tokens,
        // 32 tokens every 2 s. The third wave, sent at 4, is cut at 5 after its first tokens
        // (at 4.5). Ending the window at that first token would add its prefill's lull and
        // read 12.8 tok/s; it ends at the completion before it, on the loop's 16.
        let rs = [
            rec(0.0, 0.5, 2.0, 16),
            rec(0.0, 0.5, 2.0, 16),
            rec(2.0, 0.5, 2.0, 16),
            rec(2.0, 0.5, 2.0, 16),
            cut(rec(4.0, 0.5, 1.0, 5)),
            cut(rec(4.0, 0.5, 1.0, 5)),
        ];
        let w = steady_window(&rs, 2).unwrap();
        assert_eq!((w.start_s, w.end_s), (2.0, 4.0));
        assert!((w.tokens / w.len_s() - 16.0).abs() < 1e-9, "{w:?}");
    }

    #[test]
    fn a_request_the_client_aborted_holds_its_slot_but_is_not_counted_nor_its_time() {
        // Slot A: [0, 4]. Slot B: [0, 1], [1, 3], then one sent at 3 and cut at 3.5.
        let rs = [
            rec(0.0, 0.1, 4.0, 41),
            rec(0.0, 0.1, 1.0, 11),
            rec(1.0, 0.1, 2.0, 21),
            cut(rec(3.0, 0.0, 0.5, 0)),
        ];
        let s = summarize(&rs, 2, 11, &[]);
        assert_eq!((s.requests, s.ok, s.failed), (3, 3, 0));
        // The cut request had its first token at 3: what it produced is not counted, so the
        // window closes there. The level's wall time still runs to the last end.
        assert!((s.steady_window_s.unwrap() - 3.0).abs() < 1e-12, "{s:?}");
        assert!((s.wall_s - 4.0).abs() < 1e-12);
        // Cut while queued, before its first token, it produced nothing and held B's slot to
        // 3.5 as any request would: the window runs on to the first end after its start.
        let mut queued = rs.clone();
        queued[3].ttft_s = None;
        assert_eq!(steady_window(&queued, 2).unwrap().end_s, 3.5);
        // The tokens it received are the server's: the aggregate, what was streamed over the
        // wall time, counts them; the successful requests' count does not.
        let mut received = rs.clone();
        received[3].output_tokens = 5;
        let s = summarize(&received, 2, 11, &[]);
        assert_eq!(s.output_tokens, 73);
        assert!((s.agg_tok_s - 78.0 / 4.0).abs() < 1e-12, "{}", s.agg_tok_s);
    }
}
