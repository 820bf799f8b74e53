//! The main layout once runs or selftests are loaded: their lists beside the tabbed views.

use leptos::prelude::*;
use llmsweep_shared::charts::ChartKind;

use super::chart::ChartGrid;
use super::compare::CompareView;
use super::folder::FolderList;
use super::history::HistoryView;
use super::requests::RequestsView;
use super::runs::RunList;
use super::selftest::{ClientView, SelftestList};
use crate::app::Ctx;
use crate::state::Tab;

#[component]
pub fn Main(ctx: Ctx) -> impl IntoView {
    let tab = Memo::new(move |_| ctx.state.with(|s| s.shown_tab()));
    let has_runs = Memo::new(move |_| ctx.state.with(|s| !s.runs().is_empty()));
    // A memo, so the folder list is not put on the page again at every change of the state.
    let has_folder = Memo::new(move |_| ctx.state.with(|s| s.folder.is_some()));
    view! {
        <div class="layout">
            <aside class="sidebar" aria-label="Runs">
                {move || has_runs.get().then(|| view! { <RunList ctx=ctx /> })}
                <SelftestList ctx=ctx />
                {move || has_folder.get().then(|| view! { <FolderList ctx=ctx /> })}
            </aside>
            <main class="content">
                <Tabs ctx=ctx tab=tab />
                <div class="panel" role="tabpanel">
                    {move || match tab.get() {
                        Tab::Throughput => {
                            view! { <ChartGrid ctx=ctx kinds=ChartKind::THROUGHPUT.to_vec() /> }
                                .into_any()
                        }
                        Tab::Context => {
                            view! { <ChartGrid ctx=ctx kinds=ChartKind::CONTEXT.to_vec() /> }
                                .into_any()
                        }
                        Tab::Rate => {
                            view! { <ChartGrid ctx=ctx kinds=ChartKind::RATE.to_vec() /> }
                                .into_any()
                        }
                        Tab::Requests => view! { <RequestsView ctx=ctx /> }.into_any(),
                        Tab::Compare => view! { <CompareView ctx=ctx /> }.into_any(),
                        Tab::Client => view! { <ClientView ctx=ctx /> }.into_any(),
                        Tab::History => view! { <HistoryView ctx=ctx /> }.into_any(),
                    }}
                </div>
            </main>
        </div>
    }
}

/// The views there is something to show in, as tabs; left and right arrows move between them.
#[component]
fn Tabs(ctx: Ctx, tab: Memo<Tab>) -> impl IntoView {
    let tabs = Memo::new(move |_| ctx.state.with(|s| s.tabs()));
    let on_key = move |e: web_sys::KeyboardEvent| {
        let step: isize = match e.key().as_str() {
            "ArrowRight" => 1,
            "ArrowLeft" => -1,
            _ => return,
        };
        let all = tabs.get_untracked();
        if all.is_empty() {
            return;
        }
        let now = all
            .iter()
            .position(|t| *t == tab.get_untracked())
            .unwrap_or(0);
        let next = all[(now as isize + step).rem_euclid(all.len() as isize) as usize];
        ctx.state.update(|s| s.tab = next);
        focus_tab(next);
    };
    view! {
        <nav class="tabs" role="tablist" aria-label="Views" on:keydown=on_key>
            {move || tabs
                .get()
                .into_iter()
                .map(|t| {
                    view! {
                        <button
                            role="tab"
                            class="tab"
                            class:active=move || tab.get() == t
                            aria-selected=move || (tab.get() == t).to_string()
                            tabindex=move || if tab.get() == t { "0" } else { "-1" }
                            data-tab=t.title()
                            title=(t == Tab::Client)
                                .then_some("The client's own capacity (llmsweep selftest), not a server's")
                            on:click=move |_| ctx.state.update(|s| s.tab = t)
                        >
                            {t.title()}
                        </button>
                    }
                })
                .collect_view()}
        </nav>
    }
}

fn focus_tab(t: Tab) {
    use wasm_bindgen::JsCast;
    let el = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| {
            d.query_selector(&format!("[data-tab={}]", t.title()))
                .ok()
                .flatten()
        })
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(el) = el {
        let _ = el.focus();
    }
}
