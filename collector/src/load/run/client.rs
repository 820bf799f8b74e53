//! The HTTP side of one request: send it, timestamp bytes as they arrive, hand them to the trace.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use llmsweep_shared::bundle::{Api, ErrorKind};
use tokio_util::sync::CancellationToken;

use crate::boundary::http::error_chain;
use crate::load::plan::secrets::Credentials;
use crate::load::run::api::{self, RequestOptions};
use crate::load::run::body;
use crate::load::run::connect::{ConnectLog, TimeConnects, source_addresses};
use crate::load::run::stream::sse::SseDecoder;
use crate::load::run::stream::trace::{Finished, Follow, RequestMeta, Trace};
use crate::load::workload::Prompt;

/// One shared client for a run: connection pools, base URL, API key, dialect.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    http: LoadHttp,
    base: String,
    pub api: Api,
    pub model: String,
    pub options: RequestOptions,
    /// `--extra-body`: fields added to every generation request.
    pub extra: Option<Arc<serde_json::Map<String, serde_json::Value>>>,
    pub timeout: Duration,
    /// Local addresses of the connections this run has used: one not seen before is a new
    /// connection. Locked once per request, never per token.
    seen: Arc<Mutex<HashSet<SocketAddr>>>,
}

/// The HTTP clients a load runs on: one connection pool per source address (one, unless a
/// big pool on loopback is spread: see [`source_addresses`]), with every connection timed;
/// and a client for the probes and scrapes that go beside the load.
#[derive(Debug, Clone)]
pub(crate) struct LoadHttp {
    /// Never empty. Worker `w` sends on `lanes[w % lanes.len()]`.
    lanes: Vec<Lane>,
    probes: reqwest::Client,
    connects: ConnectLog,
}

/// One pool of connections for load requests.
#[derive(Debug, Clone)]
enum Lane {
    /// Plain HTTP with no proxy in the environment: hyper's own client, whose read buffer
    /// can be sized ([`READ_BUFFER`]). reqwest leaves hyper's adaptive buffer, which grows to
    /// 64 KiB and more per connection when a fast server fills every read (BENCHMARKS.md,
    /// "Memory per stream").
    Direct {
        client: Box<DirectClient>,
        /// Sent with every request: the credentials, and the JSON content type.
        headers: http::HeaderMap,
    },
    /// TLS, or a proxy the environment names: reqwest, which speaks both.
    Reqwest(reqwest::Client),
}

/// hyper's pooled client, over a connector that times every connection it opens.
type DirectClient = hyper_util::client::legacy::Client<
    crate::load::run::connect::Timed<hyper_util::client::legacy::connect::HttpConnector>,
    http_body_util::Full<bytes::Bytes>,
>;

/// Bytes a load connection reads at a time on the direct lane: 37 one-token events of 220
/// bytes. Against an endpoint that fills every read, 4 KiB cost about a tenth more CPU per
/// token and 8 KiB kept a stream under 32 KiB (BENCHMARKS.md, "Memory per stream").
pub(crate) const READ_BUFFER: usize = 8192;

/// Why a request did not get an answer.
struct SendFailure {
    connect: bool,
    chain: String,
}

