//! Reading a bundle: the one place a file's bytes become a [`Bundle`] — gzip told apart from
//! plain JSON by its magic bytes, inflated up to a cap, the schema checked, older majors
//! migrated, and every refusal a sentence a person can act on.

use std::io::{BufRead, Read};

use super::{Bundle, SCHEMA_MAJOR, SCHEMA_PREFIX};

/// The most bytes a gzip-compressed bundle may inflate to. A bundle of a million requests is
/// about 300 MB of JSON; a file that inflates past this is refused before it fills the memory
/// (a 1 MB gzip of zeros inflates to 1 GB).
pub const MAX_INFLATED_BYTES: usize = 512 * 1024 * 1024;

/// The first two bytes of every gzip file (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Why a file could not be read as a bundle.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "not valid JSON: {literal} at line {line} column {column} (Python's json writes {literal} for a missing or infinite number; JSON has no such value)"
    )]
    PythonLiteral {
        literal: &'static str,
        line: usize,
        column: usize,
    },
    #[error("not an llmsweep bundle: {0}")]
    NotABundle(String),
    #[error(
        "written by a newer llmsweep (schema {found}); this version reads up to {SCHEMA_PREFIX}{supported}: upgrade llmsweep to open it"
    )]
    NewerSchema { found: String, supported: u32 },
    #[error("bundle is damaged: {0}")]
    Invalid(String),
    #[error("the file is empty")]
    Empty,
    #[error("the gzip data is damaged or cut short ({0})")]
    Gzip(String),
    #[error(
        "the file inflates to more than {} MB, the most a bundle may hold; is it a bundle?",
        .limit / (1024 * 1024)
    )]
    TooLarge { limit: usize },
    #[error("not a text file (invalid UTF-8 at byte {at}); expected a .json or .json.gz bundle")]
    NotText { at: usize },
    #[error(
        "an HTML page, not a bundle (an llmsweep report?): give the .json or .json.gz bundles the runs wrote"
    )]
    Html,
}

/// What a text that is not a readable bundle holds at its top: an object's `schema` (other
/// fields are skipped without being built), or which other kind of JSON value it is.
enum Head {
    Object { schema: Option<serde_json::Value> },
    Other(&'static str),
}

impl<'de> serde::Deserialize<'de> for Head {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Head, D::Error> {
        d.deserialize_any(HeadVisitor)
    }
}

struct HeadVisitor;

impl<'de> serde::de::Visitor<'de> for HeadVisitor {
    type Value = Head;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut schema = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "schema" {
                schema = Some(map.next_value()?);
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(Head::Object { schema })
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Head, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Head::Other("an array"))
    }

