//! The batch verifier: one equation for many signatures, every `false` libsecp256k1's.
//!
//! Rooms: this file holds the public [`Verifier`] and [`Stats`]; `work` the data model of one
//! batch; `prepare` the staging (grouping, pre-checks, lifts, challenges, the two-thread
//! fork/join); `weights` the weights and why they are unpredictable; `equation` the batch
//! equation and its MSM; `narrow` the search for the verdicts when it fails. The key caches
//! are in `crate::key_cache`.
//!
//! # The equation
//! For signatures `(rᵢ, sᵢ)` on messages `mᵢ` under keys `Pᵢ`, with `eᵢ = H(rᵢ‖Pᵢ‖mᵢ) mod n`
//! and `Rᵢ = lift_x(rᵢ)`, every valid signature satisfies `sᵢ·G = Rᵢ + eᵢ·Pᵢ`. The batch checks
//!
//! ```text
//!     (Σ aᵢ·sᵢ)·G − Σ aᵢ·Rᵢ − Σ_keys (Σ_{i∈key} aᵢ·eᵢ)·P  =  ∞
//! ```
//!
//! with `a₁ = 1` and the other `aᵢ` 128-bit weights (BIP-340, "Batch Verification"); it is
//! evaluated negated, as `Σ aᵢ·Rᵢ + Σ_keys (Σ_{i∈key} aᵢ·eᵢ)·P − (Σ aᵢ·sᵢ)·G`, so that the
//! lifted nonces go in as they are (one scalar negation per equation instead of a point
//! negation per signature). If any signature is invalid the sum is ∞ only with probability
//! about 2^−128 over the weights. Signatures by the same key merge into one key term. The multi-scalar multiplication
//! ([`crate::msm`]) sees `N = n + 2k + 2` points with scalars below 2^128: every `Rᵢ` with
//! `aᵢ` (unsplit), every key's scalar GLV-split over `P` and `λ·P = (β·x, y)`, and `−Σ aᵢ·sᵢ`
//! split at 2^128 over `G` and `2^128·G`. All nonces and cold keys are lifted together by
//! [`backend::lift_x_many_vartime`] (SIMD lanes where available).
//!
//! # Narrowing
//! When the equation fails, the verdicts are found as the module doc of `narrow` states (the
//! one statement of the narrowing rules and their cost model).
//!
//! Per-signature pre-checks (`r ≥ p`, `s ≥ n`, `r` not an x coordinate, key not an x
//! coordinate) give `false` for that signature alone, without failing the batch; they are the
//! same checks libsecp256k1 makes, in BIP-340's order.
//!
//! # Variable time
//! Verification handles public data only; the weights (secret) enter variable-time scalar
//! multiplication, but a verifier never reveals timing-dependent results other than the
//! verdicts.
//!
//! # The weights
//! 128-bit, derived per batch from a per-verifier secret and every input (see `weights`).

mod equation;
mod narrow;
mod prepare;
mod stats;
#[cfg(test)]
mod testing;
mod thread_local;
mod weights;
mod work;

pub(crate) use self::equation::Threads;
pub use self::stats::Stats;
pub use self::thread_local::with_thread_verifier;

use self::narrow::Narrowing;
use self::work::Work;
use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;
use crate::bip340::{parse_xonly, verify_parsed, SigRef};
use crate::key_cache::{CachedKey, KeyCache, SharedKeyCache, DEFAULT_CAPACITY};

/// Below this many signatures, [`Verifier::verify_batch`] checks signatures one at a time
/// with libsecp256k1 (measured: `docs/batch.md`, "Performance").
pub const MIN_BATCH: usize = 4;

/// [`Verifier::verify_batch_two_threads`] splits the staging (parsing, challenges, lifts)
/// from this many lifts (nonces plus cold keys) on.
///
/// A split costs one scoped thread (start, join, a cold helper) and, for the MSM, two smaller
/// MSMs instead of one: measured at about 150 µs (staging) and 350 µs (MSM) of extra process
/// CPU per batch on the 2-core reference VM with other work running
/// (`cargo run --profile bench -p nostr-verify-bench --example two_threads`). From these sizes on, the extra stays
/// within about a tenth of the batch's one-thread CPU time.
pub(crate) const TWO_THREADS_MIN_LIFTS: usize = 2048;

