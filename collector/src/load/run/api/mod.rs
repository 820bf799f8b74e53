//! The OpenAI-compatible dialects: what a request body looks like, and what a streamed chunk says.

pub mod chunk;
pub mod request;

pub use chunk::{ChunkEvent, Usage, error_message, html_page, is_html, parse_chunk};
pub use request::{RequestOptions, body, endpoint};
