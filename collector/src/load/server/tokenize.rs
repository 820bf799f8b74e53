//! Measuring prompt words with the server's own tokenizer (`/tokenize` on SGLang, vLLM and
//! llama.cpp), so prompts can be built to an exact token count.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::load::workload::{TokenModel, WORDS};

/// How many times a word is repeated when measuring it, so a word costing a fraction of a token
/// in context (a merge across words) shows up as a non-integer and is dropped.
const REPEAT: u64 = 8;

/// Fewest measured words for a usable vocabulary.
const MIN_WORDS: usize = 32;

/// Counts the tokens of `text` with the server's tokenizer: `/tokenize` (SGLang, vLLM,
/// llama.cpp; asked without special tokens), else llama-cpp-python's `/extras/tokenize` (which
/// always adds BOS; [`measure`] subtracts what an empty text counts).
pub(crate) async fn count_tokens(
    http: &reqwest::Client,
    base: &str,
    model: &str,
    text: &str,
) -> Option<u64> {
    let base = base.trim_end_matches('/');
    let body = json!({ "model": model, "prompt": text, "content": text, "add_special_tokens": false, "add_special": false });
    if let Some(n) = ask(http, &format!("{base}/tokenize"), &body).await {
        return Some(n);
    }
    ask(
        http,
        &format!("{base}/extras/tokenize"),
        &json!({ "input": text }),
    )
    .await
}

async fn ask(http: &reqwest::Client, url: &str, body: &Value) -> Option<u64> {
    let resp = http
        .post(url)
        .json(body)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .ok()?;
    if !resp.status().is_success() {
        return None;
    }
    let body = crate::boundary::http::read_capped(resp, crate::boundary::http::PROBE_BODY_CAP)
        .await
        .ok()?;
    let v: Value = serde_json::from_slice(&body).ok()?;
    v.get("tokens")
        .and_then(Value::as_array)
        .map(|t| t.len() as u64)
        .or_else(|| v.get("count").and_then(Value::as_u64))
}

/// Measures each word's cost in context; `None` when the server has no tokenizer endpoint or
/// too few words measure cleanly.
pub(crate) async fn measure(
    http: &reqwest::Client,
    base: &str,
    model_name: &str,
) -> Option<TokenModel> {
    let specials = count_tokens(http, base, model_name, "").await?;
    let anchor = count_tokens(http, base, model_name, "the").await?;
    let measured: Vec<Option<Measured>> = futures_util::stream::iter(WORDS.iter())
        .map(|w| measure_word(http, base, model_name, w, anchor, specials))
        .buffered(8)
        .collect()
        .await;
    let measured: Vec<Measured> = measured.into_iter().flatten().collect();
    // Prefer single-token words when there are enough of them: every length is then reachable.
    let singles = measured.iter().filter(|m| m.cost == 1).count();
    let keep = |m: &&Measured| singles < MIN_WORDS || m.cost == 1;
    let words: Vec<(String, u32)> = measured
        .iter()
        .filter(keep)
        .map(|m| (m.word.clone(), m.cost))
        .collect();
    if words.len() < MIN_WORDS {
        return None;
    }
    let first = measured
        .iter()
        .filter(keep)
        .map(|m| (m.word.clone(), m.first_cost))
        .collect();
    let model = TokenModel::Measured {
        words,
        first,
        added: 0,
    };
    verify(http, base, model_name, model, specials).await
}

/// A word's cost after a space and at the start of a text.
struct Measured {
    word: String,
    cost: u32,
    first_cost: u32,
}

async fn measure_word(
    http: &reqwest::Client,
    base: &str,
    model_name: &str,
    word: &str,
    anchor: u64,
    specials: u64,
) -> Option<Measured> {
    let text = format!("the{}", format!(" {word}").repeat(REPEAT as usize));
    let n = count_tokens(http, base, model_name, &text)
        .await?
        .checked_sub(anchor)?;
    let alone = count_tokens(http, base, model_name, word)
        .await?
        .checked_sub(specials)?;
    (n > 0 && n % REPEAT == 0 && alone > 0).then(|| Measured {
        word: word.to_string(),
        cost: (n / REPEAT) as u32,
        first_cost: alone as u32,
    })
}

/// Checks that a built prompt tokenizes to the planned count (word costs add up in sequence).
async fn verify(
    http: &reqwest::Client,
    base: &str,
    model_name: &str,
    model: TokenModel,
    specials: u64,
) -> Option<TokenModel> {
    let builder = crate::load::workload::PromptBuilder::new(0x7E57, None, model);
    let p = builder.prompt(u64::MAX, 0, 300);
    let n = count_tokens(http, base, model_name, &p.text).await?;
    (n.checked_sub(specials)? == p.tokens).then_some(builder.model)
}
