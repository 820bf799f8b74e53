//! The commands: each a short list of named steps over the modules that do the work.

use std::process::ExitCode;
use std::time::Duration;

use std::path::PathBuf;

use anyhow::Context;
use llmsweep_shared::bundle::{Calibration, PointStatus, SweepKind};

use clap::Parser;

use crate::cli::{
    Cli, Command, CompareArgs, DemoArgs, ImportArgs, ImportFormat, PlotArgs, ReportArgs, SimArgs,
    ThroughputArgs, ViewArgs,
};
use crate::loadgen::Interrupt;
use crate::plan::{ContextPlan, RunPlan, ThroughputPlan, redacted_command_line};
use crate::session::Session;
use crate::sim::{Preset, SimConfig, SimServer};
use crate::sweep;

/// Seconds requests in flight get to finish after the first Ctrl-C.
const GRACE: Duration = Duration::from_secs(5);

/// Runs a parsed command line; errors are printed with their context and exit with code 2.
pub async fn run(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Throughput(a) => throughput(a, command_line()).await,
        Command::Context(a) => match ContextPlan::from_args(&a) {
            Ok(plan) => sweep_command(plan.into(), command_line()).await,
            Err(e) => Err(e),
        },
        Command::Run(a) => match RunPlan::from_args(&a) {
            Ok(plan) => sweep_command(plan, command_line()).await,
            Err(e) => Err(e),
        },
        Command::Compare(a) => compare(a),
        Command::Report(a) => report(a),
        Command::Import(a) => import(a),
        Command::View(a) => view(a).await,
        Command::Plot(a) => plot(a),
        Command::Demo(a) => demo(a).await,
        Command::ServeSim(a) => serve_sim(a).await,
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn command_line() -> Vec<String> {
    redacted_command_line(std::env::args())
}

/// `llmsweep throughput`: plan, run, report where the bundle is.
pub async fn throughput(
    args: ThroughputArgs,
    command_line: Vec<String>,
) -> anyhow::Result<ExitCode> {
    let plan = ThroughputPlan::from_args(&args)?;
    sweep_command(plan.into(), command_line).await
}

/// Runs a checked plan with Ctrl-C handling and reports the outcome.
async fn sweep_command(plan: RunPlan, command_line: Vec<String>) -> anyhow::Result<ExitCode> {
    let outcome = run_plan(&plan, command_line, watch_ctrl_c()).await?;
    Ok(outcome.report())
}

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

/// A throughput sweep on its own (the library entry the tests use).
pub async fn run_throughput(
    plan: &ThroughputPlan,
    command_line: Vec<String>,
    interrupt: Interrupt,
) -> anyhow::Result<Outcome> {
    run_plan(&plan.clone().into(), command_line, interrupt).await
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
    if let Some(t) = &plan.throughput {
        sweep::throughput(&mut s, t).await?;
    }
    if let Some(c) = &plan.context {
        if plan.throughput.is_some() {
            println!();
        }
        sweep::context(&mut s, c).await?;
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

fn print_target(s: &Session) {
    let t = &s.bundle.target;
    let engine = match (&t.engine, &t.engine_version) {
        (Some(e), Some(v)) => format!("{e} {v}"),
        (Some(e), None) => e.clone(),
        _ => "engine unknown".into(),
    };
    let mut limits = Vec::new();
    if let Some(c) = t.max_context {
        limits.push(format!("context {c}"));
    }
    if let Some(r) = t.max_running_requests {
        limits.push(format!("max running {r}"));
    }
    let limits = if limits.is_empty() {
        String::new()
    } else {
        format!(", {}", limits.join(", "))
    };
    println!("llmsweep {} → {} ({engine}{limits})", s.bundle.label, t.url);
    let calibration = match s.bundle.workload.calibration {
        Calibration::Tokenizer => "prompt lengths from the server's tokenizer",
        Calibration::Usage => {
            "prompt lengths estimated from the server's usage (no tokenizer endpoint)"
        }
        Calibration::None | Calibration::Unknown => {
            "prompt lengths estimated at one token per word"
        }
    };
    println!(
        "model {} · api {} · {calibration} · seed {}",
        t.model,
        t.api.as_str(),
        s.bundle.workload.seed
    );
    if t.simulated {
        println!(
            "note: this server is llmsweep's simulator; its numbers describe a model, not hardware"
        );
    }
    println!();
}

/// First Ctrl-C: stop sending and give requests in flight [`GRACE`] to finish. Second: abort now.
fn watch_ctrl_c() -> Interrupt {
    let interrupt = Interrupt::default();
    let i = interrupt.clone();
    tokio::spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            if i.stop_sending.is_cancelled() {
                i.abort.cancel();
                return;
            }
            crate::output::note_line(&format!(
                "stopping: no new requests; waiting up to {} s for those in flight (Ctrl-C again to abort them)",
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

/// `llmsweep demo`: the simulator on a free loopback port, a short sweep against it.
pub async fn demo(a: DemoArgs) -> anyhow::Result<ExitCode> {
    let sim = SimServer::start(demo_sim(), 0)
        .await
        .context("cannot start the simulated server on 127.0.0.1")?;
    println!(
        "demo: llmsweep's simulated server (a test instrument with known timing, not a real engine) on {}\n",
        sim.url()
    );
    let url = sim.url();
    let out = a.out.to_string_lossy().to_string();
    let args = [
        "llmsweep",
        "run",
        "--url",
        &url,
        "--label",
        &a.label,
        "--out",
        &out,
        "--seed",
        "1",
        "--note",
        "server=llmsweep serve-sim (simulated)",
        "--timeout",
        "60",
        "--concurrency",
        "1,2,4,8,16,32,64",
        "--input-len",
        "512",
        "--output-len",
        "128",
        "--lengths",
        "1k,4k,8k,16k,30k,60k",
        "--context-output-len",
        "32",
        "--repeats",
        "2",
    ];
    let plan = match Cli::try_parse_from(args).map(|c| c.command) {
        Ok(Command::Run(r)) => RunPlan::from_args(&r)?,
        _ => anyhow::bail!("the demo's own command line does not parse"),
    };
    let code = sweep_command(plan, command_line()).await;
    sim.shutdown().await;
    let code = code?;
    if code == ExitCode::SUCCESS {
        println!(
            "\nLook at it:                llmsweep view {out} --open\n\
             Point it at a real server: llmsweep run --url http://127.0.0.1:30000 --label myhost"
        );
    }
    Ok(code)
}

/// The demo's simulator: the fast preset's decoding with a prefill curve that grows with context
/// like a real deployment's (20 ms + 20 µs/token + 2e-10 s/token²), so the context sweep has a
/// shape to show; 32K context, so the 60K length is skipped and predicted.
fn demo_sim() -> SimConfig {
    SimConfig {
        prefill_a_s: 0.020,
        prefill_b_s: 20e-6,
        prefill_c_s: 2e-10,
        ..SimConfig::preset(Preset::Fast)
    }
}

/// `llmsweep report`: read every bundle (refusing bad ones by name), write the page atomically.
fn report(a: ReportArgs) -> anyhow::Result<ExitCode> {
    let runs = a
        .files
        .iter()
        .map(|f| {
            let bundle = crate::compare::read_bundle(f)?;
            let name = f.file_name().map_or_else(
                || f.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            Ok(crate::report::Embedded { name, bundle })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let html = crate::report::render(&runs)?;
    let tmp = a.output.with_extension("html.tmp");
    std::fs::write(&tmp, &html)
        .and_then(|()| std::fs::rename(&tmp, &a.output))
        .with_context(|| format!("cannot write the report {} (-o)", a.output.display()))?;
    println!(
        "report: {} ({} KB, {} run{}; opens offline in any browser)",
        a.output.display(),
        html.len() / 1024,
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    );
    Ok(ExitCode::SUCCESS)
}

/// `llmsweep import`: read the files, write the bundle atomically, say what was left out.
fn import(a: ImportArgs) -> anyhow::Result<ExitCode> {
    use crate::import::Format;
    let req = crate::import::Request {
        format: match a.from {
            ImportFormat::Table => Format::Table,
            ImportFormat::Vllm => Format::Vllm,
            ImportFormat::Sglang => Format::Sglang,
        },
        files: a.files,
        label: a.label,
        input_len: a.input_len,
        output_len: a.output_len,
        model: a.model,
        notes: a.notes.into_iter().collect(),
        command_line: command_line(),
    };
    let bundle = crate::import::import(&req)?;
    let path = match a.output {
        Some(p) => p,
        None => {
            let dir = std::path::Path::new("results");
            crate::store::check_out_dir(dir)?;
            crate::store::bundle_path(dir, &bundle.label, "imported", &chrono::Utc::now())
        }
    };
    crate::store::write_atomic(&path, &bundle)?;
    let src = bundle.source.as_ref();
    for note in src.map(|s| s.notes.as_slice()).unwrap_or_default() {
        eprintln!("note: {note}");
    }
    for s in &bundle.sweeps {
        let keys: Vec<String> = s
            .points
            .iter()
            .map(|p| match s.kind {
                SweepKind::Context => p.input_len.to_string(),
                _ => p.concurrency.to_string(),
            })
            .collect();
        let flagged = s.points.iter().filter(|p| !p.flags.is_empty()).count();
        println!(
            "{} sweep: {} point{} ({} {}){}",
            llmsweep_shared::compare::kind_name(s.kind),
            s.points.len(),
            if s.points.len() == 1 { "" } else { "s" },
            if s.kind == SweepKind::Context {
                "input"
            } else {
                "C"
            },
            keys.join(","),
            if flagged > 0 {
                format!(", {flagged} flagged")
            } else {
                String::new()
            }
        );
    }
    println!(
        "imported {} from {} as {:?}: {}",
        req.files.len().to_string()
            + if req.files.len() == 1 {
                " file"
            } else {
                " files"
            },
        src.map_or("?", |s| s.tool.as_str()),
        bundle.label,
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `llmsweep view`: check the folder, listen, say where, serve until Ctrl-C.
async fn view(a: ViewArgs) -> anyhow::Result<ExitCode> {
    let folder = std::sync::Arc::new(crate::view::Folder::open(&a.dir)?);
    let (listener, note) = crate::view::listen(crate::view::Listen {
        bind: a.bind,
        port: a.port,
    })
    .await?;
    let addr = listener.local_addr()?;
    if !a.bind.is_loopback() {
        eprintln!(
            "warning: listening on {addr}: anyone who can reach this machine can read every bundle in {} (there is no password)",
            folder.shown()
        );
    }
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let listing = {
        let f = std::sync::Arc::clone(&folder);
        tokio::task::spawn_blocking(move || f.listing())
            .await?
            .with_context(|| format!("cannot read the folder {}", folder.shown()))?
    };
    let url = crate::view::page_url(addr);
    let unreadable = listing.bundles.iter().filter(|b| b.error.is_some()).count();
    println!("llmsweep view: {url}");
    println!(
        "  {} — {} bundle{}{}; bundles added later appear when the page is reloaded",
        folder.shown(),
        listing.bundles.len(),
        if listing.bundles.len() == 1 { "" } else { "s" },
        if unreadable > 0 {
            format!(" ({unreadable} unreadable)")
        } else {
            String::new()
        }
    );
    println!("  Ctrl-C stops");
    if a.open
        && let Err(e) = crate::view::open_browser(&url)
    {
        eprintln!("warning: cannot open a browser ({e}); open {url} yourself");
    }
    crate::view::serve(listener, folder, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
    .with_context(|| format!("serving on {addr} failed"))?;
    println!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// `llmsweep plot`: draw one chart of the bundles into an SVG or PNG file; say where it went.
fn plot(a: PlotArgs) -> anyhow::Result<ExitCode> {
    let w = crate::plot::run(&a)?;
    for label in &w.left_out {
        eprintln!(
            "note: {label} has no {} sweep; it is left out of this chart",
            llmsweep_shared::compare::kind_name(w.sweep)
        );
    }
    println!(
        "chart: {} ({} {}x{}, {} KB, {} run{}: {})",
        w.path.display(),
        w.format.name(),
        w.size.0,
        w.size.1,
        w.bytes.div_ceil(1024),
        w.runs.len(),
        if w.runs.len() == 1 { "" } else { "s" },
        w.runs.join(", ")
    );
    Ok(ExitCode::SUCCESS)
}

/// `llmsweep compare`: print the comparison; with `--fail-if-slower`, exit 1 on a regression.
fn compare(a: CompareArgs) -> anyhow::Result<ExitCode> {
    if let Some(p) = a.fail_if_slower
        && !(p.is_finite() && p >= 0.0)
    {
        anyhow::bail!("--fail-if-slower takes a percentage such as 5, got {p}");
    }
    let req = crate::compare::CompareRequest {
        files: a.files,
        baseline: a.baseline,
        fail_if_slower: a.fail_if_slower,
    };
    let (text, regressions) = crate::compare::run(&req)?;
    print!("{text}");
    let Some(pct) = a.fail_if_slower else {
        return Ok(ExitCode::SUCCESS);
    };
    if regressions.is_empty() {
        println!("\nno level is more than {pct} % slower than the baseline");
        return Ok(ExitCode::SUCCESS);
    }
    println!("\nslower than the baseline by more than {pct} %:");
    for r in &regressions {
        println!("  {r}");
    }
    Ok(ExitCode::from(1))
}

/// `llmsweep serve-sim`: serve until Ctrl-C.
pub async fn serve_sim(a: SimArgs) -> anyhow::Result<ExitCode> {
    let cfg = sim_config(&a);
    let ip: std::net::IpAddr = a
        .host
        .parse()
        .with_context(|| format!("--host {:?} is not an IP address, e.g. 127.0.0.1", a.host))?;
    if !ip.is_loopback() {
        eprintln!("warning: serving on {ip}, reachable from other machines");
    }
    let listener = tokio::net::TcpListener::bind((ip, a.port))
        .await
        .with_context(|| format!("cannot listen on {ip}:{} (--host, --port)", a.port))?;
    let addr = listener.local_addr()?;
    println!(
        "llmsweep serve-sim ({} preset, model {}): simulated server, not a real engine — http://{addr}",
        a.preset.name(),
        cfg.model
    );
    crate::sim::serve(cfg, listener, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(ExitCode::SUCCESS)
}

/// The simulator configuration the `serve-sim` flags ask for.
fn sim_config(a: &SimArgs) -> SimConfig {
    let mut cfg = SimConfig::preset(a.preset);
    cfg.seed = a.seed;
    cfg.max_context = a.max_context.unwrap_or(cfg.max_context);
    cfg.max_running = a.max_running.unwrap_or(cfg.max_running).max(1);
    cfg.early_stop_after = a.early_stop_after;
    cfg.overshoot = a.overshoot;
    cfg.fail_every = a.fail_every;
    cfg.reject_all = a.reject_all;
    cfg.cached_tokens = a.cached_tokens;
    cfg.repeat_word = a.repeat_word.clone();
    cfg.no_usage = a.no_usage;
    cfg.tokens_per_chunk = a.tokens_per_chunk.max(1);
    cfg.no_tokenize = a.no_tokenize;
    cfg
}
