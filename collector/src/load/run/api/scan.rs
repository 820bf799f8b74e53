//! The token chunks of working servers, read in one pass over their bytes.
//!
//! A streamed answer is a few hundred bytes of JSON per token, most of it fields a record never
//! needs (`id`, `model`, `created`, `logprobs`, …). serde's typed reading walks those through its
//! visitors and took a third of the collector's time per token at one token per event (see
//! BENCHMARKS.md, "CPU per token"); this scanner steps over them byte by byte and reads only
//! the fields [`super::chunk`]'s typed structs read, into those same structs.
//!
//! It takes only what it reads exactly as serde does: keys without escapes, each key it reads
//! at most once, numbers without an exponent, surrogate escapes only in pairs, nothing nested
//! deeper than [`MAX_DEPTH`], no `error`, no `metrics`. Anything else (an error event, a
//! malformed chunk) returns `None`, and the chunk is read again by serde as before; the
//! property tests hold both readings to the same answer.

use std::borrow::Cow;

use super::chunk::{ChunkEvent, FirstChoice, Object, Text, Usage, wire};

/// Nesting the scanner steps over before it leaves a chunk to serde.
pub(super) const MAX_DEPTH: usize = 32;

/// Digits a number may have: more could be a float past f64's range, which JSON trees refuse.
const MAX_DIGITS: usize = 20;

/// The bytes a JSON string holds as they are: all but `"`, `\\` and the controls below 0x20.
const PLAIN: [bool; 256] = {
    let mut t = [true; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = false;
        c += 1;
    }
    t[b'"' as usize] = false;
    t[b'\\' as usize] = false;
    t
};

/// Whether `c` stands for itself inside a JSON string: anything but `"`, `\\` and the controls.
pub(super) fn plain(c: u8) -> bool {
    PLAIN[c as usize]
}

/// Reads `data` as a token chunk, or says it cannot (`None`) and leaves it to serde.
pub(super) fn chunk(data: &str) -> Option<ChunkEvent<'_>> {
    read(data, None).map(|(ev, _)| ev)
}

/// Where a chunk's `usage` value lies in its bytes, from its first byte to the one after it,
/// when it has one.
pub(super) type UsageSpan = Option<(usize, usize)>;

/// [`chunk`], for the next chunk of one answer. `common` holds the bytes the answer's chunks
/// start with that the scan only steps over (`{"id":"cmpl-…","object":…,"created":…,"model":…,`
/// up to the first member it reads); a chunk that starts with them is read from there on, as a
/// scan of them would leave it: inside the chunk's object, before a key, nothing read yet.
/// Every lookahead of those members' scan stops at the comma that ends the last of them, so
/// the same bytes always scan the same. After a chunk read from its start, `common` holds its
/// own such bytes (none when it reads its first member).
/// Also says where the chunk's `usage` value lies.
pub(super) fn chunk_after<'a>(
    data: &'a str,
    common: &mut Vec<u8>,
) -> Option<(ChunkEvent<'a>, UsageSpan)> {
    read(data, Some(common))
}

/// A `usage` value (`null` or an object) read alone, from byte `at` of `data`: what it says,
/// as a chunk's reading of it would say, and where it ends. `None` when it is not one the scan
/// reads.
pub(super) fn usage_at(data: &str, at: usize) -> Option<(Option<Usage>, usize)> {
    let mut s = Scan {
        src: data,
        b: data.as_bytes(),
        i: at,
    };
    let usage = s.or_null(Scan::usage)?;
    Some((usage.map(|Object(u)| u.into()), s.i))
}

/// [`chunk`], or [`chunk_after`] with `common`.
fn read<'a>(data: &'a str, common: Option<&mut Vec<u8>>) -> Option<(ChunkEvent<'a>, UsageSpan)> {
    let mut s = Scan {
        src: data,
        b: data.as_bytes(),
        i: 0,
    };
    let shared = common
        .as_ref()
        .filter(|c| !c.is_empty() && s.b.starts_with(c))
        .map(|c| c.len());
    let resume = shared.is_some();
    match shared {
        Some(n) => s.i = n,
        None => s.ws(),
    }
    let (mut c, stepped, usage) = s.top(resume)?;
    s.ws();
    if s.i != s.b.len() {
        return None;
    }
    if let (false, Some(common)) = (resume, common) {
        common.clear();
        common.extend_from_slice(&s.b[..stepped]);
    }
    // Read into an event here, where the chunk was built: the scanned chunk (near 300 bytes)
    // is not moved again, only the smaller event.
    Some((c.take_event(), usage))
}