/// A batch verifier: a cache of lifted keys, the weights' secret, and scratch buffers.
/// Use one per thread (it is `Send`); see [`crate::with_thread_verifier`].
///
/// The key cache holds up to 2,048 valid keys (set-associative, 8 ways, least recently used
/// evicted within a set, indexed by SipHash under a per-instance random key). Per key it keeps
/// the lifted point, `λ·P`, and libsecp256k1's parsed key once a single verification needed it.
///
/// Its `Debug` output shows the counters and cache sizes, never the weights' secret (nor the
/// key cache's SipHash key).
///
/// ```
/// # #[cfg(feature = "nostr")] {
/// use nostr::event::{Event, EventBuilder, FinalizeEvent, Kind};
/// use nostr::key::Keys;
/// use nostr_verify::{SigRef, Verifier};
///
/// let keys = Keys::generate();
/// let mut events: Vec<Event> = (0..64)
///     .map(|i| EventBuilder::new(Kind::TextNote, format!("note {i}")).finalize(&keys).unwrap())
///     .collect();
/// events[9].sig = events[8].sig; // a signature over another event's id
///
/// // Borrowed in place: x-only key, message (the event id), signature.
/// let sigs: Vec<SigRef<'_>> = events
///     .iter()
///     .map(|e| SigRef { pubkey: e.pubkey.as_bytes(), msg: e.id.as_bytes(), sig: e.sig.as_ref() })
///     .collect();
///
/// let mut verifier = Verifier::new();
/// let mut ok = Vec::new();
/// assert!(!verifier.verify_batch(&sigs, &mut ok));
/// assert_eq!(ok.iter().position(|&v| !v), Some(9));
/// assert!(!verifier.verify_all(&sigs)); // the equation alone: all or nothing
/// assert!(verifier.verify_all(&sigs[..9]));
///
/// // Owned arrays work the same way.
/// let (pubkey, msg, sig) = (events[0].pubkey.to_bytes(), events[0].id.to_bytes(), *events[0].sig.as_ref());
/// assert!(verifier.verify_one(&SigRef { pubkey: &pubkey, msg: &msg, sig: &sig }));
/// # }
/// ```
pub struct Verifier {
    secret: [u8; 32],
    counter: u64,
    cache: KeyCache<CachedKey>,
    shared: Option<SharedKeyCache>,
    stats: Stats,
    work: Work,
    /// Batches left during which a large batch is probed before its equation: set to
    /// [`narrow::WARY_BATCHES`] by a batch with dense failures, counted down by the others
    /// (`src/batch/narrow.rs`, "Narrowing", step 1).
    wary: u32,
}

