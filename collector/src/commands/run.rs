//! `llmsweep run`: both sweeps into one bundle, the way a new deployment is validated.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::{
    ContextOpts, LOAD, OutputArgs, SHORT_HELP_FOOTER, TELEMETRY, TargetArgs, ThroughputOpts,
    WORKLOAD, parse_len,
};
use super::plan::{self, ContextFlags};
use crate::load::{RunPlan, Sweeps};

/// Which sweeps `run` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnlyArg {
    Throughput,
    Context,
}

// The flags' headings appear in the order their first flags are added: `output` is flattened
// last, and `mut_arg` re-adds --gpu-telemetry at the end so that Telemetry comes last.
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("gpu_telemetry", |a| a.help_heading(TELEMETRY)),
    after_help = SHORT_HELP_FOOTER,
    after_long_help = "Examples:
  # Validate a new deployment: both sweeps with their defaults, the facts kept in the bundle
  llmsweep run --url http://127.0.0.1:30000 --label kpro5 --note gpu=\"2x RTX A6000\" --note tp=2

  # Only the context sweep, at three lengths
  llmsweep run --only context --lengths 1k,8k,30k --label kpro5

  # Finish a run that was interrupted (Ctrl-C, a lost connection) in its own bundle
  llmsweep run --resume results/kpro5-run-20250611T093000Z.json"
)]
pub struct RunArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub throughput: ThroughputOpts,
    /// Context sweep: lengths.
    ///
    /// Context sweep: input lengths in the server's tokens; `k` means thousands (30k = 30000).
    #[arg(long, value_delimiter = ',', default_value = "1k,8k,16k,30k,60k,100k", value_parser = parse_len, help_heading = WORKLOAD, display_order = 202)]
    pub lengths: Vec<u64>,
    /// Context sweep: tokens generated per request.
    #[arg(long, default_value_t = 128, value_name = "TOKENS", help_heading = WORKLOAD, display_order = 203)]
    pub context_output_len: u64,
    /// Context sweep: concurrency of each length.
    ///
    /// The concurrency at which each length runs: one or more levels, e.g. 1,4.
    #[arg(long, value_delimiter = ',', default_value = "1", value_name = "LEVELS", help_heading = LOAD, display_order = 305)]
    pub context_concurrency: Vec<u32>,
    /// Context sweep: times each length runs per slot.
    ///
    /// Times each length runs per concurrency slot: a point sends repeats × concurrency
    /// requests.
    #[arg(long, default_value_t = 3, value_name = "N", help_heading = LOAD, display_order = 306)]
    pub context_repeats: u64,
    #[command(flatten)]
    pub context: ContextOpts,
    /// Unrecorded requests before the first sweep.
    #[arg(long, default_value_t = 2, help_heading = LOAD, display_order = 304)]
    pub warmup: u64,
    /// Run only this sweep.
    ///
    /// Run only one of the two sweeps [default: both].
    #[arg(long, value_enum, help_heading = LOAD, display_order = 308)]
    pub only: Option<OnlyArg>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl RunArgs {
    /// The checked plan; every error names the flag to fix.
    pub fn plan(&self) -> anyhow::Result<RunPlan> {
        let target = plan::target(&self.target)?;
        let output = plan::output(&self.output, &target)?;
        let throughput = || plan::throughput(&self.throughput);
        let context = || {
            plan::context(ContextFlags {
                lengths: &self.lengths,
                output_len: (self.context_output_len, "--context-output-len"),
                concurrency: (&self.context_concurrency, "--context-concurrency"),
                repeats: (self.context_repeats, "--context-repeats"),
                opts: &self.context,
            })
        };
        let sweeps = match self.only {
            Some(OnlyArg::Throughput) => Sweeps::Throughput(throughput()?),
            Some(OnlyArg::Context) => Sweeps::Context(context()?),
            None => Sweeps::Both(throughput()?, context()?),
        };
        if let Some(t) = match &sweeps {
            Sweeps::Throughput(t) | Sweeps::Both(t, _) => Some(t),
            Sweeps::Context(_) => None,
        } {
            plan::check_shapes(t, &output)?;
        }
        Ok(RunPlan {
            target,
            output,
            warmup: self.warmup,
            sweeps,
            resume: None,
        })
    }
}

pub(crate) async fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    super::sweep(super::plan_or_resume(&a.output, || a.plan())?).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn both_sweeps_defaults() {
        let cli = Cli::try_parse_from(["llmsweep", "run", "--only", "context"]).unwrap();
        let Command::Run(a) = cli.command else {
            panic!("not run")
        };
        assert_eq!(a.throughput.output_len, 500);
        assert_eq!((a.context_output_len, a.context_repeats), (128, 3));
        assert_eq!(a.only, Some(OnlyArg::Context));
    }
}
