//! Runs → [`Plot`]: which series each chart overlays, how points are marked, what hovering says.

use super::axis::{AxisKind, format_exact, format_tokens};
use super::plot::{LegendEntry, Line, Mark, MarkStyle, Plot, PointRef, Rgb, Rule};
use crate::bundle::{Bundle, PointStatus};
use crate::curves::{
    Metric, Origin, Series, SeriesPoint, context_series, fit_curve, throughput_series, tradeoff,
};

/// A run as a chart sees it.
#[derive(Debug, Clone, Copy)]
pub struct ChartRun<'a> {
    pub label: &'a str,
    pub color: Rgb,
    pub bundle: &'a Bundle,
}

/// The charts of the throughput and context views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChartKind {
    /// Steady and aggregate output tok/s vs concurrency.
    OutputTokS,
    /// Per-request decode tok/s vs concurrency.
    DecodeVsConcurrency,
    /// TTFT p50 and p99 vs concurrency.
    TtftVsConcurrency,
    /// Tok/s per user vs total tok/s, points labelled with concurrency.
    Tradeoff,
    /// Speculative decoding's acceptance length vs concurrency (empty without it).
    Acceptance,
    /// TTFT vs input length with the prefill fit.
    TtftVsLength,
    PrefillVsLength,
    DecodeVsLength,
    /// Rate sweeps: TTFT p50 and p99 vs the achieved request rate.
    RateTtft,
    /// Rate sweeps: TPOT p50 vs the achieved request rate.
    RateTpot,
    /// Rate sweeps: e2e p50 and p99 vs the achieved request rate.
    RateE2e,
    /// Rate sweeps with an SLO: good requests/s, beside achieved requests/s, vs the offered rate.
    RateGoodput,
    /// Rate sweeps: the client's schedule lag p99 vs the offered rate (the proof it kept up).
    RateLag,
}

impl ChartKind {
    pub const THROUGHPUT: [ChartKind; 5] = [
        ChartKind::OutputTokS,
        ChartKind::DecodeVsConcurrency,
        ChartKind::TtftVsConcurrency,
        ChartKind::Tradeoff,
        ChartKind::Acceptance,
    ];
    pub const CONTEXT: [ChartKind; 3] = [
        ChartKind::TtftVsLength,
        ChartKind::PrefillVsLength,
        ChartKind::DecodeVsLength,
    ];
    pub const RATE: [ChartKind; 5] = [
        ChartKind::RateTtft,
        ChartKind::RateTpot,
        ChartKind::RateE2e,
        ChartKind::RateGoodput,
        ChartKind::RateLag,
    ];

    /// The sweep the chart's points come from.
    pub fn sweep(self) -> crate::bundle::SweepKind {
        use crate::bundle::SweepKind;
        if ChartKind::CONTEXT.contains(&self) {
            SweepKind::Context
        } else if ChartKind::RATE.contains(&self) {
            SweepKind::Rate
        } else {
            SweepKind::Throughput
        }
    }

    /// A file-name friendly name, e.g. for exports.
    pub fn slug(self) -> &'static str {
        match self {
            ChartKind::OutputTokS => "output-tok-s",
            ChartKind::DecodeVsConcurrency => "decode-vs-concurrency",
            ChartKind::TtftVsConcurrency => "ttft-vs-concurrency",
            ChartKind::Tradeoff => "per-user-vs-total",
            ChartKind::Acceptance => "acceptance-vs-concurrency",
            ChartKind::TtftVsLength => "ttft-vs-length",
            ChartKind::PrefillVsLength => "prefill-vs-length",
            ChartKind::DecodeVsLength => "decode-vs-length",
            ChartKind::RateTtft => "ttft-vs-rate",
            ChartKind::RateTpot => "tpot-vs-rate",
            ChartKind::RateE2e => "e2e-vs-rate",
            ChartKind::RateGoodput => "goodput-vs-rate",
            ChartKind::RateLag => "lag-vs-rate",
        }
    }
}

/// Legend samples that explain line styles and marks, in a color that reads on any theme.
const NEUTRAL: Rgb = Rgb(0x88, 0x8e, 0x96);

/// Requests drawn at most in the per-request view; more are sampled evenly.
pub const MAX_REQUEST_MARKS: usize = 5000;

/// The plot of `kind` over `runs`, overlaid in their colors.
pub fn build(kind: ChartKind, runs: &[ChartRun]) -> Plot {
    // Labels as drawn: a label is a file's text, and may be any length.
    let labels: Vec<std::borrow::Cow<str>> = runs
        .iter()
        .map(|r| crate::shorten::label(r.label))
        .collect();
    let shown: Vec<ChartRun> = runs
        .iter()
        .zip(&labels)
        .map(|(r, l)| ChartRun {
            label: l.as_ref(),
            ..*r
        })
        .collect();
    build_shown(kind, &shown)
}

