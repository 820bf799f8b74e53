//! The compare view's chart: each run's change against the baseline at every level both
//! measured, drawn as "better by %" so that up is better for every metric (a TTFT that fell by
//! 10 % is drawn at +10), with the change's interval as an error bar, a zero line and the band
//! of ± the threshold inside which a change does not count.
//!
//! The changes are the comparison's own ([`crate::compare::Cell::change`]); nothing is computed
//! again here but the sign.

use super::axis::{AxisKind, format_tokens};
use super::plot::{Band, ErrorBar, LegendEntry, Line, Mark, MarkStyle, Plot, Rgb};
use crate::bundle::SweepKind;
use crate::compare::verdict::change_text;
use crate::compare::{Change, Comparison, SweepComparison, Verdict};
use crate::curves::Metric;

/// Changes (and interval ends) beyond ± this many percent are drawn at the edge and say so.
pub const CLAMP_PCT: f64 = 300.0;

/// The metrics the delta chart of `s` draws: [`delta_metrics`], with a throughput sweep's
/// capacity as the gate judges it: steady tok/s where both runs have it, else the aggregate (an
/// imported run has only that), so the chart shows whatever the gate failed on.
pub fn drawn_metrics(s: &SweepComparison) -> Vec<Metric> {
    let mut metrics = delta_metrics(s.kind).to_vec();
    if s.kind != SweepKind::Throughput {
        return metrics;
    }
    let compared = |m: Metric, level: &crate::compare::Level| {
        level
            .rows
            .iter()
            .find(|r| r.metric == m)
            .is_some_and(|r| r.cells.iter().skip(1).any(|c| c.change.is_some()))
    };
    let steady_somewhere = s.levels.iter().any(|l| compared(Metric::SteadyTokS, l));
    let aggregate_instead = s
        .levels
        .iter()
        .any(|l| !compared(Metric::SteadyTokS, l) && compared(Metric::AggTokS, l));
    if aggregate_instead {
        let at = usize::from(steady_somewhere);
        metrics.insert(at, Metric::AggTokS);
        if !steady_somewhere {
            metrics.retain(|&m| m != Metric::SteadyTokS);
        }
    }
    metrics
}

/// The metrics the delta chart draws, per sweep kind.
pub fn delta_metrics(kind: SweepKind) -> &'static [Metric] {
    match kind {
        SweepKind::Context => &[Metric::TtftP50, Metric::PrefillTokSP50],
        SweepKind::Rate => &[
            Metric::TtftP50,
            Metric::TtftP99,
            Metric::TpotP50,
            Metric::E2eP99,
        ],
        // What the gate judges, so the chart shows whatever it failed on.
        _ => &[
            Metric::SteadyTokS,
            Metric::TtftP50,
            Metric::TtftP99,
            Metric::E2eP99,
        ],
    }
}

/// How a metric's points are marked, so metrics are told apart within one run's color.
const METRIC_MARKS: [MarkStyle; 4] = [
    MarkStyle::Dot,
    MarkStyle::Square,
    MarkStyle::Triangle,
    MarkStyle::Diamond,
];

/// One drawn change.
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaPoint {
    /// Index of the run into the comparison's labels.
    pub run: usize,
    pub metric: Metric,
    /// The level: concurrency or input length.
    pub key: u64,
    /// The comparison's change, as it is.
    pub change: Change,
    pub verdict: Verdict,
    /// The change with the sign that makes higher better.
    pub better_pct: f64,
    /// The interval of `better_pct`, when the change has one.
    pub better_interval: Option<(f64, f64)>,
    /// Drawn at ±[`CLAMP_PCT`] since it lies beyond.
    pub clamped: bool,
    /// The interval's bar is cut at the chart's edge: it reaches much further than the changes
    /// drawn, and letting it set the scale would flatten them.
    pub bar_cut: bool,
}

/// The chart and what it shows, in numbers (for a list beside it, and for tests).
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaChart {
    pub plot: Plot,
    pub points: Vec<DeltaPoint>,
    /// The levels with at least one point, ascending.
    pub levels: Vec<u64>,
    /// Changes left out because they are not finite numbers.
    pub left_out: usize,
}

