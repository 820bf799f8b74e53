//! Flags into plans: the one place where a flag becomes a checked plan value, every error naming
//! the flag to fix, before any request is sent. The load engine (`crate::load`) sees only the
//! plans, never a flag.

use crate::boundary::http::redact_url;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use llmsweep_shared::bundle::{Api, Arrival, GpuTelemetry};
use llmsweep_shared::text::number;

use super::args::{
    ApiArg, ArrivalArg, ContextOpts, GpuArg, OutputArgs, TargetArgs, ThroughputOpts,
};
use crate::load::plan::secrets::{Credentials, header_file, parse_header, split_userinfo};
use crate::load::{
    ContextPlan, DEFAULT_CONCURRENCY, MAX_CONCURRENCY, MAX_RATE, MAX_RATE_POINT_S, MAX_REPEATS,
    OpenPlan, OutputPlan, Precision, SearchPlan, TargetPlan, ThroughputPlan, is_loopback,
    random_prefix_seed, rate_words, time_words,
};
use crate::output::terminal::inert;

/// The throughput sweep (closed loop, or open loop with `--rates` / `--find-max-rate`).
pub(crate) fn throughput(a: &ThroughputOpts) -> anyhow::Result<ThroughputPlan> {
    let concurrency = a
        .concurrency
        .clone()
        .unwrap_or_else(|| DEFAULT_CONCURRENCY.to_vec());
    check_concurrency(&concurrency, "--concurrency")?;
    if a.input_len == 0 {
        bail!("--input-len must be at least 1 token");
    }
    if a.output_len == 0 {
        bail!("--output-len must be at least 1 token (2 or more to measure decode speed)");
    }
    if a.requests == Some(0) {
        bail!("--requests must be at least 1");
    }
    let duration = a
        .duration
        .map(|d| {
            seconds(
                "--duration",
                d,
                f64::MIN_POSITIVE,
                "seconds above 0, e.g. 60",
            )
        })
        .transpose()?;
    if !(1..=MAX_REPEATS).contains(&a.repeats) {
        bail!(
            "--repeats must be 1 to {MAX_REPEATS} passes per level, got {}",
            a.repeats
        );
    }
    if !(a.precision.is_finite() && (0.1..=50.0).contains(&a.precision)) {
        bail!(
            "--precision {} is out of range: give the per cent a level's steady tok/s should be known to, from 0.1 to 50, e.g. 2",
            number(a.precision)
        );
    }
    let max_level_time = seconds(
        "--max-level-time",
        a.max_level_time,
        1.0,
        "the seconds a level may send, at least 1, e.g. 120",
    )?;
    // --requests, --duration and --repeats fix a level's size; otherwise it runs until precise.
    let precision =
        (a.requests.is_none() && duration.is_none() && a.repeats == 1).then_some(Precision {
            steady_pct: a.precision,
            cap: max_level_time,
            running: None,
            alone_s: None,
        });
    let shapes = a.shapes.as_ref().map(|s| s.0.clone()).unwrap_or_default();
    if !shapes.is_empty() && (!a.rates.is_empty() || a.find_max_rate) {
        bail!(
            "--shapes runs a concurrency sweep per shape; --rates and --find-max-rate run one open loop: run them once per shape with --input-len and --output-len"
        );
    }
    let first = shapes.first().copied();
    let plan = ThroughputPlan {
        precision,
        until_saturated: a.concurrency.is_none(),
        concurrency,
        input_len: first.map_or(a.input_len, |s| s.input),
        output_len: first.map_or(a.output_len, |s| s.output),
        shapes,
        requests: a.requests,
        duration,
        repeats: a.repeats as u32,
        open: open_loop(a)?,
        spread: match a.length_spread {
            r if (0.0..1.0).contains(&r) => r,
            r => bail!(
                "--length-spread {} is out of range: use a share from 0 (fixed lengths) to below 1, e.g. 0.5",
                number(r)
            ),
        },
        turns: match a.turns {
            k @ 1..=100 => k,
            k => bail!("--turns {k} is out of range: use 1 (no conversations) to 100"),
        },
    };
    check_rate_points(&plan)?;
    Ok(plan)
}

