//! `llmsweep selftest`: the collector against its own loopback endpoint, to show how many
//! tokens per second it can read and how accurate its timestamps are, so that a client limit is
//! never reported as the server's.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use clap::{Args, ValueEnum};
use llmsweep_shared::bundle::{Api, Hosts, Selftest, SelftestLevel, SelftestMode, Target};
use llmsweep_shared::charts::axis::fixed;
use llmsweep_shared::metrics::Stats;
use llmsweep_shared::selftest::millis;

use crate::load::plan::MAX_CONCURRENCY;
use crate::load::server::capacity::{self, Capacity};
use crate::output::table::{self, Column};
use crate::selftest::{Endpoint, EndpointAt, LevelSpec, Pacing, PacingJson, run_level, wire};
use crate::store;

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # Both pacings at 1, 64 and 512 streams; the bundle goes into ./results
  llmsweep selftest

  # Flat out only, at 1 and 512 streams
  llmsweep selftest --mode flat-out --concurrency 1,512

  # Up to 4096 streams: the endpoint in a process of its own (with it inside, every stream
  # takes two open files), measured from another terminal
  llmsweep selftest --serve 127.0.0.1:18400 --mode flat-out --per-event 8
  llmsweep selftest --url http://127.0.0.1:18400 --concurrency 1,512,4096")]
pub struct SelftestArgs {
    /// Concurrency levels, run in this order (at most 16384).
    ///
    /// Concurrency levels, run in this order (at most 16384). With the endpoint in this process
    /// every stream holds two open files, so above half the open-files limit the endpoint
    /// needs a process of its own: see --url.
    #[arg(long, value_delimiter = ',', default_value = "1,64,512")]
    pub concurrency: Vec<u32>,
    /// Which pacings to run at each level.
    #[arg(long, value_enum, default_value_t = ModeArg::All)]
    pub mode: ModeArg,
    /// Requests per flat-out level [default: max(256, 4 × concurrency)].
    #[arg(long)]
    pub requests: Option<u64>,
    /// Requests per scheduled level [default: max(8, concurrency)].
    #[arg(long)]
    pub scheduled_requests: Option<u64>,
    /// Tokens per flat-out request.
    #[arg(long, default_value_t = 256)]
    pub output_len: u64,
    /// Tokens per scheduled request.
    ///
    /// Tokens per scheduled request (each of its events is paced, so it takes
    /// first-ms + (n − 1) × interval-ms). ITL errors are computed over the first ~180 tokens.
    #[arg(long, default_value_t = 64)]
    pub scheduled_output_len: u64,
    /// Tokens per event of the flat-out runs, one run each.
    #[arg(long, value_delimiter = ',', default_value = "1,8")]
    pub per_event: Vec<u32>,
    /// Scheduled mode: milliseconds from the request to its first event.
    #[arg(long, default_value_t = 50)]
    pub first_ms: u64,
    /// Scheduled mode: milliseconds between events.
    #[arg(long, default_value_t = 10)]
    pub interval_ms: u64,
    /// Seconds one request may take.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Folder the bundle is written to.
    #[arg(long, short = 'o', alias = "output", default_value = "results")]
    pub out: PathBuf,
    /// Name of the run [default: this host's name].
    #[arg(long)]
    pub label: Option<String>,
    /// Only serve the endpoint at this loopback address, e.g. 127.0.0.1:18400.
    ///
    /// Only serve the endpoint at this loopback address (e.g. 127.0.0.1:18400) until Ctrl-C,
    /// paced by --mode flat-out (the first --per-event) or --mode scheduled, for another
    /// process to measure: `llmsweep selftest --url`, or another tool.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["url", "concurrency", "requests", "scheduled_requests"])]
    pub serve: Option<std::net::SocketAddr>,
    /// Measure against an endpoint already serving here.
    ///
    /// Measure against an endpoint already serving here (`llmsweep selftest --serve` in
    /// another process), at its own pacing, so this process holds only the client's open
    /// files and its CPU time is all the client's.
    #[arg(long, value_name = "URL", conflicts_with_all = ["mode", "per_event", "first_ms", "interval_ms"])]
    pub url: Option<String>,
}

/// `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Flat out at every `--per-event`, then scheduled.
    All,
    FlatOut,
    Scheduled,
}

