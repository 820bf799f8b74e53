//! The same-workload rule: why two sweeps did not run the same work, one reason a check, in
//! the order a reader looks for them (the levels, the lengths, the prompts, the API).

use std::collections::BTreeSet;

use crate::bundle::{Api, Bundle, DatasetFacts, Sweep, SweepKind};
use crate::charts::axis::fixed;

use super::rate::rate_mismatch;

/// Why sweep `b` (of bundle `bb`) did not run the same workload as sweep `a` (of bundle `ab`);
/// empty when it did. Prompt seeds may differ: they change the random text, not the shape of the
/// load. A rate sweep's arrival seed is another matter: it draws the schedule itself, so two
/// rate sweeps must agree on it, on the arrival process and on `--max-concurrency`.
pub fn workload_mismatch(a: &Sweep, b: &Sweep, bb: &Bundle, ab: &Bundle) -> Vec<String> {
    let mut reasons = Vec::new();
    if a.kind == SweepKind::Rate {
        rate_mismatch(a, b, &mut reasons);
    }
    reasons.extend(level_lists_mismatch(a, b));
    let checks = [
        output_len_mismatch(a, b),
        length_spread_mismatch(a, b),
        shared_prefix_mismatch(ab, bb),
        turns_mismatch(a, b),
        extra_body_mismatch(ab, bb),
        dataset_mismatch(ab, bb),
        api_mismatch(ab, bb),
    ];
    reasons.extend(checks.into_iter().flatten());
    reasons
}

/// Why the level lists of two sweeps of `a`'s kind differ. Different level lists are fine:
/// the runs are compared at the levels both have. Only lengths that matter to every level must
/// agree.
pub(crate) fn level_lists_mismatch(a: &Sweep, b: &Sweep) -> Vec<String> {
    let checks = match a.kind {
        SweepKind::Context => [no_input_len_in_common(a, b), concurrency_differs(a, b)],
        SweepKind::Rate => [input_lens_differ(a, b), None],
        _ => [no_concurrency_in_common(a, b), input_lens_differ(a, b)],
    };
    checks.into_iter().flatten().collect()
}

/// The distinct values of a list, sorted.
fn distinct<T: Ord + Copy>(v: &[T]) -> BTreeSet<T> {
    v.iter().copied().collect()
}

/// "no input length in common" when two context sweeps share no input length.
fn no_input_len_in_common(a: &Sweep, b: &Sweep) -> Option<String> {
    distinct(&a.input_lens)
        .is_disjoint(&distinct(&b.input_lens))
        .then(|| {
            format!(
                "no input length in common: {} vs {}",
                join(&a.input_lens),
                join(&b.input_lens)
            )
        })
}

/// "concurrency differs" when two sweeps ran other sets of concurrency levels.
fn concurrency_differs(a: &Sweep, b: &Sweep) -> Option<String> {
    (distinct(&a.concurrency) != distinct(&b.concurrency)).then(|| {
        format!(
            "concurrency differs: {} vs {}",
            join(&a.concurrency),
            join(&b.concurrency)
        )
    })
}

/// "input lengths differ" when two sweeps ran other sets of input lengths.
fn input_lens_differ(a: &Sweep, b: &Sweep) -> Option<String> {
    (distinct(&a.input_lens) != distinct(&b.input_lens)).then(|| {
        format!(
            "input lengths differ: {} vs {}",
            join(&a.input_lens),
            join(&b.input_lens)
        )
    })
}

/// "no concurrency level in common" when two sweeps share no concurrency level.
fn no_concurrency_in_common(a: &Sweep, b: &Sweep) -> Option<String> {
    distinct(&a.concurrency)
        .is_disjoint(&distinct(&b.concurrency))
        .then(|| {
            format!(
                "no concurrency level in common: {} vs {}",
                join(&a.concurrency),
                join(&b.concurrency)
            )
        })
}

