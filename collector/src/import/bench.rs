//! Results of the engines' own serving benchmarks: the JSON of `vllm bench serve --save-result`
//! (one object per file, or several with `--append-result`) and the JSON lines of SGLang's
//! `python -m sglang.bench_serving --output-file` (one object per run).
//!
//! A closed-loop run (`request_rate` `inf`) becomes one point keyed by its `max_concurrency`;
//! an open-loop run (a finite `request_rate`) one point keyed by that offered rate, with its
//! arrival process ([`OpenLoop`]). Latencies arrive in
//! milliseconds under names like `median_ttft_ms` and `p99_itl_ms`; every percentile the run
//! reports is kept, none is invented.

use serde_json::{Map, Value};

use llmsweep_shared::bundle::{Api, Arrival, Imported, Quantiles};

/// A field's number: `None` when the field is missing or null, an error naming it by `path`
/// when it is not a finite number.
pub(crate) fn finite_at(field: Option<&Value>, path: &str) -> Result<Option<f64>, String> {
    match field {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or(format!("`{path}` is {v}, not a number")),
    }
}

/// `v` as a count, when it is a whole number a count can be (below 2⁵³, so exact).
pub(crate) fn whole(v: f64) -> Option<u64> {
    (v >= 0.0 && v.fract() == 0.0 && v < 2f64.powi(53)).then_some(v as u64)
}

/// Which benchmark wrote the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bench {
    Vllm,
    Sglang,
    /// GuideLLM's `benchmarks.json` ([`super::guidellm`]).
    Guidellm,
    /// AIPerf's `profile_export_aiperf.json` ([`super::aiperf`]).
    Aiperf,
    /// genai-bench's run files ([`super::genai`]).
    Genai,
    /// inference-perf's lifecycle reports ([`super::inference_perf`]).
    InferencePerf,
}

impl Bench {
    pub(crate) fn tool(self) -> &'static str {
        match self {
            Bench::Vllm => "vllm bench serve",
            Bench::Sglang => "sglang.bench_serving",
            Bench::Guidellm => "GuideLLM",
            Bench::Aiperf => "AIPerf",
            Bench::Genai => "genai-bench",
            Bench::InferencePerf => "inference-perf",
        }
    }

    /// The names of the e2e latency fields: vLLM says `e2el`, SGLang `e2e_latency`.
    fn e2e(self) -> &'static str {
        match self {
            Bench::Vllm => "e2el",
            Bench::Sglang
            | Bench::Guidellm
            | Bench::Aiperf
            | Bench::Genai
            | Bench::InferencePerf => "e2e_latency",
        }
    }
}

/// One run of the benchmark, as the importer needs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Run {
    /// 1-based position in the file.
    pub index: usize,
    pub concurrency: u32,
    /// The prompt length the run asked for, when it says (SGLang's `random_input_len` with a
    /// range ratio of 1), else the mean over its successful requests.
    pub input_len: LenSource,
    pub output_len: LenSource,
    pub values: Imported,
    pub model: Option<String>,
    pub api: Api,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub tool_version: Option<String>,
    /// vLLM's `date` (`20250101-120000`, the benchmark host's local time).
    pub date: Option<String>,
    /// Open loop: the rate the run offered. `None` for a closed-loop run.
    pub open: Option<OpenLoop>,
    pub notes: Vec<String>,
}

/// How an open-loop run (vLLM's `--request-rate` below `inf`) paced its requests, as its
/// result file records it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OpenLoop {
    /// `request_rate`, requests per second.
    pub offered_rps: f64,
    /// Gamma gaps for a `burstiness` other than 1, exponential (Poisson) for 1, evenly spaced
    /// for `Infinity`.
    pub arrival: Arrival,
    /// `burstiness` (`f64::INFINITY` for evenly spaced arrivals).
    pub burstiness: f64,
    /// `max_concurrency`, when the run capped requests in flight.
    pub max_concurrency: Option<u32>,
    /// vLLM's `request_goodput` (requests meeting every `--goodput` bound / duration), when
    /// the run was given `--goodput`.
    pub goodput_rps: Option<f64>,
    /// vLLM's `max_concurrent_requests`: most requests in flight at once, when recorded.
    pub peak_concurrency: Option<u32>,
    /// SGLang's `concurrency`: the sum of e2e latencies / the benchmark's duration, the mean
    /// number of requests in flight.
    pub mean_concurrency: Option<f64>,
}

