//! `llmsweep view` over HTTP: the viewer's files, the folder's listing (read again on every
//! request), the bundles themselves, and nothing else — no path out of the folder, no request
//! naming a foreign host. Then the binary as a user runs it: the address it prints, Ctrl-C, and
//! the errors for a missing folder and a taken port.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::IpAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use llmsweep::output::view::{Access, DEFAULT_PORT, Folder, Listen, MAX_FILE_READS, listen, serve};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::MAX_INFLATED_BYTES;
use llmsweep_shared::folder::FolderListing;

const GOLDEN: &str = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");
const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(data).unwrap();
    gz.finish().unwrap()
}

fn gunzip(data: &[u8]) -> String {
    let mut s = String::new();
    flate2::read::GzDecoder::new(data)
        .read_to_string(&mut s)
        .unwrap();
    s
}

/// A folder of two good bundles (one gzip), a broken one, and files that must not be served.
fn results_folder() -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(
        p.join("kpro5.json"),
        GOLDEN.replace("\"golden\"", "\"kpro5\""),
    )
    .unwrap();
    std::fs::write(
        p.join("kpro6 run.json.gz"),
        gzip(GOLDEN.replace("\"golden\"", "\"kpro6\"").as_bytes()),
    )
    .unwrap();
    std::fs::write(p.join("broken.json"), &GOLDEN[..GOLDEN.len() / 2]).unwrap();
    std::fs::write(p.join("notes.txt"), "not a bundle").unwrap();
    std::fs::write(p.join(".hidden.json"), GOLDEN).unwrap();
    std::fs::write(p.join("kpro7.json.tmp"), GOLDEN).unwrap();
    std::fs::create_dir(p.join("sub")).unwrap();
    std::fs::write(p.join("sub/nested.json"), GOLDEN).unwrap();
    std::fs::write(outside.path().join("secret.json"), GOLDEN).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.json"), p.join("link-out.json"))
        .unwrap();
    std::os::unix::fs::symlink(p.join("kpro5.json"), p.join("link-in.json")).unwrap();
    (dir, outside)
}

/// Serves `dir` on a free loopback port; returns the base URL.
async fn start(dir: &Path) -> String {
    start_with(dir, Access::default()).await
}

/// Serves `dir` on a free loopback port with `access`; returns the base URL.
async fn start_with(dir: &Path, access: Access) -> String {
    let folder = Arc::new(Folder::open(dir).unwrap());
    let (listener, note) = listen(Listen {
        bind: LOOPBACK,
        port: Some(0),
    })
    .await
    .unwrap();
    assert!(note.is_none());
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(listener, folder, access, std::future::pending()));
    format!("http://{addr}/")
}

async fn get(url: &str) -> (u16, String, Vec<u8>) {
    let resp = reqwest::get(url).await.unwrap();
    let status = resp.status().as_u16();
    let ctype = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, ctype, resp.bytes().await.unwrap().to_vec())
}

async fn listing(base: &str) -> FolderListing {
    let (status, ctype, body) = get(&format!("{base}api/bundles")).await;
    assert_eq!((status, ctype.as_str()), (200, "application/json"));
    serde_json::from_slice(&body).unwrap()
}

