//! Prompts: unique, reproducible from a seed, and of the asked length in the server's tokens.

use super::prompt::{Prompt, SplitMix64, prompt_hash};

/// Common English words; prompts are random sequences of them. Real tokenizers encode most as a
/// single token, which lets a prompt hit an exact length.
pub const WORDS: &[&str] = &[
    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
    "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
    "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
    "been", "if", "more", "when", "will", "would", "who", "so", "no", "she", "other", "its", "may",
    "these", "what", "them", "than", "some", "him", "time", "into", "only", "do", "could", "new",
    "about", "two", "then", "first", "also", "any", "like", "our", "over", "such", "out", "very",
    "most", "made", "after", "even", "before", "must", "many", "well", "where", "through", "way",
    "should", "because", "each", "just", "those", "people", "how", "too", "little", "state",
    "good", "work", "world", "still", "own", "see", "men", "long", "here", "get", "both",
    "between", "life", "being", "under", "never", "day", "same", "another", "know", "while",
    "last", "might", "great", "old", "year", "off", "come", "since", "against", "go", "came",
    "right", "used", "take", "three", "water", "small", "place", "without", "again", "home",
    "number", "found", "house", "large", "part", "left", "hand", "light", "night", "open", "city",
    "river", "music", "north", "south", "paper", "story", "table", "green", "black", "white",
    "early", "field", "voice", "short", "money", "power", "order", "change", "course", "school",
    "family", "point", "group", "lake", "tree", "stone", "road", "ship", "town", "wind", "fire",
    "rain", "snow", "bird", "horse", "king", "court", "door", "window", "letter", "book", "market",
    "garden", "summer", "winter", "morning", "evening", "doctor", "friend", "mother", "father",
    "child", "woman", "country", "island", "bridge", "train", "station", "forest", "mountain",
    "valley", "ocean", "coast", "harbor", "village", "castle", "church", "street", "corner",
    "chair", "glass", "silver", "gold", "iron", "wood", "bread", "milk", "salt", "sugar", "coffee",
    "apple", "orange",
];

/// How prompt text maps to the server's tokens.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TokenModel {
    /// Each word's cost in tokens after a space, measured with the server's tokenizer (words
    /// with a stable integer cost only); the cost of words at the start of a prompt, where no
    /// space precedes them; and the tokens the server adds to every prompt.
    Measured {
        words: Vec<(String, u32)>,
        first: Vec<(String, u32)>,
        added: u64,
    },
    /// No tokenizer: `tokens_per_word` estimated (1.0 before any usage was seen), plus the tokens
    /// the server adds to every prompt.
    Estimated { tokens_per_word: f64, added: u64 },
}

impl TokenModel {
    /// The words that cost one token at the start of a text and elsewhere (the word list itself
    /// when costs are only estimated).
    fn one_token_words(&self) -> (Vec<&str>, Vec<&str>) {
        match self {
            TokenModel::Measured { words, first, .. } => (one_token(first), one_token(words)),
            TokenModel::Estimated { .. } => (Vec::new(), WORDS.to_vec()),
        }
    }

    /// Tokens added to every prompt by the server (BOS, chat template).
    pub(crate) fn added(&self) -> u64 {
        match self {
            TokenModel::Measured { added, .. } | TokenModel::Estimated { added, .. } => *added,
        }
    }
}

/// Words of the per-run prefix at the start of every prompt.
pub(crate) const PREFIX_WORDS: u64 = 4;

/// Builds prompts deterministically: the content from the seed, the point and the request index,
/// so two hosts given the same seed and tokenizer send the same work; the first
/// [`PREFIX_WORDS`] words from a per-run prefix seed, so a rerun misses the prefix cache.
#[derive(Debug, Clone)]
pub(crate) struct PromptBuilder {
    pub seed: u64,
    /// `None`: the whole prompt comes from `seed` (the warm-up's calibration and the tests).
    pub prefix_seed: Option<u64>,
    pub model: TokenModel,
    /// `--shared-prefix-len`: tokens every prompt starts with, the same in every prompt of the
    /// run (drawn from the per-run prefix seed, so a rerun does not find them cached).
    pub shared_prefix: u64,
    /// `--dataset`: the measured requests send its lines instead (the warm-up stays synthetic).
    pub dataset: Option<std::sync::Arc<super::dataset::Dataset>>,
}

