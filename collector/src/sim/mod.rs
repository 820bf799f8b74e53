//! serve-sim: a built-in OpenAI-compatible inference server whose timing is known exactly.
//!
//! serve-sim is a **test instrument with known ground truth**, not a stand-in for results: the
//! collector's tests point the load generator at it and check that the collector measures what the
//! sim did; `llmsweep demo` and dry runs use it too. It labels itself as simulated wherever it
//! describes itself (`owned_by`, `/version`, `engine`: `llmsweep serve-sim`; with the SGLang
//! personality, `simulator` in the server info, a `+serve-sim` version and a comment atop
//! `/metrics`).
//!
//! What it serves with the default vLLM personality ([`Personality::Vllm`]; vLLM's shapes unless
//! noted; [`Personality::Sglang`] changes the routes and names listed in `sglang.rs`):
//!
//! | route | |
//! |---|---|
//! | `POST /v1/completions`, `POST /v1/chat/completions` | streaming (SSE) and not |
//! | `GET /v1/models` | with `owned_by` and `max_model_len` |
//! | `POST /tokenize` | `{"prompt"}` (vLLM, SGLang) or `{"content"}` (llama.cpp) |
//! | `GET /health`, `GET /version`, `GET /metrics` | Prometheus text with vLLM's metric names |
//!
//! Behaviour, fixed so that tests can predict it:
//!
//! - **Tokens**: one per whitespace-separated word of the prompt (chat: of all message contents,
//!   no template overhead); see [`text`].
//! - **Output length**: always exactly `max_tokens` (`max_completion_tokens` for chat; 16 when
//!   absent), finish reason `length`, whether or not `ignore_eos` is set — the sim never hits an
//!   EOS on its own. Only the fault modes below change that.
//! - **Output text**: `" word"` per token, words drawn from [`text::WORDS`] by a PRNG seeded with
//!   [`SimConfig::seed`] and the request's arrival number.
//! - **Timing**: the continuous-batching model of [`model`], driven in real time with absolute
//!   deadlines so timer jitter never accumulates.
//!
//! # Ground truth at concurrency 1
//!
//! For one request alone with `L` prompt tokens and `N` output tokens, one token per chunk:
//!
//! - the first token is produced `prefill_s(L)` after the request arrives, so the collector's
//!   TTFT is `prefill_s(L)` plus HTTP overhead and timer lateness (tokio's timer has 1 ms
//!   granularity, so each token is up to about 1 ms late, never early);
//! - every later token follows the previous one by `step_s(1) = d0` plus `e` per token then in
//!   the KV cache (`L` + the tokens generated so far); with `e = 0` (every preset but kpro5)
//!   TPOT is exactly `d0` and decode tok/s is `1 / d0`, e2e `prefill_s(L) + (N − 1)·d0`.
//!
//! With `tokens_per_chunk = k` each decode step carries `k` tokens, so TPOT becomes about `d0 / k`.

mod engine;
pub(crate) mod model;
mod server;
mod sglang;
pub mod text;
mod wire;

use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use server::Shared;

/// Ready-made timing shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Preset {
    /// Shaped like SGLang on 2× RTX A6000 serving a 27B model: 73.5 tok/s for one stream, 16
    /// running requests, 32K context, TTFT 0.15 s at 1000 tokens.
    //
    // The exact coefficients are listed on `SimConfig::preset`.
    Kpro5,
    /// Quick, for tests and the demo.
    Fast,
}

impl Preset {
    /// The name used on the command line and in `/version`.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Kpro5 => "kpro5",
            Preset::Fast => "fast",
        }
    }
}

/// Which engine serve-sim speaks as: the names of its metrics, its self-description endpoints
/// and the wording of its errors. The timing model is the same for both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Personality {
    /// vLLM's metric names and `/version` (the simulator's own, saying it is simulated).
    #[default]
    Vllm,
    /// SGLang 0.5's `/get_server_info`, `/get_model_info`, `sglang:` metrics and error wording.
    Sglang,
}

/// kpro5's prefill is the quadratic with `a = 0.08 s` through the two measured points
/// (1 000 tokens, 0.15 s) and (30 000 tokens, 2.32 s).
const KPRO5_A: f64 = 0.08;
const KPRO5_C: f64 =
    ((2.32 - KPRO5_A) - 30.0 * (0.15 - KPRO5_A)) / (30_000.0 * 30_000.0 - 30.0 * 1_000.0 * 1_000.0);