/// `+8.6` with the sign flipped for a metric where lower is better.
fn better(metric: Metric, pct: f64) -> f64 {
    if metric.improved_by(1.0) { pct } else { -pct }
}

fn clamp(v: f64) -> (f64, bool) {
    let c = v.clamp(-CLAMP_PCT, CLAMP_PCT);
    (c, c != v)
}

/// The delta chart of sweep `s` of `cmp`; `colors` holds each input run's color (by index into
/// `cmp.labels`), `threshold_pct` the smallest change that counts.
pub fn delta_chart(
    cmp: &Comparison,
    s: &SweepComparison,
    colors: &[Rgb],
    threshold_pct: f64,
) -> DeltaChart {
    let metrics = &drawn_metrics(s)[..];
    let candidates: Vec<(usize, usize)> = s.runs.iter().copied().enumerate().skip(1).collect();
    let slots = (candidates.len() * metrics.len()).max(1);
    let mut out = DeltaChart {
        plot: empty_plot(cmp, s),
        points: Vec::new(),
        levels: Vec::new(),
        left_out: 0,
    };
    // (point, bar) index pairs, to cut bars once the scale is known.
    let mut bars: Vec<(usize, usize)> = Vec::new();
    for (ci, &(column, run)) in candidates.iter().enumerate() {
        for (mi, &metric) in metrics.iter().enumerate() {
            let series = Series {
                column,
                run,
                metric,
                color: colors.get(run).copied().unwrap_or(Rgb(0x88, 0x8e, 0x96)),
                style: METRIC_MARKS[mi % METRIC_MARKS.len()],
                dodge: dodge(ci * metrics.len() + mi, slots),
            };
            add_series(&mut out, &mut bars, cmp, s, &series);
        }
    }
    cut_bars(&mut out, &bars, threshold_pct);
    out.levels = out.points.iter().map(|p| p.key).collect();
    out.levels.sort_unstable();
    out.levels.dedup();
    legend(&mut out, cmp, &candidates, colors, metrics, threshold_pct);
    out
}

/// The chart before anything is drawn on it: its title, its axes for the sweep's kind, and
/// what it says when it stays empty.
fn empty_plot(cmp: &Comparison, s: &SweepComparison) -> Plot {
    let kind = s.kind;
    let base = cmp.labels.get(cmp.baseline).map_or("?", String::as_str);
    let (x_kind, x_label) = match kind {
        SweepKind::Context => (AxisKind::Tokens, "input tokens"),
        SweepKind::Rate => (AxisKind::Rate, "offered requests/s"),
        _ => (AxisKind::Concurrency, "concurrency"),
    };
    let mut plot = Plot::new(
        &format!("Change against {base} — {} sweep", s.name()),
        x_kind,
        x_label,
        "better by % (up = better for every metric)",
    );
    plot.empty_note = "No level that both runs measured".into();
    plot
}

/// The x of a level on the chart: its key, but in requests/s for a rate level (whose key is
/// in milli-requests/s).
fn level_x(kind: SweepKind, key: u64) -> f64 {
    if kind == SweepKind::Rate {
        key as f64 / 1000.0
    } else {
        key as f64
    }
}

/// The factor by which series number `slot` of `slots` is moved sideways, so that the error
/// bars of one level do not hide each other: 1 in the middle, at most 2^±0.3 at the ends.
fn dodge(slot: usize, slots: usize) -> f64 {
    let step = (0.6 / slots as f64).min(0.05);
    let from_middle = slot as f64 - (slots as f64 - 1.0) / 2.0;
    2f64.powf(from_middle * step)
}

/// One compared run's changes of one metric over the levels: where to find them and how they
/// are drawn.
#[derive(Debug, Clone, Copy)]
struct Series {
    /// The run's column in the comparison's cells.
    column: usize,
    /// The run's index into the comparison's labels.
    run: usize,
    metric: Metric,
    color: Rgb,
    style: MarkStyle,
    dodge: f64,
}

