//! The context sweep: every length at every concurrency, lengths beyond the server's context
//! skipped with the reason, then the prefill curve fitted to predict them.

use llmsweep_shared::bundle::{FlagKind, Point, PointStatus, Sweep, SweepKind};
use llmsweep_shared::metrics::{PrefillFit, fit_prefill};

use crate::load::events::Event;
use crate::load::plan::ContextPlan;
use crate::load::run::generator::{LoadSpec, StopRule};
use crate::load::run::session::Session;

use super::point::{
    empty_point, gave_up, measure, resuming_note, stop_when_refused_from_the_start, stream_id,
};

/// Runs a context sweep: every length at every concurrency; lengths that cannot fit the server's
/// context are skipped with the reason, then the prefill curve is fitted and predicts them.
pub(crate) async fn context(
    s: &mut Session,
    plan: &ContextPlan,
    warmup: u64,
) -> anyhow::Result<()> {
    if s.gave_up {
        return Ok(());
    }
    let sweep = s.start_sweep(
        None,
        Sweep {
            kind: SweepKind::Context,
            concurrency: plan.concurrency.clone(),
            input_lens: plan.lengths.clone(),
            output_len: plan.output_len,
            requests: None,
            duration_s: None,
            warmup,
            timeout_s: s.options.timeout.as_secs_f64(),
            repeats: Some(plan.repeats),
            prefill_fit: None,
            preopened: Some(s.options.preopen),
            rate: None,
            slo: None,
            length_spread: None,
            precision: None,
            points: Vec::new(),
        },
    );
    let max_context = s.writer.bundle().target.max_context;
    let have: Vec<String> = plan
        .lengths
        .iter()
        .flat_map(|&len| plan.concurrency.iter().map(move |&c| (len, c)))
        .filter(|&(len, c)| s.writer.point(sweep, c, len).is_some())
        .map(|(len, c)| format!("{len} tokens at C={c}"))
        .collect();
    resuming_note(s, &have);
    'lengths: for &len in &plan.lengths {
        for &c in &plan.concurrency {
            if let Some(p) = s.writer.point(sweep, c, len) {
                s.tell(Event::Point {
                    kind: SweepKind::Context,
                    point: p,
                });
                continue;
            }
            let spec = spec(plan, len, c);
            let point = match too_long(&spec, max_context) {
                Some(reason) if !plan.force => skipped_point(&spec, reason),
                _ => match measure(s, spec, 1, format!("{len} tokens, C={c}")).await {
                    Some(p) => p,
                    None => break 'lengths,
                },
            };
            // This length and those after it. One refused whole says nothing of a shorter one
            // after it (`--lengths 8k,1k`).
            let from_here = || plan.lengths.iter().skip_while(move |&&l| l != len);
            if from_here().all(|&l| l >= len) {
                stop_when_refused_from_the_start(s, &point, &format!("{len} tokens, C={c}"));
            }
            s.tell(Event::Point {
                kind: SweepKind::Context,
                point: &point,
            });
            s.writer.add_point(sweep, point);
            if s.gave_up {
                let rest: Vec<String> =
                    from_here().skip(1).map(|l| format!("{l} tokens")).collect();
                gave_up(s, &rest);
                break 'lengths;
            }
        }
    }
    let order = |p: &Point| {
        let l = plan.lengths.iter().position(|&l| l == p.input_len);
        let c = plan.concurrency.iter().position(|&c| c == p.concurrency);
        (l, c)
    };
    s.writer.sweep_mut(sweep).points.sort_by_key(order);
    fit_context(s.writer.sweep_mut(sweep));
    s.writer.checkpoint();
    s.tell(Event::PrefillFit(s.writer.sweep(sweep)));
    if let Some(h) = llmsweep_shared::headline::headline(s.writer.sweep(sweep)) {
        s.tell(Event::Headline(&h));
    }
    Ok(())
}

/// The load of `len`-token prompts at concurrency `c`: `--repeats` requests per slot.
fn spec(plan: &ContextPlan, len: u64, c: u32) -> LoadSpec {
    LoadSpec {
        concurrency: c,
        stop: StopRule::Count(plan.repeats * c as u64),
        input_len: len,
        output_len: plan.output_len,
        stream: stream_id(SweepKind::Context, c, len),
        pass: None,
        open: None,
        spread: 0.0,
        turns: 1,
    }
}

/// Why a point cannot fit the server's context, when it cannot.
fn too_long(spec: &LoadSpec, max_context: Option<u64>) -> Option<String> {
    let needed = spec.input_len + spec.output_len;
    let ctx = max_context?;
    (needed > ctx).then(|| format!("needs {needed} tokens, server context is {ctx}"))
}

