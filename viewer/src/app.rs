//! Start-up and the root component: panic hook, initial loads, drag and drop, the layout.

use leptos::prelude::*;
use leptos::task::spawn_local;
use llmsweep_shared::folder::FolderListing;
use web_sys::File;

use crate::components::{EmptyState, ErrorList, FolderList, HistoryView, Main, OpenButton};
use crate::state::{Folder, Tab, ViewerState};
use crate::web::{files, panic, theme};

/// What every component needs; all signals, so it is `Copy`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ctx {
    pub state: RwSignal<ViewerState>,
    /// `true` while the system prefers dark colors.
    pub dark: RwSignal<bool>,
    /// Bumped when the window is resized, so charts redraw at the new width.
    pub resize: RwSignal<u32>,
    /// Files and downloads still being read.
    pub pending: RwSignal<u32>,
}

/// Mounts the viewer on the page's `<body>`.
pub fn start() {
    panic::install();
    leptos::mount::mount_to_body(App);
}

/// Loads files one after the other, so runs appear (and get colors) in the order given.
pub(crate) fn load_files(ctx: Ctx, list: Vec<File>) {
    ctx.pending.update(|n| *n += list.len() as u32);
    spawn_local(async move {
        for f in list {
            let name = f.name();
            let parsed = files::read(&f).await.and_then(|b| crate::load::parse(&b));
            add(ctx, &name, parsed);
        }
    });
}

/// Fetches bundles from URLs, in order; a URL of another site is refused unless the page allows
/// it. A bundle of the served folder is named by its file name.
pub(crate) fn load_urls(ctx: Ctx, urls: Vec<String>) {
    ctx.pending.update(|n| *n += urls.len() as u32);
    spawn_local(async move {
        for url in urls {
            let parsed = match files::refused_origin(&url) {
                Some((origin, page)) => Err(crate::load::remote_refusal(&origin, &page)),
                None => files::fetch(&url)
                    .await
                    .and_then(|b| crate::load::parse(&b)),
            };
            let source = ctx.state.with_untracked(|s| s.source_of_url(&url));
            add(ctx, &source, parsed);
        }
    });
}

/// Reads the served folder's listing (again); the list shown until then stays.
pub(crate) fn read_folder(ctx: Ctx) {
    let Some(url) = files::folder_listing_url() else {
        return;
    };
    spawn_local(async move {
        let listed = files::fetch(&url).await.and_then(|bytes| {
            serde_json::from_slice::<FolderListing>(&bytes)
                .map_err(|e| format!("the listing is not what this viewer reads: {e}"))
        });
        ctx.state.update(|s| {
            s.folder = Some(match listed {
                Ok(l) => Folder::Listed(l),
                Err(e) => Folder::Failed(format!("The folder's list could not be read: {e}")),
            })
        });
    });
}

fn add(ctx: Ctx, source: &str, parsed: Result<llmsweep_shared::Bundle, String>) {
    ctx.state.update(|s| match parsed {
        Ok(b) => {
            s.add(source, b);
        }
        Err(e) => s.fail(source, &e),
    });
    ctx.pending.update(|n| *n = n.saturating_sub(1));
}

#[component]
fn App() -> impl IntoView {
    let ctx = Ctx {
        state: RwSignal::new(ViewerState::default()),
        dark: theme::dark_signal(),
        resize: RwSignal::new(0),
        pending: RwSignal::new(0),
    };
    ctx.state.update(|s| {
        let asked = files::query_tab().and_then(|t| Tab::from_name(&t));
        s.open_embedded(files::embedded(), asked);
        if files::folder_listing_url().is_some() {
            s.folder = Some(Folder::Reading);
        }
    });
    read_folder(ctx);
    load_urls(ctx, files::query_bundles());
    keep_address(ctx);
    let dragging = drag_and_drop(ctx);
    window_event_listener(leptos::ev::resize, move |_| ctx.resize.update(|n| *n += 1));
    let empty = Memo::new(move |_| ctx.state.with(|s| s.is_empty()));
    let has_folder = Memo::new(move |_| ctx.state.with(|s| s.folder.is_some()));
    view! {
        <header class="top">
            <h1>"llmsweep" <span class="subtitle">"viewer"</span></h1>
            <span class="pending" aria-live="polite">
                {move || match ctx.pending.get() {
                    0 => String::new(),
                    1 => "Loading 1 bundle…".to_string(),
                    n => format!("Loading {n} bundles…"),
                }}
            </span>
            <OpenButton ctx=ctx />
        </header>
        <ErrorList ctx=ctx />
        {move || {
            if empty.get() && has_folder.get() {
                view! {
                    <HistoryView ctx=ctx wide=true />
                    <FolderList ctx=ctx wide=true />
                    <EmptyState ctx=ctx />
                }
                    .into_any()
            } else if empty.get() {
                view! { <EmptyState ctx=ctx /> }.into_any()
            } else {
                view! { <Main ctx=ctx /> }.into_any()
            }
        }}
        <div class="drop-overlay" class:active=move || dragging.get() aria-hidden="true">
            "Drop bundles to add them"
        </div>
    }
}

/// With a served folder, the address follows the runs taken from it and the view, so reloading
/// the page (to see new bundles) keeps what is open.
fn keep_address(ctx: Ctx) {
    Effect::new(move |_| {
        let (urls, tab) = ctx.state.with(|s| (s.folder_urls(), s.tab));
        if let Some(urls) = urls {
            let tab = (tab != Tab::default()).then(|| tab.title().to_ascii_lowercase());
            files::set_address(&urls, tab.as_deref());
        }
    });
}

/// Files dropped anywhere on the page are loaded; returns whether a drag is over the page.
fn drag_and_drop(ctx: Ctx) -> RwSignal<bool> {
    let dragging = RwSignal::new(false);
    window_event_listener(leptos::ev::dragover, move |e| {
        e.prevent_default();
        dragging.set(true);
    });
    window_event_listener(leptos::ev::dragleave, move |e| {
        if e.related_target().is_none() {
            dragging.set(false);
        }
    });
    window_event_listener(leptos::ev::drop, move |e| {
        e.prevent_default();
        dragging.set(false);
        if let Some(list) = e.data_transfer().and_then(|d| d.files()) {
            load_files(ctx, files::list(&list));
        }
    });
    dragging
}
