//! A bundle's sweeps as CSV (`llmsweep export --csv`): one row per point, for a spreadsheet or
//! a script that expects the columns vLLM's `bench serve`, GuideLLM and AIPerf report.

use crate::bundle::{Bundle, Imported, Point, PointStatus, Quantiles, Summary};
use crate::compare::{csv_line, kind_name};
use crate::metrics::Stats;
use crate::metrics::request::tpot_s;

/// The percentiles of each latency when none are asked: p50, p90 and p99.
pub const DEFAULT_PERCENTILES: [f64; 3] = [50.0, 90.0, 99.0];

/// The latencies, in column order, each as `{name}_mean_s` then one `{name}_pQ_s` per
/// percentile.
const LATENCIES: [&str; 4] = ["ttft", "tpot", "itl", "e2e"];

/// The columns before the latencies.
const LEADING: [&str; 13] = [
    "label",
    "sweep",
    "status",
    "concurrency",
    "input_tokens",
    "output_tokens",
    "offered_rps",
    "achieved_rps",
    "requests_ok",
    "requests_failed",
    "steady_tok_s",
    "steady_pm_pct",
    "agg_tok_s",
];

/// The header row for percentiles `qs`, in column order. Times are in seconds, rates per
/// second. With [`DEFAULT_PERCENTILES`]: `…, ttft_mean_s, ttft_p50_s, ttft_p90_s, ttft_p99_s,
/// tpot_mean_s, …, e2e_p99_s, flags`.
pub fn csv_columns(qs: &[f64]) -> Vec<String> {
    let mut cols: Vec<String> = LEADING.iter().map(|c| (*c).to_string()).collect();
    for m in LATENCIES {
        cols.push(format!("{m}_mean_s"));
        cols.extend(qs.iter().map(|&q| format!("{m}_{}_s", percentile_name(q))));
    }
    cols.push("flags".into());
    cols
}

/// `p50`, `p99.9`, `p99.99`: the percentile as its shortest decimal.
pub fn percentile_name(q: f64) -> String {
    format!("p{q}")
}

/// Percentiles asked for (`--percentiles`), sorted, each once, each above 0 and below 100.
#[derive(Debug, Clone, PartialEq)]
pub struct Percentiles(pub Vec<f64>);

/// Reads `--percentiles`: numbers above 0 and below 100 separated by commas (`50,90,99`,
/// `95,99.9`), at most 12 of them; returned sorted, each once. The error says what to fix.
pub fn parse_percentiles(text: &str) -> Result<Percentiles, String> {
    let mut qs = Vec::new();
    for part in text.split(',').map(str::trim) {
        let q: f64 = part.parse().map_err(|_| {
            format!(
                "{:?} is not a percentile: give numbers between 0 and 100 separated by commas, \
                 e.g. 50,90,99",
                crate::text::inert(part)
            )
        })?;
        if !(q > 0.0 && q < 100.0) {
            return Err(format!(
                "{part} is not a percentile: each must be above 0 and below 100, e.g. 50,90,99.9"
            ));
        }
        qs.push(q);
    }
    qs.sort_by(f64::total_cmp);
    qs.dedup();
    if qs.len() > 12 {
        return Err(format!(
            "{} percentiles asked: give at most 12, e.g. 50,90,99",
            qs.len()
        ));
    }
    Ok(Percentiles(qs))
}

/// Every point of every sweep of `b` as one CSV row under the [`csv_columns`] header of the
/// [`DEFAULT_PERCENTILES`], its file unnamed; see [`runs_csv`].
pub fn bundle_csv(b: &Bundle) -> String {
    runs_csv(&[("", b)], &DEFAULT_PERCENTILES)
}

/// Every point of every sweep of each run (its file's name, its bundle) as one CSV row under
/// the [`csv_columns`] header of percentiles `qs`, quoted per RFC 4180: each row starts with
/// its file, run id and date, so the rows of several runs of one label can be told apart.
/// Numbers at full precision (the shortest text that reads back as the same `f64`), an empty
/// field where the point has no such number; flags as their words joined by `;`; text fields
/// through the one text policy (control characters as escapes, see [`crate::text::inert`];
/// a cell a spreadsheet would run prefixed, see [`crate::text::csv_cell`]). Lines end in CRLF,
/// as RFC 4180 has it.
///
/// A measured point's TTFT, TPOT and e2e percentiles come from its successful requests'
/// records, as its summary's do (linear interpolation between closest ranks); its ITL keeps
/// only p50, p90 and p99 (the bundle stores the summary of the per-token gaps, not the gaps).
/// An imported point gives the numbers its source reported, and nothing for a percentile it
/// did not state.
pub fn runs_csv(runs: &[(&str, &Bundle)], qs: &[f64]) -> String {
    let mut header = vec!["file".to_string(), "run_id".into(), "date".into()];
    header.extend(csv_columns(qs));
    let mut lines = vec![csv_line(&header)];
    for (file, b) in runs {
        let run = [
            crate::text::one_line(file).into_owned(),
            crate::text::one_line(&b.id).into_owned(),
            crate::text::one_line(b.run_date().unwrap_or("")).into_owned(),
        ];
        for sweep in &b.sweeps {
            for p in &sweep.points {
                let mut fields = run.to_vec();
                fields.extend(point_fields(&b.label, kind_name(sweep.kind), p, qs));
                lines.push(csv_line(&fields));
            }
        }
    }
    lines.join("\r\n") + "\r\n"
}

