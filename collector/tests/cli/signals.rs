//! Signals on the real binary: Ctrl-C, SIGTERM and SIGHUP stop sending, let requests in flight
//! finish for a few seconds, and leave an incomplete bundle with the level measured so far; a
//! second signal aborts at once.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{ErrorKind, FlagKind};

/// A level of 12 requests of 10 s each, 2 at a time: a minute, far longer than any test waits.
fn slow() -> SimConfig {
    SimConfig {
        decode_d0_s: 0.05,
        decode_d1_s: 0.0,
        ..SimConfig::preset(Preset::Fast)
    }
}

fn start(url: &str, out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_llmsweep"))
        .args([
            "throughput",
            "--url",
            url,
            "--concurrency",
            "2",
            "--input-len",
            "50",
            "--output-len",
            "200",
            "--requests",
            "12",
            "--warmup",
            "0",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("llmsweep starts")
}

fn signal(child: &Child, name: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name}");
}

/// Waits until the run has written its first checkpoint (it is then inside the level).
fn wait_for_bundle(out: &Path, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_dir(out).unwrap().next().is_none() {
        assert!(child.try_wait().unwrap().is_none(), "llmsweep exited early");
        assert!(Instant::now() < deadline, "no bundle after 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
}

/// Waits for the exit within `limit`, killing the process when it takes longer.
fn wait_exit(mut child: Child, limit: Duration) -> (Option<i32>, String, Duration) {
    let began = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if began.elapsed() > limit {
            child.kill().unwrap();
            panic!("llmsweep did not exit within {limit:?} of the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = began.elapsed();
    let o = child.wait_with_output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), all, took)
}

fn the_bundle(out: &Path) -> Bundle {
    let files: Vec<_> = std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one bundle and no temporary file: {files:?}"
    );
    Bundle::from_json(&std::fs::read_to_string(&files[0]).unwrap()).unwrap()
}

async fn stops_on(name: &str, shown: &str, code: i32) {
    let sim = SimServer::start(slow(), 0).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut child = start(&sim.url(), out.path());
    wait_for_bundle(out.path(), &mut child);
    signal(&child, name);
    // The requests in flight need 10 s; they get 5 s, then are aborted.
    let (status, all, took) = wait_exit(child, Duration::from_secs(20));
    assert_eq!(status, Some(code), "{all}");
    assert!(
        all.contains(&format!("{shown}: stopping: no new requests")),
        "{all}"
    );
    assert!(all.contains("\"complete\": false"), "{all}");
    assert!(
        took >= Duration::from_secs(4),
        "the grace period was {took:?}"
    );
    let b = the_bundle(out.path());
    assert!(!b.complete);
    let p = &b.sweeps[0].points[0];
    assert_eq!(
        p.requests.len(),
        2,
        "the two in flight, nothing sent after the signal"
    );
    assert!(p.requests.iter().all(|r| {
        r.error
            .as_ref()
            .is_some_and(|e| e.kind == ErrorKind::Cancelled)
    }));
    assert!(p.flags.iter().any(|f| f.kind == FlagKind::Interrupted));
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_run_and_keeps_what_it_measured() {
    stops_on("TERM", "SIGTERM", 143).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_and_sighup_stop_it_the_same_way() {
    stops_on("INT", "Ctrl-C", 130).await;
    stops_on("HUP", "SIGHUP", 129).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_signal_aborts_at_once() {
    let sim = SimServer::start(slow(), 0).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut child = start(&sim.url(), out.path());
    wait_for_bundle(out.path(), &mut child);
    signal(&child, "TERM");
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, "TERM");
    let (status, all, took) = wait_exit(child, Duration::from_secs(20));
    assert_eq!(status, Some(143), "{all}");
    assert!(
        all.contains("SIGTERM: aborting the requests in flight"),
        "{all}"
    );
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(!the_bundle(out.path()).complete);
    sim.shutdown().await;
}
