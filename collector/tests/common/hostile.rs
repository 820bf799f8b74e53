//! Small hostile servers on loopback: an axum router served on a free port of 127.0.0.1,
//! counting the requests it gets, until dropped. What a test serves is its own router; the
//! helpers below build the parts most of them share.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::middleware::{Next, from_fn_with_state};
use axum::response::Response;

/// A server serving a test's router.
pub(crate) struct Hostile {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub url: String,
    hits: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Hostile {
    /// Serves `app` on a free loopback port.
    pub(crate) async fn start(app: Router) -> Hostile {
        let hits = Arc::new(AtomicUsize::new(0));
        let app = app.layer(from_fn_with_state(hits.clone(), count));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Hostile { url, hits, task }
    }

    /// Requests received so far.
    pub(crate) fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn count(State(hits): State<Arc<AtomicUsize>>, req: Request, next: Next) -> Response {
    hits.fetch_add(1, Ordering::SeqCst);
    next.run(req).await
}

/// The `/v1/models` answer listing `ids`.
pub(crate) fn models_json<S: AsRef<str>>(ids: &[S]) -> String {
    let data: Vec<serde_json::Value> = ids
        .iter()
        .map(|id| serde_json::json!({"id": id.as_ref(), "object": "model", "owned_by": "hostile"}))
        .collect();
    serde_json::json!({"object": "list", "data": data}).to_string()
}

/// A router whose `/v1/models` lists `ids`.
pub(crate) fn listing<S: AsRef<str>>(ids: &[S]) -> Router {
    let body = models_json(ids);
    Router::new().route(
        "/v1/models",
        axum::routing::get(move || {
            let body = body.clone();
            async move { ([(CONTENT_TYPE, "application/json")], body) }
        }),
    )
}

/// An answer of content type `text/event-stream` with `body`.
pub(crate) fn event_stream(body: Body) -> Response {
    Response::builder()
        .header(CONTENT_TYPE, "text/event-stream")
        .body(body)
        .unwrap_or_default()
}
