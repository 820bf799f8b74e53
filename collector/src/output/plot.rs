//! `llmsweep plot`: one of the viewer's charts as an SVG or PNG image, drawn by the same `shared`
//! chart code as the viewer and the report, for slides and documents.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use llmsweep_shared::bundle::SweepKind;
use llmsweep_shared::charts::{self, ChartKind, ChartRun, Theme, run_color};
use llmsweep_shared::compare::kind_name;
use llmsweep_shared::curves::sweep_of;

/// One chart to draw: which, of which bundles, into which file, how.
#[derive(Debug, Clone)]
pub(crate) struct PlotRequest {
    pub files: Vec<PathBuf>,
    pub kind: ChartKind,
    /// The name the chart was asked for by, for messages (e.g. `context`).
    pub name: String,
    pub output: PathBuf,
    pub size: (u32, u32),
    pub theme: Theme,
    pub title: Option<String>,
}

/// The image formats `plot` writes, told by the output file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ImageFormat {
    Svg,
    Png,
}

impl ImageFormat {
    /// The format `path` names by its extension, in any case; an error names both choices.
    pub(crate) fn of(path: &Path) -> anyhow::Result<ImageFormat> {
        let ext = path.extension().and_then(|e| e.to_str());
        match ext.map(str::to_ascii_lowercase).as_deref() {
            Some("svg") => Ok(ImageFormat::Svg),
            Some("png") => Ok(ImageFormat::Png),
            _ => bail!(
                "cannot tell the image format of {} (-o): name the file .svg or .png",
                path.display()
            ),
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            ImageFormat::Svg => "SVG",
            ImageFormat::Png => "PNG",
        }
    }
}

/// What `plot` wrote.
#[derive(Debug, Clone)]
pub(crate) struct Written {
    pub path: PathBuf,
    pub format: ImageFormat,
    pub size: (u32, u32),
    pub bytes: usize,
    /// The sweep the chart draws from.
    pub sweep: SweepKind,
    /// Runs drawn, in their colors' order.
    pub runs: Vec<String>,
    /// Runs without the chart's sweep, left out of the picture.
    pub left_out: Vec<String>,
}

/// The runs as charts draw them: a `--shapes` run as one run per shape, labelled with it.
fn by_shape(
    loaded: Vec<(String, llmsweep_shared::Bundle)>,
) -> Vec<(String, llmsweep_shared::Bundle)> {
    loaded
        .into_iter()
        .flat_map(|(label, b)| {
            if !llmsweep_shared::shapes::shaped(&b) {
                return vec![(label, b)];
            }
            llmsweep_shared::shapes::split(&b)
                .into_iter()
                .map(|part| {
                    let shape = part
                        .sweeps
                        .iter()
                        .find_map(llmsweep_shared::shapes::Shape::of)
                        .map(|s| s.name())
                        .unwrap_or_default();
                    (format!("{label} {shape}"), part)
                })
                .collect()
        })
        .collect()
}

/// Reads the bundles, draws the chart and writes it atomically; nothing is written on an error.
pub(crate) fn run(a: &PlotRequest) -> anyhow::Result<Written> {
    let format = ImageFormat::of(&a.output)?;
    let size = a.size;
    let loaded = by_shape(crate::output::compare::load_runs(&a.files)?);
    let kind = a.kind;
    let sweep = kind.sweep();
    // Colors by the viewer's rule over every run given, so a run left out keeps the others'
    // colors and the argument order changes none.
    let bundles: Vec<&llmsweep_shared::Bundle> = loaded.iter().map(|(_, b)| b).collect();
    let (runs, left_out): (Vec<_>, Vec<_>) = loaded
        .iter()
        .zip(charts::color_slots(&bundles))
        .map(|((label, bundle), slot)| ChartRun {
            label,
            color: run_color(slot),
            bundle,
        })
        .partition(|r| sweep_of(r.bundle, sweep).is_some());
    if runs.is_empty() {
        let record = match sweep {
            SweepKind::Rate => {
                "`llmsweep throughput --url URL --rates 1,2,4` (or --find-max-rate)".to_string()
            }
            other => format!("`llmsweep {}` or `llmsweep run`", kind_name(other)),
        };
        bail!(
            "--chart {} needs a {} sweep and {}; record one with {record}",
            a.name,
            kind_name(sweep),
            none_has(&a.files),
        );
    }
    let mut plot = charts::build(kind, &runs).for_print();
    if plot.is_empty() {
        if kind == ChartKind::RateGoodput {
            bail!(
                "--chart goodput needs a rate sweep run with --goodput (e.g. --goodput ttft=0.5,tpot=0.05); {} counted no goodput",
                runs.iter().map(|r| r.label).collect::<Vec<_>>().join(", ")
            );
        }
        bail!(
            "the {} sweep of {} has no measured point to draw (every point failed or was skipped)",
            kind_name(sweep),
            runs.iter().map(|r| r.label).collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(title) = &a.title {
        plot.title.clone_from(title);
    }
    let theme = a.theme;
    let image = match format {
        ImageFormat::Svg => charts::svg(&plot, &theme, size)?.into_bytes(),
        ImageFormat::Png => charts::png(&plot, &theme, size)?,
    };
    crate::store::write_file_atomic(&a.output, &image)
        .with_context(|| format!("cannot write the chart {} (-o)", a.output.display()))?;
    Ok(Written {
        path: a.output.clone(),
        format,
        size,
        bytes: image.len(),
        sweep,
        runs: runs.iter().map(|r| r.label.to_string()).collect(),
        left_out: left_out.iter().map(|r| r.label.to_string()).collect(),
    })
}

/// "a.json has none", "neither a.json nor b.json has one", "none of a, b, c has one".
fn none_has(files: &[PathBuf]) -> String {
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    match names.as_slice() {
        [one] => format!("{one} has none"),
        [a, b] => format!("neither {a} nor {b} has one"),
        _ => format!("none of {} has one", names.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_format_comes_from_the_extension_in_any_case() {
        assert_eq!(
            ImageFormat::of(Path::new("a/b.SVG")).unwrap(),
            ImageFormat::Svg
        );
        assert_eq!(
            ImageFormat::of(Path::new("b.png")).unwrap(),
            ImageFormat::Png
        );
        for bad in ["chart.jpg", "chart", "png", "chart.svg.txt"] {
            let e = ImageFormat::of(Path::new(bad)).unwrap_err().to_string();
            assert!(e.contains(".svg or .png") && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn missing_files_are_named_in_plain_words() {
        let f = |n: &[&str]| none_has(&n.iter().map(PathBuf::from).collect::<Vec<_>>());
        assert_eq!(f(&["a.json"]), "a.json has none");
        assert_eq!(
            f(&["a.json", "b.json"]),
            "neither a.json nor b.json has one"
        );
        assert_eq!(f(&["a", "b", "c"]), "none of a, b, c has one");
    }
}
