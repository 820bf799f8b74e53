//! A run plan: what to measure, where, and where results go, as checked values. Plans are built
//! from flags in `commands::plan`, from code (the demo, tests), or from a bundle being resumed;
//! this module knows no flag.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::bail;
use llmsweep_shared::bundle::{Api, GpuTelemetry};

pub(crate) mod secrets;

use crate::load::run::generator::{Precision, StopRule};
use secrets::Credentials;

/// Most concurrent requests one level may ask for.
pub const MAX_CONCURRENCY: u32 = 16_384;

/// Where to send load, and how.
#[derive(Debug, Clone)]
pub struct TargetPlan {
    /// Base URL without a trailing slash and without the user name and password it may have
    /// been given with: where requests go, and what messages name.
    pub url: String,
    /// `url` as bundles and the terminal show it: `http://***@host:8000` when `--url` carried a
    /// user name or password.
    pub shown_url: String,
    pub host: String,
    pub api: Api,
    pub model: Option<String>,
    /// The API key, the URL's user and password, `--header`s: sent, never written.
    pub credentials: Credentials,
    pub timeout: Duration,
    /// How long to wait for a server that stopped answering (`--wait-server`).
    pub wait_server: Duration,
    /// `--cold-connections`: no connections opened before a level.
    pub cold_connections: bool,
    /// Whether this host's GPUs are read as the server's.
    pub gpu_telemetry: GpuTelemetry,
    /// `--extra-body`: merged into every generation request.
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Where results go and what they are called.
#[derive(Debug, Clone)]
pub struct OutputPlan {
    pub label: String,
    pub notes: BTreeMap<String, String>,
    /// `--gpus`: GPUs serving the model, for numbers per GPU.
    pub gpus: Option<u32>,
    pub out: PathBuf,
    /// `--out s3://…`: the bucket every checkpoint is copied into (the local copy is in `out`,
    /// then `results`).
    pub store: Option<crate::store::bucket::Bucket>,
    /// Seed of the prompts' content: fixed by default, so two hosts send the same work.
    pub seed: u64,
    /// Seed of the words each prompt starts with, new every run, so a rerun finds nothing in
    /// the server's prefix cache.
    pub prefix_seed: u64,
    /// `--wide`: every column of the live table.
    pub wide: bool,
    /// `--goodput`: the bounds a good request meets.
    pub slo: Option<llmsweep_shared::bundle::Slo>,
    /// `--shared-prefix-len`: tokens every prompt of the run starts with.
    pub shared_prefix_len: u64,
    /// `--dataset`, read and checked.
    pub dataset: Option<std::sync::Arc<crate::load::workload::dataset::Dataset>>,
}

/// A checked throughput sweep: its own values only (the target and output are the run's).
#[derive(Debug, Clone)]
pub struct ThroughputPlan {
    pub concurrency: Vec<u32>,
    /// The levels are the default ones, and the sweep ends once a level shows the server
    /// saturated (see `sweep::closed::saturated`); levels given are all run.
    pub until_saturated: bool,
    pub input_len: u64,
    pub output_len: u64,
    /// `--shapes`: one sweep per input/output pair, in this order; empty for the one sweep at
    /// `input_len` and `output_len` (which are then the first shape's).
    pub shapes: Vec<llmsweep_shared::shapes::Shape>,
    /// Requests per level when fixed by `--requests`; `None` means the default rule.
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    /// Passes over each level (`--repeats`).
    pub repeats: u32,
    /// An open-loop sweep over offered rates instead of the concurrency levels.
    pub open: Option<OpenPlan>,
    /// `--length-spread`: 0 for fixed lengths.
    pub spread: f64,
    /// `--turns`: requests per conversation.
    pub turns: u32,
    /// How precise each level runs until, when neither `requests`, `duration` nor `repeats`
    /// fixes its size.
    pub precision: Option<Precision>,
}

/// `--find-max-rate`'s settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchPlan {
    pub slo_fraction: f64,
    pub precision: f64,
}

impl SearchPlan {
    /// Fewest requests a rate is judged on: enough that two of them may miss the SLO before
    /// the rate does (`2 / (1 − fraction)`, 20 at 90 %), so one slow request is never the whole
    /// verdict; at least 10, at most 200.
    pub fn min_requests(&self) -> u64 {
        let room = 1.0 - self.slo_fraction;
        if room <= 0.0 {
            return 10;
        }
        ((2.0 / room - 1e-9).ceil() as u64).clamp(10, 200)
    }
}

