//! `--resume` on the real binary: one run writes a bundle at a time.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use llmsweep::sim::{Preset, SimConfig, SimServer};

use crate::support::text;

/// A run of one level of 12 requests of 10 s each, 2 at a time: far longer than the test.
fn start_slow_run(url: &str, out: &Path) -> Child {
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
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("llmsweep starts")
}

/// The bundle the run in `out` writes, once it has written it.
fn its_bundle(out: &Path, child: &mut Child) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let bundle = std::fs::read_dir(out)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "json"));
        if let Some(b) = bundle {
            return b;
        }
        assert!(child.try_wait().unwrap().is_none(), "llmsweep exited early");
        assert!(Instant::now() < deadline, "no bundle after 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `llmsweep <args>`: its exit status and all it printed, killed after `limit`.
fn run_within(args: &[&str], limit: Duration) -> (Option<i32>, String) {
    let mut child = crate::support::command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if began.elapsed() > limit {
            child.kill().unwrap();
            panic!("llmsweep {args:?} did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        format!("{}{}", text(&o.stdout), text(&o.stderr)),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_being_written_is_refused_to_a_resume_before_it_sends_anything() {
    let slow = SimConfig {
        decode_d0_s: 0.05,
        decode_d1_s: 0.0,
        ..SimConfig::preset(Preset::Fast)
    };
    let first_server = SimServer::start(slow, 0).await.unwrap();
    let second_server = SimServer::start(SimConfig::preset(Preset::Fast), 0)
        .await
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut first = start_slow_run(&first_server.url(), out.path());
    let bundle = its_bundle(out.path(), &mut first);
    let shown = bundle.to_string_lossy().into_owned();
    let lock = PathBuf::from(format!("{shown}.lock"));
    assert!(lock.exists(), "the running run holds {}", lock.display());

    let url = second_server.url();
    let (status, said) = run_within(
        &["throughput", "--resume", &shown, "--url", &url],
        Duration::from_secs(20),
    );
    assert_eq!(status, Some(2), "{said}");
    assert!(
        said.contains(&format!(
            "error: {shown} is being written by llmsweep pid {} on ",
            first.id()
        )) && said.contains("; wait for it to finish, or stop that process, then run this again"),
        "{said}"
    );
    assert_eq!(
        second_server.stats().requests,
        0,
        "the refused resume sent nothing"
    );

    // Killed outright, the first run leaves its lock file, which blocks no one: the next resume
    // goes as far as the server (here one that is gone), and tidies the file away.
    first.kill().unwrap();
    first.wait().unwrap();
    first_server.shutdown().await;
    assert!(lock.exists());
    let gone = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gone = format!("http://127.0.0.1:{gone}");
    let (status, said) = run_within(
        &["throughput", "--resume", &shown, "--url", &gone],
        Duration::from_secs(20),
    );
    assert_eq!(status, Some(2), "{said}");
    assert!(said.contains("cannot reach the server"), "{said}");
    assert!(!said.contains("is being written"), "{said}");
    assert!(
        !lock.exists(),
        "the lock file is gone with the run that took it"
    );
    second_server.shutdown().await;
}
