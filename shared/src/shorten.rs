//! Texts that came from a server or a file, shortened for the page, the chart and the terminal.
//!
//! A bundle's label, a model name or a host name is whatever a server or a file said, and may be a
//! million characters without a space: laid out whole, it froze a browser tab for over a minute
//! and pushed every table off the screen. What is shown is its beginning and its length; the
//! bundle keeps the whole text, and the viewer shows it on request.

use std::borrow::Cow;

use crate::charts::axis::thousands;

/// Characters of a label (a run's name: in legends, table headers, headlines) shown before it is
/// shortened.
pub const LABEL_CHARS: usize = 60;

/// Characters of a fact (a model, an engine, a host, a note) shown before it is shortened.
pub const FACT_CHARS: usize = 120;

/// Characters past `max` a text may have and still be shown whole: what [`clip`] adds (`… (`,
/// a count, ` characters)`), so that a text shortened once is never shortened again.
const SLACK: usize = 32;

/// `text` as shown: whole when it has at most `max` (+ a little) characters, else its first `max`
/// characters, `…` and its length ("Qwen…… (1,000,000 characters)"). Costs at most `max`
/// characters' work when nothing is cut, and one pass to count when something is.
pub fn clip(text: &str, max: usize) -> Cow<'_, str> {
    if !is_clipped(text, max) {
        return Cow::Borrowed(text);
    }
    let Some((cut, _)) = text.char_indices().nth(max) else {
        return Cow::Borrowed(text);
    };
    let total = text.chars().count();
    Cow::Owned(format!(
        "{}… ({} characters)",
        &text[..cut],
        thousands(total as f64)
    ))
}

/// A run's label as shown: [`clip`] to [`LABEL_CHARS`].
pub fn label(text: &str) -> Cow<'_, str> {
    clip(text, LABEL_CHARS)
}

/// A fact as shown: [`clip`] to [`FACT_CHARS`].
pub fn fact(text: &str) -> Cow<'_, str> {
    clip(text, FACT_CHARS)
}

/// Whether [`clip`] would shorten `text` at `max`.
pub fn is_clipped(text: &str, max: usize) -> bool {
    text.char_indices().nth(max + SLACK).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_are_left_whole() {
        assert!(matches!(clip("kpro5", 5), Cow::Borrowed("kpro5")));
        assert_eq!(clip("", 0), "");
        assert!(!is_clipped("kpro5", 5));
    }

    #[test]
    fn long_texts_keep_their_beginning_and_say_their_length() {
        let long = format!("Q{}", "w".repeat(999_999));
        assert_eq!(clip(&long, 4), "Qwww… (1,000,000 characters)");
        assert!(is_clipped(&long, 4));
        assert_eq!(label(&long).chars().count(), LABEL_CHARS + 24);
    }

    #[test]
    fn characters_are_counted_not_bytes() {
        // 36 characters, 104 bytes: whole at 4, cut at 3 on a character boundary.
        let text = format!("ñ日本{}", "語".repeat(33));
        assert_eq!(clip(&text, 4), text);
        assert_eq!(clip(&text, 3), "ñ日本… (36 characters)");
    }

    #[test]
    fn a_shortened_text_is_not_shortened_again() {
        let long = "x".repeat(1_000_000);
        let once = label(&long).into_owned();
        assert_eq!(label(&once), once);
        assert_eq!(fact(&once), once);
    }
}
