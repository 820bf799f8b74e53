//! A point's server samples over time, under its requests: the queue and running counts, and
//! the KV-cache usage in percent, on the requests timeline's time axis (seconds from the point's
//! start). Which gauge is which is [`crate::bundle::MetricScheme`]'s table.

use super::axis::{AxisKind, format_exact};
use super::build::ChartRun;
use super::plot::{LegendEntry, Line, Mark, MarkStyle, Plot, Rgb};
use crate::bundle::{Point, ServerSamples};

/// The queue's color: the warning hue, apart from any run color's line.
const QUEUE: Rgb = Rgb(0xdc, 0x26, 0x26);

/// Samples marked at most per series (each mark hovers its value); more are sampled evenly.
const MAX_MARKS: usize = 600;

/// The charts of one point's server samples, on a shared time range.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerPlots {
    /// Waiting and running requests.
    pub counts: Plot,
    /// KV-cache usage in percent, when the server reports it.
    pub kv: Option<Plot>,
    /// The time range both charts (and the requests chart above them) show, seconds.
    pub x_range: (f64, f64),
}

/// The server charts of point `point` of sweep `sweep`, or why there are none, in one line.
pub fn server_plots(run: &ChartRun, sweep: usize, point: usize) -> Result<ServerPlots, String> {
    let p = run
        .bundle
        .sweeps
        .get(sweep)
        .and_then(|s| s.points.get(point))
        .ok_or("No such point")?;
    let Some(ss) = &p.server_samples else {
        return Err(if run.bundle.is_imported() {
            "No server samples: an imported point carries none.".into()
        } else {
            "No server samples for this point: the server had no /metrics of an engine llmsweep knows (SGLang, vLLM, llama.cpp).".into()
        });
    };
    let x_range = time_range(p, ss);
    let queue = ss.scheme.queue_gauge();
    let running = ss.scheme.running_gauge();
    let mut counts = Plot::new(
        "Server: requests waiting and running",
        AxisKind::Linear,
        "time (s from the point's start)",
        "requests",
    );
    counts.x_range = Some(x_range);
    counts.empty_note = "The server reported no queue or running count".into();
    for (name, what, color) in [(queue, "waiting", QUEUE), (running, "running", run.color)] {
        let Some(name) = name.filter(|n| ss.gauges.contains_key(*n)) else {
            continue;
        };
        add_gauge(&mut counts, ss, name, what, color, 1.0, "");
    }
    let kv = ss.kv_gauge().map(|name| {
        let mut kv = Plot::new(
            "Server: KV-cache usage",
            AxisKind::Linear,
            "time (s from the point's start)",
            "KV cache used (%)",
        );
        kv.x_range = Some(x_range);
        add_gauge(&mut kv, ss, name, "KV cache", run.color, 100.0, " %");
        kv
    });
    if counts.is_empty() && kv.as_ref().is_none_or(Plot::is_empty) {
        return Err(format!(
            "No server samples for this point: the {} server's /metrics had no queue, running or KV-cache gauge.",
            ss.scheme.as_str()
        ));
    }
    Ok(ServerPlots {
        counts,
        kv,
        x_range,
    })
}

/// From the earlier of zero and the first sample to the later of the last request's end and
/// the last sample.
fn time_range(p: &Point, ss: &ServerSamples) -> (f64, f64) {
    let finite = |v: &f64| v.is_finite();
    let ends = p
        .requests
        .iter()
        .map(|r| r.start_s + r.e2e_s)
        .filter(finite);
    let starts = p.requests.iter().map(|r| r.start_s).filter(finite);
    let ts = ss.t_s.iter().copied().filter(finite);
    let lo = starts.chain(ts.clone()).fold(0.0, f64::min);
    let hi = ends.chain(ts).fold(lo, f64::max);
    if hi > lo { (lo, hi) } else { (lo, lo + 1.0) }
}

