//! Servers that answer to hurt the client: a redirect to another address, a stream line without
//! end, a usage count no stream could carry, a model list of 100 000 ids, escape sequences in
//! what they say. The run must keep every request at the address given, stay bounded in memory
//! and time, not believe what cannot be true, and say what happened in its own words.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::header::LOCATION;
use axum::http::{StatusCode, Uri};
use bytes::Bytes;
use llmsweep::load::Interrupt;
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{ErrorKind, FlagKind, PointStatus};

use crate::common::hostile::{Hostile, event_stream, listing};
use crate::common::sim::{SERIAL, plan, run_silently};

/// A router sending every request it gets to the same path at `to` with a 307.
fn redirecting_to(to: &str) -> Router {
    let to = to.to_string();
    Router::new().fallback(move |uri: Uri| {
        let target = format!("{to}{uri}");
        async move { (StatusCode::TEMPORARY_REDIRECT, [(LOCATION, target)]) }
    })
}

/// What a one-level sweep of `args` against `url` wrote, within `limit`.
async fn swept(url: &str, args: &[&str], limit: Duration) -> Bundle {
    let dir = tempfile::tempdir().unwrap();
    let p = plan(url, dir.path(), args);
    let outcome = tokio::time::timeout(limit, run_silently(&p, vec![], Interrupt::default()))
        .await
        .expect("the sweep ends in time")
        .expect("the sweep runs");
    Bundle::from_json(&std::fs::read_to_string(&outcome.path).unwrap()).unwrap()
}

/// `llmsweep throughput` against `url`, writing into `out`, with none of the environment's
/// server, key or credentials.
fn throughput(url: &str, out: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_llmsweep"));
    cmd.args(["throughput", "--url", url, "--out", out])
        .env_remove("LLMSWEEP_URL")
        .env_remove("LLMSWEEP_API_KEY")
        .env_remove("OPENAI_API_KEY");
    cmd
}

/// A server listing model `m` that takes every generation request and never answers it.
async fn silent_server() -> Hostile {
    let silent = axum::routing::post(|| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        StatusCode::OK
    });
    Hostile::start(listing(&["m"]).route("/v1/completions", silent)).await
}

