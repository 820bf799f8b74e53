//! Bundle → chart series: which number of which point goes on which axis.
//!
//! Everything here reads summaries the collector already computed (see [`crate::metrics`]), so a
//! chart shows exactly the numbers the terminal printed. Points are identified by their
//! parameters (concurrency, input length), never by position.

use crate::bundle::{Bundle, Flag, Imported, Point, PointStatus, Summary, Sweep, SweepKind};

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// A per-point number that can be plotted or compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Output tokens while all slots were busy / that window.
    SteadyTokS,
    /// Output tokens / wall time of the point.
    AggTokS,
    /// Per-request decode speed (`1 / tpot`), median over requests.
    DecodeTokSP50,
    TtftP50,
    TtftP99,
    E2eP50,
    ItlP50,
    /// Prompt tokens / TTFT, median over requests.
    PrefillTokSP50,
    RequestS,
    /// Time per output token after the first, median over requests.
    TpotP50,
    E2eP99,
    /// Rate sweeps: requests sent per second (the point's [`crate::bundle::RatePoint`]).
    AchievedRps,
    /// Requests that met the SLO / requests counted (the point's [`crate::bundle::Goodput`]).
    GoodputFraction,
    /// Requests that met the SLO per second of the point's wall time.
    GoodRps,
    /// Rate sweeps: how late the client sent requests against their schedule, p99.
    LagP99,
    /// The mean and the 90th percentile beside the p50 and p99 (the statistics vLLM's `bench
    /// serve`, GuideLLM and AIPerf report): shown in the tables, never gated.
    TtftMean,
    TtftP90,
    /// Time per output token after the first, mean over requests.
    TpotMean,
    TpotP90,
    E2eMean,
    E2eP90,
    /// Speculative decoding's tokens per decode step and request, from the server's metrics or
    /// the stream (see [`crate::metrics::accept`]): shown and compared, never gated; it
    /// explains a change of decode speed.
    AcceptLength,
}

impl Metric {
    /// The metrics a throughput comparison shows, in table order.
    pub const THROUGHPUT: [Metric; 16] = [
        Metric::SteadyTokS,
        Metric::AggTokS,
        Metric::DecodeTokSP50,
        Metric::TtftP50,
        Metric::TtftP99,
        Metric::E2eP50,
        Metric::E2eP99,
        Metric::ItlP50,
        Metric::RequestS,
        Metric::TtftMean,
        Metric::TtftP90,
        Metric::TpotMean,
        Metric::TpotP90,
        Metric::E2eMean,
        Metric::E2eP90,
        Metric::AcceptLength,
    ];

    /// The metrics a context comparison shows, in table order.
    pub const CONTEXT: [Metric; 7] = [
        Metric::TtftP50,
        Metric::TtftP99,
        Metric::PrefillTokSP50,
        Metric::DecodeTokSP50,
        Metric::E2eP50,
        Metric::TtftMean,
        Metric::TtftP90,
    ];

    /// The metrics a rate comparison shows, in table order: latency at each offered rate, what
    /// the client achieved, and goodput when both runs counted it.
    pub const RATE: [Metric; 14] = [
        Metric::TtftP50,
        Metric::TtftP99,
        Metric::TpotP50,
        Metric::E2eP50,
        Metric::E2eP99,
        Metric::AchievedRps,
        Metric::GoodputFraction,
        Metric::GoodRps,
        Metric::TtftMean,
        Metric::TtftP90,
        Metric::TpotMean,
        Metric::TpotP90,
        Metric::E2eMean,
        Metric::E2eP90,
    ];