const KPRO5_B: f64 = (0.15 - KPRO5_A) / 1_000.0 - KPRO5_C * 1_000.0;

/// Tokens per block of the simulator's prefix cache: only whole blocks are reused.
pub const PREFIX_BLOCK: usize = 16;

/// kpro5's decode slows by `e` per KV token: one stream at 30 000 tokens of context decodes at
/// 1 / (d0 + 30 000·e) ≈ 59 tok/s against 73.5 at a short prompt.
const KPRO5_E: f64 = 1.0e-7;

/// kpro5's mean acceptance length: tokens per MTP step of 3 drafts (1 to 4 per step).
pub const KPRO5_ACCEPT: f64 = 2.6;

/// Everything serve-sim does: timing model, limits, identity and fault modes.
///
/// Timing (seconds, `L` prompt tokens, `n` running requests):
/// `prefill_s(L) = a + b·L + c·L²`, `step_s(n) = d0 + d1·(n − 1)` plus `e` per KV token held by
/// the running requests; see [`model`] for how the
/// scheduler uses them. Fault modes are all off in the presets; each makes the sim misbehave the
/// way some real server does, so the collector's checks can be tested.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The preset this configuration started from; `/version` reports its name (`custom` if none).
    pub preset: Option<Preset>,
    /// The one model id served; requests naming another get 404. A request without `model` is
    /// served.
    pub model: String,
    /// Seed of the output text: the same seed and request order give the same text.
    pub seed: u64,
    /// Context limit in tokens: `prompt + max_tokens` above it gets HTTP 400.
    pub max_context: u64,
    /// Requests holding a slot (in prefill or decoding) at once; more wait in a FIFO queue.
    pub max_running: u32,
    /// KV cache capacity in tokens. Only scales `vllm:kv_cache_usage_perc`; never limits admission.
    pub kv_cache_tokens: u64,
    /// `a`: prefill seconds per admitted request.
    pub prefill_a_s: f64,
    /// `b`: prefill seconds per prompt token.
    pub prefill_b_s: f64,
    /// `c`: prefill seconds per prompt token squared (attention's quadratic cost).
    pub prefill_c_s: f64,
    /// `d0`: seconds of one decode step with one running request.
    pub decode_d0_s: f64,
    /// `d1`: extra seconds of one decode step per additional running request.
    pub decode_d1_s: f64,
    /// `e`: extra seconds of one decode step per token held in the KV cache by the running
    /// requests (prompt and generated so far): attention reads the whole cache at every step,
    /// so decode slows as the context grows.
    pub decode_kv_s: f64,
    /// Fault: every response stops after this many tokens (at least 1) with finish reason `stop`
    /// when `max_tokens` is larger, ignoring `ignore_eos` and `min_tokens`.
    pub early_stop_after: Option<u32>,
    /// Fault: produce this many tokens more than `max_tokens` (finish reason still `length`).
    pub overshoot: u32,
    /// Fault: the Nth, 2Nth, … generation request received (1-based) gets HTTP 500.
    pub fail_every: Option<u32>,
    /// Fault: every generation request gets this HTTP status with an OpenAI-style error body.
    pub reject_all: Option<u16>,
    /// Fault: every generation request gets HTTP 200 with an HTML page (a login page or a web UI
    /// in front of the API); the other endpoints answer as usual.
    pub html_answers: bool,
    /// Fault: report this many prompt tokens (at most the prompt) as
    /// `usage.prompt_tokens_details.cached_tokens` and as prefix-cache hits in `/metrics`.
    /// Reported only: prefill still takes the whole prompt's time.
    pub cached_tokens: u32,
    /// A reasoning model: on the chat API the first N output tokens (at most all but the last)
    /// stream as `delta.reasoning_content` before the answer's `content`, and usage counts
    /// them as `completion_tokens_details.reasoning_tokens`.
    pub reasoning_tokens: u32,
    /// Fault: every output token is this word (degenerate output).
    pub repeat_word: Option<String>,
    /// Fault: every stream ends after this many token chunks (at least 1), without a finish
    /// reason, usage or `[DONE]`, as when a proxy or a crashing worker closes the response.
    pub cut_after: Option<u32>,
    /// Fault: every stream ends after this many token chunks (at least 1) with the engine's
    /// error event, then `[DONE]`.
    pub error_after: Option<u32>,
    /// vLLM's `--per-request-spec-decode-metrics summary`: each answer states its request's
    /// speculative decoding (`metrics.speculative_decoding`).
    pub per_request_spec_metrics: bool,
    /// Fault: one request stops streaming for a while (see [`Stall`]).
    pub stall: Option<Stall>,
    /// Fault: never report usage (as llama-cpp-python's server), and stream some chunks with
    /// empty text.
    pub no_usage: bool,
    /// A prefix cache, as vLLM's and SGLang's: a prompt whose first blocks of
    /// [`PREFIX_BLOCK`] tokens were in an earlier prompt reuses them (they are reported as
    /// `cached_tokens` and not prefilled again). Unique prompts never hit it.
    pub prefix_cache: bool,
    /// Tokens per SSE chunk after the first: each decode step yields this many, as speculative
    /// decoding does. 1 is normal.
    pub tokens_per_chunk: u32,
    /// Send SSE comment lines (`: ping`) at stream start and after every token chunk.
    pub keepalive: bool,
    /// Fault: `/tokenize` answers 404, as on a server without it.
    pub no_tokenize: bool,
    /// Fault: every prompt counts this many tokens more than `/tokenize` says, as when a server
    /// adds a hidden system prompt (usage, prefill time and the context check all include them).
    pub hidden_prompt_tokens: u32,
    /// Headers every request (of any path) must carry, as (name, exact value); a request without
    /// one gets HTTP 401 and counts in [`SimStats::unauthorized`]. Empty: nothing is required.
    pub require_headers: Vec<(String, String)>,
    /// The engine the sim speaks as; vLLM unless asked.
    pub engine: Personality,
    /// Tensor-parallel GPUs the simulated deployment claims (SGLang's server info reports it;
    /// timing does not depend on it).
    pub tp_size: u32,
    /// Speculative decoding (NEXTN, SGLang's name for multi-token prediction) with this many
    /// draft steps; `None`: none. Each decode step then yields 1 to `steps + 1` tokens per
    /// request (the drafts accepted in a row, plus the target model's own), drawn so that their
    /// mean is [`SimConfig::spec_accept`]; [`SimConfig::tokens_per_chunk`] does not apply.
    pub speculative_steps: Option<u32>,
    /// With speculative decoding: the mean accepted tokens per step and request (SGLang's
    /// "acceptance length"), between 1 and `steps + 1`. A step costs the same whatever it
    /// yields, so decode speed is proportional to it.
    pub spec_accept: f64,
}

