//! Axes: log scales for concurrency and token counts, their ticks, and number formats.
//!
//! Every function here takes any `f64` — a finite value up to `f64::MAX`, and NaN or ±∞ that
//! arithmetic on foreign numbers can make — and returns a finite range, a bounded list of ticks
//! and a short text. No loop runs longer than a fixed count, whatever the range.

/// What an x axis measures, which decides its scale and its ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisKind {
    /// Concurrency: log2 scale, ticks at powers of two.
    Concurrency,
    /// Token counts (input length): log scale, ticks at 1-2-5 × 10ⁿ, written `1k`, `2k`…
    Tokens,
    /// A plain linear scale (seconds, tok/s).
    Linear,
    /// Requests per second (a rate sweep's offered or achieved rate): log scale, ticks at
    /// 1-2-5 × 10ⁿ, written as plain numbers (`0.5`, `2`, `50`).
    Rate,
}

/// At most this many ticks on a log axis; more are thinned.
const MAX_TICKS: usize = 10;

impl AxisKind {
    /// Data value → position on the plot (log2 for the log scales).
    pub fn to_plot(self, v: f64) -> f64 {
        match self {
            AxisKind::Concurrency | AxisKind::Tokens | AxisKind::Rate => {
                v.max(f64::MIN_POSITIVE).log2()
            }
            AxisKind::Linear => v,
        }
    }

    /// The plot range for data spanning `[lo, hi]`, with a margin so end points are not cut:
    /// always finite and wider than zero (padding that would pass `f64::MAX` stops there; a
    /// non-finite bound is taken as 0).
    pub fn plot_range(self, lo: f64, hi: f64) -> (f64, f64) {
        let (a, b) = (
            finite_or_zero(self.to_plot(lo)),
            finite_or_zero(self.to_plot(hi)),
        );
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        let pad = match self {
            AxisKind::Linear if b > a => half_span(a, b) * 0.1,
            AxisKind::Linear => a.abs().max(1.0) * 0.5,
            _ => (half_span(a, b) * 0.12).max(0.3),
        };
        widen(a - pad, b + pad)
    }

    /// Tick values (data units) for data spanning `[lo, hi]`; empty for a linear axis, whose
    /// ticks the plotting library chooses.
    pub fn ticks(self, lo: f64, hi: f64) -> Vec<f64> {
        match self {
            AxisKind::Concurrency => pow2_ticks(lo, hi),
            AxisKind::Tokens | AxisKind::Rate => one_two_five_ticks(lo, hi),
            AxisKind::Linear => Vec::new(),
        }
    }

    /// How a tick value is written.
    pub fn format(self, v: f64) -> String {
        match self {
            AxisKind::Concurrency => fixed(v.round(), 0),
            AxisKind::Tokens => format_tokens(v),
            AxisKind::Linear | AxisKind::Rate => format_value(v),
        }
    }
}

/// `v`, or 0 when it is NaN or infinite.
fn finite_or_zero(v: f64) -> f64 {
    if v.is_finite() { v } else { 0.0 }
}

/// Half of `b - a` for finite `a ≤ b`, finite even when `b - a` itself would overflow.
fn half_span(a: f64, b: f64) -> f64 {
    b / 2.0 - a / 2.0
}

/// `[lo, hi]` clamped to finite values and, when that leaves it empty or too narrow for its
/// magnitude to tell ticks apart (`hi - lo` below a millionth of `|lo|`), widened around its
/// middle: a range every pixel mapping and tick can use.
pub fn widen(lo: f64, hi: f64) -> (f64, f64) {
    let clamp = |v: f64| {
        if v.is_nan() {
            0.0
        } else {
            v.clamp(-f64::MAX, f64::MAX)
        }
    };
    let (lo, hi) = (clamp(lo), clamp(hi));
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    let size = lo.abs().max(hi.abs());
    if half_span(lo, hi) > size * 1e-6 && half_span(lo, hi) > f64::MIN_POSITIVE {
        return (lo, hi);
    }
    let mid = lo / 2.0 + hi / 2.0;
    let pad = (size * 0.05).max(1e-6);
    (clamp(mid - pad), clamp(mid + pad))
}

/// At most `max` round values (1, 2 or 5 × 10ⁿ apart) inside `[lo, hi]`, for a linear axis.
/// Empty when the range is not finite, not increasing or too narrow for its magnitude.
pub fn linear_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && lo < hi) || max < 2 {
        return Vec::new();
    }
    // Halves throughout, so a span of nearly 2 × f64::MAX stays finite.
    let half = half_span(lo, hi);
    let rough = half / (max - 1) as f64 * 2.0;
    let Some(exp) = finite_log10(rough).map(f64::floor) else {
        return Vec::new();
    };
    for m in [1.0, 2.0, 5.0, 10.0] {
        let step = m * 10f64.powi(exp as i32);
        if !(step.is_finite() && step > 0.0) {
            continue;
        }
        let (first, last) = ((lo / step).ceil(), (hi / step).floor());
        let count = last - first + 1.0;
        // A step below the values' own resolution would repeat one value: no ticks.
        if !(count.is_finite() && first.abs() < 1e15 && last.abs() < 1e15) {
            return Vec::new();
        }
        if count <= max as f64 {
            return (0..count.max(0.0) as usize)
                .map(|k| (first + k as f64) * step)
                .filter(|t| t.is_finite())
                .collect();
        }
    }
    Vec::new()
}

