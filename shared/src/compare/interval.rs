//! How sure a change is: a 95 % confidence interval for the change of a metric between two
//! points, from their request records.
//!
//! Each run's number gets a standard error on the log scale, and the change `b / a − 1` gets the
//! interval `exp(ln(b / a) ± z·√(se_a² + se_b²)) − 1` (the delta method on the log ratio):
//!
//! - **Percentiles over requests** (TTFT p50 and p99, e2e p50, decode and prefill tok/s p50): the
//!   distribution-free order-statistic interval of the percentile — the requests ranked, the
//!   interval between ranks `n·p ∓ z·√(n·p·(1 − p))` — read as `±z` standard errors of the
//!   log. It needs no assumption about the shape of the latency distribution, and it says
//!   honestly when a sample is too small: with 4 requests a p99 has no interval at all.
//! - **Steady tok/s**: the level's cycles ([`crate::metrics::steady_cycles`]), each opened
//!   and closed at a completion at least a decode time apart so that it holds whole waves of a
//!   closed loop; the ratio of their tokens to their time, its standard error by the cycles'
//!   residuals, with Student's t for the few cycles (its degrees of freedom kept in the
//!   [`Change`], so that a p-value far in the tail is t's, not the normal's). Fewer than
//!   [`crate::metrics::MIN_CYCLES`] cycles give no interval. A level run several times
//!   (`--repeats`) pools the cycles of every pass, so a difference between passes widens it.
//! - **Aggregate tok/s**: batch means — the span cut into [`BATCHES`] equal slices, the token
//!   rate of each slice, the standard error of their mean (with Student's t).
//!
//! A number imported from another tool has no spread: it is taken as exact, so a comparison with
//! an imported run carries the measured run's uncertainty alone, and two imported runs are
//! compared as measured, by the threshold only.

use crate::bundle::{Point, PointStatus, RequestRecord};
use crate::curves::Metric;
use crate::metrics::request::tpot_s;
use crate::metrics::{
    cycle_log_se_df, decode_tok_s, passes, prefill_tok_s, span, steady_cycles, t_quantile,
    tokens_between,
};

/// Why a rate sweep's achieved rate has no interval.
pub const ACHIEVED_NO_INTERVAL: &str =
    "set by the client's arrival schedule, not sampled per request: no interval";

/// The confidence level of every interval.
pub const CONFIDENCE: f64 = 0.95;

/// The two-sided normal quantile of [`CONFIDENCE`].
const Z: f64 = 1.959_963_985;

/// Slices of a window for the batch means of a token rate.
pub const BATCHES: usize = 10;

/// How well one run's number is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spread {
    /// Standard error of the number's natural log (≈ its relative standard error): a symmetric
    /// interval on the log scale (token rates).
    LogSe(f64),
    /// [`Spread::LogSe`] where the standard error is Student's t over `df` degrees of freedom,
    /// already scaled to the normal's reach at [`CONFIDENCE`] (a level's steady tok/s from its
    /// cycles): the interval is the same, a p-value far in the tail is t's.
    LogSeT { se: f64, df: f64 },
    /// How far the [`CONFIDENCE`] interval reaches below and above the number on the log scale,
    /// `ln v − ln lo` and `ln hi − ln v` (percentiles, whose order-statistic interval need not
    /// be centred on the percentile: a median at the top of a cluster has little room above).
    LogBounds { down: f64, up: f64 },
    /// Imported: the source reported the number without its spread; taken as exact.
    Unstated,
    /// Measured, but too few requests (or no per-request records) to say how well.
    TooFew,
    /// No interval, for the reason given, as the compare table says it: a rate sweep's achieved
    /// rate is set by the client's schedule, not sampled per request; a goodput of zero has no
    /// log-scale interval.
    NoInterval(&'static str),
}

/// A metric's value at a point, with its spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub spread: Spread,
}

/// The change of a metric from a baseline point to another, in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// `(value − baseline) / baseline × 100`.
    pub pct: f64,
    /// The [`CONFIDENCE`] interval of `pct`, when both runs' spreads allow one.
    pub interval: Option<(f64, f64)>,
    /// Why there is no interval, when there is none.
    pub no_interval: Option<&'static str>,
    /// Why the change is never significant whatever its interval: a latency change smaller
    /// than the client's timing resolution ([`RESOLUTION_S`]).
    pub below_resolution: bool,
    /// The degrees of freedom of the interval when it is Student's t (Welch–Satterthwaite over
    /// the two runs' cycles), so that [`Change::p_value`] reads t's tail; `None` for a normal
    /// or order-statistic interval.
    pub df: Option<f64>,
}

/// Latency changes smaller than this are not told apart from the noise of the client's and the
/// machine's scheduling between two runs, however tight each run's own interval.
pub const RESOLUTION_S: f64 = 0.001;

impl Change {
    /// The change between two estimates; `None` when the baseline is not a positive number.
    pub fn between(base: Estimate, other: Estimate) -> Option<Change> {
        if !(base.value > 0.0 && other.value >= 0.0 && base.value.is_finite()) {
            return None;
        }
        let ratio = other.value / base.value;
        let pct = (ratio - 1.0) * 100.0;
        if !pct.is_finite() {
            return None;
        }
        let (interval, no_interval) = match (base.spread, other.spread) {
            (Spread::NoInterval(why), _) | (_, Spread::NoInterval(why)) => (None, Some(why)),
            (Spread::TooFew, _) | (_, Spread::TooFew) => (None, Some(TOO_FEW)),
            (Spread::Unstated, Spread::Unstated) => (None, Some(NO_SPREAD)),
            (a, b) if ratio > 0.0 => {
                // The ratio's interval from the two numbers' own (MOVER, on the log scale): the
                // ratio is low when the other run's number is low and the baseline's high.
                let ((down_a, up_a), (down_b, up_b)) = (log_bounds(a), log_bounds(b));
                let l = ratio.ln();
                let lo = ((l - down_b.hypot(up_a)).exp() - 1.0) * 100.0;
                let hi = ((l + up_b.hypot(down_a)).exp() - 1.0) * 100.0;
                (Some((lo, hi)), None)
            }
            _ => (None, Some("a zero value has no interval")),
        };
        Some(Change {
            pct,
            interval,
            no_interval,
            below_resolution: false,
            df: interval.and(welch_df(base.spread, other.spread)),
        })
    }

    /// Beyond the noise and beyond `threshold_pct`: the interval excludes zero (or, between two
    /// imported numbers, there is no noise to be beyond) and the change is at least the
    /// threshold. A change whose runs were too small to judge is never significant.
    pub fn significant(&self, threshold_pct: f64) -> bool {
        if self.below_resolution {
            return false;
        }
        let beyond_noise = match self.interval {
            Some((lo, hi)) => lo > 0.0 || hi < 0.0,
            None => self.no_interval == Some(NO_SPREAD),
        };
        beyond_noise && self.pct.abs() >= threshold_pct
    }

