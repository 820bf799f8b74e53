//! genai-bench's results (`genai-bench benchmark`, version 0.0.5): one JSON file per run, named
//! `{scenario}_{task}_num_concurrency_{N}_time_{T}s.json`, holding `aggregated_metrics` (the
//! run's settings and its statistics, `stats.<metric>.{mean, p50, p90, p99, …}`),
//! `individual_request_metrics` and `_time_unit` (`s` or `ms`, genai-bench's
//! `--metrics-time-unit`, which applies to `ttft`, `tpot`, `e2e_latency` and
//! `output_latency` only). Beside them the experiment's `experiment_metadata.json` says the
//! model, the engine and genai-bench's version.
//!
//! Each run becomes one point at its `num_concurrency`. genai-bench's definitions
//! (`genai_bench/metrics/request_metrics_collector.py`): TTFT to the first chunk with content,
//! TPOT `(e2e − ttft) / (output tokens − 1)` (llmsweep's formula), and its
//! `mean_output_throughput_tokens_per_s` is the run's output tokens over its `run_duration`
//! (`aggregated_metrics_collector.py`), which includes the once-a-second polling that ends a
//! run. It has no inter-token latency of its own.

use serde_json::{Map, Value};

use llmsweep_shared::bundle::{Api, Imported, Quantiles};

use super::bench::{LenSource, Run, finite_at, whole};

/// What a file that is not genai-bench's is told.
const EXPECTED: &str = "expected a genai-bench run result \
    (`<scenario>_<task>_num_concurrency_<N>_time_<T>s.json`) or its experiment_metadata.json";

/// What genai-bench's `experiment_metadata.json` says of the experiment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Experiment {
    pub model: Option<String>,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub tool_version: Option<String>,
}

/// Whether `o` is an experiment's metadata rather than a run.
fn is_metadata(o: &Map<String, Value>) -> bool {
    o.contains_key("benchmark_version") && o.contains_key("traffic_scenario")
}

/// The experiment metadata in `text`, when it is that file. Only plain facts are kept: its
/// `cmd` (the command line, with the API key given on it) is never read.
pub(crate) fn experiment(text: &str) -> Option<Experiment> {
    let v: Value = super::bench::json_value(text).ok()?;
    let o = v.as_object().filter(|o| is_metadata(o))?;
    let s = |k: &str| {
        o.get(k)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "None")
            .map(str::to_string)
    };
    Some(Experiment {
        model: s("api_model_name").or_else(|| s("model")),
        engine: s("server_engine"),
        engine_version: s("server_version"),
        tool_version: s("benchmark_version"),
    })
}

