//! What a run sends to prove who it is, and keeps out of everything it writes or shows: the API
//! key, a user name and password in `--url`, and the values of `--header`.
//!
//! They are taken apart from the flags here, once: the URL the rest of the program sees has no
//! user information, and the command line kept in a bundle has every secret replaced by `***`.

use anyhow::bail;

pub(crate) use crate::boundary::http::redact_url;
use base64::Engine as _;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};

/// What every request of a run carries besides its body, to every endpoint (generation, probes,
/// tokenizer, `/metrics`). Its `Debug` shows no secret.
#[derive(Clone, Default)]
pub struct Credentials {
    /// Sent as `Authorization: Bearer KEY`.
    pub api_key: Option<String>,
    /// Sent as HTTP basic authentication: the `user:password@` of `--url`, percent-decoded.
    pub basic: Option<(String, String)>,
    /// `--header NAME:VALUE`, in the order given, each marked sensitive.
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl Credentials {
    /// Whether a request would carry anything secret: a key, a password or a header.
    pub fn any(&self) -> bool {
        self.api_key.is_some() || self.basic.is_some() || !self.headers.is_empty()
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("basic", &self.basic.as_ref().map(|(u, _)| (u, "***")))
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(n, _)| format!("{n}:***"))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Credentials {
    /// The headers every request carries.
    pub fn header_map(&self) -> anyhow::Result<HeaderMap> {
        let mut headers = HeaderMap::new();
        if let Some(key) = &self.api_key {
            let v = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
                anyhow::anyhow!("the API key contains characters not allowed in a header")
            })?;
            headers.insert(AUTHORIZATION, sensitive(v));
        }
        if let Some((user, password)) = &self.basic {
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            let v = HeaderValue::from_str(&format!("Basic {token}"))?;
            headers.insert(AUTHORIZATION, sensitive(v));
        }
        for (name, value) in &self.headers {
            headers.append(name.clone(), value.clone());
        }
        Ok(headers)
    }

    /// Whether some `--header` sets `Authorization` itself.
    pub fn header_sets_authorization(&self) -> bool {
        self.headers.iter().any(|(n, _)| n == AUTHORIZATION)
    }
}

fn sensitive(mut v: HeaderValue) -> HeaderValue {
    v.set_sensitive(true);
    v
}

/// Headers `--header` may not set: the HTTP client writes them from the request itself.
const RESERVED: [&str; 4] = ["host", "content-length", "transfer-encoding", "connection"];

/// Parses one `--header NAME:VALUE` (spaces around the value are dropped, as curl does). A
/// message never repeats the value: it may be a secret.
pub(crate) fn parse_header(s: &str) -> anyhow::Result<(HeaderName, HeaderValue)> {
    let Some((name, value)) = s.split_once(':') else {
        bail!(
            "--header needs NAME:VALUE, e.g. --header X-Api-Key:abc123; one has no ':' (its text is not repeated here, it may be a secret)"
        );
    };
    let name = name.trim();
    if name.is_empty() {
        bail!("--header :*** has no name before the ':'; use NAME:VALUE");
    }
    let Ok(header) = HeaderName::from_bytes(name.as_bytes()) else {
        bail!(
            "--header {:?}:***: that is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)",
            name
        );
    };
    if RESERVED.contains(&header.as_str()) {
        bail!("--header {header}:***: llmsweep sets {header} itself; it cannot be given");
    }
    let Ok(v) = HeaderValue::from_str(value.trim()) else {
        bail!(
            "--header {header}:***: the value has characters a header cannot carry (line breaks, control or non-ASCII characters)"
        );
    };
    Ok((header, sensitive(v)))
}

/// Most bytes `--header @FILE` reads: a few headers, not a data file given by mistake.
const HEADER_FILE_MAX: u64 = 64 * 1024;

/// Reads `--header @FILE`, as curl's `-H @file` does: one `NAME: VALUE` per line; blank lines
/// and lines starting with `#` are skipped. The values never appear on the command line (where
/// `ps` shows them) nor in the bundle; a message names the file and the line, never a value.
pub(crate) fn header_file(path: &str) -> anyhow::Result<Vec<(HeaderName, HeaderValue)>> {
    use crate::boundary::file::{self, FileError};
    let text = file::read_text(std::path::Path::new(path), HEADER_FILE_MAX).map_err(|e| match e {
        FileError::TooBig { .. } | FileError::TooLong { .. } => anyhow::anyhow!(
            "--header @{path}: the file is longer than {} KiB; it should hold a few NAME: VALUE lines",
            HEADER_FILE_MAX / 1024
        ),
        e => anyhow::anyhow!("--header @{path}: the file {e}"),
    })?;
    let mut headers = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let h = parse_header(line)
            .map_err(|e| anyhow::anyhow!("--header @{path} line {}: {e}", i + 1))?;
        headers.push(h);
    }
    if headers.is_empty() {
        bail!("--header @{path}: the file has no NAME: VALUE line");
    }
    Ok(headers)
}