/// A number as written: full precision, empty when absent or not finite.
fn num(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map(|x| x.to_string())
        .unwrap_or_default()
}

fn count(v: Option<u64>) -> String {
    v.map(|n| n.to_string()).unwrap_or_default()
}

/// The three percentiles a summary or a source states, by their number.
fn stated(q: f64, p50: Option<f64>, p90: Option<f64>, p99: Option<f64>) -> Option<f64> {
    match q {
        50.0 => p50,
        90.0 => p90,
        99.0 => p99,
        _ => None,
    }
}

/// Mean then each percentile of `qs` of a measured statistic: from `values` (the successful
/// requests' own numbers) when there are any, else the summary's three stated percentiles.
fn measured(s: Option<Stats>, values: Option<Vec<f64>>, qs: &[f64]) -> Vec<Option<f64>> {
    let Some(s) = s else {
        return vec![None; qs.len() + 1];
    };
    let mut sorted = values.filter(|v| !v.is_empty());
    if let Some(v) = sorted.as_mut() {
        v.retain(|x| x.is_finite());
        v.sort_by(f64::total_cmp);
    }
    std::iter::once(Some(s.mean))
        .chain(qs.iter().map(|&q| match &sorted {
            Some(v) if !v.is_empty() => Some(crate::metrics::stats::percentile_sorted(v, q)),
            _ => stated(q, Some(s.p50), Some(s.p90), Some(s.p99)),
        }))
        .collect()
}

/// Mean then each percentile of `qs` as a source stated them (a number it did not name, or a
/// percentile it did not give, is left out).
fn reported(q: &Quantiles, qs: &[f64]) -> Vec<Option<f64>> {
    std::iter::once(q.mean)
        .chain(qs.iter().map(|&p| stated(p, q.p50, q.p90, q.p99)))
        .collect()
}

fn status_word(s: PointStatus) -> &'static str {
    match s {
        PointStatus::Ok => "ok",
        PointStatus::Skipped => "skipped",
        PointStatus::Failed => "failed",
        PointStatus::Unknown => "unknown",
    }
}

fn point_fields(label: &str, sweep: &str, p: &Point, qs: &[f64]) -> Vec<String> {
    let rate = p.rate;
    let imported = p.imported.as_ref().filter(|_| p.summary.is_none());
    let mut f = vec![
        crate::text::inert(label).into_owned(),
        sweep.to_string(),
        status_word(p.status).to_string(),
        p.concurrency.to_string(),
        p.input_len.to_string(),
        p.output_len.to_string(),
        num(rate.map(|r| r.offered_rps)),
        num(rate.and_then(|r| r.achieved_rps)),
    ];
    let latencies: [Vec<Option<f64>>; 4] = match (&p.summary, imported) {
        (Some(s), _) => {
            f.extend(summary_fields(s));
            let ok = || p.requests.iter().filter(|r| r.is_ok());
            let of = |v: Vec<f64>| Some(v);
            [
                measured(s.ttft_s, of(ok().filter_map(|r| r.ttft_s).collect()), qs),
                measured(s.tpot_s, of(ok().filter_map(tpot_s).collect()), qs),
                measured(s.itl_s, None, qs),
                measured(s.e2e_s, of(ok().map(|r| r.e2e_s).collect()), qs),
            ]
        }
        (None, Some(i)) => {
            f.extend(imported_fields(i));
            [
                reported(&i.ttft_s, qs),
                reported(&i.tpot_s, qs),
                reported(&i.itl_s, qs),
                reported(&i.e2e_s, qs),
            ]
        }
        (None, None) => {
            f.extend(std::iter::repeat_n(String::new(), 5));
            std::array::from_fn(|_| vec![None; qs.len() + 1])
        }
    };
    f.extend(latencies.iter().flatten().map(|&v| num(v)));
    let flags: Vec<String> = p
        .flags
        .iter()
        .map(|fl| match fl.count {
            Some(n) => format!("{} {n}", fl.kind.as_str()),
            None => fl.kind.as_str().to_string(),
        })
        .collect();
    f.push(flags.join(";"));
    f
}

/// requests ok and failed, steady tok/s and its ±%, aggregate tok/s.
fn summary_fields(s: &Summary) -> [String; 5] {
    [
        s.ok.to_string(),
        s.failed.to_string(),
        num(s.steady_tok_s),
        num(s.steady_pm_pct),
        num(Some(s.agg_tok_s)),
    ]
}

