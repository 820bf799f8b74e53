//! A chart on a canvas: drawn by the shared chart code, with hover, click-through and export.

use leptos::html::Canvas as CanvasEl;
use leptos::prelude::*;
use llmsweep_shared::bundle::SweepKind;
use llmsweep_shared::charts::{self, ChartKind, Hit, Plot, PointRef, Theme};
use plotters::prelude::IntoDrawingArea;

use crate::app::Ctx;
use crate::web::{canvas::Canvas, export};

/// Chart height in CSS pixels; the width follows the page.
const HEIGHT: u32 = 380;

/// The charts of one view, each over the shown runs.
#[component]
pub fn ChartGrid(ctx: Ctx, kinds: Vec<ChartKind>) -> impl IntoView {
    let state = ctx.state;
    // Why the last point chosen opened nothing (no per-request records).
    let note = RwSignal::new(None::<String>);
    let pick = Callback::new(move |p: PointRef| {
        let done = state
            .try_update(|s| s.pick_shown(p.run, p.sweep, p.point))
            .unwrap_or(Ok(()));
        note.set(done.err());
    });
    let sweep = kinds.first().map_or(SweepKind::Throughput, |k| k.sweep());
    let warnings = Memo::new(move |_| state.with(|s| s.workload_warnings(sweep)));
    view! {
        {move || {
            let w = warnings.get();
            (!w.is_empty())
                .then(|| {
                    view! {
                        <div class="workload-warning" role="alert" data-testid="workload-warning">
                            <strong>"⚠ Different workloads overlaid. "</strong>
                            {w.into_iter().map(|l| view! { <p>{l}</p> }).collect_view()}
                        </div>
                    }
                })
        }}
        {move || note.get().map(|n| view! {
            <p class="pick-note" role="status" data-testid="pick-note">
                {n}
                <button class="small" on:click=move |_| note.set(None) aria-label="Dismiss">"×"</button>
            </p>
        })}
        <div class="grid">
            {kinds
                .into_iter()
                .map(|k| {
                    let plot = Memo::new(move |_| state.with(|s| charts::build(k, &s.chart_runs())));
                    let across = Callback::new(move |p: PointRef| state.with_untracked(|s| s.hover_across(k, p)));
                    // The acceptance chart only when a run shown has speculative decoding.
                    let optional = k == ChartKind::Acceptance;
                    move || {
                        (!optional || !plot.with(|p| p.is_empty())).then(|| {
                            view! { <ChartBox ctx=ctx plot=plot slug=k.slug() on_pick=pick across=across /> }
                        })
                    }
                })
                .collect_view()}
        </div>
    }
}

fn theme(dark: bool) -> Theme {
    if dark { Theme::DARK } else { Theme::LIGHT }
}

/// Draws `plot` on `el` at `size` CSS pixels; returns where each mark landed.
fn draw_on(
    el: &web_sys::HtmlCanvasElement,
    plot: &Plot,
    theme: &Theme,
    size: (u32, u32),
) -> Result<Vec<Hit>, String> {
    let backend = Canvas::new(el, size).ok_or("this browser offers no 2D canvas")?;
    let root = backend.into_drawing_area();
    let hits = charts::draw(&root, plot, theme).map_err(|e| e.to_string())?;
    root.present().map_err(|e| e.to_string())?;
    Ok(hits)
}

/// One chart with its tooltip and export buttons.
#[component]
pub fn ChartBox(
    ctx: Ctx,
    plot: Memo<Plot>,
    slug: &'static str,
    #[prop(optional)] on_pick: Option<Callback<PointRef>>,
    /// What the tooltip adds under a mark's own text (every run at its level).
    #[prop(optional)]
    across: Option<Callback<PointRef, String>>,
    /// Height in CSS pixels; [`HEIGHT`] when not given.
    #[prop(optional)]
    height: Option<u32>,
) -> impl IntoView {
    let height = height.unwrap_or(HEIGHT);
    let canvas = NodeRef::<CanvasEl>::new();
    let keys = Keys::new(on_pick, across);
    let (hits, tip) = (keys.hits, keys.tip);
    let size = StoredValue::new((720u32, height));
    let failure = RwSignal::new(None::<String>);
    let draws = StoredValue::new(0u32);
    Effect::new(move |_| {
        let dark = ctx.dark.get();
        ctx.resize.track();
        let Some(el) = canvas.get() else { return };
        let width = el.parent_element().map(|p| p.client_width()).unwrap_or(720);
        let s = (width.max(320) as u32, height);
        size.set_value(s);
        keys.unfocus();
        match plot.with(|p| draw_on(&el, p, &theme(dark), s)) {
            Ok(h) => {
                draws.update_value(|n| *n += 1);
                plot.with(|p| mark_drawn(&el, draws.get_value(), h.len(), p));
                hits.set_value(h);
                failure.set(None);
            }
            Err(e) => failure.set(Some(e)),
        }
    });
    let hit_at = move |e: &web_sys::MouseEvent| {
        hits.with_value(|h| charts::nearest(h, e.offset_x(), e.offset_y(), 10).cloned())
    };
    let on_move = move |e: web_sys::MouseEvent| {
        tip.set(hit_at(&e).map(|h| (h.x, h.y, tip_text(&h, across))));
    };
    let on_key = move |e: web_sys::KeyboardEvent| keys.press(&e);
    let on_click = move |e: web_sys::MouseEvent| keys.pick(hit_at(&e).and_then(|h| h.source));
    let png = move |_| report(failure, export_png(canvas, slug));
    let svg = move |_| {
        let dark = ctx.dark.get_untracked();
        report(
            failure,
            plot.with(|p| export_svg(p, dark, size.get_value(), slug)),
        );
    };
    view! {
        <figure class="chart" data-chart=slug>
            <canvas
                node_ref=canvas
                role="img"
                aria-label=move || plot.with(|p| p.title.clone())
                tabindex="0"
                aria-description="Arrow keys move between points; Enter opens a point's requests"
                on:mousemove=on_move
                on:mouseleave=move |_| tip.set(None)
                on:click=on_click
                on:keydown=on_key
                on:blur=move |_| keys.unfocus()
            ></canvas>
            {move || tip.get().map(|(x, y, text)| tooltip(x, y, text, size.get_value().0))}
            <figcaption class="chart-actions">
                {move || failure.get().map(|f| view! { <span class="chart-error">{f}</span> })}
                <button class="small" on:click=png title="Download this chart as PNG">"PNG"</button>
                <button class="small" on:click=svg title="Download this chart as SVG">"SVG"</button>
            </figcaption>
        </figure>
    }
}

