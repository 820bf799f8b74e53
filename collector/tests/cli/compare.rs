//! `llmsweep compare` on bundles with known differences: exact deltas, the CI gate's exit codes,
//! and refusal to gate across different workloads.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const GOLDEN: &str = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");

fn llmsweep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_llmsweep"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The golden bundle relabelled, with every throughput point's steady tok/s scaled by `tput` and
/// its TTFT p50 by `ttft`.
fn variant(label: &str, tput: f64, ttft: f64) -> Value {
    let mut v: Value = serde_json::from_str(GOLDEN).unwrap();
    v["label"] = label.into();
    for p in v["sweeps"][0]["points"].as_array_mut().unwrap() {
        let s = &mut p["summary"];
        s["steady_tok_s"] = (s["steady_tok_s"].as_f64().unwrap() * tput).into();
        s["ttft_s"]["p50"] = (s["ttft_s"]["p50"].as_f64().unwrap() * ttft).into();
    }
    v
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
    p
}

#[test]
fn deltas_against_the_baseline_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &variant("kpro5", 1.0, 1.0));
    let b = write(dir.path(), "b.json", &variant("kpro6", 0.8, 1.5));
    let o = llmsweep(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("throughput sweep, baseline kpro5"), "{out}");
    assert!(out.contains("-20.0 % WORSE"), "{out}");
    assert!(out.contains("+50.0 % WORSE"), "{out}");
    assert!(out.contains("context sweep, baseline kpro5"), "{out}");
    // The same numbers from the other side.
    let o = llmsweep(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--baseline",
        b.to_str().unwrap(),
    ]);
    let out = text(&o.stdout);
    assert!(
        out.contains("baseline kpro6") && out.contains("+25.0 % better"),
        "{out}"
    );
}

#[test]
fn fail_if_slower_gates_on_throughput_and_ttft() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &variant("kpro5", 1.0, 1.0));
    let b = write(dir.path(), "b.json", &variant("kpro6", 0.8, 1.5));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = llmsweep(&["compare", a, b, "--fail-if-slower", "10"]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.contains("kpro6: steady output tok/s -20.0 % at C=1"),
        "{out}"
    );
    assert!(out.contains("kpro6: TTFT p50 (s) +50.0 % at C=2"), "{out}");
    let o = llmsweep(&["compare", a, b, "--fail-if-slower", "60"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("no level is more than 60 % slower"));
    // Faster is never a failure.
    let c = write(dir.path(), "c.json", &variant("kpro7", 1.3, 0.5));
    let o = llmsweep(&["compare", a, c.to_str().unwrap(), "--fail-if-slower", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

#[test]
fn different_workloads_are_not_compared_and_not_gated() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &variant("kpro5", 1.0, 1.0));
    let mut other = variant("kpro6", 1.0, 1.0);
    other["sweeps"][0]["output_len"] = 999.into();
    let b = write(dir.path(), "b.json", &other);
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = llmsweep(&["compare", a, b]);
    assert!(o.status.success());
    let out = text(&o.stdout);
    assert!(
        out.contains(
            "kpro6 is not compared: it ran a different workload (output lengths differ: 4 vs 999)"
        ),
        "{out}"
    );
    let o = llmsweep(&["compare", a, b, "--fail-if-slower", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("refusing to gate on kpro6 against kpro5"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn gzipped_bundles_and_bad_files_are_handled() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &variant("kpro5", 1.0, 1.0));
    let gz = dir.path().join("b.json.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::default(),
    );
    enc.write_all(
        serde_json::to_string(&variant("kpro6", 0.5, 1.0))
            .unwrap()
            .as_bytes(),
    )
    .unwrap();
    enc.finish().unwrap();
    let o = llmsweep(&["compare", a.to_str().unwrap(), gz.to_str().unwrap()]);
    assert!(
        text(&o.stdout).contains("-50.0 % WORSE"),
        "{}",
        text(&o.stderr)
    );
    let bad = dir.path().join("notes.json");
    std::fs::write(&bad, "{\"hello\": 1}").unwrap();
    let o = llmsweep(&["compare", a.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("notes.json cannot be read") && err.contains("not an llmsweep bundle"),
        "{err}"
    );
    let o = llmsweep(&["compare", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("at least two bundles"));
}
