//! serve-sim's HTTP face: axum routes that turn OpenAI requests into engine jobs and the
//! engine's tokens into vLLM-shaped responses and SSE streams.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::{Json, Router};
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::time::Instant;

use super::engine::{Engine, Progress, Tally, Ticket};
use super::model::Job;
use super::text::{self, OutputText};
use super::wire::{self, Api, GenRequest, Shape, SimError, TokenizeRequest, Usage};
use super::{Personality, SimConfig, SimStats, sglang};

/// `max_tokens` when a request gives none: OpenAI's documented default for completions, used
/// for chat too so that a request without a limit stays short.
const DEFAULT_MAX_TOKENS: u64 = 16;

/// How serve-sim names itself wherever it describes itself.
const ENGINE_NAME: &str = "llmsweep serve-sim";

/// State shared by all handlers: the configuration and the engine.
#[derive(Debug)]
pub(super) struct Shared {
    cfg: SimConfig,
    engine: Engine,
    /// Requests refused for a missing required header.
    unauthorized: AtomicU64,
    /// The text prompts of the first [`KEPT_PROMPTS`] completions requests, as received: ground
    /// truth for what a client sent.
    received: std::sync::Mutex<Vec<String>>,
    /// The prefix cache: hashes of every block chain seen (see [`SimConfig::prefix_cache`]).
    blocks: std::sync::Mutex<std::collections::HashSet<u64>>,
}

/// Text prompts the simulator keeps, for tests of what arrived.
pub(super) const KEPT_PROMPTS: usize = 10_000;

impl Shared {
    /// Validates `cfg` and starts the engine task (needs a tokio runtime).
    pub(super) fn start(cfg: SimConfig) -> io::Result<Arc<Shared>> {
        cfg.validate().map_err(|m| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("serve-sim config: {m}"),
            )
        })?;
        let engine = Engine::spawn(&cfg);
        Ok(Arc::new(Shared {
            cfg,
            engine,
            unauthorized: AtomicU64::new(0),
            received: std::sync::Mutex::new(Vec::new()),
            blocks: std::sync::Mutex::new(std::collections::HashSet::new()),
        }))
    }

    /// Tokens of the prompt whose block chain `blocks` the prefix cache already holds (its
    /// leading whole blocks seen before); remembers every block of it. The cache holds as many
    /// blocks as the KV cache has room for, and is emptied when full.
    fn reuse_prefix(&self, blocks: &[u64]) -> u64 {
        let Ok(mut seen) = self.blocks.lock() else {
            return 0;
        };
        let hit = blocks.iter().take_while(|b| seen.contains(b)).count();
        let room = (self.cfg.kv_cache_tokens as usize / crate::sim::PREFIX_BLOCK).max(1);
        if seen.len() + blocks.len() > room {
            seen.clear();
        }
        seen.extend(blocks.iter().copied());
        (hit * crate::sim::PREFIX_BLOCK) as u64
    }

    /// The text prompts received so far (the first [`KEPT_PROMPTS`]), in arrival order.
    pub(super) fn received_prompts(&self) -> Vec<String> {
        self.received.lock().map(|r| r.clone()).unwrap_or_default()
    }

    pub(super) fn stats(&self) -> SimStats {
        let snap = self.engine.snapshot();
        let tally = &self.engine.tally;
        SimStats {
            requests: tally.requests.load(Ordering::Relaxed),
            rejected: tally.rejected.load(Ordering::Relaxed),
            completed: tally.completed.load(Ordering::Relaxed),
            cancelled: tally.cancelled.load(Ordering::Relaxed),
            running: snap.running,
            waiting: snap.waiting,
            prompt_tokens: snap.prompt_tokens_total,
            generation_tokens: snap.generation_tokens_total,
            unauthorized: self.unauthorized.load(Ordering::Relaxed),
        }
    }
}

