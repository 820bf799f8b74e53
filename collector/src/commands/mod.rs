//! The commands, one file each: its flags (a clap `Args` struct) and its handler, a short list
//! of named steps over the modules that do the work. [`run`] only dispatches.

pub(crate) mod args;
pub(crate) mod compare;
pub(crate) mod context;
pub(crate) mod demo;
pub(crate) mod export;
pub(crate) mod history;
pub(crate) mod import;
pub(crate) mod plan;
pub(crate) mod plot;
pub(crate) mod report;
pub(crate) mod resume;
pub(crate) mod run;
pub(crate) mod selftest;
pub(crate) mod serve_sim;
pub(crate) mod throughput;
pub(crate) mod view;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

pub use resume::plan as resume_plan;

use crate::cli::{Cli, Command};
use crate::load::{Interrupt, Outcome, RunPlan, Signal, redacted_command_line, run_plan};
use crate::output::terminal::Printer;

/// Seconds requests in flight get to finish after the first Ctrl-C.
const GRACE: Duration = Duration::from_secs(5);

/// Runs a parsed command line; errors are printed with their context and exit with code 2.
pub async fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Throughput(a) => throughput::run(a).await,
        Command::Context(a) => context::run(a).await,
        Command::Run(a) => run::run(a).await,
        Command::Compare(a) => compare::run(a),
        Command::Report(a) => report::run(a),
        Command::Import(a) => import::run(a),
        Command::Export(a) => export::run(a),
        Command::View(a) => view::run(a).await,
        Command::Plot(a) => plot::run(a),
        Command::History(a) => history::run(a).await,
        Command::Push(a) => history::push(a).await,
        Command::Index(a) => history::index(a).await,
        Command::Demo(a) => demo::run(a).await,
        Command::ServeSim(a) => serve_sim::run(a).await,
        Command::Selftest(a) => selftest::run(a).await,
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // An error may quote a server (a model id, a redirect's target, its error text).
            let text = format!("{e:#}");
            errln!("error: {}", crate::output::terminal::inert(&text));
            // A signal before the first request is a signal's exit, not a usage error.
            match e.downcast_ref::<crate::load::Stopped>() {
                Some(stopped) => ExitCode::from(stopped.0.exit_code()),
                None => ExitCode::from(2),
            }
        }
    }
}

/// The command line as typed, secrets redacted, for the bundle.
fn command_line() -> Vec<String> {
    redacted_command_line(std::env::args())
}

/// The plan `plan` makes, or with `--resume` the plan that finishes that bundle.
fn plan_or_resume(
    output: &args::OutputArgs,
    plan: impl FnOnce() -> anyhow::Result<RunPlan>,
) -> anyhow::Result<RunPlan> {
    match &output.resume {
        Some(path) => resume::plan(path, &std::env::args().collect::<Vec<_>>()),
        None => plan(),
    }
}

/// Runs a checked sweep plan with signal handling and reports the outcome.
async fn sweep(plan: RunPlan) -> anyhow::Result<ExitCode> {
    plan.check_workload()?;
    let printer = Arc::new(Printer::new(plan.output.wide));
    let outcome = run_plan(&plan, command_line(), watch_signals(), printer).await?;
    Ok(report(&outcome))
}

/// The exit status of a run whose bundle is complete in the local folder but not in the bucket
/// `--out s3://…` named (missing, an older version, or refused): a CI job that keeps results in
/// a bucket can tell it from a slow level (1) and act on it.
pub const EXIT_NOT_IN_BUCKET: u8 = 4;

/// Says where the bundle is, naming only copies that hold its final bytes. Exit status: 128 +
/// the signal's number when interrupted (130 for Ctrl-C, 143 for SIGTERM), also when the signal
/// came while the bundle was being uploaded; [`EXIT_NOT_IN_BUCKET`] when the bucket does not
/// hold the final bundle; 1 when a level could not be measured; else 0.
fn report(o: &Outcome) -> ExitCode {
    use crate::store::upload::Copy;
    let copy = match &o.copy {
        Some(Copy::Uploaded(url)) => format!(" and {url}"),
        Some(Copy::Missing { .. }) | None => String::new(),
    };
    if let Some(Copy::Missing { url, why }) = &o.copy {
        errln!(
            "warning: the bundle is not in the bucket ({}); it is in {} only: `llmsweep push {} --to {}` copies it there",
            crate::output::terminal::inert(why),
            o.path.display(),
            o.path.display(),
            url.rsplit_once('/').map_or(url.as_str(), |(p, _)| p)
        );
    }
    if let (Some(sig), false) = (o.signal, o.interrupted) {
        // The run ended by itself; the signal came while its bundle was being uploaded.
        errln!(
            "{}: stopped while uploading: the bundle is complete in {}{copy}",
            sig.name(),
            o.path.display()
        );
        return ExitCode::from(sig.exit_code());
    }
    if o.interrupted {
        errln!(
            "interrupted: the results so far are in {}{copy} (\"complete\": false)",
            o.path.display()
        );
        return ExitCode::from(o.signal.map_or(130, Signal::exit_code));
    }
    outln!("\nbundle: {}{copy}", o.path.display());
    if matches!(o.copy, Some(Copy::Missing { .. })) {
        return ExitCode::from(EXIT_NOT_IN_BUCKET);
    }
    if o.points_ok == 0 && o.failed.is_empty() {
        errln!("error: no level was measured; the lines above say why");
        return ExitCode::from(1);
    }
    if o.points_ok == 0 {
        errln!(
            "error: no level had a successful request; the server's errors are in the table above and in the bundle"
        );
        return ExitCode::from(1);
    }
    if !o.failed.is_empty() {
        errln!(
            "error: {} level{} could not be measured: {} (the reasons are in the table above and in the bundle)",
            o.failed.len(),
            if o.failed.len() == 1 { "" } else { "s" },
            o.failed.join(", ")
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// The first Ctrl-C, SIGTERM or SIGHUP: stop sending and give requests in flight [`GRACE`] to
/// finish, then write the bundle as incomplete. A second signal: abort them now.
fn watch_signals() -> Interrupt {
    let interrupt = Interrupt::default();
    let i = interrupt.clone();
    tokio::spawn(async move {
        let mut signals = Signals::new();
        while let Some(sig) = signals.next().await {
            if i.stop_sending.is_cancelled() {
                crate::output::terminal::note_line(&format!(
                    "{}: aborting the requests in flight",
                    sig.name()
                ));
                i.abort.cancel();
                return;
            }
            let _ = i.signal.set(sig);
            crate::output::terminal::note_line(&format!(
                "{}: stopping: no new requests; waiting up to {} s for those in flight (Ctrl-C again to abort them)",
                sig.name(),
                GRACE.as_secs()
            ));
            i.stop_sending.cancel();
            let abort = i.abort.clone();
            tokio::spawn(async move {
                tokio::time::sleep(GRACE).await;
                abort.cancel();
            });
        }
    });
    interrupt
}

/// The signals a run listens for.
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The next signal; `None` when none can be received any more.
    async fn next(&mut self) -> Option<Signal> {
        #[cfg(unix)]
        {
            async fn recv(s: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
                match s {
                    Some(s) => s.recv().await,
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                r = tokio::signal::ctrl_c() => r.ok().map(|()| Signal::Int),
                r = recv(&mut self.term) => r.map(|()| Signal::Term),
                r = recv(&mut self.hup) => r.map(|()| Signal::Hup),
            }
        }
        #[cfg(not(unix))]
        {
            tokio::signal::ctrl_c().await.ok().map(|()| Signal::Int)
        }
    }
}
