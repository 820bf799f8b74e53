//! The viewer in real headless Chromium, checked the way a person looks at it: runs listed,
//! every chart drawn, hover explains points, compare deltas right, a broken file reported while
//! the other runs stay. Screenshots of each view go to `target/viewer-screenshots/`.
//!
//! Needs `chromium` and `chromedriver` (`.ci/install-viewer-tools.sh`); without them the tests
//! skip, unless `LLMSWEEP_REQUIRE_BROWSER=1`, which makes them fail.

#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bundles;
mod finite;
mod harness;
mod history;
mod imported;
mod long_text;
mod rate;
mod remote;
mod selftest;
mod server;
mod speculative;
mod verdict;
mod view;

use std::time::Duration;

use fantoccini::Locator;
use harness::{Browser, FileServer, INKED_PIXELS_JS, Session, dist_dir};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::SweepKind;
use serde_json::{Value, json};

/// One browser at a time: the machine has two cores.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const LOAD: Duration = Duration::from_secs(30);

async fn runs_listed(s: &Session) -> Vec<String> {
    let v = s
        .js("return [...document.querySelectorAll('[data-testid=run]')].map(e => e.dataset.label)")
        .await;
    serde_json::from_value(v).unwrap()
}

/// Waits until `n` charts are drawn and checks each has real ink: `(slug, inked pixels)`.
async fn charts_drawn(s: &Session, n: usize) -> Vec<(String, u64)> {
    s.wait(
        &format!("{n} drawn charts"),
        &format!("document.querySelectorAll('canvas[data-marks]').length === {n}"),
        LOAD,
    )
    .await;
    let v = s.js_with(INKED_PIXELS_JS, vec![json!("canvas")]).await;
    let inked: Vec<(String, u64)> = serde_json::from_value(v).unwrap();
    for (slug, px) in &inked {
        assert!(*px > 3000, "chart {slug} looks blank: {px} inked pixels");
    }
    inked
}

/// Opens `url` and waits until the run list shows `runs` runs.
async fn open_runs(s: &Session, url: &str, runs: usize) {
    s.client.goto(url).await.unwrap();
    s.wait(
        &format!("{runs} runs"),
        &format!("document.querySelectorAll('[data-testid=run]').length === {runs}"),
        LOAD,
    )
    .await;
}

