//! `llmsweep compare`: the shared [`Comparison`] as terminal tables, and the CI gate
//! (`--fail-if-slower`).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::bail;
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::SweepKind;
use llmsweep_shared::compare::{
    Comparison, RunInput, SweepComparison, Verdict, compare, definition, kind_name,
};
use llmsweep_shared::curves::Metric;

/// Loaded runs with labels that tell them apart (a repeated label gets its file name).
pub fn load_runs(files: &[PathBuf]) -> anyhow::Result<Vec<(String, Bundle)>> {
    let mut runs: Vec<(String, Bundle)> = Vec::new();
    for f in files {
        let b = crate::output::store::read_bundle(f)?;
        let mut label = b.label.clone();
        if runs.iter().any(|(l, _)| *l == label) {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            label = format!("{label} ({name})");
        }
        runs.push((label, b));
    }
    Ok(runs)
}

/// What `compare` was asked.
#[derive(Debug, Clone)]
pub struct CompareRequest {
    pub files: Vec<PathBuf>,
    pub baseline: Option<PathBuf>,
    pub fail_if_slower: Option<f64>,
}

/// Renders the comparison; returns the text and, with `--fail-if-slower`, the regressions found.
pub fn run(req: &CompareRequest) -> anyhow::Result<(String, Vec<String>)> {
    let mut files = req.files.clone();
    let baseline = match &req.baseline {
        None => 0,
        Some(b) => match files.iter().position(|f| f == b) {
            Some(i) => i,
            None => {
                files.insert(0, b.clone());
                0
            }
        },
    };
    if files.len() < 2 {
        bail!(
            "compare needs at least two bundles, e.g. llmsweep compare results/kpro5-*.json results/kpro6-*.json"
        );
    }
    let runs = load_runs(&files)?;
    let inputs: Vec<RunInput> = runs
        .iter()
        .map(|(l, b)| RunInput {
            label: l,
            bundle: b,
        })
        .collect();
    let cmp = compare(&inputs, baseline);
    let mut out = String::new();
    for sweep in &cmp.sweeps {
        render_sweep(&mut out, &cmp, sweep);
    }
    let bundles: Vec<&Bundle> = runs.iter().map(|(_, b)| b).collect();
    render_sources(&mut out, &cmp, &bundles);
    render_metadata(&mut out, &cmp);
    let regressions = match req.fail_if_slower {
        Some(pct) => gate(&cmp, pct)?,
        None => Vec::new(),
    };
    Ok((out, regressions))
}

fn render_sweep(out: &mut String, cmp: &Comparison, s: &SweepComparison) {
    let base = &cmp.labels[cmp.baseline];
    let _ = writeln!(out, "{} sweep, baseline {base}", kind_name(s.kind));
    for m in &s.mismatched {
        let _ = writeln!(
            out,
            "  {} is not compared: it ran a different workload ({})",
            cmp.labels[m.run],
            m.reasons.join("; ")
        );
    }
    for &i in &s.absent {
        let _ = writeln!(
            out,
            "  {} has no {} sweep",
            cmp.labels[i],
            kind_name(s.kind)
        );
    }
    if s.runs.len() < 2 {
        let _ = writeln!(out);
        return;
    }
    let level_name = if s.kind == SweepKind::Context {
        "input"
    } else {
        "C"
    };
    let mut table: Vec<Vec<String>> = vec![
        std::iter::once(level_name.to_string())
            .chain(std::iter::once("metric".to_string()))
            .chain(s.runs.iter().map(|&i| {
                let mark = if cmp.sources[i].is_some() { " *" } else { "" };
                format!("{}{mark}", cmp.labels[i])
            }))
            .collect(),
    ];
    for level in &s.levels {
        for (n, row) in level.rows.iter().enumerate() {
            let mut cells = vec![
                if n == 0 {
                    level.key.to_string()
                } else {
                    String::new()
                },
                row.metric.label().to_string(),
            ];
            cells.extend(row.cells.iter().map(|c| match (c.value, &c.note) {
                (Some(v), _) => {
                    let mark = if c.caveat.is_some() { "†" } else { "" };
                    match c.delta_pct {
                        Some(d) => format!(
                            "{}{mark} {:+.1} %{}",
                            fmt_value(v),
                            d,
                            verdict_mark(c.verdict)
                        ),
                        None => format!("{}{mark}", fmt_value(v)),
                    }
                }
                (None, Some(note)) => note.clone(),
                (None, None) => "-".into(),
            }));
            table.push(cells);
        }
    }
    write_table(out, &table);
    for c in s.caveats() {
        let _ = writeln!(out, "  † {c}");
    }
    if s.runs.iter().any(|&i| cmp.sources[i].is_some()) {
        let _ = writeln!(
            out,
            "  * imported: the numbers its source reported, under the source's definitions (below)"
        );
    }
    let _ = writeln!(out);
}

