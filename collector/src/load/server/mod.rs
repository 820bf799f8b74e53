//! What is known of the two ends: the server's fingerprint ([`probe`]) and tokenizer
//! ([`tokenize`]), this client host's facts ([`host`]) and its measured capacity ([`capacity`]).

pub(crate) mod capacity;
pub(crate) mod host;
pub(crate) mod probe;
pub(crate) mod tokenize;
