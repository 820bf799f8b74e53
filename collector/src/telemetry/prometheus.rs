//! The Prometheus text exposition format, parsed without I/O: text in, samples out.
//!
//! Accepted, as servers write it: `# HELP` and `# TYPE` lines (other `#` lines are comments),
//! samples `name{label="value",…} value [timestamp_ms]`, label values with the escapes `\\`,
//! `\"` and `\n`, a trailing comma in the label set, spaces or tabs between tokens, `NaN`,
//! `+Inf` and `-Inf` values, `\r\n` line ends, OpenMetrics' `# EOF` and exemplars (ignored), and
//! Prometheus 3's quoted names (`{"my.metric",label="v"}`). A line that does not parse is
//! counted in [`Exposition::bad_lines`] and skipped, so one odd line never hides the others.

use std::collections::BTreeMap;

/// The declared type of a metric family (`# TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    Counter,
    Gauge,
    Histogram,
    Summary,
    /// `untyped`, or anything else a server declares.
    Untyped,
}

impl MetricKind {
    fn from_word(w: &str) -> MetricKind {
        match w {
            "counter" => MetricKind::Counter,
            "gauge" => MetricKind::Gauge,
            "histogram" | "gaugehistogram" => MetricKind::Histogram,
            "summary" => MetricKind::Summary,
            _ => MetricKind::Untyped,
        }
    }
}

/// One sample line.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    /// In the order written.
    pub labels: Vec<(String, String)>,
    /// May be NaN or infinite, as the text says.
    pub value: f64,
    /// Milliseconds since the Unix epoch, when the line carries one.
    pub timestamp_ms: Option<i64>,
}

impl Sample {
    /// The value of label `name`, if the sample has it.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A whole `/metrics` answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exposition {
    pub samples: Vec<Sample>,
    /// Family name → declared type.
    pub types: BTreeMap<String, MetricKind>,
    /// Family name → help text, unescaped.
    pub help: BTreeMap<String, String>,
    /// Lines that were neither blank, comments nor samples.
    pub bad_lines: usize,
}

impl Exposition {
    /// The declared type of the family a sample name belongs to: the name itself, or the name
    /// without a `_total`, `_created`, `_bucket`, `_sum` or `_count` suffix (a counter
    /// `x_total` is declared as `x` in OpenMetrics, as `x_total` by most servers).
    pub fn kind_of(&self, sample_name: &str) -> Option<MetricKind> {
        if let Some(k) = self.types.get(sample_name) {
            return Some(*k);
        }
        ["_total", "_created", "_bucket", "_sum", "_count"]
            .iter()
            .filter_map(|s| sample_name.strip_suffix(s))
            .find_map(|family| self.types.get(family).copied())
    }
}

/// Parses a whole exposition; never fails (see the module documentation).
pub(crate) fn parse(text: &str) -> Exposition {
    let mut out = Exposition::default();
    for raw in text.lines() {
        let line = raw.trim_matches(|c| c == ' ' || c == '\t' || c == '\r');
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            if comment.trim() == "EOF" {
                break;
            }
            read_comment(comment, &mut out);
            continue;
        }
        match parse_sample(line) {
            Some(s) => out.samples.push(s),
            None => out.bad_lines += 1,
        }
    }
    out
}

/// `# HELP name text` and `# TYPE name kind`; any other comment is ignored.
fn read_comment(comment: &str, out: &mut Exposition) {
    let mut parts = comment
        .trim_start_matches([' ', '\t'])
        .splitn(2, [' ', '\t']);
    let keyword = parts.next().unwrap_or_default();
    let rest = parts
        .next()
        .unwrap_or_default()
        .trim_start_matches([' ', '\t']);
    let (name, tail) = match rest.split_once([' ', '\t']) {
        Some((n, t)) => (n, t.trim_start_matches([' ', '\t'])),
        None => (rest, ""),
    };
    if name.is_empty() {
        return;
    }
    match keyword {
        "HELP" => {
            out.help.insert(name.to_string(), unescape(tail, false));
        }
        "TYPE" => {
            out.types
                .insert(name.to_string(), MetricKind::from_word(tail.trim()));
        }
        _ => {}
    }
}

