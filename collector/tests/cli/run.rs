//! The `llmsweep` binary as a user runs it: exit codes, messages for bad input, secrets kept out
//! of bundles, and GPU telemetry through a stand-in `nvidia-smi` on PATH.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::text;
use std::path::Path;
use std::process::{Command, Output};

use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;

fn llmsweep(args: &[&str], path_prefix: Option<&Path>) -> Output {
    let mut cmd = crate::support::command();
    cmd.args(args);
    if let Some(dir) = path_prefix {
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", dir.display()));
    }
    cmd.output().expect("llmsweep runs")
}

fn only_bundle(dir: &Path) -> (String, Bundle) {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let raw = std::fs::read_to_string(&files[0]).unwrap();
    let b = Bundle::from_json(&raw).unwrap();
    (raw, b)
}

/// A stand-in `nvidia-smi` reporting two GPUs at a fixed 250 W and 150 W.
fn fake_nvidia_smi(dir: &Path) {
    let script = r#"#!/bin/sh
case "$*" in
  *driver_version*) printf '0, NVIDIA RTX A6000, 49140, 550.54.15\n1, NVIDIA RTX A6000, 49140, 550.54.15\n' ;;
  *) printf '0, NVIDIA RTX A6000, 87, 40000, 49140, 250.00\n1, NVIDIA RTX A6000, 85, 39000, 49140, 150.00\n' ;;