/// `log10(v)` for a finite positive `v`.
fn finite_log10(v: f64) -> Option<f64> {
    (v.is_finite() && v > 0.0).then(|| v.log10())
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
        .filter(|t| t.is_finite())
        .collect();
    let start = all.iter().rposition(|&t| t <= lo + lo * 1e-9).unwrap_or(0);
    let end = all
        .iter()
        .position(|&t| t >= hi - hi * 1e-9)
        .unwrap_or(all.len().saturating_sub(1));
    // Near f64::MAX the tick above the data does not exist: up to the last one there is.
    thin(
        all.get(start..=end.max(start))
            .unwrap_or(&all[start..])
            .to_vec(),
    )
}

/// Keeps every n-th tick (always the first) so at most [`MAX_TICKS`] remain.
fn thin(ticks: Vec<f64>) -> Vec<f64> {
    let step = ticks.len().div_ceil(MAX_TICKS).max(1);
    ticks.into_iter().step_by(step).collect()
}

/// From this magnitude on, numbers are written in scientific notation (`1.7e308`), never as
/// hundreds of digits.
pub const SCIENTIFIC_FROM: f64 = 1e9;

/// The text for a number that plain notation cannot write well: a word for NaN and ±∞,
/// scientific notation from [`SCIENTIFIC_FROM`] up; `None` for an ordinary number.
fn unusual(v: f64) -> Option<String> {
    if v.is_nan() {
        Some("not a number".into())
    } else if v.is_infinite() {
        Some("out of range".into())
    } else if v.abs() >= SCIENTIFIC_FROM {
        Some(scientific(v, 2))
    } else {
        None
    }
}

/// `v` in scientific notation with at most `decimals` decimals in the mantissa and no
/// trailing zeros: `1.7e308`, `-2e9`, `1.234e-308`.
pub fn scientific(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$e}");
    match s.split_once('e') {
        Some((m, e)) if m.contains('.') => {
            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        _ => s,
    }
}

/// `v` with exactly `decimals` decimals (`{:.N}`), for tables; scientific from
/// [`SCIENTIFIC_FROM`] up and a word for NaN and ±∞, so no number prints as 300 digits.
pub fn fixed(v: f64, decimals: usize) -> String {
    unusual(v).unwrap_or_else(|| {
        let s = format!("{v:.decimals$}");
        // A value that rounds to zero has no sign: `-0.0` reads as a loss that is not there.
        match s.strip_prefix('-') {
            Some(digits) if digits.bytes().all(|b| b == b'0' || b == b'.') => digits.to_string(),
            _ => s,
        }
    })
}

/// A level's steady tok/s with how precisely it is known, `452.6 ±0.8%`; the number alone when
/// its interval is not known.
pub fn steady_cell(v: f64, pm_pct: Option<f64>) -> String {
    match pm_pct.filter(|pm| pm.is_finite()) {
        Some(pm) => format!("{} ±{}%", fixed(v, 1), fixed(pm, 1)),
        None => fixed(v, 1),
    }
}

/// `v` rounded to a whole number with thousands separated by commas, for tables of big rates:
/// `1,926,810`, `-1,000`, `999`; as [`fixed`] past [`SCIENTIFIC_FROM`] and for NaN and ±∞.
pub fn thousands(v: f64) -> String {
    let s = fixed(v, 0);
    let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    // `-0` after rounding is zero.
    if out == "0" {
        out
    } else {
        format!("{sign}{out}")
    }
}

/// `512`, `1k`, `1.5k`, `100k`, `1.2M` (k = 1000, as the collector's `--lengths` reads it).
pub fn format_tokens(v: f64) -> String {
    if let Some(s) = unusual(v) {
        return s;
    }
    let (x, unit) = if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{}{unit}", trim(x, 1))
}

