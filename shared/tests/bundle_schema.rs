//! Bundle round-trips, forward compatibility and refusal of newer schemas.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use llmsweep_shared::bundle::*;
use llmsweep_shared::metrics::{definitions, summarize};

fn sample() -> Bundle {
    let record = RequestRecord {
        start_s: 0.0,
        ttft_s: Some(0.25),
        e2e_s: 1.25,
        input_tokens: 1000,
        prompt_tokens: Some(1001),
        output_tokens: 11,
        tokens_estimated: false,
        cached_tokens: Some(0),
        finish_reason: Some("length".into()),
        error: None,
        prompt_hash: "0123456789abcdef".into(),
        content_hash: None,
        chunks: 11,
        itl: Some(ItlSummary {
            mean_s: 0.1,
            p50_s: 0.1,
            p99_s: 0.1,
            max_s: 0.1,
        }),
        repeat: None,
        setup: None,
        due: None,
        output_asked: None,
        reasoning: None,
        turn: None,
        spec: Some(RequestSpec {
            steps: 4,
            accepted: 6,
            drafted: Some(12),
        }),
    };
    let failed = RequestRecord {
        ttft_s: None,
        output_tokens: 0,
        error: Some(RequestError {
            kind: ErrorKind::Http,
            status: Some(400),
            message: "context too long".into(),
        }),
        itl: None,
        ..record.clone()
    };
    let requests = vec![record, failed];
    Bundle {
        schema: SCHEMA.into(),
        id: "b1".into(),
        label: "kpro5".into(),
        created_at: "2026-11-29T20:00:00Z".into(),
        complete: true,
        tool: Tool {
            name: "llmsweep".into(),
            version: "0.1.0".into(),
            command_line: vec!["llmsweep".into(), "throughput".into()],
        },
        target: Target {
            url: "http://127.0.0.1:30000".into(),
            api: Api::Completions,
            model: "m".into(),
            engine: Some("sglang".into()),
            engine_version: Some("0.5.11".into()),
            max_context: Some(32768),
            max_running_requests: Some(16),
            server_args: None,
            simulated: false,
            probes: BTreeMap::from([(
                "/health".into(),
                Probe {
                    status: Some(200),
                    body: None,
                    error: None,
                },
            )]),
        },
        hosts: Hosts {
            client: HostFacts {
                hostname: "kpro5".into(),
                os: "linux".into(),
                kernel: None,
                arch: "x86_64".into(),
                cpu_model: None,
                cpu_cores: 2,
                memory_bytes: None,
            },
            notes: BTreeMap::from([("gpu".into(), "2x RTX A6000".into())]),
            gpus: vec![],
            gpu_telemetry: Some(llmsweep_shared::bundle::GpuTelemetry::Local),
            server_gpus: Some(2),
        },
        workload: Workload {
            seed: 7,
            calibration: Calibration::Tokenizer,
            prompt_digest: "ab".into(),
            shared_prefix_len: 0,
            extra_body: None,
            dataset: None,
            prefix_seed: Some(99),
            prefix_tokens: Some(4),
        },
        definitions: definitions(),
        sweeps: vec![Sweep {
            kind: SweepKind::Throughput,
            concurrency: vec![1],
            input_lens: vec![1000],
            output_len: 11,
            requests: Some(2),
            duration_s: None,
            warmup: 2,
            timeout_s: 600.0,
            repeats: None,
            prefill_fit: None,
            preopened: None,
            rate: None,
            slo: None,
            length_spread: None,
            precision: None,
            points: vec![Point {
                concurrency: 1,
                input_len: 1000,
                output_len: 11,
                status: PointStatus::Ok,
                reason: None,
                started_at: None,
                summary: Some(summarize(&requests, 1, 11, &[0.1; 10])),
                flags: vec![],
                requests,
                output_sample: Some("the cat".into()),
                server_samples: None,
                gpu_samples: None,
                client_cpu: Some(0.12),
                client_lateness: None,
                prefix_seed: None,
                predicted_ttft_s: None,
                imported: None,
                discarded: Vec::new(),
                rate: None,
                goodput: None,
                chunk_tokens: Some(llmsweep_shared::bundle::ChunkTokens {
                    counts: vec![3, 4, 2, 1, 0, 0, 0, 0],
                    chunks: 10,
                    tokens: 21,
                    exact: true,
                }),
            }],
        }],
        source: None,
        selftest: None,
    }
}

