//! A request's timeline: timestamped chunks in, one [`RequestRecord`] out.
//!
//! Times are passed in (seconds since the request started), so this is pure and tested with
//! synthetic timelines and exact expectations.

use llmsweep_shared::bundle::{
    ChunkTokens, ErrorKind, ItlSummary, Reasoning, RequestError, RequestRecord, Setup,
};
use llmsweep_shared::metrics::Stats;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::load::run::api::{ChunkEvent, Usage};

/// Generated text kept per request for the output sample and the degenerate-output check.
const TEXT_KEEP: usize = 2000;

/// Token-carrying chunks per token asked past which a stream is stopped (one token a chunk is
/// the rule; a server that splits tokens further stays far below this).
pub(crate) const MAX_CHUNKS_PER_TOKEN: u64 = 16;

/// Bytes of kept answer (for `--turns`) per token asked past which a stream is stopped (a
/// token is a few bytes of text).
pub(crate) const MAX_ANSWER_BYTES_PER_TOKEN: u64 = 256;

/// What of the generated text a request keeps beyond its start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// Only the start ([`Finished::text`]): every request of a run has one, so it stays short.
    #[default]
    Start,
    /// The whole answer too ([`Finished::answer`]), for a conversation whose next turn resends
    /// it (`--turns`): cut short, the server would see another conversation than it wrote.
    Answer,
}

/// When a request in flight had its first token, in seconds since its point's origin, for
/// whoever follows the request before it ends (a precise level's judge).
#[derive(Debug)]
pub(crate) struct FirstToken(AtomicU64);

impl Default for FirstToken {
    fn default() -> Self {
        FirstToken(AtomicU64::new(NOT_YET))
    }
}

/// No first token yet: a NaN's bits, which no time has.
const NOT_YET: u64 = u64::MAX;

impl FirstToken {
    pub(crate) fn set(&self, s: f64) {
        self.0.store(s.to_bits(), Ordering::Relaxed);
    }

    /// The first token's time, once it came.
    pub(crate) fn get(&self) -> Option<f64> {
        let bits = self.0.load(Ordering::Relaxed);
        (bits != NOT_YET).then(|| f64::from_bits(bits))
    }
}

/// What the caller of a request follows of it besides its record: the generated text to keep,
/// and where to tell its first token's time while it is in flight.
#[derive(Debug, Clone, Default)]
pub(crate) struct Follow {
    pub keep: Keep,
    pub first_token: Option<Arc<FirstToken>>,
}

impl From<Keep> for Follow {
    fn from(keep: Keep) -> Self {
        Follow {
            keep,
            first_token: None,
        }
    }
}

/// Collects one request's events as they arrive.
#[derive(Debug, Default)]
pub struct Trace {
    ttft_s: Option<f64>,
    /// Told the first token's time, with the request's start since its point's origin.
    first_token: Option<(Arc<FirstToken>, f64)>,
    /// Each token chunk: its arrival, how many tokens it carried when the server said, and
    /// the bytes of text it carried.
    token_chunks: Vec<Chunk>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    /// A usage that ends the answer arrived: on a chunk without generated tokens (the usage
    /// chunk of `include_usage`) or with the finish reason. Usage on every token chunk
    /// (`continuous_usage_stats`) is a running count and ends nothing.
    final_usage: bool,
    /// Running `completion_tokens` for servers that send usage with every chunk.
    last_completion: Option<u64>,
    text: String,
    /// With [`Keep::Answer`]: all the generated text.
    answer: Option<String>,
    error: Option<RequestError>,
    setup: Option<Setup>,
    /// Token chunks that carried only reasoning, and when the first answer text came.
    reasoning_chunks: u64,
    first_answer_s: Option<f64>,
    /// The request's speculative counts, when the server stated them (the last statement).
    spec: Option<llmsweep_shared::bundle::RequestSpec>,
}

/// One token-carrying chunk of a stream: 16 bytes, kept for every token of every stream in
/// flight (BENCHMARKS.md, "Memory per stream").
#[derive(Debug, Clone, Copy)]
struct Chunk {
    t: f64,
    /// Tokens it carried, when the server's running usage said (`continuous_usage_stats`);
    /// [`Chunk::UNSAID`] when it did not. A count past `u32` is held at its largest value.
    carried: u32,
    /// Bytes of generated text in it (a chunk's text is bounded well below `u32`).
    bytes: u32,
}

impl Chunk {
    const UNSAID: u32 = u32::MAX;

