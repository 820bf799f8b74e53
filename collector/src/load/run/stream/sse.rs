//! A sans-IO Server-Sent Events decoder: feed it bytes as they arrive, get whole events back.
//!
//! It owns no clock and no socket, so the caller stamps events with the arrival time of the bytes
//! that completed them, and tests can split a stream at every byte boundary.

use std::ops::ControlFlow;

/// Longest line the decoder holds. A token chunk's line is well under a kilobyte and a whole
/// non-streamed answer in one event is tens of kilobytes; a server that sends more than this
/// without a line end is broken or hostile, and holding it would let one request fill the
/// memory.
pub(crate) const MAX_LINE: usize = 1024 * 1024;

/// Longest event (its `data:` lines joined) the decoder holds, for the same reason: a few
/// generous lines, not an unbounded stream of them without the blank line that ends an event.
pub(crate) const MAX_EVENT: usize = 4 * 1024 * 1024;

/// A line or an event grew past its bound ([`MAX_LINE`], [`MAX_EVENT`]): the stream is not read
/// further.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLong {
    /// `"line"` or `"event"`.
    pub what: &'static str,
    /// Bytes it had when it was given up on.
    pub len: usize,
    /// Its bound.
    pub max: usize,
}

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unit = if self.what == "line" {
            "without a line end"
        } else {
            "without the blank line that ends an event"
        };
        write!(
            f,
            "a stream {} grew past {} ({} bytes {unit}), more than any answer needs: the server sends something other than a token stream",
            self.what,
            crate::boundary::http::bytes(self.max as u64),
            self.len
        )
    }
}

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, when the server named the event.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// One dispatched event, borrowed from the decoder until the next byte is pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRef<'a> {
    /// The `event:` field, when the server named the event.
    pub event: Option<&'a str>,
    /// The `data:` lines, joined with `\n`.
    pub data: &'a str,
}

impl EventRef<'_> {
    pub fn to_event(self) -> SseEvent {
        SseEvent {
            event: self.event.map(str::to_string),
            data: self.data.to_string(),
        }
    }
}

/// Incremental decoder following the WHATWG rules that matter for LLM streams: lines end in
/// `\n`, `\r\n` or `\r`; a blank line dispatches; lines starting with `:` are comments
/// (keep-alives); one optional space after the colon is dropped. Bytes that are not UTF-8
/// become U+FFFD.
///
/// It is on the per-token path, so it allocates nothing per line or event once its buffers have
/// grown: lines are found with `memchr`, a line is copied only when a read splits it, and the
/// event's data is built in a buffer kept from event to event.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// The start of a line whose end has not arrived yet.
    line: Vec<u8>,
    /// The previous byte was `\r`, so a following `\n` ends nothing new.
    after_cr: bool,
    event: String,
    has_event: bool,
    data: String,
    has_data: bool,
    /// Set once a line or an event outgrew its bound; nothing is decoded after it.
    too_long: Option<TooLong>,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events they completed, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let _ = self.feed(bytes, |ev| {
            out.push(ev.to_event());
            ControlFlow::<()>::Continue(())
        });
        out
    }

    /// The line or event that outgrew its bound, once one has: the stream must be given up.
    pub fn too_long(&self) -> Option<TooLong> {
        self.too_long
    }

    /// Feeds bytes, handing each event they complete to `on_event` in order. When `on_event`
    /// breaks, the rest of `bytes` is dropped and its value returned. Once a line or an event
    /// outgrows its bound ([`SseDecoder::too_long`]), bytes are dropped unread.
    pub fn feed<B>(
        &mut self,
        bytes: &[u8],
        mut on_event: impl FnMut(EventRef<'_>) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        if self.too_long.is_some() {
            return ControlFlow::Continue(());
        }
        let mut rest = bytes;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        loop {
            // The usual event, `data: …` and a blank line whole in this read, is handed out
            // from the read itself, with no copy into the event's buffer.
            if self.line.is_empty()
                && !self.has_data
                && !self.has_event
                && let Some((data, used)) = whole_data_event(rest)
            {
                on_event(EventRef { event: None, data })?;
                rest = &rest[used..];
                continue;
            }
            let Some(i) = memchr::memchr2(b'\n', b'\r', rest) else {
                break;
            };
            let cr = rest[i] == b'\r';
            if self.line.len() + i > MAX_LINE {
                return self.give_up("line", self.line.len() + i, MAX_LINE);
            }
            if self.line.is_empty() {
                self.end_line(&rest[..i], &mut on_event)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&rest[..i]);
                let flow = self.end_line(&line, &mut on_event);
                line.clear();
                self.line = line;
                flow?;
            }
            if self.too_long.is_some() {
                return ControlFlow::Continue(());
            }
            rest = &rest[i + 1..];
            if cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        if self.line.len() + rest.len() > MAX_LINE {
            return self.give_up("line", self.line.len() + rest.len(), MAX_LINE);
        }
        self.line.extend_from_slice(rest);
        ControlFlow::Continue(())
    }

    /// Stops decoding for good, dropping what is held.
    fn give_up<B>(&mut self, what: &'static str, len: usize, max: usize) -> ControlFlow<B> {
        self.too_long = Some(TooLong { what, len, max });
        self.line = Vec::new();
        self.data = String::new();
        ControlFlow::Continue(())
    }

    /// Ends the stream: an event whose blank line never came is still returned, since servers
    /// that close right after their last `data:` line are common.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if self.too_long.is_some() {
            return None;
        }
        let mut last = None;
        let mut keep = |ev: EventRef<'_>| {
            last = Some(ev.to_event());
            ControlFlow::<()>::Continue(())
        };
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            let _ = self.end_line(&line, &mut keep);
        }
        let _ = self.end_line(b"", &mut keep);
        last
    }

    fn end_line<B>(
        &mut self,
        line: &[u8],
        on_event: &mut impl FnMut(EventRef<'_>) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        if line.is_empty() {
            let flow = if self.has_data {
                on_event(EventRef {
                    event: self.has_event.then_some(self.event.as_str()),
                    data: &self.data,
                })
            } else {
                ControlFlow::Continue(())
            };
            self.data.clear();
            self.has_data = false;
            self.event.clear();
            self.has_event = false;
            return flow;
        }
        if line[0] == b':' {
            return ControlFlow::Continue(());
        }
        // `:` is ASCII, so splitting the bytes at the first one splits the text where
        // a lossy conversion of the whole line would.
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                if self.data.len() + value.len() > MAX_EVENT {
                    let len = self.data.len() + value.len();
                    return self.give_up("event", len, MAX_EVENT);
                }
                push_text(&mut self.data, value);
            }
            b"event" => {
                self.event.clear();
                self.has_event = true;
                push_text(&mut self.event, value);
            }
            _ => {} // `id:` and `retry:` do not matter for a single request's stream.
        }
        ControlFlow::Continue(())
    }
}

