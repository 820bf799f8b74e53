//! The throughput sweep against the simulator: exact counts, flags, failures, interruption and
//! bad input. Timing accuracy is in `ground_truth.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use crate::common::sim::{plan, sweep, sweep_interrupted, sweep_with};
use llmsweep::load::Interrupt;
use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::bundle::{Calibration, ErrorKind, FlagKind, PointStatus, SweepKind};
use llmsweep_shared::curves::Metric;

fn fast() -> SimConfig {
    SimConfig::preset(Preset::Fast)
}

fn kinds(p: &llmsweep_shared::bundle::Point) -> Vec<FlagKind> {
    p.flags.iter().map(|f| f.kind).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_gets_exactly_the_asked_tokens() {
    let s = sweep(
        fast(),
        &[
            "--concurrency",
            "1,4",
            "--requests",
            "8",
            "--input-len",
            "300",
            "--output-len",
            "24",
        ],
    )
    .await;
    let b = &s.bundle;
    assert!(b.complete && !s.outcome.interrupted);
    assert!(b.target.simulated, "the simulator is labelled as such");
    assert_eq!(b.target.max_context, Some(32768));
    assert_eq!(b.workload.calibration, Calibration::Tokenizer);
    assert_eq!(b.sweeps.len(), 1);
    let sw = &b.sweeps[0];
    assert_eq!(sw.kind, SweepKind::Throughput);
    assert_eq!(
        sw.points.iter().map(|p| p.concurrency).collect::<Vec<_>>(),
        [1, 4]
    );
    for p in &sw.points {
        assert_eq!(p.status, PointStatus::Ok);
        assert!(p.flags.is_empty(), "unexpected flags {:?}", p.flags);
        assert_eq!(p.requests.len(), 8, "--requests 8");
        for r in &p.requests {
            assert!(r.is_ok(), "{:?}", r.error);
            assert_eq!(r.output_tokens, 24);
            assert_eq!(
                r.prompt_tokens,
                Some(300),
                "prompt calibrated with /tokenize"
            );
            assert_eq!(r.input_tokens, 300);
            assert_eq!(r.finish_reason.as_deref(), Some("length"));
            assert!(!r.tokens_estimated);
            assert_eq!(r.chunks, 24);
            assert!(r.ttft_s.unwrap() > 0.0 && r.e2e_s > r.ttft_s.unwrap());
        }
        let sum = p.summary.as_ref().unwrap();
        assert_eq!((sum.ok, sum.failed, sum.short), (8, 0, 0));
        assert_eq!((sum.output_tokens, sum.output_tokens_asked), (192, 192));
        assert!(p.output_sample.as_ref().is_some_and(|t| !t.is_empty()));
    }
    // 2 warm-up requests + 16 measured, and nothing else generated.
    assert_eq!(s.stats.requests, 18);
    let hashes: std::collections::HashSet<_> = sw
        .points
        .iter()
        .flat_map(|p| &p.requests)
        .map(|r| r.prompt_hash.clone())
        .collect();
    assert_eq!(hashes.len(), 16, "every prompt is unique");
    assert_eq!(b.workload.seed, 7);
    assert_eq!(b.workload.prompt_digest.len(), 64);
}

/// The engine prints nothing: it tells a watcher what happens, in order. A two-level sweep of
/// 3 requests a level is the target, the sweep, then per level its requests and its row (the
/// time left is told only from 20 s on), then the headline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_tells_its_run_as_events_in_order() {
    use llmsweep::load::Recorded;
    let s = sweep(
        fast(),
        &[
            "--concurrency",
            "1,2",
            "--requests",
            "3",
            "--input-len",
            "64",
            "--output-len",
            "8",
        ],
    )
    .await;
    let level = |c: u32| {
        let mut v = vec![Recorded::Sending(format!("C={c}"), Some(3))];
        v.extend(std::iter::repeat_n(Recorded::Finished(true), 3));
        v.extend([
            Recorded::Sent,
            Recorded::Point(SweepKind::Throughput, c, 64),
        ]);
        v
    };
    let mut want = vec![
        Recorded::Target("sim".into()),
        Recorded::SweepStarted(SweepKind::Throughput),
    ];
    want.extend(level(1));
    want.extend(level(2));
    // Notes depend on the host (whether it has nvidia-smi): the rest is exact.
    let got: Vec<Recorded> = s
        .events
        .iter()
        .filter(|e| !matches!(e, Recorded::Note(_)))
        .cloned()
        .collect();
    assert_eq!(&got[..want.len()], &want[..], "{got:#?}");
    assert!(
        matches!(got.last(), Some(Recorded::Headline(h)) if h.contains("tok/s")),
        "{got:#?}"
    );
    assert_eq!(got.len(), want.len() + 1, "{got:#?}");
}

/// Ground truth: the simulator holds one request's stream for 1.5 s after its 5th token; the
/// level is flagged `stall`, with the one request and its longest gap, and nothing else is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_stops_between_two_tokens_is_a_stall() {
    let cfg = SimConfig {
        // The 4th generation request: the 2nd measured one, after the 2 warm-ups.
        stall: Some(llmsweep::sim::Stall {
            request: 4,
            after: 5,
            seconds: 1.5,
        }),
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1",
            "--requests",
            "4",
            "--input-len",
            "64",
            "--output-len",
            "20",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    // A debug test binary beside other tests can find its own host busy; that flag is not
    // this test's.
    let flagged: Vec<FlagKind> = kinds(p)
        .into_iter()
        .filter(|&k| k != FlagKind::HostBusy)
        .collect();
    assert_eq!(flagged, [FlagKind::Stall], "{:?}", p.flags);
    let stall = p.flags.iter().find(|f| f.kind == FlagKind::Stall).unwrap();
    assert_eq!(stall.count, Some(1));
    assert!(
        stall
            .message
            .starts_with("1 of 4 requests stalled: up to 1.5"),
        "{}",
        stall.message
    );
    let longest = p
        .requests
        .iter()
        .filter_map(|r| Some(r.itl?.max_s))
        .fold(0.0, f64::max);
    assert!((1.5..1.7).contains(&longest), "{longest}");
}

