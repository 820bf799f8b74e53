//! The bucket as guarded as the server: the binary against a store of our own that lists without
//! end, sends a listing page of hundreds of megabytes or an HTML page, redirects to another host,
//! lets a key read but not write, or holds objects of hundreds of megabytes. Each case ends in one
//! clear line and an exit status a CI job can act on, in bounded memory (measured on the child
//! process), with no credential at a host the user did not name.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::hostile_store::{Mode, Store};
use crate::support::{command, text};

/// What a run of the binary did, and the most memory it held (its peak resident set).
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    peak_mb: u64,
    took: Duration,
}

/// Runs `cmd` to its end (killed after `limit`), polling its peak memory as it goes.
fn measured(mut cmd: Command, limit: Duration) -> Ran {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("llmsweep starts");
    let status_file = format!("/proc/{}/status", child.id());
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let mut peak_kb = 0;
    let status = loop {
        if let Ok(s) = std::fs::read_to_string(&status_file)
            && let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ran {
        code: status.code(),
        stdout: o.join().unwrap(),
        stderr: e.join().unwrap(),
        peak_mb: peak_kb / 1024,
        took: start.elapsed(),
    }
}

/// `llmsweep` pointed at `store`, with keys and a session token of its own, and no profile.
fn against(store: &Store, home: &Path) -> Command {
    let mut c = command();
    c.env("HOME", home)
        .env("AWS_ACCESS_KEY_ID", "AKIATESTKEY")
        .env("AWS_SECRET_ACCESS_KEY", "test-secret-value")
        .env("AWS_SESSION_TOKEN", "test-session-token")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", &store.url)
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_SHARED_CREDENTIALS_FILE")
        .env_remove("AWS_CONFIG_FILE");
    c
}

const SECRETS: [&str; 2] = ["test-secret-value", "test-session-token"];

fn no_secret_in(r: &Ran) {
    for s in SECRETS {
        assert!(
            !r.stdout.contains(s) && !r.stderr.contains(s),
            "{s} printed:\n{}",
            r.stderr
        );
    }
}

#[test]
fn a_listing_without_end_is_given_up_in_bounded_memory() {
    let store = Store::start(Mode::EndlessListing);
    let home = tempfile::tempdir().unwrap();
    for args in [
        vec!["index", "s3://team/runs"],
        vec!["history", "s3://team/runs"],
    ] {
        let mut c = against(&store, home.path());
        c.args(&args);
        let r = measured(c, Duration::from_secs(120));
        eprintln!(
            "endless listing, {args:?}: peak {} MB, {:.1} s",
            r.peak_mb,
            r.took.as_secs_f64()
        );
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("more than 200000 objects, more than llmsweep lists"),
            "{}",
            r.stderr
        );
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.peak_mb < 300, "{args:?}: peak {} MB", r.peak_mb);
        no_secret_in(&r);
    }
}

#[test]
fn a_listing_page_of_a_gigabyte_is_refused_at_its_cap() {
    let store = Store::start(Mode::HugePage(1 << 30));
    let home = tempfile::tempdir().unwrap();
    let mut c = against(&store, home.path());
    c.args(["index", "s3://team/runs"]);
    let r = measured(c, Duration::from_secs(120));
    eprintln!(
        "a 1 GiB listing page: peak {} MB, {:.1} s",
        r.peak_mb,
        r.took.as_secs_f64()
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("a page of the store's listing: the answer is longer than 8 MiB"),
        "{}",
        r.stderr
    );
    assert!(r.peak_mb < 300, "peak {} MB", r.peak_mb);
}

#[test]
fn an_html_page_for_a_listing_is_not_an_empty_bucket() {
    let store = Store::start(Mode::Html);
    let home = tempfile::tempdir().unwrap();
    for args in [
        vec!["index", "s3://team/runs"],
        vec!["history", "s3://team/runs"],
    ] {
        let mut c = against(&store, home.path());
        c.args(&args);
        let r = measured(c, Duration::from_secs(60));
        assert_eq!(r.code, Some(2), "{}", r.stderr);
        assert!(r.stderr.contains("is not an S3 listing"), "{}", r.stderr);
        assert!(r.stderr.contains("check AWS_ENDPOINT_URL"), "{}", r.stderr);
    }
}

