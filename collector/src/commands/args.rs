//! Flag groups more than one command shares (where to send load, where results go, each sweep's
//! own values), and the parsers of their values.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Which endpoint to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApiArg {
    /// POST /v1/completions with a text prompt.
    Completions,
    /// POST /v1/chat/completions with one user message (the chat template adds tokens).
    Chat,
}

/// `--gpu-telemetry`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GpuArg {
    /// This host's GPUs when the server is on this host, none otherwise.
    Auto,
    /// This host's GPUs: they are the server's.
    Local,
    /// No GPU readings.
    Off,
}

// Help headings of the sweep commands (`throughput`, `context`, `run`), in the order `--help`
// shows them: a heading appears where its first flag is added, so `output` is flattened last
// and `gpu_telemetry` is moved to the end by the commands (see `throughput::ThroughputArgs`).
// `display_order` orders the flags within a heading across the flattened structs: 1xx Target,
// 2xx Workload, 3xx Load shape, 4xx Open loop, 5xx Output and resume, 6xx Telemetry.
pub(crate) const TARGET: &str = "Target";
pub(crate) const WORKLOAD: &str = "Workload";
pub(crate) const LOAD: &str = "Load shape";
pub(crate) const OPEN_LOOP: &str = "Open loop";
pub(crate) const OUTPUT: &str = "Output and resume";
pub(crate) const TELEMETRY: &str = "Telemetry";

/// The last lines of a sweep command's short help (`-h`), which leaves rarer flags out.
pub(crate) const SHORT_HELP_FOOTER: &str =
    "The most used flags; --help shows all flags, their details and examples.";

#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// Server base URL.
    ///
    /// A user name and password in it (`http://user:pass@host:8000`) are sent as HTTP basic
    /// authentication and shown as `http://***@host:8000`; they are never written. Set
    /// $LLMSWEEP_URL instead of the flag to keep them off the command line, where `ps` shows
    /// them.
    #[arg(long, env = "LLMSWEEP_URL", hide_env = true, default_value = "http://127.0.0.1:30000", help_heading = TARGET, display_order = 100)]
    pub url: String,
    /// Endpoint.
    #[arg(long, value_enum, default_value_t = ApiArg::Completions, help_heading = TARGET, display_order = 102)]
    pub api: ApiArg,
    /// Model id to request [default: the first id /v1/models lists].
    #[arg(long, help_heading = TARGET, display_order = 101)]
    pub model: Option<String>,
    /// Bearer token [default: $LLMSWEEP_API_KEY, then $OPENAI_API_KEY].
    ///
    /// The API key, sent as a bearer token. The default applies unless the URL or a --header sets
    /// the Authorization. Never written to a bundle.
    #[arg(long, help_heading = TARGET, display_order = 103)]
    pub api_key: Option<String>,
    /// A header for every request, e.g. X-Api-Key:abc123 or @FILE (repeatable).
    ///
    /// Sent with every request — generation, probes, tokenizer, /metrics. Its value is shown and
    /// recorded as `***`. `@FILE` reads the headers from a file, one `NAME: VALUE` per line (as
    /// curl's `-H @file`), so their values are not on the command line, where `ps` shows them.
    #[arg(long = "header", value_name = "NAME:VALUE", help_heading = TARGET, display_order = 104)]
    pub headers: Vec<String>,
    /// Whose GPUs to read for power and tokens per joule.
    ///
    /// `auto` reads this host's only when the server is on this host (loopback); `local` says
    /// this host's GPUs are the server's.
    #[arg(long, value_enum, default_value_t = GpuArg::Auto, help_heading = TELEMETRY, display_order = 600, hide_short_help = true)]
    pub gpu_telemetry: GpuArg,
    /// Seconds one request may take before it counts as failed.
    #[arg(long, default_value_t = 600.0, value_name = "SECS", help_heading = TARGET, display_order = 105)]
    pub timeout: f64,
    /// Seconds to wait for a server that stops answering.
    ///
    /// When the server stops answering during a level, seconds to wait for it to answer again
    /// before the level counts as failed; the level is then run again from its start.
    #[arg(long, default_value_t = 300.0, value_name = "SECS", help_heading = TARGET, display_order = 106, hide_short_help = true)]
    pub wait_server: f64,
    /// Do not open each level's connections before it.
    ///
    /// Its first wave of requests then measures TCP setup in their TTFT, as fresh clients would
    /// see it.
    #[arg(long, help_heading = TARGET, display_order = 107, hide_short_help = true)]
    pub cold_connections: bool,
    /// JSON merged into every request, e.g. '{"temperature":0}'.
    ///
    /// A JSON object merged into every generation request, e.g. sampling parameters or
    /// '{"chat_template_kwargs":{"enable_thinking":false}}'; recorded in the bundle. It may not
    /// set the fields llmsweep measures with (model, prompt, messages, stream, max_tokens).
    #[arg(long, value_name = "JSON", value_parser = parse_extra_body, help_heading = WORKLOAD, display_order = 212, hide_short_help = true)]
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Fields of a request body `--extra-body` may not set: the measurement depends on them.
pub(crate) const OWN_FIELDS: &[&str] = &["model", "prompt", "messages", "stream", "max_tokens"];