/// Refuses `--shapes` with `--dataset`, whose prompts and outputs have their own lengths.
pub(crate) fn check_shapes(t: &ThroughputPlan, o: &OutputPlan) -> anyhow::Result<()> {
    if !t.shapes.is_empty() && o.dataset.is_some() {
        bail!(
            "--shapes sets each sweep's lengths and --dataset takes them from its lines: give one of them"
        );
    }
    Ok(())
}

/// Refuses a rate whose point would send for longer than [`MAX_RATE_POINT_S`] (its requests /
/// the rate) when no `--duration` bounds it, before anything is sent; and a search whose
/// `--requests` are too few to judge a rate on.
fn check_rate_points(plan: &ThroughputPlan) -> anyhow::Result<()> {
    let Some(open) = &plan.open else {
        return Ok(());
    };
    for &rate in &open.rates {
        let secs = plan.seconds_at_rate(rate);
        if secs > MAX_RATE_POINT_S {
            let n = plan.requests_at_rate(rate).unwrap_or(0);
            bail!(
                "--rates {} with {n} requests would take about {} (requests / rate) with no line to show for it; give --duration SECS to bound each point, or a rate of at least {} req/s",
                rate_words(rate),
                time_words(secs),
                rate_words(n as f64 / MAX_RATE_POINT_S)
            );
        }
    }
    if let (Some(search), Some(n)) = (open.search, plan.requests) {
        let least = search.min_requests();
        if n < least {
            bail!(
                "--find-max-rate judges each rate on at least {least} requests, so that two may miss the {:.0} % SLO before the rate does; --requests {n} is too few: give --requests {least} or more, or leave it out",
                search.slo_fraction * 100.0
            );
        }
    }
    Ok(())
}

/// `--find-max-rate`'s settings, when it is given.
fn search(a: &ThroughputOpts) -> anyhow::Result<Option<SearchPlan>> {
    if !a.find_max_rate {
        return Ok(None);
    }
    if !(a.slo_fraction > 0.0 && a.slo_fraction <= 1.0) {
        bail!(
            "--slo-fraction {} is out of range: use a share above 0 and at most 1, e.g. 0.9",
            number(a.slo_fraction)
        );
    }
    if !(a.rate_precision >= 0.005 && a.rate_precision <= 0.5) {
        bail!(
            "--rate-precision {} is out of range: use 0.005 to 0.5, e.g. 0.05",
            number(a.rate_precision)
        );
    }
    Ok(Some(SearchPlan {
        slo_fraction: a.slo_fraction,
        precision: a.rate_precision,
    }))
}

/// The rate sweep `--rates` asks for, if any; every error names the flag.
fn open_loop(a: &ThroughputOpts) -> anyhow::Result<Option<OpenPlan>> {
    if a.rates.is_empty() && !a.find_max_rate {
        if a.max_concurrency.is_some() {
            bail!("--max-concurrency caps an open loop: add --rates or --find-max-rate");
        }
        if a.arrival != ArrivalArg::Poisson || a.burstiness != 1.0 {
            bail!("--arrival and --burstiness shape an open loop: add --rates or --find-max-rate");
        }
        return Ok(None);
    }
    if let Some(r) = a
        .rates
        .iter()
        .find(|r| !(r.is_finite() && **r > 0.0 && **r <= MAX_RATE))
    {
        bail!(
            "--rates {} is out of range: use requests per second above 0 and at most {MAX_RATE}",
            number(*r)
        );
    }
    if !(a.burstiness.is_finite() && a.burstiness >= 0.01 && a.burstiness <= 100.0) {
        bail!(
            "--burstiness {} is out of range: use 0.01 to 100 (1 is Poisson)",
            number(a.burstiness)
        );
    }
    if a.burstiness != 1.0 && a.arrival != ArrivalArg::Gamma {
        bail!("--burstiness shapes gamma arrivals: add --arrival gamma");
    }
    if let Some(m) = a.max_concurrency {
        check_concurrency(&[m], "--max-concurrency")?;
    }
    Ok(Some(OpenPlan {
        rates: a.rates.clone(),
        search: search(a)?,
        arrival: match a.arrival {
            ArrivalArg::Poisson => Arrival::Poisson,
            ArrivalArg::Constant => Arrival::Constant,
            ArrivalArg::Gamma => Arrival::Gamma,
        },
        burstiness: a.burstiness,
        max_concurrency: a.max_concurrency,
    }))
}