/// What was drawn, on the canvas's attributes, for tests and benchmarks that cannot read a
/// canvas's mind: how many times, how many marks, the rules' words.
fn mark_drawn(el: &web_sys::HtmlCanvasElement, draws: u32, marks: usize, p: &Plot) {
    let _ = el.set_attribute("data-draws", &draws.to_string());
    let _ = el.set_attribute("data-marks", &marks.to_string());
    let rules: Vec<&str> = p.rules.iter().map(|r| r.text.as_str()).collect();
    let _ = el.set_attribute("data-rules", &rules.join(" | "));
}

/// A mark's tooltip: its own text, then what `across` adds (every run at its level).
fn tip_text(h: &Hit, across: Option<Callback<PointRef, String>>) -> String {
    let more = match (across, h.source) {
        (Some(cb), Some(src)) => cb.run(src),
        _ => String::new(),
    };
    if more.is_empty() {
        h.text.clone()
    } else {
        format!("{}\n\n{more}", h.text)
    }
}

/// The keyboard on a chart: arrows walk the points, Enter opens a point's requests, Escape
/// hides the tooltip.
#[derive(Clone, Copy)]
struct Keys {
    hits: StoredValue<Vec<Hit>>,
    /// The point the keyboard is on, as an index into `hits`.
    focused: StoredValue<Option<usize>>,
    tip: RwSignal<Option<(i32, i32, String)>>,
    on_pick: Option<Callback<PointRef>>,
    across: Option<Callback<PointRef, String>>,
}

/// The chart as a PNG download, as the canvas shows it.
fn export_png(canvas: NodeRef<CanvasEl>, slug: &str) -> Result<(), String> {
    match canvas.get() {
        Some(el) => export::png(&el, &format!("{slug}.png")),
        None => Ok(()),
    }
}

/// The chart as an SVG download, drawn again at the canvas's size.
fn export_svg(p: &Plot, dark: bool, size: (u32, u32), slug: &str) -> Result<(), String> {
    let doc = charts::svg(p, &theme(dark), size).map_err(|e| e.to_string())?;
    export::text(&doc, "image/svg+xml", &format!("{slug}.svg"))
}

impl Keys {
    fn new(
        on_pick: Option<Callback<PointRef>>,
        across: Option<Callback<PointRef, String>>,
    ) -> Keys {
        Keys {
            hits: StoredValue::new(Vec::new()),
            focused: StoredValue::new(None),
            tip: RwSignal::new(None),
            on_pick,
            across,
        }
    }

    /// Opens the requests of the point at `source`, when there is one and a chart opens them.
    fn pick(self, source: Option<PointRef>) {
        if let (Some(cb), Some(src)) = (self.on_pick, source) {
            cb.run(src);
        }
    }

    /// No point is focused and no tooltip shown.
    fn unfocus(self) {
        self.focused.set_value(None);
        self.tip.set(None);
    }

    fn press(self, e: &web_sys::KeyboardEvent) {
        let forward = match e.key().as_str() {
            "ArrowRight" | "ArrowUp" => true,
            "ArrowLeft" | "ArrowDown" => false,
            "Enter" | " " => {
                let src = self
                    .focused
                    .get_value()
                    .and_then(|i| self.hits.with_value(|h| h.get(i).and_then(|h| h.source)));
                if self.on_pick.is_some() && src.is_some() {
                    e.prevent_default();
                }
                return self.pick(src);
            }
            "Escape" => return self.unfocus(),
            _ => return,
        };
        e.prevent_default();
        let next = self
            .hits
            .with_value(|h| charts::step(h, self.focused.get_value(), forward));
        self.focused.set_value(next);
        let at = |i: usize| {
            self.hits
                .with_value(|h| h.get(i).map(|h| (h.x, h.y, tip_text(h, self.across))))
        };
        self.tip.set(next.and_then(at));
    }
}

fn report(failure: RwSignal<Option<String>>, r: Result<(), String>) {
    if let Err(e) = r {
        failure.set(Some(format!("export failed: {e}")));
    }
}

/// The hover box, kept inside the chart.
fn tooltip(x: i32, y: i32, text: String, width: u32) -> impl IntoView {
    let left = if x + 340 > width as i32 {
        (x - 340).max(0)
    } else {
        x + 14
    };
    let style = format!("left: {left}px; top: {}px", y + 14);
    view! {
        <div class="tooltip" role="tooltip" aria-live="polite" style=style>
            {text}
        </div>
    }
}
