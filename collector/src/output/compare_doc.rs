//! `llmsweep compare --format json|markdown`: the comparison the terminal shows, as a stable
//! machine-readable document (`llmsweep.compare/1`) and as Markdown for a pull-request comment
//! or `$GITHUB_STEP_SUMMARY`. Same numbers, same verdict, same exit status as the text.

use std::fmt::Write as _;

use llmsweep_shared::bundle::SweepKind;
use llmsweep_shared::compare::gate::GateResult;
use llmsweep_shared::compare::verdict::{change_text, level_cell, level_text};
use llmsweep_shared::compare::{
    Cell, Comparison, SweepComparison, Verdict, interval, kind_name, verdicts,
};
use llmsweep_shared::curves::Metric;
use serde::Serialize;

use super::compare::{Compared, fmt_value, no_interval_notes};

/// The `schema` of the JSON document; a change that breaks a reader gets a new number.
pub(crate) const SCHEMA: &str = "llmsweep.compare/1";

/// The whole document.
#[derive(Debug, Serialize)]
pub(crate) struct Document {
    pub schema: &'static str,
    /// Every run's label, in the order given; `baseline` is one of them.
    pub runs: Vec<String>,
    pub baseline: String,
    /// The smallest change that counts as better or worse, in percent.
    pub threshold_pct: f64,
    /// The confidence of every interval, e.g. 0.95.
    pub confidence: f64,
    pub verdicts: Vec<VerdictDoc>,
    /// Per run but the baseline: whether it sent the same prompts.
    pub workload: Vec<WorkloadDoc>,
    pub sweeps: Vec<SweepDoc>,
    /// Why nothing is compared, when the runs have no level in common.
    pub nothing_in_common: Option<String>,
    /// With `--fail-if-slower`: the gate's result.
    pub gate: Option<GateDoc>,
    /// The exit status `compare` returns (0 pass, 1 slower, 3 cannot tell).
    pub exit_code: u8,
}