impl PromptBuilder {
    pub(crate) fn new(seed: u64, prefix_seed: Option<u64>, model: TokenModel) -> Self {
        PromptBuilder {
            seed,
            prefix_seed,
            model,
            shared_prefix: 0,
            dataset: None,
        }
    }

    /// The words of the shared prefix: one-token words (so it is `shared_prefix` tokens
    /// whichever are drawn), from the per-run prefix seed alone.
    fn shared_words(&self) -> Vec<&str> {
        let (first, words) = self.model.one_token_words();
        let mut rng =
            SplitMix64::new(self.prefix_seed.unwrap_or(self.seed) ^ 0x5EED_5A4E_D000_0001);
        (0..self.shared_prefix)
            .filter_map(|i| {
                let pool = if i == 0 && !first.is_empty() {
                    &first
                } else {
                    &words
                };
                (!pool.is_empty()).then(|| pool[rng.below(pool.len() as u64) as usize])
            })
            .collect()
    }

    /// The prompt a measured request sends: the dataset's line `index` when there is a
    /// dataset, else [`PromptBuilder::prompt`].
    pub(crate) fn request(&self, stream: u64, index: u64, input_len: u64) -> Prompt {
        match &self.dataset {
            Some(d) => d.prompt(index),
            None => self.prompt(stream, index, input_len),
        }
    }

    /// The prompt for request `index` of the stream `stream` (a point, or the warm-up).
    /// Every prompt starts with the run's shared prefix (none unless `--shared-prefix-len`),
    /// then its own random words, so no two share a cacheable prefix beyond it.
    pub(crate) fn prompt(&self, stream: u64, index: u64, input_len: u64) -> Prompt {
        let key = mix(stream) ^ mix(index.wrapping_add(0x51));
        let mut rng = SplitMix64::new(self.seed ^ key);
        let mut body = input_len.saturating_sub(self.model.added()).max(1);
        let shared = self.shared_words();
        body = body.saturating_sub(shared.len() as u64).max(1);
        // The prefix: one-token words (so its length is the same whatever words are drawn),
        // placed first.
        let mut prefix: Vec<&str> = shared.clone();
        let mut prefix_tokens = 0;
        if let Some(p) = self.prefix_seed {
            let mut prng = SplitMix64::new(p ^ key);
            let (first, words) = self.model.one_token_words();
            for i in 0..PREFIX_WORDS {
                let pool = if i == 0 && shared.is_empty() && !first.is_empty() {
                    &first
                } else {
                    &words
                };
                if pool.is_empty() || body <= PREFIX_WORDS + 1 {
                    break;
                }
                prefix.push(pool[prng.below(pool.len() as u64) as usize]);
                prefix_tokens += 1;
            }
            body -= prefix_tokens;
        }
        let prefix_tokens = prefix_tokens + shared.len() as u64;
        let at_start = prefix.is_empty();
        let (words, body_tokens) = match &self.model {
            TokenModel::Measured { words, first, .. } => {
                let first: &[(String, u32)] = if at_start { first } else { &[] };
                pick_exact(words, first, body, &mut rng)
            }
            TokenModel::Estimated {
                tokens_per_word, ..
            } => {
                // Every word costs the estimated tokens, the prefix's too (they are one token
                // each only when measured): count the words of the whole prompt, and give the
                // content what the prefix leaves of them.
                let whole = input_len.saturating_sub(self.model.added()).max(1) as f64;
                let all = ((whole / tokens_per_word).round() as u64).max(1);
                let n = all.saturating_sub(prefix.len() as u64).max(1);
                let w = (0..n).map(|_| WORDS[rng.below(WORDS.len() as u64) as usize]);
                (w.collect(), body)
            }
        };
        let content = words.join(" ");
        let text = if prefix.is_empty() {
            content.clone()
        } else {
            format!("{} {content}", prefix.join(" "))
        };
        Prompt {
            hash: prompt_hash(&text),
            content_hash: self.prefix_seed.map(|_| prompt_hash(&content)),
            tokens: body_tokens + prefix_tokens + self.model.added(),
            words: (prefix.len() + words.len()) as u64,
            messages: None,
            output_len: None,
            text,
        }
    }
}

fn one_token(list: &[(String, u32)]) -> Vec<&str> {
    list.iter()
        .filter(|w| w.1 == 1)
        .map(|w| w.0.as_str())
        .collect()
}

