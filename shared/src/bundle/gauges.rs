//! Which of a server's own gauges is its queue, its running count and its KV-cache usage, per
//! [`MetricScheme`]: one table, read by the collector's sampler (the peaks it stores) and by the
//! viewer (the series it draws), so the two can never name different gauges.
//!
//! Every KV gauge listed is a fraction, `0..=1` (vLLM's `kv_cache_usage_perc` included, whatever
//! its name says: "1 means 100 percent usage").

use super::{Bundle, MetricScheme, PointStatus, ServerSamples, SweepKind};

impl MetricScheme {
    /// The gauge counting requests waiting for a slot.
    pub fn queue_gauge(self) -> Option<&'static str> {
        match self {
            MetricScheme::Sglang => Some("sglang:num_queue_reqs"),
            MetricScheme::Vllm => Some("vllm:num_requests_waiting"),
            MetricScheme::Llamacpp => Some("llamacpp:requests_deferred"),
            MetricScheme::Unknown => None,
        }
    }

    /// The gauge counting requests being served.
    pub fn running_gauge(self) -> Option<&'static str> {
        match self {
            MetricScheme::Sglang => Some("sglang:num_running_reqs"),
            MetricScheme::Vllm => Some("vllm:num_requests_running"),
            MetricScheme::Llamacpp => Some("llamacpp:requests_processing"),
            MetricScheme::Unknown => None,
        }
    }

    /// The gauges of KV-cache usage as a fraction, the preferred first: a series uses the first
    /// one present (vLLM before V1 wrote `gpu_cache_usage_perc`).
    pub fn kv_gauges(self) -> &'static [&'static str] {
        match self {
            MetricScheme::Sglang => &["sglang:token_usage"],
            MetricScheme::Vllm => &["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
            MetricScheme::Llamacpp => &["llamacpp:kv_cache_usage_ratio"],
            MetricScheme::Unknown => &[],
        }
    }
}

impl ServerSamples {
    /// The `(t_s, value)` pairs of gauge `name` with a finite value, split where a scrape lacked
    /// it (so a line is not drawn across the gap); empty when the gauge is absent.
    pub fn segments(&self, name: &str) -> Vec<Vec<(f64, f64)>> {
        let Some(values) = self.gauges.get(name) else {
            return Vec::new();
        };
        let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
        let mut open = false;
        for (&t, v) in self.t_s.iter().zip(values) {
            match (v.filter(|v| v.is_finite() && t.is_finite()), out.last_mut()) {
                (Some(v), Some(segment)) if open => segment.push((t, v)),
                (Some(v), _) => {
                    out.push(vec![(t, v)]);
                    open = true;
                }
                (None, _) => open = false,
            }
        }
        out
    }

    /// The KV gauge these samples carry (see [`MetricScheme::kv_gauges`]).
    pub fn kv_gauge(&self) -> Option<&'static str> {
        self.scheme
            .kv_gauges()
            .iter()
            .copied()
            .find(|g| self.gauges.contains_key(*g))
    }

    /// The point's peak queue: [`ServerSamples::peak_queue`], else (a bundle written before
    /// it was stored) the highest value of the queue gauge's series.
    pub fn queue_peak(&self) -> Option<f64> {
        self.peak_queue
            .or_else(|| self.peak_of(self.scheme.queue_gauge()?))
            .filter(|v| v.is_finite())
    }

    /// The point's peak KV-cache usage, a fraction: [`ServerSamples::peak_kv`], else (a bundle
    /// written before it was stored) the highest value of the KV gauge's series.
    pub fn kv_peak(&self) -> Option<f64> {
        self.peak_kv
            .or_else(|| self.peak_of(self.kv_gauge()?))
            .filter(|v| v.is_finite())
    }

    /// Highest finite value of gauge `name`.
    pub fn peak_of(&self, name: &str) -> Option<f64> {
        self.gauges
            .get(name)?
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .reduce(f64::max)
    }
}

/// Where a run's highest value of a gauge peak was reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeakAt {
    pub value: f64,
    pub kind: SweepKind,
    /// The level: concurrency (throughput) or input length (context).
    pub key: u64,
}

impl PeakAt {
    /// `C=8` or `8192 input tokens`.
    pub fn level(&self) -> String {
        match self.kind {
            SweepKind::Context => format!("{} input tokens", self.key),
            SweepKind::Rate => crate::compare::verdict::level_text(self.kind, self.key),
            _ => format!("C={}", self.key),
        }
    }
}

/// A run's highest peak queue and peak KV-cache usage over its measured points.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunPeaks {
    pub queue: Option<PeakAt>,
    /// A fraction, `0..=1`.
    pub kv: Option<PeakAt>,
}

/// The highest peak queue and peak KV usage ([`ServerSamples::queue_peak`], [`ServerSamples::kv_peak`]) over `b`'s points that were not skipped; the first
/// level reaching it names it.
pub fn run_peaks(b: &Bundle) -> RunPeaks {
    let mut out = RunPeaks::default();
    for s in &b.sweeps {
        for p in s.points.iter().filter(|p| p.status != PointStatus::Skipped) {
            let Some(ss) = &p.server_samples else {
                continue;
            };
            let key = crate::compare::level_key(s.kind, p);
            let keep = |slot: &mut Option<PeakAt>, v: Option<f64>| {
                let Some(value) = v.filter(|v| v.is_finite()) else {
                    return;
                };
                if slot.is_none_or(|c| value > c.value) {
                    *slot = Some(PeakAt {
                        value,
                        kind: s.kind,
                        key,
                    });
                }
            };
            keep(&mut out.queue, ss.queue_peak());
            keep(&mut out.kv, ss.kv_peak());
        }
    }
    out
}

