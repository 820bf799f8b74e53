//! The OpenAI-compatible dialects: what a request body looks like, and what a streamed chunk says.

pub(crate) mod chunk;
pub(crate) mod request;
mod scan;

pub(crate) use chunk::{HTML_ANSWER, Usage, error_message, html_page, is_html};
// Public through `bench_api`, for the benchmarks.
pub use chunk::{ChunkEvent, ChunkReader, parse_chunk};
pub(crate) use request::{RequestOptions, body, endpoint};