    /// The value of this metric in a point's summary, when the summary has it (`None` for the
    /// metrics a point keeps outside its summary: rate, goodput, lag).
    pub fn value(self, s: &Summary) -> Option<f64> {
        let v = match self {
            Metric::SteadyTokS => s.steady_tok_s?,
            Metric::AggTokS => s.agg_tok_s,
            Metric::DecodeTokSP50 => s.decode_tok_s?.p50,
            Metric::TtftP50 => s.ttft_s?.p50,
            Metric::TtftP99 => s.ttft_s?.p99,
            Metric::E2eP50 => s.e2e_s?.p50,
            Metric::ItlP50 => s.itl_s?.p50,
            Metric::PrefillTokSP50 => s.prefill_tok_s?.p50,
            Metric::RequestS => s.request_s,
            Metric::TpotP50 => s.tpot_s?.p50,
            Metric::E2eP99 => s.e2e_s?.p99,
            Metric::TtftMean => s.ttft_s?.mean,
            Metric::TtftP90 => s.ttft_s?.p90,
            Metric::TpotMean => s.tpot_s?.mean,
            Metric::TpotP90 => s.tpot_s?.p90,
            Metric::E2eMean => s.e2e_s?.mean,
            Metric::E2eP90 => s.e2e_s?.p90,
            Metric::AchievedRps
            | Metric::GoodputFraction
            | Metric::GoodRps
            | Metric::LagP99
            | Metric::AcceptLength => {
                return None;
            }
        };
        v.is_finite().then_some(v)
    }

    /// The value of this metric at a point: from the summary llmsweep computed, or, for an
    /// imported point, from what the source reported under its own definitions (see
    /// [`Imported`]); `None` when neither has it.
    pub fn of(self, p: &Point) -> Option<f64> {
        let outside = match self {
            // An imported run's achieved rate is its tool's (completed / duration).
            Metric::AchievedRps => Some(p.rate.and_then(|r| {
                r.achieved_rps.or_else(|| {
                    p.imported
                        .as_ref()
                        .filter(|_| p.summary.is_none())
                        .and_then(|i| i.request_s)
                })
            })),
            Metric::LagP99 => Some(p.rate.and_then(|r| r.lag_s).map(|l| l.p99)),
            Metric::GoodputFraction => Some(p.goodput.map(|g| g.fraction)),
            Metric::GoodRps => Some(p.goodput.map(|g| g.good_rps)),
            Metric::AcceptLength => Some(crate::metrics::acceptance(p).and_then(|a| a.length())),
            _ => None,
        };
        if let Some(v) = outside {
            return v.filter(|v| v.is_finite());
        }
        match (&p.summary, &p.imported) {
            (Some(s), _) => self.value(s),
            (None, Some(i)) => self.imported(i, p.input_len),
            (None, None) => None,
        }
    }