#[test]
fn write_then_read_is_equal() {
    let b = sample();
    let back = Bundle::from_json(&b.to_json().unwrap()).unwrap();
    assert_eq!(back, b);
}

#[test]
fn a_selftest_section_round_trips_and_is_absent_from_other_bundles() {
    let mut b = sample();
    assert!(!b.to_json().unwrap().contains("\"selftest\""));
    assert!(Bundle::from_json(GOLDEN_V1).unwrap().selftest.is_none());
    let errors = llmsweep_shared::metrics::Stats::from_values([0.0001, 0.0002, 0.0004]);
    b.selftest = Some(Selftest {
        levels: vec![SelftestLevel {
            mode: SelftestMode::Scheduled,
            tokens_per_event: 1,
            concurrency: 8,
            requests: 16,
            ok: 16,
            exact: 16,
            commonest_error: None,
            output_len: 12,
            source_addresses: 2,
            new_connections: 3,
            first_event_s: Some(0.05),
            interval_s: Some(0.01),
            wall_s: 0.3,
            tokens: 192,
            events: 192,
            tok_s: 640.0,
            events_s: 640.0,
            cpu_us_per_token: Some(7.5),
            peak_rss_bytes: Some(1 << 24),
            ttft_error_s: errors,
            itl_error_s: errors,
            first_event_lag_s: errors,
        }],
    });
    let json = b.to_json().unwrap();
    let raw: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(raw["selftest"]["levels"][0]["mode"], "scheduled");
    assert_eq!(raw["selftest"]["levels"][0]["source_addresses"], 2);
    assert_eq!(Bundle::from_json(&json).unwrap(), b);
}

#[test]
fn a_rate_sweep_round_trips_with_its_schedule_lag_and_goodput() {
    use llmsweep_shared::bundle::{Arrival, Due, Goodput, RatePlan, RatePoint, Slo, SweepKind};
    let mut b = sample();
    let sw = &mut b.sweeps[0];
    sw.kind = SweepKind::Rate;
    sw.rate = Some(RatePlan {
        rates: vec![0.5, 2.0],
        arrival: Arrival::Gamma,
        burstiness: 0.5,
        seed: Some(7),
        max_concurrency: Some(8),
        search: None,
    });
    sw.slo = Some(Slo {
        ttft_s: Some(0.5),
        tpot_s: None,
        e2e_s: Some(10.0),
    });
    let p = &mut sw.points[0];
    p.rate = Some(RatePoint {
        offered_rps: 0.5,
        achieved_rps: Some(0.48),
        lag_s: llmsweep_shared::metrics::Stats::from_values([0.001, 0.002]),
        queued_s: None,
        peak_concurrency: Some(3),
        mean_concurrency: Some(1.5),
    });
    p.goodput = Some(Goodput {
        good: 1,
        requests: 2,
        fraction: 0.5,
        good_rps: 0.25,
        good_tok_s: 25.0,
    });
    p.requests[0].due = Some(Due {
        due_s: 0.0,
        queued_s: 0.0,
    });
    let json = b.to_json().unwrap();
    let raw: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(raw["sweeps"][0]["kind"], "rate");
    assert_eq!(raw["sweeps"][0]["rate"]["arrival"], "gamma");
    assert_eq!(raw["sweeps"][0]["slo"]["ttft_s"], 0.5);
    assert!(raw["sweeps"][0]["slo"].get("tpot_s").is_none());
    assert_eq!(raw["sweeps"][0]["points"][0]["rate"]["peak_concurrency"], 3);
    assert_eq!(Bundle::from_json(&json).unwrap(), b);
}

