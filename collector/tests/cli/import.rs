//! `llmsweep import` on fixtures of each format (written from the formats' documented fields),
//! then `compare` against the golden measured bundle, whose numbers the fixtures were made
//! from: known deltas, the source named, its definitions shown.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{llmsweep, text};
use std::path::{Path, PathBuf};
use std::process::Output;

use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{Api, FlagKind, PointStatus, SweepKind};

const GOLDEN: &str = "../shared/tests/fixtures/bundle-v1-run.json";

fn fixture(name: &str) -> String {
    format!("tests/fixtures/import/{name}")
}

/// The text with every run of spaces made one, so table rows read the same at any width.
fn squash(s: &str) -> String {
    s.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Imports `files` as `kpro6` into `dir`; returns the bundle path and the command's output.
fn import(dir: &Path, from: &str, files: &[&str], extra: &[&str]) -> (PathBuf, Output) {
    let out = dir.join(format!("kpro6-{from}.json"));
    let fixtures: Vec<String> = files.iter().map(|f| fixture(f)).collect();
    let mut args = vec!["import", "--from", from];
    args.extend(fixtures.iter().map(String::as_str));
    args.extend(["--label", "kpro6", "-o", out.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let o = llmsweep(&args);
    (out, o)
}

fn read(path: &Path) -> Bundle {
    Bundle::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn an_old_text_table_joins_the_comparison_with_its_cut_off_row_kept_as_far_as_it_is_intact() {
    let dir = tempfile::tempdir().unwrap();
    let (path, o) = import(
        dir.path(),
        "table",
        &["kpro6-throughput.txt"],
        &["--input-len", "64", "--output-len", "4"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(
        out.contains("throughput sweep: 3 points (C 1,2,4), 2 flagged"),
        "{out}"
    );
    // The C=4 row was cut off by the terminal after its aggregate: kept, with what was intact.
    assert!(!err.contains("left out"), "{err}");

    let b = read(&path);
    let src = b.source.as_ref().unwrap();
    assert_eq!(
        (src.tool.as_str(), src.format.as_str()),
        ("a text table", "table")
    );
    assert_eq!(b.target.api, Api::Unknown);
    let s = &b.sweeps[0];
    assert_eq!(
        (s.kind, s.input_lens.as_slice(), s.output_len),
        (SweepKind::Throughput, &[64][..], 4)
    );
    let p2 = &s.points[1];
    assert!(p2.summary.is_none() && p2.requests.is_empty());
    let v = p2.imported.as_ref().unwrap();
    assert_eq!(
        (v.output_tok_s, v.ttft_s.unstated, v.output_tokens),
        (Some(353.7), Some(0.0076), Some(29))
    );
    assert_eq!(p2.flags[0].kind, FlagKind::Short);
    assert!(
        p2.flags[0]
            .message
            .starts_with("29 output tokens where 8 × 4 = 32 were asked")
    );

    // Next to a measured run: aggregate compared (the table has no steady window), the
    // source and its definitions named.
    let o = llmsweep(&["compare", GOLDEN, path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = squash(&text(&o.stdout));
    assert!(out.contains("C metric golden kpro6 *"), "{out}");
    assert!(
        out.contains("aggregate output tok/s 233.3 116.6 -50.0 ±21.3 % WORSE"),
        "{out}"
    );
    assert!(out.contains("kpro6 is imported from a text table"), "{out}");
    assert!(
        // Two requests of the golden run cannot say how sure a median is: shown, not judged.
        out.contains("decode tok/s per request (p50) 256.2 128.0† -50.0 %\n"),
        "{out}"
    );
    assert!(
        out.contains("† the source's per-request speed; its definition is not stated"),
        "{out}"
    );
    assert!(
        out.contains("TTFT p50 (s): the table's TTFT column as printed"),
        "{out}"
    );
    assert!(
        out.contains("not reported: steady output tok/s, TTFT p99 (s)"),
        "{out}"
    );
    assert!(out.contains("measured by llmsweep a text table"), "{out}");

    // The gate falls back to aggregate throughput for a run without a steady window.
    let o = llmsweep(&[
        "compare",
        GOLDEN,
        path.to_str().unwrap(),
        "--fail-if-slower",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(
        out.contains("kpro6: aggregate output tok/s -50.0 ±21.3 % at C=1"),
        "{out}"
    );
    // TTFT +99.4 % over two requests is not beyond the noise, so it is not a regression; the
    // gate cannot rule one out either, and says so.
    let slower = out
        .split("slower than the baseline by more than 10 %, beyond the noise:")
        .nth(1)
        .unwrap_or_default();
    assert!(!slower.contains("TTFT p50"), "{out}");
    assert!(
        out.contains("cannot tell whether these are more than 10 % slower")
            && out.contains("kpro6: TTFT p50 (s) +99.4 %"),
        "{out}"
    );
    assert!(out.contains("only in kpro6: C = 4 — not gated"), "{out}");
    assert!(
        out.contains("kpro6 has no context sweep — not gated"),
        "{out}"
    );
}

/// `-o` naming a folder that is there, as `run --out results` names one: the bundle goes in
/// it under its own name, and nothing else is written there.
#[test]
fn output_naming_a_folder_writes_the_bundle_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let import_to = |out: &std::path::Path| {
        let table = fixture("kpro6-throughput.txt");
        let args = [
            "import", "--from", "table", &table, "--label", "kpro6", "-o",
        ];
        let o = llmsweep(&[&args[..], &[out.to_str().unwrap()]].concat());
        assert!(o.status.success(), "{}", text(&o.stderr));
        o
    };
    let o = import_to(dir.path());
    let files: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.starts_with("kpro6-imported-") && name.ends_with(".json"),
        "{name}"
    );
    assert!(text(&o.stdout).contains(&name), "{}", text(&o.stdout));
    assert_eq!(read(&files[0]).label, "kpro6");

    // A folder that is not there yet, named with a trailing `/` or with no bundle's extension
    // (`-o results` before the first `run --out results` made it), is made.
    for new in [dir.path().join("new").join(""), dir.path().join("results")] {
        import_to(&new);
        let made: Vec<_> = std::fs::read_dir(&new).unwrap().collect();
        assert_eq!(made.len(), 1, "{}", new.display());
    }
    // A name ending in .json or .json.gz is the bundle's own, gzipped when its name says so.
    for file in ["mine.json", "mine.json.gz"] {
        let path = dir.path().join(file);
        import_to(&path);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(
            bytes.starts_with(&[0x1f, 0x8b]),
            file.ends_with(".gz"),
            "{file}"
        );
        assert_eq!(Bundle::from_bytes(&bytes).unwrap().label, "kpro6");
    }
}

#[test]
fn a_table_needs_the_lengths_it_does_not_state() {
    let dir = tempfile::tempdir().unwrap();
    // The fixture without the command line above it, which states the lengths.
    let full = std::fs::read_to_string(
        fixture("kpro6-throughput.txt")
            .replace("tests/", concat!(env!("CARGO_MANIFEST_DIR"), "/tests/")),
    )
    .unwrap();
    let bare = dir.path().join("bare.txt");
    std::fs::write(&bare, full.split_once('\n').unwrap().1).unwrap();
    let out = dir.path().join("bare.json");
    let o = llmsweep(&[
        "import",
        "--from",
        "table",
        bare.to_str().unwrap(),
        "--label",
        "kpro6",
        "--output-len",
        "4",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("bare.txt line 4"), "{err}");
    assert!(err.contains("give --input-len N"), "{err}");
    assert!(!out.exists(), "nothing is written on error");

    // With its first line, the table says them itself: no flag needed.
    let (path, o) = import(dir.path(), "table", &["kpro6-throughput.txt"], &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let s = &read(&path).sweeps[0];
    assert_eq!((s.input_lens.as_slice(), s.output_len), (&[64][..], 4));
    // A flag that contradicts it wins, and says so.
    let (_, o) = import(
        dir.path(),
        "table",
        &["kpro6-throughput.txt"],
        &["--input-len", "128"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("says input 64 above the table; --input-len 128 was used"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_context_table_keeps_its_failed_row() {
    let dir = tempfile::tempdir().unwrap();
    let (path, o) = import(
        dir.path(),
        "table",
        &["kpro6-context.txt"],
        &["--output-len", "4"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let b = read(&path);
    let s = &b.sweeps[0];
    assert_eq!(s.kind, SweepKind::Context);
    assert_eq!(s.input_lens, [256, 512, 8000]);
    assert_eq!(s.points[2].status, PointStatus::Failed);
    assert_eq!(
        s.points[2].reason.as_deref(),
        Some("the table says: FAIL (context length exceeded)")
    );
    let o = llmsweep(&["compare", GOLDEN, path.to_str().unwrap()]);
    let out = squash(&text(&o.stdout));
    assert!(out.contains("kpro6 has no throughput sweep"), "{out}");
    // The table's TTFT(s) does not say it is a median: marked where it stands in for one.
    assert!(
        out.contains("256 TTFT p50 (s) 0.005 0.011† +100.2 %\n"),
        "{out}"
    );
    // Prefill speed computed from the table's TTFT: 256 / 0.011.
    assert!(
        out.contains("prefill tok/s (p50) 46589.7 23272.7† -50.0 %\n"),
        "{out}"
    );
    assert!(
        out.contains("† the source's number; whether mean or median is not stated"),
        "{out}"
    );
}

#[test]
fn vllm_results_of_several_concurrencies_become_one_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let (path, o) = import(dir.path(), "vllm", &["vllm-c2.json", "vllm-c1.json"], &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let b = read(&path);
    assert_eq!(b.source.as_ref().unwrap().tool, "vllm bench serve");
    assert_eq!(b.created_at, "2025-11-03T14:15:00Z");
    assert_eq!(b.target.model, "Qwen/Qwen3-8B");
    assert_eq!(b.target.api, Api::Completions);
    assert!(b.definitions["itl_s"].contains("NOT divided by the tokens a chunk carries"));
    let s = &b.sweeps[0];
    assert_eq!(
        (
            s.concurrency.as_slice(),
            s.input_lens.as_slice(),
            s.output_len
        ),
        (&[1, 2][..], &[64][..], 4)
    );
    assert_eq!(s.points[1].flags[0].message, "2 of 10 requests failed");
    let v = s.points[0].imported.as_ref().unwrap();
    assert_eq!(v.ttft_s.p99, Some(5.4163875 * 2.0 / 1000.0));

    let o = llmsweep(&["compare", GOLDEN, path.to_str().unwrap()]);
    let out = squash(&text(&o.stdout));
    assert!(
        out.contains("aggregate output tok/s 233.3 466.5 +100.0 ±85.4 % better"),
        "{out}"
    );
    assert!(out.contains("TTFT p50 (s) 0.005 0.005 +0.0 %"), "{out}");
    assert!(
        out.contains("decode tok/s per request (p50) 256.2 250.0 -2.4 %\n"),
        "{out}"
    );
    assert!(
        out.contains("kpro6 is imported from vllm bench serve"),
        "{out}"
    );
}

#[test]
fn sglang_lines_carry_the_engine_and_its_version() {
    let dir = tempfile::tempdir().unwrap();
    let (path, o) = import(dir.path(), "sglang", &["sglang-runs.jsonl"], &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let b = read(&path);
    assert_eq!(b.target.engine.as_deref(), Some("sglang"));
    assert_eq!(b.target.engine_version.as_deref(), Some("0.5.11"));
    let s = &b.sweeps[0];
    assert_eq!(s.concurrency, [1, 2]);
    let o = llmsweep(&["compare", GOLDEN, path.to_str().unwrap()]);
    let out = squash(&text(&o.stdout));
    assert!(
        out.contains("aggregate output tok/s 353.7 707.4 +100.0 ±100.5 % better"),
        "{out}"
    );
    assert!(out.contains("engine version 0.1.0 0.5.11"), "{out}");
    assert!(
        out.contains("ITL p50 (ms): gap between consecutive streamed chunks"),
        "{out}"
    );
}

#[test]
fn the_wrong_format_names_the_file_and_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let (_, o) = import(dir.path(), "vllm", &["kpro6-throughput.txt"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr).trim(),
        "error: tests/fixtures/import/kpro6-throughput.txt: this is a text table, not a result of vllm bench serve: use --from table or leave --from out"
    );
    let (_, o) = import(
        dir.path(),
        "table",
        &["vllm-c1.json"],
        &["--output-len", "4"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr).trim(),
        "error: tests/fixtures/import/vllm-c1.json: this is a result of vllm bench serve, not a text table: use --from vllm or leave --from out"
    );
    // Read as SGLang's, a vLLM file would lose its e2e latencies (`e2el`, not `e2e_latency`).
    let (_, o) = import(dir.path(), "sglang", &["vllm-c1.json"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr).trim(),
        "error: tests/fixtures/import/vllm-c1.json: this is a result of vllm bench serve, not a result of sglang.bench_serving: use --from vllm or leave --from out"
    );
    let (_, o) = import(dir.path(), "vllm", &["sglang-runs.jsonl"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("this is a result of sglang.bench_serving, not a result of vllm bench serve: use --from sglang"),
        "{}",
        text(&o.stderr)
    );
    let (_, o) = import(dir.path(), "table", &["missing.txt"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("tests/fixtures/import/missing.txt cannot be read"),
        "{}",
        text(&o.stderr)
    );
}

/// Imports `files` with `--from` left out; returns the bundle path and the output.
fn import_auto(dir: &Path, files: &[&str], extra: &[&str]) -> (PathBuf, Output) {
    let out = dir.join("auto.json");
    let mut args = vec!["import".to_string()];
    args.extend(files.iter().map(|f| f.to_string()));
    args.extend(["--label", "auto", "-o", out.to_str().unwrap()].map(String::from));
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (out, llmsweep(&args))
}

#[test]
fn without_from_each_format_is_told_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    for (files, format, tool) in [
        (
            &["vllm-c1.json", "vllm-c2.json"][..],
            "vllm",
            "vllm bench serve",
        ),
        (&["sglang-runs.jsonl"][..], "sglang", "sglang.bench_serving"),
        (&["kpro6-throughput.txt"][..], "table", "a text table"),
    ] {
        let paths: Vec<String> = files.iter().map(|f| fixture(f)).collect();
        let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
        let (path, o) = import_auto(
            dir.path(),
            &paths,
            &["--input-len", "64", "--output-len", "4"],
        );
        assert!(o.status.success(), "{format}: {}", text(&o.stderr));
        let b = read(&path);
        let src = b.source.as_ref().unwrap();
        assert_eq!((src.format.as_str(), src.tool.as_str()), (format, tool));
        assert!(!b.definitions["source"].is_empty());
        // The same bundle as with --from named, apart from the command line and the id.
        let (named, o) = import(
            dir.path(),
            format,
            files,
            &["--input-len", "64", "--output-len", "4"],
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        let named = read(&named);
        assert_eq!(named.sweeps, b.sweeps, "{format}");
        assert_eq!(named.definitions, b.definitions, "{format}");
    }
}

#[test]
fn without_from_peers_mixes_and_the_undecidable_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p.display().to_string()
    };
    let peer = write(
        "inference-perf-prometheus.json",
        r#"{"benchmark_time_seconds": 0.0, "load_summary": {}, "successes": {"rate": 1.0}, "failures": {}}"#,
    );
    let either = write(
        "either.json",
        r#"{"duration": 1.0, "completed": 2, "max_concurrency": 1}"#,
    );
    let other = write("other.json", r#"{"results": []}"#);
    for (file, want) in [
        (
            peer.as_str(),
            format!(
                "error: {peer}: this is a Prometheus report of inference-perf, which llmsweep cannot import yet (it imports vllm bench serve's JSON, sglang.bench_serving's JSON lines, GuideLLM's benchmarks.json, AIPerf's profile_export_aiperf.json, genai-bench's run files, inference-perf's stage reports and text tables)"
            ),
        ),
        (
            either.as_str(),
            format!(
                "error: {either}: this is a benchmark summary of vllm bench serve or sglang.bench_serving, and nothing in it tells which: give --from vllm or --from sglang"
            ),
        ),
        (
            other.as_str(),
            format!(
                "error: {other}: JSON of no format llmsweep knows: not a file llmsweep imports (vllm bench serve's JSON, sglang.bench_serving's JSON lines, GuideLLM's benchmarks.json, AIPerf's profile_export_aiperf.json, genai-bench's run files, inference-perf's stage reports and text tables); give --from to read it as one of them and be told what it lacks"
            ),
        ),
    ] {
        let (path, o) = import_auto(dir.path(), &[file], &[]);
        assert_eq!(o.status.code(), Some(2), "{file}");
        assert_eq!(text(&o.stderr).trim(), want);
        assert!(!path.exists());
    }
    // Named, the undecidable file is read as what --from says.
    let out = dir.path().join("e.json");
    let o = llmsweep(&[
        "import",
        "--from",
        "sglang",
        &either,
        "--label",
        "e",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(read(&out).source.unwrap().format.as_str(), "sglang");
    // A peer's file under a named format is refused too.
    let o = llmsweep(&[
        "import",
        "--from",
        "vllm",
        &peer,
        "--label",
        "g",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        text(&o.stderr).trim(),
        format!(
            "error: {peer}: this is a Prometheus report of inference-perf, not a result of vllm bench serve: llmsweep cannot import a Prometheus report of inference-perf yet"
        )
    );
    let vllm = fixture("vllm-c1.json");
    let sglang = fixture("sglang-runs.jsonl");
    let (_, o) = import_auto(dir.path(), &[&vllm, &sglang], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr).trim(),
        format!(
            "error: {sglang} is a result of sglang.bench_serving, but {vllm} is a result of vllm bench serve: one import reads one format; import each separately"
        )
    );
}

/// The user's story: the old host's numbers exist only as the truncated table in DESIGN.md
/// (1000 input, 500 output tokens, C = 1, 2, 4 and a cut-off C = 8); the new host is measured
/// fresh. Against a server faster at every level the gate passes; the other way round it fails
/// with exit 1 (a regression), never 2 (a refusal).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_design_table_gates_against_a_fresh_run_both_ways() {
    use llmsweep::sim::{Preset, SimConfig, SimServer};
    let dir = tempfile::tempdir().unwrap();
    let (old, o) = import(
        dir.path(),
        "table",
        &["design-kpro6.txt"],
        &["--input-len", "1000", "--output-len", "500"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    // A server well faster than the table everywhere: 1 ms per token, TTFT in milliseconds.
    let cfg = SimConfig {
        decode_d0_s: 0.001,
        decode_d1_s: 0.0,
        ..SimConfig::preset(Preset::Fast)
    };
    let sim = SimServer::start(cfg, 0).await.unwrap();
    let out = dir.path().join("results");
    let url = sim.url();
    let o = llmsweep(&[
        "throughput",
        "--url",
        &url,
        "--label",
        "kpro5",
        "--out",
        out.to_str().unwrap(),
        "--concurrency",
        "1,2,4,8,16",
        "--requests",
        "8",
        "--warmup",
        "0",
    ]);
    sim.shutdown().await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let new = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());

    let o = llmsweep(&["compare", old, new, "--fail-if-slower", "5"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains(
            "throughput sweep: kpro5 is faster than kpro6 at every level (C = 1, 2, 4, 8)"
        ),
        "{out}"
    );
    assert!(out.contains("only in kpro5: C = 16 — not gated"), "{out}");
    // The cut-off C=8 row is compared on what it kept.
    assert!(out.contains("cut off in the source"), "{out}");
    // Its C=4 row's requests stopped early, which alone can move its speeds: said beside the
    // verdict.
    let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "kpro6 at C=4: 3210 output tokens where 8 × 500 = 4000 were asked: requests stopped early (at EOS?), so speeds are over shorter outputs; a change there may be that"
        ),
        "{out}"
    );

    let o = llmsweep(&["compare", new, old, "--fail-if-slower", "5"]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("throughput sweep: kpro6 is slower than kpro5"),
        "{out}"
    );
    assert!(out.contains("kpro6: aggregate output tok/s -"), "{out}");
    assert!(out.contains("kpro6: TTFT p50 (s) +"), "{out}");
}

#[test]
fn sglang_open_loop_lines_are_a_rate_sweep_keyed_by_offered_rate() {
    let dir = tempfile::tempdir().unwrap();
    let (path, o) = import(dir.path(), "sglang", &["sglang-rates.jsonl"], &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("rate sweep: 2 points (2, 4 req/s)"),
        "{}",
        text(&o.stdout)
    );
    let b = read(&path);
    let s = &b.sweeps[0];
    assert_eq!(s.kind, SweepKind::Rate);
    let plan = s.rate.as_ref().unwrap();
    assert_eq!(
        (plan.rates.clone(), plan.seed, plan.max_concurrency),
        (vec![2.0, 4.0], None, None)
    );
    // Offered rate and SGLang's mean concurrency kept; nothing the file lacks filled in.
    let rates: Vec<(f64, Option<f64>, Option<f64>)> = s
        .points
        .iter()
        .map(|p| {
            let r = p.rate.unwrap();
            (r.offered_rps, r.mean_concurrency, r.achieved_rps)
        })
        .collect();
    assert_eq!(rates, [(2.0, Some(1.62), None), (4.0, Some(3.55), None)]);
    assert!(s.points.iter().all(|p| p.flags.is_empty()));
    assert!(
        b.definitions["mean_concurrency"].starts_with("SGLang's concurrency"),
        "{:?}",
        b.definitions
    );
    let err = text(&o.stderr);
    assert!(
        err.contains("run 1: SGLang's benchmark draws exponential gaps: Poisson arrivals"),
        "{err}"
    );
}

/// A real `benchmarks.json` of GuideLLM 0.8.1 against serve-sim (see the fixture's README):
/// told from its content, each benchmark a point, every number the file's own.
#[test]
fn guidellm_benchmarks_become_points_holding_the_files_own_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let name = "guidellm-0.8.1/benchmarks.json";
    let (path, o) = import_auto(dir.path(), &[&fixture(name)], &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("throughput sweep: 2 points (C 1,2)"),
        "{}",
        text(&o.stdout)
    );
    let b = read(&path);
    let src = b.source.as_ref().unwrap();
    assert_eq!(
        (
            src.tool.as_str(),
            src.format.as_str(),
            src.version.as_deref()
        ),
        ("GuideLLM", "guidellm", Some("0.8.1"))
    );
    assert_eq!(
        (b.target.model.as_str(), b.target.api),
        ("sim-fast", Api::Completions)
    );
    assert!(b.definitions["tpot_s"].starts_with("GuideLLM's inter_token_latency_ms"));
    let s = &b.sweeps[0];
    assert_eq!(
        (s.kind, s.concurrency.as_slice(), s.output_len),
        (SweepKind::Throughput, &[1, 2][..], 8)
    );
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
    let bench = file["benchmarks"].as_array().unwrap();
    assert_eq!(bench.len(), s.points.len());
    for (p, g) in s.points.iter().zip(bench) {
        assert_eq!(
            u64::from(p.concurrency),
            g["config"]["strategy"]["streams"].as_u64().unwrap()
        );
        let m = &g["metrics"];
        let ok = |k: &str| &m[k]["successful"];
        let v = p.imported.as_ref().unwrap();
        let stats = |k: &str, per_s: f64| {
            (
                ok(k)["mean"].as_f64().map(|x| x / per_s),
                ok(k)["median"].as_f64().map(|x| x / per_s),
                ok(k)["percentiles"]["p90"].as_f64().map(|x| x / per_s),
                ok(k)["percentiles"]["p99"].as_f64().map(|x| x / per_s),
            )
        };
        let q = |q: &llmsweep_shared::bundle::Quantiles| (q.mean, q.p50, q.p90, q.p99);
        assert_eq!(q(&v.ttft_s), stats("time_to_first_token_ms", 1000.0));
        assert_eq!(q(&v.tpot_s), stats("inter_token_latency_ms", 1000.0));
        assert_eq!(q(&v.e2e_s), stats("request_latency", 1.0));
        assert!(v.itl_s.is_empty());
        assert_eq!(
            v.output_tok_s,
            ok("output_tokens_per_second")["mean"].as_f64()
        );
        assert_eq!(v.request_s, ok("requests_per_second")["mean"].as_f64());
        assert_eq!(v.wall_s, g["duration"].as_f64());
        let totals = &m["request_totals"];
        assert_eq!(
            (v.ok, v.failed),
            (totals["successful"].as_u64(), totals["errored"].as_u64())
        );
        assert_eq!(
            v.output_tokens.map(|t| t as f64),
            ok("output_token_count")["total_sum"].as_f64()
        );
        assert_eq!(
            v.input_tokens.map(|t| t as f64),
            ok("prompt_token_count")["total_sum"].as_f64()
        );
        assert!(p.flags.is_empty(), "{:?}", p.flags);
    }
    // Named as another format, it is refused by what it is.
    let (_, o) = import(dir.path(), "vllm", &[name], &[]);
    assert_eq!(
        text(&o.stderr).trim(),
        "error: tests/fixtures/import/guidellm-0.8.1/benchmarks.json: this is GuideLLM's benchmarks.json, not a result of vllm bench serve: use --from guidellm or leave --from out"
    );
}

/// Real `profile_export_aiperf.json` files of AIPerf 0.13.0 against serve-sim (see the fixture's
/// README), one per run: told from their content, the concurrency runs one throughput sweep in
/// concurrency order and the rate run a rate sweep, every number the file's own.
#[test]
fn aiperf_runs_become_points_holding_the_files_own_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "aiperf-0.13.0/c2.json",
        "aiperf-0.13.0/c1.json",
        "aiperf-0.13.0/r8.json",
    ];
    let paths: Vec<String> = names.iter().map(|n| fixture(n)).collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let (path, o) = import_auto(dir.path(), &args, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("throughput sweep: 2 points (C 1,2)"),
        "{}",
        text(&o.stdout)
    );
    let b = read(&path);
    let src = b.source.as_ref().unwrap();
    assert_eq!(
        (
            src.tool.as_str(),
            src.format.as_str(),
            src.version.as_deref()
        ),
        ("AIPerf", "aiperf", Some("0.13.0"))
    );
    assert_eq!(
        (b.target.model.as_str(), b.target.api),
        ("sim-fast", Api::Completions)
    );
    assert!(b.definitions["tpot_s"].starts_with("AIPerf's inter_token_latency"));
    assert!(b.definitions["itl_s"].starts_with("AIPerf's inter_chunk_latency"));
    let file = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
    };
    // The first file's start_time (the host's local time), recorded as if UTC.
    let start = file(names[0])["start_time"].as_str().unwrap().to_string();
    assert_eq!(b.run_date(), Some(format!("{}Z", &start[..19]).as_str()));
    let kinds: Vec<SweepKind> = b.sweeps.iter().map(|s| s.kind).collect();
    assert_eq!(kinds, [SweepKind::Throughput, SweepKind::Rate]);
    let s = &b.sweeps[0];
    assert_eq!(
        (
            s.concurrency.as_slice(),
            s.input_lens.as_slice(),
            s.output_len
        ),
        (&[1, 2][..], &[32][..], 8)
    );
    let rate = &b.sweeps[1];
    let plan = rate.rate.as_ref().unwrap();
    assert_eq!(
        (plan.rates.as_slice(), plan.arrival, plan.max_concurrency),
        (&[8.0][..], llmsweep_shared::bundle::Arrival::Poisson, None)
    );
    let points = [
        (&s.points[0], file(names[1])),
        (&s.points[1], file(names[0])),
        (&rate.points[0], file(names[2])),
    ];
    for (p, f) in points {
        let phase = &f["input_config"]["phases"][0];
        assert_eq!(phase["kind"], "profiling");
        match phase["concurrency"].as_u64() {
            Some(c) => assert_eq!(u64::from(p.concurrency), c),
            None => {
                assert_eq!(p.concurrency, 0);
                assert_eq!(p.rate.unwrap().offered_rps, phase["rate"].as_f64().unwrap());
            }
        }
        let v = p.imported.as_ref().unwrap();
        let stats = |k: &str| {
            let per_s = match f[k]["unit"].as_str().unwrap() {
                "ms" => 1000.0,
                unit => panic!("{k} in {unit}"),
            };
            (
                f[k]["avg"].as_f64().map(|x| x / per_s),
                f[k]["p50"].as_f64().map(|x| x / per_s),
                f[k]["p90"].as_f64().map(|x| x / per_s),
                f[k]["p99"].as_f64().map(|x| x / per_s),
            )
        };
        let q = |q: &llmsweep_shared::bundle::Quantiles| (q.mean, q.p50, q.p90, q.p99);
        assert_eq!(q(&v.ttft_s), stats("time_to_first_token"));
        assert_eq!(q(&v.tpot_s), stats("inter_token_latency"));
        assert_eq!(q(&v.itl_s), stats("inter_chunk_latency"));
        assert_eq!(q(&v.e2e_s), stats("request_latency"));
        let avg = |k: &str| f[k]["avg"].as_f64();
        assert_eq!(v.output_tok_s, avg("output_token_throughput"));
        assert_eq!(v.request_s, avg("request_throughput"));
        assert_eq!(f["benchmark_duration"]["unit"], "sec");
        assert_eq!(v.wall_s, avg("benchmark_duration"));
        assert_eq!(v.ok.map(|n| n as f64), avg("request_count"));
        assert_eq!(v.requests.map(|n| n as f64), avg("completed_request_count"));
        assert_eq!(v.failed, Some(0));
        assert_eq!(v.output_tokens.map(|t| t as f64), avg("total_osl"));
        assert_eq!(v.input_tokens.map(|t| t as f64), avg("total_isl"));
        assert_eq!(
            (p.input_len, p.output_len),
            (
                f["input_config"]["datasets"][0]["prompts"]["isl"]["mean"]
                    .as_f64()
                    .unwrap() as u64,
                f["input_config"]["datasets"][0]["prompts"]["osl"]["mean"]
                    .as_f64()
                    .unwrap() as u64
            )
        );
        assert!(p.flags.is_empty(), "{:?}", p.flags);
    }
    // Named as another format, it is refused by what it is.
    let (_, o) = import(dir.path(), "guidellm", &[names[1]], &[]);
    assert_eq!(
        text(&o.stderr).trim(),
        "error: tests/fixtures/import/aiperf-0.13.0/c1.json: this is AIPerf's profile_export_aiperf.json, not GuideLLM's benchmarks.json: use --from aiperf or leave --from out"
    );
    // And named as itself, it is read.
    let (_, o) = import(dir.path(), "aiperf", &[names[1]], &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// Real result files of genai-bench 0.0.5 against serve-sim (see the fixture's README): the
/// two runs and the experiment's metadata, told from their content, become one throughput
/// sweep holding genai-bench's own numbers; the metadata names the model and the engine, and
/// its command line (with the API key given on it) is never copied.
#[test]
fn genai_bench_runs_become_points_holding_the_files_own_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "genai-bench-0.0.5/s/D32_8_text-to-text_num_concurrency_2_time_1s.json",
        "genai-bench-0.0.5/s/experiment_metadata.json",
        "genai-bench-0.0.5/s/D32_8_text-to-text_num_concurrency_1_time_1s.json",
    ];
    let paths: Vec<String> = names.iter().map(|n| fixture(n)).collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let (path, o) = import_auto(dir.path(), &args, &["--gpus", "2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("throughput sweep: 2 points (C 1,2)"),
        "{}",
        text(&o.stdout)
    );
    let b = read(&path);
    let src = b.source.as_ref().unwrap();
    assert_eq!(
        (
            src.tool.as_str(),
            src.format.as_str(),
            src.version.as_deref()
        ),
        ("genai-bench", "genai-bench", Some("0.0.5"))
    );
    assert_eq!(b.target.model, "sim-fast");
    assert_eq!(b.target.engine.as_deref(), Some("vLLM"));
    assert_eq!(b.hosts.server_gpus, Some(2));
    let json = std::fs::read_to_string(&path).unwrap();
    assert!(
        !json.contains("dummy-not-a-secret"),
        "the metadata's command line is not kept"
    );
    assert!(b.definitions["tpot_s"].starts_with("genai-bench's tpot"));
    let s = &b.sweeps[0];
    assert_eq!((s.concurrency.as_slice(), s.output_len), (&[1, 2][..], 8));
    let file = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
    };
    for (p, name) in [(&s.points[0], names[2]), (&s.points[1], names[0])] {
        let f = file(name);
        let a = &f["aggregated_metrics"];
        assert_eq!(f["_time_unit"], "s");
        assert_eq!(
            u64::from(p.concurrency),
            a["num_concurrency"].as_u64().unwrap()
        );
        let v = p.imported.as_ref().unwrap();
        let q = |q: &llmsweep_shared::bundle::Quantiles| (q.mean, q.p50, q.p90, q.p99);
        let stats = |k: &str| {
            let m = &a["stats"][k];
            (
                m["mean"].as_f64(),
                m["p50"].as_f64(),
                m["p90"].as_f64(),
                m["p99"].as_f64(),
            )
        };
        assert_eq!(q(&v.ttft_s), stats("ttft"));
        assert_eq!(q(&v.tpot_s), stats("tpot"));
        assert_eq!(q(&v.e2e_s), stats("e2e_latency"));
        assert_eq!(
            v.output_tok_s,
            a["mean_output_throughput_tokens_per_s"].as_f64()
        );
        assert_eq!(v.request_s, a["requests_per_second"].as_f64());
        assert_eq!(v.wall_s, a["run_duration"].as_f64());
        assert_eq!(v.ok, a["num_completed_requests"].as_u64());
        assert_eq!(v.failed, a["num_error_requests"].as_u64());
        assert_eq!(v.requests, a["num_requests"].as_u64());
        assert_eq!(
            v.output_tokens.map(|t| t as f64),
            a["stats"]["num_output_tokens"]["sum"].as_f64()
        );
        assert_eq!((p.input_len, p.output_len), (32, 8));
    }
    // Named as another format, a run file is refused by what it is.
    let (_, o) = import(dir.path(), "aiperf", &[names[0]], &[]);
    assert_eq!(
        text(&o.stderr).trim(),
        format!(
            "error: tests/fixtures/import/{}: this is a result of genai-bench, not AIPerf's profile_export_aiperf.json: use --from genai-bench or leave --from out",
            names[0]
        )
    );
}

/// Real lifecycle reports of inference-perf 0.7.0 against serve-sim (see the fixture's README):
/// a closed-loop run's stages become a throughput sweep at their concurrency levels, an open-loop
/// run's a rate sweep at their rates, each point holding the report's own numbers; the summary
/// over every stage is passed over with a note; the config.yaml beside them gives the lengths,
/// the API and the arrivals; a stage file given under another --from is named.
#[test]
fn inference_perf_stages_become_points_holding_the_reports_own_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "inference-perf-0.7.0/completion-concurrent/stage_1_lifecycle_metrics.json",
        "inference-perf-0.7.0/completion-concurrent/stage_0_lifecycle_metrics.json",
        "inference-perf-0.7.0/completion-concurrent/summary_lifecycle_metrics.json",
    ];
    let paths: Vec<String> = names.iter().map(|n| fixture(n)).collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let (path, o) = import_auto(dir.path(), &args, &["--model", "sim-fast"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("throughput sweep: 2 points (C 1,4)"),
        "{}",
        text(&o.stdout)
    );
    let b = read(&path);
    let src = b.source.as_ref().unwrap();
    assert_eq!(
        (src.tool.as_str(), src.format.as_str()),
        ("inference-perf", "inference-perf")
    );
    assert!(
        src.notes
            .iter()
            .any(|n| n.contains("summary over every stage")),
        "{:?}",
        src.notes
    );
    assert_eq!(b.target.api, llmsweep_shared::bundle::Api::Completions);
    assert!(b.definitions["itl_s"].contains("pooled"));
    let s = &b.sweeps[0];
    assert_eq!(
        (
            s.concurrency.as_slice(),
            s.input_lens.as_slice(),
            s.output_len
        ),
        (&[1, 4][..], &[100][..], 50)
    );
    let file = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
    };
    for (p, name) in [(&s.points[0], names[1]), (&s.points[1], names[0])] {
        let f = file(name);
        assert_eq!(
            u64::from(p.concurrency),
            f["load_summary"]["concurrency"].as_u64().unwrap()
        );
        let v = p.imported.as_ref().unwrap();
        let q = |q: &llmsweep_shared::bundle::Quantiles| (q.mean, q.p50, q.p90, q.p99);
        let stats = |k: &str| {
            let m = &f["successes"]["latency"][k];
            (
                m["mean"].as_f64(),
                m["median"].as_f64(),
                m["p90"].as_f64(),
                m["p99"].as_f64(),
            )
        };
        assert_eq!(q(&v.ttft_s), stats("time_to_first_token"));
        assert_eq!(q(&v.tpot_s), stats("time_per_output_token"));
        assert_eq!(q(&v.itl_s), stats("inter_token_latency"));
        assert_eq!(q(&v.e2e_s), stats("request_latency"));
        let t = &f["successes"]["throughput"];
        assert_eq!(v.output_tok_s, t["output_tokens_per_sec"].as_f64());
        assert_eq!(v.request_s, t["requests_per_sec"].as_f64());
        assert_eq!(v.ok, f["successes"]["count"].as_u64());
    }

    // An open-loop run's stages are a rate sweep at their offered rates, evenly spaced as
    // its config says.
    let names = [
        "inference-perf-0.7.0/completion-constant/stage_0_lifecycle_metrics.json",
        "inference-perf-0.7.0/completion-constant/stage_1_lifecycle_metrics.json",
    ];
    let paths: Vec<String> = names.iter().map(|n| fixture(n)).collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let open = tempfile::tempdir().unwrap();
    let (path, o) = import_auto(open.path(), &args, &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let b = read(&path);
    let s = &b.sweeps[0];
    assert_eq!(s.kind, llmsweep_shared::bundle::SweepKind::Rate);
    let plan = s.rate.as_ref().unwrap();
    assert_eq!(plan.rates, [2.0, 4.0]);
    assert_eq!(plan.arrival, llmsweep_shared::bundle::Arrival::Constant);

    let o =
        crate::support::llmsweep(&["import", "--from", "genai-bench", &paths[0], "--label", "x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr)
            .contains("this is a lifecycle report of inference-perf, not a result of genai-bench"),
        "{}",
        text(&o.stderr)
    );
}

/// A byte-order mark first, and Python's `NaN` or `Infinity` in a field llmsweep does not read:
/// every importer still reads the file (it refused the whole file for one such number).
#[test]
fn a_bom_and_python_literals_in_unused_fields_do_not_refuse_a_file() {
    let dir = tempfile::tempdir().unwrap();
    for (name, insert) in [
        (
            "guidellm-0.8.1/benchmarks.json",
            "\"llmsweep_unused\": NaN, ",
        ),
        ("aiperf-0.13.0/c1.json", "\"llmsweep_unused\": Infinity, "),
        (
            "inference-perf-0.7.0/completion-concurrent/summary_lifecycle_metrics.json",
            "\"llmsweep_unused\": -Infinity, ",
        ),
        ("vllm-c1.json", "\"llmsweep_unused\": NaN, "),
    ] {
        let original = std::fs::read_to_string(fixture(name)).unwrap();
        let at = original.find('{').unwrap() + 1;
        let changed = format!("\u{feff}{}{insert}{}", &original[..at], &original[at..]);
        let copy = dir.path().join(name.replace('/', "-"));
        std::fs::write(&copy, changed).unwrap();
        let out = dir.path().join("out.json");
        let mut args = vec!["import", copy.to_str().unwrap(), "--label", "x", "-o"];
        args.push(out.to_str().unwrap());
        if name.starts_with("vllm") {
            args.extend(["--from", "vllm"]);
        }
        let o = llmsweep(&args);
        assert!(o.status.success(), "{name}: {}", text(&o.stderr));
    }
}

/// A field that is there but of the wrong kind is named as such, not as missing.
#[test]
fn an_invalid_field_is_called_invalid_not_missing() {
    let dir = tempfile::tempdir().unwrap();
    let g: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("guidellm-0.8.1/benchmarks.json")).unwrap(),
    )
    .unwrap();
    let mut bad = g.clone();
    bad["benchmarks"][0]["metrics"]["request_totals"]["successful"] = "many".into();
    let p = dir.path().join("g.json");
    std::fs::write(&p, bad.to_string()).unwrap();
    let o = llmsweep(&[
        "import",
        p.to_str().unwrap(),
        "--label",
        "x",
        "-o",
        dir.path().join("o.json").to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("benchmark 1 has `metrics.request_totals.successful` = \"many\", not a count"),
        "{err}"
    );
    let mut gone = g;
    gone["benchmarks"][0]["metrics"] = serde_json::Value::Null;
    std::fs::write(&p, gone.to_string()).unwrap();
    let o = llmsweep(&[
        "import",
        p.to_str().unwrap(),
        "--label",
        "x",
        "-o",
        dir.path().join("o.json").to_str().unwrap(),
    ]);
    assert!(
        text(&o.stderr).contains("benchmark 1 has no `metrics`"),
        "{}",
        text(&o.stderr)
    );
}
