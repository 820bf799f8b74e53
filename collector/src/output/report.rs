//! `llmsweep report`: one self-contained HTML file — the viewer with its WebAssembly inlined and
//! the bundles embedded — that opens from disk with no server and no network. Under it, for
//! readers without JavaScript (mail previews), the key charts as inline SVG and summary tables,
//! drawn by the same `shared` chart code. A selftest bundle is shown as what it is, the client's
//! capacity of its host, beside the runs and never as one of them.

use std::fmt::Write as _;
use std::io::Write as _;

use base64::Engine as _;
use llmsweep_shared::Bundle;
use llmsweep_shared::bundle::{PointStatus, SweepKind, kv_percent_text};
use llmsweep_shared::charts::axis::format_value;
use llmsweep_shared::charts::{
    ChartKind, ChartRun, Rgb, Theme, build, color_slots, delta_chart, run_color, svg,
};
use llmsweep_shared::compare::verdict::{change_text, level_cell, level_name};
use llmsweep_shared::compare::{
    Comparison, NEUTRAL_PCT, RunInput, SweepComparison, Verdict, compare, kind_name, verdicts,
};
use llmsweep_shared::curves::{Metric, sweep_of};
use llmsweep_shared::selftest::{SelftestView, capacity_share};

use super::html_table::{HtmlTable, Row};

use crate::output::dist::{VIEWER_CSS, VIEWER_JS, VIEWER_WASM};

/// The page's Content-Security-Policy: no request may leave the page; the one script that runs
/// is the loader, named by the hash of its text (`'sha256-…'`, so no other inline script or
/// injected handler runs), plus the blob it makes of the viewer's module; WebAssembly compiled
/// from inlined bytes; images only from data/blob URLs.
pub fn csp(loader: &str) -> String {
    format!(
        "default-src 'none'; script-src {} 'wasm-unsafe-eval' blob:; \
         style-src 'unsafe-inline'; img-src data: blob:; connect-src 'none'; \
         base-uri 'none'; form-action 'none'",
        script_hash(loader)
    )
}

/// `'sha256-BASE64'` of an inline script's text, as CSP names it.
pub(crate) fn script_hash(text: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(text.as_bytes());
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// Size of the static charts, pixels.
const CHART_SIZE: (u32, u32) = (760, 420);

/// One bundle to embed: a display name (its file name) and its contents.
#[derive(Debug, Clone)]
pub struct Embedded {
    pub name: String,
    pub bundle: Bundle,
}

/// The whole report page.
pub fn render(runs: &[Embedded]) -> anyhow::Result<String> {
    let title = title(runs);
    let loader = loader()?;
    let mut html = String::with_capacity(VIEWER_WASM.len() / 2 + 200_000);
    let _ = write!(
        html,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n<title>{}</title>\n\
         <style>\n{VIEWER_CSS}\n{STATIC_CSS}\n</style>\n</head>\n<body>\n",
        csp(&loader),
        escape(&title)
    );
    // Bundles travel gzip-compressed (a tenth of their JSON) and base64-encoded; the viewer
    // reads them as it reads a dropped `.json.gz`.
    for r in runs {
        let _ = writeln!(
            html,
            "<script type=\"application/octet-stream\" class=\"llmsweep-bundle\" \
             data-encoding=\"gzip-base64\" data-name=\"{}\">{}</script>",
            escape(&r.name),
            gzip_json_base64(&r.bundle)?
        );
    }
    html.push_str("<pre id=\"fatal\" role=\"alert\" hidden></pre>\n");
    static_part(&mut html, runs, &title);
    html.push_str("<script type=\"module\">");
    html.push_str(&loader);
    html.push_str("</script>\n</body>\n</html>\n");
    Ok(html)
}

/// `llmsweep report: kpro5 vs kpro6`, and `· client capacity of kpro5` for a selftest.
fn title(embedded: &[Embedded]) -> String {
    let labels: Vec<std::borrow::Cow<str>> = embedded
        .iter()
        .filter(|e| e.bundle.selftest.is_none())
        .map(|e| llmsweep_shared::shorten::label(&e.bundle.label))
        .collect();
    let clients = embedded
        .iter()
        .filter_map(|e| SelftestView::of(&e.bundle))
        .map(|v| v.title);
    let parts: Vec<String> = (!labels.is_empty())
        .then(|| labels.join(" vs "))
        .into_iter()
        .chain(clients)
        .collect();
    format!("llmsweep report: {}", parts.join(" · "))
}

/// A bundle's JSON written straight into the compressor (never whole in memory), then base64.
fn gzip_json_base64(bundle: &llmsweep_shared::Bundle) -> anyhow::Result<String> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut json = std::io::BufWriter::new(&mut gz);
    serde_json::to_writer(&mut json, bundle)?;
    json.flush()?;
    drop(json);
    Ok(base64::engine::general_purpose::STANDARD.encode(gz.finish()?))
}

