//! The options of a run picker: the shown runs, keyed by run, each with its display label.

use leptos::prelude::*;

use crate::state::{RunId, ViewerState};

/// One `<option>` per shown run, its value the run's id; `chosen` is the selected one. A rename
/// or a new run changes one option, not the whole list under an open picker.
#[component]
pub fn RunOptions(
    state: RwSignal<ViewerState>,
    #[prop(into)] chosen: Signal<Option<RunId>>,
) -> impl IntoView {
    view! {
        <For
            each=move || state.with(|s| s.shown_ids())
            key=|id| *id
            children=move |id| {
                let label = Memo::new(move |_| {
                    state.with(|s| s.run(id).map(|r| r.label.clone()).unwrap_or_default())
                });
                view! {
                    <option value=id prop:selected=move || chosen.get() == Some(id)>
                        {move || label.get()}
                    </option>
                }
            }
        />
    }
}