/// Ground truth: the simulator never finishes one request of a precise level (it holds its
/// stream for an hour). Once the level is precise it waits a grace for what is running — 10 s
/// here, three times its slowest request being less — and then abandons the lost request as
/// failed, in its own words, instead of waiting out the 600 s `--timeout`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_server_never_finishes_is_abandoned_after_the_levels_grace() {
    let cfg = SimConfig {
        stall: Some(llmsweep::sim::Stall {
            request: 12,
            after: 3,
            seconds: 3600.0,
        }),
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "4",
            "--input-len",
            "64",
            "--output-len",
            "40",
            "--timeout",
            "600",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    // What was sent after the cycles the level was judged on is cut, not lost.
    let lost: Vec<_> = p
        .requests
        .iter()
        .filter(|r| !r.is_ok() && r.error.as_ref().unwrap().kind != ErrorKind::Cancelled)
        .collect();
    assert_eq!(lost.len(), 1, "{lost:?}");
    let e = lost[0].error.as_ref().unwrap();
    assert_eq!(e.kind, ErrorKind::Timeout);
    assert!(
        e.message
            .starts_with("unfinished 10 s after its level ended (3× the level's slowest request"),
        "{}",
        e.message
    );
    assert!(
        e.message.ends_with("abandoned and counted as failed"),
        "{}",
        e.message
    );
    let sum = p.summary.as_ref().unwrap();
    assert_eq!(sum.failed, 1);
    assert!(
        sum.steady_pm_pct.is_some_and(|pm| pm <= 2.0),
        "{:?}",
        sum.steady_pm_pct
    );
    // The level ends a grace after its last counted request, not at the request's timeout.
    let last_end = p
        .requests
        .iter()
        .filter(|r| r.is_ok())
        .map(|r| r.start_s + r.e2e_s)
        .fold(0.0, f64::max);
    let abandoned_at = lost[0].start_s + lost[0].e2e_s;
    assert!(
        (9.5..13.0).contains(&(abandoned_at - last_end)),
        "abandoned {abandoned_at} s, last finished {last_end} s"
    );
}

