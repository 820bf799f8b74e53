//! The selftest endpoint: `POST /v1/completions`, `GET /v1/models` and `GET /selftest` (its
//! pacing) on loopback, served from a thread and runtime of its own, streaming pre-rendered
//! (flat out) or stamped, scheduled events. It runs inside `llmsweep selftest` or, with
//! `--serve`, as a process of its own that any client can be measured against.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use tokio::sync::oneshot;

use super::wire;

/// How the endpoint paces a stream; `GET /selftest` answers it (see [`PacingJson`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// Pre-rendered events with `per_event` tokens each, as fast as the socket takes them.
    FlatOut { per_event: u32 },
    /// One token per event: the first `first` after the request arrives, then one every
    /// `interval`, at absolute deadlines; each event's text is its send stamp on the host's
    /// monotonic clock (see [`wire::monotonic_us`]), so a client in another process can read it.
    Scheduled { first: Duration, interval: Duration },
}

/// Bytes handed to the socket at once in flat-out mode (a chunk of the chunked encoding).
const FRAME_BYTES: usize = 16 * 1024;

/// A running selftest endpoint; stops when dropped.
#[derive(Debug)]
pub(crate) struct Endpoint {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

struct Shared {
    pacing: Pacing,
    /// Flat-out token events by output length, rendered once.
    rendered: Mutex<HashMap<u64, Bytes>>,
}

impl Endpoint {
    /// Binds `bind` (port 0: a free one) and serves from a thread of its own, whose CPU time
    /// is not counted as the client's.
    pub(crate) async fn start(pacing: Pacing, bind: SocketAddr) -> std::io::Result<Endpoint> {
        let shared = Arc::new(Shared {
            pacing,
            rendered: Mutex::new(HashMap::new()),
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let (ready, started) = oneshot::channel::<std::io::Result<SocketAddr>>();
        let thread = std::thread::Builder::new()
            .name("selftest-endpoint".into())
            .spawn(move || serve(shared, bind, stopped, ready))?;
        let addr = match started.await {
            Ok(Ok(addr)) => addr,
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                return Err(std::io::Error::other(
                    "the selftest endpoint stopped at start",
                ));
            }
        };
        Ok(Endpoint {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// `http://127.0.0.1:PORT`
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops serving and joins the thread.
    pub(crate) async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Connections waiting to be accepted: the default 128 would drop the SYNs of a level that
/// opens thousands at once, and each dropped one costs the client a second-long retry that is
/// the endpoint's doing, not the client's (the kernel caps it at `net.core.somaxconn`).
const BACKLOG: u32 = 16_384;

fn serve(
    shared: Arc<Shared>,
    bind: SocketAddr,
    stopped: oneshot::Receiver<()>,
    ready: oneshot::Sender<std::io::Result<SocketAddr>>,
) -> std::io::Result<()> {
    crate::load::server::host::exclude_current_thread();
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(std::io::Error::new(e.kind(), e.to_string())));
            return Err(e);
        }
    };
    rt.block_on(async move {
        let bound = (|| {
            let socket = match bind {
                SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
                SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
            };
            socket.set_reuseaddr(true)?;
            socket.bind(bind)?;
            let listener = socket.listen(BACKLOG)?;
            let addr = listener.local_addr()?;
            Ok::<_, std::io::Error>((listener, addr))
        })();
        let (listener, addr) = match bound {
            Ok(v) => v,
            Err(e) => {
                let _ = ready.send(Err(std::io::Error::new(e.kind(), e.to_string())));
                return Err(e);
            }
        };
        let _ = ready.send(Ok(addr));
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let app = Router::new()
            .route("/v1/completions", post(completions))
            .route("/v1/models", get(models))
            .route("/selftest", get(pacing))
            .with_state(shared);
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
    })
}

async fn models() -> impl IntoResponse {
    let body = format!(
        "{{\"object\":\"list\",\"data\":[{{\"id\":\"{}\",\"object\":\"model\",\"created\":0,\"owned_by\":\"llmsweep selftest\"}}]}}",
        wire::MODEL
    );
    ([(header::CONTENT_TYPE, "application/json")], body)
}

/// The answer of `GET /selftest`: `{"mode":"flat_out","per_event":1}` or
/// `{"mode":"scheduled","first_s":0.3,"interval_s":0.01}`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub(crate) enum PacingJson {
    FlatOut { per_event: u32 },
    Scheduled { first_s: f64, interval_s: f64 },
}

impl From<Pacing> for PacingJson {
    fn from(p: Pacing) -> Self {
        match p {
            Pacing::FlatOut { per_event } => PacingJson::FlatOut { per_event },
            Pacing::Scheduled { first, interval } => PacingJson::Scheduled {
                first_s: first.as_secs_f64(),
                interval_s: interval.as_secs_f64(),
            },
        }
    }
}

impl PacingJson {
    /// The pacing, or what is wrong with the numbers.
    pub(crate) fn pacing(self) -> Result<Pacing, String> {
        let secs = |s: f64, what: &str| {
            Duration::try_from_secs_f64(s).map_err(|_| format!("{what} {s} is not a duration"))
        };
        Ok(match self {
            PacingJson::FlatOut { per_event: 0 } => {
                return Err("per_event 0: an event carries at least one token".into());
            }
            PacingJson::FlatOut { per_event } => Pacing::FlatOut { per_event },
            PacingJson::Scheduled {
                first_s,
                interval_s,
            } => Pacing::Scheduled {
                first: secs(first_s, "first_s")?,
                interval: secs(interval_s, "interval_s")?,
            },
        })
    }
}

async fn pacing(State(s): State<Arc<Shared>>) -> impl IntoResponse {
    axum::Json(PacingJson::from(s.pacing))
}

/// The part of a request the endpoint reads.
#[derive(serde::Deserialize)]
struct Ask {
    #[serde(default)]
    prompt: String,
    #[serde(default = "default_max_tokens")]
    max_tokens: u64,
}

fn default_max_tokens() -> u64 {
    16
}

async fn completions(State(s): State<Arc<Shared>>, body: Bytes) -> Response {
    let arrived = Instant::now();
    let Ok(ask) = serde_json::from_slice::<Ask>(&body) else {
        return (
            axum::http::StatusCode::BAD_REQUEST,
            "not a completions request",
        )
            .into_response();
    };
    let prompt_tokens = ask.prompt.split_whitespace().count() as u64;
    let tail = wire::usage_and_done(prompt_tokens, ask.max_tokens);
    let body = match s.pacing {
        Pacing::FlatOut { per_event } => {
            let events = s.flat(ask.max_tokens, per_event);
            let frames = (0..events.len().div_ceil(FRAME_BYTES))
                .map(move |i| {
                    events.slice(i * FRAME_BYTES..((i + 1) * FRAME_BYTES).min(events.len()))
                })
                .chain(std::iter::once(tail))
                .map(Ok::<_, Infallible>);
            Body::from_stream(stream::iter(frames))
        }
        Pacing::Scheduled { first, interval } => {
            let n = ask.max_tokens;
            let events = stream::unfold(0u64, move |k| async move {
                if k >= n {
                    return None;
                }
                let due = arrived + first + interval * k as u32;
                tokio::time::sleep_until(due.into()).await;
                let send_us = wire::monotonic_us();
                let finish = (k + 1 == n).then_some("length");
                let frame = Bytes::from(wire::event(&wire::stamp_text(send_us), finish));
                Some((frame, k + 1))
            });
            let all = events.chain(stream::once(async move { tail }));
            Body::from_stream(all.map(Ok::<_, Infallible>))
        }
    };
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

impl Shared {
    /// The flat-out token events for `tokens` tokens, rendered on first use.
    fn flat(&self, tokens: u64, per_event: u32) -> Bytes {
        let mut cache = match self.rendered.lock() {
            Ok(c) => c,
            Err(poisoned) => poisoned.into_inner(),
        };
        cache
            .entry(tokens)
            .or_insert_with(|| wire::flat_events(tokens, per_event))
            .clone()
    }
}
