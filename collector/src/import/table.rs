//! Plain-text tables printed by ad-hoc benchmark scripts, e.g.
//!
//! ```text
//! C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail
//! 1 |      70.2 |          73.5 |    0.32 |   2000 |    28.5 |  4 |    0
//! ```
//!
//! Columns are recognised by their headers, in any order; unknown columns are left out with a
//! note. Cells are split as the header line shows: on `|` (markdown tables included), tabs,
//! commas, or runs of two or more spaces. Separator lines (`---+---`, `====`) are skipped; a
//! row cut off by the terminal (fewer cells than the header, or ending in `...`) is left out
//! with a note instead of being read as a row of smaller numbers. A file may hold several tables, each under its own
//! header: a throughput table keyed by concurrency and a context table keyed by input length.

use llmsweep_shared::bundle::{Imported, PointStatus, Quantiles};
use llmsweep_shared::charts::axis::thousands;

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Col {
    Concurrency,
    Input,
    OutputTokS,
    PerRequestTokS,
    Ttft(Stat),
    Tpot(Stat),
    Itl(Stat),
    E2e(Stat),
    Tokens,
    Wall,
    Ok,
    Fail,
    Requests,
    RequestS,
}

/// Which statistic a latency column says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stat {
    Mean,
    P50,
    P90,
    P99,
    /// The header names no statistic ("TTFT(s)").
    Unstated,
}

/// A recognised column: what it holds, its header as printed, and its unit factor to seconds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    pub col: Col,
    pub header: String,
    /// Divide by this to get seconds (1000 for a `ms` column); 1 for counts and rates.
    pub per_second: f64,
}

/// Which parameter a table varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TableKind {
    /// Keyed by concurrency.
    Throughput,
    /// Keyed by input length.
    Context,
}

/// One table row as read: its key and what the source reported.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub line: usize,
    pub concurrency: Option<u32>,
    pub input_len: Option<u64>,
    pub status: PointStatus,
    /// For a row the table marks as failed: its words.
    pub reason: Option<String>,
    pub values: Imported,
    /// For a row cut off in the source: how many of the header's columns were read intact.
    pub cut_off: Option<(usize, usize)>,
}

/// One table: its columns as recognised and its rows.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    pub kind: TableKind,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

/// Everything read from one file.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Parsed {
    pub tables: Vec<Table>,
    /// The lengths a line above the first table states, e.g. `input=1000, output=500` or the
    /// script's own `--input-len 1000 --output-len 500`.
    pub input_len: Option<u64>,
    pub output_len: Option<u64>,
    /// What was left out and why, one line each, with line numbers.
    pub notes: Vec<String>,
}

/// Reads every table in `text`; errors only when there is no table at all.
/// Rows a table file may hold: no sweep has more levels, and each row becomes a point of a few
/// kilobytes in memory (a million rows took 3.6 GB).
pub(crate) const MAX_ROWS: usize = 250_000;

/// Notes about left-out lines kept one by one; past them, only counted.
const MAX_NOTES: usize = 100;

pub(crate) fn parse(text: &str) -> Result<Parsed, String> {
    let mut out = Parsed::default();
    let mut rows = 0usize;
    let mut unnoted = 0usize;
    // The current table: its header cells (recognised or not) and how its cells are separated.
    let mut current: Option<(Vec<Option<Column>>, Sep, Table)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || is_separator(line) {
            continue;
        }
        if is_ellipsis(line) {
            out.notes.push(format!(
                "line {n}: the table ends in \"{line}\": the output was cut off there"
            ));
            continue;
        }
        if let Some((cols, sep, kind)) = header(line) {
            if let Some((_, _, t)) = current.take() {
                out.tables.push(t);
            }
            for (c, name) in cols.iter().zip(split(line, sep)) {
                if c.is_none() {
                    out.notes.push(format!(
                        "line {n}: column \"{name}\" is not one llmsweep knows; left out"
                    ));
                }
            }
            let columns = cols.iter().flatten().cloned().collect();
            current = Some((
                cols,
                sep,
                Table {
                    kind,
                    columns,
                    rows: Vec::new(),
                },
            ));
            continue;
        }
        let Some((cols, sep, table)) = current.as_mut() else {
            // Above the first table: a title or the command that printed it.
            out.input_len = out.input_len.or(stated_len(line, "input"));
            out.output_len = out.output_len.or(stated_len(line, "output"));
            continue;
        };
        match row(n, line, cols, *sep, table.kind) {
            Ok(r) => {
                rows += 1;
                if rows > MAX_ROWS {
                    return Err(format!(
                        "more than {} rows of results (line {n}): no sweep has that many levels; give the table of one run",
                        thousands(MAX_ROWS as f64)
                    ));
                }
                table.rows.push(r);
            }
            Err(_) if out.notes.len() >= MAX_NOTES => unnoted += 1,
            Err(why) => out.notes.push(format!("line {n}: {why}; left out")),
        }
    }
    if unnoted > 0 {
        out.notes.push(format!(
            "{} more lines that are not rows of the table; left out",
            thousands(unnoted as f64)
        ));
    }
    if let Some((_, _, t)) = current.take() {
        out.tables.push(t);
    }
    out.tables.retain(|t| !t.rows.is_empty());
    if out.tables.is_empty() {
        return Err(
            "no table found: expected a header line naming a concurrency column \
                    (C, conc, concurrency) or an input-length column (input, context), \
                    followed by rows of numbers"
                .into(),
        );
    }
    Ok(out)
}

