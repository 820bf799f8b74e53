//! `llmsweep report`: one self-contained HTML file of bundles.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::output::report;
use crate::store;

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # Every bundle in results, into llmsweep-report.html
  llmsweep report results/*.json

  # Two runs side by side, into a file to send around; the old host first, as the baseline
  llmsweep report results/kpro6-imported-*.json results/kpro5-run-*.json -o kpro5-vs-kpro6.html")]
pub struct ReportArgs {
    /// Bundles to include (.json or .json.gz). The first run is the baseline the others are
    /// compared against (the Compare tab's menu changes it).
    #[arg(required = true, value_name = "BUNDLE")]
    pub files: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short, long, default_value = "llmsweep-report.html")]
    pub output: PathBuf,
}

/// `llmsweep report`: read every bundle (refusing bad ones by name), write the page atomically.
pub(crate) fn run(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let runs = a
        .files
        .iter()
        .map(|f| {
            let bundle = store::read_bundle(f)?;
            let name = f.file_name().map_or_else(
                || f.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            Ok(report::Embedded { name, bundle })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let html = report::render(&runs)?;
    store::write_file_atomic(&a.output, html.as_bytes())
        .with_context(|| format!("cannot write the report {} (-o)", a.output.display()))?;
    let selftests = runs.iter().filter(|r| r.bundle.selftest.is_some()).count();
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut what = plural(runs.len() - selftests, "run");
    if selftests > 0 {
        what.push_str(&format!(" and {}", plural(selftests, "selftest")));
    }
    outln!(
        "report: {} ({} KB, {what}; opens offline in any browser)",
        a.output.display(),
        html.len() / 1024,
    );
    Ok(ExitCode::SUCCESS)
}