    /// How likely a change at least this far from zero would be if there were none: the
    /// two-sided p-value read off the interval on the log scale, the side facing zero taken as
    /// [`CONFIDENCE`]'s reach: Student's t's over [`Change::df`] when the interval is t's, else
    /// the normal's. `None` without an interval (or with a change that is not a number); 1 for
    /// a change under the timing resolution.
    ///
    /// The tail matters to the verdict, which reads p-values of 0.0025 and less. A change 1.3
    /// times as far from zero as its interval reaches, the interval of two runs' few cycles
    /// (2 degrees of freedom): as a normal, z = 1.3 × 1.96 = 2.55, p = 0.011; as t(2), t = 1.3
    /// × 4.30 = 5.6, p = 0.031.
    pub fn p_value(&self) -> Option<f64> {
        let (lo, hi) = self.interval?;
        if self.below_resolution {
            return Some(1.0);
        }
        let l = (1.0 + self.pct / 100.0).ln();
        let toward_zero = if l < 0.0 {
            (1.0 + hi / 100.0).ln() - l
        } else {
            l - (1.0 + lo / 100.0).ln()
        };
        if !(l.is_finite() && toward_zero.is_finite()) {
            return None;
        }
        if toward_zero <= 0.0 {
            return Some(if l == 0.0 { 1.0 } else { 0.0 });
        }
        if let Some(df) = self.df.filter(|d| d.is_finite() && *d > 0.0) {
            let t = l.abs() / (toward_zero / crate::metrics::t_quantile(df));
            return Some((2.0 * crate::metrics::student::upper_tail(t, df)).min(1.0));
        }
        let z = l.abs() / (toward_zero / Z);
        Some((2.0 * normal_upper_tail(z)).min(1.0))
    }

    /// The change of a latency in seconds from `base_s` to `other_s`, marked when the two differ
    /// by less than [`RESOLUTION_S`].
    pub fn of_latency(self, base_s: f64, other_s: f64) -> Change {
        Change {
            below_resolution: (other_s - base_s).abs() < RESOLUTION_S,
            ..self
        }
    }

    /// Half the interval's width in percentage points, for a short `±` display.
    pub fn half_width(&self) -> Option<f64> {
        self.interval.map(|(lo, hi)| (hi - lo) / 2.0)
    }
}

/// Why a measured number has no interval: too few requests (or waves) to tell its spread.
pub const TOO_FEW: &str = "too few requests for an interval";

/// Why two imported numbers have no interval.
pub const NO_SPREAD: &str = "imported numbers have no spread: compared as reported";

/// How far a number's interval reaches below and above it on the log scale.
fn log_bounds(s: Spread) -> (f64, f64) {
    match s {
        Spread::LogSe(se) | Spread::LogSeT { se, .. } => (Z * se, Z * se),
        Spread::LogBounds { down, up } => (down, up),
        Spread::Unstated | Spread::TooFew | Spread::NoInterval(_) => (0.0, 0.0),
    }
}

/// The degrees of freedom of the log ratio of two numbers when at least one is Student's t and
/// the other t or exact (imported): Welch–Satterthwaite over their unscaled variances, `(v_a +
/// v_b)² / (v_a²/df_a + v_b²/df_b)`. `None` when either side is normal or order-statistic, or
/// both exact.
///
/// Worked example: two runs of 3 cycles (2 degrees of freedom each) with equal standard errors
/// give 4; one of them against an imported number gives 2.
fn welch_df(a: Spread, b: Spread) -> Option<f64> {
    let part = |s: Spread| match s {
        Spread::LogSeT { se, df } if df > 0.0 => {
            let v = crate::metrics::student::unscaled_se(se, df).powi(2);
            Some((v, v * v / df))
        }
        Spread::Unstated => Some((0.0, 0.0)),
        _ => None,
    };
    let ((va, wa), (vb, wb)) = (part(a)?, part(b)?);
    let df = (va + vb).powi(2) / (wa + wb);
    (df.is_finite() && df > 0.0).then_some(df)
}

/// The value of `metric` at `p` (as [`Metric::of`] gives it) with its spread.
pub fn estimate(metric: Metric, p: &Point) -> Option<Estimate> {
    if p.status != PointStatus::Ok {
        return None;
    }
    let value = metric.of(p)?;
    let spread = if p.summary.is_none() {
        Spread::Unstated
    } else {
        spread_of(metric, p, value).unwrap_or(Spread::TooFew)
    };
    Some(Estimate { value, spread })
}

/// The spread of `metric`, whose value is `value`, at a measured point, from its records.
fn spread_of(metric: Metric, p: &Point, value: f64) -> Option<Spread> {
    let ok: Vec<&RequestRecord> = p.requests.iter().filter(|r| r.is_ok()).collect();
    let values = |f: &dyn Fn(&RequestRecord) -> Option<f64>| -> Vec<f64> {
        ok.iter().filter_map(|r| f(r)).collect()
    };
    match metric {
        Metric::TtftP50 => latency_log_bounds(values(&|r| r.ttft_s), 0.5, value),
        Metric::TtftP99 => latency_log_bounds(values(&|r| r.ttft_s), 0.99, value),
        Metric::E2eP50 => latency_log_bounds(values(&|r| Some(r.e2e_s)), 0.5, value),
        Metric::E2eP99 => latency_log_bounds(values(&|r| Some(r.e2e_s)), 0.99, value),
        Metric::TpotP50 => percentile_log_bounds(values(&tpot_s), 0.5, value),
        Metric::TtftP90 => latency_log_bounds(values(&|r| r.ttft_s), 0.9, value),
        Metric::TpotP90 => percentile_log_bounds(values(&tpot_s), 0.9, value),
        Metric::E2eP90 => latency_log_bounds(values(&|r| Some(r.e2e_s)), 0.9, value),
        Metric::TtftMean => mean_log_se(&values(&|r| r.ttft_s)).map(Spread::LogSe),
        Metric::TpotMean => mean_log_se(&values(&tpot_s)).map(Spread::LogSe),
        Metric::E2eMean => mean_log_se(&values(&|r| Some(r.e2e_s))).map(Spread::LogSe),
        Metric::GoodputFraction | Metric::GoodRps => match p.goodput? {
            g if g.good == 0 && g.requests > 0 => Some(Spread::NoInterval(
                "no request met the SLO, and a zero has no interval: shown, not judged",
            )),
            g => proportion_log_bounds(g.good, g.requests),
        },
        Metric::AchievedRps => Some(Spread::NoInterval(ACHIEVED_NO_INTERVAL)),
        Metric::LagP99 => Some(Spread::NoInterval(
            "the client's own lateness: shown, not judged",
        )),
        Metric::DecodeTokSP50 => percentile_log_bounds(values(&decode_tok_s), 0.5, value),
        Metric::PrefillTokSP50 => percentile_log_bounds(values(&prefill_tok_s), 0.5, value),
        Metric::SteadyTokS => cycle_log_se_df(&steady_cycles(&p.requests, p.concurrency))
            .map(|(se, df)| Spread::LogSeT { se, df }),
        Metric::AggTokS => {
            let spans: Vec<(f64, f64)> =
                passes(&p.requests).iter().filter_map(|r| span(r)).collect();
            rate_log_se(&p.requests, &spans).map(Spread::LogSe)
        }
        // SGLang's gauge: the spread of its readings, whose mean the number is. Otherwise the
        // spread of each request's length (the server's count of it, else its tokens per
        // chunk), applied to the level's number whether it is theirs or vLLM's counters over
        // the same requests' steps.
        Metric::AcceptLength => match crate::metrics::gauge_accept_readings(p) {
            Some(readings) => readings_log_se(&readings).map(Spread::LogSe),
            None => mean_log_se(&crate::metrics::request_accept_lengths(p)).map(Spread::LogSe),
        },
        // The level's ITL is over every gap, which the records keep only as per-request
        // summaries; requests/s moves in whole requests. Neither has an interval.
        Metric::ItlP50 | Metric::RequestS => None,
    }
}

