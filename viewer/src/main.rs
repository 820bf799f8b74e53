//! Entry point: in the browser, mounts the app; natively, says how to get the viewer.

#[cfg(target_arch = "wasm32")]
fn main() {
    llmsweep_viewer::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "the llmsweep viewer runs in a browser: open dist/index.html through a web server, \
         or build it with `trunk build --release` in viewer/"
    );
}
