//! `llmsweep compare`: the shared [`Comparison`] as terminal tables, with the result of the
//! shared CI gate (`--fail-if-slower`).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::bail;
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::SweepKind;
use llmsweep_shared::charts::axis::fixed;
use llmsweep_shared::compare::gate::{GateResult, gate};
use llmsweep_shared::compare::verdict::{change_text, level_cell, level_list, level_name};
use llmsweep_shared::compare::{
    Comparison, NEUTRAL_PCT, RunInput, SweepComparison, Verdict, compare, definition, interval,
    mark_as_gated, verdicts,
};
use llmsweep_shared::curves::Metric;

/// Loaded runs with labels that tell them apart (a repeated label gets its file name).
pub(crate) fn load_runs(files: &[PathBuf]) -> anyhow::Result<Vec<(String, Bundle)>> {
    let mut runs: Vec<(String, Bundle)> = Vec::new();
    for f in files {
        let b = crate::store::read_bundle(f)?;
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
pub(crate) struct CompareRequest {
    pub files: Vec<PathBuf>,
    pub baseline: Option<PathBuf>,
    pub fail_if_slower: Option<f64>,
    /// Gate only this kind of sweep (`--gate`).
    pub gate: Option<SweepKind>,
}

/// What `compare` found: the comparison as text, and the gate's result (with
/// `--fail-if-slower`) — or, when the runs have no level in common, why there is nothing to
/// compare (and nothing is gated).
#[derive(Debug)]
pub(crate) struct Compared {
    pub text: String,
    pub gate: Option<GateResult>,
    pub nothing: Option<String>,
    /// The comparison the text renders, for the other formats.
    pub cmp: Comparison,
    /// The smallest change that counts: `--fail-if-slower`'s, else [`NEUTRAL_PCT`].
    pub threshold: f64,
}

/// The exit status when the runs cannot tell: the gate found no regression but cannot resolve
/// a change of the threshold's size at some gated level, or (gate or not) the runs have no
/// level in common. Not a pass (a CI job fails on it), and told apart from a regression (1)
/// and from an error (2).
pub(crate) const UNRESOLVED: u8 = 3;

impl Compared {
    /// The exit status the result implies, whatever the format: 3 when nothing is in common,
    /// 1 on a regression, 3 when the gate cannot resolve its threshold, else 0.
    pub(crate) fn exit_code(&self) -> u8 {
        if self.nothing.is_some() {
            return UNRESOLVED;
        }
        match &self.gate {
            Some(g) if !g.regressions.is_empty() => 1,
            Some(g) if !g.unresolved.is_empty() => UNRESOLVED,
            _ => 0,
        }
    }
}

/// Renders the comparison, the verdict first; with `--fail-if-slower`, also the gate's result.
pub(crate) fn run(req: &CompareRequest) -> anyhow::Result<Compared> {
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
    let mut cmp = compare(&inputs, baseline);
    let mut out = String::new();
    let threshold = req.fail_if_slower.unwrap_or(NEUTRAL_PCT);
    // With the gate, a cell is marked as the gate judges its level; without, as the verdict
    // counts it (`compare` marked it so).
    if req.fail_if_slower.is_some() {
        mark_as_gated(&mut cmp, threshold);
    }
    render_verdicts(&mut out, &cmp, threshold);
    for w in &cmp.workload {
        let mark = if w.same == Some(false) {
            "warning: "
        } else {
            ""
        };
        let line = format!("{mark}{}", w.line);
        let width = crate::output::terminal::stdout_width();
        let _ = writeln!(
            out,
            "{}\n",
            crate::output::terminal::hang("", &line, "  ", width)
        );
    }
    for sweep in &cmp.sweeps {
        render_sweep(&mut out, &cmp, sweep);
    }
    let bundles: Vec<&Bundle> = runs.iter().map(|(_, b)| b).collect();
    render_sources(&mut out, &cmp, &bundles);
    render_metadata(&mut out, &cmp);
    if let Some(why) = nothing_in_common(&cmp) {
        return Ok(Compared {
            text: out,
            gate: None,
            nothing: Some(why),
            cmp,
            threshold,
        });
    }
    let gate = match req.fail_if_slower {
        Some(pct) => Some(gate(&cmp, pct, req.gate)?),
        None => None,
    };
    Ok(Compared {
        text: out,
        gate,
        nothing: None,
        cmp,
        threshold,
    })
}

/// Why nothing is compared, when no sweep has a level the baseline and another run both
/// measured: each run's sweep that is missing, ran another workload, or has other levels.
fn nothing_in_common(cmp: &Comparison) -> Option<String> {
    if cmp.sweeps.iter().any(|s| !s.levels.is_empty()) {
        return None;
    }
    let base = &cmp.labels[cmp.baseline];
    let mut why = Vec::new();
    for s in &cmp.sweeps {
        let name = s.name();
        for &i in &s.absent {
            why.push(format!("{} has no {name} sweep", cmp.labels[i]));
        }
        for m in &s.mismatched {
            why.push(format!(
                "{} ran a different {name} workload ({})",
                cmp.labels[m.run],
                m.reasons.join("; ")
            ));
        }
        for (i, keys) in &s.only_in {
            why.push(format!(
                "{name} sweep: {} measured only {}",
                cmp.labels[*i],
                level_list(s.kind, keys)
            ));
        }
    }
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(": {}", why.join("; "))
    };
    Some(format!(
        "nothing to compare: no sweep has a level that {base} (the baseline) and another run both measured{why}"
    ))
}

/// The verdict lines: per sweep and run, one word and the headline metrics' changes.
fn render_verdicts(out: &mut String, cmp: &Comparison, threshold: f64) {
    let vs = verdicts(cmp, threshold);
    if vs.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "verdict (changes beyond the noise, {:.0} % for all levels and metrics together, and at least {threshold} %)",
        interval::CONFIDENCE * 100.0
    );
    // Prose, wrapped at word boundaries to the terminal: a continuation sits under its text.
    let width = crate::output::terminal::stdout_width();
    let hang = crate::output::terminal::hang;
    for v in &vs {
        let head = v.headline(&cmp.labels, cmp.baseline);
        let _ = writeln!(out, "{}", hang("  ", &head, "    ", width));
        let lines = v.metric_lines();
        let w = lines
            .iter()
            .map(|(m, _)| m.label().chars().count())
            .max()
            .unwrap_or(0);
        for (m, line) in lines {
            let first = format!("    {:<w$}  ", m.label());
            let indent = " ".repeat(first.chars().count());
            let _ = writeln!(out, "{}", hang(&first, &line, &indent, width));
        }
        for n in &v.notes {
            let _ = writeln!(out, "{}", hang("    ", n, "      ", width));
        }
    }
    let _ = writeln!(out);
}

