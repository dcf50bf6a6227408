//! The batch verifier.
//!
//! INTERIM: this file currently checks every signature one at a time with libsecp256k1 (with
//! a cache of parsed keys), which gives the final API and exactly the reference verdicts; the
//! batch equation, MSM and narrowing replace the body of `verify_batch` (issue 3).

use crate::bip340::{parse_xonly, verify_parsed, SigRef};
use secp256k1::XOnlyPublicKey;
use std::collections::HashMap;

/// Below this many signatures, `verify_batch` checks signatures one at a time.
pub const MIN_BATCH: usize = 2;

/// Counters kept by a [`Verifier`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Batch equations evaluated (including the ones on halves while narrowing).
    pub batches: u64,
    /// Batch equations that held.
    pub batches_held: u64,
    /// Signatures accepted by a batch equation that held.
    pub batch_accepted: u64,
    /// Signatures checked one at a time with libsecp256k1.
    pub single_checked: u64,
    /// Key-cache hits.
    pub key_cache_hits: u64,
    /// Key-cache misses.
    pub key_cache_misses: u64,
}

/// A batch verifier: a cache of parsed keys and scratch buffers. Use one per thread.
#[derive(Debug)]
pub struct Verifier {
    keys: HashMap<[u8; 32], XOnlyPublicKey>,
    stats: Stats,
}

impl Default for Verifier {
    fn default() -> Self {
        Self::new()
    }
}

impl Verifier {
    /// Creates a verifier, seeding its secret from the operating system's CSPRNG.
    ///
    /// # Panics
    /// Panics if the operating system provides no randomness.
    pub fn new() -> Self {
        Verifier {
            keys: HashMap::new(),
            stats: Stats::default(),
        }
    }

    fn key(&mut self, pubkey: &[u8; 32]) -> Option<XOnlyPublicKey> {
        if let Some(k) = self.keys.get(pubkey) {
            self.stats.key_cache_hits += 1;
            return Some(*k);
        }
        self.stats.key_cache_misses += 1;
        let k = parse_xonly(pubkey)?;
        if self.keys.len() >= 2048 {
            self.keys.clear();
        }
        self.keys.insert(*pubkey, k);
        Some(k)
    }

    /// Verifies many signatures; `ok[i]` receives the verdict of `sigs[i]`.
    ///
    /// Returns `true` when every signature is valid. `ok` is cleared first.
    pub fn verify_batch(&mut self, sigs: &[SigRef<'_>], ok: &mut Vec<bool>) -> bool {
        ok.clear();
        ok.extend(sigs.iter().map(|s| self.verify_one(s)));
        ok.iter().all(|&b| b)
    }

    /// Evaluates the batch equation alone: `true` when every signature is valid.
    pub fn verify_all(&mut self, sigs: &[SigRef<'_>]) -> bool {
        sigs.iter().all(|s| self.verify_one(s))
    }

    /// Verifies one signature with libsecp256k1, the key taken from the cache.
    pub fn verify_one(&mut self, sig: &SigRef<'_>) -> bool {
        self.stats.single_checked += 1;
        match self.key(sig.pubkey) {
            Some(pk) => verify_parsed(&pk, sig.msg, sig.sig),
            None => false,
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }
}
