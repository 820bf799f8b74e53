//! The one outbound HTTP policy: every client llmsweep builds (to the LLM server, its probes and
//! tokenizer, the telemetry scrape, the object store, the selftest) is built here and follows no
//! redirect, and every body it reads whole stops at a size, so a hostile or broken server or
//! store can neither send a request (and its headers, keys and tokens) to another host nor make
//! llmsweep hold gigabytes. Messages name a redirect as a redirect and a timeout as a timeout,
//! and show no URL's user name or password.

use futures_util::StreamExt;
use reqwest::StatusCode;

/// Most bytes of an error answer or an HTML page kept to quote from: a server's error message
/// is a sentence or a small JSON object.
pub(crate) const ERROR_BODY_CAP: usize = 64 * 1024;

/// Most bytes of a probe's or a scrape's answer: `/metrics` of a big server and an API schema
/// run to a few hundred kilobytes; this leaves room for much more without letting a server fill
/// the memory.
pub(crate) const PROBE_BODY_CAP: usize = 16 * 1024 * 1024;

/// Most bytes of the `/v1/models` answer: a gateway may list tens of thousands of models at a
/// few hundred bytes each.
pub(crate) const MODELS_BODY_CAP: usize = 64 * 1024 * 1024;

/// A client builder with the settings every client of the collector shares: no redirect is
/// followed (a server that answers 3xx would otherwise get the run's requests, with their
/// `--header` values and key, sent to another host).
pub(crate) fn builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none())
}

/// Why a body was not read whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReadError {
    /// It ran past `cap` bytes; `declared` is its `Content-Length` when the server sent one.
    TooLong { cap: usize, declared: Option<u64> },
    /// The connection failed while it was read.
    Broken(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::TooLong { cap, declared } => {
                write!(f, "the answer is longer than {}", bytes(*cap as u64))?;
                if let Some(n) = declared {
                    write!(f, " (it says {})", bytes(*n))?;
                }
                write!(f, ", more than llmsweep reads")
            }
            ReadError::Broken(e) => write!(f, "the answer broke off: {e}"),
        }
    }
}

/// A size in the unit that reads best: `512 bytes`, `64 KiB`, `3.2 MiB`.
pub(crate) fn bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    let f = n as f64;
    if f < KIB {
        format!("{n} bytes")
    } else if f < KIB * KIB {
        format!("{} KiB", round1(f / KIB))
    } else if f < KIB * KIB * KIB {
        format!("{} MiB", round1(f / KIB / KIB))
    } else {
        format!("{} GiB", round1(f / KIB / KIB / KIB))
    }
}

fn round1(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// The body of `resp`, read chunk by chunk and given up on past `cap` bytes.
pub(crate) async fn read_capped(resp: reqwest::Response, cap: usize) -> Result<Vec<u8>, ReadError> {
    let declared = resp.content_length();
    if declared.is_some_and(|n| n > cap as u64) {
        return Err(ReadError::TooLong { cap, declared });
    }
    let mut out = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| ReadError::Broken(error_chain(&e)))?;
        if out.len() + chunk.len() > cap {
            return Err(ReadError::TooLong { cap, declared });
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// The body of `resp` as text (lossy), given up on past `cap` bytes.
pub(crate) async fn text_capped(resp: reqwest::Response, cap: usize) -> Result<String, ReadError> {
    let b = read_capped(resp, cap).await?;
    Ok(match String::from_utf8(b) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// When `resp` is a redirect, what to say of it: its status, where it points, and that it is
/// not followed. `None` for any other answer.
pub(crate) fn redirect_message(resp: &reqwest::Response) -> Option<String> {
    redirect_of(resp.status(), resp.headers())
}

/// [`redirect_message`] from an answer's status and headers.
pub(crate) fn redirect_of(status: StatusCode, headers: &http::HeaderMap) -> Option<String> {
    if !status.is_redirection() || status == StatusCode::NOT_MODIFIED {
        return None;
    }
    let location = headers
        .get(reqwest::header::LOCATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    Some(redirect_words(status, location.as_deref()))
}

/// "the server answered 307 Temporary Redirect to http://…: llmsweep does not follow redirects…".
/// The target is shown without any user name or password and with control characters escaped.
pub(crate) fn redirect_words(status: StatusCode, location: Option<&str>) -> String {
    match location {
        Some(_) => redirect_refusal(
            "the server",
            status,
            location,
            "header",
            "give the address it redirects to with --url",
        ),
        None => redirect_refusal(
            "the server",
            status,
            None,
            "header",
            "give the server's own address with --url",
        ),
    }
}

/// What `who` ("the server", "the store") answering a redirect is told: its status, where it
/// points (no user name or password, controls escaped), that it is not followed so no `kept`
/// ("header", "credential") goes to another host, and `remedy`.
pub(crate) fn redirect_refusal(
    who: &str,
    status: StatusCode,
    location: Option<&str>,
    kept: &str,
    remedy: &str,
) -> String {
    let code = match status.canonical_reason() {
        Some(r) => format!("{} {r}", status.as_u16()),
        None => status.as_u16().to_string(),
    };
    match location {
        Some(to) => {
            let to = redact_url(to);
            let to = llmsweep_shared::text::inert(&to);
            format!(
                "{who} answered {code} to {to}: llmsweep does not follow redirects, so no {kept} goes to another host; {remedy}"
            )
        }
        None => format!(
            "{who} answered {code} with no Location: llmsweep does not follow redirects; {remedy}"
        ),
    }
}

/// Text with the user information of every `scheme://user:password@host` in it replaced by
/// `***`: `http://***@host:8000/v1`. Works on text that does not parse as a URL too, so a
/// message about a bad `--url` does not repeat its password.
pub(crate) fn redact_url(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&authority[at..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// An error and its causes on one line ("error sending request: connection refused").
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    redact_url(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_their_unit() {
        assert_eq!(bytes(512), "512 bytes");
        assert_eq!(bytes(64 * 1024), "64 KiB");
        assert_eq!(bytes(3_355_443), "3.2 MiB");
        assert_eq!(bytes(3 * 1024 * 1024 * 1024), "3 GiB");
    }

    #[test]
    fn a_body_past_its_cap_says_how_long_it_is() {
        let e = ReadError::TooLong {
            cap: MODELS_BODY_CAP,
            declared: Some(80 * 1024 * 1024),
        };
        assert_eq!(
            e.to_string(),
            "the answer is longer than 64 MiB (it says 80 MiB), more than llmsweep reads"
        );
        let e = ReadError::TooLong {
            cap: ERROR_BODY_CAP,
            declared: None,
        };
        assert_eq!(
            e.to_string(),
            "the answer is longer than 64 KiB, more than llmsweep reads"
        );
    }

    #[test]
    fn a_redirect_names_its_target_without_its_credentials() {
        let w = redirect_words(
            StatusCode::TEMPORARY_REDIRECT,
            Some("http://u:pw@10.0.0.9:8000/v1/models\u{1b}[2J"),
        );
        assert_eq!(
            w,
            "the server answered 307 Temporary Redirect to http://***@10.0.0.9:8000/v1/models\\u{1b}[2J: llmsweep does not follow redirects, so no header goes to another host; give the address it redirects to with --url"
        );
    }
}
