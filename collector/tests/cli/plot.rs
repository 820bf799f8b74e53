//! `llmsweep plot` as a user runs it: well-formed SVG and real PNG pictures of the runs asked
//! for, and clear refusals (bad extension, missing sweep, unreadable bundle) that write nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::{llmsweep, text};
use std::io::Write;
use std::path::{Path, PathBuf};

use llmsweep_shared::charts::{Rgb, Theme, run_color};
use serde_json::Value;

const GOLDEN: &str = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");

/// The golden bundle (a throughput and a context sweep) relabelled, every measured number it
/// plots scaled by `k` so runs do not hide each other; `context: false` drops its context sweep.
fn variant(label: &str, k: f64, context: bool) -> Value {
    let mut v: Value = serde_json::from_str(GOLDEN).unwrap();
    v["label"] = label.into();
    for sweep in v["sweeps"].as_array_mut().unwrap() {
        for p in sweep["points"].as_array_mut().unwrap() {
            let s = &mut p["summary"];
            for key in ["steady_tok_s", "agg_tok_s"] {
                if let Some(x) = s[key].as_f64() {
                    s[key] = (x * k).into();
                }
            }
            if let Some(x) = s["ttft_s"]["p50"].as_f64() {
                s["ttft_s"]["p50"] = (x / k).into();
            }
        }
    }
    if !context {
        v["sweeps"]
            .as_array_mut()
            .unwrap()
            .retain(|s| s["kind"] == "throughput");
    }
    v
}

fn write(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string(v).unwrap()).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every text node of an SVG document, which must parse as XML.
fn svg_texts(doc: &str) -> Vec<String> {
    let xml = roxmltree::Document::parse(doc).unwrap();
    assert_eq!(xml.root_element().tag_name().name(), "svg");
    xml.descendants()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect()
}

/// Width and height from the IHDR chunk, which must follow the PNG signature.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "not a PNG signature"
    );
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

/// The picture's pixels as RGB triples, row by row.
fn png_pixels(bytes: &[u8]) -> Vec<[u8; 3]> {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb);
    buf[..info.buffer_size()]
        .chunks(3)
        .map(|p| [p[0], p[1], p[2]])
        .collect()
}

fn rgb(c: Rgb) -> [u8; 3] {
    [c.0, c.1, c.2]
}

