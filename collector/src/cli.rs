//! The command line (clap only: parsing, help texts and value types; no behaviour).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use llmsweep_shared::charts::MAX_SIDE;

pub use crate::sim::Preset;

#[derive(Debug, Parser)]
#[command(
    name = "llmsweep",
    version,
    about = "Measure how fast an OpenAI-compatible LLM server really serves",
    long_about = "Measure how fast an OpenAI-compatible LLM server (SGLang, vLLM, llama.cpp, TGI…) really \
                  serves: throughput against concurrency and latency against context length, every \
                  request's timings kept in a self-describing JSON bundle.\n\nTry it without a server: llmsweep demo"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Throughput sweep: tokens/s, TTFT and decode speed at each concurrency.
    Throughput(ThroughputArgs),
    /// Context sweep: TTFT, prefill and decode speed at each input length.
    Context(ContextArgs),
    /// Both sweeps into one bundle, the way a new deployment is validated.
    Run(RunArgs),
    /// Compare runs against a baseline: every metric at every level, and what else differs.
    Compare(CompareArgs),
    /// Write one self-contained HTML report of bundles, to open from disk or send around.
    Report(ReportArgs),
    /// Turn another tool's results (a text table, vLLM or SGLang benchmark output) into a bundle.
    Import(ImportArgs),
    /// Serve the viewer and a folder of bundles on 127.0.0.1, to pick runs from in a browser.
    View(ViewArgs),
    /// Draw one of the viewer's charts as an SVG or PNG image, for slides and documents.
    Plot(PlotArgs),
    /// Run llmsweep's simulated server (a test instrument with known timing, not a real engine).
    ServeSim(SimArgs),
    /// Start the simulated server on loopback, sweep it briefly, and write a bundle.
    Demo(DemoArgs),
}

/// Which endpoint to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApiArg {
    /// POST /v1/completions with a text prompt.
    Completions,
    /// POST /v1/chat/completions with one user message (the chat template adds tokens).
    Chat,
}

#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// Server base URL.
    #[arg(long, default_value = "http://127.0.0.1:30000")]
    pub url: String,
    /// Endpoint to drive.
    #[arg(long, value_enum, default_value_t = ApiArg::Completions)]
    pub api: ApiArg,
    /// Model id to request [default: the first id /v1/models lists].
    #[arg(long)]
    pub model: Option<String>,
    /// API key sent as a bearer token [default: $LLMSWEEP_API_KEY, then $OPENAI_API_KEY]. Never
    /// written to a bundle.
    #[arg(long)]
    pub api_key: Option<String>,
    /// Seconds one request may take before it counts as failed.
    #[arg(long, default_value_t = 600.0, value_name = "SECS")]
    pub timeout: f64,
}

#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Name of this run in tables and charts, e.g. the host [default: the server's host name].
    #[arg(long)]
    pub label: Option<String>,
    /// Facts to keep with the results, e.g. --note gpu="2x RTX A6000" --note tp=2 (repeatable).
    #[arg(long = "note", value_name = "KEY=VALUE", value_parser = parse_note)]
    pub notes: Vec<(String, String)>,
    /// Folder the bundle is written to.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Seed of the random prompts; the same seed and tokenizer give the same prompts
    /// [default: random, recorded in the bundle].
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(Debug, Clone, Args)]
pub struct ThroughputArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub sweep: ThroughputOpts,
    /// Unrecorded requests before the first level (they warm the server and measure the tokens
    /// the server adds to each prompt).
    #[arg(long, default_value_t = 2)]
    pub warmup: u64,
}

/// The throughput sweep's own flags (shared by `throughput` and `run`).
#[derive(Debug, Clone, Args)]
pub struct ThroughputOpts {
    /// Concurrency levels, run in this order.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64,100")]
    pub concurrency: Vec<u32>,
    /// Prompt length in the server's tokens.
    #[arg(long, default_value_t = 1000)]
    pub input_len: u64,
    /// Tokens generated per request (enforced with ignore_eos and min_tokens, then checked).
    #[arg(long, default_value_t = 500)]
    pub output_len: u64,
    /// Requests per level [default: max(8, 2 × concurrency)].
    #[arg(long, conflicts_with = "duration")]
    pub requests: Option<u64>,
    /// Seconds per level instead of a request count: no request starts after it, those in flight finish.
    #[arg(long, value_name = "SECS")]
    pub duration: Option<f64>,
}

