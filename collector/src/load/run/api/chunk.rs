//! Reading one streamed chunk (the JSON of a `data:` event) in either dialect.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::scan::UsageSpan;

/// What one chunk says, dialect differences removed. Its text borrows from the event's data
/// when it had no escapes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkEvent<'a> {
    /// Generated text in this chunk: `text`, `delta.reasoning_content`, `delta.reasoning` and
    /// `delta.content`, in that order.
    pub text: Cow<'a, str>,
    /// The chunk belongs to generation: it has a choice that is not role-only or finish-only.
    /// Servers without usage send one such chunk per token, some with empty text.
    pub token_chunk: bool,
    pub finish_reason: Option<Cow<'a, str>>,
    pub usage: Option<Usage>,
    /// An error the server reported inside the stream.
    pub error: Option<String>,
    /// Some of `text` came from `reasoning_content` or `reasoning` (a reasoning model thinking).
    pub reasoning: bool,
    /// Some of `text` is the answer: from `text` or `content`.
    pub answer: bool,
    /// The request's speculative decoding, as vLLM (0.29 and later, with
    /// `--per-request-spec-decode-metrics`) states it on the last chunk.
    pub spec: Option<llmsweep_shared::bundle::RequestSpec>,
}

impl ChunkEvent<'_> {
    /// Whether this chunk carries a generated token a user would see (it can end TTFT).
    pub fn has_text(&self) -> bool {
        !self.text.is_empty()
    }
}

/// Token counts from a `usage` object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    /// `prompt_tokens_details.cached_tokens` (OpenAI, vLLM) or `cached_tokens` (SGLang's meta info).
    pub cached_tokens: Option<u64>,
    /// `completion_tokens_details.reasoning_tokens`: of the completion tokens, those a reasoning
    /// model spent thinking (OpenAI's usage; servers that follow it).
    pub reasoning_tokens: Option<u64>,
}

/// Parses a chunk; `None` when the data is not JSON (the caller records a protocol error).
///
/// Every token passes here, so the chunks of working servers are read straight into borrowed
/// typed structs, with no JSON tree and no copy of text without escapes. Anything those structs
/// do not take as they are (an error event, a field of an unexpected type, a duplicate key, data
/// that is not an object) is read again as a JSON tree, so it means what it always meant.
pub fn parse_chunk(data: &str) -> Option<ChunkEvent<'_>> {
    if let Some(ev) = super::scan::chunk(data) {
        return Some(ev);
    }
    parse_chunk_serde(data)
}

/// Reads the chunks of one answer, as [`parse_chunk`] reads each. Token chunks of one answer
/// differ in their text and little else, so the reader keeps two things from the chunks it has
/// read:
///
/// - the **shape** of the last token chunk: its bytes around the one string its text came from
///   and, when it had one after its text, around its `usage` (which counts up from chunk to
///   chunk when a server is asked for `continuous_usage_stats`). A chunk that is those same
///   bytes around another string without escapes (and another usage) says what that chunk
///   said, with the other text (and usage): it is compared, and only its usage read;
/// - the **members** the chunks start with and the scan only steps over (`id`, `object`,
///   `created`, `model`: a third of a vLLM token chunk), compared as bytes rather than scanned
///   again when the rest differs (a finish reason, a role).
#[derive(Debug, Default)]
pub struct ChunkReader {
    common: Vec<u8>,
    shape: Shape,
}

/// A token chunk split around the string its text came from and its usage (see
/// [`ChunkReader`]), and what the chunk said besides; none kept while `before` is empty. The
/// buffers are kept from chunk to chunk.
#[derive(Debug, Default)]
struct Shape {
    /// Up to and with the string's opening quote.
    before: Vec<u8>,
    /// From the string's closing quote: to the chunk's end, or (`usage`) to its usage's value.
    after: Vec<u8>,
    /// The chunk had a usage after its text, its value between `after` and `tail`.
    usage: bool,
    /// After the usage's value, to the chunk's end.
    tail: Vec<u8>,
    token_chunk: bool,
    reasoning: bool,
    answer: bool,
}

impl ChunkReader {
    /// The chunk `data` says, as [`parse_chunk`] would read it.
    pub fn read<'a>(&mut self, data: &'a str) -> Option<ChunkEvent<'a>> {
        if let Some(ev) = self.by_shape(data) {
            return Some(ev);
        }
        let Some((ev, usage)) = super::scan::chunk_after(data, &mut self.common) else {
            return parse_chunk_serde(data);
        };
        self.shape.keep(data, &ev, usage);
        Some(ev)
    }

    /// The chunk `data` says when it has the last token chunk's shape; `None` when it does not.
    ///
    /// Why this is the chunk's reading: `data` is the shaped chunk's bytes with only the content
    /// of one string changed, to content without a quote, a backslash or a control character,
    /// so it is still one string, ending where the other ended; and with only its usage's value
    /// changed, to one the scan reads as it reads a chunk's. The JSON is the same but for that
    /// string's value and the usage. That string was the text's only source (the text borrowed
    /// all of it: [`Shape::keep`]), and the rest of the event depends on it only through whether
    /// it is empty, which neither is; the usage is read here as the scan reads it in a chunk.
    fn by_shape<'a>(&self, data: &'a str) -> Option<ChunkEvent<'a>> {
        use super::scan::plain;
        let shape = &self.shape;
        let (b, n) = (data.as_bytes(), shape.before.len());
        if n == 0 || !b.starts_with(&shape.before) {
            return None;
        }
        let end = if shape.usage {
            // The text runs to the first byte a string does not hold as it is; `after` starts
            // with the quote that must be there.
            n + b[n..].iter().position(|&c| !plain(c))?
        } else {
            if b.len() <= n + shape.after.len() || !b.ends_with(&shape.after) {
                return None;
            }
            let end = b.len() - shape.after.len();
            if !b[n..end].iter().all(|&c| plain(c)) {
                return None;
            }
            end
        };
        if end == n {
            return None;
        }
        let mut ev = ChunkEvent {
            // Both ends are ASCII quotes, so the slice falls on character boundaries.
            text: Cow::Borrowed(data.get(n..end)?),
            token_chunk: shape.token_chunk,
            reasoning: shape.reasoning,
            answer: shape.answer,
            ..ChunkEvent::default()
        };
        if shape.usage {
            if !b[end..].starts_with(&shape.after) {
                return None;
            }
            let (usage, at) = super::scan::usage_at(data, end + shape.after.len())?;
            if b[at..] != shape.tail[..] {
                return None;
            }
            ev.usage = usage;
        }
        Some(ev)
    }
}

