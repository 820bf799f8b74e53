//! Start-up and the root component: panic hook, initial loads, drag and drop, the layout.

use leptos::prelude::*;
use leptos::task::spawn_local;
use web_sys::File;

use crate::components::{EmptyState, ErrorList, Main, OpenButton};
use crate::state::{Tab, ViewerState};
use crate::web::{files, panic, theme};

/// What every component needs; all signals, so it is `Copy`.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
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
pub fn load_files(ctx: Ctx, list: Vec<File>) {
    ctx.pending.update(|n| *n += list.len() as u32);
    spawn_local(async move {
        for f in list {
            let name = f.name();
            let parsed = files::read(&f).await.and_then(|b| crate::load::parse(&b));
            add(ctx, &name, parsed);
        }
    });
}

/// Fetches bundles from URLs, in order.
pub fn load_urls(ctx: Ctx, urls: Vec<String>) {
    ctx.pending.update(|n| *n += urls.len() as u32);
    spawn_local(async move {
        for url in urls {
            let parsed = files::fetch(&url)
                .await
                .and_then(|b| crate::load::parse(&b));
            add(ctx, &url, parsed);
        }
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
        if let Some(tab) = files::query_tab().and_then(|t| Tab::from_name(&t)) {
            s.tab = tab;
        }
        for (name, text) in files::embedded() {
            s.load_bytes(&name, text.as_bytes());
        }
    });
    load_urls(ctx, files::query_bundles());
    let dragging = drag_and_drop(ctx);
    window_event_listener(leptos::ev::resize, move |_| ctx.resize.update(|n| *n += 1));
    let empty = Memo::new(move |_| ctx.state.with(|s| s.runs().is_empty()));
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
            if empty.get() {
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
