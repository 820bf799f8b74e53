//! The viewer's benchmark: bundles of 1,000, 10,000 and 100,000 request records loaded and drawn
//! in headless Chromium, and a `llmsweep report` of 10 runs opened from `file://`; then, with the
//! 100,000-record bundle, the time to redraw after hiding a run and after switching tabs.
//!
//! `viewer/bench.sh` runs it (release build, real browser). Prints a Markdown table for
//! BENCHMARKS.md, with the machine's load average before and after. Timings are taken inside
//! the page with `performance.now()`. `LLMSWEEP_BENCH_DIST=DIR` loads another build of the viewer
//! than the committed `dist/` (e.g. one run through `wasm-opt`); the report always embeds the
//! viewer the collector was built with.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/browser/bundles.rs"]
mod bundles;
#[path = "../tests/browser/harness.rs"]
mod harness;

use std::time::Duration;

use harness::{Browser, FileServer, Session, dist_dir};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::SweepKind;
use llmsweep_shared::charts::axis::thousands;
use llmsweep_shared::charts::{ChartKind, ChartRun, build, run_color};

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
const RECORDS: usize = 100_000;
const REPORT_RUNS: usize = 10;
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

/// The machine's load average over 1, 5 and 15 minutes, as `uptime` prints it.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(", "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The viewer build to load: `LLMSWEEP_BENCH_DIST`, else the committed `dist/`.
fn bench_dist() -> std::path::PathBuf {
    std::env::var_os("LLMSWEEP_BENCH_DIST")
        .filter(|d| !d.is_empty())
        .map(Into::into)
        .unwrap_or_else(dist_dir)
}

