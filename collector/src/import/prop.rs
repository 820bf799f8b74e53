//! Property tests of the importers over arbitrary files: a text table, a vLLM result or SGLang
//! JSON lines with any numbers in them (any finite `f64`, Python's `NaN` and `Infinity`, numbers
//! past `f64`'s range, garbage) import as a bundle or are refused with a message — never a
//! panic — and what imports reads back, charts and compares within a deadline.
//!
//! A fixed number of cases per property runs in every `cargo test`; a long run takes
//! `PROPTEST_CASES`, e.g. `PROPTEST_CASES=100000 cargo test --release -p llmsweep --lib prop_`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{ImportFormat, SweepKind};
use llmsweep_shared::charts::{ChartKind, ChartRun, Theme, build, run_color, svg};
use llmsweep_shared::compare::{RunInput, compare};
use proptest::prelude::*;

use super::{Request, bench, import, table};

use crate::prop_config::config;

/// A number as a file may write it: any `f64` in Rust's or scientific notation, the edges of
/// `f64`, numbers past its range, Python's literals, or not a number at all.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => any::<f64>().prop_map(|v| format!("{v}")),
        2 => any::<f64>().prop_map(|v| format!("{v:e}")),
        2 => (0.0..5000.0f64).prop_map(|v| format!("{v:.2}")),
        1 => Just("1.7e308".to_string()),
        1 => Just("1.7976931348623157e308".to_string()),
        1 => Just("1e-308".to_string()),
        1 => Just("-1.7e308".to_string()),
        1 => Just("1e999".to_string()),
        1 => Just("NaN".to_string()),
        1 => Just("Infinity".to_string()),
        1 => Just("-Infinity".to_string()),
        1 => Just("0".to_string()),
        1 => Just("\"12\"".to_string()),
        1 => Just("null".to_string()),
    ]
}

/// Imports `text` as `format`; `Ok(None)` when it was refused (with a message).
fn import_text(format: ImportFormat, text: &str) -> Option<Bundle> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let file: PathBuf = dir.path().join("in.txt");
    std::fs::write(&file, text).expect("a temporary file");
    let req = Request {
        format: Some(format),
        files: vec![file],
        label: "imported".into(),
        input_len: Some(1000),
        output_len: Some(500),
        model: None,
        notes: BTreeMap::new(),
        gpus: None,
        command_line: vec!["llmsweep".into(), "import".into()],
    };
    match import(&req) {
        Ok(b) => Some(b),
        Err(e) => {
            assert!(!e.to_string().is_empty());
            None
        }
    }
}

/// What imported reads back as itself, and charts and compares with itself within 20 s.
fn check_imported(b: Bundle) {
    let back = Bundle::from_json(&b.to_json().unwrap()).expect("an imported bundle reads back");
    assert_eq!(back, b);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let runs = [ChartRun {
            label: "imported",
            color: run_color(0),
            bundle: &b,
        }];
        for kind in ChartKind::THROUGHPUT.into_iter().chain(ChartKind::CONTEXT) {
            svg(&build(kind, &runs).for_print(), &Theme::LIGHT, (480, 300)).expect("drawn");
        }
        let inputs = [
            RunInput {
                label: "a",
                bundle: &b,
            },
            RunInput {
                label: "b",
                bundle: &b,
            },
        ];
        compare(&inputs, 0);
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(()) => {}
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("charting an import did not finish"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("charting an import panicked"),
    }
}

/// Any text, weighted towards the characters tables and JSON are made of.
fn any_text() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        2 => any::<char>(),
        3 => proptest::sample::select("0123456789.e-+|,:{}[]\" \n\tNaInfityC".chars().collect::<Vec<_>>()),
    ];
    proptest::collection::vec(c, 0..300).prop_map(String::from_iter)
}

/// A text table in one of the shapes scripts print, with any cells.
fn any_table() -> impl Strategy<Value = String> {
    let header = prop_oneof![
        Just("C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail"),
        Just("input | TTFT(s) | prefill tok/s | decode tok/s"),
        Just("C,Agg tok/s,TTFT(s)"),
        Just("| C | Agg tok/s | TTFT(s) |"),
    ];
    let cell = prop_oneof![
        4 => number_text(),
        2 => (1u32..200).prop_map(|c| c.to_string()),
        1 => Just("...".to_string()),
        1 => Just("-".to_string()),
        1 => Just(String::new()),
    ];
    let row = proptest::collection::vec(cell, 1..9);
    let sep = prop_oneof![Just(" | "), Just(","), Just("\t"), Just("  ")];
    (
        header,
        proptest::collection::vec(row, 0..6),
        sep,
        any::<bool>(),
    )
        .prop_map(|(h, rows, sep, title)| {
            let mut t = String::new();
            if title {
                t.push_str("input=1000, output=500\n");
            }
            t.push_str(h);
            t.push('\n');
            for r in rows {
                t.push_str(&r.join(sep));
                t.push('\n');
            }
            t
        })
}