impl OpenLoop {
    /// `4 req/s offered, Poisson arrivals (burstiness 1), max_concurrency 16`.
    pub(crate) fn describe(&self) -> String {
        let arrival = match self.arrival {
            Arrival::Poisson => "Poisson arrivals (burstiness 1)".to_string(),
            Arrival::Constant => "evenly spaced arrivals (burstiness Infinity)".to_string(),
            Arrival::Unknown => "arrivals not stated".to_string(),
            _ => format!("gamma arrivals of burstiness {}", self.burstiness),
        };
        let cap = self
            .max_concurrency
            .map_or("no max_concurrency".to_string(), |c| {
                format!("max_concurrency {c}")
            });
        format!("{} req/s offered, {arrival}, {cap}", self.offered_rps)
    }
}

/// A length and how it is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LenSource {
    /// The run states it as asked.
    Asked(u64),
    /// Mean over the run's requests (rounded): what they got, not necessarily what was asked.
    Mean(u64),
    Unknown,
}

impl LenSource {
    /// A mean over the run's requests, rounded; unknown when absent or negative.
    pub(crate) fn mean(m: Option<f64>) -> LenSource {
        m.filter(|m| *m >= 0.0)
            .map_or(LenSource::Unknown, |m| LenSource::Mean(m.round() as u64))
    }

    pub(crate) fn value(self) -> Option<u64> {
        match self {
            LenSource::Asked(v) | LenSource::Mean(v) => Some(v),
            LenSource::Unknown => None,
        }
    }
}

/// A `NaN`, `Infinity` or `-Infinity` that Python's `json` module wrote where JSON has no value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PyLiteral {
    pub literal: &'static str,
    /// 1-based, in the original text.
    pub line: usize,
    pub column: usize,
    /// The object key it is the value of (for an array element, the array's key).
    pub key: Option<String>,
    /// Its byte offset in the text given to the JSON parser.
    at: usize,
}

impl PyLiteral {
    /// `NaN at line 3 column 20 (`p99_ttft_ms`)`.
    fn place(&self) -> String {
        let key = self
            .key
            .as_ref()
            .map(|k| format!(" (`{k}`)"))
            .unwrap_or_default();
        format!(
            "{} at line {} column {}{key}",
            self.literal, self.line, self.column
        )
    }

    fn why(&self) -> &'static str {
        match self.literal {
            "NaN" => "Python's json writes NaN for a missing statistic",
            _ => "Python's json writes Infinity for a number past any bound (a division by zero)",
        }
    }
}

/// `text` with every `NaN`, `Infinity` and `-Infinity` outside strings replaced by `null`
/// (vLLM's `--save-result` writes them with `json.dump` when a statistic has no value), and
/// where each was.
pub(crate) fn python_literals(text: &str) -> (String, Vec<PyLiteral>) {
    let mut out = String::with_capacity(text.len());
    let mut found = Vec::new();
    // The column counted as the text goes by: counting from the line's start at each literal
    // would take quadratic time on a file of one long line.
    let (mut line, mut column) = (1, 1);
    let (mut in_string, mut escaped) = (false, false);
    let mut string_start = 0;
    let (mut last_string, mut key): (Option<&str>, Option<String>) = (None, None);
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let len = c.len_utf8();
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                last_string = Some(&text[string_start..i]);
            }
        } else if c == '"' {
            in_string = true;
            string_start = i + 1;
        } else if c == ':' {
            key = last_string.map(str::to_string);
        } else if c == '{' {
            key = None;
        } else if let Some(l) = ["NaN", "Infinity", "-Infinity"]
            .into_iter()
            .find(|l| text[i..].starts_with(l))
        {
            found.push(PyLiteral {
                literal: l,
                line,
                column,
                key: key.clone(),
                at: out.len(),
            });
            out.push_str("null");
            i += l.len();
            column += l.len();
            continue;
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
        out.push(c);
        i += len;
    }
    (out, found)
}

/// One JSON document of another tool, with Python's `NaN`, `Infinity` and `-Infinity` read as
/// `null` (see [`python_literals`]): one such number in a field llmsweep does not use must not
/// refuse the whole file, and one in a field it uses reads as that field missing.
pub(crate) fn json_value(text: &str) -> Result<Value, serde_json::Error> {
    let (clean, _) = python_literals(text);
    serde_json::from_str(&clean)
}

