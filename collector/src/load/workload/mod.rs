//! What to send: prompts of the asked length from a seed ([`builder`]), one prompt and its
//! hashes ([`prompt`]), a dataset's lines ([`dataset`]), conversations whose turns resend their
//! history ([`conversation`]), and the open loop's arrival times ([`arrivals`]).

pub(crate) mod arrivals;
pub(crate) mod builder;
pub(crate) mod conversation;
pub(crate) mod dataset;
pub(crate) mod prompt;

pub(crate) use builder::{PREFIX_WORDS, PromptBuilder, TokenModel};
pub(crate) use prompt::{Prompt, digest, prompt_hash};
// Public through `sim::text`: the simulator draws its words and numbers the same way.
pub use builder::WORDS;
pub use prompt::SplitMix64;
