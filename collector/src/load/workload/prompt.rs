//! One prompt as it is sent, its hashes (the proof two runs sent the same work), and the
//! reproducible random numbers prompts are drawn with.

use sha2::{Digest, Sha256};

/// One prompt, ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub text: String,
    /// Tokens the server is expected to count (the input length asked, unless the vocabulary
    /// could not hit it exactly).
    pub tokens: u64,
    /// First 16 hex digits of the SHA-256 of `text`.
    pub hash: String,
    /// The same of the text after the per-run prefix (when there is one).
    pub content_hash: Option<String>,
    /// Words in the text.
    pub words: u64,
    /// A dataset's chat messages, sent as written instead of `text`.
    pub messages: Option<serde_json::Value>,
    /// A dataset line's own output length.
    pub output_len: Option<u64>,
}

/// First 16 hex digits of the SHA-256 of a prompt.
pub(crate) fn prompt_hash(text: &str) -> String {
    let d = Sha256::digest(text.as_bytes());
    hex::encode(&d[..8])
}

/// SHA-256 over prompt hashes in order: proof that two runs sent the same prompts.
pub(crate) fn digest<'a>(hashes: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = Sha256::new();
    for x in hashes {
        h.update(x.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

/// splitmix64: tiny, fast, and the same on every platform, so prompts are reproducible.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}
