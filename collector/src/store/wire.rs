//! The object store's requests under the outbound policy ([`crate::boundary::http`]):
//! `object_store` signs and retries, this sends. No redirect is followed (a store that answers
//! 301 or 307 to another host would get the signed request and its session token), a timeout
//! is named as one, and every answer is read under a cap: a listing page within
//! [`LISTING_PAGE_CAP`] and only when it is an S3 listing, an object within [`BODY_CAP`], an
//! error within the policy's cap on error bodies.
//!
//! Messages made here go through `object_store`'s errors between the markers [`OPEN`] and
//! [`CLOSE`], so that [`super::bucket`] can tell llmsweep's own sentence from the store's words.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use http_body_util::BodyExt;
use object_store::ClientOptions;
use object_store::client::{
    HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService,
};

use crate::boundary::http::{self as policy, ERROR_BODY_CAP, bytes as size};

/// Most bytes of one listing page: a page of 1,000 keys is about 300 KB.
pub(crate) const LISTING_PAGE_CAP: usize = 8 << 20;

/// Most bytes of any other answer: a bundle at its largest, and some.
pub(crate) const BODY_CAP: u64 = llmsweep_shared::bundle::MAX_INFLATED_BYTES as u64 + (1 << 20);

/// How long one request to the store may take, from its start to the end of its answer.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long connecting to the store may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens llmsweep's sentence inside an `object_store` error.
pub(crate) const OPEN: &str = "\u{27e6}";
/// Closes it.
pub(crate) const CLOSE: &str = "\u{27e7}";

/// The connector given to `object_store`: every client it makes is the policy's.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Connector;

impl HttpConnector for Connector {
    fn connect(&self, _options: &ClientOptions) -> object_store::Result<HttpClient> {
        let client = policy::builder()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| object_store::Error::Generic {
                store: "S3",
                source: Box::new(e),
            })?;
        Ok(HttpClient::new(Service { client }))
    }
}

#[derive(Debug)]
struct Service {
    client: reqwest::Client,
}

/// llmsweep's own sentence, carried through `object_store`'s error types.
#[derive(Debug)]
struct Said(String);

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{OPEN}{}{CLOSE}", self.0)
    }
}

impl std::error::Error for Said {}

fn said(kind: HttpErrorKind, sentence: String) -> HttpError {
    HttpError::new(kind, Said(policy::redact_url(&sentence)))
}

/// Whether a request is a listing (`ListObjectsV2`).
fn is_listing(uri: &http::Uri) -> bool {
    uri.query()
        .is_some_and(|q| q.split('&').any(|kv| kv == "list-type=2"))
}

/// Whether `body` is an S3 listing: XML whose root is `ListBucketResult`, not an HTML page or a
/// proxy's answer that would read as an empty bucket.
pub(crate) fn looks_like_listing(body: &[u8]) -> bool {
    let head = &body[..body.len().min(4096)];
    let text = String::from_utf8_lossy(head);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    let root = match text.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or("", |(_, r)| r).trim_start(),
        None => text,
    };
    root.starts_with("<ListBucketResult")
}

/// Why a request failed, in words, and its kind for `object_store`'s retries.
fn failure(e: &reqwest::Error) -> HttpError {
    let chain = policy::error_chain(e);
    if e.is_timeout() {
        return said(
            HttpErrorKind::Timeout,
            format!(
                "the store did not answer within {} s (a timeout): it is slow or overloaded, or a network device drops the connection",
                REQUEST_TIMEOUT.as_secs()
            ),
        );
    }
    let kind = if e.is_connect() {
        HttpErrorKind::Connect
    } else {
        HttpErrorKind::Request
    };
    // Not llmsweep's sentence: the store's side of it, which [`super::bucket`] explains.
    HttpError::new(kind, std::io::Error::other(chain))
}

