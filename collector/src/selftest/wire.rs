//! The selftest endpoint's bytes: OpenAI completions stream events, rendered without JSON
//! machinery so that serving costs next to nothing beside the client's parsing.

use bytes::{Bytes, BytesMut};

/// The one model the endpoint serves.
pub(crate) const MODEL: &str = "llmsweep-selftest";

/// The text of one flat-out token.
pub(crate) const TOKEN: &str = " w";

/// The stream terminator.
pub(crate) const DONE: &[u8] = b"data: [DONE]\n\n";

/// One completions event carrying `text`, with `finish` on the last one. `text` must need no
/// JSON escaping (the endpoint's texts are words and digits).
pub(crate) fn event(text: &str, finish: Option<&str>) -> String {
    let finish = match finish {
        Some(f) => format!("\"{f}\""),
        None => "null".into(),
    };
    format!(
        "data: {{\"id\":\"cmpl-selftest\",\"object\":\"text_completion\",\"created\":0,\"model\":\"{MODEL}\",\
         \"choices\":[{{\"index\":0,\"text\":\"{text}\",\"logprobs\":null,\"finish_reason\":{finish}}}]}}\n\n"
    )
}

/// The usage event of `stream_options.include_usage`, then `[DONE]`.
pub(crate) fn usage_and_done(prompt_tokens: u64, completion_tokens: u64) -> Bytes {
    let total = prompt_tokens + completion_tokens;
    let mut s = format!(
        "data: {{\"id\":\"cmpl-selftest\",\"object\":\"text_completion\",\"created\":0,\"model\":\"{MODEL}\",\
         \"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt_tokens},\"completion_tokens\":{completion_tokens},\
         \"total_tokens\":{total}}}}}\n\n"
    );
    s.push_str(std::str::from_utf8(DONE).unwrap_or_default());
    Bytes::from(s)
}

/// The token events of a flat-out stream of `tokens` tokens, `per_event` to an event (the last
/// one carries the rest and the finish reason `length`). No usage and no `[DONE]`: those depend
/// on the request (see [`usage_and_done`]).
pub(crate) fn flat_events(tokens: u64, per_event: u32) -> Bytes {
    let per_event = u64::from(per_event.max(1));
    let mut out = BytesMut::new();
    let mut sent = 0;
    while sent < tokens {
        let n = per_event.min(tokens - sent);
        sent += n;
        let text = TOKEN.repeat(n as usize);
        let finish = (sent == tokens).then_some("length");
        out.extend_from_slice(event(&text, finish).as_bytes());
    }
    out.freeze()
}

/// Microseconds on the host's monotonic clock (`CLOCK_MONOTONIC`, the clock `Instant` reads on
/// Linux), the same in every process: the endpoint's send stamps, so a client in another
/// process can set them against its own times (see [`Clock`]).
pub(crate) fn monotonic_us() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000
}

/// Turns monotonic stamps into seconds since a client's `origin`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// `origin` on the monotonic clock, seconds.
    origin_s: f64,
}

impl Clock {
    pub(crate) fn new(origin: std::time::Instant) -> Clock {
        let now_us = monotonic_us();
        let since = origin.elapsed().as_secs_f64();
        Clock {
            origin_s: now_us as f64 / 1e6 - since,
        }
    }

    /// A clock whose origin is `origin_s` on the monotonic clock (for tests).
    #[cfg(test)]
    pub(crate) fn at(origin_s: f64) -> Clock {
        Clock { origin_s }
    }

    /// The send stamps in a stream's generated text, seconds since the origin, in order.
    pub(crate) fn stamps_in(self, text: &str) -> Vec<f64> {
        stamps_in(text)
            .into_iter()
            .map(|s| s - self.origin_s)
            .collect()
    }
}

/// The text of a scheduled event: its send time in whole microseconds on the monotonic clock,
/// as one word (` t1234`).
pub(crate) fn stamp_text(send_us: u64) -> String {
    format!(" t{send_us}")
}

/// The send stamps (seconds on the monotonic clock) in a stream's generated text, in order.
/// Words that are not stamps are skipped.
pub(crate) fn stamps_in(text: &str) -> Vec<f64> {
    text.split_whitespace()
        .filter_map(|w| w.strip_prefix('t')?.parse::<u64>().ok())
        .map(|us| us as f64 / 1e6)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_event_is_exactly_these_bytes() {
        assert_eq!(
            event(" w", None),
            "data: {\"id\":\"cmpl-selftest\",\"object\":\"text_completion\",\"created\":0,\
             \"model\":\"llmsweep-selftest\",\"choices\":[{\"index\":0,\"text\":\" w\",\
             \"logprobs\":null,\"finish_reason\":null}]}\n\n"
        );
        assert!(event(" w", Some("length")).ends_with("\"finish_reason\":\"length\"}]}\n\n"));
    }

    #[test]
    fn usage_then_done_are_exactly_these_bytes() {
        assert_eq!(
            &usage_and_done(3, 4)[..],
            b"data: {\"id\":\"cmpl-selftest\",\"object\":\"text_completion\",\"created\":0,\
              \"model\":\"llmsweep-selftest\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\
              \"completion_tokens\":4,\"total_tokens\":7}}\n\ndata: [DONE]\n\n"
        );
    }

    #[test]
    fn flat_events_group_tokens_and_finish_on_the_last() {
        let body = flat_events(10, 4);
        let text = std::str::from_utf8(&body).expect("utf-8");
        let events: Vec<&str> = text.split_terminator("\n\n").collect();
        assert_eq!(events.len(), 3);
        assert!(events[0].contains("\"text\":\" w w w w\""));
        assert!(events[2].contains("\"text\":\" w w\""));
        assert!(events[2].contains("\"finish_reason\":\"length\""));
        assert_eq!(text.matches("\"finish_reason\":null").count(), 2);
    }

    #[test]
    fn every_event_parses_as_the_client_reads_it() {
        for frame in [event(" w w", None), event(&stamp_text(7), Some("length"))] {
            let json = frame
                .strip_prefix("data: ")
                .and_then(|s| s.strip_suffix("\n\n"));
            let ev = crate::load::run::api::parse_chunk(json.expect("one frame")).expect("parses");
            assert!(ev.has_text());
        }
    }

    #[test]
    fn stamps_round_trip_through_the_text() {
        let text = format!("{}{}", stamp_text(50_000), stamp_text(1_060_001));
        assert_eq!(stamps_in(&text), [0.05, 1.060001]);
        assert_eq!(stamps_in(" w w"), Vec::<f64>::new());
        let since = Clock::at(1.0).stamps_in(&text);
        assert!((since[0] + 0.95).abs() < 1e-12 && (since[1] - 0.060001).abs() < 1e-12);
    }

    #[test]
    fn the_monotonic_clock_is_the_one_instant_reads() {
        let origin = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let clock = Clock::new(origin);
        let now = stamp_text(monotonic_us());
        let since = clock.stamps_in(&now)[0];
        let want = origin.elapsed().as_secs_f64();
        assert!((since - want).abs() < 2e-3, "{since} vs {want}");
    }
}