fn skipped_point(spec: &LoadSpec, reason: String) -> Point {
    Point {
        status: PointStatus::Skipped,
        reason: Some(reason),
        summary: None,
        started_at: None,
        ..empty_point(spec)
    }
}

/// Fits the prefill curve over the successful requests at the sweep's lowest concurrency (higher
/// ones add queueing to TTFT), stores it, and predicts the skipped points.
pub(crate) fn fit_context(sweep: &mut Sweep) -> Option<PrefillFit> {
    let c = sweep.concurrency.iter().copied().min()?;
    // A point served from the cache, stalled, or run on a busy host says nothing of prefill.
    let fitted = |p: &&Point| {
        p.concurrency == c
            && p.status == PointStatus::Ok
            && !p.flags.iter().any(|f| {
                matches!(
                    f.kind,
                    FlagKind::PrefixCache
                        | FlagKind::Stall
                        | FlagKind::HostBusy
                        | FlagKind::OtherTraffic
                )
            })
    };
    let samples: Vec<(u64, f64)> = sweep
        .points
        .iter()
        .filter(fitted)
        .flat_map(|p| &p.requests)
        .filter(|r| r.is_ok())
        .filter_map(|r| Some((r.prompt_tokens.unwrap_or(r.input_tokens), r.ttft_s?)))
        .collect();
    let fit = fit_prefill(&samples)?;
    // The longest prompt measured and its TTFT: a longer one cannot prefill sooner.
    let longest = samples
        .iter()
        .copied()
        .max_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    for p in sweep
        .points
        .iter_mut()
        .filter(|p| p.status == PointStatus::Skipped)
    {
        let t = fit.predict_s(p.input_len);
        match longest {
            Some((len, ttft)) if !(t.is_finite() && t >= ttft) => {
                let why = format!(
                    "no prediction: the prefill fit gives {t:.2} s, below the {ttft:.2} s measured at {len} tokens, which no longer prompt can be"
                );
                p.reason = Some(match p.reason.take() {
                    Some(r) => format!("{r}; {why}"),
                    None => why,
                });
            }
            _ => p.predicted_ttft_s = Some(t),
        }
    }
    sweep.prefill_fit = Some(fit);
    Some(fit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmsweep_shared::bundle::{Flag, RequestRecord};

    fn measured(len: u64, ttft: f64) -> Point {
        let mut p = Point::empty(1, len, 16);
        p.requests = (0..2)
            .map(|i| RequestRecord {
                prompt_tokens: Some(len),
                ..RequestRecord::test_ok(f64::from(i) * 10.0, ttft, ttft + 1.0, 16)
            })
            .collect();
        p
    }

    fn skipped(len: u64) -> Point {
        Point {
            status: PointStatus::Skipped,
            reason: Some("needs more tokens than the server's context".into()),
            ..Point::empty(1, len, 16)
        }
    }

    fn sweep(points: Vec<Point>) -> Sweep {
        let mut b = llmsweep_shared::Bundle::from_json(include_str!(
            "../../../../../shared/tests/fixtures/bundle-v1-run.json"
        ))
        .unwrap();
        let mut s = b.sweeps.remove(0);
        s.concurrency = vec![1];
        s.points = points;
        s
    }

    #[test]
    fn a_prediction_no_longer_prompt_could_have_is_refused_with_the_reason() {
        // 3000 tokens answered sooner than 1000 (a cache hit, unflagged): the line through them
        // falls below zero by 8000 tokens.
        let mut s = sweep(vec![
            measured(1000, 1.0),
            measured(3000, 0.25),
            skipped(8000),
        ]);
        let fit = fit_context(&mut s).unwrap();
        assert!(fit.predict_s(8000) < 0.0);
        let p = &s.points[2];
        assert_eq!(p.predicted_ttft_s, None);
        assert!(
            p.reason.as_deref().unwrap().ends_with(
                "no prediction: the prefill fit gives -1.62 s, below the 0.25 s measured at 3000 tokens, which no longer prompt can be"
            ),
            "{:?}",
            p.reason
        );
    }

    #[test]
    fn a_point_flagged_as_served_from_the_cache_is_left_out_of_the_fit() {
        let mut cached = measured(3000, 0.25);
        cached.flags.push(Flag {
            kind: FlagKind::PrefixCache,
            message: "cached".into(),
            count: Some(2),
        });
        let mut s = sweep(vec![
            measured(1000, 0.2),
            cached,
            measured(4000, 0.5),
            measured(8000, 0.9),
            skipped(16_000),
        ]);
        let fit = fit_context(&mut s).unwrap();
        assert_eq!((fit.samples, fit.lengths), (6, 3));
        assert!(s.points[4].predicted_ttft_s.unwrap() > 0.9);
    }
}