/// `bytes` gzip-compressed at the best level, then base64 (standard alphabet, padded).
fn gzip_base64(bytes: &[u8]) -> anyhow::Result<String> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(bytes)?;
    Ok(base64::engine::general_purpose::STANDARD.encode(gz.finish()?))
}

/// The text of the module that starts the viewer from inlined bytes: the glue and the wasm
/// gunzipped by the browser's `DecompressionStream`, the glue imported as a `blob:` module.
fn loader() -> anyhow::Result<String> {
    let wasm_b64 = gzip_base64(VIEWER_WASM)?;
    let glue_b64 = gzip_base64(VIEWER_JS.as_bytes())?;
    Ok(format!(
        "\n\
         document.getElementById('static-report').hidden = true;\n\
         const glueGz = \"{glue_b64}\";\n\
         const wasmGz = \"{wasm_b64}\";\n\
         const fail = (e) => {{ const f = document.getElementById('fatal'); f.textContent = 'The viewer could not start: ' + e; f.hidden = false; document.getElementById('static-report').hidden = false; }};\n\
         const inflate = (b64) => new Response(new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))]).stream().pipeThrough(new DecompressionStream('gzip')));\n\
         try {{\n\
           const glue = await inflate(glueGz).text();\n\
           const url = URL.createObjectURL(new Blob([glue], {{ type: 'text/javascript' }}));\n\
           const mod = await import(url);\n\
           const wasm = await inflate(wasmGz).arrayBuffer();\n\
           await mod.default({{ module_or_path: wasm }});\n\
           window.wasmBindings = mod;\n\
         }} catch (e) {{ fail(e); }}\n"
    ))
}

/// Charts and tables without JavaScript; hidden once the viewer starts. Selftests come after
/// the runs, which alone are charted and compared.
fn static_part(html: &mut String, embedded: &[Embedded], title: &str) {
    let _ = writeln!(
        html,
        "<div id=\"static-report\" class=\"static-report\">\n<h1>{}</h1>",
        escape(title)
    );
    let (selftests, runs): (Vec<&Embedded>, Vec<&Embedded>) =
        embedded.iter().partition(|e| e.bundle.selftest.is_some());
    runs_part(html, &runs);
    for st in &selftests {
        selftest_part(html, st, &runs);
    }
    html.push_str("<p class=\"static-note\">Open this file in a browser with JavaScript for the interactive viewer.</p>\n</div>\n");
}

