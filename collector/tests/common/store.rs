//! A small S3-speaking store of our own on loopback, honest or hostile: what Garage will not do
//! (a listing without end, a listing page of gigabytes, an HTML page for a listing, a redirect
//! to another host, a key that may read but not write, an object of hundreds of megabytes made
//! on the fly), each on request. Path-style requests only, no signature checked; every request
//! is recorded with whether it carried credentials, so a test can prove none reached a host.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// How the store answers.
#[derive(Debug, Clone)]
pub(crate) enum Mode {
    /// As S3 does: keeps what is put, lists it, gives it back.
    Honest,
    /// Every listing page holds 1,000 new keys and says there is more.
    EndlessListing,
    /// Every listing page is this many bytes of XML.
    HugePage(usize),
    /// Every request gets an HTML page with 200 OK.
    Html,
    /// Every request gets 307 to this URL.
    RedirectTo(String),
    /// Lists and reads, but refuses every write (403 AccessDenied): a read-only key.
    ReadOnly,
    /// Listings are answered after this many milliseconds.
    SlowListing(u64),
    /// A bundle's upload (a PUT of a `.json` key) is answered after this many milliseconds;
    /// the write check and the index are not.
    SlowBundleWrites(u64),
}

/// One request as the store saw it.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub method: String,
    pub path_and_query: String,
    /// It carried an `Authorization` header or a session token.
    pub credentials: bool,
}

#[derive(Default)]
struct Inner {
    objects: BTreeMap<String, Bytes>,
    /// Objects made on the fly: a name and a size, its bytes all `{`.
    big: BTreeMap<String, u64>,
    seen: Vec<Seen>,
}

/// A store served on a free loopback port, from its own thread, until dropped.
pub(crate) struct Store {
    /// `http://127.0.0.1:PORT`, for `AWS_ENDPOINT_URL`.
    pub url: String,
    mode: Arc<Mutex<Mode>>,
    inner: Arc<Mutex<Inner>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Store {
    pub(crate) fn start(mode: Mode) -> Store {
        let mode = Arc::new(Mutex::new(mode));
        let inner: Arc<Mutex<Inner>> = Arc::default();
        let state = (Arc::clone(&mode), Arc::clone(&inner));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener.set_nonblocking(true).expect("non-blocking");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
                let app = Router::new().fallback(answer).with_state(state);
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = rx.await;
                    })
                    .await;
            });
        });
        Store {
            url,
            mode,
            inner,
            stop: Some(tx),
        }
    }

    /// Changes how it answers from now on.
    pub(crate) fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }

    /// Puts an object, as another client would.
    pub(crate) fn put(&self, key: &str, bytes: impl Into<Bytes>) {
        self.inner
            .lock()
            .unwrap()
            .objects
            .insert(key.to_string(), bytes.into());
    }

    /// An object of `size` bytes made as it is read, never held.
    pub(crate) fn put_big(&self, key: &str, size: u64) {
        self.inner.lock().unwrap().big.insert(key.to_string(), size);
    }

    /// The object at `key`, when there is one.
    pub(crate) fn get(&self, key: &str) -> Option<Bytes> {
        self.inner.lock().unwrap().objects.get(key).cloned()
    }

    /// The keys held.
    pub(crate) fn keys(&self) -> Vec<String> {
        self.inner.lock().unwrap().objects.keys().cloned().collect()
    }

    /// Every request so far.
    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.inner.lock().unwrap().seen.clone()
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

type Shared = (Arc<Mutex<Mode>>, Arc<Mutex<Inner>>);

