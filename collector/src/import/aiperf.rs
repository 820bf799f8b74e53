//! AIPerf's `profile_export_aiperf.json` (`aiperf profile`, export schema 1.x of AIPerf 0.13):
//! the summary of one profiling run, one object per metric (`{"unit": "ms", "avg": …, "p50": …,
//! "p90": …, "p99": …}`) beside the run's settings (`input_config`).
//!
//! The run becomes one point: a `concurrency` phase at its concurrency, a `poisson`, `gamma` or
//! `constant` phase at its rate (capped by its concurrency when it has one). Several files, one
//! per concurrency or rate, make one sweep.
//!
//! AIPerf's names do not all mean llmsweep's: its `inter_token_latency` ((request latency −
//! TTFT) / (output tokens − 1) per request) is llmsweep's TPOT formula, and its
//! `inter_chunk_latency` (gaps between consecutive streamed chunks, over all chunks) is the
//! per-chunk ITL vLLM reports. Its latency statistics are over successful requests.

use serde_json::{Map, Value};

use llmsweep_shared::bundle::{Api, Arrival, Imported, Quantiles};

use super::bench::{LenSource, OpenLoop, Run, finite_at, whole};

/// What a file that is not AIPerf's summary is told.
const EXPECTED: &str = "expected AIPerf's profile_export_aiperf.json";

/// The run of a `profile_export_aiperf.json`.
pub(crate) fn parse(text: &str) -> Result<Vec<Run>, String> {
    let v: Value =
        super::bench::json_value(text).map_err(|e| format!("not valid JSON ({e}); {EXPECTED}"))?;
    let Some(o) = v.as_object() else {
        return Err(format!("not a JSON object; {EXPECTED}"));
    };
    let Some(version) = o.get("aiperf_version").and_then(Value::as_str) else {
        return Err(format!(
            "no `aiperf_version`: {EXPECTED} as AIPerf 0.13 or later writes it (export schema \
             1.x)"
        ));
    };
    let config = o.get("input_config").and_then(Value::as_object).ok_or(
        "no `input_config`: the file does not say how the run was driven (AIPerf 0.13 or later \
         writes it)",
    )?;
    let mut notes = Vec::new();
    let (concurrency, open) = load(config, &mut notes)?;
    let metrics = Metrics(o);
    let Some(ok) = metrics.count("request_count")? else {
        return Err(
            "no `request_count`: no request of the run succeeded, or the file is cut short".into(),
        );
    };
    // Failed requests are counted only when there were some.
    let failed = match metrics.count("error_request_count")? {
        Some(e) => Some(e),
        None => metrics
            .count("completed_request_count")?
            .map(|c| c.saturating_sub(ok)),
    };
    if o.get("was_cancelled").and_then(Value::as_bool) == Some(true) {
        notes.push(
            "run 1: AIPerf recorded the run as cancelled: its numbers are over the requests \
             finished before it stopped"
                .to_string(),
        );
    }
    let endpoint = config.get("endpoint");
    let api = match endpoint.and_then(|e| e.get("type")).and_then(Value::as_str) {
        Some("completions") => Api::Completions,
        Some("chat") => Api::Chat,
        _ => Api::Unknown,
    };
    if endpoint
        .and_then(|e| e.get("streaming"))
        .and_then(Value::as_bool)
        != Some(true)
    {
        notes.push(
            "run 1: not streamed: AIPerf measures no TTFT or inter-token latency without \
             --streaming"
                .to_string(),
        );
    }
    let model = config
        .get("models")
        .and_then(|m| m.get("items"))
        .and_then(Value::as_array)
        .and_then(|items| items.first())
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let prompts = config
        .get("datasets")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .filter(|d| d.get("type").and_then(Value::as_str) == Some("synthetic"))
        .and_then(|d| d.get("prompts"));
    // A synthetic length with no spread is what each request asked for.
    let asked = |which: &str| {
        let len = prompts?.get(which)?;
        (len.get("stddev")?.as_f64()? == 0.0)
            .then(|| len.get("mean")?.as_f64())
            .flatten()
            .and_then(whole)
            .filter(|&l| l > 0)
    };
    let mean_len = |metric: &str| -> Result<LenSource, String> {
        Ok(LenSource::mean(
            metrics.stat(metric, "avg", 1.0)?.filter(|_| ok > 0),
        ))
    };
    let input_len = match asked("isl") {
        Some(l) => LenSource::Asked(l),
        None => mean_len("input_sequence_length")?,
    };
    let output_len = match asked("osl") {
        Some(l) => LenSource::Asked(l),
        None => mean_len("output_sequence_length")?,
    };
    let values = Imported {
        requests: failed.map(|f| f + ok),
        ok: Some(ok),
        failed,
        input_tokens: metrics.stat("total_isl", "avg", 1.0)?.and_then(whole),
        output_tokens: metrics.stat("total_osl", "avg", 1.0)?.and_then(whole),
        wall_s: metrics
            .seconds("benchmark_duration", "avg")?
            .filter(|d| *d > 0.0),
        output_tok_s: metrics.stat("output_token_throughput", "avg", 1.0)?,
        per_request_tok_s: None,
        request_s: metrics.stat("request_throughput", "avg", 1.0)?,
        ttft_s: metrics.quantiles("time_to_first_token")?,
        tpot_s: metrics.quantiles("inter_token_latency")?,
        itl_s: metrics.quantiles("inter_chunk_latency")?,
        e2e_s: metrics.quantiles("request_latency")?,
    };
    Ok(vec![Run {
        index: 1,
        concurrency,
        input_len,
        output_len,
        values,
        model,
        api,
        engine: None,
        engine_version: None,
        tool_version: Some(version.to_string()),
        date: o
            .get("start_time")
            .and_then(Value::as_str)
            .map(str::to_string),
        open,
        notes,
    }])
}