/// The run of one genai-bench result file (none for its experiment metadata).
pub(crate) fn parse(text: &str) -> Result<Vec<Run>, String> {
    let v: Value =
        super::bench::json_value(text).map_err(|e| format!("not valid JSON ({e}); {EXPECTED}"))?;
    let Some(o) = v.as_object() else {
        return Err(format!("not a JSON object; {EXPECTED}"));
    };
    if is_metadata(o) {
        return Ok(Vec::new());
    }
    let Some(a) = o.get("aggregated_metrics").and_then(Value::as_object) else {
        return Err(format!("no `aggregated_metrics`; {EXPECTED}"));
    };
    let per = match o.get("_time_unit").and_then(Value::as_str) {
        Some("s") | None => 1.0,
        Some("ms") => 1e3,
        Some(other) => {
            return Err(format!(
                "`_time_unit` is {other:?}: genai-bench writes \"s\" or \"ms\""
            ));
        }
    };
    let mut notes = Vec::new();
    if o.get("_time_unit").is_none() {
        notes.push("run 1: no `_time_unit`: times read as seconds, genai-bench's default".into());
    }
    let concurrency = match a.get("iteration_type").and_then(Value::as_str) {
        Some("num_concurrency") | None => a
            .get("num_concurrency")
            .and_then(Value::as_u64)
            .filter(|&c| c > 0)
            .and_then(|c| u32::try_from(c).ok())
            .ok_or("no positive `aggregated_metrics.num_concurrency`: the run's concurrency is not said")?,
        Some(other) => {
            return Err(format!(
                "a run iterated by `{other}` (genai-bench's embedding and rerank batches) is no \
                 concurrency level; import runs of --num-concurrency"
            ));
        }
    };
    let count = |k: &str| -> Result<Option<u64>, String> {
        match a.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or(format!("`aggregated_metrics.{k}` is {v}, not a count")),
        }
    };
    let number = |k: &str| finite_at(a.get(k), &format!("aggregated_metrics.{k}"));
    let ok = count("num_completed_requests")?;
    let failed = count("num_error_requests")?;
    let stats = a.get("stats").and_then(Value::as_object);
    let stat = |metric: &str, which: &str, scale: f64| -> Result<Option<f64>, String> {
        let field = stats.and_then(|s| s.get(metric)).and_then(|m| m.get(which));
        Ok(finite_at(field, &format!("stats.{metric}.{which}"))?.map(|x| x / scale))
    };
    let quantiles = |metric: &str| -> Result<Quantiles, String> {
        Ok(Quantiles {
            mean: stat(metric, "mean", per)?,
            p50: stat(metric, "p50", per)?,
            p90: stat(metric, "p90", per)?,
            p99: stat(metric, "p99", per)?,
            unstated: None,
        })
    };
    let (input_len, output_len) = scenario_lengths(a.get("scenario").and_then(Value::as_str));
    let mean_len = |metric: &str| -> Result<LenSource, String> {
        Ok(LenSource::mean(stat(metric, "mean", 1.0)?))
    };
    let input_len = match input_len {
        Some(n) => LenSource::Asked(n),
        None => mean_len("num_input_tokens")?,
    };
    let output_len = match output_len {
        Some(n) => LenSource::Asked(n),
        None => mean_len("num_output_tokens")?,
    };
    // The scenario's lengths are what genai-bench asked its tokenizer for; the server may
    // count otherwise (genai-bench joins its sample lines without a space).
    for (what, asked, metric) in [
        ("input", input_len, "num_input_tokens"),
        ("output", output_len, "num_output_tokens"),
    ] {
        if let (LenSource::Asked(n), Some(mean)) = (asked, stat(metric, "mean", 1.0)?)
            && (mean - n as f64).abs() > 0.05 * n as f64
        {
            notes.push(format!(
                "run 1: asked {n} {what} tokens a request; the server counted {} on average",
                llmsweep_shared::charts::axis::fixed(mean, 1)
            ));
        }
    }
    if let (Some(e), Some(r)) = (
        a.get("error_codes_frequency").and_then(Value::as_object),
        failed,
    ) && r > 0
        && !e.is_empty()
    {
        let codes: Vec<String> = e
            .iter()
            .map(|(code, n)| format!("{} × {n}", llmsweep_shared::text::inert(code)))
            .collect();
        notes.push(format!(
            "run 1: failed requests by status: {}",
            codes.join(", ")
        ));
    }
    let values = Imported {
        requests: count("num_requests")?.or(ok.zip(failed).map(|(o, f)| o + f)),
        ok,
        failed,
        input_tokens: stat("num_input_tokens", "sum", 1.0)?.and_then(whole),
        output_tokens: stat("num_output_tokens", "sum", 1.0)?.and_then(whole),
        wall_s: number("run_duration")?.filter(|d| *d > 0.0),
        output_tok_s: number("mean_output_throughput_tokens_per_s")?,
        per_request_tok_s: None,
        request_s: number("requests_per_second")?,
        ttft_s: quantiles("ttft")?,
        tpot_s: quantiles("tpot")?,
        itl_s: Quantiles::default(),
        e2e_s: quantiles("e2e_latency")?,
    };
    Ok(vec![Run {
        index: 1,
        concurrency,
        input_len,
        output_len,
        values,
        model: None,
        api: Api::Unknown,
        engine: None,
        engine_version: None,
        tool_version: None,
        date: None,
        open: None,
        notes,
    }])
}

