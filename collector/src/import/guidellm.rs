//! GuideLLM's `benchmarks.json` (`guidellm run --output kind=json`, report schema version 2 of
//! GuideLLM 0.8): one report holding a benchmark per strategy (a concurrency or a rate), each with
//! its distributions of request metrics over successful, errored and incomplete requests.
//!
//! Each benchmark becomes one run: `synchronous` at concurrency 1, `concurrent` at its streams,
//! `throughput` at its `max_concurrency`, and the open-loop `constant` and `poisson` strategies at
//! their rate. Statistics are the `successful` ones: mean, median, p90 and p99, as written.
//!
//! GuideLLM's names do not mean llmsweep's: its `inter_token_latency_ms` ((last token − first
//! token) / (output tokens − 1)) is llmsweep's TPOT formula, and its `time_per_output_token_ms`
//! ((last token − request start) / output tokens, TTFT included) has no counterpart and is not
//! imported.

use serde_json::{Map, Value};

use llmsweep_shared::bundle::{Api, Arrival, Imported, Quantiles};

use super::bench::{LenSource, OpenLoop, Run, whole};

/// The runs of a `benchmarks.json` report, in the report's order.
pub(crate) fn parse(text: &str) -> Result<Vec<Run>, String> {
    let v: Value = super::bench::json_value(text)
        .map_err(|e| format!("not valid JSON ({e}); expected GuideLLM's benchmarks.json"))?;
    let Some(report) = v.as_object() else {
        return Err("not a JSON object; expected GuideLLM's benchmarks.json".into());
    };
    let Some(benchmarks) = report.get("benchmarks").and_then(Value::as_array) else {
        return Err("no `benchmarks` list: not GuideLLM's benchmarks.json".into());
    };
    if benchmarks.is_empty() {
        return Err(
            "the report holds no benchmarks (GuideLLM stopped before finishing one)".into(),
        );
    }
    let at = |o: &Value, path: &[&str]| -> Option<Value> {
        path.iter()
            .try_fold(o, |v, k| v.get(k))
            .filter(|v| !v.is_null())
            .cloned()
    };
    let version =
        at(&v, &["metadata", "guidellm_version"]).and_then(|s| s.as_str().map(str::to_string));
    let backend = at(&v, &["config", "spec", "backend"]);
    let model = backend
        .as_ref()
        .and_then(|b| b.get("model"))
        .and_then(Value::as_str)
        .map(str::to_string);
    // GuideLLM's OpenAI backend sends chat completions unless told otherwise.
    let api = match backend.as_ref().map(|b| b.get("request_format")) {
        Some(Some(Value::String(f))) if f == "/v1/completions" => Api::Completions,
        Some(Some(Value::String(f))) if f == "/v1/chat/completions" => Api::Chat,
        Some(None | Some(Value::Null)) => Api::Chat,
        _ => Api::Unknown,
    };
    // Synthetic data with a fixed output length states what each request asked for.
    let asked_output = at(&v, &["config", "spec", "data"])
        .and_then(|d| d.as_array()?.first().cloned())
        .filter(|d| {
            d.get("kind").and_then(Value::as_str) == Some("synthetic_text")
                && d.get("output_tokens_stdev").is_none_or(Value::is_null)
        })
        .and_then(|d| d.get("output_tokens")?.as_u64());
    benchmarks
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let n = i + 1;
            let Some(b) = b.as_object() else {
                return Err(format!("benchmark {n} is not a JSON object"));
            };
            let mut r = run(n, b, asked_output)?;
            r.model = model.clone();
            r.api = api;
            r.tool_version = version.clone();
            Ok(r)
        })
        .collect()
}

