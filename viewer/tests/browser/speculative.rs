//! Two simulated SGLang hosts with MTP speculative decoding, one accepting 3 tokens a step and
//! one 2, in the viewer: the acceptance chart is drawn (and absent for runs without
//! speculation), each run's card says its GPUs and its speculative decoding, the per-user chart
//! is per GPU, and the Compare tab names the change of acceptance.

use clap::Parser;
use llmsweep::cli::{Cli, Command};
use llmsweep::load::{Interrupt, run_plan};
use llmsweep::sim::{Personality, Preset, SimConfig, SimServer};

use super::harness::{Browser, FileServer, Session, dist_dir};
use super::{LOAD, ONE_AT_A_TIME, charts_drawn, click_tab, open_runs, runs_listed};

/// A throughput sweep against the fast simulator speaking SGLang with 3 draft steps accepting
/// `accept` tokens a step, written into `out` as `<label>.json`.
async fn sweep(accept: f64, label: &str, out: &std::path::Path) {
    let cfg = SimConfig {
        engine: Personality::Sglang,
        tp_size: 2,
        speculative_steps: Some(3),
        spec_accept: accept,
        ..SimConfig::preset(Preset::Fast)
    };
    let sim = SimServer::start(cfg, 0).await.expect("simulator starts");
    let dir = tempfile::tempdir().expect("out dir");
    let (url, d) = (sim.url(), dir.path().to_string_lossy().to_string());
    let args = [
        "llmsweep",
        "throughput",
        "--url",
        &url,
        "--label",
        label,
        "--out",
        &d,
        "--concurrency",
        "1,2,4",
        "--input-len",
        "64",
        "--output-len",
        "120",
        "--requests",
        "32",
        "--warmup",
        "0",
    ];
    let Command::Throughput(a) = Cli::try_parse_from(args).expect("valid flags").command else {
        panic!("not a throughput command")
    };
    let outcome = run_plan(
        &a.plan().expect("valid plan"),
        vec!["llmsweep".into()],
        Interrupt::default(),
        std::sync::Arc::new(llmsweep::load::Silent),
    )
    .await
    .expect("sweep runs");
    sim.shutdown().await;
    std::fs::copy(&outcome.path, out.join(format!("{label}.json"))).expect("copied");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acceptance_is_drawn_on_the_card_and_named_in_the_comparison() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    sweep(3.0, "mtp3", dir.path()).await;
    sweep(2.0, "mtp2", dir.path()).await;
    let server = FileServer::start(dist_dir(), dir.path().to_path_buf());
    let s = Session::start(&browser, (1360, 1400), &[]).await;
    open_runs(
        &s,
        &server.url("index.html?bundle=bundles/mtp3.json&bundle=bundles/mtp2.json"),
        2,
    )
    .await;
    assert_eq!(runs_listed(&s).await, ["mtp3", "mtp2"]);
    let drawn = charts_drawn(&s, 5).await;
    let slugs: Vec<&str> = drawn.iter().map(|(slug, _)| slug.as_str()).collect();
    assert!(slugs.contains(&"acceptance-vs-concurrency"), "{slugs:?}");
    let card = s
        .js("return [...document.querySelectorAll('[data-testid=run]')].map(r => [r.querySelector('[data-testid=gpus]')?.textContent, r.querySelector('[data-testid=speculative]')?.textContent])")
        .await;
    let card: Vec<(String, String)> = serde_json::from_value(card).unwrap();
    for (gpus, spec) in &card {
        assert_eq!(gpus, "2 (the server: TP 2 × DP 1 × PP 1)");
        assert!(
            spec.starts_with("NEXTN, 3 steps, 4 draft tokens; accepted "),
            "{spec}"
        );
    }
    for (_, spec) in &card {
        assert!(spec.ends_with("tokens per step over 3 points"), "{spec}");
    }
    let titles = s
        .js("return [...document.querySelectorAll('canvas[data-marks]')].map(c => c.getAttribute('aria-label'))")
        .await;
    assert!(
        titles.to_string().contains("per GPU"),
        "the per-user chart is per GPU when both runs say their GPUs: {titles}"
    );
    s.screenshot("speculative-charts").await;
    s.js("document.querySelector('[data-chart=acceptance-vs-concurrency]').scrollIntoView(); return null")
        .await;
    s.screenshot("speculative-acceptance").await;
    s.js("window.scrollTo(0, 0); return null").await;
    click_tab(&s, "Compare").await;
    s.wait(
        "the verdict",
        "document.body.textContent.includes('speculative decoding: mtp2 accepts')",
        LOAD,
    )
    .await;
    let said = s.js("return document.body.textContent").await;
    assert!(
        said.as_str()
            .is_some_and(|t| t.contains("tokens per step against mtp3's ")),
        "{said}"
    );
    s.screenshot("speculative-compare").await;
}
