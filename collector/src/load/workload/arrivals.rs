//! Open-loop schedules: when each request of a rate point is due, drawn from a seed so the same
//! schedule can be drawn again.

use llmsweep_shared::bundle::Arrival;

use crate::load::workload::SplitMix64;

/// Most arrivals one point may schedule.
pub(crate) const MAX_ARRIVALS: u64 = 1_000_000;

/// How many arrivals, or until when.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Span {
    Count(u64),
    Seconds(f64),
}

/// The due times, seconds from the point's start, of arrivals at `rate` per second: the first
/// at 0, then gaps of `1 / rate` (constant) or drawn from a gamma distribution of shape
/// `burstiness` (1 for Poisson) and mean `1 / rate`, from `seed`.
pub(crate) fn schedule(
    arrival: Arrival,
    rate: f64,
    burstiness: f64,
    seed: u64,
    span: Span,
) -> Vec<f64> {
    let mut rng = Uniform(SplitMix64::new(seed ^ rate.to_bits()));
    let shape = match arrival {
        Arrival::Poisson => 1.0,
        _ => burstiness,
    };
    let mut due = Vec::new();
    let mut t = 0.0;
    loop {
        let done = match span {
            Span::Count(n) => due.len() as u64 >= n.min(MAX_ARRIVALS),
            Span::Seconds(s) => t >= s || due.len() as u64 >= MAX_ARRIVALS,
        };
        if done {
            return due;
        }
        due.push(t);
        t += match arrival {
            Arrival::Constant => 1.0 / rate,
            _ => rng.gamma(shape) / (shape * rate),
        };
    }
}

/// Uniform draws in (0, 1) and what is made of them.
struct Uniform(SplitMix64);

impl Uniform {
    fn open01(&mut self) -> f64 {
        ((self.0.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.open01(), self.open01());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Gamma of shape `k` and scale 1 (Marsaglia and Tsang; below shape 1 by the boost
    /// `G(k) = G(k + 1) · U^(1/k)`).
    fn gamma(&mut self, k: f64) -> f64 {
        if k < 1.0 {
            return self.gamma(k + 1.0) * self.open01().powf(1.0 / k);
        }
        let d = k - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = self.open01();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v;
            }
        }
    }
}

/// Mean and coefficient of variation of the gaps between due times.
#[cfg(test)]
pub(crate) fn gap_mean_cv(due: &[f64]) -> (f64, f64) {
    let gaps: Vec<f64> = due.windows(2).map(|w| w[1] - w[0]).collect();
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt() / mean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_gaps_are_exactly_one_over_the_rate() {
        let due = schedule(Arrival::Constant, 4.0, 1.0, 0, Span::Count(9));
        assert_eq!(due, (0..9).map(|i| f64::from(i) * 0.25).collect::<Vec<_>>());
        let (mean, cv) = gap_mean_cv(&due);
        assert!((mean - 0.25).abs() < 1e-12 && cv < 1e-9, "{mean} {cv}");
    }

    #[test]
    fn poisson_and_gamma_gaps_have_the_asked_mean_and_spread() {
        for (arrival, k, want_cv) in [
            (Arrival::Poisson, 1.0, 1.0),
            (Arrival::Gamma, 0.25, 2.0),
            (Arrival::Gamma, 4.0, 0.5),
        ] {
            let due = schedule(arrival, 10.0, k, 7, Span::Count(20_001));
            let (mean, cv) = gap_mean_cv(&due);
            assert!((mean - 0.1).abs() < 0.004, "{arrival:?} k={k}: mean {mean}");
            assert!(
                (cv - want_cv).abs() < 0.05 * want_cv,
                "{arrival:?} k={k}: cv {cv}"
            );
        }
    }

    #[test]
    fn a_schedule_is_drawn_again_from_its_seed_and_a_duration_bounds_it() {
        let a = schedule(Arrival::Poisson, 5.0, 1.0, 3, Span::Seconds(10.0));
        assert_eq!(
            a,
            schedule(Arrival::Poisson, 5.0, 1.0, 3, Span::Seconds(10.0))
        );
        assert_ne!(
            a,
            schedule(Arrival::Poisson, 5.0, 1.0, 4, Span::Seconds(10.0))
        );
        assert!(
            a.iter().all(|&t| t < 10.0) && a.len() > 30 && a.len() < 75,
            "{}",
            a.len()
        );
    }
}