#[derive(Debug, Clone, Args)]
pub struct ContextArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Input lengths in the server's tokens; `k` means thousands (30k = 30000).
    #[arg(long, value_delimiter = ',', default_value = "1k,8k,16k,30k,60k,100k", value_parser = parse_len)]
    pub lengths: Vec<u64>,
    /// Tokens generated per request.
    #[arg(long, default_value_t = 128)]
    pub output_len: u64,
    /// Concurrency at which each length runs (one or more levels).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub concurrency: Vec<u32>,
    #[command(flatten)]
    pub opts: ContextOpts,
    /// Unrecorded requests before the sweep.
    #[arg(long, default_value_t = 1)]
    pub warmup: u64,
}

/// Context-sweep flags shared by `context` and `run`.
#[derive(Debug, Clone, Args)]
pub struct ContextOpts {
    /// Requests per length and concurrency slot (a point sends repeats × concurrency requests).
    #[arg(long, default_value_t = 3)]
    pub repeats: u64,
    /// Send lengths longer than the server's context anyway, and record its error.
    #[arg(long)]
    pub force: bool,
}

/// Which sweeps `run` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnlyArg {
    Throughput,
    Context,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub throughput: ThroughputOpts,
    /// Context sweep: input lengths; `k` means thousands.
    #[arg(long, value_delimiter = ',', default_value = "1k,8k,16k,30k,60k,100k", value_parser = parse_len)]
    pub lengths: Vec<u64>,
    /// Context sweep: tokens generated per request.
    #[arg(long, default_value_t = 128)]
    pub context_output_len: u64,
    /// Context sweep: concurrency at which each length runs.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub context_concurrency: Vec<u32>,
    #[command(flatten)]
    pub context: ContextOpts,
    /// Unrecorded requests before the first sweep.
    #[arg(long, default_value_t = 2)]
    pub warmup: u64,
    /// Run only one of the two sweeps.
    #[arg(long, value_enum)]
    pub only: Option<OnlyArg>,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Bundles to include (.json or .json.gz).
    #[arg(required = true, value_name = "BUNDLE")]
    pub files: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short, long, default_value = "llmsweep-report.html")]
    pub output: PathBuf,
}

/// Formats `llmsweep import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ImportFormat {
    /// A plain-text table printed by a benchmark script (columns recognised by their headers).
    Table,
    /// The JSON of `vllm bench serve --save-result`; several files become one sweep.
    Vllm,
    /// The JSON lines of SGLang's `bench_serving --output-file`, one run per line.
    Sglang,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Examples:\n  llmsweep import --from table old.txt --label kpro6 --input-len 1000 --output-len 500\n  \
                        llmsweep import --from vllm c1.json c8.json c32.json --label vllm-h100\n  \
                        llmsweep import --from sglang runs.jsonl --label kpro5-sglang"
)]
pub struct ImportArgs {
    /// The format of the files.
    #[arg(long = "from", value_enum, value_name = "FORMAT")]
    pub from: ImportFormat,
    /// Files to import; several files of one format become one run.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Name of the imported run, e.g. the host it ran on.
    #[arg(long)]
    pub label: String,
    /// The bundle to write [default: results/<label>-imported-<UTC time>.json].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Prompt tokens the source ran, when it does not say (a throughput table never does).
    #[arg(long, value_parser = parse_len)]
    pub input_len: Option<u64>,
    /// Output tokens each request asked for, when the source does not say.
    #[arg(long, value_parser = parse_len)]
    pub output_len: Option<u64>,
    /// The model the source served, when it does not say.
    #[arg(long)]
    pub model: Option<String>,
    /// Facts to keep with the run, e.g. --note gpu="2x RTX A6000" (repeatable).
    #[arg(long = "note", value_name = "KEY=VALUE", value_parser = parse_note)]
    pub notes: Vec<(String, String)>,
}