/// Parses `--extra-body`: a JSON object without the fields llmsweep sets itself.
pub(crate) fn parse_extra_body(
    s: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let v: serde_json::Value = serde_json::from_str(s)
        .map_err(|e| format!("not JSON ({e}); give an object, e.g. '{{\"temperature\":0}}'"))?;
    let serde_json::Value::Object(map) = v else {
        return Err("give a JSON object, e.g. '{\"temperature\":0}'".into());
    };
    if let Some(k) = map.keys().find(|k| OWN_FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "{k:?} is set by llmsweep for every request (it measures with it); leave it out"
        ));
    }
    Ok(map)
}

#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Name of this run in tables and charts [default: the server's host name].
    ///
    /// For instance the host it ran on.
    #[arg(long, help_heading = OUTPUT, display_order = 500)]
    pub label: Option<String>,
    /// A fact to keep with the results, e.g. --note tp=2 (repeatable).
    ///
    /// Any number of them, e.g. --note gpu="2x RTX A6000" --note tp=2.
    #[arg(long = "note", value_name = "KEY=VALUE", value_parser = parse_note, help_heading = OUTPUT, display_order = 502)]
    pub notes: Vec<(String, String)>,
    /// GPUs serving the model, for tok/s per GPU [default: the server's count].
    ///
    /// GPUs serving the model, for output tok/s per GPU and the throughput–interactivity chart.
    /// SGLang says its own (tensor × data × pipeline parallel); give it for other engines.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000), help_heading = OUTPUT, display_order = 503)]
    pub gpus: Option<u32>,
    /// Folder the bundle is written to, or s3://BUCKET/PREFIX.
    ///
    /// A bucket prefix is S3 or any S3-compatible store: keys from AWS_ACCESS_KEY_ID and
    /// AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), the store from AWS_ENDPOINT_URL. The bundle is
    /// then written to ./results after every level and each version copied to the bucket; the
    /// bucket is checked for listing and writing before the first request, and a run whose
    /// final bundle did not reach it exits with status 4.
    #[arg(long, short = 'o', alias = "output", default_value = "results", help_heading = OUTPUT, display_order = 501)]
    pub out: PathBuf,
    /// Seed of the prompts' content.
    ///
    /// The same seed, lengths and tokenizer give the same prompts on every host, so two default
    /// runs are provably the same work. The first words of every prompt come from a new random
    /// seed each run (recorded), so nothing is served from the server's prefix cache.
    #[arg(long, default_value_t = 0, help_heading = WORKLOAD, display_order = 215, hide_short_help = true)]
    pub seed: u64,
    /// Tokens every prompt starts with in common (a shared system prompt).
    ///
    /// The rest of every prompt stays unique; the server's cached prompt tokens are then
    /// reported per level, and only cache hits beyond the shared prefix are flagged. The prefix
    /// is new every run, so a rerun does not find it cached.
    #[arg(long, default_value_t = 0, value_name = "TOKENS", help_heading = WORKLOAD, display_order = 214, hide_short_help = true)]
    pub shared_prefix_len: u64,
    /// Your own prompts instead of synthetic ones: a JSONL file.
    ///
    /// One {"prompt": "…"} or {"messages": [...]} per line (messages need --api chat), with an
    /// optional "output_len". Request i of a level sends line i (cycling when a level asks for
    /// more requests than lines); the file's SHA-256 is the workload's identity. Throughput and
    /// rate sweeps only.
    #[arg(long, value_name = "FILE.jsonl", conflicts_with = "shared_prefix_len", help_heading = WORKLOAD, display_order = 211)]
    pub dataset: Option<PathBuf>,
    /// Show every column of the live table, however narrow the terminal.
    ///
    /// The columns agg tok/s, ITL, peak queue, tokens and tok/J too, even when the terminal is
    /// narrower than they need [default: when it is wide enough].
    #[arg(long, help_heading = OUTPUT, display_order = 504, hide_short_help = true)]
    pub wide: bool,
    /// Count goodput against SLO bounds in seconds, e.g. ttft=0.5,tpot=0.05.
    ///
    /// Any subset of the bounds ttft, tpot and e2e, e.g. ttft=0.5,tpot=0.05,e2e=10. A request
    /// is good when it succeeded within every bound; each point then has its good requests per
    /// second, good output tok/s and the fraction.
    #[arg(long, value_name = "BOUNDS", value_parser = parse_slo, help_heading = OPEN_LOOP, display_order = 401)]
    pub goodput: Option<llmsweep_shared::bundle::Slo>,
    /// Finish an interrupted run, written into its bundle.
    ///
    /// With its bundle's own settings, only the levels it lacks (and those it lost to the
    /// interruption) are run and written into the same bundle. Give --url, --api-key or
    /// --header again when the server needs them; a flag that changes the work is refused.
    #[arg(long, value_name = "BUNDLE", help_heading = OUTPUT, display_order = 503)]
    pub resume: Option<PathBuf>,
}