fn is_separator(line: &str) -> bool {
    line.chars()
        .all(|c| matches!(c, '-' | '=' | '+' | '|' | ':' | ' ' | '─' | '┼' | '│'))
}

fn is_ellipsis(line: &str) -> bool {
    matches!(
        line.trim_matches(|c: char| c == '|' || c.is_whitespace()),
        "..." | "…"
    )
}

/// How a table separates its cells, as its header line shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sep {
    /// `a | b`, markdown included.
    Pipe,
    Tab,
    /// `a,b` (CSV without quoting).
    Comma,
    /// Columns aligned with two or more spaces.
    Spaces,
}

/// Cells of a line, trimmed; a leading and trailing `|` (markdown) add no cells.
fn split(line: &str, sep: Sep) -> Vec<String> {
    let cells: Vec<&str> = match sep {
        Sep::Pipe => {
            let inner = line.strip_prefix('|').unwrap_or(line);
            let inner = inner.strip_suffix('|').unwrap_or(inner);
            inner.split('|').collect()
        }
        Sep::Tab => line.split('\t').collect(),
        Sep::Comma => line.split(',').collect(),
        Sep::Spaces => line.split("  ").filter(|c| !c.trim().is_empty()).collect(),
    };
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The columns of a header line, its separator and the table's kind; `None` when the line is
/// not a header.
fn header(line: &str) -> Option<(Vec<Option<Column>>, Sep, TableKind)> {
    let candidates: &[Sep] = if line.contains('|') {
        &[Sep::Pipe]
    } else if line.contains('\t') {
        &[Sep::Tab]
    } else {
        &[Sep::Comma, Sep::Spaces]
    };
    candidates.iter().find_map(|&sep| header_with(line, sep))
}

fn header_with(line: &str, sep: Sep) -> Option<(Vec<Option<Column>>, Sep, TableKind)> {
    let cells = split(line, sep);
    if cells.len() < 2 || cells.iter().any(|c| number(c).is_some()) {
        return None;
    }
    let cols: Vec<Option<Column>> = cells.iter().map(|c| column(c)).collect();
    let has = |want: Col| cols.iter().flatten().any(|c| c.col == want);
    let kind = if has(Col::Input) {
        TableKind::Context
    } else if has(Col::Concurrency) {
        TableKind::Throughput
    } else {
        return None;
    };
    (cols.iter().flatten().count() >= 2).then_some((cols, sep, kind))
}

/// Recognises a header cell.
pub(crate) fn column(header: &str) -> Option<Column> {
    let lower = header.to_lowercase();
    let c: String = lower
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '/')
        .collect();
    let ms = lower.contains("ms") && !lower.contains("tok");
    let per_second = if ms { 1000.0 } else { 1.0 };
    let stat = || {
        if c.contains("p50") || c.contains("median") || c.contains("med") {
            Stat::P50
        } else if c.contains("p90") {
            Stat::P90
        } else if c.contains("p99") {
            Stat::P99
        } else if c.contains("mean") || c.contains("avg") || c.contains("average") {
            Stat::Mean
        } else {
            Stat::Unstated
        }
    };
    // "Mean TTFT (ms)", "P99 ITL": the statistic may come first.
    let c = {
        let base = ["mean", "median", "avg", "average", "p50", "p90", "p99"]
            .iter()
            .find_map(|p| c.strip_prefix(p))
            .filter(|rest| {
                ["ttft", "tpot", "itl", "e2e", "latency"]
                    .iter()
                    .any(|m| rest.starts_with(m))
            });
        match base {
            Some(rest) => format!("{rest}{}", &c[..c.len() - rest.len()]),
            None => c.clone(),
        }
    };
    let rate = c.contains("tok/s") || c.contains("tokens/s") || c.contains("toks");
    let col = if rate {
        const TOTAL: [&str; 6] = ["agg", "total", "output", "throughput", "gen", "sys"];
        const ONE: [&str; 6] = ["perreq", "peruser", "req", "user", "decode", "single"];
        if TOTAL.iter().any(|p| c.starts_with(p)) {
            Col::OutputTokS
        } else if ONE.iter().any(|p| c.starts_with(p)) {
            Col::PerRequestTokS
        } else {
            return None;
        }
    } else if matches!(
        c.as_str(),
        "c" | "conc" | "concurrency" | "batch" | "bs" | "clients" | "users" | "parallel"
    ) || c.starts_with("maxconcurrency")
    {
        Col::Concurrency
    } else if ["input", "context", "ctx", "prompt", "isl"]
        .iter()
        .any(|p| c.starts_with(p))
        || c == "len"
        || c == "length"
    {
        Col::Input
    } else if c.starts_with("ttft") {
        Col::Ttft(stat())
    } else if c.starts_with("tpot") {
        Col::Tpot(stat())
    } else if c.starts_with("itl") {
        Col::Itl(stat())
    } else if c.starts_with("e2e") || c.starts_with("latency") {
        Col::E2e(stat())
    } else if matches!(
        c.as_str(),
        "tokens" | "outtokens" | "outputtokens" | "gentokens" | "totaltokens" | "tokensout"
    ) {
        Col::Tokens
    } else if ["wall", "time", "duration", "elapsed"]
        .iter()
        .any(|p| c.starts_with(p))
    {
        Col::Wall
    } else if matches!(
        c.as_str(),
        "ok" | "success" | "succeeded" | "completed" | "done"
    ) {
        Col::Ok
    } else if matches!(
        c.as_str(),
        "fail" | "failed" | "fails" | "failures" | "errors" | "error" | "err"
    ) {
        Col::Fail
    } else if matches!(c.as_str(), "n" | "requests" | "reqs") {
        Col::Requests
    } else if matches!(c.as_str(), "req/s" | "rps" | "requests/s") {
        Col::RequestS
    } else {
        return None;
    };
    Some(Column {
        col,
        header: header.to_string(),
        per_second,
    })
}

