//! The History chart: one metric at one level across a label's runs, oldest first, each run a
//! point with its 95 % interval, the runs where it changed beyond the noise marked and ruled.

use super::axis::AxisKind;
use super::plot::{ErrorBar, LegendEntry, Line, Mark, MarkStyle, Plot, Rgb, Rule};
use crate::history::History;

/// The chart of `h`, drawn in `color`; x is the run's place in the history (1 = oldest).
pub fn history_plot(h: &History, color: Rgb) -> Plot {
    let title = format!("{} · {} at {}", h.label, h.metric.label(), h.level_text());
    let mut plot = Plot::new(
        &title,
        AxisKind::Linear,
        "run (oldest first)",
        h.metric.label(),
    );
    plot.empty_note = "no run measured this level".into();
    let mut line = Line {
        color,
        dashed: false,
        points: Vec::new(),
    };
    for (i, r) in h.runs.iter().enumerate() {
        let Some(v) = r.value else { continue };
        let x = (i + 1) as f64;
        let y = h.metric.display(v.value);
        line.points.push((x, y));
        if let (Some(d), Some(u)) = (v.down, v.up) {
            bars_push(&mut plot.bars, x, y * (-d).exp(), y * u.exp(), color);
        }
        let step = h.steps.iter().find(|s| s.at == i);
        let mut hover = format!(
            "{}\n{}\n{}\n{}",
            r.name,
            r.date,
            r.engine,
            match v.half_width_pct() {
                Some(hw) => format!("{:.4} ±{hw:.1} %", y),
                None => format!("{y:.4} (no interval)"),
            }
        );
        if let Some(s) = step {
            hover.push_str(&format!(
                "\nchanged {:+.1} % ({:+.1} to {:+.1}) beyond the noise",
                s.pct, s.interval.0, s.interval.1
            ));
            for w in &s.what_else {
                hover.push_str(&format!("\n{w}"));
            }
        }
        plot.marks.push(Mark {
            x,
            y,
            color,
            style: match step {
                Some(s) if h.metric.improved_by(s.pct) => MarkStyle::Triangle,
                Some(_) => MarkStyle::Diamond,
                None => MarkStyle::Dot,
            },
            tag: None,
            hover,
            source: None,
        });
    }
    for s in &h.steps {
        let mut text = format!("{:+.1} %", s.pct);
        if let Some(w) = s.what_else.first() {
            text.push_str(&format!(" · {w}"));
        }
        plot.rules.push(Rule {
            x: s.at as f64 + 0.5,
            text,
        });
    }
    if !line.points.is_empty() {
        plot.lines.push(line);
        plot.legend.push(LegendEntry {
            text: format!("{} ({} runs)", h.label, h.runs.len()),
            color,
            dashed: false,
            mark: None,
        });
        plot.legend.push(LegendEntry {
            text: "95 % interval".into(),
            color,
            dashed: false,
            mark: Some(MarkStyle::Bar),
        });
        if !h.steps.is_empty() {
            plot.legend.push(LegendEntry {
                text: "changed beyond the noise".into(),
                color,
                dashed: false,
                mark: Some(MarkStyle::Diamond),
            });
        }
    }
    plot
}

fn bars_push(bars: &mut Vec<ErrorBar>, x: f64, lo: f64, hi: f64, color: Rgb) {
    if lo.is_finite() && hi.is_finite() && lo <= hi {
        bars.push(ErrorBar { x, lo, hi, color });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::SweepKind;
    use crate::curves::Metric;
    use crate::history::{Estimated, HistoryRun};

    #[test]
    fn a_change_is_marked_and_ruled_between_its_runs() {
        let runs: Vec<HistoryRun> = (0..10)
            .map(|i| HistoryRun {
                name: format!("r{i}.json"),
                date: format!("2026-11-{:02}T00:00:00Z", i + 1),
                complete: true,
                engine: if i < 6 {
                    "sglang 0.5.11"
                } else {
                    "sglang 0.5.23"
                }
                .into(),
                gpus: Some(2),
                max_running: Some(16),
                server_args: None,
                host: "h".into(),
                value: Some(Estimated {
                    value: if i < 6 { 100.0 } else { 90.0 } + (i % 2) as f64 * 0.2,
                    down: Some(0.01),
                    up: Some(0.01),
                    df: None,
                }),
                flags: vec![],
            })
            .collect();
        let h = History::new(
            "kpro5".into(),
            SweepKind::Throughput,
            "w".into(),
            Metric::SteadyTokS,
            16,
            runs,
        );
        let p = history_plot(&h, Rgb(1, 2, 3));
        assert_eq!(p.marks.len(), 10);
        assert_eq!(p.bars.len(), 10);
        assert_eq!(p.rules.len(), 1);
        assert_eq!(p.rules[0].x, 6.5);
        assert!(
            p.rules[0]
                .text
                .starts_with("-10.1 % · engine sglang 0.5.11 → sglang 0.5.23"),
            "{}",
            p.rules[0].text
        );
        assert_eq!(p.marks[6].style, MarkStyle::Diamond);
        assert!(p.marks[6].hover.contains("beyond the noise"));
        assert_eq!(p.title, "kpro5 · steady output tok/s at C=16");
    }
}
