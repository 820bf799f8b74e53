//! The viewer's benchmark: a bundle of 100,000 request records, loaded and drawn in headless
//! Chromium; then the time to redraw after hiding a run and after switching tabs.
//!
//! `viewer/bench.sh` runs it (release build, real browser). Prints a Markdown table for
//! BENCHMARKS.md. Timings are taken inside the page with `performance.now()`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/browser/bundles.rs"]
mod bundles;
#[path = "../tests/browser/harness.rs"]
mod harness;

use std::time::Duration;

use harness::{Browser, FileServer, Session, dist_dir};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::SweepKind;
use llmsweep_shared::charts::{ChartKind, ChartRun, build, run_color};

const RECORDS: usize = 100_000;
const REPEATS: usize = 5;

/// Spreads copies of the throughput points' requests until the bundle holds `n` records; the
/// summaries stay as they were (this measures the viewer, not the numbers).
fn inflate(mut b: Bundle, n: usize) -> Bundle {
    let others: usize = b
        .sweeps
        .iter()
        .filter(|s| s.kind != SweepKind::Throughput)
        .flat_map(|s| &s.points)
        .map(|p| p.requests.len())
        .sum();
    let sweep = b
        .sweeps
        .iter_mut()
        .find(|s| s.kind == SweepKind::Throughput)
        .unwrap();
    let points = sweep.points.len();
    for (i, p) in sweep.points.iter_mut().enumerate() {
        let want = (n - others) / points + usize::from(i < (n - others) % points);
        let base = std::mem::take(&mut p.requests);
        let wall = base.iter().map(|r| r.start_s + r.e2e_s).fold(0.0, f64::max);
        p.requests = (0..want)
            .map(|k| {
                let mut r = base[k % base.len()].clone();
                r.start_s += wall * (k / base.len()) as f64;
                r
            })
            .collect();
    }
    b
}

/// Runs `script` (async, `done` is its callback) and returns the number it reports.
async fn timed(s: &Session, script: &str) -> f64 {
    let body = format!(
        "const done = arguments[arguments.length - 1];
         const until = (ok, t0) => ok() ? done(performance.now() - t0) : setTimeout(() => until(ok, t0), 1);
         {script}"
    );
    match s.client.execute_async(&body, Vec::new()).await {
        Ok(v) => v.as_f64().expect("a time in ms"),
        Err(e) => {
            let shot = s.screenshot("bench-failure").await;
            let page = s
                .js(
                    "return [document.querySelectorAll('[data-testid=run]').length,
                     [...document.querySelectorAll('canvas')].map(c => c.dataset.marks),
                     document.querySelector('.errors').innerText]",
                )
                .await;
            panic!(
                "{e}\nruns, marks, errors: {page}\nscreenshot: {}",
                shot.display()
            );
        }
    }
}

