//! Text from a bundle, a file or a server (a label, a model id, a host name, an error) made
//! inert before it is printed or drawn: the one sanitiser of every edge that shows such text.

use std::borrow::Cow;

/// `text` with every control character but newline and tab, and the two noncharacters U+FFFE
/// and U+FFFF, written as its escape (`\u{1b}`): in a terminal nothing can move the cursor,
/// clear the screen, retitle the window or set the clipboard, and in an SVG every character is
/// one XML 1.0 allows (it forbids most C0 controls even as character references). The escape
/// stays readable, so the text still shows what it held.
pub fn inert(text: &str) -> Cow<'_, str> {
    let live = |c: char| {
        (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{fffe}' | '\u{ffff}')
    };
    if !text.chars().any(live) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if live(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `v` for a message: as written (`2`, `0.05`) when that is short, else in scientific notation
/// (`1e-300`, not three hundred digits).
pub fn number(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() <= 20 {
        plain
    } else {
        format!("{v:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_written_as_their_escapes_and_plain_text_is_borrowed() {
        assert!(matches!(inert("kpro5 — 8×H100\tok\n"), Cow::Borrowed(_)));
        assert_eq!(
            inert("a\u{1b}]52;c;aGk=\u{7}\u{1b}[2Jb"),
            "a\\u{1b}]52;c;aGk=\\u{7}\\u{1b}[2Jb"
        );
        assert_eq!(inert("\u{9b}2J\r\u{0}"), "\\u{9b}2J\\u{d}\\u{0}");
        assert_eq!(inert("x\u{fffe}\u{ffff}"), "x\\u{fffe}\\u{ffff}");
    }

    #[test]
    fn numbers_in_messages_are_short() {
        assert_eq!(number(2.0), "2");
        assert_eq!(number(0.05), "0.05");
        assert_eq!(number(-1.5), "-1.5");
        assert_eq!(number(1e-300), "1e-300");
        assert_eq!(number(-1e-300), "-1e-300");
        assert_eq!(number(1e300), "1e300");
        assert_eq!(number(f64::MAX), "1.7976931348623157e308");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(f64::INFINITY), "inf");
    }
}
