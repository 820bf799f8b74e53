//! `llmsweep compare`: runs against a baseline in the terminal, and the CI gate.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use llmsweep_shared::bundle::SweepKind;

use crate::output::compare::{self, UNRESOLVED};
use crate::output::compare_doc;
use crate::output::terminal::inert;

/// `println!`, the line made inert: it holds labels and model ids from the bundles.
macro_rules! say {
    ($($arg:tt)*) => {
        outln!("{}", crate::output::terminal::for_screen(&format!($($arg)*)))
    };
}

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # kpro5 against the imported kpro6 run: the first bundle is the baseline
  llmsweep compare results/kpro6-imported-*.json results/kpro5-run-*.json

  # In CI: exit with status 1 when kpro5 is more than 5 % slower, beyond the noise
  llmsweep compare results/kpro6-imported-*.json results/kpro5-run-*.json --fail-if-slower 5

  # Every bundle in results against the one --baseline names
  llmsweep compare results/*.json --baseline results/kpro6-imported-20250610T080000Z.json")]
pub struct CompareArgs {
    /// Bundles to compare; the first is the baseline unless --baseline says.
    ///
    /// Each a .json or .json.gz file, or an object in a bucket (s3://BUCKET/PREFIX/NAME.json).
    #[arg(required = true, value_name = "BUNDLE")]
    pub files: Vec<PathBuf>,
    /// The bundle the others are compared with.
    #[arg(long, value_name = "BUNDLE")]
    pub baseline: Option<PathBuf>,
    /// Exit 1 when a run is more than PCT % slower, beyond the noise.
    ///
    /// Exit with status 1 when steady throughput drops, or TTFT p50 rises, by more than PCT
    /// percent beyond the noise (as the verdict counts it: 95 % for all its judgements taken
    /// together) at any level both runs measured, for gating a deployment change in CI; in a
    /// rate sweep, when TTFT p50, TPOT p50 or e2e p99 rises so at any offered rate. Levels and
    /// sweeps only one run has are named and not gated. Against an imported run, which has no steady window,
    /// aggregate throughput is compared, and its numbers count as exact. Exit with status 3
    /// when nothing is slower beyond the noise but some gated change's interval reaches more
    /// than PCT percent the worse way: the runs cannot tell, and the gate does not pass what
    /// it cannot see.
    #[arg(long, value_name = "PCT")]
    pub fail_if_slower: Option<f64>,
    /// Gate only this sweep.
    ///
    /// The other sweeps are still compared, not gated [default: every sweep both runs have].
    #[arg(long, value_enum, requires = "fail_if_slower")]
    pub gate: Option<GateArg>,
    /// How to print the comparison: text, json or markdown.
    ///
    /// How to print the comparison: `text` for the terminal; `json`, a stable document
    /// (schema "llmsweep.compare/1") with the verdict, every level's values, changes and
    /// intervals, the gate's result and the exit status; `markdown`, for a pull-request comment
    /// or $GITHUB_STEP_SUMMARY. The exit status is the same in every format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// What `compare` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The verdict, the tables and the gate, for the terminal.
    Text,
    /// A stable machine-readable document (schema "llmsweep.compare/1").
    Json,
    /// Markdown, for a pull-request comment or $GITHUB_STEP_SUMMARY.
    Markdown,
}

/// Which sweeps `--fail-if-slower` gates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GateArg {
    /// Only the throughput sweep.
    Throughput,
    /// Only the context sweep.
    Context,
    /// Only the rate sweep.
    Rate,
}

/// `llmsweep compare`: print the verdict and the comparison; with `--fail-if-slower`, exit 1 on
/// a regression beyond the noise.
pub(crate) fn run(a: CompareArgs) -> anyhow::Result<ExitCode> {
    if let Some(p) = a.fail_if_slower
        && !(p.is_finite() && p >= 0.0)
    {
        anyhow::bail!(
            "--fail-if-slower takes a percentage such as 5, got {}",
            llmsweep_shared::text::number(p)
        );
    }
    let req = compare::CompareRequest {
        files: a.files,
        baseline: a.baseline,
        fail_if_slower: a.fail_if_slower,
        gate: a.gate.map(|g| match g {
            GateArg::Throughput => SweepKind::Throughput,
            GateArg::Context => SweepKind::Context,
            GateArg::Rate => SweepKind::Rate,
        }),
    };
    let compared = compare::run(&req)?;
    match a.format {
        Format::Text => {}
        Format::Json => {
            out!("{}", compare_doc::json(&compared, a.fail_if_slower)?);
            return Ok(ExitCode::from(compared.exit_code()));
        }
        Format::Markdown => {
            out!("{}", compare_doc::markdown(&compared, a.fail_if_slower));
            return Ok(ExitCode::from(compared.exit_code()));
        }
    }
    let compare::Compared {
        text,
        gate,
        nothing,
        ..
    } = compared;
    out!("{}", inert(&text));
    if let Some(why) = nothing {
        // The same with the gate or without: the runs cannot tell anything, which is no pass.
        say!("{why}");
        say!(
            "exit {UNRESOLVED}: the runs cannot be compared (compare runs of the same workload at the same levels)"
        );
        return Ok(ExitCode::from(UNRESOLVED));
    }
    let (Some(pct), Some(gate)) = (a.fail_if_slower, gate) else {
        return Ok(ExitCode::SUCCESS);
    };
    let pct = llmsweep_shared::text::number(pct);
    say!("gate: --fail-if-slower {pct}");
    for g in &gate.gated {
        say!("  gated: {g}");
    }
    for n in &gate.not_gated {
        say!("  {n}");
    }
    for line in &gate.resolution {
        say!("  resolution: {line}");
    }
    if !gate.unresolved.is_empty() {
        say!(
            "cannot tell whether these are more than {pct} % slower: their intervals reach past it (a tighter --precision, or more requests per level with --requests, --duration or --repeats, narrows them)"
        );
        for u in &gate.unresolved {
            say!("  {u}");
        }
    }
    if !gate.regressions.is_empty() {
        say!("slower than the baseline by more than {pct} %, beyond the noise:");
        for r in &gate.regressions {
            say!("  {r}");
        }
        return Ok(ExitCode::from(1));
    }
    if !gate.unresolved.is_empty() {
        say!(
            "the gate cannot pass what it cannot see: exit {UNRESOLVED} (no regression found, but the runs cannot resolve a {pct} % change everywhere)"
        );
        return Ok(ExitCode::from(UNRESOLVED));
    }
    say!("no level is more than {pct} % slower than the baseline beyond the noise");
    Ok(ExitCode::SUCCESS)
}
