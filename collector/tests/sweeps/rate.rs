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
async fn a_dataset_point_records_the_lengths_its_requests_asked() {
    // Two lines: 3 words asking 6 tokens, 5 words asking 10 (the simulator counts a token per
    // word). Four requests, closed loop and open loop alike: 4 tokens in and 8 out on average,
    // not the 1000 and 500 of --input-len and --output-len, which no request used.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("prompts.jsonl");
    std::fs::write(
        &file,
        "{\"prompt\": \"one two three\", \"output_len\": 6}\n{\"prompt\": \"a b c d e\", \"output_len\": 10}\n",
    )
    .unwrap();
    let path = file.to_string_lossy().to_string();
    for how in [["--concurrency", "2"], ["--rates", "50"]] {
        let mut args = how.to_vec();
        args.extend(["--dataset", &path, "--requests", "4", "--warmup", "0"]);
        let s = sweep(fast(), &args).await;
        let p = &s.bundle.sweeps[0].points[0];
        let inputs: Vec<Option<u64>> = p.requests.iter().map(|r| r.prompt_tokens).collect();
        assert_eq!(inputs, [3, 5, 3, 5].map(Some), "{how:?}");
        assert_eq!((p.input_len, p.output_len), (4, 8), "{how:?}");
    }
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
    let s = three_turns(cfg, &["--concurrency", "1", "--requests", "3"]).await;
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
    // Those hits are the point of turns, not a warning.
    assert!(
        !p.flags
            .iter()
            .any(|f| f.kind == llmsweep_shared::bundle::FlagKind::PrefixCache),
        "{:?}",
        p.flags
    );
}

/// A sweep of three-turn conversations of 64-token questions and 16-token answers, with
/// `load` saying how they are sent.
async fn three_turns(cfg: SimConfig, load: &[&str]) -> crate::common::sim::Swept {
    let mut args = load.to_vec();
    args.extend([
        "--turns",
        "3",
        "--input-len",
        "64",
        "--output-len",
        "16",
        "--warmup",
        "0",
    ]);
    sweep(cfg, &args).await
}

/// kpro5's prefix cache with a prefill and decode quick enough that a 16-token turn ends in a
/// few tens of milliseconds.
fn quick_prefix_cache() -> SimConfig {
    SimConfig {
        prefill_a_s: 0.002,
        prefill_b_s: 0.0,
        prefill_c_s: 0.0,
        decode_d0_s: 0.002,
        decode_d1_s: 0.0,
        decode_kv_s: 0.0,
        ..SimConfig::preset(Preset::Kpro5)
    }
}

