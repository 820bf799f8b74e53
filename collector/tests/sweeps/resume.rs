//! `--resume`: an interrupted run finished with its own settings, into the same bundle.

use std::path::Path;
use std::time::Duration;

use crate::common::sim::SERIAL;
use clap::Parser;
use llmsweep::cli::Cli;
use llmsweep::commands::resume_plan;
use llmsweep::load::{Interrupt, RunPlan};
use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{FlagKind, PointStatus};

fn argv(url: &str, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "llmsweep",
        "throughput",
        "--url",
        url,
        "--concurrency",
        "1,2,4",
        "--input-len",
        "50",
        "--output-len",
        "30",
        "--requests",
        "6",
        "--warmup",
        "0",
        "--label",
        "kpro5",
        "--out",
    ]
    .map(String::from)
    .to_vec();
    v.push(out.to_string_lossy().into_owned());
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn plan_of(argv: &[String]) -> RunPlan {
    Cli::try_parse_from(argv)
        .unwrap()
        .command
        .sweep_plan()
        .unwrap()
        .unwrap()
}

fn read(path: &Path) -> Bundle {
    Bundle::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_run_is_finished_in_the_same_bundle() {
    let _turn = SERIAL.lock().await;
    // 30 tokens of 20 ms: C=1 takes about 3.6 s.
    let cfg = SimConfig {
        decode_d0_s: 0.02,
        decode_d1_s: 0.0,
        ..SimConfig::preset(Preset::Fast)
    };
    let sim = SimServer::start(cfg, 0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let first = argv(&sim.url(), dir.path(), &[]);
    // Stopped during C=2, which is then partly measured and flagged interrupted.
    let interrupt = Interrupt::default();
    let stop = interrupt.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(4500)).await;
        stop.stop_sending.cancel();
        stop.abort.cancel();
    });
    let cut = crate::common::sim::run_silently(&plan_of(&first), first.clone(), interrupt)
        .await
        .unwrap();
    let before = read(&cut.path);
    assert!(!before.complete);
    let levels: Vec<_> = before.sweeps[0]
        .points
        .iter()
        .map(|p| p.concurrency)
        .collect();
    assert_eq!(levels, [1, 2], "C=1 whole, C=2 cut short");
    assert!(
        before.sweeps[0].points[1]
            .flags
            .iter()
            .any(|f| f.kind == FlagKind::Interrupted)
    );

    let path = cut.path.to_string_lossy().into_owned();
    // A flag that changes the work is refused, naming it and the bundle's value.
    let again = |extra: &[&str]| -> Vec<String> {
        ["llmsweep", "throughput", "--resume", &path]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    let e = format!(
        "{:#}",
        resume_plan(&cut.path, &again(&["--concurrency", "1,2"])).unwrap_err()
    );
    assert!(
        e.contains(
            ": --concurrency 1,2 differs from the bundle's 1,2,4: resume continues the run as it was started; drop --concurrency or start a new run without --resume"
        ),
        "{e}"
    );
    let e = format!(
        "{:#}",
        resume_plan(&cut.path, &["llmsweep".into(), "context".into()]).unwrap_err()
    );
    assert!(e.contains("written by `llmsweep throughput`"), "{e}");

    // How to reach the server may be given again; the work is the bundle's.
    let resumed = resume_plan(&cut.path, &again(&["--timeout", "30"])).unwrap();
    let done = crate::common::sim::run_silently(&resumed, again(&[]), Interrupt::default())
        .await
        .unwrap();
    sim.shutdown().await;
    assert_eq!(done.path, cut.path, "the same bundle");
    let after = read(&done.path);
    assert!(after.complete);
    assert_eq!(after.id, before.id);
    let points = &after.sweeps[0].points;
    let levels: Vec<_> = points.iter().map(|p| p.concurrency).collect();
    assert_eq!(levels, [1, 2, 4]);
    assert_eq!(
        points[0], before.sweeps[0].points[0],
        "C=1 is kept as it was"
    );
    for p in points {
        assert_eq!(p.status, PointStatus::Ok);
        assert_eq!(p.requests.len(), 6, "C={}", p.concurrency);
        assert!(p.flags.iter().all(|f| f.kind != FlagKind::Interrupted));
    }
    assert_eq!(after.workload.prefix_seed, before.workload.prefix_seed);
    // The levels run by the resume began their prompts with fresh prefixes, said per point,
    // so the server held nothing of them from the interrupted run; their content is the same.
    assert_eq!(points[0].prefix_seed, None);
    let fresh = points[1]
        .prefix_seed
        .expect("a resumed level says its prefix seed");
    assert_ne!(Some(fresh), before.workload.prefix_seed);
    assert_eq!(points[2].prefix_seed, Some(fresh));
    let cut_c2: Vec<&str> = before.sweeps[0]
        .points
        .iter()
        .filter(|p| p.concurrency == 2)
        .flat_map(|p| &p.requests)
        .map(|r| r.prompt_hash.as_str())
        .collect();
    assert!(
        points[1]
            .requests
            .iter()
            .all(|r| !cut_c2.contains(&r.prompt_hash.as_str())),
        "no prompt of the cut-short C=2 is sent again"
    );
    // The digest is over the kept levels' prompts, the cut-short C=2 left out.
    let hashes = points
        .iter()
        .flat_map(|p| &p.requests)
        .map(|r| r.prompt_hash.as_str());
    let mut h = <sha2::Sha256 as sha2::Digest>::new();
    for x in hashes {
        sha2::Digest::update(&mut h, x.as_bytes());
        sha2::Digest::update(&mut h, b"\n");
    }
    let want: String = sha2::Digest::finalize(h)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(after.workload.prompt_digest, want);
    assert_eq!(after.label, "kpro5");
    let e = format!("{:#}", resume_plan(&done.path, &again(&[])).unwrap_err());
    assert!(e.contains("the run is complete"), "{e}");
}
