//! One line of CSV, quoted where a field needs it (RFC 4180).

/// One CSV line: a field a spreadsheet would evaluate gets a `'` first (see
/// [`crate::text::csv_cell`]); fields with a comma, quote or line break are quoted, quotes
/// doubled.
pub fn csv_line(fields: &[String]) -> String {
    fields
        .iter()
        .map(|f| {
            let f = crate::text::csv_cell(f);
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}