/// The input and output tokens every request asked for, from a deterministic traffic
/// scenario `D(input,output)`; `None` for the others (`N(…)`, `U(…)`, datasets), whose
/// lengths vary by request.
fn scenario_lengths(scenario: Option<&str>) -> (Option<u64>, Option<u64>) {
    let Some(inner) = scenario
        .map(str::trim)
        .and_then(|s| s.strip_prefix("D("))
        .and_then(|s| s.strip_suffix(')'))
    else {
        return (None, None);
    };
    let mut parts = inner.split(',').map(|p| p.trim().parse::<u64>().ok());
    match (parts.next().flatten(), parts.next().flatten(), parts.next()) {
        (Some(i), Some(o), None) if i > 0 && o > 0 => (Some(i), Some(o)),
        _ => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/import/genai-bench-0.0.5/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The numbers of genai-bench's own summary of the run at concurrency 1, in seconds.
    #[test]
    fn a_run_is_its_own_summary_in_seconds() {
        let runs = parse(&fixture(
            "s/D32_8_text-to-text_num_concurrency_1_time_1s.json",
        ))
        .unwrap();
        let r = &runs[0];
        assert_eq!(r.concurrency, 1);
        assert_eq!(
            (r.input_len, r.output_len),
            (LenSource::Asked(32), LenSource::Asked(8))
        );
        let v = &r.values;
        assert_eq!((v.requests, v.ok, v.failed), (Some(28), Some(28), Some(0)));
        assert_eq!((v.input_tokens, v.output_tokens), (Some(826), Some(224)));
        assert_eq!(v.output_tok_s, Some(205.25820988869546));
        assert_eq!(v.request_s, Some(25.657276236086933));
        assert_eq!(v.wall_s, Some(1.0913083580016973));
        assert_eq!(v.ttft_s.mean, Some(0.006997520142509269));
        assert_eq!(v.ttft_s.p50, Some(0.006667920999461785));
        assert_eq!(v.ttft_s.p99, Some(0.013073214018659202));
        assert_eq!(v.tpot_s.p50, Some(0.004005098714385116));
        assert_eq!(v.e2e_s.p50, Some(0.034549716001492925));
        assert_eq!(v.itl_s, Quantiles::default());
        // genai-bench asked its tokenizer for 32 and joined its sample lines without a space.
        assert_eq!(
            r.notes,
            ["run 1: asked 32 input tokens a request; the server counted 29.5 on average"]
        );
    }

    /// With `--metrics-time-unit ms` the latencies are read back to seconds; throughputs and
    /// counts are never in milliseconds.
    #[test]
    fn milliseconds_are_read_as_seconds() {
        let text = fixture("ms/D32_8_text-to-text_num_concurrency_1_time_1s.json");
        let v: Value = serde_json::from_str(&text).unwrap();
        let raw = v["aggregated_metrics"]["stats"]["ttft"]["mean"]
            .as_f64()
            .unwrap();
        let r = &parse(&text).unwrap()[0];
        assert_eq!(r.values.ttft_s.mean, Some(raw / 1e3));
        assert!(r.values.ttft_s.mean.unwrap() < 0.1, "seconds, not ms");
        assert_eq!(
            r.values.output_tok_s,
            v["aggregated_metrics"]["mean_output_throughput_tokens_per_s"].as_f64()
        );
    }

    #[test]
    fn the_experiment_metadata_gives_facts_and_no_run() {
        let text = fixture("s/experiment_metadata.json");
        assert_eq!(parse(&text).unwrap(), Vec::new());
        assert_eq!(
            experiment(&text),
            Some(Experiment {
                model: Some("sim-fast".into()),
                engine: Some("vLLM".into()),
                engine_version: None,
                tool_version: Some("0.0.5".into()),
            })
        );
    }

    #[test]
    fn what_cannot_be_read_is_said() {
        assert_eq!(
            parse(r#"{"aggregated_metrics": {"iteration_type": "batch_size", "batch_size": 4}}"#)
                .unwrap_err(),
            "a run iterated by `batch_size` (genai-bench's embedding and rerank batches) is no concurrency level; import runs of --num-concurrency"
        );
        assert_eq!(
            parse(r#"{"aggregated_metrics": {}, "_time_unit": "h"}"#).unwrap_err(),
            r#"`_time_unit` is "h": genai-bench writes "s" or "ms""#
        );
        assert_eq!(
            parse(
                r#"{"aggregated_metrics": {"num_concurrency": 2, "num_completed_requests": -1}}"#
            )
            .unwrap_err(),
            "`aggregated_metrics.num_completed_requests` is -1, not a count"
        );
        assert!(
            parse(r#"{"a": 1}"#)
                .unwrap_err()
                .starts_with("no `aggregated_metrics`")
        );
        assert_eq!(scenario_lengths(Some("N(480,240)/(300,150)")), (None, None));
        assert_eq!(
            scenario_lengths(Some("D(100,1000)")),
            (Some(100), Some(1000))
        );
    }
}