/// A checked rate sweep's own values: the rates given, or a search that finds them.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenPlan {
    /// The offered rates, in the order given; empty for a search.
    pub rates: Vec<f64>,
    /// The rates are found by a search for the highest one that meets the SLO.
    pub search: Option<SearchPlan>,
    pub arrival: llmsweep_shared::bundle::Arrival,
    pub burstiness: f64,
    pub max_concurrency: Option<u32>,
}

/// The concurrency levels of a throughput sweep when `--concurrency` does not name them.
pub const DEFAULT_CONCURRENCY: [u32; 8] = [1, 2, 4, 8, 16, 32, 64, 100];

/// Most requests per second `--rates` may offer.
pub const MAX_RATE: f64 = 100_000.0;

/// Seconds of arrivals a rate point sends by default.
pub(crate) const RATE_POINT_S: f64 = 30.0;

/// Most seconds of arrivals one rate point may be planned to take when `--duration` does not
/// bound it: a longer point is refused before anything is sent.
pub const MAX_RATE_POINT_S: f64 = 3600.0;

/// Most passes `--repeats` may ask for per level.
pub const MAX_REPEATS: u64 = 100;

impl ThroughputPlan {
    /// The plan of each sweep: one per shape with `--shapes` (each keeping the list, so its
    /// sweep knows it is one of several), else this one.
    pub fn per_shape(&self) -> Vec<ThroughputPlan> {
        if self.shapes.is_empty() {
            return vec![self.clone()];
        }
        self.shapes
            .iter()
            .map(|s| ThroughputPlan {
                input_len: s.input,
                output_len: s.output,
                ..self.clone()
            })
            .collect()
    }

    /// The spread as the bundle records it: absent for fixed lengths.
    pub fn length_spread(&self) -> Option<f64> {
        (self.spread > 0.0).then_some(self.spread)
    }

    /// When the point at offered rate `rate` stops sending: `--duration`, else `--requests`,
    /// else [`RATE_POINT_S`] seconds of arrivals (at least 16).
    pub fn stop_at_rate(&self, rate: f64) -> StopRule {
        match (self.duration, self.requests) {
            (Some(d), _) => StopRule::Deadline(d),
            (None, Some(n)) => StopRule::Count(n),
            (None, None) => {
                StopRule::Count(((rate * RATE_POINT_S).ceil() as u64).clamp(16, 100_000))
            }
        }
    }

    /// Requests the point at offered rate `rate` sends when a count bounds it (`None` with
    /// `--duration`): `--requests`, else [`RATE_POINT_S`] seconds of arrivals, at least 16.
    pub fn requests_at_rate(&self, rate: f64) -> Option<u64> {
        match self.stop_at_rate(rate) {
            StopRule::Count(n) => Some(n),
            StopRule::Deadline(_) | StopRule::Precise(_) => None,
        }
    }

    /// Seconds of arrivals the point at `rate` is planned to send: `--duration`, else its
    /// requests / the rate (the requests in flight at the end take longer still).
    pub fn seconds_at_rate(&self, rate: f64) -> f64 {
        match (self.duration, self.requests_at_rate(rate)) {
            (Some(d), _) => d.as_secs_f64(),
            (None, Some(n)) => n as f64 / rate,
            (None, None) => f64::INFINITY,
        }
    }

    /// Requests one pass sends at concurrency `c`: `--requests`, else `max(8, 2c)`.
    pub fn requests_at(&self, c: u32) -> u64 {
        self.requests.unwrap_or((2 * c as u64).max(8))
    }

    /// When level `c` stops sending.
    pub fn stop_at(&self, c: u32) -> StopRule {
        match (self.duration, self.precision) {
            (Some(d), _) => StopRule::Deadline(d),
            (None, Some(p)) if self.requests.is_none() => StopRule::Precise(p),
            (None, _) => StopRule::Count(self.requests_at(c)),
        }
    }
}

/// A checked context sweep: its own values only.
#[derive(Debug, Clone)]
pub struct ContextPlan {
    pub lengths: Vec<u64>,
    pub output_len: u64,
    pub concurrency: Vec<u32>,
    pub repeats: u64,
    pub force: bool,
}

