//! How long each connection took to open, and from which local addresses they are opened.
//!
//! [`TimeConnects`] is a layer under reqwest's connector: it times every connection it opens
//! (name lookup, TCP and TLS) and keeps the time by the connection's local address, where the
//! request that first uses the connection finds it ([`ConnectLog::take`]).

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use hyper_util::client::legacy::connect::{Connection, HttpInfo};

/// When each connection began to open and how long it took, by local address, until a
/// request takes it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConnectLog(Arc<Mutex<HashMap<SocketAddr, (Instant, f64)>>>);

impl ConnectLog {
    fn put(&self, local: SocketAddr, began: Instant, seconds: f64) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(local, (began, seconds));
    }

    /// How long the connection at `local` took to open, seconds, if it began to open after
    /// `since` (the request's start: the setup was on its path); taken once.
    pub(crate) fn take(&self, local: SocketAddr, since: Instant) -> Option<f64> {
        let entry = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&local);
        entry.filter(|(began, _)| *began >= since).map(|(_, s)| s)
    }
}

/// The layer that times connections into a [`ConnectLog`].
#[derive(Debug, Clone)]
pub(crate) struct TimeConnects(pub ConnectLog);

impl<S> tower_layer::Layer<S> for TimeConnects {
    type Service = Timed<S>;

    fn layer(&self, inner: S) -> Timed<S> {
        Timed {
            inner,
            log: self.0.clone(),
        }
    }
}

/// A connector that times the connections of the one it wraps.
#[derive(Debug, Clone)]
pub(crate) struct Timed<S> {
    inner: S,
    log: ConnectLog,
}

impl<S, R> tower_service::Service<R> for Timed<S>
where
    S: tower_service::Service<R>,
    S::Response: Connection,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: R) -> Self::Future {
        let start = Instant::now();
        let connecting = self.inner.call(request);
        let log = self.log.clone();
        Box::pin(async move {
            let conn = connecting.await?;
            let seconds = start.elapsed().as_secs_f64();
            let mut extras = http::Extensions::new();
            conn.connected().get_extras(&mut extras);
            if let Some(info) = extras.get::<HttpInfo>() {
                log.put(info.local_addr(), start, seconds);
            }
            Ok(conn)
        })
    }
}

/// Connections one source address should carry at most: well under the 28,232 ephemeral
/// ports of Linux's default range, so that the connections a level closes (which keep their
/// port for a minute in TIME_WAIT) leave room for the next level's.
pub(crate) const STREAMS_PER_SOURCE: usize = 4096;

/// The local addresses to open `pool` connections to `host` from: none chosen (the kernel's
/// choice) unless the host is an IPv4 loopback address and one address would carry more than
/// [`STREAMS_PER_SOURCE`]; then 127.0.0.1, 127.0.0.2, … (all of 127.0.0.0/8 is this machine),
/// so that every source address has ports to spare.
pub(crate) fn source_addresses(host: Option<&str>, pool: usize) -> Vec<Option<IpAddr>> {
    let loopback_v4 = host
        .and_then(|h| h.parse::<Ipv4Addr>().ok())
        .is_some_and(|ip| ip.is_loopback());
    if !loopback_v4 || pool <= STREAMS_PER_SOURCE {
        return vec![None];
    }
    (0..pool.div_ceil(STREAMS_PER_SOURCE))
        .map(|k| Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1 + k as u8))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_big_pool_on_ipv4_loopback_is_spread() {
        assert_eq!(source_addresses(Some("127.0.0.1"), 4096), [None]);
        assert_eq!(source_addresses(Some("10.0.0.5"), 16_384), [None]);
        assert_eq!(source_addresses(Some("localhost"), 16_384), [None]);
        assert_eq!(source_addresses(None, 16_384), [None]);
        let spread = source_addresses(Some("127.0.0.1"), 16_384);
        let want: Vec<Option<IpAddr>> = (1..=4)
            .map(|d| Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, d))))
            .collect();
        assert_eq!(spread, want);
        assert_eq!(source_addresses(Some("127.0.0.1"), 4097).len(), 2);
    }

    #[test]
    fn a_connect_time_is_taken_once_by_a_request_that_began_before_it() {
        let log = ConnectLog::default();
        let at: SocketAddr = "127.0.0.2:40000".parse().unwrap();
        let request = Instant::now();
        let began = request + std::time::Duration::from_micros(10);
        log.put(at, began, 0.25);
        assert_eq!(log.take(at, request), Some(0.25));
        assert_eq!(log.take(at, request), None);
        // Opened before the request began (by the pool, for another one): not on its path.
        log.put(at, began, 0.25);
        assert_eq!(
            log.take(at, began + std::time::Duration::from_micros(1)),
            None
        );
    }
}
