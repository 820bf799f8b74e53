//! The main layout once runs are loaded: the run list beside the tabbed views.

use leptos::prelude::*;
use llmsweep_shared::charts::ChartKind;

use super::chart::ChartGrid;
use super::compare::CompareView;
use super::requests::RequestsView;
use super::runs::RunList;
use crate::app::Ctx;
use crate::state::Tab;

#[component]
pub fn Main(ctx: Ctx) -> impl IntoView {
    let tab = Memo::new(move |_| ctx.state.with(|s| s.tab));
    view! {
        <div class="layout">
            <aside class="sidebar" aria-label="Runs">
                <RunList ctx=ctx />
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
                        Tab::Requests => view! { <RequestsView ctx=ctx /> }.into_any(),
                        Tab::Compare => view! { <CompareView ctx=ctx /> }.into_any(),
                    }}
                </div>
            </main>
        </div>
    }
}

#[component]
fn Tabs(ctx: Ctx, tab: Memo<Tab>) -> impl IntoView {
    view! {
        <nav class="tabs" role="tablist" aria-label="Views">
            {Tab::ALL
                .into_iter()
                .map(|t| {
                    view! {
                        <button
                            role="tab"
                            class="tab"
                            class:active=move || tab.get() == t
                            aria-selected=move || (tab.get() == t).to_string()
                            data-tab=t.title()
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
