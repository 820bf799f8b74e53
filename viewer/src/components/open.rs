//! Getting bundles in: the open button, the empty state, and the list of files that failed.

use leptos::html::Input;
use leptos::prelude::*;

use crate::app::{Ctx, load_files, load_urls};
use crate::state::LoadError;
use crate::web::files;

/// A button that opens the file picker (several files at once).
#[component]
pub fn OpenButton(ctx: Ctx, #[prop(optional)] primary: bool) -> impl IntoView {
    let input = NodeRef::<Input>::new();
    let on_change = move |_| {
        if let Some(el) = input.get() {
            if let Some(list) = el.files() {
                load_files(ctx, files::list(&list));
            }
            // Picking the same file again should load it again.
            el.set_value("");
        }
    };
    view! {
        <input
            node_ref=input
            type="file"
            multiple
            accept=".json,.gz,application/json,application/gzip"
            class="visually-hidden"
            tabindex="-1"
            aria-hidden="true"
            data-testid="file-input"
            on:change=on_change
        />
        <button
            class="button"
            class:primary=primary
            on:click=move |_| {
                if let Some(el) = input.get() {
                    el.click();
                }
            }
        >
            "Open bundles…"
        </button>
    }
}

/// What a new user sees: how to get a bundle in, and a sample to try.
#[component]
pub fn EmptyState(ctx: Ctx) -> impl IntoView {
    view! {
        <section class="empty">
            <h2>"Look at an LLM server benchmark"</h2>
            <p>
                "Drop one or more llmsweep bundles (" <code>".json"</code> " or "
                <code>".json.gz"</code> ") anywhere on this page, or open them:"
            </p>
            <div class="empty-actions">
                <OpenButton ctx=ctx primary=true />
                <button
                    class="button"
                    on:click=move |_| load_urls(ctx, vec!["sample.json".to_string()])
                >
                    "Open the sample bundle"
                </button>
            </div>
            <p>
                "No bundle yet? " <code>"llmsweep demo"</code>
                " benchmarks a built-in simulated server in about a minute; "
                <code>"llmsweep run --url http://127.0.0.1:30000 --label myhost"</code>
                " benchmarks your own. Load several bundles to overlay and compare them."
            </p>
            <p class="hint">
                "A bundle can also be named in the address: " <code>"?bundle=URL"</code>
                " (on this site; repeat it for more), and the view to open: " <code>"&tab=compare"</code> "."
            </p>
        </section>
    }
}

/// Files that could not be loaded, each with its reason; dismissable. Keyed by error, so a new
/// one is announced alone and the others (and a focused Dismiss) stay as they are.
#[component]
pub fn ErrorList(ctx: Ctx) -> impl IntoView {
    let state = ctx.state;
    view! {
        <div class="errors" role="alert" aria-live="assertive">
            <For
                each=move || state.with(|s| s.errors().to_vec())
                key=|e| e.id
                children=move |e: LoadError| {
                    let id = e.id;
                    view! {
                        <div class="error" data-testid="load-error">
                            <span>
                                <strong>{e.source}</strong>
                                " could not be loaded: "
                                {e.reason}
                            </span>
                            <button
                                class="icon"
                                aria-label="Dismiss"
                                on:click=move |_| state.update(|s| s.dismiss_error(id))
                            >
                                "×"
                            </button>
                        </div>
                    }
                }
            />
        </div>
    }
}
