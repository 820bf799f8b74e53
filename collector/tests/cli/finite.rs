//! Issue 10: numbers at the edges of `f64` through `plot` (SVG and PNG), `report`, `compare`
//! and `import --from vllm`, each run as a child process with a deadline, so a hang fails the
//! test instead of hanging the run. A throughput of 1.7e308 once padded a chart's axis to
//! infinity and spun forever, and `compare` printed it as 309 digits.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const GOLDEN: &str = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");
const VLLM_C1: &str = include_str!("../fixtures/import/vllm-c1.json");

/// How long any of these commands may take; each takes well under a second when it works.
const DEADLINE: Duration = Duration::from_secs(30);

/// What a finished command said.
struct Ran {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs `llmsweep args` and kills it when it has not ended within [`DEADLINE`].
fn llmsweep_within(args: &[&str]) -> Ran {
    let mut child = Command::new(env!("CARGO_BIN_EXE_llmsweep"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read both pipes beside the wait, so a chatty child never blocks on a full pipe.
    let read = |mut p: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = p.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("llmsweep {args:?} did not finish in {DEADLINE:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ran {
        ok: status.success(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// The golden bundle labelled `label`, its first steady throughput set to `v`.
fn with_throughput(dir: &Path, label: &str, v: f64) -> PathBuf {
    let mut b: Value = serde_json::from_str(GOLDEN).unwrap();
    b["label"] = label.into();
    let point = &mut b["sweeps"][0]["points"][0]["summary"];
    point["steady_tok_s"] = serde_json::Number::from_f64(v).unwrap().into();
    let path = dir.join(format!("{label}.json"));
    std::fs::write(&path, serde_json::to_string(&b).unwrap()).unwrap();
    path
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// No number in `text` is written with more than 20 digits in a row.
fn assert_no_long_numbers(text: &str) {
    let longest = text
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    assert!(longest <= 20, "a {longest}-digit number in:\n{text}");
}

#[test]
fn enormous_tiny_and_negative_throughputs_plot_report_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let base = with_throughput(dir.path(), "base", 233.3);
    for (name, v) in [
        ("huge", 1.7e308),
        ("max", f64::MAX),
        ("tiny", 1e-308),
        ("negative", -1.7e308),
    ] {
        let run = with_throughput(dir.path(), name, v);
        for ext in ["svg", "png"] {
            let out = dir.path().join(format!("{name}.{ext}"));
            let r = llmsweep_within(&["plot", s(&base), s(&run), "-o", s(&out)]);
            assert!(r.ok, "{name} {ext}: {}", r.stderr);
            let bytes = std::fs::read(&out).unwrap();
            assert!(bytes.len() > 1000, "{name} {ext}: {} bytes", bytes.len());
            if ext == "svg" {
                let doc = String::from_utf8(bytes).unwrap();
                roxmltree::Document::parse(&doc).unwrap();
                assert_no_long_numbers(&doc.replace(char::is_whitespace, " "));
            }
        }
        let tradeoff = dir.path().join(format!("{name}-tradeoff.svg"));
        let r = llmsweep_within(&[
            "plot",
            s(&run),
            "--chart",
            "per-user-vs-total",
            "-o",
            s(&tradeoff),
        ]);
        assert!(r.ok, "{name} tradeoff: {}", r.stderr);

        let report = dir.path().join(format!("{name}.html"));
        let r = llmsweep_within(&["report", s(&base), s(&run), "-o", s(&report)]);
        assert!(r.ok, "{name} report: {}", r.stderr);
        assert!(std::fs::metadata(&report).unwrap().len() > 10_000);

        let r = llmsweep_within(&["compare", s(&base), s(&run)]);
        assert!(r.ok, "{name} compare: {}", r.stderr);
        assert_no_long_numbers(&r.stdout);
        let row = r
            .stdout
            .lines()
            .find(|l| l.contains("steady output tok/s") && l.trim_start().starts_with('1'))
            .unwrap_or_else(|| panic!("no steady row in {}", r.stdout));
        match name {
            "huge" => assert!(row.contains("1.7e308"), "{row}"),
            "max" => assert!(row.contains("1.8e308"), "{row}"),
            "negative" => assert!(row.contains("-1.7e308"), "{row}"),
            _ => assert!(row.contains("0.000"), "{row}"),
        }
    }
}

#[test]
fn an_enormous_vllm_throughput_imports_and_compares_in_scientific_notation() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c1.json");
    let text = VLLM_C1.replace(
        "\"output_throughput\": 466.5357139795502",
        "\"output_throughput\": 1.7e308",
    );
    assert_ne!(text, VLLM_C1);
    std::fs::write(&file, text).unwrap();
    let bundle = dir.path().join("vllm.json");
    let r = llmsweep_within(&[
        "import",
        "--from",
        "vllm",
        s(&file),
        "--label",
        "vllm",
        "-o",
        s(&bundle),
    ]);
    assert!(r.ok, "{}", r.stderr);
    let base = with_throughput(dir.path(), "base", 233.3);
    let r = llmsweep_within(&["compare", s(&base), s(&bundle)]);
    assert!(r.ok, "{}", r.stderr);
    assert_no_long_numbers(&r.stdout);
    assert!(r.stdout.contains("1.7e308"), "{}", r.stdout);
    let png = dir.path().join("vllm.png");
    let r = llmsweep_within(&["plot", s(&base), s(&bundle), "-o", s(&png)]);
    assert!(r.ok, "{}", r.stderr);
    let report = dir.path().join("vllm.html");
    let r = llmsweep_within(&["report", s(&base), s(&bundle), "-o", s(&report)]);
    assert!(r.ok, "{}", r.stderr);
}

/// Issue 10: vLLM's `--save-result` writes Python's `NaN` for a statistic it has no value for;
/// the file was refused as not valid JSON. It imports, the statistic missing, with a note.
#[test]
fn a_vllm_result_with_python_nan_imports_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c1.json");
    let text = VLLM_C1.replace("\"p99_ttft_ms\": 10.832775", "\"p99_ttft_ms\": NaN");
    assert_ne!(text, VLLM_C1);
    std::fs::write(&file, text).unwrap();
    let bundle = dir.path().join("vllm.json");
    let r = llmsweep_within(&[
        "import",
        "--from",
        "vllm",
        s(&file),
        "--label",
        "vllm",
        "-o",
        s(&bundle),
    ]);
    assert!(r.ok, "{}", r.stderr);
    let b = llmsweep_shared::Bundle::from_json(&std::fs::read_to_string(&bundle).unwrap()).unwrap();
    let notes = &b.source.as_ref().unwrap().notes;
    assert!(
        notes.iter().any(|n| n.ends_with(
            "run 1: NaN at line 25 column 18 (`p99_ttft_ms`): Python's json writes NaN for a missing statistic; read as missing"
        )),
        "{notes:?}"
    );
    let imported = b.sweeps[0].points[0].imported.as_ref().unwrap();
    assert_eq!(imported.ttft_s.p99, None);
    assert!(imported.ttft_s.p50.is_some());
}

/// Issue 10: `[1, 2, 3]` read as a bundle was "not valid JSON".
#[test]
fn json_of_another_shape_is_not_a_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("list.json");
    std::fs::write(&file, "[1, 2, 3]").unwrap();
    let out = dir.path().join("x.svg");
    let r = llmsweep_within(&["plot", s(&file), "-o", s(&out)]);
    assert!(!r.ok);
    assert!(
        r.stderr.contains(
            "not an llmsweep bundle: the file holds an array; expected a JSON object with \"schema\": \"llmsweep.bundle/1\""
        ),
        "{}",
        r.stderr
    );
}
