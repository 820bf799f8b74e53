//! Bytes of a file or a download → a bundle, or a reason a person can act on.
//!
//! The reading itself is `shared`'s ([`Bundle::from_bytes`]): `.json` and `.json.gz` are told
//! apart by content, a gzip file is inflated up to a cap with its CRC checked, and every refusal
//! is a sentence.

use llmsweep_shared::Bundle;

/// Reads a bundle from raw bytes (plain or gzip-compressed JSON).
pub fn parse(bytes: &[u8]) -> Result<Bundle, String> {
    Bundle::from_bytes(bytes).map_err(|e| e.to_string())
}

/// Why a `?bundle=` URL on `origin` is not loaded into a page on `page_origin`: a link must not
/// make the page show another site's numbers as if they were this folder's, nor tell that site
/// who opened it.
pub fn remote_refusal(origin: &str, page_origin: &str) -> String {
    format!(
        "it is on another site ({origin}) than this page ({page_origin}), and this \
         viewer loads ?bundle= links only from its own site. If you trust it, download the file \
         and open it here, or start llmsweep view with --allow-remote-bundles."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = include_str!("../../shared/tests/fixtures/minimal.json");
    const MINIMAL_GZ: &[u8] = include_bytes!("../../shared/tests/fixtures/minimal.json.gz");

    #[test]
    fn plain_and_gzip_bundles_load_and_bad_files_say_why() {
        assert_eq!(parse(MINIMAL.as_bytes()).unwrap().label, "minimal");
        assert_eq!(parse(MINIMAL_GZ).unwrap().label, "minimal");
        assert_eq!(parse(b"").unwrap_err(), "the file is empty");
        assert!(parse(&MINIMAL_GZ[..20]).unwrap_err().contains("cut short"));
    }

    #[test]
    fn a_refused_remote_bundle_names_both_sites_and_the_way_round() {
        let m = remote_refusal("https://evil.example", "http://127.0.0.1:8484");
        assert!(m.contains("(https://evil.example)") && m.contains("(http://127.0.0.1:8484)"));
        assert!(m.contains("--allow-remote-bundles"), "{m}");
    }
}
