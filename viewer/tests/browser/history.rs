//! The History view: a folder of one label's runs served by `llmsweep view`, its history drawn
//! from the listing's summaries with the slow run marked and ruled, and the same history in the
//! History tab once the runs are open.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use fantoccini::Locator;
use llmsweep::output::view::{Access, Folder, Listen, listen, serve};
use llmsweep_shared::Bundle;
use llmsweep_shared::curves::Metric;
use llmsweep_shared::folder::{BundleFacts, FolderEntry, FolderListing};
use llmsweep_shared::history::{RunSummary, histories};
use llmsweep_shared::test_support::slowed;

use super::harness::{Browser, Session};
use super::{LOAD, ONE_AT_A_TIME, bundles, click_tab};

/// `b` as if every request had taken `factor` times as long, dated day `day` of November.
fn scaled(b: &Bundle, factor: f64, day: u32, version: &str) -> Bundle {
    let mut b = slowed(b, factor);
    b.created_at = format!("2026-11-{day:02}T02:00:00Z");
    b.id = format!("{}-{day}", b.id);
    b.target.engine_version = Some(version.into());
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folders_history_marks_the_slow_run_and_the_tab_shows_it_too() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let made = bundles::make().await;
    let dir = tempfile::tempdir().unwrap();
    // Twelve nights of kpro5: the last four 20 % slower, under a new engine version.
    let runs: Vec<Bundle> = (1..=12u32)
        .map(|d| {
            let slow = d > 8;
            let f = match (slow, d % 2) {
                (true, _) => 1.25,
                (false, 0) => 1.001,
                (false, _) => 0.999,
            };
            scaled(&made.a, f, d, if slow { "0.5.23" } else { "0.5.11" })
        })
        .collect();
    for (i, b) in runs.iter().enumerate() {
        std::fs::write(
            dir.path().join(format!("kpro5-night-{:02}.json", i + 1)),
            b.to_json().unwrap(),
        )
        .unwrap();
    }
    // What the page must show, from the same shared code, on the same summaries.
    let listing = FolderListing {
        folder: "x".into(),
        bundles: runs
            .iter()
            .enumerate()
            .map(|(i, b)| FolderEntry {
                name: format!("kpro5-night-{:02}.json", i + 1),
                url: String::new(),
                size_bytes: 0,
                modified: None,
                bundle: Some(BundleFacts::of(b)),
                error: None,
                etag: None,
                summary: Some(RunSummary::of(b)),
            })
            .collect(),
    };
    let first = histories(&listing, None, Metric::SteadyTokS, None)
        .into_iter()
        .next()
        .expect("a history of steady tok/s");
    assert_eq!(first.steps.len(), 1, "{:?}", first.steps);
    assert_eq!(first.steps[0].at, 8);

    let folder = Arc::new(Folder::open(dir.path()).unwrap());
    let (listener, _) = listen(Listen {
        bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
        port: Some(0),
    })
    .await
    .unwrap();
    let base = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(serve(
        listener,
        folder,
        Access::default(),
        std::future::pending(),
    ));
    let s = Session::start(&browser, (1360, 1400), &[]).await;
    s.client.goto(&base).await.unwrap();
    s.wait(
        "the history chart",
        "document.querySelector('[data-testid=history] canvas[data-marks]') !== null",
        LOAD,
    )
    .await;
    let marks = s
        .js("return document.querySelector('[data-testid=history] canvas').dataset.marks")
        .await;
    assert_eq!(marks, "12", "a mark per night");
    let rules = s
        .js("return document.querySelector('[data-testid=history] canvas').dataset.rules")
        .await;
    let rules = rules.as_str().unwrap().to_string();
    assert!(rules.starts_with("-20.0 % · engine"), "{rules}");
    assert!(
        rules.contains("0.5.11 → ") && rules.contains("0.5.23"),
        "{rules}"
    );
    let changes = s
        .js("return document.querySelector('[data-testid=history-changes]').innerText")
        .await;
    let changes = changes.as_str().unwrap().to_string();
    assert!(
        changes.contains("▼ -20.0 %") && changes.contains("kpro5-night-09.json"),
        "{changes}"
    );
    s.screenshot("view-history").await;

    // Another metric: the menu redraws the chart from the same summaries.
    s.client
        .find(Locator::Css("[data-testid=history-metric]"))
        .await
        .unwrap()
        .select_by_value(Metric::TtftP50.key())
        .await
        .unwrap();
    s.wait(
        "the TTFT history",
        "document.querySelector('[data-testid=history] canvas').getAttribute('aria-label').includes('TTFT p50')",
        LOAD,
    )
    .await;

    // Open them all: the History tab shows the loaded runs' history.
    s.js("document.querySelector(\"[data-testid=folder] button[title^='Open every']\").click(); return 0;")
        .await;
    s.wait(
        "twelve runs",
        "document.querySelectorAll('[data-testid=run]').length === 12",
        LOAD,
    )
    .await;
    click_tab(&s, "History").await;
    s.wait(
        "the History tab's chart",
        "document.querySelector('[role=tabpanel] [data-testid=history] canvas[data-marks]') !== null",
        LOAD,
    )
    .await;
    let rules = s
        .js("return document.querySelector('[role=tabpanel] [data-testid=history] canvas').dataset.rules")
        .await;
    assert!(rules.as_str().unwrap().starts_with("-20.0 %"), "{rules}");
    s.screenshot("history-tab").await;
    s.close().await;
}