fn build_shown(kind: ChartKind, runs: &[ChartRun]) -> Plot {
    match kind {
        ChartKind::OutputTokS => by_concurrency(
            kind,
            runs,
            &[
                (Metric::SteadyTokS, "steady"),
                (Metric::AggTokS, "aggregate"),
            ],
        ),
        ChartKind::DecodeVsConcurrency => {
            by_concurrency(kind, runs, &[(Metric::DecodeTokSP50, "")])
        }
        ChartKind::TtftVsConcurrency => by_concurrency(
            kind,
            runs,
            &[(Metric::TtftP50, "p50"), (Metric::TtftP99, "p99")],
        ),
        ChartKind::Tradeoff => tradeoff_plot(runs),
        ChartKind::Acceptance => by_concurrency(kind, runs, &[(Metric::AcceptLength, "")]),
        ChartKind::TtftVsLength => by_length(kind, runs, Metric::TtftP50),
        ChartKind::PrefillVsLength => by_length(kind, runs, Metric::PrefillTokSP50),
        ChartKind::DecodeVsLength => by_length(kind, runs, Metric::DecodeTokSP50),
        ChartKind::RateTtft
        | ChartKind::RateTpot
        | ChartKind::RateE2e
        | ChartKind::RateGoodput
        | ChartKind::RateLag => by_rate(kind, runs),
    }
}

/// A rate sweep's chart: latency against the rate the client achieved (what the server was
/// actually given), goodput and lag against the rate offered (what was asked).
fn by_rate(kind: ChartKind, runs: &[ChartRun]) -> Plot {
    let (title, y, x, metrics): (&str, &str, RateAxis, &[(Metric, &str)]) = match kind {
        ChartKind::RateTtft => (
            "Time to first token vs request rate",
            "TTFT (s)",
            RateAxis::Achieved,
            &[(Metric::TtftP50, "p50"), (Metric::TtftP99, "p99")],
        ),
        ChartKind::RateTpot => (
            "Time per output token vs request rate",
            "TPOT p50 (s)",
            RateAxis::Achieved,
            &[(Metric::TpotP50, "")],
        ),
        ChartKind::RateE2e => (
            "End-to-end latency vs request rate",
            "e2e (s)",
            RateAxis::Achieved,
            &[(Metric::E2eP50, "p50"), (Metric::E2eP99, "p99")],
        ),
        ChartKind::RateGoodput => (
            "Goodput vs offered rate",
            "requests/s",
            RateAxis::Offered,
            &[
                (Metric::GoodRps, "good (met the SLO)"),
                (Metric::AchievedRps, "achieved"),
            ],
        ),
        _ => (
            "Client schedule lag vs offered rate",
            "schedule lag p99 (s)",
            RateAxis::Offered,
            &[(Metric::LagP99, "")],
        ),
    };
    // An imported run may not record its achieved rate (vLLM counts it another way): then
    // every run is drawn against the offered rate, so that the runs share one axis.
    let unrecorded = runs.iter().any(|r| achieved_unrecorded(r.bundle));
    let x = if unrecorded { RateAxis::Offered } else { x };
    let x_label = match x {
        RateAxis::Achieved => "achieved requests/s",
        RateAxis::Offered
            if unrecorded && kind != ChartKind::RateGoodput && kind != ChartKind::RateLag =>
        {
            "offered requests/s (a run shown does not record its achieved rate)"
        }
        RateAxis::Offered => "offered requests/s",
    };
    let mut plot = Plot::new(title, AxisKind::Rate, x_label, y);
    plot.empty_note = if kind == ChartKind::RateGoodput {
        "No rate sweep with goodput (--goodput) in the runs shown".into()
    } else {
        "No rate sweep in the runs shown".into()
    };
    for (ri, run) in runs.iter().enumerate() {
        for (mi, &(metric, _)) in metrics.iter().enumerate() {
            // The achieved rate only beside a goodput: alone it would be a chart of nothing.
            if kind == ChartKind::RateGoodput
                && metric == Metric::AchievedRps
                && rate_series(run.bundle, Metric::GoodRps, x)
                    .points
                    .is_empty()
            {
                continue;
            }
            let series = rate_series(run.bundle, metric, x);
            add_series(&mut plot, run, ri, &series, mi > 0, |p| {
                rate_at(run.bundle, p)
            });
        }
    }
    run_legend(&mut plot, runs);
    if metrics.len() > 1 {
        for (mi, &(_, name)) in metrics.iter().enumerate() {
            plot.legend.push(style_entry(name, mi > 0, None));
        }
    }
    flag_legend(&mut plot);
    if kind == ChartKind::RateGoodput {
        plot.rules = search_rules(runs);
    }
    plot
}

