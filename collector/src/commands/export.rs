//! `llmsweep export`: a bundle's numbers in another format, for spreadsheets and scripts.

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

  # To stdout, for a script to read
  llmsweep export --csv results/kpro5-run-20261201T192003Z.json")]
pub struct ExportArgs {
    /// Write CSV: one row per point of every sweep, with a header row.
    ///
    /// Write CSV (RFC 4180): a header row, then one row per point of every sweep: label, sweep,
    /// status, concurrency, input and output tokens, offered and achieved requests/s, requests
    /// ok and failed, steady tok/s and its ±%, aggregate tok/s, the mean, p50, p90 and p99 of
    /// TTFT, TPOT, ITL and e2e (seconds), and the point's flags joined by ';'. Numbers at full
    /// precision; an empty field where the point has none.
    #[arg(long)]
    pub csv: bool,
    /// The bundle to export (.json or .json.gz).
    #[arg(value_name = "BUNDLE")]
    pub bundle: PathBuf,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `llmsweep export`: the bundle as CSV, to stdout or `--out`.
pub(crate) fn run(a: ExportArgs) -> anyhow::Result<ExitCode> {
    if !a.csv {
        bail!(
            "export needs a format: give --csv, e.g. llmsweep export --csv {}",
            inert(&a.bundle.display().to_string())
        );
    }
    let b = crate::store::read_bundle(&a.bundle)?;
    let csv = llmsweep_shared::export::bundle_csv(&b);
    match &a.out {
        Some(path) => {
            crate::store::write_file_atomic(path, csv.as_bytes())
                .with_context(|| format!("cannot write {}", inert(&path.display().to_string())))?;
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(csv.as_bytes())
                .and_then(|()| out.flush())
                .context("cannot write to standard output")?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