/// A number as a script prints it: `1,000`, `70.2`, `8k` (thousands).
fn number(cell: &str) -> Option<f64> {
    let t = cell.trim().replace(',', "");
    let (num, mult) = match t.strip_suffix(['k', 'K']) {
        Some(n) => (n, 1000.0),
        None => (t.as_str(), 1.0),
    };
    num.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(|v| v * mult)
}

/// The token count a title line gives for `what` (`input` or `output`): `input=1000`,
/// `input: 1k`, `input_len 1000`, `--input-len 1000`, `input tokens = 1000`.
fn stated_len(line: &str, what: &str) -> Option<u64> {
    let lower = line.to_lowercase();
    let mut rest = lower.as_str();
    while let Some(at) = rest.find(what) {
        let after = &rest[at + what.len()..];
        let after = after
            .trim_start_matches(['-', '_'])
            .trim_start_matches("len")
            .trim_start_matches("gth")
            .trim_start();
        let after = after.strip_prefix("tokens").unwrap_or(after).trim_start();
        let after = after.trim_start_matches(['=', ':']).trim_start();
        let token: String = after
            .chars()
            .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | 'k'))
            .collect();
        if let Some(v) = number(&token).filter(|v| *v >= 1.0 && v.fract() == 0.0) {
            return Some(v as u64);
        }
        rest = &rest[at + what.len()..];
    }
    None
}

/// Cells that say "no value" rather than "not a number".
fn is_blank(cell: &str) -> bool {
    matches!(
        cell.to_lowercase().as_str(),
        "" | "-" | "—" | "n/a" | "na" | "nan" | "none" | "null"
    )
}

/// Words with which scripts mark a row that did not run.
fn says_failed(cell: &str) -> bool {
    let l = cell.to_lowercase();
    [
        "fail",
        "error",
        "oom",
        "timeout",
        "timed out",
        "skip",
        "exceed",
        "too long",
    ]
    .iter()
    .any(|w| l.contains(w))
}