/// The longest chunk whose shape is kept: a token chunk is a few hundred bytes, and a reader
/// per stream does not double what a server sending megabyte events makes each stream hold.
const SHAPE_MAX: usize = 4096;

impl Shape {
    /// Keeps the shape of the chunk `data`, read as `ev` with its usage's value at `usage`,
    /// when its next chunks can be compared with it, else none: its text is not empty and
    /// borrows the whole of one string of `data` (so no escape was undone and no other string
    /// added to it), and it says nothing else but its flags and a usage after its text (no
    /// finish reason, error or speculative decoding, whose values a later chunk would not
    /// borrow).
    fn keep(&mut self, data: &str, ev: &ChunkEvent<'_>, usage: UsageSpan) {
        self.before.clear();
        self.after.clear();
        self.tail.clear();
        if data.len() > SHAPE_MAX {
            return;
        }
        let Some((start, end)) = Self::text_span(data, ev) else {
            return;
        };
        let b = data.as_bytes();
        // A usage of `null` is compared as bytes, as the rest is: a hole for it would only
        // cost a chunk its shape when the usage comes, on the last.
        let usage = usage.filter(|&(from, _)| from > end && ev.usage.is_some());
        if ev.usage.is_some() && usage.is_none() {
            return;
        }
        self.before.extend_from_slice(&b[..start]);
        self.usage = usage.is_some();
        match usage {
            Some((from, to)) => {
                self.after.extend_from_slice(&b[end..from]);
                self.tail.extend_from_slice(&b[to..]);
            }
            None => self.after.extend_from_slice(&b[end..]),
        }
        self.token_chunk = ev.token_chunk;
        self.reasoning = ev.reasoning;
        self.answer = ev.answer;
    }

    /// Where in `data` the string `ev`'s text came from lies, without its quotes, when the
    /// chunk may have a shape (see [`Shape::keep`]).
    fn text_span(data: &str, ev: &ChunkEvent<'_>) -> Option<(usize, usize)> {
        let Cow::Borrowed(text) = &ev.text else {
            return None;
        };
        if text.is_empty() || ev.finish_reason.is_some() || ev.error.is_some() || ev.spec.is_some()
        {
            return None;
        }
        // Where the text lies in `data`: compared as addresses, as `str::as_ptr` gives them.
        let start = (text.as_ptr() as usize).checked_sub(data.as_ptr() as usize)?;
        let end = start + text.len();
        let b = data.as_bytes();
        if start == 0 || end >= b.len() || b[start - 1] != b'"' || b[end] != b'"' {
            return None;
        }
        Some((start, end))
    }
}

/// [`parse_chunk`] without the scanner: serde's typed reading, else the tree.
fn parse_chunk_serde(data: &str) -> Option<ChunkEvent<'_>> {
    match serde_json::from_str::<Object<wire::Chunk<'_>>>(data) {
        Ok(Object(mut chunk)) if !chunk.error => Some(chunk.take_event()),
        _ => parse_chunk_tree(data),
    }
}

/// The shapes of a chunk as working servers send it; only the fields a record needs.
pub(super) mod wire {
    use super::*;

    #[derive(Deserialize)]
    pub(in crate::load::run::api) struct Chunk<'a> {
        #[serde(borrow)]
        pub choices: Option<FirstChoice<'a>>,
        pub usage: Option<Object<Usage>>,
        pub metrics: Option<Object<Metrics>>,
        /// Present at all (even `null`): the tree decides what it says.
        #[serde(default, deserialize_with = "present")]
        pub error: bool,
    }

    #[derive(Deserialize)]
    pub(in crate::load::run::api) struct Choice<'a> {
        #[serde(borrow)]
        pub text: Option<Text<'a>>,
        #[serde(borrow)]
        pub delta: Option<Object<Delta<'a>>>,
        #[serde(borrow)]
        pub finish_reason: Option<Text<'a>>,
    }

    #[derive(Deserialize)]
    pub(in crate::load::run::api) struct Delta<'a> {
        /// Present at all, even `null` (SGLang sends `"role": null` with every token).
        #[serde(default, deserialize_with = "present")]
        pub role: bool,
        #[serde(borrow)]
        pub reasoning_content: Option<Text<'a>>,
        #[serde(borrow)]
        pub reasoning: Option<Text<'a>>,
        #[serde(borrow)]
        pub content: Option<Text<'a>>,
    }

    #[derive(Deserialize)]
    pub(in crate::load::run::api) struct Usage {
        pub prompt_tokens: Option<u64>,
        pub completion_tokens: Option<u64>,
        pub cached_tokens: Option<u64>,
        pub prompt_tokens_details: Option<Object<Details>>,
        pub completion_tokens_details: Option<Object<Details>>,
    }

    impl From<Usage> for super::Usage {
        fn from(u: Usage) -> Self {
            super::Usage {
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                cached_tokens: u
                    .prompt_tokens_details
                    .and_then(|Object(d)| d.cached_tokens)
                    .or(u.cached_tokens),
                reasoning_tokens: u
                    .completion_tokens_details
                    .and_then(|Object(d)| d.reasoning_tokens),
            }
        }
    }

    /// vLLM's per-request `metrics`: only its speculative decoding is read.
    #[derive(Deserialize)]
    pub(in crate::load::run::api) struct Metrics {
        pub speculative_decoding: Option<Object<Spec>>,
    }

    /// `metrics.speculative_decoding`'s counts (vLLM's `acceptance_metrics.md`).
    #[derive(Deserialize)]
    pub(in crate::load::run::api) struct Spec {
        pub num_spec_steps: Option<u64>,
        pub num_accepted_draft_tokens: Option<u64>,
        pub num_draft_tokens: Option<u64>,
    }

    #[derive(Deserialize)]
    pub(in crate::load::run::api) struct Details {
        pub cached_tokens: Option<u64>,
        pub reasoning_tokens: Option<u64>,
    }

    fn present<'de, D: de::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
        IgnoredAny::deserialize(d).map(|_| true)
    }
}

