//! serve-sim's tokenizer and output text: whitespace words in, seeded common words out.
//!
//! The tokenizer is deliberately trivial so that tests can compute token counts by hand:
//! **one token per whitespace-separated word** (Unicode whitespace, as `str::split_whitespace`).
//! A word's id is a hash of its bytes, so the same word always gets the same id.
//!
//! Output text is drawn from [`WORDS`] by a [`SplitMix64`] generator seeded from the sim seed
//! and the request's arrival number, so a given seed and request order always produce the same
//! text, and normal output has the vocabulary spread of real prose (the collector's degenerate
//! output check must stay quiet on it).

/// Size of the id space the tokenizer hashes words into (a typical LLM vocabulary size).
pub const VOCAB_SIZE: u32 = 32_000;

/// The output vocabulary is the collector's prompt vocabulary: common English words.
pub use crate::load::workload::WORDS;

/// Number of tokens in `text`: its whitespace-separated words.
pub fn count_tokens(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

/// Token ids of `text`, one per whitespace-separated word.
pub fn token_ids(text: &str) -> Vec<u32> {
    text.split_whitespace().map(word_id).collect()
}

/// A word's id: FNV-1a of its bytes folded into `0..VOCAB_SIZE`.
fn word_id(word: &str) -> u32 {
    (llmsweep_shared::hash::fnv1a(word.as_bytes()) % u64::from(VOCAB_SIZE)) as u32
}

pub use crate::load::workload::SplitMix64;

/// Seed of the text of the `request`-th generation request (1-based) under sim seed `seed`.
///
/// Mixed through splitmix64 so that neighbouring requests get unrelated streams.
pub fn request_seed(seed: u64, request: u64) -> u64 {
    SplitMix64::new(seed ^ request.wrapping_mul(0xd6e8_feb8_6659_fd93)).next_u64()
}

/// The words of one response, produced one token at a time.
#[derive(Debug, Clone)]
pub struct OutputText {
    rng: SplitMix64,
    /// The `repeat_word` fault: every token is this word.
    repeat: Option<String>,
}

impl OutputText {
    pub fn new(seed: u64, repeat: Option<String>) -> Self {
        OutputText {
            rng: SplitMix64::new(seed),
            repeat,
        }
    }

    /// Text of the next `tokens` tokens, each as `" word"` (a leading space, like BPE output).
    pub fn next_tokens(&mut self, tokens: u32) -> String {
        let mut out = String::new();
        for _ in 0..tokens {
            out.push(' ');
            match &self.repeat {
                Some(word) => out.push_str(word),
                None => out.push_str(WORDS[(self.rng.next_u64() % WORDS.len() as u64) as usize]),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn word_list_has_distinct_single_words() {
        let distinct: HashSet<&str> = WORDS.iter().copied().collect();
        assert_eq!(distinct.len(), WORDS.len());
        assert!(WORDS.iter().all(|w| count_tokens(w) == 1));
    }

    #[test]
    fn one_token_per_whitespace_word() {
        assert_eq!(count_tokens("  hello  big\tworld\n"), 3);
        assert_eq!(count_tokens(""), 0);
        assert_eq!(
            token_ids("a b a"),
            vec![word_id("a"), word_id("b"), word_id("a")]
        );
        assert!(token_ids("x y z").iter().all(|&id| id < VOCAB_SIZE));
    }

    #[test]
    fn splitmix64_matches_reference_values() {
        // First outputs for seed 0 from the reference implementation (Vigna).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn output_is_deterministic_per_seed_and_varied() {
        let a = OutputText::new(request_seed(7, 1), None).next_tokens(300);
        let b = OutputText::new(request_seed(7, 1), None).next_tokens(300);
        let c = OutputText::new(request_seed(7, 2), None).next_tokens(300);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(count_tokens(&a), 300);
        let distinct: HashSet<&str> = a.split_whitespace().collect();
        assert!(
            distinct.len() > 100,
            "only {} distinct words",
            distinct.len()
        );
    }

    #[test]
    fn repeat_word_fault_repeats_one_word() {
        let text = OutputText::new(1, Some("again".into())).next_tokens(3);
        assert_eq!(text, " again again again");
    }
}
