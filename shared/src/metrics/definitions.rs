//! The metric definitions every bundle carries, so each number says what it is.

use std::collections::BTreeMap;

/// Metric name → definition, as written into [`crate::Bundle::definitions`].
pub fn definitions() -> BTreeMap<String, String> {
    [
        ("change_interval", "compare: a change's 95 % confidence interval, from the per-request records — for percentiles, the distribution-free order-statistic interval of each run's percentile (exact binomial ranks), as its reach below and above the percentile on the log scale; for token rates, batch means over 10 slices of the window (of every pass's window, pooled, when the level ran several passes) with Student's t, ±1.96 standard errors of the log; combined on the log scale by the MOVER method, [ln(b/a) − √(below_b² + above_a²), ln(b/a) + √(above_b² + below_a²)], then exp(·) − 1. A change is better or worse only when its interval excludes zero and it is at least the threshold, and for a latency only when it is at least 1 ms; an imported number has no spread and counts as exact"),
        ("ttft_s", "request start (just before the request is written) → first chunk carrying a non-empty generated token (text, content or reasoning content; a role-only chunk does not count); seconds"),
        ("e2e_s", "request start → end of stream; seconds"),
        ("output_tokens", "the server's usage.completion_tokens; without usage, the count of streamed token chunks, and the request is marked tokens_estimated"),
        ("tpot_s", "(e2e − ttft) / (output_tokens − 1), for successful requests with at least 2 tokens; seconds"),
        ("decode_tok_s", "1 / tpot: the decode speed one user sees once tokens flow (the \"per-request tok/s\"); TTFT excluded"),
        ("itl_s", "gap between consecutive token-carrying chunks divided by the tokens that chunk carried: the server's count of it (stream_options.continuous_usage_stats), else the request's tokens shared out by each chunk's part of the text; seconds per token"),
        ("accept_length", "speculative decoding's tokens per decode step and request: SGLang's spec_accept_length gauge averaged over the level, or 1 + Δaccepted / Δdrafts of vLLM's spec_decode counters, else the mean tokens per streamed chunk after the first; its interval from the spread of each request's tokens per chunk"),
        ("agg_tok_s", "Σ output tokens streamed (of successful requests, and what requests cut at a level's end or interrupted had received) / wall, wall = first request start → last request end (the \"aggregate tok/s\")"),
        ("steady_tok_s", "output tokens that arrived while all C slots were busy / the length of that window (from the C-th request start to the first end after the last request start); a request's tokens after the first are spread evenly over its decode time"),
        ("prefill_tok_s", "prompt tokens (as the server counted them) / ttft"),
        ("request_s", "successful requests / wall"),
        ("percentiles", "p50/p90/p99 by linear interpolation between closest ranks; every summary gives mean, p50, p90, p99, min, max and the count it is over"),
        ("repeats", "throughput --repeats N: each level runs N passes back to back, each a full closed loop with new prompts continuing the level's prompt stream; percentiles pool every pass's requests, rates are the pooled steady tokens over the summed steady windows, and wall time is the passes' own (not the pauses between them)"),
        ("short", "a successful request that produced fewer tokens than asked; a point with short requests is flagged"),
        ("goodput", "--goodput ttft=…,tpot=…,e2e=… (seconds, any subset): a request is good when it succeeded and met every bound (a TPOT bound needs 2 or more tokens); per point, good requests, their fraction of all requests, good requests / wall (good_rps) and their output tokens / wall (good_tok_s)"),
        ("offered_rps", "rate sweeps: requests per second the schedule asked for; arrivals are drawn from the run's seed (constant: 1/rate apart; poisson: exponential gaps; gamma: gaps of shape --burstiness), the first at 0 s"),
        ("achieved_rps", "rate sweeps: requests sent / the schedule's window, which is known: from the point's start to --duration, or for a count of arrivals to one mean gap (1 / rate) after the last one due, so that n arrivals count n gaps; stretched by how late the last one due was sent (a client that could not keep up, or --max-concurrency holding it). Older bundles without due times: the span of the sends, stretched by one mean gap"),
        ("schedule_lag_s", "rate sweeps: per request, its send time − its due time − the time it waited for --max-concurrency; how late the client itself was, the proof it kept up"),
        ("queued_s", "rate sweeps with --max-concurrency: per request, the time a due request waited in the client for one in flight to end"),
        ("concurrency_reached", "rate sweeps: most requests in flight at once, and the time-weighted mean from the first start to the last end"),
        ("reasoning", "per request, when a reasoning model streamed reasoning_content (or reasoning) before its answer: the token chunks with reasoning only, request start → the first answer text (first_answer_s), and the reasoning tokens the server's usage counted (completion_tokens_details.reasoning_tokens) when it says; TTFT counts the first token of either"),
        ("connect_s", "per request, when its connection was opened on its path: name lookup + TCP + TLS, timed in the client's connector; a point whose slowest 1 % of TTFTs spent more than a quarter of their time connecting is flagged conn-setup"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}
