//! Light or dark, following the system setting as it changes.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

const QUERY: &str = "(prefers-color-scheme: dark)";

/// A signal that is `true` while the system prefers dark colors.
pub(crate) fn dark_signal() -> RwSignal<bool> {
    let dark = RwSignal::new(false);
    let Some(mql) = web_sys::window().and_then(|w| w.match_media(QUERY).ok().flatten()) else {
        return dark;
    };
    dark.set(mql.matches());
    let on_change = Closure::<dyn Fn(web_sys::MediaQueryListEvent)>::new(
        move |e: web_sys::MediaQueryListEvent| dark.set(e.matches()),
    );
    mql.set_onchange(Some(on_change.as_ref().unchecked_ref()));
    // The listener lives as long as the page.
    on_change.forget();
    dark
}
