//! `--resume BUNDLE`: finish an interrupted run with its own settings, into the same bundle.
//!
//! The bundle's recorded command line is parsed again, so the levels, lengths, seed and
//! everything else that defines the work are the bundle's. Flags given now may say how to reach
//! the server (its URL, credentials, timeouts), which the bundle does not keep in clear; a flag
//! that defines the work must agree with the bundle, or the resume is refused.

use std::path::Path;

use anyhow::bail;
use clap::{CommandFactory, Parser};

use crate::cli::Cli;
use crate::load::{Resume, RunPlan, Sweeps};
use crate::store;

/// The plan that finishes `path`: the bundle's own, reached the way `now` (this command line,
/// `--resume` and all) says. Every refusal names the flag or the file to fix.
pub fn plan(path: &Path, now: &[String]) -> anyhow::Result<RunPlan> {
    if let Some(url) = path.to_str().filter(|p| store::bucket::is_bucket_url(p)) {
        return plan_from_bucket(url, now);
    }
    plan_of(path, now, None)
}

/// [`plan`] of the local bundle `path`; `bucket` is the bucket URL it was taken from, if any.
fn plan_of(path: &Path, now: &[String], bucket: Option<&str>) -> anyhow::Result<RunPlan> {
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
    check_dataset(&then, &bundle, &shown.to_string())?;
    let given: Vec<String> = without_resume(now);
    let explicit = given_flags(&given);
    refuse_other_work(&then, &bundle, path, recorded, &given, &explicit, is)
        .map_err(|e| anyhow::anyhow!("--resume {shown}: {e}"))?;
    let current = parse(&reach_only(&given))?;
    let url_given = explicit.iter().any(|f| f == "--url");
    if !url_given && bundle.target.url.contains("***") {
        bail!(
            "--resume {shown}: the bundle's URL had credentials, which are never written down; give --url (and --header) again"
        );
    }
    if !url_given && current.target.credentials.any() {
        refuse_keys_to_recorded(&bundle, bucket, &shown.to_string())?;
    }
    let mut plan = then;
    // How to reach the server is today's; what to send and measure is the bundle's.
    let reach = current.target;
    plan.target.credentials = reach.credentials;
    plan.target.timeout = reach.timeout;
    plan.target.wait_server = reach.wait_server;
    if url_given {
        plan.target.gpu_telemetry = reach.gpu_telemetry;
        plan.target.url = reach.url;
        plan.target.shown_url = reach.shown_url;
        plan.target.host = reach.host;
    } else {
        plan.target.url = bundle.target.url.clone();
    }
    if explicit.iter().any(|f| f == "--gpu-telemetry") {
        plan.target.gpu_telemetry = reach.gpu_telemetry;
    }
    plan.target.model = Some(bundle.target.model.clone());
    // The extra request fields are part of the work: the bundle's.
    plan.target.extra_body = match &bundle.workload.extra_body {
        Some(serde_json::Value::Object(m)) => Some(m.clone()),
        _ => None,
    };
    plan.output.label = bundle.label.clone();
    plan.output.out = folder_of(path);
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

/// `--resume s3://bucket/prefix/NAME.json`: the bucket's copy taken into `results/NAME.json`
/// (or the local copy there, when it is the same bytes), resumed there, and each checkpoint put
/// back into the bucket.
fn plan_from_bucket(url: &str, now: &[String]) -> anyhow::Result<RunPlan> {
    let Some((prefix, name)) = store::bucket::split_object(url) else {
        bail!("--resume {url}: name the bundle, s3://BUCKET/PREFIX/NAME.json");
    };
    let bucket = store::bucket::Bucket::open(&prefix)?;
    let owned = url.to_string();
    let (bytes, _) =
        store::bucket::block_on(async move { store::bucket::read_object(&owned).await })
            .map_err(|e| anyhow::anyhow!("--resume {url}: {e:#}"))?;
    let dir = Path::new("results");
    let local = dir.join(&name);
    let cap = llmsweep_shared::bundle::MAX_INFLATED_BYTES as u64;
    match crate::boundary::file::read(&local, cap) {
        Ok(held) if held == bytes.as_ref() => {}
        Ok(_) => bail!(
            "--resume {url}: {} is there already and is not the bucket's copy; resume it with --resume {} (its checkpoints then go to the bucket again), or move it away",
            local.display(),
            local.display()
        ),
        Err(_) => {
            store::check_out_dir(dir)?;
            store::write_file_atomic(&local, &bytes).map_err(|e| {
                anyhow::anyhow!("--resume {url}: cannot write {}: {e}", local.display())
            })?;
        }
    }
    let mut plan = plan_of(&local, now, Some(url))?;
    plan.output.store = Some(bucket);
    Ok(plan)
}

/// Refuses to send this run's API key, password or headers to the server a bundle records,
/// unless the bundle was written on this machine and not taken from a bucket: a bucket, or a
/// bundle from elsewhere, is a file others can write, and its URL would collect the key.
/// `--url` names the server, and then the key goes there.
fn refuse_keys_to_recorded(
    bundle: &llmsweep_shared::Bundle,
    bucket: Option<&str>,
    shown: &str,
) -> anyhow::Result<()> {
    let here = gethostname::gethostname().to_string_lossy().into_owned();
    let written = &bundle.hosts.client.hostname;
    let whence = match bucket {
        Some(url) => format!("comes from a bucket ({url}), which others can write"),
        None if *written != here => format!(
            "was written on {}, not on this machine",
            llmsweep_shared::text::one_line(written)
        ),
        None => return Ok(()),
    };
    let recorded =
        llmsweep_shared::text::one_line(&crate::boundary::http::redact_url(&bundle.target.url))
            .into_owned();
    bail!(
        "--resume {shown}: the bundle {whence}, so the server it records ({recorded}) is not sent your API key, password or headers unless you name it: give --url {recorded} (and --header again) if that is the server you mean"
    )
}

fn parse(argv: &[String]) -> anyhow::Result<RunPlan> {
    let cli = Cli::try_parse_from(argv).map_err(|e| anyhow::anyhow!("{}", e.to_string().trim()))?;
    match cli.command.sweep_plan() {
        Some(plan) => plan,
        None => bail!("not a sweep command"),
    }
}

/// Flags that say how to reach the server and how to show the run, not what it sends or
/// measures: given with `--resume`, they are this session's.
const REACH: &[&str] = &[
    "--url",
    "--api-key",
    "--header",
    "--timeout",
    "--wait-server",
    "--gpu-telemetry",
    "--wide",
    "--resume",
];

/// Refuses every flag given now (`explicit`) that would change the run's work: each is laid
/// over the bundle's recorded command line, and the run that makes is compared with the
/// bundle's, setting by setting. A flag that is neither a way to reach the server nor a setting
/// checked here is refused too, so none is ever silently ignored.
fn refuse_other_work(
    then: &RunPlan,
    bundle: &llmsweep_shared::Bundle,
    path: &Path,
    recorded: &[String],
    given: &[String],
    explicit: &[String],
    command: &str,
) -> anyhow::Result<()> {
    let mut then = then.clone();
    // What the bundle ran with, where the command line left it to the server or the host.
    then.target.model = Some(bundle.target.model.clone());
    then.output.label = bundle.label.clone();
    let work: Vec<&String> = explicit
        .iter()
        .filter(|f| !REACH.contains(&f.as_str()) && *f != "--out")
        .collect();
    let mut wrong = Vec::new();
    if explicit.iter().any(|f| f == "--out") {
        let out: Vec<String> = flag_groups(given)
            .into_iter()
            .filter(|(f, _)| f == "--out")
            .flat_map(|(_, w)| w)
            .collect();
        let now = parse(&[reach_only(given), out].concat())?.output.out;
        let folder = folder_of(path);
        let same = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        if same(&now) != same(&folder) {
            wrong.push((
                "--out".to_string(),
                format!(
                    "--out {} differs from the bundle's folder {}",
                    now.display(),
                    folder.display()
                ),
            ));
        }
    }
    if !work.is_empty() {
        let overlaid = overlay(recorded, given);
        let made = match parse(&overlaid) {
            Ok(p) => p,
            Err(e) => {
                let first = e.to_string();
                let first = first
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ");
                let names: Vec<&str> = work.iter().map(|f| f.as_str()).collect();
                bail!(
                    "{} cannot be combined with the bundle's own settings ({first}): resume continues the run as it was started; drop {} or start a new run without --resume",
                    names.join(", "),
                    and_list(&names),
                );
            }
        };
        let was = settings(&then, command);
        let now = settings(&made, command);
        for flag in work {
            let said = |list: &[(&'static str, String)]| {
                list.iter().find(|(f, _)| f == flag).map(|(_, v)| v.clone())
            };
            match (said(&now), said(&was)) {
                (Some(n), Some(w)) if n == w => {}
                (Some(_), Some(w)) if w == "off" => wrong.push((
                    flag.clone(),
                    format!("{flag} differs from the bundle's run, which was without it"),
                )),
                (Some(n), Some(w)) if w == "none" => wrong.push((
                    flag.clone(),
                    format!("{flag} {n} differs from the bundle's run, which has none"),
                )),
                (Some(n), Some(w)) => wrong.push((
                    flag.clone(),
                    format!("{flag} {n} differs from the bundle's {w}"),
                )),
                _ => wrong.push((
                    flag.clone(),
                    format!("{flag} is not part of the bundle's run as recorded"),
                )),
            }
        }
    }
    if wrong.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = wrong.iter().map(|(f, _)| f.as_str()).collect();
    let said: Vec<&str> = wrong.iter().map(|(_, s)| s.as_str()).collect();
    bail!(
        "{}: resume continues the run as it was started; drop {} or start a new run without --resume",
        said.join("; "),
        and_list(&names)
    )
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The bundle's recorded command line with the flags given now in place of its own.
fn overlay(recorded: &[String], given: &[String]) -> Vec<String> {
    let now = flag_groups(given);
    let mut out = command_words(recorded);
    for (flag, words) in flag_groups(recorded) {
        if !now.iter().any(|(f, _)| *f == flag) {
            out.extend(words);
        }
    }
    out.extend(now.into_iter().flat_map(|(_, w)| w));
    out
}

/// `argv` with only the flags that say how to reach the server.
fn reach_only(argv: &[String]) -> Vec<String> {
    let mut out = command_words(argv);
    for (flag, words) in flag_groups(argv) {
        if REACH.contains(&flag.as_str()) {
            out.extend(words);
        }
    }
    out
}

/// The long flags `argv` gives, by their main names whatever alias or `=` form was typed, in
/// the order given.
fn given_flags(argv: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (flag, _) in flag_groups(argv) {
        if !out.contains(&flag) {
            out.push(flag);
        }
    }
    out
}

/// `argv` up to its sweep subcommand: `llmsweep throughput`.
fn command_words(argv: &[String]) -> Vec<String> {
    let end = argv
        .iter()
        .skip(1)
        .position(|a| is_sweep(a))
        .map_or(argv.len(), |i| i + 2);
    argv[..end].to_vec()
}

/// `argv`'s flags after its sweep subcommand, each by its main long name (`--rates` for
/// `--request-rate`), with the words it was given in.
fn flag_groups(argv: &[String]) -> Vec<(String, Vec<String>)> {
    let Some(cmd) = sweep_command(argv) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut i = command_words(argv).len();
    while i < argv.len() {
        let word = &argv[i];
        let (name, inline) = match word.split_once('=') {
            Some((n, _)) if n.starts_with("--") => (n, true),
            _ => (word.as_str(), false),
        };
        let arg = cmd.get_arguments().find(|arg| {
            arg.get_long_and_visible_aliases()
                .into_iter()
                .flatten()
                .chain(arg.get_all_aliases().into_iter().flatten())
                .any(|n| name.strip_prefix("--") == Some(n))
        });
        let words = if !inline && arg.is_some_and(|a| a.get_action().takes_values()) {
            2
        } else {
            1
        };
        let flag = arg
            .and_then(|a| a.get_long())
            .map_or_else(|| name.to_string(), |l| format!("--{l}"));
        let end = (i + words).min(argv.len());
        out.push((flag, argv[i..end].to_vec()));
        i = end;
    }
    out
}

fn is_sweep(a: &str) -> bool {
    ["throughput", "context", "run"].contains(&a)
}

/// The clap command of `argv`'s sweep subcommand.
fn sweep_command(argv: &[String]) -> Option<clap::Command> {
    let name = subcommand(argv)?;
    Cli::command().find_subcommand(name).cloned()
}

/// The bundle's folder: where a resumed run writes.
fn folder_of(path: &Path) -> std::path::PathBuf {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// Refuses a `--dataset` whose file changed since the bundle's run began: its prompts would not
/// be the bundle's.
fn check_dataset(
    then: &RunPlan,
    bundle: &llmsweep_shared::Bundle,
    shown: &str,
) -> anyhow::Result<()> {
    let (Some(now), Some(was)) = (&then.output.dataset, &bundle.workload.dataset) else {
        return Ok(());
    };
    if now.sha256 != was.sha256 {
        bail!(
            "--resume {shown}: the dataset {} changed since the run began (its SHA-256 was {}, now {}): resume needs the bundle's prompts; restore the file or start a new run",
            was.file,
            was.sha256,
            now.sha256
        );
    }
    Ok(())
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

/// What defines a run's work, each with the flag that sets it in `command`: every flag of the
/// sweeps the run has, so that a flag given with `--resume` is compared, never ignored.
fn settings(p: &RunPlan, command: &str) -> Vec<(&'static str, String)> {
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let opt = |v: Option<String>| v.unwrap_or_else(|| "none".into());
    let on = |b: bool| if b { "on" } else { "off" }.to_string();
    let json = |v: &Option<serde_json::Map<String, serde_json::Value>>| {
        opt(v
            .as_ref()
            .map(|m| serde_json::Value::Object(m.clone()).to_string()))
    };
    let notes = p
        .output
        .notes
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    let slo = p.output.slo.map(|s| {
        [("ttft", s.ttft_s), ("tpot", s.tpot_s), ("e2e", s.e2e_s)]
            .into_iter()
            .filter_map(|(k, v)| Some(format!("{k}={}", v?)))
            .collect::<Vec<_>>()
            .join(",")
    });
    let mut out = vec![
        ("--seed", p.output.seed.to_string()),
        ("--api", format!("{:?}", p.target.api).to_lowercase()),
        ("--model", opt(p.target.model.clone())),
        ("--label", p.output.label.clone()),
        (
            "--note",
            if notes.is_empty() {
                "none".into()
            } else {
                notes
            },
        ),
        ("--gpus", opt(p.output.gpus.map(|g| g.to_string()))),
        ("--warmup", p.warmup.to_string()),
        ("--extra-body", json(&p.target.extra_body)),
        ("--cold-connections", on(p.target.cold_connections)),
        (
            "--shared-prefix-len",
            p.output.shared_prefix_len.to_string(),
        ),
        (
            "--dataset",
            opt(p.output.dataset.as_ref().map(|d| {
                format!(
                    "{} (SHA-256 {})",
                    d.file,
                    d.sha256.get(..12).unwrap_or(&d.sha256)
                )
            })),
        ),
        ("--goodput", opt(slo)),
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
        let open = t.open.as_ref();
        let search = open.and_then(|o| o.search);
        let rates = open.filter(|o| !o.rates.is_empty()).map(|o| {
            o.rates
                .iter()
                .map(f64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        });
        out.extend([
            ("--concurrency", list(&t.concurrency)),
            ("--input-len", t.input_len.to_string()),
            ("--output-len", t.output_len.to_string()),
            (
                "--shapes",
                opt((!t.shapes.is_empty()).then(|| {
                    t.shapes
                        .iter()
                        .map(|s| format!("{}x{}", s.input, s.output))
                        .collect::<Vec<_>>()
                        .join(",")
                })),
            ),
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
            ("--length-spread", t.spread.to_string()),
            ("--turns", t.turns.to_string()),
            ("--rates", opt(rates)),
            (
                "--arrival",
                opt(open.map(|o| format!("{:?}", o.arrival).to_lowercase())),
            ),
            ("--burstiness", opt(open.map(|o| o.burstiness.to_string()))),
            (
                "--max-concurrency",
                opt(open.and_then(|o| o.max_concurrency).map(|m| m.to_string())),
            ),
            ("--find-max-rate", on(search.is_some())),
            (
                "--slo-fraction",
                opt(search.map(|s| s.slo_fraction.to_string())),
            ),
            (
                "--rate-precision",
                opt(search.map(|s| s.precision.to_string())),
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
            ("--force", on(c.force)),
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
            given_flags(&argv(
                "llmsweep run --url=http://h --concurrency 1,2 --request-rate 3 --cold-connections --note a=1 --note b=2"
            )),
            [
                "--url",
                "--concurrency",
                "--rates",
                "--cold-connections",
                "--note"
            ]
        );
        assert_eq!(
            reach_only(&argv(
                "llmsweep run --turns 2 --url=http://h --header X:1 --wide --seed 3"
            )),
            argv("llmsweep run --url=http://h --header X:1 --wide")
        );
        assert_eq!(
            overlay(
                &argv("llmsweep throughput --rates 1,2,4 --seed=3 --find-max-rate --turns 2"),
                &argv("llmsweep throughput --request-rate=1,2 --seed 4 --timeout 5"),
            ),
            argv(
                "llmsweep throughput --find-max-rate --turns 2 --request-rate=1,2 --seed 4 --timeout 5"
            )
        );
        assert_eq!(subcommand(&argv("/bin/llmsweep run --url x")), Some("run"));
        assert_eq!(subcommand(&argv("llmsweep compare a b")), None);
    }

    /// An interrupted bundle written by `recorded`, in a folder of its own.
    fn interrupted(recorded: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let target = llmsweep_shared::bundle::Target {
            url: "http://127.0.0.1:30000".into(),
            api: llmsweep_shared::bundle::Api::Completions,
            model: "m".into(),
            engine: None,
            engine_version: None,
            max_context: None,
            max_running_requests: None,
            server_args: None,
            simulated: true,
            probes: Default::default(),
        };
        let mut b = store::new_bundle(
            "id".into(),
            "kpro5".into(),
            "2026-12-02T10:02:07Z".into(),
            argv(recorded),
            target,
        );
        b.complete = false;
        let path = dir.path().join("kpro5-throughput-20261202T100207Z.json");
        store::write_atomic(&path, &b).unwrap();
        (dir, path)
    }

    fn refusal(path: &Path, now: &str) -> String {
        let now = format!("{now} --resume {}", path.display());
        format!("{:#}", plan(path, &argv(&now)).unwrap_err())
    }

    const RATES: &str = "llmsweep throughput --rates 1,2,4 --goodput ttft=0.5 --input-len 50 --output-len 30 --label kpro5";

    #[test]
    fn a_flag_that_changes_the_work_is_refused_by_name() {
        let (dir, path) = interrupted(RATES);
        let shown = path.display();
        assert_eq!(
            refusal(&path, "llmsweep throughput --rates 1,2"),
            format!(
                "--resume {shown}: --rates 1,2 differs from the bundle's 1,2,4: resume continues the run as it was started; drop --rates or start a new run without --resume"
            )
        );
        // Spelled as vLLM's benchmark does, it is the same flag.
        let e = refusal(&path, "llmsweep throughput --request-rate=1,2");
        assert!(
            e.contains(": --rates 1,2 differs from the bundle's 1,2,4:"),
            "{e}"
        );
        for (flag, said) in [
            (
                r#"--extra-body {"temperature":0}"#,
                r#"--extra-body {"temperature":0} differs from the bundle's run, which has none"#,
            ),
            ("--turns 3", "--turns 3 differs from the bundle's 1"),
            (
                "--goodput ttft=1",
                "--goodput ttft=1 differs from the bundle's ttft=0.5",
            ),
            (
                "--length-spread 0.5",
                "--length-spread 0.5 differs from the bundle's 0",
            ),
            (
                "--shared-prefix-len 16",
                "--shared-prefix-len 16 differs from the bundle's 0",
            ),
            (
                "--arrival constant",
                "--arrival constant differs from the bundle's poisson",
            ),
            (
                "--max-concurrency 4",
                "--max-concurrency 4 differs from the bundle's run, which has none",
            ),
            (
                "--cold-connections",
                "--cold-connections differs from the bundle's run, which was without it",
            ),
            (
                "--input-len 60",
                "--input-len 60 differs from the bundle's 50",
            ),
            (
                "--note tp=2",
                "--note tp=2 differs from the bundle's run, which has none",
            ),
            (
                "--api chat",
                "--api chat differs from the bundle's completions",
            ),
        ] {
            let e = refusal(&path, &format!("llmsweep throughput {flag}"));
            let name = flag.split_whitespace().next().unwrap();
            assert!(
                e.contains(&format!(
                    ": {said}: resume continues the run as it was started; drop {name} or"
                )),
                "{flag}: {e}"
            );
        }
        let data = dir.path().join("prompts.jsonl");
        std::fs::write(&data, "{\"prompt\": \"hello\"}\n").unwrap();
        let e = refusal(
            &path,
            &format!("llmsweep throughput --dataset {}", data.display()),
        );
        assert!(
            e.contains(": --dataset ")
                && e.contains(" differs from the bundle's run, which has none:"),
            "{e}"
        );
        // A search cannot be laid over the bundle's rates: named, with why.
        let e = refusal(&path, "llmsweep throughput --find-max-rate --timeout 5");
        assert!(
            e.contains(": --find-max-rate cannot be combined with the bundle's own settings (")
                && e.ends_with("drop --find-max-rate or start a new run without --resume"),
            "{e}"
        );
        let e = refusal(
            &path,
            "llmsweep throughput --turns 3 --arrival constant --timeout 5",
        );
        assert!(
            e.contains("--turns 3 differs from the bundle's 1; --arrival constant differs from the bundle's poisson: resume continues the run as it was started; drop --turns and --arrival or"),
            "{e}"
        );
        let e = refusal(&path, "llmsweep throughput --out elsewhere");
        assert!(
            e.contains(&format!(
                ": --out elsewhere differs from the bundle's folder {}:",
                dir.path().display()
            )),
            "{e}"
        );
        // How to reach the server, and the bundle's own values, may be given again.
        let ok = |now: &str| {
            let now = format!("{now} --resume {}", path.display());
            plan(&path, &argv(&now)).unwrap()
        };
        let p = ok(&format!(
            "llmsweep throughput --url http://127.0.0.1:9 --timeout 5 --rates 1,2,4 --goodput ttft=0.5 --label kpro5 --out {}",
            dir.path().display()
        ));
        assert_eq!(p.target.url, "http://127.0.0.1:9");
        assert_eq!(p.target.timeout, std::time::Duration::from_secs(5));
        let open = p.throughput().unwrap().open.as_ref().unwrap();
        assert_eq!(open.rates, [1.0, 2.0, 4.0]);
    }

    #[test]
    fn what_the_bundle_was_sent_with_stays_when_not_given_again() {
        let (_dir, path) = interrupted(
            "llmsweep throughput --api chat --cold-connections --concurrency 1,2 --requests 4",
        );
        let now = format!(
            "llmsweep throughput --timeout 5 --resume {}",
            path.display()
        );
        let p = plan(&path, &argv(&now)).unwrap();
        assert_eq!(p.target.api, llmsweep_shared::bundle::Api::Chat);
        assert!(p.target.cold_connections);
        assert_eq!(p.target.timeout, std::time::Duration::from_secs(5));
    }

    #[test]
    fn a_context_sweeps_flags_are_refused_by_name_too() {
        let (_dir, path) = interrupted("llmsweep context --lengths 1k,8k,16k --repeats 2");
        let e = refusal(&path, "llmsweep context --lengths 1k,8k");
        assert!(
            e.contains(": --lengths 1000,8000 differs from the bundle's 1000,8000,16000:"),
            "{e}"
        );
        let e = refusal(&path, "llmsweep context --force");
        assert!(
            e.contains(": --force differs from the bundle's run, which was without it:"),
            "{e}"
        );
        assert!(
            plan(
                &path,
                &argv(&format!(
                    "llmsweep context --repeats 2 --resume {}",
                    path.display()
                ))
            )
            .is_ok()
        );
    }

    #[test]
    fn a_dataset_that_changed_since_the_run_began_is_refused() {
        let data = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(data.path(), "{\"prompt\": \"hello\"}\n").unwrap();
        let shown = data.path().display().to_string();
        let (_dir, path) = interrupted(&format!("llmsweep throughput --dataset {shown}"));
        let mut b = store::read_bundle(&path).unwrap();
        b.workload.dataset = Some(llmsweep_shared::bundle::DatasetFacts {
            file: shown.clone(),
            sha256: "0".repeat(64),
            lines: 1,
        });
        store::write_atomic(&path, &b).unwrap();
        let e = refusal(&path, "llmsweep throughput");
        assert!(
            e.contains(&format!(
                ": the dataset {shown} changed since the run began (its SHA-256 was {}, now ",
                "0".repeat(64)
            )),
            "{e}"
        );
    }

    /// Every flag of a sweep command is either a way to reach the server or a setting compared
    /// with the bundle's: a new flag that is neither fails here, not silently in a resume.
    #[test]
    fn every_sweep_flag_is_compared_or_says_how_to_reach_the_server() {
        for command in ["throughput", "context", "run"] {
            let p = parse(&argv(&format!("llmsweep {command}"))).unwrap();
            let compared: Vec<&str> = settings(&p, command).into_iter().map(|(f, _)| f).collect();
            let cmd = sweep_command(&argv(&format!("llmsweep {command}"))).unwrap();
            for arg in cmd.get_arguments() {
                let Some(long) = arg.get_long() else { continue };
                let flag = format!("--{long}");
                assert!(
                    REACH.contains(&flag.as_str())
                        || flag == "--out"
                        || compared.contains(&flag.as_str()),
                    "{command} {flag} is neither compared with the bundle nor a way to reach the server"
                );
            }
        }
    }
}
