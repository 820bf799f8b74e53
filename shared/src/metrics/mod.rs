//! The metric math: one definition of every number llmsweep reports.
//!
//! Units: times are seconds (`f64`, fields end in `_s`), rates are per second (`_tok_s`,
//! `request_s`). Every function here is pure, so a bundle's summary can be recomputed from its
//! per-request records by anyone, and the viewer uses the same code as the collector.

pub mod accept;
pub mod checks;
pub mod definitions;
pub mod fit;
pub mod level;
pub mod rate;
pub mod request;
pub mod stats;
pub mod student;

pub use accept::{
    Acceptance, acceptance, gauge_accept_readings, request_accept_lengths, request_tokens_per_chunk,
};
pub use checks::{
    Degenerate, TtftTail, cache_counter_flag, client_bound_flag, degenerate, degenerate_text,
    host_busy_flag, level_flags, other_traffic_flag, ttft_tail,
};
pub use definitions::definitions;
pub use fit::{PrefillFit, fit_prefill};
pub use level::{
    Cycle, MIN_CYCLES, cycle_log_se, cycle_log_se_df, cycle_pm_pct, passes, running_cycles, span,
    steady_cycles, steady_window, steady_windows, summarize, tokens_between,
};
pub use rate::{goodput, meets, rate_point};
pub use request::{decode_tok_s, end_s, prefill_tok_s};
pub use stats::{Stats, percentile};
pub use student::t_quantile;