#[test]
fn a_redirect_to_another_host_takes_no_credential_there() {
    let elsewhere = Store::start(Mode::Honest);
    let store = Store::start(Mode::RedirectTo(format!(
        "http://user:pw@{}",
        elsewhere.url.trim_start_matches("http://")
    )));
    let home = tempfile::tempdir().unwrap();
    for args in [
        vec!["index", "s3://team/runs"],
        vec!["view", "s3://team/runs", "--port", "0"],
        vec!["push", "--to", "s3://team/runs", "tests/fixtures/none.json"],
    ] {
        let mut c = against(&store, home.path());
        c.args(&args);
        let r = measured(c, Duration::from_secs(60));
        assert_ne!(r.code, Some(0), "{args:?}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("the store answered 307 Temporary Redirect to http://***@127.0.0.1"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains(
                "llmsweep does not follow redirects, so no credential goes to another host"
            ),
            "{}",
            r.stderr
        );
        assert!(!r.stderr.contains("pw@"), "{}", r.stderr);
        no_secret_in(&r);
    }
    assert!(
        store.seen().iter().all(|s| s.method == "GET"),
        "{:?}",
        store.seen()
    );
    assert!(elsewhere.seen().is_empty(), "{:?}", elsewhere.seen());
}

#[test]
fn a_key_that_cannot_write_is_refused_before_the_first_request() {
    let store = Store::start(Mode::ReadOnly);
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", server.local_addr().unwrap());
    server.set_nonblocking(true).unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut c = against(&store, home.path());
    c.current_dir(home.path()).args([
        "throughput",
        "--url",
        &url,
        "--concurrency",
        "1",
        "--requests",
        "2",
        "--out",
        "s3://team/runs",
    ]);
    let r = measured(c, Duration::from_secs(60));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("--out s3://team/runs: cannot write"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("the key must be allowed to write, not only to list and read"),
        "{}",
        r.stderr
    );
    // Nothing reached the server: the check came first.
    assert!(server.accept().is_err());
    assert!(store.keys().is_empty());
}

