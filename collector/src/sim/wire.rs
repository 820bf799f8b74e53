//! serve-sim's wire formats: OpenAI request bodies in, vLLM-shaped JSON, SSE frames and
//! Prometheus text out.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};

use super::model::Snapshot;
use super::text;

/// Which OpenAI endpoint a generation request came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Api {
    Completions,
    Chat,
}

/// The fields of a completions or chat request that the sim looks at; others are ignored.
///
/// `ignore_eos` is among the ignored: the sim never stops at an EOS on its own, so the output
/// length is `max_tokens` either way.
#[derive(Debug, Default, Deserialize)]
pub(super) struct GenRequest {
    pub model: Option<String>,
    pub prompt: Option<Prompt>,
    pub messages: Option<Vec<Message>>,
    pub max_tokens: Option<u64>,
    pub max_completion_tokens: Option<u64>,
    pub min_tokens: Option<u64>,
    pub n: Option<u64>,
    #[serde(default)]
    pub stream: bool,
    pub stream_options: Option<StreamOptions>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct StreamOptions {
    #[serde(default)]
    pub include_usage: bool,
    /// vLLM's and SGLang's `continuous_usage_stats`: usage so far on every chunk.
    #[serde(default)]
    pub continuous_usage_stats: bool,
}

/// A completions prompt: text, token ids, or a batch of texts (only a batch of one is served).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Prompt {
    Text(String),
    Ids(Vec<u32>),
    Texts(Vec<String>),
}

#[derive(Debug, Deserialize)]
pub(super) struct Message {
    pub content: Option<Content>,
}

/// Chat message content: a string, or parts of which the text parts count.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
pub(super) struct Part {
    pub text: Option<String>,
}

/// Body of `/tokenize`: vLLM and SGLang send `prompt` (or chat `messages`), llama.cpp `content`.
#[derive(Debug, Deserialize)]
pub(super) struct TokenizeRequest {
    pub model: Option<String>,
    pub prompt: Option<Prompt>,
    pub content: Option<String>,
    pub messages: Option<Vec<Message>>,
}

impl Prompt {
    /// Token ids of a prompt, or a message when it is a batch the sim does not serve.
    pub(super) fn token_ids(&self) -> Result<Vec<u32>, String> {
        match self {
            Prompt::Text(s) => Ok(text::token_ids(s)),
            Prompt::Ids(ids) => Ok(ids.clone()),
            Prompt::Texts(v) if v.len() == 1 => Ok(text::token_ids(&v[0])),
            Prompt::Texts(v) => Err(format!(
                "serve-sim serves one prompt per request, got {}",
                v.len()
            )),
        }
    }
}

/// Token ids of chat messages: the words of every text content, with no template overhead.
pub(super) fn message_token_ids(messages: &[Message]) -> Vec<u32> {
    let mut ids = Vec::new();
    for content in messages.iter().filter_map(|m| m.content.as_ref()) {
        match content {
            Content::Text(s) => ids.extend(text::token_ids(s)),
            Content::Parts(parts) => {
                for t in parts.iter().filter_map(|p| p.text.as_deref()) {
                    ids.extend(text::token_ids(t));
                }
            }
        }
    }
    ids
}

/// Everything serve-sim answers with a status other than 200.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum SimError {
    /// vLLM's 400 body: `{"object":"error","message",…,"type":"BadRequestError","code":400}`.
    BadRequest(String),
    /// SGLang's 400 body: as vLLM's, with `"type":"BadRequest"`.
    SglangBadRequest(String),
    /// OpenAI's error body `{"error":{"message","type","code"}}` with this status.
    Api { status: u16, message: String },
}

impl SimError {
    pub(super) fn unknown_model(model: &str) -> Self {
        SimError::Api {
            status: 404,
            message: format!("The model `{model}` does not exist."),
        }
    }

    /// vLLM's wording, which clients parse to learn the limit.
    pub(super) fn context_too_long(max_context: u64, prompt: u64, completion: u64) -> Self {
        let total = prompt + completion;
        SimError::BadRequest(format!(
            "This model's maximum context length is {max_context} tokens. \
             However, you requested {total} tokens \
             ({prompt} in the messages, {completion} in the completion). \
             Please reduce the length of the messages or completion."
        ))
    }
}

