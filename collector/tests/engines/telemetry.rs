//! Telemetry against live processes: the simulator's and llama-server's `/metrics` under load,
//! servers without metrics, and a fake `nvidia-smi` whose numbers make the energy integral
//! checkable by hand.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::engines::{self, Engine};
use futures_util::future::join_all;
use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep::telemetry::{Sampler, gpu, with_tokens};
use serde_json::{Value, json};

/// Every test finishes within this or fails.
const BOUND: Duration = Duration::from_secs(30);

const TICK: Duration = Duration::from_millis(50);

async fn bounded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(BOUND, f)
        .await
        .expect("test exceeded its time bound")
}

/// One streamed completion (`body` plus `"stream": true`), read to its end.
async fn stream_one(http: &reqwest::Client, url: &str, mut body: Value) {
    body["stream"] = json!(true);
    let text = http
        .post(format!("{url}/v1/completions"))
        .json(&body)
        .send()
        .await
        .expect("request sent")
        .error_for_status()
        .expect("request accepted")
        .text()
        .await
        .expect("stream read");
    assert!(
        text.ends_with("data: [DONE]\n\n"),
        "stream ended early: {text}"
    );
}

/// A loopback URL where nothing listens.
async fn closed_url() -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sim_metrics_follow_the_load_and_counters_match_the_tokens() {
    bounded(async {
        let cfg = SimConfig {
            max_running: 2,
            ..SimConfig::preset(Preset::Fast)
        };
        let sim = SimServer::start(cfg, 0).await.unwrap();
        let url = sim.url();
        let http = reqwest::Client::new();
        let origin = Instant::now();
        let sampler = Sampler::start_with(http.clone(), &url, origin, TICK, None).await;

        // Six requests on two slots: three waves of about 60 × 4.25 ms each.
        let (n, max_tokens) = (6, 60);
        let body =
            json!({"model": "sim-fast", "prompt": "one two three four", "max_tokens": max_tokens});
        join_all((0..n).map(|_| stream_one(&http, &url, body.clone()))).await;
        let (server, gpus) = sampler.stop().await;
        let stats = sim.stats();
        sim.shutdown().await;

        assert_eq!(gpus, None, "no nvidia-smi was given");
        let s = server.expect("the sim's /metrics is vLLM-shaped");
        assert_eq!(s.scheme, llmsweep_shared::bundle::MetricScheme::Vllm);
        assert!(s.t_s.len() >= 5, "only {} samples", s.t_s.len());
        assert!(s.t_s.windows(2).all(|w| w[0] < w[1]), "times increase");
        for (name, series) in &s.gauges {
            assert_eq!(series.len(), s.t_s.len(), "{name} is aligned with t_s");
        }
        let running = &s.gauges["vllm:num_requests_running"];
        assert!(running.iter().flatten().any(|r| *r > 0.0), "{running:?}");
        assert!(s.gauges.contains_key("vllm:kv_cache_usage_perc"));
        let peak_running = s.peak_running.expect("running was sampled");
        assert!((1.0..=2.0).contains(&peak_running), "{peak_running}");
        let peak_queue = s.peak_queue.expect("waiting was sampled");
        assert!((1.0..=4.0).contains(&peak_queue), "{peak_queue}");
        // Two running requests of a few tokens hold a sliver of the 1M-token cache.
        let peak_kv = s.peak_kv.expect("KV usage was sampled");
        assert!(peak_kv > 0.0 && peak_kv < 0.01, "{peak_kv}");
        assert_eq!(Some(peak_kv), s.peak_of("vllm:kv_cache_usage_perc"));

        let delta = |name: &str| s.counters_after[name] - s.counters_before[name];
        let generated = f64::from(n * max_tokens);
        assert_eq!(delta("vllm:generation_tokens_total"), generated);
        assert_eq!(delta("vllm:prompt_tokens_total"), f64::from(n * 4));
        assert_eq!(
            s.counters_after["vllm:generation_tokens_total"],
            stats.generation_tokens as f64
        );
        assert_eq!(s.counters_before["vllm:generation_tokens_total"], 0.0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_without_known_metrics_give_nothing_quickly() {
    bounded(async {
        let sim = SimServer::start(SimConfig::preset(Preset::Fast), 0)
            .await
            .unwrap();
        let http = reqwest::Client::new();
        let not_found = format!("{}/no-such-prefix", sim.url());
        // The `#` makes the appended `/metrics` a fragment, so this scrapes `/v1/models`: JSON,
        // not Prometheus text, so no scheme is recognised.
        let json_not_text = format!("{}/v1/models#", sim.url());
        for base in [closed_url().await, not_found, json_not_text] {
            let began = Instant::now();
            let sampler = Sampler::start_with(http.clone(), &base, began, TICK, None).await;
            tokio::time::sleep(TICK * 3).await;
            assert_eq!(sampler.stop().await, (None, None), "{base}");
            assert!(began.elapsed() < Duration::from_secs(2), "{base} took long");
        }
        sim.shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_server_counters_match_the_tokens() {
    let Some(server) = engines::start(Engine::LlamaServer) else {
        return;
    };
    bounded(async {
        let url = server.url();
        let http = reqwest::Client::new();
        let sampler = Sampler::start_with(http.clone(), url, Instant::now(), TICK, None).await;
        let (n, max_tokens) = (6u32, 100u32);
        join_all((0..n).map(|i| {
            let body = json!({
                "prompt": format!("request {i} says hello to the server"),
                "max_tokens": max_tokens,
                "ignore_eos": true,
            });
            stream_one(&http, url, body)
        }))
        .await;
        let (s, _) = sampler.stop().await;
        let s = s.expect("llama-server runs with --metrics");
        assert_eq!(s.scheme, llmsweep_shared::bundle::MetricScheme::Llamacpp);
        assert!(s.t_s.len() >= 2);
        assert!(s.gauges.contains_key("llamacpp:requests_processing"));
        let delta = |name: &str| s.counters_after[name] - s.counters_before[name];
        assert_eq!(
            delta("llamacpp:tokens_predicted_total"),
            f64::from(n * max_tokens),
            "server log:\n{}",
            server.log_tail(20)
        );
        assert!(delta("llamacpp:prompt_tokens_total") > 0.0);
        assert!(delta("llamacpp:n_decode_total") > 0.0);
    })
    .await;
}

/// A fake `nvidia-smi` that answers both queries with three GPUs: 250 W and 100 W, and one
/// that cannot say its power. Any other command line exits 2.
const FAKE_SMI: &str = r#"#!/bin/sh
if [ "$2" != "--format=csv,noheader,nounits" ]; then exit 2; fi
case "$1" in
  --query-gpu=index,name,utilization.gpu,memory.used,memory.total,power.draw)
    echo "0, NVIDIA RTX A6000, 97, 45123, 49140, 250.00"
    echo "1, NVIDIA RTX A6000, 35, 20480, 49140, 100.00"
    echo "2, NVIDIA T400, [Not Supported], 10, 1875, [N/A]" ;;
  --query-gpu=index,name,memory.total,driver_version)
    echo "0, NVIDIA RTX A6000, 49140, 550.54.15"
    echo "1, NVIDIA RTX A6000, 49140, 550.54.15"
    echo "2, NVIDIA T400, 1875, 550.54.15" ;;
  *) exit 2 ;;
esac
"#;

/// Writes an executable script and runs it once, so that no other thread's fork still holds
/// it open for writing (which makes `exec` fail with "text file busy").
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match std::process::Command::new(&path).output() {
            Err(e) if e.raw_os_error() == Some(26) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => {
                other.expect("script runs");
                return path;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fake_nvidia_smi_series_and_energy() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let smi = script(dir.path(), "nvidia-smi", FAKE_SMI);

        let inventory = gpu::inventory_with(&smi).await;
        assert_eq!(inventory.len(), 3);
        assert_eq!(inventory[2].name, "NVIDIA T400");
        assert_eq!(inventory[2].memory_total_mib, Some(1875.0));
        assert_eq!(inventory[0].driver.as_deref(), Some("550.54.15"));

        let origin = Instant::now();
        let sampler = Sampler::start_with(
            reqwest::Client::new(),
            &closed_url().await,
            origin,
            TICK,
            Some(&smi),
        )
        .await;
        tokio::time::sleep(TICK * 6).await;
        let (server, samples) = sampler.stop().await;
        assert_eq!(server, None);
        let s = samples.expect("the fake answers");

        let n = s.t_s.len();
        assert!(n >= 3, "only {n} samples");
        assert!(s.t_s.windows(2).all(|w| w[0] < w[1]), "times increase");
        assert_eq!(
            s.gpus.iter().map(|g| g.index).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        let (a, b, c) = (&s.gpus[0], &s.gpus[1], &s.gpus[2]);
        assert_eq!(a.name, "NVIDIA RTX A6000");
        assert_eq!(a.util_pct, vec![Some(97.0); n]);
        assert_eq!(a.mem_used_mib, vec![Some(45123.0); n]);
        assert_eq!(a.mem_total_mib, Some(49140.0));
        assert_eq!(b.power_w, vec![Some(100.0); n]);
        assert_eq!(c.util_pct, vec![None; n]);
        assert_eq!(c.power_w, vec![None; n]);
        assert_eq!(c.mem_used_mib, vec![Some(10.0); n]);

        // Constant power: the trapezoids add up to (250 W + 100 W) × the sampled span; the GPU
        // without a power reading adds nothing.
        let span = s.t_s[n - 1] - s.t_s[0];
        let energy = s.energy_j.expect("two GPUs report power");
        assert!(
            (energy - 350.0 * span).abs() < 1e-9,
            "{energy} J over {span} s"
        );
        assert_eq!(s.tokens_per_joule, None);
        let per_joule = with_tokens(s, 1000)
            .tokens_per_joule
            .expect("energy is positive");
        assert!((per_joule - 1000.0 / energy).abs() < 1e-12);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_or_failing_nvidia_smi_gives_none() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nvidia-smi");
        let broken = script(
            dir.path(),
            "broken-smi",
            "#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\nexit 9\n",
        );
        let closed = closed_url().await;
        for program in [&missing, &broken] {
            assert!(gpu::inventory_with(program).await.is_empty());
            assert_eq!(gpu::read_gpus(program).await, None);
            let sampler =
                Sampler::start_with(reqwest::Client::new(), &closed, Instant::now(), TICK, Some(program))
                    .await;
            tokio::time::sleep(TICK * 2).await;
            assert_eq!(sampler.stop().await, (None, None), "{}", program.display());
        }
    })
    .await;
}

/// A `/metrics` whose first connection is dropped without an answer (as a server closes an
/// idle pooled connection) still gives the point its boundary counters: the fast failure is
/// tried again. A scrape that times out is not.
#[tokio::test]
async fn a_dropped_connection_does_not_cost_the_boundary_counters() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/metrics", listener.local_addr().unwrap());
    let served = tokio::spawn(async move {
        let (first, _) = listener.accept().await.unwrap();
        drop(first);
        let (mut second, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 4096];
        let _ = second.read(&mut buf).await.unwrap();
        let body = "vllm:num_requests_running 3\nvllm:generation_tokens_total 120\n";
        let resp = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        second.write_all(resp.as_bytes()).await.unwrap();
    });
    let http = reqwest::Client::new();
    let rec = bounded(llmsweep::telemetry::server::begin(
        &http,
        &url,
        Instant::now(),
    ))
    .await;
    assert!(rec.is_some(), "the second try answered");
    bounded(served).await.unwrap();

    // A listener that accepts and never answers: one timeout, no further tries.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/metrics", silent.local_addr().unwrap());
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((c, _)) = silent.accept().await {
            held.push(c);
        }
    });
    let started = Instant::now();
    let rec = bounded(llmsweep::telemetry::server::begin(
        &http,
        &url,
        Instant::now(),
    ))
    .await;
    assert!(rec.is_none());
    let took = started.elapsed();
    assert!(
        took < llmsweep::telemetry::server::SCRAPE_TIMEOUT * 2,
        "a timed-out scrape is not tried again: {took:?}"
    );
    hold.abort();
}