#[tokio::test]
async fn serves_the_viewer_the_listing_and_the_bundles() {
    let (dir, _outside) = results_folder();
    let base = start(dir.path()).await;

    let (status, ctype, page) = get(&base).await;
    assert_eq!((status, ctype.as_str()), (200, "text/html; charset=utf-8"));
    let page = String::from_utf8(page).unwrap();
    assert!(
        page.contains(r#"<meta name="llmsweep-folder" content="api/bundles">"#),
        "the page announces the listing"
    );
    for (path, want) in [
        ("llmsweep-viewer_bg.wasm", "application/wasm"),
        ("llmsweep-viewer.js", "text/javascript; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
        ("sample.json", "application/json"),
    ] {
        let (status, ctype, body) = get(&format!("{base}{path}")).await;
        assert_eq!((status, ctype.as_str()), (200, want), "{path}");
        assert!(!body.is_empty(), "{path}");
    }

    let l = listing(&base).await;
    let mut names: Vec<&str> = l.bundles.iter().map(|b| b.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "broken.json",
            "kpro5.json",
            "kpro6 run.json.gz",
            "link-in.json"
        ],
        "bundles directly in the folder, a symlink inside it, nothing else"
    );
    let by_name = |n: &str| l.bundles.iter().find(|b| b.name == n).unwrap();
    let a = by_name("kpro5.json");
    assert_eq!(a.url, "bundles/kpro5.json");
    let on_disk = std::fs::read(dir.path().join("kpro5.json")).unwrap();
    assert_eq!(a.size_bytes, on_disk.len() as u64);
    assert!(a.modified.as_deref().unwrap().ends_with('Z'));
    let facts = a.bundle.as_ref().unwrap();
    assert_eq!(facts.label, "kpro5");
    assert!(facts.simulated && facts.complete);
    assert_eq!(facts.sweeps.len(), 2);
    let gz = by_name("kpro6 run.json.gz");
    assert_eq!(gz.url, "bundles/kpro6%20run.json.gz");
    assert_eq!(gz.bundle.as_ref().unwrap().label, "kpro6");
    let broken = by_name("broken.json");
    assert!(broken.bundle.is_none());
    assert!(
        broken.error.as_deref().unwrap().contains("EOF"),
        "{broken:?}"
    );

    // The files themselves, as they are on disk.
    let (status, ctype, body) = get(&format!("{base}{}", a.url)).await;
    assert_eq!((status, ctype.as_str()), (200, "application/json"));
    assert_eq!(body, on_disk);
    let (status, ctype, body) = get(&format!("{base}{}", gz.url)).await;
    assert_eq!((status, ctype.as_str()), (200, "application/gzip"));
    assert_eq!(Bundle::from_json(&gunzip(&body)).unwrap().label, "kpro6");
}

/// A file the listing calls too big is refused with 413 and a message naming its size and the
/// limit — not read into memory; a file under the limit still streams, byte for byte.
#[tokio::test]
async fn a_file_over_the_bundle_limit_is_refused_and_the_others_stream_whole() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse: it takes no disk, and reading it whole would take 513 MB of memory.
    let huge = std::fs::File::create(dir.path().join("huge.json")).unwrap();
    huge.set_len(MAX_INFLATED_BYTES as u64 + 1024 * 1024)
        .unwrap();
    let text = GOLDEN.replace("\"golden\"", "\"kpro5\"");
    std::fs::write(dir.path().join("kpro5.json"), &text).unwrap();
    let packed = gzip(text.as_bytes());
    std::fs::write(dir.path().join("kpro5.json.gz"), &packed).unwrap();
    let base = start(dir.path()).await;

    let (status, ctype, body) = get(&format!("{base}bundles/huge.json")).await;
    assert_eq!((status, ctype.as_str()), (413, "text/plain; charset=utf-8"));
    assert_eq!(
        String::from_utf8(body).unwrap(),
        "huge.json is not served: the file is 513 MB, more than the 512 MB a bundle may hold\n"
    );
    let listed = listing(&base).await;
    let huge = listed
        .bundles
        .iter()
        .find(|b| b.name == "huge.json")
        .unwrap();
    assert_eq!(
        huge.error.as_deref(),
        Some("the file is 513 MB, more than the 512 MB a bundle may hold"),
        "the listing and the file say the same"
    );

    let (status, _, body) = get(&format!("{base}bundles/kpro5.json")).await;
    assert_eq!(status, 200);
    assert_eq!(body, text.as_bytes());
    let (status, _, body) = get(&format!("{base}bundles/kpro5.json.gz")).await;
    assert_eq!(status, 200);
    assert_eq!(body, packed);
}

/// At most MAX_FILE_READS files stream at once: one more request waits until one of them ends.
#[tokio::test]
async fn file_reads_beyond_the_bound_wait_for_a_free_one() {
    let dir = tempfile::tempdir().unwrap();
    // Far more than the socket buffers take, so a body not read keeps its stream open.
    let big = std::fs::File::create(dir.path().join("big.json")).unwrap();
    big.set_len(256 * 1024 * 1024).unwrap();
    let base = start(dir.path()).await;
    let url = format!("{base}bundles/big.json");
    let client = reqwest::Client::new();
    let mut open = Vec::new();
    for _ in 0..MAX_FILE_READS {
        let resp = client.get(&url).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        open.push(resp);
    }
    let next = tokio::spawn({
        let (client, url) = (client.clone(), url.clone());
        async move { client.get(&url).send().await.unwrap().status().as_u16() }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!next.is_finished(), "a read beyond the bound waits");
    drop(open.pop());
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), next)
        .await
        .expect("answered once a read ended")
        .unwrap();
    assert_eq!(status, 200);
}