/// Reads every run in `text`: JSON objects one after another (JSON lines or concatenated).
/// Python's `NaN` and `Infinity` are read as missing, each with a note that says where.
pub(crate) fn parse(bench: Bench, text: &str) -> Result<Vec<Run>, String> {
    match bench {
        Bench::Guidellm => return super::guidellm::parse(text),
        Bench::Aiperf => return super::aiperf::parse(text),
        Bench::Genai => return super::genai::parse(text),
        Bench::InferencePerf => return super::inference_perf::parse(text, None),
        Bench::Vllm | Bench::Sglang => {}
    }
    let mut runs = Vec::new();
    let (clean, literals) = python_literals(text);
    let mut stream = serde_json::Deserializer::from_str(&clean).into_iter::<Value>();
    let mut n = 0;
    // The literals are in text order: each run's are the next ones before its end.
    let mut next = 0;
    while let Some(item) = stream.next() {
        n += 1;
        let v = item.map_err(|e| {
            format!(
                "run {n} is not valid JSON ({e}); expected the file {} writes",
                bench.tool()
            )
        })?;
        let Value::Object(o) = v else {
            return Err(format!("run {n} is not a JSON object"));
        };
        let run_end = stream.byte_offset();
        let first = next;
        while literals.get(next).is_some_and(|l| l.at < run_end) {
            next += 1;
        }
        let mine: Vec<&PyLiteral> = literals[first..next].iter().collect();
        let mut r = run(bench, n, &o, &mine)?;
        for l in mine
            .into_iter()
            .filter(|l| !matches!(l.key.as_deref(), Some("request_rate" | "burstiness")))
        {
            r.notes.push(format!(
                "run {n}: {}: {}; read as missing",
                l.place(),
                l.why()
            ));
        }
        runs.push(r);
    }
    if runs.is_empty() {
        return Err(format!(
            "no runs in the file; expected the JSON {} writes",
            bench.tool()
        ));
    }
    Ok(runs)
}