/// A rule at the rate each `--find-max-rate` search found, named by its run when several are
/// shown.
fn search_rules(runs: &[ChartRun]) -> Vec<Rule> {
    let found: Vec<(f64, &str)> = runs
        .iter()
        .filter_map(|r| {
            let s = r
                .bundle
                .sweeps
                .iter()
                .find(|s| s.kind == crate::bundle::SweepKind::Rate)?;
            Some((s.rate.as_ref()?.search?.found_rps?, r.label))
        })
        .collect();
    let several = found.len() > 1;
    found
        .into_iter()
        .map(|(x, label)| Rule {
            x,
            text: if several {
                format!("max rate meeting the SLO {} ({label})", format_exact(x))
            } else {
                format!("max rate meeting the SLO {}", format_exact(x))
            },
        })
        .collect()
}

/// Whether a measured point of the bundle's rate sweep lacks the achieved rate.
fn achieved_unrecorded(bundle: &Bundle) -> bool {
    bundle
        .sweeps
        .iter()
        .filter(|s| s.kind == crate::bundle::SweepKind::Rate)
        .flat_map(|s| &s.points)
        .filter(|p| p.status == PointStatus::Ok)
        .any(|p| p.rate.is_some_and(|r| r.achieved_rps.is_none()))
}

/// Which rate a rate chart's x axis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RateAxis {
    /// What the client sent (latency charts: the load the server was actually given).
    Achieved,
    /// What the schedule asked (goodput and lag: the level as the sweep names it).
    Offered,
}

/// `metric` over the bundle's rate sweep, against the achieved or offered rate; points without
/// a rate record, or not measured, are left out.
fn rate_series(bundle: &Bundle, metric: Metric, x: RateAxis) -> Series {
    let mut points = Vec::new();
    if let Some((si, sweep)) = bundle
        .sweeps
        .iter()
        .enumerate()
        .find(|(_, s)| s.kind == crate::bundle::SweepKind::Rate)
    {
        for (pi, p) in sweep.points.iter().enumerate() {
            let (Some(r), Some(y), PointStatus::Ok) = (p.rate, metric.of(p), p.status) else {
                continue;
            };
            let xv = match x {
                RateAxis::Achieved => r.achieved_rps,
                RateAxis::Offered => Some(r.offered_rps),
            };
            let Some(xv) = xv.filter(|v| v.is_finite() && *v > 0.0) else {
                continue;
            };
            points.push(SeriesPoint {
                x: xv,
                y: metric.display(y),
                concurrency: p.concurrency,
                input_len: p.input_len,
                origin: Origin::Measured,
                flags: p.flags.clone(),
                point_index: pi,
                sweep_index: si,
            });
        }
    }
    points.sort_by(|a, b| a.x.total_cmp(&b.x));
    Series { metric, points }
}

/// `8 req/s offered, 7.9 achieved`, for a rate point's hover.
fn rate_at(bundle: &Bundle, p: &SeriesPoint) -> String {
    let point = bundle
        .sweeps
        .get(p.sweep_index)
        .and_then(|s| s.points.get(p.point_index));
    match point.and_then(|q| q.rate) {
        Some(r) => {
            let mut s = format!("{} req/s offered", format_exact(r.offered_rps));
            if let Some(a) = r.achieved_rps {
                s.push_str(&format!(", {} achieved", format_exact(a)));
            }
            if let Some(g) = point.and_then(|q| q.goodput) {
                s.push_str(&format!(
                    "
goodput {} of {} ({} %)",
                    g.good,
                    g.requests,
                    super::axis::fixed(g.fraction * 100.0, 1)
                ));
            }
            s
        }
        None => "rate point".into(),
    }
}

fn by_concurrency(kind: ChartKind, runs: &[ChartRun], metrics: &[(Metric, &str)]) -> Plot {
    let (title, y) = match kind {
        ChartKind::OutputTokS => ("Output throughput vs concurrency", "output tok/s"),
        ChartKind::DecodeVsConcurrency => (
            "Decode speed per request vs concurrency",
            "decode tok/s per request (p50)",
        ),
        ChartKind::Acceptance => (
            "Speculative decoding: tokens accepted per step vs concurrency",
            "acceptance (tokens/step)",
        ),
        _ => ("Time to first token vs concurrency", "TTFT (s)"),
    };
    let mut plot = Plot::new(title, AxisKind::Concurrency, "concurrency", y);
    plot.empty_note = if kind == ChartKind::Acceptance {
        "No run shown reports speculative decoding (no acceptance metric, one token per chunk)"
            .into()
    } else {
        "No throughput sweep in the runs shown".into()
    };
    for (ri, run) in runs.iter().enumerate() {
        for (mi, &(metric, _)) in metrics.iter().enumerate() {
            let series = throughput_series(run.bundle, metric);
            add_series(&mut plot, run, ri, &series, mi > 0, |p| {
                format!("C={}", p.concurrency)
            });
        }
    }
    run_legend(&mut plot, runs);
    if metrics.len() > 1 {
        for (mi, &(_, name)) in metrics.iter().enumerate() {
            plot.legend.push(style_entry(name, mi > 0, None));
        }
    }
    flag_legend(&mut plot);
    let limits = runs
        .iter()
        .filter_map(|r| Some((r.bundle.target.max_running_requests?, r.label)));
    plot.rules = limit_rules(limits, "max running requests");
    plot
}

