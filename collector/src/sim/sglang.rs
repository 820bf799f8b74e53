//! The SGLang personality ([`Personality::Sglang`](super::Personality)): what SGLang 0.5 says
//! about itself, and its metric names, filled with the simulator's true values.
//!
//! Every name comes from SGLang's own source (sgl-project/sglang, the 0.5.11 wheel on PyPI, with
//! 0.5.3 where they differ):
//!
//! - routes and their bodies: `python/sglang/srt/entrypoints/http_server.py` (commit
//!   `0025436e`): `GET /get_server_info` returns the launch arguments (`ServerArgs`) merged with
//!   the scheduler's info, `internal_states` (one per data-parallel rank) and `version`;
//!   `GET /get_model_info` returns `model_path`, `tokenizer_path`, `is_generation`,
//!   `preferred_sampling_params` and `weight_version`; `/v1/models` cards are owned by `sglang`.
//!   0.5.11 answers the same at `/server_info` and `/model_info` (the old paths still answer,
//!   deprecated), so both are served.
//!   SGLang has no `/version`: it answers 404 as FastAPI does, `{"detail":"Not Found"}`.
//! - internal state fields (`last_gen_throughput`, `memory_usage.token_capacity`,
//!   `effective_max_running_requests_per_dp`, new in 0.5.11; `avg_spec_accept_length`, absent
//!   until the first speculative step is logged): the scheduler's `get_internal_state`
//!   (`python/sglang/srt/managers/scheduler.py`).
//! - metric names and help texts: `python/sglang/srt/metrics/collector.py` (commit `00ae9c15`):
//!   `SchedulerMetricsCollector` gauges, labelled `model_name`, `engine_type`, `tp_rank`,
//!   `pp_rank`; `TokenizerMetricsCollector` counters, labelled `model_name`.
//! - the context errors: `TokenizerManager._validate_one_request`
//!   (`python/sglang/srt/managers/tokenizer_manager.py`): the input counts the tokens an
//!   EAGLE-style drafter (NEXTN is one) reserves, `max(topk × steps, draft tokens)`; an input
//!   that reaches the context is "longer than the model's context length", one whose
//!   `max_new_tokens` do not fit "exceeds the model's maximum context length". The OpenAI layer
//!   (`entrypoints/openai/serving_base.py`) turns that `ValueError` into HTTP 400
//!   `{"object":"error","message",…,"type":"BadRequest","param":null,"code":400}`.
//! - an error once streaming has begun (`serving_chat.py`, `serving_completions.py`): one event
//!   `{"error": {"object":"error","message",…,"type","param":null,"code"}}`, then `[DONE]`.
//!
//! The simulator still says what it is: `version` carries `+serve-sim`, the server info a
//! `simulator` field SGLang does not have, and `/metrics` opens with a comment.

use serde_json::{Value, json};

use super::SimConfig;
use super::model::Snapshot;

/// The SGLang release whose shapes the personality follows.
pub(super) const SGLANG_VERSION: &str = "0.5.11";

/// `version` as the server info reports it: SGLang's, marked as the simulator's.
pub(super) fn version() -> String {
    format!("{SGLANG_VERSION}+serve-sim")
}

/// Drafts per step SGLang's EAGLE-style drafter keeps (`speculative_eagle_topk`).
const EAGLE_TOPK: u32 = 1;

/// SGLang's algorithm name for multi-token-prediction drafting.
const SPECULATIVE_ALGORITHM: &str = "NEXTN";

/// Accepted tokens per decode step and request over the recent steps, as SGLang's scheduler
/// reports it (over its last decode log interval); 0 before any step, as SGLang's gauge starts.
fn accept_length(s: &Snapshot) -> f64 {
    s.recent_accept_length().unwrap_or(0.0)
}

/// Tokens SGLang adds to every input when an EAGLE-style drafter runs (NEXTN is one): the
/// drafts are stored in the output's slots, `max(topk × steps, draft tokens)`; 0 without one.
pub(super) fn reserved_tokens(cfg: &SimConfig) -> u64 {
    cfg.speculative_steps
        .map_or(0, |steps| u64::from((EAGLE_TOPK * steps).max(steps + 1)))
}