impl<'a> wire::Chunk<'a> {
    /// The event this chunk says. It takes the chunk's fields rather than the chunk, so the
    /// chunk (near 300 bytes, read once per token) is not copied to be passed.
    pub(super) fn take_event(&mut self) -> ChunkEvent<'a> {
        let mut ev = ChunkEvent {
            usage: self.usage.take().map(|Object(u)| u.into()),
            spec: self
                .metrics
                .take()
                .and_then(|Object(m)| m.speculative_decoding)
                .and_then(|Object(s)| {
                    spec_counts(
                        s.num_spec_steps,
                        s.num_accepted_draft_tokens,
                        s.num_draft_tokens,
                    )
                }),
            ..ChunkEvent::default()
        };
        let Some(FirstChoice(Some(choice))) = self.choices.take() else {
            return ev;
        };
        ev.finish_reason = choice.finish_reason.map(|t| t.0);
        let mut has_text_field = false;
        let mut add = |t: Option<Text<'a>>| {
            if let Some(Text(t)) = t {
                has_text_field = true;
                if ev.text.is_empty() {
                    ev.text = t;
                } else {
                    ev.text.to_mut().push_str(&t);
                }
            }
        };
        let nonempty = |t: &Option<Text<'a>>| t.as_ref().is_some_and(|Text(t)| !t.is_empty());
        let mut answer = nonempty(&choice.text);
        let mut reasoning = false;
        add(choice.text);
        let mut role = false;
        if let Some(Object(delta)) = choice.delta {
            reasoning = nonempty(&delta.reasoning_content) || nonempty(&delta.reasoning);
            answer |= nonempty(&delta.content);
            add(delta.reasoning_content);
            add(delta.reasoning);
            add(delta.content);
            role = delta.role;
        }
        ev.reasoning = reasoning;
        ev.answer = answer;
        let role_only = role && ev.text.is_empty();
        ev.token_chunk =
            !ev.text.is_empty() || (has_text_field && !role_only && ev.finish_reason.is_none());
        ev
    }
}

/// A JSON string, borrowed when it has no escapes.
pub(super) struct Text<'a>(pub(super) Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// A JSON object only: derived structs would also take an array, field by field, where the tree
/// sees no fields at all.
pub(super) struct Object<T>(pub(super) T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Object)
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// `choices`: the first choice, the others skipped unread.
pub(super) struct FirstChoice<'a>(pub(super) Option<wire::Choice<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for FirstChoice<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FirstChoice<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of choices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let first = seq.next_element::<Object<wire::Choice<'de>>>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstChoice(first.map(|Object(c)| c)))
            }
        }
        d.deserialize_seq(V)
    }
}

/// A request's speculative counts when they hold together: at least one step, and no more
/// tokens accepted than drafted; else nothing (a count that contradicts itself is not shown).
fn spec_counts(
    steps: Option<u64>,
    accepted: Option<u64>,
    drafted: Option<u64>,
) -> Option<llmsweep_shared::bundle::RequestSpec> {
    let (steps, accepted) = (steps.filter(|&s| s > 0)?, accepted?);
    if drafted.is_some_and(|d| accepted > d) {
        return None;
    }
    Some(llmsweep_shared::bundle::RequestSpec {
        steps,
        accepted,
        drafted,
    })
}

/// The general reading, through a JSON tree: for error events and whatever the typed one refused.
fn parse_chunk_tree(data: &str) -> Option<ChunkEvent<'static>> {
    let v: Value = serde_json::from_str(data).ok()?;
    let mut ev = ChunkEvent {
        usage: v.get("usage").and_then(parse_usage),
        error: v
            .get("error")
            .map(|e| error_text(e).unwrap_or_else(|| e.to_string())),
        spec: v.pointer("/metrics/speculative_decoding").and_then(|s| {
            let n = |k: &str| s.get(k).and_then(Value::as_u64);
            spec_counts(
                n("num_spec_steps"),
                n("num_accepted_draft_tokens"),
                n("num_draft_tokens"),
            )
        }),
        ..ChunkEvent::default()
    };
    if let Some(choice) = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    {
        read_choice(choice, &mut ev);
    }
    Some(ev)
}

