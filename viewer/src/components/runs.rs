//! The run list: each run's facts and color, show/hide, rename, remove.

use leptos::prelude::*;

use llmsweep_shared::shorten;

use crate::app::Ctx;
use crate::state::view_model::RunFacts;
use crate::state::{RunId, ViewerState};

#[component]
pub fn RunList(ctx: Ctx) -> impl IntoView {
    let state = ctx.state;
    view! {
        <h2 class="side-title">"Runs"</h2>
        <ul class="runs">
            // Keyed by run: a change to one run (or a new one) leaves the other rows, with their
            // focus and an open rename, as they are.
            <For
                each=move || state.with(|s| s.run_ids())
                key=|id| *id
                children=move |id| run_item(state, id)
            />
        </ul>
    }
}

/// Run `id`'s row: what a run never changes (its facts, its file) is drawn once; its label, color
/// and visibility follow the state.
fn run_item(state: RwSignal<ViewerState>, id: RunId) -> Option<impl IntoView + use<>> {
    let row = Memo::new(move |_| state.with(|s| s.run_row(id)));
    let (f, source) = state.with_untracked(|s| {
        s.run(id)
            .map(|r| (Some(RunFacts::of(&r.bundle)), r.source.clone()))
            .unwrap_or_default()
    });
    let f = f?;
    let label = move || row.with(|r| r.as_ref().map(|r| r.label.clone()).unwrap_or_default());
    let visible = move || row.with(|r| r.as_ref().is_some_and(|r| r.visible));
    let editing = RwSignal::new(false);
    Some(view! {
        <li
            class="run"
            class:hidden-run=move || !visible()
            style=move || row.with(|r| r.as_ref().map(|r| format!("--run-color: {}", r.color)))
            data-testid="run"
            data-label=label
        >
            <div class="run-head">
                <input
                    type="checkbox"
                    prop:checked=visible
                    aria-label=move || format!("Show {} in charts", label())
                    on:change=move |_| state.update(|s| s.toggle(id))
                />
                <span class="swatch" aria-hidden="true"></span>
                <span
                    class="run-label"
                    title=move || row.with(|r| r.as_ref().and_then(|r| r.original.clone()))
                >
                    {label}
                </span>
                <button class="icon" title="Rename for display" on:click=move |_| editing.set(true)>
                    "✎"
                </button>
                <button
                    class="icon"
                    title="Remove"
                    aria-label=move || format!("Remove {}", label())
                    on:click=move |_| state.update(|s| s.remove(id))
                >
                    "×"
                </button>
            </div>
            {move || editing.get().then(|| rename_box(state, id, editing))}
            {badges(&f)}
            {f.headlines.iter().map(|h| view! { <p class="headline" data-testid="headline">{h.clone()}</p> }).collect_view()}
            {f.peaks.clone().map(|p| view! {
                <p class="peaks" data-testid="peaks" title="The server's own gauges, sampled during each point">{p}</p>
            })}
            <dl class="facts">
                <dt>"model"</dt>
                <dd><Shown text=f.model.clone() /></dd>
                <dt>"engine"</dt>
                <dd><Shown text=f.engine.clone() /></dd>
                {(!f.hardware.is_empty())
                    .then(|| view! { <dt>"hardware"</dt><dd><Shown text=f.hardware.clone() /></dd> })}
                {f.gpus.clone().map(|g| view! { <dt>"GPUs"</dt><dd data-testid="gpus">{g}</dd> })}
                {f.speculative.clone().map(|s| view! {
                    <dt>"speculative"</dt><dd data-testid="speculative"><Shown text=s /></dd>
                })}
                <dt>"date"</dt>
                <dd>{f.date.clone()}</dd>
                <dt>"points"</dt>
                <dd>{f.points.clone()}</dd>
                <dt>"status"</dt>
                <dd>{if f.complete { "complete" } else { "interrupted" }}</dd>
                <dt>"file"</dt>
                <dd class="source"><Shown text=source /></dd>
            </dl>
            {full_label(state, id)}
            {imported_details(&f)}
        </li>
    })
}