#[test]
fn parallel_reads_of_large_objects_through_view_are_streamed() {
    let store = Store::start(Mode::Honest);
    store.put_big("runs/big.json", 300 << 20);
    let home = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut c = against(&store, home.path());
    c.args(["view", "s3://team/runs", "--port", &port.to_string()]);
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "view did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let readers: Vec<_> = (0..6)
        .map(|_| {
            std::thread::spawn(move || {
                let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                use std::io::Write;
                write!(
                    s,
                    "GET /bundles/big.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                )
                .unwrap();
                let mut n = 0u64;
                let mut buf = vec![0u8; 1 << 16];
                loop {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(k) => {
                            n += k as u64;
                            // A slow reader: the server must not buffer what it has not sent.
                            if n % (64 << 20) < (1 << 16) {
                                std::thread::sleep(Duration::from_millis(20));
                            }
                        }
                    }
                }
                n
            })
        })
        .collect();
    let mut peak_kb = 0u64;
    while readers.iter().any(|r| !r.is_finished()) {
        if let Ok(s) = std::fs::read_to_string(&status_file)
            && let Some(kb) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak_kb = peak_kb.max(kb);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let got: Vec<u64> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    let _ = child.kill();
    let _ = child.wait();
    for n in &got {
        assert!(*n > 300 << 20, "a reader got {n} bytes");
    }
    eprintln!(
        "view, 6 parallel reads of a 300 MB object: peak {} MB",
        peak_kb / 1024
    );
    assert!(peak_kb / 1024 < 300, "peak {} MB", peak_kb / 1024);
}

#[test]
fn endpoints_and_bucket_urls_with_secrets_or_no_scheme_get_one_line_without_them() {
    let store = Store::start(Mode::Honest);
    let home = tempfile::tempdir().unwrap();
    for (endpoint, place, want) in [
        (
            "127.0.0.1:31802",
            "s3://team/runs",
            "is not an http:// or https:// address",
        ),
        (
            "http://admin:hunter2@127.0.0.1:31802",
            "s3://team/runs",
            "holds a user name or password",
        ),
        (
            store.url.as_str(),
            "s3://AKIA:hunter2@team/runs",
            "a bucket URL holds no user name or password",
        ),
    ] {
        let mut c = against(&store, home.path());
        c.env("AWS_ENDPOINT_URL", endpoint).args(["index", place]);
        let r = measured(c, Duration::from_secs(30));
        assert_eq!(r.code, Some(2), "{endpoint} {place}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{}", r.stderr);
        assert!(!r.stderr.contains("hunter2"), "{}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
}

#[test]
fn a_profile_file_that_is_a_device_or_a_fifo_is_refused_by_name() {
    let store = Store::start(Mode::Honest);
    let home = tempfile::tempdir().unwrap();
    let fifo = home.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for (file, what) in [
        (Path::new("/dev/zero"), "is a device, not a regular file"),
        (
            fifo.as_path(),
            "is a FIFO (a named pipe), not a regular file",
        ),
    ] {
        let mut c = against(&store, home.path());
        c.env_remove("AWS_ACCESS_KEY_ID")
            .env("AWS_SHARED_CREDENTIALS_FILE", file)
            .args(["index", "s3://team/runs"]);
        let r = measured(c, Duration::from_secs(20));
        assert_eq!(r.code, Some(2), "{}", r.stderr);
        assert!(r.stderr.contains("the AWS profile file"), "{}", r.stderr);
        assert!(r.stderr.contains(what), "{}", r.stderr);
        assert!(r.took < Duration::from_secs(10));
        assert!(r.peak_mb < 100, "peak {} MB", r.peak_mb);
    }
}

#[test]
fn names_a_listing_could_not_give_back_are_refused_by_push() {
    let store = Store::start(Mode::Honest);
    let home = tempfile::tempdir().unwrap();
    let src = a_bundle(home.path());
    for name in [
        "a%41b.json",
        "kpro5 run.json",
        "kpro\u{e9}.json",
        "k\u{1b}[2J.json",
    ] {
        let p = home.path().join(name);
        std::fs::copy(&src, &p).unwrap();
        let mut c = against(&store, home.path());
        c.args(["push", "--to", "s3://team/runs"]).arg(&p);
        let r = measured(c, Duration::from_secs(30));
        assert_ne!(r.code, Some(0), "{name:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("a name in a bucket is letters, digits"),
            "{}",
            r.stderr
        );
        assert!(!r.stderr.contains('\u{1b}'), "{:?}", r.stderr);
    }
    // Only the write check's object came and went: nothing was stored under those names.
    assert!(
        store.keys().is_empty(),
        "{:?} {:?}",
        store.keys(),
        store.seen()
    );
}

/// A small valid bundle in `dir`: the demo's simplest, written by `import` of a text table.
pub(crate) fn a_bundle(dir: &Path) -> std::path::PathBuf {
    let table = dir.join("t.txt");
    std::fs::write(
        &table,
        "C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail\n1 | 70.2 | 73.5 | 0.32 | 2000 | 28.5 | 4 | 0\n",
    )
    .unwrap();
    let out = dir.join("kpro6.json");
    let r = command()
        .args([
            "import",
            "--from",
            "table",
            "--label",
            "kpro6",
            "--output-len",
            "500",
            "--input-len",
            "1000",
            "-o",
        ])
        .arg(&out)
        .arg(&table)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", text(&r.stderr));
    out
}

/// A simulated server for a run's few requests, on loopback, `decode_s` a decode step.
async fn sim_at(decode_s: f64) -> llmsweep::sim::SimServer {
    use llmsweep::sim::{Preset, SimConfig, SimServer};
    SimServer::start(
        SimConfig {
            decode_d0_s: decode_s,
            ..SimConfig::preset(Preset::Fast)
        },
        0,
    )
    .await
    .unwrap()
}

async fn sim() -> llmsweep::sim::SimServer {
    sim_at(0.01).await
}

/// What a child ended with, waited for off the runtime's threads.
async fn finished(child: std::process::Child) -> std::process::Output {
    tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap()
}

fn sweep<'a>(url: &'a str, levels: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "throughput",
        "--url",
        url,
        "--label",
        "kpro5",
        "--concurrency",
        levels,
        "--input-len",
        "20",
        "--output-len",
        "16",
        "--requests",
        "8",
        "--warmup",
        "0",
        "--out",
        out,
    ]
}

/// Sends `sig` (`INT`, `TERM`) to process `pid`.
fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// The first bundle in `dir`, when one is there and reads.
fn bundle_in(dir: &Path) -> Option<llmsweep_shared::Bundle> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .find_map(|e| llmsweep_shared::Bundle::from_bytes(&std::fs::read(e.path()).ok()?).ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_cuts_the_wait_for_the_bucket_and_says_what_is_where() {
    let sim = sim().await;
    let url = sim.url();
    let store = Store::start(Mode::SlowBundleWrites(120_000));
    let work = tempfile::tempdir().unwrap();
    let mut c = against(&store, work.path());
    c.current_dir(work.path())
        .args(sweep(&url, "1", "s3://team/runs"));
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let results = work.path().join("results");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !bundle_in(&results).is_some_and(|b| b.complete) {
        assert!(Instant::now() < deadline, "the run did not end");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let sent = Instant::now();
    signal(pid, "INT");
    let o = finished(child).await;
    let err = text(&o.stderr);
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("the bundle is not in the bucket (Ctrl-C stopped the upload)"),
        "{err}"
    );
    assert!(
        err.contains("Ctrl-C: stopped while uploading: the bundle is complete in results/"),
        "{err}"
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_the_bucket_check_ends_the_run_before_its_first_request() {
    let store = Store::start(Mode::SlowListing(60_000));
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    server.set_nonblocking(true).unwrap();
    let url = format!("http://{}", server.local_addr().unwrap());
    let work = tempfile::tempdir().unwrap();
    let mut c = against(&store, work.path());
    c.current_dir(work.path())
        .args(sweep(&url, "1", "s3://team/runs"));
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(20);
    while store.seen().is_empty() {
        assert!(Instant::now() < deadline, "no listing was asked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let sent = Instant::now();
    signal(pid, "TERM");
    let o = finished(child).await;
    let err = text(&o.stderr);
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "took {:?}",
        sent.elapsed()
    );
    assert_eq!(o.status.code(), Some(143), "{err}");
    assert!(
        err.contains("SIGTERM: stopped before the first request"),
        "{err}"
    );
    assert!(server.accept().is_err(), "a request reached the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_local_disk_still_leaves_the_final_bundle_in_the_bucket() {
    let sim = sim_at(0.03).await;
    let url = sim.url();
    let store = Store::start(Mode::Honest);
    let work = tempfile::tempdir().unwrap();
    let mut c = against(&store, work.path());
    c.current_dir(work.path())
        .env("TMPDIR", work.path().join("tmp"))
        .args(sweep(&url, "1,2,4", "s3://team/runs"));
    std::fs::create_dir(work.path().join("tmp")).unwrap();
    let child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let results = work.path().join("results");
    let deadline = Instant::now() + Duration::from_secs(60);
    while bundle_in(&results).is_none_or(|b| b.sweeps.first().is_none_or(|s| s.points.is_empty())) {
        assert!(Instant::now() < deadline, "no level was written");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The folder goes, and a file takes its name: no write there can succeed any more.
    std::fs::remove_dir_all(&results).unwrap();
    std::fs::write(&results, b"").unwrap();
    let o = finished(child).await;
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{err}");
    let key = store
        .keys()
        .into_iter()
        .find(|k| k.starts_with("runs/kpro5-throughput-") && k.ends_with(".json"))
        .unwrap_or_else(|| panic!("{:?}", store.keys()));
    let in_bucket = llmsweep_shared::Bundle::from_bytes(&store.get(&key).unwrap()).unwrap();
    assert!(in_bucket.complete, "{err}");
    assert_eq!(in_bucket.sweeps[0].points.len(), 3);
    let local = bundle_in(&work.path().join("tmp")).expect("the temp folder's copy");
    assert_eq!(local.to_json().unwrap(), in_bucket.to_json().unwrap());
    assert!(out.contains(&format!(" and s3://team/{key}")), "{out}");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_goes_only_to_a_server_the_user_named_on_resume() {
    // A bundle someone else wrote into the team's bucket, recording a server of theirs.
    let collector = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    collector.set_nonblocking(true).unwrap();
    let theirs = format!("http://{}", collector.local_addr().unwrap());
    let sim = sim().await;
    let url = sim.url();
    let work = tempfile::tempdir().unwrap();
    let store = Store::start(Mode::Honest);
    let mut c = against(&store, work.path());
    c.current_dir(work.path())
        .args(sweep(&url, "1,2", "s3://team/runs"));
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let key = store
        .keys()
        .into_iter()
        .find(|k| k.contains("kpro5-throughput-"))
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&store.get(&key).unwrap()).unwrap();
    v["complete"] = false.into();
    v["target"]["url"] = theirs.clone().into();
    let args = v["tool"]["command_line"].as_array_mut().unwrap();
    for a in args.iter_mut() {
        if a.as_str() == Some(url.as_str()) {
            *a = theirs.clone().into();
        }
    }
    store.put(&key, serde_json::to_vec(&v).unwrap());
    std::fs::remove_dir_all(work.path().join("results")).unwrap();
    let place = format!("s3://team/{key}");

    let mut c = against(&store, work.path());
    c.current_dir(work.path())
        .env("LLMSWEEP_API_KEY", "sk-team-secret")
        .args(["throughput", "--resume", &place]);
    let r = measured(c, Duration::from_secs(30));
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("comes from a bucket"), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("give --url {theirs}")),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("sk-team-secret"));
    assert!(
        collector.accept().is_err(),
        "a request reached the recorded server"
    );

    // Named, it goes there: the user's own server, the sim.
    let mut c = against(&store, work.path());
    c.current_dir(work.path())
        .env("LLMSWEEP_API_KEY", "sk-team-secret")
        .args(["throughput", "--resume", &place, "--url", &url]);
    let r = measured(c, Duration::from_secs(60));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        collector.accept().is_err(),
        "a request reached the recorded server"
    );
    sim.shutdown().await;
}

#[test]
fn report_and_export_take_a_bucket_prefix_as_a_folder() {
    let store = Store::start(Mode::Honest);
    let home = tempfile::tempdir().unwrap();
    let one = a_bundle(home.path());
    let two = home.path().join("kpro6-again.json");
    std::fs::copy(&one, &two).unwrap();
    store.put("runs/kpro6.json", std::fs::read(&one).unwrap());
    store.put("runs/kpro6-again.json", std::fs::read(&two).unwrap());
    store.put("runs/notes.txt", "not a bundle");
    let mut c = against(&store, home.path());
    c.args(["export", "--csv", "s3://team/runs"]);
    let r = measured(c, Duration::from_secs(30));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let rows: Vec<&str> = r.stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{}", r.stdout);
    assert!(rows[0].starts_with("kpro6-again.json,"), "{}", r.stdout);
    assert!(rows[1].starts_with("kpro6.json,"), "{}", r.stdout);
    let html = home.path().join("r.html");
    let mut c = against(&store, home.path());
    c.args(["report", "s3://team/runs", "-o"]).arg(&html);
    let r = measured(c, Duration::from_secs(30));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("2 runs"), "{}", r.stdout);
    assert!(std::fs::metadata(&html).unwrap().len() > 10_000);
}

#[test]
fn a_first_listing_cut_short_keeps_what_it_read() {
    let store = Store::start(Mode::Honest);
    let home = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(a_bundle(home.path())).unwrap();
    for i in 0..2500 {
        store.put(&format!("runs/kpro6-{i:04}.json"), bytes.clone());
    }
    let mut c = against(&store, home.path());
    let mut child = c
        .args(["index", "s3://team/runs"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while store.get("runs/.llmsweep-index.json").is_none() {
        assert!(Instant::now() < deadline, "no index was written on the way");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the listing ended before its first checkpoint"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Cut short: killed, as a CI job's timeout would.
    let _ = child.kill();
    let _ = child.wait();
    let mut c = against(&store, home.path());
    c.args(["index", "s3://team/runs"]);
    let r = measured(c, Duration::from_secs(120));
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let from_index: usize = r
        .stdout
        .split(" read, ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(from_index >= 1000, "{}", r.stdout);
    assert!(r.stdout.contains(": 2500 bundles;"), "{}", r.stdout);
}
