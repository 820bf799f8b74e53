//! The History view of a served folder or bucket: one metric at one level across a label's
//! runs, from the listing's run summaries (no bundle is fetched), the changes beyond the noise
//! marked on the chart and listed under it.

use leptos::prelude::*;
use llmsweep_shared::charts::{history_plot, run_color};
use llmsweep_shared::curves::Metric;
use llmsweep_shared::history::{History, histories};

use super::chart::ChartBox;
use crate::app::Ctx;

/// The metrics a history can show, in menu order.
const METRICS: [Metric; 8] = [
    Metric::SteadyTokS,
    Metric::AggTokS,
    Metric::DecodeTokSP50,
    Metric::TtftP50,
    Metric::TtftP99,
    Metric::E2eP50,
    Metric::E2eP99,
    Metric::PrefillTokSP50,
];

/// Every history of `metric` in the folder's listing (each label, workload and level with two
/// runs or more).
fn all(ctx: Ctx, metric: Metric) -> Vec<History> {
    ctx.state
        .with(|s| histories(&s.history_listing(), None, metric, None))
}

/// A history's name in the menu.
fn name(h: &History) -> String {
    format!(
        "{} · {} · {} ({} runs{})",
        h.label,
        h.level_text(),
        h.workload,
        h.runs.len(),
        match h.steps.len() {
            0 => String::new(),
            1 => ", 1 change".into(),
            n => format!(", {n} changes"),
        }
    )
}

/// The History section: shown when the listing has a history at all.
/// `wide`: a card of its own on the page without runs (above the folder list), else the
/// History tab's content.
#[component]
pub fn HistoryView(ctx: Ctx, #[prop(optional)] wide: bool) -> impl IntoView {
    let metric = RwSignal::new(Metric::SteadyTokS);
    let chosen = RwSignal::new(0usize);
    let found = Memo::new(move |_| all(ctx, metric.get()));
    let current =
        Memo::new(move |_| found.with(|f| f.get(chosen.get()).or_else(|| f.first()).cloned()));
    let plot = Memo::new(move |_| {
        current.with(|h| match h {
            Some(h) => history_plot(h, run_color(0)),
            None => {
                let mut p = llmsweep_shared::charts::Plot::new(
                    "History",
                    llmsweep_shared::charts::AxisKind::Linear,
                    "run (oldest first)",
                    "",
                );
                p.empty_note = "no label has two runs of one workload that measured this".into();
                p
            }
        })
    });
    let any = Memo::new(move |_| ctx.state.with(|s| s.has_history()));
    move || {
        any.get().then(|| {
            view! {
                <section class="history" class:wide=wide data-testid="history" aria-label="History">
                    <h2 class="folder-title">"History"</h2>
                    <p class="hint">
                        "A metric at one level across a label's runs, oldest first, each with its 95 % interval. "
                        "A marked run changed beyond the noise of the runs before it (a 5 % chance of any false alarm in a whole history)."
                    </p>
                    <div class="history-pick">
                        <label>
                            "Metric "
                            <select
                                data-testid="history-metric"
                                on:change=move |e| {
                                    let key = event_target_value(&e);
                                    if let Some(m) = Metric::from_key(&key) {
                                        metric.set(m);
                                        chosen.set(0);
                                    }
                                }
                            >
                                {METRICS
                                    .iter()
                                    .map(|m| {
                                        view! {
                                            <option value=m.key() selected=move || metric.get() == *m>
                                                {m.label()}
                                            </option>
                                        }
                                    })
                                    .collect_view()}
                            </select>
                        </label>
                        <label>
                            " History "
                            <select
                                data-testid="history-series"
                                on:change=move |e| {
                                    if let Ok(i) = event_target_value(&e).parse() {
                                        chosen.set(i);
                                    }
                                }
                            >
                                {move || {
                                    found
                                        .get()
                                        .iter()
                                        .enumerate()
                                        .map(|(i, h)| {
                                            view! {
                                                <option value=i.to_string() selected=move || chosen.get() == i>
                                                    {name(h)}
                                                </option>
                                            }
                                        })
                                        .collect_view()
                                }}
                            </select>
                        </label>
                    </div>
                    <ChartBox ctx=ctx plot=plot slug="history" />
                    <ul class="history-changes" data-testid="history-changes">
                        {move || {
                            current
                                .get()
                                .map(|h| {
                                    if h.steps.is_empty() {
                                        vec![view! { <li>"No change beyond the noise."</li> }.into_any()]
                                    } else {
                                        h.steps
                                            .iter()
                                            .map(|s| {
                                                let r = &h.runs[s.at];
                                                let mut text = format!(
                                                    "{} {:+.1} % ({:+.1} to {:+.1}) in {} ({})",
                                                    if h.metric.improved_by(s.pct) { "▲" } else { "▼" },
                                                    s.pct,
                                                    s.interval.0,
                                                    s.interval.1,
                                                    r.name,
                                                    r.date.get(..10).unwrap_or(&r.date),
                                                );
                                                if !s.what_else.is_empty() {
                                                    text.push_str(&format!("; {}", s.what_else.join(", ")));
                                                }
                                                view! { <li>{text}</li> }.into_any()
                                            })
                                            .collect()
                                    }
                                })
                                .unwrap_or_default()
                        }}
                    </ul>
                </section>
            }
        })
    }
}