const ONE_REQUEST: [&str; 10] = [
    "--concurrency",
    "1",
    "--requests",
    "1",
    "--warmup",
    "0",
    "--input-len",
    "8",
    "--output-len",
    "8",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_at_the_start_is_not_followed_and_names_its_target() {
    let _turn = SERIAL.lock().await;
    let elsewhere = Hostile::start(Router::new().fallback(|| async { "listening" })).await;
    let server = Hostile::start(redirecting_to(&elsewhere.url)).await;
    let dir = tempfile::tempdir().unwrap();
    let p = plan(
        &server.url,
        dir.path(),
        &["--header", "X-Api-Key: t0psecret"],
    );
    let err = run_silently(&p, vec![], Interrupt::default())
        .await
        .unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        format!(
            "{}/v1/models: the server answered 307 Temporary Redirect to {}/v1/models: llmsweep does not follow redirects, so no header goes to another host; give the address it redirects to with --url",
            server.url, elsewhere.url
        )
    );
    assert!(
        server.hits() >= 9,
        "every probe was sent: {}",
        server.hits()
    );
    assert_eq!(
        elsewhere.hits(),
        0,
        "a request went to the redirect's target"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirected_generation_request_fails_naming_the_target() {
    let _turn = SERIAL.lock().await;
    let elsewhere = Hostile::start(Router::new().fallback(|| async { "listening" })).await;
    // The model list is answered; everything else (generation, tokenizer, /metrics) redirects.
    let server = Hostile::start(listing(&["m"]).merge(redirecting_to(&elsewhere.url))).await;
    let b = swept(
        &server.url,
        &["--concurrency", "1", "--requests", "2", "--warmup", "1"],
        Duration::from_secs(60),
    )
    .await;
    let p = &b.sweeps[0].points[0];
    assert_eq!(p.status, PointStatus::Failed);
    let words = format!(
        "the server answered 307 Temporary Redirect to {}/v1/completions: llmsweep does not follow redirects, so no header goes to another host; give the address it redirects to with --url",
        elsewhere.url
    );
    for r in &p.requests {
        let e = r.error.as_ref().unwrap();
        assert_eq!((e.kind, e.status), (ErrorKind::Http, Some(307)));
        assert_eq!(e.message, words);
    }
    assert_eq!(
        p.reason.as_deref(),
        Some(format!("all 2 requests failed; HTTP 307: {words}").as_str()),
        "llmsweep's words are not the server's"
    );
    assert_eq!(
        elsewhere.hits(),
        0,
        "a request went to the redirect's target"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_line_without_end_fails_the_request_in_bounded_time() {
    let _turn = SERIAL.lock().await;
    let endless = axum::routing::post(|| async {
        let start = futures_util::stream::once(async {
            Ok::<_, std::convert::Infallible>(Bytes::from_static(b"data: "))
        });
        let piece = Bytes::from(vec![b'x'; 64 * 1024]);
        let rest = futures_util::stream::repeat_with(move || Ok(piece.clone()));
        event_stream(Body::from_stream(futures_util::StreamExt::chain(
            start, rest,
        )))
    });
    let server = Hostile::start(listing(&["m"]).route("/v1/completions", endless)).await;
    let b = swept(&server.url, &ONE_REQUEST, Duration::from_secs(30)).await;
    let p = &b.sweeps[0].points[0];
    let e = p.requests[0].error.as_ref().unwrap();
    assert_eq!(e.kind, ErrorKind::Protocol);
    assert!(
        e.message.starts_with("a stream line grew past 1 MiB ("),
        "{}",
        e.message
    );
    assert!(
        e.message.ends_with(
            "more than any answer needs: the server sends something other than a token stream"
        ),
        "{}",
        e.message
    );
    let reason = p.reason.as_deref().unwrap();
    assert!(
        reason.starts_with("all 1 requests failed; a stream line grew past 1 MiB"),
        "not the server's words: {reason}"
    );
}

/// An answer whose headers never end (400 of 200 bytes each, 80 KB) fails its request in
/// llmsweep's words, without the head being held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_head_past_the_read_buffer_fails_the_request() {
    let _turn = SERIAL.lock().await;
    let padded = axum::routing::post(|| async {
        let mut r = axum::http::Response::builder().header("content-type", "text/event-stream");
        for i in 0..400 {
            r = r.header(format!("x-pad-{i}"), "y".repeat(200));
        }
        r.body(Body::from("data: [DONE]\n\n")).unwrap_or_default()
    });
    let server = Hostile::start(listing(&["m"]).route("/v1/completions", padded)).await;
    let b = swept(&server.url, &ONE_REQUEST, Duration::from_secs(30)).await;
    let e = b.sweeps[0].points[0].requests[0].error.as_ref().unwrap();
    assert_eq!(e.kind, ErrorKind::Protocol);
    assert_eq!(
        e.message,
        format!(
            "{}/v1/completions: the answer's status line and headers ran past 8 KiB, more than any server needs: llmsweep reads no further",
            server.url
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usage_count_no_stream_could_carry_is_not_believed() {
    let _turn = SERIAL.lock().await;
    let absurd = axum::routing::post(|| async {
        let mut body = String::new();
        for _ in 0..8 {
            body.push_str("data: {\"choices\":[{\"index\":0,\"text\":\" w\"}]}\n\n");
        }
        body.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}}],\"usage\":{{\"prompt_tokens\":8,\"completion_tokens\":{}}}}}\n\ndata: [DONE]\n\n",
            u64::MAX
        ));
        event_stream(Body::from(body))
    });
    let server = Hostile::start(listing(&["m"]).route("/v1/completions", absurd)).await;
    let mut args = ONE_REQUEST.to_vec();
    args[3] = "2";
    let b = swept(&server.url, &args, Duration::from_secs(30)).await;
    let p = &b.sweeps[0].points[0];
    assert_eq!(p.status, PointStatus::Ok);
    for r in &p.requests {
        assert!(r.is_ok(), "{:?}", r.error);
        assert_eq!(
            (r.output_tokens, r.chunks, r.tokens_estimated),
            (8, 8, true)
        );
    }
    let s = p.summary.as_ref().unwrap();
    assert_eq!(s.output_tokens, 16);
    let f = p
        .flags
        .iter()
        .find(|f| f.kind == FlagKind::TokensEstimated)
        .unwrap();
    assert_eq!(
        f.message,
        "2 of 2 requests had no usage from the server, or one far beyond what they streamed; output tokens were counted from stream chunks"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_100k_models_is_read_and_counted() {
    let _turn = SERIAL.lock().await;
    let ids: Vec<String> = (0..100_000).map(|i| format!("model-{i:05}")).collect();
    let server = Hostile::start(listing(&ids)).await;
    let dir = tempfile::tempdir().unwrap();
    let p = plan(&server.url, dir.path(), &["--model", "nope"]);
    let err = run_silently(&p, vec![], Interrupt::default())
        .await
        .unwrap_err();
    let first: Vec<&str> = ids[..20].iter().map(String::as_str).collect();
    assert_eq!(
        format!("{err:#}"),
        format!(
            "the server at {} does not serve the model \"nope\"; it serves 100000 models, the first 20: {}, …\n  Pass one of these with --model.",
            server.url,
            first.join(", ")
        )
    );
}

/// What the terminal gets of a server's words: its model ids and its error texts arrive as
/// text, never as escape sequences.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_sequences_from_the_server_reach_the_terminal_as_text() {
    let _turn = SERIAL.lock().await;
    let failing = axum::routing::post(|| async {
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            "{\"error\":{\"message\":\"boom\\u001b[2J\\u001b]0;pwned\\u0007\"}}",
        )
    });
    let server = Hostile::start(
        listing(&["m", "evil\u{1b}]52;c;aGk=\u{7}"]).route("/v1/completions", failing),
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap().to_string();
    let url = server.url.clone();
    let run = |extra: &'static [&'static str]| {
        let (url, out) = (url.clone(), out.clone());
        tokio::task::spawn_blocking(move || throughput(&url, &out).args(extra).output().unwrap())
    };
    let refused = run(&["--model", "nope"]).await.unwrap();
    let failed = run(&[
        "--model",
        "m",
        "--concurrency",
        "1",
        "--requests",
        "1",
        "--warmup",
        "1",
        "--input-len",
        "8",
        "--output-len",
        "8",
    ])
    .await
    .unwrap();
    for o in [&refused, &failed] {
        let all = [&o.stdout[..], &o.stderr[..]].concat();
        let shown = String::from_utf8_lossy(&all);
        assert!(!all.contains(&0x1b) && !all.contains(&0x07), "{shown:?}");
    }
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("evil\\u{1b}]52;c;aGk=\\u{7}"), "{err}");
    let out = String::from_utf8_lossy(&failed.stdout);
    assert!(
        out.contains("the server said: HTTP 500: boom\\u{1b}[2J\\u{1b}]0;pwned\\u{7}"),
        "{out}"
    );
}

