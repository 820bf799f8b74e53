//! The listing of a folder of bundles that `llmsweep view` serves and the viewer shows: one type
//! for both ends, and the rules for which file names are bundles and how they are addressed.
//!
//! `GET api/bundles` (relative to the page) answers a [`FolderListing`] as JSON; each entry's
//! `url` (relative to the page too) serves the file's bytes as they are on disk (`.json.gz`
//! stays compressed; the viewer inflates it). A page served this way carries
//! `<meta name="llmsweep-folder" content="api/bundles">`, so the viewer fetches a listing only when
//! a server announced one.

use serde::{Deserialize, Serialize};

use crate::Bundle;
use crate::bundle::SweepKind;

/// The `name` of the `<meta>` element that announces a folder listing; its `content` is the
/// listing's URL relative to the page.
pub const FOLDER_META: &str = "llmsweep-folder";
/// The `name` of the `<meta>` element (`content="allow"`) that lets the page load `?bundle=`
/// URLs of other sites; without it the viewer loads bundles only from the page's own origin.
/// `llmsweep view --allow-remote-bundles` writes it.
pub const REMOTE_BUNDLES_META: &str = "llmsweep-remote-bundles";
/// Where the listing is served, relative to the page.
pub const LISTING_PATH: &str = "api/bundles";
/// The prefix of each bundle's URL, relative to the page.
pub const BUNDLE_PREFIX: &str = "bundles/";

/// The bundles of one folder, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FolderListing {
    /// The folder as it was named on the command line, e.g. `results`.
    pub folder: String,
    #[serde(default)]
    pub bundles: Vec<FolderEntry>,
}

/// One file of the folder: what the file system says, and what the bundle says about itself, or
/// why it cannot be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FolderEntry {
    /// The file name, e.g. `kpro5-run-20250101T120000Z.json`.
    pub name: String,
    /// Where its bytes are, relative to the page: [`bundle_url`] of the name.
    pub url: String,
    pub size_bytes: u64,
    /// When the file last changed, RFC 3339 UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// The bundle's own facts; `None` when it cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<BundleFacts>,
    /// Why the file is not a readable bundle (the same words the viewer would show).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The object's version tag in a store (its ETag), when the listing came from one: with the
    /// size, what an index entry is checked against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    /// The run's key numbers, for a history without reading the bundle (see
    /// [`crate::history`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<crate::history::RunSummary>,
}

/// What a listing says about a readable bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BundleFacts {
    pub label: String,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// An imported run whose source does not say when it ran: `created_at` is the import's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub date_unknown: bool,
    pub complete: bool,
    /// Measured against llmsweep's simulated server.
    #[serde(default)]
    pub simulated: bool,
    #[serde(default)]
    pub model: String,
    /// The kinds of its sweeps, in bundle order.
    #[serde(default)]
    pub sweeps: Vec<SweepKind>,
    /// For an imported bundle: the tool that measured it, e.g. `vllm bench serve`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported_from: Option<String>,
    /// A `llmsweep selftest` bundle: the client's own capacity, no server's result.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub selftest: bool,
}

impl BundleFacts {
    pub fn of(b: &Bundle) -> BundleFacts {
        BundleFacts {
            label: b.label.clone(),
            created_at: b.created_at.clone(),
            date_unknown: b.run_date().is_none(),
            complete: b.complete,
            simulated: b.target.simulated,
            model: b.target.model.clone(),
            sweeps: b.sweeps.iter().map(|s| s.kind).collect(),
            imported_from: b.source.as_ref().map(|s| s.tool.clone()),
            selftest: b.selftest.is_some(),
        }
    }
}

/// Whether `name` is a file name a folder listing includes: `*.json` or `*.json.gz`, not hidden,
/// and a plain name (no separator, so it cannot point outside the folder).
pub fn is_bundle_name(name: &str) -> bool {
    let stem = name
        .strip_suffix(".json.gz")
        .or_else(|| name.strip_suffix(".json"));
    stem.is_some_and(|s| !s.is_empty())
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0'])
}

/// The URL of bundle `name`, relative to the page: [`BUNDLE_PREFIX`] and the name with every
/// byte but `A-Z a-z 0-9 - . _ ~` percent-encoded.
pub fn bundle_url(name: &str) -> String {
    let mut url = String::with_capacity(BUNDLE_PREFIX.len() + name.len());
    url.push_str(BUNDLE_PREFIX);
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            url.push(b as char);
        } else {
            url.push_str(&format!("%{b:02X}"));
        }
    }
    url
}

/// The file name a [`bundle_url`] stands for; `None` for any other URL.
pub fn bundle_name(url: &str) -> Option<String> {
    let encoded = url.strip_prefix(BUNDLE_PREFIX)?;
    let mut bytes = Vec::with_capacity(encoded.len());
    let mut rest = encoded.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok().filter(|n| is_bundle_name(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_names() {
        for ok in [
            "a.json",
            "kpro5-run-1.json.gz",
            "with space.json",
            "x..json",
        ] {
            assert!(is_bundle_name(ok), "{ok}");
        }
        for no in [
            ".json",
            ".hidden.json",
            "a.json.tmp",
            "a.txt",
            "../a.json",
            "sub/a.json",
            "a\\b.json",
            ".json.gz",
            "a.gz",
            ".llmsweep-index.json",
        ] {
            assert!(!is_bundle_name(no), "{no}");
        }
    }

    #[test]
    fn urls_are_percent_encoded() {
        assert_eq!(bundle_url("kpro5-run_1.json"), "bundles/kpro5-run_1.json");
        assert_eq!(bundle_url("a b#?%.json"), "bundles/a%20b%23%3F%25.json");
        assert_eq!(bundle_url("é.json"), "bundles/%C3%A9.json");
        for name in ["kpro5.json", "a b#?%.json", "é.json.gz"] {
            assert_eq!(bundle_name(&bundle_url(name)).as_deref(), Some(name));
        }
        for other in [
            "kpro5.json",
            "bundles/%2E%2E%2Fa.json",
            "bundles/a%2.json",
            "bundles/%FF.json",
            "https://x/bundles/a.json",
        ] {
            assert_eq!(bundle_name(other), None, "{other}");
        }
    }

    #[test]
    fn listing_round_trips_and_tolerates_missing_fields() {
        let text = r#"{"folder": "results", "bundles": [
            {"name": "a.json", "url": "bundles/a.json", "size_bytes": 10, "error": "not valid JSON"},
            {"name": "b.json", "url": "bundles/b.json", "size_bytes": 20,
             "bundle": {"label": "kpro5", "created_at": "2025-01-01T00:00:00Z", "complete": true,
                        "sweeps": ["throughput", "context"], "added_later": 1}}]}"#;
        let l: FolderListing = serde_json::from_str(text).unwrap();
        assert_eq!(l.bundles[0].error.as_deref(), Some("not valid JSON"));
        let facts = l.bundles[1].bundle.as_ref().unwrap();
        assert_eq!(facts.sweeps, [SweepKind::Throughput, SweepKind::Context]);
        let back: FolderListing =
            serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
        assert_eq!(back, l);
    }
}
