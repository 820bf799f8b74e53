//! `llmsweep view`: an HTTP server for the viewer (from the bytes [`crate::output::dist`] embeds) and a
//! folder of bundles — its listing at `/api/bundles`, each file at `/bundles/NAME`.
//!
//! The folder is read again on every listing request, so new bundles appear when the page is
//! reloaded; a file's facts are parsed once per (size, modification time). Only the files the
//! listing names are served: plain `*.json` / `*.json.gz` names directly in the folder whose real
//! path (after symlinks) is still in it. A file the listing calls too big (over
//! [`MAX_INFLATED_BYTES`]) is refused with 413; the others stream from disk, at most
//! [`MAX_FILE_READS`] at once (further requests wait their turn).
//!
//! Requests must name the server by an IP address, `localhost`, or a name [`Access`] allows (this
//! machine's name, `--allow-host`): a web page on another site that points its own name at this
//! server (DNS rebinding) sends that name, and is refused — on loopback and beyond. The page is
//! served under a Content-Security-Policy that lets it run only its own scripts and fetch only
//! from this server, unless remote bundles are allowed.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, HOST, HeaderName, HeaderValue,
    X_FRAME_OPTIONS,
};
use axum::http::{StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::StreamExt;
use llmsweep_shared::bundle::MAX_INFLATED_BYTES;
use llmsweep_shared::folder::{
    FOLDER_META, FolderListing, LISTING_PATH, REMOTE_BUNDLES_META, is_bundle_name,
};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::output::dist;
use crate::output::report::{escape, script_hash};

/// The port `llmsweep view` tries first, so the address stays the same from one day to the next.
pub const DEFAULT_PORT: u16 = 8484;

/// How many bundle files are streamed at once; a request beyond them waits until one ends.
/// Waiting (rather than answering 503) keeps a viewer that loads several bundles at once
/// working, and a waiting request holds no file and no buffer — only its connection.
pub const MAX_FILE_READS: usize = 8;

/// The folder (or bucket prefix) being served.
#[derive(Debug)]
pub struct Folder {
    /// The real path (symlinks resolved) every served file must be directly inside; for a
    /// bucket, nothing local.
    root: PathBuf,
    /// A bucket prefix served instead of a local folder (`llmsweep view s3://…`).
    bucket: Option<crate::store::bucket::Bucket>,
    /// The folder as the user named it, for messages and the page.
    shown: String,
    /// One permit per file being streamed ([`MAX_FILE_READS`]).
    reads: Arc<Semaphore>,
}

impl Folder {
    /// The folder at `dir`; an error names the folder and says what is wrong with it.
    pub fn open(dir: &Path) -> anyhow::Result<Folder> {
        let shown = dir.display().to_string();
        let meta = match std::fs::metadata(dir) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => anyhow::bail!(
                "there is no folder {shown}: name the folder of your bundles (llmsweep view DIR); sweeps write into results/ unless --out says otherwise"
            ),
            Err(e) => anyhow::bail!("cannot open the folder {shown}: {e}"),
        };
        if !meta.is_dir() {
            anyhow::bail!(
                "{shown} is not a folder: llmsweep view serves a folder of bundles (to look at single files, open them in the viewer or use llmsweep report)"
            );
        }
        let root = std::fs::canonicalize(dir)
            .with_context(|| format!("cannot resolve the folder {shown}"))?;
        Ok(Folder {
            root,
            bucket: None,
            shown,
            reads: Arc::new(Semaphore::new(MAX_FILE_READS)),
        })
    }

    /// A bucket prefix, served as a folder: its listing from its index, each bundle fetched from
    /// the store when the page asks for it.
    pub(crate) fn bucket(bucket: crate::store::bucket::Bucket) -> Folder {
        Folder {
            root: PathBuf::new(),
            shown: bucket.url().to_string(),
            bucket: Some(bucket),
            reads: Arc::new(Semaphore::new(MAX_FILE_READS)),
        }
    }

    /// The folder as the user named it.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The real path of bundle `name`, if the listing includes it: a bundle name, a regular file
    /// (or a symlink to one) whose real path is directly in the folder.
    pub fn resolve(&self, name: &str) -> Option<(PathBuf, std::fs::Metadata)> {
        if !is_bundle_name(name) {
            return None;
        }
        let real = std::fs::canonicalize(self.root.join(name)).ok()?;
        if real.parent() != Some(self.root.as_path()) {
            return None;
        }
        let meta = std::fs::metadata(&real).ok()?;
        meta.is_file().then_some((real, meta))
    }

    /// Reads the folder: every bundle in it, newest first, from the folder's index where the
    /// bundle has not changed since (see [`crate::store::index`]).
    pub fn listing(&self) -> anyhow::Result<FolderListing> {
        let (index, _) = crate::store::index::refresh_local(&self.root)?;
        Ok(FolderListing {
            folder: self.shown.clone(),
            ..index.listing
        })
    }

    /// [`Folder::listing`] of a local folder or a bucket.
    pub(crate) async fn listing_any(self: Arc<Self>) -> anyhow::Result<FolderListing> {
        match &self.bucket {
            Some(b) => {
                let place = crate::store::index::Place::Bucket(b.clone());
                Ok(crate::store::index::refresh(&place).await?.0.listing)
            }
            None => tokio::task::spawn_blocking(move || self.listing())
                .await
                .map_err(|e| anyhow::anyhow!("listing failed: {e}"))?,
        }
    }
}