/// A server that takes the warm-up request and never answers it: the terminal is told, while
/// the run waits, that the warm-up has not finished and how long it may wait, instead of
/// staying blank for the whole `--timeout`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_up_left_unanswered_is_told_while_the_run_waits() {
    let _turn = SERIAL.lock().await;
    let server = silent_server().await;
    let dir = tempfile::tempdir().unwrap();
    let (url, out) = (server.url.clone(), dir.path().to_str().unwrap().to_string());
    let said = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut child = throughput(&url, &out)
            .args([
                "--model",
                "m",
                "--concurrency",
                "1",
                "--requests",
                "1",
                "--warmup",
                "1",
            ])
            .args(["--input-len", "8", "--output-len", "8", "--timeout", "60"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        let mut said = None;
        for line in std::io::BufReader::new(child.stderr.take().unwrap()).lines() {
            let line = line.unwrap();
            if line.contains("warm-up:") {
                said = Some((line, started.elapsed()));
                break;
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        said
    })
    .await
    .unwrap();
    let (line, after) = said.expect("the run says the warm-up is waiting");
    assert!(
        line.starts_with(
            "warm-up: its request has not finished after 15 s; waiting up to 60 s (--timeout)"
        ),
        "{line}"
    );
    // Told at 15 s, not at the timeout's 60.
    assert!(after < Duration::from_secs(40), "{after:?}");
}

/// A warm-up the server takes and never answers within `--timeout` stops the run before its
/// first level: each level would wait as long for every request. The bundle is written, with
/// no level and `"complete": false`, and the exit status says nothing was measured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_up_with_no_token_within_the_timeout_stops_the_run() {
    let _turn = SERIAL.lock().await;
    let server = silent_server().await;
    let levels = ["--concurrency", "1,2", "--requests", "2", "--timeout", "3"];
    let (o, b, took) = tiny_run(&server.url, &levels).await;
    // The warm-up's 3 s, not two levels' more.
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr).replace("\n  ", " ");
    assert!(
        err.contains("stopping: the server took the warm-up request and sent no token in 3 s (--timeout), so no level is run"),
        "{err}"
    );
    assert!(err.contains("error: no level was measured"), "{err}");
    assert!(!b.complete);
    assert!(
        b.sweeps.iter().all(|w| w.points.is_empty()),
        "{:?}",
        b.sweeps
    );
}

/// A server listing model `m` that streams a whole 8-token answer to its first `good`
/// generation requests and refuses every later one with a 400.
async fn refusing_after(good: usize) -> Hostile {
    answering(good, false).await
}