    /// Why an imported point's value of this metric is not quite what the metric's name says,
    /// when it is not: the source printed one number without naming its statistic (a table's
    /// "TTFT(s)"), or its per-request speed without saying whether TTFT is in it. `None` for
    /// measured points and for numbers whose statistic the source stated.
    pub fn caveat(self, p: &Point) -> Option<&'static str> {
        let i = p.imported.as_ref().filter(|_| p.summary.is_none())?;
        let unstated = |q: &crate::bundle::Quantiles| q.p50.is_none() && q.unstated.is_some();
        let caveat = match self {
            Metric::TtftP50 | Metric::PrefillTokSP50 => unstated(&i.ttft_s),
            Metric::E2eP50 => unstated(&i.e2e_s),
            Metric::ItlP50 => unstated(&i.itl_s),
            Metric::DecodeTokSP50 => i.tpot_s.p50.is_none() && i.per_request_tok_s.is_some(),
            _ => false,
        };
        caveat.then_some(match self {
            Metric::DecodeTokSP50 => "the source's per-request speed; its definition is not stated",
            _ => "the source's number; whether mean or median is not stated",
        })
    }

    fn imported(self, i: &Imported, input_len: u64) -> Option<f64> {
        let v = match self {
            // No other tool measures a steady window.
            Metric::SteadyTokS => None,
            Metric::AggTokS => i.output_tok_s,
            Metric::DecodeTokSP50 => i.tpot_s.p50.map(|t| 1.0 / t).or(i.per_request_tok_s),
            Metric::TtftP50 => i.ttft_s.central(),
            Metric::TtftP99 => i.ttft_s.p99,
            Metric::E2eP50 => i.e2e_s.central(),
            Metric::ItlP50 => i.itl_s.central(),
            Metric::PrefillTokSP50 => match input_len {
                0 => None,
                len => i.ttft_s.central().map(|t| len as f64 / t),
            },
            Metric::RequestS => i.request_s,
            Metric::TpotP50 => i.tpot_s.p50,
            Metric::E2eP99 => i.e2e_s.p99,
            Metric::TtftMean => i.ttft_s.mean,
            Metric::TtftP90 => i.ttft_s.p90,
            Metric::TpotMean => i.tpot_s.mean,
            Metric::TpotP90 => i.tpot_s.p90,
            Metric::E2eMean => i.e2e_s.mean,
            Metric::E2eP90 => i.e2e_s.p90,
            Metric::AchievedRps
            | Metric::GoodputFraction
            | Metric::GoodRps
            | Metric::LagP99
            | Metric::AcceptLength => None,
        }?;
        v.is_finite().then_some(v)
    }

    /// Every metric, in [`Metric::key`]'s order.
    pub const ALL: [Metric; 22] = [
        Metric::SteadyTokS,
        Metric::AggTokS,
        Metric::DecodeTokSP50,
        Metric::TtftP50,
        Metric::TtftP99,
        Metric::E2eP50,
        Metric::ItlP50,
        Metric::PrefillTokSP50,
        Metric::RequestS,
        Metric::TpotP50,
        Metric::E2eP99,
        Metric::AchievedRps,
        Metric::GoodputFraction,
        Metric::GoodRps,
        Metric::LagP99,
        Metric::TtftMean,
        Metric::TtftP90,
        Metric::TpotMean,
        Metric::TpotP90,
        Metric::E2eMean,
        Metric::E2eP90,
        Metric::AcceptLength,
    ];

    /// The metric's name in files and on the command line, after the bundle's definitions:
    /// `steady_tok_s`, `ttft_p50_s`, `decode_tok_s_p50`, ….
    pub fn key(self) -> &'static str {
        match self {
            Metric::SteadyTokS => "steady_tok_s",
            Metric::AggTokS => "agg_tok_s",
            Metric::DecodeTokSP50 => "decode_tok_s_p50",
            Metric::TtftP50 => "ttft_p50_s",
            Metric::TtftP99 => "ttft_p99_s",
            Metric::E2eP50 => "e2e_p50_s",
            Metric::ItlP50 => "itl_p50_s",
            Metric::PrefillTokSP50 => "prefill_tok_s_p50",
            Metric::RequestS => "request_s",
            Metric::TpotP50 => "tpot_p50_s",
            Metric::E2eP99 => "e2e_p99_s",
            Metric::AchievedRps => "achieved_rps",
            Metric::GoodputFraction => "goodput_fraction",
            Metric::GoodRps => "good_rps",
            Metric::LagP99 => "schedule_lag_p99_s",
            Metric::TtftMean => "ttft_mean_s",
            Metric::TtftP90 => "ttft_p90_s",
            Metric::TpotMean => "tpot_mean_s",
            Metric::TpotP90 => "tpot_p90_s",
            Metric::E2eMean => "e2e_mean_s",
            Metric::E2eP90 => "e2e_p90_s",
            Metric::AcceptLength => "accept_length",
        }
    }

    /// The metric a [`Metric::key`] names.
    pub fn from_key(key: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.key() == key)
    }

    /// Short name with unit, as a table row or an axis says it.
    pub fn label(self) -> &'static str {
        match self {
            Metric::SteadyTokS => "steady output tok/s",
            Metric::AggTokS => "aggregate output tok/s",
            Metric::DecodeTokSP50 => "decode tok/s per request (p50)",
            Metric::TtftP50 => "TTFT p50 (s)",
            Metric::TtftP99 => "TTFT p99 (s)",
            Metric::E2eP50 => "e2e p50 (s)",
            Metric::ItlP50 => "ITL p50 (ms)",
            Metric::PrefillTokSP50 => "prefill tok/s (p50)",
            Metric::RequestS => "requests/s",
            Metric::TpotP50 => "TPOT p50 (s)",
            Metric::E2eP99 => "e2e p99 (s)",
            Metric::AchievedRps => "achieved requests/s",
            Metric::GoodputFraction => "goodput (fraction)",
            Metric::GoodRps => "good requests/s",
            Metric::LagP99 => "schedule lag p99 (s)",
            Metric::TtftMean => "TTFT mean (s)",
            Metric::TtftP90 => "TTFT p90 (s)",
            Metric::TpotMean => "TPOT mean (s)",
            Metric::TpotP90 => "TPOT p90 (s)",
            Metric::E2eMean => "e2e mean (s)",
            Metric::E2eP90 => "e2e p90 (s)",
            Metric::AcceptLength => "acceptance (tokens/step)",
        }
    }

    /// A request latency in seconds, whose changes under the client's timing resolution are
    /// never significant (see `compare::RESOLUTION_S`).
    pub fn is_latency(self) -> bool {
        matches!(
            self,
            Metric::TtftP50
                | Metric::TtftP99
                | Metric::E2eP50
                | Metric::E2eP99
                | Metric::TtftMean
                | Metric::TtftP90
                | Metric::E2eMean
                | Metric::E2eP90
        )
    }

    /// Which way is better: throughput up, latency down.
    pub fn better(self) -> Better {
        match self {
            Metric::TtftP50
            | Metric::TtftP99
            | Metric::E2eP50
            | Metric::E2eP99
            | Metric::TpotP50
            | Metric::ItlP50
            | Metric::LagP99
            | Metric::TtftMean
            | Metric::TtftP90
            | Metric::TpotMean
            | Metric::TpotP90
            | Metric::E2eMean
            | Metric::E2eP90 => Better::Lower,
            _ => Better::Higher,
        }
    }

    /// The value as shown: ITL in milliseconds, the rest in their own unit.
    /// Whether a change of `pct` percent is an improvement of this metric.
    pub fn improved_by(self, pct: f64) -> bool {
        match self.better() {
            Better::Higher => pct > 0.0,
            Better::Lower => pct < 0.0,
        }
    }

    pub fn display(self, v: f64) -> f64 {
        if self == Metric::ItlP50 { v * 1e3 } else { v }
    }
}

