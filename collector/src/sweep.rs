//! Sweeps: run each point, summarise it, flag it, write the bundle, print its row.

use llmsweep_shared::bundle::{
    ErrorKind, Flag, FlagKind, Point, PointStatus, RequestRecord, Sweep, SweepKind,
};
use llmsweep_shared::metrics::{degenerate_text, level_flags, summarize};

use crate::loadgen::{self, LoadResult, LoadSpec, StopRule};
use crate::output::{Progress, ThroughputTable};
use crate::plan::ThroughputPlan;
use crate::session::Session;
use crate::stream::trace::Finished;

/// Characters of generated text kept as a point's output sample.
const SAMPLE_CHARS: usize = 300;

/// The prompt stream of a point, from its parameters, so prompts do not depend on run order.
pub fn stream_id(kind: SweepKind, concurrency: u32, input_len: u64) -> u64 {
    let k = match kind {
        SweepKind::Throughput => 1u64,
        SweepKind::Context => 2,
        SweepKind::Unknown => 3,
    };
    (k << 56) ^ ((concurrency as u64) << 40) ^ input_len
}

/// Runs a throughput sweep into the session's bundle, writing it after every level.
pub async fn throughput(s: &mut Session, plan: &ThroughputPlan) -> anyhow::Result<()> {
    s.bundle.sweeps.push(Sweep {
        kind: SweepKind::Throughput,
        concurrency: plan.concurrency.clone(),
        input_lens: vec![plan.input_len],
        output_len: plan.output_len,
        requests: plan.requests,
        duration_s: plan.duration.map(|d| d.as_secs_f64()),
        warmup: plan.warmup,
        timeout_s: plan.target.timeout.as_secs_f64(),
        points: Vec::new(),
    });
    let sweep_index = s.bundle.sweeps.len() - 1;
    s.checkpoint()?;
    let mut table = ThroughputTable::default();
    println!("{}", table.header());
    for &c in &plan.concurrency {
        if s.interrupt.is_stopped() {
            break;
        }
        let spec = LoadSpec {
            concurrency: c,
            stop: plan.stop_at(c),
            input_len: plan.input_len,
            output_len: plan.output_len,
            stream: stream_id(SweepKind::Throughput, c, plan.input_len),
        };
        let result = run_point(s, spec, format!("C={c}")).await;
        if result.finished.is_empty() {
            break; // interrupted before anything was sent
        }
        let point = build_point(&spec, &result);
        s.add_hashes(
            result
                .finished
                .iter()
                .map(|f| f.record.prompt_hash.as_str()),
        );
        println!("{}", table.row(&point));
        s.bundle.sweeps[sweep_index].points.push(point);
        s.checkpoint()?;
    }
    Ok(())
}

async fn run_point(s: &Session, spec: LoadSpec, label: String) -> LoadResult {
    let total = match spec.stop {
        StopRule::Count(n) => Some(n),
        StopRule::Deadline(_) => None,
    };
    let mut progress = Progress::start(label, total);
    let result = loadgen::run(
        s.client.clone(),
        s.prompts.clone(),
        spec,
        &s.interrupt,
        |f| progress.done(f.record.output_tokens, f.record.is_ok()),
    )
    .await;
    progress.finish();
    result
}

/// Turns a point's finished requests into its bundle entry: summary, flags, status, sample.
pub fn build_point(spec: &LoadSpec, result: &LoadResult) -> Point {
    let records: Vec<_> = result.finished.iter().map(|f| f.record.clone()).collect();
    // Requests aborted by an interrupt are kept in the records but are not the server's doing:
    // they count neither as failures nor in any number.
    let counted: Vec<_> = records
        .iter()
        .filter(|r| !is_cancelled(r))
        .cloned()
        .collect();
    let aborted = records.len() - counted.len();
    let gaps: Vec<f64> = result
        .finished
        .iter()
        .filter(|f| f.record.is_ok())
        .flat_map(|f| f.itl_gaps_s.iter().copied())
        .collect();
    let summary = summarize(&counted, spec.concurrency, spec.output_len, &gaps);
    let mut flags = level_flags(&counted, spec.output_len, 0);
    flags.extend(degenerate_flag(&result.finished));
    if result.interrupted {
        flags.push(Flag {
            kind: FlagKind::Interrupted,
            message: format!(
                "the run was interrupted during this point: its numbers cover the {} requests that finished; {aborted} aborted in flight are recorded but not counted",
                counted.len()
            ),
            count: Some(aborted as u64),
        });
    }
    let (status, reason) = if summary.ok > 0 {
        (PointStatus::Ok, None)
    } else if counted.is_empty() {
        let why = "interrupted before any request finished".to_string();
        (PointStatus::Failed, Some(why))
    } else {
        let first = counted.iter().find_map(|r| r.error.as_ref());
        let why = first.map_or("no request succeeded".to_string(), |e| match e.status {
            Some(code) => format!("HTTP {code}: {}", e.message),
            None => e.message.clone(),
        });
        let n = counted.len();
        (
            PointStatus::Failed,
            Some(format!("all {n} requests failed; the server said: {why}")),
        )
    };
    let sample = result
        .finished
        .iter()
        .find(|f| f.record.is_ok() && !f.text.is_empty())
        .map(|f| f.text.chars().take(SAMPLE_CHARS).collect());
    Point {
        concurrency: spec.concurrency,
        input_len: spec.input_len,
        output_len: spec.output_len,
        status,
        reason,
        started_at: Some(
            result
                .started_at
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        ),
        summary: Some(summary),
        flags,
        requests: records,
        output_sample: sample,
        server_samples: None,
        gpu_samples: None,
        client_cpu: None,
    }
}

/// Flags the point when the generated text of its successful requests is one thing repeated.
fn degenerate_flag(finished: &[Finished]) -> Option<Flag> {
    let ok: Vec<&Finished> = finished.iter().filter(|f| f.record.is_ok()).collect();
    let bad: Vec<String> = ok.iter().filter_map(|f| degenerate_text(&f.text)).collect();
    let first = bad.first()?;
    Some(Flag {
        kind: FlagKind::Degenerate,
        message: format!(
            "{} of {} requests generated degenerate text ({first}); throughput of garbage is not throughput",
            bad.len(),
            ok.len()
        ),
        count: Some(bad.len() as u64),
    })
}

fn is_cancelled(r: &RequestRecord) -> bool {
    r.error
        .as_ref()
        .is_some_and(|e| e.kind == ErrorKind::Cancelled)
}
