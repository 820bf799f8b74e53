//! How often `compare` is right about two runs against serve-sim's kpro5 preset: pairs of
//! default throughput sweeps (every level run until it is precise), the second against the same
//! server (false alarms), one `--slowdown` times slower (detection), or one admitting 12
//! requests at once instead of 16 (a capacity loss with faster users).
//!
//! ```text
//! cargo run --release -p llmsweep --example verdict_pairs -- --pairs 40 --case same
//! cargo run --release -p llmsweep --example verdict_pairs -- --pairs 40 --case slower
//! cargo run --release -p llmsweep --example verdict_pairs -- --pairs 10 --case max-running-12
//! ```
//!
//! `--speed 0.1` (the default) runs the simulator ten times faster than kpro5 (every cost times
//! 0.1), so a pair takes about a minute; `--parallel` pairs run at once (their load is light:
//! the simulator sleeps between steps). Not run by the tests or CI: see BENCHMARKS.md.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use clap::Parser;
use llmsweep::cli::{Cli, Command};
use llmsweep::load::{Interrupt, Silent, run_plan};
use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;
use llmsweep_shared::compare::verdict::verdicts;
use llmsweep_shared::compare::{NEUTRAL_PCT, RunInput, compare, gate::gate};
use llmsweep_shared::curves::Metric;

#[derive(Parser)]
struct Args {
    /// Pairs of runs.
    #[arg(long, default_value_t = 20)]
    pairs: usize,
    /// same, slower or max-running-12.
    #[arg(long, default_value = "same")]
    case: String,
    /// With --case slower: how much slower the second server is.
    #[arg(long, default_value_t = 1.05)]
    slowdown: f64,
    /// Every simulator cost times this (0.1: ten times faster than kpro5).
    #[arg(long, default_value_t = 0.1)]
    speed: f64,
    /// Pairs run at once.
    #[arg(long, default_value_t = 4)]
    parallel: usize,
    #[arg(long, default_value = "1,2,4,8,16,32,64,100")]
    concurrency: String,
}

/// One pair's findings.
#[derive(Debug, Default)]
struct Found {
    outcome: String,
    /// Levels where steady tok/s was slower beyond the noise.
    slower_at: Vec<u64>,
    /// Levels where it was faster beyond the noise.
    faster_at: Vec<u64>,
    /// The gate with --fail-if-slower 5: pass, regression or cannot tell.
    gate: &'static str,
    /// Each level's steady tok/s precision (±%) in the first run.
    precision: Vec<f64>,
    wall_s: f64,
}

async fn one_run(cfg: SimConfig, label: &str, levels: &str) -> (Bundle, f64) {
    let sim = SimServer::start(cfg, 0).await.expect("simulator starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().to_string_lossy().to_string();
    let url = sim.url();
    let argv = [
        "llmsweep",
        "throughput",
        "--url",
        &url,
        "--label",
        label,
        "--out",
        &out,
        "--concurrency",
        levels,
    ];
    let Command::Throughput(a) = Cli::try_parse_from(argv).expect("flags").command else {
        unreachable!()
    };
    let plan = a.plan().expect("plan");
    let began = std::time::Instant::now();
    let outcome = run_plan(
        &plan,
        vec!["llmsweep".into()],
        Interrupt::default(),
        Arc::new(Silent),
    )
    .await
    .expect("run");
    let wall = began.elapsed().as_secs_f64();
    sim.shutdown().await;
    let text = std::fs::read_to_string(&outcome.path).expect("bundle");
    (Bundle::from_json(&text).expect("bundle reads"), wall)
}

async fn pair(args: Arc<Args>, index: u64) -> Found {
    // Each run its own seed: a speculative server's accepted drafts differ from run to run,
    // and with one seed the two runs of a pair would draw the same ones.
    let base = SimConfig {
        seed: 2 * index + 1,
        ..SimConfig::preset(Preset::Kpro5).slowed(args.speed)
    };
    let second = SimConfig {
        seed: 2 * index + 2,
        ..base.clone()
    };
    let other = match args.case.as_str() {
        "same" => second,
        "slower" => second.slowed(args.slowdown),
        "max-running-12" => SimConfig {
            max_running: 12,
            ..second
        },
        other => panic!("unknown case {other}"),
    };
    let (a, wall) = one_run(base, "a", &args.concurrency).await;
    let (b, _) = one_run(other, "b", &args.concurrency).await;
    let inputs = [
        RunInput {
            label: "a",
            bundle: &a,
        },
        RunInput {
            label: "b",
            bundle: &b,
        },
    ];
    let cmp = compare(&inputs, 0);
    let v = verdicts(&cmp, NEUTRAL_PCT).remove(0);
    let steady = v.metrics.iter().find(|m| m.metric == Metric::SteadyTokS);
    for m in &v.metrics {
        for (word, keys) in [("better", &m.better), ("worse", &m.worse)] {
            for k in keys {
                let c = m.changes.iter().find(|a| a.key == *k).map(|a| a.change);
                eprintln!("  {} {word} at C={k}: {c:?}", m.metric.label());
            }
        }
    }
    let g = gate(&cmp, 5.0, None).expect("gate");
    for line in g.unresolved.iter().chain(&g.regressions) {
        eprintln!("  gate: {line}");
    }
    Found {
        outcome: v.outcome.word().to_string(),
        slower_at: steady.map(|m| m.worse.clone()).unwrap_or_default(),
        faster_at: steady.map(|m| m.better.clone()).unwrap_or_default(),
        gate: if !g.regressions.is_empty() {
            "fails"
        } else if !g.unresolved.is_empty() {
            "cannot tell"
        } else {
            "passes"
        },
        precision: a.sweeps[0]
            .points
            .iter()
            .filter_map(|p| p.summary.as_ref()?.steady_pm_pct)
            .collect(),
        wall_s: wall,
    }
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, run());
}

