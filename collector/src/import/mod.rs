//! `llmsweep import`: other tools' results as bundles, so old and foreign runs join a
//! comparison.
//!
//! An imported bundle says where it came from ([`Source`]) and carries the *source's*
//! definitions instead of llmsweep's: its points hold what the source reported
//! ([`Imported`]), never a summary of requests llmsweep did not see. Nothing is invented: a
//! percentile the source did not report stays unknown, and a table column whose meaning the
//! script never stated is kept as "unstated".
//!
//! Closed-loop benchmark runs (vLLM's `request_rate` `inf`) become a throughput sweep, or a
//! context sweep when they vary the prompt length at one concurrency; open-loop runs (a finite
//! `request_rate`) become a rate sweep in offered-rate order. A file set with both gives a
//! bundle with both sweeps.

pub(crate) mod aiperf;
pub(crate) mod bench;
pub(crate) mod detect;
pub(crate) mod genai;
pub(crate) mod guidellm;
pub(crate) mod inference_perf;
#[cfg(test)]
mod prop;
pub(crate) mod table;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use llmsweep_shared::bundle::{
    Api, Bundle, Flag, FlagKind, ImportFormat, Imported, Point, PointStatus, RatePlan, RatePoint,
    Source, Sweep, SweepKind, Target,
};

use crate::store::new_bundle;

use self::bench::{Bench, LenSource, OpenLoop, Run};
use self::table::{Row, TableKind};

/// What the user told `import`.
#[derive(Debug, Clone)]
pub struct Request {
    /// The format `--from` named; `None` tells it from each file's content.
    pub format: Option<ImportFormat>,
    pub files: Vec<PathBuf>,
    pub label: String,
    /// The prompt length the source ran, when it does not say.
    pub input_len: Option<u64>,
    /// The output length the source asked for, when it does not say.
    pub output_len: Option<u64>,
    pub model: Option<String>,
    pub notes: BTreeMap<String, String>,
    /// `--gpus`: GPUs that served the model.
    pub gpus: Option<u32>,
    pub command_line: Vec<String>,
}

/// A point under construction, with where it came from for duplicate messages.
struct Found {
    point: Point,
    origin: String,
    /// An open-loop run's offered rate and arrivals.
    open: Option<OpenLoop>,
}

/// Reads the files and builds the bundle; every problem names its file.
pub fn import(req: &Request) -> anyhow::Result<Bundle> {
    let mut files = Vec::new();
    // The format, with the first file that was of it.
    let mut format: Option<(ImportFormat, String)> = None;
    for file in &req.files {
        let name = file.display().to_string();
        let text = read_text(file)?;
        let f = resolve(req.format, &name, &text)?;
        match &format {
            Some((first, at)) if *first != f => bail!(
                "{name} is {}, but {at} is {}: one import reads one format; import each \
                 separately",
                detect::describe(f),
                detect::describe(*first)
            ),
            Some(_) => {}
            None => format = Some((f, name.clone())),
        }
        files.push((name, text));
    }
    let Some((format, _)) = format else {
        bail!("no files to import");
    };
    let bench = match format {
        ImportFormat::Table => None,
        ImportFormat::Vllm => Some(Bench::Vllm),
        ImportFormat::Sglang => Some(Bench::Sglang),
        ImportFormat::Guidellm => Some(Bench::Guidellm),
        ImportFormat::Aiperf => Some(Bench::Aiperf),
        ImportFormat::GenaiBench => Some(Bench::Genai),
        ImportFormat::InferencePerf => Some(Bench::InferencePerf),
        ImportFormat::Unknown => {
            bail!(
                "cannot import this format; --from takes auto, table, vllm, sglang, guidellm, \
                 aiperf, genai-bench or inference-perf"
            )
        }
    };
    let mut c = Collected::default();
    for (name, text) in &files {
        match bench {
            None => c.table_file(req, name, text)?,
            Some(b) => c.bench_file(req, b, name, text)?,
        }
    }
    if bench.is_some() {
        c.group_bench_runs()?;
    }
    let mut notes = std::mem::take(&mut c.notes);
    let mut sweeps = Vec::new();
    for (kind, found) in [
        (SweepKind::Throughput, c.throughput),
        (SweepKind::Context, c.context),
        (SweepKind::Rate, c.rate),
    ] {
        if !found.is_empty() {
            sweeps.push(sweep(kind, found, &mut notes)?);
        }
    }
    Ok(bundle_of(req, format, bench, &c.facts, sweeps, notes))
}

/// What the formats llmsweep imports are, for a message that names them.
const IMPORTS: &str = "vllm bench serve's JSON, sglang.bench_serving's JSON lines, GuideLLM's benchmarks.json, AIPerf's profile_export_aiperf.json, genai-bench's run files, inference-perf's stage reports and text tables";

/// The format to read `text` as: the one its content shows when `--from` was left out; the
/// one `--from` named unless the content shows another tool's (then the refusal names it).
fn resolve(given: Option<ImportFormat>, name: &str, text: &str) -> anyhow::Result<ImportFormat> {
    use detect::Kind;
    let kind = detect::detect(text);
    let Some(given) = given else {
        return match kind {
            Kind::Format(f) => Ok(f),
            // A text file that is no table: the table reader says what it missed.
            Kind::Text => Ok(ImportFormat::Table),
            Kind::VllmOrSglang => bail!(
                "{name}: this is {}, and nothing in it tells which: give --from vllm or \
                 --from sglang",
                kind.describe()
            ),
            Kind::Peer(p) => bail!(
                "{name}: this is {p}, which llmsweep cannot import yet (it imports {IMPORTS})"
            ),
            Kind::OtherJson | Kind::BadJson(_) => bail!(
                "{name}: {}: not a file llmsweep imports ({IMPORTS}); give --from to read it \
                 as one of them and be told what it lacks",
                kind.describe()
            ),
        };
    };
    match kind {
        Kind::Format(f) if f != given => bail!(
            "{name}: this is {}, not {}: use --from {} or leave --from out",
            kind.describe(),
            detect::describe(given),
            f.as_str()
        ),
        Kind::Peer(p) => bail!(
            "{name}: this is {p}, not {}: llmsweep cannot import {p} yet",
            detect::describe(given)
        ),
        Kind::VllmOrSglang if given == ImportFormat::Table => bail!(
            "{name}: this is {}, not a text table: use --from vllm or --from sglang",
            kind.describe()
        ),
        _ => Ok(given),
    }
}

/// The points read so far, by the sweep they belong to, with the notes and server facts.
#[derive(Default)]
struct Collected {
    throughput: Vec<Found>,
    context: Vec<Found>,
    rate: Vec<Found>,
    notes: Vec<String>,
    facts: Facts,
}