fn row(
    n: usize,
    line: &str,
    cols: &[Option<Column>],
    sep: Sep,
    kind: TableKind,
) -> Result<Row, String> {
    let mut cells = split(line, sep);
    let dots = cells
        .last()
        .is_some_and(|c| c.ends_with("...") || c.ends_with('…'));
    // "60K  FAIL (context length exceeded)": a row the script marked failed may be short.
    let marked_failed = cells
        .iter()
        .skip(1)
        .any(|c| number(c).is_none() && says_failed(c));
    let cut_off = if dots || (cells.len() < cols.len() && !marked_failed) {
        // The last cell may itself be cut ("5" of "500"): only the cells before it are intact.
        cells.pop();
        if cells.len() < 2 {
            return Err(format!(
                "the row was cut off with {} of {} columns intact, none of them a measurement",
                cells.len(),
                cols.len()
            ));
        }
        Some((cells.len(), cols.len()))
    } else {
        None
    };
    if cells.len() > cols.len() && sep != Sep::Spaces {
        return Err(format!(
            "{} cells under a header of {} columns",
            cells.len(),
            cols.len()
        ));
    }
    let mut r = Row {
        line: n,
        concurrency: None,
        input_len: None,
        status: PointStatus::Ok,
        reason: None,
        values: Imported::default(),
        cut_off,
    };
    let mut failed_words = Vec::new();
    for (cell, col) in cells.iter().zip(cols) {
        let Some(col) = col else { continue };
        if is_blank(cell) {
            continue;
        }
        let Some(v) = number(cell) else {
            if says_failed(cell) {
                failed_words.push(cell.clone());
                continue;
            }
            return Err(format!(
                "\"{cell}\" under \"{}\" is not a number",
                col.header
            ));
        };
        set(&mut r, col, v)?;
    }
    let key_missing = match kind {
        TableKind::Throughput => r.concurrency.is_none(),
        TableKind::Context => r.input_len.is_none(),
    };
    if key_missing {
        return Err(match kind {
            TableKind::Throughput => "no concurrency in this row".into(),
            TableKind::Context => "no input length in this row".into(),
        });
    }
    let v = &r.values;
    let none_ok = v.ok == Some(0) && v.failed.is_some_and(|f| f > 0);
    if !failed_words.is_empty() || none_ok {
        r.status = PointStatus::Failed;
        r.reason = Some(if failed_words.is_empty() {
            "the table says every request failed".into()
        } else {
            format!("the table says: {}", failed_words.join(" "))
        });
    }
    Ok(r)
}

fn set(r: &mut Row, col: &Column, v: f64) -> Result<(), String> {
    let count = || -> Result<u64, String> {
        if v >= 0.0 && v.fract() == 0.0 && v <= u64::MAX as f64 {
            Ok(v as u64)
        } else {
            Err(format!(
                "\"{}\" should be a whole count, got {v}",
                col.header
            ))
        }
    };
    let secs = v / col.per_second;
    let i = &mut r.values;
    match col.col {
        Col::Concurrency => {
            let c = count()?;
            r.concurrency = Some(
                u32::try_from(c)
                    .ok()
                    .filter(|&c| c > 0)
                    .ok_or_else(|| format!("concurrency {c} is out of range"))?,
            );
        }
        Col::Input => r.input_len = Some(count()?).filter(|&l| l > 0),
        Col::OutputTokS => i.output_tok_s = Some(v),
        Col::PerRequestTokS => i.per_request_tok_s = Some(v),
        Col::Ttft(s) => put(&mut i.ttft_s, s, secs),
        Col::Tpot(s) => put(&mut i.tpot_s, s, secs),
        Col::Itl(s) => put(&mut i.itl_s, s, secs),
        Col::E2e(s) => put(&mut i.e2e_s, s, secs),
        Col::Tokens => i.output_tokens = Some(count()?),
        Col::Wall => i.wall_s = Some(secs),
        Col::Ok => i.ok = Some(count()?),
        Col::Fail => i.failed = Some(count()?),
        Col::Requests => i.requests = Some(count()?),
        Col::RequestS => i.request_s = Some(v),
    }
    Ok(())
}

