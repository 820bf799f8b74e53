//! Runs keep their colors whatever order they are loaded in, and charts that overlay different
//! workloads say so above them.

use serde_json::{Value, json};

use super::harness::{Browser, FileServer, Session, dist_dir};
use super::{LOAD, ONE_AT_A_TIME, charts_drawn};

/// The sample bundle as another run: a new id and label, and `edit` applied.
fn variant(label: &str, id: &str, edit: impl Fn(&mut Value)) -> String {
    let text = std::fs::read_to_string(dist_dir().join("sample.json")).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["label"] = label.into();
    v["id"] = id.into();
    edit(&mut v);
    serde_json::to_string(&v).unwrap()
}

async fn colors(s: &Session, n: usize) -> Vec<(String, String)> {
    s.wait(
        "the runs",
        &format!("document.querySelectorAll('[data-testid=run]').length === {n}"),
        LOAD,
    )
    .await;
    let v = s
        .js("return [...document.querySelectorAll('[data-testid=run]')].map(e => [e.dataset.label, getComputedStyle(e).getPropertyValue('--run-color').trim()])")
        .await;
    let mut v: Vec<(String, String)> = serde_json::from_value(v).unwrap();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn colors_follow_the_runs_and_different_workloads_are_flagged() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(dist_dir().join("sample.json"), dir.path().join("a.json")).unwrap();
    // An id that ranks before the sample's, so load order and the rule disagree.
    std::fs::write(dir.path().join("b.json"), variant("kpro6", "0000", |_| {})).unwrap();
    let long = variant("long-output", "ffff", |v| {
        for s in v["sweeps"].as_array_mut().unwrap() {
            s["output_len"] = 512.into();
        }
    });
    std::fs::write(dir.path().join("c.json"), long).unwrap();
    let server = FileServer::start(dist_dir(), dir.path().to_path_buf());
    let s = Session::start(&browser, (1360, 1000), &[]).await;

    s.client
        .goto(&server.url("index.html?bundle=bundles/a.json&bundle=bundles/b.json"))
        .await
        .unwrap();
    let first = colors(&s, 2).await;
    assert_ne!(first[0].1, first[1].1, "two runs, two colors: {first:?}");
    s.client
        .goto(&server.url("index.html?bundle=bundles/b.json&bundle=bundles/a.json"))
        .await
        .unwrap();
    let second = colors(&s, 2).await;
    assert_eq!(first, second, "each run keeps its color in the other order");
    charts_drawn(&s, 4).await;
    assert_eq!(
        s.js("return document.querySelectorAll('[data-testid=workload-warning]').length")
            .await,
        json!(0),
        "the same workload is not flagged"
    );
    s.screenshot("colors-reordered").await;

    // A run of another output length overlaid: the warning is above the charts.
    s.client
        .goto(&server.url("index.html?bundle=bundles/a.json&bundle=bundles/c.json"))
        .await
        .unwrap();
    colors(&s, 2).await;
    charts_drawn(&s, 4).await;
    let warning = s
        .wait(
            "the workload warning",
            "document.querySelector('[data-testid=workload-warning]')?.innerText",
            LOAD,
        )
        .await;
    let warning = warning.as_str().unwrap();
    assert!(
        warning.contains(
            "long-output ran a different throughput workload than sample: output lengths differ"
        ),
        "{warning}"
    );
    let above = s
        .js("const w = document.querySelector('[data-testid=workload-warning]'); const g = document.querySelector('.grid'); return !!(w.compareDocumentPosition(g) & Node.DOCUMENT_POSITION_FOLLOWING) && w.getBoundingClientRect().height > 10")
        .await;
    assert_eq!(above, json!(true), "visible, above the charts");
    s.screenshot("workload-warning").await;
    s.close().await;
}
