//! FNV-1a, 64-bit: a stable, dependency-free hash for ids and fingerprints that must be the same
//! on every platform and in every build (not for anything an attacker chooses to collide).

/// The hash's starting state (the FNV offset basis).
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// Folds `bytes` into the running hash `h` (start from [`FNV_START`]).
pub fn fnv1a_extend(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The FNV-1a hash of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_extend(FNV_START, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_of_the_reference_algorithm() {
        // The published FNV-1a 64-bit test vectors.
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(fnv1a_extend(fnv1a(b"foo"), b"bar"), fnv1a(b"foobar"));
    }
}