/// When `bytes` start with a whole event of one `data:` line (UTF-8, within [`MAX_LINE`]) and
/// the blank line that ends it: its data and the bytes it took. `None` for anything else,
/// including an end of line that a next read could still extend (`\r` last).
fn whole_data_event(bytes: &[u8]) -> Option<(&str, usize)> {
    let value = bytes.strip_prefix(b"data:")?;
    let i = memchr::memchr2(b'\n', b'\r', value)?;
    if i + 5 > MAX_LINE {
        return None;
    }
    let mut end = i + 1;
    if value[i] == b'\r' && *value.get(end)? == b'\n' {
        end += 1;
    }
    match *value.get(end)? {
        b'\n' => end += 1,
        b'\r' => {
            end += 1;
            if *value.get(end)? == b'\n' {
                end += 1;
            }
        }
        _ => return None,
    }
    let data = &value[..i];
    let data = std::str::from_utf8(data.strip_prefix(b" ").unwrap_or(data)).ok()?;
    Some((data, end + 5))
}

/// Appends `bytes` as text, copying them once when they are UTF-8 (they always are from a
/// working server) and replacing what is not with U+FFFD.
fn push_text(to: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => to.push_str(s),
        Err(_) => to.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    const STREAM: &str = ": keep-alive\r\n\r\ndata: {\"a\":1}\r\n\r\ndata:{\"b\":2}\n\nevent: error\ndata: x\ndata: y\n\n: ping\n\ndata: [DONE]\n\n";
    const EXPECTED: [&str; 4] = ["{\"a\":1}", "{\"b\":2}", "x\ny", "[DONE]"];

    #[test]
    fn whole_stream_at_once() {
        let mut d = SseDecoder::new();
        let ev = d.push(STREAM.as_bytes());
        assert_eq!(data(&ev), EXPECTED);
        assert_eq!(ev[2].event.as_deref(), Some("error"));
        assert_eq!(ev[3].event, None);
        assert_eq!(d.finish(), None);
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        for cut in 0..=bytes.len() {
            let mut d = SseDecoder::new();
            let mut ev = d.push(&bytes[..cut]);
            ev.extend(d.push(&bytes[cut..]));
            assert_eq!(data(&ev), EXPECTED, "split at {cut}");
        }
    }

    #[test]
    fn byte_at_a_time_gives_the_same_events() {
        let mut d = SseDecoder::new();
        let ev: Vec<SseEvent> = STREAM.bytes().flat_map(|b| d.push(&[b])).collect();
        assert_eq!(data(&ev), EXPECTED);
    }

    #[test]
    fn lone_cr_ends_lines() {
        let mut d = SseDecoder::new();
        assert_eq!(data(&d.push(b"data: a\r\rdata: b\r\r")), ["a", "b"]);
    }

    #[test]
    fn unterminated_last_event_is_returned_by_finish() {
        let mut d = SseDecoder::new();
        assert!(d.push(b"data: {\"last\":true}").is_empty());
        assert_eq!(
            d.finish().map(|e| e.data),
            Some("{\"last\":true}".to_string())
        );
        let mut d = SseDecoder::new();
        assert!(d.push(b"data: x\n").is_empty());
        assert_eq!(d.finish().map(|e| e.data), Some("x".to_string()));
    }

    #[test]
    fn multibyte_text_split_inside_a_character_survives() {
        let s = "data: {\"t\":\"héllo ✓\"}\n\n".as_bytes();
        for cut in 0..=s.len() {
            let mut d = SseDecoder::new();
            let mut ev = d.push(&s[..cut]);
            ev.extend(d.push(&s[cut..]));
            assert_eq!(data(&ev), ["{\"t\":\"héllo ✓\"}"], "split at {cut}");
        }
    }

    #[test]
    fn a_line_without_an_end_is_given_up_at_its_bound() {
        let mut d = SseDecoder::new();
        let piece = vec![b'x'; 64 * 1024];
        let mut fed = 0;
        assert!(d.push(b"data: ").is_empty());
        fed += 6;
        while d.too_long().is_none() {
            assert!(d.push(&piece).is_empty());
            fed += piece.len();
            assert!(fed <= MAX_LINE + piece.len(), "never given up");
        }
        let t = d.too_long().unwrap();
        assert_eq!((t.what, t.len, t.max), ("line", MAX_LINE + 6, MAX_LINE));
        assert!(d.line.capacity() == 0 && d.data.capacity() == 0);
        assert_eq!(
            t.to_string(),
            "a stream line grew past 1 MiB (1048582 bytes without a line end), more than any answer needs: the server sends something other than a token stream"
        );
        // Nothing more is decoded, not even a well-formed event.
        assert!(d.push(b"\n\ndata: x\n\n").is_empty());
        assert_eq!(d.finish(), None);
    }

    #[test]
    fn a_long_line_in_one_read_and_an_event_of_many_lines_are_bounded() {
        let mut d = SseDecoder::new();
        let mut big = b"data: ".to_vec();
        big.extend(std::iter::repeat_n(b'y', MAX_LINE));
        big.extend_from_slice(b"\n\n");
        assert!(d.push(&big).is_empty());
        assert_eq!(d.too_long().map(|t| t.what), Some("line"));

        // Lines each within bound, an event without end.
        let mut d = SseDecoder::new();
        let line = format!("data: {}\n", "z".repeat(MAX_LINE / 2));
        let mut lines = 0;
        while d.too_long().is_none() {
            assert!(d.push(line.as_bytes()).is_empty());
            lines += 1;
            assert!(lines <= 2 * MAX_EVENT / MAX_LINE + 2, "never given up");
        }
        let t = d.too_long().unwrap();
        assert_eq!((t.what, t.max), ("event", MAX_EVENT));
        assert!(t.len > MAX_EVENT && t.len <= MAX_EVENT + MAX_LINE, "{t:?}");
        // A line at its bound exactly is still one.
        let mut d = SseDecoder::new();
        let mut ok = b"data:".to_vec();
        ok.extend(std::iter::repeat_n(b'a', MAX_LINE - 5));
        ok.extend_from_slice(b"\n\n");
        assert_eq!(d.push(&ok).len(), 1);
        assert_eq!(d.too_long(), None);
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        use crate::prop_config::config;

        /// `bytes` fed in pieces cut at `cuts` (any positions), then finished.
        fn decode(bytes: &[u8], cuts: &[prop::sample::Index]) -> (Vec<SseEvent>, Option<SseEvent>) {
            let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            at.push(0);
            at.push(bytes.len());
            at.sort_unstable();
            let mut d = SseDecoder::new();
            let ev = at
                .windows(2)
                .flat_map(|w| d.push(&bytes[w[0]..w[1]]))
                .collect();
            (ev, d.finish())
        }

        /// Bytes that look like a stream: field names, colons, line ends of every kind, text.
        fn streamish() -> impl Strategy<Value = Vec<u8>> {
            let piece = prop_oneof![
                Just(b"data:".to_vec()),
                Just(b"data: ".to_vec()),
                Just(b"event: ".to_vec()),
                Just(b": ping".to_vec()),
                Just(b"\n".to_vec()),
                Just(b"\r".to_vec()),
                Just(b"\r\n".to_vec()),
                Just("é✓".as_bytes().to_vec()),
                proptest::collection::vec(any::<u8>(), 0..6),
            ];
            proptest::collection::vec(piece, 0..40).prop_map(|p| p.concat())
        }

        fn word() -> impl Strategy<Value = String> {
            proptest::collection::vec(proptest::char::range('a', 'z'), 1..8)
                .prop_map(String::from_iter)
        }

        /// Any text without a line end.
        fn line() -> impl Strategy<Value = String> {
            proptest::collection::vec(
                any::<char>().prop_filter("no line end", |c| !matches!(c, '\r' | '\n')),
                0..12,
            )
            .prop_map(String::from_iter)
        }

        /// The decoder as it was before it scanned with `memchr`, byte by byte into a fresh
        /// line: the reference the fast one must match.
        fn reference(
            bytes: &[u8],
            cuts: &[prop::sample::Index],
        ) -> (Vec<SseEvent>, Option<SseEvent>) {
            #[derive(Default)]
            struct Old {
                line: Vec<u8>,
                after_cr: bool,
                event: Option<String>,
                data: Option<String>,
            }
            impl Old {
                fn end_line(&mut self, out: &mut Vec<SseEvent>) {
                    let line = std::mem::take(&mut self.line);
                    if line.is_empty() {
                        if let Some(data) = self.data.take() {
                            out.push(SseEvent {
                                event: self.event.take(),
                                data,
                            });
                        }
                        self.event = None;
                        return;
                    }
                    if line[0] == b':' {
                        return;
                    }
                    let text = String::from_utf8_lossy(&line);
                    let (field, value) = match text.find(':') {
                        Some(i) => {
                            let v = &text[i + 1..];
                            (&text[..i], v.strip_prefix(' ').unwrap_or(v))
                        }
                        None => (&text[..], ""),
                    };
                    match field {
                        "data" => match &mut self.data {
                            Some(d) => {
                                d.push('\n');
                                d.push_str(value);
                            }
                            None => self.data = Some(value.to_string()),
                        },
                        "event" => self.event = Some(value.to_string()),
                        _ => {}
                    }
                }
            }
            let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            at.push(0);
            at.push(bytes.len());
            at.sort_unstable();
            let mut d = Old::default();
            let mut out = Vec::new();
            for w in at.windows(2) {
                for &b in &bytes[w[0]..w[1]] {
                    match b {
                        b'\n' if d.after_cr => d.after_cr = false,
                        b'\n' | b'\r' => {
                            d.after_cr = b == b'\r';
                            d.end_line(&mut out);
                        }
                        _ => {
                            d.after_cr = false;
                            d.line.push(b);
                        }
                    }
                }
            }
            let mut last = Vec::new();
            if !d.line.is_empty() {
                d.end_line(&mut last);
            }
            d.end_line(&mut last);
            (out, last.pop())
        }

        proptest! {
            #![proptest_config(config(256))]

            /// Any bytes, cut anywhere: the events the byte-by-byte decoder gave.
            #[test]
            fn prop_same_events_as_the_byte_by_byte_decoder(
                bytes in prop_oneof![streamish(), proptest::collection::vec(any::<u8>(), 0..256)],
                cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
                their_cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
            ) {
                prop_assert_eq!(decode(&bytes, &cuts), reference(&bytes, &their_cuts));
            }

            /// Any bytes, cut anywhere: the same events as when fed at once; never a panic.
            #[test]
            fn prop_any_split_gives_the_same_events(
                bytes in prop_oneof![streamish(), proptest::collection::vec(any::<u8>(), 0..256)],
                cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
            ) {
                prop_assert_eq!(decode(&bytes, &cuts), decode(&bytes, &[]));
            }

            /// Events written with any line ends and keep-alives read back as written.
            #[test]
            fn prop_written_events_read_back(
                events in proptest::collection::vec(
                    (proptest::option::of(word()), proptest::collection::vec(line(), 1..4)),
                    0..6,
                ),
                eol in prop_oneof![Just("\n"), Just("\r\n"), Just("\r")],
                ping in any::<bool>(),
                cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
            ) {
                let mut text = String::new();
                for (name, lines) in &events {
                    if ping {
                        text.push_str(&format!(": keep-alive{eol}"));
                    }
                    if let Some(n) = name {
                        text.push_str(&format!("event: {n}{eol}"));
                    }
                    for l in lines {
                        text.push_str(&format!("data: {l}{eol}"));
                    }
                    text.push_str(eol);
                }
                let (got, last) = decode(text.as_bytes(), &cuts);
                prop_assert_eq!(last, None);
                let want: Vec<SseEvent> = events
                    .iter()
                    .map(|(name, lines)| SseEvent { event: name.clone(), data: lines.join("\n") })
                    .collect();
                prop_assert_eq!(got, want);
            }
        }
    }
}
