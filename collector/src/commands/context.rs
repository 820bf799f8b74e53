//! `llmsweep context`: the context sweep on its own.

use std::process::ExitCode;

use clap::Args;

use super::args::{
    ContextOpts, LOAD, OutputArgs, SHORT_HELP_FOOTER, TELEMETRY, TargetArgs, WORKLOAD, parse_len,
};
use super::plan::{self, ContextFlags};
use crate::load::{RunPlan, Sweeps};

// The flags' headings appear in the order their first flags are added: `output` is flattened
// last, and `mut_arg` re-adds a flag at the end: --dataset (refused by a context sweep, so left
// out of -h), --goodput under a heading of its own (there is no open loop here), then
// --gpu-telemetry, so that Telemetry comes last.
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("dataset", |a| a.hide_short_help(true)),
    mut_arg("goodput", |a| a.help_heading("Goodput")),
    mut_arg("gpu_telemetry", |a| a.help_heading(TELEMETRY)),
    after_help = SHORT_HELP_FOOTER,
    after_long_help = "Examples:
  # Sweep the default input lengths (1k to 100k tokens) of a server, named kpro5 in results
  llmsweep context --url http://127.0.0.1:30000 --label kpro5

  # Longer contexts, also at 4 requests at once; send the lengths beyond the server's limit
  llmsweep context --lengths 8k,32k,128k --concurrency 1,4 --force

  # Chat API, 256 tokens generated per request, each length five times
  llmsweep context --api chat --output-len 256 --repeats 5"
)]
pub struct ContextArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Input lengths in tokens; 8k = 8000.
    ///
    /// Input lengths in the server's tokens; `k` means thousands (30k = 30000).
    #[arg(long, value_delimiter = ',', default_value = "1k,8k,16k,30k,60k,100k", value_parser = parse_len, help_heading = WORKLOAD, display_order = 202)]
    pub lengths: Vec<u64>,
    /// Tokens generated per request.
    #[arg(long, default_value_t = 128, value_name = "TOKENS", help_heading = WORKLOAD, display_order = 203)]
    pub output_len: u64,
    /// Concurrency at which each length runs.
    ///
    /// One or more levels, e.g. 1,4.
    #[arg(long, value_delimiter = ',', default_value = "1", value_name = "LEVELS", help_heading = LOAD, display_order = 300)]
    pub concurrency: Vec<u32>,
    /// Times each length runs per concurrency slot.
    ///
    /// A point sends repeats × concurrency requests.
    #[arg(long, default_value_t = 3, value_name = "N", help_heading = LOAD, display_order = 303)]
    pub repeats: u64,
    #[command(flatten)]
    pub opts: ContextOpts,
    /// Unrecorded requests before the sweep.
    #[arg(long, default_value_t = 1, help_heading = LOAD, display_order = 304)]
    pub warmup: u64,
    #[command(flatten)]
    pub output: OutputArgs,
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
