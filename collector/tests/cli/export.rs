//! `llmsweep export --csv`: a bundle's points as CSV, exact for the golden bundle, quoted where
//! a label needs it, to stdout or a file.

use crate::support::{llmsweep, text};
use serde_json::Value;

const GOLDEN_PATH: &str = "../shared/tests/fixtures/bundle-v1-run.json";

/// The golden bundle's five points: its stored summaries at full precision (each number the
/// shortest text that reads back as the bundle's), the skipped point's fields empty.
const GOLDEN_CSV: &str = concat!(
    "file,run_id,date,label,sweep,status,concurrency,input_tokens,output_tokens,offered_rps,achieved_rps,requests_ok,requests_failed,steady_tok_s,steady_pm_pct,agg_tok_s,ttft_mean_s,ttft_p50_s,ttft_p90_s,ttft_p99_s,tpot_mean_s,tpot_p50_s,tpot_p90_s,tpot_p99_s,itl_mean_s,itl_p50_s,itl_p90_s,itl_p99_s,e2e_mean_s,e2e_p50_s,e2e_p90_s,e2e_p99_s,flags\r\n",
    "bundle-v1-run.json,7ee991ebc0e8d25f,2026-11-29T20:38:31Z,golden,throughput,ok,1,64,4,,,2,0,233.2678569897751,,233.2678569897751,0.0054163875,0.0054163875,0.0054591694999999996,0.00546879545,0.003902814833333333,0.003902814833333333,0.003905290433333333,0.0039058474433333328,0.0038836806666666668,0.0041958565,0.0042308599999999995,0.0042533861,0.017124832,0.017124832,0.0171601872,0.01716814212,\r\n",
    "bundle-v1-run.json,7ee991ebc0e8d25f,2026-11-29T20:38:31Z,golden,throughput,ok,2,64,4,,,2,0,356.3392775630246,,353.6888956011182,0.007581682,0.007581682,0.009294678800000001,0.00968010308,0.0049758549999999995,0.0049758549999999995,0.005545090733333333,0.005673168773333333,0.004967584333333334,0.004736588999999999,0.006888500000000001,0.008210762900000002,0.022509247,0.022509247,0.0225145366,0.02251572676,\r\n",
    "bundle-v1-run.json,7ee991ebc0e8d25f,2026-11-29T20:38:31Z,golden,context,ok,1,256,4,,,1,0,229.90615862846724,,229.90615862846724,0.005494774,0.005494774,0.005494774,0.005494774,0.003967876333333333,0.003967876333333333,0.003967876333333333,0.003967876333333333,0.0038873436666666665,0.004220084,0.0042338048,0.004236891980000001,0.017398403,0.017398403,0.017398403,0.017398403,\r\n",
    "bundle-v1-run.json,7ee991ebc0e8d25f,2026-11-29T20:38:31Z,golden,context,ok,1,512,4,,,1,0,231.01298500887435,,231.01298500887435,0.0055856,0.0055856,0.0055856,0.0055856,0.003909814666666667,0.003909814666666667,0.003909814666666667,0.003909814666666667,0.0038874813333333335,0.004188835,0.0042376822000000005,0.00424867282,0.017315044,0.017315044,0.017315044,0.017315044,\r\n",
    "bundle-v1-run.json,7ee991ebc0e8d25f,2026-11-29T20:38:31Z,golden,context,skipped,1,8000,4,,,,,,,,,,,,,,,,,,,,,,,,\r\n",
);

#[test]
fn export_csv_of_the_golden_bundle_is_exact() {
    let o = llmsweep(&["export", "--csv", GOLDEN_PATH]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), GOLDEN_CSV);
    // --out writes the same to a file, and nothing to stdout.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("golden.csv");
    let o = llmsweep(&[
        "export",
        "--csv",
        GOLDEN_PATH,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), GOLDEN_CSV);
}

/// A label with a comma, quotes, a line break and an escape character: one quoted field
/// (RFC 4180) on one line, the break and the escape shown as text; flags joined by `;`; a rate
/// point's rates. A label a spreadsheet would run as a formula is prefixed with `'`.
#[test]
fn export_csv_quotes_a_hostile_label_and_joins_flags() {
    let mut b: Value =
        serde_json::from_str(&std::fs::read_to_string(GOLDEN_PATH).unwrap()).unwrap();
    b["label"] = "kp,\"ro\"\n5\u{1b}[2J".into();
    let p = &mut b["sweeps"][0]["points"][0];
    p["flags"] = serde_json::json!([
        {"kind": "short", "count": 3, "message": "3 of 8 requests were short, so"},
        {"kind": "stall", "message": "a stall"}
    ]);
    p["rate"] = serde_json::json!({"offered_rps": 2.5, "achieved_rps": 2.25});
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hostile.json");
    std::fs::write(&path, serde_json::to_string(&b).unwrap()).unwrap();
    let o = llmsweep(&["export", "--csv", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!o.stdout.contains(&0x1b));
    let csv = text(&o.stdout);
    let row = csv.split("\r\n").nth(1).unwrap();
    assert!(
        row.starts_with(
            "hostile.json,7ee991ebc0e8d25f,2026-11-29T20:38:31Z,\"kp,\"\"ro\"\"\\u{a}5\\u{1b}[2J\",throughput,ok,1,64,4,2.5,2.25,2,0,"
        ),
        "{row}"
    );
    assert!(row.ends_with(",0.01716814212,short 3;stall"), "{row}");
    // Every row has the header's 33 fields once its quoted label is set aside.
    for line in csv.split("\r\n").skip(1).filter(|l| !l.is_empty()) {
        let rest = line.rsplit_once("\",").map_or(line, |(_, r)| r);
        assert_eq!(rest.split(',').count(), 29, "{line}");
        assert!(!line.contains('\n'), "{line}");
    }
    // A formula for a label: shown as text in a spreadsheet, not run.
    for formula in [
        "=HYPERLINK(\"http://x\",\"kpro5\")",
        "+1+1",
        "-2+3",
        "@SUM(A1)",
    ] {
        b["label"] = formula.into();
        std::fs::write(&path, serde_json::to_string(&b).unwrap()).unwrap();
        let o = llmsweep(&["export", "--csv", path.to_str().unwrap()]);
        let csv = text(&o.stdout);
        let row = csv.split("\r\n").nth(1).unwrap();
        let label = row.split(",2026-11-29T20:38:31Z,").nth(1).unwrap();
        assert!(
            label.starts_with("'") || label.starts_with("\"'"),
            "{formula}: {row}"
        );
    }
}

#[test]
fn export_without_a_format_or_with_a_bad_file_says_what_to_do() {
    let o = llmsweep(&["export", GOLDEN_PATH]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("export needs a format: give --csv"),
        "{}",
        text(&o.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.json");
    let o = llmsweep(&["export", "--csv", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(
        text(&o.stderr).contains("missing.json"),
        "{}",
        text(&o.stderr)
    );
}

/// Standard output closed before a word is written (`| head` that has had its fill, a reader
/// that went away): each command finishes as it would have, with no panic. Before, the first
/// `println!` after the reader left panicked, which took down `view`'s server with it.
#[test]
fn a_closed_standard_output_is_not_a_crash() {
    for args in [
        &["export", "--csv", GOLDEN_PATH][..],
        &["compare", GOLDEN_PATH, GOLDEN_PATH][..],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = crate::support::command()
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    }
}