impl Lane {
    async fn send(
        &self,
        method: http::Method,
        url: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<body::Answer, SendFailure> {
        use http_body_util::BodyExt;
        match self {
            Lane::Direct { client, headers } => {
                let json = body.map(|b| serde_json::to_vec(b).unwrap_or_default());
                let mut req = http::Request::new(http_body_util::Full::new(bytes::Bytes::from(
                    json.unwrap_or_default(),
                )));
                *req.method_mut() = method;
                *req.uri_mut() = url
                    .parse()
                    .map_err(|e: http::uri::InvalidUri| SendFailure {
                        connect: false,
                        chain: e.to_string(),
                    })?;
                *req.headers_mut() = headers.clone();
                match client.request(req).await {
                    Ok(resp) => Ok(resp.map(|b| b.map_err(Into::into).boxed())),
                    Err(e) => Err(SendFailure {
                        connect: e.is_connect(),
                        chain: error_chain(&e),
                    }),
                }
            }
            Lane::Reqwest(client) => {
                let mut req = client.request(method, url);
                if let Some(b) = body {
                    req = req.json(b);
                }
                match req.send().await {
                    Ok(resp) => Ok(http::Response::<reqwest::Body>::from(resp)
                        .map(|b| b.map_err(Into::into).boxed())),
                    Err(e) => Err(SendFailure {
                        connect: e.is_connect(),
                        chain: error_chain(&e),
                    }),
                }
            }
        }
    }
}

/// Whether requests to `base` can go on the direct lane: plain HTTP, and no proxy variable in
/// the environment (reqwest honours `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY`; hyper does not).
fn direct_lane(base: &str) -> bool {
    let plain = reqwest::Url::parse(base).is_ok_and(|u| u.scheme() == "http");
    let proxied = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    plain && !proxied
}

impl LoadHttp {
    /// Pools for `pool` concurrent streams to `base`, each request carrying `credentials`.
    pub(crate) fn new(
        credentials: &Credentials,
        pool: usize,
        base: &str,
    ) -> anyhow::Result<LoadHttp> {
        Self::with_lanes(credentials, pool, base, direct_lane(base))
    }

    /// [`LoadHttp::new`] with the lanes chosen: direct, or reqwest's.
    fn with_lanes(
        credentials: &Credentials,
        pool: usize,
        base: &str,
        direct: bool,
    ) -> anyhow::Result<LoadHttp> {
        let host = reqwest::Url::parse(base).ok();
        let host = host.as_ref().and_then(|u| u.host_str());
        let sources = source_addresses(host, pool);
        let per_lane = pool.div_ceil(sources.len());
        let connects = ConnectLog::default();
        let lanes = sources
            .into_iter()
            .map(|source| {
                if direct {
                    return direct_client(credentials, per_lane, source, &connects);
                }
                builder(credentials, per_lane)
                    .map(|b| {
                        b.local_address(source)
                            .connector_layer(TimeConnects(connects.clone()))
                    })
                    .and_then(|b| Ok(Lane::Reqwest(b.build()?)))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(LoadHttp {
            lanes,
            probes: http_client(credentials, 4)?,
            connects,
        })
    }

    /// The client for the probes and scrapes that go beside the load.
    pub(crate) fn first(&self) -> &reqwest::Client {
        &self.probes
    }

    /// How many source addresses the connections are spread over.
    pub(crate) fn sources(&self) -> usize {
        self.lanes.len()
    }

    fn lane(&self, worker: usize) -> &Lane {
        &self.lanes[worker % self.lanes.len()]
    }
}

/// A direct lane (see [`Lane::Direct`]) with the settings of [`builder`]'s: `pool` idle
/// connections kept for 3 s, 5 s to connect, no Nagle delay, connections from `source`.
fn direct_client(
    credentials: &Credentials,
    pool: usize,
    source: Option<std::net::IpAddr>,
    connects: &ConnectLog,
) -> anyhow::Result<Lane> {
    use hyper_util::client::legacy::{Client, connect::HttpConnector};
    use tower_layer::Layer;
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http.set_connect_timeout(Some(Duration::from_secs(5)));
    http.set_local_address(source);
    let client = Client::builder(hyper_util::rt::TokioExecutor::new())
        .pool_timer(hyper_util::rt::TokioTimer::new())
        .pool_max_idle_per_host(pool.max(1))
        .pool_idle_timeout(Duration::from_secs(3))
        .http1_read_buf_exact_size(READ_BUFFER)
        .build(TimeConnects(connects.clone()).layer(http));
    let mut headers = credentials.header_map()?;
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    headers.insert(http::header::ACCEPT, http::HeaderValue::from_static("*/*"));
    Ok(Lane::Direct {
        client: Box::new(client),
        headers,
    })
}

/// Builds a pooled HTTP client; `pool` is the most connections kept open (the concurrency).
/// Every request it sends carries `credentials`.
pub(crate) fn http_client(
    credentials: &Credentials,
    pool: usize,
) -> anyhow::Result<reqwest::Client> {
    Ok(builder(credentials, pool)?.build()?)
}

fn builder(credentials: &Credentials, pool: usize) -> anyhow::Result<reqwest::ClientBuilder> {
    Ok(crate::boundary::http::builder()
        .default_headers(credentials.header_map()?)
        .pool_max_idle_per_host(pool.max(1))
        // Below the usual 5 s keep-alive of servers (uvicorn, cpp-httplib), so an idle
        // connection is dropped here before the server closes it under a new request.
        .pool_idle_timeout(Duration::from_secs(3))
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true))
}

/// The shortest and longest wait, after a level's connections are opened, for them to be back
/// in their pools (see [`Client::preopen`]).
const PREOPEN_SETTLE_MIN: Duration = Duration::from_millis(100);
const PREOPEN_SETTLE_MAX: Duration = Duration::from_secs(1);

impl Client {
    pub(crate) fn new(
        http: LoadHttp,
        base: &str,
        api: Api,
        model: String,
        timeout: Duration,
    ) -> Self {
        Client {
            http,
            base: base.trim_end_matches('/').to_string(),
            api,
            model,
            options: RequestOptions::default(),
            extra: None,
            timeout,
            seen: Arc::default(),
        }
    }