#[test]
fn svg_is_well_formed_with_the_title_and_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &variant("kpro5", 1.0, true));
    // The second run gzipped, as bundles are often kept.
    let b = dir.path().join("b.json.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(variant("kpro6", 1.5, true).to_string().as_bytes())
        .unwrap();
    std::fs::write(&b, gz.finish().unwrap()).unwrap();
    let out = dir.path().join("tput.svg");
    let o = llmsweep(&["plot", s(&a), s(&b), "-o", s(&out)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let said = text(&o.stdout);
    assert!(
        said.contains(s(&out)) && said.contains("SVG 1200x700"),
        "{said}"
    );
    assert!(said.contains("2 runs: kpro5, kpro6"), "{said}");

    let doc = std::fs::read_to_string(&out).unwrap();
    let texts = svg_texts(&doc);
    for want in [
        "Output throughput vs concurrency",
        "kpro5",
        "kpro6",
        "concurrency",
    ] {
        assert!(texts.iter().any(|t| t == want), "{want} in {texts:?}");
    }
    let xml = roxmltree::Document::parse(&doc).unwrap();
    let root = xml.root_element();
    assert_eq!(
        (root.attribute("width"), root.attribute("height")),
        (Some("1200"), Some("700"))
    );
    let lower = doc.to_ascii_lowercase();
    for i in 0..2 {
        assert!(lower.contains(&run_color(i).hex()), "run {i}'s color");
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert_eq!(left.len(), 3, "no temporary file is left: {left:?}");
}

/// A label with terminal escapes (OSC 52 sets the clipboard, CSI 2J clears the screen) is
/// printed inert, and drawn as its visible escapes in an SVG that is still XML.
#[test]
fn a_label_with_escapes_is_printed_inert_and_drawn_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let evil = "kpro5\x1b]52;c;aGk=\x07\x1b[2J<&>";
    let a = write(dir.path(), "a.json", &variant(evil, 1.0, true));
    let b = write(dir.path(), "b.json", &variant("kpro6", 1.5, false));
    let out = dir.path().join("ctx.svg");
    let o = llmsweep(&["plot", s(&a), s(&b), "--chart", "context", "-o", s(&out)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!o.stdout.contains(&0x1b), "{:?}", text(&o.stdout));
    assert!(!o.stderr.contains(&0x1b), "{:?}", text(&o.stderr));
    let shown = "kpro5\\u{1b}]52;c;aGk=\\u{7}\\u{1b}[2J<&>";
    assert!(text(&o.stdout).contains(shown), "{}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains("note: kpro6 has no context sweep"),
        "{}",
        text(&o.stderr)
    );
    let doc = std::fs::read_to_string(&out).unwrap();
    assert!(!doc.contains('\u{1b}') && !doc.contains('\u{7}'));
    let texts = svg_texts(&doc);
    assert!(texts.iter().any(|t| t == shown), "{texts:?}");
}

#[test]
fn png_has_the_size_asked_text_and_the_runs_colors() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &variant("kpro5", 1.0, true));
    let b = write(dir.path(), "b.json", &variant("kpro6", 1.5, true));
    let out = dir.path().join("ttft-context.PNG");
    let o = llmsweep(&[
        "plot",
        s(&a),
        s(&b),
        "--chart",
        "context",
        "--width",
        "800",
        "--height",
        "450",
        "--theme",
        "dark",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("PNG 800x450"),
        "{}",
        text(&o.stdout)
    );

    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(png_size(&bytes), (800, 450));
    let pixels = png_pixels(&bytes);
    assert_eq!(pixels.len(), 800 * 450);
    let mut colors: Vec<[u8; 3]> = pixels.clone();
    colors.sort_unstable();
    colors.dedup();
    assert!(colors.len() > 2, "a blank picture: {colors:?}");
    let theme = Theme::DARK;
    assert_eq!(
        pixels[0],
        rgb(theme.background),
        "the dark theme's background"
    );
    for i in 0..2 {
        let c = rgb(run_color(i));
        assert!(pixels.contains(&c), "nothing drawn in run {i}'s color");
    }
    // The title is drawn in the text color in the top rows (antialiased glyphs have solid cores).
    let title_rows = &pixels[..800 * 30];
    let ink = title_rows.iter().filter(|p| **p == rgb(theme.text)).count();
    assert!(ink > 50, "title pixels in the text color: {ink}");
}

#[test]
fn title_theme_aliases_and_repeated_labels() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &variant("kpro5", 1.0, false));
    let b = write(dir.path(), "b.json", &variant("kpro5", 2.0, false));
    let out = dir.path().join("slide.svg");
    let o = llmsweep(&[
        "plot",
        s(&a),
        s(&b),
        "--chart",
        "per-user-vs-total",
        "--theme",
        "dark",
        "--title",
        "Slide 3: kpro5 before & after",
        "-o",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let doc = std::fs::read_to_string(&out).unwrap();
    let texts = svg_texts(&doc);
    assert!(
        texts.iter().any(|t| t == "Slide 3: kpro5 before & after"),
        "{texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.starts_with("Per-user speed")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t == "kpro5 (b.json)"), "{texts:?}");
    assert!(
        doc.to_ascii_lowercase()
            .contains(&Theme::DARK.background.hex()),
        "dark background"
    );
}

#[test]
fn a_chart_whose_sweep_no_bundle_has_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &variant("kpro5", 1.0, false));
    let b = write(dir.path(), "b.json", &variant("kpro6", 1.5, false));
    let out = dir.path().join("context.png");
    for chart in ["context", "prefill", "decode-vs-length", "ttft-vs-length"] {
        let o = llmsweep(&["plot", s(&a), s(&b), "--chart", chart, "-o", s(&out)]);
        assert_eq!(o.status.code(), Some(2), "{chart}");
        let err = text(&o.stderr);
        assert!(err.contains("needs a context sweep"), "{err}");
        assert!(err.contains("a.json") && err.contains("b.json"), "{err}");
        assert!(err.contains("llmsweep context"), "{err}");
        assert!(!out.exists(), "{chart} wrote a file");
    }
    // With one run that has it, the others are left out and named.
    let c = write(dir.path(), "c.json", &variant("kpro7", 1.0, true));
    let o = llmsweep(&["plot", s(&a), s(&c), "--chart", "context", "-o", s(&out)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("kpro5 has no context sweep; it is left out"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        text(&o.stdout).contains("1 run: kpro7"),
        "{}",
        text(&o.stdout)
    );
    // The left-out run keeps its place in the colors: kpro7 is the second color.
    let pixels = png_pixels(&std::fs::read(&out).unwrap());
    assert!(pixels.contains(&rgb(run_color(1))));
    assert!(!pixels.contains(&rgb(run_color(0))));
}

#[test]
fn the_extension_picks_the_format_or_the_command_says_which_exist() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.json", &variant("kpro5", 1.0, true));
    for name in ["chart.jpg", "chart", "chart.svg.txt"] {
        let out = dir.path().join(name);
        let o = llmsweep(&["plot", s(&a), "-o", s(&out)]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = text(&o.stderr);
        assert!(err.contains(name) && err.contains(".svg or .png"), "{err}");
        assert!(!out.exists());
    }
    // Checked before any bundle is read.
    let o = llmsweep(&["plot", "missing.json", "-o", "chart.gif"]);
    assert!(
        text(&o.stderr).contains(".svg or .png"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn unreadable_and_newer_bundles_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("chart.svg");
    let missing = dir.path().join("missing.json");
    let o = llmsweep(&["plot", s(&missing), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("missing.json"),
        "{}",
        text(&o.stderr)
    );

    let mut v = variant("kpro5", 1.0, true);
    v["schema"] = "llmsweep.bundle/9".into();
    let newer = write(dir.path(), "newer.json", &v);
    let good = write(dir.path(), "good.json", &variant("kpro6", 1.0, true));
    let o = llmsweep(&["plot", s(&good), s(&newer), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("newer.json") && err.contains("newer"), "{err}");

    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{ not json").unwrap();
    let o = llmsweep(&["plot", s(&junk), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("junk.json"), "{}", text(&o.stderr));
    assert!(!out.exists());
}

#[test]
fn sizes_and_chart_names_are_checked_by_the_flag_parser() {
    let o = llmsweep(&["plot", "a.json", "--width", "10", "-o", "x.svg"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--width"), "{}", text(&o.stderr));
    let o = llmsweep(&["plot", "a.json", "--chart", "pie", "-o", "x.svg"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("throughput") && err.contains("decode-vs-length"),
        "{err}"
    );
    let help = text(&llmsweep(&["plot", "--help"]).stdout);
    for name in [
        "throughput",
        "decode",
        "ttft",
        "tradeoff",
        "context",
        "prefill",
        "decode-vs-length",
    ] {
        assert!(help.contains(&format!("- {name}:")), "{name} in {help}");
    }
}
