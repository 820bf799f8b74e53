//! Property tests over arbitrary input: the bundle reader never panics on any bytes, and a
//! bundle carrying any finite `f64` anywhere (up to `f64::MAX`, down to subnormals, negative)
//! reads, charts, compares and formats — finite ranges, bounded ticks, short texts, and drawing
//! that ends within a deadline.
//!
//! A fixed number of cases per property runs in every `cargo test` (a few seconds); a long run
//! takes `PROPTEST_CASES`, e.g. `PROPTEST_CASES=100000 cargo test --release -p llmsweep-shared
//! --test prop`. A failure proptest finds is saved under `proptest-regressions/` (committed) and
//! kept as a named `#[test]` below.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc;
use std::time::Duration;

use llmsweep_shared::Bundle;
use llmsweep_shared::charts::axis::{
    AxisKind, fixed, format_exact, format_tokens, format_value, linear_ticks,
};
use llmsweep_shared::charts::{ChartKind, ChartRun, Theme, build, run_color, svg};
use llmsweep_shared::compare::verdict::{change_text, verdicts};
use llmsweep_shared::compare::{RunInput, compare};
use llmsweep_shared::metrics::Stats;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::Value;

const GOLDEN: &str = include_str!("fixtures/bundle-v1-run.json");
const IMPORTED: &str = include_str!("fixtures/bundle-v1-imported.json");

/// `cases` per property from a fixed seed, so every `cargo test` (and CI) tries the same inputs;
/// a long run (`PROPTEST_CASES=N`) asks for another number of cases from a random seed, to
/// find new ones.
fn config(cases: u32) -> ProptestConfig {
    let long: Option<u32> = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok());
    ProptestConfig {
        cases: long.unwrap_or(cases),
        rng_seed: match long {
            Some(_) => proptest::test_runner::RngSeed::Random,
            None => proptest::test_runner::RngSeed::Fixed(0x11_5ee9),
        },
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/prop.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// Runs `f` on another thread and fails when it has not finished within `secs`: a property
/// that hangs (an endless tick loop) fails instead of hanging the test run.
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what} did not finish in {secs} s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

/// Any `f64`, with the edges weighted up: the extremes, tiny values, negatives, zero.
fn any_number() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => any::<f64>(),
        1 => Just(f64::MAX),
        1 => Just(-f64::MAX),
        1 => Just(1.7e308),
        1 => Just(1e-308),
        1 => Just(5e-324),
        1 => Just(0.0),
        1 => Just(-0.0),
        2 => -1e6..1e6f64,
    ]
}

