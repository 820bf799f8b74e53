//! `llmsweep serve-sim`: the simulated server (a test instrument with known timing).

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::sim::{Personality, Preset, SimConfig};

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # On 127.0.0.1:30000, timed like SGLang serving a 27B model; sweep it from another terminal
  llmsweep serve-sim

  # A quick one on another port
  llmsweep serve-sim --preset fast --port 30001

  # kpro5 with MTP accepting 2.1 tokens per step instead of 2.6, speaking as vLLM
  llmsweep serve-sim --spec-accept 2.1 --engine vllm

  # A faulty one: every 10th request fails, and only callers sending the header get in
  llmsweep serve-sim --preset fast --fail-every 10 --require-header X-Token:abc")]
pub struct SimArgs {
    /// Address to listen on.
    ///
    /// Keep it on loopback unless you mean to share it.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 30000)]
    pub port: u16,
    /// Timing shape.
    ///
    /// Timing shape: `kpro5` is shaped like SGLang serving a 27B model on 2× RTX A6000; `fast` is
    /// quick.
    #[arg(long, value_enum, default_value_t = Preset::Kpro5)]
    pub preset: Preset,
    /// Engine to speak as (kpro5: sglang, fast: vllm).
    ///
    /// Engine to speak as: `vllm` answers /version and vLLM's metric names; `sglang` answers
    /// SGLang 0.5's /get_server_info and /get_model_info, its `sglang:` metric names and error
    /// wording. Timing is the same for both. Default: the preset's (kpro5 speaks as SGLang,
    /// fast as vLLM).
    #[arg(long, value_enum)]
    pub engine: Option<Personality>,
    /// Mean tokens accepted per speculative step (kpro5: 2.6).
    ///
    /// Speculative decoding's mean acceptance length: tokens per decode step and request, from
    /// 1 to the draft steps + 1. A step costs the same whatever it yields, so decode speed is
    /// proportional to it: kpro5 at 2.1 decodes 2.1/2.6 as fast.
    #[arg(long, value_name = "TOKENS")]
    pub spec_accept: Option<f64>,
    /// Speculative draft steps (kpro5: 3; 0 turns it off).
    #[arg(long, value_name = "N")]
    pub spec_steps: Option<u32>,
    /// As vLLM's flag: `summary` states each request's acceptance in its answer.
    ///
    /// As vLLM 0.29's flag of the same name (with --engine vllm and speculative decoding):
    /// `summary` puts each request's metrics.speculative_decoding (steps, drafted and accepted
    /// tokens, acceptance length and histogram) on its last chunk when usage is asked, or on
    /// its answer; `none` (the default) leaves answers as they are.
    #[arg(long, value_name = "LEVEL", value_parser = ["none", "summary"])]
    pub per_request_spec_decode_metrics: Option<String>,
    /// Seed of the generated text.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Override the preset's context limit.
    ///
    /// Override the preset's context limit (tokens of prompt plus output).
    #[arg(long)]
    pub max_context: Option<u64>,
    /// Override the preset's number of requests decoded at once.
    #[arg(long)]
    pub max_running: Option<u32>,
    /// Every prefill and decode cost times F (e.g. 1.05 for 5 % slower).
    ///
    /// A uniformly slower (or, below 1, faster) server: every prefill and decode cost is
    /// multiplied by F, so every time it takes is F times as long at any load. For testing what
    /// a comparison can resolve against a known change, e.g. 1.05 for a server 5 % slower.
    #[arg(long, value_name = "F", default_value_t = 1.0, value_parser = parse_slowdown)]
    pub slowdown: f64,
    /// This process's speed drawn once from --seed, with PCT % spread between processes.
    ///
    /// Run-to-run noise with a known truth: each process multiplies every cost by a factor
    /// e^(PCT/100 · z), z a standard normal drawn from --seed, and says the factor when it
    /// starts; runs with different seeds then scatter by about PCT % as real reruns do (a
    /// restart, another placement, a warmer or cooler GPU).
    #[arg(long, value_name = "PCT", default_value_t = 0.0, value_parser = parse_jitter)]
    pub run_jitter: f64,
    /// Fault: stop every response after N tokens.
    ///
    /// Fault: stop every response after N tokens, as a server ignoring ignore_eos does.
    #[arg(long, value_name = "N", help_heading = "Fault modes")]
    pub early_stop_after: Option<u32>,
    /// Fault: generate N tokens more than max_tokens.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        help_heading = "Fault modes"
    )]
    pub overshoot: u32,
    /// Fault: answer every Nth generation request with HTTP 500.
    #[arg(long, value_name = "N", help_heading = "Fault modes")]
    pub fail_every: Option<u32>,
    /// Fault: answer every generation request with this HTTP status.
    #[arg(long, value_name = "STATUS", help_heading = "Fault modes")]
    pub reject_all: Option<u16>,
    /// Fault: report N prompt tokens as cached.
    ///
    /// Fault: report N prompt tokens as served from the prefix cache.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        help_heading = "Fault modes"
    )]
    pub cached_tokens: u32,
    /// Stream N reasoning tokens per answer.
    ///
    /// Act as a reasoning model: on the chat API the first N tokens of every answer stream as
    /// reasoning_content, and usage counts them as reasoning tokens.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub reasoning_tokens: u32,
    /// Fault: generate this word over and over (degenerate output).
    #[arg(long, value_name = "WORD", help_heading = "Fault modes")]
    pub repeat_word: Option<String>,
    /// Fault: end every stream after N chunks, without [DONE].
    ///
    /// Fault: end every stream after N token chunks, without finish reason, usage or [DONE].
    #[arg(long, value_name = "N", help_heading = "Fault modes")]
    pub cut_after: Option<u32>,
    /// Fault: end every stream after N token chunks with the engine's error event, then [DONE].
    ///
    /// Fault: every stream ends after N token chunks (at least 1) with the error event the
    /// engine sends once streaming has begun (data: {"error": {...}}), then [DONE], as a
    /// server whose worker fails mid-answer.
    #[arg(long, value_name = "N", help_heading = "Fault modes")]
    pub error_after: Option<u32>,
    /// Fault: request N stops for S seconds after K chunks.
    ///
    /// Fault: the Nth generation request received (warm-ups counted) sends nothing for S
    /// seconds after its Kth token chunk, as a server that hangs or a network that stops, e.g.
    /// 3:10:2.5.
    #[arg(long, value_name = "N:K:S", value_parser = parse_stall, help_heading = "Fault modes")]
    pub stall: Option<crate::sim::Stall>,
    /// Fault: never report usage, like llama-cpp-python's server.
    #[arg(long, help_heading = "Fault modes")]
    pub no_usage: bool,
    /// Tokens per streamed chunk, always the same (needs --spec-steps 0 with kpro5).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        help_heading = "Fault modes"
    )]
    pub tokens_per_chunk: u32,
    /// Fault: answer /tokenize with 404.
    ///
    /// Fault: answer /tokenize with 404, as a server without a tokenizer endpoint.
    #[arg(long, help_heading = "Fault modes")]
    pub no_tokenize: bool,
    /// Answer 401 without this header, e.g. X-Token:abc (repeatable).
    ///
    /// Answer 401 to any request without this header and value, e.g. X-Token:abc (repeatable).
    #[arg(long, value_name = "NAME:VALUE", value_parser = parse_required, help_heading = "Access")]
    pub require_header: Vec<(String, String)>,
    /// Answer 401 without this basic authentication.
    ///
    /// Answer 401 to any request without this HTTP basic authentication, e.g. user:password.
    #[arg(long, value_name = "USER:PASSWORD", help_heading = "Access")]
    pub require_user: Option<String>,
}

