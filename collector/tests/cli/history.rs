//! `llmsweep history` and `llmsweep index` over a folder: a label's runs in date order, the run
//! where the metric changed beyond the noise found and named with what else changed, and the
//! index that lists the folder without reading what it already summed up.

use std::path::Path;

use llmsweep::sim::{Preset, SimConfig, SimServer};
use llmsweep_shared::Bundle;
use llmsweep_shared::test_support::{Normal, slowed};

use crate::support::{command, text};

/// One real run of the simulator at C=4, its bundle.
pub(crate) async fn one_sim_run(dir: &Path, label: &str) -> Bundle {
    let sim = SimServer::start(SimConfig::preset(Preset::Fast), 0)
        .await
        .unwrap();
    let out = dir.join("seed-run");
    let o = command()
        .current_dir(dir)
        .args([
            "throughput",
            "--url",
            &sim.url(),
            "--label",
            label,
            "--concurrency",
            "4",
            "--input-len",
            "20",
            "--output-len",
            "32",
            "--requests",
            "48",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    sim.shutdown().await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let file = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let b = llmsweep_shared::Bundle::from_json(&std::fs::read_to_string(&file).unwrap()).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
    b
}

/// `b` as if every request had taken `factor` times as long (see [`slowed`]), dated day `day`
/// from October 1st, under engine version `engine_version`.
pub(crate) fn scaled(b: &Bundle, factor: f64, day: u32, engine_version: &str) -> Bundle {
    let mut b = slowed(b, factor);
    b.created_at = format!("2026-10-{:02}T02:00:00Z", day.clamp(1, 31));
    if day > 31 {
        b.created_at = format!("2026-11-{:02}T02:00:00Z", day - 31);
    }
    b.id = format!("{}-{day}", b.id);
    b.target.engine_version = Some(engine_version.to_string());
    b
}

/// 50 runs of one label, each as noisy as its interval says, the last 20 served 5 % slower
/// under a new engine version: `history` names run 31 (or the next) with the version change,
/// and nothing else; the gate fails on the newest run only when it is the changed one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_finds_the_one_slow_down_in_fifty_runs_and_says_what_else_changed() {
    let dir = tempfile::tempdir().unwrap();
    let seed = one_sim_run(dir.path(), "kpro5").await;
    let point = &seed.sweeps[0].points[0];
    let e = llmsweep_shared::compare::interval::estimate(
        llmsweep_shared::curves::Metric::SteadyTokS,
        point,
    )
    .unwrap();
    let se = match e.spread {
        llmsweep_shared::compare::interval::Spread::LogSeT { se, .. }
        | llmsweep_shared::compare::interval::Spread::LogSe(se) => se,
        other => panic!("the seed run's steady tok/s has no interval: {other:?}"),
    };
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    let mut g = Normal(0x2545_f491_4f6c_dd1d);
    for i in 0..50u32 {
        let slow = i >= 30;
        let factor = (se * g.draw()).exp() * if slow { 1.0 / 0.95 } else { 1.0 };
        let b = scaled(&seed, factor, i + 1, if slow { "0.5.23" } else { "0.5.11" });
        let name = format!("kpro5-run-{:02}.json", i + 1);
        std::fs::write(runs.join(name), b.to_json().unwrap()).unwrap();
    }
    // A run of another label is not in kpro5's history.
    let other = scaled(&seed, 2.0, 40, "0.5.11");
    let mut other = other;
    other.label = "kpro6".into();
    std::fs::write(runs.join("kpro6-run.json"), other.to_json().unwrap()).unwrap();

    let index = command()
        .args(["index", runs.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(index.status.success(), "{}", text(&index.stderr));
    let said = text(&index.stdout);
    assert!(
        said.contains(": 51 bundles; 51 read, 0 from the index; index written"),
        "{said}"
    );
    let again = command()
        .args(["index", runs.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        text(&again.stdout).contains("; 0 read, 51 from the index; index unchanged"),
        "{}",
        text(&again.stdout)
    );

    let o = command()
        .args([
            "history",
            runs.to_str().unwrap(),
            "--label",
            "kpro5",
            "--at",
            "C=4",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let marked: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  ▼") || l.starts_with("  ▲"))
        .collect();
    assert_eq!(marked.len(), 1, "{out}");
    let m = marked[0];
    assert!(m.starts_with("  ▼"), "{out}");
    assert!(
        m.contains("kpro5-run-31.json") || m.contains("kpro5-run-32.json"),
        "{out}"
    );
    assert!(m.contains("0.5.11 → ") && m.contains("0.5.23"), "{out}");
    assert!(
        out.contains("at C=4: 50 runs, 2026-10-01 → 2026-11-19; 1 change beyond the noise"),
        "{out}"
    );
    assert!(!out.contains("kpro6"), "{out}");

    // The gate: twenty runs after the slow-down are as slow as it, and it fails on every one
    // of them until someone accepts the change (a CI retry does not turn it green).
    let gate_args = [
        "history",
        runs.to_str().unwrap(),
        "--label",
        "kpro5",
        "--at",
        "C=4",
        "--fail-on-change",
    ];
    let gate = command().args(gate_args).output().unwrap();
    let err = text(&gate.stderr);
    assert_eq!(gate.status.code(), Some(1), "{err}");
    let changed = if m.contains("kpro5-run-31.json") {
        "kpro5-run-31.json"
    } else {
        "kpro5-run-32.json"
    };
    assert!(err.contains(&format!("since {changed}")), "{err}");
    assert!(err.contains(&format!("--accept {changed}")), "{err}");
    let o = command()
        .args(["history", runs.to_str().unwrap(), "--accept", changed])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(runs.join(".llmsweep-accepted.json").is_file());
    let gate = command().args(gate_args).output().unwrap();
    assert_eq!(gate.status.code(), Some(0), "{}", text(&gate.stderr));
    std::fs::remove_file(runs.join(".llmsweep-accepted.json")).unwrap();
    let o = command()
        .args(["history", runs.to_str().unwrap(), "--accept", "nope.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--accept nope.json: no readable bundle of that name"));
    // With the history cut just after the change, the newest run is the change: it fails.
    for i in 33..=50 {
        std::fs::remove_file(runs.join(format!("kpro5-run-{i:02}.json"))).unwrap();
    }
    let cut_at = if m.contains("kpro5-run-31.json") {
        31
    } else {
        32
    };
    if cut_at == 31 {
        std::fs::remove_file(runs.join("kpro5-run-32.json")).unwrap();
    }
    let gate = command()
        .args([
            "history",
            runs.to_str().unwrap(),
            "--label",
            "kpro5",
            "--at",
            "C=4",
            "--fail-on-change",
        ])
        .output()
        .unwrap();
    assert_eq!(gate.status.code(), Some(1), "{}", text(&gate.stdout));
    assert!(
        text(&gate.stderr).contains("gate: the newest run is worse beyond the noise than the accepted baseline: kpro5 at C=4"),
        "{}",
        text(&gate.stderr)
    );
    // A run that says it was made in 2099 (a host's clock, or a hand) is not taken for the
    // newest: the gate still judges the real newest run, and the note names the dated one.
    let mut future = scaled(&seed, 1.0, 1, "0.5.11");
    future.created_at = "2099-01-01T00:00:00Z".into();
    future.id = "from-the-future".into();
    std::fs::write(runs.join("kpro5-run-99.json"), future.to_json().unwrap()).unwrap();
    let gate = command()
        .args([
            "history",
            runs.to_str().unwrap(),
            "--label",
            "kpro5",
            "--at",
            "C=4",
            "--fail-on-change",
        ])
        .output()
        .unwrap();
    let err = text(&gate.stderr);
    assert_eq!(gate.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "note: 1 run is dated in the future (kpro5-run-99.json says 2099-01-01T00:00:00Z)"
        ),
        "{err}"
    );
}

#[test]
fn history_refuses_what_it_cannot_use_with_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["history", "/no/such/folder"],
            "cannot open the folder /no/such/folder",
        ),
        (&["history", ".", "--at", "16"], "is not a level: give C=16"),
        (
            &["history", ".", "--metric", "speed"],
            "is not a metric a history keeps",
        ),
        (&["history", "s3://A/b"], "is not a bucket name"),
    ];
    for (args, want) in cases {
        let o = command()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains(want),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    // An empty folder has no history: said, and with the gate, exit 3.
    let o = command()
        .args(["history", dir.path().to_str().unwrap(), "--fail-on-change"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("no history of steady_tok_s"),
        "{}",
        text(&o.stderr)
    );
}
