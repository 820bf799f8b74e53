//! The bundle's types: one set, used by the writer and every reader.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::metrics::{PrefillFit, Stats};

/// A whole result file: one run of llmsweep against one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    /// `"llmsweep.bundle/1"`.
    pub schema: String,
    /// Random id, unique per run.
    pub id: String,
    /// Human name of the run, e.g. the host (`kpro5`).
    pub label: String,
    /// When the run started, RFC 3339 UTC. An imported bundle: when its source says it ran,
    /// else when it was imported (see [`Source::measured_at`] and [`Bundle::run_date`]).
    pub created_at: String,
    /// `false` while the run is going on, when it was interrupted, or when it stopped because the
    /// server went away; the bundle is valid either way.
    pub complete: bool,
    pub tool: Tool,
    pub target: Target,
    pub hosts: Hosts,
    pub workload: Workload,
    /// Metric name → its definition, so every number says what it is.
    #[serde(default)]
    pub definitions: BTreeMap<String, String>,
    #[serde(default)]
    pub sweeps: Vec<Sweep>,
    /// Present when the numbers were measured by another tool and imported; `definitions` then
    /// holds that tool's definitions, not llmsweep's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Present in the bundle of `llmsweep selftest`: the collector measured against its own
    /// loopback endpoint, so the numbers are the client's limits, not a server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selftest: Option<Selftest>,
}

/// What `llmsweep selftest` measured: how fast and how accurately this client reads streams
/// from a loopback endpoint that costs next to nothing. A server measured faster than these
/// numbers is measured at the client's limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selftest {
    /// Every level, in the order run.
    pub levels: Vec<SelftestLevel>,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// How the selftest endpoint paces its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelftestMode {
    /// Pre-rendered events written as fast as the socket takes them.
    FlatOut,
    /// The first event at a fixed delay after the request, then one per fixed interval, each
    /// stamped with its send time.
    Scheduled,
}

/// One selftest level: a mode, a concurrency, a fixed number of requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelftestLevel {
    pub mode: SelftestMode,
    /// Tokens in each streamed event.
    pub tokens_per_event: u32,
    pub concurrency: u32,
    /// Requests sent.
    pub requests: u64,
    /// Requests that ended without error.
    pub ok: u64,
    /// Requests that ended without error with exactly `output_len` tokens.
    pub exact: u64,
    /// The commonest error of the requests that failed, and how many failed with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commonest_error: Option<(String, u64)>,
    /// Tokens asked of each request.
    pub output_len: u64,
    /// Scheduled mode: seconds from the request to its first event, and between events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_event_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<f64>,
    /// First request start → last request end.
    pub wall_s: f64,
    /// Output tokens of successful requests.
    pub tokens: u64,
    /// Token-carrying events of successful requests.
    pub events: u64,
    /// Connections opened during the level beyond the one per stream opened before it: the
    /// connection pool starts one when a request finds no idle connection, which happens when
    /// a request is sent before the previous one's connection is back in the pool.
    #[serde(default)]
    pub new_connections: u64,
    /// Local addresses the connections were opened from: more than one when the level's
    /// connections were spread over 127.0.0.1, 127.0.0.2, … for ephemeral ports.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub source_addresses: u32,
    /// `tokens / wall_s`.
    pub tok_s: f64,
    /// `events / wall_s`.
    pub events_s: f64,
    /// The collector's CPU time during the level (the endpoint's threads left out) per token,
    /// microseconds; absent where CPU time cannot be read.
    #[serde(default)]
    pub cpu_us_per_token: Option<f64>,
    /// Peak resident memory of the collector's process during the level (`VmHWM`, reset before
    /// the level where the kernel allows, else the peak since the start), the endpoint's own
    /// buffers included; absent where unread.
    #[serde(default)]
    pub peak_rss_bytes: Option<u64>,
    /// Scheduled mode: the client's TTFT minus the true one (the first event's stamped send
    /// time minus the request start), seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_error_s: Option<Stats>,
    /// Scheduled mode: each inter-token gap the client measured minus the gap between the two
    /// events' stamped send times, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub itl_error_s: Option<Stats>,
    /// Scheduled mode: how late the endpoint sent each request's first event, seconds: its
    /// stamped send time minus (the client's request start + `first_event_s`). Request transit
    /// and the endpoint's own lateness; when it grows, the machine (client and endpoint
    /// together) is the limit, and `tok_s` is less than the schedule asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_event_lag_s: Option<Stats>,
}

/// Where an imported bundle's numbers came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The measuring tool in its own words, e.g. `vllm bench serve`, `a text table`.
    pub tool: String,
    /// Its version, when the result says.
    #[serde(default)]
    pub version: Option<String>,
    /// The import format.
    pub format: ImportFormat,
    /// The files imported, as named on the command line.
    #[serde(default)]
    pub files: Vec<String>,
    /// What the import left out or guessed, one line each (e.g. a truncated row).
    #[serde(default)]
    pub notes: Vec<String>,
    /// When the source says the run was measured, RFC 3339; absent when it does not say (a text
    /// table), and then the run's date is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_at: Option<String>,
}

