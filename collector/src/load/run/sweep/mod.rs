//! Sweeps: each runs its points through the one point measurer ([`point`]), adds them to the
//! bundle and tells them as events. [`closed`] is the throughput sweep over concurrency levels,
//! [`rate`] the open loop over offered rates and the max-rate search, [`context`] the sweep over
//! input lengths with its prefill fit.

pub(crate) mod closed;
pub(crate) mod context;
pub(crate) mod point;
pub(crate) mod rate;

use crate::load::plan::{OpenPlan, ThroughputPlan};
use crate::load::run::session::Session;

pub(crate) use context::context;

/// Runs a throughput plan: its concurrency levels (once per shape with `--shapes`), or its open
/// loop's rates, or the search for the highest rate that meets the SLO.
pub(crate) async fn throughput(
    s: &mut Session,
    plan: &ThroughputPlan,
    warmup: u64,
) -> anyhow::Result<()> {
    match &plan.open {
        Some(
            open @ OpenPlan {
                search: Some(search),
                ..
            },
        ) => rate::find_max_rate(s, plan, open, *search, warmup).await,
        Some(open) => rate::rates(s, plan, open, warmup).await,
        None => {
            // The warm-up is recorded with the first shape's sweep, which it preceded.
            for (i, shape) in plan.per_shape().iter().enumerate() {
                if s.gave_up || s.interrupt.is_stopped() {
                    break;
                }
                closed::levels(s, shape, if i == 0 { warmup } else { 0 }).await?;
            }
            Ok(())
        }
    }
}