fn imported_fields(i: &Imported) -> [String; 5] {
    [
        count(i.ok),
        count(i.failed),
        String::new(),
        String::new(),
        num(i.output_tok_s),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Imported, Quantiles};

    /// An imported point gives what its source stated, and only that: its mean/p50/p90/p99,
    /// its throughput and counts; a number it printed without naming it is left out.
    #[test]
    fn an_imported_point_gives_its_sources_statistics() {
        let mut p = Point::empty(4, 1000, 100);
        p.imported = Some(Imported {
            ok: Some(10),
            failed: Some(1),
            output_tok_s: Some(123.5),
            ttft_s: Quantiles {
                mean: Some(0.5),
                p50: Some(0.4),
                p90: Some(0.9),
                p99: Some(1.25),
                unstated: None,
            },
            e2e_s: Quantiles {
                unstated: Some(3.0),
                ..Quantiles::default()
            },
            tpot_s: Quantiles {
                p99: Some(0.1),
                ..Quantiles::default()
            },
            ..Imported::default()
        });
        assert_eq!(
            csv_line(&point_fields(
                "vllm",
                "throughput",
                &p,
                &DEFAULT_PERCENTILES
            )),
            "vllm,throughput,ok,4,1000,100,,,10,1,,,123.5,0.5,0.4,0.9,1.25,,,,0.1,,,,,,,,,"
        );
        assert_eq!(
            point_fields("vllm", "throughput", &p, &DEFAULT_PERCENTILES).len(),
            csv_columns(&DEFAULT_PERCENTILES).len()
        );
        // A percentile the source did not state is left empty; its mean still shows.
        let qs = [95.0, 99.0];
        let f = point_fields("vllm", "throughput", &p, &qs);
        let cols = csv_columns(&qs);
        let at = |c: &str| f[cols.iter().position(|x| x == c).unwrap()].clone();
        assert_eq!(
            (at("ttft_mean_s"), at("ttft_p95_s"), at("ttft_p99_s")),
            ("0.5".into(), String::new(), "1.25".into())
        );
    }

    /// The default columns are the summary's own numbers; other percentiles come from the
    /// records with the same interpolation, so p50 asked as a list of one equals the summary's.
    #[test]
    fn asked_percentiles_come_from_the_records() {
        use crate::bundle::RequestRecord;
        // TTFT 0.1 … 1.0 s over ten requests: p95 is 0.955 (rank 8.55), p50 0.55.
        let requests: Vec<RequestRecord> = (1..=10)
            .map(|i| {
                let t = f64::from(i) * 0.1;
                RequestRecord::test_ok(f64::from(i), t, t + 1.0, 100)
            })
            .collect();
        let mut p = Point::empty(2, 1000, 100);
        p.summary = Some(crate::metrics::summarize(&requests, 2, 100, &[0.01, 0.02]));
        p.requests = requests;
        let s = p.summary.clone().unwrap();
        let cols = csv_columns(&DEFAULT_PERCENTILES);
        let f = point_fields("x", "throughput", &p, &DEFAULT_PERCENTILES);
        let at = |cols: &[String], f: &[String], c: &str| {
            f[cols.iter().position(|x| x == c).unwrap()].clone()
        };
        let ttft = s.ttft_s.unwrap();
        assert_eq!(at(&cols, &f, "ttft_p50_s"), ttft.p50.to_string());
        assert_eq!(at(&cols, &f, "ttft_p90_s"), ttft.p90.to_string());
        assert_eq!(at(&cols, &f, "e2e_p99_s"), s.e2e_s.unwrap().p99.to_string());
        let qs = parse_percentiles("99.9, 95,50").unwrap().0;
        assert_eq!(qs, [50.0, 95.0, 99.9]);
        let cols = csv_columns(&qs);
        assert!(cols.contains(&"ttft_p99.9_s".to_string()));
        let f = point_fields("x", "throughput", &p, &qs);
        let p95: f64 = at(&cols, &f, "ttft_p95_s").parse().unwrap();
        assert!((p95 - 0.955).abs() < 1e-12, "{p95}");
        // ITL keeps only the summary's three percentiles.
        assert_eq!(at(&cols, &f, "itl_p95_s"), "");
        assert_eq!(at(&cols, &f, "itl_p50_s"), s.itl_s.unwrap().p50.to_string());
    }

    #[test]
    fn percentiles_that_are_not_are_refused_with_what_to_give() {
        for bad in ["0", "100", "abc", "50,,90", "-1", "NaN"] {
            let e = parse_percentiles(bad).unwrap_err();
            assert!(e.contains("e.g. 50,90,99"), "{bad}: {e}");
        }
        let many: Vec<String> = (1..=13).map(|i| i.to_string()).collect();
        assert!(
            parse_percentiles(&many.join(","))
                .unwrap_err()
                .contains("at most 12")
        );
    }
}