/// OpenAI's exception class name for a status, as vLLM puts in `type`.
fn error_type(status: u16) -> &'static str {
    match status {
        400 => "BadRequestError",
        401 => "AuthenticationError",
        403 => "PermissionDeniedError",
        404 => "NotFoundError",
        409 => "ConflictError",
        422 => "UnprocessableEntityError",
        429 => "RateLimitError",
        500 => "InternalServerError",
        503 => "ServiceUnavailableError",
        _ => "APIError",
    }
}

impl IntoResponse for SimError {
    fn into_response(self) -> Response {
        let (status, body) = match self {
            SimError::BadRequest(message) => (
                400,
                json!({
                    "object": "error", "message": message, "type": "BadRequestError",
                    "param": null, "code": 400,
                }),
            ),
            SimError::SglangBadRequest(message) => (
                400,
                json!({
                    "object": "error", "message": message, "type": "BadRequest",
                    "param": null, "code": 400,
                }),
            ),
            SimError::Api { status, message } => (
                status,
                json!({"error": {"message": message, "type": error_type(status), "code": status}}),
            ),
        };
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(body)).into_response()
    }
}

/// Token counts reported in `usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub cached_tokens: u64,
    /// Of the completion tokens, those streamed as reasoning (a reasoning model).
    pub reasoning_tokens: u64,
}

impl Usage {
    fn to_json(self) -> Value {
        let mut v = json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
        });
        if self.reasoning_tokens > 0 {
            v["completion_tokens_details"] = json!({"reasoning_tokens": self.reasoning_tokens});
        }
        v
    }
}

/// SSE comment line sent by the `keepalive` mode.
pub(super) const PING: Bytes = Bytes::from_static(b": ping\n\n");
/// The stream terminator.
pub(super) const DONE: Bytes = Bytes::from_static(b"data: [DONE]\n\n");

/// One request's speculative steps, as vLLM 0.29 states them with
/// `--per-request-spec-decode-metrics summary` (`docs/features/speculative_decoding/
/// acceptance_metrics.md`): the histogram of drafts accepted per step (0 to k), from which the
/// steps, accepted tokens, acceptance length and rate follow.
#[derive(Debug, Clone)]
pub(super) struct SpecTally {
    /// Draft tokens per step (`num_spec_tokens`).
    k: u32,
    /// Steps by drafts accepted; the first token (from prefill) is no step.
    histogram: Vec<u64>,
    seen_first: bool,
}

impl SpecTally {
    pub(super) fn new(k: u32) -> Self {
        SpecTally {
            k,
            histogram: vec![0; k as usize + 1],
            seen_first: false,
        }
    }

    /// Counts what the engine handed over: the first token, then one step of `tokens`.
    pub(super) fn add(&mut self, tokens: u32) {
        if !self.seen_first {
            self.seen_first = true;
            return;
        }
        let accepted = tokens.saturating_sub(1).min(self.k) as usize;
        self.histogram[accepted] += 1;
    }

    pub(super) fn to_json(&self) -> Value {
        let steps: u64 = self.histogram.iter().sum();
        let accepted: u64 = (0u64..).zip(&self.histogram).map(|(j, n)| j * n).sum();
        let drafted = steps * u64::from(self.k);
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        json!({
            "mean_acceptance_length": 1.0 + ratio(accepted, steps),
            "draft_acceptance_rate": ratio(accepted, drafted),
            "acceptance_histogram": self.histogram,
            "num_spec_steps": steps,
            "num_accepted_draft_tokens": accepted,
            "num_draft_tokens": drafted,
            "num_spec_tokens": self.k,
        })
    }
}

/// The error event an engine sends once streaming has begun. SGLang 0.5.11
/// (`serving_chat.py`, `create_streaming_error_response`):
/// `{"error": {"object":"error","message",…,"type":"BadRequestError","param":null,"code":400}}`;
/// vLLM (`serving_engine.py`): the same without `object`.
pub(super) fn stream_error(engine: super::Personality, message: &str) -> Bytes {
    let mut error = json!({
        "message": message, "type": "BadRequestError", "param": null, "code": 400,
    });
    if engine == super::Personality::Sglang {
        error["object"] = json!("error");
    }
    sse(&json!({ "error": error }))
}