/// Serves until `shutdown` completes, then stops the engine so open streams end and the
/// graceful shutdown does not wait for them.
pub(super) async fn run(
    shared: Arc<Shared>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let on_signal = Arc::clone(&shared);
    let signal = async move {
        shutdown.await;
        on_signal.engine.stop();
    };
    // Real engines (uvicorn, llama.cpp) disable Nagle; without it a small first chunk waits for
    // the client's delayed ACK, adding up to 40 ms to TTFT.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let result = axum::serve(listener, router(Arc::clone(&shared)))
        .with_graceful_shutdown(signal)
        .await;
    shared.engine.stop();
    result
}

fn router(shared: Arc<Shared>) -> Router {
    let mut router = Router::new()
        .route("/v1/completions", post(completions))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/models", get(models))
        .route("/health", get(|| async { StatusCode::OK }))
        .route("/metrics", get(metrics));
    router = match shared.cfg.engine {
        Personality::Vllm => router.route("/version", get(version)),
        // SGLang has no `/version`; its server info says the version (see `sglang`).
        Personality::Sglang => router
            .route("/get_server_info", get(sglang_server_info))
            .route("/server_info", get(sglang_server_info))
            .route("/get_model_info", get(sglang_model_info))
            .route("/model_info", get(sglang_model_info))
            .fallback(|| async { (StatusCode::NOT_FOUND, Json(json!({"detail": "Not Found"}))) }),
    };
    if !shared.cfg.no_tokenize {
        router = router.route("/tokenize", post(tokenize));
    }
    let check = middleware::from_fn_with_state(Arc::clone(&shared), require_headers);
    router.with_state(shared).layer(check)
}

/// Refuses, with 401, a request that lacks one of the headers the configuration requires.
async fn require_headers(State(s): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let missing = s.cfg.require_headers.iter().find(|(name, value)| {
        !request
            .headers()
            .get_all(name.as_str())
            .iter()
            .any(|v| v.as_bytes() == value.as_bytes())
    });
    match missing {
        Some((name, _)) => {
            s.unauthorized.fetch_add(1, Ordering::Relaxed);
            SimError::Api {
                status: 401,
                message: format!("serve-sim requires the header {name} with its exact value"),
            }
            .into_response()
        }
        None => next.run(request).await,
    }
}

async fn completions(State(s): State<Arc<Shared>>, request: Request) -> Response {
    generate(&s, Api::Completions, request).await
}

async fn chat_completions(State(s): State<Arc<Shared>>, request: Request) -> Response {
    generate(&s, Api::Chat, request).await
}

async fn models(State(s): State<Arc<Shared>>) -> Json<Value> {
    let model = &s.cfg.model;
    let owner = match s.cfg.engine {
        Personality::Vllm => ENGINE_NAME,
        Personality::Sglang => "sglang",
    };
    Json(json!({"object": "list", "data": [{
        "id": model, "object": "model", "created": unix_now(), "owned_by": owner,
        "root": model, "parent": null, "max_model_len": s.cfg.max_context,
    }]}))
}

async fn version(State(s): State<Arc<Shared>>) -> Json<Value> {
    let version = env!("CARGO_PKG_VERSION");
    // The running limit, as SGLang's server info and llama.cpp's slots say theirs.
    Json(json!({
        "version": version,
        "engine": ENGINE_NAME,
        "preset": s.cfg.preset_name(),
        "max_running_requests": s.cfg.max_running,
    }))
}

async fn sglang_server_info(State(s): State<Arc<Shared>>) -> Json<Value> {
    Json(sglang::server_info(&s.cfg, &s.engine.snapshot()))
}

async fn sglang_model_info(State(s): State<Arc<Shared>>) -> Json<Value> {
    Json(sglang::model_info(&s.cfg))
}