/// The runs' verdict, charts and tables.
fn runs_part(html: &mut String, runs: &[&Embedded]) {
    // A `--shapes` run is charted and tabled as one run per shape, as the viewer shows it;
    // the comparison pairs the runs' sweeps by shape.
    let split: Vec<Vec<Bundle>> = runs
        .iter()
        .map(|r| llmsweep_shared::shapes::split(&r.bundle))
        .collect();
    let parts: Vec<&Bundle> = split.iter().flatten().collect();
    // The viewer's rule, so a run has the same color in both halves of the page.
    let chart_runs: Vec<ChartRun> = parts
        .iter()
        .zip(color_slots(&parts))
        .map(|(b, slot)| ChartRun {
            label: &b.label,
            color: run_color(slot),
            bundle: b,
        })
        .collect();
    if runs.len() >= 2 {
        let inputs: Vec<RunInput> = runs
            .iter()
            .map(|r| RunInput {
                label: &r.bundle.label,
                bundle: &r.bundle,
            })
            .collect();
        // Each run in the color of its first part.
        let mut first = 0;
        let colors: Vec<Rgb> = split
            .iter()
            .map(|s| {
                let c = chart_runs.get(first).map_or(run_color(0), |r| r.color);
                first += s.len();
                c
            })
            .collect();
        comparison_part(html, &compare(&inputs, 0), &colors);
    }
    for (kind, charts) in [
        (
            SweepKind::Throughput,
            &[
                ChartKind::OutputTokS,
                ChartKind::TtftVsConcurrency,
                ChartKind::Acceptance,
            ][..],
        ),
        (SweepKind::Context, &[ChartKind::TtftVsLength][..]),
        (
            SweepKind::Rate,
            &[
                ChartKind::RateTtft,
                ChartKind::RateGoodput,
                ChartKind::RateLag,
            ][..],
        ),
    ] {
        if !runs.iter().any(|r| sweep_of(&r.bundle, kind).is_some()) {
            continue;
        }
        for &chart in charts {
            let plot = build(chart, &chart_runs);
            // A rate sweep without --goodput has no goodput chart, a server without speculative
            // decoding no acceptance chart: nothing rather than a blank.
            if (kind == SweepKind::Rate || chart == ChartKind::Acceptance) && plot.is_empty() {
                continue;
            }
            if let Ok(picture) = svg(
                &build(chart, &chart_runs).for_print(),
                &Theme::LIGHT,
                CHART_SIZE,
            ) {
                let _ = writeln!(html, "<figure>{picture}</figure>");
            }
        }
        for b in &parts {
            if let Some(h) = sweep_of(b, kind).and_then(llmsweep_shared::headline::headline) {
                let _ = writeln!(
                    html,
                    "<p class=\"headline\">{}: {}</p>",
                    escape(&llmsweep_shared::shorten::label(&b.label)),
                    escape(&h)
                );
            }
            if kind == SweepKind::Rate {
                rate_table(html, b);
            } else {
                summary_table(html, b, kind);
            }
        }
    }
}

/// A selftest as the viewer's Client view shows it: what it measured, its capacity, a table per
/// mode, its notes, and the runs of its host set against the capacity.
fn selftest_part(html: &mut String, st: &Embedded, runs: &[&Embedded]) {
    let Some(v) = SelftestView::of(&st.bundle) else {
        return;
    };
    let _ = writeln!(
        html,
        "<section class=\"static-selftest\" data-host=\"{}\">\n<h2>{}</h2>\n<p>{}</p>\n<p>client: {}</p>",
        escape(&v.host),
        escape(&v.title),
        escape(&v.about),
        escape(&v.machine)
    );
    if let Some(cap) = &v.capacity {
        let _ = writeln!(
            html,
            "<p class=\"capacity\"><strong>Capacity:</strong> {} — a sweep level that streams more than half of it may be paced by the client.</p>",
            escape(cap)
        );
    }
    for t in &v.tables {
        let mode = match t.mode {
            llmsweep_shared::bundle::SelftestMode::FlatOut => "flat_out",
            llmsweep_shared::bundle::SelftestMode::Scheduled => "scheduled",
        };
        HtmlTable {
            attrs: format!(" class=\"selftest-table\" data-mode=\"{mode}\""),
            caption: format!("{} — {}", escape(&v.host), t.title),
            headers: t.headers.iter().map(|h| escape(h)).collect(),
            rows: t
                .rows
                .iter()
                .map(|r| Row {
                    warn: r.warning,
                    cells: r.cells.iter().map(|c| escape(c)).collect(),
                })
                .collect(),
        }
        .write(html);
        let _ = writeln!(html, "<p class=\"static-note\">{}</p>", escape(&t.explain));
    }
    if !v.notes.is_empty() {
        html.push_str("<ul class=\"selftest-notes\">\n");
        for n in &v.notes {
            let _ = writeln!(html, "<li>{}</li>", escape(n));
        }
        html.push_str("</ul>\n");
    }
    for r in runs {
        if let Some(share) = capacity_share(&r.bundle.label, &r.bundle, &st.bundle) {
            let _ = writeln!(
                html,
                "<p class=\"capacity-share\">{}</p>",
                escape(&share.line)
            );
        }
    }
    html.push_str("</section>\n");
}

