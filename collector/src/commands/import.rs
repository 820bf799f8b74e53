//! `llmsweep import`: another tool's results as a bundle.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use llmsweep_shared::bundle::SweepKind;

use super::args::{parse_len, parse_note};
use llmsweep_shared::bundle::ImportFormat;

use crate::import::{Request, import};
use crate::output::terminal::inert;
use crate::store;

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # A table a benchmark script printed; tables do not say the lengths, so give them
  llmsweep import --from table old.txt --label kpro6 --input-len 1000 --output-len 500

  # vllm bench serve --save-result files, one per concurrency, become one sweep
  llmsweep import --from vllm c1.json c8.json c32.json --label vllm-h100

  # SGLang bench_serving --output-file lines
  llmsweep import --from sglang runs.jsonl --label kpro5-sglang")]
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
    /// Bundle to write [default: results/<label>-imported-<time>.json].
    ///
    /// The bundle to write [default: results/<label>-imported-<UTC time>.json].
    #[arg(short, long)]
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
}

/// `llmsweep import`: read the files, write the bundle atomically, say what was left out.
pub(crate) fn run(a: ImportArgs) -> anyhow::Result<ExitCode> {
    let req = Request {
        format: a.from,
        files: a.files,
        label: a.label,
        input_len: a.input_len,
        output_len: a.output_len,
        model: a.model,
        notes: a.notes.into_iter().collect(),
        command_line: super::command_line(),
    };
    let bundle = import(&req)?;
    let path = match a.output {
        Some(p) => p,
        None => {
            let dir = std::path::Path::new("results");
            store::check_out_dir(dir)?;
            store::bundle_path(dir, &bundle.label, "imported", &chrono::Utc::now())
        }
    };
    store::write_atomic(&path, &bundle)?;
    let src = bundle.source.as_ref();
    for note in src.map(|s| s.notes.as_slice()).unwrap_or_default() {
        eprintln!("note: {}", inert(note));
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
        println!(
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
    println!(
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
