//! The compare view: a baseline, the verdict, per-level tables with changes and their
//! intervals (and the server's peaks), a chart of the changes, and the metadata diff.

use leptos::prelude::*;
use llmsweep_shared::bundle::SweepKind;
use llmsweep_shared::charts::axis::{format_tokens, format_value};
use llmsweep_shared::charts::{Rgb, delta_chart};
use llmsweep_shared::compare::verdict::change_text;
use llmsweep_shared::compare::{
    Cell, Comparison, Level, NEUTRAL_PCT, Outcome, SweepComparison, SweepVerdict, Verdict,
    kind_name, verdicts,
};

use super::chart::ChartBox;
use super::run_options::RunOptions;
use crate::app::Ctx;
use crate::web::export;

#[component]
pub fn CompareView(ctx: Ctx) -> impl IntoView {
    let state = ctx.state;
    let cmp = Memo::new(move |_| state.with(|s| s.comparison()));
    let base = Memo::new(move |_| state.with(|s| s.baseline()));
    let colors = Memo::new(move |_| state.with(|s| s.comparison_colors()));
    view! {
        <div class="compare">
            <label class="baseline">
                "Baseline "
                <select on:change=move |e| {
                    if let Ok(id) = event_target_value(&e).parse() {
                        state.update(|s| s.set_baseline(id));
                    }
                }>
                    <RunOptions state=state chosen=base />
                </select>
            </label>
            {move || match cmp.get() {
                None => view! { <p class="hint">"Show at least two runs to compare them."</p> }.into_any(),
                Some(c) => comparison(ctx, c, &colors.get()).into_any(),
            }}
        </div>
    }
}