impl Default for SimConfig {
    /// The [`Preset::Fast`] configuration.
    fn default() -> Self {
        SimConfig::preset(Preset::Fast)
    }
}

/// A stall: the `request`-th generation request received (1-based, warm-ups counted) sends
/// nothing for `seconds` after its `after`-th token chunk, as a server that hangs or a network
/// that stops; the engine goes on, so the next chunk arrives `seconds` late.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stall {
    pub request: u64,
    pub after: u32,
    pub seconds: f64,
}

impl SimConfig {
    /// A preset with every fault mode off and seed 0.
    ///
    /// - `kpro5` (model `sim-27b-kpro5`): `a = 0.08 s`, `b ≈ 6.98391e-5 s/token`,
    ///   `c ≈ 1.60920e-10 s/token²` (so `prefill_s(1000) = 0.15 s`, `prefill_s(30000) = 2.32 s`),
    ///   speaking as SGLang, TP 2, with NEXTN speculative decoding of 3 steps accepting 2.6 tokens
    ///   per step on average ([`KPRO5_ACCEPT`]); a step costs `d0 = 2.6/73.5 s ≈ 35.4 ms` (73.5
    ///   tok/s on average for one stream at a short prompt), `d1 = 2.6 ms` per further request and
    ///   `e = 0.26 µs` per KV token (about 59 tok/s for one stream at 30 000 tokens), a prefix
    ///   cache of 16-token blocks, 16 running, 32 768 context, 131 072 KV tokens. Aggregate
    ///   decode at 16 running: `16 · 2.6 / step_s(16)` ≈ 559 tok/s, approaching 1 000 tok/s as
    ///   the batch grows.
    /// - `fast` (model `sim-fast`): `a = 4 ms`, `b = 1 µs/token`, `c = 0`, `d0 = 4 ms`
    ///   (250 tok/s), `d1 = 0.25 ms`, 32 running, 32 768 context, 1 048 576 KV tokens.
    pub fn preset(p: Preset) -> Self {
        let base = SimConfig {
            preset: Some(p),
            model: String::new(),
            seed: 0,
            max_context: 32_768,
            max_running: 0,
            kv_cache_tokens: 0,
            prefill_a_s: 0.0,
            prefill_b_s: 0.0,
            prefill_c_s: 0.0,
            decode_d0_s: 0.0,
            decode_d1_s: 0.0,
            decode_kv_s: 0.0,
            early_stop_after: None,
            overshoot: 0,
            fail_every: None,
            cut_after: None,
            error_after: None,
            per_request_spec_metrics: false,
            stall: None,
            reject_all: None,
            html_answers: false,
            cached_tokens: 0,
            reasoning_tokens: 0,
            repeat_word: None,
            no_usage: false,
            tokens_per_chunk: 1,
            prefix_cache: false,
            keepalive: false,
            no_tokenize: false,
            hidden_prompt_tokens: 0,
            require_headers: Vec::new(),
            engine: Personality::Vllm,
            tp_size: 1,
            speculative_steps: None,
            spec_accept: 1.0,
        };
        match p {
            Preset::Kpro5 => SimConfig {
                model: "sim-27b-kpro5".into(),
                max_running: 16,
                kv_cache_tokens: 131_072,
                prefill_a_s: KPRO5_A,
                prefill_b_s: KPRO5_B,
                prefill_c_s: KPRO5_C,
                // A step yields KPRO5_ACCEPT tokens on average: its costs are the per-token
                // costs times that, so one stream still averages 73.5 tok/s.
                decode_d0_s: KPRO5_ACCEPT / 73.5,
                decode_d1_s: KPRO5_ACCEPT * 0.001,
                decode_kv_s: KPRO5_ACCEPT * KPRO5_E,
                prefix_cache: true,
                engine: Personality::Sglang,
                tp_size: 2,
                speculative_steps: Some(3),
                spec_accept: KPRO5_ACCEPT,
                ..base
            },
            Preset::Fast => SimConfig {
                model: "sim-fast".into(),
                max_running: 32,
                kv_cache_tokens: 1_048_576,
                prefill_a_s: 0.004,
                prefill_b_s: 1e-6,
                decode_d0_s: 0.004,
                decode_d1_s: 0.000_25,
                ..base
            },
        }
    }