fn by_length(kind: ChartKind, runs: &[ChartRun], metric: Metric) -> Plot {
    let (title, y) = match kind {
        ChartKind::TtftVsLength => ("Time to first token vs input length", "TTFT (s)"),
        ChartKind::PrefillVsLength => ("Prefill speed vs input length", "prefill tok/s (p50)"),
        _ => (
            "Decode speed vs input length",
            "decode tok/s per request (p50)",
        ),
    };
    let mut plot = Plot::new(title, AxisKind::Tokens, "input tokens", y);
    plot.empty_note = "No context sweep in the runs shown".into();
    for (ri, run) in runs.iter().enumerate() {
        let series = context_series(run.bundle, metric);
        add_series(&mut plot, run, ri, &series, false, |p| {
            format!("{} input tokens", format_tokens(p.input_len as f64))
        });
        if kind == ChartKind::TtftVsLength {
            add_fit(&mut plot, run, &series);
        }
    }
    run_legend(&mut plot, runs);
    if kind == ChartKind::TtftVsLength {
        plot.legend.push(style_entry("measured", false, None));
        plot.legend.push(style_entry("prefill fit", true, None));
        if plot.marks.iter().any(|m| m.style == MarkStyle::Predicted) {
            let e = style_entry("predicted (skipped)", false, Some(MarkStyle::Predicted));
            plot.legend.push(e);
        }
    }
    flag_legend(&mut plot);
    let limits = runs
        .iter()
        .filter_map(|r| Some((r.bundle.target.max_context?, r.label)));
    plot.rules = limit_rules(limits, "max context");
    plot
}

/// For a point of an imported run: where it comes from and what its numbers mean there, as
/// hover lines; empty for a measured run.
fn imported_note(bundle: &Bundle, metrics: &[Metric]) -> String {
    let Some(src) = &bundle.source else {
        return String::new();
    };
    let mut note = format!("\nimported from {}, under its definitions:", src.tool);
    for &m in metrics {
        let def = crate::compare::definition(bundle, m).unwrap_or("not defined by the source");
        note.push_str(&format!("\n{}: {def}", m.label()));
    }
    note
}

/// Adds a series' line (measured points only) and a mark per point.
fn add_series(
    plot: &mut Plot,
    run: &ChartRun,
    run_index: usize,
    series: &Series,
    dashed: bool,
    at: impl Fn(&SeriesPoint) -> String,
) {
    let measured: Vec<(f64, f64)> = series
        .points
        .iter()
        .filter(|p| p.origin == Origin::Measured)
        .map(|p| (p.x, p.y))
        .collect();
    plot.lines.push(Line {
        color: run.color,
        dashed,
        points: measured,
    });
    for p in &series.points {
        let mut hover = format!(
            "{} · {}\n{}: {}",
            run.label,
            at(p),
            series.metric.label(),
            format_exact(p.y)
        );
        if series.metric == Metric::SteadyTokS
            && let Some(pm) = point_summary(run.bundle, p).and_then(|s| s.steady_pm_pct)
        {
            hover.push_str(&format!(" ±{}% (95 % interval)", super::axis::fixed(pm, 1)));
        }
        let style = match p.origin {
            Origin::Predicted => {
                hover.push_str("\npredicted by the prefill fit, not measured");
                if let Some(reason) = point_reason(run.bundle, p) {
                    hover.push_str(&format!("\nskipped: {reason}"));
                }
                MarkStyle::Predicted
            }
            Origin::Measured if p.flags.is_empty() => MarkStyle::Dot,
            Origin::Measured => MarkStyle::Flagged,
        };
        for f in &p.flags {
            hover.push_str(&format!("\n⚠ {}: {}", f.kind.as_str(), f.message));
        }
        hover.push_str(&imported_note(run.bundle, &[series.metric]));
        plot.marks.push(Mark {
            x: p.x,
            y: p.y,
            color: run.color,
            style,
            tag: None,
            hover,
            source: Some(PointRef {
                run: run_index,
                sweep: p.sweep_index,
                point: p.point_index,
            }),
        });
    }
}

fn point_summary<'a>(b: &'a Bundle, p: &SeriesPoint) -> Option<&'a crate::bundle::Summary> {
    b.sweeps
        .get(p.sweep_index)?
        .points
        .get(p.point_index)?
        .summary
        .as_ref()
}

