//! Secrets given on the command line — a user name and password in `--url`, `--header` values —
//! reach the server on every request and appear nowhere else: not in the terminal, the bundle,
//! the report (inside its compressed payload too) or what `view` serves.

use crate::support::{llmsweep, text};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use base64::Engine as _;
use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;

const PASSWORD: &str = "s3cretpw";
const TOKEN: &str = "t0psecret";

/// Fails naming `what` when `haystack` holds either secret.
fn assert_clean(what: &str, haystack: &str) {
    for secret in [PASSWORD, TOKEN] {
        assert!(
            !haystack.contains(secret),
            "{what} holds {secret:?}:\n{haystack}"
        );
    }
}

/// Every file under `dir`, read as text (lossy).
fn every_file(dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            every_file(&p, out);
        } else {
            let bytes = std::fs::read(&p).unwrap();
            out.push((p.display().to_string(), text(&bytes)));
        }
    }
}

/// The JSON of each bundle a report embeds (gzip + base64 in a data block).
fn embedded_bundles(html: &str) -> Vec<String> {
    let open = "data-encoding=\"gzip-base64\"";
    html.match_indices(open)
        .map(|(i, _)| {
            let body = &html[i..];
            let body = &body[body.find('>').unwrap() + 1..];
            let body = &body[..body.find("</script>").unwrap()];
            let gz = base64::engine::general_purpose::STANDARD
                .decode(body.trim())
                .unwrap();
            let mut json = String::new();
            flate2::read::GzDecoder::new(&gz[..])
                .read_to_string(&mut json)
                .unwrap();
            json
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_credentials_and_headers_are_sent_and_never_written() {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("user:{PASSWORD}"));
    let cfg = SimConfig {
        decode_d0_s: 0.01,
        require_headers: vec![
            ("authorization".into(), format!("Basic {basic}")),
            ("x-token".into(), TOKEN.into()),
        ],
        ..SimConfig::preset(Preset::Fast)
    };
    let sim = SimServer::start(cfg, 0).await.unwrap();
    let port = sim.addr.port();
    let url = format!("http://user:{PASSWORD}@127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let header = format!("X-Token:{TOKEN}");
    let args: Vec<String> = [
        "throughput",
        "--url",
        &url,
        "--header",
        &header,
        "--concurrency",
        "2",
        "--input-len",
        "50",
        "--output-len",
        "60",
        "--requests",
        "4",
        "--warmup",
        "1",
        "--label",
        "sec",
        "--out",
        results.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    let o = tokio::task::spawn_blocking(move || {
        llmsweep(&args.iter().map(String::as_str).collect::<Vec<_>>())
    })
    .await
    .unwrap();
    let stats = sim.stats();
    sim.shutdown().await;
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{stdout}\n{stderr}");
    // The server saw both on every request: probes, tokenizer, warm-up, the sweep, /metrics.
    assert_eq!(stats.unauthorized, 0, "{stats:?}");
    assert!(stats.completed >= 5, "{stats:?}");
    assert_clean("the sweep's stdout", &stdout);
    assert_clean("the sweep's stderr", &stderr);
    let shown = format!("http://***@127.0.0.1:{port}");
    assert!(stdout.contains(&shown), "{stdout}");

    let bundle_file = std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .next()
        .unwrap();
    let b = Bundle::from_json(&std::fs::read_to_string(&bundle_file).unwrap()).unwrap();
    assert_eq!(b.target.url, shown);
    assert!(
        b.tool.command_line.contains(&shown),
        "{:?}",
        b.tool.command_line
    );
    assert!(
        b.tool.command_line.contains(&"X-Token:***".to_string()),
        "{:?}",
        b.tool.command_line
    );
    for (path, p) in &b.target.probes {
        assert_ne!(p.status, Some(401), "{path} was refused");
    }
    assert!(
        b.sweeps[0].points[0].server_samples.is_some(),
        "/metrics was scraped"
    );

    let report = dir.path().join("report.html");
    let o = llmsweep(&[
        "report",
        bundle_file.to_str().unwrap(),
        "-o",
        report.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_clean("report's output", &(text(&o.stdout) + &text(&o.stderr)));
    let html = std::fs::read_to_string(&report).unwrap();
    let embedded = embedded_bundles(&html);
    assert_eq!(embedded.len(), 1);
    assert!(embedded[0].contains(&shown));
    assert_clean("the report's embedded bundle", &embedded[0]);

    let served = view_everything(&results, &bundle_file).await;
    assert!(served.contains("\"label\":\"sec\""), "{served}");
    assert_clean("what view serves", &served);

    let mut files = Vec::new();
    every_file(dir.path(), &mut files);
    assert!(files.len() >= 2, "the bundle and the report: {files:?}");
    for (path, content) in &files {
        assert_clean(path, content);
    }
}

/// The same secrets kept off the command line, where `ps` shows them: the URL with its user
/// name and password from `$LLMSWEEP_URL`, the header from `--header @FILE`. They reach the
/// server and appear nowhere else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_from_the_environment_and_a_file_are_sent_and_never_written() {
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("user:{PASSWORD}"));
    let cfg = SimConfig {
        require_headers: vec![
            ("authorization".into(), format!("Basic {basic}")),
            ("x-token".into(), TOKEN.into()),
        ],
        ..SimConfig::preset(Preset::Fast)
    };
    let sim = SimServer::start(cfg, 0).await.unwrap();
    let port = sim.addr.port();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let headers = dir.path().join("headers");
    std::fs::write(&headers, format!("# for the sweep\nX-Token: {TOKEN}\n")).unwrap();
    let header = format!("@{}", headers.display());
    let args: Vec<String> = [
        "throughput",
        "--header",
        &header,
        "--concurrency",
        "1",
        "--input-len",
        "20",
        "--output-len",
        "8",
        "--requests",
        "2",
        "--warmup",
        "0",
        "--out",
        results.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    let url = format!("http://user:{PASSWORD}@127.0.0.1:{port}");
    let o = tokio::task::spawn_blocking(move || {
        crate::support::command()
            .args(&args)
            .env("LLMSWEEP_URL", url)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stats = sim.stats();
    sim.shutdown().await;
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stats.unauthorized, 0, "{stats:?}");
    assert!(stats.completed >= 2, "{stats:?}");
    assert_clean("the sweep's output", &(stdout.clone() + &stderr));
    let shown = format!("http://***@127.0.0.1:{port}");
    assert!(stdout.contains(&shown), "{stdout}");
    let mut files = Vec::new();
    every_file(&results, &mut files);
    assert_eq!(files.len(), 1, "{files:?}");
    let b = Bundle::from_json(&files[0].1).unwrap();
    assert_eq!(b.target.url, shown);
    assert!(
        b.tool.command_line.contains(&header),
        "{:?}",
        b.tool.command_line
    );
    assert_clean(&files[0].0, &files[0].1);
}

/// Runs `llmsweep view results` and returns its terminal output and the page, the listing and
/// the bundle it serves.
async fn view_everything(results: &Path, bundle: &Path) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_llmsweep"))
        .arg("view")
        .arg(results)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    let base = first
        .trim()
        .strip_prefix("llmsweep view: ")
        .unwrap_or_else(|| panic!("first line: {first}"))
        .to_string();
    let name = bundle.file_name().unwrap().to_str().unwrap();
    let mut all = first.clone();
    for path in ["", "api/bundles", &format!("bundles/{name}")] {
        let resp = reqwest::get(format!("{base}{path}")).await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        all.push_str(&resp.text().await.unwrap());
    }
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait().unwrap();
    out.read_to_string(&mut all).unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut all)
        .unwrap();
    all
}

#[test]
fn messages_about_a_url_or_a_header_do_not_repeat_the_secret() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://user:{PASSWORD}@127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for (args, needle) in [
        (
            vec!["throughput", "--url", &url, "--out", out],
            format!("cannot reach the server at http://127.0.0.1:{port}"),
        ),
        (
            vec!["throughput", "--url", "ftp://user:s3cretpw@h", "--out", out],
            "ftp://***@h".to_string(),
        ),
        (
            vec!["throughput", "--url", "user:s3cretpw@127.0.0.1:8000", "--out", out],
            "--url \"***@127.0.0.1:8000\" has no scheme: give the URL with its scheme, e.g. http://127.0.0.1:8000".to_string(),
        ),
        (
            vec!["throughput", "--header", "X-Token t0psecret", "--out", out],
            "--header needs NAME:VALUE".to_string(),
        ),
        (
            vec![
                "throughput",
                "--header",
                "X-Token:t0p\u{1}secret",
                "--out",
                out,
            ],
            "--header x-token:***".to_string(),
        ),
    ] {
        let o = llmsweep(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        assert!(err.contains(&needle), "{args:?}: {err}");
        assert_clean(&format!("{args:?}"), &(err + &text(&o.stdout)));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_wants_credentials_is_named_as_such() {
    let sim = SimServer::start(
        SimConfig {
            require_headers: vec![("x-token".into(), TOKEN.into())],
            ..SimConfig::preset(Preset::Fast)
        },
        0,
    )
    .await
    .unwrap();
    let (url, dir) = (sim.url(), tempfile::tempdir().unwrap());
    let out = dir.path().to_str().unwrap().to_string();
    let o = tokio::task::spawn_blocking(move || {
        llmsweep(&[
            "throughput",
            "--url",
            &url,
            "--header",
            "X-Token:wrong",
            "--out",
            &out,
        ])
    })
    .await
    .unwrap();
    sim.shutdown().await;
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("refused llmsweep (HTTP 401 on /v1/models): it wants credentials"),
        "{err}"
    );
}
