//! A team's history at scale: one real run of the simulator, copied into `--runs` bundles of
//! `--labels` hosts over as many nights (each as noisy as its own interval says, some hosts
//! slowed 5 % from a night on), written into a folder for `llmsweep index`, `history` and
//! `view` to be timed on. `benchmarks/team_history.sh` runs it and times them.
//!
//! ```sh
//! cargo run --release -p llmsweep --example team_history -- --runs 1000 --labels 20 --out /tmp/team
//! ```

use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use llmsweep::cli::{Cli, Command};
use llmsweep::load::{Interrupt, Silent, run_plan};
use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;
use llmsweep_shared::compare::interval::{Spread, estimate};
use llmsweep_shared::curves::Metric;
use llmsweep_shared::test_support::{Normal, slowed};

#[derive(Debug, Parser)]
struct Args {
    /// Bundles to write in all.
    #[arg(long, default_value_t = 1000)]
    runs: usize,
    /// Hosts (labels) they are spread over.
    #[arg(long, default_value_t = 20)]
    labels: usize,
    /// From this night on, every other host serves 5 % slower (0: never).
    #[arg(long, default_value_t = 0)]
    slow_from: usize,
    /// Folder to write them into (created).
    #[arg(long)]
    out: PathBuf,
}

/// `b` as if every request had taken `factor` times as long, run `night` of host `label`.
fn scaled(b: &Bundle, factor: f64, label: &str, night: usize) -> Bundle {
    let mut b = slowed(b, factor);
    b.created_at = chrono_like(night);
    b.label = label.to_string();
    b.id = format!("{}-{label}-{night}", b.id);
    b
}

/// Night `n` after 2024-01-01, as RFC 3339 (no calendar crate needed: 28-day months).
fn chrono_like(n: usize) -> String {
    let (y, rest) = (2024 + n / 336, n % 336);
    format!("{y}-{:02}-{:02}T02:00:00Z", rest / 28 + 1, rest % 28 + 1)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    std::fs::create_dir_all(&a.out)?;
    let sim = SimServer::start(SimConfig::preset(Preset::Fast), 0).await?;
    let tmp = std::env::temp_dir().join(format!("team-history-seed-{}", std::process::id()));
    let args = [
        "llmsweep",
        "throughput",
        "--url",
        &sim.url(),
        "--label",
        "seed",
        "--concurrency",
        "1,4",
        "--input-len",
        "20",
        "--output-len",
        "32",
        "--requests",
        "48",
        "--out",
        tmp.to_str().unwrap_or("/tmp/team-history-seed"),
    ];
    let Command::Throughput(t) = Cli::try_parse_from(args)?.command else {
        anyhow::bail!("not a throughput command");
    };
    let outcome = run_plan(&t.plan()?, vec![], Interrupt::default(), Arc::new(Silent)).await?;
    sim.shutdown().await;
    let seed = Bundle::from_json(&std::fs::read_to_string(&outcome.path)?)?;
    let _ = std::fs::remove_dir_all(&tmp);
    let point = seed.sweeps[0]
        .points
        .iter()
        .find(|p| p.concurrency == 4)
        .ok_or_else(|| anyhow::anyhow!("no C=4 point"))?;
    let se = match estimate(Metric::SteadyTokS, point).map(|e| e.spread) {
        Some(Spread::LogSe(se) | Spread::LogSeT { se, .. }) => se,
        other => anyhow::bail!("the seed run's steady tok/s at C=4 has no interval: {other:?}"),
    };
    let mut g = Normal(0x2545_f491_4f6c_dd1d);
    for i in 0..a.runs {
        let (host, night) = (i % a.labels, i / a.labels);
        let slow = a.slow_from > 0 && night >= a.slow_from && host % 2 == 1;
        let factor = (se * g.draw()).exp() * if slow { 1.0 / 0.95 } else { 1.0 };
        let label = format!("host{host:02}");
        let b = scaled(&seed, factor, &label, night);
        std::fs::write(
            a.out.join(format!("{label}-run-{night:04}.json")),
            b.to_json()?,
        )?;
    }
    println!(
        "wrote {} bundles of {} hosts into {} (steady tok/s at C=4 known to ±{:.1} %)",
        a.runs,
        a.labels,
        a.out.display(),
        (se * 1.96).exp_m1() * 100.0
    );
    Ok(())
}