impl SelftestArgs {
    /// The one pacing `--serve` serves.
    pub fn serve_pacing(&self) -> anyhow::Result<Pacing> {
        match self.mode {
            ModeArg::All => bail!(
                "--serve serves one pacing: add --mode flat-out (at the first --per-event) or --mode scheduled"
            ),
            // The first count: its default lists two, and the advice printed elsewhere gives none.
            ModeArg::FlatOut => match self.per_event.first() {
                Some(&n) if n > 0 => Ok(Pacing::FlatOut { per_event: n }),
                _ => bail!("--serve --mode flat-out needs a --per-event count of at least 1"),
            },
            ModeArg::Scheduled if self.interval_ms == 0 => {
                bail!("--interval-ms must be at least 1")
            }
            ModeArg::Scheduled => Ok(Pacing::Scheduled {
                first: Duration::from_millis(self.first_ms),
                interval: Duration::from_millis(self.interval_ms),
            }),
        }
    }

    /// The levels to run, in order; every error names the flag to fix. `external` is the
    /// pacing of an endpoint of `--url`, which then is the only one.
    pub fn levels(&self, external: Option<Pacing>) -> anyhow::Result<Vec<LevelSpec>> {
        if self.concurrency.is_empty() {
            bail!("--concurrency needs at least one level");
        }
        if let Some(&c) = self
            .concurrency
            .iter()
            .find(|&&c| c == 0 || c > MAX_CONCURRENCY)
        {
            bail!("--concurrency {c} is out of range: use 1 to {MAX_CONCURRENCY}");
        }
        let checks = [
            (self.output_len == 0, "--output-len must be at least 1"),
            (
                self.scheduled_output_len == 0,
                "--scheduled-output-len must be at least 1",
            ),
            (
                self.per_event.is_empty() || self.per_event.contains(&0),
                "--per-event needs counts of at least 1",
            ),
            (self.requests == Some(0), "--requests must be at least 1"),
            (
                self.scheduled_requests == Some(0),
                "--scheduled-requests must be at least 1",
            ),
            (self.interval_ms == 0, "--interval-ms must be at least 1"),
            (self.timeout == 0, "--timeout must be at least 1"),
        ];
        if let Some((_, why)) = checks.iter().find(|(broken, _)| *broken) {
            bail!("{why}");
        }
        let mut levels = Vec::new();
        for &c in &self.concurrency {
            if let Some(pacing) = external {
                let scheduled = matches!(pacing, Pacing::Scheduled { .. });
                levels.push(LevelSpec {
                    pacing,
                    concurrency: c,
                    requests: match (scheduled, self.requests, self.scheduled_requests) {
                        (false, n, _) => n.unwrap_or(256.max(4 * u64::from(c))),
                        (true, _, n) => n.unwrap_or(8.max(u64::from(c))),
                    },
                    output_len: if scheduled {
                        self.scheduled_output_len
                    } else {
                        self.output_len
                    },
                });
                continue;
            }
            if self.mode != ModeArg::Scheduled {
                for &per_event in &self.per_event {
                    levels.push(LevelSpec {
                        pacing: Pacing::FlatOut { per_event },
                        concurrency: c,
                        requests: self.requests.unwrap_or(256.max(4 * u64::from(c))),
                        output_len: self.output_len,
                    });
                }
            }
            if self.mode != ModeArg::FlatOut {
                levels.push(LevelSpec {
                    pacing: Pacing::Scheduled {
                        first: Duration::from_millis(self.first_ms),
                        interval: Duration::from_millis(self.interval_ms),
                    },
                    concurrency: c,
                    requests: self.scheduled_requests.unwrap_or(8.max(u64::from(c))),
                    output_len: self.scheduled_output_len,
                });
            }
        }
        Ok(levels)
    }
}