/// A redirect, refused: where it pointed and what to do.
fn redirect(status: http::StatusCode, headers: &http::HeaderMap) -> Option<HttpError> {
    if !status.is_redirection() || status == http::StatusCode::NOT_MODIFIED {
        return None;
    }
    let location = headers
        .get(http::header::LOCATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let region = headers
        .get("x-amz-bucket-region")
        .and_then(|v| v.to_str().ok())
        .filter(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    let remedy = match region {
        Some(r) => format!("the bucket is in region {r}: set AWS_REGION={r}"),
        None => "set AWS_ENDPOINT_URL to the store's own address (or AWS_REGION to the bucket's region, on AWS)".to_string(),
    };
    Some(said(
        HttpErrorKind::Unknown,
        policy::redirect_refusal(
            "the store",
            status,
            location.as_deref(),
            "credential",
            &remedy,
        ),
    ))
}

#[async_trait]
impl HttpService for Service {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let (parts, body) = req.into_parts();
        let listing = is_listing(&parts.uri);
        let url = reqwest::Url::parse(&parts.uri.to_string()).map_err(|e| {
            said(
                HttpErrorKind::Request,
                format!("the store's address {} is not a URL: {e}", parts.uri),
            )
        })?;
        let mut r = reqwest::Request::new(parts.method, url);
        *r.headers_mut() = parts.headers;
        *r.body_mut() = Some(reqwest::Body::wrap(body));
        let resp = self.client.execute(r).await.map_err(|e| failure(&e))?;
        let status = resp.status();
        if let Some(refused) = redirect(status, resp.headers()) {
            return Err(refused);
        }
        let mut head = http::Response::builder().status(status);
        if let Some(h) = head.headers_mut() {
            *h = resp.headers().clone();
        }
        let body = if !status.is_success() {
            // An error's words: the start of them is enough.
            let start = error_start(resp).await;
            HttpResponseBody::from(start)
        } else if listing {
            let page = policy::read_capped(resp, LISTING_PAGE_CAP)
                .await
                .map_err(|e| {
                    said(
                        HttpErrorKind::Decode,
                        format!("a page of the store's listing: {e}"),
                    )
                })?;
            if !looks_like_listing(&page) {
                return Err(said(
                    HttpErrorKind::Decode,
                    "the store answered a listing with something that is not an S3 listing (no <ListBucketResult>: an HTML page, or a proxy's answer?): check AWS_ENDPOINT_URL".to_string(),
                ));
            }
            HttpResponseBody::from(Bytes::from(page))
        } else {
            let declared = resp.content_length();
            if declared.is_some_and(|n| n > BODY_CAP) {
                return Err(said(
                    HttpErrorKind::Decode,
                    format!(
                        "the store's answer is {}, more than llmsweep reads",
                        size(declared.unwrap_or(0))
                    ),
                ));
            }
            let inner: http::Response<reqwest::Body> = resp.into();
            HttpResponseBody::new(Capped {
                inner: inner.into_body(),
                read: 0,
                cap: BODY_CAP,
            })
        };
        head.body(body)
            .map_err(|e| said(HttpErrorKind::Decode, format!("the store's answer: {e}")))
    }
}

/// The first [`ERROR_BODY_CAP`] bytes of an error answer; the rest is not read.
async fn error_start(resp: reqwest::Response) -> Bytes {
    let inner: http::Response<reqwest::Body> = resp.into();
    let mut body = inner.into_body();
    let mut out = Vec::new();
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            let room = ERROR_BODY_CAP - out.len();
            out.extend_from_slice(&data[..data.len().min(room)]);
            if out.len() >= ERROR_BODY_CAP {
                break;
            }
        }
    }
    Bytes::from(out)
}

/// An answer's body that fails once more than `cap` bytes have come.
struct Capped {
    inner: reqwest::Body,
    read: u64,
    cap: u64,
}

impl http_body::Body for Capped {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, HttpError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.read += data.len() as u64;
                    if this.read > this.cap {
                        return Poll::Ready(Some(Err(said(
                            HttpErrorKind::Decode,
                            format!(
                                "the store's answer went on past {}, more than llmsweep reads",
                                size(this.cap)
                            ),
                        ))));
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(failure(&e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_s3_listing_is_taken_for_one() {
        assert!(looks_like_listing(
            b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult xmlns=\"x\"></ListBucketResult>"
        ));
        assert!(looks_like_listing(b"\xef\xbb\xbf <ListBucketResult>"));
        assert!(!looks_like_listing(
            b"<!doctype html><html><body>Sign in</body></html>"
        ));
        assert!(!looks_like_listing(
            b"<?xml version=\"1.0\"?><Error><Code>x</Code></Error>"
        ));
        assert!(!looks_like_listing(b""));
        assert!(!looks_like_listing(b"{\"objects\": []}"));
    }

    #[test]
    fn a_listing_request_is_told_by_its_query() {
        let u: http::Uri = "http://127.0.0.1:3900/b?list-type=2&prefix=a%2F"
            .parse()
            .unwrap();
        assert!(is_listing(&u));
        let u: http::Uri = "http://127.0.0.1:3900/b/list-type=2.json".parse().unwrap();
        assert!(!is_listing(&u));
    }

    #[tokio::test]
    async fn a_store_that_does_not_answer_is_named_a_timeout_not_unreachable() {
        let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/b?list-type=2", silent.local_addr().unwrap());
        let held = tokio::spawn(async move {
            let (_conn, _) = silent.accept().await.unwrap();
            tokio::time::sleep(Duration::from_secs(5)).await;
        });
        let client = policy::builder()
            .timeout(Duration::from_millis(200))
            .build()
            .unwrap();
        let e = client.get(&url).send().await.unwrap_err();
        let text = failure(&e).to_string();
        assert!(
            text.contains("the store did not answer within 60 s (a timeout)"),
            "{text}"
        );
        held.abort();
        // Refused is not a timeout: the store's own words, for the bucket to explain.
        let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", closed.local_addr().unwrap());
        drop(closed);
        let e = client.get(&url).send().await.unwrap_err();
        let text = failure(&e).to_string();
        assert!(
            !text.contains("timeout") && text.contains("onnection refused"),
            "{text}"
        );
    }

    #[test]
    fn a_redirect_is_refused_with_where_it_pointed_and_the_region_to_set() {
        let mut h = http::HeaderMap::new();
        h.insert(
            http::header::LOCATION,
            "http://AKIA:secret@evil.example:9000/b".parse().unwrap(),
        );
        let e = redirect(http::StatusCode::TEMPORARY_REDIRECT, &h).unwrap();
        let text = e.to_string();
        assert!(text.contains("the store answered 307 Temporary Redirect to http://***@evil.example:9000/b: llmsweep does not follow redirects, so no credential goes to another host"), "{text}");
        assert!(!text.contains("secret"), "{text}");
        let mut h = http::HeaderMap::new();
        h.insert("x-amz-bucket-region", "eu-west-3".parse().unwrap());
        let text = redirect(http::StatusCode::MOVED_PERMANENTLY, &h)
            .unwrap()
            .to_string();
        assert!(text.contains("set AWS_REGION=eu-west-3"), "{text}");
        assert!(redirect(http::StatusCode::OK, &h).is_none());
    }
}
