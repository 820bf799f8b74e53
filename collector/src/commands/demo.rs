//! `llmsweep demo`: the simulated server on loopback, swept briefly, no server needed.

use std::path::PathBuf;
use std::process::ExitCode;

use std::time::Duration;

use anyhow::Context;
use clap::Args;
use llmsweep_shared::bundle::{Api, GpuTelemetry};

use crate::load::plan::secrets::Credentials;
use crate::load::{
    ContextPlan, OutputPlan, Precision, RunPlan, Sweeps, TargetPlan, ThroughputPlan,
    random_prefix_seed,
};
use crate::sim::{Preset, SimConfig, SimServer};

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # Sweep the simulated server and write the bundle into ./results
  llmsweep demo

  # Elsewhere and under another name, then look at it
  llmsweep demo --out /tmp/llmsweep-demo --label first-try
  llmsweep view /tmp/llmsweep-demo --open")]
pub struct DemoArgs {
    /// Folder the bundle is written to.
    #[arg(long, short = 'o', alias = "output", default_value = "results")]
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
    outln!(
        "demo: llmsweep's simulated server (a test instrument with known timing, not a real engine) on {}\n",
        sim.url()
    );
    let out = a.out.to_string_lossy().to_string();
    let plan = demo_plan(&sim.url(), &a)?;
    let code = super::sweep(plan).await;
    sim.shutdown().await;
    let code = code?;
    if code == ExitCode::SUCCESS {
        outln!(
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

/// The demo's run: both sweeps, short, against the simulator at `url` (on loopback).
fn demo_plan(url: &str, a: &DemoArgs) -> anyhow::Result<RunPlan> {
    if a.label.trim().is_empty() {
        anyhow::bail!("--label must not be empty");
    }
    let target = TargetPlan {
        url: url.to_string(),
        shown_url: url.to_string(),
        host: "127.0.0.1".into(),
        api: Api::Completions,
        model: None,
        credentials: Credentials::default(),
        timeout: Duration::from_secs(60),
        wait_server: Duration::from_secs(300),
        cold_connections: false,
        gpu_telemetry: GpuTelemetry::Local,
        extra_body: None,
    };
    let output = OutputPlan {
        label: a.label.trim().to_string(),
        notes: [("server".into(), "llmsweep serve-sim (simulated)".into())].into(),
        gpus: None,
        out: a.out.clone(),
        store: None,
        seed: 1,
        prefix_seed: random_prefix_seed(),
        wide: false,
        slo: None,
        shared_prefix_len: 0,
        dataset: None,
    };
    let throughput = ThroughputPlan {
        concurrency: vec![1, 2, 4, 8, 16, 32, 64],
        until_saturated: true,
        input_len: 512,
        output_len: 128,
        shapes: Vec::new(),
        requests: None,
        duration: None,
        repeats: 1,
        open: None,
        spread: 0.0,
        turns: 1,
        precision: Some(Precision {
            steady_pct: 2.0,
            cap: Duration::from_secs(20),
            running: None,
            alone_s: None,
        }),
    };
    let context = ContextPlan {
        lengths: vec![1000, 4000, 8000, 16_000, 30_000, 60_000],
        output_len: 32,
        concurrency: vec![1],
        repeats: 2,
        force: false,
    };
    Ok(RunPlan {
        target,
        output,
        warmup: 2,
        sweeps: Sweeps::Both(throughput, context),
        resume: None,
    })
}