async fn metrics(State(s): State<Arc<Shared>>) -> impl IntoResponse {
    let snap = s.engine.snapshot();
    let text = match s.cfg.engine {
        Personality::Vllm => wire::metrics_text(
            &s.cfg.model,
            &snap,
            s.cfg.kv_cache_tokens,
            s.cfg.speculative_steps,
        ),
        Personality::Sglang => sglang::metrics_text(
            &s.cfg,
            &snap,
            s.engine.tally.completed.load(Ordering::Relaxed),
        ),
    };
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        text,
    )
}

async fn tokenize(State(s): State<Arc<Shared>>, body: Bytes) -> Result<Json<Value>, SimError> {
    let req: TokenizeRequest = parse_body(&body)?;
    check_model(&s.cfg, req.model.as_deref())?;
    let ids = match (&req.prompt, &req.content, &req.messages) {
        (Some(prompt), _, _) => prompt.token_ids().map_err(SimError::BadRequest)?,
        (None, Some(content), _) => text::token_ids(content),
        (None, None, Some(messages)) => wire::message_token_ids(messages),
        (None, None, None) => {
            return Err(SimError::BadRequest(
                "one of `prompt`, `content` or `messages` is required".into(),
            ));
        }
    };
    Ok(Json(
        json!({"count": ids.len(), "max_model_len": s.cfg.max_context, "tokens": ids}),
    ))
}

/// Request bodies larger than this are refused; a 200K-token prompt is about 1.5 MB.
const MAX_BODY_BYTES: usize = 16 << 20;

fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, SimError> {
    serde_json::from_slice(body)
        .map_err(|e| SimError::BadRequest(format!("invalid request body: {e}")))
}

