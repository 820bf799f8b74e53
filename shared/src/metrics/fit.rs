//! The prefill model: `TTFT(L) = a + b·L + c·L²`, fitted by least squares to a context sweep.

use serde::{Deserialize, Serialize};

/// A fitted prefill curve. Coefficients are in seconds, seconds per token and seconds per token².
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PrefillFit {
    pub a_s: f64,
    pub b_s_per_token: f64,
    pub c_s_per_token2: f64,
    /// Root mean square of the residuals, seconds.
    pub rms_residual_s: f64,
    /// Samples the fit is over.
    pub samples: u64,
    /// Shortest and longest input length fitted; predictions outside are extrapolations.
    pub min_len: u64,
    pub max_len: u64,
    /// Distinct input lengths fitted (0 in bundles written before it was kept).
    #[serde(default)]
    pub lengths: u64,
}

impl PrefillFit {
    /// Predicted TTFT at `len` input tokens.
    pub fn predict_s(&self, len: u64) -> f64 {
        let l = len as f64;
        self.a_s + self.b_s_per_token * l + self.c_s_per_token2 * l * l
    }

    /// Coefficients of the curve: a line's 2 (`c = 0`), a quadratic's 3.
    fn coefficients(&self) -> u64 {
        if self.c_s_per_token2 != 0.0 { 3 } else { 2 }
    }

    /// Whether the residual tests the curve: only with more lengths than coefficients. With as
    /// many, the curve passes through every length's mean by construction; a bundle that does
    /// not record its lengths (`lengths` 0) is not known to.
    pub fn tested(&self) -> bool {
        self.lengths > self.coefficients()
    }

    /// How well the curve fits: its rms residual when there are more lengths than coefficients;
    /// otherwise unknown, since a residual would claim a fit that was never tested.
    pub fn residual_text(&self) -> String {
        if self.tested() {
            format!("rms residual {:.3} s", self.rms_residual_s)
        } else if self.lengths == 0 {
            "residual unknown: the bundle does not record how many lengths were fitted".to_string()
        } else {
            format!(
                "residual unknown with {} lengths: a curve of {} coefficients passes through each",
                self.lengths,
                self.coefficients()
            )
        }
    }

    /// What a prediction from this curve cannot claim, when its residual does not test it.
    pub fn prediction_caveat(&self) -> Option<String> {
        match self.lengths {
            _ if self.tested() => None,
            0 => Some("its error unknown".to_string()),
            n => Some(format!("its error unknown with {n} lengths")),
        }
    }

    /// "TTFT ≈ 0.090 s + 72.0 µs/token · L + 1.6e-10 s/token² · L²"
    pub fn describe(&self) -> String {
        let mut s = format!(
            "TTFT ≈ {:.3} s + {:.2} µs/token · L",
            self.a_s,
            self.b_s_per_token * 1e6
        );
        if self.c_s_per_token2 != 0.0 {
            s.push_str(&format!(" + {:.3e} s/token² · L²", self.c_s_per_token2));
        }
        s
    }
}

/// Least-squares fit of `(input tokens, TTFT seconds)` samples.
///
/// With three or more distinct lengths the full quadratic is fitted; with two, a line (`c = 0`);
/// with fewer, `None`. Lengths are scaled to `[0, 1]` before solving so that `L²` up to 10¹⁰
/// does not swamp the normal equations.
pub fn fit_prefill(samples: &[(u64, f64)]) -> Option<PrefillFit> {
    let samples: Vec<(u64, f64)> = samples
        .iter()
        .copied()
        .filter(|s| s.1.is_finite())
        .collect();
    let mut lens: Vec<u64> = samples.iter().map(|s| s.0).collect();
    lens.sort_unstable();
    lens.dedup();
    let degree = match lens.len() {
        0 | 1 => return None,
        2 => 1,
        _ => 2,
    };
    let (min_len, max_len) = (lens[0], lens[lens.len() - 1]);
    let scale = max_len.max(1) as f64;
    let n = degree + 1;
    // Normal equations: (XᵀX) β = Xᵀy with X = [1, x, x²] and x = L / scale.
    let mut m = [[0.0f64; 4]; 3];
    for &(len, y) in &samples {
        let x = len as f64 / scale;
        let row = [1.0, x, x * x];
        for i in 0..n {
            for j in 0..n {
                m[i][j] += row[i] * row[j];
            }
            m[i][n] += row[i] * y;
        }
    }
    let beta = solve(&mut m, n)?;
    let c = if degree == 2 {
        beta[2] / (scale * scale)
    } else {
        0.0
    };
    let mut fit = PrefillFit {
        a_s: beta[0],
        b_s_per_token: beta[1] / scale,
        c_s_per_token2: c,
        rms_residual_s: 0.0,
        samples: samples.len() as u64,
        min_len,
        max_len,
        lengths: lens.len() as u64,
    };
    let sq: f64 = samples
        .iter()
        .map(|&(l, y)| (y - fit.predict_s(l)).powi(2))
        .sum();
    fit.rms_residual_s = (sq / samples.len() as f64).sqrt();
    Some(fit)
}