/// A run against the baseline in one sweep.
#[derive(Debug, Serialize)]
pub(crate) struct VerdictDoc {
    pub sweep: &'static str,
    /// `--shapes` runs: the shape of the sweeps judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<ShapeDoc>,
    pub run: String,
    /// `faster`, `slower`, `mixed`, `no significant change`, `cannot tell` or `not compared`.
    pub outcome: &'static str,
    pub headline: String,
    pub metrics: Vec<MetricLineDoc>,
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct MetricLineDoc {
    pub metric: &'static str,
    pub label: &'static str,
    pub line: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct WorkloadDoc {
    pub run: String,
    /// `true` the same prompts, `false` different, `null` cannot tell.
    pub same: Option<bool>,
    pub line: String,
}

/// The input and output tokens of a `--shapes` run's sweep.
#[derive(Debug, Serialize)]
pub(crate) struct ShapeDoc {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl ShapeDoc {
    fn of(s: Option<llmsweep_shared::shapes::Shape>) -> Option<ShapeDoc> {
        s.map(|s| ShapeDoc {
            input_tokens: s.input,
            output_tokens: s.output,
        })
    }
}

/// A compared sweep's table.
#[derive(Debug, Serialize)]
pub(crate) struct SweepDoc {
    pub kind: &'static str,
    /// `--shapes` runs: the shape of the sweeps in the table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<ShapeDoc>,
    /// What a level is: `concurrency`, `input_tokens` or `offered_rps`.
    pub level_unit: &'static str,
    /// The runs in the table, the baseline first.
    pub runs: Vec<String>,
    pub levels: Vec<LevelDoc>,
    /// Runs not compared in this sweep and levels only one run has, one line each.
    pub not_compared: Vec<String>,
    /// Footnotes: changes without an interval, caveats of imported numbers.
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize)]
pub(crate) struct LevelDoc {
    /// The concurrency, the input length in tokens, or the offered rate in requests/s.
    pub level: f64,
    /// The level in words: `C=4`, `input=8000`, `2 req/s`.
    pub text: String,
    pub metrics: Vec<RowDoc>,
}

/// One metric at one level: the baseline's value and each other run's.
#[derive(Debug, Serialize)]
pub(crate) struct RowDoc {
    pub metric: &'static str,
    pub label: &'static str,
    pub baseline: ValueDoc,
    pub others: Vec<ValueDoc>,
}

#[derive(Debug, Serialize)]
pub(crate) struct ValueDoc {
    pub run: String,
    /// In the metric's unit (its label says it); `null` where the run has none.
    pub value: Option<f64>,
    /// Why there is no value: `skipped`, `failed`, `not run`…
    pub note: Option<String>,
    /// Why the value is not quite what the metric's name says.
    pub caveat: Option<&'static str>,
    /// `(value − baseline) / baseline × 100`; absent for the baseline.
    pub change_pct: Option<f64>,
    /// The change's interval at `confidence`, `[low, high]` in percent.
    pub interval_pct: Option<[f64; 2]>,
    /// Why the change has no interval (it is shown, never judged).
    pub no_interval: Option<&'static str>,
    /// `better`, `worse` or `none` (within the noise or the threshold, or the baseline).
    pub mark: &'static str,
}

/// The gate's result, as the text prints it.
#[derive(Debug, Serialize)]
pub(crate) struct GateDoc {
    pub fail_if_slower_pct: f64,
    /// `pass`, `slower` or `cannot tell`.
    pub result: &'static str,
    pub gated: Vec<String>,
    pub not_gated: Vec<String>,
    pub regressions: Vec<String>,
    pub unresolved: Vec<String>,
    pub resolution: Vec<String>,
}

/// A stable name of a metric for machines.
fn metric_key(m: Metric) -> &'static str {
    match m {
        Metric::SteadyTokS => "steady_tok_s",
        Metric::AggTokS => "agg_tok_s",
        Metric::DecodeTokSP50 => "decode_tok_s_p50",
        Metric::TtftP50 => "ttft_p50_s",
        Metric::TtftP99 => "ttft_p99_s",
        Metric::E2eP50 => "e2e_p50_s",
        Metric::ItlP50 => "itl_p50_ms",
        Metric::PrefillTokSP50 => "prefill_tok_s_p50",
        Metric::RequestS => "request_s",
        Metric::TpotP50 => "tpot_p50_s",
        Metric::E2eP99 => "e2e_p99_s",
        Metric::AchievedRps => "achieved_rps",
        Metric::GoodputFraction => "goodput_fraction",
        Metric::GoodRps => "good_rps",
        Metric::LagP99 => "lag_p99_s",
        Metric::TtftMean => "ttft_mean_s",
        Metric::TtftP90 => "ttft_p90_s",
        Metric::TpotMean => "tpot_mean_s",
        Metric::TpotP90 => "tpot_p90_s",
        Metric::E2eMean => "e2e_mean_s",
        Metric::E2eP90 => "e2e_p90_s",
        Metric::AcceptLength => "accept_length",
    }
}

fn level_unit(kind: SweepKind) -> &'static str {
    match kind {
        SweepKind::Context => "input_tokens",
        SweepKind::Rate => "offered_rps",
        _ => "concurrency",
    }
}

fn level_value(kind: SweepKind, key: u64) -> f64 {
    match kind {
        SweepKind::Rate => key as f64 / 1000.0,
        _ => key as f64,
    }
}

fn mark_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::Same | Verdict::None => "none",
    }
}

/// What `pct` the gate was given, and its result in a word.
fn gate_doc(g: &GateResult, pct: f64) -> GateDoc {
    let result = if !g.regressions.is_empty() {
        "slower"
    } else if !g.unresolved.is_empty() {
        "cannot tell"
    } else {
        "pass"
    };
    GateDoc {
        fail_if_slower_pct: pct,
        result,
        gated: g.gated.clone(),
        not_gated: g.not_gated.clone(),
        regressions: g.regressions.clone(),
        unresolved: g.unresolved.clone(),
        resolution: g.resolution.clone(),
    }
}

