//! A validated run plan: every flag checked, with a message naming the flag to fix, before any
//! request is sent.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use llmsweep_shared::bundle::Api;

use crate::cli::{
    ApiArg, ContextArgs, ContextOpts, OnlyArg, OutputArgs, RunArgs, TargetArgs, ThroughputArgs,
    ThroughputOpts,
};
use crate::loadgen::StopRule;

/// Most concurrent requests one level may ask for.
pub const MAX_CONCURRENCY: u32 = 4096;

/// Where to send load, and how.
#[derive(Debug, Clone)]
pub struct TargetPlan {
    /// Base URL without a trailing slash.
    pub url: String,
    pub host: String,
    pub api: Api,
    pub model: Option<String>,
    pub api_key: Option<String>,
    pub timeout: Duration,
}

/// Where results go and what they are called.
#[derive(Debug, Clone)]
pub struct OutputPlan {
    pub label: String,
    pub notes: BTreeMap<String, String>,
    pub out: PathBuf,
    pub seed: u64,
}

/// A checked throughput sweep.
#[derive(Debug, Clone)]
pub struct ThroughputPlan {
    pub target: TargetPlan,
    pub output: OutputPlan,
    pub concurrency: Vec<u32>,
    pub input_len: u64,
    pub output_len: u64,
    /// Requests per level when fixed by `--requests`; `None` means the default rule.
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    pub warmup: u64,
}

impl ThroughputPlan {
    pub fn from_args(a: &ThroughputArgs) -> anyhow::Result<ThroughputPlan> {
        let target = TargetPlan::from_args(&a.target)?;
        let output = OutputPlan::from_args(&a.output, &target)?;
        ThroughputPlan::new(target, output, &a.sweep, a.warmup)
    }

    pub fn new(
        target: TargetPlan,
        output: OutputPlan,
        a: &ThroughputOpts,
        warmup: u64,
    ) -> anyhow::Result<ThroughputPlan> {
        check_concurrency(&a.concurrency, "--concurrency")?;
        if a.input_len == 0 {
            bail!("--input-len must be at least 1 token");
        }
        if a.output_len == 0 {
            bail!("--output-len must be at least 1 token (2 or more to measure decode speed)");
        }
        if a.requests == Some(0) {
            bail!("--requests must be at least 1");
        }
        let duration = match a.duration {
            Some(d) if !(d.is_finite() && d > 0.0) => {
                bail!("--duration must be a positive number of seconds, got {d}")
            }
            Some(d) => Some(Duration::from_secs_f64(d)),
            None => None,
        };
        Ok(ThroughputPlan {
            target,
            output,
            concurrency: a.concurrency.clone(),
            input_len: a.input_len,
            output_len: a.output_len,
            requests: a.requests,
            duration,
            warmup,
        })
    }

    /// Requests sent at concurrency `c`: `--requests`, else `max(8, 2c)`.
    pub fn requests_at(&self, c: u32) -> u64 {
        self.requests.unwrap_or((2 * c as u64).max(8))
    }

    /// When level `c` stops sending.
    pub fn stop_at(&self, c: u32) -> StopRule {
        match self.duration {
            Some(d) => StopRule::Deadline(d),
            None => StopRule::Count(self.requests_at(c)),
        }
    }
}

/// A checked context sweep.
#[derive(Debug, Clone)]
pub struct ContextPlan {
    pub target: TargetPlan,
    pub output: OutputPlan,
    pub lengths: Vec<u64>,
    pub output_len: u64,
    pub concurrency: Vec<u32>,
    pub repeats: u64,
    pub force: bool,
    pub warmup: u64,
}

