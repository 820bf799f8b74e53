//! Rate sweeps against the simulator: open-loop arrivals on their schedule, the client's lag,
//! the cap's queue, and goodput against the simulator's known timing.

use crate::common::sim::sweep;
use llmsweep::sim::{Preset, SimConfig};
use llmsweep_shared::bundle::{Arrival, Point, SweepKind};

fn fast() -> SimConfig {
    SimConfig::preset(Preset::Fast)
}

/// Mean and coefficient of variation of the gaps between a point's send times.
fn send_gaps(p: &Point) -> (f64, f64) {
    let mut starts: Vec<f64> = p.requests.iter().map(|r| r.start_s).collect();
    starts.sort_by(f64::total_cmp);
    let gaps: Vec<f64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt() / mean)
}

const SHORT: [&str; 6] = ["--input-len", "16", "--output-len", "4", "--warmup", "0"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn constant_and_poisson_arrivals_have_the_asked_rate_and_spread() {
    // 200 arrivals at 50/s: constant gaps of 20 ms; Poisson gaps of 20 ms on average with a
    // coefficient of variation of 1 (its sampling error over 199 gaps is about 0.07). The
    // send times carry the machine's scheduling jitter (a few ms when it is busy), hence the
    // room around 0.
    for (arrival, want_cv, tol) in [("constant", 0.0, 0.25), ("poisson", 1.0, 0.3)] {
        let mut args = vec!["--rates", "50", "--arrival", arrival, "--requests", "200"];
        args.extend(SHORT);
        let s = sweep(fast(), &args).await;
        let sw = &s.bundle.sweeps[0];
        assert_eq!(sw.kind, SweepKind::Rate);
        let plan = sw.rate.as_ref().expect("the rate plan");
        assert_eq!(plan.rates, [50.0]);
        assert_eq!(plan.seed, Some(7), "the schedule's seed is the run's");
        let p = &sw.points[0];
        assert_eq!(p.requests.len(), 200);
        let (mean, cv) = send_gaps(p);
        assert!((mean - 0.02).abs() < 0.004, "{arrival}: mean gap {mean}");
        assert!((cv - want_cv).abs() < tol, "{arrival}: CV {cv}");
        let r = p.rate.expect("rate numbers");
        assert_eq!(r.offered_rps, 50.0);
        // The client kept up: requests sent within a few ms of their due time.
        let lag = r.lag_s.expect("lag");
        assert!(
            lag.min >= 0.0 && lag.p50 < 0.005 && lag.p99 < 0.050,
            "{arrival}: lag {lag:?}"
        );
        assert!(r.queued_s.is_none(), "no cap, no queue");
        for req in &p.requests {
            let due = req.due.expect("every request says when it was due");
            assert!(req.start_s >= due.due_s);
        }
        if arrival == "constant" {
            assert_eq!(plan.arrival, Arrival::Constant);
            assert!(
                (r.achieved_rps.unwrap() - 50.0).abs() < 2.5,
                "{:?}",
                r.achieved_rps
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_queues_arrivals_in_the_client_and_says_so() {
    // 40 arrivals at 200/s, each request ~0.1 s: far more than two in flight would be asked.
    let args = [
        "--rates",
        "200",
        "--arrival",
        "constant",
        "--requests",
        "40",
        "--max-concurrency",
        "2",
        "--input-len",
        "16",
        "--output-len",
        "40",
        "--warmup",
        "0",
    ];
    let s = sweep(fast(), &args).await;
    let p = &s.bundle.sweeps[0].points[0];
    let r = p.rate.unwrap();
    assert_eq!(r.peak_concurrency, Some(2), "{r:?}");
    let queued = r.queued_s.expect("arrivals waited for the cap");
    assert!(queued.max > 0.3, "{queued:?}");
    // The wait is the cap's, not the client's lateness.
    assert!(r.lag_s.unwrap().p50 < 0.005, "{r:?}");
    assert_eq!(s.bundle.sweeps[0].concurrency, [2]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goodput_is_none_under_a_tighter_ttft_than_the_server_and_all_under_a_loose_one() {
    // The fast simulator's TTFT is at least its 4 ms fixed prefill cost.
    for (slo, want_fraction) in [("ttft=0.001", 0.0), ("ttft=5,tpot=1,e2e=10", 1.0)] {
        let mut args = vec![
            "--rates",
            "20",
            "--arrival",
            "constant",
            "--requests",
            "40",
            "--goodput",
            slo,
        ];
        args.extend(SHORT);
        let s = sweep(fast(), &args).await;
        let sw = &s.bundle.sweeps[0];
        assert!(sw.slo.is_some());
        let p = &sw.points[0];
        let g = p.goodput.expect("goodput with --goodput");
        assert_eq!(g.requests, 40);
        assert_eq!(g.fraction, want_fraction, "{slo}: {g:?}");
        let wall = p.summary.as_ref().unwrap().wall_s;
        // Everything good: the good request rate is the request rate over the wall time.
        assert!(
            (g.good_rps - want_fraction * 40.0 / wall).abs() < 1e-9,
            "{slo}: {g:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spread_lengths_fall_in_their_range_with_the_asked_mean_and_are_not_short() {
    // ±50 % around 100 input and 20 output tokens: inputs 50..=150, outputs 10..=30.
    let s = sweep(
        fast(),
        &[
            "--concurrency",
            "8",
            "--requests",
            "240",
            "--input-len",
            "100",
            "--output-len",
            "20",
            "--length-spread",
            "0.5",
            "--warmup",
            "0",
        ],
    )
    .await;
    let sw = &s.bundle.sweeps[0];
    assert_eq!(sw.length_spread, Some(0.5));
    let p = &sw.points[0];
    let inputs: Vec<u64> = p.requests.iter().map(|r| r.input_tokens).collect();
    let outputs: Vec<u64> = p.requests.iter().map(|r| r.output_asked.unwrap()).collect();
    assert!(inputs.iter().all(|n| (50..=150).contains(n)), "{inputs:?}");
    assert!(outputs.iter().all(|n| (10..=30).contains(n)), "{outputs:?}");
    let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64;
    // The mean of 240 uniform draws is within ±3 standard errors of the middle.
    assert!((mean(&inputs) - 100.0).abs() < 6.0, "{}", mean(&inputs));
    assert!((mean(&outputs) - 20.0).abs() < 1.5, "{}", mean(&outputs));
    assert!(inputs.iter().min() < Some(&60) && inputs.iter().max() > Some(&140));
    // The server gave each request what it asked: nothing is short, and the summary's asked
    // tokens are the sum of the requests' own.
    assert!(
        p.requests
            .iter()
            .all(|r| Some(r.output_tokens) == r.output_asked)
    );
    let summary = p.summary.as_ref().unwrap();
    assert_eq!(summary.short, 0);
    assert_eq!(summary.output_tokens_asked, outputs.iter().sum::<u64>());
    assert!(
        !p.flags
            .iter()
            .any(|f| f.kind == llmsweep_shared::bundle::FlagKind::InputLengthOff),
        "{:?}",
        p.flags
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dataset_prompts_arrive_byte_for_byte_in_order_and_cycle() {
    use sha2::Digest;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("prompts.jsonl");
    let text = concat!(
        "{\"prompt\": \"Explain  tabs\\tand \\u00e9 accents\", \"output_len\": 3}\n",
        "\n",
        "{\"prompt\": \"second line, with \\\"quotes\\\"\"}\n",
        "{\"prompt\": \"third\\nline\", \"output_len\": 5}\n",
    );
    std::fs::write(&file, text).unwrap();
    let path = file.to_string_lossy().to_string();
    let s = sweep(
        fast(),
        &[
            "--dataset",
            &path,
            "--concurrency",
            "1",
            "--requests",
            "5",
            "--output-len",
            "4",
            "--warmup",
            "0",
        ],
    )
    .await;
    let lines = [
        "Explain  tabs\tand é accents",
        "second line, with \"quotes\"",
        "third\nline",
    ];
    let want: Vec<&str> = (0..5).map(|i| lines[i % 3]).collect();
    assert_eq!(s.received, want);
    let d = s
        .bundle
        .workload
        .dataset
        .as_ref()
        .expect("the dataset's identity");
    assert_eq!(d.lines, 3);
    assert_eq!(d.sha256, hex::encode(sha2::Sha256::digest(text.as_bytes())));
    let p = &s.bundle.sweeps[0].points[0];
    // A line's own output length, else --output-len (recorded only where it is the line's).
    let asked: Vec<u64> = p.requests.iter().map(|r| r.asked(4)).collect();
    assert_eq!(asked, [3, 4, 5, 3, 4]);
    assert!(p.requests.iter().all(|r| r.output_tokens == r.asked(4)));
    assert_eq!(p.summary.as_ref().unwrap().short, 0);
    assert!(
        !p.flags
            .iter()
            .any(|f| f.kind == llmsweep_shared::bundle::FlagKind::InputLengthOff)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_prefix_hits_the_simulators_prefix_cache_in_whole_blocks_and_no_more() {
    // kpro5's prefix cache reuses whole 16-token blocks: a 100-token shared prefix is 6 blocks
    // (96 tokens); the 7th block holds each prompt's own words, so it never matches.
    let cfg = SimConfig {
        decode_d0_s: 0.004,
        decode_d1_s: 0.0,
        ..SimConfig::preset(Preset::Kpro5)
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "2",
            "--requests",
            "6",
            "--input-len",
            "300",
            "--output-len",
            "4",
            "--shared-prefix-len",
            "100",
            "--warmup",
            "1",
        ],
    )
    .await;
    assert_eq!(s.bundle.workload.shared_prefix_len, 100);
    let p = &s.bundle.sweeps[0].points[0];
    let cached: Vec<Option<u64>> = p.requests.iter().map(|r| r.cached_tokens).collect();
    assert_eq!(cached, vec![Some(96); 6]);
    assert!(
        !p.flags
            .iter()
            .any(|f| f.kind == llmsweep_shared::bundle::FlagKind::PrefixCache),
        "hits within the shared prefix are expected: {:?}",
        p.flags
    );
    // Without a shared prefix, the same run finds nothing cached.
    let s = sweep(
        SimConfig::preset(Preset::Kpro5),
        &[
            "--concurrency",
            "2",
            "--requests",
            "4",
            "--input-len",
            "300",
            "--output-len",
            "2",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert!(
        p.requests.iter().all(|r| r.cached_tokens == Some(0)),
        "{:?}",
        p.requests
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_resend_the_conversation_and_the_prefix_cache_serves_its_earlier_part() {
    // kpro5's prefix cache in 16-token blocks; 64-word questions and 16-word answers. Turn 2
    // resends q1 a1 q2: q1's 4 blocks are cached (64). Turn 3 resends q1 a1 q2 a2 q3: turn 2's
    // prompt, 144 words, is 9 whole blocks (144).
    let cfg = SimConfig {
        decode_d0_s: 0.002,
        decode_d1_s: 0.0,
        ..SimConfig::preset(Preset::Kpro5)
    };
    let s = sweep(
        cfg,
        &[
            "--concurrency",
            "1",
            "--requests",
            "3",
            "--turns",
            "3",
            "--input-len",
            "64",
            "--output-len",
            "16",
            "--warmup",
            "0",
        ],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    let turns: Vec<Option<u32>> = p.requests.iter().map(|r| r.turn).collect();
    assert_eq!(turns, [Some(0), Some(1), Some(2)]);
    // What arrived: each turn starts with the whole conversation before it.
    assert_eq!(s.received.len(), 3);
    assert!(s.received[1].starts_with(&s.received[0]));
    assert!(s.received[2].starts_with(&s.received[1]));
    let words: Vec<usize> = s
        .received
        .iter()
        .map(|t| t.split_whitespace().count())
        .collect();
    assert_eq!(words, [64, 144, 224]);
    let cached: Vec<Option<u64>> = p.requests.iter().map(|r| r.cached_tokens).collect();
    assert_eq!(cached, [Some(0), Some(64), Some(144)]);
}
