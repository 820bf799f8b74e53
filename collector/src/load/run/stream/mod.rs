//! Turning a streamed HTTP response into a request record: bytes → SSE events → timed trace.

pub(crate) mod sse;
pub(crate) mod trace;