impl Collected {
    /// A text table's rows, each a point of its table's sweep.
    fn table_file(&mut self, req: &Request, name: &str, text: &str) -> anyhow::Result<()> {
        let parsed = table::parse(text).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        self.notes
            .extend(parsed.notes.iter().map(|n| format!("{name} {n}")));
        let lens = stated_lengths(req, &parsed, name, &mut self.notes);
        for t in parsed.tables {
            for r in t.rows {
                let origin = format!("{name} line {}", r.line);
                let point =
                    table_point(&lens, t.kind, r).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
                let found = Found {
                    point,
                    origin,
                    open: None,
                };
                match t.kind {
                    TableKind::Throughput => self.throughput.push(found),
                    TableKind::Context => self.context.push(found),
                }
            }
        }
        Ok(())
    }

    /// A benchmark file's runs: open-loop ones to the rate sweep, the others to throughput.
    fn bench_file(
        &mut self,
        req: &Request,
        b: Bench,
        name: &str,
        text: &str,
    ) -> anyhow::Result<()> {
        if b == Bench::Genai
            && let Some(e) = genai::experiment(text)
        {
            self.facts.model = self.facts.model.take().or(e.model);
            self.facts.engine = self.facts.engine.take().or(e.engine);
            self.facts.engine_version = self.facts.engine_version.take().or(e.engine_version);
            self.facts.tool_version = self.facts.tool_version.take().or(e.tool_version);
            return Ok(());
        }
        let runs = if b == Bench::InferencePerf {
            let config = inference_perf_config(name);
            if config.is_none() {
                self.notes.push(format!(
                    "{name}: no inference-perf config.yaml beside it: the model, the API and how \
                     arrivals were drawn are not known"
                ));
            }
            inference_perf::parse(text, config.as_ref())
        } else {
            bench::parse(b, text)
        }
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        if b == Bench::InferencePerf && runs.is_empty() {
            self.notes.push(format!(
                "{name} is inference-perf's summary over every stage and the pauses between \
                 them, not a level: its stage_N files are the levels"
            ));
        }
        for r in runs {
            self.notes
                .extend(r.notes.iter().map(|n| format!("{name} {n}")));
            self.facts.take(&r);
            let found = Found {
                point: bench_point(req, &r),
                origin: format!("{name} run {}", r.index),
                open: r.open,
            };
            if r.open.is_some() {
                self.rate.push(found);
            } else {
                self.throughput.push(found);
            }
        }
        Ok(())
    }

    /// Benchmark runs at one concurrency over several prompt lengths are a context sweep; the
    /// others must share one prompt length per sweep.
    fn group_bench_runs(&mut self) -> anyhow::Result<()> {
        let t = &self.throughput;
        let one_c = t
            .iter()
            .all(|f| f.point.concurrency == t[0].point.concurrency);
        let lens: std::collections::BTreeSet<u64> = t.iter().map(|f| f.point.input_len).collect();
        if t.len() > 1 && one_c && lens.len() == t.len() {
            self.context = std::mem::take(&mut self.throughput);
        } else {
            same_input_len(&mut self.throughput, &mut self.notes)?;
        }
        if !self.rate.is_empty() {
            let closed = self.throughput.len() + self.context.len();
            open_loop_notes(&self.rate, closed, &mut self.notes)?;
            same_input_len(&mut self.rate, &mut self.notes)?;
        }
        Ok(())
    }
}

/// The imported bundle: complete, dated by the run when its file says when, its source and the
/// source's definitions beside its sweeps.
fn bundle_of(
    req: &Request,
    format: ImportFormat,
    bench: Option<Bench>,
    facts: &Facts,
    sweeps: Vec<Sweep>,
    mut notes: Vec<String>,
) -> Bundle {
    let dated = facts
        .date
        .as_deref()
        .and_then(|d| Some((d, bench::vllm_date(d)?)));
    if let Some((raw, _)) = dated {
        notes.push(format!(
            "the run's date {raw} is the benchmark host's local time, recorded as if UTC"
        ));
    }
    // A file's modification time says when it was last copied, not when the run was measured.
    let measured_at = dated.map(|(_, d)| d);
    let created_at = measured_at.clone().unwrap_or_else(now);
    let source = Source {
        tool: bench.map_or("a text table", Bench::tool).into(),
        version: facts.tool_version.clone(),
        format,
        files: req.files.iter().map(|f| f.display().to_string()).collect(),
        notes,
        measured_at,
    };
    // A stable id from the label, date and files.
    let id = llmsweep_shared::hash::fnv1a(
        format!("{}{created_at}{:?}", req.label, req.files).as_bytes(),
    );
    let mut bundle = new_bundle(
        format!("imported-{id:016x}"),
        req.label.clone(),
        created_at,
        req.command_line.clone(),
        target_of(req, facts),
    );
    bundle.complete = true;
    bundle.hosts.notes = req.notes.clone();
    bundle.hosts.server_gpus = req.gpus;
    bundle.definitions = definitions(format);
    bundle.sweeps = sweeps;
    bundle.source = Some(source);
    bundle
}

/// What the source says of the server: the model (`--model` first), API and engine.
fn target_of(req: &Request, facts: &Facts) -> Target {
    Target {
        url: String::new(),
        api: facts.api.unwrap_or(Api::Unknown),
        model: req
            .model
            .clone()
            .or(facts.model.clone())
            .unwrap_or_else(|| "not stated".into()),
        engine: facts.engine.clone(),
        engine_version: facts.engine_version.clone(),
        max_context: None,
        max_running_requests: None,
        server_args: None,
        simulated: false,
        probes: BTreeMap::new(),
    }
}

/// What the runs of a benchmark file say about the server, from the first that says it.
#[derive(Debug, Default)]
struct Facts {
    model: Option<String>,
    api: Option<Api>,
    engine: Option<String>,
    engine_version: Option<String>,
    tool_version: Option<String>,
    date: Option<String>,
}

impl Facts {
    fn take(&mut self, r: &Run) {
        self.model = self.model.take().or(r.model.clone());
        self.api = self.api.or(Some(r.api));
        self.engine = self.engine.take().or(r.engine.clone());
        self.engine_version = self.engine_version.take().or(r.engine_version.clone());
        self.tool_version = self.tool_version.take().or(r.tool_version.clone());
        self.date = self.date.take().or(r.date.clone());
    }
}

/// The `config.yaml` inference-perf wrote beside the report `name`, when it is there and small.
fn inference_perf_config(name: &str) -> Option<inference_perf::Config> {
    let dir = Path::new(name).parent()?;
    let path = dir.join("config.yaml");
    let text =
        crate::boundary::file::read_text(&path, inference_perf::CONFIG_MAX_BYTES as u64).ok()?;
    Some(inference_perf::config(&text))
}

