//! Which tool wrote a file, told from its content, so `--from` can be left out and a file given
//! under the wrong `--from` is named for what it is rather than read as something it is not.
//!
//! Only the first JSON value of a file is looked at: every format llmsweep reads holds one
//! kind of object throughout.

use serde_json::{Map, Value};

use llmsweep_shared::bundle::ImportFormat;

use super::bench::python_literals;
use super::table;

/// What a file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A format llmsweep imports.
    Format(ImportFormat),
    /// A benchmark summary with `duration` and `completed` that could be vLLM's or SGLang's:
    /// nothing in it tells which.
    VllmOrSglang,
    /// Another tool's result that llmsweep recognises but cannot import (yet).
    Peer(&'static str),
    /// JSON of no shape llmsweep knows.
    OtherJson,
    /// Starts like JSON but is not valid JSON; the parser's message.
    BadJson(String),
    /// Not JSON: a text table, if anything.
    Text,
}

impl Kind {
    /// `vllm bench serve's result`, for `this is …`.
    pub(crate) fn describe(&self) -> String {
        match self {
            Kind::Format(f) => describe(*f).to_string(),
            Kind::VllmOrSglang => {
                "a benchmark summary of vllm bench serve or sglang.bench_serving".to_string()
            }
            Kind::Peer(p) => (*p).to_string(),
            Kind::OtherJson => "JSON of no format llmsweep knows".to_string(),
            Kind::BadJson(e) => format!("not valid JSON ({e})"),
            Kind::Text => "a text file".to_string(),
        }
    }
}

/// `a result of vllm bench serve`, for `not …`.
pub(crate) fn describe(format: ImportFormat) -> &'static str {
    match format {
        ImportFormat::Table => "a text table",
        ImportFormat::Vllm => "a result of vllm bench serve",
        ImportFormat::Sglang => "a result of sglang.bench_serving",
        ImportFormat::Guidellm => "GuideLLM's benchmarks.json",
        ImportFormat::Aiperf => "AIPerf's profile_export_aiperf.json",
        ImportFormat::GenaiBench => "a result of genai-bench",
        ImportFormat::InferencePerf => "a lifecycle report of inference-perf",
        ImportFormat::Unknown => "a format this llmsweep does not know",
    }
}

/// What `text` is, from its content.
pub(crate) fn detect(text: &str) -> Kind {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if !body.starts_with(['{', '[']) {
        return match table::parse(body) {
            Ok(_) => Kind::Format(ImportFormat::Table),
            Err(_) => Kind::Text,
        };
    }
    let (clean, _) = python_literals(body);
    let mut stream = serde_json::Deserializer::from_str(&clean).into_iter::<Value>();
    match stream.next() {
        Some(Ok(Value::Object(o))) => of_object(&o),
        Some(Ok(_)) => Kind::OtherJson,
        Some(Err(e)) => Kind::BadJson(e.to_string()),
        None => Kind::Text,
    }
}

/// Whether no value of `o` looks like a metric object of AIPerf's (`{"unit": …}`).
fn metric_free(o: &Map<String, Value>) -> bool {
    o.values()
        .all(|v| v.as_object().is_none_or(|m| !m.contains_key("unit")))
}

