//! `llmsweep selftest`'s instrument: a loopback endpoint that costs next to nothing, and the
//! levels that drive it with the collector's own client, to find where the client itself is the
//! limit.
//!
//! [`wire`] renders the OpenAI completions events; [`endpoint`] serves them flat out
//! (pre-rendered, as fast as the socket takes them) or scheduled (stamped with their send time);
//! [`measure`] runs one level and computes what the client sustained and its timing errors.

pub(crate) mod endpoint;
pub(crate) mod measure;
pub(crate) mod wire;

pub(crate) use endpoint::{Endpoint, Pacing, PacingJson};
pub(crate) use measure::{EndpointAt, LevelSpec, run_level};
