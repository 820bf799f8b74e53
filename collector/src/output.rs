//! What the terminal shows: a progress bar for the running point and a table row per point.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use llmsweep_shared::bundle::{Point, PointStatus, Summary};

/// A table column: header and width (a cell wider than the width widens only its own row, so
/// nothing is ever cut).
struct Col(&'static str, usize);

const THROUGHPUT: &[Col] = &[
    Col("C", 4),
    Col("ok/fail", 9),
    Col("agg tok/s", 10),
    Col("steady tok/s", 13),
    Col("per-req tok/s p50", 18),
    Col("TTFT p50 / p99 s", 17),
    Col("ITL p50 ms", 11),
    Col("tokens got/asked", 17),
    Col("wall s", 8),
];

/// Prints the throughput table, a row at a time.
#[derive(Debug, Default)]
pub struct ThroughputTable {
    header_done: bool,
}

impl ThroughputTable {
    pub fn header(&mut self) -> String {
        self.header_done = true;
        let cells: Vec<String> = THROUGHPUT
            .iter()
            .map(|c| format!("{:>w$}", c.0, w = c.1))
            .collect();
        format!("{} | flags", cells.join(" | "))
    }

    /// The row for a point, followed by one indented line per flag or failure reason.
    pub fn row(&self, p: &Point) -> String {
        let cells = match (&p.summary, p.status) {
            (Some(s), _) => throughput_cells(p, s),
            (None, _) => {
                let mut c = vec![p.concurrency.to_string()];
                c.resize(THROUGHPUT.len(), "-".into());
                c
            }
        };
        let cells: Vec<String> = cells
            .iter()
            .zip(THROUGHPUT)
            .map(|(v, c)| format!("{v:>w$}", w = c.1))
            .collect();
        let mut out = format!("{} | {}", cells.join(" | "), flag_words(p));
        for line in explanations(p) {
            out.push_str("\n      ↳ ");
            out.push_str(&line);
        }
        out
    }
}

fn throughput_cells(p: &Point, s: &Summary) -> Vec<String> {
    let ttft = s
        .ttft_s
        .map_or("-".into(), |t| format!("{:.3} / {:.3}", t.p50, t.p99));
    vec![
        p.concurrency.to_string(),
        format!("{}/{}", s.ok, s.failed),
        format!("{:.1}", s.agg_tok_s),
        s.steady_tok_s.map_or("-".into(), |v| format!("{v:.1}")),
        s.decode_tok_s
            .map_or("-".into(), |d| format!("{:.1}", d.p50)),
        ttft,
        s.itl_s
            .map_or("-".into(), |i| format!("{:.1}", i.p50 * 1000.0)),
        format!("{}/{}", s.output_tokens, s.output_tokens_asked),
        format!("{:.1}", s.wall_s),
    ]
}

/// The short words of a row's flags column: `ok`, or e.g. `short 3, failed 1`.
fn flag_words(p: &Point) -> String {
    let mut words: Vec<String> = p
        .flags
        .iter()
        .map(|f| match f.count {
            Some(n) => format!("{} {n}", f.kind.as_str()),
            None => f.kind.as_str().to_string(),
        })
        .collect();
    match p.status {
        PointStatus::Failed => words.insert(0, "FAILED".into()),
        PointStatus::Skipped => words.insert(0, "skipped".into()),
        _ => {}
    }
    if words.is_empty() {
        "ok".into()
    } else {
        words.join(", ")
    }
}

fn explanations(p: &Point) -> Vec<String> {
    let mut lines: Vec<String> = p.reason.iter().cloned().collect();
    lines.extend(p.flags.iter().map(|f| f.message.clone()));
    lines
}

/// The live progress bar of one point.
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    tokens: u64,
    failed: u64,
}

impl Progress {
    /// `total`: requests in the point when known.
    pub fn start(label: String, total: Option<u64>) -> Progress {
        let bar = match total {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::no_length(),
        };
        let template = if total.is_some() {
            "{spinner} {prefix} [{bar:30}] {pos}/{len} requests  {msg}  {elapsed}"
        } else {
            "{spinner} {prefix} {pos} requests  {msg}  {elapsed}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(label);
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress {
            bar,
            tokens: 0,
            failed: 0,
        }
    }

    /// Counts one finished request.
    pub fn done(&mut self, output_tokens: u64, ok: bool) {
        self.tokens += output_tokens;
        if !ok {
            self.failed += 1;
        }
        let secs = self.bar.elapsed().as_secs_f64().max(1e-3);
        self.bar.set_message(format!(
            "{:.1} tok/s so far, {} errors",
            self.tokens as f64 / secs,
            self.failed
        ));
        self.bar.inc(1);
    }

    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