/// For every imported run: where it comes from and what each metric it reported means there,
/// so nobody compares two things under one name unawares.
fn render_sources(out: &mut String, cmp: &Comparison, bundles: &[&Bundle]) {
    for (i, line) in cmp.sources.iter().enumerate() {
        let (Some(line), Some(b)) = (line, bundles.get(i)) else {
            continue;
        };
        // Metrics in table order, split by whether this run has a value for them anywhere.
        let mut reported: Vec<Metric> = Vec::new();
        let mut missing: Vec<Metric> = Vec::new();
        for s in &cmp.sweeps {
            let Some(n) = s.runs.iter().position(|&r| r == i) else {
                continue;
            };
            for (k, row) in s
                .levels
                .first()
                .map(|l| l.rows.as_slice())
                .unwrap_or_default()
                .iter()
                .enumerate()
            {
                let m = row.metric;
                let has = s.levels.iter().any(|l| {
                    l.rows
                        .get(k)
                        .and_then(|r| r.cells.get(n))
                        .is_some_and(|c| c.value.is_some())
                });
                let list = if has { &mut reported } else { &mut missing };
                if !list.contains(&m) {
                    list.push(m);
                }
            }
        }
        missing.retain(|m| !reported.contains(m));
        let _ = writeln!(out, "{} is {line}", cmp.labels[i]);
        for &m in &reported {
            let def = definition(b, m).unwrap_or("not defined by the source");
            let _ = writeln!(out, "  {}: {def}", m.label());
        }
        if !missing.is_empty() {
            let names: Vec<&str> = missing.iter().map(|m| m.label()).collect();
            let _ = writeln!(out, "  not reported: {}", names.join(", "));
        }
        if let Some(src) = &b.source {
            for n in &src.notes {
                let _ = writeln!(out, "  import note: {n}");
            }
        }
        let _ = writeln!(out);
    }
}

fn verdict_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => " better",
        Verdict::Worse => " WORSE",
        Verdict::Same | Verdict::None => "",
    }
}

fn fmt_value(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn render_metadata(out: &mut String, cmp: &Comparison) {
    let differs: Vec<_> = cmp.metadata.iter().filter(|m| m.differs).collect();
    if differs.is_empty() {
        let _ = writeln!(out, "metadata: nothing differs but the numbers");
        return;
    }
    let _ = writeln!(out, "what else differs");
    let mut table = vec![
        std::iter::once(String::new())
            .chain(cmp.labels.iter().cloned())
            .collect::<Vec<_>>(),
    ];
    for m in differs {
        table.push(
            std::iter::once(m.name.clone())
                .chain(m.values.iter().cloned())
                .collect(),
        );
    }
    write_table(out, &table);
}

/// Left-aligned columns two spaces apart, each as wide as its widest cell: nothing is cut.
fn write_table(out: &mut String, rows: &[Vec<String>]) {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "  {}", line.join("  ").trim_end());
    }
}

/// Regressions beyond `pct`: steady throughput down or TTFT p50 up at any common level.
/// Runs of a different workload make the gate refuse, since it would compare apples to oranges.
pub fn gate(cmp: &Comparison, pct: f64) -> anyhow::Result<Vec<String>> {
    let mut found = Vec::new();
    for s in &cmp.sweeps {
        if let Some(m) = s.mismatched.first() {
            bail!(
                "refusing to gate on {} against {}: they ran different {} workloads ({})",
                cmp.labels[m.run],
                cmp.labels[cmp.baseline],
                kind_name(s.kind),
                m.reasons.join("; ")
            );
        }
        for level in &s.levels {
            let row = |m: Metric| level.rows.iter().find(|r| r.metric == m);
            let at = match s.kind {
                SweepKind::Context => format!("input {}", level.key),
                _ => format!("C={}", level.key),
            };
            for (n, &run) in s.runs.iter().enumerate().skip(1) {
                let delta = |m: Metric| row(m).and_then(|r| r.cells.get(n)?.delta_pct);
                // Steady throughput when both runs have it; an imported run has only the
                // aggregate, so the gate compares aggregates there.
                let throughput = delta(Metric::SteadyTokS)
                    .map(|d| (Metric::SteadyTokS, d))
                    .or_else(|| delta(Metric::AggTokS).map(|d| (Metric::AggTokS, d)));
                let checks = [
                    throughput.filter(|&(_, d)| d < -pct),
                    delta(Metric::TtftP50)
                        .filter(|&d| d > pct)
                        .map(|d| (Metric::TtftP50, d)),
                ];
                for (m, d) in checks.into_iter().flatten() {
                    found.push(format!(
                        "{}: {} {d:+.1} % at {at}",
                        cmp.labels[run],
                        m.label()
                    ));
                }
            }
        }
    }
    Ok(found)
}