async fn answer(State((mode, inner)): State<Shared>, req: Request) -> Response {
    let method = req.method().clone();
    let uri = req.uri().clone();
    let headers = req.headers().clone();
    let credentials =
        headers.contains_key(header::AUTHORIZATION) || headers.contains_key("x-amz-security-token");
    inner.lock().unwrap().seen.push(Seen {
        method: method.to_string(),
        path_and_query: uri
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        credentials,
    });
    let body = axum::body::to_bytes(req.into_body(), 64 << 20)
        .await
        .unwrap_or_default();
    let mode = mode.lock().unwrap().clone();
    let query: BTreeMap<String, String> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), decode(v)))
        .collect();
    let listing = query.get("list-type").is_some_and(|v| v == "2");
    let bulk_delete = method == Method::POST
        && uri
            .query()
            .is_some_and(|q| q.split('&').any(|kv| kv == "delete"));
    // `/bucket/key…`: the key is the rest of the path.
    let path = decode(uri.path().trim_start_matches('/'));
    let key = path.split_once('/').map(|(_, k)| k.to_string());
    match mode {
        Mode::Html => (
            [(header::CONTENT_TYPE, "text/html")],
            "<!doctype html><html><body><h1>Sign in to continue</h1></body></html>",
        )
            .into_response(),
        Mode::RedirectTo(to) => Response::builder()
            .status(StatusCode::TEMPORARY_REDIRECT)
            .header(
                header::LOCATION,
                format!(
                    "{to}{}",
                    uri.path_and_query().map(|p| p.as_str()).unwrap_or("/")
                ),
            )
            .body(Body::empty())
            .unwrap(),
        Mode::EndlessListing if listing => endless_page(&query),
        Mode::HugePage(size) if listing => huge_page(size),
        Mode::SlowListing(ms) if listing => {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            honest(&inner, &method, key, &query, listing, body, &headers)
        }
        Mode::SlowBundleWrites(ms)
            if method == Method::PUT
                && key
                    .as_deref()
                    .is_some_and(|k| k.ends_with(".json") && !k.contains("index")) =>
        {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            honest(&inner, &method, key, &query, listing, body, &headers)
        }
        Mode::ReadOnly if method == Method::PUT || method == Method::DELETE || bulk_delete => {
            s3_error(
                StatusCode::FORBIDDEN,
                "AccessDenied",
                "Access Denied: this key may read, not write",
            )
        }
        _ if bulk_delete => delete_many(&inner, &body),
        _ => honest(&inner, &method, key, &query, listing, body, &headers),
    }
}

/// `POST /bucket?delete`: the keys of its XML body removed, each said deleted.
fn delete_many(inner: &Arc<Mutex<Inner>>, body: &Bytes) -> Response {
    let text = String::from_utf8_lossy(body);
    let mut deleted = String::new();
    for part in text.split("<Key>").skip(1) {
        let key = part
            .split("</Key>")
            .next()
            .unwrap_or("")
            .replace("&amp;", "&");
        inner.lock().unwrap().objects.remove(&key);
        deleted.push_str(&format!("<Deleted><Key>{}</Key></Deleted>", escape(&key)));
    }
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">{deleted}</DeleteResult>"
    );
    ([(header::CONTENT_TYPE, "application/xml")], xml).into_response()
}

fn honest(
    inner: &Arc<Mutex<Inner>>,
    method: &Method,
    key: Option<String>,
    query: &BTreeMap<String, String>,
    listing: bool,
    body: Bytes,
    _headers: &HeaderMap,
) -> Response {
    if listing {
        let prefix = query.get("prefix").cloned().unwrap_or_default();
        let g = inner.lock().unwrap();
        let mut entries: Vec<(String, u64)> = g
            .objects
            .iter()
            .map(|(k, v)| (k.clone(), v.len() as u64))
            .chain(g.big.iter().map(|(k, s)| (k.clone(), *s)))
            .filter(|(k, _)| k.starts_with(&prefix) && !k[prefix.len()..].contains('/'))
            .collect();
        entries.sort();
        let contents: String = entries
            .iter()
            .map(|(k, size)| contents_xml(k, *size))
            .collect();
        return listing_xml(&prefix, &contents, None);
    }
    let Some(key) = key.filter(|k| !k.is_empty()) else {
        return s3_error(StatusCode::BAD_REQUEST, "InvalidRequest", "no key");
    };
    match *method {
        Method::PUT => {
            let etag = format!("\"{:x}\"", body.len() * 31 + key.len());
            inner.lock().unwrap().objects.insert(key, body);
            Response::builder()
                .status(StatusCode::OK)
                .header(header::ETAG, etag)
                .body(Body::empty())
                .unwrap()
        }
        Method::DELETE => {
            inner.lock().unwrap().objects.remove(&key);
            StatusCode::NO_CONTENT.into_response()
        }
        Method::GET | Method::HEAD => {
            let g = inner.lock().unwrap();
            let (len, body) = if let Some(b) = g.objects.get(&key) {
                (b.len() as u64, Body::from(b.clone()))
            } else if let Some(size) = g.big.get(&key) {
                (*size, made_on_the_fly(*size))
            } else {
                return s3_error(
                    StatusCode::NOT_FOUND,
                    "NoSuchKey",
                    "The specified key does not exist.",
                );
            };
            Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_LENGTH, len)
                .header(header::ETAG, format!("\"{len:x}\""))
                .header(header::LAST_MODIFIED, "Mon, 07 Dec 2026 00:00:00 GMT")
                .body(if *method == Method::HEAD {
                    Body::empty()
                } else {
                    body
                })
                .unwrap()
        }
        _ => s3_error(StatusCode::METHOD_NOT_ALLOWED, "MethodNotAllowed", "no"),
    }
}

