//! The one configuration of the collector's property tests.

use proptest::test_runner::{Config, RngSeed};

/// `cases` per property from a fixed seed, so every `cargo test` (and CI) tries the same
/// inputs; a long run (`PROPTEST_CASES=N`) asks for another number of cases from a random seed,
/// to find new ones.
pub(crate) fn config(cases: u32) -> Config {
    let long: Option<u32> = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok());
    Config {
        cases: long.unwrap_or(cases),
        rng_seed: match long {
            Some(_) => RngSeed::Random,
            None => RngSeed::Fixed(0x11_5ee9),
        },
        ..Config::default()
    }
}
