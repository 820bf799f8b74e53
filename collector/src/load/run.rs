//! One run from its plan to its bundle: open the session, warm up, run the sweeps, write the
//! final bundle.

use std::path::PathBuf;
use std::process::ExitCode;

use llmsweep_shared::bundle::PointStatus;

use super::generator::Interrupt;
use super::plan::{RunPlan, Sweeps};
use super::session::Session;
use super::sweep;
use crate::output::terminal::print_target;

/// Where a run's bundle went and how the run ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub path: PathBuf,
    pub interrupted: bool,
    /// Points with at least one successful request.
    pub points_ok: usize,
}

impl Outcome {
    /// Says where the bundle is; exit code 130 when interrupted, 1 when no point succeeded.
    pub fn report(&self) -> ExitCode {
        if self.interrupted {
            eprintln!(
                "interrupted: the results so far are in {} (\"complete\": false)",
                self.path.display()
            );
            return ExitCode::from(130);
        }
        println!("\nbundle: {}", self.path.display());
        if self.points_ok == 0 {
            eprintln!(
                "error: no level had a successful request; the server's errors are in the table above and in the bundle"
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
    s.bundle.complete = !interrupted;
    s.checkpoint()?;
    let points_ok = s
        .bundle
        .sweeps
        .iter()
        .flat_map(|w| &w.points)
        .filter(|p| p.status == PointStatus::Ok)
        .count();
    Ok(Outcome {
        path: s.path,
        interrupted,
        points_ok,
    })
}