/// The simulator's answer to its `arrival`-th generation request (1-based): `tokens` words.
fn sim_answer(cfg: &SimConfig, arrival: u64, tokens: u32) -> String {
    use llmsweep::sim::text::{OutputText, request_seed};
    OutputText::new(request_seed(cfg.seed, arrival), None).next_tokens(tokens)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_with_rates_make_each_arrival_the_next_turn_of_a_ready_conversation() {
    // 9 arrivals, each one request, with the previous turn answered by the time each is due:
    // arrivals 200 ms apart, or 10 ms apart behind a cap of one in flight (the turn that frees
    // the slot has its conversation ready first). So the turns go 0 1 2 0 1 2 0 1 2, each
    // later turn the previous turn's prompt, its answer and a new 64-word question: 64, 144
    // and 224 words, of which the prefix cache holds the previous prompt's whole 16-token
    // blocks, 0, 64 and 144.
    let cfg = quick_prefix_cache();
    let spaced = ["--rates", "5"].as_slice();
    let capped = ["--rates", "100", "--max-concurrency", "1"].as_slice();
    for how in [spaced, capped] {
        let mut args = how.to_vec();
        args.extend(["--arrival", "constant", "--requests", "9"]);
        let s = three_turns(cfg.clone(), &args).await;
        let p = &s.bundle.sweeps[0].points[0];
        let turns: Vec<Option<u32>> = p.requests.iter().map(|r| r.turn).collect();
        assert_eq!(turns, [0, 1, 2, 0, 1, 2, 0, 1, 2].map(Some), "{how:?}");
        assert_eq!(s.received.len(), 9, "{how:?}");
        for (i, got) in s.received.iter().enumerate().filter(|(i, _)| i % 3 > 0) {
            let answer = sim_answer(&cfg, i as u64, 16);
            let before = format!("{}{answer}\n\n", s.received[i - 1]);
            assert!(got.starts_with(&before), "{how:?}: request {i}: {got:?}");
        }
        let words: Vec<usize> = s
            .received
            .iter()
            .map(|t| t.split_whitespace().count())
            .collect();
        assert_eq!(words, [64, 144, 224].repeat(3), "{how:?}");
        let cached: Vec<Option<u64>> = p.requests.iter().map(|r| r.cached_tokens).collect();
        let want: Vec<Option<u64>> = [0, 64, 144].repeat(3).into_iter().map(Some).collect();
        assert_eq!(cached, want, "{how:?}");
        // Still the schedule's requests: every one due, at the offered rate.
        let r = p.rate.expect("rate numbers");
        assert!(p.requests.iter().all(|r| r.due.is_some()), "{how:?}");
        if how == capped {
            assert_eq!(r.peak_concurrency, Some(1), "{r:?}");
            let queued = r.queued_s.expect("arrivals waited for the cap");
            assert!(queued.max > 0.05, "{queued:?}");
        } else {
            assert!(r.queued_s.is_none(), "no cap, no queue: {r:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_with_rates_faster_than_the_answers_interleave_conversations_each_turn_continued_once()
 {
    // 30 arrivals 20 ms apart, each turn about 90 ms: several conversations are open at once,
    // and an arrival that finds none ready starts one. Whatever the timing, every arrival is
    // one request on its schedule, every later turn resends one earlier turn's prompt and
    // answer and no turn is continued twice, and the cache holds 0, 64 and 144 tokens of
    // turns 1, 2 and 3.
    let cfg = SimConfig {
        decode_d0_s: 0.005,
        ..quick_prefix_cache()
    };
    let s = three_turns(
        cfg.clone(),
        &["--rates", "50", "--arrival", "constant", "--requests", "30"],
    )
    .await;
    let p = &s.bundle.sweeps[0].points[0];
    assert_eq!(p.requests.len(), 30);
    assert!(p.requests.iter().all(|r| r.is_ok() && r.due.is_some()));
    let by_turn = |t: u32| p.requests.iter().filter(|r| r.turn == Some(t)).count();
    let (first, second, third) = (by_turn(0), by_turn(1), by_turn(2));
    assert_eq!(first + second + third, 30);
    assert!(
        first >= second && second >= third && third > 0,
        "{first} {second} {third}"
    );
    for r in &p.requests {
        let want = [0, 64, 144][r.turn.unwrap() as usize];
        assert_eq!(r.cached_tokens, Some(want), "{r:?}");
    }
    // Received in arrival order: each later turn continues exactly one earlier prompt.
    let words = |t: &str| t.split_whitespace().count();
    let mut continued = vec![false; s.received.len()];
    let mut overlapped = false;
    for (i, got) in s.received.iter().enumerate().filter(|(_, t)| words(t) > 64) {
        let parents: Vec<usize> = (0..i)
            .filter(|&j| {
                let answer = sim_answer(&cfg, j as u64 + 1, 16);
                words(&s.received[j]) + 80 == words(got)
                    && got.starts_with(&format!("{}{answer}\n\n", s.received[j]))
            })
            .collect();
        assert_eq!(parents.len(), 1, "request {i}: {parents:?}");
        assert!(
            !continued[parents[0]],
            "request {} continued twice",
            parents[0]
        );
        continued[parents[0]] = true;
        overlapped |= parents[0] + 1 < i;
    }
    assert!(
        overlapped,
        "no turn was sent while another conversation's was in flight"
    );
    let mut got: Vec<usize> = s.received.iter().map(|t| words(t)).collect();
    got.sort_unstable();
    let mut want: Vec<usize> = p
        .requests
        .iter()
        .map(|r| 64 + 80 * r.turn.unwrap() as usize)
        .collect();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turns_resend_an_answer_longer_than_the_kept_sample_whole() {
    // 600 tokens of the simulator's words are over 2000 characters, more than a record keeps
    // of its text: turn 2 must resend them all, in the closed loop and the open loop alike.
    let cfg = SimConfig {
        tokens_per_chunk: 10,
        speculative_steps: None,
        decode_d0_s: 0.001,
        ..quick_prefix_cache()
    };
    let answer = sim_answer(&cfg, 1, 600);
    assert!(answer.len() > 2000, "{}", answer.len());
    let closed = ["--concurrency", "1"].as_slice();
    let open = [
        "--rates",
        "50",
        "--arrival",
        "constant",
        "--max-concurrency",
        "1",
    ]
    .as_slice();
    for how in [closed, open] {
        let mut args = how.to_vec();
        args.extend([
            "--requests",
            "2",
            "--turns",
            "2",
            "--input-len",
            "64",
            "--output-len",
            "600",
            "--warmup",
            "0",
        ]);
        let s = sweep(cfg.clone(), &args).await;
        assert_eq!(s.received.len(), 2, "{how:?}");
        let words = s.received[1].split_whitespace().count();
        assert_eq!(words, 64 + 600 + 64, "{how:?}");
        let before = format!("{}{answer}\n\n", s.received[0]);
        assert!(
            s.received[1].starts_with(&before),
            "{how:?}: turn 2 does not resend turn 1 and its whole answer"
        );
        let p = &s.bundle.sweeps[0].points[0];
        assert_eq!(p.requests[1].cached_tokens, Some(64), "{how:?}");
        // The record's own sample stays short, the start of the same answer.
        let sample = p.output_sample.as_deref().expect("a sample");
        assert!(
            sample.len() < 2000 && answer.starts_with(sample),
            "{sample:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_max_rate_search_finds_the_rate_the_simulators_queue_predicts() {
    // One request at a time (max_running 1), each holding the server for exactly
    // S = 10 ms prefill + 8 steps of 5 ms = 50 ms: a single server of capacity μ = 20 req/s.
    // Below μ, evenly spaced arrivals never wait (TTFT = 10 ms). Above it, the k-th of them
    // waits k·(1/μ − 1/λ), so 90 % of 40 meet TTFT ≤ 50 ms (40 ms of room) while
    // 36·(1/20 − 1/λ) ≤ 0.04, up to λ = 20.45 req/s. The rate the model predicts is therefore
    // in [20, 20.45]; the search stops when its bracket is within 2 % of its upper end.
    let cfg = SimConfig {
        max_running: 1,
        prefill_a_s: 0.01,
        prefill_b_s: 0.0,
        prefill_c_s: 0.0,
        decode_d0_s: 0.005,
        decode_d1_s: 0.0,
        decode_kv_s: 0.0,
        ..fast()
    };
    let s = sweep(
        cfg,
        &[
            "--find-max-rate",
            "--goodput",
            "ttft=0.05",
            "--arrival",
            "constant",
            "--requests",
            "40",
            "--rate-precision",
            "0.02",
            "--input-len",
            "16",
            "--output-len",
            "9",
            "--warmup",
            "0",
        ],
    )
    .await;
    let kinds: Vec<SweepKind> = s.bundle.sweeps.iter().map(|w| w.kind).collect();
    assert_eq!(kinds, [SweepKind::Throughput, SweepKind::Rate]);
    let sw = &s.bundle.sweeps[1];
    let search = sw.rate.as_ref().unwrap().search.expect("the search");
    // The closed loop ran at the server's running limit and completed a little under μ: the
    // client's round trip adds to S.
    assert_eq!(search.closed_loop_concurrency, 1, "{search:?}");
    assert!(
        (17.0..=20.0).contains(&search.closed_loop_rps),
        "{search:?}"
    );
    let (found, missed) = (search.found_rps.unwrap(), search.failed_rps.unwrap());
    assert!(missed - found <= 0.02 * missed + 1e-9, "{search:?}");
    assert!(
        (20.0 * 0.98..=20.45).contains(&found),
        "found {found} req/s, the model says 20 to 20.45: {search:?}"
    );
    assert!(
        (20.0..=20.45 / 0.98).contains(&missed),
        "missed at {missed} req/s, the model says above 20: {search:?}"
    );
    // Every rate tried is a point, in rate order, judged on its goodput.
    let rates: Vec<f64> = sw
        .points
        .iter()
        .map(|p| p.rate.unwrap().offered_rps)
        .collect();
    assert!(rates.windows(2).all(|w| w[0] < w[1]), "{rates:?}");
    for p in &sw.points {
        let r = p.rate.unwrap().offered_rps;
        let met = p.goodput.unwrap().fraction >= 0.9;
        assert_eq!(met, r <= found, "{r} req/s: {:?}", p.goodput);
    }
    let headline = llmsweep_shared::headline::headline(sw).unwrap();
    assert!(
        headline.starts_with("max rate meeting the SLO (90 % of requests within TTFT ≤ 0.05 s): "),
        "{headline}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_rate_search_over_conversations_sends_turns_at_every_rate() {
    // One request at a time, 85 ms each, three-turn conversations throughout the search.
    let cfg = SimConfig {
        max_running: 1,
        prefill_a_s: 0.01,
        prefill_b_s: 0.0,
        prefill_c_s: 0.0,
        decode_d0_s: 0.005,
        decode_d1_s: 0.0,
        decode_kv_s: 0.0,
        ..quick_prefix_cache()
    };
    let s = three_turns(
        cfg,
        &[
            "--find-max-rate",
            "--goodput",
            "ttft=0.5",
            "--arrival",
            "constant",
            "--requests",
            "20",
            "--rate-precision",
            "0.5",
        ],
    )
    .await;
    let rate = s
        .bundle
        .sweeps
        .iter()
        .find(|w| w.kind == SweepKind::Rate)
        .expect("the search's rate sweep");
    let search = rate.rate.as_ref().unwrap().search.expect("the search");
    assert!(search.found_rps.is_some() || search.failed_rps.is_some());
    // Every request is a turn. The closed loop holds its conversations turn after turn, the
    // second turns served from the cache; an open-loop point at about the rate one turn takes
    // may or may not find a turn answered when the next arrives.
    for p in s.bundle.sweeps.iter().flat_map(|w| &w.points) {
        assert!(p.requests.iter().all(|r| r.turn.is_some()), "{:?}", p.rate);
    }
    let closed = &s.bundle.sweeps[0].points[0];
    let turns: std::collections::BTreeSet<u32> =
        closed.requests.iter().filter_map(|r| r.turn).collect();
    assert_eq!(turns.into_iter().collect::<Vec<_>>(), [0, 1, 2]);
    assert!(
        closed
            .requests
            .iter()
            .filter(|r| r.turn == Some(1))
            .all(|r| r.cached_tokens == Some(64))
    );
}

/// One request at a time, each holding the simulator about 50 ms (10 ms prefill, 8 steps of
/// 5 ms): a server of about 20 req/s.
fn one_at_a_time() -> SimConfig {
    SimConfig {
        max_running: 1,
        prefill_a_s: 0.01,
        prefill_b_s: 0.0,
        prefill_c_s: 0.0,
        decode_d0_s: 0.005,
        decode_d1_s: 0.0,
        decode_kv_s: 0.0,
        ..fast()
    }
}

/// The search's stop line and the rates it measured, from a finished search.
fn search_story(s: &crate::common::sim::Swept) -> (String, Vec<f64>) {
    use llmsweep::load::Recorded;
    let stopped = s
        .events
        .iter()
        .find_map(|e| match e {
            Recorded::Note(n) if n.starts_with("stopped: ") => Some(n.clone()),
            _ => None,
        })
        .expect("a line that says why the search stopped");
    let rate = s.bundle.sweeps.iter().find(|w| w.kind == SweepKind::Rate);
    let rates = rate.map_or(Vec::new(), |w| {
        w.points
            .iter()
            .map(|p| p.rate.unwrap().offered_rps)
            .collect()
    });
    (stopped, rates)
}

/// A search bounded in time: one that halves toward 0 or doubles without end fails here
/// instead of running for hours.
async fn bounded_search(cfg: SimConfig, args: &[&str]) -> crate::common::sim::Swept {
    tokio::time::timeout(std::time::Duration::from_secs(60), sweep(cfg, args))
        .await
        .expect("the search ends within a minute")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_rate_search_stops_at_what_the_client_could_offer() {
    // Every request meets a 5 s TTFT, but --max-concurrency 1 holds arrivals in the client
    // behind one 50 ms request: it cannot offer much more than 20 req/s, whatever is asked.
    // The search must not double on to claim tens of thousands.
    let s = bounded_search(
        one_at_a_time(),
        &[
            "--find-max-rate",
            "--goodput",
            "ttft=5",
            "--arrival",
            "constant",
            "--max-concurrency",
            "1",
            "--requests",
            "20",
            "--input-len",
            "16",
            "--output-len",
            "9",
            "--warmup",
            "0",
        ],
    )
    .await;
    let (stopped, rates) = search_story(&s);
    assert!(
        stopped.starts_with("stopped: the client could not offer more than "),
        "{stopped} (rates {rates:?})"
    );
    assert!(
        stopped.contains("--max-concurrency 1 holding arrivals"),
        "{stopped}"
    );
    let sw = s
        .bundle
        .sweeps
        .iter()
        .find(|w| w.kind == SweepKind::Rate)
        .unwrap();
    let search = sw.rate.as_ref().unwrap().search.expect("the search");
    let found = search.found_rps.expect("a rate that met the SLO");
    assert!(found <= 21.0, "found {found} req/s: {search:?} {rates:?}");
    // Nothing asked beyond twice the first rate, and every rate that counted was offered.
    assert!(
        rates.iter().all(|&r| r <= 2.0 * rates[0] + 1e-9),
        "{rates:?}"
    );
    for p in &sw.points {
        let r = p.rate.unwrap();
        if r.offered_rps <= found {
            assert!(r.achieved_rps.unwrap() >= 0.9 * r.offered_rps, "{r:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_rate_search_no_rate_can_meet_stops_instead_of_halving_toward_zero() {
    // The simulator's TTFT is at least its 10 ms prefill: a 1 ms bound is never met. Below
    // the server's 20 req/s no two requests are in flight at once, so lower rates cannot help.
    let s = bounded_search(
        one_at_a_time(),
        &[
            "--find-max-rate",
            "--goodput",
            "ttft=0.001",
            "--arrival",
            "constant",
            "--requests",
            "20",
            "--input-len",
            "16",
            "--output-len",
            "9",
            "--warmup",
            "0",
        ],
    )
    .await;
    let (stopped, rates) = search_story(&s);
    assert!(stopped.starts_with("stopped: even "), "{stopped}");
    assert!(
        stopped.contains("missed the SLO with never two requests in flight at once"),
        "{stopped}"
    );
    assert!(rates.len() <= 3, "{rates:?}");
    assert!(rates.iter().all(|&r| r >= 4.0), "{rates:?}");
    let sw = s
        .bundle
        .sweeps
        .iter()
        .find(|w| w.kind == SweepKind::Rate)
        .unwrap();
    let search = sw.rate.as_ref().unwrap().search.expect("the search");
    assert_eq!(search.found_rps, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_achieved_rate_of_a_timed_point_is_over_its_duration() {
    // --duration 3 at 0.5 req/s, evenly spaced: arrivals due at 0 and 2 s, both sent on
    // schedule. Over the 3 s window that is 2 / 3 req/s; the span of the sends (2 s, one
    // gap) would have said 2 / 4 = 0.5.
    let mut args = vec!["--rates", "0.5", "--arrival", "constant", "--duration", "3"];
    args.extend(SHORT);
    let s = sweep(fast(), &args).await;
    let p = &s.bundle.sweeps[0].points[0];
    assert_eq!(p.requests.len(), 2);
    let achieved = p.rate.unwrap().achieved_rps.unwrap();
    // The window ends as late as the last arrival was sent: a few ms on a busy machine.
    assert!(achieved <= 2.0 / 3.0 && achieved > 2.0 / 3.05, "{achieved}");
}
