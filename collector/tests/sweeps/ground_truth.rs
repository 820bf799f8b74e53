//! The collector measures what the simulator did: TTFT, decode speed and throughput against the
//! simulator's own timing model, within stated tolerances (timer granularity is about 1 ms).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::sim::{assert_close, sweep};
use llmsweep::sim::{Preset, SimConfig};

/// Slow enough that 1–2 ms of timer and scheduling noise is a few percent.
fn instrument() -> SimConfig {
    SimConfig {
        prefill_a_s: 0.040,
        prefill_b_s: 40e-6,
        prefill_c_s: 0.0,
        decode_d0_s: 0.020,
        decode_d1_s: 0.004,
        max_running: 8,
        ..SimConfig::preset(Preset::Fast)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_stream_ttft_and_decode_match_the_model() {
    let cfg = instrument();
    let (ttft, tpot) = (cfg.prefill_s(500), cfg.step_s(1));
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1",
            "--input-len",
            "500",
            "--output-len",
            "20",
            "--requests",
            "4",
            "--warmup",
            "1",
        ],
    )
    .await;
    let sum = s.bundle.sweeps[0].points[0].summary.clone().unwrap();
    assert_close("TTFT p50 (s)", sum.ttft_s.unwrap().p50, ttft, 0.010, 0.10);
    assert_close("TPOT p50 (s)", sum.tpot_s.unwrap().p50, tpot, 0.001, 0.08);
    assert_close(
        "decode tok/s p50",
        sum.decode_tok_s.unwrap().p50,
        1.0 / tpot,
        0.0,
        0.08,
    );
    assert_close(
        "e2e p50 (s)",
        sum.e2e_s.unwrap().p50,
        ttft + 19.0 * tpot,
        0.015,
        0.08,
    );
    assert_close("ITL p50 (s)", sum.itl_s.unwrap().p50, tpot, 0.001, 0.10);
    // One stream: aggregate = 20 tokens per (ttft + 19 steps), steady = the same at C=1.
    assert_close(
        "agg tok/s",
        sum.agg_tok_s,
        20.0 / (ttft + 19.0 * tpot),
        0.0,
        0.10,
    );
    assert_close(
        "steady tok/s",
        sum.steady_tok_s.unwrap(),
        sum.agg_tok_s,
        0.0,
        1e-9,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batched_decode_matches_the_step_model() {
    // Prefill made negligible so decode steps dominate: with 4 running, each gets a token every
    // step_s(4), and the server produces 4 / step_s(4) tokens per second while all 4 are busy.
    let cfg = SimConfig {
        prefill_a_s: 0.001,
        prefill_b_s: 0.0,
        ..instrument()
    };
    let step = cfg.step_s(4);
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "4",
            "--input-len",
            "50",
            "--output-len",
            "40",
            "--requests",
            "16",
            "--warmup",
            "0",
        ],
    )
    .await;
    let sum = s.bundle.sweeps[0].points[0].summary.clone().unwrap();
    assert_close(
        "per-request decode tok/s p50",
        sum.decode_tok_s.unwrap().p50,
        1.0 / step,
        0.0,
        0.12,
    );
    assert_close(
        "steady tok/s",
        sum.steady_tok_s.unwrap(),
        4.0 / step,
        0.0,
        0.12,
    );
    assert!(
        sum.agg_tok_s <= sum.steady_tok_s.unwrap() * 1.02,
        "ramp and drain only lower the aggregate"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queueing_beyond_max_running_shows_in_ttft() {
    // 2 slots, 4 clients: half the requests wait a whole request's time for a slot.
    let cfg = SimConfig {
        max_running: 2,
        ..instrument()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "4",
            "--input-len",
            "100",
            "--output-len",
            "10",
            "--requests",
            "8",
            "--warmup",
            "0",
        ],
    )
    .await;
    let ttft = s.bundle.sweeps[0].points[0]
        .summary
        .clone()
        .unwrap()
        .ttft_s
        .unwrap();
    assert!(
        ttft.max > 3.0 * ttft.min,
        "queued requests wait: TTFT min {} max {}",
        ttft.min,
        ttft.max
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_passes_pool_to_the_model_rate_with_fresh_prompts() {
    // The batched-decode level above run in three passes: each pass is a full closed loop of 8
    // requests, every prompt is new, and the pooled steady rate is still 4 / step_s(4).
    let cfg = SimConfig {
        prefill_a_s: 0.001,
        prefill_b_s: 0.0,
        ..instrument()
    };
    let step = cfg.step_s(4);
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "4",
            "--input-len",
            "50",
            "--output-len",
            "40",
            "--requests",
            "8",
            "--repeats",
            "3",
            "--warmup",
            "0",
        ],
    )
    .await;
    let sw = &s.bundle.sweeps[0];
    assert_eq!(sw.repeats, Some(3));
    assert_eq!(sw.requests, Some(8), "requests per pass");
    let p = &sw.points[0];
    assert_eq!(p.requests.len(), 24);
    for pass in 0..3 {
        let n = p.requests.iter().filter(|r| r.repeat == Some(pass)).count();
        assert_eq!(n, 8, "pass {pass}");
    }
    let hashes: std::collections::HashSet<_> = p.requests.iter().map(|r| &r.prompt_hash).collect();
    assert_eq!(hashes.len(), 24, "no pass resends another's prompt");
    // Passes run one after another: each starts after the one before has ended.
    let span = |pass| {
        let rs: Vec<_> = p
            .requests
            .iter()
            .filter(|r| r.repeat == Some(pass))
            .collect();
        let lo = rs.iter().map(|r| r.start_s).fold(f64::INFINITY, f64::min);
        let hi = rs.iter().map(|r| r.start_s + r.e2e_s).fold(0.0, f64::max);
        (lo, hi)
    };
    assert!(span(1).0 >= span(0).1 && span(2).0 >= span(1).1);
    let sum = p.summary.clone().unwrap();
    assert_eq!(sum.requests, 24);
    assert_close(
        "pooled steady tok/s",
        sum.steady_tok_s.unwrap(),
        4.0 / step,
        0.0,
        0.12,
    );
    // The wall time is the three passes', not the pauses between them.
    let passes: f64 = (0..3).map(|k| span(k).1 - span(k).0).sum();
    assert_close("wall (s)", sum.wall_s, passes, 1e-9, 0.0);
}