/// Every non-integer number of `v`, replaced in order by `values` (cycled); values JSON cannot
/// hold (NaN, ±∞) leave the number as it was.
fn replace_numbers(v: &mut Value, values: &[f64], at: &mut usize) {
    match v {
        Value::Number(n) if n.is_f64() && !values.is_empty() => {
            let x = values[*at % values.len()];
            *at += 1;
            if let Some(n) = serde_json::Number::from_f64(x) {
                *v = Value::Number(n);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| replace_numbers(x, values, at)),
        Value::Object(o) => o.values_mut().for_each(|x| replace_numbers(x, values, at)),
        _ => {}
    }
}

/// A fixture bundle with its numbers replaced by `values`.
fn bundle_with(fixture: &str, values: &[f64]) -> Bundle {
    let mut v: Value = serde_json::from_str(fixture).unwrap();
    replace_numbers(&mut v, values, &mut 0);
    let text = serde_json::to_string(&v).unwrap();
    Bundle::from_json(&text).expect("a bundle with other numbers is still a bundle")
}

/// Charts, comparison and number texts of `a` against `b`: everything finite, short, and done
/// within a deadline.
fn check_everything(a: Bundle, b: Bundle) {
    within(20, "charting and comparing", move || {
        let runs = [
            ChartRun {
                label: "a",
                color: run_color(0),
                bundle: &a,
            },
            ChartRun {
                label: "b",
                color: run_color(1),
                bundle: &b,
            },
        ];
        for kind in ChartKind::THROUGHPUT.into_iter().chain(ChartKind::CONTEXT) {
            let plot = build(kind, &runs);
            if let Some(((x0, x1), (y0, y1))) = plot.bounds() {
                assert!([x0, x1, y0, y1].iter().all(|v| v.is_finite()));
                let (a, b) = plot.x_kind.plot_range(x0, x1);
                assert!(a.is_finite() && b.is_finite() && a < b);
            }
            let doc = svg(&plot.clone().for_print(), &Theme::LIGHT, (480, 300)).unwrap();
            assert!(doc.starts_with("<svg"));
            for m in &plot.marks {
                for line in m.hover.lines() {
                    assert!(line.len() < 400, "{kind:?}: {line}");
                }
            }
        }
        let inputs = [
            RunInput {
                label: "a",
                bundle: &a,
            },
            RunInput {
                label: "b",
                bundle: &b,
            },
        ];
        let cmp = compare(&inputs, 0);
        for s in &cmp.sweeps {
            for level in &s.levels {
                for row in &level.rows {
                    for c in &row.cells {
                        if let Some(ch) = &c.change {
                            let t = change_text(ch);
                            assert!(t.len() < 40, "{t}");
                        }
                        assert!(c.delta_pct.is_none_or(f64::is_finite));
                        if let Some(v) = c.value {
                            assert!(format_value(v).len() <= 12, "{v}");
                        }
                    }
                }
            }
        }
        for v in verdicts(&cmp, 5.0) {
            v.headline(&cmp.labels, 0);
            for (_, line) in v.metric_lines() {
                assert!(line.len() < 400, "{line}");
            }
        }
    });
}

proptest! {
    #![proptest_config(config(256))]

    /// Any bytes: a bundle or a refusal, never a panic.
    #[test]
    fn prop_any_bytes_read_or_refuse(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = Bundle::from_bytes(&bytes);
    }

    /// A real bundle with bytes overwritten or cut: a bundle or a refusal, never a panic; what
    /// reads writes back to the same bundle.
    #[test]
    fn prop_damaged_bundles_read_or_refuse(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        cut in any::<prop::sample::Index>(),
        gzip in any::<bool>(),
    ) {
        let mut bytes = GOLDEN.as_bytes().to_vec();
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        bytes.truncate(cut.index(bytes.len() + 1).max(1));
        if gzip {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(&bytes).unwrap();
            bytes = e.finish().unwrap();
        }
        if let Ok(b) = Bundle::from_bytes(&bytes) {
            prop_assert_eq!(Bundle::from_json(&b.to_json().unwrap()).unwrap(), b);
        }
    }

    /// Any (lo, hi), finite or not: a finite increasing range, at most 10 ticks on a log axis
    /// and at most `max` on a linear one, all finite and inside the range; short labels.
    #[test]
    fn prop_axes_are_sane_for_any_range(lo in any_number(), hi in any_number(), max in 2usize..12) {
        for kind in [AxisKind::Linear, AxisKind::Concurrency, AxisKind::Tokens] {
            let (a, b) = kind.plot_range(lo, hi);
            prop_assert!(a.is_finite() && b.is_finite() && a < b, "{:?} {}..{}: {}..{}", kind, lo, hi, a, b);
            let t = linear_ticks(a, b, max);
            prop_assert!(t.len() <= max);
            prop_assert!(t.iter().all(|v| v.is_finite() && *v >= a && *v <= b));
            prop_assert!(t.windows(2).all(|w| w[0] < w[1]));
            prop_assert!(kind.ticks(lo, hi).len() <= 10);
        }
        for v in [lo, hi] {
            for s in [format_value(v), format_exact(v), format_tokens(v), fixed(v, 3)] {
                prop_assert!(s.len() <= 20, "{}: {}", v, s);
            }
        }
    }

    /// Summaries of any values are finite and ordered: min ≤ p50 ≤ p90 ≤ p99 ≤ max, mean
    /// between min and max.
    #[test]
    fn prop_summaries_are_finite_and_ordered(values in proptest::collection::vec(any_number(), 0..40)) {
        if let Some(s) = Stats::from_values(values) {
            let all = [s.mean, s.p50, s.p90, s.p99, s.min, s.max];
            prop_assert!(all.iter().all(|v| v.is_finite()), "{:?}", s);
            prop_assert!(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.max, "{:?}", s);
            prop_assert!(s.min <= s.mean && s.mean <= s.max, "{:?}", s);
        }
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// A measured and an imported bundle whose numbers are any finite `f64`: every chart draws
    /// and the comparison reads, with finite ranges and short texts, within the deadline.
    #[test]
    fn prop_any_numbers_chart_and_compare(
        a in proptest::collection::vec(any_number(), 1..24),
        b in proptest::collection::vec(any_number(), 1..24),
        imported in any::<bool>(),
    ) {
        let first = bundle_with(GOLDEN, &a);
        let second = bundle_with(if imported { IMPORTED } else { GOLDEN }, &b);
        check_everything(first, second);
    }
}

/// Issue 10: one throughput of 1.7e308 (and its neighbours at the edges of `f64`) charted and
/// compared without hanging.
#[test]
fn an_enormous_throughput_charts_and_compares() {
    for v in [1.7e308, f64::MAX, -1.7e308, 1e-308, 5e-324] {
        check_everything(
            bundle_with(GOLDEN, &[v]),
            Bundle::from_json(GOLDEN).unwrap(),
        );
        check_everything(
            Bundle::from_json(GOLDEN).unwrap(),
            bundle_with(IMPORTED, &[v, 1.0]),
        );
    }
}
