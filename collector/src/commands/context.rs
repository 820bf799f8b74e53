//! `llmsweep context`: the context sweep on its own.

use std::process::ExitCode;

use clap::Args;

use super::args::{ContextOpts, OutputArgs, TargetArgs, parse_len};
use super::plan::{self, ContextFlags};
use crate::load::{RunPlan, Sweeps};

#[derive(Debug, Clone, Args)]
pub struct ContextArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Input lengths in the server's tokens; `k` means thousands (30k = 30000).
    #[arg(long, value_delimiter = ',', default_value = "1k,8k,16k,30k,60k,100k", value_parser = parse_len)]
    pub lengths: Vec<u64>,
    /// Tokens generated per request.
    #[arg(long, default_value_t = 128)]
    pub output_len: u64,
    /// Concurrency at which each length runs (one or more levels).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub concurrency: Vec<u32>,
    /// Times each length runs per concurrency slot (a point sends repeats × concurrency requests).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub repeats: u64,
    #[command(flatten)]
    pub opts: ContextOpts,
    /// Unrecorded requests before the sweep.
    #[arg(long, default_value_t = 1)]
    pub warmup: u64,
}

impl ContextArgs {
    /// The checked plan; every error names the flag to fix.
    pub fn plan(&self) -> anyhow::Result<RunPlan> {
        let target = plan::target(&self.target)?;
        let output = plan::output(&self.output, &target)?;
        let context = plan::context(ContextFlags {
            lengths: &self.lengths,
            output_len: (self.output_len, "--output-len"),
            concurrency: (&self.concurrency, "--concurrency"),
            repeats: (self.repeats, "--repeats"),
            opts: &self.opts,
        })?;
        Ok(RunPlan {
            target,
            output,
            warmup: self.warmup,
            sweeps: Sweeps::Context(context),
            resume: None,
        })
    }
}

pub(crate) async fn run(a: ContextArgs) -> anyhow::Result<ExitCode> {
    super::sweep(super::plan_or_resume(&a.output, || a.plan())?).await
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn defaults_and_lengths_in_thousands() {
        let cli = Cli::try_parse_from(["llmsweep", "context"]).unwrap();
        let Command::Context(a) = cli.command else {
            panic!("not context")
        };
        assert_eq!(a.lengths, [1000, 8000, 16000, 30000, 60000, 100_000]);
        assert_eq!((a.output_len, a.repeats, a.warmup), (128, 3, 1));
        assert_eq!(a.concurrency, [1]);
    }
}