    /// Ground truth: seconds to prefill one prompt of `len` tokens, `a + b·len + c·len²`.
    pub fn prefill_s(&self, len: u64) -> f64 {
        let l = len as f64;
        self.prefill_a_s + self.prefill_b_s * l + self.prefill_c_s * l * l
    }

    /// Ground truth: seconds of one decode step with `running` requests, `d0 + d1·(running − 1)`.
    /// Each running request gets one token (`tokens_per_chunk` tokens) per step.
    pub fn step_s(&self, running: u64) -> f64 {
        self.decode_d0_s + self.decode_d1_s * running.saturating_sub(1) as f64
    }

    /// Mean tokens one decode step gives each running request: the acceptance length with
    /// speculative decoding, else `tokens_per_chunk`.
    pub fn tokens_per_step(&self) -> f64 {
        match self.speculative_steps {
            Some(_) => self.spec_accept,
            None => f64::from(self.tokens_per_chunk.max(1)),
        }
    }

    /// The same server `factor` times slower: every prefill and decode cost multiplied, so every
    /// time it takes (TTFT, each step, each request) is `factor` times as long and every rate
    /// `1 / factor` as high, at any load. `factor` must be a positive number.
    pub fn slowed(self, factor: f64) -> SimConfig {
        SimConfig {
            prefill_a_s: self.prefill_a_s * factor,
            prefill_b_s: self.prefill_b_s * factor,
            prefill_c_s: self.prefill_c_s * factor,
            decode_d0_s: self.decode_d0_s * factor,
            decode_d1_s: self.decode_d1_s * factor,
            decode_kv_s: self.decode_kv_s * factor,
            ..self
        }
    }