struct Scan<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string: borrowed when it has no escapes, unescaped into its own text when it has.
    fn text(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.i;
        self.plain();
        if self.eat(b'"').is_some() {
            // Both ends are ASCII quotes, so the slice falls on character boundaries.
            return Some(Cow::Borrowed(&self.src[start..self.i - 1]));
        }
        let mut own = String::from(&self.src[start..self.i]);
        loop {
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return Some(Cow::Owned(own));
                }
                b'\\' => own.push(self.escape()?),
                _ => return None,
            }
            let from = self.i;
            self.plain();
            own.push_str(&self.src[from..self.i]);
        }
    }

    /// A string stepped over: its escapes are checked, not kept.
    fn skip_string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        loop {
            self.plain();
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                b'\\' => drop(self.escape()?),
                _ => return None,
            }
        }
    }

    /// A key: a string without escapes (a key spelled with one is serde's to match).
    fn key(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        self.plain();
        self.eat(b'"')?;
        Some(&self.src[start..self.i - 1])
    }

    /// Steps over the bytes a string holds as they are: all but `"`, `\` and controls. Eight
    /// at a time while they last (a token's text and an `id` are mostly such bytes).
    fn plain(&mut self) {
        const ONES: u64 = u64::from_le_bytes([0x01; 8]);
        const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
        // A byte of `w` equal to zero: its high bit set in the result, and none below it.
        let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
        while let Some(word) = self.b.get(self.i..self.i + 8) {
            let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
            let stop = zero(w ^ (ONES * b'"' as u64))
                | zero(w ^ (ONES * b'\\' as u64))
                | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
            if stop != 0 {
                self.i += (stop.trailing_zeros() / 8) as usize;
                return;
            }
            self.i += 8;
        }
        while self.peek().is_some_and(|c| PLAIN[c as usize]) {
            self.i += 1;
        }
    }

    /// One escape, from its backslash: the character it stands for. A UTF-16 surrogate is
    /// taken only as the first half of a pair; a lone one is serde's to judge.
    fn escape(&mut self) -> Option<char> {
        self.eat(b'\\')?;
        let c = self.peek()?;
        self.i += 1;
        Some(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4()?;
                if !(0xD800..0xDC00).contains(&high) {
                    return char::from_u32(high);
                }
                self.eat(b'\\')?;
                self.eat(b'u')?;
                let low = self.hex4()?;
                if !(0xDC00..0xE000).contains(&low) {
                    return None;
                }
                return char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00));
            }
            _ => return None,
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.b.get(self.i..self.i + 4)?;
        let mut v = 0;
        for &d in digits {
            v = v * 16 + (d as char).to_digit(16)?;
        }
        self.i += 4;
        Some(v)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.b[self.i..]
            .starts_with(word)
            .then(|| self.i += word.len())
    }

    fn null(&mut self) -> bool {
        self.literal(b"null").is_some()
    }

    /// JSON's number, without an exponent: `-?(0|[1-9][0-9]*)(\.[0-9]+)?`.
    fn number(&mut self) -> Option<()> {
        let start = self.i;
        let _ = self.eat(b'-');
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.eat(b'.').is_some() {
            let before = self.i;
            self.digits();
            if self.i == before {
                return None;
            }
        }
        (!matches!(self.peek(), Some(b'e' | b'E')) && self.i - start <= MAX_DIGITS + 2)
            .then_some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
    }

    /// An unsigned integer, as serde reads one into a `u64`.
    fn count(&mut self) -> Option<u64> {
        let start = self.i;
        self.digits();
        let text = &self.src[start..self.i];
        if text.is_empty() || (text.len() > 1 && text.starts_with('0')) {
            return None;
        }
        if matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        text.parse().ok()
    }

    /// `null`, or what `read` reads.
    fn or_null<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        if self.null() {
            return Some(None);
        }
        read(self).map(Some)
    }

    /// Reads a known key's value, `null` or what `read` reads, into `slot`; a key read twice
    /// is a chunk serde refuses, so it is left to serde.
    fn field<T>(
        &mut self,
        slot: &mut Option<Option<T>>,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<()> {
        if slot.is_some() {
            return None;
        }
        *slot = Some(self.or_null(read)?);
        Some(())
    }

    /// A string's value as serde's typed reading holds it.
    fn text_value(&mut self) -> Option<Text<'a>> {
        self.text().map(Text)
    }

    /// Any value, stepped over.
    fn skip(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => self.object(depth + 1, |s, _| s.skip(depth + 1)),
            b'[' => self.array(depth + 1, |s, _| s.skip(depth + 1)),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.number(),
        }
    }

    /// An object, each value read by `value(self, key)` (which must consume it).
    fn object(
        &mut self,
        depth: usize,
        mut value: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(b'{')?;
        self.ws();
        if self.eat(b'}').is_some() {
            return Some(());
        }
        loop {
            let key = self.key()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            value(self, key)?;
            if !self.more(b'}')? {
                return Some(());
            }
        }
    }

    /// After a member or an element: `,` (true, another follows) or `close` (false).
    fn more(&mut self, close: u8) -> Option<bool> {
        self.ws();
        let c = self.peek()?;
        self.i += 1;
        if c == b',' {
            self.ws();
            Some(true)
        } else {
            (c == close).then_some(false)
        }
    }

    /// An array, each element read by `element(self, index)` (which must consume it).
    fn array(
        &mut self,
        depth: usize,
        mut element: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.eat(b'[')?;
        self.ws();
        if self.eat(b']').is_some() {
            return Some(());
        }
        let mut n = 0;
        loop {
            element(self, n)?;
            n += 1;
            if !self.more(b']')? {
                return Some(());
            }
        }
    }

    /// The chunk's own object, from its `{` or (`resume`) from the key after the members
    /// [`chunk_after`] stepped over; with where the members it stepped over before the first
    /// one it reads end (after their comma), 0 when it reads the first.
    fn top(&mut self, resume: bool) -> Option<(wire::Chunk<'a>, usize, UsageSpan)> {
        let (mut choices, mut usage, mut usage_span) = (None, None, None);
        let mut stepped = 0;
        let mut stepping = !resume;
        if !resume {
            self.eat(b'{')?;
            self.ws();
        }
        if resume || self.eat(b'}').is_none() {
            loop {
                let key = self.key()?;
                self.ws();
                self.eat(b':')?;
                self.ws();
                match key {
                    "choices" => {
                        stepping = false;
                        self.field(&mut choices, Self::choices)?
                    }
                    "usage" => {
                        stepping = false;
                        let from = self.i;
                        self.field(&mut usage, Self::usage)?;
                        usage_span = Some((from, self.i));
                    }
                    // Their readings stay serde's.
                    "error" | "metrics" => return None,
                    _ => self.skip(0)?,
                }
                if !self.more(b'}')? {
                    break;
                }
                if stepping {
                    stepped = self.i;
                }
            }
        }
        let c = wire::Chunk {
            choices: choices.flatten(),
            usage: usage.flatten(),
            metrics: None,
            error: false,
        };
        Some((c, stepped, usage_span))
    }

    fn choices(&mut self) -> Option<FirstChoice<'a>> {
        let mut first = None;
        self.array(1, |s, n| {
            if n == 0 {
                first = Some(s.choice()?);
                Some(())
            } else {
                s.skip(1)
            }
        })?;
        Some(FirstChoice(first))
    }

    fn choice(&mut self) -> Option<wire::Choice<'a>> {
        let (mut text, mut delta, mut finish) = (None, None, None);
        self.object(2, |s, key| match key {
            "text" => s.field(&mut text, Self::text_value),
            "finish_reason" => s.field(&mut finish, Self::text_value),
            "delta" => s.field(&mut delta, Self::delta),
            _ => s.skip(2),
        })?;
        Some(wire::Choice {
            text: text.flatten(),
            delta: delta.flatten().map(Object),
            finish_reason: finish.flatten(),
        })
    }

    fn delta(&mut self) -> Option<wire::Delta<'a>> {
        let mut role = false;
        let (mut reasoning_content, mut reasoning, mut content) = (None, None, None);
        self.object(3, |s, key| match key {
            // Present at all, even `null`: the typed reading only asks whether it is there.
            "role" if !role => {
                role = true;
                s.skip(3)
            }
            "role" => None,
            "reasoning_content" => s.field(&mut reasoning_content, Self::text_value),
            "reasoning" => s.field(&mut reasoning, Self::text_value),
            "content" => s.field(&mut content, Self::text_value),
            _ => s.skip(3),
        })?;
        Some(wire::Delta {
            role,
            reasoning_content: reasoning_content.flatten(),
            reasoning: reasoning.flatten(),
            content: content.flatten(),
        })
    }

    fn usage(&mut self) -> Option<Object<wire::Usage>> {
        let (mut prompt, mut completion, mut cached) = (None, None, None);
        let (mut prompt_details, mut completion_details) = (None, None);
        self.object(1, |s, key| match key {
            "prompt_tokens" => s.field(&mut prompt, Self::count),
            "completion_tokens" => s.field(&mut completion, Self::count),
            "cached_tokens" => s.field(&mut cached, Self::count),
            "prompt_tokens_details" => s.field(&mut prompt_details, Self::details),
            "completion_tokens_details" => s.field(&mut completion_details, Self::details),
            _ => s.skip(1),
        })?;
        Some(Object(wire::Usage {
            prompt_tokens: prompt.flatten(),
            completion_tokens: completion.flatten(),
            cached_tokens: cached.flatten(),
            prompt_tokens_details: prompt_details.flatten().map(Object),
            completion_tokens_details: completion_details.flatten().map(Object),
        }))
    }

    fn details(&mut self) -> Option<wire::Details> {
        let (mut cached, mut reasoning) = (None, None);
        self.object(2, |s, key| match key {
            "cached_tokens" => s.field(&mut cached, Self::count),
            "reasoning_tokens" => s.field(&mut reasoning, Self::count),
            _ => s.skip(2),
        })?;
        Some(wire::Details {
            cached_tokens: cached.flatten(),
            reasoning_tokens: reasoning.flatten(),
        })
    }
}