/// SGLang's check of a request's lengths: `None` when it fits, else the error's message.
pub(super) fn check_context(cfg: &SimConfig, prompt: u64, max_new: u64) -> Option<String> {
    let input = prompt + reserved_tokens(cfg);
    if input >= cfg.max_context {
        return Some(format!(
            "The input ({input} tokens) is longer than the model's context length ({} tokens).",
            cfg.max_context
        ));
    }
    (input + max_new > cfg.max_context).then(|| context_too_long(cfg.max_context, input, max_new))
}

/// `GET /get_server_info` (and `/server_info`).
pub(super) fn server_info(cfg: &SimConfig, snap: &Snapshot) -> Value {
    let spec = cfg.speculative_steps;
    let mut state = json!({
        "last_gen_throughput": snap.gen_throughput(),
        "memory_usage": {"token_capacity": cfg.kv_cache_tokens},
        "effective_max_running_requests_per_dp": cfg.max_running,
    });
    // Absent until the first speculative step is logged, as SGLang's scheduler has it.
    if let (Some(_), Some(a)) = (spec, snap.recent_accept_length()) {
        state["avg_spec_accept_length"] = json!(a);
    }
    json!({
        "model_path": cfg.model,
        "tokenizer_path": cfg.model,
        "served_model_name": cfg.model,
        "context_length": cfg.max_context,
        "tp_size": cfg.tp_size,
        "dp_size": 1,
        "pp_size": 1,
        "max_running_requests": cfg.max_running,
        "max_total_tokens": cfg.kv_cache_tokens,
        "disable_radix_cache": !cfg.prefix_cache,
        "enable_metrics": true,
        "speculative_algorithm": spec.map(|_| SPECULATIVE_ALGORITHM),
        "speculative_num_steps": spec,
        "speculative_eagle_topk": spec.map(|_| EAGLE_TOPK),
        "speculative_num_draft_tokens": spec.map(|s| s + 1),
        "max_total_num_tokens": cfg.kv_cache_tokens,
        "max_req_input_len": cfg.max_context.min(cfg.kv_cache_tokens.max(1)).saturating_sub(1),
        "internal_states": [state],
        "version": version(),
        "simulator": format!(
            "llmsweep serve-sim {} ({} preset)",
            env!("CARGO_PKG_VERSION"),
            cfg.preset_name()
        ),
    })
}

/// `GET /get_model_info` (and `/model_info`).
pub(super) fn model_info(cfg: &SimConfig) -> Value {
    json!({
        "model_path": cfg.model,
        "tokenizer_path": cfg.model,
        "is_generation": true,
        "preferred_sampling_params": null,
        "weight_version": "default",
    })
}

/// SGLang's wording when prompt plus `max_tokens` do not fit the context.
pub(super) fn context_too_long(max_context: u64, prompt: u64, completion: u64) -> String {
    format!(
        "Requested token count exceeds the model's maximum context length of {max_context} \
         tokens. You requested a total of {} tokens: {prompt} tokens from the input messages \
         and {completion} tokens for the completion. Please reduce the number of tokens in the \
         input messages or the completion to fit within the limit.",
        prompt + completion
    )
}