    fn carried(&self) -> Option<u64> {
        (self.carried != Self::UNSAID).then_some(self.carried as u64)
    }
}

/// Chunks a trace makes room for before the first arrives: one per token asked, up to this.
const CHUNKS_RESERVED: u64 = 1024;

/// What a finished trace yields.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    pub record: RequestRecord,
    /// Every inter-token gap, seconds per token (for the point's ITL distribution).
    pub itl_gaps_s: Vec<f64>,
    /// Tokens per chunk after the first (see [`ChunkTokens`]).
    pub chunk_tokens: ChunkTokens,
    /// The start of the generated text.
    pub text: String,
    /// All the generated text, when the request asked to keep it ([`Keep::Answer`]).
    pub answer: Option<String>,
}

/// Facts about the request that the stream does not carry.
#[derive(Debug, Clone)]
pub struct RequestMeta {
    pub start_s: f64,
    pub input_tokens: u64,
    pub prompt_hash: String,
    pub content_hash: Option<String>,
    /// The most output tokens the request asked for (its `max_tokens`).
    pub output_asked: u64,
}

/// A server's `completion_tokens` is believed over the chunks it streamed when it is at most
/// this many tokens per token chunk (speculative decoding sends a handful per chunk)…
const USAGE_PER_CHUNK: u64 = 16;
/// …or at most this many times the tokens asked (a server that hides its reasoning streams few
/// chunks, but generates no more than it was asked for, give or take an overshoot)…
const USAGE_PER_ASKED: u64 = 2;
/// …plus this many, so that short answers are never doubted.
const USAGE_SLACK: u64 = 64;

/// Whether a usage count of `claimed` output tokens can be true of a stream of `chunks` token
/// chunks asked for `asked` tokens. One that cannot (2^64 − 1 tokens over 8 chunks) is not
/// used: the chunks are counted instead, and the request is marked as estimated.
pub(crate) fn usage_believable(claimed: u64, chunks: u64, asked: u64) -> bool {
    let by_chunks = chunks.saturating_mul(USAGE_PER_CHUNK);
    let by_asked = asked.saturating_mul(USAGE_PER_ASKED);
    claimed <= by_chunks.max(by_asked).saturating_add(USAGE_SLACK)
}

impl Trace {
    pub fn new() -> Self {
        Self::default()
    }

    /// A trace that keeps what `keep` asks of the generated text.
    pub fn keeping(keep: Keep) -> Self {
        Trace {
            answer: (keep == Keep::Answer).then(String::new),
            ..Self::default()
        }
    }

    /// Tells `first_token` when the first token comes: the request started `start_s` after its
    /// point's origin.
    pub(crate) fn tell_first_token(&mut self, first_token: Arc<FirstToken>, start_s: f64) {
        self.first_token = Some((first_token, start_s));
    }

    /// Makes room for the chunks of an answer of `output_len` tokens (up to
    /// [`CHUNKS_RESERVED`]), so that the token path does not grow the list as they come.
    pub fn expect(&mut self, output_len: u64) {
        self.token_chunks
            .reserve(output_len.min(CHUNKS_RESERVED) as usize + 1);
    }

    /// Records a parsed chunk that arrived `t` seconds after the request started.
    pub fn on_chunk(&mut self, t: f64, ev: &ChunkEvent<'_>) {
        if let Some(e) = &ev.error {
            self.fail(ErrorKind::Stream, None, e.clone());
            return;
        }
        if ev.spec.is_some() {
            self.spec = ev.spec;
        }
        if self.ttft_s.is_none() && ev.has_text() {
            self.ttft_s = Some(t);
            if let Some((told, start_s)) = &self.first_token {
                told.set(start_s + t);
            }
        }
        if ev.reasoning && !ev.answer {
            self.reasoning_chunks += 1;
        }
        if ev.answer && self.first_answer_s.is_none() {
            self.first_answer_s = Some(t);
        }
        let mut carried = None;
        if let Some(u) = ev.usage {
            if let (Some(now), true) = (u.completion_tokens, ev.token_chunk) {
                carried = Some(now.saturating_sub(self.last_completion.unwrap_or(0)));
                self.last_completion = Some(now);
            }
            self.usage = Some(u);
            self.final_usage |= !ev.token_chunk || ev.finish_reason.is_some();
        }
        if ev.token_chunk {
            self.token_chunks.push(Chunk {
                t,
                carried: carried.map_or(Chunk::UNSAID, |n| n.min(Chunk::UNSAID as u64 - 1) as u32),
                bytes: ev.text.len().min(u32::MAX as usize) as u32,
            });
        }
        if let Some(reason) = &ev.finish_reason {
            self.finish_reason = Some(reason.to_string());
        }
        if self.text.len() < TEXT_KEEP {
            self.text.push_str(&ev.text);
        }
        if let Some(all) = &mut self.answer {
            all.push_str(&ev.text);
        }
    }

