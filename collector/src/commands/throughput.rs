//! `llmsweep throughput`: the throughput sweep on its own.

use std::process::ExitCode;

use clap::Args;

use super::args::{LOAD, OutputArgs, SHORT_HELP_FOOTER, TELEMETRY, TargetArgs, ThroughputOpts};
use super::plan;
use crate::load::{RunPlan, Sweeps};

// The flags' headings appear in the order their first flags are added: `output` is flattened
// last, and `mut_arg` re-adds --gpu-telemetry at the end so that Telemetry comes last.
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("gpu_telemetry", |a| a.help_heading(TELEMETRY)),
    after_help = SHORT_HELP_FOOTER,
    after_long_help = "Examples:
  # Sweep the default concurrency levels (1 to 100) of a server, named kpro5 in results
  llmsweep throughput --url http://127.0.0.1:30000 --label kpro5

  # Chat API, a given model, 2000-token prompts, 60 s per level
  llmsweep throughput --api chat --model Qwen/Qwen3-32B --input-len 2000 --duration 60

  # Open loop: 1, 2 and 4 requests/s, counting goodput against TTFT and TPOT bounds
  llmsweep throughput --rates 1,2,4 --goodput ttft=0.5,tpot=0.05

  # The highest request rate at which 90 % of requests meet those bounds
  llmsweep throughput --find-max-rate --goodput ttft=0.5,tpot=0.05 --label kpro5"
)]
pub struct ThroughputArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub sweep: ThroughputOpts,
    /// Unrecorded requests before the first level.
    ///
    /// They warm the server and measure the tokens the server adds to each prompt.
    #[arg(long, default_value_t = 2, help_heading = LOAD, display_order = 304)]
    pub warmup: u64,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl ThroughputArgs {
    /// The checked plan; every error names the flag to fix.
    pub fn plan(&self) -> anyhow::Result<RunPlan> {
        let target = plan::target(&self.target)?;
        let output = plan::output(&self.output, &target)?;
        let throughput = plan::throughput(&self.sweep)?;
        plan::check_shapes(&throughput, &output)?;
        Ok(RunPlan {
            target,
            output,
            warmup: self.warmup,
            sweeps: Sweeps::Throughput(throughput),
            resume: None,
        })
    }
}

pub(crate) async fn run(a: ThroughputArgs) -> anyhow::Result<ExitCode> {
    super::sweep(super::plan_or_resume(&a.output, || a.plan())?).await
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use std::path::PathBuf;

    use crate::commands::args::ApiArg;

    #[test]
    fn defaults_match_the_documented_ones() {
        let cli = Cli::try_parse_from(["llmsweep", "throughput"]).unwrap();
        let Command::Throughput(a) = cli.command else {
            panic!("not throughput")
        };
        assert_eq!(a.sweep.concurrency, None);
        let plan = crate::commands::plan::throughput(&a.sweep).unwrap();
        assert_eq!(plan.concurrency, [1, 2, 4, 8, 16, 32, 64, 100]);
        assert!(plan.until_saturated);
        assert_eq!(
            (a.sweep.input_len, a.sweep.output_len, a.warmup),
            (1000, 500, 2)
        );
        assert_eq!(a.target.url, "http://127.0.0.1:30000");
        assert_eq!(a.target.api, ApiArg::Completions);
        assert_eq!(a.output.out, PathBuf::from("results"));
    }

    #[test]
    fn notes_are_repeatable() {
        let cli = Cli::try_parse_from([
            "llmsweep",
            "throughput",
            "--note",
            "gpu=2x RTX A6000",
            "--note",
            "tp=2",
        ])
        .unwrap();
        let Command::Throughput(a) = cli.command else {
            panic!("not throughput")
        };
        assert_eq!(a.output.notes[0], ("gpu".into(), "2x RTX A6000".into()));
        assert_eq!(a.output.notes.len(), 2);
        let err = Cli::try_parse_from(["llmsweep", "throughput", "--note", "novalue"]).unwrap_err();
        assert!(err.to_string().contains("expected KEY=VALUE"));
    }

    #[test]
    fn requests_and_duration_exclude_each_other() {
        assert!(
            Cli::try_parse_from([
                "llmsweep",
                "throughput",
                "--requests",
                "4",
                "--duration",
                "5"
            ])
            .is_err()
        );
    }
}
