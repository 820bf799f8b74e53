//! Rate sweeps in the viewer: their own view with five charts, and compare cards named by the
//! offered rate.

use clap::Parser;
use llmsweep::cli::{Cli, Command};
use llmsweep::load::{Interrupt, run_plan};
use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::SweepKind;

use super::harness::{Browser, FileServer, Session, dist_dir};
use super::{LOAD, ONE_AT_A_TIME, charts_drawn, click_tab, open_runs};

/// A rate sweep at 5 and 20 req/s with goodput, against a simulator configured by `cfg`.
async fn rate_run(cfg: SimConfig, label: &str) -> Bundle {
    let flags = ["--rates", "5,20", "--requests", "30", "--input-len", "64"];
    throughput_run(cfg, label, &flags).await
}

/// `llmsweep throughput` with `flags`, 8-token answers and a TTFT SLO of 50 ms, against a
/// simulator configured by `cfg`.
async fn throughput_run(cfg: SimConfig, label: &str, flags: &[&str]) -> Bundle {
    let sim = SimServer::start(cfg, 0).await.expect("simulator starts");
    let out = tempfile::tempdir().expect("out dir");
    let (url, out_s) = (sim.url(), out.path().to_string_lossy().to_string());
    let mut args = vec![
        "llmsweep",
        "throughput",
        "--url",
        &url,
        "--label",
        label,
        "--seed",
        "7",
        "--out",
        &out_s,
        "--output-len",
        "8",
        "--warmup",
        "0",
        "--goodput",
        "ttft=0.05",
    ];
    args.extend_from_slice(flags);
    let Command::Throughput(a) = Cli::try_parse_from(args).expect("valid flags").command else {
        panic!("not throughput")
    };
    let outcome = run_plan(
        &a.plan().expect("plan"),
        vec![],
        Interrupt::default(),
        std::sync::Arc::new(llmsweep::load::Silent),
    )
    .await
    .expect("sweep runs");
    sim.shutdown().await;
    Bundle::from_json(&std::fs::read_to_string(&outcome.path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_sweep_has_its_view_of_five_charts_and_compares_by_offered_rate() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    let fast = SimConfig::preset(Preset::Fast);
    let slow = SimConfig {
        prefill_a_s: 0.04,
        decode_d0_s: 0.02,
        ..fast.clone()
    };
    let (a, b) = tokio::join!(rate_run(fast, "fast"), rate_run(slow, "slow"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("fast.json"), a.to_json().unwrap()).unwrap();
    std::fs::write(dir.path().join("slow.json"), b.to_json().unwrap()).unwrap();
    let server = FileServer::start(dist_dir(), dir.path().to_path_buf());
    let s = Session::start(&browser, (1400, 1800), &[]).await;
    open_runs(
        &s,
        &server.url("index.html?bundle=bundles/fast.json&bundle=bundles/slow.json"),
        2,
    )
    .await;
    let tabs = s
        .js("return [...document.querySelectorAll('[data-tab]')].map(t => t.dataset.tab)")
        .await;
    assert!(
        tabs.as_array().unwrap().iter().any(|t| t == "Rate"),
        "{tabs}"
    );
    // The run card counts the rate points and names a peak by its offered rate.
    let card = s
        .js("return document.querySelector('[data-testid=run]').innerText")
        .await;
    let card = card.as_str().unwrap();
    assert!(card.contains("2 rate points"), "{card}");
    assert!(
        card.contains(" req/s") && !card.contains("C=5000"),
        "{card}"
    );
    click_tab(&s, "Rate").await;
    let drawn = charts_drawn(&s, 5).await;
    let slugs: Vec<&str> = drawn.iter().map(|(slug, _)| slug.as_str()).collect();
    assert_eq!(slugs.len(), 5, "{slugs:?}");
    s.screenshot("rate-view").await;

    click_tab(&s, "Compare").await;
    s.wait(
        "the rate sweep's comparison",
        "document.querySelector('.sweep-compare[data-kind=rate]')",
        LOAD,
    )
    .await;
    let text = s
        .js("return document.querySelector('.sweep-compare[data-kind=rate]').innerText")
        .await;
    let text = text.as_str().unwrap();
    assert!(
        text.contains("offered 5 req/s") && text.contains("offered 20 req/s"),
        "{text}"
    );
    assert!(!text.contains("concurrency 5000"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_rate_search_is_named_on_its_card_and_ruled_on_the_goodput_chart() {
    let Some(browser) = Browser::find() else {
        return;
    };
    let _one = ONE_AT_A_TIME.lock().await;
    // One request at a time, 10 ms prefill + 7 steps of 5 ms: about 22 req/s at most.
    let cfg = SimConfig {
        max_running: 1,
        prefill_a_s: 0.01,
        prefill_b_s: 0.0,
        decode_d0_s: 0.005,
        decode_d1_s: 0.0,
        ..SimConfig::preset(Preset::Fast)
    };
    let flags = [
        "--find-max-rate",
        "--arrival",
        "constant",
        "--requests",
        "20",
        "--rate-precision",
        "0.1",
        "--input-len",
        "16",
    ];
    let b = throughput_run(cfg, "single", &flags).await;
    let rate = b.sweeps.iter().find(|s| s.kind == SweepKind::Rate).unwrap();
    let found = rate
        .rate
        .as_ref()
        .unwrap()
        .search
        .unwrap()
        .found_rps
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("single.json"), b.to_json().unwrap()).unwrap();
    let server = FileServer::start(dist_dir(), dir.path().to_path_buf());
    let s = Session::start(&browser, (1400, 1800), &[]).await;
    open_runs(&s, &server.url("index.html?bundle=bundles/single.json"), 1).await;
    let card = s
        .js("return document.querySelector('[data-testid=run]').innerText")
        .await;
    let card = card.as_str().unwrap();
    assert!(
        card.contains("max rate meeting the SLO (90 % of requests within TTFT ≤ 0.05 s)"),
        "{card}"
    );
    click_tab(&s, "Rate").await;
    charts_drawn(&s, 5).await;
    let rules = s
        .js("return document.querySelector('[data-chart=goodput-vs-rate] canvas').dataset.rules")
        .await;
    let want = format!(
        "max rate meeting the SLO {}",
        llmsweep_shared::charts::axis::format_exact(found)
    );
    assert_eq!(rules.as_str(), Some(want.as_str()));
    s.screenshot("rate-search").await;
}