/// Where the server listens and who may ask it.
#[derive(Debug, Clone, Copy)]
pub struct Listen {
    pub bind: IpAddr,
    /// `None`: [`DEFAULT_PORT`], or any free port when it is taken.
    pub port: Option<u16>,
}

/// A bound listener, and a note when the default port was taken.
pub async fn listen(l: Listen) -> anyhow::Result<(TcpListener, Option<String>)> {
    match l.port {
        Some(port) => {
            let listener = TcpListener::bind((l.bind, port)).await.map_err(|e| {
                let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
                    "another program uses it; pick another --port, or --port 0 for any free one"
                } else {
                    "check --bind and --port"
                };
                anyhow::anyhow!(
                    "cannot listen on {}: {e} ({hint})",
                    SocketAddr::new(l.bind, port)
                )
            })?;
            Ok((listener, None))
        }
        None => match TcpListener::bind((l.bind, DEFAULT_PORT)).await {
            Ok(listener) => Ok((listener, None)),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                let listener = TcpListener::bind((l.bind, 0))
                    .await
                    .with_context(|| format!("cannot listen on {} (--bind)", l.bind))?;
                let port = listener.local_addr()?.port();
                let note = format!(
                    "port {DEFAULT_PORT} is in use (another llmsweep view?), so this one is on {port}; --port fixes it"
                );
                Ok((listener, Some(note)))
            }
            Err(e) => Err(anyhow::anyhow!(
                "cannot listen on {}: {e} (check --bind)",
                SocketAddr::new(l.bind, DEFAULT_PORT)
            )),
        },
    }
}

/// The address to give a person: an unspecified bind address (all interfaces) is reached
/// through loopback from this machine.
pub fn page_url(addr: SocketAddr) -> String {
    let ip = match addr.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::from([127, 0, 0, 1]),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}/", SocketAddr::new(ip, addr.port()))
}

/// Who may ask the server, and what its page may load.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// Names, besides IP addresses and `localhost`, that a request's `Host` may give: this
    /// machine's name and every `--allow-host`. Compared without case, a trailing dot and a port.
    pub allow_hosts: Vec<String>,
    /// The page may load `?bundle=` URLs of other sites (`--allow-remote-bundles`).
    pub remote_bundles: bool,
}

/// Serves `folder` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    folder: Arc<Folder>,
    access: Access,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(folder, access))
        .with_graceful_shutdown(shutdown)
        .await
}

/// The routes; a request whose `Host` is not an allowed name is refused.
pub fn router(folder: Arc<Folder>, access: Access) -> Router {
    let html = Arc::<str>::from(page(folder.shown(), access.remote_bundles));
    let csp = HeaderValue::from_str(&page_csp(&html, access.remote_bundles))
        .unwrap_or(HeaderValue::from_static("default-src 'none'"));
    let index = move || {
        let (html, csp) = (Arc::clone(&html), csp.clone());
        async move { index(&html, csp) }
    };
    let allowed: Arc<[String]> = access.allow_hosts.iter().map(|h| host_name(h)).collect();
    Router::new()
        .route("/", get(index.clone()))
        .route("/index.html", get(index))
        .route(
            "/llmsweep-viewer.js",
            get(|| async { asset("text/javascript; charset=utf-8", dist::VIEWER_JS) }),
        )
        .route(
            "/llmsweep-viewer_bg.wasm",
            get(|| async { asset("application/wasm", dist::VIEWER_WASM) }),
        )
        .route(
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", dist::VIEWER_CSS) }),
        )
        .route(
            "/sample.json",
            get(|| async { asset("application/json", dist::SAMPLE_JSON) }),
        )
        .route(&format!("/{LISTING_PATH}"), get(listing))
        .route("/bundles/{name}", get(bundle))
        .fallback(not_found)
        .with_state(folder)
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            let allowed = Arc::clone(&allowed);
            async move { check_host(&allowed, req, next).await }
        }))
        .layer(middleware::from_fn(common_headers))
}

