//! One writer per bundle: a run holds `<bundle>.lock` for as long as it writes the bundle, so a
//! second run or `--resume` of the same bundle is refused before it sends anything, naming the
//! process that holds it. The lock is the kernel's advisory lock on that file: it goes with the
//! process however the process ends, so a lock file left by a killed run blocks no one.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// The lock on one bundle's path, held until dropped; the lock file is then removed.
#[derive(Debug)]
pub(crate) struct RunLock {
    /// The locked file; `None` where the file system cannot lock (the run goes on unguarded).
    file: Option<File>,
    path: PathBuf,
}

/// Times a lock is tried again when the file it locked was removed by the run before it.
const TRIES: usize = 8;

impl RunLock {
    /// Takes the lock of `bundle`, or says which llmsweep holds it and what to do.
    pub(crate) fn take(bundle: &Path) -> anyhow::Result<RunLock> {
        let path = lock_path(bundle);
        for _ in 0..TRIES {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .with_context(|| {
                    format!(
                        "cannot create the lock file {} beside the bundle",
                        path.display()
                    )
                })?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    // A holder line is short; whatever else is there is not read, nor shown raw.
                    let mut holder = String::new();
                    let _ = (&mut file).take(1024).read_to_string(&mut holder);
                    let holder = llmsweep_shared::text::one_line(holder.trim()).into_owned();
                    bail!("{}", busy(bundle, &holder));
                }
                Err(TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
                    return Ok(RunLock { file: None, path });
                }
                Err(TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("cannot lock {}", path.display()));
                }
            }
            // The run before may have removed the file between its opening here and the lock:
            // the lock is then on a file nobody else sees; take the one at the path.
            if !is_at(&file, &path) {
                continue;
            }
            if let Err(e) = file
                .set_len(0)
                .and_then(|()| file.write_all(holder_line().as_bytes()))
            {
                // A full disk: the lock file made here is not left behind, empty.
                let _ = std::fs::remove_file(&path);
                return Err(e)
                    .with_context(|| format!("cannot write the lock file {}", path.display()));
            }
            return Ok(RunLock {
                file: Some(file),
                path,
            });
        }
        bail!(
            "cannot lock {}: it was removed and made again {TRIES} times while this run tried; try again",
            path.display()
        )
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Removed while still locked, then unlocked as the file closes; a run that opened it
        // meanwhile sees it gone and takes the lock of a new one.
        let _ = std::fs::remove_file(&self.path);
        self.file.take();
    }
}

/// `<bundle>.lock`, in the bundle's folder.
pub(crate) fn lock_path(bundle: &Path) -> PathBuf {
    let mut name = bundle.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    bundle.with_file_name(name)
}

/// What the lock file says of its holder: `pid 1234 on kpro5 since 2026-12-02T10:02:07Z`.
fn holder_line() -> String {
    format!(
        "pid {} on {} since {}\n",
        std::process::id(),
        crate::load::server::host::hostname(),
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

/// The refusal when another run holds the lock of `bundle`, its holder as its lock file says.
fn busy(bundle: &Path, holder: &str) -> String {
    let who = if holder.is_empty() {
        "another llmsweep".to_string()
    } else {
        format!("llmsweep {holder}")
    };
    format!(
        "{} is being written by {who}; wait for it to finish, or stop that process, then run this again",
        bundle.display()
    )
}

/// Whether `file` is the file at `path` now.
#[cfg(unix)]
fn is_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether `file` is the file at `path` now (elsewhere: whether there is one).
#[cfg(not(unix))]
fn is_at(_file: &File, path: &Path) -> bool {
    path.exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_refuses_a_second_writer_naming_the_first_and_goes_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("kpro5-run-20261202T100207Z.json");
        let held = RunLock::take(&bundle).unwrap();
        let file = dir.path().join("kpro5-run-20261202T100207Z.json.lock");
        let said = std::fs::read_to_string(&file).unwrap();
        assert!(
            said.starts_with(&format!("pid {} on ", std::process::id())),
            "{said}"
        );
        let e = RunLock::take(&bundle).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{} is being written by llmsweep {}; wait for it to finish, or stop that process, then run this again",
                bundle.display(),
                said.trim()
            )
        );
        drop(held);
        assert!(!file.exists(), "the lock file goes with the lock");
        // A lock file left by a process that is gone (its lock went with it) blocks no one.
        std::fs::write(&file, "pid 4194303 on kpro5 since 2026-12-02T10:02:07Z\n").unwrap();
        let again = RunLock::take(&bundle).unwrap();
        let said = std::fs::read_to_string(&file).unwrap();
        assert!(
            said.starts_with(&format!("pid {} on ", std::process::id())),
            "{said}"
        );
        drop(again);
        assert!(!file.exists());
    }

    #[test]
    fn what_a_held_lock_file_says_is_read_short_and_shown_inert() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("kpro5.json");
        let held = RunLock::take(&bundle).unwrap();
        let file = dir.path().join("kpro5.json.lock");
        // Another hand writes the file: an escape, a line break, and a megabyte.
        let said = format!("pid 1\u{1b}[2J\nforged{}", "x".repeat(1 << 20));
        std::fs::write(&file, said).unwrap();
        let e = RunLock::take(&bundle).unwrap_err().to_string();
        assert!(
            e.contains("llmsweep pid 1\\u{1b}[2J\\u{a}forged"),
            "{}",
            &e[..100]
        );
        assert!(!e.contains('\u{1b}') && !e.contains('\n'));
        assert!(e.len() < 1500, "{}", e.len());
        drop(held);
    }
}