/// The first sweep of `kind` in a bundle (a `run` bundle has one of each).
pub fn sweep_of(bundle: &Bundle, kind: SweepKind) -> Option<&Sweep> {
    bundle.sweeps.iter().find(|s| s.kind == kind)
}

/// Whether a plotted value was measured or only predicted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Measured,
    /// A skipped context point's TTFT from the sweep's prefill fit.
    Predicted,
}

/// One value of one point, with what a hover needs to explain it.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesPoint {
    /// Concurrency (throughput sweep) or input length (context sweep).
    pub x: f64,
    pub y: f64,
    pub concurrency: u32,
    pub input_len: u64,
    pub origin: Origin,
    /// The point's flags (short, failed…), each with its message.
    pub flags: Vec<Flag>,
    /// Index of the point in its sweep, to open its requests.
    pub point_index: usize,
    /// Index of the sweep in the bundle.
    pub sweep_index: usize,
}

/// A metric across a sweep's points, ordered by x.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub metric: Metric,
    pub points: Vec<SeriesPoint>,
}

/// `metric` against concurrency over the bundle's throughput sweep (empty when it has none).
pub fn throughput_series(bundle: &Bundle, metric: Metric) -> Series {
    sweep_series(bundle, SweepKind::Throughput, metric, |p| {
        p.concurrency as f64
    })
}

