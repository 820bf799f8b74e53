//! The server's fingerprint: what it says about itself before any load is sent.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::future::join_all;
use llmsweep_shared::bundle::Probe;
use serde_json::Value;

use crate::boundary::http as policy;
use crate::boundary::http::error_chain;

/// Endpoints asked, none required: OpenAI, vLLM, SGLang, llama.cpp, TGI.
pub(crate) const PROBES: &[&str] = &[
    "/v1/models",
    "/version",
    "/get_server_info",
    "/server_info",
    "/props",
    "/info",
    "/health",
    "/metrics",
    "/openapi.json",
];

/// Longest body kept per probe; `/metrics` and server info can be large.
const BODY_KEEP: usize = 64 * 1024;

/// What the probes tell, derived from their raw answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Fingerprint {
    pub probes: BTreeMap<String, Probe>,
    pub models: Vec<String>,
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    pub max_context: Option<u64>,
    pub max_running_requests: Option<u64>,
    pub server_args: Option<Value>,
    pub simulated: bool,
}

impl Fingerprint {
    /// Whether anything answered at all.
    pub(crate) fn reachable(&self) -> bool {
        self.probes.values().any(|p| p.status.is_some())
    }

    /// The first error when nothing answered, for the "cannot reach" message.
    pub(crate) fn first_error(&self) -> Option<&str> {
        self.probes.values().find_map(|p| p.error.as_deref())
    }

    /// When the server answered the model list with an HTML page (a web UI, a static server, a
    /// proxy's error page) and no probe with JSON, what to say: the URL is likely not the API's
    /// address, and neither `--model` nor anything else would make a sweep of it work.
    pub(crate) fn html_instead_of_api(&self, url: &str) -> Option<String> {
        let p = self.probes.get("/v1/models")?;
        let body = p.body.as_ref()?.as_str()?;
        let some_json = PROBES.iter().any(|path| self.probe_json(path).is_some());
        if !crate::load::run::api::is_html(body) || some_json {
            return None;
        }
        let status = p.status.map(|s| format!(" (HTTP {s})")).unwrap_or_default();
        Some(format!(
            "{url}/v1/models{status}: {}\n  --url takes the address of the OpenAI-compatible API, the one whose /v1/models lists the models (e.g. http://127.0.0.1:30000), not a web page's.",
            crate::load::run::api::html_page(body)
        ))
    }

    pub(crate) fn probe_json(&self, path: &str) -> Option<&Value> {
        let p = self.probes.get(path)?;
        if p.status.is_some_and(|s| (200..300).contains(&s)) {
            p.body.as_ref().filter(|b| b.is_object() || b.is_array())
        } else {
            None
        }
    }
}

/// Asks every probe endpoint at once, each with `timeout`.
pub(crate) async fn probe(http: &reqwest::Client, base: &str, timeout: Duration) -> Fingerprint {
    let base = base.trim_end_matches('/');
    let answers = join_all(PROBES.iter().map(|path| ask(http, base, path, timeout))).await;
    let mut models = None;
    let probes = PROBES
        .iter()
        .map(|p| p.to_string())
        .zip(answers)
        .map(|(path, (probe, whole))| {
            if path == "/v1/models" {
                models = whole;
            }
            (path, probe)
        })
        .collect();
    derive_with(probes, models)
}

/// One probe's answer as the bundle keeps it, and its whole JSON when it was parsed (the model
/// list is read from that: a long one is not kept whole).
async fn ask(
    http: &reqwest::Client,
    base: &str,
    path: &str,
    timeout: Duration,
) -> (Probe, Option<Value>) {
    let resp = match http
        .get(format!("{base}{path}"))
        .timeout(timeout)
        .send()
        .await
    {
        Ok(r) => r,
        Err(e) => {
            let probe = Probe {
                status: None,
                body: None,
                error: Some(error_chain(&e)),
            };
            return (probe, None);
        }
    };
    let status = resp.status().as_u16();
    if let Some(why) = policy::redirect_message(&resp) {
        return (probe_error(status, why), None);
    }
    let cap = if path == "/v1/models" {
        policy::MODELS_BODY_CAP
    } else {
        policy::PROBE_BODY_CAP
    };
    let text = match tokio::time::timeout(timeout, policy::text_capped(resp, cap)).await {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => return (probe_error(status, e.to_string()), None),
        Err(_) => {
            return (
                probe_error(status, "body did not arrive in time".into()),
                None,
            );
        }
    };
    let parsed = serde_json::from_str::<Value>(&text).ok();
    let body = match &parsed {
        // A whole API schema says nothing about speed; its `info` names the server.
        Some(v) if path == "/openapi.json" => v.get("info").cloned().unwrap_or(Value::Null),
        Some(v) if text.len() <= BODY_KEEP => v.clone(),
        _ => Value::String(text.chars().take(BODY_KEEP / 16).collect()),
    };
    let probe = Probe {
        status: Some(status),
        body: Some(body),
        error: None,
    };
    (probe, parsed)
}

