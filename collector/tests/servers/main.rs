//! llmsweep's own HTTP servers over loopback: the simulated inference server ([`sim`]), the
//! selftest endpoint ([`selftest`]) and the results browser of `llmsweep view` ([`view`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod selftest;
mod sim;
mod view;
