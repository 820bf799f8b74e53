//! Building request bodies for `/v1/completions` and `/v1/chat/completions`.

use llmsweep_shared::bundle::Api;
use serde_json::{Value, json};

/// The path a dialect posts to. (`Unknown` only describes imported results; plans are made
/// from `--api`, which names one of the two, so it posts like completions.)
pub(crate) fn endpoint(api: Api) -> &'static str {
    match api {
        Api::Completions | Api::Unknown => "/v1/completions",
        Api::Chat => "/v1/chat/completions",
    }
}

/// Length controls sent with every request. Each can be turned off when a server refuses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RequestOptions {
    /// `ignore_eos: true`: keep generating past the end-of-sequence token.
    pub ignore_eos: bool,
    /// `min_tokens = max_tokens`: a second way engines accept to forbid early stops.
    pub min_tokens: bool,
    /// `stream_options.include_usage`: ask for token counts in the last chunk.
    pub include_usage: bool,
    /// `stream_options.continuous_usage_stats` (vLLM, SGLang): the count so far on every
    /// chunk, so a chunk of several tokens (speculative decoding) says how many it carries.
    pub continuous_usage: bool,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions {
            ignore_eos: true,
            min_tokens: true,
            include_usage: true,
            continuous_usage: true,
        }
    }
}

impl RequestOptions {
    /// Turns off the option a 400 answer complains about; `false` when it names none of them.
    pub(crate) fn drop_refused(&mut self, server_message: &str) -> bool {
        let m = server_message.to_ascii_lowercase();
        if self.ignore_eos && m.contains("ignore_eos") {
            self.ignore_eos = false;
        } else if self.min_tokens && m.contains("min_tokens") {
            self.min_tokens = false;
        } else if self.continuous_usage && m.contains("continuous_usage") {
            self.continuous_usage = false;
        } else if self.include_usage
            && (m.contains("stream_options") || m.contains("include_usage"))
        {
            (self.include_usage, self.continuous_usage) = (false, false);
        } else {
            return false;
        }
        true
    }
}

/// A streaming request body asking for exactly `output_len` tokens: `prompt`, or a dataset's
/// chat `messages` as written, with `extra`'s fields added (they never replace the ones set
/// here).
pub(crate) fn body(
    api: Api,
    model: &str,
    prompt: &str,
    messages: Option<&Value>,
    output_len: u64,
    opts: RequestOptions,
    extra: Option<&serde_json::Map<String, Value>>,
) -> Value {
    let mut b = match (api, messages) {
        (Api::Chat, Some(m)) => json!({ "model": model, "messages": m }),
        (Api::Completions | Api::Unknown, _) => json!({ "model": model, "prompt": prompt }),
        (Api::Chat, None) => json!({
            "model": model,
            "messages": [{ "role": "user", "content": prompt }],
        }),
    };
    b["max_tokens"] = json!(output_len);
    b["stream"] = json!(true);
    if opts.include_usage {
        b["stream_options"] = json!({ "include_usage": true });
        if opts.continuous_usage {
            b["stream_options"]["continuous_usage_stats"] = json!(true);
        }
    }
    if opts.ignore_eos {
        b["ignore_eos"] = json!(true);
    }
    if opts.min_tokens {
        b["min_tokens"] = json!(output_len);
    }
    if let (Some(extra), Value::Object(map)) = (extra, &mut b) {
        for (k, v) in extra {
            map.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_body_asks_for_exact_length_and_usage() {
        let b = body(
            Api::Completions,
            "m",
            "hi",
            None,
            32,
            RequestOptions::default(),
            None,
        );
        assert_eq!(
            b,
            json!({"model":"m","prompt":"hi","max_tokens":32,"stream":true,
                   "stream_options":{"include_usage":true,"continuous_usage_stats":true},
                   "ignore_eos":true,"min_tokens":32})
        );
    }

    #[test]
    fn chat_body_has_one_user_message() {
        let b = body(
            Api::Chat,
            "m",
            "hi",
            None,
            8,
            RequestOptions::default(),
            None,
        );
        assert_eq!(b["messages"], json!([{"role":"user","content":"hi"}]));
        assert!(b.get("prompt").is_none());
    }

    #[test]
    fn extra_fields_are_added_and_never_replace_ours() {
        let extra: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"temperature":0.7,"ignore_eos":false,"top_k":5}"#).unwrap();
        let b = body(
            Api::Chat,
            "m",
            "hi",
            None,
            8,
            RequestOptions::default(),
            Some(&extra),
        );
        assert_eq!(
            (b["temperature"].clone(), b["top_k"].clone()),
            (json!(0.7), json!(5))
        );
        // ignore_eos is ours while it is on: the length is measured with it.
        assert_eq!(b["ignore_eos"], json!(true));
    }

    #[test]
    fn a_datasets_messages_are_sent_as_written() {
        let m =
            json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]);
        let b = body(
            Api::Chat,
            "m",
            "",
            Some(&m),
            8,
            RequestOptions::default(),
            None,
        );
        assert_eq!(b["messages"], m);
    }

    #[test]
    fn refused_options_are_dropped_one_by_one() {
        let mut o = RequestOptions::default();
        assert!(o.drop_refused("Unrecognized request argument supplied: min_tokens"));
        assert!(!o.min_tokens && o.ignore_eos);
        assert!(!o.drop_refused("min_tokens again"));
        assert!(!o.drop_refused("context length exceeded"));
        let b = body(Api::Completions, "m", "p", None, 4, o, None);
        assert!(b.get("min_tokens").is_none());
    }
}
