//! Issue 10: a throughput of 1.7e308 froze the viewer's tab (its chart axis was padded to
//! infinity and the tick search never ended), from `view` and from a report on disk. Now the
//! page finishes drawing and writes the number in scientific notation.

use std::time::Duration;

use llmsweep::output::report::{Embedded, render};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::SweepKind;
use serde_json::json;

use super::harness::{Browser, FileServer, Session, dist_dir};
use super::{LOAD, ONE_AT_A_TIME, charts_drawn, click_tab, runs_listed};

/// A frozen tab never answers: the whole check fails after this instead of hanging.
const DEADLINE: Duration = Duration::from_secs(180);

/// The sample run relabelled `huge`, its first steady throughput 1.7e308.
fn huge() -> Bundle {
    let text = std::fs::read_to_string(dist_dir().join("sample.json")).unwrap();
    let mut b = Bundle::from_json(&text).unwrap();
    b.label = "huge".into();
    b.id = format!("{}-huge", b.id);
    let sweep = b
        .sweeps
        .iter_mut()
        .find(|s| s.kind == SweepKind::Throughput)
        .unwrap();
    sweep.points[0].summary.as_mut().unwrap().steady_tok_s = Some(1.7e308);
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enormous_throughput_draws_in_the_viewer() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("huge.json"), huge().to_json().unwrap()).unwrap();
    std::fs::copy(
        dist_dir().join("sample.json"),
        dir.path().join("sample.json"),
    )
    .unwrap();
    let server = FileServer::start(dist_dir(), dir.path().to_path_buf());
    let s = Session::start(&browser, (1360, 1000), &[]).await;
    let checks = async {
        s.client
            .goto(&server.url("index.html?bundle=bundles/sample.json&bundle=bundles/huge.json"))
            .await
            .unwrap();
        s.wait(
            "both runs",
            "document.querySelectorAll('[data-testid=run]').length === 2",
            LOAD,
        )
        .await;
        assert_eq!(runs_listed(&s).await, ["sample", "huge"]);
        charts_drawn(&s, 4).await;
        s.screenshot("huge-throughput").await;
        click_tab(&s, "Compare").await;
        let text = s
            .wait(
                "the comparison with the huge number",
                "document.body.innerText.includes('1.7e308')",
                LOAD,
            )
            .await;
        assert_eq!(text, json!(true));
        let page = s.js("return document.body.innerText").await;
        let longest = page
            .as_str()
            .unwrap()
            .split(|c: char| !c.is_ascii_digit())
            .map(str::len)
            .max()
            .unwrap_or(0);
        assert!(longest <= 20, "a {longest}-digit number on the page");
        s.screenshot("huge-compare").await;
    };
    if tokio::time::timeout(DEADLINE, checks).await.is_err() {
        panic!("the viewer did not finish within {DEADLINE:?} with a throughput of 1.7e308");
    }
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enormous_throughput_draws_in_a_report_from_disk() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    let html = render(&[Embedded {
        name: "huge.json".into(),
        bundle: huge(),
    }])
    .unwrap();
    std::fs::write(&path, html).unwrap();
    let s = Session::start(&browser, (1360, 1000), &[]).await;
    let checks = async {
        s.client
            .goto(&format!("file://{}", path.display()))
            .await
            .unwrap();
        s.wait(
            "the run listed",
            "document.querySelectorAll('[data-testid=run]').length === 1",
            LOAD,
        )
        .await;
        charts_drawn(&s, 4).await;
        assert_eq!(
            s.js("return document.getElementById('fatal').hidden").await,
            json!(true),
            "no fatal error"
        );
        s.screenshot("huge-report").await;
    };
    if tokio::time::timeout(DEADLINE, checks).await.is_err() {
        panic!("the report did not finish within {DEADLINE:?} with a throughput of 1.7e308");
    }
    s.close().await;
}