/// One `data:` frame.
fn sse(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

/// Builds the JSON of one response, streamed or not, with its id, model and creation time.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    pub api: Api,
    pub id: String,
    pub created: u64,
    pub model: String,
}

impl Shape {
    fn envelope(&self, object: &str, choices: Value) -> Value {
        json!({
            "id": self.id, "object": object, "created": self.created,
            "model": self.model, "choices": choices,
        })
    }

    /// The role-only first chunk of a chat stream (vLLM sends it before any content).
    pub(super) fn role_chunk(&self) -> Bytes {
        let delta = json!({"role": "assistant", "content": ""});
        let choice = json!({"index": 0, "delta": delta, "logprobs": null, "finish_reason": null});
        sse(&self.envelope("chat.completion.chunk", json!([choice])))
    }

    /// A chunk carrying `text` (possibly empty), with `finish` on the last one, and the usage so
    /// far when the client asked for `continuous_usage_stats`.
    pub(super) fn text_chunk(
        &self,
        text: &str,
        finish: Option<&str>,
        so_far: Option<Usage>,
    ) -> Bytes {
        let choice = match self.api {
            Api::Completions => completion_choice(text, finish),
            Api::Chat => {
                json!({"index": 0, "delta": {"content": text}, "logprobs": null, "finish_reason": finish})
            }
        };
        self.chunk(choice, so_far)
    }

    /// A chat chunk of reasoning text (`delta.reasoning_content`, as vLLM's and SGLang's
    /// reasoning parsers send it).
    pub(super) fn reasoning_chunk(&self, text: &str, so_far: Option<Usage>) -> Bytes {
        let delta = json!({"reasoning_content": text});
        let choice = json!({"index": 0, "delta": delta, "logprobs": null, "finish_reason": null});
        self.chunk(choice, so_far)
    }

    fn chunk(&self, choice: Value, so_far: Option<Usage>) -> Bytes {
        let mut v = self.envelope(self.chunk_object(), json!([choice]));
        if let Some(u) = so_far {
            v["usage"] = u.to_json();
        }
        sse(&v)
    }

    /// The final usage chunk of `stream_options.include_usage`: no choices, only usage.
    /// The last chunk: no choices, the whole usage and, with vLLM's
    /// `--per-request-spec-decode-metrics`, the request's `metrics.speculative_decoding`.
    pub(super) fn usage_chunk(&self, usage: Usage, spec: Option<Value>) -> Bytes {
        let mut v = self.envelope(self.chunk_object(), json!([]));
        v["usage"] = usage.to_json();
        if let Some(spec) = spec {
            v["metrics"] = json!({ "speculative_decoding": spec });
        }
        sse(&v)
    }

    /// The body of a non-streaming response.
    pub(super) fn full(&self, text: &str, finish: &str, usage: Option<Usage>) -> Value {
        let (object, choice) = match self.api {
            Api::Completions => ("text_completion", completion_choice(text, Some(finish))),
            Api::Chat => {
                let message = json!({"role": "assistant", "content": text});
                let choice = json!({"index": 0, "message": message, "logprobs": null, "finish_reason": finish});
                ("chat.completion", choice)
            }
        };
        let mut v = self.envelope(object, json!([choice]));
        if let Some(usage) = usage {
            v["usage"] = usage.to_json();
        }
        v
    }

    fn chunk_object(&self) -> &'static str {
        match self.api {
            Api::Completions => "text_completion",
            Api::Chat => "chat.completion.chunk",
        }
    }
}

/// One completions choice, streamed or not (vLLM adds `stop_reason`).
fn completion_choice(text: &str, finish: Option<&str>) -> Value {
    json!({"index": 0, "text": text, "logprobs": null, "finish_reason": finish, "stop_reason": null})
}