#[test]
fn unknown_fields_and_variants_are_ignored() {
    let mut v: serde_json::Value = serde_json::from_str(&sample().to_json().unwrap()).unwrap();
    v["added_in_a_later_minor"] = serde_json::json!({"x": 1});
    v["sweeps"][0]["points"][0]["flags"] =
        serde_json::json!([{"kind": "thermal_throttle", "message": "hot"}]);
    v["sweeps"][0]["points"][0]["requests"][0]["new_timing"] = serde_json::json!(3);
    let b = Bundle::from_value(v).unwrap();
    assert_eq!(b.sweeps[0].points[0].flags[0].kind, FlagKind::Unknown);
    assert_eq!(b.sweeps[0].points[0].requests[0].output_tokens, 11);
}

#[test]
fn newer_major_schema_is_refused_with_a_message() {
    let text = sample()
        .to_json()
        .unwrap()
        .replace("llmsweep.bundle/1", "llmsweep.bundle/2");
    let err = Bundle::from_json(&text).unwrap_err();
    assert!(matches!(err, BundleError::NewerSchema { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("llmsweep.bundle/2") && msg.contains("upgrade"),
        "{msg}"
    );
}

#[test]
fn other_json_is_not_a_bundle() {
    for (text, needle) in [
        ("{\"x\": 1}", "no `schema` field"),
        (
            "{\"schema\": \"other/1\"}",
            "expected \"llmsweep.bundle/<version>\"",
        ),
        ("{\"schema\": \"llmsweep.bundle/x\"}", "not a number"),
        ("[1, 2", "not valid JSON"),
    ] {
        let msg = Bundle::from_json(text).unwrap_err().to_string();
        assert!(msg.contains(needle), "{text}: {msg}");
    }
}

#[test]
fn truncated_bundle_is_damaged_not_a_panic() {
    let text = sample().to_json().unwrap();
    for cut in [text.len() / 3, text.len() / 2, text.len() - 2] {
        assert!(Bundle::from_json(&text[..cut]).is_err());
    }
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v.as_object_mut().unwrap().remove("target");
    let msg = Bundle::from_value(v).unwrap_err().to_string();
    assert!(msg.contains("damaged") && msg.contains("target"), "{msg}");
}

/// A bundle written by llmsweep 0.1 (`llmsweep run` against the simulator), kept forever: every
/// later version must read it and agree with the numbers in it.
const GOLDEN_V1: &str = include_str!("fixtures/bundle-v1-run.json");
const GOLDEN_V1_SELFTEST: &str = include_str!("fixtures/bundle-v1-selftest.json");

/// A `llmsweep selftest` bundle as the collector writes it (numbers rounded by hand so tests can
/// state them): levels and no sweeps.
#[test]
fn golden_v1_selftest_reads() {
    let b = Bundle::from_json(GOLDEN_V1_SELFTEST).unwrap();
    assert!(b.sweeps.is_empty());
    let levels = b.selftest.unwrap().levels;
    assert_eq!(levels.len(), 6);
    assert_eq!(levels[5].mode, SelftestMode::Scheduled);
    assert_eq!(levels[5].ttft_error_s.unwrap().p99, 0.00102);
}

#[test]
fn golden_v1_bundle_reads_and_its_numbers_recompute() {
    let b = Bundle::from_json(GOLDEN_V1).unwrap();
    assert_eq!(
        (b.schema.as_str(), b.label.as_str()),
        ("llmsweep.bundle/1", "golden")
    );
    assert!(b.complete && b.target.simulated);
    assert_eq!(b.workload.seed, 42);
    assert_eq!(
        b.hosts.notes.get("gpu").map(String::as_str),
        Some("simulated")
    );
    let kinds: Vec<SweepKind> = b.sweeps.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [SweepKind::Throughput, SweepKind::Context]);

    // Every stored summary is what the metric code computes from the stored records (ITL aside:
    // its raw gaps are not stored).
    for sweep in &b.sweeps {
        for p in sweep.points.iter().filter(|p| p.status == PointStatus::Ok) {
            let stored = p.summary.clone().unwrap();
            let again = summarize(&p.requests, p.concurrency, p.output_len, &[]);
            assert_eq!(
                Summary {
                    itl_s: None,
                    ..stored
                },
                again,
                "C={} L={}",
                p.concurrency,
                p.input_len
            );
        }
    }

    let ctx = &b.sweeps[1];
    let fit = ctx.prefill_fit.unwrap();
    let skipped = &ctx.points[2];
    assert_eq!(skipped.status, PointStatus::Skipped);
    assert_eq!(
        skipped.reason.as_deref(),
        Some("needs 8004 tokens, server context is 4096")
    );
    assert_eq!(skipped.predicted_ttft_s, Some(fit.predict_s(8000)));
    let samples: Vec<(u64, f64)> = ctx.points[..2]
        .iter()
        .flat_map(|p| &p.requests)
        .map(|r| (r.prompt_tokens.unwrap(), r.ttft_s.unwrap()))
        .collect();
    // The golden bundle predates `lengths`: it reads as 0, and the refit counts its 2.
    assert_eq!(fit.lengths, 0);
    let refit = llmsweep_shared::metrics::fit_prefill(&samples).unwrap();
    assert_eq!(
        refit,
        llmsweep_shared::metrics::PrefillFit { lengths: 2, ..fit }
    );
}

const GOLDEN_IMPORTED_V1: &str = include_str!("fixtures/bundle-v1-imported.json");

/// An imported bundle as `llmsweep import --from table` wrote it: later versions must keep
/// reading its source, its definitions and the source's numbers, and must not invent the ones
/// the source did not give.
#[test]
fn golden_imported_bundle_reads_with_its_source_and_nothing_invented() {
    use llmsweep_shared::curves::Metric;
    let b = Bundle::from_json(GOLDEN_IMPORTED_V1).unwrap();
    assert!(b.is_imported());
    let src = b.source.as_ref().unwrap();
    assert_eq!(
        (src.tool.as_str(), src.format.as_str()),
        ("a text table", "table")
    );
    assert_eq!(
        src.notes,
        ["kpro6-throughput.txt line 7: 2 of 8 columns, the row was cut off; left out"]
    );
    assert_eq!(b.target.api, Api::Unknown);
    assert!(b.definitions["ttft_s"].starts_with("the table's TTFT column as printed"));
    let p = &b.sweeps[0].points[0];
    assert!(p.summary.is_none() && p.requests.is_empty());
    assert_eq!(Metric::AggTokS.of(p), Some(116.6));
    assert_eq!(Metric::TtftP50.of(p), Some(0.0108));
    assert_eq!(Metric::DecodeTokSP50.of(p), Some(128.0));
    assert_eq!(Metric::SteadyTokS.of(p), None);
    assert_eq!(Metric::TtftP99.of(p), None);
    assert_eq!(Metric::ItlP50.of(p), None);
    assert_eq!(
        b.sweeps[0].points[1].flags[0].kind,
        FlagKind::Short,
        "29 of 32 asked tokens"
    );
    // Writing it again changes nothing.
    assert_eq!(Bundle::from_json(&b.to_json().unwrap()).unwrap(), b);
}

#[test]
fn a_bundle_streams_from_a_reader_plain_or_gzip_and_a_bad_one_is_refused() {
    use std::io::Write;
    let b = sample();
    let text = b.to_json().unwrap();
    assert_eq!(Bundle::from_reader(text.as_bytes()).unwrap(), b);
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(text.as_bytes()).unwrap();
    let gz = enc.finish().unwrap();
    assert_eq!(Bundle::from_reader(&gz[..]).unwrap(), b);
    assert!(matches!(
        Bundle::from_reader(&b""[..]),
        Err(BundleError::Empty)
    ));
    assert!(matches!(
        Bundle::from_reader(&b"[1, 2]"[..]),
        Err(BundleError::Invalid(_))
    ));
    let newer = text.replace("llmsweep.bundle/1", "llmsweep.bundle/2");
    assert!(matches!(
        Bundle::from_reader(newer.as_bytes()),
        Err(BundleError::NewerSchema { .. })
    ));
    // Cut short: the gzip stream ends early, which is an error, not half a bundle.
    assert!(Bundle::from_reader(&gz[..gz.len() / 2]).is_err());
}
