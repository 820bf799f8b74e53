//! `?bundle=` links to other sites: refused with a message in the page (and never fetched) by
//! the viewer anywhere it is served, loaded only where `llmsweep view --allow-remote-bundles`
//! allows them; the page `view` serves runs under its policy without a violation.

use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::sync::Arc;

use llmsweep::output::view::{Access, Folder, Listen, listen, serve};
use serde_json::json;

use super::harness::{Browser, CSP_VIOLATIONS_JS, FileServer, Session, dist_dir};
use super::{LOAD, ONE_AT_A_TIME, runs_listed};

const GOLDEN: &str = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");

/// `llmsweep view` of `dir` with `access`, on a free loopback port: its base URL.
async fn view(dir: &std::path::Path, access: Access) -> String {
    let folder = Arc::new(Folder::open(dir).unwrap());
    let (listener, _) = listen(Listen {
        bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
        port: Some(0),
    })
    .await
    .unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(serve(listener, folder, access, std::future::pending()));
    base
}

/// The text of each load error shown.
async fn errors(s: &Session) -> Vec<String> {
    let v = s
        .js("return [...document.querySelectorAll('[data-testid=load-error]')].map(e => e.innerText)")
        .await;
    serde_json::from_value(v).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_of_another_site_is_refused_unless_view_allows_it() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    // A loopback listener the refused link points at: it must never see a connection.
    let trap = TcpListener::bind("127.0.0.1:0").unwrap();
    trap.set_nonblocking(true).unwrap();
    let trap_url = format!("http://127.0.0.1:{}", trap.local_addr().unwrap().port());
    let remote_dir = tempfile::tempdir().unwrap();
    std::fs::write(remote_dir.path().join("golden.json"), GOLDEN).unwrap();
    let remote = FileServer::start(dist_dir(), remote_dir.path().to_path_buf());
    let remote_bundle = remote.url("bundles/golden.json");

    // The viewer served as plain files: its own bundle loads, the other site's is refused.
    let server = FileServer::start(dist_dir(), std::env::temp_dir());
    let s = Session::start(&browser, (1280, 900), &[]).await;
    s.client
        .goto(&server.url(&format!(
            "index.html?bundle={trap_url}/x.json&bundle=sample.json"
        )))
        .await
        .unwrap();
    s.wait(
        "the refusal",
        "document.querySelectorAll('[data-testid=load-error]').length === 1 && document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["sample"]);
    let shown = errors(&s).await;
    assert!(
        shown[0].contains(&format!(
            "{trap_url}/x.json could not be loaded: it is on another site ({trap_url})"
        )) && shown[0].contains(&format!(
            "than this page ({})",
            server.url("").trim_end_matches('/')
        )) && shown[0].contains("--allow-remote-bundles"),
        "{shown:?}"
    );
    s.screenshot("remote-bundle-refused").await;
    assert!(trap.accept().is_err(), "the refused link was fetched");

    // `llmsweep view`: refused the same way, and its page runs under its policy untouched.
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(
        folder.path().join("kpro5.json"),
        GOLDEN.replace("\"golden\"", "\"kpro5\""),
    )
    .unwrap();
    let closed = view(folder.path(), Access::default()).await;
    s.client
        .goto(&format!(
            "{closed}?bundle={remote_bundle}&bundle=bundles/kpro5.json"
        ))
        .await
        .unwrap();
    s.wait(
        "the refusal under view",
        "document.querySelectorAll('[data-testid=load-error]').length === 1 && document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["kpro5"]);
    assert!(errors(&s).await[0].contains("could not be loaded: it is on another site"));
    assert_eq!(s.js(CSP_VIOLATIONS_JS).await, json!([]));

    // With --allow-remote-bundles the link is followed.
    let open = view(
        folder.path(),
        Access {
            remote_bundles: true,
            ..Access::default()
        },
    )
    .await;
    s.client
        .goto(&format!("{open}?bundle={remote_bundle}"))
        .await
        .unwrap();
    s.wait(
        "the remote run",
        "document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["golden"]);
    assert!(errors(&s).await.is_empty());
    assert_eq!(s.js(CSP_VIOLATIONS_JS).await, json!([]));
    s.close().await;
}
