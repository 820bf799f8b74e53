//! Support code shared by the integration tests.
//!
//! Each integration test file that needs it declares `mod common;`. Not every
//! file uses every helper, hence the `dead_code` allowance.
#![allow(dead_code)]

pub(crate) mod engines;
pub(crate) mod hostile;
pub(crate) mod sim;