#[tokio::test]
async fn nothing_outside_the_listing_is_served() {
    let (dir, _outside) = results_folder();
    let base = start(dir.path()).await;
    for path in [
        "bundles/..%2Fsecret.json",
        "bundles/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
        "bundles/%2Fetc%2Fpasswd",
        "bundles/link-out.json",
        "bundles/sub%2Fnested.json",
        "bundles/sub/nested.json",
        "bundles/notes.txt",
        "bundles/.hidden.json",
        "bundles/kpro7.json.tmp",
        "bundles/missing.json",
        "bundles/",
        "kpro5.json",
        "etc/passwd",
    ] {
        let (status, ctype, body) = get(&format!("{base}{path}")).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(ctype, "text/plain; charset=utf-8", "{path}");
        let text = String::from_utf8(body).unwrap();
        assert!(!text.contains("schema"), "{path}: {text}");
    }
    let (status, _, body) = get(&format!("{base}bundles/..%2Fsecret.json")).await;
    assert_eq!(status, 404);
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains("only .json and .json.gz files directly in the folder")
    );
}

#[tokio::test]
async fn new_and_changed_bundles_appear_on_the_next_listing() {
    let (dir, _outside) = results_folder();
    let base = start(dir.path()).await;
    assert_eq!(listing(&base).await.bundles.len(), 4);

    std::fs::write(
        dir.path().join("kpro8.json"),
        GOLDEN.replace("\"golden\"", "\"kpro8\""),
    )
    .unwrap();
    // The broken file is finished, and grows: it is read again.
    std::fs::write(dir.path().join("broken.json"), GOLDEN).unwrap();
    std::fs::remove_file(dir.path().join("link-in.json")).unwrap();
    let l = listing(&base).await;
    let labels: Vec<(String, Option<String>)> = l
        .bundles
        .iter()
        .map(|b| (b.name.clone(), b.bundle.as_ref().map(|f| f.label.clone())))
        .collect();
    assert_eq!(l.bundles.len(), 4, "{labels:?}");
    assert!(labels.contains(&("kpro8.json".into(), Some("kpro8".into()))));
    assert!(labels.contains(&("broken.json".into(), Some("golden".into()))));
    assert!(l.bundles.iter().all(|b| b.error.is_none()), "{labels:?}");
    let (status, _, _) = get(&format!("{base}bundles/kpro8.json")).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn the_newest_bundle_is_listed_first() {
    let dir = tempfile::tempdir().unwrap();
    let day = std::time::Duration::from_secs(86_400);
    let now = std::time::SystemTime::now();
    for (name, age_days) in [("old.json", 3), ("newest.json", 0), ("middle.json.gz", 1)] {
        let path = dir.path().join(name);
        std::fs::write(&path, GOLDEN).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(now - day * age_days).unwrap();
    }
    let base = start(dir.path()).await;
    let names: Vec<String> = listing(&base)
        .await
        .bundles
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(names, ["newest.json", "middle.json.gz", "old.json"]);
}

#[tokio::test]
async fn requests_naming_a_foreign_host_are_refused_on_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let base = start(dir.path()).await;
    let client = reqwest::Client::new();
    for (host, want) in [
        ("evil.example", 403),
        ("localhost.evil.example:80", 403),
        ("localhost", 200),
        ("127.0.0.1", 200),
    ] {
        let resp = client
            .get(format!("{base}api/bundles"))
            .header("host", host)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), want, "{host}");
    }
}