/// The verdict, then each sweep's per-level changes against the first run: what the viewer's
/// Compare tab says, from the same comparison.
fn comparison_part(html: &mut String, cmp: &Comparison, colors: &[Rgb]) {
    html.push_str(
        "<section class=\"static-verdict\" id=\"static-verdict\">\n<h2>Verdict</h2>\n<ul>\n",
    );
    for v in verdicts(cmp, NEUTRAL_PCT) {
        let _ = writeln!(
            html,
            "<li data-outcome=\"{}\"><strong>{}</strong><ul>",
            v.outcome.word(),
            escape(&v.headline(&cmp.labels, cmp.baseline))
        );
        for (m, line) in v.metric_lines() {
            let _ = writeln!(html, "<li>{}: {}</li>", m.label(), escape(&line));
        }
        for n in &v.notes {
            let _ = writeln!(html, "<li>{}</li>", escape(n));
        }
        html.push_str("</ul></li>\n");
    }
    html.push_str("</ul>\n");
    for w in &cmp.workload {
        let _ = writeln!(html, "<p class=\"workload\">{}</p>", escape(&w.line));
    }
    html.push_str("</section>\n");
    for s in &cmp.sweeps {
        let d = delta_chart(cmp, s, colors, NEUTRAL_PCT);
        if !d.points.is_empty()
            && let Ok(picture) = svg(&d.plot.for_print(), &Theme::LIGHT, CHART_SIZE)
        {
            let _ = writeln!(html, "<figure class=\"delta-chart\">{picture}</figure>");
        }
        delta_table(html, cmp, s);
    }
}

/// One table per sweep: a row per level and metric, each run's value and its change.
fn delta_table(html: &mut String, cmp: &Comparison, s: &SweepComparison) {
    if s.runs.len() < 2 || s.levels.is_empty() {
        return;
    }
    let mut headers = vec![level_name(s.kind).to_string(), "metric".into()];
    headers.extend(s.runs.iter().map(|&i| escape(&cmp.labels[i])));
    let mut rows = Vec::new();
    for level in &s.levels {
        let at = level_cell(s.kind, level.key);
        for row in &level.rows {
            let mut cells = vec![at.clone(), row.metric.label().to_string()];
            cells.extend(row.cells.iter().map(delta_cell));
            rows.push(Row::of(cells));
        }
        for (name, values) in s.peak_rows(level) {
            let mut cells = vec![at.clone(), name.to_string()];
            cells.extend(
                values
                    .iter()
                    .map(|c| c.as_deref().unwrap_or("-").to_string()),
            );
            rows.push(Row::of(cells));
        }
    }
    HtmlTable {
        attrs: format!(" class=\"delta-table\" data-kind=\"{}\"", kind_name(s.kind)),
        caption: format!(
            "Changes against {} — {} sweep",
            escape(&cmp.labels[cmp.baseline]),
            s.name()
        ),
        headers,
        rows,
    }
    .write(html);
}

/// A run's value at a level, with its change against the baseline and the verdict's word.
fn delta_cell(c: &llmsweep_shared::compare::Cell) -> String {
    let value = match (c.value, &c.note) {
        (Some(v), _) => format_value(v),
        (None, Some(n)) => escape(n),
        (None, None) => "-".into(),
    };
    let change = c
        .change
        .as_ref()
        .map(|ch| {
            let mark = match c.verdict {
                Verdict::Better => " better",
                Verdict::Worse => " worse",
                _ => "",
            };
            format!(" ({}{mark})", change_text(ch))
        })
        .unwrap_or_default();
    format!("{value}{change}")
}