/// The formats `llmsweep import` reads (`--from`), as recorded in [`Source::format`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum ImportFormat {
    /// A plain-text table printed by a benchmark script (columns recognised by their headers).
    Table,
    /// The JSON of `vllm bench serve --save-result`; several files become one sweep.
    Vllm,
    /// The JSON lines of SGLang's `bench_serving --output-file`, one run per line.
    Sglang,
    /// GuideLLM's `benchmarks.json`, one benchmark per concurrency or rate.
    Guidellm,
    /// AIPerf's `profile_export_aiperf.json`, one run per file.
    Aiperf,
    /// genai-bench's per-run result files (and its `experiment_metadata.json`).
    #[serde(rename = "genai-bench")]
    #[cfg_attr(feature = "clap", value(name = "genai-bench"))]
    GenaiBench,
    /// inference-perf's per-stage lifecycle reports (`stage_N_lifecycle_metrics.json`).
    #[serde(rename = "inference-perf")]
    #[cfg_attr(feature = "clap", value(name = "inference-perf"))]
    InferencePerf,
    /// A format a newer llmsweep knows (read, never written).
    #[default]
    #[serde(other)]
    #[cfg_attr(feature = "clap", value(skip))]
    Unknown,
}

impl ImportFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            ImportFormat::Table => "table",
            ImportFormat::Vllm => "vllm",
            ImportFormat::Sglang => "sglang",
            ImportFormat::Guidellm => "guidellm",
            ImportFormat::Aiperf => "aiperf",
            ImportFormat::GenaiBench => "genai-bench",
            ImportFormat::InferencePerf => "inference-perf",
            ImportFormat::Unknown => "unknown",
        }
    }
}

/// Whose names a server's `/metrics` answer used, as recorded in [`ServerSamples::scheme`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MetricScheme {
    /// SGLang's `sglang:` metrics.
    Sglang,
    /// vLLM's `vllm:` metrics.
    Vllm,
    /// llama.cpp's server, `llamacpp:` metrics.
    Llamacpp,
    /// A scheme a newer llmsweep knows (read, never written).
    #[default]
    #[serde(other)]
    Unknown,
}

impl MetricScheme {
    pub fn as_str(self) -> &'static str {
        match self {
            MetricScheme::Sglang => "sglang",
            MetricScheme::Vllm => "vllm",
            MetricScheme::Llamacpp => "llamacpp",
            MetricScheme::Unknown => "unknown",
        }
    }
}

impl Bundle {
    /// A bundle with its header and nothing in it yet: the current schema, not complete, no
    /// sweeps, no source; the hosts, workload and definitions empty for the caller to fill.
    pub fn new(
        id: String,
        label: String,
        created_at: String,
        tool: Tool,
        target: Target,
    ) -> Bundle {
        Bundle {
            schema: super::SCHEMA.into(),
            id,
            label,
            created_at,
            complete: false,
            tool,
            target,
            hosts: Hosts::default(),
            workload: Workload {
                seed: 0,
                calibration: Calibration::Unknown,
                prompt_digest: String::new(),
                shared_prefix_len: 0,
                extra_body: None,
                dataset: None,
                prefix_seed: None,
                prefix_tokens: None,
            },
            definitions: BTreeMap::new(),
            sweeps: Vec::new(),
            source: None,
            selftest: None,
        }
    }

    /// `true` when another tool measured these numbers (see [`Source`]).
    pub fn is_imported(&self) -> bool {
        self.source.is_some()
    }

    /// When the run was measured, RFC 3339; `None` for an imported run whose source does not
    /// say (the bundle's `created_at` is then only when it was imported).
    pub fn run_date(&self) -> Option<&str> {
        match &self.source {
            Some(src) => src.measured_at.as_deref(),
            None => Some(&self.created_at),
        }
    }
}

/// What wrote the bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// The command line, with secrets replaced by `***`.
    #[serde(default)]
    pub command_line: Vec<String>,
}

/// Which OpenAI-compatible endpoint was driven.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `POST /v1/completions` with a text prompt.
    Completions,
    /// `POST /v1/chat/completions` with one user message.
    Chat,
    /// Not stated: an imported result that does not say which endpoint it drove, or an API
    /// this version does not know.
    #[serde(other)]
    Unknown,
}

impl Api {
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Completions => "completions",
            Api::Chat => "chat",
            Api::Unknown => "unknown",
        }
    }
}

/// The server under test and what it said about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub url: String,
    pub api: Api,
    pub model: String,
    /// Engine name when it could be told: `sglang`, `vllm`, `llama.cpp`, `tgi`, `llmsweep serve-sim`.
    #[serde(default)]
    pub engine: Option<String>,
    #[serde(default)]
    pub engine_version: Option<String>,
    /// Tokens of prompt plus output one request may use, as the server reports it.
    #[serde(default)]
    pub max_context: Option<u64>,
    /// Requests the server decodes at once, as the server reports it.
    #[serde(default)]
    pub max_running_requests: Option<u64>,
    /// The server's launch arguments when it reports them (SGLang's server info, for instance).
    #[serde(default)]
    pub server_args: Option<serde_json::Value>,
    /// `true` when the target is llmsweep's own simulated server: its numbers describe a model,
    /// not hardware.
    #[serde(default)]
    pub simulated: bool,
    /// Endpoint path → what it answered when probed.
    #[serde(default)]
    pub probes: BTreeMap<String, Probe>,
}