/// One benchmark's strategy, counts and statistics.
fn run(n: usize, b: &Map<String, Value>, asked_output: Option<u64>) -> Result<Run, String> {
    let strategy_at = b.get("config").and_then(|c| c.get("strategy"));
    let strategy = strategy_at.and_then(Value::as_object).ok_or_else(|| {
        super::unusable(
            &format!("benchmark {n}"),
            "config.strategy",
            strategy_at,
            "an object",
        )
    })?;
    let kind = strategy.get("type_").and_then(Value::as_str).unwrap_or("");
    let su = |k: &str| strategy.get(k).and_then(Value::as_u64).filter(|&c| c > 0);
    let cap = su("max_concurrency").and_then(|c| u32::try_from(c).ok());
    let mut notes = Vec::new();
    let (concurrency, open) = match kind {
        "synchronous" => (1, None),
        "concurrent" => match su("streams").and_then(|c| u32::try_from(c).ok()) {
            Some(c) => (c, None),
            None => {
                return Err(format!(
                    "benchmark {n}: a concurrent strategy without `streams`"
                ));
            }
        },
        "throughput" => match cap {
            Some(c) => {
                notes.push(format!(
                    "benchmark {n}: GuideLLM's throughput strategy, all requests sent at once up \
                     to max_concurrency {c}: placed at concurrency {c}"
                ));
                (c, None)
            }
            None => {
                return Err(format!(
                    "benchmark {n}: a throughput strategy without max_concurrency has no \
                     concurrency to place it at"
                ));
            }
        },
        "constant" | "poisson" => {
            let rate = strategy
                .get("rate")
                .and_then(Value::as_f64)
                .filter(|r| r.is_finite() && *r > 0.0)
                .ok_or(format!(
                    "benchmark {n}: a {kind} strategy without a positive `rate`"
                ))?;
            let (arrival, burstiness) = if kind == "poisson" {
                (Arrival::Poisson, 1.0)
            } else {
                (Arrival::Constant, f64::INFINITY)
            };
            let open = OpenLoop {
                offered_rps: rate,
                arrival,
                burstiness,
                max_concurrency: cap,
                goodput_rps: None,
                peak_concurrency: None,
                mean_concurrency: None,
            };
            (cap.unwrap_or(0), Some(open))
        }
        other => {
            return Err(format!(
                "benchmark {n}: GuideLLM's `{other}` strategy is neither a fixed concurrency nor \
                 a fixed rate; import benchmarks of synchronous, concurrent, throughput, \
                 constant or poisson strategies"
            ));
        }
    };
    let metrics = b.get("metrics").and_then(Value::as_object).ok_or_else(|| {
        super::unusable(
            &format!("benchmark {n}"),
            "metrics",
            b.get("metrics"),
            "an object",
        )
    })?;
    let totals = metrics.get("request_totals");
    let count = |k: &str| totals.and_then(|t| t.get(k)).and_then(Value::as_u64);
    let Some(ok) = count("successful") else {
        return Err(format!(
            "{}: not GuideLLM's benchmarks.json of a known version",
            super::unusable(
                &format!("benchmark {n}"),
                "metrics.request_totals.successful",
                totals.and_then(|t| t.get("successful")),
                "a count"
            )
        ));
    };
    let errored = count("errored");
    if let Some(i) = count("incomplete").filter(|&i| i > 0) {
        notes.push(format!(
            "benchmark {n}: {i} request(s) GuideLLM counted incomplete (cancelled at the \
             benchmark's end) are neither ok nor failed here"
        ));
    }
    // The statistics of successful requests.
    let ok_stat = |metric: &str, path: &[&str]| -> Option<f64> {
        path.iter()
            .try_fold(metrics.get(metric)?.get("successful")?, |v, k| v.get(k))
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite())
    };
    // Milliseconds are divided by 1000, seconds by 1.
    let q = |metric: &str, per_s: f64| Quantiles {
        mean: ok_stat(metric, &["mean"]).map(|v| v / per_s),
        p50: ok_stat(metric, &["median"]).map(|v| v / per_s),
        p90: ok_stat(metric, &["percentiles", "p90"]).map(|v| v / per_s),
        p99: ok_stat(metric, &["percentiles", "p99"]).map(|v| v / per_s),
        unstated: None,
    };
    let input_tokens = ok_stat("prompt_token_count", &["total_sum"]).and_then(whole);
    let output_tokens = ok_stat("output_token_count", &["total_sum"]).and_then(whole);
    let mean_len = |metric: &str| LenSource::mean(ok_stat(metric, &["mean"]).filter(|_| ok > 0));
    let values = Imported {
        requests: errored.map(|e| e + ok),
        ok: Some(ok),
        failed: errored,
        input_tokens,
        output_tokens,
        wall_s: b
            .get("duration")
            .and_then(Value::as_f64)
            .filter(|d| d.is_finite() && *d > 0.0),
        output_tok_s: ok_stat("output_tokens_per_second", &["mean"]),
        per_request_tok_s: None,
        request_s: ok_stat("requests_per_second", &["mean"]),
        ttft_s: q("time_to_first_token_ms", 1000.0),
        tpot_s: q("inter_token_latency_ms", 1000.0),
        itl_s: Quantiles::default(),
        e2e_s: q("request_latency", 1.0),
    };
    Ok(Run {
        index: n,
        concurrency,
        input_len: mean_len("prompt_token_count"),
        output_len: asked_output.map_or_else(|| mean_len("output_token_count"), LenSource::Asked),
        values,
        model: None,
        api: Api::Unknown,
        engine: None,
        engine_version: None,
        tool_version: None,
        date: None,
        open,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(strategy: &str) -> String {
        format!(
            r#"{{"metadata": {{"guidellm_version": "0.8.1"}},
            "config": {{"spec": {{"backend": {{"kind": "openai_http", "model": "m"}}}}}},
            "benchmarks": [{{"config": {{"strategy": {strategy}}}, "duration": 2.0,
              "metrics": {{"request_totals": {{"successful": 3, "errored": 1, "incomplete": 2}},
                "time_to_first_token_ms": {{"successful": {{"mean": 12.0, "median": 10.0,
                  "percentiles": {{"p90": 20.0, "p99": 30.0}}}}}}}}}}]}}"#
        )
    }

    #[test]
    fn rate_strategies_are_open_loop_and_others_are_refused_by_name() {
        let runs = parse(&report(r#"{"type_": "poisson", "rate": 4.0}"#)).unwrap();
        let r = &runs[0];
        let open = r.open.unwrap();
        assert_eq!(
            (
                open.offered_rps,
                open.arrival,
                open.max_concurrency,
                r.concurrency
            ),
            (4.0, Arrival::Poisson, None, 0)
        );
        assert_eq!(r.api, Api::Chat);
        assert_eq!(
            (r.values.ok, r.values.failed, r.values.requests),
            (Some(3), Some(1), Some(4))
        );
        assert_eq!(
            r.values.ttft_s,
            Quantiles {
                mean: Some(0.012),
                p50: Some(0.01),
                p90: Some(0.02),
                p99: Some(0.03),
                unstated: None
            }
        );
        assert_eq!(
            r.notes,
            [
                "benchmark 1: 2 request(s) GuideLLM counted incomplete (cancelled at the benchmark's end) are neither ok nor failed here"
            ]
        );
        let c = parse(&report(
            r#"{"type_": "constant", "rate": 2.5, "max_concurrency": 8}"#,
        ))
        .unwrap();
        let open = c[0].open.unwrap();
        assert_eq!(
            (open.arrival, open.max_concurrency, c[0].concurrency),
            (Arrival::Constant, Some(8), 8)
        );
        assert_eq!(
            parse(&report(r#"{"type_": "synchronous"}"#)).unwrap()[0].concurrency,
            1
        );
        assert_eq!(
            parse(&report(r#"{"type_": "knee"}"#)).unwrap_err(),
            "benchmark 1: GuideLLM's `knee` strategy is neither a fixed concurrency nor a fixed rate; import benchmarks of synchronous, concurrent, throughput, constant or poisson strategies"
        );
        assert_eq!(
            parse(r#"{"metadata": {}, "benchmarks": []}"#).unwrap_err(),
            "the report holds no benchmarks (GuideLLM stopped before finishing one)"
        );
    }
}
