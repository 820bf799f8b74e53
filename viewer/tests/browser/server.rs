//! What the server said of its load, where a person looks for it: the peaks on the run card and
//! in the compare cards, the queue and KV-cache charts under a point's requests (or one line
//! saying there are none), and the chart of the changes against the baseline.

use serde_json::{Value, json};

use super::harness::{Browser, FileServer, Session, dist_dir};
use super::{LOAD, ONE_AT_A_TIME, bundles, charts_drawn, click_tab, open_runs};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delta_chart_server_charts_and_peaks() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let made = bundles::make().await;
    // kpro5 again, as a run whose points carry no server samples.
    let mut plain = made.a.clone();
    plain.label = "plain".into();
    for p in plain.sweeps.iter_mut().flat_map(|s| &mut s.points) {
        p.server_samples = None;
    }
    std::fs::write(made.dir.path().join("plain.json"), plain.to_json().unwrap()).unwrap();
    let server = FileServer::start(dist_dir(), made.dir.path().to_path_buf());
    let s = Session::start(&browser, (1400, 1800), &[]).await;
    open_runs(
        &s,
        &server.url("index.html?bundle=bundles/kpro5.json&bundle=bundles/kpro6.json.gz"),
        2,
    )
    .await;

    // The run card: the highest queue and KV usage, and where.
    let peaks = s
        .js("return [...document.querySelectorAll('[data-testid=run]')].map(r => r.querySelector('[data-testid=peaks]')?.innerText ?? null)")
        .await;
    let peaks: Vec<Option<String>> = serde_json::from_value(peaks).unwrap();
    for p in &peaks {
        let p = p.as_deref().expect("each simulated run has server samples");
        assert!(p.starts_with("peak queue "), "{p}");
        assert!(
            p.contains(" · peak KV cache ") && p.contains(" % at "),
            "{p}"
        );
    }

    // Compare: the chart of changes has the three levels both runs measured, a point per level
    // and metric, and lists them as text.
    click_tab(&s, "Compare").await;
    let tp = "[data-testid=delta-chart]";
    s.wait(
        "the delta chart drawn",
        &format!(
            "document.querySelector('.sweep-compare[data-kind=throughput] {tp} canvas[data-marks]')"
        ),
        LOAD,
    )
    .await;
    let d: Value = s
        .js(&format!("const d = document.querySelector('.sweep-compare[data-kind=throughput] {tp}'); return [d.dataset.levels, d.dataset.points, d.querySelector('canvas').dataset.marks, [...d.querySelectorAll('.delta-values li')].map(l => l.textContent)]"))
        .await;
    assert_eq!(d[0], json!("3"), "C = 1, 2, 4: {d}");
    assert_eq!(d[1], json!("12"), "four metrics at three levels: {d}");
    assert_eq!(d[2], json!("12"), "every point drawn: {d}");
    let lines: Vec<String> = serde_json::from_value(d[3].clone()).unwrap();
    assert_eq!(lines.len(), 12);
    assert!(
        lines[0].starts_with("kpro6 · C=1 · steady output tok/s: -"),
        "kpro6 is slower: {}",
        lines[0]
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("TTFT p50 (s): +") && l.contains("better by -")),
        "a slower TTFT is drawn below zero: {lines:?}"
    );
    let ctx = s
        .js(&format!("return document.querySelector('.sweep-compare[data-kind=context] {tp}')?.dataset.levels"))
        .await;
    assert_eq!(ctx, json!("3"), "512, 1k and 2k; 8k is past both limits");
    let inked = charts_drawn(&s, 2).await;
    assert_eq!(inked[0].0, "change-vs-concurrency");
    // The compare cards carry each run's peak queue and KV usage at the level.
    let rows = s
        .js("return [...document.querySelectorAll('.sweep-compare[data-kind=throughput] table[data-key=\"4\"] [data-testid=peak-row] th')].map(t => t.innerText)")
        .await;
    assert_eq!(rows, json!(["peak queue", "peak KV cache"]));
    s.screenshot("compare-delta").await;

    // Requests: the queue and KV-cache charts under the requests, on its time axis.
    click_tab(&s, "Requests").await;
    let inked = charts_drawn(&s, 3).await;
    let slugs: Vec<&str> = inked.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(slugs, ["requests", "server-queue", "server-kv-cache"]);
    assert_eq!(
        s.js("return document.querySelector('[data-testid=server-charts]').dataset.kv")
            .await,
        json!("true")
    );
    s.screenshot("requests-server").await;

    // A point without server samples says so, in one line, with no empty chart.
    s.client
        .goto(&server.url("index.html?bundle=bundles/plain.json"))
        .await
        .unwrap();
    s.wait(
        "the run loaded",
        "document.querySelectorAll('[data-testid=run]').length === 1 && !!document.querySelector('[data-tab=Requests]')",
        LOAD,
    )
    .await;
    click_tab(&s, "Requests").await;
    charts_drawn(&s, 1).await;
    let line = s
        .wait(
            "the no-samples line",
            "document.querySelector('[data-testid=no-server-samples]')?.innerText",
            LOAD,
        )
        .await;
    assert!(
        line.as_str()
            .unwrap()
            .starts_with("No server samples for this point"),
        "{line}"
    );
    assert_eq!(
        s.js("return document.querySelectorAll('[data-testid=server-charts]').length")
            .await,
        json!(0)
    );
    assert_eq!(
        s.js("return document.querySelectorAll('[data-testid=peaks]').length")
            .await,
        json!(0),
        "no peaks on the card of a run without server samples"
    );
    s.close().await;
}