/// The profiling phase's load: its concurrency, and its rate and arrivals when it is open loop.
fn load(
    config: &Map<String, Value>,
    notes: &mut Vec<String>,
) -> Result<(u32, Option<OpenLoop>), String> {
    let phases: Vec<&Value> = config
        .get("phases")
        .and_then(Value::as_array)
        .map(|p| {
            p.iter()
                .filter(|p| p.get("kind").and_then(Value::as_str) == Some("profiling"))
                .collect()
        })
        .unwrap_or_default();
    let [phase] = phases[..] else {
        return Err(format!(
            "`input_config.phases` holds {} profiling phases; one run (one concurrency or one \
             rate) is one file: import files of one profiling phase",
            phases.len()
        ));
    };
    let kind = phase.get("type").and_then(Value::as_str).unwrap_or("");
    let cap = phase
        .get("concurrency")
        .and_then(Value::as_u64)
        .filter(|&c| c > 0)
        .and_then(|c| u32::try_from(c).ok());
    let arrival = match kind {
        "concurrency" => {
            return match cap {
                Some(c) => Ok((c, None)),
                None => Err(super::unusable(
                    "the concurrency phase",
                    "concurrency",
                    phase.get("concurrency"),
                    "a count of 1 or more",
                )),
            };
        }
        "poisson" => (Arrival::Poisson, 1.0),
        "constant" => (Arrival::Constant, f64::INFINITY),
        "gamma" => {
            let shape = phase.get("smoothness").and_then(Value::as_f64);
            match shape {
                Some(s) if s.is_finite() && s > 0.0 => (Arrival::Gamma, s),
                _ => {
                    notes.push(
                        "run 1: a gamma phase without a smoothness: AIPerf's default 1, Poisson"
                            .to_string(),
                    );
                    (Arrival::Poisson, 1.0)
                }
            }
        }
        other => {
            return Err(format!(
                "AIPerf's `{other}` phase is neither a fixed concurrency nor a fixed rate; \
                 import runs of --concurrency or of --request-rate with poisson, gamma or \
                 constant arrivals"
            ));
        }
    };
    if phase.get("rate_series").is_some_and(|s| !s.is_null()) {
        return Err("a rate series (--request-rate-series) has no one rate to place it at".into());
    }
    let rate = phase
        .get("rate")
        .and_then(Value::as_f64)
        .filter(|r| r.is_finite() && *r > 0.0)
        .ok_or(format!("a {kind} phase without a positive `rate`"))?;
    let open = OpenLoop {
        offered_rps: rate,
        arrival: arrival.0,
        burstiness: arrival.1,
        max_concurrency: cap,
        goodput_rps: None,
        peak_concurrency: None,
        mean_concurrency: None,
    };
    Ok((cap.unwrap_or(0), Some(open)))
}