/// One fingerprint probe's raw answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// HTTP status, absent when no answer came.
    #[serde(default)]
    pub status: Option<u16>,
    /// The body: JSON when it parsed as JSON, else a string (truncated to a few KiB).
    #[serde(default)]
    pub body: Option<serde_json::Value>,
    /// Why there is no answer (connection refused, timeout…).
    #[serde(default)]
    pub error: Option<String>,
}

/// Facts about the machines involved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Hosts {
    pub client: HostFacts,
    /// `--note key=value` pairs: GPUs, tensor parallelism, anything the user wants to keep.
    #[serde(default)]
    pub notes: BTreeMap<String, String>,
    /// GPUs of the collector's host, when `nvidia-smi` is there (the server's when they share it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<GpuInfo>,
    /// Whose GPUs were read during the points; absent in bundles of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_telemetry: Option<GpuTelemetry>,
    /// GPUs serving the model, as the user said (`--gpus`); see [`crate::deploy::gpus`] for
    /// the count numbers per GPU use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_gpus: Option<u32>,
}

/// Whether the collector read GPUs during the points, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GpuTelemetry {
    /// This host's GPUs, as the server's: the target is on this host, or the user said so.
    Local,
    /// Not read: the server is another machine, whose GPUs this host cannot see.
    NotThisHost,
    /// Not read: the user said so.
    Off,
    #[serde(other)]
    Unknown,
}

/// Facts about one machine; unknown ones are absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    pub os: String,
    #[serde(default)]
    pub kernel: Option<String>,
    pub arch: String,
    #[serde(default)]
    pub cpu_model: Option<String>,
    pub cpu_cores: u32,
    #[serde(default)]
    pub memory_bytes: Option<u64>,
}

/// How prompts were made: enough to prove two runs sent the same workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub seed: u64,
    /// How prompt lengths were matched to the server's tokenizer.
    pub calibration: Calibration,
    /// SHA-256 over the prompt hashes of every recorded request, in order.
    pub prompt_digest: String,
    /// The per-run random seed of the words every prompt starts with (so a rerun misses the
    /// server's prefix cache); the rest of each prompt comes from `seed` alone. Absent in
    /// bundles of earlier versions, whose whole prompts came from `seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_seed: Option<u64>,
    /// Tokens of each prompt taken by the per-run prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_tokens: Option<u64>,
    /// Tokens of common prefix shared by all prompts (0: every prompt unique from its first token).
    #[serde(default)]
    pub shared_prefix_len: u64,
    /// `--extra-body`: the fields added to every generation request (sampling parameters, a
    /// chat template's arguments), as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_body: Option<serde_json::Value>,
    /// `--dataset`: the prompts came from this file, sent as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<DatasetFacts>,
}

/// The file a run's prompts came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetFacts {
    /// Its name as given on the command line.
    pub file: String,
    /// SHA-256 of its bytes: two runs of one file sent the same prompts.
    pub sha256: String,
    /// Prompts (non-empty lines) in it.
    pub lines: u64,
}

/// How the collector made prompts of the asked length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Calibration {
    /// Word lengths measured with the server's own `/tokenize`.
    Tokenizer,
    /// No tokenizer endpoint: lengths corrected from `usage.prompt_tokens` of warm-up requests.
    Usage,
    /// Neither: one token per word assumed.
    None,
    #[serde(other)]
    Unknown,
}

/// The kind of sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepKind {
    /// Concurrency varies at fixed input and output length.
    Throughput,
    /// Input length varies.
    Context,
    /// Open loop: requests arrive at an offered rate, whether or not earlier ones finished.
    Rate,
    #[serde(other)]
    Unknown,
}

/// One sweep: its parameters and a point per (concurrency, input length).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub kind: SweepKind,
    pub concurrency: Vec<u32>,
    pub input_lens: Vec<u64>,
    pub output_len: u64,
    /// Requests per point when the point was bounded by count.
    #[serde(default)]
    pub requests: Option<u64>,
    /// Seconds per point when the point was bounded by time.
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// Unrecorded requests sent before the first point.
    #[serde(default)]
    pub warmup: u64,
    pub timeout_s: f64,
    /// How many times each level ran. Context sweeps: requests per point are
    /// `repeats × concurrency`. Throughput sweeps (`--repeats`, absent when 1): each level ran
    /// this many passes back to back, its records tagged with [`RequestRecord::repeat`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<u64>,
    /// Context sweeps: TTFT against input length, fitted over the successful requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill_fit: Option<PrefillFit>,
    /// Whether each level's connections were opened before it (so its first wave measured no
    /// TCP setup); `false` with `--cold-connections`; absent in bundles of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preopened: Option<bool>,
    /// Rate sweeps: the offered rates and how arrivals were drawn, enough to draw the same
    /// schedule again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RatePlan>,
    /// `--length-spread`: each request's input and output length were drawn uniformly from
    /// ±this share around `input_lens` and `output_len`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_spread: Option<f64>,
    /// The service-level objective goodput was counted against (`--goodput`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
    /// The rule that sized each level when neither `requests` nor `duration` did: every level
    /// ran until it was this precise, or for at most `cap_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<LevelPrecision>,
    #[serde(default)]
    pub points: Vec<Point>,
}