/// One sample line, or `None` when it is malformed.
pub(crate) fn parse_sample(line: &str) -> Option<Sample> {
    let mut cur = Cursor { rest: line };
    let mut name = cur.take_while(is_name_char).to_string();
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut labels = Vec::new();
    let mut blank = cur.skip_blanks();
    if cur.eat('{') {
        read_label_set(&mut cur, &mut name, &mut labels)?;
        blank = cur.skip_blanks();
    }
    if name.is_empty() || !blank {
        return None;
    }
    let value = parse_value(cur.word())?;
    cur.skip_blanks();
    let timestamp_ms = match cur.rest.starts_with('#') || cur.rest.is_empty() {
        true => None,
        false => Some(cur.word().parse::<i64>().ok()?),
    };
    cur.skip_blanks();
    // Only an OpenMetrics exemplar (`# {…} v`) may follow.
    if !(cur.rest.is_empty() || cur.rest.starts_with('#')) {
        return None;
    }
    Some(Sample {
        name,
        labels,
        value,
        timestamp_ms,
    })
}

/// After `{`: `label="value"` pairs up to `}`; a bare quoted string names the metric.
fn read_label_set(
    cur: &mut Cursor<'_>,
    name: &mut String,
    labels: &mut Vec<(String, String)>,
) -> Option<()> {
    loop {
        cur.skip_blanks();
        if cur.eat('}') {
            return Some(());
        }
        let key = if cur.eat('"') {
            cur.quoted()?
        } else {
            let k = cur.take_while(is_name_char);
            (!k.is_empty()).then(|| k.to_string())?
        };
        cur.skip_blanks();
        if cur.eat('=') {
            cur.skip_blanks();
            if !cur.eat('"') {
                return None;
            }
            labels.push((key, cur.quoted()?));
        } else if name.is_empty() {
            *name = key;
        } else {
            return None;
        }
        cur.skip_blanks();
        if !cur.eat(',') {
            cur.skip_blanks();
            return cur.eat('}').then_some(());
        }
    }
}

