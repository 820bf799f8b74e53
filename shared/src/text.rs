//! Text from a bundle, a file or a server (a label, a model id, a host name, an error) made
//! inert before it is printed or drawn: the one sanitiser of every edge that shows such text.

use std::borrow::Cow;

/// `text` with every control character but newline and tab, the bidirectional controls and
/// the line and paragraph separators, and the two noncharacters U+FFFE and U+FFFF, written as
/// its escape (`\u{1b}`): in a terminal nothing can move the cursor, clear the screen, retitle
/// the window or set the clipboard; in a terminal, a review or a table no text can reorder what
/// follows it (U+202E shows `kpro5 gpj.exe` backwards); and in an SVG every character is one
/// XML 1.0 allows (it forbids most C0 controls even as character references). The escape stays
/// readable, so the text still shows what it held.
pub fn inert(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| {
        (c.is_control() && c != '\n' && c != '\t') || hidden(c)
    })
}

/// [`inert`], and on one line: newline and tab escaped too. What a label, a model id or a host
/// name gets wherever it is shown, so that one cannot start a line of its own (a forged verdict
/// line) in a terminal, a Markdown comment or a CSV file.
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c.is_control() || hidden(c))
}

/// Characters that are not controls but change how what follows is shown: the bidirectional
/// embeddings, overrides and isolates (U+202A–E, U+2066–9), the directional marks (U+200E,
/// U+200F, U+061C), the line and paragraph separators, and the noncharacters U+FFFE/U+FFFF.
fn hidden(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{061c}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{fffe}'
            | '\u{ffff}'
    )
}

fn escape_where(text: &str, live: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&live) {
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

/// Text from a bundle, or built around one (a label, a sentence naming it), for Markdown (a
/// pull-request comment, `$GITHUB_STEP_SUMMARY`): on one line (a line break or tab is a space),
/// [`inert`], every character Markdown could
/// read as markup backslash-escaped (`|` would end a table cell, a backtick open code, a
/// leading `#` a heading, `<` a tag), and what GitHub would turn into a link or a notification
/// broken by a word joiner (U+2060, invisible): `@name` mentions, `http://`, `https://` and
/// `www.` autolinks, `#123` references.
pub fn markdown(text: &str) -> String {
    let text = inert(text);
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '\n' | '\r' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' | '&' | '!' => {
                out.push('\\');
                out.push(ch);
            }
            // `@name` and `a@b.c`, `x://`, `www.`: the joiner keeps them from being linked.
            '@' | ':' => {
                out.push(ch);
                if ch == '@' || chars.peek() == Some(&'/') {
                    out.push('\u{2060}');
                }
            }
            '.' if out.ends_with("www") || out.ends_with("WWW") => {
                out.push('\u{2060}');
                out.push('.');
            }
            _ => out.push(ch),
        }
    }
    out
}

/// A CSV cell that a spreadsheet would evaluate (it starts with `=`, `+`, `-`, `@`, a tab or a
/// carriage return, and is not a number) with a `'` put before it, as OWASP advises: the cell
/// shows its text instead of running it. Numbers (`-5.2`) are left as they are.
pub fn csv_cell(text: &str) -> Cow<'_, str> {
    let risky = text
        .chars()
        .next()
        .is_some_and(|c| matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r'));
    if risky && text.trim().parse::<f64>().is_err() {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    }
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
    fn bidi_controls_and_separators_are_escaped_and_one_line_escapes_breaks() {
        assert_eq!(
            inert("a\u{202e}gpj\u{2066}b\u{2028}"),
            "a\\u{202e}gpj\\u{2066}b\\u{2028}"
        );
        assert_eq!(inert("two\nlines\t"), "two\nlines\t");
        assert_eq!(
            one_line("kpro5\nverdict: faster\r\t"),
            "kpro5\\u{a}verdict: faster\\u{d}\\u{9}"
        );
        assert!(matches!(one_line("kpro5 — 8×H100"), Cow::Borrowed(_)));
    }

    #[test]
    fn markdown_escapes_markup_mentions_and_autolinks() {
        assert_eq!(markdown("a|b `c` <x>"), "a\\|b \\`c\\` \\<x\\>");
        assert_eq!(markdown("@org/team"), "@\u{2060}org/team");
        assert_eq!(
            markdown("see https://evil.example and www.x.io"),
            "see https:\u{2060}//evil.example and www\u{2060}.x.io"
        );
        assert_eq!(markdown("#12"), "\\#12");
        assert_eq!(markdown("k\nfaster"), "k faster");
        assert_eq!(markdown("C=4: 0.3 s"), "C=4: 0.3 s");
    }

    #[test]
    fn csv_cells_a_spreadsheet_would_run_are_prefixed_numbers_are_not() {
        for f in [
            "=1+2",
            "+cmd",
            "-2+3",
            "@SUM(A1)",
            "\tx",
            "\rx",
            "=HYPERLINK(\"x\")",
        ] {
            assert_eq!(csv_cell(f), format!("'{f}"), "{f:?}");
        }
        for ok in ["-5.2", "+3", "-1e-300", "kpro5", "", "1,2", "-inf"] {
            assert_eq!(csv_cell(ok), ok, "{ok:?}");
        }
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