async fn run() {
    let args = Arc::new(Args::parse());
    let levels: Vec<u64> = args
        .concurrency
        .split(',')
        .map(|c| c.parse().expect("a level"))
        .collect();
    let sem = Arc::new(tokio::sync::Semaphore::new(args.parallel));
    let mut tasks = Vec::new();
    for index in 0..args.pairs {
        let (args, sem) = (args.clone(), sem.clone());
        tasks.push(tokio::task::spawn_local(async move {
            let _p = sem.acquire().await.expect("semaphore");
            pair(args, index as u64).await
        }));
    }
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut gates: BTreeMap<&str, usize> = BTreeMap::new();
    let mut slower: BTreeMap<u64, usize> = BTreeMap::new();
    let mut faster: BTreeMap<u64, usize> = BTreeMap::new();
    let (mut every_level, mut worst_pm, mut walls) = (0, 0.0f64, Vec::new());
    for t in tasks {
        let f = t.await.expect("pair");
        eprintln!(
            "{:<22} gate {:<11} slower at {:?} faster at {:?}",
            f.outcome, f.gate, f.slower_at, f.faster_at
        );
        *outcomes.entry(f.outcome).or_default() += 1;
        *gates.entry(f.gate).or_default() += 1;
        for k in &f.slower_at {
            *slower.entry(*k).or_default() += 1;
        }
        for k in &f.faster_at {
            *faster.entry(*k).or_default() += 1;
        }
        if levels.iter().all(|k| f.slower_at.contains(k)) {
            every_level += 1;
        }
        worst_pm = f.precision.iter().copied().fold(worst_pm, f64::max);
        walls.push(f.wall_s);
    }
    let n = args.pairs;
    println!(
        "{n} pairs, case {} (slowdown {}), simulator speed ×{}",
        args.case, args.slowdown, args.speed
    );
    println!("verdicts: {outcomes:?}");
    println!("gate --fail-if-slower 5: {gates:?}");
    for k in &levels {
        println!(
            "C={k}: steady tok/s slower beyond the noise in {} of {n}, faster in {}",
            slower.get(k).copied().unwrap_or(0),
            faster.get(k).copied().unwrap_or(0)
        );
    }
    println!("slower at every level: {every_level} of {n}");
    println!("widest steady interval of a first run: ±{worst_pm:.2} %");
    walls.sort_by(f64::total_cmp);
    println!(
        "a run's wall time: median {:.0} s, longest {:.0} s",
        walls[walls.len() / 2],
        walls[walls.len() - 1]
    );
}