/// A level asked for fewer requests than it has slots is said to never fill them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fewer_requests_than_slots_is_said() {
    use llmsweep::load::Recorded;
    let s = sweep(
        fast(),
        &["--concurrency", "4", "--requests", "2", "--output-len", "4"],
    )
    .await;
    let note =
        "C=4: --requests 2 is fewer than 4 slots, so the level never has 4 requests in flight";
    assert!(
        s.events.contains(&Recorded::Note(note.into())),
        "{:#?}",
        s.events
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_api_ignores_the_role_chunk_and_counts_exactly() {
    let s = sweep(
        fast(),
        &[
            "--api",
            "chat",
            "--concurrency",
            "2",
            "--input-len",
            "100",
            "--output-len",
            "10",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert!(p.flags.is_empty(), "{:?}", p.flags);
    // Every request counted; one cut at the level's end has what it received.
    for r in p.requests.iter().filter(|r| r.is_ok()) {
        assert_eq!(
            (r.output_tokens, r.chunks, r.prompt_tokens),
            (10, 10, Some(100))
        );
    }
    assert!(p.requests.iter().filter(|r| r.is_ok()).count() >= 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reasoning_model_answers_after_its_reasoning_and_ttft_counts_the_reasoning() {
    // One request at a time: TTFT is the 50 ms prefill; the first 6 of 16 tokens are
    // reasoning, 20 ms apart, so the first answer token comes 6 steps (120 ms) after it.
    let cfg = SimConfig {
        reasoning_tokens: 6,
        prefill_a_s: 0.05,
        prefill_b_s: 0.0,
        decode_d0_s: 0.02,
        decode_d1_s: 0.0,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--api",
            "chat",
            "--concurrency",
            "1",
            "--requests",
            "3",
            "--input-len",
            "32",
            "--output-len",
            "16",
            "--warmup",
            "0",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    for r in &p.requests {
        let x = r.reasoning.expect("a reasoning record");
        assert_eq!((x.chunks, x.tokens, r.output_tokens), (6, Some(6), 16));
        let ttft = r.ttft_s.unwrap();
        let after = x.first_answer_s.unwrap() - ttft;
        assert!((ttft - 0.05).abs() < 0.02, "TTFT {ttft}");
        assert!(
            (after - 0.12).abs() < 0.02,
            "first answer {after} s after TTFT"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn early_stop_is_flagged_short() {
    let cfg = SimConfig {
        early_stop_after: Some(5),
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "2",
            "--requests",
            "8",
            "--input-len",
            "50",
            "--output-len",
            "20",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert_eq!(kinds(p), [FlagKind::Short]);
    assert_eq!(p.flags[0].count, Some(8));
    assert!(
        p.flags[0].message.contains("fewest: 5"),
        "{}",
        p.flags[0].message
    );
    let sum = p.summary.as_ref().unwrap();
    assert_eq!(
        (sum.short, sum.output_tokens, sum.output_tokens_asked),
        (8, 40, 160)
    );
    assert!(
        p.requests
            .iter()
            .all(|r| r.finish_reason.as_deref() == Some("stop"))
    );
}

/// An engine's error event after streaming began (SGLang's and vLLM's shapes, each followed by
/// `[DONE]`) fails the request with the server's own words, whichever engine sent it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_event_mid_stream_fails_the_request_with_the_servers_words() {
    for engine in [
        llmsweep::sim::Personality::Sglang,
        llmsweep::sim::Personality::Vllm,
    ] {
        let cfg = SimConfig {
            error_after: Some(3),
            engine,
            ..fast()
        };
        let s = sweep(
            cfg,
            &[
                "--concurrency",
                "2",
                "--requests",
                "4",
                "--input-len",
                "50",
                "--output-len",
                "20",
            ],
        )
        .await;
        let p = &s.bundle.sweeps[0].points[0];
        assert_eq!(p.status, PointStatus::Failed, "{engine:?}");
        let sum = p.summary.as_ref().unwrap();
        assert_eq!((sum.ok, sum.failed), (0, 4), "{engine:?}");
        for r in &p.requests {
            let e = r.error.as_ref().unwrap();
            assert_eq!(
                (e.kind, e.message.as_str()),
                (ErrorKind::Stream, "simulated failure after 3 token chunks"),
                "{engine:?}"
            );
            assert!(
                r.output_tokens > 0,
                "{engine:?}: the tokens before it are kept"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_before_its_end_is_a_failure_not_an_early_stop() {
    let cfg = SimConfig {
        cut_after: Some(5),
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "2",
            "--requests",
            "8",
            "--input-len",
            "50",
            "--output-len",
            "20",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert_eq!(p.status, PointStatus::Failed);
    let sum = p.summary.as_ref().unwrap();
    assert_eq!((sum.ok, sum.failed, sum.short), (0, 8, 0));
    for r in &p.requests {
        let e = r.error.as_ref().unwrap();
        assert_eq!(e.kind, ErrorKind::EndedEarly);
        assert_eq!(
            e.message,
            "the stream ended early: the connection closed after 5 token chunks without [DONE], a finish_reason or usage"
        );
    }
    assert!(
        p.reason
            .as_deref()
            .unwrap()
            .contains("the stream ended early"),
        "{:?}",
        p.reason
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_html_page_instead_of_a_stream_is_called_one() {
    let cfg = SimConfig {
        html_answers: true,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1",
            "--input-len",
            "20",
            "--output-len",
            "4",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert_eq!(p.status, PointStatus::Failed);
    let e = p.requests[0].error.as_ref().unwrap();
    assert_eq!(e.kind, ErrorKind::Protocol);
    assert!(
        e.message.starts_with("the server answered with an HTML page (\"Sign in\"), not the API's JSON: is this the server's API address?"),
        "{}",
        e.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overshoot_and_cache_hits_and_repeats_are_flagged() {
    let cfg = SimConfig {
        overshoot: 3,
        cached_tokens: 200,
        repeat_word: Some("lambda".into()),
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1",
            "--input-len",
            "400",
            "--output-len",
            "16",
            "--requests",
            "3",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert_eq!(
        kinds(p),
        [
            FlagKind::Overshoot,
            FlagKind::PrefixCache,
            FlagKind::Degenerate
        ]
    );
    assert!(
        p.requests
            .iter()
            .all(|r| r.output_tokens == 19 && r.cached_tokens == Some(200))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_first_level_is_recorded_failed_with_the_server_words_and_ends_the_sweep() {
    let cfg = SimConfig {
        reject_all: Some(503),
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1,2",
            "--requests",
            "8",
            "--input-len",
            "20",
            "--output-len",
            "4",
        ],
    )
    .await;
    // C=2 would be refused the same way: the first level refused whole ends the sweep (a level
    // refused after one that succeeded does not: `hostile`).
    let pts = &s.bundle.sweeps[0].points;
    assert_eq!(pts.len(), 1, "the sweep stopped after its first level");
    assert!(!s.bundle.complete);
    for p in pts {
        assert_eq!(p.status, PointStatus::Failed);
        let reason = p.reason.as_deref().unwrap();
        assert!(
            reason.starts_with("all 8 requests failed") && reason.contains("HTTP 503"),
            "{reason}"
        );
        let e = p.requests[0].error.as_ref().unwrap();
        assert_eq!((e.kind, e.status), (ErrorKind::Http, Some(503)));
    }
    assert_eq!(s.outcome.points_ok, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn some_failures_are_counted_not_averaged() {
    let cfg = SimConfig {
        fail_every: Some(4),
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "2",
            "--requests",
            "8",
            "--input-len",
            "20",
            "--output-len",
            "4",
            "--warmup",
            "0",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    let sum = p.summary.as_ref().unwrap();
    assert_eq!((sum.ok, sum.failed), (6, 2));
    assert_eq!(sum.output_tokens, 24);
    assert_eq!(kinds(p), [FlagKind::Failed]);
    assert!(
        p.flags[0].message.contains("simulated internal error"),
        "{}",
        p.flags[0].message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_usage_tokens_are_counted_from_chunks_and_flagged() {
    let cfg = SimConfig {
        no_usage: true,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1",
            "--input-len",
            "50",
            "--output-len",
            "12",
            "--requests",
            "2",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert_eq!(kinds(p), [FlagKind::TokensEstimated]);
    for r in &p.requests {
        assert_eq!(
            (r.output_tokens, r.tokens_estimated, r.prompt_tokens),
            (12, true, None)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_token_chunks_count_every_token() {
    let cfg = SimConfig {
        tokens_per_chunk: 4,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1",
            "--input-len",
            "50",
            "--output-len",
            "17",
            "--requests",
            "2",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert!(p.flags.is_empty(), "{:?}", p.flags);
    assert!(
        p.requests
            .iter()
            .all(|r| r.output_tokens == 17 && r.chunks < 17)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_tokenize_lengths_are_corrected_from_usage() {
    let cfg = SimConfig {
        no_tokenize: true,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1",
            "--input-len",
            "200",
            "--output-len",
            "4",
            "--requests",
            "2",
        ],
    )
    .await;
    assert_eq!(s.bundle.workload.calibration, Calibration::Usage);
    for r in &s.bundle.sweeps[0].points[0].requests {
        assert_eq!(r.prompt_tokens, Some(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duration_bounds_a_level_in_time() {
    let s = sweep(
        fast(),
        &[
            "--concurrency",
            "2",
            "--input-len",
            "20",
            "--output-len",
            "8",
            "--duration",
            "0.5",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert!(
        p.requests.len() > 4,
        "{} requests in 0.5 s",
        p.requests.len()
    );
    let last_start = p.requests.iter().map(|r| r.start_s).fold(0.0, f64::max);
    assert!(
        last_start < 0.5 + 0.05,
        "no request starts after the deadline ({last_start})"
    );
    assert_eq!(s.bundle.sweeps[0].duration_s, Some(0.5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupted_run_leaves_a_valid_incomplete_bundle() {
    // Slow enough that the interrupt lands in the middle of the first level.
    let cfg = SimConfig {
        decode_d0_s: 0.02,
        ..fast()
    };
    let s = sweep_interrupted(
        Duration::from_millis(1500),
        false,
        cfg,
        &[
            "--concurrency",
            "1,2",
            "--input-len",
            "20",
            "--output-len",
            "40",
            "--requests",
            "50",
            "--warmup",
            "0",
        ],
    )
    .await;
    assert!(s.outcome.interrupted);
    assert!(!s.bundle.complete);
    let pts = &s.bundle.sweeps[0].points;
    assert_eq!(pts.len(), 1, "the second level never started");
    assert!(kinds(&pts[0]).contains(&FlagKind::Interrupted));
    let n = pts[0].requests.len();
    assert!((1..50).contains(&n), "{n} requests recorded");
    assert!(
        pts[0].requests.iter().all(|r| r.is_ok()),
        "in-flight requests finished within the grace period"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborted_requests_are_recorded_as_cancelled() {
    let cfg = SimConfig {
        decode_d0_s: 0.05,
        ..fast()
    };
    let s = sweep_interrupted(
        Duration::from_millis(800),
        true,
        cfg,
        &[
            "--concurrency",
            "2",
            "--input-len",
            "20",
            "--output-len",
            "100",
            "--warmup",
            "0",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert_eq!(p.requests.len(), 2);
    for r in &p.requests {
        assert_eq!(r.error.as_ref().unwrap().kind, ErrorKind::Cancelled);
        assert!(r.output_tokens > 0 && r.output_tokens < 100);
    }
    // Aborted requests are kept, but they are not the server's failures.
    assert_eq!(p.status, PointStatus::Failed);
    assert_eq!(
        p.reason.as_deref(),
        Some("interrupted before any request finished")
    );
    assert_eq!(p.summary.as_ref().unwrap().requests, 0);
    assert!(!kinds(p).contains(&FlagKind::Failed));
}

/// A throughput sweep whose requests cannot fit the server's context is refused before any
/// request is sent, warm-up included, with the longest input length that fits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_beyond_the_servers_context_is_refused_before_sending() {
    let sim = SimServer::start(fast(), 0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = plan(
        &sim.url(),
        dir.path(),
        &["--input-len", "200000", "--output-len", "500"],
    );
    let err = crate::common::sim::run_silently(&p, vec![], Interrupt::default())
        .await
        .unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        "--input-len 200000 and --output-len 500 need 200500 tokens of context; the server's is 32768: use an --input-len of at most 32268"
    );
    // An output that fills the context alone: no input would fit, and the advice says so.
    for (args, want) in [
        (
            vec!["--shapes", "1x1000000000"],
            "--shapes 1x1000000000 asks for as many output tokens as the server's whole context of 32768, or more: no prompt fits beside them; give an output well below 32768, e.g. --shapes 16384x8192",
        ),
        (
            vec!["--input-len", "10", "--output-len", "40000"],
            "--output-len 40000 asks for as many output tokens as the server's whole context of 32768, or more: no prompt fits beside them; give an output well below 32768, e.g. --output-len 8192",
        ),
    ] {
        let p = plan(&sim.url(), dir.path(), &args);
        let err = crate::common::sim::run_silently(&p, vec![], Interrupt::default())
            .await
            .unwrap_err();
        assert_eq!(format!("{err:#}"), want);
    }
    assert_eq!(sim.stats().requests, 0);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_model_lists_the_served_ones() {
    let sim = SimServer::start(fast(), 0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = plan(&sim.url(), dir.path(), &["--model", "gpt-9"]);
    let err = crate::common::sim::run_silently(&p, vec![], Interrupt::default())
        .await
        .unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("\"gpt-9\"") && msg.contains("sim-fast") && msg.contains("--model"),
        "{msg}"
    );
    assert_eq!(sim.stats().requests, 0);
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_url_is_named_within_seconds() {
    // A port that was just free: nothing listens on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let p = plan(&url, dir.path(), &[]);
    let t = std::time::Instant::now();
    let err = crate::common::sim::run_silently(&p, vec![], Interrupt::default())
        .await
        .unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains(&url) && msg.contains("cannot reach"), "{msg}");
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unwritable_out_dir_fails_before_any_request() {
    let sim = SimServer::start(fast(), 0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let p = plan(&sim.url(), &file.join("results"), &[]);
    let err = crate::common::sim::run_silently(&p, vec![], Interrupt::default())
        .await
        .unwrap_err();
    assert!(format!("{err:#}").contains("--out"), "{err:#}");
    assert_eq!(sim.stats().requests, 0, "no request was sent");
    sim.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cache_hits_seen_only_in_the_server_counters_are_flagged() {
    // No usage in the stream, so only /metrics can tell that prompts were served from cache.
    let cfg = SimConfig {
        cached_tokens: 300,
        no_usage: true,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "2",
            "--requests",
            "8",
            "--input-len",
            "400",
            "--output-len",
            "8",
            "--warmup",
            "0",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    let cache = p
        .flags
        .iter()
        .find(|f| f.kind == FlagKind::PrefixCache)
        .expect("flagged");
    assert!(
        cache
            .message
            .contains("vllm:prefix_cache_hits_total rose by 2400"),
        "{}",
        cache.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_telemetry_shows_the_queue_beyond_max_running() {
    let cfg = SimConfig {
        max_running: 4,
        decode_d0_s: 0.01,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "2,8",
            "--input-len",
            "50",
            "--output-len",
            "150",
            "--requests",
            "16",
            "--warmup",
            "0",
        ],
    )
    .await;
    let pts = &s.bundle.sweeps[0].points;
    for p in pts {
        let t = p.server_samples.as_ref().expect("sampled /metrics");
        assert_eq!(t.scheme, llmsweep_shared::bundle::MetricScheme::Vllm);
        assert!(t.t_s.len() >= 2, "{} samples", t.t_s.len());
        let generated = t.counters_after["vllm:generation_tokens_total"]
            - t.counters_before["vllm:generation_tokens_total"];
        assert_eq!(
            generated,
            16.0 * 150.0,
            "the server counted what the collector counted"
        );
    }
    assert_eq!(
        pts[0].server_samples.as_ref().unwrap().peak_queue,
        Some(0.0)
    );
    let queued = pts[1].server_samples.as_ref().unwrap().peak_queue.unwrap();
    assert!(
        queued >= 3.0,
        "8 clients on 4 slots queue up to 4; saw {queued}"
    );
    assert!(
        pts.iter().all(|p| p.gpu_samples.is_none()),
        "no GPU here, and no noise about it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_that_ends_before_its_queue_is_full_says_so() {
    // Two running at a time: at C=16 the queue's turn is seven decodes, longer than a level of
    // 20 requests, whose first 16 wait 0 to 7 turns and the last 4 seven: the median waits
    // about 4.5. At C=2 nothing queues.
    let cfg = SimConfig {
        max_running: 2,
        decode_d0_s: 0.01,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "2,16",
            "--input-len",
            "50",
            "--output-len",
            "60",
            "--requests",
            "20",
            "--warmup",
            "0",
        ],
    )
    .await;
    let pts = &s.bundle.sweeps[0].points;
    assert!(
        !kinds(&pts[0]).contains(&FlagKind::QueueFilling),
        "{:?}",
        pts[0].flags
    );
    let f = pts[1]
        .flags
        .iter()
        .find(|f| f.kind == FlagKind::QueueFilling)
        .expect("C=16 ends with its queue still filling");
    assert!(
        f.message.starts_with(
            "the server's queue was still filling when the level ended: its last 5 requests waited "
        ),
        "{}",
        f.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_counted_off_by_more_than_two_percent_are_flagged() {
    // The server adds 50 tokens its /tokenize does not know about. Without a warm-up to learn
    // them, every prompt of 1000 is counted as 1050.
    let cfg = SimConfig {
        hidden_prompt_tokens: 50,
        ..fast()
    };
    let s = sweep(
        cfg.clone(),
        &[
            "--concurrency",
            "1",
            "--input-len",
            "1000",
            "--output-len",
            "4",
            "--requests",
            "2",
            "--warmup",
            "0",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert_eq!(kinds(p), [FlagKind::InputLengthOff]);
    assert!(
        p.flags[0]
            .message
            .contains("asked 1000, server counted 1050"),
        "{}",
        p.flags[0].message
    );
    // With a warm-up request the collector learns the extra tokens and builds shorter prompts.
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1",
            "--input-len",
            "1000",
            "--output-len",
            "4",
            "--requests",
            "2",
            "--warmup",
            "1",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert!(p.flags.is_empty(), "{:?}", p.flags);
    assert!(p.requests.iter().all(|r| r.prompt_tokens == Some(1000)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_opened_before_a_level_unless_asked_cold() {
    let args = [
        "--concurrency",
        "4",
        "--input-len",
        "20",
        "--output-len",
        "8",
        "--requests",
        "12",
        "--warmup",
        "0",
    ];
    // By default the level's four connections are open before it: its first wave opens none.
    let s = sweep(fast(), &args).await;
    let sw = &s.bundle.sweeps[0];
    assert_eq!(sw.preopened, Some(true));
    let new: Vec<bool> = sw.points[0]
        .requests
        .iter()
        .map(|r| {
            r.setup
                .expect("every answer says its connection")
                .new_connection
        })
        .collect();
    println!("preopened: {new:?}");
    // The pool may race a connect against a connection on its way back: on a machine running
    // the whole test suite beside this, two of the four have (the cold run below opens all four).
    assert!(new[..4].iter().filter(|&&n| n).count() <= 2, "{new:?}");
    for r in &sw.points[0].requests {
        let setup = r.setup.unwrap();
        assert!(setup.headers_s > 0.0 && setup.headers_s <= r.ttft_s.unwrap() + 1e-9);
    }
    // Cold: the first wave opens them, and says so; later requests reuse them.
    let mut cold = args.to_vec();
    cold.push("--cold-connections");
    let s = sweep(fast(), &cold).await;
    let sw = &s.bundle.sweeps[0];
    assert_eq!(sw.preopened, Some(false));
    let new: Vec<bool> = sw.points[0]
        .requests
        .iter()
        .map(|r| r.setup.unwrap().new_connection)
        .collect();
    println!("cold: {new:?}");
    assert!(new[..4].iter().all(|&n| n), "{new:?}");
    // The first wave opened its connections on its own path: each carries its connect time,
    // inside the wait for headers. A reused connection carries none (a new one the pool opened
    // for another request would carry none either).
    for (i, r) in sw.points[0].requests.iter().enumerate() {
        let setup = r.setup.unwrap();
        if i < 4 {
            assert!(setup.connect_s.is_some(), "{setup:?}");
        }
        if let Some(c) = setup.connect_s {
            assert!(setup.new_connection, "{setup:?}");
            assert!(c > 0.0 && c < setup.headers_s, "{setup:?}");
        }
        if !setup.new_connection {
            assert_eq!(setup.connect_s, None);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_runs_until_its_steady_throughput_is_precise_and_says_how_precise() {
    // No --requests: each level sends until its steady tok/s is known to ±2 % (the default).
    let s = sweep(
        fast(),
        &[
            "--concurrency",
            "1,8",
            "--input-len",
            "64",
            "--output-len",
            "40",
        ],
    )
    .await;
    let sweep = &s.bundle.sweeps[0];
    let asked = sweep.precision.expect("the rule is recorded");
    assert_eq!((asked.steady_pct, asked.cap_s), (2.0, 120.0));
    assert_eq!(sweep.requests, None);
    for p in &sweep.points {
        let sum = p.summary.as_ref().unwrap();
        let pm = sum.steady_pm_pct.expect("an interval");
        assert!(pm <= 2.0, "C={}: ±{pm} %", p.concurrency);
        assert!(!kinds(p).contains(&FlagKind::Capped), "{:?}", p.flags);
        // At least a few waves of the level, and no more than a precise simulator needs.
        let c = p.concurrency as u64;
        assert!(sum.requests >= 4 * c, "C={c}: {} requests", sum.requests);
        assert!(
            sum.requests <= 12 * c + 8,
            "C={c}: {} requests",
            sum.requests
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_its_cap_stops_short_of_the_precision_asked_is_flagged_capped() {
    // A second per request: a one-second cap leaves no room for the waves an interval needs.
    let cfg = SimConfig {
        decode_d0_s: 0.05,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "2",
            "--input-len",
            "16",
            "--output-len",
            "20",
            "--max-level-time",
            "1",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert_eq!(p.status, PointStatus::Ok);
    assert_eq!(kinds(p), [FlagKind::Capped], "{:?}", p.flags);
    assert_eq!(
        p.flags[0].message,
        "stopped sending at the 1 s cap (--max-level-time) with steady tok/s known to not known (too few waves for an interval), short of the ±2 % asked (--precision)"
    );
}

#[test]
fn precision_and_level_time_out_of_range_are_refused_with_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    for (flag, value, says) in [
        ("--precision", "0", "--precision 0 is out of range"),
        ("--precision", "nan", "--precision NaN is out of range"),
        (
            "--max-level-time",
            "0.5",
            "--max-level-time 0.5 is out of range",
        ),
    ] {
        let argv = [
            "llmsweep",
            "throughput",
            "--out",
            dir.path().to_str().unwrap(),
            flag,
            value,
        ];
        let llmsweep::cli::Command::Throughput(a) =
            <llmsweep::cli::Cli as clap::Parser>::try_parse_from(argv)
                .unwrap()
                .command
        else {
            panic!("not throughput")
        };
        let err = a.plan().unwrap_err().to_string();
        assert!(err.contains(says), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_host_too_busy_to_keep_time_is_flagged_with_how_late_it_woke() {
    // Both runtime threads held for 0.8 s during the level (after the probes and two warm-up
    // requests of 1 s each), as a loaded host would hold them.
    let hog = || {
        tokio::spawn(async {
            tokio::time::sleep(Duration::from_millis(4000)).await;
            let a = tokio::spawn(async { std::thread::sleep(Duration::from_millis(800)) });
            let b = tokio::spawn(async { std::thread::sleep(Duration::from_millis(800)) });
            let _ = (a.await, b.await);
        });
    };
    let args = [
        "--concurrency",
        "1",
        "--requests",
        "6",
        "--input-len",
        "16",
        "--output-len",
        "100",
    ];
    let cfg = SimConfig {
        decode_d0_s: 0.01,
        ..fast()
    };
    let s = sweep_with(cfg, &args, Interrupt::default(), hog).await;
    let p = &s.bundle.sweeps[0].points[0];
    let late = p.client_lateness.expect("measured");
    assert!(late.max_s > 0.5, "{late:?}");
    assert!(kinds(p).contains(&FlagKind::HostBusy), "{:?}", p.flags);
    // A quiet level of the same work is not flagged, and its timer kept time.
    let quiet = sweep(fast(), &args).await;
    let q = &quiet.bundle.sweeps[0].points[0];
    assert!(!kinds(q).contains(&FlagKind::HostBusy), "{:?}", q.flags);
    assert!(q.client_lateness.unwrap().p99_s < 0.02);
}

/// A level stopped by its time cap cuts what waits in the server's queue too, rather than
/// waiting it out: 12 slots against a server running 2 requests of about 1 s each would take
/// 5 s more to drain; the level ends about one request after its 1 s cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_at_its_cap_cuts_what_waits_in_the_queue() {
    let cfg = SimConfig {
        max_running: 2,
        decode_d0_s: 0.025,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "12",
            "--input-len",
            "16",
            "--output-len",
            "40",
            "--precision",
            "0.1",
            "--max-level-time",
            "1",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert!(kinds(p).contains(&FlagKind::Capped), "{:?}", p.flags);
    let cut: Vec<_> = p
        .requests
        .iter()
        .filter(|r| {
            r.error
                .as_ref()
                .is_some_and(|e| e.message.contains("reached its time cap"))
        })
        .collect();
    assert!((8..=10).contains(&cut.len()), "{} cut", cut.len());
    let wall = p.summary.as_ref().unwrap().wall_s;
    assert!(wall < 3.5, "the level took {wall} s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_precise_level_cuts_what_waits_in_the_queue_and_counts_a_prefix_of_what_it_sent() {
    // 8 slots against a server that runs 2 at a time: once the level is precise, up to 6
    // requests wait in its queue (fewer when a completion's slot was refilled by then), and one
    // of the 2 running may have been admitted after the last cycle the level was judged on
    // closed. They are cut, not waited for.
    let cfg = SimConfig {
        max_running: 2,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "8",
            "--input-len",
            "16",
            "--output-len",
            "40",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    let cut: Vec<_> = p
        .requests
        .iter()
        .filter(|r| {
            r.error
                .as_ref()
                .is_some_and(|e| e.message.starts_with("cut at the level's end"))
        })
        .collect();
    assert!((4..=7).contains(&cut.len()), "{} cut", cut.len());
    assert!(
        cut.iter()
            .all(|r| r.error.as_ref().unwrap().kind == ErrorKind::Cancelled)
    );
    let sum = p.summary.as_ref().unwrap();
    assert_eq!(
        sum.requests as usize,
        p.requests.len() - cut.len(),
        "cut requests are not counted"
    );
    assert_eq!(sum.failed, 0);
    // The cut requests held their slots until the cut, and those queued produced nothing: the
    // steady window runs to the cut, or at most to the first token of a cut one that had begun,
    // whose tokens are not counted. The level's precision is known.
    assert!(cut.iter().filter(|r| r.ttft_s.is_some()).count() <= 1);
    let cut_at = cut.iter().map(|r| r.start_s + r.e2e_s).fold(0.0, f64::max);
    let begun = cut
        .iter()
        .filter_map(|r| Some(r.start_s + r.ttft_s?))
        .fold(f64::INFINITY, f64::min);
    let window_end = p
        .requests
        .iter()
        .map(|r| r.start_s)
        .fold(f64::INFINITY, f64::min)
        + sum.steady_window_s.unwrap();
    if begun.is_finite() {
        assert!(
            window_end <= begun + 1e-9,
            "window to {window_end}, a cut one began at {begun}"
        );
    } else {
        assert!(
            window_end > cut_at - 0.5,
            "window to {window_end}, cut at {cut_at}"
        );
    }
    assert!(
        sum.steady_pm_pct.is_some_and(|pm| pm <= 2.0),
        "{:?}",
        sum.steady_pm_pct
    );
    // Every counted request was sent before every cut one, or with it: two slots refilled in
    // the same instant reach the server in either order (a counted request once started 1 µs
    // after a cut one, and under a loaded CI machine 1.1 ms after), so sends within 20 ms, a
    // tenth of a request's time here, count as one.
    let last_counted = p
        .requests
        .iter()
        .filter(|r| r.is_ok())
        .map(|r| r.start_s)
        .fold(f64::NEG_INFINITY, f64::max);
    let first_cut = cut.iter().map(|r| r.start_s).fold(f64::INFINITY, f64::min);
    assert!(
        last_counted < first_cut + 0.020,
        "{last_counted} vs {first_cut}"
    );
    assert!(p.flags.is_empty(), "{:?}", p.flags);
}

/// Below the server's running limit a precise level is judged a wave after the last cycle it
/// counts (a cycle closes only once a later completion shows where its wave ended), and by then
/// the slots of that wave were refilled. Those requests had no token in the judged cycles and
/// are cut rather than run out: the level ends with the requests that decoded in its last cycle,
/// and its steady rate is still the server's. A speculative server's requests finish after different numbers of steps, so
/// completions spread as they do against a real engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_precise_level_cuts_what_it_sent_after_its_last_cycle_and_keeps_the_servers_rate() {
    let cfg = SimConfig {
        prefill_a_s: 0.001,
        prefill_b_s: 0.0,
        decode_d0_s: 0.020,
        decode_d1_s: 0.004,
        max_running: 8,
        speculative_steps: Some(3),
        spec_accept: 2.5,
        ..fast()
    };
    let step = cfg.step_s(4);
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "4",
            "--input-len",
            "16",
            "--output-len",
            "40",
            "--warmup",
            "0",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    let sum = p.summary.as_ref().unwrap();
    let cut: Vec<_> = p
        .requests
        .iter()
        .filter(|r| {
            r.error
                .as_ref()
                .is_some_and(|e| e.message.contains("no token before the last cycle"))
        })
        .collect();
    assert!(!cut.is_empty(), "nothing was cut");
    assert!(
        cut.iter()
            .all(|r| r.error.as_ref().unwrap().kind == ErrorKind::Cancelled)
    );
    assert_eq!(sum.requests as usize, p.requests.len() - cut.len());
    assert_eq!(sum.failed, 0);
    // A prefix in sending order: every counted request was sent before every cut one.
    let counted: Vec<_> = p.requests.iter().filter(|r| r.is_ok()).collect();
    let last_counted = counted.iter().map(|r| r.start_s).fold(0.0, f64::max);
    let first_cut = cut.iter().map(|r| r.start_s).fold(f64::INFINITY, f64::min);
    assert!(last_counted < first_cut, "{last_counted} vs {first_cut}");
    // The level did not wait for them: it ended before the last one sent could have finished.
    let e2e = sum.e2e_s.as_ref().unwrap();
    let last_cut = cut.iter().map(|r| r.start_s).fold(0.0, f64::max);
    let level_end = counted
        .iter()
        .map(|r| r.start_s + r.e2e_s)
        .fold(0.0, f64::max);
    assert!(
        level_end < last_cut + e2e.min,
        "ended at {level_end}; the last cut one, sent at {last_cut}, would have run {} s",
        e2e.min
    );
    // Its steady rate is the server's: four requests each yielding 2.5 tokens a step.
    assert!(sum.steady_pm_pct.is_some_and(|pm| pm <= 2.0), "{sum:?}");
    crate::common::sim::assert_close(
        "steady tok/s",
        sum.steady_tok_s.unwrap(),
        4.0 * 2.5 / step,
        0.0,
        0.05,
    );
    assert!(p.flags.is_empty(), "{:?}", p.flags);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_time_a_sweep_will_take_is_told_before_its_first_level() {
    // 300 tokens at 20 ms each: a 6 s request, so a precise level of two slots takes at least
    // four waves, 24 s: worth telling.
    let cfg = SimConfig {
        decode_d0_s: 0.02,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "2",
            "--input-len",
            "16",
            "--output-len",
            "300",
        ],
    )
    .await;
    let first_point = s
        .events
        .iter()
        .position(|e| matches!(e, llmsweep::load::Recorded::Point(..)))
        .unwrap();
    let told = s
        .events
        .iter()
        .position(|e| *e == llmsweep::load::Recorded::TimeLeft(vec![2]));
    assert!(told.is_some_and(|t| t < first_point), "{:?}", s.events);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_client_on_the_server_during_a_level_is_named() {
    let turn = crate::common::sim::SERIAL.lock().await;
    let cfg = SimConfig {
        decode_d0_s: 0.01,
        ..fast()
    };
    let sim = SimServer::start(cfg, 0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--concurrency",
        "1",
        "--requests",
        "4",
        "--input-len",
        "16",
        "--output-len",
        "100",
    ];
    let plan = plan(&sim.url(), dir.path(), &args);
    // Another client: three requests of 6 s each, sent as the sweep starts.
    let url = format!("{}/v1/completions", sim.url());
    let other = tokio::spawn(async move {
        let http = reqwest::Client::new();
        let one = |http: reqwest::Client, url: String| async move {
            let body = serde_json::json!({
                "model": "sim-fast", "prompt": "other traffic", "max_tokens": 600,
                "ignore_eos": true, "stream": false
            });
            let _ = http.post(&url).json(&body).send().await;
        };
        futures_util::future::join_all((0..3).map(|_| one(http.clone(), url.clone()))).await;
    });
    let recorder = std::sync::Arc::new(llmsweep::load::Recorder::default());
    let outcome = llmsweep::load::run_plan(
        &plan,
        vec!["llmsweep".into()],
        Interrupt::default(),
        recorder,
    )
    .await
    .unwrap();
    other.abort();
    sim.shutdown().await;
    drop(turn);
    let bundle =
        llmsweep_shared::Bundle::from_json(&std::fs::read_to_string(&outcome.path).unwrap())
            .unwrap();
    let p = &bundle.sweeps[0].points[0];
    let f = p
        .flags
        .iter()
        .find(|f| f.kind == FlagKind::OtherTraffic)
        .unwrap_or_else(|| panic!("not flagged: {:?} {:?}", p.flags, p.server_samples));
    assert!(
        f.message.starts_with(
            "the server counted up to 4 requests running or waiting while this level sent at most 1"
        ),
        "{}",
        f.message
    );
    // The same level alone is not flagged.
    let quiet = sweep(
        SimConfig {
            decode_d0_s: 0.01,
            ..fast()
        },
        &args,
    )
    .await;
    assert!(!kinds(&quiet.bundle.sweeps[0].points[0]).contains(&FlagKind::OtherTraffic));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_without_a_tokenizer_have_the_asked_tokens_exactly() {
    // No /tokenize, and the server adds 3 tokens to every prompt (a template): the tokens per
    // word are learned from the warm-up's usage, and each prompt's words are counted at that
    // rate, its per-run prefix included. The simulator counts a token per word, so every
    // prompt must come to the asked length exactly.
    let cfg = SimConfig {
        no_tokenize: true,
        hidden_prompt_tokens: 3,
        ..fast()
    };
    for len in [20u64, 30, 50, 120, 200] {
        let l = len.to_string();
        let s = sweep(
            cfg.clone(),
            &[
                "--concurrency",
                "2",
                "--requests",
                "4",
                "--input-len",
                &l,
                "--output-len",
                "2",
                "--warmup",
                "1",
            ],
        )
        .await;
        assert_eq!(s.bundle.workload.calibration, Calibration::Usage);
        let p = &s.bundle.sweeps[0].points[0];
        let counted: Vec<Option<u64>> = p.requests.iter().map(|r| r.prompt_tokens).collect();
        assert_eq!(counted, vec![Some(len); 4], "--input-len {len}");
    }
}

/// serve-sim speaking as SGLang with MTP drafts that are always accepted (4 tokens a step):
/// the probe reads its server info as SGLang's, the sampler its `/metrics` with SGLang's names,
/// every chunk after the first carries 4 tokens by the server's own count
/// (`continuous_usage_stats`), and ITL is per token: a step's time over 4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sglang_personality_is_probed_and_sampled_as_sglang_with_exact_mtp_chunks() {
    let cfg = SimConfig {
        engine: llmsweep::sim::Personality::Sglang,
        tp_size: 2,
        speculative_steps: Some(3),
        spec_accept: 4.0,
        decode_d0_s: 0.01,
        ..fast()
    };
    let step_s = cfg.step_s(4);
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "4",
            "--input-len",
            "50",
            "--output-len",
            "597",
            "--requests",
            "8",
            "--warmup",
            "0",
        ],
    )
    .await;
    let t = &s.bundle.target;
    assert_eq!(t.engine.as_deref(), Some("sglang"));
    assert_eq!(t.engine_version.as_deref(), Some("0.5.11+serve-sim"));
    assert_eq!(t.max_running_requests, Some(32));
    assert_eq!(t.max_context, Some(32768));
    assert!(t.simulated, "still labelled as the simulator");
    let args = t.server_args.as_ref().expect("server info kept");
    assert_eq!(args["tp_size"], 2);
    assert_eq!(args["speculative_algorithm"], "NEXTN");
    assert_eq!(args["speculative_num_steps"], 3);
    assert_eq!(t.probes["/version"].status, Some(404));
    assert_eq!(
        llmsweep_shared::deploy::gpus(&s.bundle).map(|g| g.count),
        Some(2)
    );
    let p = &s.bundle.sweeps[0].points[0];
    let samples = p.server_samples.as_ref().expect("sampled /metrics");
    assert_eq!(
        samples.scheme,
        llmsweep_shared::bundle::MetricScheme::Sglang
    );
    assert_eq!(samples.peak_running, Some(4.0), "4 clients, 32 slots");
    assert_eq!(samples.peak_queue, Some(0.0));
    let generated = samples.counters_after["sglang:generation_tokens_total"]
        - samples.counters_before["sglang:generation_tokens_total"];
    assert_eq!(generated, 8.0 * 597.0);
    // SGLang's gauge: 0 before the first step, then 4 tokens a step.
    let accept = &samples.gauges["sglang:spec_accept_length"];
    assert!(
        accept
            .iter()
            .all(|v| matches!(v, Some(x) if *x == 0.0 || *x == 4.0)),
        "{accept:?}"
    );
    assert!(accept.contains(&Some(4.0)), "{accept:?}");
    // 597 tokens: the first from prefill, then 149 steps of 4.
    let chunks = p.chunk_tokens.as_ref().expect("chunks counted");
    assert_eq!(chunks.counts, [0, 0, 0, 8 * 149, 0, 0, 0, 0]);
    assert!(chunks.exact, "the server said every chunk's count");
    assert!(
        p.requests
            .iter()
            .all(|r| r.chunks == 150 && r.output_tokens == 597)
    );
    let a = llmsweep_shared::metrics::acceptance(p).expect("speculative");
    assert_eq!((a.server_length, a.per_chunk), (Some(4.0), Some(4.0)));
    assert_eq!(Metric::AcceptLength.of(p), Some(4.0));
    // ITL per token: each step of 4 requests takes step_s(4), over its 4 tokens; the timer
    // wakes up to about 1 ms late, shared by 4 tokens.
    let itl = p.summary.as_ref().and_then(|s| s.itl_s).expect("ITL");
    let truth = step_s / 4.0;
    assert!(
        itl.p50 >= truth - 1e-4 && itl.p50 <= truth + 0.0004,
        "ITL p50 {} s against {truth} s",
        itl.p50
    );
}

/// With MTP accepting 2.6 tokens a step on average, chunks carry 1 to 4 tokens, their mean is
/// the acceptance SGLang's gauge reports, and both are near 2.6.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mtp_chunks_of_one_to_four_tokens_average_the_acceptance_the_gauge_reports() {
    let cfg = SimConfig {
        engine: llmsweep::sim::Personality::Sglang,
        speculative_steps: Some(3),
        spec_accept: 2.6,
        decode_d0_s: 0.005,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "8",
            "--input-len",
            "50",
            "--output-len",
            "300",
            "--requests",
            "16",
            "--warmup",
            "0",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    let chunks = p.chunk_tokens.as_ref().expect("chunks counted");
    assert!(chunks.exact);
    assert_eq!(chunks.counts[4..], [0, 0, 0, 0], "never more than 4 a step");
    assert!(
        chunks.counts[..4].iter().all(|&n| n > 0),
        "{:?}",
        chunks.counts
    );
    assert_eq!(chunks.tokens, 16 * 299);
    // About 16 × 299 / 2.6 ≈ 1840 steps: their mean is within ±0.1 of 2.6 (over 4 standard
    // errors).
    let mean = chunks.mean().expect("a mean");
    assert!((mean - 2.6).abs() < 0.1, "tokens per chunk {mean}");
    let a = llmsweep_shared::metrics::acceptance(p).expect("speculative");
    let gauge = a.server_length.expect("SGLang's gauge");
    assert!(
        (gauge - mean).abs() < 0.15,
        "gauge {gauge} against chunks {mean}"
    );
}

/// vLLM with `--per-request-spec-decode-metrics summary` states each request's steps and
/// accepted drafts on its last chunk. Ground truth: every chunk after the first is one step, so
/// a request's steps are its chunks − 1 and its accepted drafts its tokens − chunks; the level's
/// acceptance is theirs, pooled, and comes from the requests rather than the counters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vllms_per_request_acceptance_is_read_from_each_answer() {
    let cfg = SimConfig {
        engine: llmsweep::sim::Personality::Vllm,
        speculative_steps: Some(3),
        spec_accept: 2.6,
        per_request_spec_metrics: true,
        decode_d0_s: 0.005,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "4",
            "--input-len",
            "50",
            "--output-len",
            "120",
            "--requests",
            "8",
            "--warmup",
            "0",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    let (mut steps, mut accepted) = (0, 0);
    for r in &p.requests {
        let spec = r.spec.expect("each answer states its acceptance");
        assert_eq!(spec.steps, r.chunks - 1, "{r:?}");
        assert_eq!(spec.accepted, r.output_tokens - r.chunks, "{r:?}");
        assert_eq!(spec.drafted, Some(3 * spec.steps));
        steps += spec.steps;
        accepted += spec.accepted;
    }
    let a = llmsweep_shared::metrics::acceptance(p).expect("speculative");
    let pooled = 1.0 + accepted as f64 / steps as f64;
    assert_eq!(a.per_request, Some(pooled));
    assert_eq!(a.length(), Some(pooled));
    assert!(
        a.length_source().contains("each request"),
        "{}",
        a.length_source()
    );
    assert_eq!(a.draft_rate, Some(accepted as f64 / (3 * steps) as f64));
}

/// The default levels end once a level above the server's running limit serves no more than
/// the best below it: against a server running 2, C=4 queues two behind them for the same
/// tokens per second, and C = 8 to 100 would only queue longer. They are kept as skipped, with
/// the reason and the flag that runs them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_levels_end_once_the_server_is_saturated() {
    let cfg = SimConfig {
        max_running: 2,
        ..fast()
    };
    let s = sweep(cfg, &["--input-len", "16", "--output-len", "40"]).await;
    let b = &s.bundle;
    assert!(b.complete);
    let sw = &b.sweeps[0];
    assert_eq!(sw.concurrency, [1, 2, 4, 8, 16, 32, 64, 100]);
    let status: Vec<(u32, PointStatus)> = sw
        .points
        .iter()
        .map(|p| (p.concurrency, p.status))
        .collect();
    assert_eq!(
        status,
        [
            (1, PointStatus::Ok),
            (2, PointStatus::Ok),
            (4, PointStatus::Ok),
            (8, PointStatus::Skipped),
            (16, PointStatus::Skipped),
            (32, PointStatus::Skipped),
            (64, PointStatus::Skipped),
            (100, PointStatus::Skipped),
        ]
    );
    let steady = |c: u32| {
        Metric::SteadyTokS
            .of(sw.points.iter().find(|p| p.concurrency == c).unwrap())
            .unwrap()
    };
    assert!(
        steady(4) <= steady(2) * 1.05,
        "{} and {}",
        steady(2),
        steady(4)
    );
    for p in &sw.points[3..] {
        assert!(p.requests.is_empty());
        let why = p.reason.as_deref().unwrap();
        assert!(
            why.starts_with("not run: the default levels ended at C=4, where the server was saturated: C=4 serves")
                && why.contains("and more than the 2 requests the server runs at once (--concurrency runs every level given)"),
            "{why}"
        );
    }
    let said = s
        .events
        .iter()
        .filter_map(|e| match e {
            llmsweep::load::Recorded::Note(n) => Some(n.as_str()),
            _ => None,
        })
        .find(|n| n.contains("The server is saturated"))
        .unwrap_or_else(|| panic!("no note of the end: {:?}", s.events));
    assert!(
        said.ends_with("The server is saturated: C = 8, 16, 32, 64, 100 would only queue, and are not run (--concurrency 1,2,4,8,16,32,64,100 runs every level)"),
        "{said}"
    );
}