/// A value for an axis label or a tooltip: 3 significant digits, `k` above ten thousand, `M`
/// above a million.
pub fn format_value(v: f64) -> String {
    if let Some(s) = unusual(v) {
        return s;
    }
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6, 1))
    } else if a >= 1e4 {
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
/// significant digits; a value below 1e-9 that is not zero in scientific notation.
pub fn format_exact(v: f64) -> String {
    if let Some(s) = unusual(v) {
        return s;
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.1}")
    } else if a == 0.0 {
        "0".into()
    } else if a < 1e-9 {
        scientific(v, 3)
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
    #[test]
    fn thousands_are_grouped_by_three() {
        assert_eq!(thousands(1_926_810.4), "1,926,810");
        assert_eq!(thousands(999.5), "1,000");
        assert_eq!(thousands(12.0), "12");
        assert_eq!(thousands(-1234.0), "-1,234");
        assert_eq!(thousands(-0.2), "0");
        assert_eq!(thousands(f64::NAN), "not a number");
        assert_eq!(thousands(3e12), "3e12");
    }

    use super::*;

    #[test]
    fn a_value_that_rounds_to_zero_has_no_sign() {
        assert_eq!(fixed(-0.0, 1), "0.0");
        assert_eq!(fixed(-0.004, 2), "0.00");
        assert_eq!(fixed(-0.006, 2), "-0.01");
        assert_eq!(fixed(-3.0, 0), "-3");
    }

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

    fn assert_sane_ticks(lo: f64, hi: f64, max: usize) {
        let t = linear_ticks(lo, hi, max);
        assert!(!t.is_empty() && t.len() <= max, "{lo}..{hi}: {t:?}");
        assert!(
            t.iter().all(|v| v.is_finite() && (lo..=hi).contains(v)),
            "{t:?}"
        );
        assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
    }

    #[test]
    fn linear_ticks_are_round_and_bounded() {
        assert_eq!(linear_ticks(0.0, 10.0, 6), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(linear_ticks(-0.5, 0.5, 6), [-0.4, -0.2, 0.0, 0.2, 0.4]);
        assert!(linear_ticks(1.0, 1.0, 6).is_empty());
        assert!(linear_ticks(f64::NAN, 1.0, 6).is_empty());
        assert!(linear_ticks(0.0, f64::INFINITY, 6).is_empty());
    }

    /// Issue 10: a throughput of 1.7e308 padded the axis past `f64::MAX` to infinity, and the
    /// plotting library's tick search never ended.
    #[test]
    fn an_enormous_value_gets_a_finite_range_and_ticks() {
        for (lo, hi) in [
            (0.0, 1.7e308),
            (0.0, f64::MAX),
            (-f64::MAX, f64::MAX),
            (-1.7e308, -1.6e308),
            (1e-308, 1e-308),
            (0.0, 1e-308),
            (1e10, 1e10 + 1e-5),
            (5e-324, 5e-324),
            (f64::NAN, f64::INFINITY),
            (f64::NEG_INFINITY, 3.0),
        ] {
            for kind in [
                AxisKind::Linear,
                AxisKind::Concurrency,
                AxisKind::Tokens,
                AxisKind::Rate,
            ] {
                let (a, b) = kind.plot_range(lo, hi);
                assert!(
                    a.is_finite() && b.is_finite() && a < b,
                    "{kind:?} {lo}..{hi}: {a}..{b}"
                );
                assert_sane_ticks(a, b, 8);
                assert!(kind.ticks(lo, hi).len() <= MAX_TICKS);
            }
            let (a, b) = widen(lo, hi);
            assert!(
                a.is_finite() && b.is_finite() && a < b,
                "{lo}..{hi}: {a}..{b}"
            );
        }
        assert_eq!(AxisKind::Linear.plot_range(0.0, f64::MAX).1, f64::MAX);
    }

    #[test]
    fn huge_tiny_and_non_numbers_read_well() {
        assert_eq!(format_value(1.7e308), "1.7e308");
        assert_eq!(format_value(-f64::MAX), "-1.8e308");
        assert_eq!(format_value(2.5e6), "2.5M");
        assert_eq!(format_value(1e-308), "0");
        assert_eq!(format_exact(1.7e308), "1.7e308");
        assert_eq!(format_exact(1e-308), "1e-308");
        assert_eq!(format_exact(f64::NAN), "not a number");
        assert_eq!(format_tokens(f64::INFINITY), "out of range");
        assert_eq!(fixed(1.7e308, 1), "1.7e308");
        assert_eq!(fixed(123.456, 1), "123.5");
        assert_eq!(fixed(999_999_999.0, 0), "999999999");
        assert_eq!(scientific(1.234e-308, 3), "1.234e-308");
        assert_eq!(AxisKind::Concurrency.format(f64::MAX), "1.8e308");
        for v in [
            f64::MAX,
            f64::MIN,
            1.7e308,
            f64::MIN_POSITIVE,
            5e-324,
            -1e-308,
        ] {
            for s in [
                format_value(v),
                format_exact(v),
                format_tokens(v),
                fixed(v, 3),
            ] {
                assert!(s.len() <= 12, "{v}: {s}");
            }
        }
    }

    /// Found by `prop_axes_are_sane_for_any_range`: at `f64::MAX` the 1-2-5 ticks above the
    /// data are infinite, and picking the range between them panicked (which kills the viewer).
    #[test]
    fn token_ticks_at_f64_max_do_not_panic() {
        let texts = |t: Vec<f64>| t.into_iter().map(format_tokens).collect::<Vec<_>>();
        assert_eq!(texts(one_two_five_ticks(f64::MAX, f64::MAX)), ["1e308"]);
        assert_eq!(texts(one_two_five_ticks(1e306, f64::MAX)).len(), 7);
        assert!(AxisKind::Tokens.ticks(f64::MAX, f64::MAX).len() <= MAX_TICKS);
    }
}
