//! Speculative decoding at one point: how many tokens a decode step yielded per request (the
//! "acceptance length"), from the server's own metrics where it writes them, and from the
//! stream as the client saw it.
//!
//! - **SGLang** writes `sglang:spec_accept_length`, a gauge of the mean over its last decode
//!   log interval; a point's value is the mean of the samples taken during it that are above 0
//!   (SGLang writes 0 before any speculative step).
//! - **vLLM** (V1) counts drafts (one per request and step), draft tokens and accepted tokens;
//!   over a point, `1 + Δaccepted / Δdrafts` is the acceptance length and
//!   `Δaccepted / Δdraft tokens` the draft acceptance rate.
//! - **llama.cpp** counts draft and accepted tokens only: the rate, not the length.
//! - **Each request**, where the answer states it (vLLM 0.29 and later with
//!   `--per-request-spec-decode-metrics`: `metrics.speculative_decoding` on the last chunk):
//!   `1 + Σ accepted / Σ steps` over the point's successful requests, counting only this
//!   client's requests, so it is preferred to the server-wide metrics.
//! - **The stream**: a chunk of a speculative server carries the tokens one step accepted, so
//!   the mean tokens per chunk after the first ([`ChunkTokens`]) is the acceptance length as the
//!   client saw it, for any engine (exact when the server said each chunk's count, with
//!   `continuous_usage_stats`). A server that sends several steps per chunk (SGLang's
//!   `--stream-interval`) multiplies it.

use crate::bundle::{ChunkTokens, MetricScheme, Point, RequestRecord, ServerSamples};

/// What a point says of speculative decoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Acceptance {
    /// Mean tokens per decode step over the point's requests, from the server's count of each
    /// ([`RequestRecord::spec`]).
    pub per_request: Option<f64>,
    /// Mean tokens per decode step and request, from the server's metrics.
    pub server_length: Option<f64>,
    /// Fraction of draft tokens accepted, from the server's counters (vLLM, llama.cpp).
    pub draft_rate: Option<f64>,
    /// Which of the server's metrics they come from.
    pub source: Option<&'static str>,
    /// Mean tokens per streamed chunk after the first, as the client counted them.
    pub per_chunk: Option<f64>,
    /// Whether `per_chunk` is the server's count of every chunk (else partly estimated from
    /// each chunk's text).
    pub per_chunk_exact: bool,
}

/// Tokens per chunk past which a stream counts as carrying several tokens per step: a plain
/// server streams exactly 1 (a few chunks of a multi-byte character can merge).
pub const SEVERAL_PER_CHUNK: f64 = 1.05;

impl Acceptance {
    /// The acceptance length to show and compare: the server's, else the stream's when it
    /// carried several tokens per chunk.
    pub fn length(&self) -> Option<f64> {
        self.per_request
            .or(self.server_length)
            .or(self.per_chunk.filter(|&c| c > SEVERAL_PER_CHUNK))
    }

    /// Where [`Acceptance::length`] comes from, in a few words.
    pub fn length_source(&self) -> &'static str {
        match (self.per_request, self.server_length, self.source) {
            (Some(_), _, _) => "the server's count of each request (metrics.speculative_decoding)",
            (None, Some(_), Some(s)) => s,
            _ if self.per_chunk_exact => "tokens per streamed chunk, as the server counted them",
            _ => "tokens per streamed chunk, estimated from each chunk's text",
        }
    }
}

/// The point's acceptance, `None` when nothing in it speaks of speculative decoding: no
/// speculative metric from the server and one token per chunk.
pub fn acceptance(p: &Point) -> Option<Acceptance> {
    let (server_length, server_rate, source) = server_side(p);
    let chunks = p.chunk_tokens.as_ref();
    let per_chunk = chunks.and_then(ChunkTokens::mean);
    let (per_request, request_rate) = per_request(p);
    let a = Acceptance {
        per_request,
        server_length,
        draft_rate: request_rate.or(server_rate),
        source,
        per_chunk,
        per_chunk_exact: chunks.is_some_and(|c| c.exact),
    };
    (a.draft_rate.is_some() || a.length().is_some()).then_some(a)
}

/// The pooled length `1 + Σ accepted / Σ steps` of the point's successful requests that state
/// their speculative counts, and `Σ accepted / Σ drafted` over those that state the drafts.
fn per_request(p: &Point) -> (Option<f64>, Option<f64>) {
    let stated: Vec<_> = p
        .requests
        .iter()
        .filter(|r| r.is_ok())
        .filter_map(|r| r.spec)
        .collect();
    let sum = |f: &dyn Fn(&crate::bundle::RequestSpec) -> Option<u64>| -> u64 {
        stated.iter().filter_map(f).fold(0, u64::saturating_add)
    };
    let steps = sum(&|s| Some(s.steps));
    let length = (steps > 0).then(|| 1.0 + sum(&|s| Some(s.accepted)) as f64 / steps as f64);
    let drafted = sum(&|s| s.drafted);
    let rate =
        (drafted > 0).then(|| sum(&|s| s.drafted.map(|_| s.accepted)) as f64 / drafted as f64);
    (length, rate)
}