/// A rate sweep's points: offered and achieved rate, latency, goodput when counted, the
/// client's lag and the concurrency the open loop reached.
fn rate_table(html: &mut String, b: &Bundle) {
    let Some(sweep) = sweep_of(b, SweepKind::Rate) else {
        return;
    };
    let goodput = sweep.points.iter().any(|p| p.goodput.is_some());
    let mut headers: Vec<String> = [
        "offered req/s",
        "achieved req/s",
        "ok/fail",
        "TTFT p50 s",
        "TTFT p99 s",
        "TPOT p50 s",
        "e2e p99 s",
    ]
    .map(String::from)
    .to_vec();
    if goodput {
        headers.push("goodput".into());
    }
    headers.extend(["lag p99 s", "peak in flight", "note"].map(String::from));
    let dash = || "-".to_string();
    let mut rows = Vec::new();
    for p in &sweep.points {
        let num = |m: Metric, digits: usize| {
            m.of(p)
                .map(|v| llmsweep_shared::charts::axis::fixed(v, digits))
                .unwrap_or_else(dash)
        };
        let note = point_note(p);
        let mut cells = vec![
            p.rate.map_or_else(dash, |r| {
                llmsweep_shared::charts::axis::format_exact(r.offered_rps)
            }),
            num(Metric::AchievedRps, 2),
            p.summary
                .as_ref()
                .map_or_else(dash, |s| format!("{}/{}", s.ok, s.failed)),
            num(Metric::TtftP50, 3),
            num(Metric::TtftP99, 3),
            num(Metric::TpotP50, 4),
            num(Metric::E2eP99, 3),
        ];
        if goodput {
            cells.push(p.goodput.map_or_else(dash, |g| {
                format!("{}/{} ({:.1} %)", g.good, g.requests, g.fraction * 100.0)
            }));
        }
        cells.push(num(Metric::LagP99, 4));
        cells.push(
            p.rate
                .and_then(|r| r.peak_concurrency)
                .map_or_else(dash, |c| c.to_string()),
        );
        cells.push(escape(&note));
        rows.push(Row::of(cells));
    }
    HtmlTable {
        attrs: " data-kind=\"rate\"".into(),
        caption: format!(
            "{} — rate sweep{}",
            escape(&llmsweep_shared::shorten::label(&b.label)),
            if b.target.simulated {
                " (simulated server)"
            } else {
                ""
            }
        ),
        headers,
        rows,
    }
    .write(html);
}

fn summary_table(html: &mut String, b: &Bundle, kind: SweepKind) {
    let Some(sweep) = sweep_of(b, kind) else {
        return;
    };
    let context = kind == SweepKind::Context;
    let samples = || {
        sweep
            .points
            .iter()
            .filter_map(|p| p.server_samples.as_ref())
    };
    let (queue, kv) = (
        samples().any(|s| s.queue_peak().is_some()),
        samples().any(|s| s.kv_peak().is_some()),
    );
    let accept = sweep
        .points
        .iter()
        .any(|p| Metric::AcceptLength.of(p).is_some());
    let gpus = llmsweep_shared::deploy::gpus(b)
        .map(|g| g.count)
        .filter(|_| !context);
    let mut headers: Vec<String> = [
        if context { "input" } else { "C" },
        "ok/fail",
        "output tok/s",
        "decode tok/s p50",
        "TTFT p50 s",
        "TTFT p99 s",
    ]
    .map(String::from)
    .to_vec();
    if queue {
        headers.push("peak queue".into());
    }
    if kv {
        headers.push("peak KV cache".into());
    }
    if let Some(n) = gpus {
        headers.push(format!("output tok/s per GPU ({n})"));
    }
    if accept {
        headers.push("accept tokens/step".into());
    }
    headers.push("note".into());
    let caption = format!(
        "{} — {} sweep{}",
        escape(&llmsweep_shared::shorten::label(&b.label)),
        if context { "context" } else { "throughput" },
        match (&b.source, b.target.simulated) {
            (Some(src), _) => format!(
                " (imported from {}: its definitions apply)",
                escape(&src.tool)
            ),
            (None, true) => " (simulated server)".into(),
            (None, false) => String::new(),
        },
    );
    let mut rows = Vec::new();
    for p in &sweep.points {
        let key = if context {
            p.input_len.to_string()
        } else {
            p.concurrency.to_string()
        };
        let note = point_note(p);
        let counts = match (&p.summary, &p.imported) {
            (Some(s), _) => format!("{}/{}", s.ok, s.failed),
            (None, Some(i)) => format!(
                "{}/{}",
                i.ok.map_or("?".into(), |n| n.to_string()),
                i.failed.map_or("?".into(), |n| n.to_string())
            ),
            (None, None) => "-".into(),
        };
        let num = |m: Metric, digits: usize| {
            m.of(p)
                .map(|v| llmsweep_shared::charts::axis::fixed(v, digits))
        };
        // An imported run has no steady window: its aggregate is shown, marked as such.
        let pm = p.summary.as_ref().and_then(|s| s.steady_pm_pct);
        let output = Metric::SteadyTokS
            .of(p)
            .map(|v| llmsweep_shared::charts::axis::steady_cell(v, pm))
            .or_else(|| num(Metric::AggTokS, 1).map(|v| format!("{v} (aggregate)")));
        let ss = p.server_samples.as_ref();
        let dash = || "-".to_string();
        let mut cells = vec![
            key,
            counts,
            output.unwrap_or_else(dash),
            num(Metric::DecodeTokSP50, 1).unwrap_or_else(dash),
            num(Metric::TtftP50, 3).unwrap_or_else(dash),
            num(Metric::TtftP99, 3).unwrap_or_else(dash),
        ];
        if queue {
            let q = ss.and_then(|s| s.queue_peak()).map(|q| format!("{q:.0}"));
            cells.push(q.unwrap_or_else(dash));
        }
        if kv {
            let k = ss.and_then(|s| s.kv_peak()).map(kv_percent_text);
            cells.push(k.unwrap_or_else(dash));
        }
        if let Some(n) = gpus {
            let total = Metric::SteadyTokS.of(p).or_else(|| Metric::AggTokS.of(p));
            let each = total.map(|t| llmsweep_shared::charts::axis::fixed(t / f64::from(n), 1));
            cells.push(each.unwrap_or_else(dash));
        }
        if accept {
            cells.push(num(Metric::AcceptLength, 2).unwrap_or_else(dash));
        }
        cells.push(escape(&note));
        rows.push(Row::of(cells));
    }
    HtmlTable {
        attrs: String::new(),
        caption,
        headers,
        rows,
    }
    .write(html);
}

