//! An old text table, imported with `llmsweep import`, next to a measured run in the viewer:
//! listed as imported, drawn, compared with known deltas, its source and definitions shown, and
//! its points, which have no requests, say so when chosen.

use std::collections::BTreeMap;

use fantoccini::Locator;
use llmsweep::import::{Request, import};
use llmsweep_shared::bundle::ImportFormat;
use serde_json::{Value, json};

use super::harness::{Browser, FileServer, Session, dist_dir};
use super::{
    LOAD, ONE_AT_A_TIME, charts_drawn, click_tab, click_that_point, hover_some_point, open_runs,
    runs_listed,
};

/// The sample run's workload (C = 1, 2, 4 at 512 → 64 tokens); C=1 at twice the sample's
/// aggregate throughput (65.65 tok/s) and TTFT (0.1182 s); the last row cut off.
const TABLE: &str = "\
C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail
1 |     131.3 |          70.1 |  0.2364 |    512 |     3.9 |  8 |    0
2 |     200.0 |          66.0 |  0.2500 |    512 |     2.6 |  8 |    0
4 |     250.0 |          ...
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_table_sits_next_to_a_measured_run() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("old.txt");
    std::fs::write(&table, TABLE).unwrap();
    let bundle = import(&Request {
        format: Some(ImportFormat::Table),
        files: vec![table],
        label: "kpro6".into(),
        input_len: Some(512),
        output_len: Some(64),
        model: None,
        notes: BTreeMap::new(),
        gpus: None,
        command_line: vec!["llmsweep".into(), "import".into()],
    })
    .unwrap();
    std::fs::write(dir.path().join("kpro6.json"), bundle.to_json().unwrap()).unwrap();
    std::fs::copy(
        dist_dir().join("sample.json"),
        dir.path().join("sample.json"),
    )
    .unwrap();

    let server = FileServer::start(dist_dir(), dir.path().to_path_buf());
    let s = Session::start(&browser, (1360, 1000), &[]).await;
    open_runs(
        &s,
        &server.url("index.html?bundle=bundles/sample.json&bundle=bundles/kpro6.json"),
        2,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["sample", "kpro6"]);
    let badge = s
        .js("return [...document.querySelectorAll('[data-testid=imported]')].map(b => b.closest('[data-testid=run]').dataset.label)")
        .await;
    assert_eq!(badge, json!(["kpro6"]));
    let dates = s
        .js("return [...document.querySelectorAll('[data-testid=run]')].map(r => r.textContent.includes('date unknown'))")
        .await;
    assert_eq!(
        dates,
        json!([false, true]),
        "a table does not say when it ran"
    );
    charts_drawn(&s, 4).await;
    let tip = hover_some_point(&s, 1).await;
    assert!(tip.starts_with("kpro6 · C="), "{tip}");
    assert!(
        tip.contains(
            "imported from a text table, under its definitions:\naggregate output tok/s: the table"
        ),
        "{tip}"
    );
    s.screenshot("imported-hover").await;

    // Its point has no requests: choosing it says so, and opens no other run's requests.
    click_that_point(&s).await;
    let note = s
        .wait(
            "why the point opens nothing",
            "document.querySelector('[data-testid=pick-note]')?.innerText",
            LOAD,
        )
        .await;
    let note = note.as_str().unwrap();
    assert!(
        note.starts_with("kpro6's point at C = ")
            && note.contains(" has no per-request records (imported from a text table)."),
        "{note}"
    );
    assert_eq!(
        s.js("return document.querySelector('[aria-selected=true]').dataset.tab")
            .await,
        json!("Throughput"),
        "the view stays"
    );
    s.screenshot("imported-click").await;

    // The source's definitions, and the cut-off row, one click away in the run list.
    s.client
        .find(Locator::Css("[data-testid=source-definitions] summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let defs = s
        .js("return document.querySelector('[data-testid=source-definitions]').innerText")
        .await;
    let defs = defs.as_str().unwrap();
    assert!(
        defs.contains("the table's TTFT column as printed"),
        "{defs}"
    );
    s.screenshot("imported-runs").await;

    click_tab(&s, "Compare").await;
    s.wait(
        "compare tables",
        "document.querySelector('table.cmp')",
        LOAD,
    )
    .await;
    let note = s
        .js("return document.querySelector('[data-testid=imported-note]').innerText")
        .await;
    assert!(
        note.as_str()
            .unwrap()
            .starts_with("kpro6 is imported from a text table"),
        "{note}"
    );
    // Row 2 is aggregate throughput, row 4 TTFT p50; column 3 is kpro6 against the baseline.
    let cells: Value = s
        .js(r#"const t = document.querySelector('.sweep-compare[data-kind=throughput] table[data-key="1"]');
               return [t.querySelector('thead th:nth-child(3)').innerText,
                       t.querySelector('tbody tr:nth-child(2) td:nth-child(3) .delta').innerText,
                       t.querySelector('tbody tr:nth-child(4) td:nth-child(3) .delta').innerText,
                       t.querySelector('tbody tr:nth-child(1) td:nth-child(3)').innerText];"#)
        .await;
    let cells: Vec<String> = serde_json::from_value(cells).unwrap();
    assert_eq!(cells[0], "kpro6 (imported)");
    assert!(
        cells[1].starts_with("+100.0 ") && cells[2].starts_with("+100.0 "),
        "aggregate and TTFT doubled: {cells:?}"
    );
    assert_eq!(cells[3], "—", "no steady window in a table");
    // The table's TTFT(s) stands in for a p50 it does not claim to be: marked and explained.
    let ttft = s
        .js(r#"return document.querySelector('.sweep-compare[data-kind=throughput] table[data-key="1"] tbody tr:nth-child(4) td:nth-child(3) .value').innerText"#)
        .await;
    assert_eq!(ttft, json!("0.236†"));
    let caveats = s
        .js("return [...document.querySelectorAll('[data-testid=caveat]')].map(e => e.innerText)")
        .await;
    assert_eq!(
        caveats,
        json!([
            "† the source's number; whether mean or median is not stated",
            "† the source's per-request speed; its definition is not stated"
        ])
    );
    s.screenshot("imported-compare").await;
    s.close().await;
}
