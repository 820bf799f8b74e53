//! Summarising one point (level) of a sweep from its request records.

use crate::bundle::{RequestRecord, Summary};

use super::request::{decode_tok_s, end_s, prefill_tok_s, tpot_s};
use super::stats::Stats;

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
    let ok: Vec<&RequestRecord> = records.iter().filter(|r| r.is_ok()).collect();
    let output_tokens: u64 = ok.iter().map(|r| r.output_tokens).sum();
    let wall_s = wall_s(records);
    let per_wall = |x: f64| if wall_s > 0.0 { x / wall_s } else { 0.0 };
    let windows = steady_windows(records, concurrency);
    let steady_len: f64 = windows.iter().map(SteadyWindow::len_s).sum();
    let steady_tokens: f64 = windows.iter().map(|w| w.tokens).sum();
    let steady = (!windows.is_empty()).then_some((steady_tokens, steady_len));
    Summary {
        requests: records.len() as u64,
        ok: ok.len() as u64,
        failed: (records.len() - ok.len()) as u64,
        short: ok
            .iter()
            .filter(|r| r.output_tokens < r.asked(output_len))
            .count() as u64,
        output_tokens,
        output_tokens_asked: records.iter().map(|r| r.asked(output_len)).sum(),
        wall_s,
        agg_tok_s: per_wall(output_tokens as f64),
        steady_tok_s: steady.map(|(tokens, len)| tokens / len),
        steady_window_s: steady.map(|(_, len)| len),
        request_s: per_wall(ok.len() as f64),
        ttft_s: Stats::from_values(ok.iter().filter_map(|r| r.ttft_s)),
        e2e_s: Stats::from_values(ok.iter().map(|r| r.e2e_s)),
        tpot_s: Stats::from_values(ok.iter().filter_map(|r| tpot_s(r))),
        decode_tok_s: Stats::from_values(ok.iter().filter_map(|r| decode_tok_s(r))),
        itl_s: Stats::from_values(itl_gaps_s.iter().copied()),
        prefill_tok_s: Stats::from_values(ok.iter().filter_map(|r| prefill_tok_s(r))),
    }
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
/// It opens when the `concurrency`-th request starts (every slot is busy from then on, since a
/// closed loop refills a slot as soon as it frees) and closes when the first request ending after
/// the last request's start ends (from then on a freed slot is not refilled: the drain). Tokens are
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

fn window_of(records: &[&RequestRecord], concurrency: u32) -> Option<SteadyWindow> {
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
    if !end_s.is_finite() || end_s <= start_s {
        return None;
    }
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
}
