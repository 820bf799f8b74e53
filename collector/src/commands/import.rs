//! `llmsweep import`: another tool's results as a bundle.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use llmsweep_shared::bundle::SweepKind;

use super::args::{parse_len, parse_note};
use llmsweep_shared::bundle::ImportFormat;

use crate::import::{Request, import};
use crate::output::terminal::inert;
use crate::store;

/// `--from`: a format, or `auto` to tell it from each file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FromArg {
    /// Tell the format from each file's content; a file of no format llmsweep reads is named.
    Auto,
    /// A plain-text table printed by a benchmark script (columns recognised by their headers).
    Table,
    /// The JSON of `vllm bench serve --save-result`; several files become one sweep.
    Vllm,
    /// The JSON lines of SGLang's `bench_serving --output-file`, one run per line.
    Sglang,
    /// GuideLLM's `benchmarks.json` (`guidellm run --output kind=json`).
    Guidellm,
    /// AIPerf's `profile_export_aiperf.json` (`aiperf profile`), one file per concurrency or rate.
    Aiperf,
    /// genai-bench's run files (`genai-bench benchmark`), one per concurrency, and its
    /// experiment_metadata.json.
    #[value(name = "genai-bench")]
    GenaiBench,
    /// inference-perf's stage_N_lifecycle_metrics.json, one per stage (its config.yaml beside
    /// them is read for the model, the API, the arrivals and the lengths asked).
    #[value(name = "inference-perf")]
    InferencePerf,
}

impl FromArg {
    /// The format named, `None` for `auto`.
    fn format(self) -> Option<ImportFormat> {
        match self {
            FromArg::Auto => None,
            FromArg::Table => Some(ImportFormat::Table),
            FromArg::Vllm => Some(ImportFormat::Vllm),
            FromArg::Sglang => Some(ImportFormat::Sglang),
            FromArg::Guidellm => Some(ImportFormat::Guidellm),
            FromArg::Aiperf => Some(ImportFormat::Aiperf),
            FromArg::GenaiBench => Some(ImportFormat::GenaiBench),
            FromArg::InferencePerf => Some(ImportFormat::InferencePerf),
        }
    }
}

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # A table a benchmark script printed; tables do not say the lengths, so give them
  llmsweep import --from table old.txt --label kpro6 --input-len 1000 --output-len 500

  # vllm bench serve --save-result files, one per concurrency, become one sweep (the format
  # is told from each file: vLLM, SGLang, GuideLLM, AIPerf)
  llmsweep import c1.json c8.json c32.json --label vllm-h100

  # SGLang bench_serving --output-file lines
  llmsweep import --from sglang runs.jsonl --label kpro5-sglang

  # AIPerf's profile_export_aiperf.json files, one per concurrency or rate, renamed
  llmsweep import --from aiperf aiperf-c1.json aiperf-c8.json --label aiperf-h100")]
pub struct ImportArgs {
    /// The format of the files [default: told from each file's content].
    #[arg(long = "from", value_enum, value_name = "FORMAT", default_value_t = FromArg::Auto, hide_default_value = true)]
    pub from: FromArg,
    /// Files to import; several files of one format become one run.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Name of the imported run, e.g. the host it ran on.
    #[arg(long)]
    pub label: String,
    /// Bundle to write, or a folder to write it in [default: results/].
    ///
    /// A name ending in .json or .json.gz is the bundle's own. Anything else is a folder (made
    /// when it is not there), which gets the bundle as `<label>-imported-<UTC time>.json`, as
    /// `run --out` names its runs.
    #[arg(short, long, alias = "out")]
    pub output: Option<PathBuf>,
    /// Prompt tokens the source ran, when it does not say.
    ///
    /// Prompt tokens the source ran, when it does not say (a throughput table never does).
    #[arg(long, value_parser = parse_len)]
    pub input_len: Option<u64>,
    /// Output tokens each request asked for, when the source does not say.
    #[arg(long, value_parser = parse_len)]
    pub output_len: Option<u64>,
    /// The model the source served, when it does not say.
    #[arg(long)]
    pub model: Option<String>,
    /// A fact to keep with the run, e.g. --note tp=2 (repeatable).
    ///
    /// Facts to keep with the run, e.g. --note gpu="2x RTX A6000" (repeatable).
    #[arg(long = "note", value_name = "KEY=VALUE", value_parser = parse_note)]
    pub notes: Vec<(String, String)>,
    /// GPUs that served the model, for tok/s per GPU.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub gpus: Option<u32>,
}

