//! Bundles in an S3-compatible object store: `s3://bucket/prefix` wherever a folder of bundles is
//! named, `s3://bucket/prefix/NAME.json` wherever a bundle is.
//!
//! The storage layer is Apache Arrow's `object_store` crate: kept by the Arrow project, used by
//! DataFusion, Polars and delta-rs, on the reqwest and ring this binary already links, and
//! speaking S3 and everything S3-compatible (Garage, RustFS, MinIO, R2, Ceph). A bundle is one
//! PUT of its whole bytes, which S3 makes visible at once or not at all: a reader never sees half
//! a bundle.
//!
//! Credentials come from the usual AWS chain: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` /
//! `AWS_SESSION_TOKEN`, then the profile `AWS_PROFILE` (or `default`) of
//! `~/.aws/credentials` and `~/.aws/config`, then the container and web-identity variables
//! `object_store` reads itself. The endpoint is `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL` or
//! `AWS_ENDPOINT` (or the profile's `endpoint_url`), else AWS; the region `AWS_REGION`,
//! `AWS_DEFAULT_REGION` or the profile's, else `us-east-1`. Without any credentials the store is
//! asked unsigned, as a public bucket is read. Credentials go only into the signatures of
//! requests to that endpoint; they are never written or printed (this type's `Debug` shows the
//! URL alone).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::list::{PaginatedListOptions, PaginatedListStore};
use object_store::path::Path as Key;
use object_store::{
    BackoffConfig, ClientOptions, ObjectMeta, ObjectStoreExt, PutPayload, RetryConfig,
};

/// The scheme of a bucket URL.
pub(crate) const SCHEME: &str = "s3://";

/// Most objects a listing of one prefix gathers: a team's runs for years, at a few hundred
/// bytes each in memory.
pub(crate) const MAX_LISTED: usize = 200_000;

/// Most pages a listing asks for: a store's page holds up to 1,000 keys, so an honest listing
/// of [`MAX_LISTED`] objects needs 200.
pub(crate) const MAX_PAGES: usize = 2_000;

/// An object's bytes as they come, each chunk or why the rest cannot be read.
pub(crate) type ByteStream = futures_util::stream::BoxStream<'static, anyhow::Result<Bytes>>;

/// Whether `c` may be in a key llmsweep writes: what every store, every URL and every shell
/// takes as it is (no `%`, no space, no control or non-ASCII character), so every name written
/// is listed and read back as the same name.
pub(crate) fn key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// The endpoint of `AWS_ENDPOINT_URL` (or the profile's), checked: an `http://` or `https://`
/// URL with a host, and no user name or password (which would be printed in messages and sent
/// in the clear), without its trailing slash.
fn checked_endpoint(e: &str) -> anyhow::Result<String> {
    let shown = llmsweep_shared::text::one_line(&crate::boundary::http::redact_url(e)).into_owned();
    let url = reqwest::Url::parse(e).ok();
    let Some(url) = url.filter(|u| {
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
    }) else {
        anyhow::bail!(
            "the store's endpoint {shown:?} (AWS_ENDPOINT_URL) is not an http:// or https:// address: give it as http://HOST:PORT or https://HOST"
        );
    };
    if !url.username().is_empty() || url.password().is_some() {
        anyhow::bail!(
            "the store's endpoint {shown} (AWS_ENDPOINT_URL) holds a user name or password: give the keys as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and the endpoint without them"
        );
    }
    Ok(e.trim_end_matches('/').to_string())
}

/// A prefix of a bucket: where bundles and their index are.
#[derive(Clone)]
pub struct Bucket {
    /// `s3://bucket/prefix`, no trailing slash: what messages and listings show.
    url: String,
    /// The prefix inside the bucket, no leading or trailing slash; empty for the bucket's root.
    prefix: String,
    /// Where requests go, for messages: the endpoint, or "AWS".
    endpoint: String,
    /// No credentials were found: requests are unsigned.
    anonymous: bool,
    store: Arc<AmazonS3>,
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bucket").field("url", &self.url).finish()
    }
}

/// Whether `text` names a place in a bucket.
pub(crate) fn is_bucket_url(text: &str) -> bool {
    text.get(..SCHEME.len())
        .is_some_and(|s| s.eq_ignore_ascii_case(SCHEME))
}

