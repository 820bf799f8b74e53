//! The command line's top level: the subcommands. Each command's flags and handler are its own
//! file in [`crate::commands`].

use clap::{Parser, Subcommand};

use crate::commands::{
    compare::CompareArgs, context::ContextArgs, demo::DemoArgs, import::ImportArgs, plot::PlotArgs,
    report::ReportArgs, run::RunArgs, selftest::SelftestArgs, serve_sim::SimArgs,
    throughput::ThroughputArgs, view::ViewArgs,
};
use crate::load::RunPlan;

#[derive(Debug, Parser)]
#[command(
    name = "llmsweep",
    version,
    about = "Measure how fast an OpenAI-compatible LLM server really serves",
    long_about = "Measure how fast an OpenAI-compatible LLM server (SGLang, vLLM, llama.cpp, TGI…) really \
                  serves: throughput against concurrency and latency against context length, every \
                  request's timings kept in a self-describing JSON bundle.\n\nTry it without a server: llmsweep demo"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Throughput sweep: tokens/s, TTFT and decode speed at each concurrency.
    Throughput(ThroughputArgs),
    /// Context sweep: TTFT, prefill and decode speed at each input length.
    Context(ContextArgs),
    /// Both sweeps into one bundle, the way a new deployment is validated.
    Run(RunArgs),
    /// Compare runs against a baseline: every metric at every level, and what else differs.
    Compare(CompareArgs),
    /// Write one self-contained HTML report of bundles, to open from disk or send around.
    Report(ReportArgs),
    /// Turn another tool's results (a text table, vLLM or SGLang benchmark output) into a bundle.
    Import(ImportArgs),
    /// Serve the viewer and a folder of bundles on 127.0.0.1, to pick runs from in a browser.
    View(ViewArgs),
    /// Draw one of the viewer's charts as an SVG or PNG image, for slides and documents.
    Plot(PlotArgs),
    /// Run llmsweep's simulated server (a test instrument with known timing, not a real engine).
    ServeSim(SimArgs),
    /// Start the simulated server on loopback, sweep it briefly, and write a bundle.
    Demo(DemoArgs),
    /// Measure this client's own limits: tokens/s, CPU, memory and timing error against a
    /// loopback endpoint that costs next to nothing.
    Selftest(SelftestArgs),
}

impl Command {
    /// The checked plan of a sweep command (`throughput`, `context`, `run`); `None` for the
    /// others.
    pub fn sweep_plan(&self) -> Option<anyhow::Result<RunPlan>> {
        match self {
            Command::Throughput(a) => Some(a.plan()),
            Command::Context(a) => Some(a.plan()),
            Command::Run(a) => Some(a.plan()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