/// The fewest distinct readings of a server's gauge whose mean gets an interval.
pub const MIN_READINGS: usize = 5;

/// The standard error of the log of the mean of a gauge's `readings`, each a mean over an
/// interval of the server's own, widened by Student's t for their number (a level has a dozen
/// or so); `None` under [`MIN_READINGS`] or a mean that is not positive.
///
/// Worked example: readings 2.5, 2.7, 2.5, 2.7, 2.5, 2.7: mean 2.6, sample sd √(0.06/5) ≈
/// 0.1095, standard error 0.1095 / √6 ≈ 0.0447, 1.72 % of the mean; × t(5) / z ≈ 2.571 / 1.960
/// gives 2.26 %.
pub fn readings_log_se(readings: &[f64]) -> Option<f64> {
    let (se, n) = relative_se(readings, MIN_READINGS)?;
    Some(se * (crate::metrics::t_quantile(n as f64 - 1.0) / Z))
}

/// The relative standard error of the mean of the finite `values`, `s / √n / mean`, and their
/// number; `None` under `min` of them or a mean that is not positive.
fn relative_se(values: &[f64], min: usize) -> Option<(f64, usize)> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < min.max(2) {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if !(mean > 0.0 && mean.is_finite()) {
        return None;
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let se = (var / n).sqrt() / mean;
    se.is_finite().then_some((se, v.len()))
}

/// The fewest requests whose mean gets an interval: the normal approximation of a latency's
/// (skewed) mean wants a few dozen.
pub const MEAN_MIN_REQUESTS: usize = 30;

/// The standard error of the log of the mean of `values` (the mean's relative standard error,
/// `s / √n / mean`); `None` under [`MEAN_MIN_REQUESTS`] finite values or a mean that is not
/// positive.
///
/// Worked example: 30 values, half 1 and half 3: mean 2, sample sd √(30/29) ≈ 1.017, so the
/// standard error is 1.017 / √30 ≈ 0.1857 and its share of the mean 0.0928.
pub fn mean_log_se(values: &[f64]) -> Option<f64> {
    relative_se(values, MEAN_MIN_REQUESTS).map(|(se, _)| se)
}

/// How far the Wilson score interval (at [`CONFIDENCE`]) of the proportion `good / n` reaches
/// below and above it on the log scale: the goodput fraction's spread, each request a trial.
/// Good requests per second (`good / wall`) take the same relative spread, the wall time held
/// fixed. `None` when no request or no good one (a zero has no log).
///
/// Worked example: 45 good of 50 (0.9) gives the interval 0.786 to 0.957.
pub fn proportion_log_bounds(good: u64, n: u64) -> Option<Spread> {
    if n == 0 || good == 0 || good > n {
        return None;
    }
    let (k, n) = (good as f64, n as f64);
    let f = k / n;
    let z2 = Z * Z;
    let centre = (f + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (f * (1.0 - f) / n + z2 / (4.0 * n * n)).sqrt();
    let (lo, hi) = (
        (centre - half).max(f64::MIN_POSITIVE),
        (centre + half).min(1.0),
    );
    Some(Spread::LogBounds {
        down: (f.ln() - lo.ln()).max(0.0),
        up: (hi.ln() - f.ln()).max(0.0),
    })
}

/// How far the [`CONFIDENCE`] interval of the `q` quantile of `values` reaches below and above
/// `value` (the quantile as reported) on the log scale: the order-statistic interval of
/// [`percentile_log_se`], its reach scaled from its actual coverage to [`CONFIDENCE`]. `None`
/// when the sample is too small for the interval to close.
///
/// `values` in the order the requests were sent: the ranks are widened by their
/// [`design_effect`] when neighbours in that order are alike. For latencies in seconds, see
/// [`latency_log_bounds`].
pub fn percentile_log_bounds(values: Vec<f64>, q: f64, value: f64) -> Option<Spread> {
    quantile_log_bounds(values, q, value, 0.0)
}

/// [`percentile_log_bounds`] for a latency that is one span of the client's clock (TTFT, e2e):
/// its likeness to its neighbours is judged on the client's timing resolution
/// ([`RESOLUTION_S`]), since two requests whose spans differ by less cannot be said to fall on
/// different sides of a quantile. A TPOT is such a span divided by its tokens, resolved far
/// finer than the grid (a TPOT of 20 ms varies by tenths of a millisecond), and keeps
/// [`percentile_log_bounds`].
///
/// At C=1 against the kpro5 simulator, 18 TTFTs from 0.1508 to 0.1522 s rose by about a
/// millisecond over the level; their shares at or below the median, in batches of four, were 0.75,
/// 0.75, 0.5 and 0: a design effect of 5.3, which left the equivalent of three independent
/// requests and no interval at all, for a median known to within a millisecond. On the
/// millisecond grid every batch holds all four at or below the median: no design effect.
pub fn latency_log_bounds(values: Vec<f64>, q: f64, value: f64) -> Option<Spread> {
    quantile_log_bounds(values, q, value, RESOLUTION_S)
}

/// [`percentile_log_bounds`] with the design effect judged on a grid of `resolution` (none at 0).
fn quantile_log_bounds(
    mut values: Vec<f64>,
    q: f64,
    value: f64,
    resolution: f64,
) -> Option<Spread> {
    values.retain(|v| v.is_finite());
    let n = values.len();
    if n < 2 || value.is_nan() || value <= 0.0 {
        return None;
    }
    let deff = design_effect_on_grid(&values, q, value, resolution);
    values.sort_by(f64::total_cmp);
    let (j, k, coverage) = dependent_ranks(n, q, deff)?;
    let (a, b) = (values[j - 1], values[k - 1]);
    let z = normal_quantile(0.5 + coverage / 2.0);
    if !(a > 0.0 && z > 0.0) {
        return None;
    }
    let scale = Z / z;
    let down = (value.ln() - a.ln()).max(0.0) * scale;
    let up = (b.ln() - value.ln()).max(0.0) * scale;
    Some(Spread::LogBounds { down, up })
}

/// The standard error of the log of the `q` quantile of `values`, from the distribution-free
/// order-statistic interval; `None` when the sample is too small for the interval to close.
///
/// With `B ~ Binomial(n, q)` the number of values below the true quantile, `[x₍ⱼ₎, x₍ₖ₎]`
/// covers it with probability `P(j ≤ B < k)`. The ranks are the narrowest the binomial allows
/// with at most `(1 − CONFIDENCE) / 2` on each side; the interval's actual coverage `c` (above
/// [`CONFIDENCE`] for small samples) is turned into a standard error by its own normal quantile,
/// `(ln x₍ₖ₎ − ln x₍ⱼ₎) / (2 · z₍c₎)`.
pub fn percentile_log_se(mut values: Vec<f64>, q: f64) -> Option<f64> {
    values.retain(|v| v.is_finite());
    let n = values.len();
    if n < 2 {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let (j, k, coverage) = order_ranks(n, q)?;
    let (a, b) = (values[j - 1], values[k - 1]);
    let z = normal_quantile(0.5 + coverage / 2.0);
    (a > 0.0 && z > 0.0).then(|| (b.ln() - a.ln()) / (2.0 * z))
}

/// The 1-based ranks `(j, k)` of the order-statistic interval of the `q` quantile of `n` values
/// and its coverage `P(j ≤ B < k)`, `B ~ Binomial(n, q)`; `None` when no rank leaves at most
/// `(1 − CONFIDENCE) / 2` below or above.
pub fn order_ranks(n: usize, q: f64) -> Option<(usize, usize, f64)> {
    if n == 0 || !(0.0..=1.0).contains(&q) || q == 0.0 || q == 1.0 {
        return None;
    }
    let tail = (1.0 - CONFIDENCE) / 2.0;
    // cdf[i] = P(B ≤ i), the pmf built in log space so a large n does not underflow.
    let (lq, lp) = (q.ln(), (1.0 - q).ln());
    let mut log_pmf = n as f64 * lp;
    let mut cdf = Vec::with_capacity(n + 1);
    let mut acc = 0.0;
    for i in 0..=n {
        if i > 0 {
            log_pmf += ((n - i + 1) as f64).ln() - (i as f64).ln() + lq - lp;
        }
        acc += log_pmf.exp();
        cdf.push(acc.min(1.0));
    }
    // j: the largest rank with P(B < j) = cdf[j − 1] within the tail.
    let j = (1..=n).take_while(|&j| cdf[j - 1] <= tail).last()?;
    // k: the smallest rank with P(B ≥ k) = 1 − cdf[k − 1] within the tail.
    let k = (1..=n).find(|&k| 1.0 - cdf[k - 1] <= tail)?;
    (j < k).then(|| (j, k, cdf[k - 1] - cdf[j - 1]))
}

/// How many times the variance of the share of `values` at or below `cut` exceeds the
/// binomial's `q(1 − q)/n`, from batch means over `values` in the order given; at least 1.
///
/// The order-statistic interval counts requests as independent draws, and a closed loop's are
/// not: requests sent one after another meet the same queue, so their TTFTs rise and fall
/// together, and which side of the median a run of them falls on moves between runs more than
/// independent draws would. Against the speculative kpro5 simulator at C=64 (16 runs with
/// different seeds), TTFT p50 spread ±0.6 % (1.96 standard deviations) where each run's
/// interval reached ±0.35 %, and the share below the median in batches of consecutive
/// requests varied 7.5 times more than the binomial's. The values are cut into
/// `√n` batches (4 to 20) of consecutive requests; the share of each at or below `cut` gives
/// the batch-means variance. A batch expected to hold fewer than two values on the rarer side
/// (a p99 of a few hundred requests) cannot show it: 1.
pub fn design_effect(values: &[f64], q: f64, cut: f64) -> f64 {
    design_effect_on_grid(values, q, cut, 0.0)
}

/// [`design_effect`] with the values and the cut rounded to the nearest multiple of
/// `resolution` (as they are when it is 0): values that differ by less than it are ties.
fn design_effect_on_grid(values: &[f64], q: f64, cut: f64, resolution: f64) -> f64 {
    let on_grid = |v: f64| {
        if resolution > 0.0 {
            (v / resolution).round()
        } else {
            v
        }
    };
    let cut = on_grid(cut);
    let n = values.len();
    let batches = ((n as f64).sqrt() as usize).clamp(4, 20);
    let size = n / batches;
    if size == 0 || (q.min(1.0 - q) * size as f64) < 2.0 {
        return 1.0;
    }
    let shares: Vec<f64> = values
        .chunks_exact(size)
        .take(batches)
        .map(|b| b.iter().filter(|&&v| on_grid(v) <= cut).count() as f64 / size as f64)
        .collect();
    let k = shares.len() as f64;
    let share = shares.iter().sum::<f64>() / k;
    if !(share > 0.0 && share < 1.0) {
        return 1.0;
    }
    let var = shares.iter().map(|s| (s - share).powi(2)).sum::<f64>() / (k - 1.0);
    // The variance is itself estimated from a few batches: Student's t for their number less
    // one, as a factor on it.
    let t = crate::metrics::t_quantile(k - 1.0) / Z;
    let deff = size as f64 * var / (share * (1.0 - share)) * t * t;
    if deff.is_finite() { deff.max(1.0) } else { 1.0 }
}

/// The ranks of the order-statistic interval of the `q` quantile of `n` values whose
/// [`design_effect`] is `deff`: those of `n / deff` independent values, scaled back to `n`
/// (outwards), with their coverage. The same as [`order_ranks`] at `deff` 1.
pub fn dependent_ranks(n: usize, q: f64, deff: f64) -> Option<(usize, usize, f64)> {
    if deff.is_nan() || deff <= 1.0 {
        return order_ranks(n, q);
    }
    let n_eff = (n as f64 / deff).floor() as usize;
    let (j, k, coverage) = order_ranks(n_eff, q)?;
    let scale = n as f64 / n_eff as f64;
    let j = ((j as f64 * scale).floor() as usize).max(1);
    let k = ((k as f64 * scale).ceil() as usize).min(n);
    (j < k).then_some((j, k, coverage))
}

/// `P(Z > z)` for a standard normal `Z` (Abramowitz and Stegun 7.1.26 for erfc; error below
/// 1.5e-7).
pub(crate) fn normal_upper_tail(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if z >= 0.0 {
        erfc / 2.0
    } else {
        1.0 - erfc / 2.0
    }
}

/// The standard normal quantile (Abramowitz and Stegun 26.2.23; error below 4.5e-4).
pub(crate) fn normal_quantile(p: f64) -> f64 {
    if !(0.0 < p && p < 1.0) {
        return f64::NAN;
    }
    let upper = p > 0.5;
    let tail = if upper { 1.0 - p } else { p };
    let t = (-2.0 * tail.ln()).sqrt();
    let z = t
        - (2.515_517 + 0.802_853 * t + 0.010_328 * t * t)
            / (1.0 + 1.432_788 * t + 0.189_269 * t * t + 0.001_308 * t * t * t);
    if upper { z } else { -z }
}

/// The standard error of the log of the token rate over `windows` (one per pass of the level),
/// by batch means: each window cut into [`BATCHES`] equal slices, the token rate of every slice
/// of every window pooled, and Student's t for their number less one. The tokens are what the
/// server streamed, as for the aggregate: a request the client cut at a level's end counts what
/// it received.
pub fn rate_log_se(records: &[RequestRecord], windows: &[(f64, f64)]) -> Option<f64> {
    let mut rates = Vec::with_capacity(windows.len() * BATCHES);
    for &(lo, hi) in windows {
        if !(hi > lo && lo.is_finite() && hi.is_finite()) {
            continue;
        }
        let step = (hi - lo) / BATCHES as f64;
        rates.extend((0..BATCHES).map(|i| {
            let (a, b) = (lo + step * i as f64, lo + step * (i + 1) as f64);
            let tokens: f64 = records
                .iter()
                .filter(|r| r.is_ok() || crate::metrics::level::is_aborted(r))
                .map(|r| tokens_between(r, a, b))
                .sum();
            tokens / step
        }));
    }
    if rates.len() < 2 {
        return None;
    }
    let k = rates.len() as f64;
    let mean = rates.iter().sum::<f64>() / k;
    if mean <= 0.0 {
        return None;
    }
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (k - 1.0);
    // Student's t for the few batches, expressed as the equivalent normal standard error.
    Some(var.sqrt() / k.sqrt() / mean * (t_quantile(k - 1.0) / Z))
}

#[cfg(test)]
mod tests {

    /// Whether the 95 % interval of the median of `values` (sent in that order) covers `truth`.
    fn median_covers(values: &[f64], truth: f64, dependent: bool) -> bool {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = values.len();
        let median = crate::metrics::percentile(values, 50.0).unwrap();
        let deff = if dependent {
            design_effect(values, 0.5, median)
        } else {
            1.0
        };
        let (j, k, _) = dependent_ranks(n, 0.5, deff).unwrap();
        sorted[j - 1] <= truth && truth <= sorted[k - 1]
    }

    #[test]
    fn the_median_of_requests_that_resemble_their_neighbours_is_widened_to_cover() {
        // 400 levels of 200 requests whose latency is exp(x), x an AR(1) series with φ = 0.8
        // (each request like the one before: a queue that builds and drains); the true median
        // is exp(0) = 1. Counted as independent draws the median's interval covers it far less
        // often than 95 %; widened by the design effect, about 95 %.
        let mut normal = crate::test_support::Normal(11);
        let (mut plain, mut widened) = (0, 0);
        for _ in 0..400 {
            let mut x = normal.draw() / (1.0f64 - 0.64).sqrt();
            let values: Vec<f64> = (0..200)
                .map(|_| {
                    x = 0.8 * x + normal.draw();
                    x.exp()
                })
                .collect();
            plain += usize::from(median_covers(&values, 1.0, false));
            widened += usize::from(median_covers(&values, 1.0, true));
        }
        assert!(plain < 320, "plain {plain} of 400");
        assert!((360..=396).contains(&widened), "widened {widened} of 400");
    }

    #[test]
    fn independent_requests_keep_about_their_plain_interval() {
        // The same, with independent requests (φ = 0): the design effect stays near 1, and
        // the widened interval covers about as often as the plain one.
        let mut normal = crate::test_support::Normal(5);
        let (mut plain, mut widened, mut deffs) = (0, 0, Vec::new());
        for _ in 0..400 {
            let values: Vec<f64> = (0..200).map(|_| normal.draw().exp()).collect();
            plain += usize::from(median_covers(&values, 1.0, false));
            widened += usize::from(median_covers(&values, 1.0, true));
            deffs.push(design_effect(&values, 0.5, 1.0));
        }
        let mean_deff = deffs.iter().sum::<f64>() / deffs.len() as f64;
        assert!((370..=396).contains(&plain), "plain {plain} of 400");
        assert!(
            widened >= plain && widened <= 398,
            "widened {widened} of 400"
        );
        assert!(mean_deff < 1.5, "{mean_deff}");
    }

    #[test]
    fn the_design_effect_by_hand() {
        // 16 values in 4 batches of 4; the cut at 5 leaves 4, 2, 2 and 0 of each batch at or
        // below it: shares 1, 0.5, 0.5, 0 (mean 0.5, variance 1/6), so the design effect is
        // 4 · (1/6) / 0.25 = 8/3, times (t₃ / z)² for a variance from four batches.
        let v = [
            1.0, 2.0, 3.0, 4.0, 1.0, 9.0, 2.0, 9.0, 9.0, 1.0, 9.0, 2.0, 9.0, 9.0, 9.0, 9.0,
        ];
        let t = crate::metrics::t_quantile(3.0) / Z;
        assert!((design_effect(&v, 0.5, 5.0) - 8.0 / 3.0 * t * t).abs() < 1e-12);
        // Alternating values: every batch holds half: no more than independent draws.
        let alt: Vec<f64> = (0..16).map(|i| (i % 2) as f64).collect();
        assert_eq!(design_effect(&alt, 0.5, 0.5), 1.0);
        // A p99 of 100 values: a batch of 10 expects 0.1 values above it: cannot tell.
        let many: Vec<f64> = (0..100).map(f64::from).collect();
        assert_eq!(design_effect(&many, 0.99, 98.0), 1.0);
        // At 1 the ranks are the independent ones.
        assert_eq!(dependent_ranks(100, 0.5, 1.0), order_ranks(100, 0.5));
        // At 4, those of 25 values scaled by 4, outwards.
        let (j, k, c) = order_ranks(25, 0.5).unwrap();
        assert_eq!(dependent_ranks(100, 0.5, 4.0), Some((j * 4, k * 4, c)));
    }
    use super::*;

    /// The worked example of [`mean_log_se`], and its floor of requests.
    #[test]
    fn a_means_relative_standard_error_by_hand() {
        let v: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { 1.0 } else { 3.0 })
            .collect();
        let se = mean_log_se(&v).unwrap();
        let want = (30.0_f64 / 29.0).sqrt() / 30.0_f64.sqrt() / 2.0;
        assert!((se - want).abs() < 1e-12, "{se} vs {want}");
        assert!((se - 0.0928).abs() < 1e-4);
        assert_eq!(mean_log_se(&v[..29]), None);
        assert_eq!(mean_log_se(&[0.0; 40]), None);
    }

    /// A reproducible uniform(0, 1) stream.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
        /// Exponential with the given mean: a latency-like, skewed sample.
        fn exp(&mut self, mean: f64) -> f64 {
            -mean * (1.0 - self.next()).ln()
        }
    }

    fn p(values: &[f64], q: f64) -> f64 {
        crate::metrics::percentile(values, q * 100.0).unwrap()
    }

    fn change(a: &[f64], b: &[f64], q: f64) -> Change {
        let est = |v: &[f64]| Estimate {
            value: p(v, q),
            spread: percentile_log_bounds(v.to_vec(), q, p(v, q)).unwrap_or(Spread::TooFew),
        };
        Change::between(est(a), est(b)).unwrap()
    }

    #[test]
    fn a_known_shift_is_inside_its_interval_and_significant() {
        // Exponential latencies with means 1.0 and 1.2: the true change of every percentile
        // is +20 %.
        let mut rng = Rng(1);
        let a: Vec<f64> = (0..400).map(|_| rng.exp(1.0)).collect();
        let b: Vec<f64> = (0..400).map(|_| rng.exp(1.2)).collect();
        let c = change(&a, &b, 0.5);
        let (lo, hi) = c.interval.unwrap();
        assert!(lo < 20.0 && 20.0 < hi, "{c:?}");
        // The median of 400 exponential samples is known to about ±7 %: a change to about ±10 %
        // on each side of the estimate, a little more for the conservative ranks.
        assert!(hi - lo < 70.0, "{c:?}");
        // A 10 × larger shift is significant at 400 requests; the same at 8 is not.
        let b2: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        assert!(change(&a, &b2, 0.5).significant(5.0));
        let small: Vec<f64> = a[..8].to_vec();
        let small2: Vec<f64> = b[..8].to_vec();
        assert!(!change(&small, &small2, 0.5).significant(5.0));
    }

    #[test]
    fn the_interval_narrows_as_requests_grow() {
        let mut rng = Rng(2);
        let width = |n: usize, rng: &mut Rng| {
            let a: Vec<f64> = (0..n).map(|_| rng.exp(1.0)).collect();
            let b: Vec<f64> = (0..n).map(|_| rng.exp(1.0)).collect();
            change(&a, &b, 0.5).half_width().unwrap()
        };
        let (w100, w1600) = (width(100, &mut rng), width(1600, &mut rng));
        // The standard error falls as 1/√n: 16 × the requests, about a quarter of the width.
        assert!(w1600 < w100 / 2.5 && w1600 > w100 / 6.0, "{w100} {w1600}");
    }

    #[test]
    fn same_distributions_raise_few_false_alarms() {
        // 400 pairs of runs of one configuration (exponential TTFTs, 64 requests each): a
        // 95 % interval should exclude zero in about 5 % of them, and the 5 % threshold cuts
        // that further.
        let mut rng = Rng(3);
        let (mut beyond_noise, mut gated) = (0, 0);
        for _ in 0..400 {
            let a: Vec<f64> = (0..64).map(|_| rng.exp(0.3)).collect();
            let b: Vec<f64> = (0..64).map(|_| rng.exp(0.3)).collect();
            let c = change(&a, &b, 0.5);
            beyond_noise += usize::from(c.significant(0.0));
            gated += usize::from(c.significant(5.0) && c.pct > 0.0);
        }
        println!("beyond the noise: {beyond_noise} of 400; gated at 5 %: {gated}");
        assert!((4..=40).contains(&beyond_noise), "{beyond_noise} of 400");
        assert!(gated <= beyond_noise);
    }

    #[test]
    fn a_median_at_the_top_of_a_cluster_is_not_called_worse_than_a_value_inside_its_interval() {
        // Eight TTFTs: two at 0.15 s, six at 0.60 s (the first wave of a closed loop). The
        // median, 0.60, sits at the top of its order-statistic interval [0.15, 0.60]; an
        // imported 0.34 lies inside that interval, so the change is not beyond the noise. A
        // symmetric interval around 0.60 called it +77 % worse.
        let ttfts = [0.151, 0.152, 0.601, 0.6013, 0.6016, 0.6016, 0.6017, 0.6018];
        let value = p(&ttfts, 0.5);
        let spread = percentile_log_bounds(ttfts.to_vec(), 0.5, value).unwrap();
        let Spread::LogBounds { down, up } = spread else {
            panic!("{spread:?}")
        };
        assert!(up < 0.001 && down > 0.5, "down {down}, up {up}");
        let imported = Estimate {
            value: 0.34,
            spread: Spread::Unstated,
        };
        let c = Change::between(imported, Estimate { value, spread }).unwrap();
        let (lo, hi) = c.interval.unwrap();
        assert!(lo < 0.0 && hi > 70.0, "({lo}, {hi})");
        assert!(!c.significant(5.0));
    }

    #[test]
    fn a_drift_below_the_timing_resolution_does_not_take_a_latencys_interval_away() {
        use crate::test_support::ONE_SLOT_TTFTS;
        let v = ONE_SLOT_TTFTS.to_vec();
        let median = crate::metrics::percentile(&v, 50.0).unwrap();
        // Taken at the microsecond, the batches of four hold 3, 3, 2 and 0 at or below the
        // median: a design effect of 5.3, three independent requests' worth, no interval.
        let t = crate::metrics::t_quantile(3.0) / Z;
        // shares 0.75, 0.75, 0.5, 0: mean 0.5, variance 0.375 / 3; 4 · 0.125 / 0.25 = 2, times
        // (t₃ / z)².
        let by_hand = 2.0 * t * t;
        assert!((design_effect(&v, 0.5, median) - by_hand).abs() < 1e-9);
        assert_eq!(percentile_log_bounds(v.clone(), 0.5, median), None);
        // On the millisecond grid they are ties: every batch holds all four, and the median
        // has the plain order-statistic interval of 18 requests, [x₅, x₁₄].
        assert_eq!(design_effect_on_grid(&v, 0.5, median, RESOLUTION_S), 1.0);
        let Some(Spread::LogBounds { down, up }) = latency_log_bounds(v.clone(), 0.5, median)
        else {
            panic!("no interval")
        };
        let mut sorted = v;
        sorted.sort_by(f64::total_cmp);
        let (j, k, c) = order_ranks(18, 0.5).unwrap();
        assert_eq!((j, k), (5, 14));
        let scale = Z / normal_quantile(0.5 + c / 2.0);
        assert!((down - (median.ln() - sorted[4].ln()) * scale).abs() < 1e-12);
        assert!((up - (sorted[13].ln() - median.ln()) * scale).abs() < 1e-12);
        assert!(down < 0.01 && up < 0.01, "down {down}, up {up}");
        // A spread of tens of milliseconds is not on the grid's scale: the same design effect.
        let wide: Vec<f64> = ONE_SLOT_TTFTS.iter().map(|t| (t - 0.15) * 50.0).collect();
        let wide_median = crate::metrics::percentile(&wide, 50.0).unwrap();
        assert_eq!(
            design_effect_on_grid(&wide, 0.5, wide_median, RESOLUTION_S),
            design_effect(&wide, 0.5, wide_median)
        );
    }

    #[test]
    fn order_ranks_by_hand() {
        // n = 8, median: P(B = 0) = 1/256 is within 2.5 %, P(B ≤ 1) = 9/256 is not, so the
        // interval is [x₁, x₈] with coverage 1 − 2/256.
        let (j, k, c) = order_ranks(8, 0.5).unwrap();
        assert_eq!((j, k), (1, 8));
        assert!((c - (1.0 - 2.0 / 256.0)).abs() < 1e-12);
        // Five values cannot bound a median at 95 %: P(B = 0) = 1/32 > 2.5 %.
        assert_eq!(order_ranks(5, 0.5), None);
        assert!(order_ranks(6, 0.5).is_some());
        // A p99 needs hundreds of values for its upper end.
        assert_eq!(order_ranks(100, 0.99), None);
        assert!(order_ranks(400, 0.99).is_some());
        let (j, k, c) = order_ranks(10_000, 0.5).unwrap();
        assert!(
            j < 5000 && k > 5000 && k - j < 220 && c >= 0.95,
            "{j} {k} {c}"
        );
        assert!((normal_quantile(0.975) - 1.96).abs() < 1e-3);
    }

    #[test]
    fn a_p99_of_four_requests_has_no_interval() {
        let c = change(&[1.0, 1.1, 1.2, 1.3], &[1.0, 1.1, 1.2, 1.33], 0.99);
        assert_eq!(c.interval, None);
        assert_eq!(c.no_interval, Some("too few requests for an interval"));
        assert!(
            !c.significant(1.0),
            "+2.3 % over 4 requests is not a verdict"
        );
    }

    #[test]
    fn imported_numbers_compare_as_reported() {
        let exact = |v| Estimate {
            value: v,
            spread: Spread::Unstated,
        };
        let c = Change::between(exact(100.0), exact(110.0)).unwrap();
        assert!((c.pct - 10.0).abs() < 1e-12 && c.interval.is_none());
        assert!(c.significant(5.0) && !c.significant(20.0));
        // Against a measured run, the measured run's spread alone gives the interval.
        let measured = Estimate {
            value: 110.0,
            spread: Spread::LogSe(0.01),
        };
        let (lo, hi) = Change::between(exact(100.0), measured)
            .unwrap()
            .interval
            .unwrap();
        assert!((lo - (1.1 * (-Z * 0.01f64).exp() - 1.0) * 100.0).abs() < 1e-9);
        assert!((hi - (1.1 * (Z * 0.01f64).exp() - 1.0) * 100.0).abs() < 1e-9);
    }

    #[test]
    fn batch_means_of_a_steady_stream_are_tight_and_of_a_bursty_one_wide() {
        use crate::metrics::request::tests::rec;
        // One slot, ten back-to-back requests of 101 tokens over 1 s each: a steady stream.
        let steady: Vec<RequestRecord> = (0..10).map(|i| rec(i as f64, 0.0, 1.0, 101)).collect();
        let se = rate_log_se(&steady, &[(0.0, 10.0)]).unwrap();
        assert!(se < 0.01, "{se}");
        // The same tokens with a 1 s TTFT gap every other second: the batch rates alternate.
        let bursty: Vec<RequestRecord> =
            (0..5).map(|i| rec(2.0 * i as f64, 1.0, 2.0, 101)).collect();
        let se2 = rate_log_se(&bursty, &[(0.0, 10.0)]).unwrap();
        assert!(se2 > 10.0 * se, "{se2} vs {se}");
    }

    /// The worked example of [`readings_log_se`], and its floor of readings.
    #[test]
    fn a_gauges_readings_by_hand() {
        let r = [2.5, 2.7, 2.5, 2.7, 2.5, 2.7];
        let se = readings_log_se(&r).unwrap();
        let want = (0.06_f64 / 5.0).sqrt() / 6.0_f64.sqrt() / 2.6 * t_quantile(5.0) / Z;
        assert!((se - want).abs() < 1e-12, "{se} vs {want}");
        assert!((se - 0.0226).abs() < 2e-4, "{se}");
        assert_eq!(readings_log_se(&r[..4]), None);
    }

    /// SGLang's acceptance at a level is the mean of a dozen gauge readings: two runs of one
    /// server whose readings differ by chance are no change, though their thousands of
    /// streamed chunks (each request's tokens per chunk, 2.60 in every one) agree to the last
    /// digit and would have called it one.
    #[test]
    fn an_acceptance_read_off_sglangs_gauge_has_the_readings_spread() {
        use std::collections::BTreeMap;

        use crate::bundle::{MetricScheme, ServerSamples};
        use crate::curves::tests::point;
        use crate::metrics::request::tests::rec;
        let level = |readings: &[f64]| {
            let mut gauges = BTreeMap::new();
            gauges.insert(
                "sglang:spec_accept_length".to_string(),
                readings.iter().map(|&r| Some(r)).collect(),
            );
            let mut p = point(64, 1000, 1.0);
            p.server_samples = Some(ServerSamples {
                scheme: MetricScheme::Sglang,
                gauges,
                ..ServerSamples::default()
            });
            p.requests = (0..40)
                .map(|i| {
                    let mut r = rec(i as f64, 0.1, 10.0, 261);
                    r.chunks = 101;
                    r
                })
                .collect();
            p
        };
        // Readings as SGLang logged them at C=64 in one run (sd 0.10), each read twice, and
        // the same shifted up 2.9 %.
        let a = [
            2.45, 2.62, 2.64, 2.52, 2.57, 2.67, 2.55, 2.6, 2.57, 2.6, 2.55, 2.85,
        ];
        let twice: Vec<f64> = a.iter().flat_map(|&r| [r, r]).collect();
        let b: Vec<f64> = a.iter().map(|r| r * 1.029).collect();
        let (ea, eb) = (
            estimate(Metric::AcceptLength, &level(&twice)).unwrap(),
            estimate(Metric::AcceptLength, &level(&b)).unwrap(),
        );
        // Read twice is read once: twelve readings, not twenty-four.
        assert_eq!(ea.spread, Spread::LogSe(readings_log_se(&a).unwrap()));
        let c = Change::between(ea, eb).unwrap();
        assert!((c.pct - 2.9).abs() < 1e-9, "{c:?}");
        assert!(!c.significant(0.0), "{c:?}");
        // The requests' own spread, which is nil here, was what the change had before.
        let per_chunk = mean_log_se(&crate::metrics::request_accept_lengths(&level(&a)));
        assert!(per_chunk.is_some_and(|se| se < 1e-12), "{per_chunk:?}");
    }

    #[test]
    fn repeated_passes_pool_their_batches() {
        use crate::metrics::request::tests::rec;
        // Two passes of the steady stream above, 20 s apart.
        let pass = |offset: f64, tokens: u64, repeat: u32| -> Vec<RequestRecord> {
            (0..10)
                .map(|i| RequestRecord {
                    repeat: Some(repeat),
                    ..rec(offset + i as f64, 0.0, 1.0, tokens)
                })
                .collect()
        };
        let same: Vec<_> = pass(0.0, 101, 0)
            .into_iter()
            .chain(pass(30.0, 101, 1))
            .collect();
        let se = rate_log_se(&same, &[(0.0, 10.0), (30.0, 40.0)]).unwrap();
        assert!(se < 0.01, "{se}");
        // A second pass 20 % slower than the first: the pooled batches disagree.
        let apart: Vec<_> = pass(0.0, 101, 0)
            .into_iter()
            .chain(pass(30.0, 81, 1))
            .collect();
        let wide = rate_log_se(&apart, &[(0.0, 10.0), (30.0, 40.0)]).unwrap();
        assert!(wide > 0.02, "{wide}");
        // The point's estimate pools both passes' cycles, and they disagree as much.
        let mut p = Point::empty(1, 1000, 101);
        p.requests = apart;
        p.summary = Some(crate::metrics::summarize(&p.requests, 1, 101, &[]));
        let Some(Spread::LogSeT { se: got, df }) =
            estimate(Metric::SteadyTokS, &p).map(|e| e.spread)
        else {
            panic!("no spread");
        };
        assert!(got > 0.02, "{got}");
        // Twenty cycles: 19 degrees of freedom.
        assert_eq!(df, 19.0);
        // One slot: a cycle per request. Their first tokens land on the cycles' edges, each
        // counted in the cycle it closes, so the last of a pass holds 100 tokens, not 101.
        let same_cycles = crate::metrics::steady_cycles(&same, 1);
        assert_eq!(same_cycles.len(), 20);
        assert!(cycle_log_se_df(&same_cycles).unwrap().0 < 0.002);
    }

    /// The worked example of [`welch_df`], and the p-value it gives: far in the tail, t's.
    #[test]
    fn a_change_of_few_cycles_reads_its_p_value_off_students_t() {
        let t2 = crate::metrics::t_quantile(2.0);
        // Three cycles each, the same relative standard error, 1 % unscaled.
        let cycles = |v: f64| Estimate {
            value: v,
            spread: Spread::LogSeT {
                se: 0.01 * t2 / Z,
                df: 2.0,
            },
        };
        let c = Change::between(cycles(100.0), cycles(90.0)).unwrap();
        assert!((c.df.unwrap() - 4.0).abs() < 1e-9, "{c:?}");
        let imported = Estimate {
            value: 100.0,
            spread: Spread::Unstated,
        };
        let one = Change::between(imported, cycles(90.0)).unwrap();
        assert!((one.df.unwrap() - 2.0).abs() < 1e-9, "{one:?}");
        // A normal spread on either side: no degrees of freedom, the normal tail.
        let normal = Estimate {
            value: 100.0,
            spread: Spread::LogSe(0.01),
        };
        assert_eq!(Change::between(normal, cycles(90.0)).unwrap().df, None);
        // −10 % (ln 0.9 = −0.105) with the interval reaching √2 × 1 % × t(2) = 0.0608 either
        // way on the log scale: read as a normal, z = 0.105 / (0.0608 / 1.96) = 3.40, p =
        // 0.0007, beyond the verdict's 0.02/8; as t(4), t = 0.105 / (0.0608 / 2.776) = 4.81,
        // p = 0.0086, not. At the interval's edge both are 0.05.
        let p = c.p_value().unwrap();
        let normal_p = Change { df: None, ..c }.p_value().unwrap();
        assert!((normal_p - 0.0007).abs() < 0.0001, "{normal_p}");
        assert!((p - 0.0086).abs() < 0.0003, "{p}");
        let (_, hi) = c.interval.unwrap();
        let reach = (1.0 + hi / 100.0).ln() - (1.0f64 + c.pct / 100.0).ln();
        assert!((reach - 0.0608).abs() < 0.0001, "{reach}");
        let edge = Change {
            pct: ((-reach).exp() - 1.0) * 100.0,
            interval: Some((((-2.0 * reach).exp() - 1.0) * 100.0, 0.0)),
            ..c
        };
        assert!((edge.p_value().unwrap() - 0.05).abs() < 1e-3, "{edge:?}");
    }

    #[test]
    fn a_latency_change_under_a_millisecond_is_never_significant() {
        let tight = |v: f64| Estimate {
            value: v,
            spread: Spread::LogSe(0.001),
        };
        // 6.0 → 5.2 ms: −13 % with a tight interval, but 0.8 ms.
        let c = Change::between(tight(0.0060), tight(0.0052)).unwrap();
        assert!(c.significant(1.0));
        let c = c.of_latency(0.0060, 0.0052);
        assert!(!c.significant(1.0) && c.below_resolution);
        // 150 → 160 ms is 10 ms: it stays significant.
        let c = Change::between(tight(0.150), tight(0.160)).unwrap();
        assert!(c.of_latency(0.150, 0.160).significant(1.0));
    }
}