fn run(
    bench: Bench,
    n: usize,
    o: &Map<String, Value>,
    literals: &[&PyLiteral],
) -> Result<Run, String> {
    let f = |k: &str| o.get(k).and_then(Value::as_f64).filter(|v| v.is_finite());
    let u = |k: &str| o.get(k).and_then(Value::as_u64);
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    // A run needs these two; written as NaN they are not a missing statistic but no run.
    for k in ["duration", "completed"] {
        if let Some(l) = literals.iter().find(|l| l.key.as_deref() == Some(k)) {
            return Err(format!(
                "run {n}: {}: {}, and a run cannot be placed without its `{k}`",
                l.place(),
                l.why()
            ));
        }
    }
    if o.get("duration").is_none_or(Value::is_null) || o.get("completed").is_none_or(Value::is_null)
    {
        return Err(format!(
            "run {n} has no `duration` and `completed`: not a result of {}",
            bench.tool()
        ));
    }
    // There, but not numbers a run can have: say which and what, not that they are missing.
    if let Some(v) = o
        .get("duration")
        .filter(|_| f("duration").is_none_or(|d| d <= 0.0))
    {
        return Err(format!(
            "run {n}: `duration` {v} is out of range: a run lasts a positive number of seconds"
        ));
    }
    if let Some(v) = o.get("completed").filter(|_| u("completed").is_none()) {
        return Err(format!(
            "run {n}: `completed` {v} is out of range: a count of requests is a whole number, 0 or more"
        ));
    }
    let mut notes = Vec::new();
    let open = open_loop(n, o, literals)?;
    let max_concurrency = match u("max_concurrency") {
        Some(c) if c > 0 => Some(
            u32::try_from(c)
                .map_err(|_| format!("run {n}: max_concurrency {c} is out of range"))?,
        ),
        _ => None,
    };
    let open = open.map(|(offered_rps, arrival, burstiness)| OpenLoop {
        offered_rps,
        arrival,
        burstiness,
        max_concurrency,
        goodput_rps: f("request_goodput"),
        peak_concurrency: u("max_concurrent_requests").and_then(|c| u32::try_from(c).ok()),
        mean_concurrency: f("concurrency").filter(|_| bench == Bench::Sglang),
    });
    let concurrency = match (max_concurrency, open) {
        (Some(c), _) => c,
        // Open loop without a cap: no concurrency level, as in llmsweep's own rate sweeps.
        (None, Some(_)) => 0,
        (None, None) => match u("num_prompts") {
            Some(p) if p > 0 => {
                notes.push(format!(
                    "run {n}: no max_concurrency; its {p} requests were all sent at once, \
                     so it is placed at concurrency {p}"
                ));
                u32::try_from(p).unwrap_or(u32::MAX)
            }
            _ => {
                return Err(format!(
                    "run {n} has neither max_concurrency nor num_prompts nor a finite \
                     request_rate: nothing says how its requests were sent"
                ));
            }
        },
    };
    if let Some(l) = literals
        .iter()
        .find(|l| l.key.as_deref() == Some("request_rate") && l.literal == "Infinity")
    {
        notes.push(format!(
            "run {n}: {}: no rate limit (vLLM's request_rate inf), a closed-loop run",
            l.place()
        ));
    }
    if open.is_some() {
        let literal = literals
            .iter()
            .find(|l| l.key.as_deref() == Some("burstiness"));
        if let Some(l) = literal {
            notes.push(format!(
                "run {n}: {}: burstiness Infinity, vLLM's evenly spaced arrivals",
                l.place()
            ));
        } else if o.get("burstiness").is_none_or(Value::is_null) {
            notes.push(match bench {
                Bench::Vllm => format!(
                    "run {n}: no burstiness recorded (vLLM before --burstiness sent Poisson \
                     arrivals); read as Poisson"
                ),
                Bench::Sglang => {
                    format!("run {n}: SGLang's benchmark draws exponential gaps: Poisson arrivals")
                }
                Bench::Guidellm | Bench::Aiperf | Bench::Genai | Bench::InferencePerf => {
                    format!("run {n}: no burstiness; read as Poisson")
                }
            });
        }
    }
    let completed = u("completed").unwrap_or(0);
    let failed = u("failed").or_else(|| {
        o.get("errors").and_then(Value::as_array).map(|e| {
            e.iter()
                .filter(|x| x.as_str().is_some_and(|s| !s.is_empty()))
                .count() as u64
        })
    });
    let mean_of = |total: &str| {
        u(total)
            .filter(|_| completed > 0)
            .map(|t| (t as f64 / completed as f64).round() as u64)
    };
    let ratio_one = f("random_range_ratio") == Some(1.0);
    let random = s("dataset_name").as_deref() == Some("random");
    let asked = |k: &str| u(k).filter(|_| random && ratio_one);
    let input_len = match (asked("random_input_len"), mean_of("total_input_tokens")) {
        (Some(v), _) => LenSource::Asked(v),
        (None, Some(v)) => LenSource::Mean(v),
        (None, None) => LenSource::Unknown,
    };
    let output_len = match (asked("random_output_len"), mean_of("total_output_tokens")) {
        (Some(v), _) => LenSource::Asked(v),
        (None, Some(v)) => LenSource::Mean(v),
        (None, None) => LenSource::Unknown,
    };
    let q = |metric: &str| Quantiles {
        mean: f(&format!("mean_{metric}_ms")).map(ms),
        p50: f(&format!("median_{metric}_ms"))
            .or_else(|| f(&format!("p50_{metric}_ms")))
            .map(ms),
        p90: f(&format!("p90_{metric}_ms")).map(ms),
        p99: f(&format!("p99_{metric}_ms")).map(ms),
        unstated: None,
    };
    let values = Imported {
        requests: failed.map(|x| x + completed),
        ok: Some(completed),
        failed,
        input_tokens: u("total_input_tokens"),
        output_tokens: u("total_output_tokens"),
        wall_s: f("duration"),
        output_tok_s: f("output_throughput"),
        per_request_tok_s: None,
        request_s: f("request_throughput"),
        ttft_s: q("ttft"),
        tpot_s: q("tpot"),
        itl_s: q("itl"),
        e2e_s: q(bench.e2e()),
    };
    let server_info = o.get("server_info").and_then(Value::as_object);
    let info = |k: &str| {
        server_info
            .and_then(|i| i.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let backend = s("endpoint_type")
        .or_else(|| s("backend"))
        .unwrap_or_default();
    let (engine, engine_version) = match bench {
        Bench::Sglang if server_info.is_some() => (Some("sglang".to_string()), info("version")),
        // vLLM's benchmark drives any OpenAI-compatible server; it does not record which.
        _ => (None, None),
    };
    Ok(Run {
        index: n,
        concurrency,
        input_len,
        output_len,
        values,
        model: s("model_id").or_else(|| info("model_path")),
        api: api_of(&backend),
        engine,
        engine_version,
        tool_version: s("vllm_version").or_else(|| s("version")),
        date: s("date"),
        open,
        notes,
    })
}

/// The run's `request_rate`: `None` for a closed-loop run (`"inf"`, Python's `Infinity`,
/// absent or `null`), else the offered rate with its arrival process from `burstiness`.
fn open_loop(
    n: usize,
    o: &Map<String, Value>,
    literals: &[&PyLiteral],
) -> Result<Option<(f64, Arrival, f64)>, String> {
    let literal = |k: &str| {
        literals
            .iter()
            .find(|l| l.key.as_deref() == Some(k))
            .copied()
    };
    if let Some(ramp) = o.get("ramp_up_strategy").filter(|v| !v.is_null()) {
        let end = |k: &str| o.get(k).map_or("?".to_string(), Value::to_string);
        return Err(format!(
            "run {n} ramped its request rate ({ramp} from {} to {} req/s): a ramp has no one \
             offered rate to place it at; import runs made with a fixed --request-rate",
            end("ramp_up_start_rps"),
            end("ramp_up_end_rps")
        ));
    }
    let rate = match (o.get("request_rate"), literal("request_rate")) {
        (_, Some(l)) if l.literal == "Infinity" => return Ok(None),
        (_, Some(l)) => {
            return Err(format!(
                "run {n}: {}: not a request rate, so whether the run was open or closed loop \
                 is unknown",
                l.place()
            ));
        }
        (None | Some(Value::Null), None) => return Ok(None),
        (Some(Value::String(t)), None) => match t.trim().parse::<f64>() {
            Ok(r) if r == f64::INFINITY => return Ok(None),
            Ok(r) if !r.is_nan() => r,
            _ => {
                return Err(format!(
                    "run {n}: request_rate \"{t}\" is not a number of requests per second \
                     (vLLM writes a number, or \"inf\")"
                ));
            }
        },
        (Some(Value::Number(r)), None) => r.as_f64().unwrap_or(f64::NAN),
        (Some(v), None) => {
            return Err(format!(
                "run {n}: request_rate {v} is not a number of requests per second"
            ));
        }
    };
    if !(rate.is_finite() && rate > 0.0) {
        return Err(format!(
            "run {n}: request_rate {rate} is not a positive number of requests per second"
        ));
    }
    let (arrival, burstiness) = match (o.get("burstiness"), literal("burstiness")) {
        (_, Some(l)) if l.literal == "Infinity" => (Arrival::Constant, f64::INFINITY),
        (_, Some(l)) => {
            return Err(format!(
                "run {n}: {}: not a burstiness, so how its requests arrived is unknown",
                l.place()
            ));
        }
        (None | Some(Value::Null), None) => (Arrival::Poisson, 1.0),
        (Some(v), None) => match v.as_f64() {
            Some(1.0) => (Arrival::Poisson, 1.0),
            Some(b) if b.is_finite() && b > 0.0 => (Arrival::Gamma, b),
            _ => {
                return Err(format!(
                    "run {n}: burstiness {v} is not a positive gamma shape (vLLM requires > 0)"
                ));
            }
        },
    };
    Ok(Some((rate, arrival, burstiness)))
}

fn ms(v: f64) -> f64 {
    v / 1000.0
}

/// The OpenAI endpoint a benchmark backend drove; SGLang's native `/generate` is neither.
fn api_of(backend: &str) -> Api {
    match backend {
        "openai-chat" | "sglang-oai-chat" | "chat" => Api::Chat,
        "vllm" | "openai" | "sglang-oai" | "completions" | "lmdeploy" | "tgi" => Api::Completions,
        _ => Api::Unknown,
    }
}

/// `20250101-120000` (vLLM's) or `2025-01-01T12:00:00.123456` (AIPerf's `start_time`) →
/// `2025-01-01T12:00:00Z`, when it has one of those shapes.
pub(crate) fn vllm_date(date: &str) -> Option<String> {
    let d = chrono::NaiveDateTime::parse_from_str(date, "%Y%m%d-%H%M%S")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(date, "%Y-%m-%dT%H:%M:%S%.f"))
        .ok()?;
    Some(d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vllm_result_maps_every_reported_statistic() {
        let text = r#"{"date": "20251103-141500", "endpoint_type": "openai-chat",
            "model_id": "Qwen/Qwen3-8B", "num_prompts": 64, "request_rate": "inf",
            "burstiness": 1.0, "max_concurrency": 16, "duration": 32.0, "completed": 64,
            "failed": 0, "total_input_tokens": 64000, "total_output_tokens": 32000,
            "request_throughput": 2.0, "output_throughput": 1000.0,
            "mean_ttft_ms": 120.0, "median_ttft_ms": 110.0, "p99_ttft_ms": 300.0,
            "mean_tpot_ms": 15.0, "median_tpot_ms": 14.0, "p99_tpot_ms": 20.0,
            "mean_itl_ms": 15.0, "median_itl_ms": 13.0, "p99_itl_ms": 40.0,
            "mean_e2el_ms": 7600.0, "median_e2el_ms": 7500.0, "p99_e2el_ms": 9000.0}"#;
        let runs = parse(Bench::Vllm, text).unwrap();
        let r = &runs[0];
        assert_eq!(r.concurrency, 16);
        assert_eq!(r.api, Api::Chat);
        assert_eq!(r.input_len, LenSource::Mean(1000));
        assert_eq!(r.output_len, LenSource::Mean(500));
        assert_eq!(r.model.as_deref(), Some("Qwen/Qwen3-8B"));
        assert_eq!(
            vllm_date(r.date.as_deref().unwrap()).unwrap(),
            "2025-11-03T14:15:00Z"
        );
        let v = &r.values;
        assert_eq!((v.ok, v.failed, v.requests), (Some(64), Some(0), Some(64)));
        assert_eq!(v.output_tok_s, Some(1000.0));
        assert_eq!(
            v.ttft_s,
            Quantiles {
                mean: Some(0.12),
                p50: Some(0.11),
                p90: None,
                p99: Some(0.3),
                unstated: None
            }
        );
        assert_eq!(v.tpot_s.p50, Some(0.014));
        assert_eq!(v.e2e_s.p99, Some(9.0));
    }

    #[test]
    fn sglang_lines_are_runs_and_carry_the_server_version() {
        let line = |c: u32, tput: f64| {
            format!(
                r#"{{"backend": "sglang-oai", "dataset_name": "random", "max_concurrency": {c},
                "random_input_len": 1000, "random_output_len": 500, "random_range_ratio": 1.0,
                "server_info": {{"version": "0.5.11", "model_path": "Qwen/Qwen3-27B"}},
                "duration": 10.0, "completed": {n}, "total_input_tokens": {ti},
                "total_output_tokens": {to}, "request_throughput": 1.0, "output_throughput": {tput},
                "median_ttft_ms": 150.0, "median_tpot_ms": 13.6, "median_itl_ms": 13.0,
                "p95_itl_ms": 20.0, "median_e2e_latency_ms": 6900.0, "concurrency": {c}.0}}"#,
                n = 2 * c,
                ti = 2000 * c + 7,
                to = 1000 * c,
            )
            .replace('\n', " ")
        };
        let text = format!("{}\n{}\n", line(1, 70.0), line(4, 250.0));
        let runs = parse(Bench::Sglang, &text).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[1].concurrency, 4);
        assert_eq!(runs[1].input_len, LenSource::Asked(1000));
        assert_eq!(runs[1].output_len, LenSource::Asked(500));
        assert_eq!(runs[1].api, Api::Completions);
        assert_eq!(runs[1].engine.as_deref(), Some("sglang"));
        assert_eq!(runs[1].engine_version.as_deref(), Some("0.5.11"));
        assert_eq!(runs[1].values.e2e_s.p50, Some(6.9));
        assert_eq!(runs[1].values.output_tok_s, Some(250.0));
        assert_eq!(runs[1].values.failed, None);
    }

    /// 100,000 runs on one line, a NaN in each: each literal's column was counted from the
    /// line's start and each run looked through every literal, quadratic work that took
    /// minutes; both are now linear.
    #[test]
    fn runs_and_literals_on_one_long_line_are_read_in_linear_time() {
        let one = r#"{"duration": 1.0, "completed": 3, "num_prompts": 3, "p99_ttft_ms": NaN}"#;
        let n = 100_000;
        let text = one.repeat(n);
        let runs = crate::import::tests::within(60, move || parse(Bench::Vllm, &text).unwrap());
        assert_eq!(runs.len(), n);
        let column = (n - 1) * one.len() + one.find("NaN").unwrap() + 1;
        let want = format!(
            "run {n}: NaN at line 1 column {column} (`p99_ttft_ms`): Python's json writes NaN for a missing statistic; read as missing"
        );
        assert!(runs[n - 1].notes.contains(&want), "{:?}", runs[n - 1].notes);
    }

    #[test]
    fn numbers_out_of_range_are_named_with_their_value() {
        let run = |fields: &str| parse(Bench::Vllm, &format!("{{{fields}, \"num_prompts\": 3}}"));
        for (fields, want) in [
            (
                r#""duration": 1.0, "completed": -3"#,
                "run 1: `completed` -3 is out of range: a count of requests is a whole number, 0 or more",
            ),
            (
                r#""duration": 1.0, "completed": 2.5"#,
                "run 1: `completed` 2.5 is out of range",
            ),
            (
                r#""duration": -1.0, "completed": 3"#,
                "run 1: `duration` -1.0 is out of range: a run lasts a positive number of seconds",
            ),
            (
                r#""duration": "soon", "completed": 3"#,
                "run 1: `duration` \"soon\" is out of range",
            ),
            (
                r#""completed": 3"#,
                "run 1 has no `duration` and `completed`",
            ),
        ] {
            let e = run(fields).unwrap_err();
            assert!(e.starts_with(want), "{fields}: {e}");
        }
    }

    #[test]
    fn open_loop_runs_carry_their_offered_rate_and_arrivals() {
        let run = |extra: &str| {
            parse(
                Bench::Vllm,
                &format!(r#"{{"duration": 1.0, "completed": 3, "num_prompts": 3{extra}}}"#),
            )
        };
        let r = &run(r#", "request_rate": 4.0"#).unwrap()[0];
        assert_eq!(r.concurrency, 0);
        assert_eq!(
            r.open,
            Some(OpenLoop {
                offered_rps: 4.0,
                arrival: Arrival::Poisson,
                burstiness: 1.0,
                max_concurrency: None,
                goodput_rps: None,
                peak_concurrency: None,
                mean_concurrency: None,
            })
        );
        assert_eq!(
            r.notes,
            [
                "run 1: no burstiness recorded (vLLM before --burstiness sent Poisson arrivals); read as Poisson"
            ]
        );
        let r = &run(
            r#", "request_rate": 2.5, "burstiness": 0.5, "max_concurrency": 16, "request_goodput": 1.75, "max_concurrent_requests": 9"#,
        )
        .unwrap()[0];
        assert_eq!(r.concurrency, 16);
        assert_eq!(
            r.open,
            Some(OpenLoop {
                offered_rps: 2.5,
                arrival: Arrival::Gamma,
                burstiness: 0.5,
                max_concurrency: Some(16),
                goodput_rps: Some(1.75),
                peak_concurrency: Some(9),
                mean_concurrency: None,
            })
        );
        assert_eq!(
            r.open.unwrap().describe(),
            "2.5 req/s offered, gamma arrivals of burstiness 0.5, max_concurrency 16"
        );
        assert!(r.notes.is_empty(), "{:?}", r.notes);
        let r = &run(", \"request_rate\": 1, \"burstiness\": Infinity").unwrap()[0];
        assert_eq!(r.open.map(|o| o.arrival), Some(Arrival::Constant));
        assert_eq!(
            r.notes,
            [
                "run 1: Infinity at line 1 column 86 (`burstiness`): burstiness Infinity, vLLM's evenly spaced arrivals"
            ]
        );
        // Without --goodput vLLM writes null.
        let r =
            &run(r#", "request_rate": 3, "burstiness": 1.0, "request_goodput": null"#).unwrap()[0];
        assert_eq!(r.open.map(|o| o.goodput_rps), Some(None));
    }

    #[test]
    fn an_unbounded_rate_stays_closed_loop_and_bad_rates_are_refused() {
        let run = |extra: &str| {
            parse(
                Bench::Vllm,
                &format!(r#"{{"duration": 1.0, "completed": 3, "num_prompts": 3{extra}}}"#),
            )
        };
        for inf in [r#""inf""#, "Infinity", "null"] {
            let r = &run(&format!(r#", "request_rate": {inf}, "max_concurrency": 2"#)).unwrap()[0];
            assert_eq!((r.concurrency, r.open), (2, None), "{inf}");
        }
        let r = &run(", \"request_rate\": Infinity").unwrap()[0];
        assert_eq!(
            r.notes,
            [
                "run 1: no max_concurrency; its 3 requests were all sent at once, so it is placed at concurrency 3",
                "run 1: Infinity at line 1 column 69 (`request_rate`): no rate limit (vLLM's request_rate inf), a closed-loop run"
            ]
        );
        let e = |extra: &str| run(extra).unwrap_err();
        assert_eq!(
            e(", \"request_rate\": NaN"),
            "run 1: NaN at line 1 column 69 (`request_rate`): not a request rate, so whether the run was open or closed loop is unknown"
        );
        assert_eq!(
            e(", \"request_rate\": -Infinity"),
            "run 1: -Infinity at line 1 column 69 (`request_rate`): not a request rate, so whether the run was open or closed loop is unknown"
        );
        assert_eq!(
            e(r#", "request_rate": 0"#),
            "run 1: request_rate 0 is not a positive number of requests per second"
        );
        assert_eq!(
            e(r#", "request_rate": "fast""#),
            "run 1: request_rate \"fast\" is not a number of requests per second (vLLM writes a number, or \"inf\")"
        );
        assert_eq!(
            e(r#", "request_rate": 2, "burstiness": 0"#),
            "run 1: burstiness 0 is not a positive gamma shape (vLLM requires > 0)"
        );
        assert_eq!(
            e(", \"request_rate\": 2, \"burstiness\": NaN"),
            "run 1: NaN at line 1 column 86 (`burstiness`): not a burstiness, so how its requests arrived is unknown"
        );
        assert_eq!(
            e(
                r#", "request_rate": "inf", "ramp_up_strategy": "linear", "ramp_up_start_rps": 1, "ramp_up_end_rps": 8"#
            ),
            "run 1 ramped its request rate (\"linear\" from 1 to 8 req/s): a ramp has no one offered rate to place it at; import runs made with a fixed --request-rate"
        );
        let e = parse(Bench::Vllm, r#"{"hello": 1}"#).unwrap_err();
        assert!(e.contains("not a result of vllm bench serve"), "{e}");
        let e = parse(Bench::Sglang, "{\"duration\": 1.0, \"compl").unwrap_err();
        assert!(e.contains("run 1 is not valid JSON"), "{e}");
        assert!(parse(Bench::Sglang, "").is_err());
        let all_at_once = parse(
            Bench::Vllm,
            r#"{"duration": 1.0, "completed": 3, "request_rate": "inf", "num_prompts": 3, "max_concurrency": null}"#,
        )
        .unwrap();
        assert_eq!(all_at_once[0].concurrency, 3);
        assert_eq!(all_at_once[0].notes.len(), 1);
    }

    /// Issue 10: `vllm bench serve --save-result` writes `NaN` (Python's `json.dump`) for a
    /// statistic it has no value for; the file was refused as not valid JSON.
    #[test]
    fn python_nan_is_a_missing_statistic_with_a_note() {
        let text = "{\"duration\": 10.0, \"completed\": 4, \"max_concurrency\": 2,\n \"output_throughput\": 100.0, \"p99_ttft_ms\": NaN,\n \"median_ttft_ms\": 50.0, \"request_throughput\": Infinity, \"label\": \"NaN: Infinity\", \"x\": [-Infinity]}";
        let runs = parse(Bench::Vllm, text).unwrap();
        let r = &runs[0];
        assert_eq!(r.values.ttft_s.p99, None);
        assert_eq!(r.values.ttft_s.p50, Some(0.05));
        assert_eq!(r.values.request_s, None);
        assert_eq!(r.values.output_tok_s, Some(100.0));
        assert_eq!(
            r.notes,
            [
                "run 1: NaN at line 2 column 45 (`p99_ttft_ms`): Python's json writes NaN for a missing statistic; read as missing",
                "run 1: Infinity at line 3 column 48 (`request_throughput`): Python's json writes Infinity for a number past any bound (a division by zero); read as missing",
                "run 1: -Infinity at line 3 column 90 (`x`): Python's json writes Infinity for a number past any bound (a division by zero); read as missing",
            ]
        );
        let e = parse(Bench::Vllm, "{\"duration\": NaN, \"completed\": 4}").unwrap_err();
        assert_eq!(
            e,
            "run 1: NaN at line 1 column 14 (`duration`): Python's json writes NaN for a missing statistic, and a run cannot be placed without its `duration`"
        );
    }

    #[test]
    fn literals_are_found_per_run_of_a_json_lines_file() {
        let line = |c: u32, p99: &str| {
            format!(
                r#"{{"duration": 1.0, "completed": 2, "max_concurrency": {c}, "p99_ttft_ms": {p99}}}"#
            )
        };
        let text = format!(
            "{}\n{}\n{}\n",
            line(1, "NaN"),
            line(2, "20.0"),
            line(4, "NaN")
        );
        let runs = parse(Bench::Sglang, &text).unwrap();
        let notes: Vec<usize> = runs.iter().map(|r| r.notes.len()).collect();
        assert_eq!(notes, [1, 0, 1]);
        assert!(
            runs[2].notes[0].starts_with("run 3: NaN at line 3 column "),
            "{:?}",
            runs[2].notes
        );
        assert_eq!(runs[1].values.ttft_s.p99, Some(0.02));
    }
}
