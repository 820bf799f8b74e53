//! The context sweep: every length at every concurrency, lengths beyond the server's context
//! skipped with the reason, then the prefill curve fitted to predict them.

use llmsweep_shared::bundle::{Point, PointStatus, Sweep, SweepKind};
use llmsweep_shared::metrics::{PrefillFit, fit_prefill};

use crate::load::events::Event;
use crate::load::plan::ContextPlan;
use crate::load::run::generator::{LoadSpec, StopRule};
use crate::load::run::session::Session;

use super::point::{empty_point, gave_up, measure, resuming_note, stream_id};

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
    let sweep = s.start_sweep(Sweep {
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
    });
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
            s.tell(Event::Point {
                kind: SweepKind::Context,
                point: &point,
            });
            s.writer.add_point(sweep, point);
            if s.gave_up {
                gave_up(s, &[]);
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
    let samples: Vec<(u64, f64)> = sweep
        .points
        .iter()
        .filter(|p| p.concurrency == c && p.status == PointStatus::Ok)
        .flat_map(|p| &p.requests)
        .filter(|r| r.is_ok())
        .filter_map(|r| Some((r.prompt_tokens.unwrap_or(r.input_tokens), r.ttft_s?)))
        .collect();
    let fit = fit_prefill(&samples)?;
    for p in sweep
        .points
        .iter_mut()
        .filter(|p| p.status == PointStatus::Skipped)
    {
        p.predicted_ttft_s = Some(fit.predict_s(p.input_len));
    }
    sweep.prefill_fit = Some(fit);
    Some(fit)
}