/// `--serve`: the endpoint alone, until a signal.
async fn serve(a: &SelftestArgs, addr: std::net::SocketAddr) -> anyhow::Result<ExitCode> {
    let pacing = a.serve_pacing()?;
    if !addr.ip().is_loopback() {
        bail!("--serve {addr}: the selftest endpoint serves only on loopback (127.0.0.1 or ::1)");
    }
    let endpoint = Endpoint::start(pacing, addr)
        .await
        .map_err(|e| anyhow::anyhow!("--serve {addr}: cannot listen there ({e})"))?;
    let interrupt = super::watch_signals();
    let how = match pacing {
        Pacing::FlatOut { per_event } => {
            format!("flat out, {per_event} token(s) per event")
        }
        Pacing::Scheduled { first, interval } => format!(
            "scheduled: first event {} ms after the request, then one every {} ms",
            first.as_millis(),
            interval.as_millis()
        ),
    };
    outln!(
        "selftest endpoint on {} ({how}); measure it with `llmsweep selftest --url {}`; Ctrl-C stops it",
        endpoint.url(),
        endpoint.url()
    );
    interrupt.stop_sending.cancelled().await;
    endpoint.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// The pacing of the endpoint at `url`, from its `GET /selftest`.
async fn external_pacing(url: &str) -> anyhow::Result<Pacing> {
    let parsed = reqwest::Url::parse(url).map_err(|e| {
        anyhow::anyhow!("--url {url} is not a URL ({e}); e.g. --url http://127.0.0.1:18400")
    })?;
    if !parsed
        .host_str()
        .is_some_and(crate::load::plan::is_loopback)
    {
        bail!("--url {url}: the selftest endpoint runs on this machine; use a loopback address");
    }
    let ask = format!("{}/selftest", url.trim_end_matches('/'));
    let answer = crate::boundary::http::builder()
        .build()?
        .get(&ask)
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map_err(|e| {
            anyhow::anyhow!(
                "--url {url}: no selftest endpoint answers there ({e}); start one with `llmsweep selftest --serve 127.0.0.1:18400 --mode flat-out`"
            )
        })?;
    let answer = crate::boundary::http::read_capped(answer, crate::boundary::http::ERROR_BODY_CAP)
        .await
        .map_err(|e| anyhow::anyhow!("--url {url}: GET /selftest: {e}"))?;
    let pacing: PacingJson = serde_json::from_slice(&answer).map_err(|e| {
        anyhow::anyhow!("--url {url}: GET /selftest did not describe a pacing ({e}); is it an llmsweep selftest endpoint?")
    })?;
    pacing
        .pacing()
        .map_err(|e| anyhow::anyhow!("--url {url}: the endpoint's pacing is wrong: {e}"))
}

pub(crate) async fn run(a: SelftestArgs) -> anyhow::Result<ExitCode> {
    if let Some(addr) = a.serve {
        return serve(&a, addr).await;
    }
    let (at, external) = match &a.url {
        Some(url) => (
            EndpointAt::External(url.trim_end_matches('/').to_string()),
            Some(external_pacing(url).await?),
        ),
        None => (EndpointAt::Own, None),
    };
    let levels = a.levels(external)?;
    if let Some(limit) = crate::load::server::host::open_files_limit() {
        check_open_files(&levels, &at, limit)?;
    }
    store::check_out_dir(&a.out)?;
    let label = a
        .label
        .clone()
        .unwrap_or_else(crate::load::server::host::hostname);
    let created = chrono::Utc::now();
    let path = store::bundle_path(&a.out, &label, "selftest", &created);
    let mut bundle = selftest_bundle(label, created, &at);
    let interrupt = super::watch_signals();
    outln!("{}", header());
    let mut all_exact = true;
    for spec in levels {
        if interrupt.is_stopped() {
            break;
        }
        let level = run_level(spec, &at, Duration::from_secs(a.timeout), &interrupt).await?;
        print_level(&level, a.interval_ms);
        all_exact &= level.exact == level.requests;
        if let Some(s) = bundle.selftest.as_mut() {
            s.levels.push(level);
        }
        store::write_atomic(&path, &bundle)?;
    }
    bundle.complete = !interrupt.is_stopped();
    store::write_atomic(&path, &bundle)?;
    outln!("\nbundle: {}", path.display());
    keep_capacity(&bundle);
    if let Some(sig) = interrupt.signal.get() {
        return Ok(ExitCode::from(sig.exit_code()));
    }
    Ok(if all_exact {
        ExitCode::SUCCESS
    } else {
        outln!("some requests failed or were short: the client is not reading streams right");
        ExitCode::FAILURE
    })
}

/// The selftest's bundle before its levels: this host, and the endpoint as its target.
fn selftest_bundle(
    label: String,
    created: chrono::DateTime<chrono::Utc>,
    at: &EndpointAt,
) -> llmsweep_shared::Bundle {
    let mut bundle = store::new_bundle(
        format!("{:016x}", created.timestamp_micros()),
        label,
        created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        super::command_line(),
        Target {
            url: match at {
                EndpointAt::Own => {
                    "http://127.0.0.1 (llmsweep selftest endpoint, in process)".into()
                }
                EndpointAt::External(url) => format!("{url} (llmsweep selftest endpoint)"),
            },
            api: Api::Completions,
            model: wire::MODEL.into(),
            engine: Some("llmsweep selftest".into()),
            engine_version: Some(env!("CARGO_PKG_VERSION").into()),
            max_context: None,
            max_running_requests: None,
            server_args: None,
            simulated: true,
            probes: Default::default(),
        },
    );
    bundle.hosts = Hosts {
        client: crate::load::server::host::client_facts(),
        ..Hosts::default()
    };
    bundle.selftest = Some(Selftest { levels: Vec::new() });
    bundle
}

/// A level's row, and why it is not to be trusted when it is not: the endpoint fell behind its
/// schedule (`interval_ms` apart), or requests failed.
fn print_level(level: &SelftestLevel, interval_ms: u64) {
    outln!("{}", row(level));
    if let Some(lag) = level
        .first_event_lag_s
        .filter(|l| l.p50 > interval_ms as f64 / 1e3)
    {
        outln!(
            "      ↳ the endpoint sent first events {} ms behind schedule at p50: this machine (client and endpoint together) is the limit at C={}",
            millis(lag.p50),
            level.concurrency
        );
    }
    if let Some((why, n)) = &level.commonest_error {
        outln!(
            "      ↳ {n} of {} requests failed: {}",
            level.requests,
            crate::output::terminal::inert(why)
        );
    }
}

/// Keeps the capacity the selftest measured, for every later sweep's client-bound check.
fn keep_capacity(bundle: &llmsweep_shared::Bundle) {
    let measured = bundle.created_at.clone();
    let Some(c) = bundle
        .selftest
        .as_ref()
        .and_then(|s| Capacity::of(s, measured))
    else {
        return;
    };
    match capacity::save(&c) {
        Ok(p) => outln!(
            "capacity: {:.0} events/s, kept in {} for every sweep's client-bound check",
            c.events_s,
            p.display()
        ),
        Err(e) => outln!("capacity: {:.0} events/s, not kept ({e})", c.events_s),
    }
}

/// Refuses levels that need more open files than `limit`: a connection per stream, and with
/// the endpoint in this process its end of each connection too.
fn check_open_files(levels: &[LevelSpec], at: &EndpointAt, limit: u64) -> anyhow::Result<()> {
    let Some(most) = levels.iter().map(|l| u64::from(l.concurrency)).max() else {
        return Ok(());
    };
    if *at == EndpointAt::Own {
        let needed = 2 * most + crate::load::server::host::FILES_BESIDE_STREAMS;
        if needed > limit {
            bail!(
                "--concurrency {most} with the endpoint in this process needs about {needed} open files (both ends of every connection), and this process may open {limit}; run the endpoint as a process of its own, `llmsweep selftest --serve 127.0.0.1:18400 --mode flat-out`, and measure it from here with --url http://127.0.0.1:18400"
            );
        }
        return Ok(());
    }
    crate::load::server::host::check_open_files(most, limit)
}

/// Columns: header and width.
const COLS: &[Column] = &[
    Column {
        header: "mode",
        width: 9,
    },
    Column {
        header: "C",
        width: 5,
    },
    Column {
        header: "ok/asked",
        width: 11,
    },
    Column {
        header: "tok/s",
        width: 10,
    },
    Column {
        header: "events/s",
        width: 10,
    },
    Column {
        header: "CPU µs/tok",
        width: 10,
    },
    Column {
        header: "peak MiB",
        width: 8,
    },
    Column {
        header: "new conns",
        width: 9,
    },
    Column {
        header: "TTFT err p50/p99/max ms",
        width: 23,
    },
    Column {
        header: "ITL err p50/p99/max ms",
        width: 22,
    },
];

fn header() -> String {
    table::header(COLS)
}

/// One level's row, cells right-aligned (a wider cell widens only its row).
pub(crate) fn row(l: &SelftestLevel) -> String {
    let mode = match l.mode {
        SelftestMode::FlatOut => format!("flat×{}", l.tokens_per_event),
        SelftestMode::Scheduled => "scheduled".into(),
    };
    let ms = |s: Option<Stats>| {
        s.map_or("-".into(), |s| {
            format!("{}/{}/{}", millis(s.p50), millis(s.p99), millis(s.max))
        })
    };
    let cells = [
        mode,
        l.concurrency.to_string(),
        format!("{}/{}", l.exact, l.requests),
        fixed(l.tok_s, 0),
        fixed(l.events_s, 0),
        l.cpu_us_per_token.map_or("-".into(), |c| fixed(c, 2)),
        l.peak_rss_bytes
            .map_or("-".into(), |b| fixed(b as f64 / (1 << 20) as f64, 0)),
        l.new_connections.to_string(),
        ms(l.ttft_error_s),
        ms(l.itl_error_s),
    ];
    table::row(COLS, &cells)
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use crate::selftest::Pacing;
    use clap::Parser;

    fn args(extra: &[&str]) -> super::SelftestArgs {
        let mut argv = vec!["llmsweep", "selftest"];
        argv.extend_from_slice(extra);
        match Cli::try_parse_from(argv).expect("parses").command {
            Command::Selftest(a) => a,
            _ => panic!("not selftest"),
        }
    }

    #[test]
    fn default_levels_are_two_flat_out_and_one_scheduled_per_concurrency() {
        let levels = args(&[]).levels(None).expect("valid");
        assert_eq!(levels.len(), 9);
        let requests: Vec<u64> = levels.iter().map(|l| l.requests).collect();
        assert_eq!(requests, [256, 256, 8, 256, 256, 64, 2048, 2048, 512]);
    }

    #[test]
    fn milliseconds_that_round_to_zero_have_no_sign() {
        use llmsweep_shared::selftest::millis;
        assert_eq!(millis(-0.000_001), "0.00");
        assert_eq!(millis(-0.001_5), "-1.50");
        assert_eq!(millis(0.012_345), "12.35");
    }

    #[test]
    fn bad_flags_are_named() {
        let e = args(&["--concurrency", "50000"]).levels(None).unwrap_err();
        assert!(e.to_string().contains("--concurrency 50000"));
        let levels = args(&["--concurrency", "10000"])
            .levels(None)
            .expect("in range");
        let e = super::check_open_files(&levels, &super::EndpointAt::Own, 20_000).unwrap_err();
        assert!(e.to_string().contains("--serve 127.0.0.1:18400"), "{e}");
        let far = super::EndpointAt::External("http://127.0.0.1:1".into());
        assert!(super::check_open_files(&levels, &far, 20_000).is_ok());
        let e = args(&["--per-event", "0"]).levels(None).unwrap_err();
        assert!(e.to_string().contains("--per-event"));
    }

    /// Every in-process selftest the help and docs/selftest.md show runs where a process may
    /// open 4096 files (a common hard limit): the help once showed 4096 streams with the
    /// endpoint inside, 8256 open files, which exits 2 there.
    #[test]
    fn the_documented_invocations_run_within_4096_open_files() {
        use clap::CommandFactory;
        let cli = Cli::command();
        let help = cli
            .find_subcommand("selftest")
            .and_then(|c| c.get_after_help())
            .map(ToString::to_string)
            .unwrap_or_default();
        let docs = include_str!("../../../docs/selftest.md");
        let examples: Vec<&str> = help
            .lines()
            .chain(docs.lines())
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| l.starts_with("llmsweep selftest"))
            .collect();
        assert!(examples.len() >= 5, "{examples:?}");
        for line in examples {
            let words: Vec<&str> = line.split_whitespace().skip(2).collect();
            let a = args(&words);
            if a.serve.is_some() {
                assert!(a.serve_pacing().is_ok(), "{line}");
                continue;
            }
            let at = match &a.url {
                Some(u) => super::EndpointAt::External(u.clone()),
                None => super::EndpointAt::Own,
            };
            let levels = a.levels(None).unwrap_or_else(|e| panic!("{line}: {e}"));
            let fits = super::check_open_files(&levels, &at, 4096);
            assert!(
                fits.is_ok() || at != super::EndpointAt::Own,
                "{line}: {fits:?}"
            );
        }
    }

    #[test]
    fn the_serve_command_the_advice_gives_works_as_written() {
        // `selftest --serve 127.0.0.1:18400 --mode flat-out`, as two messages advise.
        let a = args(&["--serve", "127.0.0.1:18400", "--mode", "flat-out"]);
        assert!(matches!(
            a.serve_pacing().unwrap(),
            Pacing::FlatOut { per_event: 1 }
        ));
        let a = args(&[
            "--serve",
            "127.0.0.1:18400",
            "--mode",
            "flat-out",
            "--per-event",
            "8,1",
        ]);
        assert!(matches!(
            a.serve_pacing().unwrap(),
            Pacing::FlatOut { per_event: 8 }
        ));
        let e = args(&["--serve", "127.0.0.1:18400"])
            .serve_pacing()
            .unwrap_err();
        assert!(e.to_string().contains("--mode flat-out"), "{e}");
    }
}