impl ContextPlan {
    pub fn from_args(a: &ContextArgs) -> anyhow::Result<ContextPlan> {
        let target = TargetPlan::from_args(&a.target)?;
        let output = OutputPlan::from_args(&a.output, &target)?;
        let flags = ContextFlags {
            output_len: "--output-len",
            concurrency: "--concurrency",
        };
        ContextPlan::new(
            target,
            output,
            &a.lengths,
            a.output_len,
            &a.concurrency,
            &a.opts,
            a.warmup,
            flags,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub fn new(
        target: TargetPlan,
        output: OutputPlan,
        lengths: &[u64],
        output_len: u64,
        concurrency: &[u32],
        opts: &ContextOpts,
        warmup: u64,
        flags: ContextFlags,
    ) -> anyhow::Result<ContextPlan> {
        if lengths.is_empty() {
            bail!("--lengths needs at least one input length, e.g. --lengths 1k,8k,30k");
        }
        let mut seen = std::collections::BTreeSet::new();
        for &l in lengths {
            if !seen.insert(l) {
                bail!("--lengths lists {l} twice; each length runs once");
            }
        }
        check_concurrency(concurrency, flags.concurrency)?;
        if output_len == 0 {
            bail!("{} must be at least 1 token", flags.output_len);
        }
        if opts.repeats == 0 {
            bail!("--repeats must be at least 1");
        }
        Ok(ContextPlan {
            target,
            output,
            lengths: lengths.to_vec(),
            output_len,
            concurrency: concurrency.to_vec(),
            repeats: opts.repeats,
            force: opts.force,
            warmup,
        })
    }
}

/// The flag names a context plan's values came from, for messages (`context` and `run` differ).
#[derive(Debug, Clone, Copy)]
pub struct ContextFlags {
    pub output_len: &'static str,
    pub concurrency: &'static str,
}

/// One session: the throughput sweep, the context sweep, or both (`run`).
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub target: TargetPlan,
    pub output: OutputPlan,
    pub throughput: Option<ThroughputPlan>,
    pub context: Option<ContextPlan>,
    pub warmup: u64,
}

impl From<ThroughputPlan> for RunPlan {
    fn from(p: ThroughputPlan) -> RunPlan {
        RunPlan {
            target: p.target.clone(),
            output: p.output.clone(),
            warmup: p.warmup,
            throughput: Some(p),
            context: None,
        }
    }
}

impl From<ContextPlan> for RunPlan {
    fn from(p: ContextPlan) -> RunPlan {
        RunPlan {
            target: p.target.clone(),
            output: p.output.clone(),
            warmup: p.warmup,
            throughput: None,
            context: Some(p),
        }
    }
}

impl RunPlan {
    pub fn from_args(a: &RunArgs) -> anyhow::Result<RunPlan> {
        let target = TargetPlan::from_args(&a.target)?;
        let output = OutputPlan::from_args(&a.output, &target)?;
        let throughput = (a.only != Some(OnlyArg::Context))
            .then(|| ThroughputPlan::new(target.clone(), output.clone(), &a.throughput, 0))
            .transpose()?;
        let flags = ContextFlags {
            output_len: "--context-output-len",
            concurrency: "--context-concurrency",
        };
        let context = (a.only != Some(OnlyArg::Throughput))
            .then(|| {
                ContextPlan::new(
                    target.clone(),
                    output.clone(),
                    &a.lengths,
                    a.context_output_len,
                    &a.context_concurrency,
                    &a.context,
                    0,
                    flags,
                )
            })
            .transpose()?;
        Ok(RunPlan {
            target,
            output,
            throughput,
            context,
            warmup: a.warmup,
        })
    }
}

impl RunPlan {
    /// The word in the bundle's file name.
    pub fn kind(&self) -> &'static str {
        match (&self.throughput, &self.context) {
            (Some(_), None) => "throughput",
            (None, Some(_)) => "context",
            _ => "run",
        }
    }

    /// Connections to keep open: the highest concurrency of any sweep.
    pub fn pool(&self) -> usize {
        let t = self.throughput.iter().flat_map(|p| p.concurrency.iter());
        let c = self.context.iter().flat_map(|p| p.concurrency.iter());
        t.chain(c).copied().max().unwrap_or(1) as usize
    }