    /// Whether the connection an answer came on is new to this run, and if so how long it
    /// took to open when that was on the path of the request begun at `since`; `None` when
    /// the answer does not say which connection it was.
    fn connection_of(
        &self,
        extensions: &http::Extensions,
        since: Instant,
    ) -> Option<(bool, Option<f64>)> {
        let info = extensions.get::<hyper_util::client::legacy::connect::HttpInfo>()?;
        let local = info.local_addr();
        let new = {
            let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            seen.insert(local)
        };
        Some((new, self.http.connects.take(local, since).filter(|_| new)))
    }

    /// Opens up to `n` connections before a level and leaves them in the pools, so the
    /// level's first wave does not measure TCP setup: `n` concurrent `GET /v1/models`, spread
    /// over the pools as the workers are.
    pub(crate) async fn preopen(&self, n: u32) {
        let url = self.url("/v1/models");
        let since = Instant::now();
        let asks = (0..n as usize).map(|w| {
            tokio::time::timeout(
                Duration::from_secs(5),
                self.http.lane(w).send(http::Method::GET, &url, None),
            )
        });
        // Every answer is held until all have come, so each of them needed a connection of
        // its own; then their bodies are read and the connections go back to the pool.
        let answers = futures_util::future::join_all(asks).await;
        let reads = answers.into_iter().flatten().flatten().map(|resp| {
            self.connection_of(resp.extensions(), since);
            body::discard_capped(resp.into_body(), crate::boundary::http::MODELS_BODY_CAP)
        });
        futures_util::future::join_all(reads).await;
        // The connections reach the pool a few task hops after their bodies end: let them
        // arrive before the level's first wave looks for them. A machine slow to open them is
        // slow to hand them back too, so the wait is as long as the opening took (at least
        // 100 ms, at most a second); it comes before the level, so it is in no number.
        let waited = since
            .elapsed()
            .clamp(PREOPEN_SETTLE_MIN, PREOPEN_SETTLE_MAX);
        tokio::time::sleep(waited).await;
    }