/// `size` bytes of `{`, a megabyte at a time, never held whole.
fn made_on_the_fly(size: u64) -> Body {
    let chunk = Bytes::from(vec![b'{'; 1 << 20]);
    let n = size.div_ceil(1 << 20);
    let last = size - (n.saturating_sub(1)) * (1 << 20);
    let stream = futures_util::stream::iter((0..n).map(move |i| {
        let c = if i + 1 == n {
            chunk.slice(..last as usize)
        } else {
            chunk.clone()
        };
        Ok::<_, std::io::Error>(c)
    }));
    Body::from_stream(stream)
}

fn endless_page(query: &BTreeMap<String, String>) -> Response {
    let page: u64 = query
        .get("continuation-token")
        .and_then(|t| t.strip_prefix("page-"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let prefix = query.get("prefix").cloned().unwrap_or_default();
    let contents: String = (0..1000)
        .map(|i| contents_xml(&format!("{prefix}run-{page}-{i}.json"), 100))
        .collect();
    listing_xml(&prefix, &contents, Some(format!("page-{}", page + 1)))
}

fn huge_page(size: usize) -> Response {
    let head =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult><Name>b</Name>".to_string();
    let filler = Bytes::from(vec![b' '; 1 << 20]);
    let n = size / (1 << 20);
    let stream = futures_util::stream::iter(
        std::iter::once(Bytes::from(head))
            .chain(std::iter::repeat_n(filler, n))
            .chain(std::iter::once(Bytes::from_static(b"</ListBucketResult>")))
            .map(Ok::<_, std::io::Error>),
    );
    Response::builder()
        .header(header::CONTENT_TYPE, "application/xml")
        .body(Body::from_stream(stream))
        .unwrap()
}

fn contents_xml(key: &str, size: u64) -> String {
    format!(
        "<Contents><Key>{}</Key><LastModified>2026-12-07T00:00:00.000Z</LastModified><ETag>\"{size:x}\"</ETag><Size>{size}</Size><StorageClass>STANDARD</StorageClass></Contents>",
        escape(key)
    )
}

fn listing_xml(prefix: &str, contents: &str, next: Option<String>) -> Response {
    let truncated = next.is_some();
    let next = next
        .map(|t| format!("<NextContinuationToken>{t}</NextContinuationToken>"))
        .unwrap_or_default();
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name><Prefix>{}</Prefix><MaxKeys>1000</MaxKeys><IsTruncated>{truncated}</IsTruncated>{contents}{next}</ListBucketResult>",
        escape(prefix)
    );
    ([(header::CONTENT_TYPE, "application/xml")], xml).into_response()
}

fn s3_error(status: StatusCode, code: &str, message: &str) -> Response {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{message}</Message></Error>"
    );
    (status, [(header::CONTENT_TYPE, "application/xml")], xml).into_response()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Percent-decoding of a path or query value.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 3 <= b.len()
            && let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