/// The lines under a sweep's table in the text: runs and levels not compared.
fn not_compared(cmp: &Comparison, s: &SweepComparison) -> Vec<String> {
    let mut out = Vec::new();
    for m in &s.mismatched {
        out.push(format!(
            "{} is not compared: it ran a different workload ({})",
            cmp.labels[m.run],
            m.reasons.join("; ")
        ));
    }
    for &i in &s.absent {
        out.push(format!("{} has no {} sweep", cmp.labels[i], s.name()));
    }
    for (i, keys) in &s.only_in {
        out.push(format!(
            "only in {}: {}",
            cmp.labels[*i],
            llmsweep_shared::compare::verdict::level_list(s.kind, keys)
        ));
    }
    out
}

fn sweep_notes(s: &SweepComparison) -> Vec<String> {
    let mut notes = no_interval_notes(s);
    notes.extend(s.caveats().into_iter().map(|c| format!("† {c}")));
    notes
}

fn value_doc(cmp: &Comparison, run: usize, c: &Cell) -> ValueDoc {
    ValueDoc {
        run: cmp.labels[run].clone(),
        value: c.value,
        note: c.note.clone(),
        caveat: c.caveat,
        change_pct: c.change.map(|d| d.pct),
        interval_pct: c.change.and_then(|d| d.interval).map(|(lo, hi)| [lo, hi]),
        no_interval: c.change.and_then(|d| d.no_interval),
        mark: mark_word(c.verdict),
    }
}

/// The document of a comparison; `pct` is `--fail-if-slower`'s.
pub(crate) fn document(c: &Compared, pct: Option<f64>) -> Document {
    let cmp = &c.cmp;
    let base = cmp.baseline;
    let verdicts = verdicts(cmp, c.threshold)
        .iter()
        .map(|v| VerdictDoc {
            sweep: kind_name(v.kind),
            shape: ShapeDoc::of(v.shape),
            run: cmp.labels[v.run].clone(),
            outcome: v.outcome.word(),
            headline: v.headline(&cmp.labels, base),
            metrics: v
                .metric_lines()
                .into_iter()
                .map(|(m, line)| MetricLineDoc {
                    metric: metric_key(m),
                    label: m.label(),
                    line,
                })
                .collect(),
            notes: v.notes.clone(),
        })
        .collect();
    let sweeps = cmp
        .sweeps
        .iter()
        .map(|s| SweepDoc {
            kind: kind_name(s.kind),
            shape: ShapeDoc::of(s.shape),
            level_unit: level_unit(s.kind),
            runs: s.runs.iter().map(|&i| cmp.labels[i].clone()).collect(),
            levels: s
                .levels
                .iter()
                .map(|l| LevelDoc {
                    level: level_value(s.kind, l.key),
                    text: level_text(s.kind, l.key),
                    metrics: l
                        .rows
                        .iter()
                        .filter_map(|row| {
                            let mut cells = s
                                .runs
                                .iter()
                                .zip(&row.cells)
                                .map(|(&run, cell)| value_doc(cmp, run, cell));
                            let baseline = cells.next()?;
                            Some(RowDoc {
                                metric: metric_key(row.metric),
                                label: row.metric.label(),
                                baseline,
                                others: cells.collect(),
                            })
                        })
                        .collect(),
                })
                .collect(),
            not_compared: not_compared(cmp, s),
            notes: sweep_notes(s),
        })
        .collect();
    Document {
        schema: SCHEMA,
        runs: cmp.labels.clone(),
        baseline: cmp.labels[base].clone(),
        threshold_pct: c.threshold,
        confidence: interval::CONFIDENCE,
        verdicts,
        workload: cmp
            .workload
            .iter()
            .map(|w| WorkloadDoc {
                run: cmp.labels[w.run].clone(),
                same: w.same,
                line: w.line.clone(),
            })
            .collect(),
        sweeps,
        nothing_in_common: c.nothing.clone(),
        gate: match (&c.gate, pct) {
            (Some(g), Some(p)) => Some(gate_doc(g, p)),
            _ => None,
        },
        exit_code: c.exit_code(),
    }
}

