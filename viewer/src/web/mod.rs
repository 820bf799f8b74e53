//! Browser glue: the canvas backend, files and downloads, the theme, the panic hook.

pub(crate) mod canvas;
pub(crate) mod export;
pub(crate) mod files;
pub(crate) mod panic;
pub(crate) mod theme;

/// The message of a JavaScript error value, for showing to a person.
pub(crate) fn js_error(e: &wasm_bindgen::JsValue) -> String {
    if let Some(s) = e.as_string() {
        return s;
    }
    js_sys::Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