#[derive(Debug, Clone, Args)]
pub struct ViewArgs {
    /// Folder of bundles (.json, .json.gz); bundles added later appear when the page is reloaded.
    #[arg(default_value = "results", value_name = "DIR")]
    pub dir: PathBuf,
    /// Port to listen on [default: 8484, or a free port when 8484 is taken]; 0 picks any free port.
    #[arg(long)]
    pub port: Option<u16>,
    /// Address to listen on. Anything but loopback lets every machine that can reach this one
    /// read the results.
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    pub bind: std::net::IpAddr,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
}

/// The charts `plot` draws: the viewer's, by the names a slide would give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChartArg {
    /// Output tok/s (steady and aggregate) vs concurrency.
    #[value(alias = "output-tok-s")]
    Throughput,
    /// Decode tok/s per request (p50) vs concurrency.
    #[value(alias = "decode-vs-concurrency")]
    Decode,
    /// TTFT p50 and p99 vs concurrency.
    #[value(alias = "ttft-vs-concurrency")]
    Ttft,
    /// Per-user decode tok/s vs total tok/s, points labelled with their concurrency.
    #[value(alias = "per-user-vs-total")]
    Tradeoff,
    /// TTFT vs input length, with the fitted prefill curve (context sweep).
    #[value(alias = "ttft-vs-length")]
    Context,
    /// Prefill tok/s (p50) vs input length (context sweep).
    #[value(alias = "prefill-vs-length")]
    Prefill,
    /// Decode tok/s per request (p50) vs input length (context sweep).
    DecodeVsLength,
}

/// Chart colors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ThemeArg {
    /// Dark text on white.
    Light,
    /// Light text on a dark background.
    Dark,
}

#[derive(Debug, Clone, Args)]
pub struct PlotArgs {
    /// Bundles to draw (.json or .json.gz), each a run in its own color, in this order.
    #[arg(required = true, value_name = "BUNDLE")]
    pub files: Vec<PathBuf>,
    /// Which chart.
    #[arg(long, value_enum, default_value_t = ChartArg::Throughput)]
    pub chart: ChartArg,
    /// The image to write; its extension picks the format: .svg or .png.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Image width in pixels.
    #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u32).range(200..=i64::from(MAX_SIDE)))]
    pub width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 700, value_parser = clap::value_parser!(u32).range(150..=i64::from(MAX_SIDE)))]
    pub height: u32,
    /// Colors: light for documents, dark for dark slides.
    #[arg(long, value_enum, default_value_t = ThemeArg::Light)]
    pub theme: ThemeArg,
    /// Title drawn above the chart [default: the chart's own, e.g. "Output throughput vs
    /// concurrency"]. An empty title leaves the line blank.
    #[arg(long)]
    pub title: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Bundles to compare (.json or .json.gz); the first is the baseline unless --baseline says.
    #[arg(required = true, value_name = "BUNDLE")]
    pub files: Vec<PathBuf>,
    /// The bundle the others are compared with.
    #[arg(long, value_name = "BUNDLE")]
    pub baseline: Option<PathBuf>,
    /// Exit with status 1 when steady throughput drops, or TTFT p50 rises, by more than PCT
    /// percent at any level both runs measured (for gating a deployment change in CI). Against
    /// an imported run, which has no steady window, aggregate throughput is compared.
    #[arg(long, value_name = "PCT")]
    pub fail_if_slower: Option<f64>,
}

#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Folder the bundle is written to.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Name of the demo run.
    #[arg(long, default_value = "demo-sim")]
    pub label: String,
}

