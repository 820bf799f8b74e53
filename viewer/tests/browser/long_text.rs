//! A 1 MB model name (from a server's `/v1/models`, or an imported file's `model_id`) froze the
//! viewer's tab and a report for over 90 s. Now every text that came from a bundle is shown
//! shortened, with its full length said and the whole text a click away; the page draws as fast
//! as with ordinary names.

use std::time::{Duration, Instant};

use llmsweep::output::report::{Embedded, render};
use llmsweep_shared::Bundle;
use serde_json::json;

use super::harness::{Browser, FileServer, Session, dist_dir};
use super::{LOAD, ONE_AT_A_TIME, charts_drawn, click_tab, runs_listed};

/// A frozen tab never answers: the whole check fails after this instead of hanging.
const DEADLINE: Duration = Duration::from_secs(120);

/// One million characters, no space in them.
const MILLION: usize = 1_000_000;

/// The sample run with a 1 MB label, model, engine and host name.
fn long_named() -> Bundle {
    let text = std::fs::read_to_string(dist_dir().join("sample.json")).unwrap();
    let mut b = Bundle::from_json(&text).unwrap();
    b.id = format!("{}-long", b.id);
    b.label = format!("L{}", "l".repeat(MILLION - 1));
    b.target.model = format!("M{}", "m".repeat(MILLION - 1));
    b.target.engine = Some(format!("E{}", "e".repeat(MILLION - 1)));
    b.hosts.client.hostname = format!("H{}", "h".repeat(MILLION - 1));
    b
}

/// The longest run of non-space characters in the page's visible text.
async fn longest_word(s: &Session) -> usize {
    let page = s.js("return document.body.innerText").await;
    page.as_str()
        .unwrap()
        .split_whitespace()
        .map(|w| w.chars().count())
        .max()
        .unwrap_or(0)
}

async fn checks(s: &Session) {
    let started = Instant::now();
    s.wait(
        "both runs",
        "document.querySelectorAll('[data-testid=run]').length === 2",
        LOAD,
    )
    .await;
    // A report of two runs opens on their comparison.
    click_tab(s, "Throughput").await;
    charts_drawn(s, 4).await;
    let drawn = started.elapsed();
    let runs = runs_listed(s).await;
    assert_eq!(runs[0], "sample");
    assert_eq!(
        runs[1],
        format!("L{}… (1,000,000 characters)", "l".repeat(59)),
        "the label shown"
    );
    let words = longest_word(s).await;
    assert!(words <= 200, "a {words}-character word on the page");
    for tab in ["Compare", "Requests"] {
        click_tab(s, tab).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let words = longest_word(s).await;
        assert!(words <= 200, "a {words}-character word on the {tab} tab");
    }
    click_tab(s, "Throughput").await;
    // The whole model name is one click away.
    let full = s
        .js(
            "const b = [...document.querySelectorAll('button.show-all')];
             b.forEach(x => x.click());
             return b.length;",
        )
        .await;
    assert!(full.as_u64().unwrap() >= 1, "no way to see the full text");
    let shown = s
        .wait(
            "the full model name",
            "[...document.querySelectorAll('textarea.full-text')].map(t => t.value.length)",
            LOAD,
        )
        .await;
    assert!(
        shown
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_u64() == Some(MILLION as u64)),
        "full texts shown: {shown}"
    );
    s.screenshot("long-text").await;
    eprintln!("long names: drawn in {drawn:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_million_character_model_name_draws_in_the_viewer() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("long.json"),
        long_named().to_json().unwrap(),
    )
    .unwrap();
    std::fs::copy(
        dist_dir().join("sample.json"),
        dir.path().join("sample.json"),
    )
    .unwrap();
    let server = FileServer::start(dist_dir(), dir.path().to_path_buf());
    let s = Session::start(&browser, (1360, 1000), &[]).await;
    let run = async {
        s.client
            .goto(&server.url("index.html?bundle=bundles/sample.json&bundle=bundles/long.json"))
            .await
            .unwrap();
        checks(&s).await;
    };
    if tokio::time::timeout(DEADLINE, run).await.is_err() {
        panic!("the viewer did not finish within {DEADLINE:?} with 1 MB names");
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_million_character_model_name_draws_in_a_report_from_disk() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    let sample =
        Bundle::from_json(&std::fs::read_to_string(dist_dir().join("sample.json")).unwrap())
            .unwrap();
    let html = render(&[
        Embedded {
            name: "sample.json".into(),
            bundle: sample,
        },
        Embedded {
            name: "long.json".into(),
            bundle: long_named(),
        },
    ])
    .unwrap();
    std::fs::write(&path, html).unwrap();
    let s = Session::start(&browser, (1360, 1000), &[]).await;
    let run = async {
        s.client
            .goto(&format!("file://{}", path.display()))
            .await
            .unwrap();
        checks(&s).await;
        assert_eq!(
            s.js("return document.getElementById('fatal').hidden").await,
            json!(true),
            "no fatal error"
        );
    };
    if tokio::time::timeout(DEADLINE, run).await.is_err() {
        panic!("the report did not finish within {DEADLINE:?} with 1 MB names");
    }
    s.close().await;
}
