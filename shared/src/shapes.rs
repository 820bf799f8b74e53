//! Request shapes: `throughput --shapes 128x128,1000x1000,4000x500` runs one concurrency sweep
//! per input/output pair into one bundle. A bundle with several throughput sweeps is *shaped*:
//! `compare` pairs its sweeps by shape, and the charts and tables show one curve per run and
//! shape ([`split`]).

use crate::bundle::{Bundle, Sweep, SweepKind};

/// Most shapes one run may ask for.
pub const MAX_SHAPES: usize = 16;

/// Input and output tokens of a throughput sweep's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shape {
    pub input: u64,
    pub output: u64,
}

impl Shape {
    /// A throughput sweep's shape: its input length (the first, for a sweep that recorded
    /// several) and its output length. `None` for other kinds.
    pub fn of(s: &Sweep) -> Option<Shape> {
        (s.kind == SweepKind::Throughput).then(|| Shape {
            input: s.input_lens.first().copied().unwrap_or(0),
            output: s.output_len,
        })
    }

    /// `1000×500`: input × output tokens.
    pub fn name(&self) -> String {
        format!("{}×{}", self.input, self.output)
    }
}

/// Whether `b` has several throughput sweeps (a run with `--shapes`).
pub fn shaped(b: &Bundle) -> bool {
    b.sweeps
        .iter()
        .filter(|s| s.kind == SweepKind::Throughput)
        .count()
        > 1
}

/// The sweep of `kind` that `shape` names in `b`: with a shape, the throughput sweep of that
/// shape; without one, the first sweep of the kind.
pub fn sweep_at(b: &Bundle, kind: SweepKind, shape: Option<Shape>) -> Option<&Sweep> {
    match shape {
        Some(want) => b
            .sweeps
            .iter()
            .find(|s| s.kind == kind && Shape::of(s) == Some(want)),
        None => b.sweeps.iter().find(|s| s.kind == kind),
    }
}

/// `b` as the charts and tables show it: itself when it has at most one throughput sweep;
/// otherwise one bundle per throughput sweep, in the run's order, each labelled with its shape
/// (`kpro5 128×128`), the first also keeping the run's other sweeps (context, rate).
pub fn split(b: &Bundle) -> Vec<Bundle> {
    if !shaped(b) {
        return vec![b.clone()];
    }
    let mut out: Vec<Bundle> = Vec::new();
    for (i, s) in b.sweeps.iter().enumerate() {
        let Some(shape) = Shape::of(s) else {
            continue;
        };
        let first = out.is_empty();
        let sweeps = b
            .sweeps
            .iter()
            .enumerate()
            .filter(|&(j, w)| j == i || (first && w.kind != SweepKind::Throughput))
            .map(|(_, w)| w.clone())
            .collect();
        out.push(Bundle {
            label: format!("{} {}", b.label, shape.name()),
            sweeps,
            ..b.clone()
        });
    }
    out
}

/// The shapes `--shapes` asked for, in its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeList(pub Vec<Shape>);

/// [`parse_shapes`] as a list, for a command-line parser.
pub fn parse_shape_list(text: &str) -> Result<ShapeList, String> {
    parse_shapes(text).map(ShapeList)
}

/// Reads `--shapes`: input×output token pairs separated by commas (`128x128,1000x1000`; `x`,
/// `X` or `×`), each at least 1×1, none twice, at most [`MAX_SHAPES`]. The error says what to
/// fix.
pub fn parse_shapes(text: &str) -> Result<Vec<Shape>, String> {
    let mut shapes: Vec<Shape> = Vec::new();
    for part in text.split(',').map(str::trim) {
        let shown = crate::text::inert(part);
        let mut sides = part.split(['x', 'X', '×']).map(str::trim);
        let (Some(i), Some(o), None) = (sides.next(), sides.next(), sides.next()) else {
            return Err(format!(
                "{shown:?} is not a shape: give input×output tokens separated by commas, e.g. 128x128,1000x1000,4000x500"
            ));
        };
        let (Ok(input), Ok(output)) = (i.parse::<u64>(), o.parse::<u64>()) else {
            return Err(format!(
                "{shown:?} is not a shape: give whole numbers of tokens, e.g. 1000x500"
            ));
        };
        if input == 0 || output == 0 {
            return Err(format!(
                "{shown:?} asks for 0 tokens: each shape needs at least 1 input and 1 output token"
            ));
        }
        let shape = Shape { input, output };
        if shapes.contains(&shape) {
            return Err(format!(
                "{} is given twice: give each shape once",
                shape.name()
            ));
        }
        shapes.push(shape);
    }
    if shapes.len() > MAX_SHAPES {
        return Err(format!(
            "{} shapes asked: give at most {MAX_SHAPES}",
            shapes.len()
        ));
    }
    Ok(shapes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sweep(kind: SweepKind, input: u64, output: u64) -> Sweep {
        let mut s = crate::curves::tests::sweep(kind, Vec::new());
        s.input_lens = vec![input];
        s.output_len = output;
        s
    }

    #[test]
    fn shapes_are_read_in_the_order_given_and_bad_ones_say_what_to_give() {
        let s = parse_shapes("128x128, 1000X1000,4000×500").unwrap();
        assert_eq!(
            s.iter().map(Shape::name).collect::<Vec<_>>(),
            ["128×128", "1000×1000", "4000×500"]
        );
        for (bad, says) in [
            ("128", "e.g. 128x128"),
            ("1x2x3", "e.g. 128x128"),
            ("ax5", "whole numbers"),
            ("0x5", "at least 1 input"),
            ("5x5,5x5", "given twice"),
            ("", "e.g. 128x128"),
        ] {
            let e = parse_shapes(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let many: Vec<String> = (1..=17).map(|i| format!("{i}x1")).collect();
        assert!(
            parse_shapes(&many.join(","))
                .unwrap_err()
                .contains("at most 16")
        );
    }

    /// A shaped bundle is shown as one run per shape, the first keeping the other sweeps; a
    /// bundle with one throughput sweep is shown as it is.
    #[test]
    fn a_shaped_bundle_splits_into_one_run_per_shape() {
        let mut b = crate::curves::tests::bundle("kpro5");
        b.sweeps = vec![
            sweep(SweepKind::Throughput, 128, 128),
            sweep(SweepKind::Throughput, 1000, 500),
            sweep(SweepKind::Context, 2000, 100),
        ];
        assert!(shaped(&b));
        let parts = split(&b);
        assert_eq!(
            parts.iter().map(|p| p.label.as_str()).collect::<Vec<_>>(),
            ["kpro5 128×128", "kpro5 1000×500"]
        );
        assert_eq!(parts[0].sweeps.len(), 2);
        assert_eq!(parts[1].sweeps.len(), 1);
        assert_eq!(Shape::of(&parts[1].sweeps[0]).unwrap().name(), "1000×500");
        let want = Some(Shape {
            input: 1000,
            output: 500,
        });
        assert_eq!(
            sweep_at(&b, SweepKind::Throughput, want).map(|s| s.output_len),
            Some(500)
        );
        assert_eq!(
            sweep_at(&b, SweepKind::Throughput, None).map(|s| s.output_len),
            Some(128)
        );
        b.sweeps.remove(1);
        assert!(!shaped(&b));
        assert_eq!(split(&b), vec![b.clone()]);
    }
}