fn comparison(ctx: Ctx, c: Comparison, colors: &[Rgb]) -> impl IntoView {
    let sections = c
        .sweeps
        .iter()
        .map(|s| sweep_section(ctx, &c, s, colors))
        .collect_view();
    let meta_csv = c.metadata_csv();
    let sources: Vec<String> = c
        .sources
        .iter()
        .zip(&c.labels)
        .filter_map(|(s, l)| {
            s.as_ref()
                .map(|s| format!("{l} is {s}: open its definitions in the run list."))
        })
        .collect();
    view! {
        {verdict_card(&c)}
        {sources.into_iter().map(|s| view! { <p class="imported-note" data-testid="imported-note">{s}</p> }).collect_view()}
        {sections}
        <section class="meta">
            <div class="section-head">
                <h3>"What differs besides the numbers"</h3>
                <button class="small" on:click=move |_| { let _ = export::text(&meta_csv, "text/csv", "compare-metadata.csv"); }>"CSV"</button>
            </div>
            <table class="meta-table">
                <thead>
                    <tr>
                        <th>"field"</th>
                        {c.labels.iter().map(|l| view! { <th>{l.clone()}</th> }).collect_view()}
                    </tr>
                </thead>
                <tbody>
                    {c.metadata.iter().map(|row| view! {
                        <tr class:differs=row.differs>
                            <th scope="row">{row.name.clone()}</th>
                            {row.values.iter().map(|v| view! { <td>{v.clone()}</td> }).collect_view()}
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

/// The first thing the tab says: per sweep and run, faster / slower / mixed / no significant
/// change, each headline metric's range, and what qualifies it.
fn verdict_card(c: &Comparison) -> impl IntoView + use<> {
    let items = verdicts(c, NEUTRAL_PCT)
        .iter()
        .map(|v| verdict_item(v, c))
        .collect_view();
    let workload = c
        .workload
        .iter()
        .map(|w| {
            let class = match w.same {
                Some(true) => "workload same",
                Some(false) => "workload differs",
                None => "workload unknown",
            };
            let line = w.line.clone();
            view! { <p class=class data-testid="workload">{line}</p> }
        })
        .collect_view();
    view! {
        <section class="verdict" data-testid="verdict" aria-label="Verdict">
            <h3>"Verdict"</h3>
            {items}
            {workload}
        </section>
    }
}

fn verdict_item(v: &SweepVerdict, c: &Comparison) -> impl IntoView + use<> {
    let headline = v.headline(&c.labels, c.baseline);
    let class = outcome_class(v.outcome);
    // The outcome's words inside the headline are the ones styled.
    let marker = match v.outcome {
        Outcome::Faster => "faster",
        Outcome::Slower => "slower",
        Outcome::Mixed => "mixed",
        Outcome::NoSignificantChange => "no significant change",
        Outcome::Unresolved => "cannot tell",
        Outcome::NotCompared => "not compared",
    };
    // A level that cannot be told makes the outcome "cannot tell", wherever the headline says
    // it (see `SweepVerdict::headline`).
    let (before, word, after) = match headline.find(marker) {
        Some(i) => (
            headline[..i].to_string(),
            marker.to_string(),
            headline[i + marker.len()..].to_string(),
        ),
        None => (headline.clone(), String::new(), String::new()),
    };
    let lines = v
        .metric_lines()
        .into_iter()
        .map(|(m, line)| {
            view! {
                <li class="metric-line"><span class="metric">{m.label()}</span>": " {line}</li>
            }
        })
        .collect_view();
    let notes = v
        .notes
        .iter()
        .map(|n| view! { <li class="verdict-note">{n.clone()}</li> })
        .collect_view();
    view! {
        <div class="verdict-item" data-kind=kind_name(v.kind)>
            <p class="headline" data-outcome=class data-testid="headline">
                {before}
                <strong class=format!("outcome {class}")>{word}</strong>
                {after}
            </p>
            <ul class="metric-lines">{lines}{notes}</ul>
        </div>
    }
}

fn outcome_class(o: Outcome) -> &'static str {
    match o {
        Outcome::Faster => "faster",
        Outcome::Slower => "slower",
        Outcome::Mixed => "mixed",
        Outcome::NoSignificantChange => "no-change",
        Outcome::Unresolved => "unresolved",
        Outcome::NotCompared => "not-compared",
    }
}

fn sweep_section(
    ctx: Ctx,
    c: &Comparison,
    s: &SweepComparison,
    colors: &[Rgb],
) -> impl IntoView + use<> {
    let labels = c.labels.clone();
    let csv = s.to_csv(&labels);
    let name = s.name();
    let file = format!("compare-{}.csv", name.replace('×', "x").replace(' ', "-"));
    let notes: Vec<String> = s
        .mismatched
        .iter()
        .map(|m| {
            format!(
                "{} ran a different {name} workload than the baseline, so it is not compared: {}.",
                labels[m.run],
                m.reasons.join("; ")
            )
        })
        .chain(
            s.absent
                .iter()
                .map(|&i| format!("{} has no {name} sweep.", labels[i])),
        )
        .collect();
    let caveats = s.caveats();
    let per = match s.kind {
        SweepKind::Context => "per input length",
        SweepKind::Rate => "per offered rate",
        _ => "per concurrency",
    };
    let heads: Vec<String> = labels
        .iter()
        .zip(&c.sources)
        .map(|(l, src)| match src {
            Some(_) => format!("{l} (imported)"),
            None => l.clone(),
        })
        .collect();
    let tables = (s.runs.len() > 1).then(|| {
        s.levels
            .iter()
            .map(|l| level_table(&heads, &s.runs, s.kind, l, s.peak_rows(l)))
            .collect_view()
    });
    let delta = (s.runs.len() > 1).then(|| delta_figure(ctx, c, s, colors));
    view! {
        <section class="sweep-compare" data-kind=kind_name(s.kind)>
            <div class="section-head">
                <h3>{format!("{} sweep, {per}", capitalize(&name))}</h3>
                <button class="small" on:click=move |_| { let _ = export::text(&csv, "text/csv", &file); }>"CSV"</button>
            </div>
            {notes.into_iter().map(|n| view! { <p class="mismatch" data-testid="mismatch">{n}</p> }).collect_view()}
            <div class="level-tables">{tables}</div>
            {delta}
            {caveats.into_iter().map(|c| view! { <p class="caveat" data-testid="caveat">"† " {c}</p> }).collect_view()}
        </section>
    }
}

/// The change of each run against the baseline per level, drawn, with the drawn values as text
/// folded under it.
fn delta_figure(
    ctx: Ctx,
    c: &Comparison,
    s: &SweepComparison,
    colors: &[Rgb],
) -> impl IntoView + use<> {
    let d = delta_chart(c, s, colors, NEUTRAL_PCT);
    let lines: Vec<String> = d.points.iter().map(|p| p.line(&c.labels, s.kind)).collect();
    let (levels, points) = (d.levels.len(), d.points.len());
    let plot = d.plot;
    let plot = Memo::new(move |_| plot.clone());
    let slug = match s.kind {
        SweepKind::Context => "change-vs-length",
        _ => "change-vs-concurrency",
    };
    view! {
        <div class="delta-chart" data-testid="delta-chart" data-levels=levels data-points=points>
            <ChartBox ctx=ctx plot=plot slug=slug />
            <details class="delta-values">
                <summary>"The changes drawn, as text"</summary>
                <ul>{lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}</ul>
            </details>
        </div>
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn level_table(
    labels: &[String],
    runs: &[usize],
    kind: SweepKind,
    l: &Level,
    peaks: Vec<(&'static str, Vec<Option<String>>)>,
) -> impl IntoView + use<> {
    let caption = match kind {
        SweepKind::Context => format!("{} input tokens", format_tokens(l.key as f64)),
        SweepKind::Rate => format!(
            "offered {}",
            llmsweep_shared::compare::verdict::level_text(kind, l.key)
        ),
        _ => format!("concurrency {}", l.key),
    };
    let head: Vec<String> = runs
        .iter()
        .enumerate()
        .map(|(n, &i)| {
            if n == 0 {
                format!("{} (baseline)", labels[i])
            } else {
                labels[i].clone()
            }
        })
        .collect();
    view! {
        <table class="cmp" data-key=l.key>
            <caption>{caption}</caption>
            <thead>
                <tr>
                    <th>"metric"</th>
                    {head.into_iter().map(|h| view! { <th>{h}</th> }).collect_view()}
                </tr>
            </thead>
            <tbody>
                {l.rows.iter().map(|row| view! {
                    <tr>
                        <th scope="row">{row.metric.label()}</th>
                        {row.cells.iter().map(cell).collect_view()}
                    </tr>
                }).collect_view()}
                {peaks.into_iter().map(|(name, cells)| view! {
                    <tr class="peak" data-testid="peak-row">
                        <th scope="row" title="From the server's own gauges; shown, not judged">{name}</th>
                        {cells.into_iter().map(|v| view! {
                            <td class="cell"><span class="value">{v.unwrap_or_else(|| "—".into())}</span></td>
                        }).collect_view()}
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}

fn cell(c: &Cell) -> impl IntoView + use<> {
    let value = match (c.value, &c.note) {
        (Some(v), _) => format_value(v),
        (None, Some(n)) => n.clone(),
        (None, None) => "—".into(),
    };
    let (class, delta) = match (&c.change, c.delta_pct, c.verdict) {
        (Some(ch), _, v) => (verdict_class(v), change_text(ch)),
        (None, Some(d), v) => (verdict_class(v), format!("{d:+.1} %")),
        _ => ("", String::new()),
    };
    let caveat = c.caveat;
    let value = match caveat {
        Some(_) if c.value.is_some() => format!("{value}†"),
        _ => value,
    };
    let title = cell_title(c);
    view! {
        <td class=format!("cell {class}") title=title>
            <span class="value">{value}</span>
            {(!delta.is_empty()).then(|| view! { <span class="delta" data-delta=delta.clone()>{delta.clone()}</span> })}
        </td>
    }
}

/// What hovering a cell explains: why a change is "no significant change", why it has no
/// interval, and the caveat of an imported number.
fn cell_title(c: &Cell) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(ch) = &c.change {
        if c.verdict == Verdict::Same {
            parts.push(match ch.interval {
                Some((lo, hi)) => format!(
                    "no significant change: the 95 % interval is {lo:+.1} to {hi:+.1} %, within the noise or under {NEUTRAL_PCT} %"
                ),
                None => format!("no significant change: within the noise or under {NEUTRAL_PCT} %"),
            });
        }
        if let Some(why) = ch.no_interval {
            parts.push(format!("no interval: {why}"));
        }
    }
    if let Some(cv) = c.caveat {
        parts.push(cv.to_string());
    }
    (!parts.is_empty()).then(|| parts.join("\n"))
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::Same => "same",
        Verdict::None => "",
    }
}