/// `n` runs for one report: the two made runs in turn, each a run of its own (label and id).
fn report_runs(made: &bundles::Made, n: usize) -> Vec<llmsweep::output::report::Embedded> {
    (0..n)
        .map(|i| {
            let mut b = if i % 2 == 0 {
                made.a.clone()
            } else {
                made.b.clone()
            };
            b.label = format!("run-{:02}", i + 1);
            b.id = format!("bench-run-{i:02}");
            llmsweep::output::report::Embedded {
                name: format!("{}.json", b.label),
                bundle: b,
            }
        })
        .collect()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(browser) = Browser::find() else {
        eprintln!("chromium and chromedriver are needed: .ci/install-viewer-tools.sh");
        std::process::exit(2);
    };
    let load_before = load_average();
    let made = bundles::make().await;
    std::fs::copy(&made.b_path, made.dir.path().join("other.json.gz")).unwrap();
    let mut sizes = Vec::new();
    for n in SIZES {
        let big = inflate(made.a.clone(), n);
        let path = made.dir.path().join(format!("big-{n}.json"));
        std::fs::write(&path, big.to_json().unwrap()).unwrap();
        sizes.push((
            n,
            std::fs::metadata(&path).unwrap().len(),
            all_marks(&[&big, &made.b]),
        ));
    }
    let runs = report_runs(&made, REPORT_RUNS);
    let report_path = made.dir.path().join("report.html");
    std::fs::write(
        &report_path,
        llmsweep::output::report::render(&runs).unwrap(),
    )
    .unwrap();
    let report_size = std::fs::metadata(&report_path).unwrap().len();
    let report_marks = {
        let bundles: Vec<&Bundle> = runs.iter().map(|r| &r.bundle).collect();
        all_marks(&bundles)
    };

    let server = FileServer::start(bench_dist(), made.dir.path().to_path_buf());
    let s = Session::start(&browser, (1400, 1000), &[]).await;
    let timeouts = fantoccini::wd::TimeoutConfiguration::new(
        Some(Duration::from_secs(120)),
        Some(Duration::from_secs(120)),
        None,
    );
    s.client.update_timeouts(timeouts).await.unwrap();
    let mut loads: Vec<Vec<f64>> = vec![Vec::new(); SIZES.len()];
    let (mut toggle, mut tabs, mut requests) = (vec![], vec![], vec![]);
    let mut downloaded = vec![];
    let (mut report_charts, mut report_compare) = (vec![], vec![]);
    for _ in 0..REPEATS {
        for (k, &(n, _, marks)) in sizes.iter().enumerate() {
            let url = server.url(&format!(
                "index.html?bundle=bundles/big-{n}.json&bundle=bundles/other.json.gz"
            ));
            // From a blank page, so no load pays for tearing down the page before it.
            s.client.goto("about:blank").await.unwrap();
            s.client.goto(&url).await.unwrap();
            loads[k].push(timed(&s, &charts_show(4, marks)).await);
        }
        // The biggest bundle is open: how long its download took, then redraws.
        let fetched = s
            .js("return performance.getEntriesByType('resource')
                   .find(e => e.name.includes('big-')).responseEnd")
            .await;
        downloaded.push(fetched.as_f64().unwrap_or(f64::NAN));
        toggle.push(timed(&s, &toggle_first_run()).await);
        // Shown again, so the views below include the big run.
        timed(&s, &toggle_first_run()).await;
        tabs.push(timed(&s, &switch_to("Context", 3)).await);
        tabs.push(timed(&s, &switch_to("Throughput", 4)).await);
        // The big run's first point: a third of the records, sampled to 5,000 marks, and the
        // server's queue and KV cache under it.
        requests.push(timed(&s, &switch_to("Requests", 3)).await);

        // The report from disk: as it opens (on the comparison of its runs), and on its charts.
        // (Chromium does not follow a page of a site to a file:// address: by way of a blank page.)
        let file = format!("file://{}", report_path.display());
        s.client.goto("about:blank").await.unwrap();
        s.client.goto(&file).await.unwrap();
        report_compare.push(timed(&s, COMPARE_DRAWN).await);
        s.client.goto("about:blank").await.unwrap();
        s.client
            .goto(&format!("{file}?tab=throughput"))
            .await
            .unwrap();
        report_charts.push(timed(&s, &charts_show(4, report_marks)).await);
    }
    s.close().await;
    let load_after = load_average();
    let wasm = std::fs::read(bench_dist().join("llmsweep-viewer_bg.wasm")).unwrap();
    let gz = bundles::gzip(&wasm).len();
    println!("load average before {load_before}, after {load_after}\n");
    println!("| measure | result |\n|---|---|");
    for (k, &(n, size, _)) in sizes.iter().enumerate() {
        println!(
            "| load and draw {} records ({:.1} MB of JSON) and a second run, from navigation (median of {REPEATS}) | {:.0} ms (all: {}) |",
            thousands(n as f64),
            size as f64 / 1e6,
            median(loads[k].clone()),
            fmt(&loads[k])
        );
    }
    println!(
        "| of which the download of the {}-record bundle ends at (median) | {:.0} ms (all: {}) |",
        thousands(RECORDS as f64),
        median(downloaded.clone()),
        fmt(&downloaded)
    );
    println!(
        "| report of {REPORT_RUNS} runs ({:.0} KB) from file://, opened on its comparison: verdict and every chart drawn (median) | {:.0} ms (all: {}) |",
        report_size as f64 / 1024.0,
        median(report_compare.clone()),
        fmt(&report_compare)
    );
    println!(
        "| the same report with ?tab=throughput: 4 charts of {REPORT_RUNS} runs drawn (median) | {:.0} ms (all: {}) |",
        median(report_charts.clone()),
        fmt(&report_charts)
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
        thousands((RECORDS / 3) as f64),
        median(requests.clone()),
        fmt(&requests)
    );
    println!(
        "| wasm size | {} bytes raw, {} bytes gzip -6 |",
        thousands(wasm.len() as f64),
        thousands(gz as f64)
    );
}

/// From navigation start until `n` charts are drawn with `marks` marks between them.
fn charts_show(n: usize, marks: usize) -> String {
    format!(
        "until(() => document.querySelectorAll('canvas[data-marks]').length === {n} &&
         [...document.querySelectorAll('canvas')]
             .reduce((k, c) => k + Number(c.dataset.marks), 0) === {marks}, 0);"
    )
}

/// From navigation start until the comparison's verdict is shown and every chart on the page
/// (one of changes per sweep) has drawn.
const COMPARE_DRAWN: &str = "until(() => document.querySelector('[data-testid=verdict]') &&
     document.querySelectorAll('canvas').length > 0 &&
     [...document.querySelectorAll('canvas')].every(c => c.dataset.marks !== undefined), 0);";

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
