//! The selftest endpoint's bytes: OpenAI completions stream events, rendered without JSON
//! machinery so that serving costs next to nothing beside the client's parsing.

use bytes::{Bytes, BytesMut};

/// The one model the endpoint serves.
pub const MODEL: &str = "llmsweep-selftest";

/// The text of one flat-out token.
pub const TOKEN: &str = " w";

/// The stream terminator.
pub const DONE: &[u8] = b"data: [DONE]\n\n";

/// One completions event carrying `text`, with `finish` on the last one. `text` must need no
/// JSON escaping (the endpoint's texts are words and digits).
pub fn event(text: &str, finish: Option<&str>) -> String {
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
pub fn usage_and_done(prompt_tokens: u64, completion_tokens: u64) -> Bytes {
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
pub fn flat_events(tokens: u64, per_event: u32) -> Bytes {
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

/// The text of a scheduled event: its send time in whole microseconds since the endpoint's
/// epoch, as one word (` t1234`).
pub fn stamp_text(send_us: u64) -> String {
    format!(" t{send_us}")
}

/// The send stamps (seconds since the endpoint's epoch) in a stream's generated text, in order.
/// Words that are not stamps are skipped.
pub fn stamps_in(text: &str) -> Vec<f64> {
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
            let ev = crate::load::api::parse_chunk(json.expect("one frame")).expect("parses");
            assert!(ev.has_text());
        }
    }

    #[test]
    fn stamps_round_trip_through_the_text() {
        let text = format!("{}{}", stamp_text(50_000), stamp_text(1_060_001));
        assert_eq!(stamps_in(&text), [0.05, 1.060001]);
        assert_eq!(stamps_in(" w w"), Vec::<f64>::new());
    }
}