/// A benchmark result object (one line) with any values in the fields the importer reads.
fn any_bench_object() -> impl Strategy<Value = String> {
    let keys = [
        "duration",
        "completed",
        "failed",
        "max_concurrency",
        "num_prompts",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "output_throughput",
        "mean_ttft_ms",
        "median_ttft_ms",
        "p99_ttft_ms",
        "median_tpot_ms",
        "p99_itl_ms",
        "median_e2el_ms",
        "median_e2e_latency_ms",
        "random_input_len",
        "random_range_ratio",
        "request_rate",
        "burstiness",
        "request_goodput",
    ];
    let value = prop_oneof![
        3 => number_text(),
        2 => (0u64..100_000).prop_map(|v| v.to_string()),
        1 => Just("\"inf\"".to_string()),
        1 => (0.1..50.0f64).prop_map(|v| format!("{v:.2}")),
    ];
    proptest::collection::vec(proptest::option::weighted(0.8, value), keys.len()).prop_map(
        move |values| {
            let fields: Vec<String> = keys
                .iter()
                .zip(values)
                .filter_map(|(k, v)| Some(format!("\"{k}\": {}", v?)))
                .chain(["\"dataset_name\": \"random\"".to_string()])
                .collect();
            format!("{{{}}}", fields.join(", "))
        },
    )
}

proptest! {
    #![proptest_config(config(64))]

    /// Any text: the table reader finds tables or says why not; never a panic.
    #[test]
    fn prop_any_text_parses_as_a_table_or_is_refused(text in any_text()) {
        let _ = table::parse(&text);
    }

    /// Any text: the benchmark readers find runs or say why not; never a panic.
    #[test]
    fn prop_any_text_parses_as_bench_results_or_is_refused(text in any_text()) {
        let _ = bench::parse(bench::Bench::Vllm, &text);
        let _ = bench::parse(bench::Bench::Sglang, &text);
        let _ = bench::python_literals(&text);
    }

    /// A table with any numbers in its cells imports or is refused; an import reads back,
    /// charts and compares.
    #[test]
    fn prop_tables_with_any_numbers_import_or_are_refused(text in any_table()) {
        if let Some(b) = import_text(ImportFormat::Table, &text) {
            check_imported(b);
        }
    }

    /// vLLM and SGLang results with any values (Python's NaN and Infinity included) import
    /// or are refused; an import reads back, charts and compares. A finite `request_rate`
    /// takes the open-loop path: a rate sweep, or a clear refusal.
    #[test]
    fn prop_bench_results_with_any_numbers_import_or_are_refused(
        runs in proptest::collection::vec(any_bench_object(), 1..4),
        sglang in any::<bool>(),
    ) {
        let (format, text) = if sglang {
            (ImportFormat::Sglang, runs.join("\n"))
        } else {
            (ImportFormat::Vllm, runs[0].clone())
        };
        if let Some(b) = import_text(format, &text) {
            check_imported(b);
        }
    }
}

/// A vLLM open-loop result: a valid run with any `request_rate`, `burstiness`,
/// `max_concurrency` and `request_goodput`, most of them usable.
fn any_open_loop_run() -> impl Strategy<Value = (String, Option<f64>)> {
    let rate = prop_oneof![
        4 => (0.01..1000.0f64).prop_map(|r| (format!("{r}"), Some(r))),
        1 => number_text().prop_map(|t| {
            // Python's literals become null; a quoted number is read as that number.
            let r = t.trim_matches('"').parse::<f64>().ok();
            let usable = r.filter(|r| r.is_finite() && *r > 0.0 && !t.contains("Infinity"));
            (t, usable)
        }),
    ];
    let burstiness = prop_oneof![
        3 => (0.05..10.0f64).prop_map(|b| format!("{b}")),
        1 => Just("1.0".to_string()),
        1 => number_text(),
    ];
    let cap = prop_oneof![
        Just("null".to_string()),
        (1u32..512).prop_map(|c| c.to_string()),
        number_text()
    ];
    (rate, burstiness, cap, number_text(), 1u64..10_000, number_text()).prop_map(
        |((rate, r), b, cap, goodput, completed, ttft)| {
            let text = format!(
                r#"{{"duration": 12.5, "completed": {completed}, "failed": 0, "num_prompts": {completed},
                "request_rate": {rate}, "burstiness": {b}, "max_concurrency": {cap},
                "request_goodput": {goodput}, "request_throughput": 3.0, "output_throughput": 900.0,
                "total_input_tokens": {ti}, "total_output_tokens": {to}, "median_ttft_ms": {ttft}}}"#,
                ti = completed * 1000,
                to = completed * 500,
            );
            (text, r)
        },
    )
}

proptest! {
    #![proptest_config(config(64))]

    /// Open-loop vLLM runs with any rate, burstiness, cap and goodput: a usable finite rate
    /// imports as a rate sweep whose points hold what the file said and nothing it did not;
    /// anything else is refused with a message. Every import reads back, charts and compares.
    #[test]
    fn prop_open_loop_vllm_runs_import_as_rate_sweeps_or_are_refused(
        runs in proptest::collection::vec(any_open_loop_run(), 1..4),
    ) {
        let text: Vec<&str> = runs.iter().map(|(t, _)| t.as_str()).collect();
        if let Some(b) = import_text(ImportFormat::Vllm, &text.join("\n")) {
            let rated = runs.iter().filter(|(_, r)| r.is_some()).count();
            let rate = b.sweeps.iter().find(|s| s.kind == SweepKind::Rate);
            prop_assert_eq!(rate.is_some(), rated > 0);
            for s in &b.sweeps {
                for p in &s.points {
                    // A rate point keeps its offered rate and nothing the file lacks.
                    let rated = p.rate.map(|r| (r.achieved_rps, r.lag_s, r.peak_concurrency));
                    let want = (s.kind == SweepKind::Rate).then_some((None, None, None));
                    prop_assert_eq!(rated, want);
                    prop_assert!(p.goodput.is_none() && p.summary.is_none());
                }
            }
            for p in b.sweeps.iter().flat_map(|s| &s.points) {
                prop_assert_eq!(p.imported.as_ref().and_then(|v| v.request_s), Some(3.0));
            }
            check_imported(b);
        }
    }
}