/// How a rate sweep's arrivals were drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatePlan {
    /// Offered request rates, requests per second, one point each, in the order run.
    pub rates: Vec<f64>,
    pub arrival: Arrival,
    /// Gamma shape (vLLM's `--burstiness`): 1 is Poisson, below 1 burstier, above 1 more even.
    pub burstiness: f64,
    /// Seed of the inter-arrival draws; a point's schedule is drawn from it and its rate.
    /// Absent in an imported run whose tool does not record it.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Most requests in flight at once (`--max-concurrency`); later arrivals wait in the client,
    /// and the wait is recorded per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u32>,
    /// `--find-max-rate`: the search whose points these are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<RateSearch>,
}

/// A search for the highest rate at which enough requests meet the sweep's SLO.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateSearch {
    /// Share of requests that must meet the SLO at a rate (`--slo-fraction`).
    pub slo_fraction: f64,
    /// The search stops when the bracket is narrower than this share of its upper end.
    pub precision: f64,
    /// Requests per second of the closed-loop measurement the search started from.
    pub closed_loop_rps: f64,
    /// Concurrency of that measurement.
    pub closed_loop_concurrency: u32,
    /// The highest rate measured that met the SLO; absent when none did.
    #[serde(default)]
    pub found_rps: Option<f64>,
    /// The lowest rate measured that did not; absent when every rate tried met it.
    #[serde(default)]
    pub failed_rps: Option<f64>,
}

/// The arrival process of a rate sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly spaced, 1 / rate apart.
    Constant,
    /// Exponential gaps (gamma of shape 1).
    Poisson,
    /// Gamma gaps of shape `burstiness` and mean 1 / rate.
    Gamma,
    #[serde(other)]
    Unknown,
}

/// Bounds a good request meets, seconds; any subset.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Slo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<f64>,
    /// Time per output token after the first: (e2e − TTFT) / (output tokens − 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpot_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e2e_s: Option<f64>,
}

/// What a rate point offered and what the client achieved.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatePoint {
    /// Requests per second asked for.
    pub offered_rps: f64,
    /// Requests sent / the span of their send times (first to last send, stretched by one
    /// mean gap so that n sends count n gaps). Absent in an imported run whose tool counts its
    /// achieved rate another way (vLLM's `request_throughput` is in the point's `imported`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_rps: Option<f64>,
    /// How late each request was sent against its schedule, seconds, leaving out time spent
    /// waiting for `max_concurrency`: the proof the client kept up.
    #[serde(default)]
    pub lag_s: Option<Stats>,
    /// Time requests waited for `max_concurrency` before being sent, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_s: Option<Stats>,
    /// Most requests in flight at once, and the time-weighted mean over the point; absent in
    /// an imported run whose tool does not record them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_concurrency: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_concurrency: Option<f64>,
}

/// Requests that met every bound of the sweep's SLO.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Goodput {
    /// Successful requests meeting every bound.
    pub good: u64,
    /// Requests counted (every request of the point, failed ones are not good).
    pub requests: u64,
    /// good / requests.
    pub fraction: f64,
    /// Good requests per second of the point's wall time.
    pub good_rps: f64,
    /// Output tokens of good requests per second of wall time.
    pub good_tok_s: f64,
}

/// Outcome of a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PointStatus {
    /// Ran; at least one request succeeded (flags say what else happened).
    Ok,
    /// Not sent, with the reason (for instance, longer than the server's context).
    Skipped,
    /// Sent, and no request succeeded.
    Failed,
    #[serde(other)]
    Unknown,
}

/// One level of a sweep: a concurrency at an input length.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub concurrency: u32,
    pub input_len: u64,
    pub output_len: u64,
    pub status: PointStatus,
    /// Why skipped or failed, in words that say what to do.
    #[serde(default)]
    pub reason: Option<String>,
    /// When the point's first request started, RFC 3339 UTC.
    #[serde(default)]
    pub started_at: Option<String>,
    #[serde(default)]
    pub summary: Option<Summary>,
    /// What deserves a warning about this point, with its evidence.
    #[serde(default)]
    pub flags: Vec<Flag>,
    #[serde(default)]
    pub requests: Vec<RequestRecord>,
    /// The start of one request's generated text, to show what was being produced.
    #[serde(default)]
    pub output_sample: Option<String>,
    /// The server's Prometheus gauges sampled during the point, when it has `/metrics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_samples: Option<ServerSamples>,
    /// GPU readings during the point, when `nvidia-smi` ran on the collector's host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_samples: Option<GpuSamples>,
    /// The collector's own CPU time during the point / its wall time (1.0 = one core busy).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu: Option<f64>,
    /// The per-run prompt prefix seed this point's prompts began with, when it is not the
    /// bundle's (`workload.prefix_seed`): a point run again after an outage, or by `--resume`,
    /// sends fresh prefixes so the server's cache holds nothing of an earlier attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_seed: Option<u64>,
    /// How late the collector's own timer woke during the point: how busy its host was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_lateness: Option<Lateness>,
    /// For a skipped context point: the TTFT the sweep's prefill fit predicts. A prediction, not
    /// a measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_ttft_s: Option<f64>,
    /// An imported point's numbers as the source tool reported them, under its definitions.
    /// Imported points have no `summary` and no `requests`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
    /// Earlier attempts at this point that were thrown away, in order: the server stopped
    /// answering during them, so the point was run again from its start once it answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discarded: Vec<DiscardedAttempt>,
    /// Rate points: the offered and achieved rate, the schedule lag, the concurrency reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RatePoint>,
    /// With an SLO: the requests that met it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<Goodput>,
    /// How many tokens each streamed chunk after the first carried, over the point's successful
    /// requests: several with speculative decoding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunk_tokens: Option<ChunkTokens>,
}

