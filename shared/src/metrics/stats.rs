//! Distribution summaries: one percentile method for the whole product.

use serde::{Deserialize, Serialize};

/// Summary of a sample: mean, p50, p90, p99, min, max and the count it is over.
///
/// Percentiles use linear interpolation between closest ranks (the "type 7" method that numpy
/// and most spreadsheets use by default), so `p50` of `[1, 2, 3, 4]` is `2.5`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub min: f64,
    pub max: f64,
}

/// The most values [`Stats::from_values`] makes room for before it has them (128 MiB).
const PRESIZE_MAX: usize = 1 << 24;

impl Stats {
    /// Summarises `values`, ignoring NaN and infinite entries; `None` when nothing is left.
    pub fn from_values(values: impl IntoIterator<Item = f64>) -> Option<Stats> {
        // Sized from the most the values can be: a level's inter-token gaps run to millions,
        // and a list grown as they come copies them each time it doubles. An iterator that
        // claims more than [`PRESIZE_MAX`] gets that much, and the list grows past it if needed.
        let values = values.into_iter();
        let room = values.size_hint().1.unwrap_or(0).min(PRESIZE_MAX);
        let mut v: Vec<f64> = Vec::with_capacity(room);
        v.extend(values.filter(|x| x.is_finite()));
        if v.is_empty() {
            return None;
        }
        v.sort_unstable_by(f64::total_cmp);
        Some(Stats {
            count: v.len() as u64,
            mean: mean(&v),
            p50: percentile_sorted(&v, 50.0),
            p90: percentile_sorted(&v, 90.0),
            p99: percentile_sorted(&v, 99.0),
            min: v[0],
            max: v[v.len() - 1],
        })
    }
}

/// The `q`-th percentile (0–100) of `values` by linear interpolation between closest ranks.
/// Returns `None` for an empty sample. NaN entries are ignored.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f64::total_cmp);
    Some(percentile_sorted(&v, q))
}

/// The mean of finite values, finite even when their sum passes `f64::MAX` (then summed in
/// shares of `1/n`).
fn mean(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let sum: f64 = v.iter().sum();
    if sum.is_finite() {
        sum / n
    } else {
        v.iter().map(|x| x / n).sum()
    }
}

/// Percentile of an already sorted, non-empty slice of finite values; between two ranks whose
/// difference passes `f64::MAX` it is weighed in shares, so it stays finite.
pub(crate) fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    let q = q.clamp(0.0, 100.0) / 100.0;
    let rank = q * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let frac = rank - lo as f64;
    let (a, b) = (sorted[lo], sorted[hi]);
    if frac == 0.0 {
        return a;
    }
    let d = b - a;
    if d.is_finite() {
        a + d * frac
    } else {
        a * (1.0 - frac) + b * frac
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An iterator that says it may hold more values than memory does is summarised from the
    /// values it has, without making room for all it claims.
    #[test]
    fn a_huge_size_hint_is_not_taken_at_its_word() {
        let claims_all = (0..u64::MAX).map(|i| i as f64).take_while(|&x| x < 3.0);
        assert_eq!(claims_all.size_hint().1, Some(u64::MAX as usize));
        let s = Stats::from_values(claims_all).unwrap();
        assert_eq!((s.count, s.min, s.max, s.p50), (3, 0.0, 2.0, 1.0));
    }

    #[test]
    fn percentile_interpolates_between_ranks() {
        let v = [4.0, 1.0, 3.0, 2.0];
        assert_eq!(percentile(&v, 50.0), Some(2.5));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&v, 100.0), Some(4.0));
        // rank = 0.9 * 3 = 2.7 → 3 + 0.7 * (4 - 3)
        assert!((percentile(&v, 90.0).unwrap() - 3.7).abs() < 1e-12);
    }

    #[test]
    fn percentile_of_one_value_is_that_value() {
        assert_eq!(percentile(&[7.0], 99.0), Some(7.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn stats_by_hand() {
        let s = Stats::from_values([1.0, 2.0, 3.0, 4.0, 10.0]).unwrap();
        assert_eq!(s.count, 5);
        assert_eq!(s.mean, 4.0);
        assert_eq!(s.p50, 3.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 10.0);
        // rank = 0.99 * 4 = 3.96 → 4 + 0.96 * 6
        assert!((s.p99 - 9.76).abs() < 1e-12);
    }

    #[test]
    fn stats_ignore_non_finite_values() {
        let s = Stats::from_values([f64::NAN, 2.0, f64::INFINITY]).unwrap();
        assert_eq!(s.count, 1);
        assert!(Stats::from_values([f64::NAN]).is_none());
    }

    #[test]
    fn percentiles_are_ordered_for_many_samples() {
        // A cheap deterministic property check: p50 <= p90 <= p99 and min <= mean <= max.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for n in 1..200 {
            let v: Vec<f64> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 10_000) as f64 / 7.0
                })
                .collect();
            let s = Stats::from_values(v).unwrap();
            assert!(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.max);
            assert!(s.min <= s.mean + 1e-9 && s.mean <= s.max + 1e-9);
        }
    }

    /// Issue 10: the sum of two values near `f64::MAX` is infinite; their mean and median are not.
    #[test]
    fn enormous_values_summarise_to_finite_numbers() {
        let s = Stats::from_values([1.7e308, 1.7e308, f64::MAX]).unwrap();
        assert!(s.mean.is_finite() && s.mean >= 1.7e308, "{s:?}");
        assert_eq!(s.p50, 1.7e308);
        assert_eq!(percentile(&[-f64::MAX, f64::MAX], 50.0), Some(0.0));
        assert_eq!(percentile(&[1e-308, 3e-308], 50.0), Some(2e-308));
        let s = Stats::from_values([-f64::MAX, f64::MAX]).unwrap();
        assert_eq!((s.mean, s.p90, s.min), (0.0, 0.8 * f64::MAX, -f64::MAX));
    }
}
