//! `llmsweep history` as printed: per label and workload, one metric's levels summed up a line
//! each, or one level's runs a row each, the changes beyond the noise marked with what else
//! changed.

use std::fmt::Write as _;

use llmsweep_shared::curves::Metric;
use llmsweep_shared::history::{Estimated, FALSE_ALARM, History, Step};
use llmsweep_shared::text::inert;

/// The histories of `place`; `detailed`: every run a row (one level asked), else a line per
/// level and a line per change.
pub(crate) fn render(place: &str, histories: &[History], detailed: bool) -> String {
    let mut out = String::new();
    let mut group: Option<(&str, &str, Metric)> = None;
    for h in histories {
        let this = (h.label.as_str(), h.workload.as_str(), h.metric);
        if group != Some(this) {
            if group.is_some() {
                out.push('\n');
            }
            let _ = writeln!(
                out,
                "{} · {} · {} ({})",
                inert(&h.label),
                inert(&h.workload),
                h.metric.label(),
                inert(place)
            );
            group = Some(this);
        }
        if detailed {
            table(&mut out, h);
        } else {
            summary(&mut out, h);
        }
    }
    if !histories.is_empty() {
        let _ = writeln!(
            out,
            "\nA change is a run beyond the noise of the runs since the last change: their intervals, and how much more they scatter than those say, with a {:.0} % chance of any false alarm in a whole history.",
            FALSE_ALARM * 100.0
        );
    }
    out
}

/// One line per level: its runs, the newest value, its changes.
fn summary(out: &mut String, h: &History) {
    let measured = h.runs.iter().filter(|r| r.value.is_some()).count();
    let newest = h
        .runs
        .iter()
        .rev()
        .find_map(|r| r.value)
        .map(|v| value(h.metric, v))
        .unwrap_or_default();
    let changes = match h.steps.len() {
        0 => "no change beyond the noise".to_string(),
        1 => "1 change".to_string(),
        n => format!("{n} changes"),
    };
    let _ = writeln!(
        out,
        "  {:<12} {:>3} runs  newest {:<18} {changes}",
        h.level_text(),
        measured,
        newest
    );
    for s in &h.steps {
        let _ = writeln!(out, "      {}", step_line(h, s));
    }
}

