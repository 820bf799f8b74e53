//! Axes: log scales for concurrency and token counts, their ticks, and number formats.

/// What an x axis measures, which decides its scale and its ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisKind {
    /// Concurrency: log2 scale, ticks at powers of two.
    Concurrency,
    /// Token counts (input length): log scale, ticks at 1-2-5 × 10ⁿ, written `1k`, `2k`…
    Tokens,
    /// A plain linear scale (seconds, tok/s).
    Linear,
}

/// At most this many ticks on a log axis; more are thinned.
const MAX_TICKS: usize = 10;

impl AxisKind {
    /// Data value → position on the plot (log2 for the log scales).
    pub fn to_plot(self, v: f64) -> f64 {
        match self {
            AxisKind::Concurrency | AxisKind::Tokens => v.max(f64::MIN_POSITIVE).log2(),
            AxisKind::Linear => v,
        }
    }

    /// The plot range for data spanning `[lo, hi]`, with a margin so end points are not cut.
    pub fn plot_range(self, lo: f64, hi: f64) -> (f64, f64) {
        let (a, b) = (self.to_plot(lo), self.to_plot(hi));
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        let pad = match self {
            AxisKind::Linear if b > a => (b - a) * 0.05,
            AxisKind::Linear => a.abs().max(1.0) * 0.5,
            _ => ((b - a) * 0.06).max(0.3),
        };
        (a - pad, b + pad)
    }

    /// Tick values (data units) for data spanning `[lo, hi]`; empty for a linear axis, whose
    /// ticks the plotting library chooses.
    pub fn ticks(self, lo: f64, hi: f64) -> Vec<f64> {
        match self {
            AxisKind::Concurrency => pow2_ticks(lo, hi),
            AxisKind::Tokens => one_two_five_ticks(lo, hi),
            AxisKind::Linear => Vec::new(),
        }
    }

    /// How a tick value is written.
    pub fn format(self, v: f64) -> String {
        match self {
            AxisKind::Concurrency => format!("{}", v.round()),
            AxisKind::Tokens => format_tokens(v),
            AxisKind::Linear => format_value(v),
        }
    }
}

/// Powers of two from the largest ≤ `lo` to the smallest ≥ `hi`, thinned to at most 10.
pub fn pow2_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
        return Vec::new();
    }
    let (a, b) = (lo.log2().floor() as i32, hi.log2().ceil() as i32);
    thin((a..=b).map(|e| 2f64.powi(e)).collect())
}

/// 1, 2, 5 × 10ⁿ from the largest ≤ `lo` to the smallest ≥ `hi`, thinned to at most 10.
pub fn one_two_five_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
        return Vec::new();
    }
    let first = lo.log10().floor() as i32;
    let last = hi.log10().ceil() as i32;
    let all: Vec<f64> = (first..=last)
        .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
        .collect();
    let start = all
        .iter()
        .rposition(|&t| t <= lo * (1.0 + 1e-9))
        .unwrap_or(0);
    let end = all
        .iter()
        .position(|&t| t >= hi * (1.0 - 1e-9))
        .unwrap_or(all.len() - 1);
    thin(all[start..=end].to_vec())
}

/// Keeps every n-th tick (always the first) so at most [`MAX_TICKS`] remain.
fn thin(ticks: Vec<f64>) -> Vec<f64> {
    let step = ticks.len().div_ceil(MAX_TICKS).max(1);
    ticks.into_iter().step_by(step).collect()
}

/// `512`, `1k`, `1.5k`, `100k`, `1.2M` (k = 1000, as the collector's `--lengths` reads it).
pub fn format_tokens(v: f64) -> String {
    let (x, unit) = if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{}{unit}", trim(x, 1))
}

/// A value for an axis label or a tooltip: 3 significant digits, `k` above ten thousand.
pub fn format_value(v: f64) -> String {
    let a = v.abs();
    if a >= 1e4 {
        format!("{}k", trim(v / 1e3, 1))
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        trim(v, 1)
    } else if a >= 1.0 {
        trim(v, 2)
    } else if a < 1e-9 {
        // Also -0 and the rounding dust of tick arithmetic.
        "0".into()
    } else {
        trim(v, 3)
    }
}

/// A value for a tooltip, more exact than an axis label: 1 decimal from 100 up, else 4
/// significant digits.
pub fn format_exact(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.1}")
    } else if a < 1e-9 {
        "0".into()
    } else {
        let decimals = (3 - a.log10().floor() as i32).clamp(0, 9) as usize;
        trim(v, decimals)
    }
}

/// `v` with at most `decimals` decimals and no trailing zeros.
fn trim(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrency_ticks_are_powers_of_two_around_the_data() {
        assert_eq!(
            pow2_ticks(1.0, 64.0),
            [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
        );
        assert_eq!(
            pow2_ticks(3.0, 100.0),
            [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]
        );
        assert_eq!(pow2_ticks(8.0, 8.0), [8.0]);
        assert!(pow2_ticks(0.0, 8.0).is_empty());
    }

    #[test]
    fn many_powers_of_two_are_thinned() {
        let t = pow2_ticks(1.0, 65536.0);
        assert_eq!(t.len(), 9);
        assert_eq!(t[0], 1.0);
        assert_eq!(t[1], 4.0);
    }

    #[test]
    fn token_ticks_are_one_two_five() {
        assert_eq!(
            one_two_five_ticks(1000.0, 100_000.0),
            [1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5]
        );
        assert_eq!(
            one_two_five_ticks(512.0, 8000.0),
            [500.0, 1e3, 2e3, 5e3, 1e4]
        );
        let formatted: Vec<String> = one_two_five_ticks(512.0, 2000.0)
            .into_iter()
            .map(format_tokens)
            .collect();
        assert_eq!(formatted, ["500", "1k", "2k"]);
    }

    #[test]
    fn log_positions_and_ranges() {
        assert_eq!(AxisKind::Concurrency.to_plot(8.0), 3.0);
        assert_eq!(AxisKind::Linear.to_plot(8.0), 8.0);
        let (a, b) = AxisKind::Concurrency.plot_range(1.0, 64.0);
        assert!(a < 0.0 && b > 6.0);
        let (a, b) = AxisKind::Linear.plot_range(5.0, 5.0);
        assert!(a < 5.0 && b > 5.0, "a single value still gets a range");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(format_tokens(100_000.0), "100k");
        assert_eq!(format_tokens(1500.0), "1.5k");
        assert_eq!(format_tokens(512.0), "512");
        assert_eq!(format_value(2497.4), "2497");
        assert_eq!(format_value(12_345.0), "12.3k");
        assert_eq!(format_value(85.14), "85.1");
        assert_eq!(format_value(1.5), "1.5");
        assert_eq!(format_value(0.0061), "0.006");
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(-1e-17), "0");
        assert_eq!(AxisKind::Concurrency.format(64.0), "64");
        assert_eq!(format_exact(2497.43), "2497.4");
        assert_eq!(format_exact(85.14), "85.14");
        assert_eq!(format_exact(0.14567), "0.1457");
        assert_eq!(format_exact(0.0061234), "0.006123");
    }
}
