//! Everything before the first measured request: reach the server, read its fingerprint, pick
//! the model, calibrate prompts, warm up, and open the bundle.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::bail;
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{
    Calibration, DatasetFacts, ErrorKind, GpuTelemetry, Hosts, Target, Workload,
};
use llmsweep_shared::metrics::definitions;

use crate::load::events::{Event, Sink};
use crate::load::plan::Resume;
use crate::load::plan::{OutputPlan, TargetPlan};
use crate::load::run::client::{Client, LoadHttp, http_client};
use crate::load::run::generator::Interrupt;
use crate::load::run::lock::RunLock;
use crate::load::run::stream::trace::Keep;
use crate::load::run::writer::{BundleWriter, SweepHandle};
use crate::load::server::probe::{Fingerprint, probe};
use crate::load::server::tokenize;
use crate::load::workload::{PREFIX_WORDS, PromptBuilder, SplitMix64, TokenModel, digest};
use crate::output::terminal::inert;
use crate::store;

/// How long each fingerprint probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(4);

/// How the server is reached and watched during a run.
#[derive(Debug)]
pub(crate) struct ServerHandle {
    /// The load's client: its connection pool, the model, the request options.
    pub client: Arc<Client>,
    /// The client that scrapes `/metrics` during levels, apart from the load's pool.
    pub telemetry_http: reqwest::Client,
    /// The `nvidia-smi` read during points, when this host's GPUs are the server's.
    pub nvidia_smi: Option<&'static std::path::Path>,
    /// What `llmsweep selftest` measured this client to read, when it was run here.
    pub capacity: Option<crate::load::server::capacity::Capacity>,
}

/// The run's settings every sweep follows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunOptions {
    /// `--goodput`: every sweep and point of the run counts goodput against it.
    pub slo: Option<llmsweep_shared::bundle::Slo>,
    /// How long one request may take.
    pub timeout: Duration,
    /// How long to wait for a server that stopped answering.
    pub wait_server: Duration,
    /// Open each level's connections before it (not with `--cold-connections`).
    pub preopen: bool,
}

/// A run in progress: the server, the prompts, the bundle being filled, and how it goes.
#[derive(Debug)]
pub(crate) struct Session {
    pub server: ServerHandle,
    pub prompts: Arc<PromptBuilder>,
    pub writer: BundleWriter,
    pub options: RunOptions,
    pub interrupt: Interrupt,
    /// The server stopped answering and did not come back, or refused the run's first point
    /// whole: no more levels are run.
    pub gave_up: bool,
    /// Why, when it is not that the server stopped answering.
    pub gave_up_why: Option<String>,
    /// One request's pace alone, from the last warm-up request that succeeded: its TTFT and
    /// its seconds per output token after the first, for a time estimate before any level.
    pub warmup_pace: Option<(f64, f64)>,
    /// Things to tell the user before the first level (refused request options, GPU readings).
    pub notes: Vec<String>,
    /// Where the run's events go.
    events: Arc<dyn Sink>,
    /// Sweeps begun so far in this run.
    sweeps_begun: usize,
}

/// How long a warm-up request goes unanswered before the terminal is told it is waiting.
const WARMUP_QUIET: Duration = Duration::from_secs(15);

impl Session {
    /// Seconds one request of `output_len` tokens takes alone, at the warm-up's pace.
    pub(crate) fn alone_s(&self, output_len: u64) -> Option<f64> {
        self.warmup_pace
            .map(|(ttft, tpot)| ttft + output_len.saturating_sub(1) as f64 * tpot)
    }