fn read_choice(choice: &Value, ev: &mut ChunkEvent<'static>) {
    ev.finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(|s| Cow::Owned(s.to_string()));
    let mut has_text_field = false;
    let mut role_only = false;
    if let Some(t) = choice.get("text").and_then(Value::as_str) {
        has_text_field = true;
        ev.answer |= !t.is_empty();
        ev.text.to_mut().push_str(t);
    }
    if let Some(delta) = choice.get("delta") {
        for key in ["reasoning_content", "reasoning", "content"] {
            if let Some(t) = delta.get(key).and_then(Value::as_str) {
                has_text_field = true;
                if key == "content" {
                    ev.answer |= !t.is_empty();
                } else {
                    ev.reasoning |= !t.is_empty();
                }
                ev.text.to_mut().push_str(t);
            }
        }
        role_only = delta.get("role").is_some() && ev.text.is_empty();
    }
    // A chunk with text is a token. An empty one is a token only when it is neither the role
    // announcement nor the closing chunk that only carries finish_reason.
    ev.token_chunk =
        !ev.text.is_empty() || (has_text_field && !role_only && ev.finish_reason.is_none());
}

fn parse_usage(u: &Value) -> Option<Usage> {
    if !u.is_object() {
        return None;
    }
    let num = |v: Option<&Value>| v.and_then(Value::as_u64);
    Some(Usage {
        prompt_tokens: num(u.get("prompt_tokens")),
        completion_tokens: num(u.get("completion_tokens")),
        cached_tokens: num(u.pointer("/prompt_tokens_details/cached_tokens"))
            .or_else(|| num(u.get("cached_tokens"))),
        reasoning_tokens: num(u.pointer("/completion_tokens_details/reasoning_tokens")),
    })
}

/// Whether a body is an HTML page (a web UI, a proxy's or a static server's error page), not an
/// API's JSON: it starts, after whitespace, with a doctype, `<html`, `<head`, `<body` or a comment.
pub(crate) fn is_html(body: &str) -> bool {
    let head: String = body.trim_start().chars().take(16).collect();
    let head = head.to_ascii_lowercase();
    ["<!doctype html", "<html", "<head", "<body", "<!--"]
        .iter()
        .any(|p| head.starts_with(p))
}

/// An HTML page's `<title>`, when it has a short one.
fn html_title(body: &str) -> Option<String> {
    let lower = body.to_ascii_lowercase();
    let start = lower.find("<title>")? + "<title>".len();
    let len = lower[start..].find("</title>")?;
    let title = body
        .get(start..start + len)?
        .split_whitespace()
        .collect::<Vec<_>>();
    (!title.is_empty()).then(|| truncate(&title.join(" "), 120))
}

/// What to say about an HTML answer where the API's JSON was expected.
pub(crate) fn html_page(body: &str) -> String {
    let titled = html_title(body)
        .map(|t| format!(" (\"{t}\")"))
        .unwrap_or_default();
    format!("{HTML_ANSWER}{titled}, not the API's JSON: is this the server's API address?")
}

/// How [`html_page`] begins.
pub(crate) const HTML_ANSWER: &str = "the server answered with an HTML page";

/// The human message inside an error body: OpenAI's `{"error": {"message"}}`, vLLM's
/// `{"message"}`, FastAPI's `{"detail"}`, or TGI's `{"error": "..."}`; an HTML page is called one.
pub(crate) fn error_message(body: &str) -> String {
    let trimmed = body.trim();
    if is_html(trimmed) {
        return html_page(trimmed);
    }
    serde_json::from_str::<Value>(trimmed)
        .ok()
        .and_then(|v| error_text(&v))
        .unwrap_or_else(|| truncate(trimmed, 500))
}