/// Why `text` names a place llmsweep cannot use, when it has another store's scheme: only
/// S3 and S3-compatible stores are spoken (GCS through its S3-compatible XML API).
pub(crate) fn other_scheme(text: &str) -> Option<String> {
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    let scheme = [
        "gs://", "gcs://", "az://", "abfs://", "azure://", "http://", "https://",
    ]
    .into_iter()
    .find(|s| lower.starts_with(s))?;
    Some(format!(
        "{text}: {scheme} is not a place llmsweep writes or reads bundles; give a folder, or s3://BUCKET/PREFIX for S3 or an S3-compatible store (Google Cloud Storage too, through its S3-compatible API: AWS_ENDPOINT_URL=https://storage.googleapis.com and HMAC keys as AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)"
    ))
}

/// `s3://bucket/prefix/NAME.json` split into the prefix's URL and the bundle's name, when its
/// last part is a bundle's name.
pub(crate) fn split_object(url: &str) -> Option<(String, String)> {
    let rest = url.get(SCHEME.len()..)?;
    let (dir, name) = rest.rsplit_once('/')?;
    llmsweep_shared::folder::is_bundle_name(name)
        .then(|| (format!("{SCHEME}{dir}"), name.to_string()))
}

impl Bucket {
    /// The prefix `url` (`s3://bucket` or `s3://bucket/some/prefix`), with credentials, endpoint
    /// and region from the environment (see the module's words). Nothing is asked of the store.
    pub(crate) fn open(url: &str) -> anyhow::Result<Bucket> {
        let shown =
            llmsweep_shared::text::one_line(&crate::boundary::http::redact_url(url)).into_owned();
        let rest = url.get(SCHEME.len()..).filter(|_| is_bucket_url(url));
        let Some(rest) = rest else {
            anyhow::bail!("{shown} is not a bucket URL: give s3://BUCKET or s3://BUCKET/PREFIX");
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.contains('@') {
            anyhow::bail!(
                "{shown}: a bucket URL holds no user name or password; give the keys as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), and the place as s3://BUCKET/PREFIX"
            );
        }
        let prefix = prefix.trim_end_matches('/');
        let valid_bucket = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-.".contains(&b));
        if !valid_bucket {
            anyhow::bail!(
                "{shown}: {:?} is not a bucket name (3 to 63 lower-case letters, digits, '-' and '.'): give s3://BUCKET/PREFIX",
                llmsweep_shared::text::one_line(bucket)
            );
        }
        if prefix
            .split('/')
            .any(|p| p.is_empty() || p == "." || p == "..")
            && !prefix.is_empty()
        {
            anyhow::bail!(
                "{shown}: the prefix has an empty, '.' or '..' part: give s3://BUCKET/a/b"
            );
        }
        if let Some(bad) = prefix.chars().find(|c| !key_char(*c) && *c != '/') {
            anyhow::bail!(
                "{shown}: the prefix holds {:?}, which llmsweep does not put in a bucket's keys: use letters, digits, '-', '_', '.' and '/'",
                llmsweep_shared::text::one_line(&bad.to_string())
            );
        }
        let chain = Chain::read()?;
        let endpoint = chain
            .endpoint
            .as_deref()
            .map(checked_endpoint)
            .transpose()?;
        let mut b = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .with_region(chain.region.clone())
            .with_http_connector(super::wire::Connector)
            .with_client_options(
                ClientOptions::new()
                    .with_timeout(super::wire::REQUEST_TIMEOUT)
                    .with_connect_timeout(super::wire::CONNECT_TIMEOUT),
            )
            .with_retry(RetryConfig {
                backoff: BackoffConfig {
                    init_backoff: Duration::from_millis(200),
                    max_backoff: Duration::from_secs(2),
                    base: 2.0,
                },
                max_retries: 2,
                retry_timeout: Duration::from_secs(15),
            });
        let endpoint = match &endpoint {
            Some(e) => {
                b = b
                    .with_endpoint(e.clone())
                    .with_allow_http(e.starts_with("http://"))
                    .with_virtual_hosted_style_request(false);
                e.clone()
            }
            None => "AWS".to_string(),
        };
        let anonymous = match &chain.keys {
            Some(k) => {
                b = b
                    .with_access_key_id(k.id.clone())
                    .with_secret_access_key(k.secret.clone());
                if let Some(t) = &k.token {
                    b = b.with_token(t.clone());
                }
                false
            }
            None if chain.provider_in_env => false,
            None => {
                b = b.with_skip_signature(true);
                true
            }
        };
        let store = b.build().map_err(|e| {
            anyhow::anyhow!("cannot use {shown}: {}", explain(&e.to_string(), &endpoint))
        })?;
        Ok(Bucket {
            url: format!(
                "{SCHEME}{bucket}{}{prefix}",
                if prefix.is_empty() { "" } else { "/" }
            ),
            prefix: prefix.to_string(),
            endpoint,
            anonymous,
            store: Arc::new(store),
        })
    }

    /// `s3://bucket/prefix`.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The URL of bundle (or index) `name` under the prefix.
    pub(crate) fn object_url(&self, name: &str) -> String {
        format!("{}/{name}", self.url)
    }

    fn key(&self, name: &str) -> Key {
        match self.prefix.as_str() {
            "" => Key::from(name),
            p => Key::from(format!("{p}/{name}")),
        }
    }

    /// The objects directly under the prefix (not in deeper "folders"), by name: page by page,
    /// and given up on with an error past [`MAX_LISTED`] objects or [`MAX_PAGES`] pages, or
    /// when the store sends a page token it sent before (a listing that would never end).
    pub(crate) async fn list(&self) -> anyhow::Result<Vec<(String, ObjectMeta)>> {
        let prefix = (!self.prefix.is_empty()).then(|| format!("{}/", self.prefix));
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        let mut tokens = std::collections::HashSet::new();
        for page in 0.. {
            if page == MAX_PAGES {
                anyhow::bail!(
                    "cannot list {}: the store's listing went on past {MAX_PAGES} pages ({} objects so far) and was given up: a listing that never ends is the store's fault; or give a prefix that holds fewer objects",
                    self.url,
                    out.len()
                );
            }
            let opts = PaginatedListOptions {
                delimiter: Some("/".into()),
                max_keys: Some(1000),
                page_token: token.take(),
                ..Default::default()
            };
            let got = self
                .store
                .list_paginated(prefix.as_deref(), opts)
                .await
                .map_err(|e| self.error("cannot list", &self.url, &e))?;
            out.extend(got.result.objects.into_iter().filter_map(|m| {
                let name = m.location.filename()?.to_string();
                Some((name, m))
            }));
            if out.len() > MAX_LISTED {
                anyhow::bail!(
                    "cannot list {}: it holds more than {MAX_LISTED} objects, more than llmsweep lists; give a prefix that holds fewer (s3://BUCKET/PREFIX/SUBPREFIX)",
                    self.url
                );
            }
            match got.page_token {
                Some(t) if !tokens.insert(t.clone()) => anyhow::bail!(
                    "cannot list {}: the store sent a page token it had sent before, so its listing would never end",
                    self.url
                ),
                Some(t) => token = Some(t),
                None => break,
            }
        }
        Ok(out)
    }

    /// The bytes of object `name`, refused unread when it is over `limit` bytes, and cut off
    /// with an error when more than `limit` arrive anyway.
    pub(crate) async fn get(&self, name: &str, limit: u64) -> anyhow::Result<(Bytes, ObjectMeta)> {
        let (meta, mut stream) = self.fetch(name, limit).await?;
        let mut body = BytesMut::with_capacity(usize::try_from(meta.size).unwrap_or(0));
        while let Some(chunk) = stream.next().await {
            body.extend_from_slice(&chunk?);
        }
        Ok((body.freeze(), meta))
    }

    /// The bundle `name`, parsed as its bytes come from the store: never held whole beside the
    /// bundle it makes (a bundle of hundreds of megabytes costs its records' memory, not twice
    /// its size). The reason it cannot be read is in the viewer's words.
    pub(crate) async fn read_bundle(&self, name: &str) -> Result<llmsweep_shared::Bundle, String> {
        let stream = self
            .get_stream(name, llmsweep_shared::bundle::MAX_INFLATED_BYTES as u64)
            .await
            .map_err(|e| format!("cannot be read: {e:#}"))?;
        let reader = tokio_util::io::StreamReader::new(
            stream.map(|r| r.map_err(|e| std::io::Error::other(format!("{e:#}")))),
        );
        let sync = tokio_util::io::SyncIoBridge::new(reader);
        tokio::task::spawn_blocking(move || {
            llmsweep_shared::Bundle::from_reader(std::io::BufReader::with_capacity(1 << 20, sync))
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| format!("cannot be read: {e}"))?
    }

    /// Writes object `name` whole, in one request. Returns its version tag.
    pub(crate) async fn put(&self, name: &str, bytes: Bytes) -> anyhow::Result<Option<String>> {
        let r = self
            .store
            .put(&self.key(name), PutPayload::from_bytes(bytes))
            .await
            .map_err(|e| self.error("cannot write", &self.object_url(name), &e))?;
        Ok(r.e_tag)
    }

    /// Checks that the prefix can be listed (the bucket exists, the credentials are taken): what
    /// a reader of the bucket asks first.
    pub(crate) async fn check(&self) -> anyhow::Result<()> {
        self.list().await.map(|_| ())
    }

    /// Checks that the prefix can be listed and written (the credentials may write, not only
    /// read): what a run asks before it sends its first request, and `push` before it copies.
    /// The write is a small object under the prefix, deleted at once.
    pub(crate) async fn check_write(&self) -> anyhow::Result<()> {
        self.list().await?;
        let probe = format!(
            ".llmsweep-write-check-{}-{}",
            std::process::id(),
            chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default()
        );
        self.put(
            &probe,
            Bytes::from_static(b"llmsweep checks that it may write here\n"),
        )
        .await
        .map_err(|e| {
            anyhow::anyhow!(
                "{e:#} (a run writes its bundle there: the key must be allowed to write, not only to list and read)"
            )
        })?;
        let _ = self.store.delete(&self.key(&probe)).await;
        Ok(())
    }

    /// The object `name` as a stream of its bytes within `limit` (refused unread when the store
    /// says it is larger, cut off when more comes), to serve it on without holding it whole.
    pub(crate) async fn get_stream(&self, name: &str, limit: u64) -> anyhow::Result<ByteStream> {
        Ok(self.fetch(name, limit).await?.1)
    }

    /// What [`Bucket::get`] and [`Bucket::get_stream`] read: the object's facts and its bytes as
    /// they come, refused unread past `limit`, cut off when more than `limit` come anyway.
    async fn fetch(&self, name: &str, limit: u64) -> anyhow::Result<(ObjectMeta, ByteStream)> {
        let url = self.object_url(name);
        let got = match self.store.get(&self.key(name)).await {
            Ok(g) => g,
            Err(object_store::Error::NotFound { .. }) => anyhow::bail!(
                "there is no object {url}; `llmsweep index {}` lists the bundles there",
                self.url
            ),
            Err(e) => return Err(self.error("cannot read", &url, &e)),
        };
        let meta = got.meta.clone();
        if meta.size > limit {
            anyhow::bail!(
                "{url} is {} MB, more than the {} MB allowed",
                meta.size / (1024 * 1024),
                limit / (1024 * 1024)
            );
        }
        let this = self.clone();
        let mut read = 0u64;
        let stream = got.into_stream().map(move |chunk| {
            let chunk = chunk.map_err(|e| this.error("cannot read", &url, &e))?;
            read += chunk.len() as u64;
            if read > limit {
                anyhow::bail!(
                    "{url} sent more than the {} MB allowed",
                    limit / (1024 * 1024)
                );
            }
            Ok(chunk)
        });
        Ok((meta, stream.boxed()))
    }

    fn error(&self, what: &str, url: &str, e: &object_store::Error) -> anyhow::Error {
        let mut why = explain(&e.to_string(), &self.endpoint);
        if self.anonymous && why.contains("refused") {
            why.push_str(
                " (no credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with ~/.aws/credentials)",
            );
        }
        anyhow::anyhow!("{what} {url}: {why}")
    }
}

/// An object store's error, shortened to its cause and what to do about it.
fn explain(text: &str, endpoint: &str) -> String {
    let text = crate::boundary::http::redact_url(text);
    // llmsweep's own sentence: a redirect refused, a timeout, a listing that is no listing.
    if let Some((_, rest)) = text.split_once(super::wire::OPEN)
        && let Some((said, _)) = rest.split_once(super::wire::CLOSE)
    {
        return llmsweep_shared::text::one_line(said).into_owned();
    }
    let has = |s: &str| text.contains(s);
    let hint = if has("AuthorizationHeaderMalformed")
        || has("IllegalLocationConstraintException")
        || (has("region") && has("expecting"))
    {
        let region = xml_field(&text, "Region")
            .filter(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        Some(match region {
            Some(r) => format!("the store expects another region: set AWS_REGION={r}"),
            None => "the store expects another region: set AWS_REGION to the bucket's region"
                .to_string(),
        })
    } else if has("NoSuchBucket") || has("bucket does not exist") {
        Some("the bucket does not exist: check its name, or create it".to_string())
    } else if has("InvalidAccessKeyId")
        || has("SignatureDoesNotMatch")
        || has("AccessDenied")
        || has("403")
    {
        Some(
            "the store refused the credentials: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), and that the key may use this bucket"
                .to_string(),
        )
    } else if has("Encountered object with invalid path") {
        // object_store refuses a whole listing for one name it cannot take as a path (a
        // control character, an empty, `.` or `..` segment), which other clients can write.
        Some(
            "the bucket holds an object whose name is not a usable path (a control character, or an empty, `.` or `..` part between slashes), and that stops the listing: rename or remove that object, or give a prefix that does not hold it"
                .to_string(),
        )
    } else if has("onnection refused") || has("error sending request") || has("dns error") {
        Some(format!(
            "cannot reach the store at {endpoint}: check AWS_ENDPOINT_URL, and that the store is running"
        ))
    } else {
        None
    };
    // The store's own words, on one line and not too long: of an S3 error document, its code
    // and message, not its XML.
    let own = match (xml_field(&text, "Code"), xml_field(&text, "Message")) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (Some(code), None) => code.to_string(),
        _ => text.to_string(),
    };
    let own: String = own.split_whitespace().collect::<Vec<_>>().join(" ");
    let own = llmsweep_shared::text::one_line(&own).into_owned();
    let own = match own.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &own[..i]),
        None => own,
    };
    match hint {
        Some(h) => format!("{h} (the store said: {own})"),
        None => own,
    }
}