/// What a page of another site makes a browser ask (`Sec-Fetch-Site: cross-site`, not a
/// navigation) is refused; following a link to the viewer is not.
#[tokio::test]
async fn requests_another_site_makes_are_refused_navigations_are_not() {
    let (dir, _outside) = results_folder();
    let base = start(dir.path()).await;
    let client = reqwest::Client::new();
    for (site, mode, path, want) in [
        ("cross-site", "no-cors", "bundles/kpro5.json", 403),
        ("cross-site", "cors", "api/bundles", 403),
        ("cross-site", "navigate", "", 200),
        ("same-origin", "cors", "bundles/kpro5.json", 200),
        ("none", "navigate", "", 200),
    ] {
        let resp = client
            .get(format!("{base}{path}"))
            .header("sec-fetch-site", site)
            .header("sec-fetch-mode", mode)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), want, "{site} {mode} {path}");
    }
}

/// The listing is gzip-compressed for a client that takes it, and the same JSON inflated.
#[tokio::test]
async fn the_listing_is_compressed_for_a_browser() {
    let (dir, _outside) = results_folder();
    let base = start(dir.path()).await;
    let resp = reqwest::Client::new()
        .get(format!("{base}api/bundles"))
        .header("accept-encoding", "gzip, deflate, br")
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.headers()
            .get("content-encoding")
            .unwrap()
            .to_str()
            .unwrap(),
        "gzip"
    );
    let gz = resp.bytes().await.unwrap();
    let mut json = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut json).unwrap();
    let l: FolderListing = serde_json::from_slice(&json).unwrap();
    assert_eq!(l.bundles.len(), listing(&base).await.bundles.len());
}

