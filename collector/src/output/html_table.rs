//! The one way the report writes an HTML table.

use std::fmt::Write as _;

/// One table of the report's no-JavaScript part, written the one way every table is: its
/// attributes, a caption, a header row, then a row a line. Captions, headers and cells are HTML
/// already (escaped where they hold text from a bundle).
pub(crate) struct HtmlTable {
    pub(crate) attrs: String,
    pub(crate) caption: String,
    pub(crate) headers: Vec<String>,
    pub(crate) rows: Vec<Row>,
}

/// A row of cells; `warn` marks it (`class="warn"`).
pub(crate) struct Row {
    pub(crate) warn: bool,
    pub(crate) cells: Vec<String>,
}

impl Row {
    pub(crate) fn of(cells: Vec<String>) -> Row {
        Row { warn: false, cells }
    }
}

impl HtmlTable {
    pub(crate) fn write(&self, html: &mut String) {
        let _ = write!(
            html,
            "<table{}><caption>{}</caption>\n<tr>",
            self.attrs, self.caption
        );
        for h in &self.headers {
            let _ = write!(html, "<th>{h}</th>");
        }
        html.push_str("</tr>\n");
        for r in &self.rows {
            html.push_str(if r.warn {
                "<tr class=\"warn\">"
            } else {
                "<tr>"
            });
            for c in &r.cells {
                let _ = write!(html, "<td>{c}</td>");
            }
            html.push_str("</tr>\n");
        }
        html.push_str("</table>\n");
    }
}