/// `llmsweep import`: read the files, write the bundle atomically, say what was left out.
pub(crate) fn run(a: ImportArgs) -> anyhow::Result<ExitCode> {
    let req = Request {
        format: a.from.format(),
        files: a.files,
        label: a.label,
        input_len: a.input_len,
        output_len: a.output_len,
        model: a.model,
        notes: a.notes.into_iter().collect(),
        gpus: a.gpus,
        command_line: super::command_line(),
    };
    let bundle = import(&req)?;
    let make = |p: &Path, dir: &Path| {
        std::fs::create_dir_all(dir).map_err(|e| {
            anyhow::anyhow!(
                "--output {}: cannot create the folder {}: {e}",
                inert(&p.display().to_string()),
                inert(&dir.display().to_string())
            )
        })
    };
    let path = match a.output {
        // A folder, as `run --out` takes one (one that is there, or any name but a bundle
        // file's): the bundle goes in it under its own name.
        Some(dir) if dir.is_dir() || !names_a_bundle(&dir) => {
            make(&dir, &dir)?;
            store::bundle_path(&dir, &bundle.label, "imported", &chrono::Utc::now())
        }
        Some(p) => {
            // The folder it names is made, as --out makes its folder.
            if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                make(&p, dir)?;
            }
            p
        }
        None => {
            let dir = std::path::Path::new("results");
            store::check_out_dir(dir)?;
            store::bundle_path(dir, &bundle.label, "imported", &chrono::Utc::now())
        }
    };
    store::write_atomic(&path, &bundle)?;
    let src = bundle.source.as_ref();
    for note in src.map(|s| s.notes.as_slice()).unwrap_or_default() {
        errln!("note: {}", inert(note));
    }
    for s in &bundle.sweeps {
        let keys: Vec<String> = s
            .points
            .iter()
            .map(|p| match s.kind {
                SweepKind::Context => p.input_len.to_string(),
                SweepKind::Rate => p.rate.map_or("?".into(), |r| {
                    llmsweep_shared::charts::axis::format_exact(r.offered_rps)
                }),
                _ => p.concurrency.to_string(),
            })
            .collect();
        let flagged = s.points.iter().filter(|p| !p.flags.is_empty()).count();
        let keys = match s.kind {
            SweepKind::Context => format!("input {}", keys.join(",")),
            SweepKind::Rate => format!("{} req/s", keys.join(", ")),
            _ => format!("C {}", keys.join(",")),
        };
        outln!(
            "{} sweep: {} point{} ({keys}){}",
            llmsweep_shared::compare::kind_name(s.kind),
            s.points.len(),
            if s.points.len() == 1 { "" } else { "s" },
            if flagged > 0 {
                format!(", {flagged} flagged")
            } else {
                String::new()
            }
        );
    }
    outln!(
        "imported {} from {} as {:?}: {}",
        req.files.len().to_string()
            + if req.files.len() == 1 {
                " file"
            } else {
                " files"
            },
        inert(src.map_or("?", |s| s.tool.as_str())),
        bundle.label,
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Whether `--output` names a bundle file rather than a folder: a name ending in `.json` or
/// `.json.gz` (not `/`).
fn names_a_bundle(p: &Path) -> bool {
    let text = p.as_os_str().to_string_lossy();
    !text.ends_with('/')
        && p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(llmsweep_shared::folder::is_bundle_name)
}
