//! Helpers for tests that sweep llmsweep's simulated server in-process.

use std::path::Path;

use clap::Parser;
use llmsweep::cli::{Cli, Command};
use llmsweep::load::Interrupt;
use llmsweep::load::{Outcome, Recorded, Recorder, RunPlan, run_plan};
use llmsweep::sim::{SimConfig, SimServer, SimStats};
use llmsweep_shared::Bundle;

/// A finished sweep against a simulator.
pub(crate) struct Swept {
    pub bundle: Bundle,
    pub outcome: Outcome,
    pub stats: SimStats,
    pub dir: tempfile::TempDir,
    /// The text prompts the simulator received, in arrival order.
    pub received: Vec<String>,
    /// What the engine told of the run, in order.
    pub events: Vec<Recorded>,
}

/// Parses `llmsweep throughput <args>` into a plan.
pub(crate) fn plan(url: &str, out: &Path, args: &[&str]) -> RunPlan {
    let mut all = vec![
        "llmsweep",
        "throughput",
        "--url",
        url,
        "--label",
        "sim",
        "--seed",
        "7",
    ];
    let out = out.to_string_lossy().to_string();
    all.extend(["--out", out.as_str()]);
    all.extend_from_slice(args);
    let Command::Throughput(a) = Cli::try_parse_from(all).expect("valid flags").command else {
        panic!("not a throughput command")
    };
    a.plan().expect("valid plan")
}

/// Runs a throughput sweep with `args` against a fresh simulator configured by `cfg`.
pub(crate) async fn sweep(cfg: SimConfig, args: &[&str]) -> Swept {
    sweep_with(cfg, args, Interrupt::default(), || {}).await
}

/// Sweeps in one test process run one at a time: timing and client-CPU checks would otherwise
/// measure each other.
pub(crate) static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Like [`sweep`], interrupted `after` the sweep starts, as a first Ctrl-C does; with `abort`
/// requests in flight are aborted at once, as a second Ctrl-C does.
pub(crate) async fn sweep_interrupted(
    after: std::time::Duration,
    abort: bool,
    cfg: SimConfig,
    args: &[&str],
) -> Swept {
    let interrupt = Interrupt::default();
    let stop = interrupt.clone();
    let arm = move || {
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            stop.stop_sending.cancel();
            if abort {
                stop.abort.cancel();
            }
        });
    };
    sweep_with(cfg, args, interrupt, arm).await
}

pub(crate) async fn sweep_with(
    cfg: SimConfig,
    args: &[&str],
    interrupt: Interrupt,
    on_start: impl FnOnce(),
) -> Swept {
    let _turn = SERIAL.lock().await;
    let sim = SimServer::start(cfg, 0).await.expect("simulator starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let plan = plan(&sim.url(), dir.path(), args);
    on_start();
    let recorder = std::sync::Arc::new(Recorder::default());
    let outcome = run_plan(&plan, vec!["llmsweep".into()], interrupt, recorder.clone())
        .await
        .expect("sweep runs");
    let stats = sim.stats();
    let received = sim.received_prompts();
    sim.shutdown().await;
    let text = std::fs::read_to_string(&outcome.path).expect("bundle written");
    let bundle = Bundle::from_json(&text).expect("bundle reads back");
    Swept {
        bundle,
        outcome,
        stats,
        dir,
        received,
        events: recorder.events(),
    }
}

/// Runs `llmsweep <command> <args>` (`context` or `run`) against a fresh simulator.
pub(crate) async fn sweep_command(cfg: SimConfig, command: &str, args: &[&str]) -> Swept {
    let _turn = SERIAL.lock().await;
    let sim = SimServer::start(cfg, 0).await.expect("simulator starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let url = sim.url();
    let out = dir.path().to_string_lossy().to_string();
    let mut all = vec![
        "llmsweep", command, "--url", &url, "--label", "sim", "--seed", "7", "--out", &out,
    ];
    all.extend_from_slice(args);
    let command = Cli::try_parse_from(all).expect("valid flags").command;
    let Some(plan) = command.sweep_plan() else {
        panic!("not a sweep command: {command:?}")
    };
    let plan = plan.expect("valid plan");
    let recorder = std::sync::Arc::new(Recorder::default());
    let outcome = run_plan(
        &plan,
        vec!["llmsweep".into()],
        Interrupt::default(),
        recorder.clone(),
    )
    .await
    .expect("sweep runs");
    let stats = sim.stats();
    let received = sim.received_prompts();
    sim.shutdown().await;
    let text = std::fs::read_to_string(&outcome.path).expect("bundle written");
    Swept {
        bundle: Bundle::from_json(&text).expect("bundle reads back"),
        outcome,
        stats,
        dir,
        received,
        events: recorder.events(),
    }
}

/// `|got − want| ≤ abs + rel·want`, with a message that shows both.
pub(crate) fn assert_close(what: &str, got: f64, want: f64, abs: f64, rel: f64) {
    let tol = abs + rel * want.abs();
    assert!(
        (got - want).abs() <= tol,
        "{what}: measured {got:.5}, ground truth {want:.5}, tolerance ±{tol:.5}"
    );
}

/// `lo ≤ got ≤ hi`, with a message that shows all three.
pub(crate) fn assert_between(what: &str, got: f64, lo: f64, hi: f64) {
    assert!(
        (lo..=hi).contains(&got),
        "{what}: measured {got:.5}, expected between {lo:.5} and {hi:.5}"
    );
}

/// Runs `plan` in-process with nobody watching its events.
pub(crate) async fn run_silently(
    plan: &RunPlan,
    command_line: Vec<String>,
    interrupt: Interrupt,
) -> anyhow::Result<Outcome> {
    run_plan(
        plan,
        command_line,
        interrupt,
        std::sync::Arc::new(llmsweep::load::Silent),
    )
    .await
}