fn check_model(cfg: &SimConfig, requested: Option<&str>) -> Result<(), SimError> {
    match requested {
        Some(m) if m != cfg.model => Err(SimError::unknown_model(m)),
        _ => Ok(()),
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A completions or chat request, from arrival to the last byte of its response.
///
/// The request counts as arrived when its headers are in: reading, parsing and tokenizing the
/// body happen inside the simulated prefill, as they do inside a real server's TTFT, so the
/// collector's TTFT stays `prefill_s(L)` plus network time even on a loaded machine.
async fn generate(s: &Shared, api: Api, request: Request) -> Response {
    let at = Instant::now();
    let arrival = Tally::bump(&s.engine.tally.requests);
    let body = match axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES).await {
        Ok(body) => body,
        Err(e) => {
            Tally::bump(&s.engine.tally.rejected);
            return SimError::BadRequest(format!("could not read the request body: {e}"))
                .into_response();
        }
    };
    if s.cfg.html_answers {
        // Fault: a login page or a web UI in front of the API, answering 200 with HTML.
        let page = "<!doctype html><html><head><title>Sign in</title></head><body>Sign in to continue</body></html>";
        return ([(CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response();
    }
    let result = match admit(s, api, arrival, at, &body) {
        Ok(g) if g.plan.stream => Ok(g.into_sse()),
        Ok(g) => g.collect().await,
        Err(e) => Err(e),
    };
    result.unwrap_or_else(|e| {
        Tally::bump(&s.engine.tally.rejected);
        e.into_response()
    })
}

/// What one request will get, decided before it reaches the scheduler.
#[derive(Debug, Clone)]
struct Plan {
    /// Hash chain of the prompt's whole blocks of token ids, for the prefix cache.
    blocks: Vec<u64>,
    stream: bool,
    include_usage: bool,
    /// Usage so far on every chunk (`stream_options.continuous_usage_stats`).
    continuous_usage: bool,
    /// `completion_tokens` is the number of tokens the sim will produce.
    usage: Usage,
    finish: &'static str,
}

/// Applies the request-level fault modes, validates the request and hands it to the engine.
fn admit(
    s: &Shared,
    api: Api,
    arrival: u64,
    at: Instant,
    body: &[u8],
) -> Result<Generation, SimError> {
    let cfg = &s.cfg;
    if let Some(status) = cfg.reject_all {
        return Err(SimError::Api {
            status,
            message: format!("simulated rejection (status {status})"),
        });
    }
    if cfg
        .fail_every
        .is_some_and(|every| arrival.is_multiple_of(u64::from(every)))
    {
        return Err(SimError::Api {
            status: 500,
            message: "simulated internal error".into(),
        });
    }
    let req: GenRequest = parse_body(body)?;
    if let Some(wire::Prompt::Text(t)) = &req.prompt
        && let Ok(mut kept) = s.received.lock()
        && kept.len() < KEPT_PROMPTS
    {
        kept.push(t.clone());
    }
    check_model(cfg, req.model.as_deref())?;
    let mut plan = plan(cfg, api, &req)?;
    let reused = if cfg.prefix_cache {
        s.reuse_prefix(&plan.blocks)
    } else {
        0
    };
    plan.usage.cached_tokens = plan.usage.cached_tokens.max(reused);
    let ticket = s.engine.submit(
        at,
        Job {
            id: arrival,
            prompt_tokens: plan.usage.prompt_tokens,
            output_tokens: plan.usage.completion_tokens,
            cached_tokens: plan.usage.cached_tokens,
            reused_tokens: reused,
        },
    );
    let prefix = match api {
        Api::Completions => "cmpl",
        Api::Chat => "chatcmpl",
    };
    Ok(Generation {
        plan,
        shape: Shape {
            api,
            id: format!("{prefix}-sim-{arrival}"),
            created: unix_now(),
            model: cfg.model.clone(),
        },
        ticket,
        text: OutputText::new(
            text::request_seed(cfg.seed, arrival),
            cfg.repeat_word.clone(),
        ),
        keepalive: cfg.keepalive,
        no_usage: cfg.no_usage,
        cut_after: cfg.cut_after,
        error_after: cfg.error_after,
        engine: cfg.engine,
        spec: cfg
            .speculative_steps
            .filter(|_| cfg.per_request_spec_metrics)
            .map(wire::SpecTally::new),
        stall: cfg
            .stall
            .filter(|st| st.request == arrival)
            .map(|st| (st.after, std::time::Duration::from_secs_f64(st.seconds))),
    })
}

/// One hash per whole block of `ids`, each over the block and every block before it, so equal
/// hashes mean equal prefixes.
fn block_chain(ids: &[u32]) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ids.chunks_exact(crate::sim::PREFIX_BLOCK)
        .map(|block| {
            block.hash(&mut h);
            h.finish()
        })
        .collect()
}

/// Validates lengths as vLLM does and decides the output length under the fault modes.
fn plan(cfg: &SimConfig, api: Api, req: &GenRequest) -> Result<Plan, SimError> {
    if req.n.is_some_and(|n| n != 1) {
        return Err(SimError::BadRequest("serve-sim serves n = 1 only".into()));
    }
    let prompt_ids = match api {
        Api::Completions => {
            let prompt = req
                .prompt
                .as_ref()
                .ok_or_else(|| SimError::BadRequest("`prompt` is required".into()))?;
            prompt.token_ids().map_err(SimError::BadRequest)?
        }
        Api::Chat => {
            let messages = req
                .messages
                .as_deref()
                .ok_or_else(|| SimError::BadRequest("`messages` is required".into()))?;
            wire::message_token_ids(messages)
        }
    };
    // A hidden preamble the /tokenize endpoint does not count (fault mode).
    let prompt_tokens = prompt_ids.len() as u64 + u64::from(cfg.hidden_prompt_tokens);
    let requested = match api {
        Api::Completions => req.max_tokens,
        Api::Chat => req.max_completion_tokens.or(req.max_tokens),
    };
    let max_tokens = requested.unwrap_or(DEFAULT_MAX_TOKENS);
    if max_tokens == 0 {
        return Err(SimError::BadRequest(
            "max_tokens must be at least 1, got 0.".into(),
        ));
    }
    if let Some(min) = req.min_tokens.filter(|&min| min > max_tokens) {
        return Err(SimError::BadRequest(format!(
            "min_tokens must be less than or equal to max_tokens={max_tokens}, got {min}."
        )));
    }
    match cfg.engine {
        Personality::Vllm if prompt_tokens + max_tokens > cfg.max_context => {
            return Err(SimError::context_too_long(
                cfg.max_context,
                prompt_tokens,
                max_tokens,
            ));
        }
        Personality::Sglang => {
            if let Some(message) = sglang::check_context(cfg, prompt_tokens, max_tokens) {
                return Err(SimError::SglangBadRequest(message));
            }
        }
        Personality::Vllm => {}
    }
    let (completion_tokens, finish) = match cfg.early_stop_after.map(|k| u64::from(k.max(1))) {
        Some(stop_at) if stop_at < max_tokens => (stop_at, "stop"),
        _ => (max_tokens + u64::from(cfg.overshoot), "length"),
    };
    Ok(Plan {
        blocks: block_chain(&prompt_ids),
        stream: req.stream,
        include_usage: req.stream_options.as_ref().is_some_and(|o| o.include_usage),
        continuous_usage: req
            .stream_options
            .as_ref()
            .is_some_and(|o| o.continuous_usage_stats),
        usage: Usage {
            prompt_tokens,
            completion_tokens,
            cached_tokens: u64::from(cfg.cached_tokens).min(prompt_tokens),
            // Reasoning only on chat, and never the whole answer.
            reasoning_tokens: match api {
                Api::Chat => {
                    u64::from(cfg.reasoning_tokens).min(completion_tokens.saturating_sub(1))
                }
                Api::Completions => 0,
            },
        },
        finish,
    })
}

/// An admitted request: its plan, its response shape, its engine ticket and its words.
#[derive(Debug)]
struct Generation {
    plan: Plan,
    shape: Shape,
    ticket: Ticket,
    text: OutputText,
    keepalive: bool,
    no_usage: bool,
    cut_after: Option<u32>,
    error_after: Option<u32>,
    /// Whose error event `error_after` sends.
    engine: Personality,
    /// Counts each step's accepted drafts, to state them in the answer (vLLM's
    /// `--per-request-spec-decode-metrics summary`); `None` when not asked.
    spec: Option<wire::SpecTally>,
    /// Fault: after this many token chunks, nothing is sent for this long.
    stall: Option<(u32, std::time::Duration)>,
}

impl Generation {
    /// Waits for every token and answers with one JSON body.
    async fn collect(mut self) -> Result<Response, SimError> {
        let mut out = String::new();
        while let Some(p) = self.ticket.next().await {
            out.push_str(&self.text.next_tokens(p.tokens));
            if let Some(t) = self.spec.as_mut() {
                t.add(p.tokens);
            }
            if p.done {
                let usage = (!self.no_usage).then_some(self.plan.usage);
                let mut body = self.shape.full(&out, self.plan.finish, usage);
                if let Some(t) = &self.spec {
                    body["metrics"] = serde_json::json!({"speculative_decoding": t.to_json()});
                }
                return Ok(Json(body).into_response());
            }
        }
        Err(SimError::Api {
            status: 503,
            message: "serve-sim is shutting down".into(),
        })
    }

    /// Streams the response as SSE. Dropping the body (client gone) drops the ticket, which
    /// frees the request's slot in the scheduler.
    fn into_sse(self) -> Response {
        let stream = futures_util::stream::unfold(SseState::new(self), |mut st| async move {
            loop {
                if let Some(pause) = st.pause.take() {
                    tokio::time::sleep(pause).await;
                }
                if let Some(frame) = st.pending.pop_front() {
                    return Some((Ok::<Bytes, Infallible>(frame), st));
                }
                if st.finished {
                    return None;
                }
                match st.generation.ticket.next().await {
                    Some(progress) => st.on_progress(progress),
                    // The engine stopped (server shutting down): end without `[DONE]`.
                    None => st.finished = true,
                }
            }
        });
        let headers = [
            (CONTENT_TYPE, "text/event-stream"),
            (CACHE_CONTROL, "no-cache"),
        ];
        (headers, Body::from_stream(stream)).into_response()
    }
}

/// In `no_usage` mode every this-many-th token chunk carries empty text and its text comes with
/// the next chunk, as llama-cpp-python streams a token whose bytes end inside a UTF-8 character.
const EMPTY_CHUNK_EVERY: u32 = 4;

/// The SSE writer: frames queued for the client, produced as the engine hands over tokens.
struct SseState {
    generation: Generation,
    pending: VecDeque<Bytes>,
    token_chunks: u32,
    /// Tokens sent so far: the first `reasoning_tokens` of them are reasoning.
    tokens_sent: u64,
    /// Text of a token sent with empty text, owed to the next chunk (`no_usage` mode).
    held_text: String,
    /// Fault: wait this long before sending the next frame.
    pause: Option<std::time::Duration>,
    finished: bool,
}

impl SseState {
    /// Queues the frames sent before any token: a ping, and chat's role-only chunk (sent at once,
    /// so it arrives long before the first token).
    fn new(generation: Generation) -> Self {
        let mut pending = VecDeque::new();
        if generation.keepalive {
            pending.push_back(wire::PING);
        }
        if generation.shape.api == Api::Chat {
            pending.push_back(generation.shape.role_chunk());
        }
        SseState {
            generation,
            pending,
            token_chunks: 0,
            tokens_sent: 0,
            held_text: String::new(),
            pause: None,
            finished: false,
        }
    }

    fn on_progress(&mut self, p: Progress) {
        let g = &mut self.generation;
        if let Some(t) = g.spec.as_mut() {
            t.add(p.tokens);
        }
        let mut text = std::mem::take(&mut self.held_text);
        text.push_str(&g.text.next_tokens(p.tokens));
        self.token_chunks += 1;
        if g.no_usage && !p.done && self.token_chunks.is_multiple_of(EMPTY_CHUNK_EVERY) {
            self.held_text = std::mem::take(&mut text);
        }
        // A chunk that starts within the reasoning is reasoning (the last token never is).
        let reasoning = self.tokens_sent < g.plan.usage.reasoning_tokens && !p.done;
        // Fault: the chunk after the stall's waits for it.
        if let Some((after, pause)) = g.stall
            && self.token_chunks == after + 1
        {
            self.pause = Some(pause);
        }
        self.tokens_sent += u64::from(p.tokens);
        let so_far = (g.plan.continuous_usage && !g.no_usage).then(|| Usage {
            completion_tokens: self.tokens_sent,
            reasoning_tokens: self.tokens_sent.min(g.plan.usage.reasoning_tokens),
            ..g.plan.usage
        });
        self.pending.push_back(if reasoning {
            g.shape.reasoning_chunk(&text, so_far)
        } else {
            g.shape
                .text_chunk(&text, p.done.then_some(g.plan.finish), so_far)
        });
        if g.keepalive {
            self.pending.push_back(wire::PING);
        }
        if !p.done && g.cut_after.is_some_and(|n| self.token_chunks >= n) {
            // Fault: the response ends here, with nothing that says why.
            self.finished = true;
            return;
        }
        if !p.done && g.error_after.is_some_and(|n| self.token_chunks >= n) {
            // Fault: the engine's own error event, then the end of the stream.
            let message = format!("simulated failure after {} token chunks", self.token_chunks);
            self.pending
                .push_back(wire::stream_error(g.engine, &message));
            self.pending.push_back(wire::DONE);
            self.finished = true;
            return;
        }
        if p.done {
            if g.plan.include_usage && !g.no_usage {
                let spec = g.spec.as_ref().map(wire::SpecTally::to_json);
                self.pending
                    .push_back(g.shape.usage_chunk(g.plan.usage, spec));
            }
            self.pending.push_back(wire::DONE);
            self.finished = true;
        }
    }
}