/// Why a field of another tool's file cannot be used, in words that tell absent from wrong:
/// `has no `metrics`` when it is not there, `has `metrics` = "x", not an object` when it is
/// something else (the value shown short, on one line).
pub(crate) fn unusable(
    whose: &str,
    path: &str,
    value: Option<&serde_json::Value>,
    want: &str,
) -> String {
    match value {
        None | Some(serde_json::Value::Null) => format!("{whose} has no `{path}`"),
        Some(v) => {
            let shown = v.to_string();
            let shown = match shown.char_indices().nth(40) {
                Some((i, _)) => format!("{}…", &shown[..i]),
                None => shown,
            };
            format!(
                "{whose} has `{path}` = {}, not {want}",
                llmsweep_shared::text::one_line(&shown)
            )
        }
    }
}

/// Most bytes of one file `import` reads: the peers' result files are kilobytes to a few
/// hundred megabytes (GuideLLM's with every request's record); a larger one is refused before it
/// is read, rather than filling the memory with it and its parsed tree.
const MAX_IMPORT_BYTES: u64 = 256 * 1024 * 1024;

fn read_text(file: &Path) -> anyhow::Result<String> {
    use crate::boundary::file::{self, FileError};
    file::read_text(file, MAX_IMPORT_BYTES).map_err(|e| match e {
        FileError::TooBig { size, .. } => anyhow::anyhow!(
            "{} is {} MB, more than the {} MB one imported file may be: import the tool's summary file, not its per-request dump",
            file.display(),
            size / (1024 * 1024),
            MAX_IMPORT_BYTES / (1024 * 1024)
        ),
        e => anyhow::anyhow!("{} {e}", file.display()),
    })
}

/// The lengths a table ran: the flags', else what the file's title says; a flag that
/// contradicts the title wins, with a note.
fn stated_lengths(
    req: &Request,
    parsed: &table::Parsed,
    name: &str,
    notes: &mut Vec<String>,
) -> Request {
    let pick = |flag: Option<u64>, title: Option<u64>, what: &str, notes: &mut Vec<String>| {
        if let (Some(f), Some(t)) = (flag, title)
            && f != t
        {
            notes.push(format!(
                "{name} says {what} {t} above the table; --{what}-len {f} was used"
            ));
        }
        flag.or(title)
    };
    Request {
        input_len: pick(req.input_len, parsed.input_len, "input", notes),
        output_len: pick(req.output_len, parsed.output_len, "output", notes),
        ..req.clone()
    }
}

fn table_point(req: &Request, kind: TableKind, r: Row) -> anyhow::Result<Point> {
    let output_len = req.output_len.context(
        "the table does not say how many tokens each request asked for: give --output-len N \
         (what the script asked), so it is only compared with runs of the same workload",
    )?;
    let (concurrency, input_len) = match kind {
        TableKind::Throughput => (
            r.concurrency.unwrap_or(1),
            r.input_len.or(req.input_len).context(
                "the table does not say how long the prompts were: give --input-len N (what \
                 the script sent), so it is only compared with runs of the same workload",
            )?,
        ),
        TableKind::Context => (r.concurrency.unwrap_or(1), r.input_len.unwrap_or(0)),
    };
    let mut p = point(
        concurrency,
        input_len,
        output_len,
        true,
        r.status,
        r.reason,
        r.values,
    );
    if let Some((read, of)) = r.cut_off {
        // The row's totals are partial, so a short-output check on them would mislead.
        p.flags.retain(|f| f.kind != FlagKind::Short);
        p.flags.push(Flag {
            kind: FlagKind::CutOff,
            message: format!(
                "the source's row was cut off: {read} of its {of} columns were read, the rest are unknown"
            ),
            count: None,
        });
    }
    Ok(p)
}

fn bench_point(req: &Request, r: &Run) -> Point {
    let input_len = req.input_len.or(r.input_len.value()).unwrap_or(0);
    let (output_len, asked) = match (req.output_len, r.output_len) {
        (Some(n), _) => (n, true),
        (None, LenSource::Asked(n)) => (n, true),
        (None, other) => (other.value().unwrap_or(0), false),
    };
    let status = if r.values.ok == Some(0) {
        PointStatus::Failed
    } else {
        PointStatus::Ok
    };
    let reason =
        (status == PointStatus::Failed).then(|| "no request of the run succeeded".to_string());
    point(
        r.concurrency,
        input_len,
        output_len,
        asked,
        status,
        reason,
        r.values.clone(),
    )
}

/// An imported point, with the flags its own numbers justify: failures, and fewer output
/// tokens than asked when the asked length is known.
fn point(
    concurrency: u32,
    input_len: u64,
    output_len: u64,
    output_len_asked: bool,
    status: PointStatus,
    reason: Option<String>,
    values: Imported,
) -> Point {
    let mut flags = Vec::new();
    if let (Some(f), Some(ok)) = (values.failed, values.ok)
        && f > 0
    {
        flags.push(Flag {
            kind: FlagKind::Failed,
            message: format!("{f} of {} requests failed", f + ok),
            count: Some(f),
        });
    }
    if let (Some(got), Some(ok), true) = (values.output_tokens, values.ok, output_len_asked) {
        let asked = ok * output_len;
        if ok > 0 && got < asked {
            flags.push(Flag {
                kind: FlagKind::Short,
                message: format!(
                    "{got} output tokens where {ok} × {output_len} = {asked} were asked: \
                     requests stopped early (at EOS?), so speeds are over shorter outputs"
                ),
                count: None,
            });
        }
    }
    Point {
        status,
        reason,
        flags,
        imported: Some(values),
        ..Point::empty(concurrency, input_len, output_len)
    }
}