    fn visit_str<E>(self, _: &str) -> Result<Head, E> {
        Ok(Head::Other("a string"))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Head, E> {
        Ok(Head::Other("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Head, E> {
        Ok(Head::Other("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Head, E> {
        Ok(Head::Other("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Head, E> {
        Ok(Head::Other("a number"))
    }

    fn visit_unit<E>(self) -> Result<Head, E> {
        Ok(Head::Other("null"))
    }
}

/// The non-JSON literal Python's `json` module writes for NaN and ±∞ (`NaN`, `Infinity`,
/// `-Infinity`) when `text` has one at `line` and `column` (1-based, as serde_json counts; a
/// parser stops one byte into `-Infinity`), with the column it starts at.
pub(super) fn python_literal_at(
    text: &str,
    line: usize,
    column: usize,
) -> Option<(&'static str, usize)> {
    let row = text.split_inclusive('\n').nth(line.checked_sub(1)?)?;
    let at = column.checked_sub(1)?;
    let starts = |i: usize, l: &str| row.get(i..).is_some_and(|r| r.starts_with(l));
    if at > 0 && starts(at - 1, "-Infinity") {
        return Some(("-Infinity", column - 1));
    }
    ["NaN", "Infinity", "-Infinity"]
        .into_iter()
        .find(|l| starts(at, l))
        .map(|l| (l, column))
}

/// A JSON syntax error, named as a Python literal when it is one.
fn syntax_error(text: &str, e: serde_json::Error) -> BundleError {
    if looks_like_html(text) {
        return BundleError::Html;
    }
    match python_literal_at(text, e.line(), e.column()) {
        Some((literal, column)) => BundleError::PythonLiteral {
            literal,
            line: e.line(),
            column,
        },
        None => BundleError::Json(e),
    }
}

/// Whether a text that is not JSON starts as an HTML page does (`<!DOCTYPE html>`, `<html`).
fn looks_like_html(text: &str) -> bool {
    let head = text.trim_start().as_bytes();
    let head = &head[..head.len().min(64)];
    [&b"<!doctype html"[..], b"<html"]
        .iter()
        .any(|tag| head.len() >= tag.len() && head[..tag.len()].eq_ignore_ascii_case(tag))
}

impl Bundle {
    /// Reads a bundle from a file's bytes: plain JSON, or gzip-compressed JSON (told by its
    /// magic bytes, not by a name, so a renamed file or an already inflated download still
    /// reads), inflated up to [`MAX_INFLATED_BYTES`] with its CRC and length checked.
    pub fn from_bytes(bytes: &[u8]) -> Result<Bundle, BundleError> {
        Bundle::from_json(&decode_text(bytes, MAX_INFLATED_BYTES)?)
    }

    /// Parses a bundle, refusing newer schemas and migrating older ones.
    ///
    /// The text is parsed straight into the types (a tree of `serde_json::Value`s first takes
    /// three times as long on a bundle of 100,000 requests, which the viewer opens in a
    /// browser); only when that fails is it read again, for the schema, to say why.
    pub fn from_json(text: &str) -> Result<Bundle, BundleError> {
        match serde_json::from_str::<Bundle>(text) {
            Ok(b) => {
                let schema = serde_json::Value::String(b.schema.clone());
                check_schema(Some(&schema))?;
                // Major 1 is the first schema; once there is a `/2`, older majors are migrated here.
                Ok(settled(b))
            }
            Err(e) => {
                let head: Head = serde_json::from_str(text).map_err(|e| syntax_error(text, e))?;
                match head {
                    Head::Object { schema } => check_schema(schema.as_ref())?,
                    Head::Other(kind) => {
                        return Err(BundleError::NotABundle(format!(
                            "the file holds {kind}; expected a JSON object with \"schema\": \"{SCHEMA_PREFIX}{SCHEMA_MAJOR}\""
                        )));
                    }
                }
                Err(BundleError::Invalid(e.to_string()))
            }
        }
    }

    /// Refuses a bundle parsed by other means (a streaming reader) whose schema this reader
    /// does not know, as [`Bundle::from_json`] does.
    pub fn check_schema(&self) -> Result<(), BundleError> {
        check_schema(Some(&serde_json::Value::String(self.schema.clone())))
    }

    /// Like [`Bundle::from_json`], from an already parsed JSON value.
    pub fn from_value(value: serde_json::Value) -> Result<Bundle, BundleError> {
        check_schema(value.get("schema"))?;
        // Major 1 is the first schema; a future `/2` reader migrates `/1` values here.
        serde_json::from_value(value)
            .map(settled)
            .map_err(|e| BundleError::Invalid(e.to_string()))
    }

    /// Reads a bundle as it streams from `reader` (plain or gzip JSON, told by its magic
    /// bytes), so the file's text is never held whole beside the bundle: a bundle of a million
    /// requests is read in about the memory its records take. At most [`MAX_INFLATED_BYTES`]
    /// are read; a longer stream is cut there and fails to parse.
    pub fn from_reader(mut reader: impl BufRead) -> Result<Bundle, BundleError> {
        let head = reader
            .fill_buf()
            .map_err(|e| BundleError::Invalid(e.to_string()))?;
        if head.is_empty() {
            return Err(BundleError::Empty);
        }
        let limit = MAX_INFLATED_BYTES as u64;
        let parsed: Result<Bundle, _> = if is_gzip(head) {
            let inflated = flate2::read::MultiGzDecoder::new(reader).take(limit);
            serde_json::from_reader(std::io::BufReader::with_capacity(1 << 20, inflated))
        } else {
            serde_json::from_reader(reader.take(limit))
        };
        let bundle = parsed.map_err(|e| BundleError::Invalid(e.to_string()))?;
        bundle.check_schema()?;
        Ok(settled(bundle))
    }

    /// Serialises the bundle as pretty JSON (the on-disk form).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }
}

/// A bundle as read, its label on one line: a label is shown in terminals, tables, Markdown and
/// CSV, where a line break or a control character in it could forge a line of its own (see
/// [`crate::text::one_line`]); such characters are kept as their escapes.
fn settled(mut b: Bundle) -> Bundle {
    if let std::borrow::Cow::Owned(label) = crate::text::one_line(&b.label) {
        b.label = label;
    }
    b
}

/// The text of a file: inflated when it is gzip (at most `cap` bytes), checked to be UTF-8.
pub fn decode_text(bytes: &[u8], cap: usize) -> Result<String, BundleError> {
    if bytes.is_empty() {
        return Err(BundleError::Empty);
    }
    let plain = if is_gzip(bytes) {
        gunzip(bytes, cap)?
    } else {
        bytes.to_vec()
    };
    String::from_utf8(plain).map_err(|e| BundleError::NotText {
        at: e.utf8_error().valid_up_to(),
    })
}

/// Whether `bytes` start like a gzip file.
pub fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&GZIP_MAGIC)
}

/// Inflates gzip data (every member, as `gzip` itself does) into at most `cap` bytes; the CRC
/// and length of each member are checked, so a damaged or cut-short file is refused, not
/// half-read.
pub fn gunzip(bytes: &[u8], cap: usize) -> Result<Vec<u8>, BundleError> {
    let mut out = Vec::new();
    let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
    flate2::read::MultiGzDecoder::new(bytes)
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|e| BundleError::Gzip(e.to_string()))?;
    if out.len() > cap {
        return Err(BundleError::TooLarge { limit: cap });
    }
    Ok(out)
}

/// Refuses a missing, malformed or newer schema.
fn check_schema(schema: Option<&serde_json::Value>) -> Result<(), BundleError> {
    let schema = match schema {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(_) => return Err(BundleError::NotABundle("`schema` is not a string".into())),
        None => {
            return Err(BundleError::NotABundle(
                "no `schema` field (expected \"llmsweep.bundle/1\")".into(),
            ));
        }
    };
    let major = schema_major(&schema)?;
    if major > SCHEMA_MAJOR {
        return Err(BundleError::NewerSchema {
            found: schema,
            supported: SCHEMA_MAJOR,
        });
    }
    Ok(())
}

fn schema_major(schema: &str) -> Result<u32, BundleError> {
    let Some(rest) = schema.strip_prefix(SCHEMA_PREFIX) else {
        return Err(BundleError::NotABundle(format!(
            "schema is {schema:?}, expected \"{SCHEMA_PREFIX}<version>\""
        )));
    };
    let major = rest.split('.').next().unwrap_or_default();
    major
        .parse()
        .map_err(|_| BundleError::NotABundle(format!("schema version {rest:?} is not a number")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const MINIMAL: &str = include_str!("../../tests/fixtures/minimal.json");
    /// Made with `gzip -k`: the header carries the file name (FNAME).
    const MINIMAL_GZ: &[u8] = include_bytes!("../../tests/fixtures/minimal.json.gz");

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn err(bytes: &[u8]) -> String {
        Bundle::from_bytes(bytes).unwrap_err().to_string()
    }

    #[test]
    fn plain_and_gzip_read_alike() {
        assert_eq!(
            MINIMAL_GZ[3] & 8,
            8,
            "the fixture has a file name in its header"
        );
        let plain = Bundle::from_bytes(MINIMAL.as_bytes()).unwrap();
        assert_eq!(plain.label, "minimal");
        assert_eq!(Bundle::from_bytes(MINIMAL_GZ).unwrap(), plain);
        assert_eq!(
            Bundle::from_bytes(&gzip(MINIMAL.as_bytes())).unwrap(),
            plain
        );
    }

    #[test]
    fn truncated_gzip_is_an_error_not_a_panic() {
        for cut in [5, 20, MINIMAL_GZ.len() / 2, MINIMAL_GZ.len() - 3] {
            let e = err(&MINIMAL_GZ[..cut]);
            assert!(e.contains("damaged or cut short"), "{cut}: {e}");
        }
    }

    #[test]
    fn a_flipped_bit_fails_the_crc() {
        let mut gz = MINIMAL_GZ.to_vec();
        let crc_at = gz.len() - 8;
        gz[crc_at] ^= 1;
        assert!(err(&gz).contains("damaged or cut short"), "{}", err(&gz));
    }

    #[test]
    fn a_gzip_bomb_is_refused_at_the_cap_without_inflating_it_whole() {
        // 64 MiB of zeros (a few hundred KB of gzip) against a 1 MiB cap: refused after
        // inflating 1 MiB + 1 byte.
        let bomb = gzip(&vec![0u8; 64 << 20]);
        assert!(bomb.len() < 1 << 20, "{} bytes", bomb.len());
        let e = decode_text(&bomb, 1 << 20).unwrap_err();
        assert!(
            matches!(e, BundleError::TooLarge { limit } if limit == 1 << 20),
            "{e}"
        );
        assert!(e.to_string().contains("more than 1 MB"), "{e}");
        // Exactly at the cap is still read.
        assert_eq!(gunzip(&gzip(&[b' '; 1000]), 1000).unwrap().len(), 1000);
    }

    #[test]
    fn several_gzip_members_are_one_file() {
        let (a, b) = MINIMAL.split_at(MINIMAL.len() / 2);
        let mut two = gzip(a.as_bytes());
        two.extend(gzip(b.as_bytes()));
        assert_eq!(Bundle::from_bytes(&two).unwrap().label, "minimal");
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert_eq!(err(b""), "the file is empty");
        assert!(err(b"hello").starts_with("not valid JSON"));
        // A report handed over for its bundles is named for what it is.
        let html = b"<!DOCTYPE html>\n<html lang=\"en\"><head><title>llmsweep report</title>";
        assert_eq!(
            err(html),
            "an HTML page, not a bundle (an llmsweep report?): give the .json or .json.gz bundles the runs wrote"
        );
        assert_eq!(err(b"  <HTML><body>"), err(html));
        assert!(err(b"<3").starts_with("not valid JSON"));
        assert_eq!(
            err(b"42"),
            "not an llmsweep bundle: the file holds a number; expected a JSON object with \"schema\": \"llmsweep.bundle/1\""
        );
        assert!(err(b"{\"a\": 1}").starts_with("not an llmsweep bundle"));
        assert!(err(&[0xff, 0xfe, 0x00]).contains("not a text file"));
        let newer = MINIMAL.replace("llmsweep.bundle/1", "llmsweep.bundle/9");
        assert!(err(newer.as_bytes()).contains("newer llmsweep"));
        assert!(err(&MINIMAL.as_bytes()[..MINIMAL.len() / 2]).contains("EOF"));
    }

    /// Issue 10: valid JSON of the wrong shape was "not valid JSON" (an array) or "damaged".
    #[test]
    fn valid_json_of_another_shape_is_not_a_bundle() {
        for (text, kind) in [
            ("[1, 2, 3]", "an array"),
            ("[\"llmsweep.bundle/1\"]", "an array"),
            ("\"hello\"", "a string"),
            ("null", "null"),
            ("true", "a boolean"),
            ("-1.5", "a number"),
        ] {
            let e = err(text.as_bytes());
            assert!(
                e.starts_with(&format!("not an llmsweep bundle: the file holds {kind}; expected a JSON object with \"schema\"")),
                "{text}: {e}"
            );
        }
        assert!(err(b"{}").contains("no `schema` field"));
        assert!(err(b"[1, 2,").starts_with("not valid JSON"));
    }

    /// A label with a line break or a bidirectional override would forge a line (a verdict of
    /// its own) or reorder the text after it wherever it is shown: read, it is one line.
    #[test]
    fn a_label_is_read_on_one_line_with_its_controls_escaped() {
        let mut b: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/fixtures/bundle-v1-run.json")).unwrap();
        b["label"] = "kpro5\n  throughput sweep: faster\u{202e}x".into();
        let text = b.to_string();
        let want = "kpro5\\u{a}  throughput sweep: faster\\u{202e}x";
        assert_eq!(Bundle::from_json(&text).unwrap().label, want);
        assert_eq!(Bundle::from_reader(text.as_bytes()).unwrap().label, want);
        assert_eq!(Bundle::from_value(b).unwrap().label, want);
    }

    #[test]
    fn python_nan_and_infinity_are_named() {
        let text = "{\"schema\": \"llmsweep.bundle/1\",\n  \"x\": NaN}";
        assert_eq!(
            err(text.as_bytes()),
            "not valid JSON: NaN at line 2 column 8 (Python's json writes NaN for a missing or infinite number; JSON has no such value)"
        );
        let e = err(b"{\"schema\": -Infinity}");
        assert!(
            e.starts_with("not valid JSON: -Infinity at line 1 column 12"),
            "{e}"
        );
        assert_eq!(python_literal_at("[Infinity]", 1, 2), Some(("Infinity", 2)));
        assert_eq!(python_literal_at("[Infinity]", 3, 2), None);
        assert_eq!(python_literal_at("[Infinity]", 1, 99), None);
    }
}