/// One gauge's line (split at gaps) and marks, values × `scale`, legend `what (gauge name)`.
fn add_gauge(
    plot: &mut Plot,
    ss: &ServerSamples,
    name: &str,
    what: &str,
    color: Rgb,
    scale: f64,
    unit: &str,
) {
    let segments = ss.segments(name);
    let n: usize = segments.iter().map(Vec::len).sum();
    let step = n.div_ceil(MAX_MARKS).max(1);
    for (i, &(t, v)) in segments.iter().flatten().enumerate() {
        if i % step != 0 {
            continue;
        }
        plot.marks.push(Mark {
            x: t,
            y: v * scale,
            color,
            style: MarkStyle::Small,
            tag: None,
            hover: format!(
                "{what} at {t:.2} s: {}{unit}\n{name}",
                format_exact(v * scale)
            ),
            source: None,
        });
    }
    for seg in segments {
        plot.lines.push(Line {
            color,
            dashed: false,
            points: seg.into_iter().map(|(t, v)| (t, v * scale)).collect(),
        });
    }
    plot.legend.push(LegendEntry {
        text: format!("{what} ({name})"),
        color,
        dashed: false,
        mark: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::MetricScheme;
    use crate::curves::tests::bundle;

    fn run(b: &crate::Bundle) -> ChartRun<'_> {
        ChartRun {
            label: &b.label,
            color: super::super::run_color(0),
            bundle: b,
        }
    }

    fn samples() -> ServerSamples {
        let g = |v: &[Option<f64>]| v.to_vec();
        ServerSamples {
            scheme: MetricScheme::Vllm,
            t_s: vec![-0.01, 0.5, 1.0, 1.5],
            gauges: [
                (
                    "vllm:num_requests_waiting",
                    g(&[Some(0.0), Some(4.0), None, Some(0.0)]),
                ),
                (
                    "vllm:num_requests_running",
                    g(&[Some(0.0), Some(2.0), Some(2.0), Some(0.0)]),
                ),
                (
                    "vllm:kv_cache_usage_perc",
                    g(&[None, Some(0.25), Some(0.5), Some(0.0)]),
                ),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
            ..ServerSamples::default()
        }
    }

    #[test]
    fn queue_running_and_kv_are_drawn_on_the_point_time_axis() {
        let mut b = bundle("a");
        b.sweeps[0].points[1].server_samples = Some(samples());
        let last_end = b.sweeps[0].points[1]
            .requests
            .iter()
            .map(|r| r.start_s + r.e2e_s)
            .fold(1.5, f64::max);
        let s = server_plots(&run(&b), 0, 1).unwrap();
        assert_eq!(s.x_range, (-0.01, last_end));
        let legend: Vec<&str> = s.counts.legend.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(
            legend,
            [
                "waiting (vllm:num_requests_waiting)",
                "running (vllm:num_requests_running)"
            ]
        );
        // The waiting series breaks where a scrape lacked it.
        let lines: Vec<&Vec<(f64, f64)>> = s.counts.lines.iter().map(|l| &l.points).collect();
        assert_eq!(
            lines,
            [
                &vec![(-0.01, 0.0), (0.5, 4.0)],
                &vec![(1.5, 0.0)],
                &vec![(-0.01, 0.0), (0.5, 2.0), (1.0, 2.0), (1.5, 0.0)],
            ]
        );
        let kv = s.kv.unwrap();
        assert_eq!(kv.lines[0].points, [(0.5, 25.0), (1.0, 50.0), (1.5, 0.0)]);
        assert_eq!(
            kv.marks[1].hover,
            "KV cache at 1.00 s: 50 %\nvllm:kv_cache_usage_perc"
        );
        assert_eq!(kv.bounds().unwrap().0, s.x_range);
    }

    #[test]
    fn a_point_without_samples_says_so_in_one_line() {
        let b = bundle("a");
        let why = server_plots(&run(&b), 0, 0).unwrap_err();
        assert!(why.starts_with("No server samples for this point"), "{why}");
        let mut b = bundle("a");
        b.sweeps[0].points[0].server_samples = Some(ServerSamples {
            scheme: MetricScheme::Llamacpp,
            t_s: vec![0.0],
            ..ServerSamples::default()
        });
        let why = server_plots(&run(&b), 0, 0).unwrap_err();
        assert!(
            why.contains("llamacpp server's /metrics had no queue"),
            "{why}"
        );
    }
}