    /// Why the stream has grown past anything an answer of `output_len` tokens needs, if it has:
    /// more token-carrying chunks than [`MAX_CHUNKS_PER_TOKEN`] per token asked (and a margin),
    /// or a kept answer past [`MAX_ANSWER_BYTES_PER_TOKEN`] per token (and 1 MiB). A server
    /// streaming small events without end would otherwise grow them until the timeout.
    pub fn overflow(&self, output_len: u64) -> Option<String> {
        let chunks = self.token_chunks.len() as u64;
        let chunk_cap = output_len
            .saturating_mul(MAX_CHUNKS_PER_TOKEN)
            .saturating_add(4096);
        if chunks > chunk_cap {
            return Some(format!(
                "the stream sent more than {chunk_cap} chunks with text for {output_len} tokens asked, more than any answer needs: the request was stopped there"
            ));
        }
        let kept = self.answer.as_ref().map_or(0, String::len) as u64;
        let answer_cap = output_len
            .saturating_mul(MAX_ANSWER_BYTES_PER_TOKEN)
            .max(1 << 20);
        (kept > answer_cap).then(|| {
            format!(
                "the answer grew past {answer_cap} bytes for {output_len} tokens asked, more than any answer needs: the request was stopped there"
            )
        })
    }

    /// The connection closed before `[DONE]`. With a finish reason or usage the answer was
    /// complete (some servers omit `[DONE]`); without either it was cut, and the request failed.
    pub fn ended_without_done(&mut self) {
        if self.finish_reason.is_none() && !self.final_usage {
            let n = self.token_chunks.len();
            self.fail(
                ErrorKind::EndedEarly,
                None,
                format!(
                    "the stream ended early: the connection closed after {n} token chunks without [DONE], a finish_reason or usage"
                ),
            );
        }
    }

    /// `[DONE]` arrived. Without a finish reason or usage and with fewer token chunks than
    /// `asked`, the server abandoned the request rather than finished it.
    pub fn on_done(&mut self, asked: u64) {
        let n = self.token_chunks.len() as u64;
        if self.finish_reason.is_none() && !self.final_usage && n < asked {
            self.fail(
                ErrorKind::EndedEarly,
                None,
                format!(
                    "the stream ended early: [DONE] after {n} of {asked} token chunks without a finish_reason or usage, so the server abandoned the request (llama-cpp-python does this when another request arrives, unless started with --interrupt_requests False)"
                ),
            );
        }
    }

    /// The response headers arrived: on a new connection (opened in `connect_s`) or a
    /// reused one, `headers_s` after the request started.
    pub fn on_headers(&mut self, new_connection: bool, connect_s: Option<f64>, headers_s: f64) {
        self.setup = Some(Setup {
            new_connection,
            connect_s,
            headers_s,
        });
    }

    /// Records a failure; the first one wins.
    pub fn fail(&mut self, kind: ErrorKind, status: Option<u16>, message: String) {
        if self.error.is_none() {
            self.error = Some(RequestError {
                kind,
                status,
                message,
            });
        }
    }

