//! A panic shows its message in the page instead of leaving it blank.

use wasm_bindgen::JsCast;

/// Installs the hook: the message goes to the console and into `#fatal`.
pub(crate) fn install() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string();
        web_sys::console::error_1(&msg.clone().into());
        show(&msg);
    }));
}

fn show(msg: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Some(el) = doc
        .get_element_by_id("fatal")
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    else {
        return;
    };
    el.set_text_content(Some(&format!(
        "The viewer stopped because of an internal error. Reload the page to start again; \
         please report this message:\n\n{msg}"
    )));
    el.set_hidden(false);
}