/// Draws `series` on `out`: a mark per level with a finite change, an error bar where the
/// change has an interval (its indices added to `bars`), and a line through the marks.
fn add_series(
    out: &mut DeltaChart,
    bars: &mut Vec<(usize, usize)>,
    cmp: &Comparison,
    s: &SweepComparison,
    series: &Series,
) {
    let &Series {
        column,
        run,
        metric,
        color,
        style,
        dodge,
    } = series;
    let mut line = Vec::new();
    for level in &s.levels {
        let Some(cell) = level
            .rows
            .iter()
            .find(|r| r.metric == metric)
            .and_then(|r| r.cells.get(column))
        else {
            continue;
        };
        let Some(change) = cell.change else { continue };
        let Some(point) = delta_point(run, metric, level.key, change, cell.verdict) else {
            out.left_out += 1;
            continue;
        };
        let (x, y) = (
            level_x(s.kind, level.key) * dodge,
            clamp(point.better_pct).0,
        );
        if let Some((lo, hi)) = point.better_interval {
            bars.push((out.points.len(), out.plot.bars.len()));
            out.plot.bars.push(ErrorBar { x, lo, hi, color });
        }
        out.plot.marks.push(Mark {
            x,
            y,
            color,
            style,
            tag: None,
            hover: point.text(&cmp.labels, s.kind),
            source: None,
        });
        line.push((x, y));
        out.points.push(point);
    }
    out.plot.lines.push(Line {
        color,
        dashed: !metric.improved_by(1.0),
        points: line,
    });
}

/// Run `run`'s `change` of `metric` at level `key` as the chart draws it: with the sign that
/// makes higher better, clamped at ±[`CLAMP_PCT`], its interval only when both ends are
/// finite. `None` when the change is not a finite number (left out, and counted).
fn delta_point(
    run: usize,
    metric: Metric,
    key: u64,
    change: Change,
    verdict: Verdict,
) -> Option<DeltaPoint> {
    let p = better(metric, change.pct);
    if !p.is_finite() {
        return None;
    }
    let interval = change
        .interval
        .map(|(lo, hi)| (better(metric, lo), better(metric, hi)))
        .map(|(a, b)| (a.min(b), a.max(b)))
        .filter(|(a, b)| a.is_finite() && b.is_finite());
    Some(DeltaPoint {
        run,
        metric,
        key,
        change,
        verdict,
        better_pct: p,
        better_interval: interval,
        clamped: clamp(p).1,
        bar_cut: false,
    })
}

/// The scale is set by the changes and the threshold band, with a quarter of their span to
/// spare; a bar reaching past that is cut at it.
fn cut_bars(out: &mut DeltaChart, bars: &[(usize, usize)], threshold_pct: f64) {
    let ys = out.plot.marks.iter().map(|m| m.y);
    let lo = ys.clone().fold(-threshold_pct, f64::min);
    let hi = ys.fold(threshold_pct, f64::max);
    let pad = (hi - lo) * 0.25;
    let (lo, hi) = (lo - pad, hi + pad);
    for &(p, b) in bars {
        let bar = &mut out.plot.bars[b];
        let cut = (bar.lo.max(lo), bar.hi.min(hi));
        if cut != (bar.lo, bar.hi) {
            (bar.lo, bar.hi) = cut;
            out.points[p].bar_cut = true;
        }
    }
}