    /// Locks the bundle to be written (`resume`'s, when finishing one), checks the output
    /// folder, probes the server and builds the bundle header. Fails with a message that says
    /// what to fix when another run writes the bundle or the server cannot be used; a bundle
    /// another run writes is refused before the server is asked anything.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn open(
        target: &TargetPlan,
        output: &OutputPlan,
        kind: &str,
        pool: usize,
        command_line: Vec<String>,
        resume: Option<&Resume>,
        interrupt: Interrupt,
        events: Arc<dyn Sink>,
    ) -> anyhow::Result<Session> {
        let resumed_lock = resume.map(|r| RunLock::take(&r.path)).transpose()?;
        store::check_out_dir(&output.out)?;
        if let Some(b) = &output.store {
            interrupt
                .or_stopped(async {
                    b.check_write()
                        .await
                        .map_err(|e| anyhow::anyhow!("--out {}: {e:#}", b.url()))
                })
                .await?;
        }
        if let Some(limit) = crate::load::server::host::open_files_limit() {
            crate::load::server::host::check_open_files(pool as u64, limit)?;
        }
        let http = LoadHttp::new(&target.credentials, pool, &target.url)?;
        // Its own connections, so a probe or a scrape never leaves one in the level's pool
        // (which would then look reused to the request that takes it).
        let telemetry_http = http_client(&target.credentials, 2)?;
        let fp = reach(&telemetry_http, target).await?;
        let model = choose_model(target, &fp)?;
        let (token_model, calibration) =
            match tokenize::measure(&telemetry_http, &target.url, &model).await {
                Some(m) => (m, Calibration::Tokenizer),
                None => (
                    TokenModel::Estimated {
                        tokens_per_word: 1.0,
                        added: 0,
                    },
                    Calibration::None,
                ),
            };
        let created = chrono::Utc::now();
        let path = store::bundle_path(&output.out, &output.label, kind, &created);
        let lock = match resumed_lock {
            Some(l) => l,
            None => RunLock::take(&path)?,
        };
        let mut client = Client::new(http, &target.url, target.api, model.clone(), target.timeout);
        client.extra = target.extra_body.clone().map(Arc::new);
        let nvidia_smi = match target.gpu_telemetry {
            GpuTelemetry::Local => crate::telemetry::gpu::nvidia_smi(),
            _ => None,
        };
        let mut bundle = header(target, output, fp, model, created, command_line);
        bundle.hosts = hosts(target, output, nvidia_smi).await;
        bundle.workload = workload(target, output, calibration);
        Ok(Session {
            server: ServerHandle {
                client: Arc::new(client),
                telemetry_http,
                nvidia_smi,
                capacity: crate::load::server::capacity::load(),
            },
            prompts: Arc::new(PromptBuilder {
                shared_prefix: output.shared_prefix_len,
                dataset: output.dataset.clone(),
                ..PromptBuilder::new(output.seed, Some(output.prefix_seed), token_model)
            }),
            writer: {
                let mut w = BundleWriter::new(bundle, path, lock, output.slo, events.clone());
                if let Some(b) = &output.store {
                    w.upload_to(store::upload::Uploader::start(b.clone(), events.clone()));
                }
                w
            },
            options: RunOptions {
                slo: output.slo,
                timeout: target.timeout,
                wait_server: target.wait_server,
                preopen: !target.cold_connections,
            },
            interrupt,
            gave_up: false,
            gave_up_why: None,
            warmup_pace: None,
            notes: gpu_notes(target.gpu_telemetry, nvidia_smi),
            events,
            sweeps_begun: 0,
        })
    }

    /// Sends `n` unrecorded requests one at a time. They warm the server, drop request options
    /// the server refuses, and measure the tokens the server adds to every prompt.
    ///
    /// Returns why the run should stop before its first level: the server took a warm-up
    /// request and sent nothing back within `--timeout`. Every level would wait as long for
    /// each of its requests (a level of silent requests takes up to its cap plus a timeout).
    pub(crate) async fn warmup(
        &mut self,
        n: u64,
        input_len: u64,
        output_len: u64,
    ) -> Option<String> {
        let mut client = (*self.server.client).clone();
        let mut prompts = (*self.prompts).clone();
        let mut sent = 0;
        let mut index = 0;
        let mut told = false;
        let mut silent = None;
        while sent < n && !self.interrupt.is_stopped() {
            let prompt = prompts.prompt(WARMUP_STREAM, index, input_len);
            index += 1;
            // Nothing else is on the screen while the warm-up waits: a server that takes the
            // request and says nothing would leave a blank terminal for the whole --timeout.
            let f = {
                let generate = client.generate(
                    0,
                    &prompt,
                    output_len,
                    Instant::now(),
                    &self.interrupt.abort,
                    Keep::Start.into(),
                );
                tokio::pin!(generate);
                tokio::select! {
                    f = &mut generate => f,
                    _ = tokio::time::sleep(WARMUP_QUIET), if !told && self.options.timeout > WARMUP_QUIET => {
                        told = true;
                        self.note(&format!(
                            "warm-up: its request has not finished after {} s; waiting up to {} s (--timeout) before the first level",
                            WARMUP_QUIET.as_secs(),
                            self.options.timeout.as_secs_f64()
                        ));
                        generate.await
                    }
                }
            };
            let r = &f.record;
            if let Some(e) = &r.error {
                if e.status == Some(400) && index < 8 && client.options.drop_refused(&e.message) {
                    self.notes.push(format!(
                        "the server refused a request option and it was dropped: {}",
                        e.message
                    ));
                    continue;
                }
                self.notes
                    .push(format!("warm-up request failed: {}", e.message));
                if e.kind == ErrorKind::Timeout && r.ttft_s.is_none() {
                    silent = Some(format!(
                        "the server took the warm-up request and sent no token in {} s (--timeout), so no level is run; if it is only slow to start, a longer --timeout waits for it",
                        self.options.timeout.as_secs_f64()
                    ));
                    break;
                }
            } else if let Some(counted) = r.prompt_tokens {
                if let (Some(ttft), Some(tpot)) =
                    (r.ttft_s, llmsweep_shared::metrics::request::tpot_s(r))
                {
                    self.warmup_pace = Some((ttft, tpot));
                }
                learn_added_tokens(
                    &mut prompts.model,
                    &mut self.writer.bundle_mut().workload.calibration,
                    &prompt,
                    counted,
                );
            }
            sent += 1;
        }
        self.server.client = Arc::new(client);
        self.prompts = Arc::new(prompts);
        silent
    }

    /// Waits for the server to finish what a level left on it: one short request, not
    /// recorded, and its one token. Requests the client gave up on (cut once the level was
    /// precise, or timed out) end on the server only after the step in flight, and a batched
    /// prefill of a whole cohort cannot be taken back: the next point's first request would
    /// otherwise wait for it and count the wait as its TTFT (0.9 s against a 0.04 s prefill,
    /// after the demo's 64 slots were cut). Waits at most `bound`: a server that answers
    /// nothing is not waited for again.
    pub(crate) async fn settle(&mut self, bound: Duration) {
        if self.interrupt.is_stopped() {
            return;
        }
        let prompt = self.prompts.prompt(SETTLE_STREAM, 0, SETTLE_LEN);
        let generate = self.server.client.generate(
            0,
            &prompt,
            1,
            Instant::now(),
            &self.interrupt.abort,
            Keep::Start.into(),
        );
        // Whatever it answers, or not within `bound`, the next point starts.
        let _ = tokio::time::timeout(bound, generate).await;
    }

    /// Takes over an interrupted bundle (`--resume`): its levels so far, its path, its workload,
    /// as the file holds them now that this run has its lock (a run that held it before may
    /// have added levels, or finished it, since the plan was made).
    pub(crate) fn adopt(&mut self, resume: &Resume) -> anyhow::Result<()> {
        let bundle = store::read_bundle(&resume.path)?;
        if bundle.complete {
            bail!(
                "--resume {}: the run is complete, nothing is left to measure; run again without --resume for a new one",
                resume.path.display()
            );
        }
        let (was, now) = (
            &bundle.target.engine_version,
            &self.writer.bundle().target.engine_version,
        );
        if was != now {
            let name =
                |v: &Option<String>| v.clone().unwrap_or_else(|| "an unstated version".into());
            self.notes.push(format!(
                "the server now reports {}; the bundle's levels so far were measured with {}",
                name(now),
                name(was)
            ));
        }
        self.writer.adopt(bundle, resume.path.clone());
        Ok(())
    }

    /// Adds a sweep to the bundle, writes it and tells the watcher; see
    /// [`BundleWriter::start_sweep`].
    /// `shape`: the sweep is one of a `--shapes` run's, and this its shape.
    pub(crate) fn start_sweep(
        &mut self,
        shape: Option<llmsweep_shared::shapes::Shape>,
        sweep: llmsweep_shared::bundle::Sweep,
    ) -> SweepHandle {
        self.tell(Event::SweepStarted {
            kind: sweep.kind,
            after_another: self.sweeps_begun > 0,
            shape,
        });
        self.sweeps_begun += 1;
        self.writer.start_sweep(sweep)
    }

    /// Tells the run's watcher something now.
    pub(crate) fn note(&self, line: &str) {
        self.events.event(Event::Note(line));
    }

    /// Tells the run's watcher an event.
    pub(crate) fn tell(&self, event: Event<'_>) {
        self.events.event(event);
    }

    /// Whether this host's GPUs are read during points.
    pub(crate) fn gpus_read(&self) -> bool {
        self.server.nvidia_smi.is_some()
    }
}

