//! Per-request metrics derived from a [`RequestRecord`].

use crate::bundle::RequestRecord;

/// Time per output token after the first: `(e2e − ttft) / (output_tokens − 1)`.
///
/// `None` for a failed request, one without a first token, or one with fewer than 2 tokens
/// (a single token has no decode phase to measure).
pub fn tpot_s(r: &RequestRecord) -> Option<f64> {
    let ttft = r.ttft_s?;
    if !r.is_ok() || r.output_tokens < 2 {
        return None;
    }
    let t = (r.e2e_s - ttft) / (r.output_tokens - 1) as f64;
    (t > 0.0).then_some(t)
}

/// The per-request decode speed one user sees once tokens flow: `1 / tpot`. TTFT is excluded.
pub fn decode_tok_s(r: &RequestRecord) -> Option<f64> {
    tpot_s(r).map(|t| 1.0 / t)
}

/// Prefill speed: prompt tokens (as the server counted them, else as built) / TTFT.
pub fn prefill_tok_s(r: &RequestRecord) -> Option<f64> {
    let ttft = r.ttft_s?;
    if !r.is_ok() || ttft <= 0.0 {
        return None;
    }
    Some(r.prompt_tokens.unwrap_or(r.input_tokens) as f64 / ttft)
}

/// End of the request, seconds from the point's start.
pub fn end_s(r: &RequestRecord) -> f64 {
    r.start_s + r.e2e_s
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A successful record for tests: `n` output tokens asked and produced.
    pub(crate) fn rec(start: f64, ttft: f64, e2e: f64, n: u64) -> RequestRecord {
        RequestRecord::test_ok(start, ttft, e2e, n)
    }

    /// A record for tests that failed with HTTP 500.
    pub(crate) fn failed(start: f64, e2e: f64) -> RequestRecord {
        RequestRecord::test_failed(start, e2e)
    }

    #[test]
    fn tpot_excludes_the_first_token() {
        // 0.5 s to first token, then 10 more tokens in 1.0 s.
        let r = rec(0.0, 0.5, 1.5, 11);
        assert!((tpot_s(&r).unwrap() - 0.1).abs() < 1e-12);
        assert!((decode_tok_s(&r).unwrap() - 10.0).abs() < 1e-9);
    }

    #[test]
    fn tpot_needs_two_tokens_and_success() {
        assert_eq!(tpot_s(&rec(0.0, 0.5, 0.5, 1)), None);
        assert_eq!(tpot_s(&rec(0.0, 0.5, 0.5, 0)), None);
        assert_eq!(tpot_s(&failed(0.0, 1.0)), None);
    }

    #[test]
    fn prefill_prefers_the_server_count() {
        let mut r = rec(0.0, 0.25, 1.0, 4);
        assert_eq!(prefill_tok_s(&r), Some(4000.0));
        r.prompt_tokens = Some(1024);
        assert_eq!(prefill_tok_s(&r), Some(4096.0));
        r.prompt_tokens = None;
        r.input_tokens = 500;
        assert_eq!(prefill_tok_s(&r), Some(2000.0));
    }
}
