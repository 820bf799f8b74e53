//! Which engine wrote a `/metrics` answer, and the few of its metrics a benchmark keeps.
//!
//! Each engine names its metrics with its own prefix; a scheme is recognised by the names
//! present, never by the server's claims. Only the metrics listed per [`Scheme`] are kept, by
//! their exact names (so `vllm:num_requests_waiting_by_reason` or `…_created` samples are not
//! mistaken for the ones wanted).
//!
//! A metric written with several label sets (one per model, per data-parallel engine or rank)
//! becomes one number: counts, rates and counters are summed; ratios (cache usage, hit rate,
//! acceptance length) are averaged, since summing two engines' 50 % usage into 100 % would say
//! something false. NaN and infinite values are left out; a metric with no finite value is
//! absent from that reading.

use std::collections::BTreeMap;

use super::prometheus::Exposition;

pub(crate) use llmsweep_shared::bundle::MetricScheme as Scheme;

/// How the label sets of one gauge become one number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Combine {
    Sum,
    Mean,
}

use Combine::{Mean, Sum};

const SGLANG_GAUGES: &[(&str, Combine)] = &[
    ("sglang:num_running_reqs", Sum),
    ("sglang:num_queue_reqs", Sum),
    ("sglang:token_usage", Mean),
    ("sglang:cache_hit_rate", Mean),
    ("sglang:spec_accept_length", Mean),
    ("sglang:gen_throughput", Sum),
];
const SGLANG_COUNTERS: &[&str] = &[
    "sglang:prompt_tokens_total",
    "sglang:generation_tokens_total",
    "sglang:cached_tokens_total",
];

const VLLM_GAUGES: &[(&str, Combine)] = &[
    ("vllm:num_requests_running", Sum),
    ("vllm:num_requests_waiting", Sum),
    ("vllm:kv_cache_usage_perc", Mean),
    // The name before vLLM V1; still written by older servers.
    ("vllm:gpu_cache_usage_perc", Mean),
];
const VLLM_COUNTERS: &[&str] = &[
    "vllm:prompt_tokens_total",
    "vllm:generation_tokens_total",
    "vllm:prefix_cache_queries_total",
    "vllm:prefix_cache_hits_total",
    "vllm:spec_decode_num_accepted_tokens_total",
    "vllm:spec_decode_num_draft_tokens_total",
    "vllm:spec_decode_num_drafts_total",
    "vllm:num_preemptions_total",
];

const LLAMACPP_GAUGES: &[(&str, Combine)] = &[
    ("llamacpp:requests_processing", Sum),
    ("llamacpp:requests_deferred", Sum),
    // The two KV gauges are gone from recent llama-server builds; kept where present.
    ("llamacpp:kv_cache_usage_ratio", Mean),
    ("llamacpp:kv_cache_tokens", Sum),
    ("llamacpp:n_busy_slots_per_decode", Mean),
    ("llamacpp:prompt_tokens_seconds", Sum),
    ("llamacpp:predicted_tokens_seconds", Sum),
];
const LLAMACPP_COUNTERS: &[&str] = &[
    "llamacpp:prompt_tokens_total",
    "llamacpp:tokens_predicted_total",
    "llamacpp:prompt_tokens_cached_total",
    "llamacpp:n_decode_total",
    "llamacpp:spec_decode_num_draft_tokens_total",
    "llamacpp:spec_decode_num_accepted_tokens_total",
];

/// The schemes this collector knows the metrics of.
pub(crate) const KNOWN: [Scheme; 3] = [Scheme::Sglang, Scheme::Vllm, Scheme::Llamacpp];

/// What the collector keeps of a scheme's metrics. Which gauge is the queue, the running count
/// and the KV-cache usage is the shared crate's table ([`Scheme::queue_gauge`] and its kin), so
/// the viewer draws the series the sampler's peaks come from.
pub(crate) trait Metrics: Copy {
    /// The gauges kept, with how their label sets combine.
    fn gauges(self) -> &'static [(&'static str, Combine)];
    /// The counters kept (summed over label sets).
    fn counters(self) -> &'static [&'static str];

    fn knows(self, name: &str) -> bool {
        self.gauges().iter().any(|(g, _)| *g == name) || self.counters().contains(&name)
    }
}

