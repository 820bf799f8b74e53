//! Measuring prompt words with the server's own tokenizer (`/tokenize` on SGLang, vLLM and
//! llama.cpp), so prompts can be built to an exact token count.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::workload::{TokenModel, WORDS};

/// How many times a word is repeated when measuring it, so a word costing a fraction of a token
/// in context (a merge across words) shows up as a non-integer and is dropped.
const REPEAT: u64 = 8;

/// Fewest measured words for a usable vocabulary.
const MIN_WORDS: usize = 32;

/// Counts the tokens of `text` with the server's tokenizer, without special tokens.
pub async fn count_tokens(
    http: &reqwest::Client,
    base: &str,
    model: &str,
    text: &str,
) -> Option<u64> {
    let body = json!({ "model": model, "prompt": text, "content": text, "add_special_tokens": false, "add_special": false });
    let resp = http
        .post(format!("{}/tokenize", base.trim_end_matches('/')))
        .json(&body)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let v: Value = resp.json().await.ok()?;
    v.get("tokens")
        .and_then(Value::as_array)
        .map(|t| t.len() as u64)
        .or_else(|| v.get("count").and_then(Value::as_u64))
}

/// Measures each word's cost in context; `None` when the server has no tokenizer endpoint or
/// too few words measure cleanly.
pub async fn measure(http: &reqwest::Client, base: &str, model_name: &str) -> Option<TokenModel> {
    let anchor = count_tokens(http, base, model_name, "the").await?;
    let costs: Vec<Option<(String, u32)>> = futures_util::stream::iter(WORDS.iter())
        .map(|w| async move {
            let text = format!("the{}", format!(" {w}").repeat(REPEAT as usize));
            let n = count_tokens(http, base, model_name, &text)
                .await?
                .checked_sub(anchor)?;
            (n > 0 && n % REPEAT == 0).then(|| (w.to_string(), (n / REPEAT) as u32))
        })
        .buffered(8)
        .collect()
        .await;
    let mut words: Vec<(String, u32)> = costs.into_iter().flatten().collect();
    // Prefer single-token words when there are enough of them: every length is then reachable.
    let singles: Vec<(String, u32)> = words.iter().filter(|w| w.1 == 1).cloned().collect();
    if singles.len() >= MIN_WORDS {
        words = singles;
    }
    if words.len() < MIN_WORDS {
        return None;
    }
    let model = TokenModel::Measured { words, added: 0 };
    verify(http, base, model_name, model).await
}

/// Checks that a built prompt tokenizes to the planned count (word costs add up in sequence).
async fn verify(
    http: &reqwest::Client,
    base: &str,
    model_name: &str,
    model: TokenModel,
) -> Option<TokenModel> {
    let builder = crate::workload::PromptBuilder::new(0x7E57, model);
    let p = builder.prompt(u64::MAX, 0, 300);
    let n = count_tokens(http, base, model_name, &p.text).await?;
    (n == p.tokens).then_some(builder.model)
}