esac
"#;
    let path = dir.join("nvidia-smi");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpu_telemetry_comes_from_nvidia_smi_on_path_and_keys_stay_out() {
    let cfg = SimConfig {
        decode_d0_s: 0.01,
        ..SimConfig::preset(Preset::Fast)
    };
    let sim = SimServer::start(cfg, 0).await.unwrap();
    let bin = tempfile::tempdir().unwrap();
    fake_nvidia_smi(bin.path());
    let out = tempfile::tempdir().unwrap();
    let url = sim.url();
    let args = [
        "throughput",
        "--url",
        &url,
        "--concurrency",
        "2",
        "--input-len",
        "50",
        "--output-len",
        "120",
        "--requests",
        "4",
        "--warmup",
        "0",
        "--label",
        "gpu-host",
        "--api-key",
        "sk-very-secret",
        "--out",
        out.path().to_str().unwrap(),
    ];
    let o = tokio::task::spawn_blocking({
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let bin = bin.path().to_path_buf();
        move || {
            llmsweep(
                &args.iter().map(String::as_str).collect::<Vec<_>>(),
                Some(&bin),
            )
        }
    })
    .await
    .unwrap();
    sim.shutdown().await;
    assert!(
        o.status.success(),
        "{}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let (raw, b) = only_bundle(out.path());
    assert!(
        !raw.contains("sk-very-secret"),
        "the API key never enters a bundle"
    );
    assert!(b.tool.command_line.contains(&"***".to_string()));
    assert_eq!(b.hosts.gpus.len(), 2);
    assert_eq!(b.hosts.gpus[0].name, "NVIDIA RTX A6000");
    assert_eq!(b.hosts.gpus[0].driver.as_deref(), Some("550.54.15"));
    let g = b.sweeps[0].points[0]
        .gpu_samples
        .as_ref()
        .expect("GPU sampled");
    assert_eq!(g.gpus.len(), 2);
    assert!(g.gpus[0].power_w.iter().all(|p| *p == Some(250.0)));
    // 400 W over the sampled span.
    let span = g.t_s.last().unwrap() - g.t_s.first().unwrap();
    assert!((g.energy_j.unwrap() - 400.0 * span).abs() < 1e-6, "{g:?}");
    let tokens = b.sweeps[0].points[0]
        .summary
        .as_ref()
        .unwrap()
        .output_tokens as f64;
    assert!((g.tokens_per_joule.unwrap() - tokens / g.energy_j.unwrap()).abs() < 1e-9);
    assert!(text(&o.stdout).contains("tok/J"));
}

#[test]
fn unreachable_server_is_named_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let o = llmsweep(
        &[
            "throughput",
            "--url",
            &url,
            "--out",
            dir.path().to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("cannot reach the server at {url}")) && err.contains("--url"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn bad_flags_get_clear_messages() {
    for (args, needle) in [
        (
            vec!["throughput", "--concurrency", "0"],
            "--concurrency 0 is out of range",
        ),
        (
            vec!["throughput", "--concurrency", "x"],
            "invalid value 'x'",
        ),
        (
            vec!["throughput", "--concurrency", "1,-4"],
            "--concurrency takes positive counts, e.g. 1,2,4,8; got -4",
        ),
        // A text table given where a bundle is: import names it and the command to use.
        (
            vec![
                "compare",
                "tests/fixtures/import/design-kpro6.txt",
                "tests/fixtures/import/design-kpro6.txt",
            ],
            "this looks like a text table, not a bundle: bring it in first with llmsweep import tests/fixtures/import/design-kpro6.txt --label NAME --input-len N --output-len N",
        ),
        (
            vec![
                "plot",
                "../shared/tests/fixtures/bundle-v1-run.json",
                "--chart",
                "rate-ttft",
                "-o",
                "/tmp/llmsweep-never-written.svg",
            ],
            "record one with `llmsweep throughput --url URL --rates 1,2,4` (or --find-max-rate)",
        ),
        (
            vec!["throughput", "--api", "grpc"],
            "possible values: completions, chat",
        ),
        (
            vec![
                "throughput",
                "--url",
                "http://127.0.0.1:8000/v1/chat/completions",
            ],
            "--url http://127.0.0.1:8000/v1/chat/completions names the endpoint /chat/completions: give the server's base URL (http://host:port), not the endpoint, e.g. --url http://127.0.0.1:8000;",
        ),
        (
            vec![
                "throughput",
                "--url",
                "http://127.0.0.1:8000/v1/completions/",
            ],
            "give the server's base URL (http://host:port), not the endpoint, e.g. --url http://127.0.0.1:8000;",
        ),
        (
            vec!["throughput", "--url", "127.0.0.1:8000"],
            "--url \"127.0.0.1:8000\" has no scheme: give the URL with its scheme, e.g. http://127.0.0.1:8000",
        ),
        (
            vec!["context", "--lengths", "1k,abc"],
            "expected a token count",
        ),
        (
            vec!["throughput", "--requests", "4", "--duration", "5"],
            "cannot be used with",
        ),
        (
            vec!["throughput", "--shapes", "128"],
            "\"128\" is not a shape: give input×output tokens separated by commas, e.g. 128x128,1000x1000,4000x500",
        ),
        (
            vec!["run", "--shapes", "64x16", "--input-len", "100"],
            "cannot be used with",
        ),
        (
            vec!["throughput", "--shapes", "64x16", "--rates", "1"],
            "--shapes runs a concurrency sweep per shape; --rates and --find-max-rate run one open loop",
        ),
        (
            vec!["export", "--csv", "x.json", "--percentiles", "50,100"],
            "100 is not a percentile: each must be above 0 and below 100",
        ),
        (
            vec!["run", "--only", "both"],
            "possible values: throughput, context",
        ),
        // Numbers are echoed short: 1e-300, not three hundred digits.
        (
            vec![
                "run",
                "--url",
                "http://127.0.0.1:1",
                "--precision",
                "1e-300",
            ],
            "--precision 1e-300 is out of range",
        ),
        (
            vec![
                "throughput",
                "--url",
                "http://127.0.0.1:1",
                "--duration=-1e-300",
            ],
            "--duration -1e-300 is out of range: give seconds above 0, e.g. 60, at most a week (604800)",
        ),
        (
            vec!["compare", "a.json", "b.json", "--fail-if-slower=-1e-300"],
            "--fail-if-slower takes a percentage such as 5, got -1e-300",
        ),
        (
            vec![
                "throughput",
                "--url",
                "http://127.0.0.1:1",
                "--timeout",
                "1e300",
            ],
            "--timeout 1e300 is out of range",
        ),
        (
            vec![
                "throughput",
                "--url",
                "http://127.0.0.1:1",
                "--rates",
                "1e-300",
            ],
            "--rates 1e-300 with",
        ),
        // A bundle path that is a device: refused by name, not read for ever.
        (
            vec!["compare", "/dev/zero", "/dev/zero"],
            "/dev/zero cannot be read: is a device, not a regular file",
        ),
        (
            vec!["export", "--csv", "/dev/zero"],
            "/dev/zero cannot be read: is a device, not a regular file",
        ),
    ] {
        let o = llmsweep(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            !err.split(|c: char| !c.is_ascii_digit())
                .any(|d| d.len() > 40),
            "{args:?}: a number of hundreds of digits: {err}"
        );
    }
}

/// Every command that takes a place or a bundle says in its help that it may be in a bucket.
#[test]
fn every_help_that_takes_a_place_says_s3() {
    for cmd in [
        "throughput",
        "context",
        "run",
        "compare",
        "report",
        "export",
        "plot",
        "history",
        "view",
    ] {
        let o = llmsweep(&[cmd, "--help"], None);
        assert!(o.status.success(), "{cmd}");
        assert!(
            text(&o.stdout).contains("s3://"),
            "{cmd} --help says nothing of s3://"
        );
    }
}

#[test]
fn a_rate_too_low_to_finish_is_refused_at_once_with_its_estimate() {
    // Two arrivals at 1e-9 req/s would take decades: refused before any request, at once
    // (a sweep that started would be killed after the 20 s the test waits).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_string_lossy().to_string();
    let mut child = crate::support::command()
        .args([
            "throughput",
            "--url",
            "http://127.0.0.1:9",
            "--rates",
            "1e-9",
            "--requests",
            "2",
            "--out",
            &out,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("llmsweep runs");
    let began = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("--rates 1e-9 was not refused within 20 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("--rates 0.000000001 with 2 requests would take about 63 years"),
        "{err}"
    );
    assert!(err.contains("give --duration SECS"), "{err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no bundle"
    );
}

/// `report` writes through the one atomic writer: a write that fails leaves neither half a page
/// nor a `.tmp` file behind.
#[test]
fn a_report_that_cannot_be_written_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let golden = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/tests/fixtures/bundle-v1-run.json"
    );
    // The output path is a folder with a file in it: the final rename onto it fails.
    let out = dir.path().join("report.html");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep"), b"x").unwrap();
    let o = llmsweep(&["report", golden, "-o", out.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains("cannot write the report"),
        "{}",
        text(&o.stderr)
    );
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        ["report.html"],
        "nothing but the folder that was there"
    );
}

#[test]
fn a_concurrency_beyond_the_open_files_limit_is_refused_before_any_request() {
    // prlimit (util-linux) runs llmsweep under a limit of 300 open files.
    let Ok(status) = Command::new("prlimit").arg("--version").output() else {
        eprintln!("NOTICE: skipping: prlimit is not installed");
        return;
    };
    assert!(status.status.success());
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new("prlimit")
        .arg("--nofile=300:300")
        .arg(env!("CARGO_BIN_EXE_llmsweep"))
        .args([
            "throughput",
            "--url",
            "http://127.0.0.1:9",
            "--concurrency",
            "1,512",
            "--out",
            dir.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("concurrency 512 needs about 576 open files")
            && err.contains("this process may open 300")
            && err.contains("lower the concurrency to at most 236"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_near_the_clients_measured_capacity_is_flagged() {
    let cache = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_llmsweep"))
            .args(args)
            .env("XDG_CACHE_HOME", cache.path())
            .output()
            .unwrap()
    };
    // The selftest keeps what it measured for later sweeps.
    let out = tempfile::tempdir().unwrap();
    let o = run(&[
        "selftest",
        "--mode",
        "flat-out",
        "--concurrency",
        "1",
        "--requests",
        "32",
        "--per-event",
        "1",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let kept = cache.path().join("llmsweep/capacity.json");
    let c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert!(c["events_s"].as_f64().unwrap() > 1000.0, "{c}");
    assert!(text(&o.stdout).contains("kept in"), "{}", text(&o.stdout));

    // A client measured at 50 events/s is near its limit at any level of the simulator.
    std::fs::write(
        &kept,
        r#"{"events_s": 50.0, "measured_at": "2026-12-01T14:00:00Z", "version": "0.1.0"}"#,
    )
    .unwrap();
    let sim = SimServer::start(SimConfig::preset(Preset::Fast), 0)
        .await
        .unwrap();
    let url = sim.url();
    let o = run(&[
        "throughput",
        "--url",
        &url,
        "--concurrency",
        "2",
        "--input-len",
        "20",
        "--output-len",
        "16",
        "--requests",
        "8",
        "--out",
        out.path().join("sweep").to_str().unwrap(),
    ]);
    sim.shutdown().await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (_, b) = only_bundle(&out.path().join("sweep"));
    let f = &b.sweeps[0].points[0].flags;
    assert!(
        f.iter()
            .any(|f| f.kind == llmsweep_shared::bundle::FlagKind::ClientBound
                && f.message.contains(
                    "of what this client can read (50 events/s, `llmsweep selftest` of 2026-12-01)"
                )),
        "{f:?}"
    );
}

/// `report FOLDER` takes every bundle in it, the imported runs first as the baseline (an old
/// host's table, brought in to be compared against), names a file it cannot read and goes on,
/// and refuses a folder with no bundle in words that say what it wants.
#[test]
fn a_report_of_a_folder_takes_its_bundles_with_the_imported_run_as_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    let golden = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/tests/fixtures/bundle-v1-run.json"
    );
    // The measured run's name sorts first; the imported one is still the baseline.
    std::fs::copy(golden, results.join("a-run.json")).unwrap();
    let table = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/design-kpro6.txt"
    );
    let o = llmsweep(
        &[
            "import",
            "--from",
            "table",
            table,
            "--label",
            "kpro6",
            "--input-len",
            "1000",
            "--output-len",
            "500",
            "--out",
            results.to_str().unwrap(),
        ],
        None,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::write(results.join("broken.json"), b"{ not a bundle").unwrap();
    // A name that would drive the terminal reaches it inert.
    std::fs::write(results.join("\u{1b}[2Jevil.json"), b"{").unwrap();
    // A link out of the folder is not the folder's.
    #[cfg(unix)]
    std::os::unix::fs::symlink(golden, results.join("outside.json")).unwrap();
    let out = dir.path().join("report.html");
    let o = llmsweep(
        &[
            "report",
            results.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ],
        None,
    );
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{stderr}");
    assert!(
        stdout.starts_with("baseline: kpro6 (kpro6-imported-"),
        "{stdout}"
    );
    assert!(stdout.contains("2 runs"), "{stdout}");
    assert!(
        !stderr.contains('\u{1b}') && stderr.contains("evil.json"),
        "{stderr:?}"
    );
    assert!(
        stderr.contains("warning: left out of the report:") && stderr.contains("broken.json"),
        "{stderr}"
    );
    assert!(std::fs::metadata(&out).unwrap().len() > 10_000);

    // The commands that take bundle files say what to give instead of a folder.
    let o = llmsweep(
        &[
            "plot",
            results.to_str().unwrap(),
            "-o",
            dir.path().join("a.svg").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("it is a folder; name the bundles in it (")
            && text(&o.stderr).contains("/results/*.json)"),
        "{}",
        text(&o.stderr)
    );

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = llmsweep(&["report", empty.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no bundle in") && text(&o.stderr).contains("can be read"),
        "{}",
        text(&o.stderr)
    );
}
