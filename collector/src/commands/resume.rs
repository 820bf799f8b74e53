//! `--resume BUNDLE`: finish an interrupted run with its own settings, into the same bundle.
//!
//! The bundle's recorded command line is parsed again, so the levels, lengths, seed and
//! everything else that defines the work are the bundle's. Flags given now may say how to reach
//! the server (its URL, credentials, timeouts), which the bundle does not keep in clear; a flag
//! that defines the work must agree with the bundle, or the resume is refused.

use std::path::Path;

use anyhow::bail;
use clap::Parser;

use crate::cli::Cli;
use crate::load::{Resume, RunPlan, Sweeps};
use crate::store;

/// The plan that finishes `path`: the bundle's own, reached the way `now` (this command line,
/// `--resume` and all) says. Every refusal names the flag or the file to fix.
pub fn plan(path: &Path, now: &[String]) -> anyhow::Result<RunPlan> {
    let bundle = store::read_bundle(path)?;
    let shown = path.display();
    if bundle.is_imported() {
        bail!("--resume {shown}: an imported bundle was not measured here and cannot be resumed");
    }
    if bundle.complete {
        bail!(
            "--resume {shown}: the run is complete, nothing is left to measure; run again without --resume for a new one"
        );
    }
    let recorded = &bundle.tool.command_line;
    let (Some(was), Some(is)) = (subcommand(recorded), subcommand(now)) else {
        bail!(
            "--resume {shown}: the bundle does not record the sweep command that wrote it, so its settings are unknown"
        );
    };
    if was != is {
        bail!(
            "--resume {shown}: the bundle was written by `llmsweep {was}`; resume it with `llmsweep {was} --resume {shown}`"
        );
    }
    let then = parse(recorded).map_err(|e| {
        anyhow::anyhow!("--resume {shown}: its recorded command line no longer parses: {e:#}")
    })?;
    let given: Vec<String> = without_resume(now);
    let current = parse(&given)?;
    let explicit = flags_of(&given);
    let contradictions = contradictions(&then, &current, &explicit, is);
    if !contradictions.is_empty() {
        bail!(
            "--resume {shown}: {} contradict{} the bundle's own settings; leave {} out to resume, or start a new run without --resume",
            contradictions.join(", "),
            if contradictions.len() == 1 { "s" } else { "" },
            if contradictions.len() == 1 {
                "it"
            } else {
                "them"
            },
        );
    }
    let url_given = explicit.iter().any(|f| f == "--url");
    if !url_given && bundle.target.url.contains("***") {
        bail!(
            "--resume {shown}: the bundle's URL had credentials, which are never written down; give --url (and --header) again"
        );
    }
    let mut plan = then;
    // How to reach the server is today's; what to measure is the bundle's.
    plan.target = current.target;
    if !url_given {
        plan.target.url = bundle.target.url.clone();
    }
    plan.target.model = Some(bundle.target.model.clone());
    // The extra request fields are part of the work: the bundle's.
    plan.target.extra_body = match &bundle.workload.extra_body {
        Some(serde_json::Value::Object(m)) => Some(m.clone()),
        _ => None,
    };
    plan.output.label = bundle.label.clone();
    plan.output.out = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    plan.output.seed = bundle.workload.seed;
    // The prompts' prefixes stay this session's own (a new random seed), not the bundle's: the
    // server may hold the interrupted run's prompts in its cache. Each point says its seed.
    plan.output.prefix_seed = current.output.prefix_seed;
    plan.output.wide = current.output.wide;
    plan.resume = Some(Resume {
        path: path.to_path_buf(),
        bundle,
    });
    Ok(plan)
}

fn parse(argv: &[String]) -> anyhow::Result<RunPlan> {
    let cli = Cli::try_parse_from(argv).map_err(|e| anyhow::anyhow!("{}", e.to_string().trim()))?;
    match cli.command.sweep_plan() {
        Some(plan) => plan,
        None => bail!("not a sweep command"),
    }
}