fn error_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => ["error", "message", "detail", "msg"]
            .iter()
            .filter_map(|k| o.get(*k))
            .find_map(error_text),
        Value::Array(a) => a.first().and_then(error_text),
        _ => None,
    }
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_token_chunk() {
        let ev =
            parse_chunk(r#"{"choices":[{"index":0,"text":" the","finish_reason":null}]}"#).unwrap();
        assert_eq!(ev.text, " the");
        assert!(ev.token_chunk && ev.has_text());
        assert_eq!(ev.finish_reason, None);
    }

    #[test]
    fn role_only_chat_chunk_is_not_a_token() {
        let ev = parse_chunk(
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#,
        )
        .unwrap();
        assert!(!ev.token_chunk && !ev.has_text());
    }

    #[test]
    fn reasoning_content_is_generated_text() {
        let ev =
            parse_chunk(r#"{"choices":[{"delta":{"reasoning_content":"hmm","content":null}}]}"#)
                .unwrap();
        assert_eq!(ev.text, "hmm");
        assert!(ev.token_chunk);
    }

    #[test]
    fn empty_text_chunk_counts_as_token_but_not_as_text() {
        let ev = parse_chunk(r#"{"choices":[{"text":"","finish_reason":null}]}"#).unwrap();
        assert!(ev.token_chunk && !ev.has_text());
        let fin = parse_chunk(r#"{"choices":[{"text":"","finish_reason":"length"}]}"#).unwrap();
        assert!(!fin.token_chunk);
        assert_eq!(fin.finish_reason.as_deref(), Some("length"));
    }

    #[test]
    fn usage_chunk_with_cached_tokens() {
        let ev = parse_chunk(
            r#"{"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":32,"prompt_tokens_details":{"cached_tokens":512},"completion_tokens_details":{"reasoning_tokens":20}}}"#,
        )
        .unwrap();
        let want = Usage {
            prompt_tokens: Some(1000),
            completion_tokens: Some(32),
            cached_tokens: Some(512),
            reasoning_tokens: Some(20),
        };
        assert_eq!(ev.usage, Some(want));
        // The tree reader, for chunks the typed one does not take, reads the same counts.
        let tree = parse_chunk_tree(
            r#"{"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":32,"prompt_tokens_details":{"cached_tokens":512},"completion_tokens_details":{"reasoning_tokens":20}}}"#,
        )
        .unwrap();
        assert_eq!(tree.usage, Some(want));
        assert!(!ev.token_chunk);
        let null_usage = parse_chunk(r#"{"choices":[{"text":"a"}],"usage":null}"#).unwrap();
        assert_eq!(null_usage.usage, None);
    }

    /// vLLM 0.29's last chunk with `--per-request-spec-decode-metrics summary` (the example of
    /// its acceptance_metrics.md): the request's steps, accepted and drafted tokens, read in
    /// both readings; a count that contradicts itself, or `null`, is no count.
    #[test]
    fn vllms_per_request_speculative_counts() {
        let last = r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":54,"total_tokens":59},"metrics":{"speculative_decoding":{"mean_acceptance_length":1.23,"draft_acceptance_rate":0.0775,"acceptance_histogram":[39,1,0,3],"num_spec_steps":43,"num_accepted_draft_tokens":10,"num_draft_tokens":129,"num_spec_tokens":3}}}"#;
        let want = llmsweep_shared::bundle::RequestSpec {
            steps: 43,
            accepted: 10,
            drafted: Some(129),
        };
        assert_eq!(parse_chunk(last).unwrap().spec, Some(want));
        assert_eq!(parse_chunk_tree(last).unwrap().spec, Some(want));
        let lying = last.replace("\"num_draft_tokens\":129", "\"num_draft_tokens\":9");
        assert_eq!(parse_chunk(&lying).unwrap().spec, None);
        let zero = last.replace("\"num_spec_steps\":43", "\"num_spec_steps\":0");
        assert_eq!(parse_chunk(&zero).unwrap().spec, None);
        let none = r#"{"choices":[],"usage":{"completion_tokens":3},"metrics":{"speculative_decoding":null}}"#;
        assert_eq!(parse_chunk(none).unwrap().spec, None);
    }

    #[test]
    fn error_inside_the_stream() {
        let ev = parse_chunk(r#"{"error":{"message":"out of memory","code":500}}"#).unwrap();
        assert_eq!(ev.error.as_deref(), Some("out of memory"));
        assert_eq!(parse_chunk("not json"), None);
    }

    #[test]
    fn escaped_text_is_unescaped_and_plain_text_borrowed() {
        let ev =
            parse_chunk(r#"{"choices":[{"delta":{"role":null,"content":"caf\u00e9 \"x\""}}]}"#)
                .unwrap();
        assert_eq!(ev.text, "café \"x\"");
        assert!(
            ev.token_chunk,
            "SGLang's `role: null` beside text is a token"
        );
        let ev = parse_chunk(r#"{"choices":[{"text":" plain"},{"text":"second"}]}"#).unwrap();
        assert!(matches!(ev.text, Cow::Borrowed(" plain")));
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        /// A JSON value of any type, text with and without escapes among them.
        fn value() -> BoxedStrategy<String> {
            prop_oneof![
                Just("null".to_string()),
                Just("true".to_string()),
                Just("\"\"".to_string()),
                Just("\" a\"".to_string()),
                Just("\"\\u00e9\\n\"".to_string()),
                Just("\"length\"".to_string()),
                Just("7".to_string()),
                Just("-1".to_string()),
                Just("1.5".to_string()),
                Just("0".to_string()),
                Just("01".to_string()),
                Just("1e5".to_string()),
                Just("-0.25".to_string()),
                Just("18446744073709551616".to_string()),
                Just("false".to_string()),
                Just(" \"x\" ".to_string()),
                Just("[]".to_string()),
                Just("[1,{}]".to_string()),
                Just("{}".to_string()),
            ]
            .boxed()
        }

        /// An object with some of `keys`, in any order, maybe twice, each with `values`.
        fn object(
            keys: &'static [&'static str],
            values: BoxedStrategy<String>,
        ) -> BoxedStrategy<String> {
            proptest::collection::vec((proptest::sample::select(keys), values), 0..5)
                .prop_map(|fields| {
                    let body: Vec<String> =
                        fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", body.join(","))
                })
                .boxed()
        }

        /// Where each string's content (between its quotes) lies in the JSON text `data`.
        fn string_spans(data: &str) -> Vec<(usize, usize)> {
            let b = data.as_bytes();
            let (mut spans, mut i) = (Vec::new(), 0);
            while i < b.len() {
                if b[i] == b'"' {
                    let start = i + 1;
                    i = start;
                    while i < b.len() && b[i] != b'"' {
                        i += if b[i] == b'\\' { 2 } else { 1 };
                    }
                    if i < b.len() {
                        spans.push((start, i));
                    }
                }
                i += 1;
            }
            spans
        }

        /// What may stand between a string's quotes: text as JSON writes it (its quotes,
        /// backslashes and controls escaped), or bytes JSON refuses there.
        fn string_content() -> BoxedStrategy<String> {
            prop_oneof![
                3 => "[ a-zé😀\"\\\\\n\t\u{1}/]{0,6}".prop_map(|t| {
                    let json = serde_json::to_string(&t).unwrap_or_default();
                    json[1..json.len() - 1].to_string()
                }),
                1 => proptest::sample::select(&["", "\"", "\\", "\u{1}", "\t", "\\q", "\\ud83d", "a\"b", "\\u00e9"][..]).prop_map(String::from),
            ]
            .boxed()
        }

        /// A chunk that leaves a shape most of the time: the members of engines' token chunks,
        /// some of them, in any order, the usage before or after the text.
        fn shaped() -> BoxedStrategy<String> {
            let members = prop_oneof![
                Just(r#""id":"cmpl-1""#.to_string()),
                Just(r#""object":"text_completion""#.to_string()),
                Just(r#""created":1764590000"#.to_string()),
                Just(r#""usage":null"#.to_string()),
                usage().prop_map(|u| format!(r#""usage":{u}"#)),
                Just(r#""choices":[{"index":0,"text":" a","logprobs":null,"finish_reason":null}]"#.to_string()),
                Just(r#""choices":[{"index":0,"delta":{"role":null,"content":"","reasoning_content":"b c"},"finish_reason":null}]"#.to_string()),
                Just(r#""choices":[{"delta":{"content":"é"}}]"#.to_string()),
            ];
            proptest::collection::vec(members, 1..6)
                .prop_map(|m| format!("{{{}}}", m.join(",")))
                .boxed()
        }

        /// A `usage` object of any shape.
        fn usage() -> BoxedStrategy<String> {
            let details = object(&["cached_tokens", "x"], value());
            object(
                &[
                    "prompt_tokens",
                    "completion_tokens",
                    "cached_tokens",
                    "prompt_tokens_details",
                ],
                prop_oneof![value(), details].boxed(),
            )
        }

        fn chunk() -> impl Strategy<Value = String> {
            let usage = usage();
            let delta = object(
                &[
                    "role",
                    "content",
                    "reasoning_content",
                    "reasoning",
                    "tool_calls",
                ],
                value(),
            );
            let choice = object(
                &["index", "text", "delta", "finish_reason", "logprobs"],
                prop_oneof![value(), delta].boxed(),
            );
            let choices = proptest::collection::vec(prop_oneof![choice, value()], 0..3)
                .prop_map(|c| format!("[{}]", c.join(",")))
                .boxed();
            prop_oneof![
                object(
                    &["id", "choices", "usage", "error", "model"],
                    prop_oneof![value(), choices.clone(), usage].boxed(),
                ),
                choices,
                value(),
            ]
        }

        proptest! {
            #![proptest_config(crate::prop_config::config(512))]

            /// The typed reading, and the scanner before it, say what the JSON tree says, for
            /// chunks of any shape.
            #[test]
            fn prop_typed_reading_equals_the_tree(data in chunk()) {
                prop_assert_eq!(parse_chunk_serde(&data), parse_chunk_tree(&data), "{}", data);
                prop_assert_eq!(parse_chunk(&data), parse_chunk_tree(&data), "{}", data);
            }

            /// Real chunks with bytes cut, doubled or replaced by JSON's own characters: what
            /// the scanner takes, it reads as serde does. (serde's typed reading steps over a
            /// number past f64's range, `1e999`, which its tree refuses; the scanner leaves such
            /// a number to serde, so the chunk means what it meant before the scanner.)
            #[test]
            fn prop_the_scanner_reads_damaged_chunks_as_the_tree_does(
                which in 0..REAL.len(),
                edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, proptest::sample::select(br#"{}[]:,"\ 0123456789.-+eEnulltrfas"#.to_vec())), 1..4),
            ) {
                let mut bytes = REAL[which].as_bytes().to_vec();
                for (at, how, c) in edits {
                    let i = at.index(bytes.len() + 1).min(bytes.len());
                    match how {
                        0 if i < bytes.len() => { bytes.remove(i); }
                        1 => bytes.insert(i, c),
                        _ if i < bytes.len() => bytes[i] = c,
                        _ => bytes.push(c),
                    }
                }
                if let Ok(data) = std::str::from_utf8(&bytes) {
                    prop_assert_eq!(parse_chunk(data), parse_chunk_serde(data), "{}", data);
                }
            }

            /// One answer's chunks that differ in one string's content and their usage (any
            /// string of a chunk of any shape, its text's most often, its content anything:
            /// escapes, quotes, controls, nothing; the usage any value), and now and then in one
            /// byte, read by one reader after the chunk they came from, say what each
            /// says alone: a chunk read by its shape is read as the scan reads it.
            #[test]
            fn prop_chunks_that_differ_in_one_string_and_their_usage_read_as_each_alone(
                data in prop_oneof![2 => shaped(), 1 => chunk().boxed(), 1 => proptest::sample::select(&REAL[..]).prop_map(String::from).boxed()],
                which in proptest::option::weighted(0.3, any::<prop::sample::Index>()),
                nexts in proptest::collection::vec((
                    string_content(),
                    proptest::option::of(prop_oneof![3 => usage(), 1 => value()]),
                    proptest::option::weighted(0.4, (any::<bool>(), any::<prop::sample::Index>(), proptest::sample::select(br#"{}[]:," 0129.-enul"#.to_vec()))),
                ), 1..6),
            ) {
                let mut reader = ChunkReader::default();
                prop_assert_eq!(reader.read(&data), parse_chunk(&data), "{}", data);
                // The text's string, when the chunk left a shape; else any string.
                let text = reader.by_shape(&data).map(|ev| {
                    let start = reader.shape.before.len();
                    (start, start + ev.text.len())
                });
                let spans = string_spans(&data);
                let any = which.and_then(|w| spans.get(w.index(spans.len().max(1))).copied());
                let Some((start, end)) = any.or(text).or(spans.first().copied()) else {
                    return Ok(()); // a chunk without a string: `null`, `7`, `[]`
                };
                // The chunk's usage, where the scan finds it, unless the string is in it.
                let usage = super::super::super::scan::chunk_after(&data, &mut Vec::new())
                    .and_then(|(_, at)| at)
                    .filter(|&(from, to)| to <= start || from >= end);
                for (content, new_usage, edit) in &nexts {
                    let mut parts = vec![(start, end, content.as_str())];
                    if let (Some((from, to)), Some(u)) = (usage, new_usage) {
                        parts.push((from, to, u.as_str()));
                    }
                    parts.sort();
                    let (mut next, mut at) = (String::new(), 0);
                    for (from, to, with) in parts {
                        next.push_str(&data[at..from]);
                        next.push_str(with);
                        at = to;
                    }
                    next.push_str(&data[at..]);
                    let mut next = next.into_bytes();
                    // A byte anywhere, or after the string (where a finish reason would be).
                    if let Some((anywhere, i, c)) = edit {
                        let from = if *anywhere { 0 } else { (start + content.len()).min(next.len() - 1) };
                        let i = from + i.index(next.len() - from);
                        next[i] = *c;
                    }
                    if let Ok(next) = std::str::from_utf8(&next) {
                        prop_assert_eq!(reader.read(next), parse_chunk(next), "{}", next);
                    }
                }
            }

            /// One answer's chunks read by one reader, each after the ones before it, say what
            /// each says alone: the members they share at their start (generated; after them a
            /// real chunk's own members, or a chunk of any shape) and stepped over once are
            /// never misread, whether the next chunk starts with the same bytes, with some of
            /// them, or with others. (About half the cases read a chunk past shared members.)
            #[test]
            fn prop_a_readers_chunks_read_as_each_alone(
                head in proptest::collection::vec((proptest::sample::select(&["id", "object", "model", "created", "x"][..]), value()), 0..4),
                tails in proptest::collection::vec(prop_oneof![3 => proptest::sample::select(&TAILS[..]).prop_map(String::from), 1 => chunk().boxed()], 1..6),
                cut in proptest::collection::vec(proptest::option::weighted(0.25, any::<prop::sample::Index>()), 1..5),
            ) {
                let head: Vec<String> = head.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                let head = head.join(",");
                let mut reader = ChunkReader::default();
                for (tail, cut) in tails.iter().zip(cut.iter().cycle()) {
                    // A generated chunk's own members after the shared ones, when it is an
                    // object; else the chunk as it is. One time in four the shared part is cut
                    // short, anywhere.
                    let data = match tail.strip_prefix('{') {
                        Some(rest) if !head.is_empty() => {
                            let sep = if rest.starts_with('}') { "" } else { "," };
                            let end = cut.map_or(head.len(), |c| c.index(head.len() + 1));
                            let h = &head[..end];
                            format!("{{{h}{sep}{rest}")
                        }
                        _ => tail.clone(),
                    };
                    prop_assert_eq!(reader.read(&data), parse_chunk(&data), "{}", data);
                }
            }
        }

        /// Every real shape read by one reader, twice over and in turn, as each alone.
        #[test]
        fn a_reader_reads_real_chunks_in_any_order_as_each_alone() {
            let mut reader = ChunkReader::default();
            for data in REAL.iter().chain(REAL.iter().rev()).chain(REAL.iter()) {
                assert_eq!(reader.read(data), parse_chunk(data), "{data}");
            }
            // The second chunk of an answer is read from past its shared members.
            let mut reader = ChunkReader::default();
            let first = REAL[1];
            let second = REAL[1].replace(r#"" the""#, r#""\u00e9""#);
            assert_eq!(reader.read(first).unwrap().text, " the");
            assert_eq!(reader.read(&second).unwrap().text, "é");
            assert!(
                reader
                    .common
                    .ends_with(br#""model":"meta-llama/Llama-3.1-8B-Instruct","#),
                "{}",
                String::from_utf8_lossy(&reader.common)
            );
        }

        /// A token chunk that is the last one's bytes around another text without escapes is
        /// compared, not read; one with an escape in its text, or any chunk after one whose
        /// text was unescaped, counted up in its usage or ended the answer, is read.
        #[test]
        fn a_chunk_of_the_last_ones_shape_is_compared_not_read() {
            let mut reader = ChunkReader::default();
            let first = REAL[1];
            assert_eq!(reader.read(first), parse_chunk(first));
            let next = first.replace(r#"" the""#, r#"" cat é""#);
            let by_shape = reader.by_shape(&next).expect("the shape is kept");
            assert_eq!(Some(by_shape), parse_chunk(&next));
            assert!(matches!(
                reader.read(&next).unwrap().text,
                Cow::Borrowed(" cat é")
            ));
            let escaped = first.replace(r#"" the""#, r#""\n""#);
            assert_eq!(reader.by_shape(&escaped), None);
            assert_eq!(reader.read(&escaped).unwrap().text, "\n");
            assert_eq!(
                reader.by_shape(&next),
                None,
                "an unescaped text leaves no shape"
            );
            // A usage after the text (SGLang's and vLLM's `continuous_usage_stats`) is read
            // from a chunk of the same shape; one that is not an object leaves it to the scan.
            let mut reader = ChunkReader::default();
            reader.read(REAL[0]);
            let next = REAL[0].replace(r#"" w\u00e9rd\n""#, r#"" x""#);
            assert_eq!(
                reader.by_shape(&next),
                None,
                "its text was unescaped: no shape"
            );
            reader.read(&next);
            let counted = next.replace(
                r#""total_tokens":17,"completion_tokens":1"#,
                r#""total_tokens":18,"completion_tokens":2"#,
            );
            let ev = reader
                .by_shape(&counted)
                .expect("the shape with its usage is kept");
            assert_eq!(Some(ev.clone()), parse_chunk(&counted));
            assert_eq!(
                (ev.text.as_ref(), ev.usage.and_then(|u| u.completion_tokens)),
                (" x", Some(2))
            );
            let odd = next.replace(
                r#"{"prompt_tokens":16,"total_tokens":17,"completion_tokens":1}"#,
                "[]",
            );
            assert_eq!(reader.by_shape(&odd), None);
            assert_eq!(reader.read(&odd), parse_chunk(&odd));
            for no_shape in [REAL[3], REAL[5], REAL[6]] {
                let mut reader = ChunkReader::default();
                reader.read(no_shape);
                assert_eq!(reader.by_shape(no_shape), None, "{no_shape}");
            }
        }

        /// What real chunks hold after the members they share, as objects of their own.
        const TAILS: [&str; 6] = [
            r#"{"choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{"role":null,"content":" w\u00e9rd\n","reasoning_content":null},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":16,"total_tokens":17,"completion_tokens":1}}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"Okay"}}],"system_fingerprint":"b6400"}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":500,"prompt_tokens_details":{"cached_tokens":992}}}"#,
            r#"{"choices":[{"index":0,"text":"","finish_reason":"length"}]}"#,
            r#"{"error":{"message":"boom","code":500}}"#,
        ];

        /// Chunks as engines send them, one per dialect and shape.
        pub(super) const REAL: [&str; 7] = [
            r#"{"id":"9d2c","object":"chat.completion.chunk","created":1764590000,"model":"default","choices":[{"index":0,"delta":{"role":null,"content":" w\u00e9rd\n","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":{"prompt_tokens":16,"total_tokens":17,"completion_tokens":1}}"#,
            r#"{"id":"cmpl-5c0a3f9e8b7d4e21","object":"text_completion","created":1764590000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}"#,
            r#"{"id":"9d2c","object":"chat.completion.chunk","created":1764590000,"model":"default","choices":[{"index":0,"delta":{"role":null,"content":" word","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":{"prompt_tokens":16,"total_tokens":17,"completion_tokens":1}}"#,
            r#"{"id":"9d2c","object":"chat.completion.chunk","created":1764590000,"model":"default","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null}"#,
            r#"{"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"Okay"}}],"created":1764590000,"id":"chatcmpl-x","model":"gemma","system_fingerprint":"b6400","object":"chat.completion.chunk","timings":{"prompt_n":1,"predicted_per_second":41.5}}"#,
            r#"{"id":"cmpl-1","object":"text_completion","created":0,"model":"m","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500,"prompt_tokens_details":{"cached_tokens":992},"completion_tokens_details":{"reasoning_tokens":311}}}"#,
            r#"{"id":"c","choices":[{"index":0,"text":" a","logprobs":{"tokens":[" a"],"token_logprobs":[-0.0123],"top_logprobs":[{" a":-0.0123,"b":-4.5}]},"finish_reason":"length"},{"index":1,"text":" b"}]}"#,
        ];

        /// Each real shape is the scanner's to read (it is not left to serde every time), and
        /// it reads it as the tree does.
        #[test]
        fn the_scanner_reads_every_real_shape() {
            for data in REAL {
                let scanned = super::super::super::scan::chunk(data)
                    .unwrap_or_else(|| panic!("left to serde: {data}"));
                assert_eq!(Some(scanned), parse_chunk_tree(data), "{data}");
            }
            // Escapes are unescaped into the text's own copy; a lone surrogate is serde's.
            fn scan(d: &str) -> Option<ChunkEvent<'_>> {
                super::super::super::scan::chunk(d)
            }
            let ev = scan(r#"{"choices":[{"text":"a\n\"\u00e9\ud83d\ude00\/"}]}"#).unwrap();
            assert_eq!(ev.text, "a\n\"é😀/");
            assert!(matches!(ev.text, Cow::Owned(_)));
            assert!(scan(r#"{"choices":[{"text":"\ud83d"}]}"#).is_none());
            assert!(scan(r#"{"choices":[{"te\u0078t":"a"}]}"#).is_none());
            // A control character, a quote's escape or a wide character at every place of the
            // eight-byte steps: read as serde reads it (the controls refused by both).
            for at in 0..=24 {
                for c in ["\t", "\u{1f}", "\\\"", "é", "\u{7f}"] {
                    let mut text = String::from("abcdefghijklmnopqrstuvwx");
                    text.insert_str(at, c);
                    let data = format!(r#"{{"choices":[{{"text":"{text}"}}]}}"#);
                    assert_eq!(parse_chunk(&data), parse_chunk_serde(&data), "{data}");
                    assert_eq!(scan(&data).is_some(), !c.starts_with(['\t', '\u{1f}']));
                }
            }
        }
    }

    #[test]
    fn error_messages_of_each_engine_shape() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad model","code":404}}"#),
            "bad model"
        );
        assert_eq!(
            error_message(r#"{"object":"error","message":"too long","code":400}"#),
            "too long"
        );
        assert_eq!(error_message(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(
            error_message(r#"{"error":"Input validation error"}"#),
            "Input validation error"
        );
        assert_eq!(error_message("plain text\n"), "plain text");
    }

    #[test]
    fn an_html_answer_is_called_an_html_page() {
        let page = "\n<!DOCTYPE HTML>\n<html><head><title>Error response</title></head><body>501</body></html>";
        assert_eq!(
            error_message(page),
            "the server answered with an HTML page (\"Error response\"), not the API's JSON: is this the server's API address?"
        );
        assert!(is_html("<html lang=en>"));
        assert!(is_html("  <!-- x --><div>"));
        assert!(!is_html("{\"error\": \"<html>\"}"));
        assert!(!is_html("Not Found"));
        assert_eq!(
            html_page("<html><body>no title</body></html>"),
            "the server answered with an HTML page, not the API's JSON: is this the server's API address?"
        );
    }
}