/// Tokens per streamed chunk over a point's successful requests, first chunks (the prefill's
/// token) left out. With speculative decoding a chunk carries the tokens one step accepted, so
/// the mean is the acceptance length as the client saw it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunkTokens {
    /// `counts[k − 1]`: chunks that carried `k` tokens; the last entry counts
    /// [`ChunkTokens::BUCKETS`] tokens or more.
    pub counts: Vec<u64>,
    /// Chunks counted.
    pub chunks: u64,
    /// Tokens they carried.
    pub tokens: u64,
    /// `false` when some counts were estimated (from the share of the request's text each chunk
    /// carried), because the server did not say how many tokens a chunk held.
    pub exact: bool,
}

impl ChunkTokens {
    /// Buckets of [`ChunkTokens::counts`]: 1 to 7 tokens, then 8 or more.
    pub const BUCKETS: usize = 8;

    /// An empty tally, exact until an estimate is added.
    pub fn new() -> Self {
        ChunkTokens {
            counts: vec![0; Self::BUCKETS],
            chunks: 0,
            tokens: 0,
            exact: true,
        }
    }

    /// Counts one chunk of `tokens` (at least 1).
    pub fn add(&mut self, tokens: u64) {
        let tokens = tokens.max(1);
        if self.counts.len() < Self::BUCKETS {
            self.counts.resize(Self::BUCKETS, 0);
        }
        let bucket = (tokens as usize).min(Self::BUCKETS) - 1;
        self.counts[bucket] += 1;
        self.chunks += 1;
        self.tokens += tokens;
    }

    /// Adds another tally's chunks.
    pub fn merge(&mut self, other: &ChunkTokens) {
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.chunks += other.chunks;
        self.tokens += other.tokens;
        self.exact &= other.exact;
    }

    /// Mean tokens per chunk; `None` with no chunk.
    pub fn mean(&self) -> Option<f64> {
        (self.chunks > 0).then(|| self.tokens as f64 / self.chunks as f64)
    }
}

/// A measurement of a point that does not count: kept with its reason, never summarised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscardedAttempt {
    /// When its first request started, RFC 3339 UTC.
    #[serde(default)]
    pub started_at: Option<String>,
    /// Why it was thrown away, e.g. "the server stopped answering (connection refused)".
    pub reason: String,
    /// How long the collector then waited for the server to answer again, seconds.
    #[serde(default)]
    pub waited_s: Option<f64>,
    /// Its requests, as recorded (times from the attempt's start).
    #[serde(default)]
    pub requests: Vec<RequestRecord>,
}

impl Point {
    /// A point with its parameters, status `ok` and nothing measured yet.
    pub fn empty(concurrency: u32, input_len: u64, output_len: u64) -> Point {
        Point {
            concurrency,
            input_len,
            output_len,
            status: PointStatus::Ok,
            reason: None,
            started_at: None,
            summary: None,
            flags: Vec::new(),
            requests: Vec::new(),
            output_sample: None,
            server_samples: None,
            gpu_samples: None,
            client_cpu: None,
            client_lateness: None,
            prefix_seed: None,
            predicted_ttft_s: None,
            imported: None,
            discarded: Vec::new(),
            rate: None,
            goodput: None,
            chunk_tokens: None,
        }
    }
}

/// The collector's scheduling lateness during a point: a timer set to wake every
/// `tick_s`, and how late each wake-up came. A busy client host (other processes on its CPUs)
/// shows here before it shows in the numbers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Lateness {
    pub tick_s: f64,
    pub ticks: u64,
    pub p99_s: f64,
    pub max_s: f64,
    /// The host's 1-minute load average at the point's end (Linux), with its CPU count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_1m: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u64>,
}

/// A point's numbers as another tool reported them. Every field is optional: sources report
/// different subsets, and what a source did not report stays unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// The source's run length (its "duration" or "wall").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
    /// The source's output throughput of the whole server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tok_s: Option<f64>,
    /// The source's per-request speed, when it reports one directly (a table's "Per-req tok/s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_request_tok_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Quantiles::is_empty")]
    pub ttft_s: Quantiles,
    #[serde(default, skip_serializing_if = "Quantiles::is_empty")]
    pub tpot_s: Quantiles,
    #[serde(default, skip_serializing_if = "Quantiles::is_empty")]
    pub itl_s: Quantiles,
    #[serde(default, skip_serializing_if = "Quantiles::is_empty")]
    pub e2e_s: Quantiles,
}

