//! `llmsweep plot`: one of the viewer's charts as an SVG or PNG file.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use llmsweep_shared::charts::{ChartKind, MAX_SIDE, Theme};

use crate::output::plot;
use crate::output::terminal::inert;

/// The charts `plot` draws: the viewer's, by the names a slide would give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChartArg {
    /// Output tok/s (steady and aggregate) vs concurrency.
    #[value(alias = "output-tok-s")]
    Throughput,
    /// Decode tok/s per request (p50) vs concurrency.
    #[value(alias = "decode-vs-concurrency")]
    Decode,
    /// TTFT p50 and p99 vs concurrency.
    #[value(alias = "ttft-vs-concurrency")]
    Ttft,
    /// Per-user decode tok/s vs total tok/s, points labelled with their concurrency.
    #[value(alias = "per-user-vs-total")]
    Tradeoff,
    /// TTFT vs input length, with the fitted prefill curve (context sweep).
    #[value(alias = "ttft-vs-length")]
    Context,
    /// Prefill tok/s (p50) vs input length (context sweep).
    #[value(alias = "prefill-vs-length")]
    Prefill,
    /// Decode tok/s per request (p50) vs input length (context sweep).
    DecodeVsLength,
    /// TTFT p50 and p99 vs achieved requests/s (rate sweep).
    #[value(alias = "ttft-vs-rate")]
    RateTtft,
    /// TPOT p50 vs achieved requests/s (rate sweep).
    #[value(alias = "tpot-vs-rate")]
    RateTpot,
    /// e2e p50 and p99 vs achieved requests/s (rate sweep).
    #[value(alias = "e2e-vs-rate")]
    RateE2e,
    /// Good requests/s (met the --goodput SLO) and achieved requests/s vs offered requests/s
    /// (rate sweep run with --goodput).
    #[value(alias = "goodput-vs-rate")]
    Goodput,
    /// The client's schedule lag p99 vs offered requests/s (rate sweep): how late it sent.
    #[value(alias = "lag-vs-rate")]
    Lag,
}

/// Chart colors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ThemeArg {
    /// Dark text on white.
    Light,
    /// Light text on a dark background.
    Dark,
}

#[derive(Debug, Clone, Args)]
#[command(after_help = "Examples:
  # Output throughput of two runs, as an SVG for a document
  llmsweep plot results/kpro6-imported-*.json results/kpro5-run-*.json -o throughput.svg

  # TTFT vs concurrency as a wide PNG for a dark slide
  llmsweep plot results/kpro5-run-*.json --chart ttft --theme dark --width 1920 -o ttft.png

  # Prefill speed vs input length (context sweep), with a title of your own
  llmsweep plot results/kpro5-run-*.json --chart prefill --title \"kpro5 prefill\" -o prefill.svg")]
pub struct PlotArgs {
    /// Bundles to draw (.json or .json.gz, or s3://BUCKET/PREFIX/NAME.json), each a run in its
    /// own color, in this order.
    #[arg(required = true, value_name = "BUNDLE")]
    pub files: Vec<PathBuf>,
    /// Which chart.
    #[arg(long, value_enum, default_value_t = ChartArg::Throughput)]
    pub chart: ChartArg,
    /// The image to write; its extension picks the format: .svg or .png.
    #[arg(short, long, alias = "out", value_name = "FILE")]
    pub output: PathBuf,
    /// Image width in pixels.
    #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u32).range(200..=i64::from(MAX_SIDE)))]
    pub width: u32,
    /// Image height in pixels.
    #[arg(long, default_value_t = 700, value_parser = clap::value_parser!(u32).range(150..=i64::from(MAX_SIDE)))]
    pub height: u32,
    /// Colors.
    ///
    /// Light for documents, dark for dark slides.
    #[arg(long, value_enum, default_value_t = ThemeArg::Light)]
    pub theme: ThemeArg,
    /// Title drawn above the chart [default: the chart's own].
    ///
    /// Title drawn above the chart [default: the chart's own, e.g. "Output throughput vs
    /// concurrency"]. An empty title leaves the line blank.
    #[arg(long)]
    pub title: Option<String>,
}

/// `llmsweep plot`: draw one chart of the bundles into an SVG or PNG file; say where it went.
pub(crate) fn run(a: PlotArgs) -> anyhow::Result<ExitCode> {
    let w = plot::run(&plot::PlotRequest {
        files: a.files,
        kind: chart_kind(a.chart),
        name: chart_name(a.chart),
        output: a.output,
        size: (a.width, a.height),
        theme: match a.theme {
            ThemeArg::Light => Theme::LIGHT,
            ThemeArg::Dark => Theme::DARK,
        },
        title: a.title,
    })?;
    for label in &w.left_out {
        let note = format!(
            "note: {label} has no {} sweep; it is left out of this chart",
            llmsweep_shared::compare::kind_name(w.sweep)
        );
        errln!("{}", inert(&note));
    }
    let said = format!(
        "chart: {} ({} {}x{}, {} KB, {} run{}: {})",
        w.path.display(),
        w.format.name(),
        w.size.0,
        w.size.1,
        w.bytes.div_ceil(1024),
        w.runs.len(),
        if w.runs.len() == 1 { "" } else { "s" },
        w.runs.join(", ")
    );
    outln!("{}", inert(&said));
    Ok(ExitCode::SUCCESS)
}

/// The shared chart a `--chart` name stands for.
fn chart_kind(chart: ChartArg) -> ChartKind {
    match chart {
        ChartArg::Throughput => ChartKind::OutputTokS,
        ChartArg::Decode => ChartKind::DecodeVsConcurrency,
        ChartArg::Ttft => ChartKind::TtftVsConcurrency,
        ChartArg::Tradeoff => ChartKind::Tradeoff,
        ChartArg::Context => ChartKind::TtftVsLength,
        ChartArg::Prefill => ChartKind::PrefillVsLength,
        ChartArg::DecodeVsLength => ChartKind::DecodeVsLength,
        ChartArg::RateTtft => ChartKind::RateTtft,
        ChartArg::RateTpot => ChartKind::RateTpot,
        ChartArg::RateE2e => ChartKind::RateE2e,
        ChartArg::Goodput => ChartKind::RateGoodput,
        ChartArg::Lag => ChartKind::RateLag,
    }
}

/// The name `--chart` was given as, e.g. `context`.
fn chart_name(chart: ChartArg) -> String {
    chart
        .to_possible_value()
        .map_or_else(|| format!("{chart:?}"), |v| v.get_name().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use llmsweep_shared::bundle::SweepKind;

    #[test]
    fn every_chart_name_maps_to_its_sweep() {
        for chart in ChartArg::value_variants() {
            let kind = chart_kind(*chart);
            let context = matches!(
                chart,
                ChartArg::Context | ChartArg::Prefill | ChartArg::DecodeVsLength
            );
            assert_eq!(kind.sweep() == SweepKind::Context, context, "{chart:?}");
            let rate = matches!(
                chart,
                ChartArg::RateTtft
                    | ChartArg::RateTpot
                    | ChartArg::RateE2e
                    | ChartArg::Goodput
                    | ChartArg::Lag
            );
            assert_eq!(kind.sweep() == SweepKind::Rate, rate, "{chart:?}");
        }
        assert_eq!(chart_name(ChartArg::DecodeVsLength), "decode-vs-length");
    }
}
