//! One selftest level: start the endpoint, drive it with the collector's own load loop and
//! client, and summarise what the client sustained and how far its timestamps were off.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use llmsweep_shared::bundle::{Api, SelftestLevel, SelftestMode};
use llmsweep_shared::metrics::Stats;

use crate::load::plan::secrets::Credentials;
use crate::load::run::client::{Client, LoadHttp};
use crate::load::run::generator::{self, Interrupt, LoadSpec, StopRule};
use crate::load::run::stream::trace::Finished;
use crate::load::server::host;
use crate::load::workload::{PromptBuilder, TokenModel};

use super::endpoint::{Endpoint, Pacing};
use super::wire;

/// Words in each selftest prompt: small, so the request is cheap and the stream is what costs.
const INPUT_LEN: u64 = 16;

/// One level to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelSpec {
    pub pacing: Pacing,
    pub concurrency: u32,
    pub requests: u64,
    pub output_len: u64,
}

/// Where a level's endpoint is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EndpointAt {
    /// A fresh one in this process, on a thread and runtime of its own, for each level.
    Own,
    /// One already serving at this URL (`llmsweep selftest --serve` in another process, so
    /// the client has the process, its open files and its CPU time to itself).
    External(String),
}

/// Runs one level against a fresh endpoint or the external one.
pub(crate) async fn run_level(
    spec: LevelSpec,
    at: &EndpointAt,
    timeout: Duration,
    interrupt: &Interrupt,
) -> anyhow::Result<SelftestLevel> {
    let (own, url) = match at {
        EndpointAt::Own => {
            let e = Endpoint::start(spec.pacing, (Ipv4Addr::LOCALHOST, 0).into()).await?;
            let url = e.url();
            (Some(e), url)
        }
        EndpointAt::External(url) => (None, url.clone()),
    };
    let http = LoadHttp::new(&Credentials::default(), spec.concurrency as usize, &url)?;
    let sources = http.sources() as u32;
    let client = Client::new(http, &url, Api::Completions, wire::MODEL.into(), timeout);
    let prompts = PromptBuilder::new(
        1,
        Some(1),
        TokenModel::Estimated {
            tokens_per_word: 1.0,
            added: 0,
        },
    );
    let load = LoadSpec {
        concurrency: spec.concurrency,
        stop: StopRule::Count(spec.requests),
        input_len: INPUT_LEN,
        output_len: spec.output_len,
        stream: 0,
        pass: None,
        open: None,
        spread: 0.0,
        turns: 1,
    };
    // The client's capacity, not a connection storm: every stream's connection is open
    // before the level starts, as in a sweep.
    client.preopen(spec.concurrency).await;
    let reset = host::reset_peak_rss();
    let cpu_before = host::client_cpu_fine_s();
    // The records count from `origin`; the events' send stamps are on the monotonic clock,
    // which `clock` sets against it.
    let origin = Instant::now();
    let clock = wire::Clock::new(origin);
    let result = generator::run(
        Arc::new(client),
        Arc::new(prompts),
        load,
        origin,
        interrupt,
        |_| {},
    )
    .await;
    let cpu = match (cpu_before, host::client_cpu_fine_s()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let peak = host::peak_rss_bytes().filter(|_| reset || cfg!(target_os = "linux"));
    if let Some(endpoint) = own {
        endpoint.shutdown().await;
    }
    let mut level = summarise(spec, &result.finished, clock, cpu, peak);
    level.source_addresses = sources;
    Ok(level)
}

/// A level's summary from its finished requests, the client's CPU seconds and peak memory.
pub(crate) fn summarise(
    spec: LevelSpec,
    finished: &[Finished],
    clock: wire::Clock,
    cpu_s: Option<f64>,
    peak_rss_bytes: Option<u64>,
) -> SelftestLevel {
    let ok: Vec<&Finished> = finished.iter().filter(|f| f.record.is_ok()).collect();
    let exact = ok
        .iter()
        .filter(|f| f.record.output_tokens == spec.output_len && !f.record.tokens_estimated)
        .count() as u64;
    let first = finished
        .iter()
        .map(|f| f.record.start_s)
        .fold(f64::INFINITY, f64::min);
    let last = finished
        .iter()
        .map(|f| f.record.start_s + f.record.e2e_s)
        .fold(f64::NEG_INFINITY, f64::max);
    let wall_s = if finished.is_empty() {
        0.0
    } else {
        last - first
    };
    let tokens = ok
        .iter()
        .map(|f| f.record.output_tokens)
        .fold(0, u64::saturating_add);
    let events = ok
        .iter()
        .map(|f| f.record.chunks)
        .fold(0, u64::saturating_add);
    let per_s = |n: u64| if wall_s > 0.0 { n as f64 / wall_s } else { 0.0 };
    let (mode, tokens_per_event, first_event_s, interval_s) = match spec.pacing {
        Pacing::FlatOut { per_event } => (SelftestMode::FlatOut, per_event, None, None),
        Pacing::Scheduled { first, interval } => (
            SelftestMode::Scheduled,
            1,
            Some(first.as_secs_f64()),
            Some(interval.as_secs_f64()),
        ),
    };
    let (ttft_error_s, itl_error_s, first_event_lag_s) = match first_event_s {
        Some(first) => {
            let e = timing_errors(&ok, clock, first);
            (
                Stats::from_values(e.ttft),
                Stats::from_values(e.itl),
                Stats::from_values(e.lag),
            )
        }
        None => (None, None, None),
    };
    SelftestLevel {
        mode,
        tokens_per_event,
        concurrency: spec.concurrency,
        requests: finished.len() as u64,
        ok: ok.len() as u64,
        exact,
        commonest_error: commonest_error(finished),
        new_connections: finished
            .iter()
            .filter(|f| f.record.setup.as_ref().is_some_and(|s| s.new_connection))
            .count() as u64,
        output_len: spec.output_len,
        source_addresses: 1,
        first_event_s,
        interval_s,
        wall_s,
        tokens,
        events,
        tok_s: per_s(tokens),
        events_s: per_s(events),
        cpu_us_per_token: cpu_s
            .filter(|_| tokens > 0)
            .map(|c| c * 1e6 / tokens as f64),
        peak_rss_bytes,
        ttft_error_s,
        itl_error_s,
        first_event_lag_s,
    }
}

/// The error message most failed requests share (its first 200 characters), and how many.
fn commonest_error(finished: &[Finished]) -> Option<(String, u64)> {
    let mut counts = std::collections::HashMap::<String, u64>::new();
    for e in finished.iter().filter_map(|f| f.record.error.as_ref()) {
        *counts
            .entry(e.message.chars().take(200).collect())
            .or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
}

/// What the stamps of scheduled requests say, seconds.
struct TimingErrors {
    /// Per request: the client's TTFT minus the true one.
    ttft: Vec<f64>,
    /// Per gap whose two stamps the kept text holds: the client's gap minus the stamps' gap.
    itl: Vec<f64>,
    /// Per request: its first event's send time minus its schedule.
    lag: Vec<f64>,
}

/// The client's measurements of scheduled requests against the endpoint's stamps.
///
/// A request's first token arrived at `start_s + ttft_s` on the shared clock and was sent at
/// its first stamp; gap `i` the client measured (`itl_gaps_s[i]`, one token per event) is
/// compared with `stamp[i + 1] − stamp[i]`; the first event was due at `start_s + first`.
fn timing_errors(ok: &[&Finished], clock: wire::Clock, first: f64) -> TimingErrors {
    let mut e = TimingErrors {
        ttft: Vec::new(),
        itl: Vec::new(),
        lag: Vec::new(),
    };
    for f in ok {
        let stamps = clock.stamps_in(&f.text);
        let Some(&sent) = stamps.first() else {
            continue;
        };
        e.lag.push(sent - f.record.start_s - first);
        if let Some(t) = f.record.ttft_s {
            e.ttft.push(f.record.start_s + t - sent);
        }
        for (gap, pair) in f.itl_gaps_s.iter().zip(stamps.windows(2)) {
            e.itl.push(gap - (pair[1] - pair[0]));
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmsweep_shared::bundle::RequestRecord;

    fn finished(start_s: f64, ttft_s: f64, gaps: &[f64], stamps_us: &[u64]) -> Finished {
        let record: RequestRecord = serde_json::from_value(serde_json::json!({
            "start_s": start_s, "ttft_s": ttft_s, "e2e_s": 0.1, "input_tokens": 16,
            "output_tokens": stamps_us.len(), "chunks": stamps_us.len(),
        }))
        .expect("a record");
        Finished {
            record,
            itl_gaps_s: gaps.to_vec(),
            chunk_tokens: Default::default(),
            text: stamps_us.iter().map(|&us| wire::stamp_text(us)).collect(),
            answer: None,
        }
    }

    fn scheduled(requests: u64, output_len: u64) -> LevelSpec {
        LevelSpec {
            pacing: Pacing::Scheduled {
                first: Duration::from_millis(50),
                interval: Duration::from_millis(10),
            },
            concurrency: 1,
            requests,
            output_len,
        }
    }

    #[test]
    fn errors_are_client_times_minus_send_stamps() {
        // Started at 1.0 s, first token seen 50.5 ms later, sent at 1.050 s: 0.5 ms late.
        // Gaps seen 10.2 and 9.9 ms against stamps 10 and 10 ms apart.
        let f = finished(
            1.0,
            0.0505,
            &[0.0102, 0.0099],
            &[1_050_000, 1_060_000, 1_070_000],
        );
        let level = summarise(
            scheduled(1, 3),
            &[f],
            wire::Clock::at(0.0),
            Some(0.003),
            Some(4096),
        );
        let ttft = level.ttft_error_s.expect("ttft errors");
        assert_eq!(ttft.count, 1);
        assert!((ttft.p50 - 0.0005).abs() < 1e-9);
        let itl = level.itl_error_s.expect("itl errors");
        assert_eq!(itl.count, 2);
        assert!((itl.max - 0.0002).abs() < 1e-9);
        assert!((itl.min + 0.0001).abs() < 1e-9);
        assert_eq!(
            (level.ok, level.exact, level.tokens, level.events),
            (1, 1, 3, 3)
        );
        assert!((level.cpu_us_per_token.expect("cpu") - 1000.0).abs() < 1e-6);
        assert!((level.wall_s - 0.1).abs() < 1e-12);
        // Sent at 1.050 s, due at 1.0 + 0.050 s: on time.
        assert!(level.first_event_lag_s.expect("lag").max.abs() < 1e-9);
    }

    #[test]
    fn short_requests_are_not_exact_and_flat_out_has_no_errors() {
        let f = finished(0.0, 0.01, &[], &[1]);
        let spec = LevelSpec {
            pacing: Pacing::FlatOut { per_event: 8 },
            ..scheduled(1, 2)
        };
        let level = summarise(spec, &[f], wire::Clock::at(0.0), None, None);
        assert_eq!((level.ok, level.exact), (1, 0));
        assert_eq!(level.mode, SelftestMode::FlatOut);
        assert_eq!(level.tokens_per_event, 8);
        assert!(level.ttft_error_s.is_none() && level.cpu_us_per_token.is_none());
    }
}