/// `--stall N:K:S`.
fn parse_stall(s: &str) -> Result<crate::sim::Stall, String> {
    let parts: Vec<&str> = s.split(':').map(str::trim).collect();
    let [n, k, secs] = parts[..] else {
        return Err(format!(
            "expected REQUEST:CHUNKS:SECONDS, e.g. 3:10:2.5, got {s:?}"
        ));
    };
    let bad = || {
        format!(
            "expected REQUEST:CHUNKS:SECONDS with REQUEST at least 1 and SECONDS from 0 to 3600, e.g. 3:10:2.5, got {s:?}"
        )
    };
    let request: u64 = n.parse().ok().filter(|&r| r >= 1).ok_or_else(bad)?;
    let after: u32 = k.parse().map_err(|_| bad())?;
    let seconds: f64 = secs
        .parse()
        .ok()
        .filter(|v: &f64| (0.0..=3600.0).contains(v))
        .ok_or_else(bad)?;
    Ok(crate::sim::Stall {
        request,
        after,
        seconds,
    })
}

/// `--slowdown`: a factor from 0.1 to 10.
fn parse_slowdown(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if (0.1..=10.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "expected a factor from 0.1 to 10, e.g. 1.05 for a server 5 % slower, got {s:?}"
        )),
    }
}

/// `--run-jitter`: a spread in per cent from 0 to 50.
fn parse_jitter(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(p) if (0.0..=50.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "expected a spread in per cent from 0 to 50, e.g. 2, got {:?}",
            llmsweep_shared::text::one_line(s)
        )),
    }
}