    /// The name `/version` reports.
    pub fn preset_name(&self) -> &'static str {
        self.preset.map_or("custom", Preset::name)
    }

    /// Rejects configurations the sim cannot serve, naming the field to fix.
    pub fn validate(&self) -> Result<(), String> {
        let timings = [
            ("prefill_a_s", self.prefill_a_s),
            ("prefill_b_s", self.prefill_b_s),
            ("prefill_c_s", self.prefill_c_s),
            ("decode_d0_s", self.decode_d0_s),
            ("decode_d1_s", self.decode_d1_s),
            ("decode_kv_s", self.decode_kv_s),
        ];
        if let Some((name, v)) = timings.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            return Err(format!(
                "{name} must be a finite number of seconds >= 0, got {v}"
            ));
        }
        let rules = [
            (self.model.trim().is_empty(), "model must not be empty"),
            (self.max_running == 0, "max_running must be at least 1"),
            (self.max_context == 0, "max_context must be at least 1"),
            (self.tp_size == 0, "tp_size must be at least 1"),
            (
                self.tokens_per_chunk == 0,
                "tokens_per_chunk must be at least 1",
            ),
            (
                self.speculative_steps == Some(0),
                "speculative_steps must be at least 1",
            ),
            (
                self.speculative_steps.is_some_and(|s| {
                    !(self.spec_accept >= 1.0 && self.spec_accept <= f64::from(s) + 1.0)
                }),
                "spec_accept must be between 1 and speculative_steps + 1 tokens per step",
            ),
            (
                self.speculative_steps.is_some() && self.tokens_per_chunk > 1,
                "tokens_per_chunk applies without speculative decoding only: the tokens per step come from spec_accept",
            ),
            (self.fail_every == Some(0), "fail_every must be at least 1"),
            (
                self.reject_all.is_some_and(|s| !(400..=599).contains(&s)),
                "reject_all must be an HTTP error status (400..=599)",
            ),
            (
                self.repeat_word
                    .as_deref()
                    .is_some_and(|w| text::count_tokens(w) != 1),
                "repeat_word must be one word without whitespace",
            ),
        ];
        match rules.iter().find(|(broken, _)| *broken) {
            Some((_, message)) => Err((*message).to_string()),
            None => Ok(()),
        }
    }
}

/// Counters a test can read through [`SimServer::stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Generation requests received (completions and chat), including rejected ones.
    pub requests: u64,
    /// Generation requests answered with an error status.
    pub rejected: u64,
    /// Requests whose last token was produced.
    pub completed: u64,
    /// Requests dropped before their last token (client gone, or server stopped).
    pub cancelled: u64,
    /// Requests holding a slot now.
    pub running: u64,
    /// Requests queued now.
    pub waiting: u64,
    pub prompt_tokens: u64,
    pub generation_tokens: u64,
    /// Requests of any path refused because a [`SimConfig::require_headers`] header was missing.
    pub unauthorized: u64,
}