/// Which sweeps a run does, in the order it does them.
#[derive(Debug, Clone)]
pub enum Sweeps {
    Throughput(ThroughputPlan),
    Context(ContextPlan),
    /// `run`: the throughput sweep, then the context sweep.
    Both(ThroughputPlan, ContextPlan),
}

/// One session: where to send load, where results go, the warm-up, and the sweeps.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub target: TargetPlan,
    pub output: OutputPlan,
    /// Unrecorded requests sent before the first sweep.
    pub warmup: u64,
    pub sweeps: Sweeps,
    /// The interrupted bundle this run finishes.
    pub resume: Option<Resume>,
}

/// An interrupted bundle to finish: its levels so far are kept, the rest are run.
#[derive(Debug, Clone)]
pub struct Resume {
    pub path: PathBuf,
    pub bundle: llmsweep_shared::Bundle,
}

impl RunPlan {
    /// The throughput sweep, when the run has one.
    pub fn throughput(&self) -> Option<&ThroughputPlan> {
        match &self.sweeps {
            Sweeps::Throughput(t) | Sweeps::Both(t, _) => Some(t),
            Sweeps::Context(_) => None,
        }
    }

    /// The context sweep, when the run has one.
    pub fn context(&self) -> Option<&ContextPlan> {
        match &self.sweeps {
            Sweeps::Context(c) | Sweeps::Both(_, c) => Some(c),
            Sweeps::Throughput(_) => None,
        }
    }

    /// The word in the bundle's file name.
    pub fn kind(&self) -> &'static str {
        match self.sweeps {
            Sweeps::Throughput(_) => "throughput",
            Sweeps::Context(_) => "context",
            Sweeps::Both(..) => "run",
        }
    }

    /// Connections to keep open: the highest concurrency of any sweep.
    pub fn pool(&self) -> usize {
        let t = self
            .throughput()
            .into_iter()
            .flat_map(|p| p.concurrency.iter());
        let c = self
            .context()
            .into_iter()
            .flat_map(|p| p.concurrency.iter());
        t.chain(c).copied().max().unwrap_or(1) as usize
    }

    /// Refuses a dataset a sweep cannot send, and a shared prefix that leaves a prompt no room
    /// of its own (every prompt needs its per-run words and some content after it).
    pub fn check_workload(&self) -> anyhow::Result<()> {
        if let Some(d) = &self.output.dataset {
            if self.context().is_some() {
                bail!(
                    "--dataset sends its prompts as written, so it cannot sweep input lengths: use it with throughput (levels or --rates), not a context sweep"
                );
            }
            if d.has_messages() && self.target.api != Api::Chat {
                bail!("--dataset {} has chat messages: add --api chat", d.file);
            }
        }
        let n = self.output.shared_prefix_len;
        if n == 0 {
            return Ok(());
        }
        let shortest = [
            self.throughput().map(|t| t.input_len),
            self.context().and_then(|c| c.lengths.iter().copied().min()),
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(u64::MAX);
        let room = crate::load::workload::PREFIX_WORDS + 8;
        if n.saturating_add(room) > shortest {
            bail!(
                "--shared-prefix-len {n} leaves the {shortest}-token prompts no room of their own: use at most {}",
                shortest.saturating_sub(room)
            );
        }
        Ok(())
    }

    /// Warm-up requests: the first sweep's input length, at most 64 output tokens; for a
    /// context sweep its shortest length that fits the server's context (`max_context`, when
    /// known), so the warm-up is never sent at a length the sweep skips.
    pub fn warmup_shape(&self, max_context: Option<u64>) -> (u64, u64) {
        match (self.throughput(), self.context()) {
            (Some(t), _) => (t.input_len, t.output_len.min(64)),
            (None, Some(c)) => {
                let output = c.output_len.min(64);
                let fits = |l: &&u64| max_context.is_none_or(|m| **l + c.output_len <= m);
                let shortest = c.lengths.iter().filter(fits).min();
                let shortest = shortest.or(c.lengths.iter().min()).copied().unwrap_or(1);
                (shortest, output)
            }
            (None, None) => (1, 1),
        }
    }

    /// Refuses a throughput sweep whose requests cannot fit the server's context
    /// (`max_context`, when the server says it): each would be refused, so none is sent. A
    /// dataset's prompts have their own lengths and are not checked here.
    pub fn check_fits(&self, max_context: Option<u64>) -> anyhow::Result<()> {
        let (Some(t), Some(m)) = (self.throughput(), max_context) else {
            return Ok(());
        };
        if self.output.dataset.is_some() {
            return Ok(());
        }
        for s in t.per_shape() {
            let needed = s.input_len.saturating_add(s.output_len);
            if needed <= m {
                continue;
            }
            if s.output_len >= m {
                // No input fits: the output alone fills the context.
                let (asked, example) = if t.shapes.is_empty() {
                    (
                        format!("--output-len {}", s.output_len),
                        format!("--output-len {}", m / 4),
                    )
                } else {
                    (
                        format!("--shapes {}x{}", s.input_len, s.output_len),
                        format!("--shapes {}x{}", m / 2, m / 4),
                    )
                };
                bail!(
                    "{asked} asks for as many output tokens as the server's whole context of {m}, or more: no prompt fits beside them; give an output well below {m}, e.g. {example}"
                );
            }
            if t.shapes.is_empty() {
                bail!(
                    "--input-len {} and --output-len {} need {needed} tokens of context; the server's is {m}: use an --input-len of at most {}",
                    s.input_len,
                    s.output_len,
                    m.saturating_sub(s.output_len)
                );
            }
            bail!(
                "--shapes {}x{} needs {needed} tokens of context; the server's is {m}: give that shape an input of at most {}",
                s.input_len,
                s.output_len,
                m.saturating_sub(s.output_len)
            );
        }
        Ok(())
    }
}