/// `/metrics` in Prometheus text format with vLLM's metric names; with speculative decoding of
/// `drafts` tokens per step, vLLM V1's three counters of it (`vllm/v1/spec_decode/metrics.py`):
/// a draft per request and step, `drafts` draft tokens each, and the accepted ones (a step's
/// tokens but the target model's own).
pub(super) fn metrics_text(
    model: &str,
    s: &Snapshot,
    kv_cache_tokens: u64,
    drafts: Option<u32>,
) -> String {
    let label = format!("{{model_name=\"{}\"}}", escape_label(model));
    let kv_usage = if kv_cache_tokens == 0 {
        0.0
    } else {
        (s.kv_tokens as f64 / kv_cache_tokens as f64).min(1.0)
    };
    let mut families: Vec<(&str, &str, &str, f64)> = vec![
        (
            "vllm:num_requests_running",
            "gauge",
            "Number of requests in model execution batches.",
            s.running as f64,
        ),
        (
            "vllm:num_requests_waiting",
            "gauge",
            "Number of requests waiting to be processed.",
            s.waiting as f64,
        ),
        (
            "vllm:kv_cache_usage_perc",
            "gauge",
            "KV-cache usage. 1 means 100 percent usage.",
            kv_usage,
        ),
        (
            "vllm:prompt_tokens_total",
            "counter",
            "Number of prefill tokens processed.",
            s.prompt_tokens_total as f64,
        ),
        (
            "vllm:generation_tokens_total",
            "counter",
            "Number of generation tokens processed.",
            s.generation_tokens_total as f64,
        ),
        (
            "vllm:prefix_cache_queries_total",
            "counter",
            "Prefix cache queries, in terms of number of queried tokens.",
            s.prefix_cache_queries_total as f64,
        ),
        (
            "vllm:prefix_cache_hits_total",
            "counter",
            "Prefix cache hits, in terms of number of cached tokens.",
            s.prefix_cache_hits_total as f64,
        ),
    ];
    if let Some(d) = drafts {
        let steps = s.decode_request_steps_total;
        families.extend([
            (
                "vllm:spec_decode_num_drafts_total",
                "counter",
                "Number of spec decoding drafts.",
                steps as f64,
            ),
            (
                "vllm:spec_decode_num_draft_tokens_total",
                "counter",
                "Number of draft tokens.",
                (steps * u64::from(d)) as f64,
            ),
            (
                "vllm:spec_decode_num_accepted_tokens_total",
                "counter",
                "Number of accepted tokens.",
                s.decode_tokens_total.saturating_sub(steps) as f64,
            ),
        ]);
    }
    let mut out = String::from("# llmsweep serve-sim: simulated metrics\n");
    for (name, kind, help, value) in families {
        // `{:?}` prints floats as vLLM's Python client does: `3.0`, `0.25`.
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{label} {value:?}\n"
        ));
    }
    out
}