    /// The client for probes and checks beside the load.
    pub(crate) fn http(&self) -> &reqwest::Client {
        self.http.first()
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Sends one streamed generation request and measures it, on the pool of `worker`.
    /// `origin` is the point's start; the request's own clock starts just before it is
    /// written; `follow` says whether the whole answer is wanted besides its start, and where
    /// to tell its first token's time. Never fails: every failure is recorded in the returned
    /// record.
    pub(crate) async fn generate(
        &self,
        worker: usize,
        prompt: &Prompt,
        output_len: u64,
        origin: Instant,
        abort: &CancellationToken,
        follow: Follow,
    ) -> Finished {
        let body = api::body(
            self.api,
            &self.model,
            &prompt.text,
            prompt.messages.as_ref(),
            output_len,
            self.options,
            self.extra.as_deref(),
        );
        // Pooled connections the server closed are retried on: more than one may be stale
        // (a server that closes idle keep-alive connections closes them all).
        let mut stale_retries = STALE_RETRIES;
        loop {
            let start = Instant::now();
            let meta = RequestMeta {
                start_s: start.duration_since(origin).as_secs_f64(),
                input_tokens: prompt.tokens,
                prompt_hash: prompt.hash.clone(),
                content_hash: prompt.content_hash.clone(),
                output_asked: output_len,
            };
            let mut trace = Trace::keeping(follow.keep);
            if let Some(first_token) = &follow.first_token {
                trace.tell_first_token(first_token.clone(), meta.start_s);
            }
            trace.expect(output_len);
            let run = tokio::time::timeout(
                self.timeout,
                self.stream_into(worker, &body, output_len, start, &mut trace),
            );
            let outcome = tokio::select! {
                r = run => match r {
                    Ok(Sent::Stale) if stale_retries > 0 => Outcome::Stale,
                    Ok(_) => Outcome::Done,
                    Err(_) => Outcome::TimedOut,
                },
                _ = abort.cancelled() => Outcome::Aborted,
            };
            match outcome {
                Outcome::Stale => {
                    // A pooled connection the server had already closed: the request never
                    // reached it. Send it again, with a fresh clock.
                    stale_retries -= 1;
                    continue;
                }
                Outcome::Done => {}
                Outcome::TimedOut => trace.fail(
                    ErrorKind::Timeout,
                    None,
                    format!(
                        "no complete answer within {} s (--timeout)",
                        self.timeout.as_secs_f64()
                    ),
                ),
                Outcome::Aborted => trace.fail(
                    ErrorKind::Cancelled,
                    None,
                    "interrupted while in flight".into(),
                ),
            }
            return trace.finish(start.elapsed().as_secs_f64(), meta);
        }
    }

    async fn stream_into(
        &self,
        worker: usize,
        body: &serde_json::Value,
        output_len: u64,
        start: Instant,
        trace: &mut Trace,
    ) -> Sent {
        let url = self.url(api::endpoint(self.api));
        let sent = self
            .http
            .lane(worker)
            .send(http::Method::POST, &url, Some(body))
            .await;
        let resp = match sent {
            Ok(r) => r,
            Err(SendFailure { connect, chain }) => {
                if is_stale_connection(&chain) {
                    trace.fail(ErrorKind::Stream, None, format!("{url}: {chain}"));
                    return Sent::Stale;
                }
                if chain.contains("message head is too large") {
                    trace.fail(
                        ErrorKind::Protocol,
                        None,
                        format!(
                            "{url}: the answer's status line and headers ran past {} KiB, more than any server needs: llmsweep reads no further",
                            READ_BUFFER / 1024
                        ),
                    );
                    return Sent::Done;
                }
                let kind = if connect {
                    ErrorKind::Connect
                } else {
                    ErrorKind::Stream
                };
                trace.fail(kind, None, format!("{url}: {chain}"));
                return Sent::Done;
            }
        };
        if let Some((new, connect_s)) = self.connection_of(resp.extensions(), start) {
            trace.on_headers(new, connect_s, start.elapsed().as_secs_f64());
        }
        let Some(mut bytes) = stream_or_failure(resp, trace).await else {
            return Sent::Done;
        };
        let mut decoder = SseDecoder::new();
        let mut reader = api::ChunkReader::default();
        while let Some(item) = body::next_bytes(&mut bytes).await {
            let t = start.elapsed().as_secs_f64();
            match item {
                Ok(chunk) => {
                    let flow = decoder.feed(&chunk, |ev| {
                        match handle_event(ev.data, t, trace, &mut reader) {
                            Step::Next => ControlFlow::Continue(()),
                            step => ControlFlow::Break(step),
                        }
                    });
                    if let Some(too_long) = decoder.too_long() {
                        trace.fail(ErrorKind::Protocol, None, too_long.to_string());
                        return Sent::Done;
                    }
                    if let Some(why) = trace.overflow(output_len) {
                        trace.fail(ErrorKind::Protocol, None, why);
                        return Sent::Done;
                    }
                    match flow {
                        ControlFlow::Continue(()) => {}
                        ControlFlow::Break(Step::Done) => {
                            trace.on_done(output_len);
                            drain(&mut bytes).await;
                            return Sent::Done;
                        }
                        ControlFlow::Break(_) => return Sent::Done,
                    }
                }
                Err(e) => {
                    trace.fail(
                        ErrorKind::Stream,
                        None,
                        format!("{STREAM_BROKE}{}", error_chain(&*e)),
                    );
                    return Sent::Done;
                }
            }
        }
        let last = decoder.finish();
        let t = start.elapsed().as_secs_f64();
        match last.map(|ev| handle_event(&ev.data, t, trace, &mut reader)) {
            Some(Step::Done) => trace.on_done(output_len),
            Some(Step::Failed) => {}
            Some(Step::Next) | None => trace.ended_without_done(),
        }
        Sent::Done
    }
}

/// The body of the answer when it is a stream to read; `None` when it is an HTTP error or an
/// HTML page, which are recorded on the trace as the request's failure.
async fn stream_or_failure(resp: body::Answer, trace: &mut Trace) -> Option<body::AnswerBody> {
    let status = resp.status();
    if let Some(why) = crate::boundary::http::redirect_of(status, resp.headers()) {
        trace.fail(ErrorKind::Http, Some(status.as_u16()), why);
        return None;
    }
    if !status.is_success() {
        let text = body::error_text(resp.into_body()).await;
        trace.fail(
            ErrorKind::Http,
            Some(status.as_u16()),
            api::error_message(&text),
        );
        return None;
    }
    let html = resp
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("text/html"));
    if html {
        let text = body::error_text(resp.into_body()).await;
        trace.fail(ErrorKind::Protocol, None, api::html_page(&text));
        return None;
    }
    Some(resp.into_body())
}

/// Reads a body to its end after `[DONE]` (the end of its chunked encoding usually follows in
/// the next read), so that its connection goes back to the pool instead of being closed with
/// the body half read. Gives up after a short wait: the request's times are already taken.
async fn drain(bytes: &mut body::AnswerBody) {
    let rest = async { while body::next_bytes(bytes).await.is_some() {} };
    let _ = tokio::time::timeout(Duration::from_millis(200), rest).await;
}

/// Times a request is sent again after finding its pooled connection closed by the server.
const STALE_RETRIES: u32 = 3;

/// How sending ended.
enum Sent {
    Done,
    /// The pooled connection was dead before the request got through.
    Stale,
}

/// Errors that mean a kept-alive connection was closed by the server before this request used it.
fn is_stale_connection(chain: &str) -> bool {
    [
        "connection closed before message completed",
        "Connection reset by peer",
        "Broken pipe",
    ]
    .iter()
    .any(|m| chain.contains(m))
}

enum Outcome {
    Stale,
    Done,
    TimedOut,
    Aborted,
}

/// What one event means for the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Next,
    /// `[DONE]`.
    Done,
    /// An error event, or one that is not JSON: the request failed.
    Failed,
}

/// Feeds one event's data, read by the answer's `reader`, to the trace.
fn handle_event(data: &str, t: f64, trace: &mut Trace, reader: &mut api::ChunkReader) -> Step {
    let data = data.trim();
    if data == "[DONE]" {
        return Step::Done;
    }
    if data.is_empty() {
        return Step::Next;
    }
    match reader.read(data) {
        Some(ev) => {
            trace.on_chunk(t, &ev);
            if ev.error.is_some() {
                Step::Failed
            } else {
                Step::Next
            }
        }
        None => {
            let shown: String = data.chars().take(200).collect();
            trace.fail(
                ErrorKind::Protocol,
                None,
                format!("a stream event is not JSON: {shown}"),
            );
            Step::Failed
        }
    }
}

/// Whether a failure's message is the server's own words — an HTTP error's body, a stream's
/// error event — which a summary may quote as "the server said"; a refused connection, a
/// timeout, a broken stream, an answer llmsweep could not read and a redirect it did not follow
/// are described in llmsweep's words.
pub(crate) fn is_server_text(e: &llmsweep_shared::bundle::RequestError) -> bool {
    match e.kind {
        ErrorKind::Http => {
            !e.status.is_some_and(|s| (300..400).contains(&s))
                && !e.message.starts_with(api::HTML_ANSWER)
        }
        // Failures of the stream's own (see `stream_into`) start with these; an error event's
        // text is the server's.
        ErrorKind::Stream => ![STREAM_BROKE, "http://", "https://"]
            .iter()
            .any(|p| e.message.starts_with(p)),
        _ => false,
    }
}

/// How a stream that broke off is described.
const STREAM_BROKE: &str = "stream broke off: ";

#[cfg(test)]
mod tests {
    use super::*;
    use llmsweep_shared::bundle::RequestError;