#[tokio::test]
async fn the_page_has_a_content_security_policy_and_every_answer_nosniff() {
    let (dir, _outside) = results_folder();
    let base = start(dir.path()).await;
    let client = reqwest::Client::new();
    let page = client.get(&base).send().await.unwrap();
    let h = page.headers().clone();
    let csp = h["content-security-policy"].to_str().unwrap().to_string();
    let rule = |name: &str| {
        csp.split(';')
            .map(str::trim)
            .find(|d| d.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {csp}"))
            .to_string()
    };
    assert_eq!(rule("default-src"), "default-src 'none'");
    let scripts = rule("script-src");
    assert!(scripts.starts_with("script-src 'self' 'sha256-"), "{csp}");
    assert_eq!(scripts.matches("'sha256-").count(), 2, "{csp}");
    assert!(!scripts.contains("unsafe-inline"), "{csp}");
    assert_eq!(rule("connect-src"), "connect-src 'self'");
    assert_eq!(rule("frame-ancestors"), "frame-ancestors 'none'");
    assert_eq!(h["x-frame-options"], "DENY");
    let body = page.text().await.unwrap();
    assert!(!body.contains("llmsweep-remote-bundles"));
    for path in [
        "",
        "llmsweep-viewer.js",
        "llmsweep-viewer_bg.wasm",
        "api/bundles",
        "bundles/kpro5.json",
        "bundles/notes.txt",
        "nowhere",
    ] {
        let resp = client.get(format!("{base}{path}")).send().await.unwrap();
        let h = resp.headers();
        assert_eq!(h["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(h["referrer-policy"], "no-referrer", "{path}");
        assert_eq!(h["cross-origin-resource-policy"], "same-origin", "{path}");
    }
    // Refused by the Host check, still with the headers.
    let refused = client
        .get(&base)
        .header("host", "evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 403);
    assert_eq!(refused.headers()["x-content-type-options"], "nosniff");

    let open = start_with(
        dir.path(),
        Access {
            remote_bundles: true,
            ..Access::default()
        },
    )
    .await;
    let page = client.get(&open).send().await.unwrap();
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("connect-src 'self' http: https:;"), "{csp}");
    let body = page.text().await.unwrap();
    assert!(body.contains(r#"<meta name="llmsweep-remote-bundles" content="allow">"#));
}

#[tokio::test]
async fn the_default_port_falls_back_to_a_free_one_when_taken() {
    // Hold the default port (unless something else already does); either way it is taken.
    let _held = std::net::TcpListener::bind((LOOPBACK, DEFAULT_PORT));
    let (listener, note) = listen(Listen {
        bind: LOOPBACK,
        port: None,
    })
    .await
    .unwrap();
    assert_ne!(listener.local_addr().unwrap().port(), DEFAULT_PORT);
    assert!(note.unwrap().contains("--port"));
}

fn llmsweep() -> Command {
    Command::new(env!("CARGO_BIN_EXE_llmsweep"))
}

#[test]
fn the_binary_prints_the_address_serves_and_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kpro5.json"), GOLDEN).unwrap();
    let mut child = llmsweep()
        .arg("view")
        .arg(dir.path())
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let url = first
        .trim()
        .strip_prefix("llmsweep view: ")
        .unwrap_or_else(|| panic!("first line: {first}"))
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let mut second = String::new();
    out.read_line(&mut second).unwrap();
    assert!(second.contains("1 bundle;"), "{second}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    let l = rt.block_on(listing(&url));
    assert_eq!(l.bundles.len(), 1);
    assert_eq!(l.folder, dir.path().display().to_string());

    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(rest.contains("stopped"), "{rest}");
}

/// Beyond loopback the Host check stays on: an IP address, localhost, this machine's name and
/// each `--allow-host` pass; any other name is refused (DNS rebinding), and the warning says so.
#[test]
fn beyond_loopback_only_allowed_host_names_are_answered() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kpro5.json"), GOLDEN).unwrap();
    let mut child = llmsweep()
        .arg("view")
        .arg(dir.path())
        .args([
            "--bind",
            "0.0.0.0",
            "--port",
            "0",
            "--allow-host",
            "Results.LAN",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let url = first
        .trim()
        .strip_prefix("llmsweep view: ")
        .unwrap_or_else(|| panic!("first line: {first}"))
        .to_string();
    // Only ever sent to this machine: the forged names are in the Host header.
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let port = url
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    let hostname = gethostname::gethostname().to_string_lossy().into_owned();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = reqwest::Client::new();
    for (host, want) in [
        (format!("results.lan:{port}"), 200),
        ("RESULTS.lan.".to_string(), 200),
        (format!("{hostname}:{port}"), 200),
        (format!("192.168.7.7:{port}"), 200),
        (format!("localhost:{port}"), 200),
        (format!("evil.example:{port}"), 403),
        (format!("results.lan.evil.example:{port}"), 403),
    ] {
        let (status, body) = rt.block_on(async {
            let resp = client
                .get(format!("{url}api/bundles"))
                .header("host", &host)
                .send()
                .await
                .unwrap();
            (resp.status().as_u16(), resp.text().await.unwrap())
        });
        assert_eq!(status, want, "{host}: {body}");
        if want == 403 {
            assert!(
                body.contains("DNS rebinding") && body.contains("--allow-host"),
                "{body}"
            );
        }
    }
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        err.contains("anyone on the network") && err.contains("DNS rebinding"),
        "{err}"
    );
    assert!(err.contains("results.lan"), "{err}");
}

#[test]
fn a_bad_allow_host_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = llmsweep()
        .arg("view")
        .arg(dir.path())
        .args(["--port", "0", "--allow-host", "http://kpro5:8484"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--allow-host \"http://kpro5:8484\" is not a host name"),
        "{err}"
    );
}

#[test]
fn a_missing_folder_or_a_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kpro5.json");
    std::fs::write(&file, GOLDEN).unwrap();
    for (arg, want) in [
        (dir.path().join("nope"), "there is no folder"),
        (file, "is not a folder"),
    ] {
        let out = llmsweep()
            .arg("view")
            .arg(&arg)
            .args(["--port", "0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{err}");
    }
}

#[test]
fn a_taken_port_is_an_error_that_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind((LOOPBACK, 0)).unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = llmsweep()
        .arg("view")
        .arg(dir.path())
        .args(["--port", &port])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&port) && err.contains("--port"), "{err}");
}

#[tokio::test]
async fn an_imported_bundle_is_listed_with_the_tool_that_measured_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kpro5.json"), GOLDEN).unwrap();
    std::fs::write(
        dir.path().join("kpro6.json"),
        include_str!("../../../shared/tests/fixtures/bundle-v1-imported.json"),
    )
    .unwrap();
    let base = start(dir.path()).await;
    let l = listing(&base).await;
    let from = |n: &str| {
        let e = l.bundles.iter().find(|b| b.name == n).unwrap();
        e.bundle.as_ref().unwrap().imported_from.clone()
    };
    assert_eq!(from("kpro5.json"), None);
    assert_eq!(from("kpro6.json").as_deref(), Some("a text table"));
}
