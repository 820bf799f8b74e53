//! A `llmsweep selftest` bundle in the viewer: shown as the client's capacity of its host, with
//! the golden selftest's exact numbers, never as a run (no chart, no color, no comparison); next
//! to runs, the run of the same host is set against the capacity and the other is not.

use fantoccini::Locator;
use llmsweep_shared::Bundle;
use serde_json::{Value, json};

use super::harness::{Browser, FileServer, Session, dist_dir};
use super::{LOAD, ONE_AT_A_TIME, charts_drawn, click_tab, runs_listed};

const SELFTEST: &str = include_str!("../../../shared/tests/fixtures/bundle-v1-selftest.json");
const GOLDEN_RUN: &str = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");

/// The golden run as `label`, measured from client host `host`.
fn run_on(label: &str, host: &str) -> String {
    let mut b = Bundle::from_json(GOLDEN_RUN).unwrap();
    b.label = label.into();
    b.hosts.client.hostname = host.into();
    b.to_json().unwrap()
}

/// Every row of the `mode` table, as its cells' text.
async fn table_rows(s: &Session, mode: &str) -> Value {
    s.js_with(
        "return [...document.querySelectorAll(`table.selftest-table[data-mode=${arguments[0]}] tbody tr`)]
             .map(tr => [...tr.cells].map(td => td.textContent))",
        vec![json!(mode)],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selftest_shows_the_clients_capacity_and_sets_its_hosts_run_against_it() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kpro5-selftest.json"), SELFTEST).unwrap();
    let (same, other) = (dir.path().join("kpro5.json"), dir.path().join("kpro6.json"));
    std::fs::write(&same, run_on("kpro5-run", "kpro5")).unwrap();
    std::fs::write(&other, run_on("kpro6-run", "kpro6")).unwrap();
    let server = FileServer::start(dist_dir(), dir.path().to_path_buf());
    let s = Session::start(&browser, (1360, 1000), &[]).await;

    // The selftest alone: its view, and nothing that looks like a server's result.
    s.client
        .goto(&server.url("index.html?bundle=bundles/kpro5-selftest.json"))
        .await
        .unwrap();
    s.wait(
        "the selftest",
        "document.querySelector('[data-testid=selftest]')",
        LOAD,
    )
    .await;
    let title = s
        .js("return document.querySelector('[data-testid=selftest] h2').textContent")
        .await;
    assert_eq!(title, json!("client capacity of kpro5"));
    let about = s
        .js("return document.querySelector('[data-testid=selftest-about]').textContent")
        .await;
    assert_eq!(
        about,
        json!(
            "Measured by llmsweep selftest on 2026-12-01 14:00 UTC against llmsweep's own \
             loopback endpoint, which costs next to nothing: how fast and how accurately this \
             client reads streams. These are the client's limits, not a server's result."
        )
    );
    let capacity = s
        .js("return document.querySelector('[data-testid=capacity]').textContent")
        .await;
    assert!(
        capacity
            .as_str()
            .unwrap()
            .starts_with("Capacity: 2,000,000 events/s (flat out, 1 token per event, C = 64)"),
        "{capacity}"
    );
    assert_eq!(
        table_rows(&s, "flat_out").await,
        json!([
            [
                "1",
                "1",
                "256/256",
                "1,280,000",
                "1,280,000",
                "0.80",
                "12 MiB"
            ],
            [
                "1",
                "8",
                "256/256",
                "2,560,000",
                "320,000",
                "0.34",
                "12 MiB"
            ],
            [
                "64",
                "1",
                "256/256",
                "2,000,000",
                "2,000,000",
                "0.61",
                "25 MiB"
            ],
            [
                "64",
                "8",
                "250/256",
                "2,560,000",
                "320,000",
                "0.24",
                "24 MiB"
            ]
        ])
    );
    assert_eq!(
        table_rows(&s, "scheduled").await,
        json!([
            [
                "1",
                "8/8",
                "50 + 10 ms",
                "0.05",
                "0.09",
                "0.10",
                "0.00",
                "0.54",
                "2.86"
            ],
            [
                "64",
                "64/64",
                "50 + 10 ms",
                "0.74",
                "1.02",
                "1.02",
                "0.00",
                "0.24",
                "0.43"
            ]
        ])
    );
    let warned = s
        .js("return [...document.querySelectorAll('table.selftest-table tr.warn')].map(tr => tr.dataset.c)")
        .await;
    assert_eq!(
        warned,
        json!(["64"]),
        "the level with short requests is marked"
    );
    let notes = s
        .js("return [...document.querySelectorAll('[data-testid=selftest-notes] li')].map(li => li.textContent)")
        .await;
    assert_eq!(notes.as_array().unwrap().len(), 2, "{notes}");
    assert!(
        notes[1]
            .as_str()
            .unwrap()
            .contains("C = 64: the endpoint sent first events 12.00 ms behind schedule"),
        "{notes}"
    );
    let page = s
        .js(
            "return [document.querySelectorAll('[data-testid=run]').length,
                     document.querySelectorAll('canvas').length,
                     document.querySelectorAll('.badge.sim').length,
                     [...document.querySelectorAll('[role=tab]')].map(t => t.dataset.tab),
                     document.querySelector('[data-testid=selftest-item]').dataset.host]",
        )
        .await;
    assert_eq!(
        page,
        json!([0, 0, 0, ["Client"], "kpro5"]),
        "no run, no chart, no 'simulated', only the client's view"
    );
    s.screenshot("selftest").await;

    // Two runs beside it: the one from kpro5 is set against the capacity, kpro6's is not.
    let input = s
        .client
        .find(Locator::Css("input[type=file]"))
        .await
        .unwrap();
    input
        .send_keys(&format!("{}\n{}", same.display(), other.display()))
        .await
        .unwrap();
    s.wait(
        "both runs",
        "document.querySelectorAll('[data-testid=run]').length === 2",
        LOAD,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["kpro5-run", "kpro6-run"]);
    click_tab(&s, "Client").await;
    let shares = s
        .wait(
            "the run set against the capacity",
            "[...document.querySelectorAll('[data-testid=capacity-share]')].map(p => p.textContent)",
            LOAD,
        )
        .await;
    // The golden run's fastest level: 8 one-token events in 0.022618748 s at C = 2.
    assert_eq!(
        shares,
        json!([
            "kpro5-run streamed at most 354 tok/s in 354 events/s (throughput sweep, C = 2): \
             0.018 % of the 2,000,000 events/s this client reads."
        ])
    );
    s.screenshot("selftest-and-runs").await;

    // The charts and the comparison are the runs' alone.
    click_tab(&s, "Throughput").await;
    charts_drawn(&s, 4).await;
    click_tab(&s, "Compare").await;
    let options = s
        .wait(
            "the baseline picker",
            "[...document.querySelectorAll('.baseline option')].map(o => o.textContent)",
            LOAD,
        )
        .await;
    assert_eq!(options, json!(["kpro5-run", "kpro6-run"]));

    // Removed, the selftest takes its view with it.
    click_tab(&s, "Client").await;
    s.js(
        "document.querySelector('[data-testid=selftest-item] button[aria-label^=Remove]').click()",
    )
    .await;
    s.wait(
        "the client's view gone",
        "!document.querySelector('[data-tab=Client]') && document.querySelector('[data-tab=Throughput][aria-selected=true]')",
        LOAD,
    )
    .await;
    charts_drawn(&s, 4).await;
    s.close().await;
}