    /// Both lanes read the same stream into the same record: every token, its first request
    /// on a connection it opened (and timed), the next one on that connection again.
    #[tokio::test]
    async fn the_direct_lane_and_reqwests_record_a_stream_alike() {
        use crate::selftest::endpoint::{Endpoint, Pacing};
        let e = Endpoint::start(
            Pacing::FlatOut { per_event: 1 },
            (std::net::Ipv4Addr::LOCALHOST, 0).into(),
        )
        .await
        .unwrap();
        let url = e.url();
        assert!(direct_lane(&url) || std::env::var_os("HTTP_PROXY").is_some());
        assert!(!direct_lane("https://127.0.0.1:1"));
        let prompt = Prompt {
            text: "hello".into(),
            tokens: 1,
            hash: "0".into(),
            content_hash: None,
            words: 1,
            messages: None,
            output_len: None,
        };
        let mut seen = Vec::new();
        for direct in [true, false] {
            let http = LoadHttp::with_lanes(&Credentials::default(), 1, &url, direct).unwrap();
            assert_eq!(matches!(http.lane(0), Lane::Direct { .. }), direct);
            let client = Client::new(
                http,
                &url,
                Api::Completions,
                crate::selftest::wire::MODEL.into(),
                Duration::from_secs(10),
            );
            let abort = CancellationToken::new();
            for n in 0..2 {
                let f = client
                    .generate(0, &prompt, 300, Instant::now(), &abort, Follow::default())
                    .await;
                let r = &f.record;
                assert!(r.is_ok(), "{direct} {:?}", r.error);
                assert_eq!((r.output_tokens, r.chunks), (300, 300), "{direct}");
                let setup = r.setup.expect("the answer's connection is known");
                assert_eq!(setup.new_connection, n == 0, "{direct} request {n}");
                assert_eq!(setup.connect_s.is_some(), n == 0, "{direct} request {n}");
                seen.push((r.output_tokens, f.itl_gaps_s.len(), f.text.clone()));
            }
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
        e.shutdown().await;
    }

    fn error(kind: ErrorKind, status: Option<u16>, message: &str) -> RequestError {
        RequestError {
            kind,
            status,
            message: message.into(),
        }
    }

    /// Only what the server sent is quoted as what it said.
    #[test]
    fn the_servers_words_are_told_from_llmsweeps() {
        let said = [
            error(ErrorKind::Http, Some(503), "overloaded"),
            error(ErrorKind::Stream, None, "engine died"),
        ];
        for e in &said {
            assert!(is_server_text(e), "{e:?}");
        }
        let ours = [
            error(
                ErrorKind::Connect,
                None,
                "http://127.0.0.1:1/v1/completions: refused",
            ),
            error(
                ErrorKind::Timeout,
                None,
                "no complete answer within 5 s (--timeout)",
            ),
            error(ErrorKind::Protocol, None, "a stream line grew past 1 MiB"),
            error(
                ErrorKind::Stream,
                None,
                "stream broke off: connection reset",
            ),
            error(
                ErrorKind::Stream,
                None,
                "http://h/v1/completions: connection closed",
            ),
            error(
                ErrorKind::Http,
                Some(307),
                "the server answered 307 Temporary Redirect",
            ),
            error(
                ErrorKind::Http,
                Some(502),
                "the server answered with an HTML page, not the API's JSON",
            ),
            error(ErrorKind::EndedEarly, None, "the stream ended early"),
        ];
        for e in &ours {
            assert!(!is_server_text(e), "{e:?}");
        }
    }
}
