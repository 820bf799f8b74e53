//! `llmsweep report`: one self-contained HTML file of bundles.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::output::report;
use crate::output::terminal::inert;
use crate::store;

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # Every bundle in results, into llmsweep-report.html (imported runs first, as the baseline)
  llmsweep report results

  # Two runs side by side, into a file to send around; the old host first, as the baseline
  llmsweep report results/kpro6-imported-*.json results/kpro5-run-*.json -o kpro5-vs-kpro6.html")]
pub struct ReportArgs {
    /// Bundles to include (.json or .json.gz), folders of them, or s3://BUCKET/PREFIX.
    ///
    /// A bundle may be an object in a bucket (s3://BUCKET/PREFIX/NAME.json), and a bucket prefix
    /// is read as a folder. The first run is the baseline the others are compared against (the Compare tab's menu changes it). A folder's bundles come in the
    /// order: runs imported from other tools first (an old host's results, brought in to be
    /// compared against), then by when each was measured.
    #[arg(required = true, value_name = "BUNDLE")]
    pub files: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short, long, alias = "out", default_value = "llmsweep-report.html")]
    pub output: PathBuf,
}

/// `llmsweep report`: read every bundle (refusing bad ones by name), write the page atomically.
pub(crate) fn run(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let mut runs = Vec::new();
    let mut places = false;
    for f in &a.files {
        let (several, paths) = store::index::bundles_of(f)?;
        if several {
            places = true;
            runs.extend(folder(f, &paths)?);
            continue;
        }
        let bundle = store::read_bundle(f)?;
        runs.push(report::Embedded {
            name: file_name(f),
            bundle,
        });
    }
    let html = report::render(&runs)?;
    store::write_file_atomic(&a.output, html.as_bytes())
        .with_context(|| format!("cannot write the report {} (-o)", a.output.display()))?;
    if places && let Some(first) = runs.first() {
        outln!(
            "baseline: {} ({})",
            inert(&first.bundle.label),
            inert(&first.name)
        );
    }
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

fn file_name(f: &Path) -> String {
    f.file_name().map_or_else(
        || f.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The bundles `names` of folder (or bucket prefix) `dir`: imported runs first, then by when
/// each was measured (an imported run whose source does not say, first of them), then by name.
/// A file that cannot be read is named on standard error and left out; a folder with none that
/// can is an error.
fn folder(dir: &Path, names: &[PathBuf]) -> anyhow::Result<Vec<report::Embedded>> {
    let mut runs = Vec::new();
    for path in names {
        match store::read_bundle(path) {
            Ok(bundle) => runs.push(report::Embedded {
                name: file_name(path),
                bundle,
            }),
            Err(e) => errln!(
                "warning: left out of the report: {}",
                inert(&format!("{e:#}"))
            ),
        }
    }
    if runs.is_empty() {
        anyhow::bail!(
            "no bundle in {} can be read: a folder (or s3://BUCKET/PREFIX) holds the .json or .json.gz files `run`, `import` and the other commands write",
            inert(&dir.display().to_string())
        );
    }
    runs.sort_by(|a, b| {
        let key = |r: &report::Embedded| {
            (
                !r.bundle.is_imported(),
                r.bundle.run_date().map(str::to_owned),
            )
        };
        key(a).cmp(&key(b))
    });
    Ok(runs)
}