    /// Ends the request at `end_s` seconds after its start.
    pub fn finish(mut self, end_s: f64, meta: RequestMeta) -> Finished {
        let chunks = self.token_chunks.len() as u64;
        let claimed = self.usage.and_then(|u| u.completion_tokens);
        let usage_tokens = claimed.filter(|&n| usage_believable(n, chunks, meta.output_asked));
        let believed = claimed.is_none() || usage_tokens.is_some();
        let reasoning_tokens = self
            .usage
            .and_then(|u| u.reasoning_tokens)
            .filter(|_| believed);
        if self.error.is_none() && chunks == 0 && claimed.is_none() && self.finish_reason.is_none()
        {
            self.fail(
                ErrorKind::Protocol,
                None,
                "the stream ended without a generated token, finish_reason or usage".into(),
            );
        }
        let output_tokens = usage_tokens.unwrap_or(chunks);
        let per_chunk = self.tokens_per_chunk(output_tokens, believed);
        let itl_gaps_s: Vec<f64> = self
            .token_chunks
            .windows(2)
            .zip(per_chunk.iter().skip(1))
            .map(|(w, (tokens, _))| (w[1].t - w[0].t) / tokens)
            .collect();
        let mut chunk_tokens = ChunkTokens::new();
        for &(tokens, exact) in per_chunk.iter().skip(1) {
            chunk_tokens.add(tokens.round().max(1.0) as u64);
            chunk_tokens.exact &= exact;
        }
        let itl = Stats::from_values(itl_gaps_s.iter().copied()).map(|s| ItlSummary {
            mean_s: s.mean,
            p50_s: s.p50,
            p99_s: s.p99,
            max_s: s.max,
        });
        let record = RequestRecord {
            start_s: meta.start_s,
            ttft_s: self.ttft_s,
            e2e_s: end_s,
            input_tokens: meta.input_tokens,
            prompt_tokens: self.usage.and_then(|u| u.prompt_tokens),
            output_tokens,
            tokens_estimated: usage_tokens.is_none() && chunks > 0,
            cached_tokens: self.usage.and_then(|u| {
                believable_cache(u.cached_tokens, u.prompt_tokens, meta.input_tokens)
            }),
            finish_reason: self.finish_reason,
            error: self.error,
            prompt_hash: meta.prompt_hash,
            content_hash: meta.content_hash,
            chunks,
            itl,
            repeat: None,
            setup: self.setup,
            due: None,
            output_asked: None,
            turn: None,
            spec: self.spec,
            // A server may count reasoning tokens it did not stream (hidden reasoning).
            reasoning: (self.reasoning_chunks > 0 || reasoning_tokens.is_some_and(|t| t > 0))
                .then_some(Reasoning {
                    chunks: self.reasoning_chunks,
                    first_answer_s: self.first_answer_s,
                    tokens: reasoning_tokens,
                }),
        };
        Finished {
            record,
            itl_gaps_s,
            chunk_tokens,
            text: self.text,
            answer: self.answer,
        }
    }

    /// The tokens each chunk carried, and whether that is the server's count: the server's
    /// running usage when it sent one (`continuous_usage_stats`), else, when the final usage
    /// says the chunks carried more tokens than there were chunks (speculative decoding), the
    /// request's tokens shared out by each chunk's part of the text, else 1. With `believed`
    /// false the server's counts are not used.
    fn tokens_per_chunk(&self, output_tokens: u64, believed: bool) -> Vec<(f64, bool)> {
        let chunks = self.token_chunks.len() as u64;
        let bytes: usize = self.token_chunks.iter().map(|c| c.bytes as usize).sum();
        let several = chunks > 0 && output_tokens > chunks;
        let average = if several {
            output_tokens as f64 / chunks as f64
        } else {
            1.0
        };
        self.token_chunks
            .iter()
            .map(|c| match c.carried() {
                Some(n) if n > 0 && believed => (n as f64, true),
                _ if several && bytes > 0 => {
                    // At least one token a chunk: an empty chunk still took a step.
                    let share = output_tokens as f64 * c.bytes as f64 / bytes as f64;
                    (share.max(1.0), false)
                }
                _ => (average, !several),
            })
            .collect()
    }
}

