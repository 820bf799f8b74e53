//! The server half of the sampler: scraping `/metrics` and keeping the series of one point.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use llmsweep_shared::bundle::ServerSamples;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use super::prometheus::{self, Exposition};
use super::scheme::{self, Reading, Scheme};
use super::secs_since;

/// Longest wait for one `/metrics` answer; a slow scrape is dropped, never waited for.
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

/// Turns timed readings into [`ServerSamples`]; pure, so its arithmetic is tested directly.
#[derive(Debug, Clone)]
pub struct ServerRecorder {
    scheme: Scheme,
    t_s: Vec<f64>,
    gauges: BTreeMap<String, Vec<Option<f64>>>,
    counters_before: BTreeMap<String, f64>,
}

impl ServerRecorder {
    /// Starts the series with the reading taken before the point's load; its counters are
    /// `counters_before`.
    pub fn new(scheme: Scheme, t_s: f64, first: &Reading) -> Self {
        let mut rec = ServerRecorder {
            scheme,
            t_s: Vec::new(),
            gauges: BTreeMap::new(),
            counters_before: first.counters.clone(),
        };
        rec.push(t_s, first);
        rec
    }

    /// Adds one reading's gauges; a gauge missing from it gets `None` at `t_s`.
    pub fn push(&mut self, t_s: f64, r: &Reading) {
        let len = self.t_s.len();
        for name in r.gauges.keys() {
            if !self.gauges.contains_key(name) {
                self.gauges.insert(name.clone(), vec![None; len]);
            }
        }
        for (name, series) in &mut self.gauges {
            series.push(r.gauges.get(name).copied());
        }
        self.t_s.push(t_s);
    }

    /// Closes the series with the reading taken after the point's load, whose counters are
    /// `counters_after`; without one (the last scrape failed) `counters_after` stays empty,
    /// since an earlier scrape's counters would not be "after".
    pub fn finish(mut self, last: Option<(f64, Reading)>) -> ServerSamples {
        let counters_after = match last {
            Some((t, r)) => {
                self.push(t, &r);
                r.counters
            }
            None => BTreeMap::new(),
        };
        let mut s = ServerSamples {
            scheme: self.scheme,
            t_s: self.t_s,
            gauges: self.gauges,
            counters_before: self.counters_before,
            counters_after,
            ..ServerSamples::default()
        };
        let peak = |name: Option<&str>| s.peak_of(name?);
        (s.peak_queue, s.peak_running, s.peak_kv) = (
            peak(s.scheme.queue_gauge()),
            peak(s.scheme.running_gauge()),
            peak(s.kv_gauge()),
        );
        s
    }
}

/// `GET url` within [`SCRAPE_TIMEOUT`]; the parsed text and when it was read (seconds from
/// `origin`, the midpoint of request and answer), or `None` on any failure or non-2xx status.
pub async fn scrape(
    http: &reqwest::Client,
    url: &str,
    origin: Instant,
) -> Option<(f64, Exposition)> {
    scrape_within(http, url, origin, SCRAPE_TIMEOUT).await
}

async fn scrape_within(
    http: &reqwest::Client,
    url: &str,
    origin: Instant,
    timeout: Duration,
) -> Option<(f64, Exposition)> {
    let sent = Instant::now();
    let body = tokio::time::timeout(timeout, async {
        let resp = http.get(url).send().await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        crate::boundary::http::text_capped(resp, crate::boundary::http::PROBE_BODY_CAP)
            .await
            .ok()
    })
    .await
    .ok()??;
    let got = Instant::now();
    let t = (secs_since(origin, sent) + secs_since(origin, got)) / 2.0;
    Some((t, prometheus::parse(&body)))
}

/// Scrapes whose counters bound a point (the first and the last) are tried up to this many
/// times when they fail fast: a pooled connection the server has just closed must not cost the
/// point its counters. A scrape that timed out is not tried again.
const BOUNDARY_TRIES: usize = 3;

/// The last scrape comes after the point's load has ended, so waiting longer for it costs no
/// accuracy; a server still busy finishing the point gets this long to answer.
const LAST_SCRAPE_TIMEOUT: Duration = Duration::from_secs(6);