/// Every run a row, the changes marked.
fn table(out: &mut String, h: &History) {
    let first = h.runs.first().map_or("", |r| r.date.as_str());
    let last = h.runs.last().map_or("", |r| r.date.as_str());
    let _ = writeln!(
        out,
        "  at {}: {} runs, {} → {}; {}{}",
        h.level_text(),
        h.runs.len(),
        day(first),
        day(last),
        match h.steps.len() {
            0 => "no change beyond the noise".to_string(),
            1 => "1 change beyond the noise".to_string(),
            n => format!("{n} changes beyond the noise"),
        },
        if h.untested > 0 {
            format!(
                "; {} run{} without an interval shown, not tested",
                h.untested,
                if h.untested == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        }
    );
    let name_w = h
        .runs
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let engine_w = h
        .runs
        .iter()
        .map(|r| r.engine.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        out,
        "    {:<16}  {:<name_w$}  {:<engine_w$}  {:<18}  change",
        "date", "run", "engine", "value"
    );
    for (i, r) in h.runs.iter().enumerate() {
        let step = h.steps.iter().find(|s| s.at == i);
        let mark = match step {
            Some(s) if h.metric.improved_by(s.pct) => "▲ ",
            Some(_) => "▼ ",
            None => "  ",
        };
        let v = r
            .value
            .map(|v| value(h.metric, v))
            .unwrap_or_else(|| "not measured".into());
        let _ = writeln!(
            out,
            "  {mark}{:<16}  {:<name_w$}  {:<engine_w$}  {:<18}  {}",
            minute(&r.date),
            inert(&r.name),
            inert(&r.engine),
            v,
            step.map(change_words).unwrap_or_default()
        );
    }
}

/// `−5.0 % (−6.9 to −3.1) on 2026-11-12 in NAME; engine a → b`.
fn step_line(h: &History, s: &Step) -> String {
    let r = &h.runs[s.at];
    format!(
        "{} {} on {} in {}{}",
        if h.metric.improved_by(s.pct) {
            "▲"
        } else {
            "▼"
        },
        change(s),
        day(&r.date),
        inert(&r.name),
        what_else(s)
    )
}

/// `-5.0 % (-6.9 to -3.1) from 452.7; engine a → b`.
fn change_words(s: &Step) -> String {
    format!("{}{}", change(s), what_else(s))
}

fn change(s: &Step) -> String {
    format!(
        "{:+.1} % ({:+.1} to {:+.1}) from {}",
        s.pct,
        s.interval.0,
        s.interval.1,
        short(s.baseline)
    )
}

fn what_else(s: &Step) -> String {
    if s.what_else.is_empty() {
        String::new()
    } else {
        format!("; {}", inert(&s.what_else.join(", ")))
    }
}

/// A value with its interval as tables print it: `452.6 ±1.7 %`.
fn value(m: Metric, v: Estimated) -> String {
    let unit = if m.is_latency() || matches!(m, Metric::TpotP50) {
        " s"
    } else {
        ""
    };
    match v.half_width_pct() {
        Some(hw) => format!("{}{unit} ±{hw:.1} %", short(v.value)),
        None => format!("{}{unit}", short(v.value)),
    }
}

/// Four significant digits, no exponent for the usual range.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else if a >= 0.001 || a == 0.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// `2026-11-12 02:00` of an RFC 3339 time.
fn minute(date: &str) -> String {
    date.get(..16).unwrap_or(date).replace('T', " ")
}

/// `2026-11-12` of an RFC 3339 time.
fn day(date: &str) -> &str {
    date.get(..10).unwrap_or(date)
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmsweep_shared::bundle::SweepKind;
    use llmsweep_shared::history::HistoryRun;

    fn run(i: usize, v: f64, engine: &str) -> HistoryRun {
        HistoryRun {
            name: format!("kpro5-run-{i:02}.json"),
            date: format!("2026-11-{:02}T02:00:00Z", i + 1),
            complete: true,
            engine: engine.into(),
            gpus: Some(2),
            max_running: Some(16),
            server_args: None,
            host: "ci".into(),
            value: Some(Estimated {
                value: v,
                down: Some(0.017),
                up: Some(0.017),
                df: None,
            }),
            flags: vec![],
        }
    }

    #[test]
    fn a_history_prints_its_change_with_what_else_changed() {
        let runs: Vec<HistoryRun> = (0..12)
            .map(|i| {
                if i < 8 {
                    run(i, 452.0 + (i % 2) as f64, "sglang 0.5.11")
                } else {
                    run(i, 430.0 + (i % 2) as f64, "sglang 0.5.23")
                }
            })
            .collect();
        let h = History::new(
            "kpro5".into(),
            SweepKind::Throughput,
            "throughput 1000×500 tokens, chat".into(),
            Metric::SteadyTokS,
            16,
            runs,
        );
        assert_eq!(h.steps.len(), 1, "{:?}", h.steps);
        let text = render("s3://team/llm", std::slice::from_ref(&h), true);
        assert!(
            text.starts_with(
                "kpro5 · throughput 1000×500 tokens, chat · steady output tok/s (s3://team/llm)\n  at C=16: 12 runs, 2026-11-01 → 2026-11-12; 1 change beyond the noise\n"
            ),
            "{text}"
        );
        let marked: Vec<&str> = text.lines().filter(|l| l.starts_with("  ▼")).collect();
        assert_eq!(marked.len(), 1, "{text}");
        assert!(marked[0].contains("kpro5-run-08.json"), "{text}");
        assert!(
            marked[0].contains("engine sglang 0.5.11 → sglang 0.5.23"),
            "{text}"
        );
        assert!(marked[0].contains("430.0 ±1.7 %"), "{text}");
        let brief = render("results", &[h], false);
        assert!(
            brief.contains("  C=16          12 runs  newest 431.0 ±1.7 %"),
            "{brief}"
        );
        assert!(
            brief.contains(
                "▼ -5.0 % (-6.7 to -3.2) from 452.5 on 2026-11-09 in kpro5-run-08.json; engine"
            ) && brief.contains("on 2026-11-09 in kpro5-run-08.json"),
            "{brief}"
        );
    }
}