fn legend(
    out: &mut DeltaChart,
    cmp: &Comparison,
    candidates: &[(usize, usize)],
    colors: &[Rgb],
    metrics: &[Metric],
    threshold_pct: f64,
) {
    const NEUTRAL: Rgb = Rgb(0x88, 0x8e, 0x96);
    let plot = &mut out.plot;
    if plot.marks.is_empty() {
        return;
    }
    for &(_, run) in candidates {
        plot.legend.push(LegendEntry {
            text: cmp.labels.get(run).cloned().unwrap_or_default(),
            color: colors.get(run).copied().unwrap_or(NEUTRAL),
            dashed: false,
            mark: None,
        });
    }
    for (mi, &m) in metrics.iter().enumerate() {
        let flipped = if m.improved_by(1.0) { "" } else { " (−1 ×)" };
        plot.legend.push(LegendEntry {
            text: format!("{}{flipped}", short_label(m)),
            color: NEUTRAL,
            dashed: false,
            mark: Some(METRIC_MARKS[mi % METRIC_MARKS.len()]),
        });
    }
    let cut = out.points.iter().any(|p| p.bar_cut);
    plot.legend.push(LegendEntry {
        text: if cut {
            "bar: 95 % interval (cut at the edge)".into()
        } else {
            "bar: 95 % interval".into()
        },
        color: NEUTRAL,
        dashed: false,
        mark: Some(MarkStyle::Bar),
    });
    plot.legend.push(LegendEntry {
        text: format!("shaded: within ±{threshold_pct} %, no change"),
        color: NEUTRAL,
        dashed: false,
        mark: Some(MarkStyle::Band),
    });
    if out.points.iter().any(|p| p.clamped) {
        plot.legend.push(LegendEntry {
            text: format!("beyond ±{CLAMP_PCT:.0} %: drawn at the edge"),
            color: NEUTRAL,
            dashed: false,
            mark: None,
        });
    }
    if out.left_out > 0 {
        plot.legend.push(LegendEntry {
            text: format!("{} not-a-number changes left out", out.left_out),
            color: NEUTRAL,
            dashed: false,
            mark: None,
        });
    }
    plot.band = Some(Band {
        lo: -threshold_pct,
        hi: threshold_pct,
        line: Some(0.0),
        text: String::new(),
    });
}

/// The metric's name, short enough for a legend.
fn short_label(m: Metric) -> &'static str {
    match m {
        Metric::SteadyTokS => "steady tok/s",
        Metric::DecodeTokSP50 => "decode tok/s p50",
        Metric::TtftP50 => "TTFT p50",
        Metric::TtftP99 => "TTFT p99",
        Metric::E2eP99 => "e2e p99",
        Metric::PrefillTokSP50 => "prefill tok/s p50",
        other => other.label(),
    }
}

impl DeltaPoint {
    /// One line per fact: `kpro6 · C=8`, the metric's change as the tables write it, and the
    /// drawn "better by" value with its interval.
    pub fn text(&self, labels: &[String], kind: SweepKind) -> String {
        let level = match kind {
            SweepKind::Context => format!("{} input tokens", format_tokens(self.key as f64)),
            _ => crate::compare::verdict::level_text(kind, self.key),
        };
        let word = match self.verdict {
            Verdict::Better => " (better)",
            Verdict::Worse => " (worse)",
            _ => " (no significant change)",
        };
        let mut s = format!(
            "{} · {level}\n{}: {}{word}\nbetter by {:+.1} %",
            labels.get(self.run).map_or("?", String::as_str),
            self.metric.label(),
            change_text(&self.change),
            self.better_pct
        );
        match (self.better_interval, self.change.no_interval) {
            (Some((lo, hi)), _) => s.push_str(&format!(" (interval {lo:+.1} to {hi:+.1})")),
            (None, Some(why)) => s.push_str(&format!(" (no interval: {why})")),
            (None, None) => {}
        }
        if self.clamped {
            s.push_str(&format!("\ndrawn at the ±{CLAMP_PCT:.0} % edge"));
        } else if self.bar_cut {
            s.push_str("\nthe interval's bar is cut at the chart's edge");
        }
        s
    }