/// A URL split from the user name and password it may carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SplitUrl {
    /// The URL with no user information: where requests go, and what messages name.
    pub url: String,
    /// `scheme://***@host…` when the URL carried a user name or password, else `url`: what a
    /// bundle and the terminal show.
    pub shown: String,
    /// The user name and password, percent-decoded.
    pub basic: Option<(String, String)>,
}

/// Takes the `user:password@` out of a parsed URL.
pub(crate) fn split_userinfo(parsed: &reqwest::Url, as_given: &str) -> SplitUrl {
    if parsed.username().is_empty() && parsed.password().is_none() {
        return SplitUrl {
            url: as_given.to_string(),
            shown: as_given.to_string(),
            basic: None,
        };
    }
    let basic = (
        percent_decode(parsed.username()),
        percent_decode(parsed.password().unwrap_or("")),
    );
    let mut clean = parsed.clone();
    // Neither fails on an http(s) URL with a host, which the caller checked.
    let _ = clean.set_username("");
    let _ = clean.set_password(None);
    let mut url = clean.to_string();
    // `Url` writes a lone "/" for an empty path; the URL as given had none.
    if url.ends_with('/') && !as_given.trim_end().ends_with('/') {
        url.pop();
    }
    SplitUrl {
        shown: redact_url(&url_with_marker(&url)),
        url,
        basic: Some(basic),
    }
}

/// `http://host…` → `http://@host…`, which [`redact_url`] turns into `http://***@host…`.
fn url_with_marker(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => format!("{scheme}://@{rest}"),
        None => url.to_string(),
    }
}

/// `%xx` escapes of a URL's user information decoded (as a browser does before it sends them).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The command line as typed, with every secret replaced by `***`: the value of `--api-key`,
/// the value of each `--header` (its name kept: `X-Api-Key:***`), and the user information of
/// any URL.
pub fn redacted_command_line(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut next: Option<fn(&str) -> String> = None;
    for a in args {
        if let Some(hide) = next.take() {
            out.push(hide(&a));
            continue;
        }
        let shown = match a.split_once('=') {
            Some(("--api-key", _)) => "--api-key=***".to_string(),
            Some(("--header", v)) => format!("--header={}", header_shown(v)),
            _ if a == "--api-key" => {
                next = Some(|_| "***".to_string());
                a
            }
            _ if a == "--header" => {
                next = Some(header_shown);
                a
            }
            _ => redact_url(&a),
        };
        out.push(shown);
    }
    out
}

