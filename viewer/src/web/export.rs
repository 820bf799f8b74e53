//! Downloads: a chart as PNG (the canvas) or SVG (drawn again by the shared chart code), a table
//! as CSV.

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, HtmlCanvasElement, Url};

use super::js_error;

/// Offers `href` as a download named `name`.
fn download(href: &str, name: &str) -> Result<(), String> {
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: HtmlAnchorElement = doc
        .create_element("a")
        .map_err(|e| js_error(&e))?
        .dyn_into()
        .map_err(|_| "not an anchor")?;
    a.set_href(href);
    a.set_download(name);
    a.click();
    Ok(())
}

/// The canvas as a PNG file.
pub(crate) fn png(canvas: &HtmlCanvasElement, name: &str) -> Result<(), String> {
    let url = canvas.to_data_url().map_err(|e| js_error(&e))?;
    download(&url, name)
}

/// `text` as a file of MIME type `mime`.
pub(crate) fn text(text: &str, mime: &str, name: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = Blob::new_with_str_sequence_and_options(&parts, &opts).map_err(|e| js_error(&e))?;
    let url = Url::create_object_url_with_blob(&blob).map_err(|e| js_error(&e))?;
    let result = download(&url, name);
    // The download starts after the click returns; free the blob a while later.
    leptos::prelude::set_timeout(
        move || {
            let _ = Url::revoke_object_url(&url);
        },
        std::time::Duration::from_secs(60),
    );
    result
}
