//! The per-token hot path, measured: SSE bytes → events → chunks → a request's trace → its
//! record, and a level's summary of 100k records.
//!
//! `cargo bench -p llmsweep --bench hot_path`; BENCHMARKS.md ("Hot path") has the numbers.

use std::hint::black_box;
use std::ops::ControlFlow;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use llmsweep::bench_api::{ChunkReader, RequestMeta, SseDecoder, Trace, parse_chunk};
use llmsweep_shared::bundle::{ItlSummary, RequestRecord};
use llmsweep_shared::metrics::summarize;

/// Tokens per streamed request.
const TOKENS: usize = 256;

/// A vLLM `/v1/completions` stream: one token per event, usage only in the last chunk.
fn vllm_completions() -> Vec<u8> {
    let mut s = String::new();
    for i in 0..TOKENS {
        s.push_str(&format!(
            "data: {{\"id\":\"cmpl-5c0a3f9e8b7d4e21a6f0c1d2e3f4a5b6\",\"object\":\"text_completion\",\"created\":1764590000,\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{{\"index\":0,\"text\":\" tok{i}\",\"logprobs\":null,\"finish_reason\":null,\"stop_reason\":null}}],\"usage\":null}}\n\n"
        ));
    }
    s.push_str("data: {\"id\":\"cmpl-5c0a3f9e8b7d4e21a6f0c1d2e3f4a5b6\",\"object\":\"text_completion\",\"created\":1764590000,\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{\"index\":0,\"text\":\"\",\"logprobs\":null,\"finish_reason\":\"length\",\"stop_reason\":null}],\"usage\":null}\n\n");
    s.push_str(&format!("data: {{\"id\":\"cmpl-5c0a3f9e8b7d4e21a6f0c1d2e3f4a5b6\",\"object\":\"text_completion\",\"created\":1764590000,\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[],\"usage\":{{\"prompt_tokens\":16,\"total_tokens\":{},\"completion_tokens\":{TOKENS},\"prompt_tokens_details\":null}}}}\n\n", TOKENS + 16));
    s.push_str("data: [DONE]\n\n");
    s.into_bytes()
}

/// The `finish_reason` of the `i`th token's chunk: `"length"` on the last, else `null`.
fn finish_reason(i: usize) -> &'static str {
    if i + 1 == TOKENS {
        "\"length\""
    } else {
        "null"
    }
}

/// An SGLang `/v1/chat/completions` stream with CRLF line ends and a keep-alive comment, usage
/// in every chunk (`continuous_usage_stats`).
fn sglang_chat() -> Vec<u8> {
    let mut s = String::from(
        ": ping\r\n\r\ndata: {\"id\":\"9d2c\",\"object\":\"chat.completion.chunk\",\"created\":1764590000,\"model\":\"default\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"reasoning_content\":null,\"tool_calls\":null},\"logprobs\":null,\"finish_reason\":null,\"matched_stop\":null}],\"usage\":null}\r\n\r\n",
    );
    for i in 0..TOKENS {
        let finish = finish_reason(i);
        s.push_str(&format!(
            "data: {{\"id\":\"9d2c\",\"object\":\"chat.completion.chunk\",\"created\":1764590000,\"model\":\"default\",\"choices\":[{{\"index\":0,\"delta\":{{\"role\":null,\"content\":\" w\\u00e9rd{i}\",\"reasoning_content\":null,\"tool_calls\":null}},\"logprobs\":null,\"finish_reason\":{finish},\"matched_stop\":null}}],\"usage\":{{\"prompt_tokens\":16,\"total_tokens\":{},\"completion_tokens\":{}}}}}\r\n\r\n",
            17 + i,
            i + 1
        ));
    }
    s.push_str("data: [DONE]\r\n\r\n");
    s.into_bytes()
}

/// A vLLM `/v1/chat/completions` stream with `continuous_usage_stats`: the count so far in
/// every chunk, text without escapes.
fn vllm_chat_usage() -> Vec<u8> {
    let mut s = String::new();
    for i in 0..TOKENS {
        let finish = finish_reason(i);
        s.push_str(&format!(
            "data: {{\"id\":\"chatcmpl-5c0a3f9e8b7d4e21a6f0c1d2e3f4a5b6\",\"object\":\"chat.completion.chunk\",\"created\":1764590000,\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\" tok{i}\"}},\"logprobs\":null,\"finish_reason\":{finish}}}],\"usage\":{{\"prompt_tokens\":16,\"total_tokens\":{},\"completion_tokens\":{}}}}}\n\n",
            17 + i,
            i + 1
        ));
    }
    s.push_str("data: [DONE]\n\n");
    s.into_bytes()
}

/// What the client does with one read: decode, parse each event (with the answer's reader, as
/// the client does), feed the trace. Returns whether `[DONE]` came.
fn feed(
    decoder: &mut SseDecoder,
    reader: &mut ChunkReader,
    bytes: &[u8],
    t: f64,
    trace: &mut Trace,
) -> bool {
    let flow = decoder.feed(bytes, |ev| {
        let data = ev.data.trim();
        if data == "[DONE]" {
            return ControlFlow::Break(());
        }
        if let Some(chunk) = reader.read(data) {
            trace.on_chunk(t, &chunk);
        }
        ControlFlow::Continue(())
    });
    flow.is_break()
}

fn meta() -> RequestMeta {
    RequestMeta {
        start_s: 0.0,
        input_tokens: 16,
        prompt_hash: "0123456789abcdef".into(),
        content_hash: None,
        output_asked: 1024,
    }
}