/// Random words whose costs add up to `target`, or as close below as the costs allow. The first
/// word comes from `first` with its cost at the start of a text, when that list is not empty.
fn pick_exact<'a>(
    words: &'a [(String, u32)],
    first: &'a [(String, u32)],
    target: u64,
    rng: &mut SplitMix64,
) -> (Vec<&'a str>, u64) {
    let max_cost = words.iter().map(|w| w.1 as u64).max().unwrap_or(1);
    let mut out = Vec::new();
    let mut left = target;
    let starters: Vec<&(String, u32)> = first.iter().filter(|w| (w.1 as u64) < left).collect();
    if !starters.is_empty() {
        let (w, c) = starters[rng.below(starters.len() as u64) as usize];
        out.push(w.as_str());
        left -= *c as u64;
    }
    while left > max_cost {
        let (w, c) = &words[rng.below(words.len() as u64) as usize];
        out.push(w.as_str());
        left -= *c as u64;
    }
    // The tail: pick words that fit, exact fits first.
    while left > 0 {
        let exact: Vec<&(String, u32)> = words.iter().filter(|w| w.1 as u64 == left).collect();
        let fit: Vec<&(String, u32)> = if exact.is_empty() {
            words.iter().filter(|w| (w.1 as u64) < left).collect()
        } else {
            exact
        };
        if fit.is_empty() {
            break;
        }
        let (w, c) = fit[rng.below(fit.len() as u64) as usize];
        out.push(w.as_str());
        left -= *c as u64;
    }
    (out, target - left)
}