/// Marks the throughput view draws for these bundles.
fn all_marks(bundles: &[&Bundle]) -> usize {
    let runs: Vec<ChartRun> = bundles
        .iter()
        .enumerate()
        .map(|(i, b)| ChartRun {
            label: &b.label,
            color: run_color(i),
            bundle: b,
        })
        .collect();
    ChartKind::THROUGHPUT
        .iter()
        .map(|&k| build(k, &runs).marks.len())
        .sum()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(browser) = Browser::find() else {
        eprintln!("chromium and chromedriver are needed: .ci/install-viewer-tools.sh");
        std::process::exit(2);
    };
    let made = bundles::make().await;
    let big = inflate(made.a.clone(), RECORDS);
    let records: usize = big
        .sweeps
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| p.requests.len())
        .sum();
    let path = made.dir.path().join("big.json");
    std::fs::write(&path, big.to_json()).unwrap();
    std::fs::copy(&made.b_path, made.dir.path().join("other.json.gz")).unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    let server = FileServer::start(dist_dir(), made.dir.path().to_path_buf());
    let s = Session::start(&browser, (1400, 1000), &[]).await;
    let timeouts = fantoccini::wd::TimeoutConfiguration::new(
        Some(Duration::from_secs(120)),
        Some(Duration::from_secs(120)),
        None,
    );
    s.client.update_timeouts(timeouts).await.unwrap();
    let marks = all_marks(&[&big, &made.b]);
    let (mut load, mut toggle, mut tabs, mut requests) = (vec![], vec![], vec![], vec![]);
    let mut downloaded = vec![];
    for _ in 0..REPEATS {
        let url = server.url("index.html?bundle=bundles/big.json&bundle=bundles/other.json.gz");
        s.client.goto(&url).await.unwrap();
        // From navigation start until the four charts show both runs.
        let done = format!(
            "until(() => document.querySelectorAll('canvas[data-marks]').length === 4 &&
             [...document.querySelectorAll('canvas')]
                 .reduce((n, c) => n + Number(c.dataset.marks), 0) === {marks}, 0);"
        );
        let t = timed(&s, &done).await;
        load.push(t);
        let fetched = s
            .js("return performance.getEntriesByType('resource')
                   .find(e => e.name.endsWith('big.json')).responseEnd")
            .await;
        downloaded.push(fetched.as_f64().unwrap_or(f64::NAN));
        toggle.push(timed(&s, &toggle_first_run()).await);
        // Shown again, so the views below include the big run.
        timed(&s, &toggle_first_run()).await;
        tabs.push(timed(&s, &switch_to("Context", 3)).await);
        tabs.push(timed(&s, &switch_to("Throughput", 4)).await);
        // The big run's first point: a third of the records, sampled to 5,000 marks.
        requests.push(timed(&s, &switch_to("Requests", 1)).await);
    }
    s.close().await;
    let wasm = std::fs::read(dist_dir().join("llmsweep-viewer_bg.wasm")).unwrap();
    let gz = bundles::gzip(&wasm).len();
    println!("| measure | result |\n|---|---|");
    println!(
        "| bundle | {records} request records, {:.1} MB of JSON, plus a second run (.json.gz) |",
        size as f64 / 1e6
    );
    println!(
        "| load and draw both runs, from navigation (median of {REPEATS}) | {:.0} ms (all: {}) |",
        median(load.clone()),
        fmt(&load)
    );
    println!(
        "| of which the download of the big bundle ends at (median) | {:.0} ms (all: {}) |",
        median(downloaded.clone()),
        fmt(&downloaded)
    );
    println!(
        "| redraw 4 charts after hiding a run (median) | {:.0} ms (all: {}) |",
        median(toggle.clone()),
        fmt(&toggle)
    );
    println!(
        "| switch tab and draw its charts (median) | {:.0} ms (all: {}) |",
        median(tabs.clone()),
        fmt(&tabs)
    );
    println!(
        "| open the requests view of a point with {} records (median) | {:.0} ms (all: {}) |",
        RECORDS / 3,
        median(requests.clone()),
        fmt(&requests)
    );
    println!(
        "| wasm size | {} bytes raw, {} bytes gzip -6 |",
        wasm.len(),
        gz
    );
}

/// Hides (or shows) the first run; done when every chart has drawn again.
fn toggle_first_run() -> String {
    "const before = [...document.querySelectorAll('canvas')].map(c => c.dataset.draws);
     const t0 = performance.now();
     document.querySelector('[data-testid=run] input[type=checkbox]').click();
     until(() => [...document.querySelectorAll('canvas')]
         .every((c, i) => c.dataset.draws !== before[i]), t0);"
        .to_string()
}

/// Clicks a tab; done when its `charts` charts are drawn.
fn switch_to(tab: &str, charts: usize) -> String {
    format!(
        "const t0 = performance.now();
         document.querySelector('[data-tab={tab}]').click();
         until(() => document.querySelectorAll('canvas[data-marks]').length === {charts}, t0);"
    )
}

fn fmt(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.0}"))
        .collect::<Vec<_>>()
        .join(", ")
}