/// A context sweep's values as given, with the names of the flags they came from (`context` and
/// `run` name them differently), for messages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ContextFlags<'a> {
    pub(crate) lengths: &'a [u64],
    pub(crate) output_len: (u64, &'static str),
    pub(crate) concurrency: (&'a [u32], &'static str),
    pub(crate) repeats: (u64, &'static str),
    pub(crate) opts: &'a ContextOpts,
}

/// The context sweep.
pub(crate) fn context(f: ContextFlags<'_>) -> anyhow::Result<ContextPlan> {
    if f.lengths.is_empty() {
        bail!("--lengths needs at least one input length, e.g. --lengths 1k,8k,30k");
    }
    let mut seen = std::collections::BTreeSet::new();
    for &l in f.lengths {
        if !seen.insert(l) {
            bail!("--lengths lists {l} twice; each length runs once");
        }
    }
    let (concurrency, flag) = f.concurrency;
    check_concurrency(concurrency, flag)?;
    let (output_len, flag) = f.output_len;
    if output_len == 0 {
        bail!("{flag} must be at least 1 token");
    }
    let (repeats, flag) = f.repeats;
    if repeats == 0 {
        bail!("{flag} must be at least 1");
    }
    Ok(ContextPlan {
        lengths: f.lengths.to_vec(),
        output_len,
        concurrency: concurrency.to_vec(),
        repeats,
        force: f.opts.force,
    })
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

/// Where to send load, and how.
pub(crate) fn target(a: &TargetArgs) -> anyhow::Result<TargetPlan> {
    // A message about the URL never repeats a password in it.
    check_scheme(&a.url)?;
    let parsed = reqwest::Url::parse(&a.url).with_context(|| {
        format!(
            "--url {:?} is not a URL; expected e.g. http://127.0.0.1:30000",
            redact_url(&a.url)
        )
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        bail!(
            "--url must start with http:// or https://, got {:?}",
            redact_url(&a.url)
        );
    }
    let host = parsed.host_str().unwrap_or_default().to_string();
    let split = split_userinfo(&parsed, &a.url);
    // People paste the OpenAI base URL; the endpoints are added here.
    let base = |u: &str| {
        let u = u.trim_end_matches('/');
        u.strip_suffix("/v1").unwrap_or(u).to_string()
    };
    check_not_an_endpoint(&parsed, &split.shown)?;
    let timeout = seconds(
        "--timeout",
        a.timeout,
        f64::MIN_POSITIVE,
        "seconds above 0, e.g. 600",
    )?;
    let wait_server = seconds(
        "--wait-server",
        a.wait_server,
        0.0,
        "0 or more seconds, e.g. 300",
    )?;
    let credentials = credentials(a, split.basic)?;
    let gpu_telemetry = match a.gpu_telemetry {
        GpuArg::Local => GpuTelemetry::Local,
        GpuArg::Off => GpuTelemetry::Off,
        GpuArg::Auto if is_loopback(&host) => GpuTelemetry::Local,
        GpuArg::Auto => GpuTelemetry::NotThisHost,
    };
    Ok(TargetPlan {
        url: base(&split.url),
        shown_url: base(&split.shown),
        host,
        api: match a.api {
            ApiArg::Completions => Api::Completions,
            ApiArg::Chat => Api::Chat,
        },
        model: a.model.clone(),
        credentials,
        timeout,
        wait_server,
        cold_connections: a.cold_connections,
        gpu_telemetry,
        extra_body: a.extra_body.clone(),
    })
}

/// The API key, the URL's user and password and the `--header`s, checked: two ways of setting
/// `Authorization` given at once are refused; an API key from the environment gives way to one
/// given on the command line.
/// A `--url` typed without `scheme://` (`127.0.0.1:8000`, `user:pw@host:8000`) parses as
/// something else, or not at all: say to add the scheme, without repeating a user name or
/// password it may carry.
fn check_scheme(url: &str) -> anyhow::Result<()> {
    let lower = url.to_ascii_lowercase();
    if url.contains("://") || lower.starts_with("http:") || lower.starts_with("https:") {
        return Ok(());
    }
    let (shown, host) = match url.rsplit_once('@') {
        Some((_, host)) => (format!("***@{host}"), host),
        None => (url.to_string(), url),
    };
    let host = host.trim_start_matches('/');
    let example = if host.is_empty() {
        "http://127.0.0.1:8000".to_string()
    } else {
        format!("http://{host}")
    };
    bail!(
        "--url {:?} has no scheme: give the URL with its scheme, e.g. {}",
        inert(&shown),
        inert(&example)
    )
}

/// A `--url` that names an endpoint (`…/v1/chat/completions`) instead of the server: llmsweep
/// adds the endpoints itself.
fn check_not_an_endpoint(parsed: &reqwest::Url, shown: &str) -> anyhow::Result<()> {
    let path = parsed.path().trim_end_matches('/');
    let Some(endpoint) = ENDPOINTS.iter().find(|e| path.ends_with(*e)) else {
        return Ok(());
    };
    let base = shown
        .split_once(endpoint)
        .map_or(shown, |(b, _)| b.trim_end_matches('/'));
    let base = base.strip_suffix("/v1").unwrap_or(base);
    bail!(
        "--url {shown} names the endpoint {endpoint}: give the server's base URL (http://host:port), not the endpoint, e.g. --url {base}; llmsweep adds /v1/completions or /v1/chat/completions itself (--api)"
    )
}

/// Paths a `--url` may end in by mistake: the endpoints llmsweep sends to or reads.
const ENDPOINTS: [&str; 4] = [
    "/chat/completions",
    "/completions",
    "/v1/models",
    "/v1/embeddings",
];

fn credentials(a: &TargetArgs, basic: Option<(String, String)>) -> anyhow::Result<Credentials> {
    let mut headers = Vec::new();
    for h in &a.headers {
        match h.strip_prefix('@') {
            Some(file) => headers.extend(header_file(file)?),
            None => headers.push(parse_header(h)?),
        }
    }
    let c = Credentials {
        api_key: None,
        basic,
        headers,
    };
    let by_header = c.header_sets_authorization();
    match (&a.api_key, c.basic.is_some(), by_header) {
        (Some(_), true, _) => bail!(
            "--url carries a user name and password and --api-key is given: both are sent as the Authorization header; keep one"
        ),
        (Some(_), _, true) | (None, true, true) => bail!(
            "--header Authorization:*** and {} would both set the Authorization header; keep one",
            if a.api_key.is_some() {
                "--api-key"
            } else {
                "the user name and password in --url"
            }
        ),
        _ => {}
    }
    let api_key = match (&a.api_key, c.basic.is_some() || by_header) {
        (Some(k), _) => Some(k.clone()),
        (None, true) => None,
        (None, false) => std::env::var("LLMSWEEP_API_KEY")
            .ok()
            .or_else(|| std::env::var("OPENAI_API_KEY").ok()),
    }
    .filter(|k| !k.is_empty());
    Ok(Credentials { api_key, ..c })
}

/// The most seconds any time flag takes: a week, past which a number is a typo, and which a
/// `Duration` holds exactly.
const MAX_SECONDS: f64 = 7.0 * 24.0 * 3600.0;

/// `flag`'s value `v` as a duration: a finite number of seconds from `least` to a week; the
/// error shows `v` as given, briefly (`1e300`, not three hundred digits), and `what` to give.
fn seconds(flag: &str, v: f64, least: f64, what: &str) -> anyhow::Result<Duration> {
    if !(v.is_finite() && v >= least && v <= MAX_SECONDS) {
        bail!(
            "{flag} {} is out of range: give {what}, at most a week (604800)",
            number(v)
        );
    }
    Ok(Duration::from_secs_f64(v))
}

/// Where results go and what they are called.
pub(crate) fn output(a: &OutputArgs, target: &TargetPlan) -> anyhow::Result<OutputPlan> {
    let label = match &a.label {
        Some(l) if l.trim().is_empty() => bail!("--label must not be empty"),
        Some(l) if llmsweep_shared::text::one_line(l) != l.as_str() => bail!(
            "--label {}: a label is one line of text, without control characters or line breaks",
            llmsweep_shared::text::one_line(l)
        ),
        Some(l) => l.trim().to_string(),
        None if target.is_loopback() => crate::load::server::host::hostname(),
        None => target.host.clone(),
    };
    // A bucket gets a copy of every checkpoint; the bundle is written locally first, so a store
    // that cannot be reached never costs a measurement.
    let (out, store) = match a
        .out
        .to_str()
        .filter(|o| crate::store::bucket::is_bucket_url(o))
    {
        Some(url) => (
            PathBuf::from("results"),
            Some(
                crate::store::bucket::Bucket::open(url)
                    .map_err(|e| anyhow::anyhow!("--out: {e:#}"))?,
            ),
        ),
        None => (a.out.clone(), None),
    };
    Ok(OutputPlan {
        label,
        notes: a.notes.iter().cloned().collect(),
        gpus: a.gpus,
        out,
        store,
        seed: a.seed,
        prefix_seed: random_prefix_seed(),
        wide: a.wide,
        slo: a.goodput,
        shared_prefix_len: a.shared_prefix_len,
        dataset: match &a.dataset {
            Some(p) => Some(std::sync::Arc::new(
                crate::load::workload::dataset::Dataset::read(p)?,
            )),
            None => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use crate::load::run::generator::StopRule;
    use crate::load::{RunPlan, Sweeps};
    use clap::Parser;
    use llmsweep_shared::bundle::GpuTelemetry;

    /// The plan `llmsweep <args>` makes.
    fn plan_of(args: &[&str]) -> anyhow::Result<RunPlan> {
        let mut all = vec!["llmsweep"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all)
            .unwrap()
            .command
            .sweep_plan()
            .unwrap()
    }

    fn plan(args: &[&str]) -> anyhow::Result<RunPlan> {
        let mut all = vec!["throughput"];
        all.extend_from_slice(args);
        plan_of(&all)
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
        assert!(err(&["--repeats", "0"]).contains("--repeats must be 1 to 100"));
        assert!(err(&["--repeats", "101"]).contains("got 101"));
        assert!(err(&["--duration=-1"]).contains("--duration"));
        assert!(err(&["--url", "nonsense"]).contains("--url"));
        assert!(err(&["--url", "ftp://x"]).contains("http://"));
        assert!(err(&["--timeout", "0"]).contains("--timeout"));
        assert!(
            err(&["--wait-server=-1"])
                .contains("--wait-server -1 is out of range: give 0 or more seconds")
        );
        assert!(err(&["--label", " "]).contains("--label"));
    }

    #[test]
    fn context_and_run_values_are_checked() {
        let ctx = |args: &[&str]| {
            let mut all = vec!["context"];
            all.extend_from_slice(args);
            plan_of(&all).map_err(|e| format!("{e:#}"))
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
            let mut all = vec!["run"];
            all.extend_from_slice(args);
            plan_of(&all).map_err(|e| format!("{e:#}"))
        };
        assert!(
            run(&["--context-output-len", "0"])
                .unwrap_err()
                .contains("--context-output-len")
        );
        assert!(
            run(&["--context-concurrency", "0"])
                .unwrap_err()
                .contains("--context-concurrency 0")
        );
        assert!(
            run(&["--context-repeats", "0"])
                .unwrap_err()
                .contains("--context-repeats must be at least 1")
        );
        let only = run(&["--only", "throughput"]).unwrap();
        assert!(matches!(only.sweeps, Sweeps::Throughput(_)));
        assert_eq!((only.kind(), only.warmup), ("throughput", 2));
        let both = run(&[]).unwrap();
        assert!(matches!(both.sweeps, Sweeps::Both(..)));
        assert_eq!(both.kind(), "run");
    }

    #[test]
    fn a_rate_whose_point_would_take_over_an_hour_is_refused_with_the_estimate() {
        assert_eq!(
            err(&["--rates", "1e-9", "--requests", "2"]),
            "--rates 0.000000001 with 2 requests would take about 63 years (requests / rate) with no line to show for it; give --duration SECS to bound each point, or a rate of at least 0.000556 req/s"
        );
        // The default count at a low rate is 16 arrivals: 4.4 hours at 0.001 req/s.
        assert_eq!(
            err(&["--rates", "1,0.001"]),
            "--rates 0.001 with 16 requests would take about 4.4 hours (requests / rate) with no line to show for it; give --duration SECS to bound each point, or a rate of at least 0.00444 req/s"
        );
        assert!(err(&["--rates", "0.001", "--requests", "64"]).contains("about 17.8 hours"));
        // --duration bounds every point; an hour's worth is allowed.
        assert!(plan(&["--rates", "1e-9", "--duration", "10"]).is_ok());
        assert!(plan(&["--rates", "0.01", "--requests", "36"]).is_ok());
    }

    #[test]
    fn a_search_on_too_few_requests_is_refused() {
        assert_eq!(
            err(&["--find-max-rate", "--goodput", "ttft=1", "--requests", "8"]),
            "--find-max-rate judges each rate on at least 20 requests, so that two may miss the 90 % SLO before the rate does; --requests 8 is too few: give --requests 20 or more, or leave it out"
        );
        assert!(plan(&["--find-max-rate", "--goodput", "ttft=1", "--requests", "20"]).is_ok());
        assert!(plan(&["--find-max-rate", "--goodput", "ttft=1"]).is_ok());
    }

    #[test]
    fn default_request_budget_is_max_8_or_twice_c() {
        let p = plan(&[]).unwrap();
        let t = p.throughput().unwrap();
        assert_eq!(t.requests_at(1), 8);
        assert_eq!(t.requests_at(4), 8);
        assert_eq!(t.requests_at(32), 64);
        let fixed = plan(&["--requests", "3"]).unwrap();
        assert_eq!(fixed.throughput().unwrap().requests_at(32), 3);
        assert_eq!(
            plan(&["--duration", "2.5"])
                .unwrap()
                .throughput()
                .unwrap()
                .stop_at(4),
            StopRule::Deadline(Duration::from_millis(2500))
        );
    }

    #[test]
    fn url_forms_are_normalised_and_label_defaults_to_the_host() {
        let p = plan(&["--url", "http://kpro5:30000/v1/"]).unwrap();
        assert_eq!(p.target.url, "http://kpro5:30000");
        assert_eq!(p.output.label, "kpro5");
        let local = plan(&["--url", "http://127.0.0.1:8080"]).unwrap();
        assert_eq!(local.output.label, crate::load::server::host::hostname());
    }

    #[test]
    fn gpus_are_read_only_when_they_can_be_the_servers() {
        let gpu = |args: &[&str]| plan(args).unwrap().target.gpu_telemetry;
        assert_eq!(
            gpu(&["--url", "http://127.0.0.1:8080"]),
            GpuTelemetry::Local
        );
        assert_eq!(
            gpu(&["--url", "http://kpro5:30000"]),
            GpuTelemetry::NotThisHost
        );
        assert_eq!(
            gpu(&["--url", "http://kpro5:30000", "--gpu-telemetry", "local"]),
            GpuTelemetry::Local
        );
        assert_eq!(
            gpu(&["--url", "http://[::1]:8080", "--gpu-telemetry", "off"]),
            GpuTelemetry::Off
        );
    }

    #[test]
    fn a_url_without_its_scheme_or_naming_an_endpoint_says_what_to_give() {
        assert_eq!(
            err(&["--url", "u:s3cret@127.0.0.1:8000"]),
            "--url \"***@127.0.0.1:8000\" has no scheme: give the URL with its scheme, e.g. http://127.0.0.1:8000"
        );
        assert_eq!(
            err(&["--url", "gpu1:8000"]),
            "--url \"gpu1:8000\" has no scheme: give the URL with its scheme, e.g. http://gpu1:8000"
        );
        assert!(plan(&["--url", "http:/gpu1"]).is_ok());
        assert_eq!(
            err(&["--url", "https://u:s3cret@h:1/proxy/v1/chat/completions"]),
            "--url https://***@h:1/proxy/v1/chat/completions names the endpoint /chat/completions: give the server's base URL (http://host:port), not the endpoint, e.g. --url https://***@h:1/proxy; llmsweep adds /v1/completions or /v1/chat/completions itself (--api)"
        );
        assert!(err(&["--url", "http://h/v1/models"]).contains("names the endpoint /v1/models"));
        let p = plan(&["--url", "http://h:1/proxy/v1/"]).unwrap();
        assert_eq!(p.target.url, "http://h:1/proxy");
    }

    #[test]
    fn credentials_in_the_url_are_kept_apart_and_conflicts_refused() {
        let p = plan(&["--url", "http://user:pw@kpro5:8000/v1"]).unwrap();
        assert_eq!(p.target.url, "http://kpro5:8000");
        assert_eq!(p.target.shown_url, "http://***@kpro5:8000");
        assert_eq!(p.output.label, "kpro5");
        assert_eq!(
            p.target.credentials.basic,
            Some(("user".into(), "pw".into()))
        );
        let e = err(&["--url", "http://u:pw@h", "--api-key", "k"]);
        assert!(e.contains("keep one") && !e.contains("pw"), "{e}");
        let e = err(&["--header", "Authorization:Bearer x", "--api-key", "k"]);
        assert!(e.contains("--api-key would both"), "{e}");
        assert!(err(&["--header", "novalue"]).contains("needs NAME:VALUE"));
        let e = err(&["--url", "ftp://u:pw@h"]);
        assert!(e.contains("ftp://***@h") && !e.contains("pw"), "{e}");
        let h = plan(&["--header", "X-Token:abc", "--header", "X-Token:def"]).unwrap();
        let map = h.target.credentials.header_map().unwrap();
        assert_eq!(map.get_all("x-token").iter().count(), 2);
    }

    #[test]
    fn the_warm_up_is_sent_at_a_length_the_context_sweep_runs() {
        let p = plan_of(&["context", "--lengths", "60k,8k,16k"]).unwrap();
        assert_eq!(p.warmup_shape(Some(32_768)), (8000, 64));
        assert_eq!(p.warmup_shape(None), (8000, 64));
        let p = plan_of(&["context", "--lengths", "40k,30k"]).unwrap();
        // 30k + 128 output tokens fits 32768; 40k does not.
        assert_eq!(p.warmup_shape(Some(32_768)), (30_000, 64));
        assert_eq!(p.warmup_shape(Some(30_000)), (30_000, 64));
    }

    #[test]
    fn a_throughput_sweep_must_fit_the_servers_context() {
        let p = plan(&["--input-len", "32000", "--output-len", "768"]).unwrap();
        assert!(p.check_fits(Some(32_768)).is_ok());
        assert!(p.check_fits(None).is_ok());
        let e = p.check_fits(Some(32_767)).unwrap_err().to_string();
        assert!(
            e.contains("need 32768 tokens") && e.contains("at most 31999"),
            "{e}"
        );
    }
}