/// A stretch of time in words, to the precision a plan needs: `45 s`, `12 min`, `17.8 hours`,
/// `63 years`.
pub fn time_words(s: f64) -> String {
    const YEAR: f64 = 365.25 * 86_400.0;
    if !s.is_finite() {
        "forever".to_string()
    } else if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5_400.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 3.0 * 86_400.0 {
        format!("{:.1} hours", s / 3_600.0)
    } else if s < YEAR {
        format!("{:.0} days", s / 86_400.0)
    } else if s < 1e6 * YEAR {
        format!("{:.0} years", s / YEAR)
    } else {
        "more than a million years".to_string()
    }
}

/// A rate in requests per second with the digits that matter at its size: `13,000`, `2.5`,
/// `0.105`, `0.000278`.
pub fn rate_words(v: f64) -> String {
    // Past what any server serves, or below one request a year: the number as written short.
    if !v.is_finite() || v <= 1e-9 || v >= 1e12 {
        return llmsweep_shared::text::number(v);
    }
    if v >= 1000.0 {
        let digits = format!("{:.0}", v);
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        return out;
    }
    // Three significant digits, trailing zeros dropped.
    let decimals = (2 - v.log10().floor() as i32).max(0) as usize;
    let t = format!("{v:.decimals$}");
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

/// Whether a URL's host is this machine.
pub fn is_loopback(host: &str) -> bool {
    let h = host.trim_matches(['[', ']']);
    h == "localhost"
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl TargetPlan {
    /// Whether the target is this machine.
    pub fn is_loopback(&self) -> bool {
        is_loopback(&self.host)
    }
}

/// A seed that differs between runs, so a rerun does not hit the server's prefix cache with the
/// previous run's prompts (it seeds only the first words of each prompt).
pub fn random_prefix_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    crate::load::workload::SplitMix64::new(nanos ^ ((std::process::id() as u64) << 32)).next_u64()
        >> 11
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_times_in_words_stay_short_at_the_edges_of_f64() {
        assert_eq!(rate_words(13_000.0), "13,000");
        assert_eq!(rate_words(2.5), "2.5");
        assert_eq!(rate_words(0.000278), "0.000278");
        assert_eq!(rate_words(1e-300), "1e-300");
        assert_eq!(rate_words(1e300), "1e300");
        assert_eq!(time_words(45.0), "45 s");
        assert_eq!(time_words(63.0 * 365.25 * 86_400.0), "63 years");
        assert_eq!(time_words(1e300), "more than a million years");
        assert_eq!(time_words(f64::INFINITY), "forever");
    }
}