/// A server listing model `m` that streams a whole 8-token answer to its first `good`
/// generation requests and then takes every request and never answers (`silent`), or refuses
/// it with a 400.
async fn answering(good: usize, silent: bool) -> Hostile {
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let post = axum::routing::post(move || {
        let n = served.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move {
            if n >= good && silent {
                tokio::time::sleep(Duration::from_secs(3600)).await;
            }
            if n >= good {
                let body = r#"{"error":{"message":"model m is not loaded"}}"#;
                return axum::response::Response::builder()
                    .status(StatusCode::BAD_REQUEST)
                    .header("content-type", "application/json")
                    .body(Body::from(body))
                    .unwrap();
            }
            let mut s = String::new();
            for i in 0..8 {
                let finish = if i == 7 { r#""length""# } else { "null" };
                s.push_str(&format!(
                    "data: {{\"choices\":[{{\"index\":0,\"text\":\"t{i}\",\"finish_reason\":{finish}}}]}}\n\n"
                ));
            }
            s.push_str("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":8,\"total_tokens\":16}}\n\ndata: [DONE]\n\n");
            event_stream(Body::from(s))
        }
    });
    Hostile::start(listing(&["m"]).route("/v1/completions", post)).await
}

/// `llmsweep throughput --model m --warmup 1` of 8-token requests and `args` against `url`:
/// its output, the bundle it wrote (the only one), and how long it took.
async fn tiny_run(url: &str, args: &[&str]) -> (std::process::Output, Bundle, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let (url, out) = (url.to_string(), dir.path().to_str().unwrap().to_string());
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let started = std::time::Instant::now();
    let o = tokio::task::spawn_blocking(move || {
        throughput(&url, &out)
            .args([
                "--model",
                "m",
                "--warmup",
                "1",
                "--input-len",
                "8",
                "--output-len",
                "8",
            ])
            .args(&args)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let took = started.elapsed();
    let bundles: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(bundles.len(), 1, "{bundles:?}");
    let b = Bundle::from_json(&std::fs::read_to_string(&bundles[0]).unwrap()).unwrap();
    (o, b, took)
}

/// Each level of the bundle's first sweep and how it ended.
fn statuses(b: &Bundle) -> Vec<(u32, PointStatus)> {
    b.sweeps[0]
        .points
        .iter()
        .map(|p| (p.concurrency, p.status))
        .collect()
}

/// A server that refuses every request: the run stops after its first level, saying why and
/// which levels it did not run, instead of sending each of them to be refused too. The first
/// level is in the bundle as measured, the bundle is not complete, and the exit status is 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_every_request_stops_the_run_after_its_first_level() {
    let _turn = SERIAL.lock().await;
    let server = refusing_after(0).await;
    let (o, b, _) = tiny_run(&server.url, &["--concurrency", "1,2,4", "--requests", "2"]).await;
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr).replace("\n  ", " ");
    assert!(
        err.contains("stopping: no request of C=1, the run's first point, succeeded (its row says why), and the points after it would fail the same way; not run: C=2, C=4"),
        "{err}"
    );
    assert!(err.contains("model m is not loaded"), "{err}");
    assert!(!b.complete);
    let levels = statuses(&b);
    assert_eq!(levels, [(1, PointStatus::Failed)]);
    // C=1 sent its two requests, each refused.
    let generations = b.sweeps[0].points[0].requests.len();
    assert_eq!(generations, 2);
}

/// A level refused whole after an earlier one succeeded is a measurement of the server at that
/// load: the sweep goes on to the next level.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_refused_after_one_that_succeeded_does_not_stop_the_sweep() {
    let _turn = SERIAL.lock().await;
    // The warm-up and C=1's two requests are served; C = 2 and 4 are refused.
    let server = refusing_after(3).await;
    let (o, b, _) = tiny_run(&server.url, &["--concurrency", "1,2,4", "--requests", "2"]).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("stopping:"), "{err}");
    let levels = statuses(&b);
    assert_eq!(
        levels,
        [
            (1, PointStatus::Ok),
            (2, PointStatus::Failed),
            (4, PointStatus::Failed)
        ]
    );
    assert!(b.complete);
}

/// A server that answers the warm-up and then takes every request and answers none: the first
/// level ends at its time cap, waits a grace measured by the warm-up's request (none of its own
/// finished to measure it by) instead of `--timeout`, and the run stops there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_silent_after_the_warm_up_is_given_up_on_after_the_first_level() {
    let _turn = SERIAL.lock().await;
    let server = answering(1, true).await;
    let levels = ["--concurrency", "1,2", "--max-level-time", "2"];
    let (o, b, took) = tiny_run(&server.url, &levels).await;
    // The 2 s cap and the least grace, 10 s: not --timeout's 600 s.
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr).replace("\n  ", " ");
    assert!(err.contains("stopping: no request of C=1"), "{err}");
    let p = &b.sweeps[0].points[0];
    assert_eq!(p.concurrency, 1);
    let e = p.requests[0].error.as_ref().unwrap();
    assert_eq!(e.kind, ErrorKind::Timeout);
    assert!(
        e.message
            .contains("one request alone in the warm-up, as the level finished none"),
        "{}",
        e.message
    );
}