#[derive(Debug, Clone, Args)]
pub struct SimArgs {
    /// Address to listen on. Keep it on loopback unless you mean to share it.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 30000)]
    pub port: u16,
    /// Timing shape: `kpro5` is shaped like SGLang serving a 27B model on 2× RTX A6000; `fast` is quick.
    #[arg(long, value_enum, default_value_t = Preset::Kpro5)]
    pub preset: Preset,
    /// Seed of the generated text.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Override the preset's context limit (tokens of prompt plus output).
    #[arg(long)]
    pub max_context: Option<u64>,
    /// Override the preset's number of requests decoded at once.
    #[arg(long)]
    pub max_running: Option<u32>,
    /// Fault: stop every response after N tokens, as a server ignoring ignore_eos does.
    #[arg(long, value_name = "N", help_heading = "Fault modes")]
    pub early_stop_after: Option<u32>,
    /// Fault: generate N tokens more than max_tokens.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        help_heading = "Fault modes"
    )]
    pub overshoot: u32,
    /// Fault: answer every Nth generation request with HTTP 500.
    #[arg(long, value_name = "N", help_heading = "Fault modes")]
    pub fail_every: Option<u32>,
    /// Fault: answer every generation request with this HTTP status.
    #[arg(long, value_name = "STATUS", help_heading = "Fault modes")]
    pub reject_all: Option<u16>,
    /// Fault: report N prompt tokens as served from the prefix cache.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        help_heading = "Fault modes"
    )]
    pub cached_tokens: u32,
    /// Fault: generate this word over and over (degenerate output).
    #[arg(long, value_name = "WORD", help_heading = "Fault modes")]
    pub repeat_word: Option<String>,
    /// Fault: never report usage, like llama-cpp-python's server.
    #[arg(long, help_heading = "Fault modes")]
    pub no_usage: bool,
    /// Tokens per streamed chunk, as speculative decoding sends.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        help_heading = "Fault modes"
    )]
    pub tokens_per_chunk: u32,
    /// Fault: answer /tokenize with 404, as a server without a tokenizer endpoint.
    #[arg(long, help_heading = "Fault modes")]
    pub no_tokenize: bool,
}

/// Parses a token count: `30000`, `30k` or `1.5k`.
fn parse_len(s: &str) -> Result<u64, String> {
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
fn parse_note(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!(
            "expected KEY=VALUE, e.g. gpu=\"2x RTX A6000\", got {s:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn throughput_defaults_match_the_documented_ones() {
        let cli = Cli::try_parse_from(["llmsweep", "throughput"]).unwrap();
        let Command::Throughput(a) = cli.command else {
            panic!("not throughput")
        };
        assert_eq!(a.sweep.concurrency, [1, 2, 4, 8, 16, 32, 64, 100]);
        assert_eq!(
            (a.sweep.input_len, a.sweep.output_len, a.warmup),
            (1000, 500, 2)
        );
        assert_eq!(a.target.url, "http://127.0.0.1:30000");
        assert_eq!(a.target.api, ApiArg::Completions);
        assert_eq!(a.output.out, PathBuf::from("results"));
    }

    #[test]
    fn notes_need_a_key() {
        let cli = Cli::try_parse_from([
            "llmsweep",
            "throughput",
            "--note",
            "gpu=2x RTX A6000",
            "--note",
            "tp=2",
        ])
        .unwrap();
        let Command::Throughput(a) = cli.command else {
            panic!("not throughput")
        };
        assert_eq!(a.output.notes[0], ("gpu".into(), "2x RTX A6000".into()));
        let err = Cli::try_parse_from(["llmsweep", "throughput", "--note", "novalue"]).unwrap_err();
        assert!(err.to_string().contains("expected KEY=VALUE"));
    }

    #[test]
    fn context_defaults_and_lengths_in_thousands() {
        let cli = Cli::try_parse_from(["llmsweep", "context"]).unwrap();
        let Command::Context(a) = cli.command else {
            panic!("not context")
        };
        assert_eq!(a.lengths, [1000, 8000, 16000, 30000, 60000, 100_000]);
        assert_eq!((a.output_len, a.opts.repeats, a.warmup), (128, 3, 1));
        assert_eq!(a.concurrency, [1]);
        assert_eq!(parse_len("1.5k"), Ok(1500));
        assert_eq!(parse_len("512"), Ok(512));
        assert!(
            parse_len("0").is_err() && parse_len("1.2345k").is_err() && parse_len("x").is_err()
        );
    }

    #[test]
    fn run_has_both_sweeps_defaults() {
        let cli = Cli::try_parse_from(["llmsweep", "run", "--only", "context"]).unwrap();
        let Command::Run(a) = cli.command else {
            panic!("not run")
        };
        assert_eq!(a.throughput.output_len, 500);
        assert_eq!((a.context_output_len, a.context.repeats), (128, 3));
        assert_eq!(a.only, Some(OnlyArg::Context));
    }

    #[test]
    fn requests_and_duration_exclude_each_other() {
        assert!(
            Cli::try_parse_from([
                "llmsweep",
                "throughput",
                "--requests",
                "4",
                "--duration",
                "5"
            ])
            .is_err()
        );
    }
}