impl RunPeaks {
    /// `peak queue 12 at C=8 · peak KV cache 87 % at C=16`; `None` without either.
    pub fn line(&self) -> Option<String> {
        let parts: Vec<String> = [
            self.queue
                .map(|q| format!("peak queue {:.0} at {}", q.value, q.level())),
            self.kv.map(|k| {
                format!(
                    "peak KV cache {} at {}",
                    kv_percent_text(k.value),
                    k.level()
                )
            }),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

/// A KV fraction as `87 %` (one decimal under 10 %).
pub fn kv_percent_text(fraction: f64) -> String {
    let pct = fraction * 100.0;
    if pct < 10.0 {
        format!("{pct:.1} %")
    } else {
        format!("{pct:.0} %")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Point;

    fn samples(scheme: MetricScheme, gauges: &[(&str, Vec<Option<f64>>)]) -> ServerSamples {
        ServerSamples {
            scheme,
            t_s: vec![0.0, 0.5, 1.0, 1.5],
            gauges: gauges
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            ..ServerSamples::default()
        }
    }

    #[test]
    fn every_scheme_names_its_queue_running_and_kv_gauges() {
        use MetricScheme::*;
        let names = |s: MetricScheme| (s.queue_gauge(), s.running_gauge(), s.kv_gauges());
        assert_eq!(
            names(Sglang),
            (
                Some("sglang:num_queue_reqs"),
                Some("sglang:num_running_reqs"),
                &["sglang:token_usage"][..]
            )
        );
        assert_eq!(
            names(Vllm),
            (
                Some("vllm:num_requests_waiting"),
                Some("vllm:num_requests_running"),
                &["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"][..]
            )
        );
        assert_eq!(
            names(Llamacpp),
            (
                Some("llamacpp:requests_deferred"),
                Some("llamacpp:requests_processing"),
                &["llamacpp:kv_cache_usage_ratio"][..]
            )
        );
        assert_eq!(names(Unknown), (None, None, &[][..]));
    }

    #[test]
    fn the_kv_series_is_the_first_known_gauge_present() {
        let old = samples(
            MetricScheme::Vllm,
            &[("vllm:gpu_cache_usage_perc", vec![Some(0.1); 4])],
        );
        assert_eq!(old.kv_gauge(), Some("vllm:gpu_cache_usage_perc"));
        let both = samples(
            MetricScheme::Vllm,
            &[
                ("vllm:gpu_cache_usage_perc", vec![Some(0.1); 4]),
                ("vllm:kv_cache_usage_perc", vec![Some(0.2); 4]),
            ],
        );
        assert_eq!(both.kv_gauge(), Some("vllm:kv_cache_usage_perc"));
        let llama = samples(MetricScheme::Llamacpp, &[]);
        assert_eq!(llama.kv_gauge(), None);
    }

    #[test]
    fn segments_break_at_missing_and_non_finite_values() {
        let s = samples(
            MetricScheme::Vllm,
            &[(
                "vllm:num_requests_waiting",
                vec![Some(0.0), None, Some(f64::NAN), Some(3.0)],
            )],
        );
        assert_eq!(
            s.segments("vllm:num_requests_waiting"),
            vec![vec![(0.0, 0.0)], vec![(1.5, 3.0)]]
        );
        assert!(s.segments("vllm:absent").is_empty());
        assert_eq!(s.peak_of("vllm:num_requests_waiting"), Some(3.0));
        // A bundle from before the peaks were stored: they come from the series.
        assert_eq!((s.peak_queue, s.queue_peak()), (None, Some(3.0)));
        let kv = samples(
            MetricScheme::Sglang,
            &[(
                "sglang:token_usage",
                vec![Some(0.5), Some(0.75), None, None],
            )],
        );
        assert_eq!(kv.kv_peak(), Some(0.75));
        let stored = ServerSamples {
            peak_kv: Some(0.5),
            ..kv
        };
        assert_eq!(
            stored.kv_peak(),
            Some(0.5),
            "the stored peak is the authority"
        );
    }

    #[test]
    fn run_peaks_name_the_level_where_they_happened() {
        let mut b = crate::curves::tests::bundle("a");
        let peaks = |q: f64, kv: Option<f64>| ServerSamples {
            peak_queue: Some(q),
            peak_kv: kv,
            ..ServerSamples::default()
        };
        let tp = &mut b.sweeps[0].points;
        tp[0].server_samples = Some(peaks(0.0, Some(0.05)));
        tp[1].server_samples = Some(peaks(7.0, Some(0.5)));
        tp[2].server_samples = Some(peaks(7.0, Some(0.875)));
        let mut skipped = Point::empty(64, 1000, 100);
        skipped.status = PointStatus::Skipped;
        skipped.server_samples = Some(peaks(99.0, Some(1.0)));
        b.sweeps[0].points.push(skipped);
        let r = run_peaks(&b);
        assert_eq!(r.queue.map(|q| (q.value, q.key)), Some((7.0, 2)));
        assert_eq!(r.kv.map(|k| (k.value, k.key)), Some((0.875, 4)));
        assert_eq!(
            r.line().as_deref(),
            Some("peak queue 7 at C=2 · peak KV cache 88 % at C=4")
        );
        assert_eq!(run_peaks(&crate::curves::tests::bundle("b")).line(), None);
        assert_eq!(kv_percent_text(0.0512), "5.1 %");
    }
}