/// The statistics a source reported for one metric; the others stay unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    /// One number printed without saying which statistic it is (a text table's "TTFT(s)").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unstated: Option<f64>,
}

impl Quantiles {
    pub fn is_empty(&self) -> bool {
        *self == Quantiles::default()
    }

    /// The median, or the one unstated number when that is all the source gave.
    pub fn central(&self) -> Option<f64> {
        self.p50.or(self.unstated)
    }
}

/// A time series of the server's own metrics during a point.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSamples {
    /// Which engine's metric names were recognised.
    pub scheme: MetricScheme,
    /// Sample times, seconds from the point's start.
    pub t_s: Vec<f64>,
    /// Gauge → values aligned with `t_s` (`null` where a scrape lacked it). Names are the
    /// server's own, e.g. `vllm:num_requests_waiting`.
    pub gauges: BTreeMap<String, Vec<Option<f64>>>,
    /// Counters just before the point's first request and just after its last.
    #[serde(default)]
    pub counters_before: BTreeMap<String, f64>,
    #[serde(default)]
    pub counters_after: BTreeMap<String, f64>,
    /// Highest number of requests waiting in the server's queue during the point.
    #[serde(default)]
    pub peak_queue: Option<f64>,
    /// Highest number of requests the server was running at once during the point.
    #[serde(default)]
    pub peak_running: Option<f64>,
    /// Highest KV-cache usage during the point, a fraction `0..=1` (see
    /// [`MetricScheme::kv_gauges`]); absent when the server reports none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_kv: Option<f64>,
}

/// GPU readings during a point (`nvidia-smi`, about once a second).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSamples {
    /// Sample times, seconds from the point's start.
    pub t_s: Vec<f64>,
    /// One series per GPU.
    pub gpus: Vec<GpuSeries>,
    /// Energy all GPUs drew during the point (power integrated over time), joules. GPUs that
    /// report no power draw are left out.
    #[serde(default)]
    pub energy_j: Option<f64>,
    /// Output tokens of successful requests per joule of GPU energy.
    #[serde(default)]
    pub tokens_per_joule: Option<f64>,
}

/// One GPU's readings, aligned with [`GpuSamples::t_s`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuSeries {
    pub index: u32,
    pub name: String,
    pub util_pct: Vec<Option<f64>>,
    pub mem_used_mib: Vec<Option<f64>>,
    #[serde(default)]
    pub mem_total_mib: Option<f64>,
    pub power_w: Vec<Option<f64>>,
}

/// A GPU of a host, as `nvidia-smi` names it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuInfo {
    pub index: u32,
    pub name: String,
    #[serde(default)]
    pub memory_total_mib: Option<f64>,
    #[serde(default)]
    pub driver: Option<String>,
}

/// One request's measurements. Times are seconds from the point's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// When the request was about to be written, from the point's start.
    pub start_s: f64,
    /// Request start → first chunk carrying a generated token; absent if none came.
    #[serde(default)]
    pub ttft_s: Option<f64>,
    /// Request start → end of stream (or of the failure).
    pub e2e_s: f64,
    /// Prompt tokens the collector built the prompt to have.
    pub input_tokens: u64,
    /// Prompt tokens the server counted (`usage.prompt_tokens`), when it said.
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    /// Generated tokens: the server's `usage.completion_tokens`, else the count of token chunks.
    pub output_tokens: u64,
    /// `true` when `output_tokens` was counted from chunks because the server gave no usage.
    #[serde(default)]
    pub tokens_estimated: bool,
    /// Prompt tokens the server served from its prefix cache, when it said.
    #[serde(default)]
    pub cached_tokens: Option<u64>,
    #[serde(default)]
    pub finish_reason: Option<String>,
    #[serde(default)]
    pub error: Option<RequestError>,
    /// First 16 hex digits of the SHA-256 of the prompt text.
    #[serde(default)]
    pub prompt_hash: String,
    /// First 16 hex digits of the SHA-256 of the prompt without its per-run prefix: the same on
    /// every host that ran the same seed, lengths and tokenizer (see [`Workload::prefix_seed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    /// Chunks that carried generated tokens.
    #[serde(default)]
    pub chunks: u64,
    /// This request's inter-token latencies, when it had at least two token chunks.
    #[serde(default)]
    pub itl: Option<ItlSummary>,
    /// Which pass over the level sent it (0-based), when the level ran more than once
    /// (`throughput --repeats`); absent for a level run once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// Where the time before the first token went: the connection and the response headers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Setup>,
    /// A reasoning model's stream: the token chunks that carried only reasoning
    /// (`reasoning_content`), and when the first answer text came; TTFT counts the first token
    /// of either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    /// `--turns`: which turn of its conversation this request was (0 = the first); a later
    /// turn resends the conversation so far, its earlier questions and answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// Tokens this request asked for when they differ from request to request
    /// (`--length-spread`); absent: the point's `output_len`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_asked: Option<u64>,
    /// Open-loop requests: when the schedule had it due, seconds from the point's start, and
    /// how long of the wait from then to `start_s` it spent queued for `max_concurrency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<Due>,
    /// The request's speculative decoding as the server stated it in its answer (vLLM 0.29 and
    /// later with `--per-request-spec-decode-metrics`); absent when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<RequestSpec>,
}

