//! One run from its plan to its bundle: open the session, warm up, run the sweeps, write the
//! final bundle.

use std::path::PathBuf;
use std::process::ExitCode;

use llmsweep_shared::bundle::{PointStatus, SweepKind};

use super::generator::{Interrupt, Signal};
use super::plan::{RunPlan, Sweeps};
use super::session::Session;
use super::sweep;
use crate::output::terminal::print_target;

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
}

impl Outcome {
    /// Says where the bundle is. Exit status: 128 + the signal's number when interrupted (130
    /// for Ctrl-C, 143 for SIGTERM), 1 when a level could not be measured, else 0.
    pub fn report(&self) -> ExitCode {
        if self.interrupted {
            eprintln!(
                "interrupted: the results so far are in {} (\"complete\": false)",
                self.path.display()
            );
            return ExitCode::from(self.signal.map_or(130, Signal::exit_code));
        }
        println!("\nbundle: {}", self.path.display());
        if self.points_ok == 0 {
            eprintln!(
                "error: no level had a successful request; the server's errors are in the table above and in the bundle"
            );
            return ExitCode::from(1);
        }
        if !self.failed.is_empty() {
            eprintln!(
                "error: {} level{} could not be measured: {} (the reasons are in the table above and in the bundle)",
                self.failed.len(),
                if self.failed.len() == 1 { "" } else { "s" },
                self.failed.join(", ")
            );
            return ExitCode::from(1);
        }
        ExitCode::SUCCESS
    }
}

/// Opens the session, warms up, runs the plan's sweeps, and writes the final bundle.
pub async fn run_plan(
    plan: &RunPlan,
    command_line: Vec<String>,
    interrupt: Interrupt,
) -> anyhow::Result<Outcome> {
    let mut s = Session::open(
        &plan.target,
        &plan.output,
        plan.kind(),
        plan.pool(),
        command_line,
        interrupt,
    )
    .await?;
    if let Some(r) = &plan.resume {
        s.adopt(r.clone());
    }
    print_target(&s);
    let (input_len, output_len) = plan.warmup_shape();
    s.warmup(plan.warmup, input_len, output_len).await;
    for note in &s.notes {
        eprintln!("note: {note}");
    }
    // The warm-up is recorded with the sweep it preceded.
    match &plan.sweeps {
        Sweeps::Throughput(t) => sweep::throughput(&mut s, t, plan.warmup).await?,
        Sweeps::Context(c) => sweep::context(&mut s, c, plan.warmup).await?,
        Sweeps::Both(t, c) => {
            sweep::throughput(&mut s, t, plan.warmup).await?;
            println!();
            sweep::context(&mut s, c, 0).await?;
        }
    }
    finish(s)
}

/// Marks the bundle complete unless interrupted and writes it.
fn finish(mut s: Session) -> anyhow::Result<Outcome> {
    let interrupted = s.interrupt.is_stopped();
    // Interrupted, or stopped because the server went away: not every level was run.
    s.bundle.complete = !interrupted && !s.gave_up;
    s.refresh_digest();
    s.final_write()?;
    let points = || {
        s.bundle
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
        path: s.path,
        interrupted,
        points_ok,
        failed,
    })
}
