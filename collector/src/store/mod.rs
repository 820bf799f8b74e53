//! Bundles on disk: the one reader of bundle files and the one atomic writer of every file the
//! collector writes (bundles after every point, so a crash loses nothing; reports; images).

pub mod bucket;
pub(crate) mod index;
pub mod upload;
pub(crate) mod wire;

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

/// Like [`read_bundle`], the reason in the words the viewer shows beside a file's name. A path
/// that is a bucket URL (`s3://bucket/prefix/NAME.json`) is read from the store.
pub(crate) fn read_bundle_plain(path: &Path) -> Result<Bundle, String> {
    if let Some(why) = path.to_str().and_then(bucket::other_scheme) {
        return Err(format!("cannot be read: {why}"));
    }
    if let Some(url) = path.to_str().filter(|p| bucket::is_bucket_url(p)) {
        let url = url.to_string();
        return bucket::block_on(async move { bucket::read_bundle_at(&url).await });
    }
    use crate::boundary::file::{self, FileError};
    let cap = MAX_INFLATED_BYTES as u64;
    let opened = file::open(path, cap).map_err(|e| match e {
        FileError::NotAFile("a folder") => format!(
            "cannot be read: it is a folder; name the bundles in it ({}/*.json)",
            path.display()
        ),
        FileError::TooBig { size, .. } => too_big(size).unwrap_or_default(),
        e => e.to_string(),
    })?;
    if let Ok(b) = Bundle::from_reader(io::BufReader::with_capacity(1 << 20, opened)) {
        return Ok(b);
    }
    // Read whole again, only to say exactly what is wrong.
    let raw = file::read(path, cap).map_err(|e| e.to_string())?;
    Bundle::from_bytes(&raw).map_err(|e| match import_hint(path, &raw) {
        Some(hint) => format!("{e}; {hint}"),
        None => e.to_string(),
    })
}

/// When a file that is not a bundle is another tool's result (or the text table of an old
/// script), how to bring it in: `import` recognises it.
fn import_hint(path: &Path, raw: &[u8]) -> Option<String> {
    use crate::import::detect::{Kind, detect};
    let text = std::str::from_utf8(raw).ok()?;
    let what = match detect(text) {
        Kind::Format(f) => crate::import::detect::describe(f).to_string(),
        Kind::VllmOrSglang => "a result of vllm bench serve or sglang.bench_serving".to_string(),
        _ => return None,
    };
    let shown = llmsweep_shared::text::one_line(&path.display().to_string()).into_owned();
    let lengths = if what == "a text table" {
        " --input-len N --output-len N"
    } else {
        ""
    };
    Some(format!(
        "this looks like {what}, not a bundle: bring it in first with llmsweep import {shown} --label NAME{lengths}, then use the bundle it writes"
    ))
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
    if let Some(why) = dir.to_str().and_then(bucket::other_scheme) {
        anyhow::bail!("--out {why}");
    }
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
    // A name that says gzip gets gzip.
    let bytes = if path.as_os_str().to_string_lossy().ends_with(".json.gz") {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        io::Write::write_all(&mut gz, text.as_bytes())
            .and_then(|()| gz.finish())
            .with_context(|| format!("cannot compress the bundle {}", path.display()))?
    } else {
        text.into_bytes()
    };
    write_file_atomic(path, &bytes)
        .with_context(|| format!("cannot write the bundle {}", path.display()))
}