/// `/metrics` as SGLang writes it with `--enable-metrics`: scheduler gauges of TP rank 0 (the
/// only rank that writes them) and the tokenizer's counters. `completed` is the number of
/// finished requests (`sglang:num_requests_total`).
pub(super) fn metrics_text(cfg: &SimConfig, s: &Snapshot, completed: u64) -> String {
    let model = super::wire::escape_label(&cfg.model);
    let rank =
        format!("{{engine_type=\"unified\",model_name=\"{model}\",pp_rank=\"0\",tp_rank=\"0\"}}");
    let tokenizer = format!("{{model_name=\"{model}\"}}");
    let ratio = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            (part as f64 / whole as f64).min(1.0)
        }
    };
    let mut gauges: Vec<(&str, &str, f64)> = vec![
        (
            "sglang:num_running_reqs",
            "The number of running requests.",
            s.running as f64,
        ),
        (
            "sglang:num_used_tokens",
            "The number of used tokens.",
            s.kv_tokens as f64,
        ),
        (
            "sglang:token_usage",
            "The token usage.",
            ratio(s.kv_tokens, cfg.kv_cache_tokens),
        ),
        (
            "sglang:gen_throughput",
            "The generation throughput (token/s).",
            s.gen_throughput(),
        ),
        (
            "sglang:num_queue_reqs",
            "The number of requests in the waiting queue.",
            s.waiting as f64,
        ),
        (
            "sglang:cache_hit_rate",
            "The prefix cache hit rate.",
            ratio(s.prefix_cache_hits_total, s.prefix_cache_queries_total),
        ),
        (
            "sglang:max_total_num_tokens",
            "Maximum total number of tokens in the KV cache pool.",
            cfg.kv_cache_tokens as f64,
        ),
    ];
    if cfg.speculative_steps.is_some() {
        gauges.push((
            "sglang:spec_accept_length",
            "The average acceptance length of speculative decoding.",
            accept_length(s),
        ));
    }
    let counters: [(&str, &str, u64); 4] = [
        (
            "sglang:prompt_tokens_total",
            "Number of prefill tokens processed.",
            s.prompt_tokens_total,
        ),
        (
            "sglang:generation_tokens_total",
            "Number of generation tokens processed.",
            s.generation_tokens_total,
        ),
        (
            "sglang:cached_tokens_total",
            "Number of cached prompt tokens.",
            s.prefix_cache_hits_total,
        ),
        (
            "sglang:num_requests_total",
            "Number of requests processed.",
            completed,
        ),
    ];
    let mut out = String::from("# llmsweep serve-sim: simulated metrics, SGLang's names\n");
    for (name, help, value) in gauges {
        // `{:?}` prints floats as Python's prometheus_client does: `3.0`, `0.25`.
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{rank} {value:?}\n"
        ));
    }
    for (name, help, value) in counters {
        let value = value as f64;
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} counter\n{name}{tokenizer} {value:?}\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Preset;
    use crate::telemetry::prometheus::parse;
    use crate::telemetry::scheme::{Scheme, recognise, select};

    fn kpro5() -> SimConfig {
        SimConfig {
            model: "sim \"27b\"".into(),
            engine: crate::sim::Personality::Sglang,
            ..SimConfig::preset(Preset::Kpro5)
        }
    }

    /// 3 running, 2 queued, 4096 of 131 072 KV tokens in use, a decode step of 3 tokens in
    /// 12.5 ms (240 tok/s), 100 of 400 prompt tokens from the cache.
    fn snapshot() -> Snapshot {
        Snapshot {
            running: 3,
            waiting: 2,
            kv_tokens: 4096,
            prompt_tokens_total: 400,
            generation_tokens_total: 90,
            prefix_cache_queries_total: 400,
            prefix_cache_hits_total: 100,
            decode_request_steps_total: 120,
            decode_tokens_total: 300,
            recent_request_steps: 40,
            recent_tokens: 100,
            step_tokens: 3,
            step_nanos: 12_500_000,
        }
    }

    #[test]
    fn metrics_parse_with_the_collectors_parser_into_sglangs_gauges() {
        let text = metrics_text(&kpro5(), &snapshot(), 7);
        let e = parse(&text);
        assert_eq!(recognise(&e), Some(Scheme::Sglang));
        let r = select(Scheme::Sglang, &e);
        let gauges: Vec<(&str, f64)> = r.gauges.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            gauges,
            [
                ("sglang:cache_hit_rate", 0.25),
                ("sglang:gen_throughput", 240.0),
                ("sglang:num_queue_reqs", 2.0),
                ("sglang:num_running_reqs", 3.0),
                ("sglang:spec_accept_length", 2.5),
                ("sglang:token_usage", 4096.0 / 131_072.0),
            ]
        );
        let counters: Vec<(&str, f64)> = r.counters.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            counters,
            [
                ("sglang:cached_tokens_total", 100.0),
                ("sglang:generation_tokens_total", 90.0),
                ("sglang:prompt_tokens_total", 400.0),
            ]
        );
        assert!(text.contains(
            "sglang:num_running_reqs{engine_type=\"unified\",model_name=\"sim \\\"27b\\\"\",pp_rank=\"0\",tp_rank=\"0\"} 3.0\n"
        ));
        assert!(text.contains("sglang:num_requests_total{model_name=\"sim \\\"27b\\\"\"} 7.0\n"));
        assert!(!text.contains("vllm:"));
    }

    #[test]
    fn no_acceptance_length_without_speculative_decoding() {
        let cfg = SimConfig {
            engine: crate::sim::Personality::Sglang,
            ..SimConfig::preset(Preset::Fast)
        };
        let text = metrics_text(&cfg, &snapshot(), 0);
        assert!(!text.contains("spec_accept_length"));
        let info = server_info(&cfg, &snapshot());
        assert_eq!(info["speculative_algorithm"], Value::Null);
        assert_eq!(info["tp_size"], 1);
        assert!(
            info["internal_states"][0]
                .get("avg_spec_accept_length")
                .is_none()
        );
    }

    #[test]
    fn server_info_has_what_sglang_reports_and_says_it_is_simulated() {
        let info = server_info(&kpro5(), &snapshot());
        assert_eq!(info["tp_size"], 2);
        assert_eq!(info["dp_size"], 1);
        assert_eq!(info["max_running_requests"], 16);
        assert_eq!(info["context_length"], 32_768);
        assert_eq!(info["speculative_algorithm"], "NEXTN");
        assert_eq!(info["speculative_num_steps"], 3);
        assert_eq!(info["speculative_num_draft_tokens"], 4);
        assert_eq!(info["max_total_num_tokens"], 131_072);
        assert_eq!(info["max_req_input_len"], 32_767);
        assert_eq!(info["version"], "0.5.11+serve-sim");
        assert_eq!(info["internal_states"][0]["last_gen_throughput"], 240.0);
        assert_eq!(
            info["internal_states"][0]["effective_max_running_requests_per_dp"],
            16
        );
        assert_eq!(info["internal_states"][0]["avg_spec_accept_length"], 2.5);
        assert!(
            info["simulator"].as_str().is_some_and(
                |s| s.starts_with("llmsweep serve-sim ") && s.ends_with("(kpro5 preset)")
            ),
            "{}",
            info["simulator"]
        );
    }

    /// SGLang 0.5.11 counts NEXTN's reserved draft slots (4 with 3 steps) in the input: an input
    /// that reaches the context is refused as too long, one whose output does not fit as
    /// exceeding it, each in SGLang's words.
    #[test]
    fn the_context_checks_count_the_drafts_reserved_slots() {
        let cfg = SimConfig::preset(Preset::Kpro5);
        assert_eq!(reserved_tokens(&cfg), 4);
        assert_eq!(check_context(&cfg, 32_000, 764), None);
        assert_eq!(
            check_context(&cfg, 32_764, 1).as_deref(),
            Some(
                "The input (32768 tokens) is longer than the model's context length (32768 tokens)."
            )
        );
        assert!(
            check_context(&cfg, 32_000, 765)
                .is_some_and(|m| m.contains("total of 32769 tokens: 32004 tokens from the input"))
        );
        let plain = SimConfig {
            speculative_steps: None,
            ..cfg
        };
        assert_eq!(check_context(&plain, 32_000, 768), None);
    }

    #[test]
    fn the_context_error_is_sglangs_wording() {
        assert_eq!(
            context_too_long(32_768, 32_000, 1000),
            "Requested token count exceeds the model's maximum context length of 32768 tokens. \
             You requested a total of 33000 tokens: 32000 tokens from the input messages and 1000 \
             tokens for the completion. Please reduce the number of tokens in the input messages \
             or the completion to fit within the limit."
        );
    }
}