/// HTML text and attribute escaping.
pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STATIC_CSS: &str = ".static-report{max-width:820px;margin:2rem auto;font-family:system-ui,sans-serif}\
.static-report figure{margin:1rem 0}.static-report table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}\
.static-report td,.static-report th{border:1px solid #ccc;padding:.2rem .5rem;text-align:right}\
.static-report caption{text-align:left;font-weight:600;padding:.3rem 0}\
.static-report tr.warn td{background:#fff8c5}.static-report .selftest-notes{color:#9a6700}";

/// A table row's last cell: a measured point's flags, else why it was not measured.
fn point_note(p: &llmsweep_shared::bundle::Point) -> String {
    match p.status {
        PointStatus::Ok => p
            .flags
            .iter()
            .map(|f| f.kind.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        _ => p.reason.clone().unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmsweep_shared::bundle::ServerSamples;

    #[test]
    fn embedded_bundles_are_gzip_base64_and_read_back_whole() {
        let golden = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");
        let bundle = Bundle::from_json(golden).unwrap();
        let html = render(&[Embedded {
            name: "a \"b\".json".into(),
            bundle: bundle.clone(),
        }])
        .unwrap();
        let open = "data-encoding=\"gzip-base64\" data-name=\"a &quot;b&quot;.json\">";
        let start = html.find(open).unwrap() + open.len();
        let body = &html[start..start + html[start..].find("</script>").unwrap()];
        // base64 has no `<`, so nothing in it can close the element.
        assert!(
            body.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
        );
        let gz = base64::engine::general_purpose::STANDARD
            .decode(body)
            .unwrap();
        let mut json = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut json)
            .unwrap();
        assert_eq!(Bundle::from_json(&json).unwrap(), bundle);
        assert!(
            gz.len() * 2 < json.len(),
            "{} of {} bytes",
            gz.len(),
            json.len()
        );
    }

    #[test]
    fn a_rate_sweep_shows_its_table_charts_and_changes_without_javascript() {
        use llmsweep_shared::bundle::{Arrival, RatePlan, RatePoint};
        let golden = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");
        // The golden throughput sweep read as a rate sweep offered C req/s at level C.
        let run = |label: &str| {
            let mut bundle = Bundle::from_json(golden).unwrap();
            bundle.label = label.into();
            bundle.sweeps.truncate(1);
            let s = &mut bundle.sweeps[0];
            s.kind = SweepKind::Rate;
            s.rate = Some(RatePlan {
                rates: vec![1.0, 2.0],
                arrival: Arrival::Poisson,
                burstiness: 1.0,
                seed: Some(7),
                max_concurrency: None,
                search: None,
            });
            for p in &mut s.points {
                p.rate = Some(RatePoint {
                    offered_rps: f64::from(p.concurrency),
                    achieved_rps: Some(f64::from(p.concurrency) * 0.5),
                    lag_s: Some(llmsweep_shared::metrics::Stats {
                        count: 6,
                        mean: 0.001,
                        p50: 0.001,
                        p90: 0.002,
                        p99: 0.002,
                        min: 0.0,
                        max: 0.002,
                    }),
                    queued_s: None,
                    peak_concurrency: Some(3),
                    mean_concurrency: Some(1.5),
                });
            }
            Embedded {
                name: format!("{label}.json"),
                bundle,
            }
        };
        let mut html = String::new();
        static_part(&mut html, &[run("kpro5"), run("kpro6")], "t");
        assert!(
            html.contains("<strong>rate sweep: no significant change from kpro5 to kpro6 (1, 2 req/s)</strong>"),
            "{html}"
        );
        assert!(html.contains("<table class=\"delta-table\" data-kind=\"rate\">"));
        assert!(
            html.contains("<tr><td>2 req/s</td><td>TTFT p50 (s)</td>"),
            "{html}"
        );
        assert!(html.contains("<caption>kpro5 — rate sweep"), "{html}");
        assert!(
            html.contains(
                "<tr><td>2</td><td>1.00</td><td>2/0</td><td>0.008</td><td>0.010</td><td>0.0050</td><td>0.023</td><td>0.0020</td><td>3</td>"
            ),
            "offered, achieved: {html}"
        );
        assert!(html.contains("Time to first token vs request rate"));
        assert!(html.contains("Client schedule lag vs offered rate"));
        // No --goodput: no goodput column and no empty goodput chart.
        assert!(!html.contains("Goodput vs offered rate") && !html.contains("<th>goodput</th>"));
    }

    #[test]
    fn two_runs_carry_the_verdict_and_the_changes_without_javascript() {
        let golden = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");
        let run = |label: &str, k: f64| {
            let mut bundle = Bundle::from_json(golden).unwrap();
            bundle.label = label.into();
            for p in bundle.sweeps.iter_mut().flat_map(|s| &mut s.points) {
                if let Some(s) = &mut p.summary {
                    s.agg_tok_s *= k;
                }
            }
            if label == "kpro6" {
                bundle.sweeps[0].points[0].server_samples = Some(ServerSamples {
                    peak_queue: Some(3.0),
                    peak_kv: Some(0.42),
                    ..ServerSamples::default()
                });
            }
            Embedded {
                name: format!("{label}.json"),
                bundle,
            }
        };
        let mut one = String::new();
        static_part(&mut one, &[run("kpro5", 1.0)], "t");
        assert!(!one.contains("Verdict"), "one run has nothing to compare");
        // Each sweep's one-sentence summary, as the terminal prints it.
        assert!(
            one.contains("<p class=\"headline\">kpro5: peak steady 356.3 tok/s at C=2;"),
            "{one}"
        );
        let mut html = String::new();
        static_part(&mut html, &[run("kpro5", 1.0), run("kpro6", 2.0)], "t");
        assert!(html.contains("<h2>Verdict</h2>"), "{html}");
        assert!(html.contains("<strong>throughput sweep: "), "{html}");
        assert!(html.contains("<table class=\"delta-table\" data-kind=\"throughput\">"));
        assert!(html.contains("<td>aggregate output tok/s</td>"));
        assert!(html.contains("(+100.0 "), "the doubled aggregate: {html}");
        // The server's peaks, per level in the comparison and per point in the run's table.
        assert!(
            html.contains("<td>peak queue</td><td>-</td><td>3</td>"),
            "{html}"
        );
        assert!(html.contains("<td>peak KV cache</td><td>-</td><td>42 %</td>"));
        assert!(html.contains("<th>TTFT p99 s</th><th>peak queue</th><th>peak KV cache</th>"));
        assert!(
            html.contains("<figure class=\"delta-chart\"><svg"),
            "{html}"
        );
    }

    const SELFTEST: &str = include_str!("../../../shared/tests/fixtures/bundle-v1-selftest.json");

    /// The golden run as `label`, measured from client host `host`.
    fn run_on(label: &str, host: &str) -> Embedded {
        let golden = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");
        let mut bundle = Bundle::from_json(golden).unwrap();
        bundle.label = label.into();
        bundle.hosts.client.hostname = host.into();
        Embedded {
            name: format!("{label}.json"),
            bundle,
        }
    }

    fn selftest() -> Embedded {
        Embedded {
            name: "kpro5-selftest.json".into(),
            bundle: Bundle::from_json(SELFTEST).unwrap(),
        }
    }

    #[test]
    fn a_selftest_is_the_clients_capacity_beside_the_runs_without_javascript() {
        let page = [
            run_on("kpro5-run", "kpro5"),
            selftest(),
            run_on("kpro6-run", "kpro6"),
        ];
        assert_eq!(
            title(&page),
            "llmsweep report: kpro5-run vs kpro6-run · client capacity of kpro5"
        );
        let mut html = String::new();
        static_part(&mut html, &page, "t");
        // The runs are compared with each other only, and only they are charted. (Too short
        // for an interval, their capacity cannot be told apart.)
        assert!(
            html.contains("<li data-outcome=\"cannot tell\"><strong>throughput sweep: cannot tell kpro6-run from kpro5-run (C = 1, 2): capacity is not resolved at any level"),
            "{html}"
        );
        assert!(!html.contains("not compared"), "{html}");
        let section = &html[html.find("<section class=\"static-selftest\"").unwrap()..];
        assert!(!section.contains("<svg"), "a selftest is not charted");
        assert!(section.starts_with(
            "<section class=\"static-selftest\" data-host=\"kpro5\">\n<h2>client capacity of kpro5</h2>\n\
             <p>Measured by llmsweep selftest on 2026-12-01 14:00 UTC against llmsweep's own loopback \
             endpoint"
        ), "{section}");
        assert!(section.contains(
            "<p class=\"capacity\"><strong>Capacity:</strong> 2,000,000 events/s (flat out, 1 token per event, C = 64)"
        ));
        assert!(section.contains(
            "<tr><td>64</td><td>1</td><td>256/256</td><td>2,000,000</td><td>2,000,000</td><td>0.61</td><td>25 MiB</td></tr>"
        ), "{section}");
        assert!(section.contains(
            "<tr class=\"warn\"><td>64</td><td>8</td><td>250/256</td><td>2,560,000</td><td>320,000</td>"
        ));
        assert!(section.contains(
            "<tr><td>64</td><td>64/64</td><td>50 + 10 ms</td><td>0.74</td><td>1.02</td><td>1.02</td><td>0.00</td><td>0.24</td><td>0.43</td></tr>"
        ), "{section}");
        assert!(section.contains("<th>TTFT error p99 ms</th>"));
        // Only the run of the selftest's host is set against its capacity.
        assert_eq!(section.matches("<p class=\"capacity-share\">").count(), 1);
        assert!(
            section.contains(
                "<p class=\"capacity-share\">kpro5-run streamed at most 354 tok/s in 354 events/s \
             (throughput sweep, C = 2): 0.018 % of the 2,000,000 events/s this client reads.</p>"
            ),
            "{section}"
        );
    }

    #[test]
    fn a_report_of_a_selftest_alone_has_its_tables_and_no_charts() {
        let page = [selftest()];
        assert_eq!(title(&page), "llmsweep report: client capacity of kpro5");
        let mut html = String::new();
        static_part(&mut html, &page, &title(&page));
        assert_eq!(html.matches("<table class=\"selftest-table\"").count(), 2);
        assert!(!html.contains("<figure"), "{html}");
        assert!(!html.contains("capacity-share"), "no run to set against it");
        assert!(html.contains(
            "<li>scheduled, C = 64: the endpoint sent first events 12.00 ms behind schedule"
        ));
    }

    #[test]
    fn the_policy_names_the_one_inline_script_by_its_hash() {
        let golden = include_str!("../../../shared/tests/fixtures/bundle-v1-run.json");
        let html = render(&[Embedded {
            name: "a.json".into(),
            bundle: Bundle::from_json(golden).unwrap(),
        }])
        .unwrap();
        let open = "<script type=\"module\">";
        let start = html.find(open).unwrap() + open.len();
        let body = &html[start..start + html[start..].find("</script>").unwrap()];
        let hash = script_hash(body);
        assert!(html.contains(&format!("script-src {hash} 'wasm-unsafe-eval' blob:;")));
        assert!(!html.contains("script-src 'unsafe-inline'"));
        assert_eq!(html.matches(open).count(), 1, "one script runs");
        // echo -n 'abc' | openssl dgst -sha256 -binary | base64
        assert_eq!(
            script_hash("abc"),
            "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='"
        );
    }

    #[test]
    fn attributes_are_escaped() {
        assert_eq!(escape("a\"<b>&"), "a&quot;&lt;b&gt;&amp;");
    }
}