/// The document as pretty JSON, with every control character (C1 ones and DEL, which JSON
/// allows raw) escaped, so printing it moves no cursor; one trailing newline.
pub(crate) fn json(c: &Compared, pct: Option<f64>) -> anyhow::Result<String> {
    let raw = serde_json::to_string_pretty(&document(c, pct))?;
    let mut out = json_inert(&raw);
    out.push('\n');
    Ok(out)
}

/// Serialised JSON with the control characters serde leaves raw (C1 ones, DEL) and the
/// noncharacters U+FFFE/U+FFFF written as `\uXXXX`: the same document, inert on a terminal.
fn json_inert(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for ch in raw.chars() {
        // Outside strings JSON is ASCII whitespace and punctuation, so every such character is
        // inside a string, where `\uXXXX` is its escape.
        if (ch.is_control() && !matches!(ch, '\n' | ' ')) || matches!(ch, '\u{fffe}' | '\u{ffff}') {
            let _ = write!(out, "\\u{:04x}", u32::from(ch));
        } else {
            out.push(ch);
        }
    }
    out
}

/// Text for Markdown: the one text policy's ([`llmsweep_shared::text::markdown`]).
pub(crate) fn md(text: &str) -> String {
    llmsweep_shared::text::markdown(text)
}

/// The comparison as Markdown: the verdict first, then a table per sweep and run, then the gate.
pub(crate) fn markdown(c: &Compared, pct: Option<f64>) -> String {
    let doc = document(c, pct);
    let cmp = &c.cmp;
    let mut out = String::new();
    let _ = writeln!(out, "## llmsweep compare: baseline {}\n", md(&doc.baseline));
    let _ = writeln!(
        out,
        "### Verdict\n\nChanges beyond the noise, {:.0} % for all levels and metrics together, and at least {} %.\n",
        doc.confidence * 100.0,
        llmsweep_shared::text::number(doc.threshold_pct)
    );
    for v in &doc.verdicts {
        let _ = writeln!(out, "- **{}**", md(&v.headline));
        for m in &v.metrics {
            let _ = writeln!(out, "  - {}: {}", md(m.label), md(&m.line));
        }
        for n in &v.notes {
            let _ = writeln!(out, "  - {}", md(n));
        }
    }
    if let Some(why) = &doc.nothing_in_common {
        let _ = writeln!(out, "- {}", md(why));
    }
    let _ = writeln!(out);
    for w in &doc.workload {
        let mark = if w.same == Some(false) {
            "**warning:** "
        } else {
            ""
        };
        let _ = writeln!(out, "{mark}{}\n", md(&w.line));
    }
    for (s, sd) in cmp.sweeps.iter().zip(&doc.sweeps) {
        markdown_sweep(&mut out, cmp, s, sd);
    }
    if let Some(g) = &doc.gate {
        markdown_gate(&mut out, g, doc.exit_code);
    } else if doc.nothing_in_common.is_some() {
        let _ = writeln!(
            out,
            "**exit {}**: the runs cannot be compared (compare runs of the same workload at the same levels)\n",
            doc.exit_code
        );
    }
    out
}

