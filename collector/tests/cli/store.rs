//! Bundles in a real S3-compatible store: Garage, started on loopback for each test (`.ci/run`
//! builds it; skipped with a notice when it is not installed, unless
//! `LLMSWEEP_REQUIRE_STORE=1`). A run writes into a bucket, is resumed, viewed, compared,
//! reported and put in a history from it; a wrong bucket, no credentials, the store going away
//! mid-run and coming back, foreign objects and a bundle replaced by a partial upload each get
//! what a user needs.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use llmsweep::sim::{Preset, SimConfig, SimServer};

use crate::support::{command, text};

const BUCKET: &str = "llmsweep-test";

/// A Garage server of one node, with one bucket and one key that may use it.
struct Garage {
    child: Child,
    dir: tempfile::TempDir,
    s3_port: u16,
    key_id: String,
    secret: String,
}

impl Drop for Garage {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn garage_bin() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("LLMSWEEP_GARAGE") {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("garage"))
            .find(|p| p.is_file())
    })
}

/// Garage, started; `None` (with a notice) when it is not installed and not required.
fn garage() -> Option<Garage> {
    let Some(bin) = garage_bin() else {
        if std::env::var("LLMSWEEP_REQUIRE_STORE").as_deref() == Ok("1") {
            panic!(
                "garage is not installed and LLMSWEEP_REQUIRE_STORE=1: run .ci/install-object-store.sh"
            );
        }
        eprintln!("skipped: garage is not installed (.ci/install-object-store.sh builds it)");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let (rpc, s3, admin) = (free_port(), free_port(), free_port());
    let config = dir.path().join("garage.toml");
    std::fs::write(
        &config,
        format!(
            r#"metadata_dir = "{meta}"
data_dir = "{data}"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:{rpc}"
rpc_public_addr = "127.0.0.1:{rpc}"
rpc_secret = "{secret}"

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:{s3}"
root_domain = ".s3.garage.localhost"

[admin]
api_bind_addr = "127.0.0.1:{admin}"
"#,
            meta = dir.path().join("meta").display(),
            data = dir.path().join("data").display(),
            secret = "4f".repeat(32),
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.path().join("garage.log")).unwrap();
    let child = Command::new(&bin)
        .args(["-c", config.to_str().unwrap(), "server"])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let cli = |args: &[&str]| -> Output {
        Command::new(&bin)
            .args(["-c", config.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    let node = loop {
        let o = cli(&["node", "id", "-q"]);
        if o.status.success() {
            break text(&o.stdout).trim().to_string();
        }
        assert!(
            Instant::now() < deadline,
            "garage did not start: {}\n{}",
            text(&o.stderr),
            std::fs::read_to_string(dir.path().join("garage.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let id = node.split('@').next().unwrap().to_string();
    let ok = |o: Output, what: &str| {
        assert!(
            o.status.success(),
            "garage {what}: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        text(&o.stdout)
    };
    // `node id` answers before the node's RPC listener is up: the first command that needs it
    // may be refused ("Unable to connect to destination RPC host"); it is tried again until the
    // deadline.
    let assigned = loop {
        let o = cli(&["layout", "assign", "-z", "dc1", "-c", "1G", &id]);
        if o.status.success() || Instant::now() >= deadline {
            break o;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    ok(assigned, "layout assign");
    ok(cli(&["layout", "apply", "--version", "1"]), "layout apply");
    ok(cli(&["bucket", "create", BUCKET]), "bucket create");
    let key = ok(cli(&["key", "create", "llmsweep-test-key"]), "key create");
    let field = |name: &str| {
        key.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim().eq_ignore_ascii_case(name)).then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no {name} in: {key}"))
    };
    let (key_id, secret) = (field("Key ID"), field("Secret key"));
    ok(
        cli(&[
            "bucket",
            "allow",
            "--read",
            "--write",
            "--owner",
            BUCKET,
            "--key",
            "llmsweep-test-key",
        ]),
        "bucket allow",
    );
    Some(Garage {
        child,
        dir,
        s3_port: s3,
        key_id,
        secret,
    })
}

/// A TCP relay to the store that can be taken down (every connection closed, new ones refused)
/// and brought back: the store going away and coming back, as a client sees it.
struct Relay {
    port: u16,
    up: Arc<AtomicBool>,
    live: Arc<Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    fn start(to: u16) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let live: Arc<Mutex<Vec<std::net::TcpStream>>> = Arc::default();
        let (flag, held) = (Arc::clone(&up), Arc::clone(&live));
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                if !flag.load(Ordering::SeqCst) {
                    drop(conn);
                    continue;
                }
                let Ok(store) = std::net::TcpStream::connect(("127.0.0.1", to)) else {
                    continue;
                };
                held.lock().unwrap().push(conn.try_clone().unwrap());
                let (mut a, mut b) = (conn.try_clone().unwrap(), store.try_clone().unwrap());
                let (mut c, mut d) = (conn, store);
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut a, &mut b);
                    let _ = b.shutdown(std::net::Shutdown::Both);
                });
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut d, &mut c);
                    let _ = c.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        Relay { port, up, live }
    }

    fn down(&self) {
        self.up.store(false, Ordering::SeqCst);
        for c in self.live.lock().unwrap().drain(..) {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
    }

    fn back(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

impl Garage {
    /// `llmsweep` with this store's endpoint and key, in `cwd`, with no profile of the machine.
    fn llmsweep(&self, cwd: &Path, endpoint_port: u16) -> Command {
        let mut c = command();
        c.current_dir(cwd)
            .env("HOME", self.dir.path())
            .env("AWS_ACCESS_KEY_ID", &self.key_id)
            .env("AWS_SECRET_ACCESS_KEY", &self.secret)
            .env("AWS_REGION", "garage")
            .env(
                "AWS_ENDPOINT_URL",
                format!("http://127.0.0.1:{endpoint_port}"),
            )
            .env_remove("AWS_PROFILE")
            .env_remove("AWS_SESSION_TOKEN");
        c
    }

    fn run(&self, cwd: &Path, args: &[&str]) -> Output {
        self.llmsweep(cwd, self.s3_port)
            .args(args)
            .output()
            .unwrap()
    }
}

fn sweep_args<'a>(url: &'a str, label: &'a str, out: &'a str, levels: &'a str) -> Vec<&'a str> {
    vec![
        "throughput",
        "--url",
        url,
        "--label",
        label,
        "--concurrency",
        levels,
        "--input-len",
        "20",
        "--output-len",
        "16",
        "--requests",
        "8",
        "--out",
        out,
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_in_a_bucket_is_resumed_viewed_compared_reported_and_in_a_history() {
    let Some(g) = garage() else { return };
    let work = tempfile::tempdir().unwrap();
    let sim = SimServer::start(SimConfig::preset(Preset::Fast), 0)
        .await
        .unwrap();
    let url = sim.url();
    let prefix = format!("s3://{BUCKET}/team/nightly");
    let mut names = Vec::new();
    for label in ["kpro6", "kpro5"] {
        let o = g.run(work.path(), &sweep_args(&url, label, &prefix, "1,2"));
        assert!(o.status.success(), "{}", text(&o.stderr));
        let said = text(&o.stdout);
        let line = said.lines().find(|l| l.starts_with("bundle: ")).unwrap();
        // Both copies named: the local one, and the bucket's.
        let (local, remote) = line["bundle: ".len()..].split_once(" and ").unwrap();
        assert!(local.starts_with("results/"), "{line}");
        assert!(work.path().join(local).is_file(), "{line}");
        assert!(
            remote.starts_with(&format!("{prefix}/{label}-throughput-")),
            "{line}"
        );
        names.push(remote.to_string());
    }
    // compare, report and export read the bucket's copies.
    let o = g.run(work.path(), &["compare", &names[0], &names[1]]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("kpro5"), "{}", text(&o.stdout));
    let o = g.run(
        work.path(),
        &["report", &names[0], &names[1], "-o", "r.html"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(work.path().join("r.html").is_file());
    let o = g.run(work.path(), &["export", "--csv", &names[1]]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).lines().count() >= 3);

    // The index was kept by the runs: listing reads nothing.
    let o = g.run(work.path(), &["index", &prefix]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains(": 2 bundles; 0 read, 2 from the index; index unchanged"),
        "{}",
        text(&o.stdout)
    );
    let o = g.run(work.path(), &["history", &prefix]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // One run per label: no history of two runs yet.
    assert!(
        text(&o.stderr).contains("no history of steady_tok_s"),
        "{}",
        text(&o.stderr)
    );

    // `view` over the bucket: its listing with each run's summary, each bundle's bytes.
    let mut view = g
        .llmsweep(work.path(), g.s3_port)
        .args(["view", &prefix, "--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(view.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let page = first
        .trim()
        .strip_prefix("llmsweep view: ")
        .unwrap()
        .to_string();
    let listing: serde_json::Value = reqwest::get(format!("{page}api/bundles"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let entries = listing["bundles"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{listing}");
    assert!(
        entries.iter().all(|e| e["summary"]["sweeps"].is_array()),
        "{listing}"
    );
    let first_url = entries[0]["url"].as_str().unwrap();
    let bytes = reqwest::get(format!("{page}{first_url}"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert!(llmsweep_shared::Bundle::from_bytes(&bytes).is_ok());
    let _ = view.kill();
    let _ = view.wait();

    // --resume from the bucket: an interrupted bundle finished, and put back.
    let mut b = llmsweep_shared::Bundle::from_bytes(
        &std::fs::read(
            work.path()
                .join("results")
                .join(names[1].rsplit('/').next().unwrap()),
        )
        .unwrap(),
    )
    .unwrap();
    b.complete = false;
    b.sweeps[0].points.pop();
    let cut = work.path().join("cut");
    std::fs::create_dir(&cut).unwrap();
    let cut_file = cut.join("kpro5-cut.json");
    std::fs::write(&cut_file, b.to_json().unwrap()).unwrap();
    let o = g.run(
        work.path(),
        &["push", cut_file.to_str().unwrap(), "--to", &prefix],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let cut_url = format!("{prefix}/kpro5-cut.json");
    let o = g.run(
        work.path(),
        &["throughput", "--resume", &cut_url, "--url", &url],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains(&format!("bundle: results/kpro5-cut.json and {cut_url}")),
        "{}",
        text(&o.stdout)
    );
    let o = g.run(work.path(), &["export", "--csv", &cut_url]);
    // Two levels again, complete.
    assert_eq!(text(&o.stdout).lines().count(), 3, "{}", text(&o.stdout));
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_bucket_and_no_credentials_are_refused_before_any_request() {
    let Some(g) = garage() else { return };
    let work = tempfile::tempdir().unwrap();
    let sim = SimServer::start(SimConfig::preset(Preset::Fast), 0)
        .await
        .unwrap();
    let url = sim.url();
    let o = g.run(
        work.path(),
        &sweep_args(&url, "kpro5", "s3://no-such-bucket/x", "1"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("the bucket does not exist"),
        "{}",
        text(&o.stderr)
    );
    let o = g
        .llmsweep(work.path(), g.s3_port)
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .args(sweep_args(&url, "kpro5", &format!("s3://{BUCKET}/x"), "1"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("no credentials were found"), "{err}");
    assert!(!err.contains(&g.secret));
    // A wrong secret: refused, and never printed.
    let o = g
        .llmsweep(work.path(), g.s3_port)
        .env("AWS_SECRET_ACCESS_KEY", "not-the-secret-4f4f4f")
        .args(["history", &format!("s3://{BUCKET}/x")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("refused the credentials"), "{err}");
    assert!(!err.contains("not-the-secret"), "{err}");
    // A region the store does not serve: said as such, not as the store's raw XML.
    let o = g
        .llmsweep(work.path(), g.s3_port)
        .env("AWS_REGION", "eu-west-1")
        .args(["history", &format!("s3://{BUCKET}/x")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("the store expects another region: set AWS_REGION"),
        "{err}"
    );
    assert!(!err.contains("<?xml"), "{err}");
    assert_eq!(sim.stats().requests, 0, "a request was sent");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_going_away_mid_run_costs_no_measurement() {
    let Some(g) = garage() else { return };
    let work = tempfile::tempdir().unwrap();
    let sim = SimServer::start(
        SimConfig {
            decode_d0_s: 0.02,
            ..SimConfig::preset(Preset::Fast)
        },
        0,
    )
    .await
    .unwrap();
    let url = sim.url();
    let relay = Relay::start(g.s3_port);
    let prefix = format!("s3://{BUCKET}/outage");

    // Away after the first level, back before the end: the copy is made after all.
    let child = g
        .llmsweep(work.path(), relay.port)
        .args(sweep_args(&url, "kpro5", &prefix, "1,2,4,8"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let results = work.path().join("results");
    let levels = || -> usize {
        std::fs::read_dir(&results)
            .ok()
            .and_then(|d| {
                d.flatten()
                    .find(|e| e.path().extension().is_some_and(|x| x == "json"))
            })
            .and_then(|e| std::fs::read(e.path()).ok())
            .and_then(|b| llmsweep_shared::Bundle::from_bytes(&b).ok())
            .map_or(0, |b| b.sweeps.first().map_or(0, |s| s.points.len()))
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while levels() < 1 {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    relay.down();
    while levels() < 3 {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    relay.back();
    let o = child.wait_with_output().unwrap();
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{err}");
    // Prose as a person reads it: a warning is wrapped to the width, and where depends on the
    // store's own error text (its timings).
    let all = format!("{out}{err}")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        all.contains("the bundle is kept in the local folder and the upload is tried again"),
        "{all}"
    );
    assert!(all.contains("the bundle is in the bucket again"), "{all}");
    assert!(
        out.contains(&format!(" and {prefix}/kpro5-throughput-")),
        "{out}"
    );
    assert_eq!(levels(), 4);

    // Away to the end: the run still measures every level, and says how to copy the bundle
    // later.
    let relay2 = Relay::start(g.s3_port);
    let child = g
        .llmsweep(work.path(), relay2.port)
        .args(sweep_args(&url, "kpro6", &prefix, "1,2"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    relay2.down();
    let o = child.wait_with_output().unwrap();
    let err = text(&o.stderr);
    // Measured and kept locally, but not where the job keeps its results: a status of its own.
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("the bundle is not in the bucket"), "{err}");
    let push_hint = err
        .lines()
        .find_map(|l| {
            l.split('`')
                .nth(1)
                .filter(|c| c.starts_with("llmsweep push"))
        })
        .unwrap_or_else(|| panic!("{err}"))
        .to_string();
    let args: Vec<&str> = push_hint.split_whitespace().skip(1).collect();
    let o = g.run(work.path(), &args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = g.run(work.path(), &["index", &prefix]);
    assert!(
        text(&o.stdout).contains(": 2 bundles"),
        "{}",
        text(&o.stdout)
    );
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_objects_and_a_partial_upload_are_named_not_trusted() {
    let Some(g) = garage() else { return };
    let work = tempfile::tempdir().unwrap();
    let sim = SimServer::start(SimConfig::preset(Preset::Fast), 0)
        .await
        .unwrap();
    let prefix = format!("s3://{BUCKET}/mixed");
    let o = g.run(work.path(), &sweep_args(&sim.url(), "kpro5", &prefix, "1"));
    assert!(o.status.success(), "{}", text(&o.stderr));
    sim.shutdown().await;
    let store = object_store::aws::AmazonS3Builder::new()
        .with_bucket_name(BUCKET)
        .with_region("garage")
        .with_endpoint(format!("http://127.0.0.1:{}", g.s3_port))
        .with_allow_http(true)
        .with_access_key_id(&g.key_id)
        .with_secret_access_key(&g.secret)
        .build()
        .unwrap();
    use object_store::ObjectStoreExt as _;
    let put = |k: &str, b: &'static [u8]| {
        let store = &store;
        let k = object_store::path::Path::from(k);
        async move { store.put(&k, b.to_vec().into()).await.unwrap() }
    };
    put("mixed/notes.txt", b"not a bundle").await;
    put("mixed/deeper/x.json", b"{}").await;
    put("mixed/empty.json", b"{}").await;
    put("mixed/partial.json", b"{\"schema_version\": 1, \"id\": \"x").await;
    // A bundle replaced by a partial upload: same name, bytes cut short.
    let good = std::fs::read_dir(work.path().join("results"))
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "json"))
        .unwrap()
        .path();
    let name = good.file_name().unwrap().to_str().unwrap().to_string();
    let o = g.run(work.path(), &["index", &prefix]);
    assert!(
        text(&o.stdout).contains(": 3 bundles (2 unreadable)"),
        "{}",
        text(&o.stdout)
    );
    let bytes = std::fs::read(&good).unwrap();
    let cut: &'static [u8] = Box::leak(bytes[..bytes.len() / 2].to_vec().into_boxed_slice());
    put(&format!("mixed/{name}"), cut).await;
    let o = g.run(work.path(), &["index", &prefix]);
    let said = text(&o.stdout);
    assert!(
        said.contains(": 3 bundles (3 unreadable); 1 read, 2 from the index"),
        "{said}"
    );
    let o = g.run(
        work.path(),
        &[
            "compare",
            &format!("{prefix}/{name}"),
            &format!("{prefix}/{name}"),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains(&name) && err.contains("cannot be read"),
        "{err}"
    );
    // A bundle that is not there: said, with where to look.
    let o = g.run(
        work.path(),
        &["export", "--csv", &format!("{prefix}/nope.json")],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("there is no object {prefix}/nope.json; `llmsweep index {prefix}` lists the bundles there")),
        "{err}"
    );
    // A store's other names are not taken for local folders.
    let o = g.run(work.path(), &["history", "gs://team/x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("s3://BUCKET/PREFIX for S3"),
        "{}",
        text(&o.stderr)
    );
    // An object that is no bundle name is refused by name.
    let o = g.run(
        work.path(),
        &[
            "compare",
            &format!("{prefix}/notes.txt"),
            &format!("{prefix}/{name}"),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("names no bundle"),
        "{}",
        text(&o.stderr)
    );
}
