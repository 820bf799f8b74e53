//! inference-perf's lifecycle reports (kubernetes-sigs/inference-perf, read at 0.7.0): one
//! `stage_N_lifecycle_metrics.json` per load stage, each a level, and a
//! `summary_lifecycle_metrics.json` over every stage and the pauses between them (not a level,
//! so it is passed over with a note). A report holds `load_summary`, `successes` and `failures`
//! (`inference_perf/reportgen/base.py`, `ResponsesSummary`); every latency is in seconds.
//!
//! A stage is closed loop when `load_summary.concurrency` says its concurrency (inference-perf
//! then schedules all its requests at once and the concurrency gates them, so its
//! `requested_rate` is its request count, not a rate); otherwise it offered
//! `load_summary.requested_rate` requests per second. The reports name neither the tool's
//! version nor the model nor how arrivals were drawn: those come from the `config.yaml`
//! inference-perf writes beside them ([`Config`]), when it is there.
//!
//! Definitions (`base.py`): TTFT to the first chunk with content text; TPOT
//! `(last token − first token) / (output tokens − 1)` per request (llmsweep's formula); ITL
//! over every gap between tokens of every request, pooled; e2e from just before the request to
//! the end of its stream; throughput over `benchmark_time_seconds`, the stage's first request
//! start to its last end. Percentiles are numpy's linear ones, `median` for the 50th.

use serde_json::{Map, Value};

use llmsweep_shared::bundle::{Api, Arrival, Imported, Quantiles};

use super::bench::{LenSource, OpenLoop, Run, finite_at, whole};

/// What a file that is not inference-perf's is told.
const EXPECTED: &str = "expected inference-perf's stage_N_lifecycle_metrics.json";

/// What inference-perf's `config.yaml` says of a run: its only record of the model, the API,
/// the load and the lengths asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Config {
    pub model: Option<String>,
    /// `server.type`: vllm, sglang, tgi or mock.
    pub engine: Option<String>,
    pub api: Option<Api>,
    /// `load.type`: constant, poisson or concurrent.
    pub load: Option<String>,
    pub input_len: Option<u64>,
    pub output_len: Option<u64>,
}

/// Most bytes of a `config.yaml` read: inference-perf writes a few kilobytes.
pub(crate) const CONFIG_MAX_BYTES: usize = 1 << 20;

/// Reads the few plain `key: value` lines a `config.yaml` needs (two-space indents, as
/// inference-perf's `yaml.dump` writes them); anything else in it is passed over.
pub(crate) fn config(yaml: &str) -> Config {
    let mut path: Vec<String> = Vec::new();
    let mut values = std::collections::BTreeMap::new();
    for line in yaml.lines().take(20_000) {
        let body = line.trim_start();
        if body.is_empty() || body.starts_with('#') || body.starts_with('-') {
            continue;
        }
        let depth = (line.len() - body.len()) / 2;
        let Some((key, value)) = body.split_once(':') else {
            continue;
        };
        path.truncate(depth);
        let value = value.trim();
        if value.is_empty() {
            path.push(key.trim().to_string());
        } else if depth <= 3 {
            let mut full = path.clone();
            full.push(key.trim().to_string());
            values.insert(full.join("."), value.trim_matches(['"', '\'']).to_string());
        }
    }
    let get = |k: &str| {
        values
            .get(k)
            .filter(|v| !v.is_empty() && *v != "null")
            .cloned()
    };
    // A length every request asked, when the distribution is fixed.
    let fixed = |side: &str| {
        let kind = get(&format!("data.{side}_distribution.type"));
        let (min, max) = (
            get(&format!("data.{side}_distribution.min")),
            get(&format!("data.{side}_distribution.max")),
        );
        (kind.as_deref() == Some("fixed") || (min.is_some() && min == max))
            .then_some(min)
            .flatten()
            .and_then(|m| m.parse::<u64>().ok())
            .filter(|&n| n > 0)
    };
    Config {
        model: get("server.model_name"),
        engine: get("server.type"),
        api: get("api.type").map(|t| match t.as_str() {
            "chat" => Api::Chat,
            "completion" => Api::Completions,
            _ => Api::Unknown,
        }),
        load: get("load.type"),
        input_len: fixed("input"),
        output_len: fixed("output"),
    }
}

