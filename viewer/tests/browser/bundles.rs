//! Bundles made by the collector for the browser tests: two runs of `llmsweep run` against
//! differently configured simulated servers, one saved as `.json`, one as `.json.gz`, and a
//! file cut in half.

#![allow(dead_code)]

use std::path::PathBuf;

use clap::Parser;
use llmsweep::cli::{Cli, Command};
use llmsweep::load::{Interrupt, run_plan};
use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;

pub(crate) struct Made {
    pub dir: tempfile::TempDir,
    pub a: Bundle,
    pub b: Bundle,
    /// `kpro5.json`, `kpro6.json.gz`, `broken.json` inside `dir`.
    pub a_path: PathBuf,
    pub b_path: PathBuf,
    pub broken_path: PathBuf,
}

/// Sweeps both simulators at once and writes the three files.
pub(crate) async fn make() -> Made {
    let dir = tempfile::tempdir().expect("temp dir");
    let a_cfg = SimConfig {
        max_context: 4096,
        ..SimConfig::preset(Preset::Fast)
    };
    // kpro6 is slower at everything (prefill and decode take twice as long, two slots), so its
    // verdict is known: slower at every level.
    let fast = SimConfig::preset(Preset::Fast);
    let b_cfg = SimConfig {
        max_context: 4096,
        max_running: 2,
        prefill_a_s: fast.prefill_a_s * 2.0,
        prefill_b_s: fast.prefill_b_s * 2.0,
        decode_d0_s: fast.decode_d0_s * 2.0,
        decode_d1_s: fast.decode_d1_s * 2.0,
        ..fast.clone()
    };
    let (a, b) = tokio::join!(
        run(a_cfg, "kpro5", "gpu=2x RTX A6000"),
        run(b_cfg, "kpro6", "gpu=2x RTX 6000 Ada")
    );
    let a_path = dir.path().join("kpro5.json");
    let b_path = dir.path().join("kpro6.json.gz");
    let broken_path = dir.path().join("broken.json");
    let a_text = a.to_json().unwrap();
    std::fs::write(&a_path, &a_text).expect("write a");
    std::fs::write(&b_path, gzip(b.to_json().unwrap().as_bytes())).expect("write b");
    std::fs::write(&broken_path, &a_text[..a_text.len() / 2]).expect("write broken");
    Made {
        dir,
        a,
        b,
        a_path,
        b_path,
        broken_path,
    }
}

/// `llmsweep run` with a small throughput sweep and a context sweep that crosses the limit.
async fn run(cfg: SimConfig, label: &str, note: &str) -> Bundle {
    let sim = SimServer::start(cfg, 0).await.expect("simulator starts");
    let out = tempfile::tempdir().expect("out dir");
    let url = sim.url();
    let out_s = out.path().to_string_lossy().to_string();
    let args = [
        "llmsweep",
        "run",
        "--url",
        &url,
        "--label",
        label,
        "--seed",
        "7",
        "--out",
        &out_s,
        "--concurrency",
        "1,2,4",
        "--input-len",
        "256",
        "--output-len",
        "16",
        "--lengths",
        "512,1k,2k,8k",
        "--context-output-len",
        "16",
        "--repeats",
        "1",
        "--note",
        note,
    ];
    let Command::Run(a) = Cli::try_parse_from(args).expect("valid flags").command else {
        panic!("not a run command")
    };
    let plan = a.plan().expect("valid plan");
    let outcome = run_plan(
        &plan,
        vec!["llmsweep".into()],
        Interrupt::default(),
        std::sync::Arc::new(llmsweep::load::Silent),
    )
    .await
    .expect("sweep runs");
    sim.shutdown().await;
    let text = std::fs::read_to_string(&outcome.path).expect("bundle written");
    Bundle::from_json(&text).expect("bundle reads back")
}

/// A gzip file (RFC 1952) of `data`.
pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).expect("gzip in memory");
    e.finish().expect("gzip in memory")
}
