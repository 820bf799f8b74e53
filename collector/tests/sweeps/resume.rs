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
use llmsweep_shared::bundle::{FlagKind, PointStatus, SweepKind};

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

/// Stops the run (both ways at once, as a second Ctrl-C does) `delay` after the `nth` rate
/// point is told: inside the point after it.
#[derive(Debug)]
struct CutAfterRatePoint {
    nth: usize,
    delay: Duration,
    told: std::sync::atomic::AtomicUsize,
    interrupt: Interrupt,
}

impl llmsweep::load::Sink for CutAfterRatePoint {
    fn event(&self, event: llmsweep::load::Event<'_>) {
        let llmsweep::load::Event::Point {
            kind: SweepKind::Rate,
            ..
        } = event
        else {
            return;
        };
        let told = self.told.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        if told == self.nth {
            let (stop, delay) = (self.interrupt.clone(), self.delay);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                stop.stop_sending.cancel();
                stop.abort.cancel();
            });
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_max_rate_search_goes_on_where_it_stopped_and_measures_no_rate_twice() {
    let _turn = SERIAL.lock().await;
    // One request at a time, each holding the server 10 ms + 8 × 5 ms = 50 ms: 20 req/s.
    let cfg = SimConfig {
        max_running: 1,
        prefill_a_s: 0.01,
        prefill_b_s: 0.0,
        prefill_c_s: 0.0,
        decode_d0_s: 0.005,
        decode_d1_s: 0.0,
        decode_kv_s: 0.0,
        ..SimConfig::preset(Preset::Fast)
    };
    let sim = SimServer::start(cfg, 0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = sim.url();
    let out = dir.path().to_string_lossy().into_owned();
    let first: Vec<String> = [
        "llmsweep",
        "throughput",
        "--url",
        &url,
        "--find-max-rate",
        "--goodput",
        "ttft=0.05",
        "--arrival",
        "constant",
        "--requests",
        "20",
        "--rate-precision",
        "0.1",
        "--input-len",
        "16",
        "--output-len",
        "9",
        "--warmup",
        "0",
        "--label",
        "kpro5",
        "--out",
        &out,
    ]
    .map(String::from)
    .to_vec();
    // Stopped inside the third rate point, which is then dropped and measured again.
    let interrupt = Interrupt::default();
    let cut = std::sync::Arc::new(CutAfterRatePoint {
        nth: 2,
        delay: Duration::from_millis(300),
        told: Default::default(),
        interrupt: interrupt.clone(),
    });
    let cut = llmsweep::load::run_plan(&plan_of(&first), first.clone(), interrupt, cut)
        .await
        .unwrap();
    let before = read(&cut.path);
    assert!(!before.complete);
    let rate_sweep = |b: &Bundle| {
        b.sweeps
            .iter()
            .find(|w| w.kind == SweepKind::Rate)
            .cloned()
            .expect("the search's rate sweep")
    };
    let kept: Vec<_> = rate_sweep(&before)
        .points
        .into_iter()
        .filter(|p| p.flags.iter().all(|f| f.kind != FlagKind::Interrupted))
        .collect();
    assert!(kept.len() >= 2, "two rate points before the cut");
    let sent_before = sim.stats().requests;

    let path = cut.path.to_string_lossy().into_owned();
    let again: Vec<String> = ["llmsweep", "throughput", "--resume", &path]
        .map(String::from)
        .to_vec();
    let resumed = resume_plan(&cut.path, &again).unwrap();
    let done = crate::common::sim::run_silently(&resumed, again, Interrupt::default())
        .await
        .unwrap();
    let sent_by_resume = sim.stats().requests - sent_before;
    sim.shutdown().await;
    let after = read(&done.path);
    assert!(after.complete);
    // The closed-loop level is the bundle's, not run again.
    assert_eq!(after.sweeps[0].points, before.sweeps[0].points);
    let sweep = rate_sweep(&after);
    let rates: Vec<f64> = sweep
        .points
        .iter()
        .map(|p| p.rate.unwrap().offered_rps)
        .collect();
    assert!(
        rates.windows(2).all(|w| w[0] < w[1]),
        "one point per rate, in rate order: {rates:?}"
    );
    let plan = sweep.rate.as_ref().unwrap();
    let mut listed = plan.rates.clone();
    listed.sort_by(f64::total_cmp);
    assert_eq!(listed, rates, "the search lists each rate it measured once");
    // The points kept from before the cut are in the bundle as they were measured.
    for p in &kept {
        assert!(sweep.points.contains(p), "{:?} was measured again", p.rate);
    }
    // Only the rates the search lacked were sent: 20 requests each.
    let new = sweep.points.len() - kept.len();
    assert!(new >= 1);
    assert_eq!(sent_by_resume, 20 * new as u64, "{rates:?}");
    // The search ended as a search does: its bracket within 10 % of its top.
    let search = plan.search.expect("the search");
    let (found, missed) = (search.found_rps.unwrap(), search.failed_rps.unwrap());
    assert!(missed - found <= 0.1 * missed + 1e-9, "{search:?}");
    for p in &sweep.points {
        let r = p.rate.unwrap().offered_rps;
        let met = p.goodput.unwrap().fraction >= 0.9;
        assert_eq!(met, r <= found, "{r} req/s: {:?}", p.goodput);
    }
}