fn point_reason<'a>(b: &'a Bundle, p: &SeriesPoint) -> Option<&'a str> {
    let point = b.sweeps.get(p.sweep_index)?.points.get(p.point_index)?;
    point.reason.as_deref()
}

/// The dashed prefill-fit curve over the run's measured and predicted lengths.
fn add_fit(plot: &mut Plot, run: &ChartRun, series: &Series) {
    let xs = series.points.iter().map(|p| p.x);
    let lo = xs.clone().fold(f64::INFINITY, f64::min);
    let hi = xs.fold(f64::NEG_INFINITY, f64::max);
    let points = fit_curve(run.bundle, lo, hi, 48);
    if !points.is_empty() {
        plot.lines.push(Line {
            color: run.color,
            dashed: true,
            points,
        });
    }
}

fn tradeoff_plot(runs: &[ChartRun]) -> Plot {
    // Per GPU when every run shown says its GPUs (InferenceX's and MLPerf's reading: how much a
    // GPU serves at each speed a user gets); total otherwise, so runs share one axis.
    let gpus: Vec<Option<u32>> = runs
        .iter()
        .map(|r| crate::deploy::gpus(r.bundle).map(|g| g.count))
        .collect();
    let per_gpu = !runs.is_empty() && gpus.iter().all(Option::is_some);
    let mut plot = Plot::new(
        "Per-user speed vs total throughput",
        AxisKind::Linear,
        if per_gpu {
            "output tok/s per GPU (steady, else aggregate)"
        } else {
            "total output tok/s (steady, else aggregate; per GPU when every run says its GPUs)"
        },
        "decode tok/s per user (p50)",
    );
    if per_gpu {
        plot.title = "Per-user speed vs throughput per GPU".into();
    }
    plot.empty_note = "No throughput sweep in the runs shown".into();
    for (ri, run) in runs.iter().enumerate() {
        let divide = match gpus[ri] {
            Some(n) if per_gpu => f64::from(n),
            _ => 1.0,
        };
        let pts: Vec<_> = tradeoff(run.bundle)
            .into_iter()
            .map(|mut t| {
                t.total_tok_s /= divide;
                t
            })
            .collect();
        plot.lines.push(Line {
            color: run.color,
            dashed: false,
            points: pts
                .iter()
                .map(|t| (t.total_tok_s, t.per_user_tok_s))
                .collect(),
        });
        for t in &pts {
            let mut hover = format!(
                "{} · C={}\n{}: {} tok/s\nper user: {} tok/s",
                run.label,
                t.concurrency,
                if per_gpu {
                    format!("per GPU ({} GPUs)", divide)
                } else {
                    "total".to_string()
                },
                format_exact(t.total_tok_s),
                format_exact(t.per_user_tok_s)
            );
            for f in &t.flags {
                hover.push_str(&format!("\n⚠ {}: {}", f.kind.as_str(), f.message));
            }
            hover.push_str(&imported_note(
                run.bundle,
                &[Metric::AggTokS, Metric::DecodeTokSP50],
            ));
            plot.marks.push(Mark {
                x: t.total_tok_s,
                y: t.per_user_tok_s,
                color: run.color,
                style: if t.flags.is_empty() {
                    MarkStyle::Dot
                } else {
                    MarkStyle::Flagged
                },
                tag: Some(format!("{}", t.concurrency)),
                hover,
                source: Some(PointRef {
                    run: ri,
                    sweep: t.sweep_index,
                    point: t.point_index,
                }),
            });
        }
    }
    run_legend(&mut plot, runs);
    plot.legend
        .push(style_entry("labels: concurrency", false, None));
    flag_legend(&mut plot);
    plot
}

fn run_legend(plot: &mut Plot, runs: &[ChartRun]) {
    for r in runs {
        plot.legend.push(LegendEntry {
            // Another tool measured it, under its own definitions: say so where it is drawn.
            text: if r.bundle.is_imported() {
                format!("{} (imported)", r.label)
            } else {
                r.label.to_string()
            },
            color: r.color,
            dashed: false,
            mark: None,
        });
    }
}

fn style_entry(text: &str, dashed: bool, mark: Option<MarkStyle>) -> LegendEntry {
    LegendEntry {
        text: text.into(),
        color: NEUTRAL,
        dashed,
        mark,
    }
}

fn flag_legend(plot: &mut Plot) {
    if plot.marks.iter().any(|m| m.style == MarkStyle::Flagged) {
        let e = style_entry("flagged (hover for why)", false, Some(MarkStyle::Flagged));
        plot.legend.push(e);
    }
}

