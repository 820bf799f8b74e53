//! Walks the collector's own code for what would bypass the boundary: an HTTP client built
//! anywhere but [`super::http`], a store client without its connector, a local file read
//! anywhere but [`super::file`]. A new read or client that goes around the guards fails here.

use std::path::{Path, PathBuf};

/// Product code of every `.rs` file under `dir`, without its tests (what follows its first
/// `#[cfg(test)]`), by path relative to `src/`.
fn product_files(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            product_files(&p, root, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let product = match text.find("#[cfg(test)]") {
                Some(i) => text[..i].to_string(),
                None => text,
            };
            let rel = p
                .strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .into_owned();
            out.push((rel, product));
        }
    }
}

fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    product_files(&root, &root, &mut out);
    assert!(out.len() > 100, "the walk found {} files", out.len());
    out
}

/// Every place in product code where one of `patterns` is, but in `allowed` files.
fn offenders(patterns: &[&str], allowed: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for (file, text) in sources() {
        if allowed.contains(&file.as_str()) || file == "boundary/walk.rs" {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if patterns.iter().any(|p| code.contains(p)) {
                found.push(format!("{file}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn every_http_client_is_built_by_the_outbound_policy() {
    let found = offenders(
        &[
            "reqwest::Client::builder(",
            "reqwest::Client::new(",
            "Client::builder()",
            "ClientBuilder::new(",
        ],
        &["boundary/http.rs"],
    );
    assert!(
        found.is_empty(),
        "HTTP clients built outside boundary/http.rs (use its builder(), which follows no redirect):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_store_client_sends_through_the_policy_connector() {
    for (file, text) in sources() {
        if text.contains("AmazonS3Builder::") {
            assert!(
                text.contains("with_http_connector(super::wire::Connector)"),
                "{file} builds an S3 client without the policy's connector"
            );
        }
    }
}

#[test]
fn every_local_file_is_read_by_the_capped_reader() {
    let found = offenders(
        &[
            "fs::read(",
            "fs::read_to_string(",
            "File::open(",
            "tokio::fs::read",
        ],
        // The kernel's own files (/proc, /sys, /etc/os-release), read for the host's facts.
        &["boundary/file.rs", "load/server/host.rs"],
    );
    assert!(
        found.is_empty(),
        "local files read outside boundary/file.rs (use its read, read_text or open, which refuse FIFOs and devices and stop at a cap):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_walk_sees_what_it_looks_for() {
    // The patterns are found where they are meant to be, so an empty list above means something.
    assert!(!offenders(&["reqwest::Client::builder("], &[]).is_empty());
    assert!(!offenders(&["File::open("], &[]).is_empty());
}