/// The server's fingerprint, when it answers as an OpenAI-compatible API; else why not, in
/// words that say what to fix.
async fn reach(http: &reqwest::Client, target: &TargetPlan) -> anyhow::Result<Fingerprint> {
    let fp = probe(http, &target.url, PROBE_TIMEOUT).await;
    if !fp.reachable() {
        bail!(
            "cannot reach the server at {}: {}\n  Is it running, and is the URL right (--url)?",
            target.url,
            fp.first_error().unwrap_or("no answer")
        );
    }
    if let Some(why) = fp.html_instead_of_api(&target.url) {
        bail!("{why}");
    }
    if let Some(p) = fp.probes.get("/v1/models")
        && let (Some(300..=399), Some(why)) = (p.status, &p.error)
    {
        bail!("{}/v1/models: {why}", target.shown_url);
    }
    Ok(fp)
}

/// The bundle's header: its id, label, time, command line, and what the server said of itself.
fn header(
    target: &TargetPlan,
    output: &OutputPlan,
    fp: Fingerprint,
    model: String,
    created: chrono::DateTime<chrono::Utc>,
    command_line: Vec<String>,
) -> Bundle {
    let id = SplitMix64::new(output.prefix_seed ^ created.timestamp_micros() as u64).next_u64();
    let facts = Target {
        url: target.shown_url.clone(),
        api: target.api,
        model,
        engine: fp.engine,
        engine_version: fp.engine_version,
        max_context: fp.max_context,
        max_running_requests: fp.max_running_requests,
        server_args: fp.server_args,
        simulated: fp.simulated,
        probes: fp.probes,
    };
    let mut bundle = store::new_bundle(
        format!("{id:016x}"),
        output.label.clone(),
        created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        command_line,
        facts,
    );
    bundle.definitions = definitions();
    bundle
}

