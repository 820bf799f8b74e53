//! What the tests and benchmarks of every crate build known inputs with (feature
//! `test-support`): a deterministic normal source, a bundle as if its server were slower, and
//! measured latencies a test replays.

use crate::Bundle;
use crate::metrics::level::summarize;

/// The TTFTs of the kpro5 story's C=1 level (`serve-sim --preset kpro5`, full speed), in the
/// order they were sent: 0.1508 to 0.1522 s, rising by about a millisecond over the level.
pub const ONE_SLOT_TTFTS: [f64; 18] = [
    0.150843, 0.151892, 0.151861, 0.150949, 0.150813, 0.151581, 0.151148, 0.151925, 0.151952,
    0.15157, 0.15189, 0.151254, 0.152101, 0.152052, 0.152114, 0.152037, 0.151807, 0.152213,
];

/// A deterministic source of standard normal draws (xorshift and Box–Muller), so a statistical
/// test over many simulated runs draws the same numbers every time.
#[derive(Debug, Clone)]
pub struct Normal(pub u64);

impl Normal {
    /// A uniform draw in (0, 1), never 0 or 1.
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// A standard normal draw.
    pub fn draw(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// `b` as if every request had taken `factor` times as long: start, TTFT and end times scaled
/// and every point's summary recomputed, so each rate is divided by `factor` and its interval,
/// in relative terms, stays.
pub fn slowed(b: &Bundle, factor: f64) -> Bundle {
    let mut b = b.clone();
    for s in &mut b.sweeps {
        for p in &mut s.points {
            for r in &mut p.requests {
                r.start_s *= factor;
                r.ttft_s = r.ttft_s.map(|t| t * factor);
                r.e2e_s *= factor;
            }
            p.summary = Some(summarize(&p.requests, p.concurrency, s.output_len, &[]));
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_repeat_and_look_standard_normal() {
        let (mut a, mut b) = (Normal(7), Normal(7));
        let xs: Vec<f64> = (0..20_000).map(|_| a.draw()).collect();
        assert!(xs.iter().all(|&x| x == b.draw()));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((var - 1.0).abs() < 0.05, "{var}");
    }
}