/// Open-loop runs are one rate sweep: they must share their arrival process and
/// `max_concurrency`. Each run's offered rate and vLLM's goodput are noted where it came from;
/// what the source does not record (the schedule's seed, the client's schedule lag, the
/// concurrency reached, the `--goodput` bounds) is said to be unknown.
fn open_loop_notes(rate: &[Found], closed: usize, notes: &mut Vec<String>) -> anyhow::Result<()> {
    let plan = |f: &Found| f.open.map(|o| (o.arrival, o.burstiness, o.max_concurrency));
    let first = &rate[0];
    if let Some(other) = rate.iter().find(|f| plan(f) != plan(first)) {
        let say = |f: &Found| {
            f.open.map_or(String::new(), |o| {
                let d = o.describe();
                // Everything after the offered rate: the arrivals and the cap.
                d.split_once(", ")
                    .map_or(d.clone(), |(_, rest)| rest.to_string())
            })
        };
        bail!(
            "the open-loop runs differ in how requests arrived ({} at {}, {} at {}): one rate \
             sweep has one arrival process and one max_concurrency; import them separately",
            say(first),
            first.origin,
            say(other),
            other.origin
        );
    }
    if closed > 0 {
        notes.push(format!(
            "{} open-loop run(s) (a finite request_rate) are a rate sweep beside the sweep of \
             the {closed} closed-loop run(s) (request_rate inf)",
            rate.len()
        ));
    }
    for f in rate {
        let Some(o) = f.open else { continue };
        notes.push(format!("{}: {}", f.origin, o.describe()));
        if let Some(g) = o.goodput_rps {
            notes.push(format!(
                "{}: vLLM's request_goodput {g} req/s (requests that met every --goodput \
                 bound / duration; the bounds are not recorded in the file)",
                f.origin
            ));
        }
    }
    let mut missing = vec!["the schedule's seed", "the client's schedule lag"];
    if rate
        .iter()
        .any(|f| f.open.is_some_and(|o| o.peak_concurrency.is_none()))
    {
        missing.push("the peak concurrency");
    }
    if rate
        .iter()
        .any(|f| f.open.is_some_and(|o| o.mean_concurrency.is_none()))
    {
        missing.push("the mean concurrency");
    }
    notes.push(format!(
        "the result does not record {}, nor llmsweep's goodput counts: they are left empty \
         rather than filled with numbers the source does not have; each point keeps its \
         offered rate, and its achieved rate under the tool's own definition (completed / \
         duration) is in its imported numbers",
        missing.join(", ")
    ));
    Ok(())
}

/// Benchmark runs of one throughput sweep must share a prompt length; mean lengths within
/// 5 % of each other are one length (their rounded mean), as random datasets vary a little.
fn same_input_len(found: &mut [Found], notes: &mut Vec<String>) -> anyhow::Result<()> {
    let lens: Vec<u64> = found.iter().map(|f| f.point.input_len).collect();
    let (Some(&lo), Some(&hi)) = (lens.iter().min(), lens.iter().max()) else {
        return Ok(());
    };
    if lo == hi {
        return Ok(());
    }
    if (hi - lo) as f64 > 0.05 * hi as f64 {
        bail!(
            "the runs vary both concurrency and prompt length ({lo}..{hi} tokens): import the \
             runs of one prompt length at a time, or pass --input-len if they asked for one"
        );
    }
    let mean = (lens.iter().map(|&l| l as f64).sum::<f64>() / lens.len() as f64).round() as u64;
    notes.push(format!(
        "prompt lengths {lo}..{hi} tokens (means over each run's requests) recorded as {mean}"
    ));
    for f in found.iter_mut() {
        f.point.input_len = mean;
    }
    Ok(())
}

fn sweep(kind: SweepKind, found: Vec<Found>, notes: &mut Vec<String>) -> anyhow::Result<Sweep> {
    let kept = without_repeats(kind, found, notes);
    // The runs of a rate sweep share their arrivals and cap (`open_loop_notes`); the seed of
    // their draws is not in the file.
    let plan = kept.first().and_then(|(_, f)| f.open).map(|o| RatePlan {
        rates: kept.iter().map(|(k, _)| *k).collect(),
        arrival: o.arrival,
        burstiness: if o.burstiness.is_finite() {
            o.burstiness
        } else {
            1.0
        },
        seed: None,
        max_concurrency: o.max_concurrency,
        search: None,
    });
    let points: Vec<Point> = kept.into_iter().map(|(_, f)| with_rate(f)).collect();
    let mut concurrency: Vec<u32> = points.iter().map(|p| p.concurrency).collect();
    concurrency.sort_unstable();
    concurrency.dedup();
    let mut input_lens: Vec<u64> = points.iter().map(|p| p.input_len).collect();
    input_lens.sort_unstable();
    input_lens.dedup();
    let output_len = points.first().map_or(0, |p| p.output_len);
    if points.iter().any(|p| p.output_len != output_len) {
        bail!("the runs asked for different output lengths; import one output length at a time");
    }
    Ok(Sweep {
        kind,
        concurrency,
        input_lens,
        output_len,
        requests: None,
        duration_s: None,
        warmup: 0,
        timeout_s: 0.0,
        repeats: None,
        prefill_fit: None,
        preopened: None,
        rate: plan,
        slo: None,
        length_spread: None,
        precision: None,
        points,
    })
}

/// The points in order of their key (the offered rate of a rate point, the input length of a
/// context point, else the concurrency; every key is exact in an f64), each key once: a repeat
/// is left out with a note naming both places.
fn without_repeats(
    kind: SweepKind,
    found: Vec<Found>,
    notes: &mut Vec<String>,
) -> Vec<(f64, Found)> {
    let key = |f: &Found| match kind {
        SweepKind::Context => f.point.input_len as f64,
        SweepKind::Rate => f.open.map_or(0.0, |o| o.offered_rps),
        _ => f64::from(f.point.concurrency),
    };
    let what = match kind {
        SweepKind::Context => "input length",
        SweepKind::Rate => "offered rate (req/s)",
        _ => "concurrency",
    };
    let mut kept: Vec<(f64, Found)> = Vec::new();
    // Each key's place in `kept`, by its bits (`0.0` for both zeros), so a file of a million
    // rows is read in linear time.
    let mut seen: HashMap<u64, usize> = HashMap::with_capacity(found.len());
    for f in found {
        let k = key(&f);
        let bits = if k == 0.0 { 0 } else { k.to_bits() };
        if let Some(&at) = seen.get(&bits) {
            notes.push(format!(
                "{}: {what} {k} appears again (first at {}); left out",
                f.origin, kept[at].1.origin
            ));
            continue;
        }
        seen.insert(bits, kept.len());
        kept.push((k, f));
    }
    kept.sort_by(|a, b| a.0.total_cmp(&b.0));
    kept
}

