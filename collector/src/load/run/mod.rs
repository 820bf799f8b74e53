//! How load is sent and measured: one run from its plan to its bundle. [`session`] reaches the
//! server, warms up and keeps the bundle; [`sweep`] runs the levels; [`generator`] is the closed
//! and the open loop; [`client`] sends one request ([`connect`] times its connection, [`api`]
//! shapes it) and [`stream`] turns its bytes into a request record.

use std::path::PathBuf;
use std::sync::Arc;

use llmsweep_shared::bundle::{PointStatus, SweepKind};

pub(crate) mod api;
pub(crate) mod body;
pub(crate) mod client;
pub(crate) mod connect;
pub(crate) mod generator;
pub(crate) mod lock;
pub(crate) mod session;
pub(crate) mod stream;
pub(crate) mod sweep;
pub(crate) mod writer;

use crate::load::events::{Event, Sink};
use crate::load::plan::{RunPlan, Sweeps};
use generator::{Interrupt, Signal};
use session::Session;

/// Where a run's bundle went and how the run ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub path: PathBuf,
    pub interrupted: bool,
    /// The signal that interrupted the run, when one did.
    pub signal: Option<Signal>,
    /// Points with at least one successful request.
    pub points_ok: usize,
    /// Points that could not be measured, as the table names them (`C=64`, `8000 tokens`).
    pub failed: Vec<String>,
    /// `--out s3://…`: where the bucket's copy is, or why there is none.
    pub copy: Option<crate::store::upload::Copy>,
}

/// How long the end of a run waits for its last checkpoint to reach a bucket.
const UPLOAD_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Opens the session, warms up, runs the plan's sweeps, and writes the final bundle.
pub async fn run_plan(
    plan: &RunPlan,
    command_line: Vec<String>,
    interrupt: Interrupt,
    events: Arc<dyn Sink>,
) -> anyhow::Result<Outcome> {
    let mut s = Session::open(
        &plan.target,
        &plan.output,
        plan.kind(),
        plan.pool(),
        command_line,
        plan.resume.as_ref(),
        interrupt,
        events,
    )
    .await?;
    if let Some(r) = &plan.resume {
        s.adopt(r)?;
    }
    s.tell(Event::Target {
        bundle: s.writer.bundle(),
        gpus_read: s.gpus_read(),
    });
    let max_context = s.writer.bundle().target.max_context;
    plan.check_fits(max_context)?;
    let (input_len, output_len) = plan.warmup_shape(max_context);
    let silent = s.warmup(plan.warmup, input_len, output_len).await;
    for note in &s.notes {
        s.note(&format!("note: {note}"));
    }
    if let Some(why) = silent {
        s.note(&format!("stopping: {why}"));
        s.gave_up = true;
    }
    // The warm-up is recorded with the sweep it preceded.
    match &plan.sweeps {
        Sweeps::Throughput(t) => sweep::throughput(&mut s, t, plan.warmup).await?,
        Sweeps::Context(c) => sweep::context(&mut s, c, plan.warmup).await?,
        Sweeps::Both(t, c) => {
            let stopped_before = s.gave_up;
            sweep::throughput(&mut s, t, plan.warmup).await?;
            if s.gave_up && !stopped_before {
                s.note("the context sweep is not run either");
            }
            sweep::context(&mut s, c, 0).await?;
        }
    }
    finish(s).await
}

/// Marks the bundle complete unless interrupted and writes it.
async fn finish(mut s: Session) -> anyhow::Result<Outcome> {
    let interrupted = s.interrupt.is_stopped();
    // Interrupted, or stopped because the server went away: not every level was run.
    let path = s.writer.finish(!interrupted && !s.gave_up)?;
    // A signal ends the wait for the bucket at once: the first one when the run ended by
    // itself, the second (or the end of the grace) when a signal had already stopped it.
    let cut = {
        let i = s.interrupt.clone();
        async move {
            if interrupted {
                i.abort.cancelled().await;
            } else {
                i.stop_sending.cancelled().await;
            }
            let by = i.signal.get().map_or("a signal", |s| s.name());
            format!("{by} stopped the upload")
        }
    };
    let copy = s.writer.settle_upload(UPLOAD_WAIT, cut).await;
    let bundle = s.writer.bundle();
    let points = || {
        bundle
            .sweeps
            .iter()
            .flat_map(|w| w.points.iter().map(move |p| (w, p)))
    };
    let points_ok = points()
        .filter(|(_, p)| p.status == PointStatus::Ok)
        .count();
    let failed = points()
        .filter(|(_, p)| p.status == PointStatus::Failed)
        .map(|(w, p)| match w.kind {
            SweepKind::Context => format!("{} tokens at C={}", p.input_len, p.concurrency),
            _ => format!("C={}", p.concurrency),
        })
        .collect();
    Ok(Outcome {
        signal: s.interrupt.signal.get().copied(),
        path,
        interrupted,
        points_ok,
        failed,
        copy,
    })
}