/// The page's policy: its own inline scripts by hash, the viewer's module and wasm from this
/// server, fetches to this server only (or to any http(s) URL with `remote_bundles`), nothing
/// framing it.
fn page_csp(html: &str, remote_bundles: bool) -> String {
    let hashes: Vec<String> = inline_scripts(html).map(script_hash).collect();
    format!(
        "default-src 'none'; script-src 'self' {} 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data: blob:; connect-src 'self'{}; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'",
        hashes.join(" "),
        if remote_bundles { " http: https:" } else { "" }
    )
}

/// The text of each `<script>` without a `src` in `html`.
fn inline_scripts(html: &str) -> impl Iterator<Item = &str> {
    html.split("<script").skip(1).filter_map(|rest| {
        let (tag, after) = rest.split_once('>')?;
        let (body, _) = after.split_once("</script>")?;
        (!tag.contains("src=")).then_some(body)
    })
}

/// The viewer's page, announcing the folder listing (and naming the folder in the title), and
/// whether it may load bundles of other sites.
fn page(folder: &str, remote_bundles: bool) -> String {
    let mut meta = format!("<head>\n    <meta name=\"{FOLDER_META}\" content=\"{LISTING_PATH}\">");
    if remote_bundles {
        meta.push_str(&format!(
            "\n    <meta name=\"{REMOTE_BUNDLES_META}\" content=\"allow\">"
        ));
    }
    dist::INDEX_HTML.replacen("<head>", &meta, 1).replacen(
        "<title>llmsweep viewer</title>",
        &format!("<title>{} — llmsweep viewer</title>", escape(folder)),
        1,
    )
}

fn index(html: &str, csp: HeaderValue) -> Response {
    let mut resp = (
        [
            (CONTENT_TYPE, "text/html; charset=utf-8"),
            (CACHE_CONTROL, "no-cache"),
        ],
        html.to_string(),
    )
        .into_response();
    let h = resp.headers_mut();
    h.insert(CONTENT_SECURITY_POLICY, csp);
    h.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    resp
}

fn asset(content_type: &'static str, body: impl Into<Body>) -> Response {
    (
        [(CONTENT_TYPE, content_type), (CACHE_CONTROL, "no-cache")],
        body.into(),
    )
        .into_response()
}

/// The folder's listing as JSON, gzip-compressed when the browser takes it (all do): the
/// listing of ten thousand runs is 18 MB of JSON and a fraction of that compressed.
async fn listing(State(folder): State<Arc<Folder>>, headers: http::HeaderMap) -> Response {
    let shown = folder.shown().to_string();
    match folder.listing_any().await {
        Ok(listing) => {
            let json = serde_json::to_vec(&listing).unwrap_or_default();
            let gzip = headers
                .get(http::header::ACCEPT_ENCODING)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.split(',').any(|e| e.trim().starts_with("gzip")));
            let compressed = gzip.then(|| {
                let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                std::io::Write::write_all(&mut gz, &json).and_then(|()| gz.finish())
            });
            match compressed {
                Some(Ok(body)) => (
                    [
                        (CONTENT_TYPE, "application/json"),
                        (CACHE_CONTROL, "no-store"),
                        (http::header::CONTENT_ENCODING, "gzip"),
                    ],
                    body,
                )
                    .into_response(),
                _ => (
                    [
                        (CONTENT_TYPE, "application/json"),
                        (CACHE_CONTROL, "no-store"),
                    ],
                    json,
                )
                    .into_response(),
            }
        }
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot read {shown}: {e:#}"),
        ),
    }
}