/// One request's speculative decoding, as the server counted it: its verification steps
/// (vLLM's `num_spec_steps`), the draft tokens it accepted over them, and the draft tokens
/// proposed when stated. Its acceptance length is `1 + accepted / steps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestSpec {
    pub steps: u64,
    pub accepted: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drafted: Option<u64>,
}

impl RequestSpec {
    /// Tokens per step: `1 + accepted / steps`.
    pub fn length(&self) -> f64 {
        1.0 + self.accepted as f64 / self.steps.max(1) as f64
    }
}

#[cfg(any(test, feature = "test-support"))]
impl RequestRecord {
    /// A successful request for tests: from a 1000-token prompt, `tokens` output tokens asked
    /// and produced in as many chunks, the first at `ttft_s` and the last at `e2e_s` after
    /// `start_s`; nothing else known.
    pub fn test_ok(start_s: f64, ttft_s: f64, e2e_s: f64, tokens: u64) -> RequestRecord {
        RequestRecord {
            start_s,
            ttft_s: Some(ttft_s),
            e2e_s,
            input_tokens: 1000,
            prompt_tokens: Some(1000),
            output_tokens: tokens,
            tokens_estimated: false,
            cached_tokens: None,
            finish_reason: Some("length".into()),
            error: None,
            prompt_hash: String::new(),
            content_hash: None,
            chunks: tokens,
            itl: None,
            repeat: None,
            setup: None,
            due: None,
            output_asked: None,
            reasoning: None,
            turn: None,
            spec: None,
        }
    }

    /// A request for tests that failed with HTTP 500 after `e2e_s`, no token streamed.
    pub fn test_failed(start_s: f64, e2e_s: f64) -> RequestRecord {
        RequestRecord {
            ttft_s: None,
            output_tokens: 0,
            prompt_tokens: None,
            chunks: 0,
            finish_reason: None,
            error: Some(RequestError {
                kind: ErrorKind::Http,
                status: Some(500),
                message: "boom".into(),
            }),
            ..RequestRecord::test_ok(start_s, 0.0, e2e_s, 0)
        }
    }
}

/// What a reasoning model streamed before its answer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Reasoning {
    /// Token chunks with reasoning text and no answer text.
    pub chunks: u64,
    /// Request start → the first answer text, seconds; absent when none came.
    #[serde(default)]
    pub first_answer_s: Option<f64>,
    /// Of the output tokens, those spent reasoning, as the server's usage counted them
    /// (`completion_tokens_details.reasoning_tokens`); absent when it does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

/// When an open-loop request was due.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Due {
    pub due_s: f64,
    #[serde(default)]
    pub queued_s: f64,
}

/// How a request reached the server's answer, to attribute its TTFT: a new connection (TCP
/// setup counted into its TTFT) or a reused one, and when the response headers arrived (the
/// server's queue and prefill come after them on most engines, or before on some).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// The request was the first on its connection (the first to use its local port in this
    /// run). Its TCP setup was then on this request's path, or was started in the background by
    /// the connection pool while the request waited for a pooled connection to free.
    pub new_connection: bool,
    /// How long that new connection took to open (name lookup, TCP and TLS handshakes),
    /// seconds, as the client's connector timed it, when it began to open after this request
    /// did, so the setup was on this request's path. Absent on a reused connection and on a
    /// new one the pool had opened before (for another request that then found an idle one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_s: Option<f64>,
    /// Request start → response headers, seconds.
    pub headers_s: f64,
}

impl RequestRecord {
    /// A request succeeded when it ended without error.
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }

    /// Tokens it asked for: its own count, else the point's `output_len`.
    pub fn asked(&self, output_len: u64) -> u64 {
        self.output_asked.unwrap_or(output_len)
    }
}

/// Compact per-request inter-token latency summary (seconds per token).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ItlSummary {
    pub mean_s: f64,
    pub p50_s: f64,
    pub p99_s: f64,
    pub max_s: f64,
}

/// Why a request failed: a kind to group by and the server's own words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestError {
    pub kind: ErrorKind,
    /// HTTP status when the server answered with an error.
    #[serde(default)]
    pub status: Option<u16>,
    /// The server's error message, or the client's description of what went wrong.
    pub message: String,
}

/// Classes of request failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// No connection could be made.
    Connect,
    /// The per-request timeout ran out.
    Timeout,
    /// The server answered with a non-success HTTP status.
    Http,
    /// The stream broke off or carried an error event.
    Stream,
    /// The connection closed before `[DONE]`, with no finish reason and no usage: the answer was
    /// cut, not ended by the model.
    EndedEarly,
    /// The server's answer could not be understood.
    Protocol,
    /// The run was interrupted while the request was in flight.
    Cancelled,
    #[serde(other)]
    Unknown,
}

/// How precise a sweep's levels were asked to be (`--precision`, `--max-level-time`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LevelPrecision {
    /// Half the 95 % interval of a level's steady tok/s asked for, in per cent of it.
    pub steady_pct: f64,
    /// Seconds a level sent at most, precise or not.
    pub cap_s: f64,
}

