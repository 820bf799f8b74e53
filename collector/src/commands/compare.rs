//! `llmsweep compare`: runs against a baseline in the terminal, and the CI gate.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::output::compare;

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

/// `llmsweep compare`: print the comparison; with `--fail-if-slower`, exit 1 on a regression.
pub(crate) fn run(a: CompareArgs) -> anyhow::Result<ExitCode> {
    if let Some(p) = a.fail_if_slower
        && !(p.is_finite() && p >= 0.0)
    {
        anyhow::bail!("--fail-if-slower takes a percentage such as 5, got {p}");
    }
    let req = compare::CompareRequest {
        files: a.files,
        baseline: a.baseline,
        fail_if_slower: a.fail_if_slower,
    };
    let (text, regressions) = compare::run(&req)?;
    print!("{text}");
    let Some(pct) = a.fail_if_slower else {
        return Ok(ExitCode::SUCCESS);
    };
    if regressions.is_empty() {
        println!("\nno level is more than {pct} % slower than the baseline");
        return Ok(ExitCode::SUCCESS);
    }
    println!("\nslower than the baseline by more than {pct} %:");
    for r in &regressions {
        println!("  {r}");
    }
    Ok(ExitCode::from(1))
}
