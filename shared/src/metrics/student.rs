//! Student's t distribution: its 97.5 % quantile, which widens an interval drawn from a few
//! cycles or readings, and its upper tail, which reads a p-value off such an interval.

/// The two-sided normal quantile of 95 %.
pub const Z: f64 = 1.959_963_985;

/// Student's t at 97.5 % for `df` degrees of freedom (any positive real): the Cornish–Fisher
/// expansion around the normal quantile (0.13 low at 2 degrees of freedom, 0.002 from 9), then
/// Newton's steps on [`upper_tail`] to within 1e-9.
pub fn t_quantile(df: f64) -> f64 {
    let z = Z;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    let mut t = z
        + (z3 + z) / (4.0 * df)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * df.powi(3));
    if !(df.is_finite() && df > 0.0 && t.is_finite()) {
        return t;
    }
    for _ in 0..8 {
        let step = (upper_tail(t, df) - 0.025) / density(t, df);
        t += step;
        if step.abs() < 1e-9 {
            break;
        }
    }
    t
}

/// The standard error behind `scaled`, a t interval over `df` degrees of freedom stated as the
/// normal standard error of the same 95 % interval (as a steady rate's is): `scaled · z / t`.
pub fn unscaled_se(scaled: f64, df: f64) -> f64 {
    scaled * Z / t_quantile(df)
}

/// Student's density at `t` for `df` degrees of freedom.
fn density(t: f64, df: f64) -> f64 {
    let ln = ln_gamma((df + 1.0) / 2.0)
        - ln_gamma(df / 2.0)
        - 0.5 * (df * std::f64::consts::PI).ln()
        - (df + 1.0) / 2.0 * (t * t / df).ln_1p();
    ln.exp()
}

/// `P(T > t)` for Student's `T` with `df` degrees of freedom (any positive real): half the
/// regularized incomplete beta `I_x(df/2, 1/2)` at `x = df / (df + t²)` for `t ≥ 0`.
pub fn upper_tail(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    let half = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 { half } else { 1.0 - half }
}

/// The regularized incomplete beta function `I_x(a, b)`, by its continued fraction (modified
/// Lentz), taken on the side where it converges fast.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (Numerical Recipes' `betacf`).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, nine terms; relative error below 1e-14).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn students_t_matches_the_tables() {
        // Exact 97.5 % quantiles from 2 to 29 degrees of freedom, and one between.
        for (df, t) in [
            (2.0, 4.302_653),
            (3.0, 3.182_446),
            (4.0, 2.776_445),
            (9.0, 2.262_157),
            (19.0, 2.093_024),
            (29.0, 2.045_230),
            (2.5, 3.574_655),
        ] {
            assert!(
                (t_quantile(df) - t).abs() < 1e-5,
                "{df}: {}",
                t_quantile(df)
            );
        }
    }

    /// Student's t's upper tail against printed tables: t(1) at 12.706, t(2) at 4.303, t(4)
    /// at 2.776 and t(30) at 2.042 leave 2.5 %; t(10) at 3.169 leaves 0.5 %; at 0 half;
    /// for 2 degrees of freedom the closed form `½ (1 − t / √(2 + t²))`; and a huge `df`
    /// is the normal.
    #[test]
    fn students_tail_by_the_tables() {
        for (t, df, want) in [
            (12.706, 1.0, 0.025),
            (4.303, 2.0, 0.025),
            (2.776, 4.0, 0.025),
            (2.042, 30.0, 0.025),
            (3.169, 10.0, 0.005),
        ] {
            let got = upper_tail(t, df);
            assert!((got - want).abs() < 2e-5, "t {t} df {df}: {got}");
        }
        assert!((upper_tail(0.0, 3.0) - 0.5).abs() < 1e-12);
        assert!((upper_tail(-4.303, 2.0) - 0.975).abs() < 2e-5);
        for t in [0.5, 1.0, 2.5, 5.6, 20.0] {
            let exact = 0.5 * (1.0 - t / (2.0f64 + t * t).sqrt());
            let got = upper_tail(t, 2.0);
            assert!((got - exact).abs() < 1e-12, "t {t}: {got} vs {exact}");
        }
        assert!(
            (upper_tail(2.5, 1e7) - crate::compare::interval::normal_upper_tail(2.5)).abs() < 1e-6
        );
        assert!(upper_tail(f64::NAN, 3.0).is_nan());
    }
}