    /// The text in one line, for a list beside the chart.
    pub fn line(&self, labels: &[String], kind: SweepKind) -> String {
        self.text(labels, kind).replace('\n', " · ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{RunInput, compare};
    use crate::curves::tests::bundle;

    fn scaled(label: &str, steady: f64, ttft: f64) -> crate::Bundle {
        let mut b = bundle(label);
        for p in &mut b.sweeps[0].points {
            let s = p.summary.as_mut().unwrap();
            s.steady_tok_s = s.steady_tok_s.map(|v| v * steady);
            s.ttft_s.as_mut().unwrap().p50 *= ttft;
        }
        b
    }

    fn chart(bs: &[crate::Bundle]) -> (Comparison, DeltaChart) {
        let inputs: Vec<RunInput> = bs
            .iter()
            .map(|b| RunInput {
                label: &b.label,
                bundle: b,
            })
            .collect();
        let cmp = compare(&inputs, 0);
        let colors: Vec<Rgb> = (0..bs.len()).map(super::super::run_color).collect();
        let d = delta_chart(&cmp, &cmp.sweeps[0], &colors, 1.0);
        (cmp, d)
    }

    /// Against a baseline with only the aggregate rate (an imported run), the gate judges the
    /// aggregate, so the chart draws it instead of steady tok/s.
    #[test]
    fn the_capacity_drawn_is_the_one_the_gate_judges() {
        let mut base = bundle("kpro6");
        for p in &mut base.sweeps[0].points {
            p.summary.as_mut().unwrap().steady_tok_s = None;
        }
        let mut b = bundle("kpro5");
        for p in &mut b.sweeps[0].points {
            p.summary.as_mut().unwrap().agg_tok_s *= 0.9;
        }
        let (cmp, d) = chart(&[base, b]);
        let metrics = drawn_metrics(&cmp.sweeps[0]);
        assert_eq!(
            metrics,
            [
                Metric::AggTokS,
                Metric::TtftP50,
                Metric::TtftP99,
                Metric::E2eP99
            ]
        );
        assert!(
            d.points
                .iter()
                .any(|p| p.metric == Metric::AggTokS && (p.better_pct + 10.0).abs() < 1e-9),
            "{:?}",
            d.points
        );
        // Both runs measured: steady tok/s, as before.
        let (cmp, _) = chart(&[bundle("kpro6"), bundle("kpro5")]);
        assert_eq!(drawn_metrics(&cmp.sweeps[0])[0], Metric::SteadyTokS);
        assert!(!drawn_metrics(&cmp.sweeps[0]).contains(&Metric::AggTokS));
    }

    #[test]
    fn higher_is_better_for_every_metric_and_only_common_levels_are_drawn() {
        // kpro6: steady × 1.5 (+50 %, better), TTFT p50 × 0.8 (−20 %: better by +20).
        let mut b = scaled("kpro6", 1.5, 0.8);
        b.sweeps[0].points.remove(2);
        b.sweeps[0].concurrency = vec![1, 2];
        let (_, d) = chart(&[bundle("kpro5"), b]);
        assert_eq!(d.levels, [1, 2], "C=4 is only in the baseline");
        let at = |m: Metric, key: u64| {
            d.points
                .iter()
                .find(|p| p.metric == m && p.key == key)
                .map(|p| (p.change.pct, p.better_pct))
        };
        let (pct, up) = at(Metric::SteadyTokS, 2).unwrap();
        assert!((pct - 50.0).abs() < 1e-9 && (up - 50.0).abs() < 1e-9);
        let (pct, up) = at(Metric::TtftP50, 1).unwrap();
        assert!((pct + 20.0).abs() < 1e-9 && (up - 20.0).abs() < 1e-9);
        let (pct, up) = at(Metric::TtftP99, 1).unwrap();
        assert_eq!((pct, up), (0.0, -0.0));
        // Four metrics at two levels; a line per metric; the fixture has no interval.
        assert_eq!(d.points.len(), 8);
        assert_eq!(d.plot.marks.len(), 8);
        assert_eq!(d.plot.lines.len(), 4);
        assert!(d.plot.bars.is_empty());
        assert_eq!(d.plot.lines.iter().filter(|l| l.dashed).count(), 3);
        let band = d.plot.band.as_ref().unwrap();
        assert_eq!((band.lo, band.hi, band.line), (-1.0, 1.0, Some(0.0)));
        let legend: Vec<&str> = d.plot.legend.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(
            legend,
            [
                "kpro6",
                "steady tok/s",
                "TTFT p50 (−1 ×)",
                "TTFT p99 (−1 ×)",
                "e2e p99 (−1 ×)",
                "bar: 95 % interval",
                "shaded: within ±1 %, no change"
            ]
        );
        let hover = &d.plot.marks[0].hover;
        assert!(
            hover.starts_with("kpro6 · C=1\nsteady output tok/s: +50.0 %"),
            "{hover}"
        );
        assert!(hover.contains("better by +50.0 % (no interval: too few requests"));
    }

    #[test]
    fn intervals_become_error_bars_with_the_sign_flipped_for_ttft() {
        let (mut cmp, _) = chart(&[bundle("a"), scaled("b", 1.0, 0.5)]);
        for level in &mut cmp.sweeps[0].levels {
            for row in &mut level.rows {
                if let Some(c) = row.cells[1].change.as_mut() {
                    c.interval = Some((c.pct - 5.0, c.pct + 10.0));
                }
            }
        }
        let colors = [super::super::run_color(0), super::super::run_color(1)];
        let d = delta_chart(&cmp, &cmp.sweeps[0], &colors, 2.0);
        let p = d
            .points
            .iter()
            .find(|p| p.metric == Metric::TtftP50 && p.key == 4)
            .unwrap();
        // −50 % ± (−5, +10) → better by +50, interval +40 to +55.
        assert_eq!(p.better_pct, 50.0);
        assert_eq!(p.better_interval, Some((40.0, 55.0)));
        assert_eq!(d.plot.bars.len(), d.points.len());
        let bar = &d.plot.bars[d.points.iter().position(|q| q == p).unwrap()];
        assert_eq!((bar.lo, bar.hi, bar.color), (40.0, 55.0, colors[1]));
        assert_eq!(d.plot.band.as_ref().unwrap().hi, 2.0);
    }

    #[test]
    fn huge_and_not_a_number_changes_neither_hang_nor_blank_the_chart() {
        let (mut cmp, _) = chart(&[bundle("a"), bundle("b")]);
        let cells = &mut cmp.sweeps[0].levels[0].rows[0].cells[1];
        cells.change = Some(Change {
            pct: 1e12,
            interval: Some((-1.0, f64::INFINITY)),
            no_interval: None,
            below_resolution: false,
            df: None,
        });
        let cells = &mut cmp.sweeps[0].levels[1].rows[0].cells[1];
        cells.change = Some(Change {
            pct: f64::NAN,
            interval: None,
            no_interval: None,
            below_resolution: false,
            df: None,
        });
        let d = delta_chart(&cmp, &cmp.sweeps[0], &[], 1.0);
        assert_eq!(d.left_out, 1);
        let huge = &d.points[0];
        assert!(huge.clamped);
        assert_eq!(d.plot.marks[0].y, CLAMP_PCT);
        assert_eq!(huge.better_interval, None, "an infinite end is no interval");
        assert!(d.plot.bars.is_empty());
        let legend: Vec<&str> = d.plot.legend.iter().map(|e| e.text.as_str()).collect();
        assert!(
            legend.contains(&"beyond ±300 %: drawn at the edge"),
            "{legend:?}"
        );
        assert!(legend.contains(&"1 not-a-number changes left out"));
        let ((_, _), (y0, y1)) = d.plot.bounds().unwrap();
        assert!(y0 >= -CLAMP_PCT && y1 <= CLAMP_PCT);
        let doc = super::super::svg(&d.plot, &super::super::Theme::LIGHT, (800, 400)).unwrap();
        assert!(doc.contains("Change against a"));
    }

    #[test]
    fn a_very_wide_interval_is_cut_at_the_edge_and_does_not_set_the_scale() {
        let (mut cmp, _) = chart(&[bundle("a"), scaled("b", 1.2, 1.0)]);
        // Steady +20 % everywhere; at C=4 its interval is −290 … +330.
        let at_4 = &mut cmp.sweeps[0].levels[2].rows[0].cells[1];
        at_4.change.as_mut().unwrap().interval = Some((-290.0, 330.0));
        let d = delta_chart(&cmp, &cmp.sweeps[0], &[], 1.0);
        let p = d
            .points
            .iter()
            .find(|p| p.key == 4 && p.metric == Metric::SteadyTokS);
        let p = p.unwrap();
        assert!(p.bar_cut && !p.clamped);
        assert_eq!(
            p.better_interval,
            Some((-290.0, 330.0)),
            "the hover keeps it whole"
        );
        // Changes from −1 (the band) to +20: the scale reaches a quarter further, −6.25 … +25.25.
        let bar = &d.plot.bars[0];
        assert!(
            (bar.lo + 6.25).abs() < 1e-9 && (bar.hi - 25.25).abs() < 1e-9,
            "{bar:?}"
        );
        assert!(
            p.text(&cmp.labels, SweepKind::Throughput)
                .ends_with("cut at the chart's edge")
        );
        assert!(
            d.plot
                .legend
                .iter()
                .any(|e| e.text == "bar: 95 % interval (cut at the edge)")
        );
    }

    #[test]
    fn a_point_is_better_by_with_its_interval_flipped_clamped_or_left_out() {
        let change = |pct, interval| Change {
            pct,
            interval,
            no_interval: None,
            below_resolution: false,
            df: None,
        };
        // TTFT −50 % (−55 … −40): better by +50, interval +40 … +55.
        let p = delta_point(
            1,
            Metric::TtftP50,
            4,
            change(-50.0, Some((-55.0, -40.0))),
            Verdict::Better,
        )
        .unwrap();
        assert_eq!(
            (p.better_pct, p.better_interval),
            (50.0, Some((40.0, 55.0)))
        );
        assert!(!p.clamped && !p.bar_cut);
        // Beyond the edge: clamped when drawn, kept whole; an infinite end is no interval.
        let p = delta_point(
            1,
            Metric::SteadyTokS,
            4,
            change(1e12, Some((-1.0, f64::INFINITY))),
            Verdict::Better,
        )
        .unwrap();
        assert_eq!(
            (p.better_pct, p.better_interval, p.clamped),
            (1e12, None, true)
        );
        assert_eq!(
            delta_point(
                1,
                Metric::SteadyTokS,
                4,
                change(f64::NAN, None),
                Verdict::None
            ),
            None
        );
    }

    #[test]
    fn series_are_dodged_around_the_level_and_rates_drawn_in_requests_per_second() {
        assert_eq!(dodge(0, 1), 1.0);
        assert_eq!(dodge(1, 3), 1.0);
        // Two series: half a slot either side, 0.05 of an octave a slot.
        assert_eq!(dodge(0, 2), 2f64.powf(-0.025));
        // Twenty: the step narrows to 0.6 / 20 so the ends stay within 0.3 of an octave.
        assert_eq!(dodge(19, 20), 2f64.powf(9.5 * 0.03));
        assert_eq!(level_x(SweepKind::Rate, 2500), 2.5);
        assert_eq!(level_x(SweepKind::Throughput, 8), 8.0);
    }

    #[test]
    fn context_sweeps_draw_ttft_and_prefill_by_input_length() {
        let (cmp, _) = chart(&[bundle("a"), bundle("b")]);
        let ctx = cmp
            .sweeps
            .iter()
            .find(|s| s.kind == SweepKind::Context)
            .unwrap();
        let d = delta_chart(&cmp, ctx, &[], 1.0);
        assert_eq!(d.plot.x_kind, AxisKind::Tokens);
        let metrics: Vec<Metric> = d.points.iter().map(|p| p.metric).collect();
        assert!(metrics.contains(&Metric::TtftP50) && metrics.contains(&Metric::PrefillTokSP50));
        assert!(d.points.iter().all(|p| p.better_pct == 0.0));
        // The skipped 8000-token point has no change: not drawn.
        assert!(!d.levels.contains(&8000), "{:?}", d.levels);
    }
}
