//! The single-file report in real headless Chromium, opened from `file://`: both runs listed,
//! charts drawn, nothing fetched from anywhere, no inline script but its own run, and the
//! no-JavaScript part present.

#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

#[path = "browser/harness.rs"]
mod harness;

use std::net::TcpListener;
use std::time::Duration;

use harness::{Browser, CSP_VIOLATIONS_JS, INJECT_INLINE_SCRIPT_JS, INKED_PIXELS_JS, Session};
use llmsweep::output::report::{Embedded, render};
use llmsweep_shared::Bundle;
use serde_json::json;

const GOLDEN: &str = include_str!("../../shared/tests/fixtures/bundle-v1-run.json");

fn run(label: &str) -> Embedded {
    let mut bundle = Bundle::from_json(GOLDEN).unwrap();
    bundle.label = label.to_string();
    Embedded {
        name: format!("{label}.json"),
        bundle,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_opens_from_disk_offline_with_both_runs_drawn() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    std::fs::write(&path, render(&[run("kpro5"), run("kpro6")]).unwrap()).unwrap();
    // A loopback listener the page will be asked to reach: it must never see a connection.
    let trap = TcpListener::bind("127.0.0.1:0").unwrap();
    trap.set_nonblocking(true).unwrap();
    let trap_port = trap.local_addr().unwrap().port();

    let s = Session::start(&browser, (1280, 900), &[]).await;
    s.client
        .goto(&format!("file://{}", path.display()))
        .await
        .unwrap();
    s.wait(
        "both runs listed",
        "document.querySelectorAll('[data-testid=run]').length === 2",
        Duration::from_secs(60),
    )
    .await;
    let labels = s
        .js("return [...document.querySelectorAll('[data-testid=run]')].map(e => e.dataset.label)")
        .await;
    assert_eq!(labels, json!(["kpro5", "kpro6"]));
    // Two runs: the report opens on their comparison, the verdict first.
    s.wait(
        "the Compare tab",
        "document.querySelector('[data-tab=Compare][aria-selected=true]')",
        Duration::from_secs(30),
    )
    .await;
    let headline = s
        .wait(
            "the verdict",
            "document.querySelector('[data-testid=verdict] [data-testid=headline]')?.innerText",
            Duration::from_secs(30),
        )
        .await;
    assert_eq!(
        headline,
        json!(
            "throughput sweep: cannot tell kpro6 from kpro5 (C = 1, 2): capacity is not resolved at any level"
        )
    );
    // Styled as the verdict it is: cannot tell, not no change.
    let styled = s
        .js("const h = document.querySelector('[data-testid=verdict] [data-testid=headline]'); const w = h.querySelector('strong'); return [h.dataset.outcome, w.innerText, getComputedStyle(w).borderTopStyle]")
        .await;
    // Marked as a caution (a dashed frame), not left plain as "no change" is.
    assert_eq!(styled, json!(["unresolved", "cannot tell", "dashed"]));
    s.screenshot("report-compare").await;
    s.js("document.querySelector('[data-tab=Throughput]').click()")
        .await;
    s.wait(
        "charts drawn",
        "document.querySelectorAll('canvas[data-marks]').length >= 4",
        Duration::from_secs(30),
    )
    .await;
    let inked: Vec<(String, u64)> =
        serde_json::from_value(s.js_with(INKED_PIXELS_JS, vec![json!("canvas")]).await).unwrap();
    assert!(inked.len() >= 4, "{inked:?}");
    for (slug, px) in &inked {
        assert!(*px > 3000, "chart {slug} looks blank: {px} inked pixels");
    }
    assert_eq!(
        s.js("return document.getElementById('fatal').hidden").await,
        json!(true)
    );
    assert_eq!(
        s.js("return document.getElementById('static-report').hidden")
            .await,
        json!(true)
    );
    s.screenshot("report-offline").await;

    // The page's policy names its one script by hash: the viewer ran under it without a single
    // violation, and an injected inline script does not run.
    assert_eq!(s.js(CSP_VIOLATIONS_JS).await, json!([]));
    assert_eq!(
        s.js(INJECT_INLINE_SCRIPT_JS).await,
        json!([false, "script-src-elem"])
    );
    // (and the check above would have seen a violation: it sees this one)
    let seen = s.js(CSP_VIOLATIONS_JS).await;
    assert!(
        seen.as_array().unwrap()[0]
            .as_str()
            .unwrap()
            .starts_with("script-src-elem inline"),
        "{seen}"
    );

    // The page may not reach the network: a fetch is refused by its policy, and every resource it
    // loaded came from itself.
    let fetched = s
        .js(&format!(
            "return fetch('http://127.0.0.1:{trap_port}/x').then(() => 'sent', () => 'refused')"
        ))
        .await;
    assert_eq!(fetched, json!("refused"));
    let resources = s
        .js("return performance.getEntriesByType('resource').map(e => e.name)")
        .await;
    for r in resources.as_array().unwrap() {
        let r = r.as_str().unwrap();
        assert!(
            r.starts_with("blob:") || r.starts_with("data:"),
            "the report loaded {r}"
        );
    }
    assert!(
        trap.accept().is_err(),
        "a connection reached the loopback listener"
    );

    // Without JavaScript the page still has the key charts as SVG and the tables.
    let svgs = s
        .js("return document.querySelectorAll('#static-report figure svg').length")
        .await;
    assert!(svgs.as_u64().unwrap() >= 3, "{svgs}");
    let tables = s
        .js("return document.querySelectorAll('#static-report table').length")
        .await;
    assert_eq!(
        tables,
        json!(6),
        "a throughput and a context table per run, and a table of changes per sweep"
    );
    let verdict = s
        .js("return document.getElementById('static-verdict').textContent")
        .await;
    assert!(
        verdict
            .as_str()
            .unwrap()
            .contains("throughput sweep: cannot tell kpro6 from kpro5 (C = 1, 2)"),
        "{verdict}"
    );
}

const SELFTEST: &str = include_str!("../../shared/tests/fixtures/bundle-v1-selftest.json");

/// A run and a selftest of its host in one report, opened from disk: the run is the page's run
/// and is charted, the selftest is the client's capacity with the run set against it, in the
/// viewer and in the no-JavaScript part alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_with_a_selftest_shows_the_clients_capacity_beside_the_run() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.html");
    let mut kpro5 = run("kpro5-run");
    kpro5.bundle.hosts.client.hostname = "kpro5".into();
    let selftest = Embedded {
        name: "kpro5-selftest.json".into(),
        bundle: Bundle::from_json(SELFTEST).unwrap(),
    };
    std::fs::write(&path, render(&[kpro5, selftest]).unwrap()).unwrap();

    let s = Session::start(&browser, (1280, 900), &[]).await;
    s.client
        .goto(&format!("file://{}", path.display()))
        .await
        .unwrap();
    s.wait(
        "the run and the selftest",
        "document.querySelectorAll('[data-testid=run]').length === 1 &&
         document.querySelectorAll('[data-testid=selftest-item]').length === 1",
        Duration::from_secs(60),
    )
    .await;
    // The report opens on its run's charts; the client's view is a tab beside them.
    s.wait(
        "the run's charts",
        "document.querySelector('[data-tab=Throughput][aria-selected=true]') &&
         document.querySelectorAll('canvas[data-marks]').length === 4",
        Duration::from_secs(30),
    )
    .await;
    s.js("document.querySelector('[data-tab=Client]').click()")
        .await;
    let share = s
        .wait(
            "the run set against the capacity",
            "document.querySelector('[data-testid=capacity-share]')?.textContent",
            Duration::from_secs(30),
        )
        .await;
    assert_eq!(
        share,
        json!(
            "kpro5-run streamed at most 354 tok/s in 354 events/s (throughput sweep, C = 2): \
             0.018 % of the 2,000,000 events/s this client reads."
        )
    );
    let title = s
        .js("return document.querySelector('[data-testid=selftest] h2').textContent")
        .await;
    assert_eq!(title, json!("client capacity of kpro5"));
    s.screenshot("report-selftest").await;
    assert_eq!(s.js(CSP_VIOLATIONS_JS).await, json!([]));

    // Without JavaScript: the run's tables and charts, then the selftest's tables and the share.
    let static_part = s
        .js("const r = document.getElementById('static-report');
             return [r.querySelector('h1').textContent,
                     r.querySelectorAll('.static-selftest table.selftest-table').length,
                     r.querySelectorAll('.static-selftest svg').length,
                     r.querySelector('.static-selftest .capacity-share').textContent,
                     r.querySelectorAll('.static-verdict').length]")
        .await;
    assert_eq!(
        static_part,
        json!([
            "llmsweep report: kpro5-run · client capacity of kpro5",
            2,
            0,
            share,
            0
        ])
    );
}
