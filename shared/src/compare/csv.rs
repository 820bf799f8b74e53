//! One line of CSV, quoted where a field needs it (RFC 4180).

/// One CSV line: fields with a comma, quote or line break are quoted, quotes doubled.
pub fn csv_line(fields: &[String]) -> String {
    fields
        .iter()
        .map(|f| {
            if f.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", f.replace('"', "\"\""))
            } else {
                f.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}