/// The text of the first `<name>…</name>` in `text`.
fn xml_field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let start = text.find(&format!("<{name}>"))? + name.len() + 2;
    let len = text[start..].find(&format!("</{name}>"))?;
    Some(&text[start..start + len])
}

/// Runs `f` to completion from synchronous code: on this runtime's blocking allowance when
/// called from a multi-threaded runtime, else on a runtime of its own in a thread of its own.
pub(crate) fn block_on<F>(f: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    if let Ok(h) = tokio::runtime::Handle::try_current()
        && h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
    {
        return tokio::task::block_in_place(|| h.block_on(f));
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map(|rt| rt.block_on(f))
        })
        .join()
    })
    .unwrap_or_else(|p| std::panic::resume_unwind(p))
    .unwrap_or_else(|e| panic!("cannot start a runtime for the store: {e}"))
}

/// Keys from the environment or a profile.
#[derive(Clone)]
struct Keys {
    id: String,
    secret: String,
    token: Option<String>,
}

/// What the AWS chain gives: keys, region, endpoint.
struct Chain {
    keys: Option<Keys>,
    region: String,
    endpoint: Option<String>,
    /// A credential provider object_store reads from the environment itself (containers, web
    /// identity): then requests are signed by it.
    provider_in_env: bool,
}

