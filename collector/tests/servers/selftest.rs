//! `llmsweep selftest` end to end: the loopback endpoint driven by the collector's own client,
//! its bundle read back.

use std::time::Duration;

use clap::Parser;
use llmsweep::cli::Cli;
use llmsweep_shared::bundle::{Bundle, SelftestMode};

/// The one bundle a selftest wrote into `dir`.
fn written_bundle(dir: &std::path::Path) -> Bundle {
    let file = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a bundle was written");
    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tiny_scheduled_selftest_gets_every_token_and_small_ttft_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_string_lossy().to_string();
    let cli = Cli::parse_from([
        "llmsweep",
        "selftest",
        "--mode",
        "scheduled",
        "--concurrency",
        "1,8",
        "--scheduled-requests",
        "16",
        "--scheduled-output-len",
        "12",
        "--first-ms",
        "50",
        "--interval-ms",
        "10",
        "--label",
        "selftest-test",
        "--out",
        &out,
    ]);
    run_bounded(cli).await;

    let bundle = written_bundle(dir.path());
    assert!(bundle.complete);
    assert!(bundle.sweeps.is_empty());
    let levels = bundle.selftest.expect("the selftest section").levels;
    assert_eq!(
        levels.iter().map(|l| l.concurrency).collect::<Vec<_>>(),
        [1, 8]
    );
    for l in &levels {
        assert_eq!(l.mode, SelftestMode::Scheduled);
        assert_eq!(
            (l.requests, l.ok, l.exact),
            (16, 16, 16),
            "C={}",
            l.concurrency
        );
        assert_eq!(
            (l.tokens, l.events),
            (16 * 12, 16 * 12),
            "C={}",
            l.concurrency
        );
        assert_eq!((l.first_event_s, l.interval_s), (Some(0.05), Some(0.01)));
        let ttft = l.ttft_error_s.expect("TTFT errors");
        assert_eq!(ttft.count, 16);
        // Late by the loopback and the client's own work; never early by more than the
        // stamps' microsecond rounding. Generous: the machine is shared.
        assert!(
            ttft.p50 > -1e-6 && ttft.p50 < 0.020,
            "C={}: TTFT error median {} s",
            l.concurrency,
            ttft.p50
        );
        // The endpoint never sends early: the first event waits at least 50 ms from arrival.
        let lag = l.first_event_lag_s.expect("first-event lag");
        assert!(
            lag.min > -1e-6 && lag.p50 < 0.020,
            "first-event lag {lag:?}"
        );
        let itl = l.itl_error_s.expect("ITL errors");
        assert_eq!(itl.count, 16 * 11);
        assert!(itl.p50.abs() < 0.020, "ITL error median {} s", itl.p50);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_in_another_process_is_measured_on_the_shared_clock() {
    use std::io::BufRead;
    // `--serve` on a free port, scheduled: the stamps it sends are on the host's monotonic
    // clock, and the client in this process sets them against its own times.
    let mut serve = std::process::Command::new(env!("CARGO_BIN_EXE_llmsweep"))
        .args([
            "selftest",
            "--serve",
            "127.0.0.1:0",
            "--mode",
            "scheduled",
            "--first-ms",
            "50",
            "--interval-ms",
            "10",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    let mut line = String::new();
    std::io::BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .expect("the endpoint says its URL")
        .to_string();
    let answer: serde_json::Value = reqwest::get(format!("{url}/selftest"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        answer,
        serde_json::json!({"mode": "scheduled", "first_s": 0.05, "interval_s": 0.01})
    );

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_string_lossy().to_string();
    let cli = Cli::parse_from([
        "llmsweep",
        "selftest",
        "--url",
        &url,
        "--concurrency",
        "4",
        "--scheduled-requests",
        "8",
        "--scheduled-output-len",
        "6",
        "--out",
        &out,
    ]);
    run_bounded(cli).await;
    let bundle = written_bundle(dir.path());
    assert!(bundle.target.url.starts_with(&url), "{}", bundle.target.url);
    let levels = bundle.selftest.expect("the selftest section").levels;
    assert_eq!(levels.len(), 1, "one level: the endpoint's one pacing");
    let l = &levels[0];
    assert_eq!(l.mode, SelftestMode::Scheduled);
    assert_eq!((l.requests, l.exact, l.tokens), (8, 8, 48));
    // (`new_connections` is not checked: how often the pool races a connect against a
    // connection on its way back depends on the machine's load; BENCHMARKS.md measures it.)
    // Across processes as within one: late by the loopback only, never early.
    let ttft = l.ttft_error_s.expect("TTFT errors");
    assert!(ttft.min > -1e-6 && ttft.p50 < 0.020, "{ttft:?}");
    let lag = l.first_event_lag_s.expect("first-event lag");
    assert!(lag.min > -1e-6 && lag.p50 < 0.020, "{lag:?}");

    // SIGTERM stops the endpoint cleanly.
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &serve.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = serve.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// Runs a selftest command line, which must succeed within a minute.
async fn run_bounded(cli: llmsweep::cli::Cli) {
    let code = tokio::time::timeout(Duration::from_secs(60), llmsweep::commands::run(cli))
        .await
        .expect("selftest finishes within its bound");
    assert_eq!(code, std::process::ExitCode::SUCCESS);
}
