//! End to end against real inference engines on loopback: llama.cpp's `llama-server` and
//! llama-cpp-python's server, each serving a tiny GGUF model written by the test harness.
//! The engines really prefill and decode; the collector must count exactly what they did.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::engines::{self, Engine, EngineServer, ServerConfig};
use crate::common::sim::plan;
use clap::Parser;
use llmsweep::cli::{Cli, Command};
use llmsweep::load::Interrupt;
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{Calibration, ErrorKind, FlagKind, PointStatus};
use llmsweep_shared::metrics::degenerate_text;

async fn sweep(server: &EngineServer, args: &[&str]) -> Bundle {
    let dir = tempfile::tempdir().unwrap();
    let p = plan(server.url(), dir.path(), args);
    let outcome = match crate::common::sim::run_silently(&p, vec![], Interrupt::default()).await {
        Ok(o) => o,
        Err(e) => panic!("sweep failed: {e:#}\nserver log:\n{}", server.log_tail(40)),
    };
    Bundle::from_json(&std::fs::read_to_string(&outcome.path).unwrap()).unwrap()
}

/// Whether the level abandoned `r` once it had ended: the engine never finished it (llama-server
/// once left a request of a precise level unanswered, its connection open, and nothing of it
/// in its own log).
fn abandoned(r: &llmsweep_shared::bundle::RequestRecord) -> bool {
    r.error
        .as_ref()
        .is_some_and(|e| e.kind == ErrorKind::Timeout && e.message.starts_with("unfinished "))
}

/// Whether a precise level cut `r` at its end, as not needed (sent after the cycles the level was
/// judged on, or queued): not counted, and with what it received so far.
fn cut(r: &llmsweep_shared::bundle::RequestRecord) -> bool {
    r.error.as_ref().is_some_and(|e| {
        e.kind == ErrorKind::Cancelled && e.message.starts_with("cut at the level's end")
    })
}

/// Every request ok (or cut at its level's end, not counted), exactly `output` tokens, positive
/// and consistent timings.
fn assert_exact(b: &Bundle, output: u64) {
    assert_exact_but_lost(b, output, 0);
}