/// `NAME:VALUE` → `NAME:***`; without a colon, all of it is hidden. `@FILE` is kept: the path
/// is not the secret.
fn header_shown(v: &str) -> String {
    if v.starts_with('@') {
        return v.to_string();
    }
    match v.split_once(':') {
        Some((name, _)) => format!("{}:***", name.trim()),
        None => "***".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> SplitUrl {
        split_userinfo(&reqwest::Url::parse(s).unwrap(), s)
    }

    #[test]
    fn userinfo_leaves_the_url_and_becomes_basic_auth() {
        let s = split("http://user:s3cret%40pw@kpro5:8000");
        assert_eq!(s.url, "http://kpro5:8000");
        assert_eq!(s.shown, "http://***@kpro5:8000");
        assert_eq!(s.basic, Some(("user".into(), "s3cret@pw".into())));
        let p = split("https://only-user@h/v1/");
        assert_eq!(
            (p.url.as_str(), p.shown.as_str()),
            ("https://h/v1/", "https://***@h/v1/")
        );
        assert_eq!(p.basic, Some(("only-user".into(), String::new())));
        let plain = split("http://127.0.0.1:30000");
        assert_eq!(
            (plain.url.as_str(), plain.basic),
            ("http://127.0.0.1:30000", None)
        );
        assert_eq!(plain.shown, plain.url);
    }

    #[test]
    fn basic_auth_is_the_authorization_header() {
        let c = Credentials {
            basic: Some(("user".into(), "pw".into())),
            ..Credentials::default()
        };
        let h = c.header_map().unwrap();
        // base64("user:pw")
        assert_eq!(h[AUTHORIZATION], "Basic dXNlcjpwdw==");
        assert!(h[AUTHORIZATION].is_sensitive());
    }

    #[test]
    fn urls_in_any_text_lose_their_userinfo() {
        assert_eq!(
            redact_url("--url=http://u:p@h:1/v1?x=a@b"),
            "--url=http://***@h:1/v1?x=a@b"
        );
        assert_eq!(redact_url("not a url"), "not a url");
        assert_eq!(
            redact_url("a http://u:p@@x b https://y/z"),
            "a http://***@x b https://y/z"
        );
        assert_eq!(redact_url("http://u:p@"), "http://***@");
    }

    #[test]
    fn headers_are_checked_without_repeating_their_values() {
        let (n, v) = parse_header("X-Token: t0psecret ").unwrap();
        assert_eq!((n.as_str(), v.to_str().unwrap()), ("x-token", "t0psecret"));
        assert!(v.is_sensitive());
        for (bad, needle) in [
            ("X-Token t0psecret", "needs NAME:VALUE"),
            (":t0psecret", "no name"),
            ("X Token:t0psecret", "not a header name"),
            ("X-Token:t0p\u{7}secret", "characters a header cannot carry"),
            ("Host:t0psecret", "sets host itself"),
        ] {
            let e = parse_header(bad).unwrap_err().to_string();
            assert!(e.contains(needle), "{bad:?}: {e}");
            assert!(!e.contains("t0p"), "{bad:?} repeats the value: {e}");
        }
    }

    #[test]
    fn secrets_are_redacted_from_the_command_line() {
        let line = redacted_command_line(
            [
                "llmsweep",
                "throughput",
                "--api-key",
                "sk-secret",
                "--api-key=sk-2",
                "--url",
                "http://user:pw@kpro5:8000",
                "--url=https://a:b@h/v1",
                "--header",
                "X-Api-Key: abc",
                "--header=X-Other:def",
                "--header",
                "nocolon",
                "--label",
                "x",
            ]
            .map(String::from),
        );
        assert_eq!(
            line,
            [
                "llmsweep",
                "throughput",
                "--api-key",
                "***",
                "--api-key=***",
                "--url",
                "http://***@kpro5:8000",
                "--url=https://***@h/v1",
                "--header",
                "X-Api-Key:***",
                "--header=X-Other:***",
                "--header",
                "***",
                "--label",
                "x"
            ]
        );
    }

    #[test]
    fn headers_are_read_from_a_file_and_its_messages_repeat_no_value() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("headers");
        std::fs::write(
            &file,
            "# secrets\nX-Api-Key: t0psecret\n\n  X-Org:acme  \r\n",
        )
        .unwrap();
        let path = file.to_str().unwrap();
        let h = header_file(path).unwrap();
        let got: Vec<(&str, &str)> = h
            .iter()
            .map(|(n, v)| (n.as_str(), v.to_str().unwrap()))
            .collect();
        assert_eq!(got, [("x-api-key", "t0psecret"), ("x-org", "acme")]);
        assert!(h.iter().all(|(_, v)| v.is_sensitive()));
        std::fs::write(&file, "X-Api-Key: ok\nX-Token t0psecret\n").unwrap();
        let e = header_file(path).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "--header @{path} line 2: --header needs NAME:VALUE"
            )),
            "{e}"
        );
        assert!(!e.contains("t0p"), "{e}");
        std::fs::write(&file, "# nothing\n").unwrap();
        let e = header_file(path).unwrap_err().to_string();
        assert!(e.contains("has no NAME: VALUE line"), "{e}");
        let e = header_file("/nonexistent/h").unwrap_err().to_string();
        assert!(
            e.starts_with("--header @/nonexistent/h: the file cannot be read"),
            "{e}"
        );
        std::fs::write(&file, "X-A: b\n".repeat(20_000)).unwrap();
        let e = header_file(path).unwrap_err().to_string();
        assert!(e.contains("longer than 64 KiB"), "{e}");
        assert_eq!(
            redacted_command_line(["--header", "@/run/secrets/h"].map(String::from)),
            ["--header", "@/run/secrets/h"]
        );
    }

    #[test]
    fn debug_shows_no_secret() {
        let c = Credentials {
            api_key: Some("sk-1".into()),
            basic: Some(("u".into(), "pw-1".into())),
            headers: vec![parse_header("X-T:val-1").unwrap()],
        };
        let d = format!("{c:?}");
        assert!(
            !d.contains("sk-1") && !d.contains("pw-1") && !d.contains("val-1"),
            "{d}"
        );
        assert!(d.contains("x-t:***"), "{d}");
    }
}
