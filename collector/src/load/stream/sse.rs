//! A sans-IO Server-Sent Events decoder: feed it bytes as they arrive, get whole events back.
//!
//! It owns no clock and no socket, so the caller stamps events with the arrival time of the bytes
//! that completed them, and tests can split a stream at every byte boundary.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, when the server named the event.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Incremental decoder following the WHATWG rules that matter for LLM streams: lines end in
/// `\n`, `\r\n` or `\r`; a blank line dispatches; lines starting with `:` are comments
/// (keep-alives); one optional space after the colon is dropped.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    /// The previous byte was `\r`, so a following `\n` ends nothing new.
    after_cr: bool,
    event: Option<String>,
    data: Option<String>,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events they completed, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for &b in bytes {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    self.end_line(&mut out);
                }
                _ => {
                    self.after_cr = false;
                    self.line.push(b);
                }
            }
        }
        out
    }

    /// Ends the stream: an event whose blank line never came is still returned, since servers
    /// that close right after their last `data:` line are common.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.end_line(&mut out);
        out.pop()
    }

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
            _ => {} // `id:` and `retry:` do not matter for a single request's stream.
        }
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

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        /// `cases` per property, unless `PROPTEST_CASES` asks for another number (a long run).
        fn config(cases: u32) -> ProptestConfig {
            let cases = std::env::var("PROPTEST_CASES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(cases);
            ProptestConfig {
                cases,
                ..ProptestConfig::default()
            }
        }

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

        proptest! {
            #![proptest_config(config(256))]

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