/// One rule per distinct limit value; the label names the runs when they differ.
fn limit_rules<'a>(limits: impl Iterator<Item = (u64, &'a str)>, what: &str) -> Vec<Rule> {
    let mut by_value: Vec<(u64, Vec<&str>)> = Vec::new();
    for (v, label) in limits {
        match by_value.iter_mut().find(|(x, _)| *x == v) {
            Some((_, labels)) => labels.push(label),
            None => by_value.push((v, vec![label])),
        }
    }
    let several = by_value.len() > 1;
    by_value
        .into_iter()
        .map(|(v, labels)| Rule {
            x: v as f64,
            text: if several {
                format!("{what} {v} ({})", labels.join(", "))
            } else {
                format!("{what} {v}")
            },
        })
        .collect()
}

/// Each request of one point: TTFT and e2e against its start time, so queueing shows.
pub fn requests_plot(run: &ChartRun, sweep: usize, point: usize) -> Plot {
    let mut plot = Plot::new(
        "Requests over time",
        AxisKind::Linear,
        "request start (s from the point's start)",
        "seconds",
    );
    plot.empty_note = if run.bundle.is_imported() {
        "Imported point: its source reported a summary, not the requests".into()
    } else {
        "No requests recorded for this point".into()
    };
    let Some(p) = run
        .bundle
        .sweeps
        .get(sweep)
        .and_then(|s| s.points.get(point))
    else {
        return plot;
    };
    plot.title = format!(
        "{} · C={} · {} input tokens: each request's TTFT and e2e",
        run.label,
        p.concurrency,
        format_tokens(p.input_len as f64)
    );
    let step = p.requests.len().div_ceil(MAX_REQUEST_MARKS).max(1);
    let e2e_color = Rgb(0x88, 0x8e, 0x96);
    for (i, r) in p.requests.iter().enumerate().step_by(step) {
        let hover = request_hover(i, r);
        if let Some(t) = r.ttft_s.filter(|_| r.is_ok()) {
            plot.marks.push(request_mark(
                r.start_s,
                t,
                run.color,
                MarkStyle::Small,
                &hover,
            ));
        }
        let (color, style) = if r.is_ok() {
            (e2e_color, MarkStyle::Small)
        } else {
            (Rgb(0xdc, 0x26, 0x26), MarkStyle::Cross)
        };
        plot.marks
            .push(request_mark(r.start_s, r.e2e_s, color, style, &hover));
    }
    plot.legend = vec![
        LegendEntry {
            text: "TTFT".into(),
            color: run.color,
            dashed: false,
            mark: Some(MarkStyle::Small),
        },
        LegendEntry {
            text: "e2e".into(),
            color: e2e_color,
            dashed: false,
            mark: Some(MarkStyle::Small),
        },
    ];
    if p.requests.iter().any(|r| !r.is_ok()) {
        plot.legend.push(LegendEntry {
            text: "failed".into(),
            color: Rgb(0xdc, 0x26, 0x26),
            dashed: false,
            mark: Some(MarkStyle::Cross),
        });
    }
    if step > 1 {
        plot.legend.push(style_entry(
            &format!("every {step}th of {} requests shown", p.requests.len()),
            false,
            Some(MarkStyle::Small),
        ));
    }
    plot
}

fn request_mark(x: f64, y: f64, color: Rgb, style: MarkStyle, hover: &str) -> Mark {
    Mark {
        x,
        y,
        color,
        style,
        tag: None,
        hover: hover.to_string(),
        source: None,
    }
}

fn request_hover(i: usize, r: &crate::bundle::RequestRecord) -> String {
    let mut s = format!(
        "request #{}\nstart {:.3} s\nTTFT {}\ne2e {:.3} s\noutput tokens {}",
        i + 1,
        r.start_s,
        r.ttft_s
            .map(|t| format!("{t:.3} s"))
            .unwrap_or_else(|| "—".into()),
        r.e2e_s,
        r.output_tokens
    );
    if let Some(e) = &r.error {
        s.push_str(&format!("\nerror: {}", e.message));
    }
    s
}