/// The file's metric objects.
struct Metrics<'a>(&'a Map<String, Value>);

impl Metrics<'_> {
    /// A metric's statistic (`avg`, `p50`, …) divided by `per`; absent when the file lacks it.
    fn stat(&self, metric: &str, stat: &str, per: f64) -> Result<Option<f64>, String> {
        let field = self.0.get(metric).and_then(|m| m.get(stat));
        Ok(finite_at(field, &format!("{metric}.{stat}"))?.map(|v| v / per))
    }

    /// A whole count (`request_count`'s `avg`).
    fn count(&self, metric: &str) -> Result<Option<u64>, String> {
        match self.stat(metric, "avg", 1.0)? {
            None => Ok(None),
            Some(c) if c >= 0.0 && c.fract() == 0.0 && c < 2f64.powi(53) => Ok(Some(c as u64)),
            Some(c) => Err(format!("`{metric}` is {c}, not a count")),
        }
    }

    /// A time statistic in seconds, from the metric's `unit`.
    fn seconds(&self, metric: &str, stat: &str) -> Result<Option<f64>, String> {
        let Some(unit) = self.0.get(metric).and_then(|m| m.get("unit")) else {
            return Ok(None);
        };
        let per = match unit.as_str() {
            Some("ns") => 1e9,
            Some("us") => 1e6,
            Some("ms") => 1e3,
            Some("sec" | "s") => 1.0,
            _ => return Err(format!("`{metric}` is in {unit}, not a unit of time")),
        };
        self.stat(metric, stat, per)
    }

    /// Mean, median, p90 and p99 of a latency, in seconds.
    fn quantiles(&self, metric: &str) -> Result<Quantiles, String> {
        Ok(Quantiles {
            mean: self.seconds(metric, "avg")?,
            p50: self.seconds(metric, "p50")?,
            p90: self.seconds(metric, "p90")?,
            p99: self.seconds(metric, "p99")?,
            unstated: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(phase: &str, extra: &str) -> String {
        format!(
            r#"{{"schema_version": "1.4", "aiperf_version": "0.13.0",
            "request_count": {{"unit": "requests", "avg": 3.0}},
            "error_request_count": {{"unit": "requests", "avg": 1.0}},
            "time_to_first_token": {{"unit": "ms", "avg": 12.0, "p50": 10.0, "p90": 20.0,
              "p99": 30.0}},
            "request_latency": {{"unit": "sec", "avg": 2.0, "p50": 1.5}},
            "input_config": {{"models": {{"items": [{{"name": "m"}}]}},
              "endpoint": {{"type": "chat", "streaming": true}},
              "phases": [{{"kind": "warmup", "type": "concurrency", "concurrency": 9}}, {phase}]}}
            {extra}}}"#
        )
    }

    /// The real file of the fixture: its synthetic lengths without spread are the asked ones.
    #[test]
    fn a_synthetic_length_without_spread_is_asked() {
        let path = format!(
            "{}/tests/fixtures/import/aiperf-0.13.0/c1.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let r = &parse(&text).unwrap()[0];
        assert_eq!(
            (r.input_len, r.output_len, r.concurrency, r.notes.len()),
            (LenSource::Asked(32), LenSource::Asked(8), 1, 0)
        );
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v["input_config"]["datasets"][0]["prompts"]["osl"]["stddev"] = 2.0.into();
        let spread = v.to_string();
        // Then the mean the requests got: 8.0 in this run.
        assert_eq!(parse(&spread).unwrap()[0].output_len, LenSource::Mean(8));
    }

    #[test]
    fn the_profiling_phase_is_the_point_and_other_loads_are_refused_by_name() {
        let runs = parse(&file(
            r#"{"kind": "profiling", "type": "gamma", "rate": 4.0, "smoothness": 0.5,
                "concurrency": 8}"#,
            "",
        ))
        .unwrap();
        let r = &runs[0];
        let open = r.open.unwrap();
        assert_eq!(
            (
                open.offered_rps,
                open.arrival,
                open.burstiness,
                open.max_concurrency,
                r.concurrency
            ),
            (4.0, Arrival::Gamma, 0.5, Some(8), 8)
        );
        assert_eq!((r.api, r.model.as_deref()), (Api::Chat, Some("m")));
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
            (r.values.e2e_s.mean, r.values.e2e_s.p50, r.values.e2e_s.p90),
            (Some(2.0), Some(1.5), None)
        );
        let c = parse(&file(
            r#"{"kind": "profiling", "type": "concurrency", "concurrency": 4}"#,
            "",
        ))
        .unwrap();
        assert_eq!((c[0].concurrency, c[0].open), (4, None));
        assert!(c[0].notes.is_empty());
        // A cancelled run without streaming says so; errors counted as completed − successful.
        let c = parse(
            &file(
                r#"{"kind": "profiling", "type": "concurrency", "concurrency": 4}"#,
                r#", "was_cancelled": true, "completed_request_count": {"unit": "requests", "avg": 5.0}"#,
            )
            .replace(r#""streaming": true"#, r#""streaming": false"#)
            .replace("error_request_count", "unused"),
        )
        .unwrap();
        assert_eq!(
            (c[0].values.ok, c[0].values.failed, c[0].values.requests),
            (Some(3), Some(2), Some(5))
        );
        assert_eq!(
            c[0].notes,
            [
                "run 1: AIPerf recorded the run as cancelled: its numbers are over the requests finished before it stopped",
                "run 1: not streamed: AIPerf measures no TTFT or inter-token latency without --streaming"
            ]
        );
        assert_eq!(
            parse(&file(
                r#"{"kind": "profiling", "type": "fixed_schedule"}"#,
                ""
            ))
            .unwrap_err(),
            "AIPerf's `fixed_schedule` phase is neither a fixed concurrency nor a fixed rate; import runs of --concurrency or of --request-rate with poisson, gamma or constant arrivals"
        );
        assert_eq!(
            parse(&file(
                r#"{"kind": "profiling", "type": "concurrency", "concurrency": 1}"#,
                r#", "time_to_first_token": {"unit": "tokens", "avg": 1.0}"#
            ))
            .unwrap_err(),
            r#"`time_to_first_token` is in "tokens", not a unit of time"#
        );
        assert_eq!(
            parse(r#"{"aiperf_version": "0.13.0"}"#).unwrap_err(),
            "no `input_config`: the file does not say how the run was driven (AIPerf 0.13 or later writes it)"
        );
        assert_eq!(
            parse(r#"{"request_throughput": {"unit": "requests/sec", "avg": 2.0}}"#).unwrap_err(),
            "no `aiperf_version`: expected AIPerf's profile_export_aiperf.json as AIPerf 0.13 or later writes it (export schema 1.x)"
        );
        let phase = r#"{"kind": "profiling", "type": "concurrency", "concurrency": 1}"#;
        assert_eq!(
            parse(&file(phase, "").replace(r#""avg": 3.0"#, r#""avg": 2.5"#)).unwrap_err(),
            "`request_count` is 2.5, not a count"
        );
        assert_eq!(
            parse(&file(phase, "").replace(r#""avg": 3.0"#, r#""avg": "x""#)).unwrap_err(),
            r#"`request_count.avg` is "x", not a number"#
        );
        assert_eq!(
            parse(&file(phase, "").replace("request_count", "nothing")).unwrap_err(),
            "no `request_count`: no request of the run succeeded, or the file is cut short"
        );
        assert_eq!(
            parse(r#"{"aiperf_version": "0.13.0", "input_config": {"phases": []}}"#).unwrap_err(),
            "`input_config.phases` holds 0 profiling phases; one run (one concurrency or one rate) is one file: import files of one profiling phase"
        );
    }
}