/// The throughput sweep's own flags (shared by `throughput` and `run`).
#[derive(Debug, Clone, Args)]
pub struct ThroughputOpts {
    /// Levels [default: 1,2,4,8,16,32,64,100 until saturated].
    ///
    /// Run in the order given, every one of them. Without this flag the default levels end at
    /// the first level above the server's running limit (or, when it does not say one, at
    /// least twice the best level below) that serves at most 5 % more tokens per second than
    /// the best level below, even at the top of its interval: the levels after it would only
    /// queue. They are recorded as skipped, with the reason.
    #[arg(long, value_delimiter = ',', value_name = "LEVELS", allow_negative_numbers = true, value_parser = parse_count, help_heading = LOAD, display_order = 300)]
    pub concurrency: Option<Vec<u32>>,
    /// Prompt length in the server's tokens.
    #[arg(long, default_value_t = 1000, value_name = "TOKENS", help_heading = WORKLOAD, display_order = 200)]
    pub input_len: u64,
    /// Tokens generated per request.
    ///
    /// Enforced with ignore_eos and min_tokens, then checked.
    #[arg(long, default_value_t = 500, value_name = "TOKENS", help_heading = WORKLOAD, display_order = 201)]
    pub output_len: u64,
    /// One sweep per input×output shape, e.g. 128x128,1000x1000
    ///
    /// Runs the concurrency levels once per shape (input×output tokens), in the order given,
    /// into one bundle, instead of --input-len and --output-len; compare, the viewer and the
    /// report pair the sweeps by shape.
    #[arg(long, value_name = "IxO,..", value_parser = llmsweep_shared::shapes::parse_shape_list, conflicts_with_all = ["input_len", "output_len"], help_heading = WORKLOAD, display_order = 202)]
    pub shapes: Option<llmsweep_shared::shapes::ShapeList>,
    /// Requests per level [default: max(8, 2 × concurrency)].
    #[arg(long, conflicts_with = "duration", help_heading = LOAD, display_order = 301)]
    pub requests: Option<u64>,
    /// Seconds per level instead of a request count.
    ///
    /// No request starts after it, those in flight finish.
    #[arg(long, value_name = "SECS", help_heading = LOAD, display_order = 302)]
    pub duration: Option<f64>,
    /// Run levels until steady tok/s is known to ±PCT %.
    ///
    /// Each level keeps sending until the 95 % interval of its steady output throughput is
    /// within ±this per cent, over at least three waves of the server's batch (and six requests,
    /// for its TTFT p50's interval), or until --max-level-time; then what it sent after the
    /// waves it was judged on is cut, not waited for. At 2 %, comparing two runs of
    /// a simulated server whose tokens cost 5 % more caught it at C = 8 to 100 in 42 pairs of
    /// 42, at C=1 in 36; at 1.5 %, at every level in 20 of 20, the run taking 17 % longer, but
    /// two runs of one configuration then differed beyond their intervals more often
    /// (BENCHMARKS.md). --requests, --duration and --repeats fix a level's size instead.
    #[arg(long, default_value_t = 2.0, value_name = "PCT", allow_negative_numbers = true, help_heading = LOAD, display_order = 308)]
    pub precision: f64,
    /// Most seconds a level sends while reaching --precision.
    ///
    /// A level still short of --precision then stops sending (its requests in flight finish)
    /// and is flagged `capped`, with the precision it reached.
    #[arg(long, default_value_t = 120.0, value_name = "SECS", help_heading = LOAD, display_order = 309, hide_short_help = true)]
    pub max_level_time: f64,
    /// Passes over each level, pooled.
    ///
    /// Run each level this many times back to back, with fresh prompts each pass; the level's
    /// numbers pool every pass, and a comparison's intervals tighten.
    #[arg(long, default_value_t = 1, value_name = "N", help_heading = LOAD, display_order = 303)]
    pub repeats: u64,
    /// Vary each request's lengths by ±this share.
    ///
    /// Draw each request's input and output length uniformly from ±this share around
    /// --input-len and --output-len (0.5: from half to one and a half times); 0 keeps every
    /// request the same. Drawn from --seed, so another host gets the same lengths.
    #[arg(long, default_value_t = 0.0, value_name = "SHARE", help_heading = WORKLOAD, display_order = 213, hide_short_help = true)]
    pub length_spread: f64,
    /// Multi-turn conversations of K turns.
    ///
    /// Each turn resends the conversation so far (its questions and the whole answers as
    /// received) with a new question of --input-len tokens, so TTFT by turn shows what the
    /// prefix cache saves. In a closed loop each worker holds one conversation; with --rates
    /// each arrival is the next turn of the oldest conversation whose last turn has been
    /// answered, or the first turn of a new one, so the offered rate is unchanged;
    /// --find-max-rate then searches for the highest rate of turns.
    #[arg(
        long,
        default_value_t = 1,
        value_name = "K",
        conflicts_with = "dataset",
        help_heading = WORKLOAD,
        display_order = 210
    )]
    pub turns: u32,
    /// Open-loop request rates, e.g. 1,2,4,8.
    ///
    /// Open loop instead of concurrency levels: one point per offered rate, requests per
    /// second, sent on their schedule whether or not earlier ones finished (e.g. 1,2,4,8).
    /// Each point sends --requests [default: 30 s of arrivals, at least 16] or arrivals for
    /// --duration seconds. Also spelled --request-rate, as vLLM's benchmark names it.
    #[arg(long, visible_alias = "request-rate", value_delimiter = ',', value_name = "RPS", conflicts_with_all = ["concurrency", "repeats"], help_heading = OPEN_LOOP, display_order = 400)]
    pub rates: Vec<f64>,
    /// How arrivals are spaced.
    ///
    /// At a rate: poisson (exponential gaps), constant (1 / rate apart) or gamma (shape
    /// --burstiness).
    #[arg(long, value_enum, default_value_t = ArrivalArg::Poisson, help_heading = OPEN_LOOP, display_order = 404, hide_short_help = true)]
    pub arrival: ArrivalArg,
    /// Gamma shape of the gaps with --arrival gamma.
    ///
    /// Below 1 burstier than Poisson, above 1 more even (vLLM's --burstiness).
    #[arg(long, default_value_t = 1.0, help_heading = OPEN_LOOP, display_order = 405, hide_short_help = true)]
    pub burstiness: f64,
    /// With --rates: at most this many requests in flight.
    ///
    /// Later arrivals wait in the client (the wait is recorded per request, apart from the
    /// client's own lateness).
    #[arg(long, value_name = "N", help_heading = OPEN_LOOP, display_order = 403)]
    pub max_concurrency: Option<u32>,
    /// Search for the highest request rate that meets --goodput.
    ///
    /// Search for the highest request rate at which at least --slo-fraction of requests meet
    /// --goodput: a closed-loop level first (at the server's running limit, else 32), then
    /// open-loop rates bisected until the bracket is narrower than --rate-precision.
    #[arg(long, requires = "goodput", conflicts_with_all = ["rates", "concurrency", "repeats"], help_heading = OPEN_LOOP, display_order = 402)]
    pub find_max_rate: bool,
    /// With --find-max-rate: the share of requests that must meet the SLO.
    #[arg(long, default_value_t = 0.9, value_name = "SHARE", help_heading = OPEN_LOOP, display_order = 406, hide_short_help = true)]
    pub slo_fraction: f64,
    /// With --find-max-rate: stop when the bracket is narrower than this share of its top.
    #[arg(long, default_value_t = 0.05, value_name = "SHARE", help_heading = OPEN_LOOP, display_order = 407, hide_short_help = true)]
    pub rate_precision: f64,
}