/// Everything llmsweep reports about a point, computed by [`crate::metrics::summarize`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub requests: u64,
    pub ok: u64,
    pub failed: u64,
    /// Successful requests that produced fewer tokens than asked.
    pub short: u64,
    /// Output tokens of successful requests.
    pub output_tokens: u64,
    /// Output tokens asked for: requests × output length.
    pub output_tokens_asked: u64,
    /// First request start → last request end.
    pub wall_s: f64,
    pub agg_tok_s: f64,
    /// Output tokens while all slots were busy / that window; absent when never all busy.
    #[serde(default)]
    pub steady_tok_s: Option<f64>,
    #[serde(default)]
    pub steady_window_s: Option<f64>,
    /// How precisely `steady_tok_s` is known: half its 95 % interval, in per cent of it, from
    /// the level's cycles (see [`crate::metrics::steady_cycles`]); absent with too few cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_pm_pct: Option<f64>,
    pub request_s: f64,
    #[serde(default)]
    pub ttft_s: Option<Stats>,
    #[serde(default)]
    pub e2e_s: Option<Stats>,
    #[serde(default)]
    pub tpot_s: Option<Stats>,
    #[serde(default)]
    pub decode_tok_s: Option<Stats>,
    /// Over every inter-token gap of every successful request.
    #[serde(default)]
    pub itl_s: Option<Stats>,
    #[serde(default)]
    pub prefill_tok_s: Option<Stats>,
}

/// A warning about a point, with the evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flag {
    pub kind: FlagKind,
    /// One line a person can act on, e.g. "3 of 8 requests produced fewer tokens than asked".
    pub message: String,
    /// How many requests the flag concerns, when it concerns requests.
    #[serde(default)]
    pub count: Option<u64>,
}

/// What a flag is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagKind {
    /// Some requests failed.
    Failed,
    /// Some requests produced fewer tokens than asked (stopped at EOS, usually).
    Short,
    /// Some requests produced more tokens than asked: the server ignored the length.
    Overshoot,
    /// Token counts came from counting chunks: the server reported no usage.
    TokensEstimated,
    /// The server counted a prompt length more than 2 % away from the asked one.
    InputLengthOff,
    /// The server served prompt tokens from its prefix cache although prompts were unique.
    PrefixCache,
    /// The generated text is one token or phrase repeated.
    Degenerate,
    /// The collector's own CPU use was high enough to set the pace.
    ClientBound,
    /// The run was interrupted during this point.
    Interrupted,
    /// Imported: the source's row was cut off (a terminal's width, a truncated log); only its
    /// intact leading cells were read.
    CutOff,
    /// The server stopped answering during an earlier attempt at this point; it was run again
    /// from its start once the server answered (the attempts are in `discarded`).
    Rerun,
    /// The slowest TTFTs spent much of their time opening connections (`setup.connect_s`):
    /// the tail is connection setup, not the server's queue or prefill.
    ConnectionSetup,
    /// A request waited between two of its tokens longer than anything the server's own
    /// rhythm explains (see `metrics::checks::STALL_FLOOR_S`): the level's numbers include it.
    Stall,
    /// The level was stopped by its time cap before its steady throughput was as precise as
    /// asked (`--precision`); its interval is wider than the others'.
    Capped,
    /// The level stopped when its first cycles agreed to the precision asked (`--precision`),
    /// but its interval over the whole level came out wider: a few cycles' spread can agree by
    /// chance.
    Imprecise,
    /// The collector's own timer woke late during the level (see [`Lateness`]): its host was
    /// busy, and the numbers may carry the client's delays.
    HostBusy,
    /// The server's own gauges counted more requests running or waiting than the level sent:
    /// another client was using it, and the numbers carry that load.
    OtherTraffic,
    /// A closed-loop level above the server's running limit ended before its queue reached its
    /// steady length: its last requests waited much longer for a first token than its median
    /// (see `metrics::checks::queue_filling_flag`), so its TTFT grows with the level's length.
    QueueFilling,
    #[serde(other)]
    Unknown,
}

impl FlagKind {
    /// The short word shown on a terminal row.
    pub fn as_str(self) -> &'static str {
        match self {
            FlagKind::Failed => "failed",
            FlagKind::Short => "short",
            FlagKind::Overshoot => "overshoot",
            FlagKind::TokensEstimated => "est-tokens",
            FlagKind::InputLengthOff => "input-off",
            FlagKind::PrefixCache => "cache-hit",
            FlagKind::Degenerate => "degenerate",
            FlagKind::ClientBound => "client-bound",
            FlagKind::Interrupted => "interrupted",
            FlagKind::CutOff => "cut-off",
            FlagKind::Rerun => "rerun",
            FlagKind::ConnectionSetup => "conn-setup",
            FlagKind::Stall => "stall",
            FlagKind::Capped => "capped",
            FlagKind::Imprecise => "imprecise",
            FlagKind::HostBusy => "host-busy",
            FlagKind::OtherTraffic => "other-traffic",
            FlagKind::QueueFilling => "queue-filling",
            FlagKind::Unknown => "unknown",
        }
    }
}