/// A float as Go's `strconv.ParseFloat` and Python's `repr` write them, plus `±Inf` and `NaN`.
fn parse_value(word: &str) -> Option<f64> {
    match word {
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        w if w
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
            && !w.is_empty() =>
        {
            w.parse().ok()
        }
        _ => None,
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// Undoes `\\`, `\n` and (in label values) `\"`; other backslashes stay as written.
fn unescape(s: &str, quotes: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => out.push('\\'),
            Some('n') => out.push('\n'),
            Some('"') if quotes => out.push('"'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// What is left of a line to read.
struct Cursor<'a> {
    rest: &'a str,
}

impl<'a> Cursor<'a> {
    /// Skips spaces and tabs; whether there were any.
    fn skip_blanks(&mut self) -> bool {
        let before = self.rest.len();
        self.rest = self.rest.trim_start_matches([' ', '\t']);
        self.rest.len() != before
    }

    fn eat(&mut self, c: char) -> bool {
        match self.rest.strip_prefix(c) {
            Some(r) => {
                self.rest = r;
                true
            }
            None => false,
        }
    }

    fn take_while(&mut self, f: impl Fn(char) -> bool) -> &'a str {
        let end = self.rest.find(|c| !f(c)).unwrap_or(self.rest.len());
        let (head, tail) = self.rest.split_at(end);
        self.rest = tail;
        head
    }

    /// Up to the next blank.
    fn word(&mut self) -> &'a str {
        self.take_while(|c| c != ' ' && c != '\t')
    }

    /// After an opening `"`: the string up to the closing one, unescaped.
    fn quoted(&mut self) -> Option<String> {
        let mut escaped = false;
        for (i, c) in self.rest.char_indices() {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => {
                    let raw = &self.rest[..i];
                    self.rest = &self.rest[i + 1..];
                    return Some(unescape(raw, true));
                }
                _ => {}
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> Sample {
        parse_sample(line).unwrap_or_else(|| panic!("should parse: {line:?}"))
    }

    fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn bare_sample_and_timestamp() {
        assert_eq!(
            one("llamacpp:n_decode_total 76"),
            Sample {
                name: "llamacpp:n_decode_total".into(),
                labels: vec![],
                value: 76.0,
                timestamp_ms: None,
            }
        );
        let s = one("http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000");
        assert_eq!(s.labels, labels(&[("method", "post"), ("code", "200")]));
        assert_eq!(s.value, 1027.0);
        assert_eq!(s.timestamp_ms, Some(1_395_066_363_000));
        assert_eq!(s.label("code"), Some("200"));
        assert_eq!(s.label("path"), None);
    }

    #[test]
    fn label_values_keep_escapes_commas_and_braces() {
        let s = one(
            r#"msdos_file_access_time_seconds{path="C:\\DIR\\FILE.TXT",error="Cannot find file:\n\"FILE.TXT\"",x="a,b}c"} 1.458255915e9"#,
        );
        assert_eq!(
            s.labels,
            labels(&[
                ("path", r"C:\DIR\FILE.TXT"),
                ("error", "Cannot find file:\n\"FILE.TXT\""),
                ("x", "a,b}c"),
            ])
        );
        assert_eq!(s.value, 1.458255915e9);
        // An unknown escape is kept as written.
        assert_eq!(one(r#"m{a="x\ty"} 1"#).labels, labels(&[("a", r"x\ty")]));
    }

    #[test]
    fn special_values() {
        assert!(one("m NaN").value.is_nan());
        assert_eq!(one("m +Inf").value, f64::INFINITY);
        assert_eq!(one("m -Inf").value, f64::NEG_INFINITY);
        assert_eq!(one("m{le=\"+Inf\"} 3").label("le"), Some("+Inf"));
        assert_eq!(one("m -0.5e-3").value, -0.0005);
        assert_eq!(one("m 2.1e+07").value, 2.1e7);
    }

    #[test]
    fn lenient_spacing_trailing_comma_empty_set_and_quoted_name() {
        let s = one("m { a = \"1\" ,\tb=\"2\", }\t 3.5 ");
        assert_eq!(s.labels, labels(&[("a", "1"), ("b", "2")]));
        assert_eq!(s.value, 3.5);
        assert_eq!(one("sglang:num_running_reqs{} 0.0").labels, vec![]);
        let s = one(r#"{"my.metric",job="x"} 4"#);
        assert_eq!(s.name, "my.metric");
        assert_eq!(s.labels, labels(&[("job", "x")]));
    }

    #[test]
    fn exemplars_are_ignored() {
        let s = one("foo_bucket{le=\"0.5\"} 17 # {trace_id=\"KOO5S4vxi0o\"} 0.67");
        assert_eq!(s.value, 17.0);
        assert_eq!(s.timestamp_ms, None);
    }

    #[test]
    fn malformed_lines_are_rejected() {
        for bad in [
            "m",
            "m{a=\"1\"}",
            "m{a=1} 2",
            "m{a=\"1\" 2",
            "m{a=\"unterminated} 2",
            "m 1 2 3",
            "m one",
            "m 1 1.5",
            "9m 1",
            "m{a=\"1\"}2",
            "<html>",
        ] {
            assert_eq!(parse_sample(bad), None, "{bad:?} should not parse");
        }
    }

    #[test]
    fn help_type_comments_and_bad_lines() {
        let text = "# A comment\r\n\
                    # HELP vllm:prompt_tokens Number of prefill tokens.\\nSecond line \\\\ ok\r\n\
                    # TYPE vllm:prompt_tokens counter\r\n\
                    vllm:prompt_tokens_total{model_name=\"m\"} 7.0\r\n\
                    vllm:prompt_tokens_created{model_name=\"m\"} 1.7e9\r\n\
                    \r\n\
                    garbage here\r\n\
                    # TYPE g gauge\n\
                    g 1\n\
                    # EOF\n\
                    after_eof 1\n";
        let e = parse(text);
        assert_eq!(e.samples.len(), 3);
        assert_eq!(e.bad_lines, 1);
        assert_eq!(
            e.help.get("vllm:prompt_tokens").map(String::as_str),
            Some("Number of prefill tokens.\nSecond line \\ ok")
        );
        assert_eq!(
            e.kind_of("vllm:prompt_tokens_total"),
            Some(MetricKind::Counter)
        );
        assert_eq!(
            e.kind_of("vllm:prompt_tokens_created"),
            Some(MetricKind::Counter)
        );
        assert_eq!(e.kind_of("g"), Some(MetricKind::Gauge));
        assert_eq!(e.kind_of("after_eof"), None);
    }

    #[test]
    fn html_and_json_give_no_samples() {
        let e = parse("<!doctype html>\n<html><body>Not Found</body></html>\n");
        assert!(e.samples.is_empty());
        assert_eq!(e.bad_lines, 2);
        assert!(
            parse("{\"object\":\"error\",\"message\":\"Not Found\"}")
                .samples
                .is_empty()
        );
    }
}
