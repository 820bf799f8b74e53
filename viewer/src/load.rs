//! Bytes of a file or a download → a bundle, or a reason a person can act on.
//!
//! `.json` and `.json.gz` are told apart by content (the gzip magic bytes), not by name, so a
//! server that already inflated a `.gz` download, or a renamed file, still loads.

use llmsweep_shared::Bundle;

/// The first two bytes of every gzip file.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads a bundle from raw bytes (plain or gzip-compressed JSON).
pub fn parse(bytes: &[u8]) -> Result<Bundle, String> {
    let text = decode(bytes)?;
    Bundle::from_json(&text).map_err(|e| e.to_string())
}

/// The text of a file: gunzipped when it is gzip, and checked to be UTF-8.
pub fn decode(bytes: &[u8]) -> Result<String, String> {
    if bytes.is_empty() {
        return Err("the file is empty".into());
    }
    let plain = if bytes.starts_with(&GZIP_MAGIC) {
        gunzip(bytes)?
    } else {
        bytes.to_vec()
    };
    String::from_utf8(plain).map_err(|e| {
        format!(
            "not a text file (invalid UTF-8 at byte {}); expected a .json or .json.gz bundle",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Inflates a single-member gzip file (RFC 1952). The length in the trailer is checked, so a
/// truncated download is reported rather than half-read; the CRC is not.
pub fn gunzip(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let start = gzip_body_start(bytes)?;
    let body = &bytes[start..];
    let out = miniz_oxide::inflate::decompress_to_vec(body)
        .map_err(|e| format!("the gzip data is damaged or cut short ({:?})", e.status))?;
    if bytes.len() >= start + 8 {
        let t = &bytes[bytes.len() - 4..];
        let isize = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        if isize != out.len() as u32 {
            return Err("the gzip file is cut short (its length trailer does not match)".into());
        }
    }
    Ok(out)
}

/// Offset of the deflate stream: after the fixed header and the optional fields `FLG` announces.
fn gzip_body_start(b: &[u8]) -> Result<usize, String> {
    const FHCRC: u8 = 2;
    const FEXTRA: u8 = 4;
    const FNAME: u8 = 8;
    const FCOMMENT: u8 = 16;
    let short = || "the gzip header is cut short".to_string();
    if b.len() < 10 {
        return Err(short());
    }
    if b[2] != 8 {
        return Err(format!("unknown gzip compression method {}", b[2]));
    }
    let flags = b[3];
    let mut pos = 10;
    if flags & FEXTRA != 0 {
        let len = b.get(pos..pos + 2).ok_or_else(short)?;
        pos += 2 + u16::from_le_bytes([len[0], len[1]]) as usize;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let end = b.get(pos..).and_then(|r| r.iter().position(|&c| c == 0));
            pos += end.ok_or_else(short)? + 1;
        }
    }
    if flags & FHCRC != 0 {
        pos += 2;
    }
    if pos > b.len() {
        return Err(short());
    }
    Ok(pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = include_str!("../../shared/tests/fixtures/minimal.json");
    const MINIMAL_GZ: &[u8] = include_bytes!("../tests/fixtures/minimal.json.gz");

    #[test]
    fn plain_json_parses() {
        assert_eq!(parse(MINIMAL.as_bytes()).unwrap().label, "minimal");
    }

    #[test]
    fn gzip_made_by_gzip_parses() {
        // Made with `gzip -k`: the header carries the file name (FNAME).
        assert_eq!(MINIMAL_GZ[3] & 8, 8);
        assert_eq!(decode(MINIMAL_GZ).unwrap(), MINIMAL);
    }

    #[test]
    fn truncated_gzip_is_an_error_not_a_panic() {
        for cut in [5, 20, MINIMAL_GZ.len() / 2, MINIMAL_GZ.len() - 3] {
            let err = decode(&MINIMAL_GZ[..cut]).unwrap_err();
            assert!(
                err.contains("cut short") || err.contains("damaged"),
                "{cut}: {err}"
            );
        }
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert_eq!(parse(b"").unwrap_err(), "the file is empty");
        assert!(parse(b"hello").unwrap_err().starts_with("not valid JSON"));
        assert!(
            parse(b"{\"a\": 1}")
                .unwrap_err()
                .starts_with("not an llmsweep bundle")
        );
        assert!(
            parse(&[0xff, 0xfe, 0x00])
                .unwrap_err()
                .contains("not a text file")
        );
        let newer = MINIMAL.replace("llmsweep.bundle/1", "llmsweep.bundle/9");
        assert!(
            parse(newer.as_bytes())
                .unwrap_err()
                .contains("newer llmsweep")
        );
        let cut = &MINIMAL[..MINIMAL.len() / 2];
        assert!(parse(cut.as_bytes()).unwrap_err().contains("EOF"));
    }
}
