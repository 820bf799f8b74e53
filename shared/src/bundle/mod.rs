//! The bundle: llmsweep's self-describing JSON result file.
//!
//! # Compatibility promise
//!
//! A bundle carries `"schema": "llmsweep.bundle/<major>"`. Within one major version fields are
//! only ever added, never renamed or given a new meaning, so a reader ignores fields it does not
//! know and every field added after `/1` is optional. A bundle of a newer major version is refused
//! with [`BundleError::NewerSchema`]; older majors are migrated on read by [`Bundle::from_json`].
//!
//! Units are stated in field names: `_s` is seconds, `_tok_s` tokens per second, `_bytes` bytes.
//! Times inside a point are offsets in seconds from the start of that point's first request.

mod gauges;
mod read;
mod types;

pub use gauges::{PeakAt, RunPeaks, kv_percent_text, run_peaks};
pub use read::{BundleError, MAX_INFLATED_BYTES, decode_text, gunzip, is_gzip};
pub use types::*;

/// The schema id this crate writes.
pub const SCHEMA: &str = "llmsweep.bundle/1";
/// The schema family prefix; the text after it is the major version.
pub const SCHEMA_PREFIX: &str = "llmsweep.bundle/";
/// The newest major version this crate reads.
pub const SCHEMA_MAJOR: u32 = 1;
