//! Telemetry during a point: the server's own Prometheus metrics and the GPUs' readings.
//!
//! A [`Sampler`] is started just before a point's first request and stopped after its last.
//! Both halves are optional and silent: a server without `/metrics` (or whose metrics are not
//! one of the [`scheme`]s) gives no [`ServerSamples`], a host without `nvidia-smi` no
//! [`GpuSamples`], and neither costs anything per sample nor delays the load. Parsing lives in
//! [`prometheus`] and [`scheme`] and the series arithmetic in pure recorders, so all of it is
//! tested without a server or a GPU.

pub mod gpu;
pub(crate) mod prometheus;
pub(crate) mod scheme;
pub mod server;

use std::path::Path;
use std::time::{Duration, Instant};

use llmsweep_shared::bundle::{GpuSamples, ServerSamples};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use gpu::with_tokens;

/// Shortest sampling interval honoured, so a zero interval cannot spin.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// Background sampling of one point. Dropping it without [`Sampler::stop`] aborts the tasks
/// and discards what they gathered.
#[derive(Debug)]
pub struct Sampler {
    stop: CancellationToken,
    server: Option<JoinHandle<ServerSamples>>,
    gpu: Option<JoinHandle<Option<GpuSamples>>>,
}

impl Sampler {
    /// Starts sampling `{base_url}/metrics` and the GPUs (`nvidia-smi` on `PATH`) about every
    /// `interval`, times in seconds from `origin` (the point's start).
    ///
    /// Returns once the baseline scrape, whose counters are `counters_before`, has answered or
    /// failed (within about [`server::SCRAPE_TIMEOUT`]), so that it precedes the point's load; the
    /// GPU half starts in the background. Must be called within a tokio runtime.
    pub async fn start(
        http: reqwest::Client,
        base_url: &str,
        origin: Instant,
        interval: Duration,
    ) -> Sampler {
        Sampler::start_with(http, base_url, origin, interval, gpu::nvidia_smi()).await
    }

    /// [`Sampler::start`] with the `nvidia-smi` to run given (`None`: no GPU sampling).
    pub async fn start_with(
        http: reqwest::Client,
        base_url: &str,
        origin: Instant,
        interval: Duration,
        nvidia_smi: Option<&Path>,
    ) -> Sampler {
        let interval = interval.max(MIN_INTERVAL);
        let stop = CancellationToken::new();
        let gpu = nvidia_smi.map(|program| {
            tokio::spawn(gpu::run(
                program.to_path_buf(),
                origin,
                interval,
                stop.clone(),
            ))
        });
        let url = format!("{}/metrics", base_url.trim_end_matches('/'));
        let server = server::begin(&http, &url, origin)
            .await
            .map(|rec| tokio::spawn(server::run(http, url, origin, interval, rec, stop.clone())));
        Sampler { stop, server, gpu }
    }

    /// Stops sampling, takes the final readings (at most a few seconds) and returns the
    /// series; `tokens_per_joule` is left for the caller ([`with_tokens`]).
    pub async fn stop(mut self) -> (Option<ServerSamples>, Option<GpuSamples>) {
        self.stop.cancel();
        let server = self.server.take();
        let gpu = self.gpu.take();
        let (server, gpu) = tokio::join!(
            async {
                match server {
                    Some(h) => h.await.ok(),
                    None => None,
                }
            },
            async {
                match gpu {
                    Some(h) => h.await.ok().flatten(),
                    None => None,
                }
            }
        );
        (server, gpu)
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(h) = self.server.take() {
            h.abort();
        }
        if let Some(h) = self.gpu.take() {
            h.abort();
        }
    }
}

/// Seconds from `origin` to `at`, negative when `at` is earlier.
fn secs_since(origin: Instant, at: Instant) -> f64 {
    match at.checked_duration_since(origin) {
        Some(d) => d.as_secs_f64(),
        None => -origin.duration_since(at).as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_before_the_origin_are_negative() {
        let origin = Instant::now();
        let later = origin + Duration::from_millis(1500);
        assert_eq!(secs_since(origin, later), 1.5);
        assert_eq!(secs_since(later, origin), -1.5);
    }
}