/// "output lengths differ" when the sweeps asked for other numbers of output tokens.
fn output_len_mismatch(a: &Sweep, b: &Sweep) -> Option<String> {
    (a.output_len != b.output_len).then(|| {
        format!(
            "output lengths differ: {} vs {}",
            a.output_len, b.output_len
        )
    })
}

/// "length spreads differ" when the sweeps spread their prompt lengths otherwise.
fn length_spread_mismatch(a: &Sweep, b: &Sweep) -> Option<String> {
    (a.length_spread != b.length_spread).then(|| {
        format!(
            "length spreads differ: {} vs {}",
            spread_text(a.length_spread),
            spread_text(b.length_spread)
        )
    })
}

/// A length spread in words: `none` or `±10 %`.
pub(crate) fn spread_text(spread: Option<f64>) -> String {
    spread.map_or_else(
        || "none".to_string(),
        |f| format!("±{} %", fixed(f * 100.0, 0)),
    )
}

/// "shared prefix lengths differ" when the runs shared other numbers of prompt tokens.
fn shared_prefix_mismatch(ab: &Bundle, bb: &Bundle) -> Option<String> {
    let (a, b) = (ab.workload.shared_prefix_len, bb.workload.shared_prefix_len);
    (a != b).then(|| format!("shared prefix lengths differ: {a} vs {b}"))
}

/// "turns per conversation differ" when the sweeps' conversations had other numbers of turns.
fn turns_mismatch(a: &Sweep, b: &Sweep) -> Option<String> {
    let (ta, tb) = (turns(a), turns(b));
    (ta != tb).then(|| format!("turns per conversation differ (--turns): {ta} vs {tb}"))
}

/// Turns per conversation in a sweep: one more than the highest turn a request records, 1
/// when none records one.
fn turns(s: &Sweep) -> u32 {
    s.points
        .iter()
        .flat_map(|p| &p.requests)
        .filter_map(|r| r.turn)
        .max()
        .map_or(1, |t| t + 1)
}

/// "request extras differ" when the runs sent other `--extra-body` fields.
fn extra_body_mismatch(ab: &Bundle, bb: &Bundle) -> Option<String> {
    let extra = |v: &Option<serde_json::Value>| {
        v.as_ref()
            .map_or_else(|| "none".to_string(), |v| v.to_string())
    };
    (ab.workload.extra_body != bb.workload.extra_body).then(|| {
        format!(
            "request extras differ (--extra-body): {} vs {}",
            extra(&ab.workload.extra_body),
            extra(&bb.workload.extra_body)
        )
    })
}

/// "prompts differ" when the runs' prompts came from other datasets (by content: the same file
/// under another name is the same prompts), or one's were generated.
fn dataset_mismatch(ab: &Bundle, bb: &Bundle) -> Option<String> {
    let digest = |d: &Option<DatasetFacts>| d.as_ref().map(|d| d.sha256.clone());
    (digest(&ab.workload.dataset) != digest(&bb.workload.dataset)).then(|| {
        format!(
            "prompts differ (--dataset): {} vs {}",
            dataset_text(&ab.workload.dataset),
            dataset_text(&bb.workload.dataset)
        )
    })
}

/// Where prompts came from, in words: `generated prompts` or `chats.jsonl (sha256 0123456789ab)`
/// (the digest's first 12 characters).
pub(crate) fn dataset_text(d: &Option<DatasetFacts>) -> String {
    d.as_ref().map_or_else(
        || "generated prompts".to_string(),
        |d| {
            format!(
                "{} (sha256 {})",
                d.file,
                d.sha256.get(..12).unwrap_or(&d.sha256)
            )
        },
    )
}

/// "APIs differ" when both runs state their API and the two differ. An imported result that
/// does not say its API is compared, with the API row showing it.
fn api_mismatch(ab: &Bundle, bb: &Bundle) -> Option<String> {
    let stated = |api: Api| api != Api::Unknown;
    let (a, b) = (ab.target.api, bb.target.api);
    (stated(a) && stated(b) && a != b)
        .then(|| format!("APIs differ: {} vs {}", a.as_str(), b.as_str()))
}

pub(crate) fn join<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}
