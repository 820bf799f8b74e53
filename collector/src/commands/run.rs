//! `llmsweep run`: both sweeps into one bundle, the way a new deployment is validated.

use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::args::{ContextOpts, OutputArgs, TargetArgs, ThroughputOpts, parse_len};
use super::plan::{self, ContextFlags};
use crate::load::{RunPlan, Sweeps};

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
    /// Context sweep: times each length runs per concurrency slot.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub context_repeats: u64,
    #[command(flatten)]
    pub context: ContextOpts,
    /// Unrecorded requests before the first sweep.
    #[arg(long, default_value_t = 2)]
    pub warmup: u64,
    /// Run only one of the two sweeps.
    #[arg(long, value_enum)]
    pub only: Option<OnlyArg>,
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