/// A bundle's bytes as they are on disk, streamed; `.json.gz` stays compressed (the viewer
/// inflates it). A file the listing calls too big is refused (413) without being read.
async fn bundle(State(folder): State<Arc<Folder>>, UrlPath(name): UrlPath<String>) -> Response {
    if let Some(b) = &folder.bucket {
        return bucket_bundle(&folder, b, &name).await;
    }
    let Some((path, meta)) = folder.resolve(&name) else {
        return error(
            StatusCode::NOT_FOUND,
            format!(
                "no bundle named {name:?} in {}: only .json and .json.gz files directly in the folder are served (see /{LISTING_PATH})",
                folder.shown()
            ),
        );
    };
    if let Some(why) = crate::store::too_big(meta.len()) {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("{name} is not served: {why}"),
        );
    }
    let Ok(permit) = Arc::clone(&folder.reads).acquire_owned().await else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is stopping".to_string(),
        );
    };
    let file = match crate::boundary::file::open_file(&path) {
        Ok((f, _)) => tokio::fs::File::from_std(f),
        Err(e) => return error(StatusCode::NOT_FOUND, format!("{name} {e}")),
    };
    // A file that grew since it was looked at is still cut at the limit.
    let chunks = tokio_util::io::ReaderStream::new(file.take(MAX_INFLATED_BYTES as u64));
    // The permit goes with the stream, and is given back when the body ends or is dropped.
    let body = Body::from_stream(chunks.map(move |chunk| {
        let _held = &permit;
        chunk
    }));
    let content_type = if name.ends_with(".gz") {
        "application/gzip"
    } else {
        "application/json"
    };
    (
        [(CONTENT_TYPE, content_type), (CACHE_CONTROL, "no-store")],
        body,
    )
        .into_response()
}

/// A bundle of a bucket, streamed from the store as it comes (within the size a bundle may
/// have), under the same limit on reads at once as a folder's files: a page that asks for a
/// large object many times holds a few chunks of it, not copies of it.
async fn bucket_bundle(folder: &Folder, b: &crate::store::bucket::Bucket, name: &str) -> Response {
    if !is_bundle_name(name) {
        return error(
            StatusCode::NOT_FOUND,
            format!(
                "no bundle named {:?} in {}: only .json and .json.gz objects directly under the prefix are served",
                llmsweep_shared::text::one_line(name),
                b.url()
            ),
        );
    }
    let Ok(permit) = Arc::clone(&folder.reads).acquire_owned().await else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is stopping".to_string(),
        );
    };
    match b.get_stream(name, MAX_INFLATED_BYTES as u64).await {
        Ok(chunks) => {
            let content_type = if name.ends_with(".gz") {
                "application/gzip"
            } else {
                "application/json"
            };
            // The permit goes with the stream, as for a file.
            let body = Body::from_stream(chunks.map(move |chunk| {
                let _held = &permit;
                chunk.map_err(|e| std::io::Error::other(format!("{e:#}")))
            }));
            (
                [(CONTENT_TYPE, content_type), (CACHE_CONTROL, "no-store")],
                body,
            )
                .into_response()
        }
        Err(e) => error(
            StatusCode::NOT_FOUND,
            format!("{name} cannot be read: {e:#}"),
        ),
    }
}

async fn not_found(uri: Uri) -> Response {
    error(
        StatusCode::NOT_FOUND,
        format!(
            "nothing at {}: the viewer is at /, the folder's listing at /{LISTING_PATH} and each bundle at /bundles/NAME",
            uri.path()
        ),
    )
}

fn error(status: StatusCode, message: String) -> Response {
    (
        status,
        [(CONTENT_TYPE, "text/plain; charset=utf-8")],
        message + "\n",
    )
        .into_response()
}

/// Refuses a request whose `Host` is a name not allowed: a page of another site that points its
/// own name at this server (DNS rebinding) sends that name, and must not read the results. An IP
/// address cannot be rebound, so any is accepted.
///
/// Also refuses what a page of another site makes the browser ask (an image, a script, a
/// `fetch` in no-cors mode, as the browser's `Sec-Fetch-Site: cross-site` says): such a page
/// cannot read the answer, but could make this server read large objects from a bucket again
/// and again. Following a link to the viewer (a navigation) is still answered.
async fn check_host(allowed: &[String], req: Request, next: Next) -> Response {
    if cross_site(req.headers()) {
        return error(
            StatusCode::FORBIDDEN,
            "llmsweep view does not answer requests a page of another site makes; open the viewer's own address".to_string(),
        );
    }
    let host = req.headers().get(HOST).map(|h| h.to_str().unwrap_or("?"));
    match host {
        Some(h) if !host_allowed(h, allowed) => {
            let mut names = vec!["localhost".to_string()];
            names.extend(allowed.iter().cloned());
            error(
                StatusCode::FORBIDDEN,
                format!(
                    "llmsweep view answers requests that name it by an IP address or as {}, not {h:?}: a page of another site must not read the results through DNS rebinding. If {h:?} is this machine, start llmsweep view with --allow-host {}",
                    names.join(", "),
                    host_name(h)
                ),
            )
        }
        _ => next.run(req).await,
    }
}

