//! The one small text table every terminal table is: the live tables of a run and of
//! `selftest`, printed a row at a time in columns of fixed width, and `compare`'s tables, whose
//! columns are as wide as their widest cell. Nothing is ever cut: a wider cell widens its own row.

/// A column of a table printed a row at a time: its header and its width.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Column {
    pub(crate) header: &'static str,
    pub(crate) width: usize,
}

/// The header line of `columns`, right-aligned and ` | `-separated.
pub(crate) fn header(columns: &[Column]) -> String {
    let cells: Vec<&str> = columns.iter().map(|c| c.header).collect();
    row(columns, &cells)
}

/// One row: each cell right-aligned to its column (a cell wider than its column widens only
/// this row), ` | `-separated; missing cells are left out.
pub(crate) fn row<S: AsRef<str>>(columns: &[Column], cells: &[S]) -> String {
    let cells: Vec<String> = cells
        .iter()
        .zip(columns)
        .map(|(v, c)| format!("{:>w$}", v.as_ref(), w = c.width))
        .collect();
    cells.join(" | ")
}

/// Rows laid out with every column as wide as its widest cell, left-aligned, two spaces apart,
/// each line indented by two spaces; trailing spaces are trimmed.
pub(crate) fn fitted(rows: &[Vec<String>]) -> Vec<String> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            let line: Vec<String> = r
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell:<w$}"))
                .collect();
            format!("  {}", line.join("  ").trim_end())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: &[Column] = &[
        Column {
            header: "C",
            width: 4,
        },
        Column {
            header: "tok/s",
            width: 7,
        },
    ];

    #[test]
    fn fixed_columns_right_align_and_a_wide_cell_widens_only_its_row() {
        assert_eq!(header(COLS), "   C |   tok/s");
        assert_eq!(row(COLS, &["16", "1394.0"]), "  16 |  1394.0");
        assert_eq!(row(COLS, &["16", "123456789.0"]), "  16 | 123456789.0");
    }

    #[test]
    fn fitted_columns_are_as_wide_as_their_widest_cell() {
        let rows = vec![
            vec!["metric".to_string(), "a".into()],
            vec!["TTFT".to_string(), "0.25 s".into()],
        ];
        assert_eq!(fitted(&rows), ["  metric  a", "  TTFT    0.25 s"]);
    }
}