/// This client host, the user's notes, and the GPUs when they are read.
async fn hosts(
    target: &TargetPlan,
    output: &OutputPlan,
    nvidia_smi: Option<&'static std::path::Path>,
) -> Hosts {
    Hosts {
        client: crate::load::server::host::client_facts(),
        notes: output.notes.clone(),
        gpus: match nvidia_smi {
            Some(p) => crate::telemetry::gpu::inventory_with(p).await,
            None => Vec::new(),
        },
        gpu_telemetry: Some(target.gpu_telemetry),
        server_gpus: output.gpus,
    }
}

/// What defines the work, so two runs can be proven to have sent the same.
fn workload(target: &TargetPlan, output: &OutputPlan, calibration: Calibration) -> Workload {
    Workload {
        seed: output.seed,
        calibration,
        prompt_digest: digest([]),
        shared_prefix_len: output.shared_prefix_len,
        extra_body: target.extra_body.clone().map(serde_json::Value::Object),
        dataset: output.dataset.as_ref().map(|d| DatasetFacts {
            file: d.file.clone(),
            sha256: d.sha256.clone(),
            lines: d.entries.len() as u64,
        }),
        prefix_seed: Some(output.prefix_seed),
        prefix_tokens: Some(PREFIX_WORDS),
    }
}