impl Chain {
    fn read() -> anyhow::Result<Chain> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let profile = env("AWS_PROFILE").unwrap_or_else(|| "default".into());
        let home = env("HOME").map(std::path::PathBuf::from);
        let file = |var: &str, rel: &str| {
            let path = env(var)
                .map(std::path::PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(rel)));
            path.map(|p| profile_file(&p, var))
                .transpose()
                .map(Option::flatten)
        };
        let creds = file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials")?
            .map(|t| ini_section(&t, &profile))
            .unwrap_or_default();
        let config_section = if profile == "default" {
            "default".to_string()
        } else {
            format!("profile {profile}")
        };
        let config = file("AWS_CONFIG_FILE", ".aws/config")?
            .map(|t| ini_section(&t, &config_section))
            .unwrap_or_default();
        let from = |m: &std::collections::BTreeMap<String, String>, k: &str| m.get(k).cloned();
        let keys = match (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
            (Some(id), Some(secret)) => Some(Keys {
                id,
                secret,
                token: env("AWS_SESSION_TOKEN"),
            }),
            _ => match (
                from(&creds, "aws_access_key_id").or_else(|| from(&config, "aws_access_key_id")),
                from(&creds, "aws_secret_access_key")
                    .or_else(|| from(&config, "aws_secret_access_key")),
            ) {
                (Some(id), Some(secret)) => Some(Keys {
                    id,
                    secret,
                    token: from(&creds, "aws_session_token"),
                }),
                _ => None,
            },
        };
        Ok(Chain {
            keys,
            region: env("AWS_REGION")
                .or_else(|| env("AWS_DEFAULT_REGION"))
                .or_else(|| from(&config, "region"))
                .unwrap_or_else(|| "us-east-1".into()),
            endpoint: env("AWS_ENDPOINT_URL_S3")
                .or_else(|| env("AWS_ENDPOINT_URL"))
                .or_else(|| env("AWS_ENDPOINT"))
                .or_else(|| from(&config, "endpoint_url"))
                .map(|e| e.trim_end_matches('/').to_string()),
            provider_in_env: env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").is_some()
                || env("AWS_CONTAINER_CREDENTIALS_FULL_URI").is_some()
                || env("AWS_WEB_IDENTITY_TOKEN_FILE").is_some(),
        })
    }
}