fn of_object(o: &Map<String, Value>) -> Kind {
    let has = |k: &str| o.get(k).is_some_and(|v| !v.is_null());
    let any_key = |suffix: &str| o.keys().any(|k| k.ends_with(suffix));
    let metric = |k: &str| {
        o.get(k)
            .and_then(Value::as_object)
            .is_some_and(|m| m.contains_key("unit"))
    };
    if o.get("benchmarks").is_some_and(Value::is_array)
        && (has("metadata") || has("config") || has("args"))
    {
        return Kind::Format(ImportFormat::Guidellm);
    }
    if has("aiperf_version") || (metric("request_throughput") && metric("time_to_first_token")) {
        return Kind::Format(ImportFormat::Aiperf);
    }
    if has("aggregated_metrics") || (has("benchmark_version") && has("traffic_scenario")) {
        return Kind::Format(ImportFormat::GenaiBench);
    }
    // inference-perf's lifecycle report: what succeeded and what failed, each with its own
    // latency and throughput summaries.
    if has("successes") && has("failures") && (has("load_summary") || metric_free(o)) {
        // Its Prometheus report has the same keys, and no latency of the requests.
        let lifecycle = o
            .get("successes")
            .and_then(|s| s.get("latency"))
            .is_some_and(Value::is_object);
        return if lifecycle {
            Kind::Format(ImportFormat::InferencePerf)
        } else {
            Kind::Peer("a Prometheus report of inference-perf")
        };
    }
    if has("duration") && has("completed") {
        // Each names its e2e latency its own way; then what only one of them writes.
        if any_key("_e2el_ms") {
            return Kind::Format(ImportFormat::Vllm);
        }
        if any_key("_e2e_latency_ms") {
            return Kind::Format(ImportFormat::Sglang);
        }
        let backend = o.get("backend").and_then(Value::as_str).unwrap_or("");
        if backend.starts_with("sglang")
            || has("server_info")
            || has("total_output_tokens_retokenized")
        {
            return Kind::Format(ImportFormat::Sglang);
        }
        if has("endpoint_type") || has("model_id") || has("tokenizer_id") || has("vllm_version") {
            return Kind::Format(ImportFormat::Vllm);
        }
        return Kind::VllmOrSglang;
    }
    Kind::OtherJson
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/import/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn each_fixture_is_told_from_its_content() {
        for (name, want) in [
            ("vllm-c1.json", ImportFormat::Vllm),
            ("vllm-c2.json", ImportFormat::Vllm),
            ("sglang-runs.jsonl", ImportFormat::Sglang),
            ("sglang-rates.jsonl", ImportFormat::Sglang),
            ("kpro6-throughput.txt", ImportFormat::Table),
            ("kpro6-context.txt", ImportFormat::Table),
            ("design-kpro6.txt", ImportFormat::Table),
            ("guidellm-0.8.1/benchmarks.json", ImportFormat::Guidellm),
            ("aiperf-0.13.0/c1.json", ImportFormat::Aiperf),
            ("aiperf-0.13.0/c2.json", ImportFormat::Aiperf),
            ("aiperf-0.13.0/r8.json", ImportFormat::Aiperf),
            (
                "genai-bench-0.0.5/s/D32_8_text-to-text_num_concurrency_2_time_1s.json",
                ImportFormat::GenaiBench,
            ),
            (
                "genai-bench-0.0.5/ms/experiment_metadata.json",
                ImportFormat::GenaiBench,
            ),
            (
                "inference-perf-0.7.0/completion-constant/stage_0_lifecycle_metrics.json",
                ImportFormat::InferencePerf,
            ),
            (
                "inference-perf-0.7.0/completion-concurrent/summary_lifecycle_metrics.json",
                ImportFormat::InferencePerf,
            ),
        ] {
            assert_eq!(detect(&fixture(name)), Kind::Format(want), "{name}");
        }
    }

    #[test]
    fn peers_and_the_undecidable_are_named() {
        assert_eq!(
            detect(
                r#"{"request_throughput": {"unit": "requests/sec", "avg": 2.0},
                "time_to_first_token": {"unit": "ms", "avg": 10.0}}"#
            ),
            Kind::Format(ImportFormat::Aiperf)
        );
        assert_eq!(
            detect(r#"{"aggregated_metrics": {}, "individual_request_metrics": []}"#),
            Kind::Format(ImportFormat::GenaiBench)
        );
        assert_eq!(
            detect(
                r#"{"benchmark_time_seconds": 0.0, "load_summary": {}, "successes": {"rate": 1.0}, "failures": {}}"#
            ),
            Kind::Peer("a Prometheus report of inference-perf")
        );
        // Python's literals, as both benchmarks write them, do not hide what the file is.
        assert_eq!(
            detect(r#"{"duration": 1.0, "completed": 1, "request_rate": Infinity}"#),
            Kind::VllmOrSglang
        );
        assert_eq!(detect(r#"{"a": 1}"#), Kind::OtherJson);
        assert_eq!(detect("[1, 2]"), Kind::OtherJson);
        assert!(matches!(detect(r#"{"a": "#), Kind::BadJson(_)));
        assert_eq!(detect("hello\n"), Kind::Text);
    }
}
