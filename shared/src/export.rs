//! A bundle's sweeps as CSV (`llmsweep export --csv`): one row per point, for a spreadsheet or
//! a script that expects the columns vLLM's `bench serve`, GuideLLM and AIPerf report.

use crate::bundle::{Bundle, Imported, Point, PointStatus, Quantiles, Summary};
use crate::compare::{csv_line, kind_name};
use crate::metrics::Stats;

/// The header row, in column order. Times are in seconds, rates per second.
pub const CSV_COLUMNS: [&str; 30] = [
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
    "ttft_mean_s",
    "ttft_p50_s",
    "ttft_p90_s",
    "ttft_p99_s",
    "tpot_mean_s",
    "tpot_p50_s",
    "tpot_p90_s",
    "tpot_p99_s",
    "itl_mean_s",
    "itl_p50_s",
    "itl_p90_s",
    "itl_p99_s",
    "e2e_mean_s",
    "e2e_p50_s",
    "e2e_p90_s",
    "e2e_p99_s",
    "flags",
];

/// Every point of every sweep of `b` as one CSV row under the [`CSV_COLUMNS`] header, quoted
/// per RFC 4180; numbers at full precision (the shortest text that reads back as the same
/// `f64`), an empty field where the point has no such number; flags as their words joined by
/// `;`; control characters in the label shown as escapes (see [`crate::text::inert`]). An
/// imported point gives the numbers its source reported. Lines end in CRLF, as RFC 4180 has it.
pub fn bundle_csv(b: &Bundle) -> String {
    let mut lines = vec![csv_line(&CSV_COLUMNS.map(String::from))];
    for sweep in &b.sweeps {
        for p in &sweep.points {
            lines.push(csv_line(&point_fields(&b.label, kind_name(sweep.kind), p)));
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

/// Mean, p50, p90 and p99 of a measured summary's statistic.
fn measured(s: Option<Stats>) -> [Option<f64>; 4] {
    s.map_or([None; 4], |s| {
        [Some(s.mean), Some(s.p50), Some(s.p90), Some(s.p99)]
    })
}

/// Mean, p50, p90 and p99 as a source stated them (a number it did not name is left out).
fn reported(q: &Quantiles) -> [Option<f64>; 4] {
    [q.mean, q.p50, q.p90, q.p99]
}

fn status_word(s: PointStatus) -> &'static str {
    match s {
        PointStatus::Ok => "ok",
        PointStatus::Skipped => "skipped",
        PointStatus::Failed => "failed",
        PointStatus::Unknown => "unknown",
    }
}

fn point_fields(label: &str, sweep: &str, p: &Point) -> Vec<String> {
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
    let latencies: [[Option<f64>; 4]; 4] = match (&p.summary, imported) {
        (Some(s), _) => {
            f.extend(summary_fields(s));
            [
                measured(s.ttft_s),
                measured(s.tpot_s),
                measured(s.itl_s),
                measured(s.e2e_s),
            ]
        }
        (None, Some(i)) => {
            f.extend(imported_fields(i));
            [
                reported(&i.ttft_s),
                reported(&i.tpot_s),
                reported(&i.itl_s),
                reported(&i.e2e_s),
            ]
        }
        (None, None) => {
            f.extend(std::iter::repeat_n(String::new(), 5));
            [[None; 4]; 4]
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
            csv_line(&point_fields("vllm", "throughput", &p)),
            "vllm,throughput,ok,4,1000,100,,,10,1,,,123.5,0.5,0.4,0.9,1.25,,,,0.1,,,,,,,,,"
        );
        assert_eq!(
            point_fields("vllm", "throughput", &p).len(),
            CSV_COLUMNS.len()
        );
    }
}