/// One table per run against the baseline: a row per level and metric.
fn markdown_sweep(out: &mut String, cmp: &Comparison, s: &SweepComparison, sd: &SweepDoc) {
    let base = &cmp.labels[cmp.baseline];
    for (n, &run) in s.runs.iter().enumerate().skip(1) {
        let _ = writeln!(
            out,
            "### {} sweep: {} against {}\n",
            s.name(),
            md(&cmp.labels[run]),
            md(base)
        );
        let _ = writeln!(
            out,
            "| {} | metric | {} | {} | change | mark |",
            llmsweep_shared::compare::verdict::level_name(s.kind),
            md(base),
            md(&cmp.labels[run])
        );
        let _ = writeln!(out, "|---:|---|---:|---:|---:|---|");
        for (level, ld) in s.levels.iter().zip(&sd.levels) {
            for (row, rd) in level.rows.iter().zip(&ld.metrics) {
                let Some(other) = rd.others.get(n - 1) else {
                    continue;
                };
                let cell = |v: &ValueDoc| match (v.value, &v.note) {
                    (Some(x), _) => {
                        let dagger = if v.caveat.is_some() { "†" } else { "" };
                        format!("{}{dagger}", fmt_value(x))
                    }
                    (None, Some(note)) => md(note),
                    (None, None) => "-".into(),
                };
                let change = row
                    .cells
                    .get(n)
                    .and_then(|c| c.change)
                    .map(|d| change_text(&d))
                    .unwrap_or_default();
                let mark = match other.mark {
                    "better" => "better",
                    "worse" => "**WORSE**",
                    _ => "",
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {change} | {mark} |",
                    level_cell(s.kind, level.key),
                    md(rd.label),
                    cell(&rd.baseline),
                    cell(other)
                );
            }
        }
        let _ = writeln!(out);
    }
    for line in sd.not_compared.iter().chain(&sd.notes) {
        let _ = writeln!(out, "- {}", md(line));
    }
    if !(sd.not_compared.is_empty() && sd.notes.is_empty()) {
        let _ = writeln!(out);
    }
}

fn markdown_gate(out: &mut String, g: &GateDoc, exit: u8) {
    let pct = llmsweep_shared::text::number(g.fail_if_slower_pct);
    let _ = writeln!(out, "### Gate: --fail-if-slower {pct}\n");
    let result = match g.result {
        "slower" => format!("**slower** than the baseline by more than {pct} %, beyond the noise"),
        "cannot tell" => format!(
            "**cannot tell**: no regression found, but the runs cannot resolve a {pct} % change everywhere"
        ),
        _ => format!(
            "**pass**: no level is more than {pct} % slower than the baseline beyond the noise"
        ),
    };
    let _ = writeln!(out, "{result} (exit {exit})\n");
    let lists: [(&str, &Vec<String>); 5] = [
        ("Regressions", &g.regressions),
        ("Cannot tell", &g.unresolved),
        ("Gated", &g.gated),
        ("Not gated", &g.not_gated),
        ("Resolution", &g.resolution),
    ];
    for (name, lines) in lists {
        if lines.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{name}:\n");
        for l in lines {
            let _ = writeln!(out, "- {}", md(l));
        }
        let _ = writeln!(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_text_is_escaped_and_inert() {
        assert_eq!(md("a|b"), "a\\|b");
        assert_eq!(md("# `x`"), "\\# \\`x\\`");
        assert_eq!(md("a\u{1b}[2Jb\nc"), "a\\\\u{1b}\\[2Jb c");
        assert_eq!(md("<script>"), "\\<script\\>");
        assert_eq!(md("kpro5 C=1, 2 +8.6 ±1.2 %"), "kpro5 C=1, 2 +8.6 ±1.2 %");
    }

    #[test]
    fn json_escapes_what_serde_leaves_raw() {
        let raw =
            serde_json::to_string_pretty(&["a\u{9b}2J\u{7f}\u{1b}b\u{ffff}"]).unwrap_or_default();
        let out = json_inert(&raw);
        assert_eq!(out, "[\n  \"a\\u009b2J\\u007f\\u001bb\\uffff\"\n]");
        let back: Vec<String> = serde_json::from_str(&out).unwrap_or_default();
        assert_eq!(back, ["a\u{9b}2J\u{7f}\u{1b}b\u{ffff}"]);
    }
}