/// Each successful request's acceptance length for an interval: the server's count of it where
/// the point's requests state one, else its tokens per chunk after the first.
pub fn request_accept_lengths(p: &Point) -> Vec<f64> {
    let ok = || p.requests.iter().filter(|r| r.is_ok());
    if ok().any(|r| r.spec.is_some()) {
        ok().filter_map(|r| r.spec.map(|s| s.length())).collect()
    } else {
        ok().filter_map(request_tokens_per_chunk).collect()
    }
}

/// The server's length, rate and their source at the point.
fn server_side(p: &Point) -> (Option<f64>, Option<f64>, Option<&'static str>) {
    let Some(s) = &p.server_samples else {
        return (None, None, None);
    };
    let delta = |name: &str| -> Option<f64> {
        let d = s.counters_after.get(name)? - s.counters_before.get(name)?;
        (d.is_finite() && d >= 0.0).then_some(d)
    };
    let ratio = |part: Option<f64>, whole: Option<f64>| match (part, whole) {
        (Some(a), Some(w)) if w > 0.0 => Some(a / w),
        _ => None,
    };
    match s.scheme {
        MetricScheme::Sglang => {
            let values = sglang_gauge_samples(s);
            let mean =
                (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
            (
                mean,
                None,
                mean.map(|_| "SGLang's spec_accept_length gauge"),
            )
        }
        MetricScheme::Vllm => {
            let accepted = delta("vllm:spec_decode_num_accepted_tokens_total");
            let length =
                ratio(accepted, delta("vllm:spec_decode_num_drafts_total")).map(|r| 1.0 + r);
            let rate = ratio(accepted, delta("vllm:spec_decode_num_draft_tokens_total"));
            let source =
                (length.is_some() || rate.is_some()).then_some("vLLM's spec_decode counters");
            (length, rate, source)
        }
        MetricScheme::Llamacpp => {
            let rate = ratio(
                delta("llamacpp:spec_decode_num_accepted_tokens_total"),
                delta("llamacpp:spec_decode_num_draft_tokens_total"),
            );
            (None, rate, rate.map(|_| "llama.cpp's spec_decode counters"))
        }
        MetricScheme::Unknown => (None, None, None),
    }
}

/// The samples of SGLang's `spec_accept_length` gauge taken during a point that are above 0
/// (SGLang writes 0 before any speculative step), in the order taken.
fn sglang_gauge_samples(s: &ServerSamples) -> Vec<f64> {
    s.gauges
        .get("sglang:spec_accept_length")
        .into_iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect()
}

/// The gauge readings a point's acceptance length is the mean of, when that is where its
/// length comes from (SGLang's gauge, no per-request count): each a mean over one of SGLang's
/// decode log intervals, so a sample of the server's acceptance in its own right, and the
/// spread of the point's number is theirs, not its requests'. A reading equal to the one before
/// is the same interval read twice (the gauge is polled faster than SGLang logs) and is dropped.
pub fn gauge_accept_readings(p: &Point) -> Option<Vec<f64>> {
    let a = acceptance(p)?;
    if a.per_request.is_some() || a.server_length.is_none() {
        return None;
    }
    let s = p.server_samples.as_ref()?;
    if s.scheme != MetricScheme::Sglang {
        return None;
    }
    let mut readings = sglang_gauge_samples(s);
    readings.dedup();
    Some(readings)
}

/// A request's mean tokens per chunk after its first: `(output − 1) / (chunks − 1)`; `None` with
/// fewer than two chunks.
pub fn request_tokens_per_chunk(r: &RequestRecord) -> Option<f64> {
    (r.chunks >= 2 && r.output_tokens >= r.chunks)
        .then(|| (r.output_tokens - 1) as f64 / (r.chunks - 1) as f64)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::bundle::ServerSamples;

    fn point(samples: Option<ServerSamples>, chunks: Option<ChunkTokens>) -> Point {
        Point {
            server_samples: samples,
            chunk_tokens: chunks,
            ..Point::empty(16, 1000, 500)
        }
    }

    fn tally(counts: &[(u64, u64)], exact: bool) -> ChunkTokens {
        let mut t = ChunkTokens::new();
        for &(tokens, n) in counts {
            for _ in 0..n {
                t.add(tokens);
            }
        }
        t.exact = exact;
        t
    }

    #[test]
    fn sglangs_gauge_is_averaged_over_the_samples_above_zero() {
        let mut gauges = BTreeMap::new();
        gauges.insert(
            "sglang:spec_accept_length".to_string(),
            vec![Some(0.0), Some(2.5), None, Some(2.7)],
        );
        let s = ServerSamples {
            scheme: MetricScheme::Sglang,
            gauges,
            ..ServerSamples::default()
        };
        let a = acceptance(&point(Some(s), Some(tally(&[(2, 1), (3, 1)], true))))
            .expect("speaks of it");
        assert!((a.server_length.expect("a length") - 2.6).abs() < 1e-12);
        assert_eq!(a.length(), a.server_length);
        assert_eq!(a.per_chunk, Some(2.5));
        assert_eq!(a.length_source(), "SGLang's spec_accept_length gauge");
    }

    #[test]
    fn vllms_counters_give_length_and_rate_over_the_point() {
        let before = BTreeMap::from([
            ("vllm:spec_decode_num_drafts_total".to_string(), 100.0),
            ("vllm:spec_decode_num_draft_tokens_total".to_string(), 300.0),
            (
                "vllm:spec_decode_num_accepted_tokens_total".to_string(),
                150.0,
            ),
        ]);
        // 200 drafts of 3 tokens, 320 accepted: 1 + 320/200 = 2.6 per step, 320/600 accepted.
        let after = BTreeMap::from([
            ("vllm:spec_decode_num_drafts_total".to_string(), 300.0),
            ("vllm:spec_decode_num_draft_tokens_total".to_string(), 900.0),
            (
                "vllm:spec_decode_num_accepted_tokens_total".to_string(),
                470.0,
            ),
        ]);
        let s = ServerSamples {
            scheme: MetricScheme::Vllm,
            counters_before: before,
            counters_after: after,
            ..ServerSamples::default()
        };
        let a = acceptance(&point(Some(s), None)).expect("speaks of it");
        assert!((a.server_length.expect("a length") - 2.6).abs() < 1e-12);
        assert!((a.draft_rate.expect("a rate") - 320.0 / 600.0).abs() < 1e-12);
    }

    #[test]
    fn the_stream_alone_speaks_only_when_chunks_carry_several_tokens() {
        assert_eq!(
            acceptance(&point(None, Some(tally(&[(1, 50)], true)))),
            None
        );
        let a = acceptance(&point(None, Some(tally(&[(1, 2), (4, 2)], false)))).expect("several");
        assert_eq!(a.length(), Some(2.5));
        assert_eq!(
            a.length_source(),
            "tokens per streamed chunk, estimated from each chunk's text"
        );
        assert_eq!(acceptance(&point(None, None)), None);
    }

    #[test]
    fn a_requests_tokens_per_chunk_leaves_out_the_first() {
        let record = |output: u64, chunks: u64| -> RequestRecord {
            serde_json::from_value(serde_json::json!({
                "start_s": 0.0, "ttft_s": 0.1, "e2e_s": 1.0, "input_tokens": 10,
                "output_tokens": output, "chunks": chunks, "prompt_hash": "h",
            }))
            .expect("a record")
        };
        assert_eq!(request_tokens_per_chunk(&record(11, 5)), Some(2.5));
        assert_eq!(request_tokens_per_chunk(&record(1, 1)), None);
    }

    /// Each request's own count (vLLM's `metrics.speculative_decoding`) is pooled over the
    /// point's successful requests and preferred to the server-wide metrics, which count other
    /// clients too.
    #[test]
    fn each_requests_count_is_pooled_and_preferred() {
        use crate::bundle::RequestSpec;
        let mut p = point(None, Some(tally(&[(2, 4)], true)));
        let spec = |steps, accepted, drafted| RequestSpec {
            steps,
            accepted,
            drafted: Some(drafted),
        };
        // 40 steps, 64 accepted: 1 + 64/40 = 2.6; 64 of 120 drafts accepted.
        let mut a = RequestRecord::test_ok(0.0, 0.1, 1.0, 105);
        a.spec = Some(spec(30, 45, 90));
        let mut b = RequestRecord::test_ok(0.0, 0.1, 1.0, 30);
        b.spec = Some(spec(10, 19, 30));
        let mut failed = RequestRecord::test_failed(0.0, 1.0);
        failed.spec = Some(spec(100, 0, 300));
        p.requests = vec![a, b, failed];
        let acc = acceptance(&p).expect("speaks of it");
        assert!((acc.per_request.unwrap() - 2.6).abs() < 1e-12);
        assert_eq!(acc.length(), acc.per_request);
        assert!((acc.draft_rate.unwrap() - 64.0 / 120.0).abs() < 1e-12);
        assert!(acc.length_source().contains("each request"));
        let lengths = request_accept_lengths(&p);
        assert_eq!(lengths, vec![2.5, 2.9]);
    }
}