/// A text from a bundle (a server's or a file's): past `max` characters, its beginning and its
/// length, and the whole text one click away in a read-only box. Laid out whole as a line, a
/// megabyte froze the tab for over a minute; a text box holds it without laying it out as words.
#[component]
fn Shown(text: String, #[prop(default = shorten::FACT_CHARS)] max: usize) -> impl IntoView {
    if !shorten::is_clipped(&text, max) {
        return text.into_any();
    }
    let short = shorten::clip(&text, max).into_owned();
    let open = RwSignal::new(false);
    let full = StoredValue::new(text);
    view! {
        <span class="clipped">{short}</span>
        " "
        <button class="show-all" on:click=move |_| open.update(|o| *o = !*o)>
            {move || if open.get() { "hide" } else { "show all" }}
        </button>
        {move || {
            open.get()
                .then(|| view! { <textarea class="full-text" readonly prop:value=full.get_value()></textarea> })
        }}
    }
    .into_any()
}

/// The bundle's own label in full, under the facts, when the list shows it shortened.
fn full_label(state: RwSignal<ViewerState>, id: RunId) -> Option<impl IntoView + use<>> {
    let label = state.with_untracked(|s| s.run(id).map(|r| r.bundle.label.clone()))?;
    shorten::is_clipped(&label, shorten::LABEL_CHARS).then(|| {
        view! {
            <p class="long-label">"label: " <Shown text=label max=shorten::LABEL_CHARS /></p>
        }
    })
}

/// For an imported run: the source's definitions and what the import left out, folded.
fn imported_details(f: &RunFacts) -> Option<impl IntoView + use<>> {
    f.imported.as_ref()?;
    let defs = f.source_definitions.clone();
    let notes = f.import_notes.clone();
    Some(view! {
        <details class="source-defs" data-testid="source-definitions">
            <summary>"the source's definitions"</summary>
            <dl>
                {defs.into_iter().map(|(k, v)| view! { <dt>{shorten::label(&k).into_owned()}</dt><dd><Shown text=v /></dd> }).collect_view()}
            </dl>
            {(!notes.is_empty()).then(|| view! {
                <p class="import-notes-title">"left out on import"</p>
                <ul class="import-notes">
                    {notes.into_iter().map(|n| view! { <li><Shown text=n /></li> }).collect_view()}
                </ul>
            })}
        </details>
    })
}

fn badges(f: &RunFacts) -> impl IntoView + use<> {
    let flags = (!f.flags.is_empty()).then(|| {
        let text = format!("flags: {}", f.flags.join(", "));
        view! { <span class="badge warn" title="Points with warnings; hover them in the charts">{text}</span> }
    });
    view! {
        <div class="badges">
            {f.simulated
                .then(|| {
                    view! {
                        <span
                            class="badge sim"
                            title="Measured against llmsweep's simulated server: the numbers describe a model, not hardware"
                        >
                            "simulated"
                        </span>
                    }
                })}
            {f.imported.clone().map(|line| {
                view! {
                    <span class="badge imported" data-testid="imported" title=line>
                        "imported"
                    </span>
                }
            })}
                        {(!f.complete)
                .then(|| {
                    view! {
                        <span class="badge warn" title="The run was interrupted; the bundle holds what finished">
                            "incomplete"
                        </span>
                    }
                })}
            {flags}
        </div>
    }
}

fn rename_box(state: RwSignal<ViewerState>, id: RunId, editing: RwSignal<bool>) -> impl IntoView {
    let current = state.with_untracked(|s| s.run(id).map(|r| r.label.clone()).unwrap_or_default());
    let commit = move |value: String| {
        editing.set(false);
        state.update(|s| s.rename(id, &value));
    };
    view! {
        <input
            class="rename"
            type="text"
            value=current
            aria-label="New label (empty restores the bundle's own)"
            autofocus
            on:keydown=move |e| match e.key().as_str() {
                "Enter" => commit(event_target_value(&e)),
                "Escape" => editing.set(false),
                _ => {}
            }
            on:blur=move |e| {
                if editing.get_untracked() {
                    commit(event_target_value(&e))
                }
            }
        />
    }
}