/// A serve-sim running in a background tokio task.
#[derive(Debug)]
pub struct SimServer {
    /// Where it listens.
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl SimServer {
    /// Binds 127.0.0.1:port (0 = free port) and serves from a thread of its own, with its own
    /// runtime, so the sim never shares the collector's worker threads and its CPU time is not
    /// counted as the client's (see [`crate::load::server::host::exclude_current_thread`]).
    ///
    /// Fails with `InvalidInput` when `cfg` does not pass [`SimConfig::validate`].
    pub async fn start(cfg: SimConfig, port: u16) -> std::io::Result<SimServer> {
        cfg.validate()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready, started) = oneshot::channel::<std::io::Result<Arc<Shared>>>();
        let thread = std::thread::Builder::new()
            .name("serve-sim".into())
            .spawn(move || serve_on_own_runtime(cfg, listener, stopped, ready))?;
        let shared = match started.await {
            Ok(Ok(shared)) => shared,
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(std::io::Error::other(
                    "the simulator thread stopped at start",
                ));
            }
        };
        Ok(SimServer {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT`
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Counters so far.
    pub fn stats(&self) -> SimStats {
        self.shared.stats()
    }

    /// Ground truth of what clients sent: the text prompts received (the first 10,000).
    pub fn received_prompts(&self) -> Vec<String> {
        self.shared.received_prompts()
    }

    /// Stops serving: open streams end at once (without `[DONE]`), then the thread is joined.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // The server's own result no longer matters to anyone once it is asked to stop.
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

impl Drop for SimServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// The simulator thread: a current-thread runtime serving until `stopped`.
fn serve_on_own_runtime(
    cfg: SimConfig,
    listener: std::net::TcpListener,
    stopped: oneshot::Receiver<()>,
    ready: oneshot::Sender<std::io::Result<Arc<Shared>>>,
) -> std::io::Result<()> {
    crate::load::server::host::exclude_current_thread();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let started =
            Shared::start(cfg).and_then(|shared| Ok((shared, TcpListener::from_std(listener)?)));
        let (shared, listener) = match started {
            Ok(v) => v,
            Err(e) => {
                let kind = e.kind();
                let _ = ready.send(Err(std::io::Error::new(kind, e.to_string())));
                return Err(e);
            }
        };
        let _ = ready.send(Ok(Arc::clone(&shared)));
        let signal = async move {
            // A dropped sender means the same as a sent stop.
            let _ = stopped.await;
        };
        server::run(shared, listener, signal).await
    })
}

/// Serves `cfg` on `listener` until `shutdown` completes; then open streams end at once.
///
/// Fails with `InvalidInput` when `cfg` does not pass [`SimConfig::validate`].
pub async fn serve(
    cfg: SimConfig,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    server::run(Shared::start(cfg)?, listener, shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kpro5_hits_its_anchor_points() {
        let c = SimConfig::preset(Preset::Kpro5);
        assert!((c.prefill_s(1_000) - 0.15).abs() < 1e-12);
        assert!((c.prefill_s(30_000) - 2.32).abs() < 1e-12);
        assert!((c.prefill_b_s - 6.98391e-5).abs() < 1e-10);
        assert!((c.prefill_c_s - 1.60920e-10).abs() < 1e-15);
        // 2.6 tokens a step on average: 73.5 tok/s for one stream, as before MTP was modelled.
        assert_eq!(c.tokens_per_step(), 2.6);
        assert!((c.tokens_per_step() / c.step_s(1) - 73.5).abs() < 1e-9);
        assert!((c.step_s(16) - 2.6 * (1.0 / 73.5 + 0.015)).abs() < 1e-12);
    }

    #[test]
    fn fast_preset_numbers() {
        let c = SimConfig::preset(Preset::Fast);
        assert!((c.prefill_s(1_000) - 0.005).abs() < 1e-12);
        assert!((c.step_s(1) - 0.004).abs() < 1e-12);
        assert!((c.step_s(5) - 0.005).abs() < 1e-12);
        assert_eq!(c.step_s(0), c.step_s(1));
        assert_eq!(c.model, "sim-fast");
        assert_eq!(c.preset_name(), "fast");
    }

    #[test]
    fn presets_are_valid_and_bad_fields_are_named() {
        assert_eq!(SimConfig::preset(Preset::Kpro5).validate(), Ok(()));
        assert_eq!(SimConfig::default().validate(), Ok(()));
        let bad = |c: SimConfig| c.validate().expect_err("should be rejected");
        assert!(
            bad(SimConfig {
                max_running: 0,
                ..Default::default()
            })
            .contains("max_running")
        );
        assert!(
            bad(SimConfig {
                decode_d0_s: -1.0,
                ..Default::default()
            })
            .contains("decode_d0_s")
        );
        assert!(
            bad(SimConfig {
                reject_all: Some(200),
                ..Default::default()
            })
            .contains("reject_all")
        );
        assert!(
            bad(SimConfig {
                fail_every: Some(0),
                ..Default::default()
            })
            .contains("fail_every")
        );
        let two_words = Some("a b".to_string());
        assert!(
            bad(SimConfig {
                repeat_word: two_words,
                ..Default::default()
            })
            .contains("repeat_word")
        );
    }
}