impl Metrics for Scheme {
    fn gauges(self) -> &'static [(&'static str, Combine)] {
        match self {
            Scheme::Sglang => SGLANG_GAUGES,
            Scheme::Vllm => VLLM_GAUGES,
            Scheme::Llamacpp => LLAMACPP_GAUGES,
            Scheme::Unknown => &[],
        }
    }

    fn counters(self) -> &'static [&'static str] {
        match self {
            Scheme::Sglang => SGLANG_COUNTERS,
            Scheme::Vllm => VLLM_COUNTERS,
            Scheme::Llamacpp => LLAMACPP_COUNTERS,
            Scheme::Unknown => &[],
        }
    }
}

/// The scheme most of whose metric names appear, or `None` when none does.
pub(crate) fn recognise(e: &Exposition) -> Option<Scheme> {
    KNOWN
        .into_iter()
        .map(|s| {
            let mut seen: Vec<&str> = e
                .samples
                .iter()
                .map(|x| x.name.as_str())
                .filter(|n| s.knows(n))
                .collect();
            seen.sort_unstable();
            seen.dedup();
            (seen.len(), s)
        })
        .filter(|(n, _)| *n > 0)
        .max_by_key(|(n, s)| (*n, std::cmp::Reverse(*s)))
        .map(|(_, s)| s)
}

/// One scrape, reduced to the scheme's metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    pub gauges: BTreeMap<String, f64>,
    pub counters: BTreeMap<String, f64>,
}

/// Picks `scheme`'s metrics out of `e`, one number each.
pub(crate) fn select(scheme: Scheme, e: &Exposition) -> Reading {
    let gauges = scheme
        .gauges()
        .iter()
        .filter_map(|(name, how)| Some((name.to_string(), combine(e, name, *how)?)))
        .collect();
    let counters = scheme
        .counters()
        .iter()
        .filter_map(|name| Some((name.to_string(), combine(e, name, Sum)?)))
        .collect();
    Reading { gauges, counters }
}

