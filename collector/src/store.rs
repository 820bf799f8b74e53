//! Bundles on disk: the one reader of bundle files and the one atomic writer of every file the
//! collector writes (bundles after every point, so a crash loses nothing; reports; images).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{MAX_INFLATED_BYTES, Target, Tool};

/// A new bundle written by this llmsweep, with its header: see [`Bundle::new`].
pub(crate) fn new_bundle(
    id: String,
    label: String,
    created_at: String,
    command_line: Vec<String>,
    target: Target,
) -> Bundle {
    let tool = Tool {
        name: "llmsweep".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        command_line,
    };
    Bundle::new(id, label, created_at, tool, target)
}

/// Reads a bundle file (`.json` or `.json.gz`, told apart by content) with `shared`'s reader;
/// every error names the file.
pub(crate) fn read_bundle(path: &Path) -> anyhow::Result<Bundle> {
    read_bundle_plain(path).map_err(|e| match e.strip_prefix("cannot be read: ") {
        Some(why) => anyhow::anyhow!("{} cannot be read: {why}", path.display()),
        None => anyhow::anyhow!("{} cannot be read: {e}", path.display()),
    })
}

/// Like [`read_bundle`], the reason in the words the viewer shows beside a file's name.
pub(crate) fn read_bundle_plain(path: &Path) -> Result<Bundle, String> {
    let size = fs::metadata(path)
        .map_err(|e| format!("cannot be read: {e}"))?
        .len();
    if let Some(why) = too_big(size) {
        return Err(why);
    }
    let file = fs::File::open(path).map_err(|e| format!("cannot be read: {e}"))?;
    if let Ok(b) = Bundle::from_reader(io::BufReader::with_capacity(1 << 20, file)) {
        return Ok(b);
    }
    // Read whole again, only to say exactly what is wrong.
    let raw = fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    Bundle::from_bytes(&raw).map_err(|e| e.to_string())
}

/// Why a file of `size` bytes is no bundle to read or serve: more than [`MAX_INFLATED_BYTES`].
pub(crate) fn too_big(size: u64) -> Option<String> {
    (size > MAX_INFLATED_BYTES as u64).then(|| {
        format!(
            "the file is {} MB, more than the {} MB a bundle may hold",
            size / (1024 * 1024),
            MAX_INFLATED_BYTES / (1024 * 1024)
        )
    })
}

/// Makes sure `dir` exists and takes files, before any request is sent.
pub(crate) fn check_out_dir(dir: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the output folder {} (--out)", dir.display()))?;
    let probe = dir.join(format!(".llmsweep-write-test-{}", std::process::id()));
    fs::write(&probe, b"").with_context(|| {
        format!(
            "cannot write into the output folder {} (--out)",
            dir.display()
        )
    })?;
    let _ = fs::remove_file(&probe);
    Ok(())
}

/// `<label>-<kind>-<UTC timestamp>.json`, with the label made safe for a file name.
pub(crate) fn bundle_path(
    dir: &Path,
    label: &str,
    kind: &str,
    stamp: &chrono::DateTime<chrono::Utc>,
) -> PathBuf {
    let safe: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    let safe = if safe.is_empty() {
        "run".to_string()
    } else {
        safe
    };
    let stem = format!("{safe}-{kind}-{}", stamp.format("%Y%m%dT%H%M%SZ"));
    // A run started in the same second as one already written never takes its file.
    (1..)
        .map(|n| match n {
            1 => dir.join(format!("{stem}.json")),
            n => dir.join(format!("{stem}-{n}.json")),
        })
        .find(|p| !p.exists())
        .unwrap_or_else(|| dir.join(format!("{stem}.json")))
}

/// Writes `bundle` to `path` atomically (see [`write_file_atomic`]).
pub(crate) fn write_atomic(path: &Path, bundle: &Bundle) -> anyhow::Result<()> {
    let mut text = bundle
        .to_json()
        .context("the bundle cannot be written as JSON")?;
    text.push('\n');
    write_file_atomic(path, text.as_bytes())
        .with_context(|| format!("cannot write the bundle {}", path.display()))
}

/// Writes `bytes` to `path` through a temporary file in the same folder (`<name>.tmp`) and a
/// rename, so a reader never sees half a file and a failed write leaves an older file as it was.
pub(crate) fn write_file_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    let result = write();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_is_read_as_it_streams_plain_or_gzip_and_a_bad_one_still_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let target = Target {
            url: String::new(),
            api: llmsweep_shared::bundle::Api::Completions,
            model: "m".into(),
            engine: None,
            engine_version: None,
            max_context: None,
            max_running_requests: None,
            server_args: None,
            simulated: false,
            probes: Default::default(),
        };
        let b = new_bundle(
            "id".into(),
            "kpro5".into(),
            "2026-01-01T00:00:00Z".into(),
            vec![],
            target,
        );
        let plain = dir.path().join("a.json");
        write_atomic(&plain, &b).unwrap();
        let streamed = Bundle::from_reader(io::BufReader::new(fs::File::open(&plain).unwrap()));
        assert_eq!(streamed.unwrap(), b);
        let gz = dir.path().join("a.json.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(b.to_json().unwrap().as_bytes()).unwrap();
        fs::write(&gz, enc.finish().unwrap()).unwrap();
        assert_eq!(read_bundle(&gz).unwrap(), b);
        // Not streamable: read again whole for the message.
        let nan = dir.path().join("nan.json");
        fs::write(
            &nan,
            b.to_json()
                .unwrap()
                .replace("\"complete\": false", "\"complete\": NaN"),
        )
        .unwrap();
        let streamed = Bundle::from_reader(io::BufReader::new(fs::File::open(&nan).unwrap()));
        assert!(streamed.is_err());
        let e = read_bundle_plain(&nan).unwrap_err();
        assert!(e.contains("NaN"), "{e}");
        let array = dir.path().join("array.json");
        fs::write(&array, "[1, 2, 3]").unwrap();
        assert!(
            read_bundle_plain(&array)
                .unwrap_err()
                .contains("not an llmsweep bundle")
        );
    }

    #[test]
    fn bundle_names_are_safe_and_sortable() {
        let t = chrono::DateTime::parse_from_rfc3339("2026-11-29T20:01:02Z")
            .unwrap()
            .to_utc();
        let p = bundle_path(Path::new("results"), "kpro5 / A6000", "throughput", &t);
        assert_eq!(
            p,
            Path::new("results/kpro5---A6000-throughput-20261129T200102Z.json")
        );
    }

    #[test]
    fn a_run_in_the_same_second_gets_a_file_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let t = chrono::DateTime::parse_from_rfc3339("2026-11-29T20:01:02Z")
            .unwrap()
            .to_utc();
        let first = bundle_path(dir.path(), "a", "selftest", &t);
        fs::write(&first, b"{}").unwrap();
        let second = bundle_path(dir.path(), "a", "selftest", &t);
        assert_eq!(
            second,
            dir.path().join("a-selftest-20261129T200102Z-2.json")
        );
    }

    #[test]
    fn unwritable_out_dir_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        fs::write(&file, b"x").unwrap();
        let err = check_out_dir(&file.join("sub")).unwrap_err();
        assert!(format!("{err:#}").contains("a-file/sub"), "{err:#}");
    }
}
