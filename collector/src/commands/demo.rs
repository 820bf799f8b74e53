//! `llmsweep demo`: the simulated server on loopback, swept briefly, no server needed.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser};

use crate::cli::{Cli, Command};
use crate::sim::{Preset, SimConfig, SimServer};

#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Folder the bundle is written to.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Name of the demo run.
    #[arg(long, default_value = "demo-sim")]
    pub label: String,
}

/// `llmsweep demo`: the simulator on a free loopback port, a short sweep against it.
pub(crate) async fn run(a: DemoArgs) -> anyhow::Result<ExitCode> {
    let sim = SimServer::start(demo_sim(), 0)
        .await
        .context("cannot start the simulated server on 127.0.0.1")?;
    println!(
        "demo: llmsweep's simulated server (a test instrument with known timing, not a real engine) on {}\n",
        sim.url()
    );
    let url = sim.url();
    let out = a.out.to_string_lossy().to_string();
    let args = [
        "llmsweep",
        "run",
        "--url",
        &url,
        "--label",
        &a.label,
        "--out",
        &out,
        "--seed",
        "1",
        "--note",
        "server=llmsweep serve-sim (simulated)",
        "--timeout",
        "60",
        "--concurrency",
        "1,2,4,8,16,32,64",
        "--input-len",
        "512",
        "--output-len",
        "128",
        "--lengths",
        "1k,4k,8k,16k,30k,60k",
        "--context-output-len",
        "32",
        "--context-repeats",
        "2",
    ];
    let plan = match Cli::try_parse_from(args).map(|c| c.command) {
        Ok(Command::Run(r)) => r.plan()?,
        _ => anyhow::bail!("the demo's own command line does not parse"),
    };
    let code = super::sweep(plan).await;
    sim.shutdown().await;
    let code = code?;
    if code == ExitCode::SUCCESS {
        println!(
            "\nLook at it:                llmsweep view {out} --open\n\
             Point it at a real server: llmsweep run --url http://127.0.0.1:30000 --label myhost"
        );
    }
    Ok(code)
}

/// The demo's simulator: the fast preset's decoding with a prefill curve that grows with context
/// like a real deployment's (20 ms + 20 µs/token + 2e-10 s/token²), so the context sweep has a
/// shape to show; 32K context, so the 60K length is skipped and predicted.
fn demo_sim() -> SimConfig {
    SimConfig {
        prefill_a_s: 0.020,
        prefill_b_s: 20e-6,
        prefill_c_s: 2e-10,
        ..SimConfig::preset(Preset::Fast)
    }
}