/// `metric` against input length over the bundle's context sweep. For TTFT, a skipped point with a
/// prediction is included as [`Origin::Predicted`].
pub fn context_series(bundle: &Bundle, metric: Metric) -> Series {
    let mut s = sweep_series(bundle, SweepKind::Context, metric, |p| p.input_len as f64);
    if matches!(metric, Metric::TtftP50 | Metric::TtftP99) {
        let Some((si, sweep)) = indexed_sweep(bundle, SweepKind::Context) else {
            return s;
        };
        for (pi, p) in sweep.points.iter().enumerate() {
            // A fit can extrapolate below zero from a few short lengths; that is no prediction.
            let predicted = p.predicted_ttft_s.filter(|y| *y > 0.0);
            if let (PointStatus::Skipped, Some(y)) = (p.status, predicted) {
                s.points
                    .push(series_point(p, p.input_len as f64, y, si, pi));
                if let Some(last) = s.points.last_mut() {
                    last.origin = Origin::Predicted;
                }
            }
        }
        s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    s
}

fn indexed_sweep(bundle: &Bundle, kind: SweepKind) -> Option<(usize, &Sweep)> {
    bundle
        .sweeps
        .iter()
        .enumerate()
        .find(|(_, s)| s.kind == kind)
}

fn sweep_series(
    bundle: &Bundle,
    kind: SweepKind,
    metric: Metric,
    x: impl Fn(&Point) -> f64,
) -> Series {
    let mut points = Vec::new();
    if let Some((si, sweep)) = indexed_sweep(bundle, kind) {
        for (pi, p) in sweep.points.iter().enumerate() {
            let Some(y) = metric.of(p) else {
                continue;
            };
            if p.status == PointStatus::Ok {
                points.push(series_point(p, x(p), metric.display(y), si, pi));
            }
        }
    }
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    Series { metric, points }
}

fn series_point(p: &Point, x: f64, y: f64, sweep_index: usize, point_index: usize) -> SeriesPoint {
    SeriesPoint {
        x,
        y,
        concurrency: p.concurrency,
        input_len: p.input_len,
        origin: Origin::Measured,
        flags: p.flags.clone(),
        point_index,
        sweep_index,
    }
}

/// One point of the per-user vs total throughput trade-off.
#[derive(Debug, Clone, PartialEq)]
pub struct TradeoffPoint {
    pub concurrency: u32,
    /// Output tok/s of the whole server: steady when there is a steady window, else aggregate.
    pub total_tok_s: f64,
    /// Decode tok/s one user sees (p50).
    pub per_user_tok_s: f64,
    pub flags: Vec<Flag>,
    pub sweep_index: usize,
    pub point_index: usize,
}

/// Per-user against total throughput over the throughput sweep, in concurrency order.
pub fn tradeoff(bundle: &Bundle) -> Vec<TradeoffPoint> {
    let Some((si, sweep)) = indexed_sweep(bundle, SweepKind::Throughput) else {
        return Vec::new();
    };
    let mut out: Vec<TradeoffPoint> = sweep
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.status == PointStatus::Ok)
        .filter_map(|(pi, p)| {
            let total = Metric::SteadyTokS.of(p).or_else(|| Metric::AggTokS.of(p))?;
            Some(TradeoffPoint {
                concurrency: p.concurrency,
                total_tok_s: total,
                per_user_tok_s: Metric::DecodeTokSP50.of(p)?,
                flags: p.flags.clone(),
                sweep_index: si,
                point_index: pi,
            })
        })
        .collect();
    out.sort_by_key(|t| t.concurrency);
    out
}