/// Whether a point of a bundle is worth opening in the per-request view.
pub fn has_requests(b: &Bundle, sweep: usize, point: usize) -> bool {
    b.sweeps
        .get(sweep)
        .and_then(|s| s.points.get(point))
        .is_some_and(|p| p.status != PointStatus::Skipped && !p.requests.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Flag, FlagKind};
    use crate::curves::tests::bundle;

    fn run(b: &Bundle, i: usize) -> ChartRun<'_> {
        ChartRun {
            label: &b.label,
            color: super::super::run_color(i),
            bundle: b,
        }
    }

    #[test]
    fn throughput_chart_overlays_runs_with_two_line_styles() {
        let (a, b) = (bundle("kpro5"), bundle("kpro6"));
        let p = build(ChartKind::OutputTokS, &[run(&a, 0), run(&b, 1)]);
        assert_eq!(p.lines.len(), 4, "steady and aggregate per run");
        assert_eq!(p.lines.iter().filter(|l| l.dashed).count(), 2);
        assert_eq!(p.marks.len(), 12);
        let legend: Vec<&str> = p.legend.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(legend, ["kpro5", "kpro6", "steady", "aggregate"]);
        assert_eq!(p.rules.len(), 1, "both runs share the limit");
        assert_eq!(p.rules[0].text, "max running requests 64");
        assert_eq!(p.x_kind, AxisKind::Concurrency);
    }

    #[test]
    fn flagged_points_are_marked_and_explained() {
        let mut a = bundle("a");
        a.sweeps[0].points[0].flags.push(Flag {
            kind: FlagKind::Short,
            message: "3 of 8 requests produced fewer than 100 tokens".into(),
            count: Some(3),
        });
        let p = build(ChartKind::DecodeVsConcurrency, &[run(&a, 0)]);
        let m = &p.marks[0];
        assert_eq!(m.style, MarkStyle::Flagged);
        assert!(m.hover.contains("⚠ short: 3 of 8"), "{}", m.hover);
        assert!(
            m.hover
                .starts_with("a · C=1\ndecode tok/s per request (p50): 50")
        );
        assert!(p.legend.iter().any(|e| e.mark == Some(MarkStyle::Flagged)));
        // An image cannot be hovered: its legend points at the bundle instead.
        let texts: Vec<String> = p.for_print().legend.into_iter().map(|e| e.text).collect();
        assert!(
            texts.contains(&"flagged (see the warnings in the bundle)".to_string()),
            "{texts:?}"
        );
    }

    #[test]
    fn imported_runs_say_so_in_the_legend_and_every_hover() {
        let a = bundle("kpro5");
        let mut b = bundle("kpro6");
        b.source = Some(crate::bundle::Source {
            tool: "vllm bench serve".into(),
            version: None,
            format: crate::bundle::ImportFormat::Vllm,
            files: Vec::new(),
            notes: Vec::new(),
            measured_at: None,
        });
        b.definitions
            .insert("ttft_s".into(), "vLLM's TTFT definition".into());
        let p = build(ChartKind::TtftVsConcurrency, &[run(&a, 0), run(&b, 1)]);
        let legend: Vec<&str> = p.legend.iter().take(2).map(|e| e.text.as_str()).collect();
        assert_eq!(legend, ["kpro5", "kpro6 (imported)"]);
        let hovers = |label: &str| {
            p.marks
                .iter()
                .filter(|m| m.hover.starts_with(label))
                .map(|m| m.hover.clone())
                .collect::<Vec<_>>()
        };
        assert!(hovers("kpro5 ").iter().all(|h| !h.contains("imported")));
        let kpro6 = hovers("kpro6 ");
        assert!(!kpro6.is_empty());
        for h in kpro6 {
            assert!(
                h.contains("imported from vllm bench serve, under its definitions:"),
                "{h}"
            );
            assert!(h.contains("(s): vLLM's TTFT definition"), "{h}");
        }
    }

    #[test]
    fn ttft_by_length_has_fit_prediction_and_context_limit() {
        let a = bundle("a");
        let p = build(ChartKind::TtftVsLength, &[run(&a, 0)]);
        assert_eq!(p.lines.len(), 2, "measured line and fit");
        assert!(p.lines[1].dashed);
        assert_eq!(p.lines[0].points.len(), 2, "the prediction is not joined");
        let predicted: Vec<&Mark> = p
            .marks
            .iter()
            .filter(|m| m.style == MarkStyle::Predicted)
            .collect();
        assert_eq!(predicted.len(), 1);
        assert!(predicted[0].hover.contains("not measured"));
        assert_eq!(p.rules[0].x, 32768.0);
    }

    #[test]
    fn tradeoff_points_carry_their_concurrency() {
        let a = bundle("a");
        let p = build(ChartKind::Tradeoff, &[run(&a, 0)]);
        let tags: Vec<Option<&str>> = p.marks.iter().map(|m| m.tag.as_deref()).collect();
        assert_eq!(tags, [Some("1"), Some("2"), Some("4")]);
    }

    #[test]
    fn differing_limits_name_their_runs() {
        let a = bundle("a");
        let mut b = bundle("b");
        b.target.max_running_requests = Some(128);
        let p = build(ChartKind::TtftVsConcurrency, &[run(&a, 0), run(&b, 1)]);
        let texts: Vec<&str> = p.rules.iter().map(|r| r.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "max running requests 64 (a)",
                "max running requests 128 (b)"
            ]
        );
    }

    #[test]
    fn rate_latency_is_drawn_against_the_achieved_rate() {
        use crate::compare::rate_tests::rate_bundle;
        let a = rate_bundle("a", 1.0, 18);
        let p = build(ChartKind::RateTtft, &[run(&a, 0)]);
        assert_eq!(p.x_kind, AxisKind::Rate);
        assert_eq!(p.x_label, "achieved requests/s");
        assert_eq!(p.lines.len(), 2, "p50 and p99");
        let xs: Vec<f64> = p.lines[0].points.iter().map(|q| q.0).collect();
        assert_eq!(xs, [0.99, 1.98, 7.92]);
        assert!(p.lines[1].dashed);
        assert!(
            p.marks[0].hover.starts_with(
                "a · 1 req/s offered, 0.99 achieved\ngoodput 18 of 20 (90.0 %)\nTTFT p50 (s): "
            ),
            "{}",
            p.marks[0].hover
        );
        let legend: Vec<&str> = p.legend.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(legend, ["a", "p50", "p99"]);
        let tpot = build(ChartKind::RateTpot, &[run(&a, 0)]);
        assert_eq!(tpot.lines.len(), 1);
        assert!((tpot.lines[0].points[0].1 - 0.01095).abs() < 1e-12);
        assert_eq!(build(ChartKind::RateE2e, &[run(&a, 0)]).lines.len(), 2);
    }

    #[test]
    fn a_run_without_its_achieved_rate_puts_every_run_on_the_offered_rate() {
        use crate::compare::rate_tests::rate_bundle;
        let a = rate_bundle("a", 1.0, 18);
        let mut imported = rate_bundle("vllm", 2.0, 18);
        for p in &mut imported.sweeps[0].points {
            p.rate.as_mut().unwrap().achieved_rps = None;
        }
        let p = build(ChartKind::RateTtft, &[run(&a, 0), run(&imported, 1)]);
        assert_eq!(
            p.x_label,
            "offered requests/s (a run shown does not record its achieved rate)"
        );
        for line in &p.lines {
            let xs: Vec<f64> = line.points.iter().map(|q| q.0).collect();
            assert_eq!(xs, [1.0, 2.0, 8.0]);
        }
        assert!(
            p.marks
                .iter()
                .any(|m| m.hover.starts_with("vllm · 1 req/s offered\n")),
            "{:?}",
            p.marks.iter().map(|m| &m.hover).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_max_rate_search_is_ruled_at_the_rate_it_found() {
        use crate::bundle::RateSearch;
        use crate::compare::rate_tests::rate_bundle;
        let mut a = rate_bundle("a", 1.0, 18);
        a.sweeps[0].rate.as_mut().unwrap().search = Some(RateSearch {
            slo_fraction: 0.9,
            precision: 0.05,
            closed_loop_rps: 2.5,
            closed_loop_concurrency: 16,
            found_rps: Some(2.0),
            failed_rps: Some(2.1),
        });
        let g = build(ChartKind::RateGoodput, &[run(&a, 0)]);
        let rules: Vec<(f64, &str)> = g.rules.iter().map(|r| (r.x, r.text.as_str())).collect();
        assert_eq!(rules, [(2.0, "max rate meeting the SLO 2")]);
        assert!(build(ChartKind::RateTtft, &[run(&a, 0)]).rules.is_empty());
    }

    #[test]
    fn rate_goodput_and_lag_are_drawn_against_the_offered_rate() {
        use crate::compare::rate_tests::rate_bundle;
        let a = rate_bundle("a", 1.0, 10);
        let g = build(ChartKind::RateGoodput, &[run(&a, 0)]);
        assert_eq!(g.x_label, "offered requests/s");
        let xs: Vec<f64> = g.lines[0].points.iter().map(|q| q.0).collect();
        assert_eq!(xs, [1.0, 2.0, 8.0]);
        // Good requests/s: 18 (10 at 8 req/s) over the wall of 20 requests.
        let wall = a.sweeps[0].points[2].summary.as_ref().unwrap().wall_s;
        assert!((g.lines[0].points[2].1 - 10.0 / wall).abs() < 1e-12);
        assert_eq!(g.lines[1].points[2].1, 7.92, "achieved, dashed beside it");
        assert!(g.lines[1].dashed);
        let lag = build(ChartKind::RateLag, &[run(&a, 0)]);
        let ys: Vec<f64> = lag.lines[0].points.iter().map(|q| q.1).collect();
        assert_eq!(ys, [0.001, 0.001, 0.004]);
        // Without --goodput there is nothing to draw, and it says why.
        let mut b = a.clone();
        for p in &mut b.sweeps[0].points {
            p.goodput = None;
        }
        let g = build(ChartKind::RateGoodput, &[run(&b, 0)]);
        assert!(g.is_empty());
        assert_eq!(
            g.empty_note,
            "No rate sweep with goodput (--goodput) in the runs shown"
        );
        // A throughput-only bundle has no rate chart.
        assert!(build(ChartKind::RateTtft, &[run(&bundle("t"), 0)]).is_empty());
    }

    #[test]
    fn no_runs_is_an_empty_plot_with_a_note() {
        let p = build(ChartKind::TtftVsLength, &[]);
        assert!(p.is_empty());
        assert_eq!(p.empty_note, "No context sweep in the runs shown");
    }
}