/// Why there will be no tokens per joule, when there will be none.
fn gpu_notes(telemetry: GpuTelemetry, nvidia_smi: Option<&std::path::Path>) -> Vec<String> {
    match (telemetry, nvidia_smi) {
        (GpuTelemetry::NotThisHost, _) => vec![
            "GPU power is not read: the server is not this host (--gpu-telemetry local if its GPUs are this machine's), so there is no tok/J".to_string(),
        ],
        (GpuTelemetry::Local, None) => {
            vec!["no nvidia-smi on this host: no GPU power readings, so no tok/J".to_string()]
        }
        _ => Vec::new(),
    }
}

/// Prompt stream of the warm-up requests (points use their own, see `sweep::stream_id`).
const WARMUP_STREAM: u64 = u64::MAX;

/// Prompt stream of the request that waits out what a level left on the server
/// ([`Session::settle`]); its one prompt, short, is served from the prefix cache after the first.
const SETTLE_STREAM: u64 = u64::MAX - 1;

/// Tokens of [`Session::settle`]'s prompt.
const SETTLE_LEN: u64 = 16;

/// Adjusts the token model from what the server counted for a warm-up prompt.
fn learn_added_tokens(
    model: &mut TokenModel,
    calibration: &mut Calibration,
    prompt: &crate::load::workload::Prompt,
    counted: u64,
) {
    match model {
        TokenModel::Measured { added, .. } => {
            let body = prompt.tokens - *added;
            *added = counted.saturating_sub(body);
        }
        TokenModel::Estimated {
            tokens_per_word, ..
        } => {
            if prompt.words > 0 {
                *tokens_per_word = counted as f64 / prompt.words as f64;
                *calibration = Calibration::Usage;
            }
        }
    }
}

/// `--model`, checked against what the server lists; else the first listed model.
fn choose_model(target: &TargetPlan, fp: &Fingerprint) -> anyhow::Result<String> {
    let models_status = fp.probes.get("/v1/models").and_then(|p| p.status);
    if let (Some(s @ (401 | 403)), true) = (models_status, fp.models.is_empty()) {
        bail!(
            "the server at {} refused llmsweep (HTTP {s} on /v1/models): it wants credentials — --api-key, a user:password in --url, or --header NAME:VALUE",
            target.url
        );
    }
    match (&target.model, fp.models.is_empty()) {
        (Some(m), true) => Ok(m.clone()),
        (Some(m), false) if fp.models.contains(m) => Ok(m.clone()),
        (Some(m), false) => bail!(
            "the server at {} does not serve the model {:?}; it serves {}\n  Pass one of these with --model.",
            target.url,
            inert(m),
            listed(&fp.models)
        ),
        (None, false) => Ok(fp.models[0].clone()),
        (None, true) => {
            let why = fp
                .probes
                .get("/v1/models")
                .map(|p| match (p.status, &p.error) {
                    (Some(s), Some(e)) => format!("HTTP {s}: {e}"),
                    (Some(s), None) => format!("HTTP {s}"),
                    (None, Some(e)) => e.clone(),
                    (None, None) => "no answer".into(),
                })
                .unwrap_or_default();
            bail!(
                "the server at {} did not list its models ({}/v1/models: {why}); name the model with --model",
                target.url,
                target.url
            )
        }
    }
}

/// The models a server lists, for a message: all of a short list; the count and the first
/// [`MODELS_SHOWN`] of a long one.
fn listed(models: &[String]) -> String {
    let shown: Vec<String> = models
        .iter()
        .take(MODELS_SHOWN)
        .map(|m| inert(m).into_owned())
        .collect();
    if models.len() <= MODELS_SHOWN {
        format!("{}: {}", plural(models.len()), shown.join(", "))
    } else {
        format!(
            "{}, the first {MODELS_SHOWN}: {}, …",
            plural(models.len()),
            shown.join(", ")
        )
    }
}

fn plural(n: usize) -> String {
    if n == 1 {
        "1 model".into()
    } else {
        format!("{n} models")
    }
}

/// Most model ids a message lists.
const MODELS_SHOWN: usize = 20;