/// The sweep's prefill fit sampled at `n` lengths spread evenly in log space over `[lo, hi]`;
/// lengths where it predicts a negative time are left out.
pub fn fit_curve(bundle: &Bundle, lo: f64, hi: f64, n: usize) -> Vec<(f64, f64)> {
    let Some(fit) = sweep_of(bundle, SweepKind::Context).and_then(|s| s.prefill_fit) else {
        return Vec::new();
    };
    if !(lo > 0.0 && hi > lo) || n < 2 {
        return Vec::new();
    }
    let (a, b) = (lo.ln(), hi.ln());
    (0..n)
        .map(|i| {
            let len = (a + (b - a) * i as f64 / (n - 1) as f64).exp();
            (len, fit.predict_s(len.round() as u64))
        })
        .filter(|(_, t)| *t >= 0.0)
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bundle::FlagKind;
    use crate::metrics::{PrefillFit, Stats};

    pub(crate) fn stats(p50: f64, p99: f64) -> Stats {
        Stats {
            count: 8,
            mean: p50,
            p50,
            p90: p99,
            p99,
            min: p50,
            max: p99,
        }
    }

    /// A summary whose numbers derive from `k`, so tests can predict them.
    pub(crate) fn summary(k: f64) -> Summary {
        Summary {
            requests: 8,
            ok: 8,
            failed: 0,
            short: 0,
            output_tokens: 800,
            output_tokens_asked: 800,
            wall_s: 10.0,
            agg_tok_s: 90.0 * k,
            steady_tok_s: Some(100.0 * k),
            steady_window_s: Some(8.0),
            steady_pm_pct: None,
            request_s: 0.8,
            ttft_s: Some(stats(0.1 * k, 0.2 * k)),
            e2e_s: Some(stats(2.0, 2.5)),
            tpot_s: Some(stats(0.02, 0.03)),
            decode_tok_s: Some(stats(50.0 / k, 60.0)),
            itl_s: Some(stats(0.02, 0.04)),
            prefill_tok_s: Some(stats(1000.0, 1200.0)),
        }
    }

    pub(crate) fn point(c: u32, len: u64, k: f64) -> Point {
        Point {
            summary: Some(summary(k)),
            ..Point::empty(c, len, 100)
        }
    }

    pub(crate) fn sweep(kind: SweepKind, points: Vec<Point>) -> Sweep {
        let mut cs: Vec<u32> = points.iter().map(|p| p.concurrency).collect();
        let mut ls: Vec<u64> = points.iter().map(|p| p.input_len).collect();
        cs.dedup();
        ls.dedup();
        Sweep {
            kind,
            concurrency: cs,
            input_lens: ls,
            output_len: 100,
            requests: Some(8),
            duration_s: None,
            warmup: 2,
            timeout_s: 60.0,
            repeats: None,
            prefill_fit: None,
            preopened: None,
            rate: None,
            slo: None,
            length_spread: None,
            precision: None,
            points,
        }
    }

    /// A bundle with a throughput sweep at C = 1, 2, 4 (summary `k` = C) and a context sweep at
    /// 1k and 2k with a skipped 8k point.
    pub(crate) fn bundle(label: &str) -> Bundle {
        let text = include_str!("../tests/fixtures/minimal.json");
        let mut b = Bundle::from_json(text).expect("fixture parses");
        b.label = label.into();
        let tp = (0..3)
            .map(|i| point(1 << i, 512, (1 << i) as f64))
            .collect();
        let mut skipped = point(1, 8000, 1.0);
        skipped.status = PointStatus::Skipped;
        skipped.summary = None;
        skipped.predicted_ttft_s = Some(0.9);
        let mut ctx = sweep(
            SweepKind::Context,
            vec![point(1, 1000, 1.0), point(1, 2000, 2.0), skipped],
        );
        ctx.prefill_fit = Some(PrefillFit {
            a_s: 0.05,
            b_s_per_token: 1e-4,
            c_s_per_token2: 0.0,
            rms_residual_s: 0.0,
            lengths: 0,
            samples: 6,
            min_len: 1000,
            max_len: 2000,
        });
        b.sweeps = vec![sweep(SweepKind::Throughput, tp), ctx];
        b
    }

    #[test]
    fn throughput_series_follows_concurrency() {
        let b = bundle("a");
        let s = throughput_series(&b, Metric::SteadyTokS);
        let xy: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.y)).collect();
        assert_eq!(xy, [(1.0, 100.0), (2.0, 200.0), (4.0, 400.0)]);
        assert!(s.points.iter().all(|p| p.origin == Origin::Measured));
    }

    #[test]
    fn itl_is_shown_in_milliseconds() {
        let s = throughput_series(&bundle("a"), Metric::ItlP50);
        assert!((s.points[0].y - 20.0).abs() < 1e-9);
    }

    #[test]
    fn skipped_context_point_is_a_prediction_only_for_ttft() {
        let b = bundle("a");
        let ttft = context_series(&b, Metric::TtftP50);
        let xs: Vec<f64> = ttft.points.iter().map(|p| p.x).collect();
        assert_eq!(xs, [1000.0, 2000.0, 8000.0]);
        assert_eq!(ttft.points[2].origin, Origin::Predicted);
        assert_eq!(ttft.points[2].y, 0.9);
        let decode = context_series(&b, Metric::DecodeTokSP50);
        assert_eq!(decode.points.len(), 2, "nothing to predict for decode");
    }

    #[test]
    fn failed_points_and_missing_values_are_left_out() {
        let mut b = bundle("a");
        b.sweeps[0].points[1].status = PointStatus::Failed;
        b.sweeps[0].points[2].summary.as_mut().unwrap().steady_tok_s = None;
        let s = throughput_series(&b, Metric::SteadyTokS);
        assert_eq!(s.points.len(), 1);
        assert_eq!(throughput_series(&b, Metric::AggTokS).points.len(), 2);
    }

    #[test]
    fn flags_travel_with_the_point() {
        let mut b = bundle("a");
        b.sweeps[0].points[0].flags.push(Flag {
            kind: FlagKind::Short,
            message: "3 of 8 short".into(),
            count: Some(3),
        });
        let s = throughput_series(&b, Metric::AggTokS);
        assert_eq!(s.points[0].flags[0].kind, FlagKind::Short);
        assert_eq!((s.points[0].sweep_index, s.points[0].point_index), (0, 0));
    }

    #[test]
    fn tradeoff_prefers_steady_and_falls_back_to_aggregate() {
        let mut b = bundle("a");
        b.sweeps[0].points[2].summary.as_mut().unwrap().steady_tok_s = None;
        let t = tradeoff(&b);
        let total: Vec<f64> = t.iter().map(|p| p.total_tok_s).collect();
        assert_eq!(total, [100.0, 200.0, 360.0]);
        assert_eq!(t[1].per_user_tok_s, 25.0);
        assert_eq!(t[2].concurrency, 4);
    }

    #[test]
    fn fit_curve_samples_the_prefill_fit() {
        let b = bundle("a");
        let c = fit_curve(&b, 1000.0, 8000.0, 4);
        assert_eq!(c.len(), 4);
        assert!((c[0].0 - 1000.0).abs() < 1e-6 && (c[3].0 - 8000.0).abs() < 1e-6);
        assert!((c[3].1 - 0.85).abs() < 1e-9);
        assert!(fit_curve(&b, 0.0, 10.0, 4).is_empty());
    }

    #[test]
    fn negative_predictions_are_not_shown() {
        let mut b = bundle("a");
        b.sweeps[1].points[2].predicted_ttft_s = Some(-0.3);
        assert_eq!(context_series(&b, Metric::TtftP50).points.len(), 2);
        b.sweeps[1].prefill_fit.as_mut().unwrap().c_s_per_token2 = -1e-7;
        let c = fit_curve(&b, 1000.0, 8000.0, 8);
        assert!(c.len() < 8 && c.iter().all(|p| p.1 >= 0.0), "{c:?}");
    }
}