/// Whether the browser says a page of another site made this request, and not by following a
/// link.
fn cross_site(headers: &http::HeaderMap) -> bool {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    header("sec-fetch-site") == Some("cross-site") && header("sec-fetch-mode") != Some("navigate")
}

/// The name of a `Host` value: without its port and a trailing dot, lower case.
fn host_name(host: &str) -> String {
    let name = match host.strip_prefix('[') {
        Some(v6) => return format!("[{}]", v6.split(']').next().unwrap_or("")),
        None => host.rsplit_once(':').map_or(host, |(n, _)| n),
    };
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// An IP address (v4, or v6 in brackets), `localhost`, or one of `allowed` (already
/// [`host_name`]s), with or without a port.
fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let name = host_name(host);
    let ip = name.trim_start_matches('[').trim_end_matches(']');
    !name.is_empty()
        && (name == "localhost" || ip.parse::<IpAddr>().is_ok() || allowed.contains(&name))
}

async fn common_headers(req: Request, next: Next) -> Response {
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        HeaderName::from_static("referrer-policy"),
        HeaderValue::from_static("no-referrer"),
    );
    // Pages of other sites may not embed the results (as a script, an image, …) either.
    h.insert(
        HeaderName::from_static("cross-origin-resource-policy"),
        HeaderValue::from_static("same-origin"),
    );
    resp
}

/// Opens `url` in the default browser; `Err` says why it could not.
pub fn open_browser(url: &str) -> Result<(), String> {
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        ("xdg-open", vec![url])
    };
    let mut child = std::process::Command::new(program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("{program} could not start: {e}"))?;
    // The opener usually returns at once; if it fails later, say so without holding up the server.
    std::thread::spawn(move || {
        if let Ok(status) = child.wait()
            && !status.success()
        {
            errln!(
                "warning: {program} could not open a browser ({status}); open the address yourself"
            );
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_ip_addresses_localhost_or_allowed_names() {
        let allowed = ["kpro5".to_string(), "kpro5.lan".to_string()];
        for ok in [
            "localhost",
            "localhost:8484",
            "LOCALHOST:1",
            "127.0.0.1:8484",
            "127.0.0.2",
            "[::1]:8484",
            "[::1]",
            "192.168.1.2:8484",
            "[fe80::1]:80",
            "kpro5:8484",
            "KPRO5.lan.",
        ] {
            assert!(host_allowed(ok, &allowed), "{ok}");
        }
        for no in [
            "evil.example:8484",
            "evil.example",
            "localhost.evil.example",
            "kpro5.evil.example",
            "kpro",
            "",
            ":80",
        ] {
            assert!(!host_allowed(no, &allowed), "{no}");
        }
        assert!(!host_allowed("kpro5", &[]));
    }

    #[test]
    fn the_policy_lists_the_pages_inline_scripts_by_hash() {
        let html = page("r", false);
        let scripts: Vec<&str> = inline_scripts(&html).collect();
        assert_eq!(scripts.len(), 2, "the error hook and trunk's loader");
        assert!(scripts[1].contains("import init"));
        let csp = page_csp(&html, false);
        for s in &scripts {
            assert!(csp.contains(&script_hash(s)), "{csp}");
        }
        let scripts_rule = csp.split(';').find(|d| d.contains("script-src")).unwrap();
        assert!(!scripts_rule.contains("unsafe-inline"), "{csp}");
        assert!(csp.contains("connect-src 'self';"), "{csp}");
        assert!(page_csp(&html, true).contains("connect-src 'self' http: https:;"));
    }

    #[test]
    fn the_page_announces_the_listing() {
        assert!(!page("r", false).contains(REMOTE_BUNDLES_META));
        assert!(page("r", true).contains(&format!(
            "<meta name=\"{REMOTE_BUNDLES_META}\" content=\"allow\">"
        )));
        let p = page("results/<x>", false);
        assert!(p.contains(&format!(
            "<meta name=\"{FOLDER_META}\" content=\"{LISTING_PATH}\">"
        )));
        assert!(p.contains("<title>results/&lt;x&gt; — llmsweep viewer</title>"));
        assert!(p.contains("llmsweep-viewer.js"));
    }

    #[test]
    fn page_urls() {
        let url = |s: &str| page_url(s.parse().unwrap());
        assert_eq!(url("127.0.0.1:8484"), "http://127.0.0.1:8484/");
        assert_eq!(url("0.0.0.0:80"), "http://127.0.0.1:80/");
        assert_eq!(url("[::]:9"), "http://[::1]:9/");
        assert_eq!(url("192.168.1.5:8484"), "http://192.168.1.5:8484/");
    }
}
