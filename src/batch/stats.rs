//! [`Stats`]: what a [`Verifier`](super::Verifier) counts.

/// Counters kept by a [`Verifier`](crate::Verifier). New counters may be added in any release
/// (`#[non_exhaustive]`): read the fields, do not build the struct. The first six have the
/// names they had in `nostr-verify` 0.1.0 (crates.io), so a program written against it reads
/// the same counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Batch equations evaluated (including the ones on halves while narrowing).
    pub batches: u64,
    /// Batch equations that held.
    pub batches_passed: u64,
    /// Signatures accepted by a batch equation that held.
    pub batched: u64,
    /// Signatures checked one at a time with libsecp256k1.
    pub one_at_a_time: u64,
    /// Narrowings that spent their work budget and checked the rest one at a time (see
    /// [`Verifier::verify_batch`](crate::Verifier::verify_batch)).
    pub budget_exhausted: u64,
    /// Key-cache hits.
    pub key_hits: u64,
    /// Key-cache misses.
    pub key_misses: u64,
    /// Of those misses, the keys found in the [`SharedKeyCache`](crate::SharedKeyCache) (no lift needed).
    pub shared_cache_hits: u64,
}