/// [`assert_exact`], but up to `lost` requests of each level may be ones the engine never
/// finished and the level abandoned, counted as failed (said as a NOTICE when it happens).
fn assert_exact_but_lost(b: &Bundle, output: u64, lost: usize) {
    for p in &b.sweeps[0].points {
        let gone = p.requests.iter().filter(|r| abandoned(r)).count();
        assert!(
            gone <= lost,
            "C={}: {gone} requests abandoned",
            p.concurrency
        );
        if gone > 0 {
            eprintln!(
                "NOTICE: C={}: the engine never finished {gone} request(s); the level abandoned them",
                p.concurrency
            );
        }
        assert_eq!(
            p.status,
            PointStatus::Ok,
            "C={} {:?}",
            p.concurrency,
            p.reason
        );
        let cuts = p.requests.iter().filter(|r| cut(r)).count();
        for r in p.requests.iter().filter(|r| !abandoned(r) && !cut(r)) {
            assert!(r.is_ok(), "C={}: {:?}", p.concurrency, r.error);
            assert_eq!(r.output_tokens, output, "C={}", p.concurrency);
            let ttft = r.ttft_s.unwrap();
            assert!(ttft > 0.0 && r.e2e_s > ttft, "ttft {ttft} e2e {}", r.e2e_s);
        }
        let s = p.summary.as_ref().unwrap();
        let ok = (p.requests.len() - gone - cuts) as u64;
        assert_eq!((s.ok, s.short, s.failed), (ok, 0, gone as u64));
        assert_eq!(s.output_tokens, ok * output);
        assert!(s.agg_tok_s > 0.0 && s.decode_tok_s.unwrap().p50 > 0.0);
        // A user's decode speed cannot exceed what the whole server delivered per slot busy.
        assert!(s.agg_tok_s <= s.decode_tok_s.unwrap().max * p.concurrency as f64 * 1.05);
        let failed_too = (gone == 0).then_some(FlagKind::Failed);
        for kind in [
            Some(FlagKind::Short),
            failed_too,
            Some(FlagKind::Overshoot),
            Some(FlagKind::InputLengthOff),
        ]
        .into_iter()
        .flatten()
        {
            assert!(
                !p.flags.iter().any(|f| f.kind == kind),
                "C={} flagged {kind:?}: {:?}",
                p.concurrency,
                p.flags
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_server_sweep_counts_exactly_what_the_engine_did() {
    let Some(server) = engines::start(Engine::LlamaServer) else {
        return;
    };
    let b = sweep(
        &server,
        &[
            "--concurrency",
            "1,2,4",
            "--input-len",
            "200",
            "--output-len",
            "32",
            // Each level runs until precise against a real engine, within a short cap.
            "--max-level-time",
            "15",
        ],
    )
    .await;
    assert_eq!(b.target.engine.as_deref(), Some("llama.cpp"));
    assert_eq!(
        b.target.max_context,
        Some(server.context_per_request() as u64)
    );
    assert_eq!(b.target.max_running_requests, Some(4));
    assert!(!b.target.simulated);
    assert_eq!(b.workload.calibration, Calibration::Tokenizer);
    // A request the engine never finishes is abandoned after the level's grace, not waited
    // for: it is the engine's, and is counted as failed.
    assert_exact_but_lost(&b, 32, 1);
    assert_eq!(b.sweeps[0].precision.map(|p| p.cap_s), Some(15.0));
    for p in &b.sweeps[0].points {
        // Precise, or flagged as stopped by the cap with the precision it reached.
        let pm = p.summary.as_ref().and_then(|s| s.steady_pm_pct);
        let capped = p.flags.iter().any(|f| f.kind == FlagKind::Capped);
        assert!(
            capped || pm.is_some_and(|pm| pm <= 2.0),
            "C={}: {pm:?}",
            p.concurrency
        );
    }
    // A request cut at its level's end may have ended before the engine's usage came.
    let counted = b.sweeps[0].points.iter().flat_map(|p| &p.requests);
    for r in counted.filter(|r| !cut(r)) {
        // Calibrated with /tokenize, corrected for the BOS token the server adds.
        assert_eq!(r.prompt_tokens, Some(200));
        assert!(!r.tokens_estimated);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_server_serves_a_shared_prefix_from_its_cache_and_a_rate_sweep_end_to_end() {
    // One slot, so every prompt lands where the previous one left its KV cache.
    let config = ServerConfig {
        parallel: 1,
        ctx_size: 1024,
        ..ServerConfig::default()
    };
    let Some(server) = engines::start_with(Engine::LlamaServer, &config) else {
        return;
    };
    let b = sweep(
        &server,
        &[
            "--concurrency",
            "1",
            "--requests",
            "4",
            "--input-len",
            "200",
            "--output-len",
            "8",
            "--shared-prefix-len",
            "100",
        ],
    )
    .await;
    assert_eq!(b.workload.shared_prefix_len, 100);
    assert_exact(&b, 8);
    let p = &b.sweeps[0].points[0];
    // The warm-up already left the shared prefix in the slot: every request finds its 100
    // tokens (and the BOS before them) cached, and hardly anything of its own part (a token
    // or two may match by chance where the random words begin).
    for r in &p.requests {
        let cached = r.cached_tokens.expect("llama-server reports cached tokens");
        assert!((100..=104).contains(&cached), "cached {cached}");
    }
    assert!(
        !p.flags.iter().any(|f| f.kind == FlagKind::PrefixCache),
        "{:?}",
        p.flags
    );

    // Open loop against the real engine: 6 arrivals at 4 per second.
    let b = sweep(
        &server,
        &[
            "--rates",
            "4",
            "--arrival",
            "constant",
            "--requests",
            "6",
            "--input-len",
            "64",
            "--output-len",
            "8",
        ],
    )
    .await;
    let sw = &b.sweeps[0];
    assert_eq!(sw.kind, llmsweep_shared::bundle::SweepKind::Rate);
    let p = &sw.points[0];
    assert_eq!(p.requests.len(), 6);
    assert!(p.requests.iter().all(|r| r.is_ok() && r.output_tokens == 8));
    let r = p.rate.expect("rate numbers");
    assert!(r.lag_s.unwrap().p99 < 0.05, "{r:?}");
    // Constant arrivals 250 ms apart: the sends span 1.25 s.
    assert!((r.achieved_rps.unwrap() - 4.0).abs() < 0.4, "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_server_chat_prompts_count_the_template() {
    let Some(server) = engines::start(Engine::LlamaServer) else {
        return;
    };
    let b = sweep(
        &server,
        &[
            "--api",
            "chat",
            "--concurrency",
            "2",
            "--requests",
            "8",
            "--input-len",
            "150",
            "--output-len",
            "16",
        ],
    )
    .await;
    assert_exact(&b, 16);
    for r in &b.sweeps[0].points[0].requests {
        assert_eq!(
            r.prompt_tokens,
            Some(150),
            "the chat template's tokens are learned in warm-up"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_cpp_python_without_usage_counts_chunks() {
    let Some(server) = engines::start(Engine::LlamaCppPython) else {
        return;
    };
    let b = sweep(
        &server,
        &[
            "--concurrency",
            "1,2",
            "--input-len",
            "200",
            "--output-len",
            "32",
            "--requests",
            "4",
        ],
    )
    .await;
    assert_eq!(b.target.engine.as_deref(), Some("llama-cpp-python"));
    assert_eq!(b.workload.calibration, Calibration::Tokenizer);
    assert_exact(&b, 32);
    for p in &b.sweeps[0].points {
        assert!(
            p.flags.iter().any(|f| f.kind == FlagKind::TokensEstimated),
            "{:?}",
            p.flags
        );
        assert!(
            p.requests
                .iter()
                .all(|r| r.tokens_estimated && r.prompt_tokens.is_none())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_cpp_python_cutting_off_a_stream_is_a_failure_with_advice() {
    // Its default: a new request ends the stream in progress with [DONE] and no finish_reason.
    let config = ServerConfig {
        extra_args: vec!["--interrupt_requests".into(), "True".into()],
        ..ServerConfig::default()
    };
    let Some(server) = engines::start_with(Engine::LlamaCppPython, &config) else {
        return;
    };
    let b = sweep(
        &server,
        &[
            "--concurrency",
            "2",
            "--input-len",
            "200",
            "--output-len",
            "32",
            "--requests",
            "4",
        ],
    )
    .await;
    let p = &b.sweeps[0].points[0];
    let cut: Vec<_> = p
        .requests
        .iter()
        .filter_map(|r| r.error.as_ref())
        .filter(|e| e.kind == ErrorKind::EndedEarly)
        .collect();
    assert!(!cut.is_empty(), "{:?}", p.requests);
    assert!(
        cut[0].message.contains("--interrupt_requests False"),
        "{}",
        cut[0].message
    );
    let s = p.summary.as_ref().unwrap();
    assert_eq!(s.failed, cut.len() as u64);
    assert_eq!(s.short, 0, "a cut stream is not an early stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_server_context_sweep_knows_the_slot_context_and_samples_its_metrics() {
    // 4096 tokens over 4 slots: 1024 per request.
    let Some(server) = engines::start(Engine::LlamaServer) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_string_lossy().to_string();
    let url = server.url().to_string();
    let args = [
        "llmsweep",
        "run",
        "--url",
        &url,
        "--out",
        &out,
        "--label",
        "tiny",
        "--concurrency",
        "1,4",
        "--input-len",
        "128",
        "--output-len",
        "64",
        "--requests",
        "16",
        "--lengths",
        "128,256,512,2k",
        "--context-output-len",
        "16",
        "--context-repeats",
        "2",
    ];
    let Command::Run(a) = Cli::try_parse_from(args).unwrap().command else {
        panic!()
    };
    let plan = a.plan().unwrap();
    let outcome = match crate::common::sim::run_silently(&plan, vec![], Interrupt::default()).await
    {
        Ok(o) => o,
        Err(e) => panic!("run failed: {e:#}\nserver log:\n{}", server.log_tail(40)),
    };
    let b = Bundle::from_json(&std::fs::read_to_string(&outcome.path).unwrap()).unwrap();
    let ctx = &b.sweeps[1];
    let status: Vec<PointStatus> = ctx.points.iter().map(|p| p.status).collect();
    assert_eq!(
        status,
        [
            PointStatus::Ok,
            PointStatus::Ok,
            PointStatus::Ok,
            PointStatus::Skipped
        ]
    );
    // A tiny model's TTFTs are milliseconds of CPU noise: the fit's prediction at 2000 tokens
    // is given when it is physical (no shorter than the longest prompt measured), else refused
    // with the reason.
    let skipped = &ctx.points[3];
    let reason = skipped.reason.as_deref().unwrap();
    let longest_ttft = ctx.points[2]
        .requests
        .iter()
        .filter_map(|r| r.ttft_s)
        .fold(0.0, f64::max);
    match skipped.predicted_ttft_s {
        Some(t) => {
            assert_eq!(reason, "needs 2016 tokens, server context is 1024");
            assert!(
                t >= ctx.points[2]
                    .requests
                    .iter()
                    .filter_map(|r| r.ttft_s)
                    .fold(f64::INFINITY, f64::min),
                "{t} vs {longest_ttft}"
            );
        }
        None => assert!(
            reason.starts_with(
                "needs 2016 tokens, server context is 1024; no prediction: the prefill fit gives "
            ),
            "{reason}"
        ),
    }
    for p in &ctx.points[..3] {
        for r in &p.requests {
            assert_eq!(
                r.prompt_tokens,
                Some(p.input_len),
                "calibrated with the server's /tokenize"
            );
            assert_eq!(r.output_tokens, 16);
        }
    }
    assert!(ctx.prefill_fit.is_some());
    // Telemetry from llama-server's own /metrics, in every measured point of both sweeps.
    for p in b
        .sweeps
        .iter()
        .flat_map(|s| &s.points)
        .filter(|p| p.status == PointStatus::Ok)
    {
        let t = p.server_samples.as_ref().expect("llamacpp metrics sampled");
        assert_eq!(t.scheme, llmsweep_shared::bundle::MetricScheme::Llamacpp);
        assert!(t.gauges.contains_key("llamacpp:requests_processing"));
        let predicted = t.counters_after["llamacpp:tokens_predicted_total"]
            - t.counters_before["llamacpp:tokens_predicted_total"];
        let asked = p.summary.as_ref().unwrap().output_tokens as f64;
        assert_eq!(
            predicted, asked,
            "C={} L={}: the server's count is the collector's",
            p.concurrency, p.input_len
        );
        assert!(
            !p.flags.iter().any(|f| f.kind == FlagKind::PrefixCache),
            "{:?}",
            p.flags
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_english_from_a_trained_model_is_not_called_degenerate() {
    // Gemma 3 270M (real trained weights) continuing plain English sentences, greedy: the
    // degenerate-output check must stay quiet on what a real model writes as prose.
    let Some(model) = engines::gemma_model() else {
        return;
    };
    let config = ServerConfig {
        model: Some(model),
        ctx_size: 1024,
        parallel: 1,
        ..ServerConfig::default()
    };
    let Some(server) = engines::start_with(Engine::LlamaServer, &config) else {
        return;
    };
    let http = reqwest::Client::new();
    for prompt in [
        "The history of the city of Paris begins",
        "A good way to learn a new language is",
    ] {
        let body = serde_json::json!({ "prompt": prompt, "max_tokens": 40, "temperature": 0 });
        let resp = http
            .post(format!("{}/v1/completions", server.url()))
            .json(&body)
            .timeout(std::time::Duration::from_secs(120))
            .send()
            .await
            .unwrap();
        let v: serde_json::Value = resp.json().await.unwrap();
        let text = v["choices"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            text.split_whitespace().count() >= 15,
            "{prompt:?} → {text:?}\n{}",
            server.log_tail(20)
        );
        assert_eq!(degenerate_text(&text), None, "{prompt:?} → {text:?}");
    }
}
