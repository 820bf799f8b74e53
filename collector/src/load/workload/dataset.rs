//! `--dataset FILE.jsonl`: the user's own prompts, sent as written, one line each.

use std::path::Path;

use anyhow::bail;
use sha2::{Digest, Sha256};

use crate::load::workload::{Prompt, prompt_hash};

/// Most bytes a dataset file may have.
const MAX_BYTES: u64 = 512 << 20;

/// One line of a dataset: a completion prompt or chat messages, and the output length it asks.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub prompt: Option<String>,
    pub messages: Option<serde_json::Value>,
    pub output_len: Option<u64>,
}

/// A dataset file, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    pub entries: Vec<Entry>,
    /// SHA-256 of the file's bytes: the workload's identity.
    pub sha256: String,
    /// The file's name as given.
    pub file: String,
}

impl Dataset {
    /// Reads `path`; every error names the line and what to fix.
    pub fn read(path: &Path) -> anyhow::Result<Dataset> {
        Dataset::read_capped(path, MAX_BYTES)
    }

    /// [`Dataset::read`] of at most `cap` bytes, through the one reader of local files: a pipe
    /// or a device (such as `/dev/zero`, which never ends) is refused by name.
    fn read_capped(path: &Path, cap: u64) -> anyhow::Result<Dataset> {
        use crate::boundary::file::{self, FileError};
        let shown = path.display();
        let bytes = file::read(path, cap).map_err(|e| match e {
            FileError::TooBig { size, .. } => anyhow::anyhow!(
                "--dataset {shown} is {} MB; at most {} MB are read: give a file of prompts, one JSON object per line",
                size >> 20,
                cap >> 20
            ),
            FileError::TooLong { .. } => anyhow::anyhow!(
                "--dataset {shown} goes on past {} MB; at most {} MB are read: give a file of prompts, one JSON object per line",
                cap >> 20,
                cap >> 20
            ),
            e => anyhow::anyhow!("--dataset {shown} {e}"),
        })?;
        // A byte-order mark some editors write first is no part of the first line.
        let body = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
        let text = std::str::from_utf8(body)
            .map_err(|e| anyhow::anyhow!("--dataset {shown} is not UTF-8 text ({e})"))?;
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            entries.push(entry(line).map_err(|why| {
                anyhow::anyhow!(
                    "--dataset {shown} line {}: {why}; each line is {{\"prompt\": \"…\"}} or {{\"messages\": [{{\"role\": \"user\", \"content\": \"…\"}}]}}, with an optional \"output_len\"",
                    i + 1
                )
            })?);
        }
        if entries.is_empty() {
            bail!("--dataset {shown} has no prompts: give one JSON object per line");
        }
        Ok(Dataset {
            entries,
            sha256: hex::encode(Sha256::digest(&bytes)),
            file: shown.to_string(),
        })
    }

    /// Whether any line is chat messages (which need `--api chat`).
    pub fn has_messages(&self) -> bool {
        self.entries.iter().any(|e| e.messages.is_some())
    }

    /// The prompt of request `index`: line `index` modulo the lines, as written.
    pub fn prompt(&self, index: u64) -> Prompt {
        let e = &self.entries[(index % self.entries.len() as u64) as usize];
        let text = match (&e.prompt, &e.messages) {
            (Some(p), _) => p.clone(),
            (None, Some(m)) => m.to_string(),
            (None, None) => String::new(),
        };
        // A line is sent as written, the same in every run: its hash is its content's.
        let hash = prompt_hash(&text);
        Prompt {
            content_hash: Some(hash.clone()),
            hash,
            // The server's count is not known before it answers: 0 says so, and the input
            // length check leaves these requests out.
            tokens: 0,
            words: text.split_whitespace().count() as u64,
            text: e.prompt.clone().unwrap_or_default(),
            messages: e.messages.clone(),
            output_len: e.output_len,
        }
    }
}

fn entry(line: &str) -> Result<Entry, String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let prompt = match obj.get("prompt") {
        None => None,
        Some(serde_json::Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(_) => return Err("\"prompt\" must be a non-empty string".into()),
    };
    let messages = match obj.get("messages") {
        None => None,
        Some(m @ serde_json::Value::Array(a)) if !a.is_empty() => Some(m.clone()),
        Some(_) => return Err("\"messages\" must be a non-empty array".into()),
    };
    if prompt.is_some() == messages.is_some() {
        return Err("give exactly one of \"prompt\" and \"messages\"".into());
    }
    let output_len = match obj.get("output_len") {
        None | Some(serde_json::Value::Null) => None,
        Some(n) => match n.as_u64() {
            Some(n) if n > 0 => Some(n),
            _ => return Err("\"output_len\" must be a whole number of tokens above 0".into()),
        },
    };
    Ok(Entry {
        prompt,
        messages,
        output_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("d.jsonl");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn lines_are_read_as_written_and_cycled() {
        let (_d, p) = write(
            "{\"prompt\": \"Tell me  about\\ttabs \\u00e9\"}\n\n{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"output_len\": 7}\n",
        );
        let d = Dataset::read(&p).unwrap();
        assert_eq!(d.entries.len(), 2);
        assert!(d.has_messages());
        assert_eq!(d.sha256.len(), 64);
        let a = d.prompt(0);
        assert_eq!(a.text, "Tell me  about\ttabs é");
        assert_eq!((a.tokens, a.output_len), (0, None));
        let b = d.prompt(3);
        assert_eq!(b.messages.unwrap()[0]["content"], "hi");
        assert_eq!(b.output_len, Some(7));
        assert_eq!(d.prompt(2), a, "cycles");
    }

    #[test]
    fn a_device_without_end_is_read_only_to_the_cap() {
        // Before the cap was applied while reading, this read /dev/zero until memory ran out;
        // now a device is refused by name before a byte is read.
        let e = Dataset::read_capped(Path::new("/dev/zero"), 1 << 20)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--dataset /dev/zero is a device, not a regular file: llmsweep reads only files (a pipe or a device could block or never end)"
        );
        let (_d, p) = write(&"{\"prompt\": \"a\"}\n".repeat(70_000));
        let e = Dataset::read_capped(&p, 1 << 20).unwrap_err().to_string();
        assert!(e.contains("d.jsonl is 1 MB; at most 1 MB are read"), "{e}");
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let (_d, p) = write("\u{feff}{\"prompt\": \"a\"}\n{\"prompt\": \"b\"}\n");
        let d = Dataset::read(&p).unwrap();
        assert_eq!(d.entries.len(), 2);
        assert_eq!(d.prompt(0).text, "a");
    }

    #[test]
    fn bad_lines_say_which_and_what_to_fix() {
        for (text, want) in [
            ("{\"prompt\": \"a\"}\nnot json\n", "line 2: not JSON"),
            ("[1]\n", "line 1: not a JSON object"),
            ("{\"text\": \"a\"}\n", "exactly one of"),
            (
                "{\"prompt\": \"a\", \"output_len\": -3}\n",
                "\"output_len\" must be",
            ),
            ("\n\n", "has no prompts"),
        ] {
            let (_d, p) = write(text);
            let e = Dataset::read(&p).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let e = Dataset::read(Path::new("/nonexistent/x.jsonl")).unwrap_err();
        assert!(e.to_string().contains("x.jsonl cannot be read"), "{e}");
    }
}
