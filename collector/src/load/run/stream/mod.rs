//! Turning a streamed HTTP response into a request record: bytes → SSE events → timed trace.

pub mod sse;
pub mod trace;