fn combine(e: &Exposition, name: &str, how: Combine) -> Option<f64> {
    let values: Vec<f64> = e
        .samples
        .iter()
        .filter(|s| s.name == name && s.value.is_finite())
        .map(|s| s.value)
        .collect();
    if values.is_empty() {
        return None;
    }
    let sum: f64 = values.iter().sum();
    Some(match how {
        Sum => sum,
        Mean => sum / values.len() as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::super::prometheus::parse;
    use super::*;

    fn map(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    /// SGLang 0.5 with `--enable-metrics` and two data-parallel ranks (abridged: histograms
    /// and most gauges trimmed, shapes kept).
    const SGLANG: &str = r#"# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{dp_rank="0",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="0"} 12.0
sglang:num_running_reqs{dp_rank="1",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="1"} 11.0
# HELP sglang:num_used_tokens The number of used tokens.
# TYPE sglang:num_used_tokens gauge
sglang:num_used_tokens{dp_rank="0",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="0"} 24576.0
# HELP sglang:token_usage The token usage.
# TYPE sglang:token_usage gauge
sglang:token_usage{dp_rank="0",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="0"} 0.25
sglang:token_usage{dp_rank="1",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="1"} 0.75
# HELP sglang:gen_throughput The generation throughput (token/s).
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{dp_rank="0",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="0"} 412.5
sglang:gen_throughput{dp_rank="1",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="1"} 398.25
# HELP sglang:num_queue_reqs The number of requests in the waiting queue.
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{dp_rank="0",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="0"} 3.0
sglang:num_queue_reqs{dp_rank="1",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="1"} 4.0
# HELP sglang:cache_hit_rate The prefix cache hit rate.
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{dp_rank="0",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="0"} 0.5
sglang:cache_hit_rate{dp_rank="1",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="1"} NaN
# HELP sglang:spec_accept_length The average acceptance length of speculative decoding.
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{dp_rank="0",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="0"} 0.0
sglang:spec_accept_length{dp_rank="1",engine_type="unified",model_name="Qwen/Qwen3-32B",pp_rank="0",tp_rank="1"} 0.0
# HELP sglang:prompt_tokens_total Number of prefill tokens processed.
# TYPE sglang:prompt_tokens_total counter
sglang:prompt_tokens_total{model_name="Qwen/Qwen3-32B"} 1.23456e+06
# HELP sglang:generation_tokens_total Number of generation tokens processed.
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="Qwen/Qwen3-32B"} 654321.0
# HELP sglang:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE sglang:time_to_first_token_seconds histogram
sglang:time_to_first_token_seconds_sum{model_name="Qwen/Qwen3-32B"} 812.5
sglang:time_to_first_token_seconds_bucket{le="0.1",model_name="Qwen/Qwen3-32B"} 30.0
sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="Qwen/Qwen3-32B"} 4000.0
sglang:time_to_first_token_seconds_count{model_name="Qwen/Qwen3-32B"} 4000.0
"#;

    /// vLLM V1 with two data-parallel engines (abridged), as prometheus_client writes it.
    const VLLM: &str = r#"# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 5.0
vllm:num_requests_running{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 6.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2.0
vllm:num_requests_waiting{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
# HELP vllm:num_requests_waiting_by_reason Number of requests waiting, by reason.
# TYPE vllm:num_requests_waiting_by_reason gauge
vllm:num_requests_waiting_by_reason{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct",reason="capacity"} 2.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.4
vllm:kv_cache_usage_perc{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.5
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.0
vllm:num_preemptions_total{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 100000.0
vllm:prompt_tokens_total{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 90000.0
# HELP vllm:prompt_tokens_created Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_created gauge
vllm:prompt_tokens_created{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1.7509134567e+09
# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 5000.0
vllm:generation_tokens_total{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 4500.0
# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 100000.0
# HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 2048.0
# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",cache_dtype="auto",engine="0",gpu_memory_utilization="0.9",num_gpu_blocks="27000"} 1.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 50.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 50.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 6.25
"#;

    /// llama-server (`--metrics`, 4 slots) as captured from the build on this machine, with
    /// `requests_processing` and `requests_deferred` raised from 0 to show a busy server. It
    /// has no `kv_cache_*` gauges.
    const LLAMACPP: &str = "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed, excluding cached tokens
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 24
# HELP llamacpp:prompt_tokens_cached_total Number of prompt tokens reused from the cache
# TYPE llamacpp:prompt_tokens_cached_total counter
llamacpp:prompt_tokens_cached_total 0
# HELP llamacpp:prompt_seconds_total Total time spent processing prompts
# TYPE llamacpp:prompt_seconds_total counter
llamacpp:prompt_seconds_total 0.000919
# HELP llamacpp:tokens_predicted_total Number of generation tokens processed
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total 120
# HELP llamacpp:tokens_predicted_seconds_total Total time spent generating tokens
# TYPE llamacpp:tokens_predicted_seconds_total counter
llamacpp:tokens_predicted_seconds_total 0.019187
# HELP llamacpp:n_decode_total Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding
# TYPE llamacpp:n_decode_total counter
llamacpp:n_decode_total 76
# HELP llamacpp:n_tokens_max Largest observed sequence length (prompt + generation)
# TYPE llamacpp:n_tokens_max counter
llamacpp:n_tokens_max 47
# HELP llamacpp:spec_decode_num_draft_tokens_total Speculative: Total draft tokens generated
# TYPE llamacpp:spec_decode_num_draft_tokens_total counter
llamacpp:spec_decode_num_draft_tokens_total 0
# HELP llamacpp:spec_decode_num_accepted_tokens_total Speculative: Total draft tokens accepted by the target model
# TYPE llamacpp:spec_decode_num_accepted_tokens_total counter
llamacpp:spec_decode_num_accepted_tokens_total 0
# HELP llamacpp:spec_decode_num_drafts_total Speculative: Total speculative decoding verification steps
# TYPE llamacpp:spec_decode_num_drafts_total counter
llamacpp:spec_decode_num_drafts_total 0
# HELP llamacpp:prompt_tokens_seconds Average prompt throughput in tokens/s
# TYPE llamacpp:prompt_tokens_seconds gauge
llamacpp:prompt_tokens_seconds 26115.3
# HELP llamacpp:predicted_tokens_seconds Average generation throughput in tokens/s
# TYPE llamacpp:predicted_tokens_seconds gauge
llamacpp:predicted_tokens_seconds 6097.88
# HELP llamacpp:requests_processing Number of requests processing
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing 3
# HELP llamacpp:requests_deferred Number of requests deferred
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred 1
# HELP llamacpp:n_busy_slots_per_decode Average number of busy slots per llama_decode() call
# TYPE llamacpp:n_busy_slots_per_decode gauge
llamacpp:n_busy_slots_per_decode 1.57895
";

    #[test]
    fn sglang_sums_counts_and_averages_ratios_over_ranks() {
        let e = parse(SGLANG);
        assert_eq!(e.bad_lines, 0);
        assert_eq!(recognise(&e), Some(Scheme::Sglang));
        let r = select(Scheme::Sglang, &e);
        assert_eq!(
            r.gauges,
            map(&[
                ("sglang:num_running_reqs", 23.0),
                ("sglang:num_queue_reqs", 7.0),
                ("sglang:token_usage", 0.5),
                // The NaN rank is left out, not averaged in as 0.
                ("sglang:cache_hit_rate", 0.5),
                ("sglang:spec_accept_length", 0.0),
                ("sglang:gen_throughput", 810.75),
            ])
        );
        assert_eq!(
            r.counters,
            map(&[
                ("sglang:prompt_tokens_total", 1_234_560.0),
                ("sglang:generation_tokens_total", 654_321.0),
            ])
        );
    }

    #[test]
    fn vllm_sums_engines_and_ignores_lookalike_names() {
        let e = parse(VLLM);
        assert_eq!(e.bad_lines, 0);
        assert_eq!(recognise(&e), Some(Scheme::Vllm));
        let r = select(Scheme::Vllm, &e);
        assert_eq!(
            r.gauges,
            map(&[
                ("vllm:num_requests_running", 11.0),
                ("vllm:num_requests_waiting", 2.0),
                ("vllm:kv_cache_usage_perc", 0.45),
            ])
        );
        assert_eq!(
            r.counters,
            map(&[
                ("vllm:prompt_tokens_total", 190_000.0),
                ("vllm:generation_tokens_total", 9_500.0),
                ("vllm:prefix_cache_queries_total", 100_000.0),
                ("vllm:prefix_cache_hits_total", 2_048.0),
                ("vllm:num_preemptions_total", 1.0),
            ])
        );
    }

    #[test]
    fn llamacpp_real_text() {
        let e = parse(LLAMACPP);
        assert_eq!(e.bad_lines, 0);
        assert_eq!(e.samples.len(), 15);
        assert_eq!(recognise(&e), Some(Scheme::Llamacpp));
        let r = select(Scheme::Llamacpp, &e);
        assert_eq!(
            r.gauges,
            map(&[
                ("llamacpp:requests_processing", 3.0),
                ("llamacpp:requests_deferred", 1.0),
                ("llamacpp:n_busy_slots_per_decode", 1.57895),
                ("llamacpp:prompt_tokens_seconds", 26115.3),
                ("llamacpp:predicted_tokens_seconds", 6097.88),
            ])
        );
        assert_eq!(
            r.counters,
            map(&[
                ("llamacpp:prompt_tokens_total", 24.0),
                ("llamacpp:tokens_predicted_total", 120.0),
                ("llamacpp:prompt_tokens_cached_total", 0.0),
                ("llamacpp:n_decode_total", 76.0),
                ("llamacpp:spec_decode_num_draft_tokens_total", 0.0),
                ("llamacpp:spec_decode_num_accepted_tokens_total", 0.0),
            ])
        );
    }

    #[test]
    fn older_vllm_cache_gauge_is_kept() {
        let e = parse(
            "vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.35\n\
             vllm:num_requests_running{model_name=\"m\"} 5.0\n",
        );
        let r = select(Scheme::Vllm, &e);
        assert_eq!(
            r.gauges,
            map(&[
                ("vllm:gpu_cache_usage_perc", 0.35),
                ("vllm:num_requests_running", 5.0)
            ])
        );
        assert!(r.counters.is_empty());
    }

    #[test]
    fn unknown_or_empty_text_has_no_scheme() {
        let process = "# HELP process_cpu_seconds_total Total user and system CPU time.\n\
                       # TYPE process_cpu_seconds_total counter\n\
                       process_cpu_seconds_total 12.5\n\
                       vllm:num_requests_running_total 4\n";
        assert_eq!(recognise(&parse(process)), None);
        assert_eq!(recognise(&parse("")), None);
        assert_eq!(recognise(&parse("<html>404</html>")), None);
    }

    #[test]
    fn the_scheme_with_most_names_wins() {
        let mixed = "vllm:num_requests_running 1\n\
                     sglang:num_running_reqs 1\n\
                     sglang:num_queue_reqs 0\n";
        assert_eq!(recognise(&parse(mixed)), Some(Scheme::Sglang));
    }

    #[test]
    fn queue_running_and_kv_gauges_are_among_the_kept_ones() {
        for s in KNOWN {
            assert!(s.knows(s.queue_gauge().unwrap()), "{}", s.as_str());
            assert!(s.knows(s.running_gauge().unwrap()), "{}", s.as_str());
            assert!(!s.kv_gauges().is_empty(), "{}", s.as_str());
            for g in s.kv_gauges() {
                let kept = s.gauges().iter().find(|(n, _)| n == g);
                assert_eq!(
                    kept.map(|k| k.1),
                    Some(Combine::Mean),
                    "{g}: a ratio is averaged"
                );
            }
        }
    }
}
