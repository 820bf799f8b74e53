//! The boundary: every byte that comes from outside (a server, a store, a file) enters through
//! one guard of its kind, used by every room that takes such input, so a fix is made once.
//!
//! ```text
//! http    the outbound HTTP policy of every client: no redirect followed, timeouts named,
//!         credentials redacted from messages, bodies read under caps
//! file    the capped reader of every local path: regular files only, read through a limit
//! ```
//!
//! Text going out (terminal, Markdown, CSV, HTML, SVG) has its own one policy in
//! [`llmsweep_shared::text`], where the viewer uses it too.

pub(crate) mod file;
pub(crate) mod http;

#[cfg(test)]
mod walk;
