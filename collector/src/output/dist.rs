//! The built viewer (`dist/`, committed; CI fails when it is stale), embedded once in the binary
//! for both the single-file report and `llmsweep view`.

/// The viewer's page as trunk wrote it.
pub(crate) const INDEX_HTML: &str = include_str!("../../../dist/index.html");
/// wasm-bindgen's JavaScript glue.
pub(crate) const VIEWER_JS: &str = include_str!("../../../dist/llmsweep-viewer.js");
/// The viewer itself.
pub(crate) const VIEWER_WASM: &[u8] = include_bytes!("../../../dist/llmsweep-viewer_bg.wasm");
pub(crate) const VIEWER_CSS: &str = include_str!("../../../dist/style.css");
/// The bundle the empty page offers to open.
pub(crate) const SAMPLE_JSON: &str = include_str!("../../../dist/sample.json");