fn probe_error(status: u16, error: String) -> Probe {
    Probe {
        status: Some(status),
        body: None,
        error: Some(error),
    }
}

/// Derives engine, version and limits from raw probe answers.
#[cfg(test)]
pub(crate) fn derive(probes: BTreeMap<String, Probe>) -> Fingerprint {
    derive_with(probes, None)
}

/// [`derive`], with the model list read from `whole_models`, the whole `/v1/models` answer, when
/// it was parsed (the probe keeps only the start of a long one).
fn derive_with(probes: BTreeMap<String, Probe>, whole_models: Option<Value>) -> Fingerprint {
    let mut f = Fingerprint {
        probes,
        ..Fingerprint::default()
    };
    let listed = f
        .probes
        .get("/v1/models")
        .and_then(|p| p.status)
        .is_some_and(|s| (200..300).contains(&s));
    let models = whole_models
        .filter(|_| listed)
        .or_else(|| f.probe_json("/v1/models").cloned());
    let models: &[Value] = models
        .as_ref()
        .and_then(|m| m.get("data"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    f.models = models
        .iter()
        .filter_map(|m| m.get("id")?.as_str().map(String::from))
        .collect();
    let owned_by = models
        .first()
        .and_then(|m| m.get("owned_by"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let model_len = models
        .first()
        .and_then(|m| m.get("max_model_len"))
        .and_then(Value::as_u64);
    let version = f.probe_json("/version").cloned();
    let version_str = version
        .as_ref()
        .and_then(|v| v.get("version"))
        .and_then(Value::as_str)
        .map(String::from);
    // SGLang 0.5.11 and later answer /server_info (the old path still answers, deprecated).
    // A server that answers every path with the same JSON is not SGLang: its server info has
    // SGLang's own fields.
    let server_info = ["/server_info", "/get_server_info"]
        .iter()
        .find_map(|path| f.probe_json(path).filter(|v| is_sglang_server_info(v)))
        .cloned();
    let props = f.probe_json("/props").cloned();
    let info = f.probe_json("/info").cloned();
    let openapi = f.probe_json("/openapi.json").cloned();

    let sim_engine = version
        .as_ref()
        .and_then(|v| v.get("engine"))
        .and_then(Value::as_str);
    if sim_engine.is_some_and(|e| e.contains("serve-sim")) || owned_by.contains("serve-sim") {
        f.engine = Some("llmsweep serve-sim".into());
        f.engine_version = version_str;
        f.max_context = model_len;
        f.max_running_requests = version
            .as_ref()
            .and_then(|v| u64_at(v, &["/max_running_requests"]));
        f.simulated = true;
    } else if let Some(p) = props.filter(is_llama_cpp_props) {
        f.engine = Some("llama.cpp".into());
        f.engine_version = str_at(&p, &["/build_info"]).or(version_str);
        f.max_context = u64_at(&p, &["/default_generation_settings/n_ctx", "/n_ctx"]);
        f.max_running_requests = u64_at(&p, &["/total_slots"]);
        f.server_args = Some(p);
    } else if let Some(s) = server_info {
        f.engine = Some("sglang".into());
        f.engine_version = version_str.or_else(|| str_at(&s, &["/version"]));
        f.max_context = u64_at(
            &s,
            &["/context_length", "/internal_states/0/context_length"],
        )
        .or(model_len);
        // Launched without `--max-running-requests`, SGLang reports the limit it chose only per
        // data-parallel rank, in the scheduler's state.
        let per_rank = u64_at(
            &s,
            &["/internal_states/0/effective_max_running_requests_per_dp"],
        )
        .map(|n| n.saturating_mul(u64_at(&s, &["/dp_size"]).unwrap_or(1).max(1)));
        f.max_running_requests = u64_at(
            &s,
            &[
                "/max_running_requests",
                "/internal_states/0/max_running_requests",
            ],
        )
        .or(per_rank);
        // serve-sim speaking as SGLang says so in a field SGLang does not have.
        f.simulated = str_at(&s, &["/simulator"]).is_some_and(|v| v.contains("serve-sim"));
        f.server_args = Some(s);
    } else if let Some(i) = info.filter(|i| i.get("model_id").is_some()) {
        f.engine = Some("tgi".into());
        f.engine_version = str_at(&i, &["/version"]);
        f.max_context = u64_at(&i, &["/max_total_tokens"]);
        f.max_running_requests = u64_at(&i, &["/max_concurrent_requests"]);
        f.server_args = Some(i);
    } else if let Some(v) =
        openapi.filter(|i| str_at(i, &["/title"]).is_some_and(|t| t.contains("llama.cpp Python")))
    {
        f.engine = Some("llama-cpp-python".into());
        f.engine_version = str_at(&v, &["/version"]);
    } else {
        f.engine = match owned_by {
            "vllm" => Some("vllm".into()),
            "sglang" => Some("sglang".into()),
            "llamacpp" => Some("llama.cpp".into()),
            _ => None,
        };
        f.engine_version = version_str;
        f.max_context = model_len;
    }
    f
}

/// SGLang's server info is its server arguments, its version and its internal states.
fn is_sglang_server_info(v: &Value) -> bool {
    [
        "tp_size",
        "dp_size",
        "model_path",
        "context_length",
        "max_running_requests",
        "internal_states",
    ]
    .iter()
    .any(|k| v.get(*k).is_some())
}

fn is_llama_cpp_props(p: &Value) -> bool {
    ["default_generation_settings", "total_slots", "build_info"]
        .iter()
        .any(|k| p.get(*k).is_some())
}

fn u64_at(v: &Value, pointers: &[&str]) -> Option<u64> {
    pointers
        .iter()
        .find_map(|p| v.pointer(p).and_then(Value::as_u64))
}

fn str_at(v: &Value, pointers: &[&str]) -> Option<String> {
    pointers
        .iter()
        .find_map(|p| v.pointer(p).and_then(Value::as_str).map(String::from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(body: Value) -> Probe {
        Probe {
            status: Some(200),
            body: Some(body),
            error: None,
        }
    }

    fn probes(list: Vec<(&str, Probe)>) -> BTreeMap<String, Probe> {
        list.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    #[test]
    fn vllm_from_models_and_version() {
        let f = derive(probes(vec![
            (
                "/v1/models",
                ok(
                    json!({"data":[{"id":"Qwen/Qwen3-8B","owned_by":"vllm","max_model_len":40960}]}),
                ),
            ),
            ("/version", ok(json!({"version":"0.11.0"}))),
        ]));
        assert_eq!(f.models, ["Qwen/Qwen3-8B"]);
        assert_eq!(f.engine.as_deref(), Some("vllm"));
        assert_eq!(f.engine_version.as_deref(), Some("0.11.0"));
        assert_eq!(f.max_context, Some(40960));
        assert!(!f.simulated);
    }

    #[test]
    fn sglang_from_server_info() {
        let f = derive(probes(vec![
            (
                "/v1/models",
                ok(json!({"data":[{"id":"m","owned_by":"sglang"}]})),
            ),
            (
                "/get_server_info",
                ok(
                    json!({"tp_size":2,"context_length":32768,"max_running_requests":16,"version":"0.5.11"}),
                ),
            ),
            (
                "/server_info",
                Probe {
                    status: Some(404),
                    body: None,
                    error: None,
                },
            ),
        ]));
        assert_eq!(f.engine.as_deref(), Some("sglang"));
        assert_eq!(f.engine_version.as_deref(), Some("0.5.11"));
        assert_eq!(
            (f.max_context, f.max_running_requests),
            (Some(32768), Some(16))
        );
        assert_eq!(f.server_args.unwrap()["tp_size"], 2);
    }

    /// A server that answers every path with one JSON (its model list) is not taken for SGLang
    /// because `/get_server_info` answered.
    #[test]
    fn a_catch_all_answer_is_not_sglangs_server_info() {
        let same = || ok(json!({"data":[{"id":"m","max_model_len":4096}]}));
        let f = derive(probes(vec![
            ("/v1/models", same()),
            ("/get_server_info", same()),
            ("/server_info", same()),
        ]));
        assert_ne!(f.engine.as_deref(), Some("sglang"));
        assert!(f.server_args.is_none());
    }

    /// SGLang launched without `--max-running-requests` reports its limit per data-parallel rank
    /// only; serve-sim speaking as SGLang is SGLang to the probe, and simulated.
    #[test]
    fn sglang_limit_per_rank_and_the_simulator_speaking_as_sglang() {
        let f = derive(probes(vec![(
            "/get_server_info",
            ok(json!({"max_running_requests":null,"dp_size":2,
                "internal_states":[{"effective_max_running_requests_per_dp":48}],"version":"0.5.4"})),
        )]));
        assert_eq!(f.engine.as_deref(), Some("sglang"));
        assert_eq!(f.max_running_requests, Some(96));
        assert!(!f.simulated);
        let sim = derive(probes(vec![(
            "/get_server_info",
            ok(
                json!({"max_running_requests":16,"version":"0.5.11+serve-sim",
                "simulator":"llmsweep serve-sim 0.1.0 (kpro5 preset)"}),
            ),
        )]));
        assert_eq!(sim.engine.as_deref(), Some("sglang"));
        assert_eq!(sim.engine_version.as_deref(), Some("0.5.11+serve-sim"));
        assert_eq!(sim.max_running_requests, Some(16));
        assert!(sim.simulated);
    }

    #[test]
    fn llama_cpp_from_props() {
        let f = derive(probes(vec![(
            "/props",
            ok(
                json!({"default_generation_settings":{"n_ctx":1024},"total_slots":4,"build_info":"b6500-abc"}),
            ),
        )]));
        assert_eq!(f.engine.as_deref(), Some("llama.cpp"));
        assert_eq!(f.engine_version.as_deref(), Some("b6500-abc"));
        assert_eq!(
            (f.max_context, f.max_running_requests),
            (Some(1024), Some(4))
        );
    }

    #[test]
    fn tgi_from_info() {
        let f = derive(probes(vec![(
            "/info",
            ok(
                json!({"model_id":"m","version":"3.0.1","max_total_tokens":8192,"max_concurrent_requests":128}),
            ),
        )]));
        assert_eq!(f.engine.as_deref(), Some("tgi"));
        assert_eq!(
            (f.max_context, f.max_running_requests),
            (Some(8192), Some(128))
        );
    }

    #[test]
    fn llama_cpp_python_from_its_api_schema() {
        let f = derive(probes(vec![
            (
                "/v1/models",
                ok(
                    json!({"object":"list","data":[{"id":"/m.gguf","object":"model","owned_by":"me"}]}),
                ),
            ),
            (
                "/openapi.json",
                ok(json!({"title":"🦙 llama.cpp Python API","version":"0.3.36"})),
            ),
        ]));
        assert_eq!(f.engine.as_deref(), Some("llama-cpp-python"));
        assert_eq!(f.engine_version.as_deref(), Some("0.3.36"));
        assert_eq!(f.max_context, None);
    }

    #[test]
    fn unknown_owner_names_no_engine() {
        let f = derive(probes(vec![(
            "/v1/models",
            ok(json!({"data":[{"id":"m","owned_by":"me"}]})),
        )]));
        assert_eq!(f.engine, None);
    }

    #[test]
    fn serve_sim_is_marked_simulated() {
        let f = derive(probes(vec![
            (
                "/v1/models",
                ok(
                    json!({"data":[{"id":"sim-fast","owned_by":"llmsweep serve-sim","max_model_len":32768}]}),
                ),
            ),
            (
                "/version",
                ok(json!({"version":"0.1.0","engine":"llmsweep serve-sim"})),
            ),
        ]));
        assert!(f.simulated);
        assert_eq!(f.engine.as_deref(), Some("llmsweep serve-sim"));
        assert_eq!(f.max_context, Some(32768));
    }

    #[test]
    fn nothing_answering_is_unreachable() {
        let f = derive(probes(vec![(
            "/health",
            Probe {
                status: None,
                body: None,
                error: Some("connection refused".into()),
            },
        )]));
        assert!(!f.reachable());
        assert_eq!(f.first_error(), Some("connection refused"));
    }

    /// Issue 10: a web page at the URL got "did not list its models; name the model with
    /// --model", advice that cannot help; the answer is an HTML page and the URL is likely wrong.
    #[test]
    fn an_html_model_list_says_the_url_is_not_the_api() {
        let page = "<!DOCTYPE html><html><head><title>Open WebUI</title></head></html>";
        let f = derive(probes(vec![(
            "/v1/models",
            Probe {
                status: Some(200),
                body: Some(Value::String(page.into())),
                error: None,
            },
        )]));
        let why = f.html_instead_of_api("http://gpu1:8080").unwrap();
        assert!(
            why.starts_with("http://gpu1:8080/v1/models (HTTP 200): the server answered with an HTML page (\"Open WebUI\"), not the API's JSON: is this the server's API address?\n  --url takes the address of the OpenAI-compatible API"),
            "{why}"
        );
        let json = derive(probes(vec![("/v1/models", ok(json!({"data": []})))]));
        assert_eq!(json.html_instead_of_api("http://x"), None);
        let api = derive(probes(vec![
            ("/v1/models", ok(Value::String(page.into()))),
            ("/health", ok(json!({"status": "ok"}))),
        ]));
        assert_eq!(
            api.html_instead_of_api("http://x"),
            None,
            "an API answered elsewhere"
        );
        let text = derive(probes(vec![(
            "/v1/models",
            ok(Value::String("Not Found".into())),
        )]));
        assert_eq!(text.html_instead_of_api("http://x"), None);
    }
}
