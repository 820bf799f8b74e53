//! A bundle that cannot be written loses nothing: the sweep goes on with the levels in memory,
//! and the last write falls back to the temp folder.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::common::sim::{SERIAL, plan};
use llmsweep::load::Interrupt;
use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::PointStatus;

const ARGS: [&str; 10] = [
    "--concurrency",
    "1,2,4,8",
    "--input-len",
    "50",
    "--output-len",
    "16",
    "--requests",
    "16",
    "--warmup",
    "0",
];

/// Runs the sweep into `out`, calling `meddle` once the first level is on disk.
async fn sweep_into(out: &Path, meddle: impl FnOnce() + Send + 'static) -> (PathBuf, Bundle) {
    let _turn = SERIAL.lock().await;
    let cfg = SimConfig {
        decode_d0_s: 0.005,
        ..SimConfig::preset(Preset::Fast)
    };
    let sim = SimServer::start(cfg, 0).await.unwrap();
    let p = plan(&sim.url(), out, &ARGS);
    let dir = out.to_path_buf();
    let watcher = tokio::spawn(async move {
        loop {
            let first_level_written = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .filter_map(|t| Bundle::from_json(&t).ok())
                .any(|b| b.sweeps.first().is_some_and(|s| !s.points.is_empty()));
            if first_level_written {
                meddle();
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let outcome =
        crate::common::sim::run_silently(&p, vec!["llmsweep".into()], Interrupt::default())
            .await
            .unwrap();
    watcher.abort();
    sim.shutdown().await;
    let b = Bundle::from_json(&std::fs::read_to_string(&outcome.path).unwrap()).unwrap();
    (outcome.path, b)
}

fn every_level_measured(b: &Bundle) {
    assert!(b.complete);
    let levels: Vec<u32> = b.sweeps[0].points.iter().map(|p| p.concurrency).collect();
    assert_eq!(levels, [1, 2, 4, 8]);
    assert!(
        b.sweeps[0]
            .points
            .iter()
            .all(|p| p.status == PointStatus::Ok)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_removed_mid_run_ends_in_the_temp_folder_with_every_level() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("results");
    std::fs::create_dir(&out).unwrap();
    let gone = out.clone();
    let (path, b) = sweep_into(&out, move || std::fs::remove_dir_all(&gone).unwrap()).await;
    assert_eq!(
        path.parent(),
        Some(std::env::temp_dir().as_path()),
        "{path:?}"
    );
    every_level_measured(&b);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_keeps_the_levels_in_memory_and_falls_back() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("small");
    std::fs::create_dir(&out).unwrap();
    // A 32 KiB filesystem: the bundle outgrows it after a level or two.
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=32k", "tmpfs"])
        .arg(&out)
        .output();
    if !mounted.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("NOTICE: skipping: a full-disk test needs to mount a small tmpfs (run as root)");
        return;
    }
    let (path, b) = sweep_into(&out, || {}).await;
    let _ = Command::new("umount").arg(&out).status();
    assert_eq!(
        path.parent(),
        Some(std::env::temp_dir().as_path()),
        "{path:?}"
    );
    every_level_measured(&b);
    std::fs::remove_file(path).unwrap();
}
