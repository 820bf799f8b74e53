//! `llmsweep export`: runs' numbers in another format, for spreadsheets and scripts.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use clap::Args;

use crate::output::terminal::inert;

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # Every point of a run, one row each, into a spreadsheet
  llmsweep export --csv results/kpro5-run-20261201T192003Z.json --out kpro5.csv

  # Every run in a folder or a bucket prefix, told apart by their file, run id and date
  llmsweep export --csv s3://team-bench/llmsweep --out all-runs.csv

  # To stdout, for a script to read, with the percentiles vLLM's bench prints
  llmsweep export --csv results/kpro5-run-20261201T192003Z.json --percentiles 25,50,99")]
pub struct ExportArgs {
    /// Write CSV: one row per point of every sweep, with a header row.
    ///
    /// Write CSV (RFC 4180): a header row, then one row per point of every sweep of every run:
    /// its file, run id and date, label, sweep,
    /// status, concurrency, input and output tokens, offered and achieved requests/s, requests
    /// ok and failed, steady tok/s and its ±%, aggregate tok/s, the mean and the percentiles
    /// (--percentiles) of TTFT, TPOT, ITL and e2e (seconds), and the point's flags joined by
    /// ';'. Numbers at full precision; an empty field where the point has none.
    #[arg(long)]
    pub csv: bool,
    /// Percentiles of each latency, e.g. 50,90,99 (the default) or 25,50,95,99.9.
    ///
    /// Percentiles of each latency: numbers above 0 and below 100, separated by commas; a
    /// column each (ttft_p99.9_s). TTFT, TPOT and e2e come from each point's requests; ITL
    /// keeps p50, p90 and p99 only (the bundle stores a summary of the per-token gaps); an
    /// imported point gives only the percentiles its source stated.
    #[arg(long, value_name = "LIST", value_parser = llmsweep_shared::export::parse_percentiles)]
    pub percentiles: Option<llmsweep_shared::export::Percentiles>,
    /// Bundles to export (.json or .json.gz), folders of them, or s3://BUCKET/PREFIX.
    #[arg(required = true, value_name = "BUNDLE")]
    pub bundles: Vec<PathBuf>,
    /// Write to this file instead of standard output.
    #[arg(long, short, alias = "output", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `llmsweep export`: the bundle as CSV, to stdout or `--out`.
pub(crate) fn run(a: ExportArgs) -> anyhow::Result<ExitCode> {
    if !a.csv {
        bail!(
            "export needs a format: give --csv, e.g. llmsweep export --csv {}",
            inert(&a.bundles[0].display().to_string())
        );
    }
    let mut runs = Vec::new();
    for given in &a.bundles {
        let (several, paths) = crate::store::index::bundles_of(given)?;
        let before = runs.len();
        for path in paths {
            let file = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            match crate::store::read_bundle(&path) {
                Ok(b) => runs.push((file, b)),
                // One bad file of a folder is named and left out; a bundle named alone is not.
                Err(e) if several => errln!(
                    "warning: left out of the export: {}",
                    inert(&format!("{e:#}"))
                ),
                Err(e) => return Err(e),
            }
        }
        if several && runs.len() == before {
            bail!(
                "no bundle in {} can be read: give the folder (or s3://BUCKET/PREFIX) the bundles are in",
                inert(&given.display().to_string())
            );
        }
    }
    let qs = a
        .percentiles
        .as_ref()
        .map_or(&llmsweep_shared::export::DEFAULT_PERCENTILES[..], |p| &p.0);
    let named: Vec<(&str, &llmsweep_shared::Bundle)> =
        runs.iter().map(|(f, b)| (f.as_str(), b)).collect();
    let csv = llmsweep_shared::export::runs_csv(&named, qs);
    match &a.out {
        Some(path) => {
            crate::store::write_file_atomic(path, csv.as_bytes())
                .with_context(|| format!("cannot write {}", inert(&path.display().to_string())))?;
        }
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(csv.as_bytes()).and_then(|()| out.flush()) {
                // `| head`: the reader has what it wanted.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                r => r.context("cannot write to standard output")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