    /// Warm-up requests: the first sweep's input length, at most 64 output tokens.
    pub fn warmup_shape(&self) -> (u64, u64) {
        match (&self.throughput, &self.context) {
            (Some(t), _) => (t.input_len, t.output_len.min(64)),
            (None, Some(c)) => {
                let shortest = c.lengths.iter().copied().min().unwrap_or(1);
                (shortest, c.output_len.min(64))
            }
            (None, None) => (1, 1),
        }
    }
}

fn check_concurrency(list: &[u32], flag: &str) -> anyhow::Result<()> {
    if list.is_empty() {
        bail!("{flag} needs at least one level, e.g. {flag} 1,2,4");
    }
    let mut seen = std::collections::BTreeSet::new();
    for &c in list {
        if c == 0 || c > MAX_CONCURRENCY {
            bail!("{flag} {c} is out of range: use 1 to {MAX_CONCURRENCY}");
        }
        if !seen.insert(c) {
            bail!("{flag} lists {c} twice; each level runs once");
        }
    }
    Ok(())
}

impl TargetPlan {
    pub fn from_args(a: &TargetArgs) -> anyhow::Result<TargetPlan> {
        let parsed = reqwest::Url::parse(&a.url).with_context(|| {
            format!(
                "--url {:?} is not a URL; expected e.g. http://127.0.0.1:30000",
                a.url
            )
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            bail!("--url must start with http:// or https://, got {:?}", a.url);
        }
        let host = parsed.host_str().unwrap_or_default().to_string();
        let mut url = a.url.trim_end_matches('/').to_string();
        // People paste the OpenAI base URL; the endpoints are added here.
        if let Some(stripped) = url.strip_suffix("/v1") {
            url = stripped.to_string();
        }
        if !(a.timeout.is_finite() && a.timeout > 0.0) {
            bail!(
                "--timeout must be a positive number of seconds, got {}",
                a.timeout
            );
        }
        let api_key = a
            .api_key
            .clone()
            .or_else(|| std::env::var("LLMSWEEP_API_KEY").ok())
            .or_else(|| std::env::var("OPENAI_API_KEY").ok())
            .filter(|k| !k.is_empty());
        Ok(TargetPlan {
            url,
            host,
            api: match a.api {
                ApiArg::Completions => Api::Completions,
                ApiArg::Chat => Api::Chat,
            },
            model: a.model.clone(),
            api_key,
            timeout: Duration::from_secs_f64(a.timeout),
        })
    }

    /// Whether the target is this machine.
    pub fn is_loopback(&self) -> bool {
        let h = self.host.trim_matches(['[', ']']);
        h == "localhost"
            || h.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

impl OutputPlan {
    pub fn from_args(a: &OutputArgs, target: &TargetPlan) -> anyhow::Result<OutputPlan> {
        let label = match &a.label {
            Some(l) if l.trim().is_empty() => bail!("--label must not be empty"),
            Some(l) => l.trim().to_string(),
            None if target.is_loopback() => crate::host::hostname(),
            None => target.host.clone(),
        };
        Ok(OutputPlan {
            label,
            notes: a.notes.iter().cloned().collect(),
            out: a.out.clone(),
            seed: a.seed.unwrap_or_else(random_seed),
        })
    }
}

/// A seed that differs between runs, so a rerun does not hit the server's prefix cache with the
/// previous run's prompts.
fn random_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    crate::workload::SplitMix64::new(nanos ^ ((std::process::id() as u64) << 32)).next_u64() >> 11
}

/// The command line as typed, with the API key replaced by `***`.
pub fn redacted_command_line(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut hide_next = false;
    for a in args {
        if hide_next {
            out.push("***".to_string());
            hide_next = false;
        } else if a == "--api-key" {
            hide_next = true;
            out.push(a);
        } else if a.starts_with("--api-key=") {
            out.push("--api-key=***".to_string());
        } else {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn plan(args: &[&str]) -> anyhow::Result<ThroughputPlan> {
        let mut all = vec!["llmsweep", "throughput"];
        all.extend_from_slice(args);
        let Command::Throughput(a) = Cli::try_parse_from(all).unwrap().command else {
            panic!("not throughput")
        };
        ThroughputPlan::from_args(&a)
    }

    fn err(args: &[&str]) -> String {
        format!("{:#}", plan(args).unwrap_err())
    }

    #[test]
    fn bad_values_name_the_flag() {
        assert!(err(&["--concurrency", "0"]).contains("--concurrency 0"));
        assert!(err(&["--concurrency", "4,4"]).contains("lists 4 twice"));
        assert!(err(&["--input-len", "0"]).contains("--input-len"));
        assert!(err(&["--output-len", "0"]).contains("--output-len"));
        assert!(err(&["--requests", "0"]).contains("--requests"));
        assert!(err(&["--duration=-1"]).contains("--duration"));
        assert!(err(&["--url", "nonsense"]).contains("--url"));
        assert!(err(&["--url", "ftp://x"]).contains("http://"));
        assert!(err(&["--timeout", "0"]).contains("--timeout"));
        assert!(err(&["--label", " "]).contains("--label"));
    }

    #[test]
    fn context_and_run_values_are_checked() {
        let ctx = |args: &[&str]| {
            let mut all = vec!["llmsweep", "context"];
            all.extend_from_slice(args);
            let Command::Context(a) = Cli::try_parse_from(all).unwrap().command else {
                panic!()
            };
            ContextPlan::from_args(&a).map_err(|e| format!("{e:#}"))
        };
        assert!(
            ctx(&["--lengths", "1k,1000"])
                .unwrap_err()
                .contains("--lengths lists 1000 twice")
        );
        assert!(ctx(&["--repeats", "0"]).unwrap_err().contains("--repeats"));
        assert!(
            ctx(&["--concurrency", "0"])
                .unwrap_err()
                .contains("--concurrency 0")
        );
        let run = |args: &[&str]| {
            let mut all = vec!["llmsweep", "run"];
            all.extend_from_slice(args);
            let Command::Run(a) = Cli::try_parse_from(all).unwrap().command else {
                panic!()
            };
            RunPlan::from_args(&a).map_err(|e| format!("{e:#}"))
        };
        assert!(
            run(&["--context-output-len", "0"])
                .unwrap_err()
                .contains("--context-output-len")
        );
        let only = run(&["--only", "throughput"]).unwrap();
        assert!(only.throughput.is_some() && only.context.is_none());
    }

    #[test]
    fn default_request_budget_is_max_8_or_twice_c() {
        let p = plan(&[]).unwrap();
        assert_eq!(p.requests_at(1), 8);
        assert_eq!(p.requests_at(4), 8);
        assert_eq!(p.requests_at(32), 64);
        assert_eq!(plan(&["--requests", "3"]).unwrap().requests_at(32), 3);
        assert_eq!(
            plan(&["--duration", "2.5"]).unwrap().stop_at(4),
            StopRule::Deadline(Duration::from_millis(2500))
        );
    }

    #[test]
    fn url_forms_are_normalised_and_label_defaults_to_the_host() {
        let p = plan(&["--url", "http://kpro5:30000/v1/"]).unwrap();
        assert_eq!(p.target.url, "http://kpro5:30000");
        assert_eq!(p.output.label, "kpro5");
        let local = plan(&["--url", "http://127.0.0.1:8080"]).unwrap();
        assert_eq!(local.output.label, crate::host::hostname());
    }

    #[test]
    fn api_key_is_redacted_from_the_command_line() {
        let line = redacted_command_line(
            [
                "llmsweep",
                "throughput",
                "--api-key",
                "sk-secret",
                "--api-key=sk-2",
                "--label",
                "x",
            ]
            .map(String::from),
        );
        assert_eq!(
            line,
            [
                "llmsweep",
                "throughput",
                "--api-key",
                "***",
                "--api-key=***",
                "--label",
                "x"
            ]
        );
    }
}