/// The flags given now (`explicit`) that define the work and disagree with the bundle's run,
/// each with the bundle's value.
fn contradictions(
    then: &RunPlan,
    current: &RunPlan,
    explicit: &[String],
    command: &str,
) -> Vec<String> {
    let bundle_has = settings(then, command);
    settings(current, command)
        .into_iter()
        .filter(|(flag, _)| explicit.iter().any(|f| f == flag))
        .filter_map(
            |(flag, now)| match bundle_has.iter().find(|(f, _)| *f == flag) {
                Some((_, was)) if *was == now => None,
                Some((_, was)) => Some(format!("{flag} {now} (the bundle's is {was})")),
                None => Some(format!("{flag} {now} (the bundle's run has no such sweep)")),
            },
        )
        .collect()
}

/// `throughput`, `context` or `run`: the first word of `argv` that is one.
fn subcommand(argv: &[String]) -> Option<&'static str> {
    argv.iter().skip(1).find_map(|a| {
        ["throughput", "context", "run"]
            .into_iter()
            .find(|c| a == c)
    })
}

/// `argv` without `--resume PATH` / `--resume=PATH`.
fn without_resume(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in argv {
        if skip {
            skip = false;
        } else if a == "--resume" {
            skip = true;
        } else if !a.starts_with("--resume=") {
            out.push(a.clone());
        }
    }
    out
}

/// The long flags `argv` gives, without their values.
fn flags_of(argv: &[String]) -> Vec<String> {
    argv.iter()
        .filter(|a| a.starts_with("--"))
        .map(|a| a.split('=').next().unwrap_or(a).to_string())
        .collect()
}

/// What defines a run's work, each with the flag that sets it in `command`.
fn settings(p: &RunPlan, command: &str) -> Vec<(&'static str, String)> {
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let opt = |v: Option<String>| v.unwrap_or_else(|| "the default".into());
    let mut out = vec![
        ("--seed", p.output.seed.to_string()),
        ("--api", format!("{:?}", p.target.api).to_lowercase()),
        ("--model", opt(p.target.model.clone())),
        ("--label", p.output.label.clone()),
        ("--warmup", p.warmup.to_string()),
    ];
    let (t, c) = match &p.sweeps {
        Sweeps::Throughput(t) => (Some(t), None),
        Sweeps::Context(c) => (None, Some(c)),
        Sweeps::Both(t, c) => (Some(t), Some(c)),
    };
    if command == "run" {
        out.push(("--only", p.kind().to_string()));
    }
    if let Some(t) = t {
        out.extend([
            ("--concurrency", list(&t.concurrency)),
            ("--input-len", t.input_len.to_string()),
            ("--output-len", t.output_len.to_string()),
            ("--requests", opt(t.requests.map(|n| n.to_string()))),
            (
                "--duration",
                opt(t.duration.map(|d| format!("{}", d.as_secs_f64()))),
            ),
            ("--repeats", t.repeats.to_string()),
            (
                "--precision",
                opt(t.precision.map(|p| format!("{}", p.steady_pct))),
            ),
            (
                "--max-level-time",
                opt(t.precision.map(|p| format!("{}", p.cap.as_secs_f64()))),
            ),
        ]);
    }
    if let Some(c) = c {
        let (conc, len, rep) = if command == "run" {
            (
                "--context-concurrency",
                "--context-output-len",
                "--context-repeats",
            )
        } else {
            ("--concurrency", "--output-len", "--repeats")
        };
        let lengths = c.lengths.iter().map(u64::to_string).collect::<Vec<_>>();
        out.extend([
            ("--lengths", lengths.join(",")),
            (len, c.output_len.to_string()),
            (conc, list(&c.concurrency)),
            (rep, c.repeats.to_string()),
            ("--force", c.force.to_string()),
        ]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_resume_flag_and_its_value_are_taken_out() {
        let a = argv("llmsweep throughput --resume r/x.json --timeout 5 --resume=y");
        assert_eq!(without_resume(&a), argv("llmsweep throughput --timeout 5"));
        assert_eq!(
            flags_of(&argv("llmsweep run --url=http://h --concurrency 1,2")),
            ["--url", "--concurrency"]
        );
        assert_eq!(subcommand(&argv("/bin/llmsweep run --url x")), Some("run"));
        assert_eq!(subcommand(&argv("llmsweep compare a b")), None);
    }
}