/// `--arrival`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ArrivalArg {
    Poisson,
    Constant,
    Gamma,
}

/// Parses `--goodput ttft=0.5,tpot=0.05,e2e=10`.
pub(crate) fn parse_slo(s: &str) -> Result<llmsweep_shared::bundle::Slo, String> {
    let mut slo = llmsweep_shared::bundle::Slo::default();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("expected NAME=SECONDS such as ttft=0.5, got {part:?}"))?;
        let v: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
            .ok_or_else(|| format!("{k}={v}: the bound must be a positive number of seconds"))?;
        let slot = match k.trim() {
            "ttft" => &mut slo.ttft_s,
            "tpot" => &mut slo.tpot_s,
            "e2e" => &mut slo.e2e_s,
            other => {
                return Err(format!(
                    "unknown bound {other:?}: use ttft, tpot and e2e (seconds), e.g. ttft=0.5,tpot=0.05"
                ));
            }
        };
        *slot = Some(v);
    }
    if slo == llmsweep_shared::bundle::Slo::default() {
        return Err("give at least one bound, e.g. --goodput ttft=0.5,tpot=0.05".into());
    }
    Ok(slo)
}

/// Context-sweep flags shared by `context` and `run`.
#[derive(Debug, Clone, Args)]
pub struct ContextOpts {
    /// Send lengths beyond the server's context anyway.
    ///
    /// Lengths longer than the server's context are sent anyway, and its error recorded.
    #[arg(long, help_heading = LOAD, display_order = 307, hide_short_help = true)]
    pub force: bool,
}

