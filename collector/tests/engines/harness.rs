//! Proves the engine harness in `common::engines`: each real engine starts on
//! loopback with the tiny model, streams exactly the number of tokens asked
//! for, answers its tokenizer endpoint and states its context limit, and is
//! gone once the harness drops it (also after a panic).
//!
//! Skipped with a notice when an engine is not installed, unless
//! `LLMSWEEP_REQUIRE_ENGINES=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{Ipv4Addr, TcpStream};
use std::time::Duration;

use crate::common::engines::{self, Engine, EngineServer, TINY_BOS_ID, TINY_VOCAB_SIZE};
use futures_util::StreamExt;
use serde_json::{Value, json};

const PROMPT: &str = "The quick brown fox jumps over the lazy dog.";

/// Starts an engine off the async runtime (startup blocks for a moment).
async fn start(engine: Engine) -> Option<EngineServer> {
    match tokio::task::spawn_blocking(move || engines::start(engine)).await {
        Ok(server) => server,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .expect("http client")
}

/// One streamed response, split into its SSE events.
#[derive(Debug, Default)]
struct Streamed {
    /// Parsed `data:` payloads other than `[DONE]`, in order.
    chunks: Vec<Value>,
    /// Whether `data: [DONE]` arrived.
    done: bool,
}

impl Streamed {
    /// Text of a chunk: `choices[0].text` (completions) or
    /// `choices[0].delta.content` (chat).
    fn text(chunk: &Value) -> &str {
        let choice = &chunk["choices"][0];
        choice["text"]
            .as_str()
            .or_else(|| choice["delta"]["content"].as_str())
            .unwrap_or("")
    }

    fn text_chunks(&self) -> usize {
        self.chunks
            .iter()
            .filter(|c| !Self::text(c).is_empty())
            .count()
    }

    fn finish_reasons(&self) -> Vec<&str> {
        self.chunks
            .iter()
            .filter_map(|c| c["choices"][0]["finish_reason"].as_str())
            .collect()
    }

    fn usage(&self) -> Option<&Value> {
        self.chunks
            .iter()
            .map(|c| &c["usage"])
            .find(|u| u.is_object())
    }
}

async fn post_stream(server: &EngineServer, path: &str, body: &Value) -> Streamed {
    let url = format!("{}{path}", server.url());
    let response = client()
        .post(&url)
        .json(body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {url}: {e}"));
    let status = response.status();
    assert!(
        status.is_success(),
        "POST {url} -> {status}: {}",
        response.text().await.unwrap_or_default()
    );

    let mut streamed = Streamed::default();
    let mut pending: Vec<u8> = Vec::new();
    let mut bytes = response.bytes_stream();
    while let Some(piece) = bytes.next().await {
        pending.extend_from_slice(&piece.unwrap_or_else(|e| panic!("reading {url}: {e}")));
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\r', '\n']);
            // Blank lines end events; lines starting with ':' are comments
            // (llama-cpp-python sends ": ping - ..." while a request waits).
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let data = data.trim_start();
            if data == "[DONE]" {
                streamed.done = true;
            } else {
                streamed.chunks.push(
                    serde_json::from_str(data).unwrap_or_else(|e| panic!("bad chunk {data}: {e}")),
                );
            }
        }
    }
    streamed
}

async fn post_json(server: &EngineServer, path: &str, body: &Value) -> Value {
    let url = format!("{}{path}", server.url());
    let response = client()
        .post(&url)
        .json(body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {url}: {e}"));
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    assert!(status.is_success(), "POST {url} -> {status}: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("POST {url}: {e}: {text}"))
}

async fn get_json(server: &EngineServer, path: &str) -> Value {
    let url = format!("{}{path}", server.url());
    let response = client()
        .get(&url)
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    assert!(status.is_success(), "GET {url} -> {status}: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("GET {url}: {e}: {text}"))
}

/// A streamed request for exactly 16 tokens. `ignore_eos` is llama-server's
/// way, `min_tokens` llama-cpp-python's; each engine ignores the other one.
fn exact_16(api_body: Value) -> Value {
    let mut body = json!({
        "max_tokens": 16,
        "ignore_eos": true,
        "min_tokens": 16,
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), api_body) {
        body.extend(extra);
    }
    body
}

/// Checks a stream that asked for exactly 16 tokens.
fn assert_exact_16(engine: Engine, api: &str, s: &Streamed) {
    assert!(s.done, "{engine} {api}: no [DONE]: {s:?}");
    assert_eq!(s.finish_reasons(), ["length"], "{engine} {api}: {s:?}");
    // The tiny model only emits printable ASCII, one token per chunk.
    assert_eq!(s.text_chunks(), 16, "{engine} {api}: {s:?}");
    match (engine, s.usage()) {
        (_, Some(usage)) => {
            assert_eq!(usage["completion_tokens"], 16, "{engine} {api}: {usage}");
            assert!(
                usage["prompt_tokens"].as_u64().is_some_and(|n| n > 0),
                "{engine} {api}: {usage}"
            );
        }
        (Engine::LlamaServer, None) => panic!("{engine} {api}: no usage chunk: {s:?}"),
        // llama-cpp-python ignores stream_options and sends no usage.
        (Engine::LlamaCppPython, None) => {}
    }
}

async fn check_generation(server: &EngineServer) {
    let engine = server.engine();
    let completion = post_stream(
        server,
        "/v1/completions",
        &exact_16(json!({ "prompt": PROMPT })),
    )
    .await;
    assert_exact_16(engine, "/v1/completions", &completion);

    let chat = post_stream(
        server,
        "/v1/chat/completions",
        &exact_16(json!({ "messages": [{ "role": "user", "content": PROMPT }] })),
    )
    .await;
    assert_exact_16(engine, "/v1/chat/completions", &chat);
}

fn token_ids(response: &Value) -> Vec<u64> {
    response["tokens"]
        .as_array()
        .unwrap_or_else(|| panic!("no tokens array: {response}"))
        .iter()
        .map(|t| t.as_u64().unwrap_or_else(|| panic!("bad token id {t}")))
        .collect()
}

#[tokio::test]
async fn llama_server_serves_the_tiny_model() {
    let Some(server) = start(Engine::LlamaServer).await else {
        return;
    };
    check_generation(&server).await;

    // /tokenize does not add <s> unless asked to.
    let plain = token_ids(&post_json(&server, "/tokenize", &json!({ "content": PROMPT })).await);
    let with_bos = token_ids(
        &post_json(
            &server,
            "/tokenize",
            &json!({ "content": PROMPT, "add_special": true }),
        )
        .await,
    );
    assert!(plain.len() > 5, "{plain:?}");
    assert!(plain.iter().all(|&t| t < u64::from(TINY_VOCAB_SIZE)));
    assert_eq!(with_bos[0], u64::from(TINY_BOS_ID));
    assert_eq!(with_bos[1..], plain[..]);

    // The context one request may use is -c divided by the slots.
    let props = get_json(&server, "/props").await;
    assert_eq!(
        props["default_generation_settings"]["n_ctx"],
        server.context_per_request(),
        "{props}"
    );
    assert_eq!(props["total_slots"], server.config().parallel, "{props}");
}

#[tokio::test]
async fn llama_cpp_python_serves_the_tiny_model() {
    let Some(server) = start(Engine::LlamaCppPython).await else {
        return;
    };
    check_generation(&server).await;

    // /extras/tokenize always adds <s>.
    let tokens =
        token_ids(&post_json(&server, "/extras/tokenize", &json!({ "input": PROMPT })).await);
    assert_eq!(tokens[0], u64::from(TINY_BOS_ID), "{tokens:?}");
    assert!(tokens.len() > 5, "{tokens:?}");
    let count = post_json(
        &server,
        "/extras/tokenize/count",
        &json!({ "input": PROMPT }),
    )
    .await;
    assert_eq!(count["count"], tokens.len(), "{count}");

    // No endpoint states the context; /v1/models only names the model.
    let models = get_json(&server, "/v1/models").await;
    assert!(models["data"][0]["id"].is_string(), "{models}");
}

fn port_is_closed(port: u16) -> bool {
    TcpStream::connect_timeout(&(Ipv4Addr::LOCALHOST, port).into(), Duration::from_secs(1)).is_err()
}

#[test]
fn servers_are_killed_on_drop_and_on_panic() {
    for engine in Engine::ALL {
        let Some(server) = engines::start(engine) else {
            continue;
        };
        let port = server.port();
        assert!(!port_is_closed(port), "{engine} does not listen on {port}");
        drop(server);
        assert!(port_is_closed(port), "{engine} still listens after drop");

        // A test that panics while holding a server must not leave it behind.
        let outcome = std::thread::spawn(move || {
            let Some(server) = engines::start(engine) else {
                return 0;
            };
            let port = server.port();
            std::panic::panic_any(port);
        })
        .join();
        match outcome {
            Err(payload) => {
                let port = *payload.downcast::<u16>().expect("port as panic payload");
                assert!(port_is_closed(port), "{engine} still listens after a panic");
            }
            Ok(_) => unreachable!("the thread either panics or the engine went missing"),
        }
    }
}
