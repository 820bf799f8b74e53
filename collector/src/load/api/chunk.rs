//! Reading one streamed chunk (the JSON of a `data:` event) in either dialect.

use serde_json::Value;

/// What one chunk says, dialect differences removed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkEvent {
    /// Generated text in this chunk: `text`, `delta.content` and `delta.reasoning_content`.
    pub text: String,
    /// The chunk belongs to generation: it has a choice that is not role-only or finish-only.
    /// Servers without usage send one such chunk per token, some with empty text.
    pub token_chunk: bool,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
    /// An error the server reported inside the stream.
    pub error: Option<String>,
}

impl ChunkEvent {
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
}

/// Parses a chunk; `None` when the data is not JSON (the caller records a protocol error).
pub fn parse_chunk(data: &str) -> Option<ChunkEvent> {
    let v: Value = serde_json::from_str(data).ok()?;
    let mut ev = ChunkEvent {
        usage: v.get("usage").and_then(parse_usage),
        error: v
            .get("error")
            .map(|e| error_text(e).unwrap_or_else(|| e.to_string())),
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

fn read_choice(choice: &Value, ev: &mut ChunkEvent) {
    ev.finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut has_text_field = false;
    let mut role_only = false;
    if let Some(t) = choice.get("text").and_then(Value::as_str) {
        has_text_field = true;
        ev.text.push_str(t);
    }
    if let Some(delta) = choice.get("delta") {
        for key in ["reasoning_content", "reasoning", "content"] {
            if let Some(t) = delta.get(key).and_then(Value::as_str) {
                has_text_field = true;
                ev.text.push_str(t);
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
    })
}

/// Whether a body is an HTML page (a web UI, a proxy's or a static server's error page), not an
/// API's JSON: it starts, after whitespace, with a doctype, `<html`, `<head`, `<body` or a comment.
pub fn is_html(body: &str) -> bool {
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
pub fn html_page(body: &str) -> String {
    let titled = html_title(body)
        .map(|t| format!(" (\"{t}\")"))
        .unwrap_or_default();
    format!(
        "the server answered with an HTML page{titled}, not the API's JSON: is this the server's API address?"
    )
}

/// The human message inside an error body: OpenAI's `{"error": {"message"}}`, vLLM's
/// `{"message"}`, FastAPI's `{"detail"}`, or TGI's `{"error": "..."}`; an HTML page is called one.
pub fn error_message(body: &str) -> String {
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
            r#"{"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":32,"prompt_tokens_details":{"cached_tokens":512}}}"#,
        )
        .unwrap();
        assert_eq!(
            ev.usage,
            Some(Usage {
                prompt_tokens: Some(1000),
                completion_tokens: Some(32),
                cached_tokens: Some(512)
            })
        );
        assert!(!ev.token_chunk);
        let null_usage = parse_chunk(r#"{"choices":[{"text":"a"}],"usage":null}"#).unwrap();
        assert_eq!(null_usage.usage, None);
    }

    #[test]
    fn error_inside_the_stream() {
        let ev = parse_chunk(r#"{"error":{"message":"out of memory","code":500}}"#).unwrap();
        assert_eq!(ev.error.as_deref(), Some("out of memory"));
        assert_eq!(parse_chunk("not json"), None);
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