async fn scrape_boundary(
    http: &reqwest::Client,
    url: &str,
    origin: Instant,
    timeout: Duration,
) -> Option<(f64, Exposition)> {
    for _ in 0..BOUNDARY_TRIES {
        let tried = Instant::now();
        if let Some(got) = scrape_within(http, url, origin, timeout).await {
            return Some(got);
        }
        if tried.elapsed() >= timeout {
            return None;
        }
    }
    None
}

/// The baseline scrape: a recorder when the answer is Prometheus text of a known scheme.
pub async fn begin(http: &reqwest::Client, url: &str, origin: Instant) -> Option<ServerRecorder> {
    let (t, text) = scrape_boundary(http, url, origin, SCRAPE_TIMEOUT).await?;
    let scheme = scheme::recognise(&text)?;
    Some(ServerRecorder::new(
        scheme,
        t,
        &scheme::select(scheme, &text),
    ))
}

/// Scrapes about every `interval` until `stop`, then once more for `counters_after`.
pub async fn run(
    http: reqwest::Client,
    url: String,
    origin: Instant,
    interval: Duration,
    mut rec: ServerRecorder,
    stop: CancellationToken,
) -> ServerSamples {
    let scheme = rec.scheme;
    let read = |(t, text): (f64, Exposition)| (t, scheme::select(scheme, &text));
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        let next = async {
            ticks.tick().await;
            scrape(&http, &url, origin).await
        };
        tokio::select! {
            _ = stop.cancelled() => break,
            got = next => {
                if let Some(got) = got {
                    let (t, r) = read(got);
                    rec.push(t, &r);
                }
            }
        }
    }
    let last = scrape_boundary(&http, &url, origin, LAST_SCRAPE_TIMEOUT)
        .await
        .map(read);
    rec.finish(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(gauges: &[(&str, f64)], counters: &[(&str, f64)]) -> Reading {
        let m = |p: &[(&str, f64)]| p.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        Reading {
            gauges: m(gauges),
            counters: m(counters),
        }
    }

    #[test]
    fn series_stay_aligned_and_peaks_come_from_them() {
        let run = "vllm:num_requests_running";
        let wait = "vllm:num_requests_waiting";
        let kv = "vllm:kv_cache_usage_perc";
        let gen_total = "vllm:generation_tokens_total";
        let mut rec = ServerRecorder::new(
            Scheme::Vllm,
            -0.01,
            &reading(&[(run, 0.0), (wait, 0.0)], &[(gen_total, 100.0)]),
        );
        rec.push(0.5, &reading(&[(run, 2.0), (wait, 4.0), (kv, 0.25)], &[]));
        rec.push(1.0, &reading(&[(run, 2.0)], &[]));
        let s = rec.finish(Some((
            1.5,
            reading(&[(run, 0.0), (wait, 0.0), (kv, 0.0)], &[(gen_total, 460.0)]),
        )));
        assert_eq!(s.scheme, Scheme::Vllm);
        assert_eq!(s.t_s, vec![-0.01, 0.5, 1.0, 1.5]);
        assert_eq!(
            s.gauges[run],
            vec![Some(0.0), Some(2.0), Some(2.0), Some(0.0)]
        );
        assert_eq!(s.gauges[wait], vec![Some(0.0), Some(4.0), None, Some(0.0)]);
        assert_eq!(s.gauges[kv], vec![None, Some(0.25), None, Some(0.0)]);
        assert_eq!(s.counters_before[gen_total], 100.0);
        assert_eq!(s.counters_after[gen_total], 460.0);
        assert_eq!(s.peak_queue, Some(4.0));
        assert_eq!(s.peak_running, Some(2.0));
        assert_eq!(s.peak_kv, Some(0.25));
    }

    #[test]
    fn a_failed_last_scrape_leaves_counters_after_empty() {
        let rec = ServerRecorder::new(
            Scheme::Llamacpp,
            0.0,
            &reading(&[], &[("llamacpp:n_decode_total", 5.0)]),
        );
        let s = rec.finish(None);
        assert_eq!(s.t_s, vec![0.0]);
        assert!(s.gauges.is_empty());
        assert!(s.counters_after.is_empty());
        assert_eq!(s.peak_queue, None);
        assert_eq!(s.peak_running, None);
        assert_eq!(s.peak_kv, None);
    }
}