/// A server's count of cached prompt tokens, when it can be true: no more than the prompt it
/// reports (or, when it reports none, twice the prompt sent and a chat template's worth). A
/// count past that (2^64 − 1 for a 20-token prompt) is the server's bug or a lie, and is
/// dropped rather than reported as a cache hit.
fn believable_cache(cached: Option<u64>, prompt: Option<u64>, sent: u64) -> Option<u64> {
    let most = prompt.unwrap_or_else(|| sent.saturating_mul(2).saturating_add(1024));
    cached.filter(|&c| c <= most)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::run::api::parse_chunk;

    fn meta() -> RequestMeta {
        RequestMeta {
            start_s: 2.0,
            input_tokens: 100,
            prompt_hash: "h".into(),
            content_hash: None,
            output_asked: 16,
        }
    }

    fn feed(trace: &mut Trace, t: f64, json: &str) {
        trace.on_chunk(t, &parse_chunk(json).unwrap());
    }

    /// A probe's finding: `completion_tokens` of 2^64 − 1 over 8 streamed chunks was taken as
    /// the output, a level of 3.5e20 tok/s. A count no stream of that length could carry is not
    /// believed: the chunks are counted, and the request says its count is estimated.
    #[test]
    fn usage_far_beyond_the_streamed_chunks_is_not_believed() {
        let absurd = format!(
            r#"{{"choices":[{{"text":"h","finish_reason":"length"}}],"usage":{{"prompt_tokens":100,"completion_tokens":{}}}}}"#,
            u64::MAX
        );
        let mut t = Trace::new();
        for i in 0..7 {
            feed(
                &mut t,
                0.1 * (i + 1) as f64,
                r#"{"choices":[{"text":"h"}]}"#,
            );
        }
        feed(&mut t, 0.8, &absurd);
        t.on_done(16);
        let r = t.finish(0.9, meta()).record;
        assert!(r.is_ok(), "{:?}", r.error);
        assert_eq!((r.output_tokens, r.chunks), (8, 8));
        assert!(r.tokens_estimated);
        // A running count that jumps is not used to divide the gaps either.
        let mut t = Trace::new();
        feed(
            &mut t,
            0.1,
            r#"{"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}"#,
        );
        feed(&mut t, 0.2, &absurd);
        let fin = t.finish(0.3, meta());
        assert_eq!(fin.record.output_tokens, 2);
        assert_eq!(fin.itl_gaps_s.len(), 1);
        assert!(
            (fin.itl_gaps_s[0] - 0.1).abs() < 1e-9,
            "{:?}",
            fin.itl_gaps_s
        );
        // At the bound it is still believed: 8 chunks × 16 + 64, or 2 × asked + 64.
        assert!(usage_believable(8 * 16 + 64, 8, 16));
        assert!(!usage_believable(8 * 16 + 65, 8, 16));
        assert!(usage_believable(2 * 4000 + 64, 1, 4000));
        assert!(!usage_believable(u64::MAX, 1000, 1000));
        assert!(usage_believable(u64::MAX, u64::MAX, 0));
    }

    #[test]
    fn a_stream_that_stops_without_its_end_is_a_failure() {
        let token = r#"{"choices":[{"text":" a","finish_reason":null}]}"#;
        // The connection closed after two tokens: no [DONE], finish_reason or usage.
        let mut tr = Trace::new();
        feed(&mut tr, 0.1, token);
        feed(&mut tr, 0.2, token);
        tr.ended_without_done();
        let e = tr.finish(0.3, meta()).record.error.unwrap();
        assert_eq!(e.kind, ErrorKind::EndedEarly);
        assert!(
            e.message.contains("after 2 token chunks without [DONE]"),
            "{}",
            e.message
        );
        // [DONE] after 1 of 32 tokens with no finish_reason: abandoned by the server.
        let mut tr = Trace::new();
        feed(&mut tr, 0.1, token);
        tr.on_done(32);
        let e = tr.finish(0.2, meta()).record.error.unwrap();
        assert_eq!(e.kind, ErrorKind::EndedEarly);
        assert!(
            e.message.contains("[DONE] after 1 of 32 token chunks"),
            "{}",
            e.message
        );
        // A finish_reason makes it a finished answer, with or without [DONE].
        for done in [true, false] {
            let mut tr = Trace::new();
            feed(&mut tr, 0.1, token);
            feed(
                &mut tr,
                0.2,
                r#"{"choices":[{"text":"","finish_reason":"stop"}]}"#,
            );
            if done {
                tr.on_done(32);
            } else {
                tr.ended_without_done();
            }
            let r = tr.finish(0.3, meta()).record;
            assert!(r.is_ok() && r.output_tokens == 1, "{:?}", r.error);
        }
        // Every asked token and [DONE], but no finish_reason: complete.
        let mut tr = Trace::new();
        feed(&mut tr, 0.1, token);
        feed(&mut tr, 0.2, token);
        tr.on_done(2);
        assert!(tr.finish(0.3, meta()).record.is_ok());
    }

    #[test]
    fn chat_stream_with_role_chunk_and_usage() {
        let mut tr = Trace::new();
        feed(
            &mut tr,
            0.10,
            r#"{"choices":[{"delta":{"role":"assistant","content":""}}]}"#,
        );
        feed(&mut tr, 0.30, r#"{"choices":[{"delta":{"content":"a"}}]}"#);
        feed(&mut tr, 0.35, r#"{"choices":[{"delta":{"content":" b"}}]}"#);
        feed(
            &mut tr,
            0.45,
            r#"{"choices":[{"delta":{"content":" c"},"finish_reason":"length"}]}"#,
        );
        feed(
            &mut tr,
            0.46,
            r#"{"choices":[],"usage":{"prompt_tokens":101,"completion_tokens":3}}"#,
        );
        let f = tr.finish(0.47, meta());
        let r = &f.record;
        assert_eq!(
            r.ttft_s,
            Some(0.30),
            "the role-only chunk is not the first token"
        );
        assert_eq!(
            (r.output_tokens, r.chunks, r.tokens_estimated),
            (3, 3, false)
        );
        assert_eq!(r.prompt_tokens, Some(101));
        assert_eq!(r.finish_reason.as_deref(), Some("length"));
        assert_eq!((r.start_s, r.e2e_s), (2.0, 0.47));
        assert!(r.is_ok());
        assert_eq!(f.text, "a b c");
        let gaps: Vec<f64> = f.itl_gaps_s.iter().map(|g| (g * 1000.0).round()).collect();
        assert_eq!(gaps, [50.0, 100.0]);
    }

    #[test]
    fn a_cache_count_past_the_prompt_is_not_believed() {
        for (usage, cached) in [
            (
                r#""prompt_tokens":20,"prompt_tokens_details":{"cached_tokens":18446744073709551615}"#,
                None,
            ),
            (
                r#""prompt_tokens":20,"prompt_tokens_details":{"cached_tokens":21}"#,
                None,
            ),
            (
                r#""prompt_tokens":20,"prompt_tokens_details":{"cached_tokens":16}"#,
                Some(16),
            ),
            // No prompt count: bounded by what was sent (100 here), with room for a template.
            (r#""cached_tokens":1224"#, Some(1224)),
            (r#""cached_tokens":1225"#, None),
        ] {
            let mut tr = Trace::new();
            feed(
                &mut tr,
                0.1,
                r#"{"choices":[{"delta":{"content":"a"},"finish_reason":"length"}]}"#,
            );
            feed(
                &mut tr,
                0.2,
                &format!(r#"{{"choices":[],"usage":{{"completion_tokens":1,{usage}}}}}"#),
            );
            assert_eq!(
                tr.finish(0.3, meta()).record.cached_tokens,
                cached,
                "{usage}"
            );
        }
    }

    #[test]
    fn a_reasoning_stream_keeps_its_first_answer_time_and_reasoning_chunks() {
        let mut tr = Trace::new();
        feed(
            &mut tr,
            0.20,
            r#"{"choices":[{"delta":{"reasoning_content":"Let"}}]}"#,
        );
        // The tree reader (an escape forces it here) sees reasoning the same way.
        feed(
            &mut tr,
            0.25,
            r#"{"choices":[{"delta":{"reasoning":" me\u0020think"}}]}"#,
        );
        feed(
            &mut tr,
            0.30,
            r#"{"choices":[{"delta":{"reasoning_content":" hard"}}]}"#,
        );
        feed(&mut tr, 0.50, r#"{"choices":[{"delta":{"content":"42"}}]}"#);
        feed(
            &mut tr,
            0.55,
            r#"{"choices":[{"delta":{"content":"."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":5,"completion_tokens_details":{"reasoning_tokens":3}}}"#,
        );
        let r = tr.finish(0.56, meta()).record;
        assert_eq!(
            r.ttft_s,
            Some(0.20),
            "TTFT counts the first reasoning token"
        );
        let reasoning = r.reasoning.expect("a reasoning stream says so");
        assert_eq!(reasoning.chunks, 3);
        assert_eq!(reasoning.first_answer_s, Some(0.50));
        assert_eq!(reasoning.tokens, Some(3), "the server's count of them");
        // A stream without reasoning has no such section.
        let mut plain = Trace::new();
        feed(
            &mut plain,
            0.1,
            r#"{"choices":[{"text":"a","finish_reason":"length"}]}"#,
        );
        assert_eq!(plain.finish(0.2, meta()).record.reasoning, None);
    }

    #[test]
    fn a_followed_request_tells_its_first_token_while_in_flight() {
        let told = Arc::new(FirstToken::default());
        let mut tr = Trace::new();
        // The request started 12 s after its point's origin.
        tr.tell_first_token(told.clone(), 12.0);
        feed(&mut tr, 0.2, r#"{"choices":[{"text":""}]}"#);
        assert_eq!(told.get(), None, "an empty chunk is not the first token");
        feed(&mut tr, 0.3, r#"{"choices":[{"text":"x"}]}"#);
        assert_eq!(told.get(), Some(12.3));
        feed(&mut tr, 0.4, r#"{"choices":[{"text":"y"}]}"#);
        assert_eq!(told.get(), Some(12.3), "told once");
    }

    #[test]
    fn no_usage_counts_chunks_including_empty_text_ones() {
        let mut tr = Trace::new();
        feed(&mut tr, 0.2, r#"{"choices":[{"text":""}]}"#);
        feed(&mut tr, 0.3, r#"{"choices":[{"text":"x"}]}"#);
        feed(&mut tr, 0.4, r#"{"choices":[{"text":"y"}]}"#);
        feed(
            &mut tr,
            0.5,
            r#"{"choices":[{"text":"","finish_reason":"length"}]}"#,
        );
        let r = tr.finish(0.5, meta()).record;
        assert_eq!(r.ttft_s, Some(0.3), "an empty chunk does not end TTFT");
        assert_eq!(
            (r.output_tokens, r.chunks, r.tokens_estimated),
            (3, 3, true)
        );
    }

    #[test]
    fn multi_token_chunks_divide_the_gap() {
        // Speculative decoding: 3 chunks carry 9 tokens; the server says nothing per chunk.
        let mut tr = Trace::new();
        feed(&mut tr, 0.1, r#"{"choices":[{"text":"abc"}]}"#);
        feed(&mut tr, 0.4, r#"{"choices":[{"text":"def"}]}"#);
        feed(
            &mut tr,
            0.7,
            r#"{"choices":[{"text":"ghi","finish_reason":"length"}]}"#,
        );
        feed(
            &mut tr,
            0.7,
            r#"{"choices":[],"usage":{"completion_tokens":9}}"#,
        );
        let f = tr.finish(0.7, meta());
        assert_eq!(f.record.output_tokens, 9);
        for g in &f.itl_gaps_s {
            assert!((g - 0.1).abs() < 1e-9, "{g}");
        }
    }

    #[test]
    fn per_chunk_usage_gives_exact_tokens_per_chunk() {
        let mut tr = Trace::new();
        feed(
            &mut tr,
            0.1,
            r#"{"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}"#,
        );
        feed(
            &mut tr,
            0.5,
            r#"{"choices":[{"text":"bcde"}],"usage":{"completion_tokens":5}}"#,
        );
        let f = tr.finish(0.5, meta());
        assert_eq!(f.record.output_tokens, 5);
        assert_eq!(f.itl_gaps_s, [0.1]);
        assert_eq!(f.chunk_tokens.counts, [0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!((f.chunk_tokens.tokens, f.chunk_tokens.exact), (4, true));
    }

    /// A running count on every chunk (`continuous_usage_stats`) does not say the answer
    /// ended: a stream cut after it still failed.
    #[test]
    fn running_usage_does_not_end_an_answer() {
        let mut tr = Trace::new();
        feed(
            &mut tr,
            0.1,
            r#"{"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}"#,
        );
        feed(
            &mut tr,
            0.2,
            r#"{"choices":[{"text":"bc"}],"usage":{"completion_tokens":3}}"#,
        );
        tr.ended_without_done();
        let r = tr.finish(0.2, meta()).record;
        assert_eq!(r.error.map(|e| e.kind), Some(ErrorKind::EndedEarly));
        // The usage chunk after the last token does end it.
        let mut tr = Trace::new();
        feed(
            &mut tr,
            0.1,
            r#"{"choices":[{"text":"a"}],"usage":{"completion_tokens":1}}"#,
        );
        feed(
            &mut tr,
            0.2,
            r#"{"choices":[],"usage":{"completion_tokens":1}}"#,
        );
        tr.ended_without_done();
        assert_eq!(tr.finish(0.2, meta()).record.error, None);
    }

    #[test]
    fn without_per_chunk_counts_tokens_are_shared_out_by_text_and_marked_estimated() {
        // 6 tokens in chunks of 1, 3 and 2 characters; only the final usage says 6.
        let mut tr = Trace::new();
        feed(&mut tr, 0.1, r#"{"choices":[{"text":"a"}]}"#);
        feed(&mut tr, 0.4, r#"{"choices":[{"text":"bcd"}]}"#);
        feed(
            &mut tr,
            0.6,
            r#"{"choices":[{"text":"ef","finish_reason":"length"}]}"#,
        );
        feed(
            &mut tr,
            0.6,
            r#"{"choices":[],"usage":{"completion_tokens":6}}"#,
        );
        let f = tr.finish(0.6, meta());
        assert_eq!(f.record.output_tokens, 6);
        assert_eq!(f.itl_gaps_s.len(), 2);
        assert!((f.itl_gaps_s[0] - 0.3 / 3.0).abs() < 1e-12);
        assert!((f.itl_gaps_s[1] - 0.2 / 2.0).abs() < 1e-12);
        assert_eq!(f.chunk_tokens.counts, [0, 1, 1, 0, 0, 0, 0, 0]);
        assert!(!f.chunk_tokens.exact);
    }

    #[test]
    fn one_token_per_chunk_is_exact_without_any_count() {
        let mut tr = Trace::new();
        feed(&mut tr, 0.1, r#"{"choices":[{"text":"a"}]}"#);
        feed(&mut tr, 0.2, r#"{"choices":[{"text":"b"}]}"#);
        feed(
            &mut tr,
            0.3,
            r#"{"choices":[],"usage":{"completion_tokens":2}}"#,
        );
        let f = tr.finish(0.3, meta());
        assert_eq!(f.chunk_tokens.counts, [1, 0, 0, 0, 0, 0, 0, 0]);
        assert!(f.chunk_tokens.exact);
    }

    #[test]
    fn error_event_fails_the_request_and_keeps_partial_tokens() {
        let mut tr = Trace::new();
        feed(&mut tr, 0.1, r#"{"choices":[{"text":"a"}]}"#);
        feed(&mut tr, 0.2, r#"{"error":{"message":"engine died"}}"#);
        let r = tr.finish(0.2, meta()).record;
        let e = r.error.unwrap();
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ErrorKind::Stream, "engine died")
        );
        assert_eq!(r.output_tokens, 1);
    }

    #[test]
    fn an_answer_asked_for_is_kept_whole_and_the_start_stays_short() {
        // 300 chunks of 10 characters: 3000 in all, past the 2000 kept by default.
        let chunk = r#"{"choices":[{"text":" 123456789"}]}"#;
        let run = |keep| {
            let mut tr = Trace::keeping(keep);
            for i in 0..300 {
                feed(&mut tr, 0.1 + f64::from(i) * 0.01, chunk);
            }
            tr.on_done(300);
            tr.finish(3.1, meta())
        };
        let whole = run(Keep::Answer);
        assert_eq!(
            whole.answer.as_deref(),
            Some(" 123456789".repeat(300).as_str())
        );
        let start = run(Keep::Start);
        assert_eq!(start.answer, None);
        // The start is the same either way: the record's sample does not depend on turns.
        assert_eq!(whole.text, start.text);
        assert_eq!(start.text.len(), 2000);
    }

    #[test]
    fn empty_stream_is_a_protocol_error() {
        let r = Trace::new().finish(0.1, meta()).record;
        assert_eq!(r.error.unwrap().kind, ErrorKind::Protocol);
    }

    #[test]
    fn zero_tokens_with_a_finish_reason_is_a_short_success() {
        let mut tr = Trace::new();
        feed(
            &mut tr,
            0.1,
            r#"{"choices":[{"text":"","finish_reason":"stop"}]}"#,
        );
        feed(
            &mut tr,
            0.1,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":0}}"#,
        );
        let r = tr.finish(0.1, meta()).record;
        assert!(r.is_ok());
        assert_eq!((r.output_tokens, r.ttft_s), (0, None));
    }

    #[test]
    fn a_stream_of_endless_small_chunks_is_stopped_at_its_bound() {
        let mut t = Trace::keeping(Keep::Answer);
        let ev = ChunkEvent {
            text: "x".into(),
            token_chunk: true,
            ..ChunkEvent::default()
        };
        for i in 0..(16 * 10 + 4096) {
            t.on_chunk(i as f64 * 1e-3, &ev);
        }
        assert_eq!(t.overflow(10), None);
        t.on_chunk(10.0, &ev);
        let why = t.overflow(10).unwrap();
        assert!(
            why.starts_with("the stream sent more than 4256 chunks with text for 10 tokens asked"),
            "{why}"
        );
        // A kept answer is bounded too: 1 MiB at least.
        let mut t = Trace::keeping(Keep::Answer);
        let big = ChunkEvent {
            text: "y".repeat(600 << 10).into(),
            token_chunk: true,
            ..ChunkEvent::default()
        };
        t.on_chunk(0.0, &big);
        assert_eq!(t.overflow(10), None);
        t.on_chunk(0.1, &big);
        assert!(
            t.overflow(10)
                .unwrap()
                .starts_with("the answer grew past 1048576 bytes")
        );
    }
}