/// Whether `o` is inference-perf's summary over every stage rather than one stage: its
/// `load_summary` has neither a rate nor a concurrency.
fn is_summary(o: &Map<String, Value>) -> bool {
    o.get("load_summary")
        .and_then(Value::as_object)
        .is_some_and(|l| !l.contains_key("requested_rate") && !l.contains_key("concurrency"))
}

/// The stage of one report file (none for the summary over every stage), read with what
/// `config` says of the run.
pub(crate) fn parse(text: &str, config: Option<&Config>) -> Result<Vec<Run>, String> {
    let v: Value =
        super::bench::json_value(text).map_err(|e| format!("not valid JSON ({e}); {EXPECTED}"))?;
    let Some(o) = v.as_object() else {
        return Err(format!("not a JSON object; {EXPECTED}"));
    };
    if is_summary(o) {
        return Ok(Vec::new());
    }
    let load = o
        .get("load_summary")
        .and_then(Value::as_object)
        .ok_or_else(|| format!("no `load_summary`; {EXPECTED}"))?;
    let successes = o
        .get("successes")
        .and_then(Value::as_object)
        .ok_or_else(|| format!("no `successes`; {EXPECTED}"))?;
    let count = |section: &Map<String, Value>, what: &str| -> Result<Option<u64>, String> {
        match section.get("count") {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or(format!("`{what}.count` is {v}, not a count")),
        }
    };
    let ok = count(successes, "successes")?;
    let failed = match o.get("failures").and_then(Value::as_object) {
        Some(f) => count(f, "failures")?,
        None => None,
    };
    let requests = count(load, "load_summary")?;
    let mut notes = Vec::new();
    let concurrency = match load.get("concurrency") {
        None | Some(Value::Null) => None,
        Some(c) => Some(
            c.as_u64()
                .filter(|&c| c > 0)
                .and_then(|c| u32::try_from(c).ok())
                .ok_or(format!(
                    "`load_summary.concurrency` is {c}, not a concurrency"
                ))?,
        ),
    };
    let open = match concurrency {
        Some(_) => None,
        None => {
            let rate = finite_at(load.get("requested_rate"), "load_summary.requested_rate")?
                .filter(|r| *r > 0.0)
                .ok_or("no positive `load_summary.requested_rate` or `concurrency`: the stage's load is not said")?;
            let (arrival, burstiness) = match config.and_then(|c| c.load.as_deref()) {
                Some("constant") => (Arrival::Constant, f64::INFINITY),
                Some("poisson") => (Arrival::Poisson, 1.0),
                _ => {
                    notes.push(
                        "run 1: how arrivals were drawn is not said (inference-perf's config.yaml, \
                         beside the report, has it as load.type)"
                            .to_string(),
                    );
                    (Arrival::Unknown, 1.0)
                }
            };
            Some(OpenLoop {
                offered_rps: rate,
                arrival,
                burstiness,
                max_concurrency: None,
                goodput_rps: None,
                peak_concurrency: None,
                mean_concurrency: None,
            })
        }
    };
    let latency = successes.get("latency").and_then(Value::as_object);
    let stat = |metric: &str, which: &[&str]| -> Result<Option<f64>, String> {
        let m = latency.and_then(|l| l.get(metric));
        for w in which {
            if let Some(field) = m.and_then(|m| m.get(*w)) {
                return finite_at(Some(field), &format!("successes.latency.{metric}.{w}"));
            }
        }
        Ok(None)
    };
    let quantiles = |metric: &str| -> Result<Quantiles, String> {
        Ok(Quantiles {
            mean: stat(metric, &["mean"])?,
            p50: stat(metric, &["median", "p50"])?,
            p90: stat(metric, &["p90"])?,
            p99: stat(metric, &["p99"])?,
            unstated: None,
        })
    };
    let throughput = successes.get("throughput").and_then(Value::as_object);
    let rate = |k: &str| {
        finite_at(
            throughput.and_then(|t| t.get(k)),
            &format!("successes.throughput.{k}"),
        )
    };
    let tokens = |k: &str, old: &str, what: &str| -> Result<(Option<f64>, Option<f64>), String> {
        let section = successes.get(k).or_else(|| successes.get(old));
        let name = if successes.contains_key(k) { k } else { old };
        Ok((
            finite_at(
                section.and_then(|s| s.get("total")),
                &format!("successes.{name}.total"),
            )?,
            finite_at(
                section.and_then(|s| s.get("mean")),
                &format!("successes.{name}.{what}"),
            )?,
        ))
    };
    let (input_total, input_mean) = tokens("prompt_tokens", "prompt_len", "mean")?;
    let (output_total, output_mean) = tokens("output_tokens", "output_len", "mean")?;
    // The lengths the config says every request asked, else the means the server counted.
    let input_len = config
        .and_then(|c| c.input_len)
        .map_or_else(|| LenSource::mean(input_mean), LenSource::Asked);
    let output_len = config
        .and_then(|c| c.output_len)
        .map_or_else(|| LenSource::mean(output_mean), LenSource::Asked);
    if let Some(labels) = o
        .get("failures")
        .and_then(|f| f.get("by_label"))
        .and_then(Value::as_object)
        .filter(|l| !l.is_empty())
    {
        let causes: Vec<String> = labels
            .iter()
            .take(20)
            .map(|(label, v)| {
                let n = v.get("count").and_then(Value::as_u64).unwrap_or(0);
                format!("{} × {n}", llmsweep_shared::text::inert(label))
            })
            .collect();
        notes.push(format!(
            "run 1: failed requests by cause: {}",
            causes.join(", ")
        ));
    }
    let values = Imported {
        requests: requests.or(ok.zip(failed).map(|(o, f)| o + f)),
        ok,
        failed,
        input_tokens: input_total.and_then(whole),
        output_tokens: output_total.and_then(whole),
        wall_s: finite_at(o.get("benchmark_time_seconds"), "benchmark_time_seconds")?
            .filter(|d| *d > 0.0),
        output_tok_s: rate("output_tokens_per_sec")?,
        per_request_tok_s: None,
        request_s: rate("requests_per_sec")?,
        ttft_s: quantiles("time_to_first_token")?,
        tpot_s: quantiles("time_per_output_token")?,
        itl_s: quantiles("inter_token_latency")?,
        e2e_s: quantiles("request_latency")?,
    };
    Ok(vec![Run {
        index: 1,
        concurrency: concurrency.unwrap_or(0),
        input_len,
        output_len,
        values,
        model: config.and_then(|c| c.model.clone()),
        api: config.and_then(|c| c.api).unwrap_or(Api::Unknown),
        engine: config
            .and_then(|c| c.engine.clone())
            .filter(|e| e != "mock"),
        engine_version: None,
        tool_version: None,
        date: None,
        open,
        notes,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/import/inference-perf-0.7.0/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Each number equals the report's own (the golden values of the fixture's README), read
    /// from the file inference-perf 0.7.0 wrote against serve-sim.
    #[test]
    fn an_open_loop_stage_reads_as_inference_perf_wrote_it() {
        let cfg = config(&fixture("completion-constant/config.yaml"));
        assert_eq!(cfg.load.as_deref(), Some("constant"));
        assert_eq!((cfg.input_len, cfg.output_len), (Some(100), Some(50)));
        assert_eq!(cfg.api, Some(Api::Completions));
        let runs = parse(
            &fixture("completion-constant/stage_0_lifecycle_metrics.json"),
            Some(&cfg),
        )
        .unwrap();
        let r = &runs[0];
        let open = r.open.expect("open loop");
        assert_eq!((open.offered_rps, open.arrival), (2.0, Arrival::Constant));
        let v = &r.values;
        assert_eq!((v.requests, v.ok, v.failed), (Some(20), Some(20), Some(0)));
        assert_eq!(v.ttft_s.mean, Some(0.008346763049985384));
        assert_eq!(v.ttft_s.p50, Some(0.007515222500046548));
        assert_eq!(v.ttft_s.p90, Some(0.010879139599887826));
        assert_eq!(v.ttft_s.p99, Some(0.0175783760901595));
        assert_eq!(v.tpot_s.mean, Some(0.004068392798979877));
        assert_eq!(v.itl_s.p50, Some(0.004099953000036294));
        assert_eq!(v.e2e_s.p50, Some(0.2048273490000838));
        assert_eq!(v.output_tok_s, Some(101.48975269394926));
        assert_eq!(v.request_s, Some(2.029795053878985));
        assert_eq!(v.wall_s, Some(9.853211515999874));
        assert_eq!((v.input_tokens, v.output_tokens), (Some(2000), Some(1000)));
        assert_eq!(
            (r.input_len, r.output_len),
            (LenSource::Asked(100), LenSource::Asked(50))
        );
    }

    /// A concurrent stage is a closed-loop level at its concurrency; its `requested_rate` (the
    /// request count) is not taken for a rate. The summary over every stage is no level.
    #[test]
    fn a_concurrent_stage_is_a_level_and_the_summary_is_none() {
        let cfg = config(&fixture("completion-concurrent/config.yaml"));
        let runs = parse(
            &fixture("completion-concurrent/stage_1_lifecycle_metrics.json"),
            Some(&cfg),
        )
        .unwrap();
        assert_eq!(runs[0].concurrency, 4);
        assert!(runs[0].open.is_none());
        assert_eq!(runs[0].values.output_tok_s, Some(633.5654178757678));
        assert_eq!(runs[0].values.ttft_s.p99, Some(0.01091519760002484));
        let summary = parse(
            &fixture("completion-concurrent/summary_lifecycle_metrics.json"),
            Some(&cfg),
        )
        .unwrap();
        assert!(summary.is_empty());
    }

    /// Failures are counted with their causes; without its config a stage still reads, its
    /// lengths the means the server counted and its arrivals said to be unknown.
    #[test]
    fn failures_are_counted_and_a_missing_config_is_said() {
        let runs = parse(
            &fixture("completion-failures/stage_0_lifecycle_metrics.json"),
            None,
        )
        .unwrap();
        let r = &runs[0];
        assert_eq!((r.values.ok, r.values.failed), (Some(15), Some(5)));
        assert_eq!(r.open.map(|o| o.arrival), Some(Arrival::Unknown));
        assert_eq!(r.input_len, LenSource::Mean(100));
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("500 - Internal Server Error × 5")),
            "{:?}",
            r.notes
        );
    }

    #[test]
    fn a_damaged_report_says_what_it_lacks() {
        for (text, says) in [
            ("{", "not valid JSON"),
            ("[1]", "not a JSON object"),
            (r#"{"successes": {}}"#, "no `load_summary`"),
            (
                r#"{"load_summary": {"count": 1, "requested_rate": -1}, "successes": {"count": 1}}"#,
                "no positive `load_summary.requested_rate`",
            ),
            (
                r#"{"load_summary": {"count": 1, "concurrency": 0}, "successes": {"count": 1}}"#,
                "not a concurrency",
            ),
            (
                r#"{"load_summary": {"count": "x", "requested_rate": 1}, "successes": {"count": 1}}"#,
                "not a count",
            ),
        ] {
            let e = parse(text, None).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn a_config_is_read_line_by_line_and_tolerates_anything_else() {
        let c = config(
            "server:\n  type: sglang\n  model_name: Qwen/Qwen3-8B\napi:\n  type: chat\n\
             load:\n  type: poisson\n  stages:\n  - rate: 1\ndata:\n  input_distribution:\n    \
             min: 10\n    max: 20\n",
        );
        assert_eq!(c.model.as_deref(), Some("Qwen/Qwen3-8B"));
        assert_eq!(c.engine.as_deref(), Some("sglang"));
        assert_eq!(c.api, Some(Api::Chat));
        assert_eq!(c.load.as_deref(), Some("poisson"));
        assert_eq!(c.input_len, None, "a varying length is no asked length");
        assert_eq!(config(&"\u{1b}[2J: : :\n".repeat(1000)), Config::default());
    }
}
