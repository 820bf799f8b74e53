//! The client-bound check: the collector's own CPU use per level, with the in-process
//! simulator's thread left out. In a file of its own, since a spinning thread would count against
//! any other test running in the same process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::sim::sweep;
use llmsweep::sim::{Preset, SimConfig};
use llmsweep_shared::bundle::FlagKind;

fn fast() -> SimConfig {
    SimConfig::preset(Preset::Fast)
}

fn kinds(p: &llmsweep_shared::bundle::Point) -> Vec<FlagKind> {
    p.flags.iter().map(|f| f.kind).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_busy_client_is_flagged_client_bound() {
    // First a quiet client: the simulator's own thread is not counted as the client's.
    let cfg = SimConfig {
        decode_d0_s: 0.01,
        ..fast()
    };
    let quiet = sweep(
        cfg,
        &[
            "--concurrency",
            "8",
            "--input-len",
            "20",
            "--output-len",
            "50",
            "--warmup",
            "0",
        ],
    )
    .await;
    let p = &quiet.bundle.sweeps[0].points[0];
    let quiet_cpu = p.client_cpu.unwrap();
    assert!(quiet_cpu < 0.7, "{quiet_cpu}");
    assert!(!kinds(p).contains(&FlagKind::ClientBound));

    // Then a busy one: three threads of the collector's own process spinning for the level.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spin: Vec<_> = (0..3)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 1u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            })
        })
        .collect();
    let cfg = SimConfig {
        decode_d0_s: 0.02,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1",
            "--input-len",
            "20",
            "--output-len",
            "60",
            "--requests",
            "2",
            "--warmup",
            "0",
        ],
    )
    .await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spin.into_iter().for_each(|t| t.join().unwrap());
    let p = &s.bundle.sweeps[0].points[0];
    let busy_cpu = p.client_cpu.unwrap();
    // 2 requests of 60 tokens at 20 ms each: long enough (≥ 1 s) for the flag to be judged.
    assert!(p.summary.as_ref().unwrap().wall_s >= 1.0);
    // The spinners are counted as the client's. How much CPU they get depends on what else the
    // machine runs (on an idle 2-core machine, about 2 cores); the flag follows the measure.
    assert!(
        busy_cpu > quiet_cpu + 0.2,
        "busy {busy_cpu} vs quiet {quiet_cpu}"
    );
    assert_eq!(
        kinds(p).contains(&FlagKind::ClientBound),
        busy_cpu > 0.7,
        "{busy_cpu}: {:?}",
        p.flags
    );
}
