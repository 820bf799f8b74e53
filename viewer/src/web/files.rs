//! Where bundles come from in a browser: picked or dropped files, `?bundle=URL`, bundles
//! embedded in the page as `<script type="application/json" class="llmsweep-bundle">`, and the
//! folder listing a page served by `llmsweep view` announces.

use js_sys::Uint8Array;
use llmsweep_shared::folder::{FOLDER_META, REMOTE_BUNDLES_META, bundle_name};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, FileList, Response};

use super::js_error;

/// The files of a file list (from a picker or a drop), in order.
pub(crate) fn list(files: &FileList) -> Vec<File> {
    (0..files.length()).filter_map(|i| files.get(i)).collect()
}

/// A file's bytes.
pub(crate) async fn read(file: &File) -> Result<Vec<u8>, String> {
    let buf = JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| format!("could not be read: {}", js_error(&e)))?;
    Ok(Uint8Array::new(&buf).to_vec())
}

/// The bytes at `url`, fetched over HTTP.
pub(crate) async fn fetch(url: &str) -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|e| format!("could not be fetched: {}", js_error(&e)))?;
    let resp: Response = resp.dyn_into().map_err(|_| "the fetch gave no response")?;
    if !resp.ok() {
        return Err(format!(
            "the server answered HTTP {} {}",
            resp.status(),
            resp.status_text()
        ));
    }
    let promise = resp.array_buffer().map_err(|e| js_error(&e))?;
    let buf = JsFuture::from(promise)
        .await
        .map_err(|e| format!("the download broke off: {}", js_error(&e)))?;
    Ok(Uint8Array::new(&buf).to_vec())
}

/// `(its origin, the page's)` when `url` (resolved against the page) is on another site than the
/// page and the page does not allow remote bundles
/// (`<meta name="llmsweep-remote-bundles" content="allow">`). A URL that does not parse is left
/// to the fetch, which says what is wrong with it.
pub(crate) fn refused_origin(url: &str) -> Option<(String, String)> {
    let window = web_sys::window()?;
    let doc = window.document()?;
    let allowed = doc
        .query_selector(&format!("meta[name='{REMOTE_BUNDLES_META}']"))
        .ok()
        .flatten()
        .and_then(|m| m.get_attribute("content"))
        .is_some_and(|c| c == "allow");
    if allowed {
        return None;
    }
    let location = window.location();
    let resolved = web_sys::Url::new_with_base(url, &location.href().ok()?).ok()?;
    let (origin, page) = (resolved.origin(), location.origin().ok()?);
    (origin != page).then_some((origin, page))
}

fn query() -> Option<web_sys::UrlSearchParams> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search).ok()
}

/// The `tab` query parameter of the page's URL.
pub(crate) fn query_tab() -> Option<String> {
    query()?.get("tab")
}

/// Every `bundle` query parameter of the page's URL, in order.
pub(crate) fn query_bundles() -> Vec<String> {
    let Some(params) = query() else {
        return Vec::new();
    };
    params
        .get_all("bundle")
        .iter()
        .filter_map(|v| v.as_string())
        .filter(|v| !v.is_empty())
        .collect()
}

/// `(name, bytes)` of each bundle embedded in the page: JSON text in a
/// `<script type="application/json" class="llmsweep-bundle">`, or gzip in base64 in one with
/// `data-encoding="gzip-base64"` (as `llmsweep report` writes them). The name is the element's
/// `data-name`, else its `id`, else "embedded bundle N". A base64 body that does not decode
/// comes through as its text, so loading it reports what is wrong with it.
pub(crate) fn embedded() -> Vec<(String, Vec<u8>)> {
    let Some(window) = web_sys::window() else {
        return Vec::new();
    };
    let Some(doc) = window.document() else {
        return Vec::new();
    };
    let Ok(nodes) = doc.query_selector_all("script.llmsweep-bundle") else {
        return Vec::new();
    };
    (0..nodes.length())
        .filter_map(|i| nodes.item(i)?.dyn_into::<web_sys::Element>().ok())
        .enumerate()
        .map(|(i, el)| {
            let name = el
                .get_attribute("data-name")
                .or_else(|| Some(el.id()).filter(|s| !s.is_empty()))
                .unwrap_or_else(|| format!("embedded bundle {}", i + 1));
            let text = el.text_content().unwrap_or_default();
            let bytes = match el.get_attribute("data-encoding").as_deref() {
                Some("gzip-base64") => match window.atob(text.trim()) {
                    // `atob` gives one char per byte.
                    Ok(binary) => binary.chars().map(|c| c as u32 as u8).collect(),
                    Err(_) => text.into_bytes(),
                },
                _ => text.into_bytes(),
            };
            (name, bytes)
        })
        .collect()
}

/// The URL of the folder listing, when the server announced one with
/// `<meta name="llmsweep-folder" content="URL">`.
pub(crate) fn folder_listing_url() -> Option<String> {
    let doc = web_sys::window()?.document()?;
    let meta = doc
        .query_selector(&format!("meta[name='{FOLDER_META}']"))
        .ok()??;
    meta.get_attribute("content").filter(|c| !c.is_empty())
}

/// Rewrites the page's address (without a new history entry) so a reload opens the same runs
/// of the folder and the same view: `bundle` parameters that are not the folder's are kept.
pub(crate) fn set_address(folder_urls: &[String], tab: Option<&str>) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Ok(params) = web_sys::UrlSearchParams::new() else {
        return;
    };
    let others = query_bundles()
        .into_iter()
        .filter(|u| bundle_name(u).is_none());
    for url in others.chain(folder_urls.iter().cloned()) {
        params.append("bundle", &url);
    }
    if let Some(tab) = tab {
        params.append("tab", tab);
    }
    let search = String::from(params.to_string());
    let location = window.location();
    let now = location.search().unwrap_or_default();
    if now.trim_start_matches('?') == search {
        return;
    }
    let path = location.pathname().unwrap_or_else(|_| "./".into());
    let address = if search.is_empty() {
        path
    } else {
        format!("{path}?{search}")
    };
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&address));
    }
}