impl core::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The secret decides the weights: whoever knows it (and the counter) can build invalid
        // batches that pass, so it is never printed.
        f.debug_struct("Verifier")
            .field("secret", &"<redacted>")
            .field("counter", &self.counter)
            .field("cache", &self.cache)
            .field("shared", &self.shared)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
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
        let mut secret = [0u8; 32];
        #[allow(clippy::expect_used)]
        getrandom::getrandom(&mut secret).expect("nostr-verify: the OS random source failed");
        Self::with_secret(secret)
    }

    /// A verifier with a key cache of at least `capacity` keys (default 2,048).
    ///
    /// # Panics
    /// Panics if the operating system provides no randomness.
    pub fn with_cache_capacity(capacity: usize) -> Self {
        let mut v = Self::new();
        v.cache = KeyCache::with_capacity(capacity);
        v
    }

    fn with_secret(secret: [u8; 32]) -> Self {
        Verifier {
            secret,
            counter: 0,
            cache: KeyCache::with_capacity(DEFAULT_CAPACITY),
            shared: None,
            stats: Stats::default(),
            work: Work::default(),
            wary: 0,
        }
    }

    /// This verifier, consulting `shared` on a miss of its own key cache and adding the keys
    /// it lifts to it (see [`SharedKeyCache`]).
    pub fn with_shared_cache(mut self, shared: SharedKeyCache) -> Self {
        self.shared = Some(shared);
        self
    }

    /// Attaches a [`SharedKeyCache`] (or detaches it with `None`), e.g. to the thread-local
    /// verifier of a worker thread through [`crate::with_thread_verifier`].
    pub fn set_shared_cache(&mut self, shared: Option<SharedKeyCache>) {
        self.shared = shared;
    }

    /// The attached [`SharedKeyCache`], if any.
    pub fn shared_cache(&self) -> Option<&SharedKeyCache> {
        self.shared.as_ref()
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Verifies one signature with libsecp256k1, the key taken from the cache.
    pub fn verify_one(&mut self, sig: &SigRef<'_>) -> bool {
        self.stats.one_at_a_time += 1;
        if let Some(c) = self.cache.get(sig.pubkey) {
            self.stats.key_hits += 1;
            if let Some(x) = c.xonly() {
                return verify_parsed(&x, sig.msg, sig.sig);
            }
        }
        self.stats.key_misses += 1;
        let shared = self
            .shared
            .as_ref()
            .and_then(|c| c.read().peek(sig.pubkey).copied());
        if let Some(p) = shared {
            self.stats.shared_cache_hits += 1;
            let c = self.cache.insert(sig.pubkey, CachedKey::new(p));
            if let Some(x) = c.xonly() {
                return verify_parsed(&x, sig.msg, sig.sig);
            }
        }
        let Some(x) = parse_xonly(sig.pubkey) else {
            return false;
        };
        // Cache the key's point, taken from libsecp256k1's parse (no second square root).
        let full = x
            .public_key(secp256k1::Parity::Even)
            .serialize_uncompressed();
        let (px, py) = (full[1..33].try_into(), full[33..].try_into());
        if let (Ok(px), Ok(py)) = (px, py) {
            if let (Some(x_), Some(y_)) =
                (FieldElement::from_bytes(&px), FieldElement::from_bytes(&py))
            {
                let mut c = CachedKey::new(AffinePoint {
                    x: x_,
                    y: y_,
                    infinity: false,
                });
                c.xonly = Some(x);
                self.cache.insert(sig.pubkey, c);
            }
        }
        verify_parsed(&x, sig.msg, sig.sig)
    }

    /// Verifies many signatures; `ok[i]` receives the verdict of `sigs[i]`.
    ///
    /// `ok` is cleared first. Returns `true` when every signature is valid. Verdicts are
    /// exactly libsecp256k1's: `true` comes from a batch equation that held (or from
    /// libsecp256k1), every `false` from libsecp256k1 or from a pre-check libsecp256k1 makes
    /// too (`r ≥ p`, `s ≥ n`, no point with x = r, no point with x = key).
    ///
    /// # Examples
    /// ```
    /// use nostr_verify::{SigRef, Verifier};
    /// let (pk, msg, sig) = ([1u8; 32], [2u8; 32], [3u8; 64]);
    /// let mut v = Verifier::new();
    /// let mut ok = Vec::new();
    /// assert!(!v.verify_batch(&[SigRef { pubkey: &pk, msg: &msg, sig: &sig }], &mut ok));
    /// assert_eq!(ok, [false]);
    /// ```
    pub fn verify_batch(&mut self, sigs: &[SigRef<'_>], ok: &mut Vec<bool>) -> bool {
        self.run(sigs, ok, Threads::One)
    }

    /// [`Verifier::verify_batch`] on `threads`.
    fn run(&mut self, sigs: &[SigRef<'_>], ok: &mut Vec<bool>, threads: Threads) -> bool {
        ok.clear();
        ok.resize(sigs.len(), false);
        if sigs.len() < MIN_BATCH {
            for (o, s) in ok.iter_mut().zip(sigs) {
                *o = self.verify_one(s);
            }
            return ok.iter().all(|&b| b);
        }
        // 1. Prepare: group, pre-check, lift, weigh.
        let unique = self.prepare(sigs, threads);
        let m = self.work.prep.len();
        let mut search = Narrowing::new(&mut self.work, &mut self.stats, sigs, ok);
        // A wary verifier (dense failures lately), or a batch whose signatures failed their
        // pre-checks, probes a large batch before its equation (narrowing's step 1).
        let wary = self.wary > 0 || m != unique;
        if let Some(lo) = search.probe_first(wary) {
            // 2. The equation over the batch (less a probe found invalid).
            if let Err(failed_cost) = search.equation(lo..m, threads) {
                // 3. Only when it fails: narrowing finds the verdicts.
                search.narrow_failed(lo..m, failed_cost);
            }
        }
        for i in 0..sigs.len() {
            let d = self.work.dup_of[i];
            if d != u32::MAX {
                ok[i] = ok[d as usize];
            }
        }
        let invalid = ok.iter().filter(|&&b| !b).count();
        self.wary = if narrow::dense_failures(invalid, sigs.len()) {
            narrow::WARY_BATCHES
        } else {
            self.wary.saturating_sub(1)
        };
        invalid == 0
    }

    /// [`Verifier::verify_batch`] using two cores for one large batch (lower latency, same
    /// verdicts and the same weights): two fork/joins with one scoped helper thread
    /// (`std::thread::scope`). In the first, each thread parses, hashes the challenges and
    /// lifts the nonces and cold keys of one half, and the helper returns its half's
    /// transcript digest; the calling thread then weighs the batch. In the second, each
    /// runs the MSM of one half of the points, and the two sums are added. Both wait for
    /// the helper with `join` only (no spinning).
    /// Inputs below 2,048 lifts (nonces plus cold keys) stage on the calling thread alone,
    /// MSMs below 3,000 points (about 1,000 signatures by distinct keys, 3,000 by a few)
    /// run there alone, and so do the sub-batches of narrowing: below those sizes a thread
    /// costs more CPU than a tenth of the batch (`cargo run --profile bench -p nostr-verify-bench --example two_threads`).
    ///
    /// For throughput with many batches, prefer one [`Verifier`] per thread with
    /// [`Verifier::verify_batch`]: that scales without any fork/join cost.
    ///
    /// # Examples
    /// ```
    /// use nostr_verify::{SigRef, Verifier};
    /// let (pk, msg, sig) = ([1u8; 32], [2u8; 32], [3u8; 64]);
    /// let mut ok = Vec::new();
    /// assert!(!Verifier::new().verify_batch_two_threads(&[SigRef { pubkey: &pk, msg: &msg, sig: &sig }], &mut ok));
    /// ```
    pub fn verify_batch_two_threads(&mut self, sigs: &[SigRef<'_>], ok: &mut Vec<bool>) -> bool {
        self.run(sigs, ok, Threads::Two)
    }

    /// Evaluates the batch equation alone: `true` when every signature is valid (up to the
    /// 2^−128 chance of the equation holding over invalid signatures).
    pub fn verify_all(&mut self, sigs: &[SigRef<'_>]) -> bool {
        if sigs.len() < MIN_BATCH {
            return sigs.iter().all(|s| self.verify_one(s));
        }
        let unique = self.prepare(sigs, Threads::One);
        if self.work.prep.len() != unique {
            return false;
        }
        let m = self.work.prep.len();
        let held = equation::holds(&mut self.work, 0..m, Threads::One);
        self.stats.batches += 1;
        if held {
            self.stats.batches_passed += 1;
            self.stats.batched += sigs.len() as u64;
        }
        held
    }
}

#[cfg(test)]
mod tests {
    use super::testing::signed;
    use super::*;

    #[test]
    fn verifier_is_send() {
        fn is_send<T: Send>() {}
        is_send::<Verifier>();
    }

    #[test]
    fn debug_redacts_the_secret() {
        let secret = [0xa5u8; 32];
        let v = Verifier::with_secret(secret);
        let d = format!("{v:?}");
        let pretty = format!("{v:#?}");
        for out in [&d, &pretty] {
            assert!(out.contains("<redacted>"), "{out}");
            // Neither as a decimal list (what a derived Debug prints) nor as hex.
            assert!(!out.contains("165"), "{out}");
            assert!(!out.to_lowercase().contains("a5a5"), "{out}");
        }
        assert!(d.starts_with("Verifier {"), "{d}");
        assert!(d.contains("stats: Stats {"), "{d}");
    }

    #[test]
    fn two_threads_with_spawns_refused() {
        // Large enough for the two-thread staging; one bad signature in 50.
        let owned = signed(TWO_THREADS_MIN_LIFTS + 44, 50);
        let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
        let want: Vec<bool> = refs.iter().map(crate::verify_one).collect();
        assert!(want.iter().any(|&b| !b) && want.iter().any(|&b| b));
        let mut ok = Vec::new();
        let mut two = Verifier::with_secret([4; 32]);
        let before = crate::spawn::refused_so_far();
        let all =
            crate::spawn::with_spawns_refused(|| two.verify_batch_two_threads(&refs, &mut ok));
        assert!(
            crate::spawn::refused_so_far() > before,
            "the staging thread was not asked for through try_spawn_scoped"
        );
        assert!(!all);
        assert_eq!(ok, want);
        // The same weights as with a thread: the fallback redoes the same work.
        let mut one = Verifier::with_secret([9; 32]);
        let mut refused = Verifier::with_secret([9; 32]);
        one.prepare(&refs, Threads::One);
        crate::spawn::with_spawns_refused(|| refused.prepare(&refs, Threads::Two));
        let a: Vec<u128> = one.work.prep.iter().map(|p| p.a).collect();
        let b: Vec<u128> = refused.work.prep.iter().map(|p| p.a).collect();
        assert_eq!(a, b);
    }
}
