//! The metadata diff: what differs between runs besides their numbers.

use std::collections::BTreeSet;

use super::workload::join;
use super::{MetaRow, RunInput};
use crate::bundle::{Bundle, SweepKind};
use crate::curves::sweep_of;

/// A metadata field: its name and how to read it from a bundle.
type Field = (&'static str, fn(&Bundle) -> String);

/// One row per field worth knowing when two runs differ: server, hardware, workload, tool.
pub(super) fn metadata(runs: &[RunInput]) -> Vec<MetaRow> {
    let fields: [Field; 18] = [
        ("measured by", |b| match &b.source {
            Some(s) => s.tool.clone(),
            None => "llmsweep".into(),
        }),
        ("model", |b| b.target.model.clone()),
        ("engine", |b| opt(&b.target.engine)),
        ("engine version", |b| opt(&b.target.engine_version)),
        ("simulated", |b| b.target.simulated.to_string()),
        ("max context", |b| opt(&b.target.max_context)),
        ("max running requests", |b| {
            opt(&b.target.max_running_requests)
        }),
        ("GPUs", gpus),
        ("client host", |b| {
            let c = &b.hosts.client;
            if c.hostname.is_empty() {
                return "—".into();
            }
            format!("{} ({} cores, {})", c.hostname, c.cpu_cores, c.arch)
        }),
        ("workload seed", |b| {
            if b.is_imported() {
                "—".into()
            } else {
                b.workload.seed.to_string()
            }
        }),
        ("shared prefix tokens", |b| {
            b.workload.shared_prefix_len.to_string()
        }),
        ("API", |b| b.target.api.as_str().to_string()),
        ("throughput sweep", |b| {
            sweep_shape(b, SweepKind::Throughput)
        }),
        ("context sweep", |b| sweep_shape(b, SweepKind::Context)),
        ("rate sweep", rate_shape),
        ("prompts", |b| match &b.workload.dataset {
            Some(d) => format!(
                "{} ({} lines, sha256 {})",
                d.file,
                d.lines,
                d.sha256.get(..12).unwrap_or(&d.sha256)
            ),
            None if b.is_imported() => "—".into(),
            None => "generated".into(),
        }),
        ("request extras", |b| {
            b.workload
                .extra_body
                .as_ref()
                .map_or_else(|| "—".into(), |v| v.to_string())
        }),
        ("llmsweep version", |b| b.tool.version.clone()),
    ];
    let mut rows: Vec<MetaRow> = fields
        .iter()
        .map(|(name, f)| row(name, runs.iter().map(|r| f(r.bundle)).collect()))
        .collect();
    rows.extend(keyed_rows(runs, "note", |b| {
        b.hosts
            .notes
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }));
    rows.extend(server_arg_rows(runs));
    rows
}

fn row(name: &str, values: Vec<String>) -> MetaRow {
    let differs = values.windows(2).any(|w| w[0] != w[1]);
    // Shown in tables: a model or host name is a server's text, and may be any length.
    let values = values
        .into_iter()
        .map(|v| crate::shorten::fact(&v).into_owned())
        .collect();
    MetaRow {
        name: name.to_string(),
        values,
        differs,
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_else(|| "—".into())
}

fn gpus(b: &Bundle) -> String {
    if b.hosts.gpus.is_empty() {
        return b
            .hosts
            .notes
            .get("gpu")
            .cloned()
            .unwrap_or_else(|| "—".into());
    }
    b.hosts
        .gpus
        .iter()
        .map(|g| g.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn sweep_shape(b: &Bundle, kind: SweepKind) -> String {
    let Some(s) = sweep_of(b, kind) else {
        return "—".into();
    };
    if kind == SweepKind::Throughput && crate::shapes::shaped(b) {
        let shapes: Vec<String> = b
            .sweeps
            .iter()
            .filter_map(crate::shapes::Shape::of)
            .map(|s| s.name())
            .collect();
        return format!("C {} · shapes {}", join(&s.concurrency), shapes.join(", "));
    }
    format!(
        "C {} · input {} · output {}",
        join(&s.concurrency),
        join(&s.input_lens),
        s.output_len
    )
}

/// `1, 2, 4 req/s · poisson, seed 0 · cap 8 · input 64 · output 16`.
fn rate_shape(b: &Bundle) -> String {
    let Some(s) = sweep_of(b, SweepKind::Rate) else {
        return "—".into();
    };
    let mut parts = Vec::new();
    if let Some(p) = &s.rate {
        // A search ran its rates in the order it chose them; listed, they read in order.
        let mut rates = p.rates.clone();
        rates.sort_by(f64::total_cmp);
        let rates: Vec<String> = rates
            .iter()
            .map(|&r| crate::charts::axis::format_exact(r))
            .collect();
        let searched = if p.search.is_some() {
            "max-rate search at "
        } else {
            ""
        };
        parts.push(format!("{searched}{} req/s", rates.join(", ")));
        let arrival = match p.arrival {
            crate::bundle::Arrival::Constant => "constant".to_string(),
            crate::bundle::Arrival::Poisson => "poisson".to_string(),
            crate::bundle::Arrival::Gamma => format!("gamma {}", p.burstiness),
            crate::bundle::Arrival::Unknown => "unknown arrivals".to_string(),
        };
        parts.push(match p.seed {
            Some(seed) => format!("{arrival}, seed {seed}"),
            None => arrival,
        });
        if let Some(c) = p.max_concurrency {
            parts.push(format!("cap {c}"));
        }
    }
    parts.push(format!("input {}", join(&s.input_lens)));
    parts.push(format!("output {}", s.output_len));
    parts.join(" · ")
}

/// A row per key of a key → value map (notes, server args), `—` where a run lacks the key.
fn keyed_rows(
    runs: &[RunInput],
    prefix: &str,
    map: impl Fn(&Bundle) -> Vec<(String, String)>,
) -> Vec<MetaRow> {
    let maps: Vec<Vec<(String, String)>> = runs.iter().map(|r| map(r.bundle)).collect();
    let keys: BTreeSet<&String> = maps.iter().flatten().map(|(k, _)| k).collect();
    keys.into_iter()
        .map(|k| {
            let values = maps
                .iter()
                .map(|m| {
                    m.iter()
                        .find(|(mk, _)| mk == k)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_else(|| "—".into())
                })
                .collect();
            row(&format!("{prefix} {k}"), values)
        })
        .collect()
}

/// Fields of a server's self-description that are its state when asked, not its settings
/// (SGLang's `internal_states`: throughput and acceptance of the moment): never a difference.
const SERVER_STATE: &[&str] = &["internal_states"];

/// Server arguments that differ, one row each; one summary row when none differ.
fn server_arg_rows(runs: &[RunInput]) -> Vec<MetaRow> {
    let rows = keyed_rows(runs, "server arg", |b| match &b.target.server_args {
        Some(serde_json::Value::Object(m)) => m
            .iter()
            .filter(|(k, _)| !SERVER_STATE.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), compact(v)))
            .collect(),
        Some(other) => vec![("(value)".into(), compact(other))],
        None => Vec::new(),
    });
    let total = rows.len();
    let differing: Vec<MetaRow> = rows.into_iter().filter(|r| r.differs).collect();
    if !differing.is_empty() {
        return differing;
    }
    let text = if total == 0 {
        "not reported".to_string()
    } else {
        format!("identical ({total} settings)")
    };
    vec![row("server args", vec![text; runs.len()])]
}

fn compact(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curves::tests::bundle;

    #[test]
    fn server_args_show_only_what_differs() {
        let mut a = bundle("a");
        let mut b = bundle("b");
        a.target.server_args = Some(serde_json::json!({"tp_size": 2, "mem_fraction": 0.9,
            "internal_states": [{"avg_spec_accept_length": 2.6}]}));
        b.target.server_args = Some(serde_json::json!({"tp_size": 4, "mem_fraction": 0.9,
            "internal_states": [{"avg_spec_accept_length": 0.0}]}));
        let runs = [
            RunInput {
                label: "a",
                bundle: &a,
            },
            RunInput {
                label: "b",
                bundle: &b,
            },
        ];
        let rows = metadata(&runs);
        let args: Vec<&MetaRow> = rows
            .iter()
            .filter(|r| r.name.starts_with("server arg"))
            .collect();
        assert_eq!(args.len(), 1);
        assert_eq!(args[0].name, "server arg tp_size");
        assert_eq!(args[0].values, ["2", "4"]);
        let gpu = rows.iter().find(|r| r.name == "GPUs").unwrap();
        assert_eq!(gpu.values, ["2x RTX A6000", "2x RTX A6000"]);
        assert!(!gpu.differs);
    }

    #[test]
    fn identical_server_args_are_one_row() {
        let a = bundle("a");
        let runs = [
            RunInput {
                label: "a",
                bundle: &a,
            },
            RunInput {
                label: "b",
                bundle: &a,
            },
        ];
        let rows = metadata(&runs);
        let r = rows.iter().find(|r| r.name == "server args").unwrap();
        assert_eq!(r.values[0], "not reported");
    }
}