/// Writes `bytes` to `path` through a new temporary file in the same folder (see
/// [`create_temp`]) and a rename, so a reader never sees half a file and a failed write leaves
/// an older file as it was. The file gets the permissions a new file gets (the umask's).
pub(crate) fn write_file_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (tmp, file) = create_temp(path, None)?;
    let result = fill(file, bytes).and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes `bundle` as a new file named `name` in `dir` (a shared folder such as the temp
/// folder): readable by its owner only, and never in place of a file already there, nor
/// through a link — `name` taken gives `NAME-2.json`, `NAME-3.json`, …. Returns the path.
pub(crate) fn write_new_private(
    dir: &Path,
    name: &std::ffi::OsStr,
    bundle: &Bundle,
) -> anyhow::Result<PathBuf> {
    let mut text = bundle
        .to_json()
        .context("the bundle cannot be written as JSON")?;
    text.push('\n');
    let first = dir.join(name);
    let (tmp, file) = create_temp(&first, Some(0o600))
        .with_context(|| format!("cannot write a file in {}", dir.display()))?;
    let placed = fill(file, text.as_bytes()).and_then(|()| place_new(&tmp, &first));
    let _ = fs::remove_file(&tmp);
    placed.with_context(|| format!("cannot write the bundle {}", first.display()))
}

/// Gives the file at `tmp` a name of `first`'s form that nothing has: a hard link never
/// replaces what is there, unlike a rename.
fn place_new(tmp: &Path, first: &Path) -> io::Result<PathBuf> {
    let name = first.file_name().unwrap_or_default().to_string_lossy();
    let (stem, ext) = match name.strip_suffix(".json") {
        Some(stem) => (stem.to_string(), ".json"),
        None => (name.to_string(), ""),
    };
    for n in 1..=1000 {
        let candidate = match n {
            1 => first.to_path_buf(),
            n => first.with_file_name(format!("{stem}-{n}{ext}")),
        };
        match fs::hard_link(tmp, &candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            // A file system without hard links: rename, still only onto a free name.
            Err(_) if fs::symlink_metadata(&candidate).is_err() => {
                fs::rename(tmp, &candidate)?;
                return Ok(candidate);
            }
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{} and a thousand names like it are taken", first.display()),
    ))
}

/// Writes `bytes` into `file` and onto the disk.
fn fill(mut file: fs::File, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)?;
    file.sync_all()
}

/// A new file beside `path`, `.NAME.<16 hex digits>.tmp`, made by this call (never one that
/// was there, never through a link): its name cannot be guessed, so nobody can plant a link
/// there first. On unix `mode` sets its permissions (else a new file's).
fn create_temp(path: &Path, mode: Option<u32>) -> io::Result<(PathBuf, fs::File)> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut last = None;
    for _ in 0..16 {
        let tmp = path.with_file_name(format!(".{name}.{}.tmp", unguessable()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if let Some(mode) = mode {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(mode);
        }
        #[cfg(not(unix))]
        let _ = mode;
        match options.open(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

/// 16 hex digits no other process can predict: the standard library seeds every hasher's keys
/// from the system's randomness.
fn unguessable() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u64(COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    h.write_u128(now.map_or(0, |d| d.as_nanos()));
    format!("{:016x}", h.finish())
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

    /// A link planted at a temporary name (the old `NAME.tmp`, or any) is never written
    /// through: its target stays as it was.
    #[test]
    fn a_link_at_the_old_temporary_name_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, b"precious").unwrap();
        let out = dir.path().join("report.html");
        std::os::unix::fs::symlink(&victim, dir.path().join("report.html.tmp")).unwrap();
        write_file_atomic(&out, b"<html>").unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert_eq!(fs::read(&out).unwrap(), b"<html>");
        let mut left: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["report.html", "report.html.tmp", "victim"]);
    }

    /// The temp-folder fallback writes a new file of its own, for its owner only: not through
    /// a planted link, not over a file of the same name.
    #[test]
    fn the_fallback_never_replaces_a_file_or_follows_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, b"precious").unwrap();
        let name = std::ffi::OsStr::new("kpro5-run.json");
        std::os::unix::fs::symlink(&victim, dir.path().join("kpro5-run.json.tmp")).unwrap();
        fs::write(dir.path().join("kpro5-run.json"), b"someone else's").unwrap();
        let b = new_bundle(
            "id".into(),
            "kpro5".into(),
            "2026-01-01T00:00:00Z".into(),
            vec![],
            Target {
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
            },
        );
        let first = write_new_private(dir.path(), name, &b).unwrap();
        assert_eq!(first, dir.path().join("kpro5-run-2.json"));
        let second = write_new_private(dir.path(), name, &b).unwrap();
        assert_eq!(second, dir.path().join("kpro5-run-3.json"));
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert_eq!(
            fs::read(dir.path().join("kpro5-run.json")).unwrap(),
            b"someone else's"
        );
        assert_eq!(read_bundle(&first).unwrap(), b);
        let mode = fs::metadata(&first).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            5,
            "no temporary file is left"
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