/// The speed factor of a process with `--run-jitter pct` and `--seed seed`: e^(pct/100 · z),
/// z a standard normal drawn (Box–Muller) from the seed alone, so the factor is known from the
/// flags (the tests' ground truth) and differs from seed to seed.
pub(crate) fn jitter_factor(pct: f64, seed: u64) -> f64 {
    if pct == 0.0 {
        return 1.0;
    }
    let mut rng = crate::load::workload::SplitMix64::new(seed ^ 0x6a09_e667_f3bc_c908);
    // Two uniforms in (0, 1], from the top 53 bits.
    let mut uniform = || ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let (u1, u2) = (uniform(), uniform());
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    (pct / 100.0 * z).exp()
}

/// `NAME:VALUE` of `--require-header`.
fn parse_required(s: &str) -> Result<(String, String), String> {
    match s.split_once(':') {
        Some((n, v)) if !n.trim().is_empty() => Ok((n.trim().to_string(), v.trim().to_string())),
        _ => Err("expected NAME:VALUE, e.g. X-Token:abc".into()),
    }
}

/// `llmsweep serve-sim`: serve until Ctrl-C.
pub(crate) async fn run(a: SimArgs) -> anyhow::Result<ExitCode> {
    let cfg = sim_config(&a)?;
    let ip: std::net::IpAddr = a
        .host
        .parse()
        .with_context(|| format!("--host {:?} is not an IP address, e.g. 127.0.0.1", a.host))?;
    if !ip.is_loopback() {
        errln!("warning: serving on {ip}, reachable from other machines");
    }
    let listener = tokio::net::TcpListener::bind((ip, a.port))
        .await
        .with_context(|| format!("cannot listen on {ip}:{} (--host, --port)", a.port))?;
    let addr = listener.local_addr()?;
    let slowed = if a.slowdown == 1.0 {
        String::new()
    } else {
        format!(", {}× its costs", a.slowdown)
    };
    let jittered = if a.run_jitter == 0.0 {
        String::new()
    } else {
        format!(
            ", this process {:.4}× its costs (--run-jitter {} %, seed {})",
            jitter_factor(a.run_jitter, a.seed),
            a.run_jitter,
            a.seed
        )
    };
    let speaking = match cfg.engine {
        Personality::Vllm => ", speaking as vLLM",
        Personality::Sglang => ", speaking as SGLang",
    };
    let speculative = match cfg.speculative_steps {
        Some(steps) => format!(
            ", speculative decoding of {steps} drafts accepting {} tokens a step",
            cfg.spec_accept
        ),
        None => String::new(),
    };
    outln!(
        "llmsweep serve-sim ({} preset{slowed}{jittered}{speaking}{speculative}, model {}): simulated server, not a real engine — http://{addr}",
        a.preset.name(),
        cfg.model
    );
    crate::sim::serve(cfg, listener, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(ExitCode::SUCCESS)
}

/// The simulator configuration the `serve-sim` flags ask for, or what to change.
fn sim_config(a: &SimArgs) -> anyhow::Result<SimConfig> {
    let mut cfg =
        SimConfig::preset(a.preset).slowed(a.slowdown * jitter_factor(a.run_jitter, a.seed));
    cfg.seed = a.seed;
    cfg.engine = a.engine.unwrap_or(cfg.engine);
    match a.spec_steps {
        Some(0) => cfg.speculative_steps = None,
        Some(n) => cfg.speculative_steps = Some(n),
        None => {}
    }
    if let Some(accept) = a.spec_accept {
        let Some(steps) = cfg.speculative_steps else {
            anyhow::bail!(
                "--spec-accept needs speculative decoding: give --spec-steps N too (the {} preset has none)",
                a.preset.name()
            );
        };
        if !(accept >= 1.0 && accept <= f64::from(steps) + 1.0) {
            anyhow::bail!(
                "--spec-accept {accept} is not a mean of tokens per step with {steps} drafts: give a number from 1 to {}",
                steps + 1
            );
        }
        cfg.spec_accept = accept;
    }
    if a.per_request_spec_decode_metrics.as_deref() == Some("summary") {
        if cfg.engine != Personality::Vllm || cfg.speculative_steps.is_none() {
            anyhow::bail!(
                "--per-request-spec-decode-metrics is vLLM's, for speculative decoding: give --engine vllm, and --spec-steps N with a preset that has none"
            );
        }
        cfg.per_request_spec_metrics = true;
    }
    if a.tokens_per_chunk > 1 && cfg.speculative_steps.is_some() {
        anyhow::bail!(
            "--tokens-per-chunk gives every chunk the same size, which speculative decoding does not: add --spec-steps 0, or set its mean with --spec-accept"
        );
    }
    cfg.max_context = a.max_context.unwrap_or(cfg.max_context);
    cfg.max_running = a.max_running.unwrap_or(cfg.max_running).max(1);
    cfg.early_stop_after = a.early_stop_after;
    cfg.overshoot = a.overshoot;
    cfg.fail_every = a.fail_every;
    cfg.reject_all = a.reject_all;
    cfg.cached_tokens = a.cached_tokens;
    cfg.reasoning_tokens = a.reasoning_tokens;
    cfg.repeat_word = a.repeat_word.clone();
    cfg.no_usage = a.no_usage;
    cfg.cut_after = a.cut_after.map(|n| n.max(1));
    cfg.error_after = a.error_after.map(|n| n.max(1));
    cfg.stall = a.stall;
    cfg.tokens_per_chunk = a.tokens_per_chunk.max(1);
    cfg.no_tokenize = a.no_tokenize;
    cfg.require_headers = a.require_header.clone();
    if let Some(user) = &a.require_user {
        use base64::Engine as _;
        let token = base64::engine::general_purpose::STANDARD.encode(user);
        cfg.require_headers
            .push(("authorization".into(), format!("Basic {token}")));
    }
    cfg.validate().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn config(args: &[&str]) -> SimConfig {
        let all = [&["llmsweep", "serve-sim"][..], args].concat();
        let Ok(cli) = crate::cli::Cli::try_parse_from(all) else {
            panic!("{args:?} should parse");
        };
        let crate::cli::Command::ServeSim(a) = cli.command else {
            panic!("not serve-sim");
        };
        sim_config(&a).expect("a valid configuration")
    }

    #[test]
    fn run_jitter_draws_each_process_speed_from_its_seed() {
        let base = config(&["--preset", "kpro5"]);
        let a = config(&["--preset", "kpro5", "--run-jitter", "2", "--seed", "7"]);
        let f = jitter_factor(2.0, 7);
        assert!((a.decode_d0_s / base.decode_d0_s - f).abs() < 1e-12);
        assert!((a.prefill_b_s / base.prefill_b_s - f).abs() < 1e-12);
        // The same seed, the same speed; no jitter, no change.
        assert_eq!(jitter_factor(2.0, 7), f);
        assert_eq!(jitter_factor(0.0, 7), 1.0);
        // Over many processes the factors scatter by the asked spread, around 1.
        let logs: Vec<f64> = (0..4000).map(|s| jitter_factor(2.0, s).ln()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let sd =
            (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64).sqrt();
        assert!(mean.abs() < 0.002, "{mean}");
        assert!((sd - 0.02).abs() < 0.001, "{sd}");
        let e = crate::cli::Cli::try_parse_from(["llmsweep", "serve-sim", "--run-jitter", "60"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("from 0 to 50"), "{e}");
    }

    fn refusal(args: &[&str]) -> String {
        let all = [&["llmsweep", "serve-sim"][..], args].concat();
        let Ok(cli) = crate::cli::Cli::try_parse_from(all) else {
            panic!("{args:?} should parse");
        };
        let crate::cli::Command::ServeSim(a) = cli.command else {
            panic!("not serve-sim");
        };
        match sim_config(&a) {
            Ok(c) => panic!("{args:?} was accepted: {c:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn kpro5_speaks_sglang_with_mtp_unless_asked_otherwise() {
        let default = config(&[]);
        assert_eq!(default, SimConfig::preset(Preset::Kpro5));
        assert_eq!(default.engine, Personality::Sglang);
        assert_eq!((default.tp_size, default.speculative_steps), (2, Some(3)));
        assert_eq!(default.spec_accept, crate::sim::KPRO5_ACCEPT);
        assert_eq!(config(&["--engine", "vllm"]).engine, Personality::Vllm);
        assert_eq!(config(&["--preset", "fast"]).engine, Personality::Vllm);
        assert_eq!(config(&["--spec-accept", "2.1"]).spec_accept, 2.1);
        let plain = config(&["--spec-steps", "0", "--tokens-per-chunk", "3"]);
        assert_eq!((plain.speculative_steps, plain.tokens_per_chunk), (None, 3));
    }

    #[test]
    fn speculative_flags_that_cannot_be_served_are_refused_with_what_to_change() {
        assert!(refusal(&["--spec-accept", "4.5"]).contains("from 1 to 4"));
        assert!(refusal(&["--preset", "fast", "--spec-accept", "2"]).contains("--spec-steps N"));
        assert!(refusal(&["--tokens-per-chunk", "2"]).contains("--spec-steps 0"));
    }
}
