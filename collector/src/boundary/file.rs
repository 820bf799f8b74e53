//! Every local file llmsweep reads whole or streams (bundles, indexes, datasets, imported results,
//! `--header @FILE`, AWS profile files, the capacity cache): regular files only, read through a
//! limit. A FIFO would block the read forever and a device such as `/dev/zero` never ends, so
//! both are refused by name before a byte is read; a file that grows past its limit while it is
//! read is cut off with an error, never held whole.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Why a local file was not read.
#[derive(Debug)]
pub(crate) enum FileError {
    /// It could not be opened or read.
    Io(io::Error),
    /// It is not a regular file: what it is instead (`a FIFO (named pipe)`, `a folder`, …).
    NotAFile(&'static str),
    /// Its size is over the limit.
    TooBig { size: u64, cap: u64 },
    /// It went on past the limit while it was read (it grew, or its size was not known).
    TooLong { cap: u64 },
    /// It is not UTF-8 text.
    NotText,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::boundary::http::bytes;
        match self {
            FileError::Io(e) => write!(f, "cannot be read: {e}"),
            FileError::NotAFile(what) => write!(
                f,
                "is {what}, not a regular file: llmsweep reads only files (a pipe or a device could block or never end)"
            ),
            FileError::TooBig { size, cap } => write!(
                f,
                "is {}, more than the {} llmsweep reads of it",
                bytes(*size),
                bytes(*cap)
            ),
            FileError::TooLong { cap } => write!(
                f,
                "goes on past {}, more than llmsweep reads of it",
                bytes(*cap)
            ),
            FileError::NotText => write!(f, "is not a text file (not UTF-8)"),
        }
    }
}

impl std::error::Error for FileError {}

impl From<io::Error> for FileError {
    fn from(e: io::Error) -> FileError {
        // The reader below reports its limit as an error of its own kind.
        match e.get_ref().and_then(|i| i.downcast_ref::<PastCap>()) {
            Some(PastCap(cap)) => FileError::TooLong { cap: *cap },
            None => FileError::Io(e),
        }
    }
}

/// The inner error of a read that ran past its limit.
#[derive(Debug)]
struct PastCap(u64);

impl std::fmt::Display for PastCap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "more than {} bytes", self.0)
    }
}

impl std::error::Error for PastCap {}

/// A file opened for reading that yields at most `cap` bytes, then an error if there are more.
#[derive(Debug)]
pub(crate) struct Capped {
    file: File,
    left: u64,
    cap: u64,
    /// The file's size when it was opened.
    pub size: u64,
}

impl Read for Capped {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // At the limit: one more byte means the file is longer than allowed.
            let mut probe = [0u8; 1];
            return match self.file.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(PastCap(self.cap))),
            };
        }
        let room = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.file.read(&mut buf[..room])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Opens `path` when it is a regular file (without blocking on a FIFO), with its metadata: for
/// a reader that applies its own limit as it streams (the view server's).
pub(crate) fn open_file(path: &Path) -> Result<(File, std::fs::Metadata), FileError> {
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    match not_a_file(&meta) {
        Some(what) => Err(FileError::NotAFile(what)),
        None => Ok((file, meta)),
    }
}

/// Opens `path` for reading at most `cap` bytes: refused when it is not a regular file (without
/// blocking on a FIFO) or is larger than `cap`.
pub(crate) fn open(path: &Path, cap: u64) -> Result<Capped, FileError> {
    let (file, meta) = open_file(path)?;
    if meta.len() > cap {
        return Err(FileError::TooBig {
            size: meta.len(),
            cap,
        });
    }
    Ok(Capped {
        file,
        left: cap,
        cap,
        size: meta.len(),
    })
}

/// The bytes of `path`, at most `cap` of them (see [`open`]).
pub(crate) fn read(path: &Path, cap: u64) -> Result<Vec<u8>, FileError> {
    let mut f = open(path, cap)?;
    let mut out = Vec::with_capacity(usize::try_from(f.size).unwrap_or(0));
    f.read_to_end(&mut out)?;
    Ok(out)
}

/// The text of `path`, at most `cap` bytes of it, without a leading byte-order mark.
pub(crate) fn read_text(path: &Path, cap: u64) -> Result<String, FileError> {
    let bytes = read(path, cap)?;
    let mut text = String::from_utf8(bytes).map_err(|_| FileError::NotText)?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// Opens without waiting for a writer: a FIFO opened for reading otherwise blocks until one
/// comes. For a regular file the flag changes nothing.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// What `meta` is when it is not a regular file.
fn not_a_file(meta: &std::fs::Metadata) -> Option<&'static str> {
    if meta.is_file() {
        return None;
    }
    if meta.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return Some("a FIFO (a named pipe)");
        }
        if t.is_char_device() || t.is_block_device() {
            return Some("a device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_within_its_cap_and_its_bom_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "\u{feff}kpro5\n").unwrap();
        assert_eq!(read_text(&p, 64).unwrap(), "kpro5\n");
        assert_eq!(read(&p, 64).unwrap().len(), 9);
        let e = read(&p, 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "is 9 bytes, more than the 4 bytes llmsweep reads of it"
        );
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert!(matches!(read_text(&p, 64), Err(FileError::NotText)));
    }

    #[test]
    fn devices_fifos_and_folders_are_refused_by_name_without_blocking() {
        let e = read(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(
            e.to_string().starts_with("is a device, not a regular file"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let e = read(dir.path(), 1 << 20).unwrap_err();
        assert!(e.to_string().starts_with("is a folder"), "{e}");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            // No writer: a plain open would block here for ever.
            let e = read(&fifo, 1 << 20).unwrap_err();
            assert!(e.to_string().starts_with("is a FIFO (a named pipe)"), "{e}");
        }
        let e = read(&dir.path().join("none"), 1).unwrap_err();
        assert!(
            e.to_string().starts_with("cannot be read: No such file"),
            "{e}"
        );
    }

    #[test]
    fn a_file_that_grows_past_its_cap_while_read_is_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("grows");
        std::fs::write(&p, b"12345").unwrap();
        let mut f = open(&p, 8).unwrap();
        std::fs::write(&p, b"123456789012").unwrap();
        let mut out = Vec::new();
        let e = FileError::from(f.read_to_end(&mut out).unwrap_err());
        assert!(matches!(e, FileError::TooLong { cap: 8 }), "{e:?}");
        assert_eq!(out.len(), 8);
    }
}
