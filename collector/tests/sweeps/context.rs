//! The context sweep and `run` against the simulator: limits known before sending, skipped
//! points with their reason and prediction, the prefill fit against the simulator's true curve.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::sim::{assert_between, assert_close, sweep_command};
use llmsweep::sim::{Preset, SimConfig};
use llmsweep_shared::bundle::{ErrorKind, FlagKind, PointStatus, SweepKind};

/// kpro5's curve (a = 0.08 s, b ≈ 70 µs/token, c ≈ 1.6e-10 s/token²) with fast decoding and a
/// 4096-token context.
fn small_context() -> SimConfig {
    SimConfig {
        max_context: 4096,
        decode_d0_s: 0.004,
        decode_d1_s: 0.0005,
        ..SimConfig::preset(Preset::Kpro5)
    }
}

/// What a loaded 2-core machine adds to a simulated TTFT: the simulator's and the collector's
/// tasks waiting for a core between the first token's due time and its arrival (seen up to
/// 47 ms under CI load).
const OVERHEAD_S: f64 = 0.06;

/// `small_context` with a prefill slow enough (0.25 s at 512 tokens, 0.88 s at 2000) that a
/// loaded machine's scheduling delays, some milliseconds per request, stay a small part of
/// every TTFT; with kpro5's fast curve they bent the fitted b by 20 %.
fn slow_prefill() -> SimConfig {
    SimConfig {
        prefill_b_s: 300e-6,
        prefill_c_s: 5e-8,
        ..small_context()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lengths_beyond_the_context_are_skipped_with_reason_and_prediction() {
    let cfg = slow_prefill();
    let truth = cfg.clone();
    let s = sweep_command(
        cfg,
        "context",
        &["--lengths", "512,1k,2k,8k", "--output-len", "16"],
    )
    .await;
    let sw = &s.bundle.sweeps[0];
    assert_eq!(sw.kind, SweepKind::Context);
    assert_eq!(sw.repeats, Some(3));
    let status: Vec<PointStatus> = sw.points.iter().map(|p| p.status).collect();
    assert_eq!(
        status,
        [
            PointStatus::Ok,
            PointStatus::Ok,
            PointStatus::Ok,
            PointStatus::Skipped
        ]
    );
    let skipped = &sw.points[3];
    assert_eq!(
        skipped.reason.as_deref(),
        Some("needs 8016 tokens, server context is 4096")
    );
    assert!(
        skipped.requests.is_empty(),
        "nothing was sent for the skipped length"
    );
    // 1 warm-up + 3 lengths × 3 repeats.
    assert_eq!(s.stats.requests, 10);

    let mut last = 0.0;
    for p in &sw.points[..3] {
        let sum = p.summary.as_ref().unwrap();
        assert_eq!(sum.ok, 3);
        assert!(
            p.requests
                .iter()
                .all(|r| r.prompt_tokens == Some(p.input_len))
        );
        let ttft = sum.ttft_s.unwrap().p50;
        assert!(ttft > last, "TTFT rises with length");
        last = ttft;
        // Never faster than the simulator's truth; slower by at most what a loaded machine
        // adds in scheduling.
        let t = truth.prefill_s(p.input_len);
        assert_between(
            &format!("TTFT at {}", p.input_len),
            ttft,
            t - 0.002,
            t * 1.03 + OVERHEAD_S,
        );
        let len = p.input_len as f64;
        assert_between(
            "prefill tok/s",
            sum.prefill_tok_s.unwrap().p50,
            len / (t * 1.03 + OVERHEAD_S),
            len / (t - 0.002),
        );
    }
    // The fit leaves out a length measured while the client host was busy (a debug test
    // binary beside other tests can be): the lengths fitted are the others.
    let fitted: Vec<u64> = sw.points[..3]
        .iter()
        .filter(|p| !p.flags.iter().any(|f| f.kind == FlagKind::HostBusy))
        .map(|p| p.input_len)
        .collect();
    if fitted.len() < 3 {
        eprintln!("the fit left out a busy host's lengths, fitted {fitted:?}: not checked");
        return;
    }
    let fit = sw.prefill_fit.unwrap();
    assert_eq!((fit.samples, fit.min_len, fit.max_len), (9, 512, 2000));
    for len in [512, 1000, 2000] {
        let t = truth.prefill_s(len);
        assert_between(
            &format!("fit at {len}"),
            fit.predict_s(len),
            t - 0.010,
            t * 1.03 + OVERHEAD_S,
        );
    }
    assert_between(
        "a (s)",
        fit.a_s,
        truth.prefill_a_s - 0.02,
        truth.prefill_a_s + OVERHEAD_S,
    );
    // Over three lengths b and c trade off against each other; the slope in the middle of the
    // measured range is what the data pins down.
    let slope = |b: f64, c: f64| b + 2.0 * c * 1250.0;
    assert_close(
        "slope at 1250 tokens (s/token)",
        slope(fit.b_s_per_token, fit.c_s_per_token2),
        slope(truth.prefill_b_s, truth.prefill_c_s),
        0.0,
        0.12,
    );
    // Four times beyond the measured range, scheduling noise is amplified: a model's forecast.
    let predicted = skipped.predicted_ttft_s.unwrap();
    assert_close(
        "predicted TTFT at 8000",
        predicted,
        truth.prefill_s(8000),
        0.0,
        0.25,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_sends_it_anyway_and_records_the_server_error() {
    let s = sweep_command(
        small_context(),
        "context",
        &[
            "--lengths",
            "1k,8k",
            "--output-len",
            "8",
            "--repeats",
            "1",
            "--force",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[1];
    assert_eq!(p.status, PointStatus::Failed);
    let e = p.requests[0].error.as_ref().unwrap();
    assert_eq!((e.kind, e.status), (ErrorKind::Http, Some(400)));
    assert!(
        // kpro5 speaks as SGLang 0.5.11: its wording, counting NEXTN's 4 reserved slots.
        e.message.contains(
            "The input (8004 tokens) is longer than the model's context length (4096 tokens)."
        ),
        "{}",
        e.message
    );
    assert!(
        p.reason
            .as_deref()
            .unwrap()
            .contains("longer than the model's context length (4096 tokens)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_limit_fails_with_the_server_words_and_the_sweep_goes_on() {
    // The simulator always reports its context; a server that does not is the same as --force
    // from the collector's side. Here the point after the failing one still runs.
    let s = sweep_command(
        small_context(),
        "context",
        &[
            "--lengths",
            "8k,1k",
            "--output-len",
            "8",
            "--repeats",
            "1",
            "--force",
        ],
    )
    .await;
    let pts = &s.bundle.sweeps[0].points;
    assert_eq!(
        (pts[0].status, pts[1].status),
        (PointStatus::Failed, PointStatus::Ok)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_length_runs_at_each_concurrency() {
    let s = sweep_command(
        small_context(),
        "context",
        &[
            "--lengths",
            "256,512",
            "--concurrency",
            "1,2",
            "--output-len",
            "8",
            "--repeats",
            "2",
        ],
    )
    .await;
    let pts = &s.bundle.sweeps[0].points;
    let shape: Vec<(u64, u32, usize)> = pts
        .iter()
        .map(|p| (p.input_len, p.concurrency, p.requests.len()))
        .collect();
    assert_eq!(shape, [(256, 1, 2), (256, 2, 4), (512, 1, 2), (512, 2, 4)]);
    assert_eq!(
        s.bundle.sweeps[0].prefill_fit.unwrap().samples,
        4,
        "fitted at the lowest concurrency"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_puts_both_sweeps_in_one_bundle() {
    let s = sweep_command(
        small_context(),
        "run",
        &[
            "--concurrency",
            "1,2",
            "--input-len",
            "256",
            "--output-len",
            "8",
            "--lengths",
            "512,1k,8k",
            "--context-output-len",
            "8",
            "--context-repeats",
            "1",
        ],
    )
    .await;
    let kinds: Vec<SweepKind> = s.bundle.sweeps.iter().map(|w| w.kind).collect();
    assert_eq!(kinds, [SweepKind::Throughput, SweepKind::Context]);
    assert!(s.bundle.complete);
    assert!(s.outcome.path.to_string_lossy().contains("-run-"));
    let ctx = &s.bundle.sweeps[1];
    assert_eq!(ctx.points.last().unwrap().status, PointStatus::Skipped);
    assert!(ctx.points.last().unwrap().predicted_ttft_s.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decode_slows_as_the_context_grows_by_the_simulators_kv_cost() {
    // d0 = 4 ms and e = 2 µs per KV token: one stream's decode step at L prompt tokens and k
    // generated is 4 ms + 2 µs·(L + k), so over 16 tokens TPOT is about 4 ms + 2 µs·(L + 8):
    // 6.0 ms at 1000 tokens, 20.0 ms at 8000.
    let cfg = SimConfig {
        max_context: 16_384,
        prefill_a_s: 0.005,
        prefill_b_s: 1e-6,
        prefill_c_s: 0.0,
        decode_d0_s: 0.004,
        decode_d1_s: 0.0,
        decode_kv_s: 2e-6,
        // One token a step: the step's time is each token's.
        speculative_steps: None,
        ..SimConfig::preset(Preset::Kpro5)
    };
    let s = sweep_command(
        cfg,
        "context",
        &["--lengths", "1k,8k", "--output-len", "16", "--repeats", "2"],
    )
    .await;
    let tpot = |i: usize| {
        s.bundle.sweeps[0].points[i]
            .summary
            .as_ref()
            .unwrap()
            .tpot_s
            .unwrap()
            .p50
    };
    let want = |l: f64| 0.004 + 2e-6 * (l + 8.0);
    // Timer lateness (about 1 ms per token at most, never early) and a busy machine.
    assert_between(
        "TPOT at 1000 tokens",
        tpot(0),
        want(1000.0) - 1e-4,
        want(1000.0) + 0.0015,
    );
    assert_between(
        "TPOT at 8000 tokens",
        tpot(1),
        want(8000.0) - 1e-4,
        want(8000.0) + 0.0015,
    );
}

/// The demo's last level: 64 slots against a server that runs 32. Once precise it cuts what
/// waits in the queue and what it sent after its last judged cycle, but a batched prefill of
/// those already admitted runs its course on the server (the simulator, like an engine, cannot
/// take a step back): up to 31 × 30 ms. The context sweep after it starts once that step is
/// over, so its first request's TTFT is its own prefill (25 ms), not the cut cohort's (the demo's
/// first context request once waited 0.9 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_request_after_a_cut_level_does_not_wait_for_what_was_cut() {
    // The demo's curve: 20 ms + 20 µs/token + 2e-10 s/token², 30 ms at 512 tokens.
    let cfg = SimConfig {
        prefill_a_s: 0.020,
        prefill_b_s: 20e-6,
        prefill_c_s: 2e-10,
        ..SimConfig::preset(Preset::Fast)
    };
    let truth = cfg.clone();
    let s = sweep_command(
        cfg,
        "run",
        &[
            "--concurrency",
            "64",
            "--input-len",
            "512",
            "--output-len",
            "128",
            "--lengths",
            "256",
            "--context-output-len",
            "8",
            "--context-repeats",
            "2",
            "--warmup",
            "1",
        ],
    )
    .await;
    let level = &s.bundle.sweeps[0].points[0];
    let cut = level
        .requests
        .iter()
        .filter(|r| {
            r.error
                .as_ref()
                .is_some_and(|e| e.kind == ErrorKind::Cancelled)
        })
        .count();
    assert!(cut >= 32, "the precise level cut its queue, {cut} cut");
    let ctx = &s.bundle.sweeps[1].points[0];
    let first = ctx
        .requests
        .iter()
        .min_by(|a, b| a.start_s.total_cmp(&b.start_s))
        .unwrap();
    let t = truth.prefill_s(256);
    assert_between(
        "the first context request's TTFT",
        first.ttft_s.unwrap(),
        t - 0.002,
        t * 1.03 + OVERHEAD_S,
    );
    // The warm-up, the level's, one that waits out what the cut left, the context sweep's two.
    assert_eq!(s.stats.requests, 1 + level.requests.len() as u64 + 1 + 2);
}