fn put(q: &mut Quantiles, stat: Stat, v: f64) {
    let slot = match stat {
        Stat::Mean => &mut q.mean,
        Stat::P50 => &mut q.p50,
        Stat::P90 => &mut q.p90,
        Stat::P99 => &mut q.p99,
        Stat::Unstated => &mut q.unstated,
    };
    *slot = Some(v);
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESIGN: &str = "\
C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail
1 |      70.2 |          73.5 |    0.32 |   2000 |    28.5 |  4 |    0
2 |     137.7 |          70.8 |    0.20 |   2000 |    14.5 |  4 |    0
4 |     207.1 |          66.9 |    0.34 |   3210 |    15.5 |  8 |    0
";

    #[test]
    fn the_design_table_reads_every_column() {
        let p = parse(DESIGN).unwrap();
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        assert_eq!(p.tables.len(), 1);
        let t = &p.tables[0];
        assert_eq!(t.kind, TableKind::Throughput);
        assert_eq!(t.columns.len(), 8);
        let r = &t.rows[2];
        assert_eq!(
            (r.line, r.concurrency, r.status),
            (4, Some(4), PointStatus::Ok)
        );
        let v = &r.values;
        assert_eq!(v.output_tok_s, Some(207.1));
        assert_eq!(v.per_request_tok_s, Some(66.9));
        assert_eq!(v.ttft_s.unstated, Some(0.34));
        assert_eq!(v.ttft_s.p50, None);
        assert_eq!(v.output_tokens, Some(3210));
        assert_eq!(v.wall_s, Some(15.5));
        assert_eq!((v.ok, v.failed), (Some(8), Some(0)));
    }

    #[test]
    fn separators_spaces_missing_columns_and_a_cut_off_last_row() {
        let text = "\
some log line before the table
+----+-----------+-----------+
|  C | Agg tok/s | TTFT p50 (ms) |
+----+-----------+-----------+
|  1 |   70.2    |   320     |
|  8 |  520.0    |   410     |
| 16 |  610.
...
";
        let p = parse(text).unwrap();
        let t = &p.tables[0];
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[1].concurrency, Some(8));
        assert_eq!(t.rows[1].values.ttft_s.p50, Some(0.41));
        assert_eq!(t.rows[1].values.per_request_tok_s, None);
        assert_eq!(
            p.notes,
            [
                "line 7: the row was cut off with 1 of 3 columns intact, none of them a measurement; left out",
                "line 8: the table ends in \"...\": the output was cut off there",
            ]
        );
    }

    #[test]
    fn a_row_ending_in_dots_is_cut_off_even_with_every_cell() {
        let p = parse("C | Agg tok/s\n1 | 70.2\n2 | 13...\n").unwrap();
        assert_eq!(p.tables[0].rows.len(), 1);
        assert_eq!(
            p.notes,
            [
                "line 3: the row was cut off with 1 of 2 columns intact, none of them a measurement; left out"
            ]
        );
    }

    #[test]
    fn lengths_stated_above_the_table_are_read() {
        for (line, input, output) in [
            ("input=1000, output=500", Some(1000), Some(500)),
            (
                "# bench --input-len 1k --output-len 128",
                Some(1000),
                Some(128),
            ),
            ("Input tokens: 2048 / output_len 64", Some(2048), Some(64)),
            ("a run about input processing", None, None),
        ] {
            assert_eq!(
                (stated_len(line, "input"), stated_len(line, "output")),
                (input, output),
                "{line}"
            );
        }
        let p = parse("input=1000, output=500\nC | Agg tok/s\n1 | 70.2\n").unwrap();
        assert_eq!((p.input_len, p.output_len), (Some(1000), Some(500)));
    }

    #[test]
    fn a_cut_off_row_keeps_its_intact_leading_cells() {
        // The DESIGN.md table's last row, cut by the terminal after "5": the 5 may be the start
        // of 52.3, so only C and the aggregate are read.
        let text = "C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail\n\
                    4 |     207.1 |          66.9 |    0.34 |   3210 |    15.5 |  8 |    0\n\
                    8 |     320.4 |          5\n";
        let p = parse(text).unwrap();
        let r = &p.tables[0].rows[1];
        assert_eq!(r.concurrency, Some(8));
        assert_eq!(r.cut_off, Some((2, 8)));
        assert_eq!(r.values.output_tok_s, Some(320.4));
        assert_eq!(r.values.per_request_tok_s, None);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        assert_eq!(p.tables[0].rows[0].cut_off, None);
    }

    #[test]
    fn space_aligned_context_table_with_k_lengths_and_a_failed_row() {
        let text = "\
input     TTFT(s)   Decode tok/s   GPU mem
1K        0.15      73.1           41%
30K       2.32      61.0           77%
60K       FAIL (context length exceeded)
";
        let p = parse(text).unwrap();
        let t = &p.tables[0];
        assert_eq!(t.kind, TableKind::Context);
        let lens: Vec<_> = t.rows.iter().map(|r| r.input_len).collect();
        assert_eq!(lens, [Some(1000), Some(30000), Some(60000)]);
        assert_eq!(t.rows[1].values.per_request_tok_s, Some(61.0));
        assert_eq!(t.rows[2].status, PointStatus::Failed);
        assert_eq!(
            t.rows[2].reason.as_deref(),
            Some("the table says: FAIL (context length exceeded)")
        );
        assert_eq!(
            p.notes,
            ["line 1: column \"GPU mem\" is not one llmsweep knows; left out"]
        );
    }

    #[test]
    fn tab_and_comma_separated_tables() {
        let tsv = "C\tAgg tok/s\tTTFT (ms)\n1\t70.2\t320\n4\t207.1\t340\n";
        let csv = "concurrency,output_tok/s,ttft_p50_ms\n1,70.2,320\n4,207.1,340\n";
        for text in [tsv, csv] {
            let p = parse(text).unwrap();
            assert!(p.notes.is_empty(), "{:?}", p.notes);
            let r = &p.tables[0].rows[1];
            assert_eq!(r.concurrency, Some(4));
            assert_eq!(r.values.output_tok_s, Some(207.1));
            assert_eq!(r.values.ttft_s.central(), Some(0.34));
        }
    }

    #[test]
    fn two_tables_in_one_file() {
        let text = format!("{DESIGN}\n\ninput | TTFT(s)\n1000 | 0.3\n8000 | 1.1\n");
        let p = parse(&text).unwrap();
        let kinds: Vec<_> = p.tables.iter().map(|t| t.kind).collect();
        assert_eq!(kinds, [TableKind::Throughput, TableKind::Context]);
        assert_eq!(p.tables[1].rows[1].values.ttft_s.unstated, Some(1.1));
    }

    #[test]
    fn headers_are_recognised_by_name_and_unit() {
        let c = |h: &str| column(h).map(|c| (c.col, c.per_second));
        assert_eq!(c("Concurrency"), Some((Col::Concurrency, 1.0)));
        assert_eq!(c("TTFT (ms)"), Some((Col::Ttft(Stat::Unstated), 1000.0)));
        assert_eq!(c("Mean TTFT (ms)"), Some((Col::Ttft(Stat::Mean), 1000.0)));
        assert_eq!(c("ttft_p99_ms"), Some((Col::Ttft(Stat::P99), 1000.0)));
        assert_eq!(c("Median E2E (s)"), Some((Col::E2e(Stat::P50), 1.0)));
        assert_eq!(c("e2e p50 (s)"), Some((Col::E2e(Stat::P50), 1.0)));
        assert_eq!(c("Output tok/s"), Some((Col::OutputTokS, 1.0)));
        assert_eq!(c("Per-user tok/s"), Some((Col::PerRequestTokS, 1.0)));
        assert_eq!(c("Wall(s)"), Some((Col::Wall, 1.0)));
        assert_eq!(c("GPU util"), None);
    }

    #[test]
    fn text_without_a_table_says_what_was_expected() {
        let e = parse("hello\nworld 1 2 3\n").unwrap_err();
        assert!(e.contains("no table found"), "{e}");
        assert!(parse("").is_err());
    }

    #[test]
    fn garbage_in_a_number_cell_names_the_cell() {
        let p = parse("C | Agg tok/s\n1 | fast\n2 | 90\n").unwrap();
        assert_eq!(p.tables[0].rows.len(), 1);
        assert_eq!(
            p.notes,
            ["line 2: \"fast\" under \"Agg tok/s\" is not a number; left out"]
        );
    }

    #[test]
    fn a_table_past_its_row_cap_is_refused_and_junk_lines_are_counted_not_kept() {
        let mut text = String::from("C | Agg tok/s\n");
        for c in 1..=MAX_ROWS + 1 {
            text.push_str(&format!("{c} | 70.2\n"));
        }
        let e = parse(&text).unwrap_err();
        assert!(
            e.starts_with("more than 250,000 rows of results (line 250002)"),
            "{e}"
        );
        let mut junk = String::from("C | Agg tok/s\n1 | 70.2\n");
        for _ in 0..1000 {
            junk.push_str("1 | x | y\n");
        }
        let p = parse(&junk).unwrap();
        assert_eq!(p.notes.len(), MAX_NOTES + 1);
        assert_eq!(
            p.notes.last().unwrap(),
            "900 more lines that are not rows of the table; left out"
        );
    }
}