/// Gaussian elimination with partial pivoting on an `n × (n+1)` augmented matrix.
fn solve(m: &mut [[f64; 4]; 3], n: usize) -> Option<[f64; 3]> {
    for col in 0..n {
        let pivot = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[pivot][col].abs() < 1e-12 {
            return None;
        }
        m.swap(col, pivot);
        let pivot_row = m[col];
        for row in m.iter_mut().take(n).skip(col + 1) {
            let f = row[col] / pivot_row[col];
            for (cell, p) in row.iter_mut().zip(pivot_row).take(n + 1).skip(col) {
                *cell -= f * p;
            }
        }
    }
    let mut x = [0.0; 3];
    for row in (0..n).rev() {
        let rest: f64 = (row + 1..n).map(|k| m[row][k] * x[k]).sum();
        x[row] = (m[row][n] - rest) / m[row][row];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn truth(l: u64) -> f64 {
        0.08 + 6.98e-5 * l as f64 + 1.6e-10 * (l as f64).powi(2)
    }

    #[test]
    fn recovers_exact_quadratic_coefficients() {
        let samples: Vec<(u64, f64)> = [1000, 8000, 16000, 30000]
            .iter()
            .map(|&l| (l, truth(l)))
            .collect();
        let f = fit_prefill(&samples).unwrap();
        assert!((f.a_s - 0.08).abs() < 1e-9, "{f:?}");
        assert!((f.b_s_per_token - 6.98e-5).abs() < 1e-12, "{f:?}");
        assert!((f.c_s_per_token2 - 1.6e-10).abs() < 1e-16, "{f:?}");
        assert!(f.rms_residual_s < 1e-9);
        assert_eq!((f.samples, f.min_len, f.max_len), (4, 1000, 30000));
        assert!((f.predict_s(100_000) - truth(100_000)).abs() < 1e-6);
    }

    #[test]
    fn two_lengths_give_a_line_and_one_gives_nothing() {
        let f = fit_prefill(&[(1000, 0.2), (1000, 0.2), (3000, 0.4)]).unwrap();
        assert!(
            (f.a_s - 0.1).abs() < 1e-9 && (f.b_s_per_token - 1e-4).abs() < 1e-12,
            "{f:?}"
        );
        assert_eq!(f.c_s_per_token2, 0.0);
        assert_eq!(fit_prefill(&[(1000, 0.2), (1000, 0.3)]), None);
        assert_eq!(fit_prefill(&[]), None);
    }

    #[test]
    fn noisy_samples_fit_with_a_residual() {
        let samples = [
            (1000, 0.16),
            (1000, 0.14),
            (8000, 0.65),
            (8000, 0.67),
            (16000, 1.28),
            (16000, 1.30),
        ];
        let f = fit_prefill(&samples).unwrap();
        assert!(f.rms_residual_s > 0.005 && f.rms_residual_s < 0.02, "{f:?}");
    }

    #[test]
    fn description_reads_like_the_docs() {
        let f = PrefillFit {
            a_s: 0.09,
            b_s_per_token: 72e-6,
            c_s_per_token2: 0.0,
            rms_residual_s: 0.0,
            samples: 3,
            min_len: 1,
            max_len: 2,
            lengths: 2,
        };
        assert_eq!(f.describe(), "TTFT ≈ 0.090 s + 72.00 µs/token · L");
        // A line through two lengths passes through both: no residual is claimed, nor an
        // error for what it predicts.
        assert_eq!(
            f.residual_text(),
            "residual unknown with 2 lengths: a curve of 2 coefficients passes through each"
        );
        assert_eq!(
            f.prediction_caveat().as_deref(),
            Some("its error unknown with 2 lengths")
        );
        let three = PrefillFit {
            lengths: 3,
            rms_residual_s: 0.0123,
            ..f
        };
        assert_eq!(three.residual_text(), "rms residual 0.012 s");
        assert_eq!(three.prediction_caveat(), None);
        // A quadratic through three lengths: untested too.
        let curved = PrefillFit {
            c_s_per_token2: 1e-10,
            ..three
        };
        assert_eq!(
            curved.residual_text(),
            "residual unknown with 3 lengths: a curve of 3 coefficients passes through each"
        );
        // An older bundle that does not say how many lengths.
        let old = PrefillFit {
            lengths: 0,
            ..three
        };
        assert_eq!(
            old.residual_text(),
            "residual unknown: the bundle does not record how many lengths were fitted"
        );
    }
}