fn mix(x: u64) -> u64 {
    SplitMix64::new(x).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::workload::prompt::digest;

    fn one_token_words() -> TokenModel {
        let words: Vec<(String, u32)> = WORDS.iter().map(|w| (w.to_string(), 1)).collect();
        TokenModel::Measured {
            first: words.clone(),
            words,
            added: 1,
        }
    }

    #[test]
    fn measured_prompts_hit_the_length_exactly() {
        let b = PromptBuilder::new(7, None, one_token_words());
        let p = b.prompt(0, 0, 1000);
        assert_eq!(p.tokens, 1000);
        assert_eq!(p.words, 999, "one token is the server's BOS");
        assert_eq!(p.text.split(' ').count(), 999);
    }

    #[test]
    fn mixed_costs_fill_exactly_with_cheap_words() {
        let words = vec![
            ("alpha".to_string(), 3),
            ("be".to_string(), 1),
            ("gamma".to_string(), 2),
        ];
        let first = vec![("Alpha".to_string(), 2)];
        let b = PromptBuilder::new(
            1,
            None,
            TokenModel::Measured {
                words,
                first,
                added: 0,
            },
        );
        for len in 1..60 {
            let p = b.prompt(3, len, len);
            assert_eq!(p.tokens, len);
            if len > 2 {
                assert!(p.text.starts_with("Alpha"), "{}", p.text);
            }
        }
    }

    #[test]
    fn lengths_that_cannot_be_hit_come_as_close_as_possible_below() {
        let words = vec![("xx".to_string(), 2)];
        let b = PromptBuilder::new(
            1,
            None,
            TokenModel::Measured {
                words,
                first: vec![],
                added: 0,
            },
        );
        assert_eq!(b.prompt(0, 0, 7).tokens, 6);
    }

    #[test]
    fn prompts_are_unique_and_reproducible() {
        let b = PromptBuilder::new(42, None, one_token_words());
        let a: Vec<Prompt> = (0..50).map(|i| b.prompt(1, i, 64)).collect();
        let again: Vec<Prompt> = (0..50).map(|i| b.prompt(1, i, 64)).collect();
        assert_eq!(a, again);
        let mut firsts: Vec<String> = a
            .iter()
            .map(|p| p.text.split(' ').take(8).collect::<Vec<_>>().join(" "))
            .collect();
        firsts.sort();
        firsts.dedup();
        assert_eq!(firsts.len(), 50, "every prompt starts differently");
        assert_ne!(b.prompt(2, 0, 64), b.prompt(1, 0, 64));
        assert_ne!(
            PromptBuilder::new(43, None, one_token_words()).prompt(1, 0, 64),
            a[0]
        );
    }

    #[test]
    fn a_per_run_prefix_changes_the_start_and_keeps_the_content_and_the_length() {
        let run = |prefix| PromptBuilder::new(0, Some(prefix), one_token_words());
        let (a, b) = (run(1), run(2));
        for i in 0..20 {
            let (pa, pb) = (a.prompt(1, i, 300), b.prompt(1, i, 300));
            assert_eq!((pa.tokens, pb.tokens), (300, 300));
            assert_ne!(pa.hash, pb.hash, "the runs' prompts differ");
            assert_eq!(pa.content_hash, pb.content_hash, "their content does not");
            let head = |p: &Prompt| {
                p.text
                    .split(' ')
                    .take(PREFIX_WORDS as usize)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            assert_ne!(head(&pa), head(&pb));
            let tail = |p: &Prompt| {
                p.text
                    .split(' ')
                    .skip(PREFIX_WORDS as usize)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            assert_eq!(tail(&pa), tail(&pb));
        }
        // Mixed costs: the prefix takes only one-token words, the content fills the rest exactly.
        let words = vec![
            ("alpha".to_string(), 3),
            ("be".to_string(), 1),
            ("gamma".to_string(), 2),
        ];
        let m = PromptBuilder::new(
            1,
            Some(9),
            TokenModel::Measured {
                words,
                first: vec![("Alpha".to_string(), 2)],
                added: 0,
            },
        );
        for len in 8..60 {
            let p = m.prompt(3, len, len);
            assert_eq!(p.tokens, len);
            assert!(p.text.starts_with("be be be be "), "{}", p.text);
        }
    }

    #[test]
    fn estimated_model_scales_word_count() {
        let b = PromptBuilder::new(
            1,
            None,
            TokenModel::Estimated {
                tokens_per_word: 1.25,
                added: 0,
            },
        );
        let p = b.prompt(0, 0, 1000);
        assert_eq!((p.words, p.tokens), (800, 1000));
    }

    #[test]
    fn estimated_prompts_count_the_prefix_words_at_the_estimated_cost() {
        // 1.25 tokens a word: 100 tokens are 80 words, whether 4 or 24 of them are the run's
        // prefix and the shared prefix. Counted as one token each, the prefix made the prompt
        // 81 words (101 tokens) and 85 words (106 tokens).
        let mut b = PromptBuilder::new(
            1,
            Some(9),
            TokenModel::Estimated {
                tokens_per_word: 1.25,
                added: 0,
            },
        );
        for shared in [0, 20] {
            b.shared_prefix = shared;
            let p = b.prompt(0, 0, 100);
            assert_eq!((p.words, p.tokens), (80, 100), "shared prefix {shared}");
            assert_eq!(p.text.split(' ').count(), 80);
        }
        // A server that adds a token to every prompt: 99 tokens of words, 79 of them.
        let b = PromptBuilder::new(
            1,
            Some(9),
            TokenModel::Estimated {
                tokens_per_word: 1.25,
                added: 1,
            },
        );
        assert_eq!(b.prompt(0, 0, 100).words, 79);
    }

    #[test]
    fn digest_depends_on_order() {
        assert_ne!(digest(["a", "b"]), digest(["b", "a"]));
        assert_eq!(prompt_hash("x").len(), 16);
    }

    #[test]
    fn a_shared_prefix_is_the_same_for_n_tokens_and_unique_after() {
        let mut b = PromptBuilder::new(3, Some(99), one_token_words());
        b.shared_prefix = 100;
        let words = |p: &Prompt| p.text.split(' ').map(str::to_string).collect::<Vec<_>>();
        let (a, c) = (b.prompt(1, 0, 500), b.prompt(2, 7, 500));
        let (wa, wc) = (words(&a), words(&c));
        // Exactly the asked length, BOS included; the first 100 words (tokens) identical...
        assert_eq!((a.tokens, c.tokens), (500, 500));
        assert_eq!(wa.len(), 499);
        assert_eq!(wa[..100], wc[..100]);
        // ...and the per-run words after it differ, so nothing beyond it is shared.
        assert_ne!(wa[100..104], wc[100..104]);
        // Another run (another prefix seed) shares another prefix.
        let mut other = PromptBuilder::new(3, Some(100), one_token_words());
        other.shared_prefix = 100;
        assert_ne!(words(&other.prompt(1, 0, 500))[..100], wa[..100]);
    }
}
