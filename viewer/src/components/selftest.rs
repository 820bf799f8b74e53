//! Selftests: in the sidebar, each loaded one as "client capacity of <host>"; in the Client view,
//! its tables (flat out, scheduled) and the loaded runs of its host set against its capacity.
//! Never drawn as a run: the numbers are the client's limits against llmsweep's own endpoint.

use leptos::prelude::*;
use llmsweep_shared::bundle::SelftestMode;
use llmsweep_shared::selftest::SelftestTable;

use crate::app::Ctx;
use crate::state::view_model::ClientCard;
use crate::state::{RunId, Tab, ViewerState};

/// The sidebar's list of loaded selftests; nothing while none is loaded.
#[component]
pub fn SelftestList(ctx: Ctx) -> impl IntoView {
    let state = ctx.state;
    let any = Memo::new(move |_| state.with(|s| !s.selftests().is_empty()));
    move || {
        any.get().then(|| {
            view! {
                <h2 class="side-title">"Client capacity"</h2>
                <ul class="runs selftests">
                    <For
                        each=move || state.with(|s| s.selftest_ids())
                        key=|id| *id
                        children=move |id| selftest_item(state, id)
                    />
                </ul>
            }
        })
    }
}

fn selftest_item(state: RwSignal<ViewerState>, id: RunId) -> Option<impl IntoView + use<>> {
    let card = state.with_untracked(|s| s.client_card(id))?;
    let v = card.view;
    Some(view! {
        <li class="run selftest-item" data-testid="selftest-item" data-host=v.host.clone()>
            <div class="run-head">
                <button
                    class="run-label link"
                    title="Show the client's capacity"
                    on:click=move |_| state.update(|s| s.tab = Tab::Client)
                >
                    {v.title.clone()}
                </button>
                <button
                    class="icon"
                    title="Remove"
                    aria-label=format!("Remove {}", v.title)
                    on:click=move |_| state.update(|s| s.remove(id))
                >
                    "×"
                </button>
            </div>
            <div class="badges">
                <span
                    class="badge selftest"
                    title="llmsweep selftest: the client against llmsweep's own loopback endpoint, not a server"
                >
                    "selftest"
                </span>
            </div>
            {v.capacity.clone().map(|c| view! { <p class="headline">{format!("capacity: {c}")}</p> })}
            <dl class="facts">
                <dt>"client"</dt>
                <dd>{v.machine.clone()}</dd>
                <dt>"file"</dt>
                <dd class="source">{card.source}</dd>
            </dl>
        </li>
    })
}

/// The Client view: every loaded selftest's card.
#[component]
pub fn ClientView(ctx: Ctx) -> impl IntoView {
    let state = ctx.state;
    let cards = Memo::new(move |_| {
        state.with(|s| {
            s.selftest_ids()
                .into_iter()
                .filter_map(|id| s.client_card(id))
                .collect::<Vec<_>>()
        })
    });
    move || cards.get().into_iter().map(card).collect_view()
}

fn card(c: ClientCard) -> impl IntoView {
    let v = c.view;
    view! {
        <section class="client-card" data-testid="selftest" data-host=v.host.clone()>
            <h2 class="client-title">{v.title.clone()}</h2>
            <p class="client-about" data-testid="selftest-about">{v.about.clone()}</p>
            <p class="client-machine">{format!("client: {}", v.machine)}</p>
            {v.capacity.clone().map(|cap| view! {
                <p class="client-capacity" data-testid="capacity">
                    <strong>"Capacity: "</strong>{cap}
                    " — a sweep level that streams more than half of it may be paced by the client."
                </p>
            })}
            {v.tables.into_iter().map(table).collect_view()}
            {(!v.notes.is_empty()).then(|| view! {
                <ul class="client-notes" data-testid="selftest-notes">
                    {v.notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                </ul>
            })}
            {(!c.shares.is_empty() || c.no_share.is_some()).then(|| view! {
                <h3 class="client-sub">{format!("Runs measured from {}", v.host)}</h3>
                {c.shares.into_iter().map(|l| view! { <p class="client-share" data-testid="capacity-share">{l}</p> }).collect_view()}
                {c.no_share.map(|l| view! { <p class="hint" data-testid="no-capacity-share">{l}</p> })}
            })}
            <p class="hint">{format!("file: {}", c.source)}</p>
        </section>
    }
}

fn table(t: SelftestTable) -> impl IntoView {
    let mode = match t.mode {
        SelftestMode::FlatOut => "flat_out",
        SelftestMode::Scheduled => "scheduled",
    };
    view! {
        <h3 class="client-sub">{t.title}</h3>
        <p class="hint">{t.explain}</p>
        <table class="selftest-table" data-mode=mode>
            <thead>
                <tr>{t.headers.iter().map(|h| view! { <th>{*h}</th> }).collect_view()}</tr>
            </thead>
            <tbody>
                {t.rows.into_iter().map(|r| view! {
                    <tr class:warn=r.warning data-c=r.concurrency>
                        {r.cells.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
    }
}