pub(super) fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    /// The identities vLLM's acceptance_metrics.md states: the histogram sums to the steps,
    /// its weighted sum is the accepted tokens, the length is `1 + accepted / steps`, the rate
    /// `accepted / drafted`, and the histogram has k + 1 bins.
    #[test]
    fn a_requests_spec_tally_holds_vllms_identities() {
        let mut t = SpecTally::new(3);
        // The first token (prefill), then steps of 4, 1, 2, 4 and a last one cut to 1 token.
        for tokens in [1, 4, 1, 2, 4, 1] {
            t.add(tokens);
        }
        let v = t.to_json();
        assert_eq!(v["acceptance_histogram"], json!([2, 1, 0, 2]));
        assert_eq!(v["num_spec_steps"], 5);
        assert_eq!(v["num_accepted_draft_tokens"], 7);
        assert_eq!(v["num_draft_tokens"], 15);
        assert_eq!(v["num_spec_tokens"], 3);
        assert_eq!(v["mean_acceptance_length"], 2.4);
        assert_eq!(v["draft_acceptance_rate"], 7.0 / 15.0);
    }

    use super::*;

    fn shape(api: Api) -> Shape {
        Shape {
            api,
            id: "x-1".into(),
            created: 5,
            model: "m".into(),
        }
    }

    fn parse(frame: &Bytes) -> Value {
        let s = std::str::from_utf8(frame).expect("utf-8");
        let json = s
            .strip_prefix("data: ")
            .and_then(|s| s.strip_suffix("\n\n"))
            .expect("one data frame");
        serde_json::from_str(json).expect("json")
    }

    #[test]
    fn completion_and_chat_chunks_put_text_where_clients_look() {
        let c = parse(&shape(Api::Completions).text_chunk(" a", None, None));
        assert_eq!(c["choices"][0]["text"], " a");
        assert_eq!(c["choices"][0]["finish_reason"], Value::Null);
        let c = parse(&shape(Api::Chat).text_chunk(" b", Some("length"), None));
        assert_eq!(c["object"], "chat.completion.chunk");
        assert_eq!(c["choices"][0]["delta"]["content"], " b");
        assert_eq!(c["choices"][0]["finish_reason"], "length");
    }

    #[test]
    fn usage_chunk_has_no_choices_and_full_usage() {
        let usage = Usage {
            prompt_tokens: 10,
            completion_tokens: 3,
            cached_tokens: 2,
            reasoning_tokens: 0,
        };
        let c = parse(&shape(Api::Chat).usage_chunk(usage, None));
        assert_eq!(c["choices"], json!([]));
        assert_eq!(
            c["usage"],
            json!({
                "prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13,
                "prompt_tokens_details": {"cached_tokens": 2},
            })
        );
        let reasoned = Usage {
            reasoning_tokens: 2,
            ..usage
        };
        let c = parse(&shape(Api::Chat).usage_chunk(reasoned, None));
        assert_eq!(
            c["usage"]["completion_tokens_details"],
            json!({"reasoning_tokens": 2})
        );
        let r = parse(&shape(Api::Chat).reasoning_chunk(" hm", None));
        assert_eq!(
            r["choices"][0]["delta"],
            json!({"reasoning_content": " hm"})
        );
    }

    #[test]
    fn context_error_uses_vllm_wording() {
        let SimError::BadRequest(m) = SimError::context_too_long(32768, 32768, 256) else {
            panic!("should be a 400");
        };
        assert_eq!(
            m,
            "This model's maximum context length is 32768 tokens. However, you requested 33024 tokens (32768 in the messages, 256 in the completion). Please reduce the length of the messages or completion."
        );
    }

    #[test]
    fn prompts_and_messages_count_words() {
        assert_eq!(
            Prompt::Text("a b c".into()).token_ids().map(|v| v.len()),
            Ok(3)
        );
        assert_eq!(Prompt::Ids(vec![1, 2]).token_ids(), Ok(vec![1, 2]));
        assert!(
            Prompt::Texts(vec!["a".into(), "b".into()])
                .token_ids()
                .is_err()
        );
        let messages: Vec<Message> = serde_json::from_value(json!([
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "one two three"}, {"type": "image_url"}]}
        ]))
        .expect("messages parse");
        assert_eq!(message_token_ids(&messages).len(), 5);
    }

    #[test]
    fn metrics_have_help_type_and_labels() {
        let s = Snapshot {
            running: 2,
            kv_tokens: 512,
            prompt_tokens_total: 7,
            ..Snapshot::default()
        };
        let text = metrics_text("sim \"x\"", &s, 1024, None);
        assert!(text.contains("# TYPE vllm:num_requests_running gauge\n"));
        assert!(text.contains("vllm:num_requests_running{model_name=\"sim \\\"x\\\"\"} 2.0\n"));
        assert!(text.contains("vllm:kv_cache_usage_perc{model_name=\"sim \\\"x\\\"\"} 0.5\n"));
        assert!(text.contains("# TYPE vllm:prompt_tokens_total counter\n"));
        assert!(text.contains("vllm:prompt_tokens_total{model_name=\"sim \\\"x\\\"\"} 7.0\n"));
        assert!(!text.contains("spec_decode"));
    }

    #[test]
    fn speculative_counters_are_vllms_drafts_draft_tokens_and_accepted() {
        let s = Snapshot {
            decode_request_steps_total: 100,
            decode_tokens_total: 260,
            ..Snapshot::default()
        };
        let text = metrics_text("m", &s, 1024, Some(3));
        for line in [
            "vllm:spec_decode_num_drafts_total{model_name=\"m\"} 100.0\n",
            "vllm:spec_decode_num_draft_tokens_total{model_name=\"m\"} 300.0\n",
            "vllm:spec_decode_num_accepted_tokens_total{model_name=\"m\"} 160.0\n",
        ] {
            assert!(text.contains(line), "{line}");
        }
    }
}