/// A sweep's table; a change is marked better or WORSE as the verdict counts it, or with
/// `--fail-if-slower` as the gate judges it (see [`mark_as_gated`]).
fn render_sweep(out: &mut String, cmp: &Comparison, s: &SweepComparison) {
    let base = &cmp.labels[cmp.baseline];
    let _ = writeln!(out, "{} sweep, baseline {base}", s.name());
    for m in &s.mismatched {
        let _ = writeln!(
            out,
            "  {} is not compared: it ran a different workload ({})",
            cmp.labels[m.run],
            m.reasons.join("; ")
        );
    }
    for &i in &s.absent {
        let _ = writeln!(out, "  {} has no {} sweep", cmp.labels[i], s.name());
    }
    for (i, keys) in &s.only_in {
        let _ = writeln!(
            out,
            "  only in {}: {}",
            cmp.labels[*i],
            level_list(s.kind, keys)
        );
    }
    if s.runs.len() < 2 {
        let _ = writeln!(out);
        return;
    }
    let mut table: Vec<Vec<String>> = vec![
        std::iter::once(level_name(s.kind).to_string())
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
                    level_cell(s.kind, level.key)
                } else {
                    String::new()
                },
                row.metric.label().to_string(),
            ];
            cells.extend(row.cells.iter().map(|c| match (c.value, &c.note) {
                (Some(v), _) => {
                    let mark = if c.caveat.is_some() { "†" } else { "" };
                    match &c.change {
                        Some(d) => format!(
                            "{}{mark} {}{}",
                            fmt_value(v),
                            change_text(d),
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
        for (name, cells) in s.peak_rows(level) {
            let cells = cells.into_iter().map(|c| c.unwrap_or_else(|| "-".into()));
            table.push(
                [String::new(), name.to_string()]
                    .into_iter()
                    .chain(cells)
                    .collect(),
            );
        }
    }
    write_table(out, &table);
    for line in no_interval_notes(s) {
        let _ = writeln!(out, "  {line}");
    }
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

/// For a rate sweep, which changes carry no interval and why, one line per metric and reason
/// (a change printed without `±` is shown, never judged): the achieved rate, set by the
/// schedule; a p99 over too few requests.
pub(crate) fn no_interval_notes(s: &SweepComparison) -> Vec<String> {
    if s.kind != SweepKind::Rate {
        return Vec::new();
    }
    let mut seen: Vec<(Metric, &str)> = Vec::new();
    for row in s.levels.iter().flat_map(|l| &l.rows) {
        for c in &row.cells {
            if let Some(why) = c.change.and_then(|ch| ch.no_interval)
                && !seen.contains(&(row.metric, why))
            {
                seen.push((row.metric, why));
            }
        }
    }
    seen.into_iter()
        .map(|(m, why)| format!("no interval, not judged: {} ({why})", m.label()))
        .collect()
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
        let width = crate::output::terminal::stdout_width();
        let hang = crate::output::terminal::hang;
        let head = format!("{} is {line}", cmp.labels[i]);
        let _ = writeln!(out, "{}", hang("", &head, "  ", width));
        for &m in &reported {
            let def = definition(b, m).unwrap_or("not defined by the source");
            let _ = writeln!(
                out,
                "{}",
                hang("  ", &format!("{}: {def}", m.label()), "    ", width)
            );
        }
        if !missing.is_empty() {
            let names: Vec<&str> = missing.iter().map(|m| m.label()).collect();
            let text = format!("not reported: {}", names.join(", "));
            let _ = writeln!(out, "{}", hang("  ", &text, "    ", width));
        }
        if let Some(src) = &b.source {
            for n in &src.notes {
                let text = format!("import note: {n}");
                let _ = writeln!(out, "{}", hang("  ", &text, "    ", width));
            }
        }
        let _ = writeln!(out);
    }
}

pub(crate) fn verdict_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => " better",
        Verdict::Worse => " WORSE",
        Verdict::Same | Verdict::None => "",
    }
}

/// A table value: 1 to 3 decimals by size; scientific for a huge one (a foreign file's
/// `1.7e308` is not printed as 309 digits).
pub(crate) fn fmt_value(v: f64) -> String {
    if v.abs() >= 100.0 {
        fixed(v, 1)
    } else if v.abs() >= 1.0 {
        fixed(v, 2)
    } else {
        fixed(v, 3)
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
    for line in crate::output::table::fitted(rows) {
        let _ = writeln!(out, "{line}");
    }
}
