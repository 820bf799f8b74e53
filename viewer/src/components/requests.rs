//! The per-request view: one point's requests, TTFT and e2e against their start time, and under
//! them the server's queue, running count and KV-cache usage on the same time axis.

use leptos::prelude::*;
use llmsweep_shared::bundle::{Bundle, SweepKind};
use llmsweep_shared::charts::{
    AxisKind, ChartRun, Plot, ServerPlots, axis::format_tokens, requests_plot, run_color,
    server_plots,
};

use super::chart::ChartBox;
use super::run_options::RunOptions;
use crate::app::Ctx;
use crate::state::{Selection, ViewerState, points_with_requests};

#[component]
pub fn RequestsView(ctx: Ctx) -> impl IntoView {
    let state = ctx.state;
    let sel = Memo::new(move |_| state.with(|s| s.selection()));
    let server = Memo::new(move |_| state.with(selected_server));
    // On the server charts' time axis, so a queue lines up with the requests it held back.
    let plot = Memo::new(move |_| {
        let mut p = state.with(selected_plot);
        if let Some(Ok(s)) = server.get() {
            p.x_range = Some(s.x_range);
        }
        p
    });
    view! {
        <div class="requests">
            <div class="pickers">
                <RunPicker state=state sel=sel />
                <PointPicker state=state sel=sel />
            </div>
            {move || state.with(|s| {
                let cur = sel.get()?;
                let r = s.run(cur.run)?;
                Some(point_facts(&r.bundle, cur))
            })}
            <ChartBox ctx=ctx plot=plot slug="requests" />
            <ServerCharts ctx=ctx server=server />
            <p class="hint">"Click a point in the Throughput or Context charts to open its requests here."</p>
        </div>
    }
}

/// The per-request plot of the selected point, or an empty one saying why there is none.
fn selected_plot(s: &ViewerState) -> Plot {
    let plot = s.selection().and_then(|sel| {
        let r = s.run(sel.run)?;
        let run = ChartRun {
            label: &r.label,
            color: run_color(r.color),
            bundle: &r.bundle,
        };
        Some(requests_plot(&run, sel.sweep, sel.point))
    });
    plot.unwrap_or_else(|| {
        let mut p = Plot::new(
            "Requests over time",
            AxisKind::Linear,
            "start (s)",
            "seconds",
        );
        p.empty_note = "No shown run has request records".into();
        p
    })
}

/// The selected point's server charts, or why it has none; `None` without a selection.
fn selected_server(s: &ViewerState) -> Option<Result<ServerPlots, String>> {
    let sel = s.selection()?;
    let r = s.run(sel.run)?;
    let run = ChartRun {
        label: &r.label,
        color: run_color(r.color),
        bundle: &r.bundle,
    };
    Some(server_plots(&run, sel.sweep, sel.point))
}

/// Height of each server chart, CSS pixels: small, under the requests.
const SERVER_HEIGHT: u32 = 240;

/// The queue and running counts, then the KV-cache usage, under the requests chart; one line
/// instead when the point has no server samples.
#[component]
fn ServerCharts(ctx: Ctx, server: Memo<Option<Result<ServerPlots, String>>>) -> impl IntoView {
    let plots = move || server.get().and_then(Result::ok);
    let has = Memo::new(move |_| plots().map(|p| p.kv.is_some()));
    let counts = Memo::new(move |_| plots().map(|p| p.counts).unwrap_or_else(empty));
    let kv = Memo::new(move |_| plots().and_then(|p| p.kv).unwrap_or_else(empty));
    let why = move || server.get().and_then(Result::err);
    view! {
        {move || why().map(|w| view! { <p class="hint" data-testid="no-server-samples">{w}</p> })}
        {move || has.get().map(|with_kv| view! {
            <div class="server-charts" data-testid="server-charts" data-kv=with_kv.to_string()>
                <ChartBox ctx=ctx plot=counts slug="server-queue" height=SERVER_HEIGHT />
                {with_kv.then(|| view! { <ChartBox ctx=ctx plot=kv slug="server-kv-cache" height=SERVER_HEIGHT /> })}
            </div>
        })}
    }
}

fn empty() -> Plot {
    Plot::new("", AxisKind::Linear, "", "")
}

#[component]
fn RunPicker(state: RwSignal<ViewerState>, sel: Memo<Option<Selection>>) -> impl IntoView {
    let chosen = Memo::new(move |_| sel.get().map(|x| x.run));
    let on_change = move |e| {
        if let Ok(id) = event_target_value(&e).parse() {
            state.update(|s| s.select_run(id));
        }
    };
    view! {
        <label>
            "Run "
            <select on:change=on_change>
                <RunOptions state=state chosen=chosen />
            </select>
        </label>
    }
}

#[component]
fn PointPicker(state: RwSignal<ViewerState>, sel: Memo<Option<Selection>>) -> impl IntoView {
    let on_change = move |e| {
        let v = event_target_value(&e);
        let mut it = v.split(':').filter_map(|x| x.parse::<usize>().ok());
        let run = sel.get_untracked().map(|s| s.run);
        if let (Some(run), Some(sweep), Some(point)) = (run, it.next(), it.next()) {
            state.update(|s| s.select(Selection { run, sweep, point }));
        }
    };
    // Keyed by run and point: the selected point's option stays while the state changes.
    let points = Memo::new(move |_| {
        state.with(|s| {
            let run = s.run(sel.get()?.run)?;
            let names = points_with_requests(&run.bundle)
                .into_iter()
                .map(|(sw, pt)| (run.id, sw, pt, point_name(&run.bundle, sw, pt)))
                .collect::<Vec<_>>();
            Some(names)
        })
    });
    view! {
        <label>
            "Point "
            <select on:change=on_change>
                <For
                    each=move || points.get().unwrap_or_default()
                    key=|(run, sw, pt, _)| (*run, *sw, *pt)
                    children=move |(_, sw, pt, name)| {
                        let selected = move || sel.get().is_some_and(|s| (s.sweep, s.point) == (sw, pt));
                        view! { <option value=format!("{sw}:{pt}") prop:selected=selected>{name}</option> }
                    }
                />
            </select>
        </label>
    }
}

/// `throughput · C=8` or `context · 8k tokens`.
fn point_name(b: &Bundle, sweep: usize, point: usize) -> String {
    let Some((s, p)) = b
        .sweeps
        .get(sweep)
        .and_then(|s| Some((s, s.points.get(point)?)))
    else {
        return "?".into();
    };
    match s.kind {
        SweepKind::Context => format!(
            "context · {} input tokens",
            format_tokens(p.input_len as f64)
        ),
        _ => format!("throughput · C={}", p.concurrency),
    }
}

/// Counts and flags of the selected point.
fn point_facts(b: &Bundle, sel: Selection) -> impl IntoView + use<> {
    let p = b
        .sweeps
        .get(sel.sweep)
        .and_then(|s| s.points.get(sel.point));
    let (counts, flags) = match p {
        Some(p) => {
            let ok = p.requests.iter().filter(|r| r.is_ok()).count();
            let counts = format!(
                "{} requests: {ok} ok, {} failed; output length {} tokens asked",
                p.requests.len(),
                p.requests.len() - ok,
                p.output_len
            );
            let flags: Vec<String> = p
                .flags
                .iter()
                .map(|f| format!("⚠ {}: {}", f.kind.as_str(), f.message))
                .collect();
            (counts, flags)
        }
        None => (String::new(), Vec::new()),
    };
    view! {
        <div class="point-facts">
            <p>{counts}</p>
            {flags.into_iter().map(|f| view! { <p class="flag">{f}</p> }).collect_view()}
        </div>
    }
}
