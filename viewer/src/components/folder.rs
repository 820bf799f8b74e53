//! The folder list of a page served by `llmsweep view`: the folder's bundles to pick from,
//! loaded ones marked, unreadable ones with their reason.

use leptos::prelude::*;

use crate::app::{Ctx, load_urls, read_folder};
use crate::state::view_model::{FolderRow, FolderStatus};

/// The addresses of the readable bundles not open yet.
fn unopened(rows: &[FolderRow]) -> Vec<String> {
    rows.iter()
        .filter(|r| !r.loaded && r.error.is_none())
        .map(|r| r.url.clone())
        .collect()
}

/// Rows of the folder list shown at first, and added by each "show more": a bucket of ten
/// thousand runs is a page, not a list a hundred thousand pixels tall.
const PAGE: usize = 100;

/// The folder's bundles; `wide` on the page without runs, else in the sidebar.
#[component]
pub fn FolderList(ctx: Ctx, #[prop(optional)] wide: bool) -> impl IntoView {
    let state = ctx.state;
    let name = Memo::new(move |_| state.with(|s| s.folder_name()));
    let status = Memo::new(move |_| state.with(|s| s.folder_status()));
    let rows = Memo::new(move |_| state.with(|s| s.folder_rows()));
    let shown = RwSignal::new(PAGE);
    let hidden = Memo::new(move |_| rows.with(|r| r.len().saturating_sub(shown.get())));
    let closed = Memo::new(move |_| rows.with(|r| unopened(r)));
    view! {
        <section class="folder" class:wide=wide data-testid="folder" aria-label="Bundles in the folder">
            <div class="folder-head">
                <h2 class=if wide { "folder-title" } else { "side-title" }>
                    "Folder " <code>{move || name.get()}</code>
                </h2>
                <button
                    class="small"
                    title="Read the folder again for new bundles"
                    on:click=move |_| read_folder(ctx)
                >
                    "Refresh"
                </button>
                {move || {
                    let urls = closed.get();
                    (urls.len() > 1)
                        .then(|| {
                            view! {
                                <button
                                    class="small"
                                    title="Open every readable bundle not open yet"
                                    on:click=move |_| load_urls(ctx, urls.clone())
                                >
                                    "Open all"
                                </button>
                            }
                        })
                }}
            </div>
            {wide
                .then(|| {
                    view! {
                        <p class="hint">
                            "Pick a bundle to open it; pick several to overlay and compare them. "
                            "Bundles written later appear when the page is reloaded."
                        </p>
                    }
                })}
            {move || match status.get() {
                FolderStatus::Reading => view! { <p class="hint">"Reading the folder…"</p> }.into_any(),
                FolderStatus::Failed(e) => {
                    view! { <p class="folder-error" role="alert">{e}</p> }.into_any()
                }
                FolderStatus::Empty => {
                    view! {
                        <p class="hint">
                            "No bundles here yet. A sweep run with " <code>"--out"</code>
                            " this folder writes one; then reload the page."
                        </p>
                    }
                        .into_any()
                }
                FolderStatus::Listed => {
                    view! {
                        <ul class="folder-list">
                            <For
                                each=move || {
                                    rows.with(|r| r.iter().take(shown.get()).cloned().collect::<Vec<_>>())
                                }
                                key=|r| r.clone()
                                children=move |r| row(ctx, r)
                            />
                        </ul>
                        {move || {
                            let n = hidden.get();
                            (n > 0)
                                .then(|| {
                                    view! {
                                        <button
                                            class="small"
                                            data-testid="folder-more"
                                            on:click=move |_| shown.update(|s| *s += PAGE)
                                        >
                                            {format!(
                                                "Show {} more ({n} not shown)",
                                                n.min(PAGE),
                                            )}
                                        </button>
                                    }
                                })
                        }}
                    }
                        .into_any()
                }
            }}
        </section>
    }
}

fn row(ctx: Ctx, r: FolderRow) -> impl IntoView {
    let FolderRow {
        name,
        url,
        label,
        detail,
        error,
        loaded,
        simulated,
        complete,
        imported_from,
    } = r;
    let unreadable = error.is_some();
    let body = match error {
        Some(reason) => view! {
            <div class="folder-pick">
                <span class="folder-label">{name.clone()}</span>
                <span class="folder-detail">{detail}</span>
                <span class="folder-error">"Cannot be opened: " {reason}</span>
            </div>
        }
        .into_any(),
        None => {
            let title = if loaded {
                format!("{name} is open")
            } else {
                format!("Open {name}")
            };
            view! {
                <button
                    class="folder-pick"
                    title=title
                    disabled=loaded
                    on:click=move |_| load_urls(ctx, vec![url.clone()])
                >
                    <span class="folder-line">
                        <span class="folder-label">{label}</span>
                        {loaded.then(|| view! { <span class="badge open">"✓ open"</span> })}
                        {simulated.then(|| view! { <span class="badge sim">"simulated"</span> })}
                        {imported_from.map(|tool| view! {
                            <span class="badge imported" title=format!("Imported from {tool}: its definitions apply")>"imported"</span>
                        })}
                        {(!complete).then(|| view! { <span class="badge warn">"incomplete"</span> })}
                    </span>
                    <span class="folder-name">{name.clone()}</span>
                    <span class="folder-detail">{detail}</span>
                </button>
            }
            .into_any()
        }
    };
    view! {
        <li
            class="folder-entry"
            class:loaded=loaded
            class:unreadable=unreadable
            data-testid="folder-entry"
            data-name=name
        >
            {body}
        </li>
    }
}