/// Parses a token count: `30000`, `30k` or `1.5k`.
pub(crate) fn parse_len(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1000.0),
        None => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && (v * mult).fract() == 0.0 => Ok((v * mult) as u64),
        _ => Err(format!(
            "expected a token count such as 8000 or 8k, got {s:?}"
        )),
    }
}

/// Parses `key=value`.
pub(crate) fn parse_note(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!(
            "expected KEY=VALUE, e.g. gpu=\"2x RTX A6000\", got {s:?}"
        )),
    }
}

/// A concurrency level: a whole count (0 and counts too large are refused by the plan, with its
/// words). A negative one is named as such: clap would otherwise take `-4` for a flag it does
/// not know.
fn parse_count(text: &str) -> Result<u32, String> {
    match text.trim().parse::<i64>() {
        Ok(n) if n < 0 => Err(format!(
            "--concurrency takes positive counts, e.g. 1,2,4,8; got {n}"
        )),
        Ok(n) => u32::try_from(n).map_err(|_| {
            format!("{n} is more than llmsweep runs at once; give counts such as 1,2,4,8")
        }),
        Err(_) => Err(format!(
            "{:?} is not a count: give whole numbers from 1, e.g. 1,2,4,8",
            llmsweep_shared::text::one_line(text)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_body_is_an_object_without_the_measured_fields() {
        let m = parse_extra_body(
            r#"{"temperature":0,"chat_template_kwargs":{"enable_thinking":false}}"#,
        )
        .unwrap();
        assert_eq!(m["temperature"], 0);
        assert!(parse_extra_body("[1]").unwrap_err().contains("JSON object"));
        assert!(parse_extra_body("{").unwrap_err().starts_with("not JSON"));
        let e = parse_extra_body(r#"{"max_tokens":5}"#).unwrap_err();
        assert!(e.contains("\"max_tokens\" is set by llmsweep"), "{e}");
    }

    #[test]
    fn goodput_bounds_parse_and_bad_ones_say_what_to_fix() {
        let slo = parse_slo("ttft=0.5, tpot=0.05").unwrap();
        assert_eq!(
            (slo.ttft_s, slo.tpot_s, slo.e2e_s),
            (Some(0.5), Some(0.05), None)
        );
        assert!(
            parse_slo("ttfb=1")
                .unwrap_err()
                .contains("unknown bound \"ttfb\"")
        );
        assert!(
            parse_slo("ttft=-1")
                .unwrap_err()
                .contains("positive number")
        );
        assert!(parse_slo("ttft").unwrap_err().contains("NAME=SECONDS"));
        assert!(parse_slo("").unwrap_err().contains("at least one bound"));
    }

    #[test]
    fn vllm_users_can_say_request_rate() {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from([
            "llmsweep",
            "throughput",
            "--url",
            "http://127.0.0.1:1",
            "--request-rate",
            "4",
        ])
        .unwrap();
        let crate::cli::Command::Throughput(a) = cli.command else {
            panic!("not throughput")
        };
        assert_eq!(a.sweep.rates, [4.0]);
    }

    #[test]
    fn token_counts_take_thousands() {
        assert_eq!(parse_len("1.5k"), Ok(1500));
        assert_eq!(parse_len("30K"), Ok(30000));
        assert_eq!(parse_len("512"), Ok(512));
        assert!(
            parse_len("0").is_err() && parse_len("1.2345k").is_err() && parse_len("x").is_err()
        );
    }

    #[test]
    fn notes_need_a_key() {
        assert_eq!(
            parse_note("gpu=2x RTX A6000"),
            Ok(("gpu".into(), "2x RTX A6000".into()))
        );
        assert!(
            parse_note("novalue")
                .unwrap_err()
                .contains("expected KEY=VALUE")
        );
        assert!(parse_note(" =x").is_err());
    }
}