/// The point, keyed by its offered rate when it is an open-loop run's; what the source does not
/// record (the achieved rate as llmsweep counts it, lag, concurrency reached) stays empty.
fn with_rate(mut f: Found) -> Point {
    if let Some(o) = f.open {
        f.point.rate = Some(RatePoint {
            offered_rps: o.offered_rps,
            achieved_rps: None,
            lag_s: None,
            queued_s: None,
            peak_concurrency: o.peak_concurrency,
            mean_concurrency: o.mean_concurrency,
        });
    }
    f.point
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The source's definitions, under the names llmsweep's own definitions use, so a reader sees
/// side by side what each number means in each run.
pub fn definitions(format: ImportFormat) -> BTreeMap<String, String> {
    let table: &[(&str, &str)] = &[
        (
            "source",
            "a plain-text table printed by a benchmark script; the script's definitions are not stated, so each number means what its column header says and no more",
        ),
        (
            "agg_tok_s",
            "the table's aggregate tok/s column (e.g. \"Agg tok/s\") as printed; presumably output tokens / wall time of the level, the script does not say",
        ),
        (
            "decode_tok_s",
            "the table's per-request tok/s column (e.g. \"Per-req tok/s\") as printed; whether it includes TTFT (tokens / e2e) or not (1 / tpot) is not stated",
        ),
        (
            "ttft_s",
            "the table's TTFT column as printed; whether it is a mean or a median is not stated unless the header says; seconds",
        ),
        (
            "output_tokens",
            "the table's tokens column: output tokens of the level as the script counted them",
        ),
        (
            "prefill_tok_s",
            "computed by llmsweep as input length / the table's TTFT",
        ),
    ];
    let vllm: &[(&str, &str)] = &[
        (
            "source",
            "vllm bench serve --save-result: the benchmark's own summary of one run per max_concurrency; llmsweep has no per-request records of it",
        ),
        (
            "ttft_s",
            "request sent → first streamed token, as vLLM's benchmark times it; mean, median and p99 (and other percentiles when --metric-percentiles asked) over successful requests; seconds",
        ),
        (
            "tpot_s",
            "(e2e latency − TTFT) / (output tokens − 1) per request with more than one token, then mean, median, p99 over requests: the same formula as llmsweep's tpot",
        ),
        (
            "decode_tok_s",
            "computed by llmsweep as 1 / vLLM's median TPOT",
        ),
        (
            "itl_s",
            "gap between consecutive streamed chunks over all requests, NOT divided by the tokens a chunk carries (llmsweep divides): differs from llmsweep's itl when chunks carry several tokens (speculative decoding)",
        ),
        (
            "e2e_s",
            "request sent → last streamed chunk (vLLM's e2el); seconds",
        ),
        (
            "agg_tok_s",
            "vLLM's output_throughput: total output tokens / benchmark duration (first request sent → last response done), ramp-up and drain included: comparable to llmsweep's agg_tok_s, not to its steady_tok_s",
        ),
        (
            "request_s",
            "vLLM's request_throughput: completed requests / benchmark duration; for an open-loop run this is its achieved rate under vLLM's definition (completed / duration, failures and the drain after the last send included), not llmsweep's achieved_rps (requests sent / the span of their sends)",
        ),
        (
            "output_tokens",
            "output tokens as vLLM's benchmark counted them (the server's usage when reported, else its tokenizer); without --ignore-eos requests may stop early",
        ),
        (
            "concurrency",
            "vLLM's --max-concurrency: at most this many requests in flight (requests sent as fast as the rate allows, inf by default); 0 for an open-loop run without it",
        ),
        (
            "offered_rps",
            "vLLM's --request-rate: requests per second offered, gaps drawn from a gamma distribution of shape --burstiness (1: Poisson; Infinity: evenly spaced) and rescaled so that the run's requests span num_prompts / rate seconds; inf (all at once) is a closed-loop run",
        ),
        (
            "peak_concurrency",
            "vLLM's max_concurrent_requests: most requests in flight at once, when the result records it",
        ),
        (
            "goodput",
            "vLLM's request_goodput: completed requests whose TTFT, TPOT and e2e latency met every --goodput bound (ms) / benchmark duration; the bounds are not recorded in the result file",
        ),
    ];
    let sglang: &[(&str, &str)] = &[
        (
            "source",
            "sglang.bench_serving --output-file: the benchmark's own summary, one JSON line per run; llmsweep has no per-request records of it",
        ),
        (
            "ttft_s",
            "request sent → first streamed token, as SGLang's benchmark times it; mean, median, p99 over successful requests; seconds",
        ),
        (
            "tpot_s",
            "(e2e latency − TTFT) / (output tokens − 1) per request with more than one token, then mean, median, p99 over requests",
        ),
        (
            "decode_tok_s",
            "computed by llmsweep as 1 / SGLang's median TPOT",
        ),
        (
            "itl_s",
            "gap between consecutive streamed chunks over all requests, NOT divided by the tokens a chunk carries (llmsweep divides); SGLang reports p95 and p99",
        ),
        (
            "e2e_s",
            "request sent → last streamed chunk (SGLang's e2e_latency); seconds",
        ),
        (
            "agg_tok_s",
            "SGLang's output_throughput: total output tokens / benchmark duration, ramp-up and drain included: comparable to llmsweep's agg_tok_s, not to its steady_tok_s",
        ),
        (
            "request_s",
            "SGLang's request_throughput: completed requests / benchmark duration",
        ),
        (
            "output_tokens",
            "output tokens as SGLang's benchmark counted them (the server's counts; total_output_tokens_retokenized re-counts the text)",
        ),
        (
            "concurrency",
            "SGLang's --max-concurrency: at most this many requests in flight; 0 for an open-loop run without it",
        ),
        (
            "offered_rps",
            "SGLang's --request-rate: requests per second offered, exponential (Poisson) gaps; inf (all at once) is a closed-loop run",
        ),
        (
            "mean_concurrency",
            "SGLang's concurrency: the sum of the requests' e2e latencies / the benchmark's duration, the mean number in flight",
        ),
    ];
    let guidellm: &[(&str, &str)] = &[
        (
            "source",
            "GuideLLM's benchmarks.json: the tool's own summary of each benchmark (one per concurrency or rate), statistics over its successful requests; llmsweep has no per-request records of it",
        ),
        (
            "ttft_s",
            "request start → first streamed token, as GuideLLM times it (its time_to_first_token_ms); mean, median, p90, p99 over successful requests; seconds",
        ),
        (
            "tpot_s",
            "GuideLLM's inter_token_latency_ms: (last token − first token) / (output tokens − 1) per request, llmsweep's tpot formula, but its mean and percentiles are over tokens (each request weighted by its output tokens − 1), not over requests; GuideLLM's own time_per_output_token_ms ((last token − request start) / output tokens, TTFT included) is not imported",
        ),
        (
            "decode_tok_s",
            "computed by llmsweep as 1 / GuideLLM's median inter-token latency",
        ),
        (
            "e2e_s",
            "request start → request done (GuideLLM's request_latency); seconds",
        ),
        (
            "agg_tok_s",
            "GuideLLM's output_tokens_per_second mean: the mean of its time series of output-token rate over the benchmark (what its console prints as output tokens per second), not total output tokens / duration",
        ),
        (
            "request_s",
            "GuideLLM's requests_per_second mean: the mean of its time series of completed-request rate over the benchmark",
        ),
        (
            "output_tokens",
            "output tokens of the successful requests as GuideLLM counted them (the server's usage when reported)",
        ),
        (
            "concurrency",
            "GuideLLM's strategy: synchronous is 1, concurrent its streams, throughput its max_concurrency; 0 for a rate strategy without max_concurrency",
        ),
        (
            "offered_rps",
            "GuideLLM's constant (evenly spaced) or poisson strategy rate, requests per second",
        ),
    ];
    let aiperf: &[(&str, &str)] = &[
        (
            "source",
            "AIPerf's profile_export_aiperf.json: the tool's own summary of one run (one concurrency or rate per file), latency statistics over its successful requests; llmsweep has no per-request records of it",
        ),
        (
            "ttft_s",
            "request start → first streamed response with content, as AIPerf times it (its time_to_first_token); mean (avg), p50, p90, p99 over successful requests; seconds",
        ),
        (
            "tpot_s",
            "AIPerf's inter_token_latency: (request latency − TTFT) / (output tokens − 1) per request (− the first chunk's tokens with --per-chunk-usage), then avg, p50, p90, p99 over requests: llmsweep's tpot formula",
        ),
        (
            "decode_tok_s",
            "computed by llmsweep as 1 / AIPerf's median inter_token_latency",
        ),
        (
            "itl_s",
            "AIPerf's inter_chunk_latency: gap between consecutive streamed chunks over all chunks of all requests, NOT divided by the tokens a chunk carries (llmsweep divides): differs from llmsweep's itl when chunks carry several tokens",
        ),
        (
            "e2e_s",
            "request start → last streamed response (AIPerf's request_latency); seconds",
        ),
        (
            "agg_tok_s",
            "AIPerf's output_token_throughput: total output tokens / benchmark duration (first request sent → last response received), ramp-up and drain included: comparable to llmsweep's agg_tok_s, not to its steady_tok_s",
        ),
        (
            "request_s",
            "AIPerf's request_throughput: successful requests / benchmark duration",
        ),
        (
            "output_tokens",
            "AIPerf's total_osl: output tokens of the successful requests as AIPerf counted them (its tokenizer on the text, or the server's usage with --use-server-token-count)",
        ),
        (
            "concurrency",
            "AIPerf's --concurrency: requests kept in flight; for a --request-rate run its cap, 0 when it had none",
        ),
        (
            "offered_rps",
            "AIPerf's --request-rate: requests per second offered, with --arrival-pattern poisson (the default), gamma (of --arrival-smoothness) or constant gaps",
        ),
    ];
    let genai: &[(&str, &str)] = &[
        (
            "source",
            "genai-bench's run files: the tool's own summary of one run per concurrency (aggregated_metrics), statistics over its successful requests (numpy's linear percentiles); llmsweep keeps the summary, not the per-request records",
        ),
        (
            "ttft_s",
            "request start → first streamed chunk with content, as genai-bench times it (its ttft); mean, p50, p90, p99; seconds",
        ),
        (
            "tpot_s",
            "genai-bench's tpot: (e2e_latency − ttft) / (output tokens − 1) per request, left out when that decode time is under 1 ms: llmsweep's tpot formula",
        ),
        (
            "decode_tok_s",
            "computed by llmsweep as 1 / genai-bench's median tpot",
        ),
        (
            "e2e_s",
            "request start → end of the stream ([DONE] or the usage chunk), genai-bench's e2e_latency; seconds",
        ),
        (
            "agg_tok_s",
            "genai-bench's mean_output_throughput_tokens_per_s: the run's output tokens / its run_duration (first request → end of the run, which ends at a once-a-second check of its limits): comparable to llmsweep's agg_tok_s, not to its steady_tok_s",
        ),
        (
            "request_s",
            "genai-bench's requests_per_second: completed requests / run_duration",
        ),
        (
            "output_tokens",
            "output tokens of the successful requests as the server's usage counted them (num_output_tokens)",
        ),
        (
            "concurrency",
            "genai-bench's --num-concurrency: requests kept in flight",
        ),
    ];
    let iperf: &[(&str, &str)] = &[
        (
            "source",
            "inference-perf's lifecycle reports: its own summary of one load stage per stage_N file (successes and failures), statistics over its successful requests (numpy's linear percentiles, `median` for p50); llmsweep keeps the summary, not the per-request records",
        ),
        (
            "ttft_s",
            "request start → first streamed chunk with content text, as inference-perf times it (time_to_first_token); mean, p50, p90, p99; seconds",
        ),
        (
            "tpot_s",
            "inference-perf's time_per_output_token: (last token − first token) / (output tokens − 1) per request, output tokens counted by its tokenizer: llmsweep's tpot formula",
        ),
        (
            "itl_s",
            "inference-perf's inter_token_latency: every gap between consecutive streamed tokens of every successful request, pooled",
        ),
        (
            "decode_tok_s",
            "computed by llmsweep as 1 / inference-perf's median time_per_output_token",
        ),
        (
            "e2e_s",
            "inference-perf's request_latency: just before the request → the end of its stream; seconds",
        ),
        (
            "agg_tok_s",
            "inference-perf's output_tokens_per_sec: the stage's output tokens / benchmark_time_seconds (its first request's start → its last request's end): comparable to llmsweep's agg_tok_s, not to its steady_tok_s",
        ),
        (
            "request_s",
            "inference-perf's requests_per_sec: successful requests / benchmark_time_seconds",
        ),
        (
            "concurrency",
            "inference-perf's concurrency_level of a `load.type: concurrent` stage: requests kept in flight",
        ),
        (
            "offered_rps",
            "inference-perf's stage rate: requests per second offered, evenly spaced (`load.type: constant`) or Poisson (`poisson`), as its config.yaml says",
        ),
    ];
    let pick = match format {
        ImportFormat::Table => table,
        ImportFormat::Vllm => vllm,
        ImportFormat::Sglang => sglang,
        ImportFormat::Guidellm => guidellm,
        ImportFormat::Aiperf => aiperf,
        ImportFormat::GenaiBench => genai,
        ImportFormat::InferencePerf => iperf,
        ImportFormat::Unknown => &[],
    };
    pick.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    /// A file past the import cap is refused by its size before a byte of it is read (a sparse
    /// gigabyte here, so the test writes nothing).
    #[test]
    fn a_gigabyte_file_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge.json");
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(1 << 30).unwrap();
        let e = read_text(&path).unwrap_err().to_string();
        assert!(e.contains("is 1024 MB, more than the 256 MB"), "{e}");
    }

    use super::*;

    fn req(format: ImportFormat, files: Vec<PathBuf>) -> Request {
        Request {
            format: Some(format),
            files,
            label: "kpro6".into(),
            input_len: Some(1000),
            output_len: Some(500),
            model: None,
            notes: BTreeMap::new(),
            gpus: None,
            command_line: vec!["llmsweep".into(), "import".into()],
        }
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Runs `f` on a thread, failing the test when it takes more than `secs` seconds.
    pub(super) fn within<T: Send + 'static>(
        secs: u64,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(secs))
            .unwrap_or_else(|_| panic!("not done in {secs} s"))
    }

    /// A sweep of 200,000 levels (a million-row table's worth of work, in a test's time): each
    /// level was looked for among those already kept, 2·10¹⁰ comparisons that took minutes;
    /// now one hash look-up each, a fraction of a second. A repeat is still named.
    #[test]
    fn a_sweep_of_200k_levels_is_built_in_linear_time() {
        let parsed = table::parse("C | Agg tok/s | Ok | Fail\n1 | 70.2 | 4 | 0\n").unwrap();
        let row = parsed.tables[0].rows[0].clone();
        let one = table_point(
            &req(ImportFormat::Table, vec![]),
            TableKind::Throughput,
            row,
        )
        .unwrap();
        let n = 200_000u32;
        let found: Vec<Found> = (1..=n)
            .chain([7])
            .enumerate()
            .map(|(i, c)| Found {
                point: Point {
                    concurrency: c,
                    ..one.clone()
                },
                origin: format!("t.txt line {}", i + 1),
                open: None,
            })
            .collect();
        let (s, notes) = within(60, move || {
            let mut notes = Vec::new();
            let s = sweep(SweepKind::Throughput, found, &mut notes).unwrap();
            (s, notes)
        });
        assert_eq!(s.points.len(), n as usize);
        assert_eq!(s.concurrency.len(), n as usize);
        assert_eq!(s.points[n as usize - 1].concurrency, n);
        assert_eq!(
            notes,
            ["t.txt line 200001: concurrency 7 appears again (first at t.txt line 7); left out"]
        );
    }

    #[test]
    fn the_design_table_becomes_a_throughput_sweep_with_its_short_level_flagged() {
        let dir = tempfile::tempdir().unwrap();
        let f = write(
            dir.path(),
            "old.txt",
            "C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail\n\
             1 |      70.2 |          73.5 |    0.32 |   2000 |    28.5 |  4 |    0\n\
             2 |     137.7 |          70.8 |    0.20 |   2000 |    14.5 |  4 |    0\n\
             4 |     207.1 |          66.9 |    0.34 |   3210 |    15.5 |  8 |    0\n",
        );
        let b = import(&req(ImportFormat::Table, vec![f])).unwrap();
        assert!(b.is_imported());
        assert_eq!(b.target.api, Api::Unknown);
        let s = &b.sweeps[0];
        assert_eq!(s.kind, SweepKind::Throughput);
        assert_eq!(
            (s.concurrency.clone(), s.input_lens.clone(), s.output_len),
            (vec![1, 2, 4], vec![1000], 500)
        );
        let short: Vec<&str> = s.points[2]
            .flags
            .iter()
            .map(|f| f.message.as_str())
            .collect();
        assert_eq!(
            short,
            [
                "3210 output tokens where 8 × 500 = 4000 were asked: requests stopped early (at EOS?), so speeds are over shorter outputs"
            ]
        );
        assert!(s.points[0].flags.is_empty());
        assert!(b.definitions["agg_tok_s"].contains("as printed"));
        // A table does not say when it was measured, and the file's time is not that either.
        assert_eq!(b.source.as_ref().unwrap().measured_at, None);
        assert_eq!(b.run_date(), None);
        // A round trip keeps every imported number.
        let back = Bundle::from_json(&b.to_json().unwrap()).unwrap();
        assert_eq!(back, b);
    }

    #[test]
    fn a_table_without_lengths_asks_for_them() {
        let dir = tempfile::tempdir().unwrap();
        let f = write(dir.path(), "t.txt", "C | Agg tok/s\n1 | 70\n");
        let mut r = req(ImportFormat::Table, vec![f]);
        r.input_len = None;
        let e = import(&r).unwrap_err().to_string();
        assert!(
            e.contains("t.txt line 2") && e.contains("--input-len"),
            "{e}"
        );
    }

    #[test]
    fn several_vllm_files_are_one_sweep_in_concurrency_order() {
        let dir = tempfile::tempdir().unwrap();
        let run = |c: u32, tin: u64| {
            format!(
                r#"{{"date": "20251103-141500", "backend": "vllm", "model_id": "m",
                "max_concurrency": {c}, "duration": 10.0, "completed": 10, "failed": 0,
                "total_input_tokens": {tin}, "total_output_tokens": 5000,
                "output_throughput": {t}, "median_ttft_ms": 100.0, "median_tpot_ms": 20.0}}"#,
                t = 100.0 * f64::from(c)
            )
        };
        let a = write(dir.path(), "c8.json", &run(8, 10_020));
        let b = write(dir.path(), "c1.json", &run(1, 9_990));
        let mut r = req(ImportFormat::Vllm, vec![a, b]);
        r.input_len = None;
        r.output_len = None;
        let bundle = import(&r).unwrap();
        let s = &bundle.sweeps[0];
        assert_eq!(s.concurrency, [1, 8]);
        assert_eq!(s.input_lens, [1001]);
        assert_eq!(s.output_len, 500);
        assert_eq!(bundle.created_at, "2025-11-03T14:15:00Z");
        assert_eq!(bundle.run_date(), Some("2025-11-03T14:15:00Z"));
        assert_eq!(bundle.target.api, Api::Completions);
        let src = bundle.source.as_ref().unwrap();
        assert_eq!(src.tool, "vllm bench serve");
        assert_eq!(
            src.notes,
            [
                "prompt lengths 999..1002 tokens (means over each run's requests) recorded as 1001",
                "the run's date 20251103-141500 is the benchmark host's local time, recorded as if UTC"
            ]
        );
        // Output length is a mean here, not an asked length: no short flag can be justified.
        assert!(s.points.iter().all(|p| p.flags.is_empty()));
    }

    fn vllm_run(rate: &str, extra: &str) -> String {
        format!(
            r#"{{"date": "20251103-150000", "backend": "vllm", "model_id": "m",
            "num_prompts": 100, "request_rate": {rate}, "burstiness": 0.5, "max_concurrency": 64,
            "duration": 25.0, "completed": 100, "failed": 0,
            "total_input_tokens": 100000, "total_output_tokens": 50000,
            "request_throughput": 4.0, "output_throughput": 2000.0,
            "mean_ttft_ms": 120.0, "median_ttft_ms": 110.0, "p99_ttft_ms": 300.0,
            "mean_tpot_ms": 15.0, "median_tpot_ms": 14.0, "p99_tpot_ms": 20.0,
            "mean_itl_ms": 15.0, "median_itl_ms": 13.0, "p99_itl_ms": 40.0,
            "mean_e2el_ms": 7600.0, "median_e2el_ms": 7500.0, "p99_e2el_ms": 9000.0{extra}}}"#
        )
    }

    #[test]
    fn open_loop_vllm_files_are_one_rate_sweep_in_rate_order_beside_closed_loop_runs() {
        let dir = tempfile::tempdir().unwrap();
        let r8 = write(
            dir.path(),
            "r8.json",
            &vllm_run("8.0", r#", "request_goodput": 6.5"#).replace(
                r#""request_throughput": 4.0"#,
                r#""request_throughput": 7.2"#,
            ),
        );
        let r2 = write(dir.path(), "r2.json", &vllm_run("2.0", ""));
        let closed = write(dir.path(), "c64.json", &vllm_run(r#""inf""#, ""));
        let r2_again = write(dir.path(), "r2b.json", &vllm_run("2", ""));
        let mut r = req(ImportFormat::Vllm, vec![r8, closed, r2, r2_again]);
        r.input_len = None;
        r.output_len = None;
        let b = import(&r).unwrap();
        let kinds: Vec<SweepKind> = b.sweeps.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [SweepKind::Throughput, SweepKind::Rate]);
        assert_eq!(b.sweeps[0].concurrency, [64]);
        let s = &b.sweeps[1];
        assert_eq!(
            (s.concurrency.clone(), s.input_lens.clone(), s.output_len),
            (vec![64], vec![1000], 500)
        );
        // In offered-rate order: 2 req/s, then 8 req/s; the second 2 req/s run is left out.
        let achieved: Vec<Option<f64>> = s
            .points
            .iter()
            .map(|p| p.imported.as_ref().unwrap().request_s)
            .collect();
        assert_eq!(achieved, [Some(4.0), Some(7.2)]);
        let p = &s.points[1];
        assert_eq!(p.concurrency, 64);
        let v = p.imported.as_ref().unwrap();
        assert_eq!(
            (v.ok, v.failed, v.wall_s, v.output_tok_s),
            (Some(100), Some(0), Some(25.0), Some(2000.0))
        );
        assert_eq!(
            (v.ttft_s.mean, v.ttft_s.p50, v.ttft_s.p99),
            (Some(0.12), Some(0.11), Some(0.3))
        );
        assert_eq!(
            (v.tpot_s.p50, v.itl_s.p99, v.e2e_s.p50),
            (Some(0.014), Some(0.04), Some(7.5))
        );
        // Each point is keyed by its offered rate; nothing the file lacks is filled in.
        let plan = s.rate.as_ref().unwrap();
        assert_eq!(
            (plan.rates.clone(), plan.arrival, plan.burstiness, plan.seed),
            (
                vec![2.0, 8.0],
                llmsweep_shared::bundle::Arrival::Gamma,
                0.5,
                None
            )
        );
        assert_eq!(plan.max_concurrency, Some(64));
        assert!(s.slo.is_none());
        let offered: Vec<f64> = s
            .points
            .iter()
            .map(|p| p.rate.unwrap().offered_rps)
            .collect();
        assert_eq!(offered, [2.0, 8.0]);
        assert!(s.points.iter().all(|p| {
            let r = p.rate.unwrap();
            r.achieved_rps.is_none()
                && r.lag_s.is_none()
                && r.queued_s.is_none()
                && r.peak_concurrency.is_none()
                && r.mean_concurrency.is_none()
                && p.goodput.is_none()
        }));
        assert!(
            s.points
                .iter()
                .all(|p| p.summary.is_none() && p.requests.is_empty())
        );
        let dir_s = dir.path().display();
        let notes = &b.source.as_ref().unwrap().notes;
        assert_eq!(
            notes,
            &[
                "3 open-loop run(s) (a finite request_rate) are a rate sweep beside the sweep of the 1 closed-loop run(s) (request_rate inf)".to_string(),
                format!("{dir_s}/r8.json run 1: 8 req/s offered, gamma arrivals of burstiness 0.5, max_concurrency 64"),
                format!("{dir_s}/r8.json run 1: vLLM's request_goodput 6.5 req/s (requests that met every --goodput bound / duration; the bounds are not recorded in the file)"),
                format!("{dir_s}/r2.json run 1: 2 req/s offered, gamma arrivals of burstiness 0.5, max_concurrency 64"),
                format!("{dir_s}/r2b.json run 1: 2 req/s offered, gamma arrivals of burstiness 0.5, max_concurrency 64"),
                "the result does not record the schedule's seed, the client's schedule lag, the peak concurrency, the mean concurrency, nor llmsweep's goodput counts: they are left empty rather than filled with numbers the source does not have; each point keeps its offered rate, and its achieved rate under the tool's own definition (completed / duration) is in its imported numbers".to_string(),
                format!("{dir_s}/r2b.json run 1: offered rate (req/s) 2 appears again (first at {dir_s}/r2.json run 1); left out"),
                "the run's date 20251103-150000 is the benchmark host's local time, recorded as if UTC".to_string(),
            ]
        );
        assert!(
            b.definitions["request_s"]
                .contains("achieved rate under vLLM's definition (completed / duration")
        );
        assert!(b.definitions["offered_rps"].starts_with("vLLM's --request-rate"));
        assert!(b.definitions["goodput"].starts_with("vLLM's request_goodput"));
        let back = Bundle::from_json(&b.to_json().unwrap()).unwrap();
        assert_eq!(back, b);
    }

    #[test]
    fn open_loop_runs_of_different_arrivals_are_not_one_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(dir.path(), "a.json", &vllm_run("2.0", ""));
        let b = write(
            dir.path(),
            "b.json",
            &vllm_run("4.0", "").replace(r#""burstiness": 0.5"#, r#""burstiness": 1.0"#),
        );
        let e = import(&req(ImportFormat::Vllm, vec![a, b]))
            .unwrap_err()
            .to_string();
        let d = dir.path().display();
        assert_eq!(
            e,
            format!(
                "the open-loop runs differ in how requests arrived (gamma arrivals of burstiness 0.5, max_concurrency 64 at {d}/a.json run 1, Poisson arrivals (burstiness 1), max_concurrency 64 at {d}/b.json run 1): one rate sweep has one arrival process and one max_concurrency; import them separately"
            )
        );
    }
}