/// One whole request: the stream read in `read`-byte pieces, through to its record.
fn request(stream: &[u8], read: usize) -> RequestRecord {
    let mut decoder = SseDecoder::new();
    let mut reader = ChunkReader::default();
    let mut trace = Trace::new();
    for (i, piece) in stream.chunks(read).enumerate() {
        if feed(
            &mut decoder,
            &mut reader,
            piece,
            i as f64 * 0.01,
            &mut trace,
        ) {
            break;
        }
    }
    trace.finish(10.0, meta()).record
}

fn decode_path(c: &mut Criterion) {
    let mut g = c.benchmark_group("decode_path");
    g.throughput(Throughput::Elements(TOKENS as u64));
    for (name, stream) in [
        ("vllm_completions", vllm_completions()),
        ("sglang_chat", sglang_chat()),
        ("vllm_chat_usage", vllm_chat_usage()),
    ] {
        let r = request(&stream, 1500);
        assert_eq!((r.output_tokens, r.chunks), (TOKENS as u64, TOKENS as u64));
        // The SSE decoder alone, 1.5 KB reads (events split across reads).
        g.bench_function(format!("sse/{name}/1500B"), |b| {
            b.iter(|| {
                let mut d = SseDecoder::new();
                let mut n = 0;
                for piece in stream.chunks(1500) {
                    let _ = d.feed(black_box(piece), |ev| {
                        n += ev.data.len();
                        ControlFlow::<()>::Continue(())
                    });
                }
                n
            })
        });
        // Decoder + chunk parse + trace + record, 1.5 KB reads and one read per event.
        g.bench_function(format!("request/{name}/1500B"), |b| {
            b.iter(|| request(black_box(&stream), 1500))
        });
        let event_len = stream.len() / (TOKENS + 3);
        g.bench_function(format!("request/{name}/per_event_read"), |b| {
            b.iter(|| request(black_box(&stream), event_len))
        });
    }
    g.finish();
}

fn chunk_parse(c: &mut Criterion) {
    let mut g = c.benchmark_group("parse_chunk");
    g.throughput(Throughput::Elements(1));
    let completions = r#"{"id":"cmpl-5c0a3f9e8b7d4e21a6f0c1d2e3f4a5b6","object":"text_completion","created":1764590000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}"#;
    let chat = r#"{"id":"9d2c","object":"chat.completion.chunk","created":1764590000,"model":"default","choices":[{"index":0,"delta":{"role":null,"content":" w\u00e9rd","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":{"prompt_tokens":16,"total_tokens":17,"completion_tokens":1}}"#;
    for (name, json) in [("completions", completions), ("chat_usage", chat)] {
        assert!(parse_chunk(json).is_some_and(|e| e.token_chunk));
        g.bench_function(name, |b| b.iter(|| parse_chunk(black_box(json))));
    }
    g.finish();
}

fn trace_to_record(c: &mut Criterion) {
    let chunks: Vec<_> = (0..TOKENS)
        .map(|i| format!(r#"{{"choices":[{{"index":0,"text":" tok{i}","finish_reason":null}}]}}"#))
        .collect();
    let events: Vec<_> = chunks.iter().filter_map(|c| parse_chunk(c)).collect();
    assert_eq!(events.len(), TOKENS);
    let mut g = c.benchmark_group("trace");
    g.throughput(Throughput::Elements(1));
    g.bench_function("256_tokens_to_record", |b| {
        b.iter(|| {
            let mut trace = Trace::new();
            for (i, ev) in events.iter().enumerate() {
                trace.on_chunk(i as f64 * 0.01, black_box(ev));
            }
            trace.finish(3.0, meta())
        })
    });
    g.finish();
}

fn level_summary(c: &mut Criterion) {
    const N: usize = 100_000;
    let records: Vec<RequestRecord> = (0..N)
        .map(|i| {
            let start_s = i as f64 * 0.001;
            let jitter = (i % 97) as f64 * 0.0001;
            RequestRecord {
                start_s,
                ttft_s: Some(0.05 + jitter),
                e2e_s: 2.6 + jitter,
                input_tokens: 16,
                prompt_tokens: Some(16),
                output_tokens: 256,
                tokens_estimated: false,
                cached_tokens: None,
                finish_reason: Some("length".into()),
                error: None,
                prompt_hash: format!("{i:016x}"),
                content_hash: None,
                chunks: 256,
                itl: Some(ItlSummary {
                    mean_s: 0.01,
                    p50_s: 0.01,
                    p99_s: 0.012 + jitter,
                    max_s: 0.02,
                }),
                repeat: None,
                setup: None,
                due: None,
                output_asked: None,
                reasoning: None,
                turn: None,
                spec: None,
            }
        })
        .collect();
    // Ten gaps per record: the distribution's sort is what costs, not its exact size.
    let gaps: Vec<f64> = (0..N * 10)
        .map(|i| 0.01 + (i % 1013) as f64 * 1e-6)
        .collect();
    let mut g = c.benchmark_group("summarize");
    g.sample_size(10);
    g.bench_function("100k_records_1M_gaps", |b| {
        b.iter(|| summarize(black_box(&records), 64, 256, black_box(&gaps)))
    });
    g.finish();
}

criterion_group!(
    benches,
    decode_path,
    chunk_parse,
    trace_to_record,
    level_summary
);
criterion_main!(benches);