async fn click_tab(s: &Session, tab: &str) {
    s.client
        .find(Locator::Css(&format!("[data-tab={tab}]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Finds a drawn point (a 5×5 block of the `run`-th run's color: lines are thinner) on the first
/// chart, moves the mouse there, and returns the tooltip's text.
async fn hover_some_point(s: &Session, run: usize) -> String {
    let at = s
        .js_with(r#"
            const c = document.querySelector('canvas[data-marks]');
            const color = getComputedStyle(document.querySelectorAll('[data-testid=run]')[arguments[0]])
                .getPropertyValue('--run-color').trim();
            const want = [1, 3, 5].map(i => parseInt(color.slice(i, i + 2), 16));
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            const is = (x, y) => {
                const i = (y * c.width + x) * 4;
                return Math.abs(d[i] - want[0]) + Math.abs(d[i+1] - want[1]) + Math.abs(d[i+2] - want[2]) < 30;
            };
            for (let y = 2; y < c.height - 2; y++) {
                for (let x = 2; x < c.width - 2; x++) {
                    let all = true;
                    for (let dy = -2; dy <= 2 && all; dy++)
                        for (let dx = -2; dx <= 2 && all; dx++) all = is(x + dx, y + dy);
                    if (all) {
                        const r = c.getBoundingClientRect();
                        window.__point = { clientX: r.left + x, clientY: r.top + y, bubbles: true };
                        c.dispatchEvent(new MouseEvent('mousemove', window.__point));
                        return [x, y];
                    }
                }
            }
            return null;
        "#, vec![json!(run)])
        .await;
    assert!(at.is_array(), "no drawn point of run {run} found");
    let tip = s
        .wait(
            "a tooltip",
            "document.querySelector('.tooltip')?.innerText",
            LOAD,
        )
        .await;
    tip.as_str().unwrap().to_string()
}

/// Clicks the point [`hover_some_point`] last found.
async fn click_that_point(s: &Session) {
    s.js("document.querySelector('canvas[data-marks]').dispatchEvent(new MouseEvent('click', window.__point))")
        .await;
}

/// Every export button of every chart and table gives no error.
async fn exports_work(s: &Session) {
    let clicked = s
        .js(
            "const b = [...document.querySelectorAll('figure.chart button, .section-head button')];
             b.forEach(x => x.click()); return b.length;",
        )
        .await;
    assert!(clicked.as_u64().unwrap() >= 2, "export buttons: {clicked}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let errors = s
        .js("return [...document.querySelectorAll('.chart-error')].map(e => e.innerText)")
        .await;
    assert_eq!(errors, json!([]), "exports failed");
}

fn steady_at(b: &Bundle, c: u32) -> f64 {
    let sweep = b
        .sweeps
        .iter()
        .find(|s| s.kind == SweepKind::Throughput)
        .unwrap();
    let p = sweep.points.iter().find(|p| p.concurrency == c).unwrap();
    p.summary.as_ref().unwrap().steady_tok_s.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runs_every_view_and_a_broken_file() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let made = bundles::make().await;
    let server = FileServer::start(dist_dir(), made.dir.path().to_path_buf());
    let s = Session::start(&browser, (1360, 1000), &[]).await;

    // One run from the address, one gzip and one broken file through the file picker.
    s.client
        .goto(&server.url("index.html?bundle=bundles/kpro5.json"))
        .await
        .unwrap();
    s.wait(
        "the first run",
        "document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
    let input = s
        .client
        .find(Locator::Css("input[type=file]"))
        .await
        .unwrap();
    let files = format!("{}\n{}", made.b_path.display(), made.broken_path.display());
    input.send_keys(&files).await.unwrap();
    s.wait(
        "the load error",
        "document.querySelector('[data-testid=load-error]')",
        LOAD,
    )
    .await;
    s.wait(
        "both runs",
        "document.querySelectorAll('[data-testid=run]').length === 2",
        LOAD,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["kpro5", "kpro6"]);
    let error = s
        .js("return document.querySelector('[data-testid=load-error]').innerText")
        .await;
    let error = error.as_str().unwrap();
    assert!(error.contains("broken.json"), "{error}");
    assert!(
        error.contains("could not be loaded: not valid JSON"),
        "{error}"
    );
    let sim_badges = s
        .js("return document.querySelectorAll('.badge.sim').length")
        .await;
    assert_eq!(sim_badges, json!(2), "simulated runs are marked");

    let inked = charts_drawn(&s, 4).await;
    let slugs: Vec<&str> = inked.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        slugs,
        [
            "output-tok-s",
            "decode-vs-concurrency",
            "ttft-vs-concurrency",
            "per-user-vs-total"
        ]
    );
    let tip = hover_some_point(&s, 0).await;
    assert!(
        tip.contains(" · C="),
        "tooltip names run and concurrency: {tip}"
    );
    assert!(tip.contains("tok/s"), "tooltip gives the value: {tip}");
    // Every run shown at that concurrency, with its change against the baseline.
    assert!(tip.contains("\n\nevery run at C="), "{tip}");
    assert!(tip.contains("\n  kpro5: "), "{tip}");
    assert!(tip.contains(" (baseline)\n  kpro6: "), "{tip}");
    assert!(tip.contains(" %)"), "a change: {tip}");
    s.screenshot("throughput").await;
    exports_work(&s).await;

    // The points by keyboard: the first chart takes focus, the arrows walk its points from the
    // left, Enter opens the point's requests.
    let canvas = s
        .client
        .find(Locator::Css("canvas[data-marks]"))
        .await
        .unwrap();
    s.js("document.querySelector('canvas[data-marks]').focus()")
        .await;
    canvas.send_keys("\u{E014}").await.unwrap();
    let first = s
        .wait(
            "a tooltip from the keyboard",
            "document.querySelector('.tooltip')?.innerText",
            LOAD,
        )
        .await;
    let first = first.as_str().unwrap().to_string();
    assert!(
        first.contains(" · C=1\n"),
        "the walk starts at the left: {first}"
    );
    s.screenshot("keyboard").await;
    for _ in 0..3 {
        canvas.send_keys("\u{E014}").await.unwrap();
    }
    let later = s
        .js("return document.querySelector('.tooltip').innerText")
        .await;
    assert_ne!(later.as_str().unwrap(), first, "the arrows move");
    canvas.send_keys("\u{E007}").await.unwrap();
    s.wait(
        "the requests of the chosen point",
        "document.querySelector('[data-tab=Requests][aria-selected=true]')",
        LOAD,
    )
    .await;
    // The requests, and under them the server's queue and KV cache.
    charts_drawn(&s, 3).await;
    click_tab(&s, "Throughput").await;
    charts_drawn(&s, 4).await;

    // By keyboard: the right arrow on the focused tab list moves to the next view.
    let tab = s
        .client
        .find(Locator::Css("[data-tab=Throughput]"))
        .await
        .unwrap();
    tab.send_keys("\u{E014}").await.unwrap();
    let inked = charts_drawn(&s, 3).await;
    let focused = s.js("return document.activeElement.dataset.tab").await;
    assert_eq!(focused, json!("Context"), "focus follows the selected tab");
    assert_eq!(inked[0].0, "ttft-vs-length");
    s.screenshot("context").await;

    click_tab(&s, "Requests").await;
    charts_drawn(&s, 3).await;
    s.screenshot("requests").await;

    click_tab(&s, "Compare").await;
    check_compare(&s, &made).await;
    exports_work(&s).await;
    s.screenshot("compare").await;
    s.close().await;
}

/// The steady tok/s change at C=1 and C=4 is the one computed from the two bundles.
async fn check_compare(s: &Session, made: &bundles::Made) {
    s.wait(
        "compare tables",
        "document.querySelector('table.cmp')",
        LOAD,
    )
    .await;
    for c in [1, 4] {
        let (a, b) = (steady_at(&made.a, c), steady_at(&made.b, c));
        let want = format!("{:+.1} ±", (b - a) / a * 100.0);
        let cell: Value = s
            .js_with(
                r#"const td = document.querySelector(
                    `.sweep-compare[data-kind=throughput] table[data-key="${arguments[0]}"] tbody tr:first-child td:nth-child(3)`);
                   return [td.querySelector('.delta').innerText, td.className];"#,
                vec![json!(c)],
            )
            .await;
        let delta = cell[0].as_str().unwrap();
        assert!(
            delta.starts_with(&want) && delta.ends_with(" %"),
            "steady tok/s change at C={c}: {delta}, want {want}…"
        );
        let class = cell[1].as_str().unwrap();
        let expect = if (b - a) / a * 100.0 >= 1.0 {
            "better"
        } else if (b - a) / a * 100.0 <= -1.0 {
            "worse"
        } else {
            "same"
        };
        assert!(class.contains(expect), "C={c}: {class} should be {expect}");
    }
    // The verdict first: kpro6's simulator is twice as slow at everything.
    let headlines = s
        .js("return [...document.querySelectorAll('[data-testid=verdict] [data-testid=headline]')].map(h => [h.dataset.outcome, h.innerText, h.querySelector('.outcome').innerText])")
        .await;
    assert_eq!(
        headlines[0],
        json!([
            "slower",
            "throughput sweep: kpro6 is slower than kpro5 at every level (C = 1, 2, 4)",
            "slower"
        ]),
        "{headlines}"
    );
    let card = s
        .js("return document.querySelector('[data-testid=verdict]').innerText")
        .await;
    let card = card.as_str().unwrap();
    assert!(
        card.contains("steady output tok/s: worse at all 3 levels; best "),
        "{card}"
    );
    let differs = s
        .js("return [...document.querySelectorAll('.meta-table tr.differs th')].map(e => e.innerText)")
        .await;
    let differs: Vec<String> = serde_json::from_value(differs).unwrap();
    assert!(differs.contains(&"GPUs".to_string()), "{differs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_state_opens_the_sample_in_dark_mode() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = FileServer::start(dist_dir(), std::env::temp_dir());
    let s = Session::start(&browser, (1280, 860), &["--force-dark-mode"]).await;
    s.client.goto(&server.url("index.html")).await.unwrap();
    s.wait("the empty state", "document.querySelector('.empty')", LOAD)
        .await;
    let text = s
        .js("return document.querySelector('.empty').innerText")
        .await;
    assert!(text.as_str().unwrap().contains("llmsweep demo"), "{text}");
    s.screenshot("empty-dark").await;
    s.client
        .find(Locator::XPath("//button[contains(., 'sample bundle')]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    s.wait(
        "the sample run",
        "document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
    charts_drawn(&s, 4).await;
    let dark = s
        .js("return matchMedia('(prefers-color-scheme: dark)').matches")
        .await;
    assert_eq!(dark, json!(true));
    s.screenshot("sample-dark").await;
    drop_rename_hide_remove(&s).await;
    s.close().await;
}

/// Drops two files on the page (one of a newer schema), then renames, hides and removes the
/// dropped run through the run list's controls.
async fn drop_rename_hide_remove(s: &Session) {
    s.js(r#"
        return fetch('sample.json').then(r => r.text()).then(text => {
            const dt = new DataTransfer();
            dt.items.add(new File([text], 'dropped.json'));
            dt.items.add(new File([text.replace('llmsweep.bundle/1', 'llmsweep.bundle/7')], 'newer.json'));
            window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
        });
    "#)
    .await;
    s.wait(
        "the dropped run",
        "document.querySelectorAll('[data-testid=run]').length === 2",
        LOAD,
    )
    .await;
    let error = s
        .wait(
            "the newer-schema error",
            "document.querySelector('[data-testid=load-error]')?.innerText",
            LOAD,
        )
        .await;
    let error = error.as_str().unwrap();
    assert!(
        error.contains("newer.json") && error.contains("upgrade llmsweep"),
        "{error}"
    );

    let second = "[data-testid=run]:nth-child(2)";
    let rename = s
        .client
        .find(Locator::Css(&format!("{second} button[title^=Rename]")))
        .await
        .unwrap();
    rename.click().await.unwrap();
    let input = s
        .client
        .find(Locator::Css(&format!("{second} input.rename")))
        .await
        .unwrap();
    // Ctrl+A, the new label, Enter (clearing through WebDriver would blur, which commits).
    input
        .send_keys("\u{E009}a\u{E000}after upgrade\u{E007}")
        .await
        .unwrap();
    s.wait(
        "the new label",
        "document.querySelectorAll('[data-label=\"after upgrade\"]').length === 1",
        LOAD,
    )
    .await;
    assert_eq!(runs_listed(s).await, ["sample", "after upgrade"]);

    let before: u64 = serde_json::from_value(
        s.js("return +document.querySelector('canvas').dataset.marks")
            .await,
    )
    .unwrap();
    s.client
        .find(Locator::Css(&format!("{second} input[type=checkbox]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    s.wait(
        "a chart without the hidden run",
        &format!(
            "+document.querySelector('canvas').dataset.marks === {}",
            before / 2
        ),
        LOAD,
    )
    .await;
    s.client
        .find(Locator::Css(&format!(
            "{second} button[aria-label^=Remove]"
        )))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    s.wait(
        "one run left",
        "document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
}

/// Regression: the run list was rebuilt on every change of the state, so a bundle landing closed
/// a rename being typed (and lost the text), and a checkbox lost focus when it was toggled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_load_keeps_a_rename_open_and_a_toggle_keeps_focus() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let server = FileServer::start(dist_dir(), std::env::temp_dir());
    let s = Session::start(&browser, (1280, 900), &[]).await;
    s.client
        .goto(&server.url("index.html?bundle=sample.json"))
        .await
        .unwrap();
    s.wait(
        "the sample run",
        "document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
    let first = "[data-testid=run]:nth-child(1)";
    // A row put on the page again would be a new element, without this mark.
    s.js(&format!("document.querySelector('{first}').kept = true"))
        .await;
    s.client
        .find(Locator::Css(&format!("{first} button[title^=Rename]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let input = s
        .client
        .find(Locator::Css(&format!("{first} input.rename")))
        .await
        .unwrap();
    input.send_keys("\u{E009}a\u{E000}half typ").await.unwrap();

    // Another bundle lands while the label is half typed.
    s.js(r#"
        return fetch('sample.json').then(r => r.text()).then(text => {
            const dt = new DataTransfer();
            dt.items.add(new File([text], 'dropped.json'));
            window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
        });
    "#)
    .await;
    s.wait(
        "the dropped run",
        "document.querySelectorAll('[data-testid=run]').length === 2",
        LOAD,
    )
    .await;
    let rename = s
        .js(&format!(
            "const i = document.querySelector('{first} input.rename');
             return [i ? i.value : null, document.activeElement === i,
                     document.querySelector('{first}').kept === true];"
        ))
        .await;
    assert_eq!(
        rename[0],
        json!("half typ"),
        "the rename input stays open with what was typed"
    );
    assert_eq!(rename[1], json!(true), "the rename input keeps focus");
    assert_eq!(
        rename[2],
        json!(true),
        "the run's row stays the same element"
    );
    input.send_keys("ed\u{E007}").await.unwrap();
    s.wait(
        "the new label",
        "document.querySelectorAll('[data-label=\"half typed\"]').length === 1",
        LOAD,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["half typed", "sample"]);

    // Hiding a run keeps the focus on its checkbox, in the same row, also when the row above it
    // goes away (removed here by a script, so the focus stays where the person left it).
    let second = "[data-testid=run]:nth-child(2)";
    s.js(&format!("document.querySelector('{second}').kept = true"))
        .await;
    s.client
        .find(Locator::Css(&format!("{second} input[type=checkbox]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    s.wait(
        "the run hidden",
        &format!("document.querySelector('{second}').classList.contains('hidden-run')"),
        LOAD,
    )
    .await;
    let focused = "const c = document.activeElement, row = c.closest('[data-testid=run]');
        return [c.type ?? null, row?.dataset.label ?? null, c.checked, row?.kept === true];";
    let toggled = s.js(focused).await;
    assert_eq!(
        toggled,
        json!(["checkbox", "sample", false, true]),
        "the toggled checkbox keeps focus and shows its run hidden"
    );
    s.js(&format!(
        "document.querySelector('{first} button[aria-label^=Remove]').click()"
    ))
    .await;
    s.wait(
        "one run left",
        "document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
    assert_eq!(
        s.js(focused).await,
        json!(["checkbox", "sample", false, true]),
        "the focus stays on the run's checkbox when the row above it is removed"
    );
    s.screenshot("kept-focus").await;
    s.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bundles_embedded_in_the_page_are_loaded() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let index = std::fs::read_to_string(dist_dir().join("index.html")).unwrap();
    let sample = std::fs::read_to_string(dist_dir().join("sample.json")).unwrap();
    // As a report embeds it: `</` escaped so the JSON cannot close the script element.
    let script = format!(
        r#"<script type="application/json" class="llmsweep-bundle" data-name="embedded.json">{}</script>"#,
        sample.replace("</", "<\\/")
    );
    let page = index.replace("</body>", &format!("{script}\n</body>"));
    std::fs::write(dir.path().join("embedded.html"), page).unwrap();
    let server = FileServer::start(dist_dir(), dir.path().to_path_buf());
    let s = Session::start(&browser, (1280, 900), &[]).await;
    s.client.goto(&server.url("embedded.html")).await.unwrap();
    s.wait(
        "the embedded run",
        "document.querySelectorAll('[data-testid=run]').length === 1",
        LOAD,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["sample"]);
    let source = s
        .js("return document.querySelector('.facts .source').innerText")
        .await;
    assert_eq!(source, json!("embedded.json"));
    charts_drawn(&s, 4).await;
    s.close().await;
}
