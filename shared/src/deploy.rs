//! What a run's deployment was, beyond the model: the GPUs serving it and speculative
//! decoding, from what the server said of itself and what the user gave.

use crate::bundle::{Bundle, Point};
use crate::charts::axis::fixed;
use crate::metrics::acceptance;

/// The GPUs serving the model, and who said so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpus {
    pub count: u32,
    /// "--gpus", or how the server's own info gives it, e.g. "the server: TP 2 × DP 1 × PP 1".
    pub source: String,
}

/// The GPU count numbers per GPU divide by: the user's `--gpus`, else SGLang's server info
/// (tensor × pipeline parallel, × data parallel unless DP attention runs inside the tensor
/// parallel group); `None` when neither says.
pub fn gpus(b: &Bundle) -> Option<Gpus> {
    if let Some(n) = b.hosts.server_gpus.filter(|&n| n > 0) {
        return Some(Gpus {
            count: n,
            source: "--gpus".into(),
        });
    }
    let args = b.target.server_args.as_ref()?;
    let size = |k: &str| -> Option<u64> { args.get(k)?.as_u64().filter(|&n| n > 0) };
    let tp = size("tp_size")?;
    let pp = size("pp_size").unwrap_or(1);
    let dp_attention = args
        .get("enable_dp_attention")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let dp = if dp_attention {
        1
    } else {
        size("dp_size").unwrap_or(1)
    };
    let count = u32::try_from(tp.checked_mul(pp)?.checked_mul(dp)?).ok()?;
    Some(Gpus {
        count,
        source: format!("the server: TP {tp} × DP {dp} × PP {pp}"),
    })
}

/// Speculative decoding as the server describes it (SGLang's server info).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speculative {
    /// e.g. `NEXTN`, `EAGLE3`.
    pub algorithm: String,
    pub steps: Option<u64>,
    pub draft_tokens: Option<u64>,
}

/// The server's speculative decoding settings, when it reports them and one is on.
pub fn speculative(b: &Bundle) -> Option<Speculative> {
    let args = b.target.server_args.as_ref()?;
    let algorithm = args.get("speculative_algorithm")?.as_str()?.trim();
    if algorithm.is_empty() || algorithm.eq_ignore_ascii_case("none") {
        return None;
    }
    Some(Speculative {
        algorithm: crate::text::inert(algorithm).into_owned(),
        steps: args
            .get("speculative_num_steps")
            .and_then(serde_json::Value::as_u64),
        draft_tokens: args
            .get("speculative_num_draft_tokens")
            .and_then(serde_json::Value::as_u64),
    })
}

/// One line on speculative decoding for a run's card: the server's settings and the acceptance
/// measured over its points, e.g. `NEXTN, 3 steps; accepted 2.55 to 2.62 tokens per step
/// (C=1 to C=100)`; `None` when nothing in the run speaks of it.
pub fn speculative_line(b: &Bundle) -> Option<String> {
    let settings = speculative(b).map(|s| {
        let mut words = s.algorithm.clone();
        if let Some(n) = s.steps {
            words.push_str(&format!(", {n} steps"));
        }
        if let Some(n) = s.draft_tokens {
            words.push_str(&format!(", {n} draft tokens"));
        }
        words
    });
    let measured: Vec<(&Point, f64)> = b
        .sweeps
        .iter()
        .flat_map(|s| &s.points)
        .filter_map(|p| Some((p, acceptance(p)?.length()?)))
        .collect();
    let accepted = (!measured.is_empty()).then(|| {
        let lo = measured.iter().map(|m| m.1).fold(f64::INFINITY, f64::min);
        let hi = measured
            .iter()
            .map(|m| m.1)
            .fold(f64::NEG_INFINITY, f64::max);
        let range = if fixed(lo, 2) == fixed(hi, 2) {
            fixed(lo, 2)
        } else {
            format!("{} to {}", fixed(lo, 2), fixed(hi, 2))
        };
        format!(
            "accepted {range} tokens per step over {} points",
            measured.len()
        )
    });
    match (settings, accepted) {
        (Some(s), Some(a)) => Some(format!("{s}; {a}")),
        (Some(s), None) => Some(s),
        (None, Some(a)) => Some(a),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(args: serde_json::Value, gpus: Option<u32>) -> Bundle {
        let mut b = Bundle::from_json(include_str!("../tests/fixtures/minimal.json"))
            .expect("fixture parses");
        b.target.server_args = Some(args);
        b.hosts.server_gpus = gpus;
        b
    }

    #[test]
    fn the_gpu_count_is_the_users_else_the_servers_parallel_sizes() {
        let sglang = serde_json::json!({"tp_size": 2, "dp_size": 2, "pp_size": 1});
        assert_eq!(
            gpus(&bundle(sglang.clone(), None)).map(|g| g.count),
            Some(4)
        );
        let given = gpus(&bundle(sglang, Some(8))).expect("given");
        assert_eq!((given.count, given.source.as_str()), (8, "--gpus"));
        let dp_attention =
            serde_json::json!({"tp_size": 8, "dp_size": 8, "enable_dp_attention": true});
        assert_eq!(gpus(&bundle(dp_attention, None)).map(|g| g.count), Some(8));
        assert_eq!(gpus(&bundle(serde_json::json!({}), None)), None);
    }

    #[test]
    fn speculative_settings_come_from_the_server_info() {
        let b = bundle(
            serde_json::json!({"speculative_algorithm": "NEXTN", "speculative_num_steps": 3,
                "speculative_num_draft_tokens": 4}),
            None,
        );
        assert_eq!(
            speculative_line(&b).as_deref(),
            Some("NEXTN, 3 steps, 4 draft tokens")
        );
        let off = bundle(serde_json::json!({"speculative_algorithm": null}), None);
        assert_eq!(speculative_line(&off), None);
    }
}