/// Most bytes of an AWS profile file: a few profiles, never large.
const PROFILE_FILE_MAX: u64 = 1 << 20;

/// The text of AWS profile file `p` (named by `var`, or its place under the home folder), or
/// `None` when there is none; a file that cannot be read as one (a FIFO, a device, too big) is
/// an error that names it.
fn profile_file(p: &std::path::Path, var: &str) -> anyhow::Result<Option<String>> {
    use crate::boundary::file::{self, FileError};
    match file::read_text(p, PROFILE_FILE_MAX) {
        Ok(t) => Ok(Some(t)),
        Err(FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => anyhow::bail!(
            "the AWS profile file {} ({var}, or its place under the home folder) {e}",
            p.display()
        ),
    }
}

/// The `key = value` lines of section `[name]` of an INI file.
fn ini_section(text: &str, name: &str) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with(';') || line.is_empty() {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = section.trim() == name;
            continue;
        }
        if inside && let Some((k, v)) = line.split_once('=') {
            out.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    out
}

/// Reads bundle `url` (`s3://bucket/prefix/NAME.json`) whole, within the size a bundle may have:
/// its bytes, for a copy kept as they are (`--resume` from a bucket).
pub(crate) async fn read_object(url: &str) -> anyhow::Result<(Bytes, ObjectMeta)> {
    let (bucket, name) = object_of(url)?;
    bucket
        .get(&name, llmsweep_shared::bundle::MAX_INFLATED_BYTES as u64)
        .await
}

/// Reads bundle `url` (`s3://bucket/prefix/NAME.json`) as it streams (see
/// [`Bucket::read_bundle`]).
pub(crate) async fn read_bundle_at(url: &str) -> Result<llmsweep_shared::Bundle, String> {
    let (bucket, name) = object_of(url).map_err(|e| format!("cannot be read: {e:#}"))?;
    bucket.read_bundle(&name).await
}

fn object_of(url: &str) -> anyhow::Result<(Bucket, String)> {
    let Some((prefix, name)) = split_object(url) else {
        anyhow::bail!(
            "{} names no bundle: give s3://BUCKET/PREFIX/NAME.json (a .json or .json.gz object)",
            llmsweep_shared::text::one_line(&crate::boundary::http::redact_url(url))
        );
    };
    Ok((Bucket::open(&prefix)?, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_urls_are_split_and_checked() {
        assert!(is_bucket_url("s3://b/x"));
        assert!(is_bucket_url("S3://b"));
        assert!(!is_bucket_url("results/s3:/x"));
        assert_eq!(
            split_object("s3://team/llm/kpro5-run-1.json"),
            Some(("s3://team/llm".into(), "kpro5-run-1.json".into()))
        );
        assert_eq!(split_object("s3://team/llm"), None);
        assert_eq!(split_object("s3://team/llm/"), None);
        for bad in [
            "s3://",
            "s3://A_B/x",
            "s3://ab",
            "s3://team//x",
            "s3://team/a/../b",
        ] {
            let e = Bucket::open(bad).unwrap_err().to_string();
            assert!(e.contains("give s3://"), "{bad}: {e}");
        }
        let b = Bucket::open("s3://team/llm/nightly/").unwrap();
        assert_eq!(b.url(), "s3://team/llm/nightly");
        assert_eq!(b.object_url("a.json"), "s3://team/llm/nightly/a.json");
        assert_eq!(b.key("a.json").as_ref(), "llm/nightly/a.json");
        assert_eq!(
            format!("{b:?}"),
            r#"Bucket { url: "s3://team/llm/nightly" }"#
        );
    }

    #[test]
    fn other_stores_are_named_not_taken_for_folders() {
        for url in ["gs://b/x", "az://c/x", "https://example.com/x"] {
            let e = other_scheme(url).unwrap();
            assert!(e.contains("give a folder, or s3://BUCKET/PREFIX"), "{e}");
        }
        assert_eq!(other_scheme("results"), None);
        assert_eq!(other_scheme("s3://b"), None);
    }

    #[test]
    fn a_profile_section_is_read() {
        let text = "[default]\naws_access_key_id = A\n# c\n[profile team]\nregion = eu-west-1\nendpoint_url = http://127.0.0.1:3900\n";
        assert_eq!(ini_section(text, "default")["aws_access_key_id"], "A");
        let t = ini_section(text, "profile team");
        assert_eq!(t["region"], "eu-west-1");
        assert_eq!(t["endpoint_url"], "http://127.0.0.1:3900");
        assert!(ini_section(text, "other").is_empty());
    }

    #[test]
    fn store_errors_say_what_to_do() {
        let e = explain(
            "Generic S3 error: Error performing list: response error \"<Code>NoSuchBucket</Code>\"",
            "http://127.0.0.1:3900",
        );
        assert!(e.starts_with("the bucket does not exist"), "{e}");
        // A region the store does not serve: the hint, and the store's code and message, no XML.
        let e = explain(
            "Generic S3 error: Error performing list request: Error performing GET http://127.0.0.1:3900/b?list-type=2 in 11ms - Server returned non-2xx status code: 400 Bad Request: <?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>AuthorizationHeaderMalformed</Code><Message>Authorization header malformed, unexpected scope: 20261207/eu-west-1/s3/aws4_request</Message><Region>garage</Region></Error>",
            "http://127.0.0.1:3900",
        );
        assert_eq!(
            e,
            "the store expects another region: set AWS_REGION=garage (the store said: AuthorizationHeaderMalformed: Authorization header malformed, unexpected scope: 20261207/eu-west-1/s3/aws4_request)"
        );
        let e = explain(
            "Generic S3 error: error sending request: Connection refused",
            "http://127.0.0.1:3900",
        );
        assert!(
            e.contains("cannot reach the store at http://127.0.0.1:3900"),
            "{e}"
        );
        // What object_store says of a listing that holds a name it cannot take as a path.
        for name in ["runs/a\u{7}b.json", "runs//b.json", "runs/../b.json"] {
            let source = object_store::path::Path::parse(name).unwrap_err();
            let listed = object_store::Error::InvalidPath { source }.to_string();
            let e = explain(&listed, "http://127.0.0.1:3900");
            assert!(
                e.starts_with("the bucket holds an object whose name is not a usable path"),
                "{name}: {e}"
            );
            assert!(e.contains("rename or remove that object"), "{e}");
        }
    }
}
