//! The batch verifier: one equation for many signatures, every `false` libsecp256k1's.
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
//! # Why the weights are unpredictable
//! The weights must be unknown to whoever chose the signatures, or invalid signatures could
//! be crafted to cancel out. Each [`Verifier`] draws a 32-byte secret from the operating
//! system (`getrandom`, the Web Crypto API on wasm32 with feature `js`) and counts its batches.
//! For each batch, the seed is the tagged SHA-256 (`nostr-verify/batch-weights`) of the
//! secret, the counter, and the SHA-256 of every signature's unreduced challenge digest and
//! `s`, hashed in two halves (the digest commits to `r`, `P` and `m`, so the seed commits to
//! every input). The weights are SHA-256 of the seed and an index, 128 bits each. Thus (1) an
//! attacker outside the process cannot predict them (the secret never leaves the verifier),
//! and (2) even with a broken random source, the weights are a hash of all inputs, as BIP-340
//! recommends: changing any input changes every weight, so finding a cancelling invalid batch
//! costs about 2^128 hash evaluations. Weights are reused unchanged while narrowing (sub-batches of a batch whose
//! weights nobody outside saw).
//!
//! # Narrowing
//! When the equation fails, the failing signatures are found by re-running the equation on
//! halves, reusing lifted points, challenges and weights: test the left half; if it holds, the
//! right half is known to fail and is split without being tested; otherwise both are
//! searched. At every failing node one signature chosen with the weights is checked with
//! libsecp256k1 first: if it is invalid, failures are dense there and the whole node is
//! checked one at a time. Nodes of at most `LEAF` (4) signatures are checked one at a time.
//! A batch of 128 or more first has one signature checked by libsecp256k1 before the
//! equation: if that one is invalid, the whole batch goes one at a time, so a flood of
//! invalid signatures costs about what one-at-a-time verification costs.
//! Every `false` verdict from the equation path is therefore libsecp256k1's own.
//!
//! When the equation fails, a few signatures drawn with the weights are checked one at a time
//! first: two or more invalid among them mean dense failures, and the rest goes one at a
//! time. Otherwise narrowing works on an order the submitter cannot predict (key groups and
//! the signatures within them sorted by weight), and within a work budget: it keeps an
//! account of the estimated cost of its equations less the single checks saved by those that
//! held, and once the next equation would take the account past a quarter of a single check
//! per signature, it checks every open signature one at a time. Invalid signatures sprinkled
//! through a batch (which make every node fail) then cost at most the failed batch equation
//! plus 25 % over one-at-a-time checking, while one or two invalid signatures, whose sibling
//! halves hold, stay clear of the limit.
//!
//! Per-signature pre-checks (`r ≥ p`, `s ≥ n`, `r` not an x coordinate, key not an x
//! coordinate) give `false` for that signature alone, without failing the batch; they are the
//! same checks libsecp256k1 makes, in BIP-340's order.
//!
//! # Variable time
//! Verification handles public data only; the weights (secret) enter variable-time scalar
//! multiplication, but a verifier never reveals timing-dependent results other than the
//! verdicts.

use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::{AffinePoint, JacobianPoint};
use crate::arithmetic::scalar::{Scalar, WideSum};
use crate::backend;
use crate::bip340::{
    challenge_hashes, finish_from_midstate, parse_xonly, tagged_midstate, verify_parsed, SigRef,
};
use crate::key_cache::{KeyCache, DEFAULT_CAPACITY};
use crate::msm;
use crate::spawn::try_spawn_scoped;
use secp256k1::{PublicKey, XOnlyPublicKey};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

/// Below this many signatures, [`Verifier::verify_batch`] checks signatures one at a time
/// with libsecp256k1 (measured: see `docs/benchmarks.md#smallest-batch-min_batch`).
pub const MIN_BATCH: usize = 4;

/// Narrowing checks nodes of at most this many signatures one at a time.
pub(crate) const LEAF: usize = 4;

/// From this many signatures on, one signature is checked with libsecp256k1 before the
/// equation (see [`Verifier::narrow`]).
pub(crate) const PROBE_FIRST: usize = 128;

/// [`Verifier::verify_batch_two_threads`] splits lifts and MSMs from this many items on.
pub(crate) const TWO_THREADS_MIN: usize = 256;

/// The unit of narrowing's work budget: one libsecp256k1 check with a cached key.
pub(crate) const SINGLE: u64 = 1000;

/// Narrowing's budget: its equations may cost at most this much more than the signatures
/// they accept would have cost one at a time, per signature of the batch, in thousandths of
/// a single check (a quarter of a single check per signature). See [`Verifier::narrow`].
pub(crate) const BUDGET_PER_SIG: u64 = SINGLE / 4;

/// At most this many signatures are sampled one at a time when a batch equation fails (see
/// [`Verifier::settle`]).
pub(crate) const SAMPLES_MAX: usize = 96;

/// The tag of the weight derivation.
const WEIGHTS_TAG: &[u8] = b"nostr-verify/batch-weights";

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
    /// Narrowings that spent their work budget and checked the rest one at a time (see
    /// [`Verifier::verify_batch`]).
    pub budget_exhausted: u64,
    /// Key-cache hits.
    pub key_cache_hits: u64,
    /// Key-cache misses.
    pub key_cache_misses: u64,
    /// Of those misses, the keys found in the [`SharedKeyCache`] (no lift needed).
    pub shared_cache_hits: u64,
}

/// What the key cache keeps per key.
#[derive(Clone, Copy, Debug)]
struct CachedKey {
    /// The key's point, even y.
    p: AffinePoint,
    /// λ·P = (β·x, y).
    lambda_p: AffinePoint,
    /// libsecp256k1's parsed key, made on first single verification.
    xonly: Option<XOnlyPublicKey>,
}

impl CachedKey {
    fn new(p: AffinePoint) -> Self {
        CachedKey {
            p,
            lambda_p: p.endomorphism(),
            xonly: None,
        }
    }
}

/// Lifted keys shared by several [`Verifier`]s, for instance one per worker thread.
///
/// Each verifier keeps its own small cache in front of it. A key one verifier lifted is
/// found by the others instead of lifted again, and the threads together hold one large
/// set of keys rather than one small copy each. Cloning gives another handle to the same
/// cache. Only keys that lifted are inserted; the cache is set-associative with a
/// per-instance random index, like the verifier's own, and evicts the least recently
/// *inserted* key of a full set (readers do not write, so lookups only take a read lock:
/// one per batch, plus one write lock per batch that lifted new keys).
///
/// ```
/// use nostr_verify::{SharedKeyCache, Verifier};
/// let shared = SharedKeyCache::new(1 << 16);
/// let workers: Vec<Verifier> = (0..4)
///     .map(|_| Verifier::new().with_shared_cache(shared.clone()))
///     .collect();
/// # assert_eq!(workers.len(), 4);
/// assert_eq!(shared.len(), 0);
/// ```
#[derive(Clone)]
pub struct SharedKeyCache {
    inner: Arc<RwLock<KeyCache<AffinePoint>>>,
}

impl SharedKeyCache {
    /// A shared cache for at least `capacity` keys (rounded up to a power of two, at least 8).
    /// About 130 bytes per key.
    pub fn new(capacity: usize) -> Self {
        SharedKeyCache {
            inner: Arc::new(RwLock::new(KeyCache::with_capacity(capacity))),
        }
    }

    /// How many keys it holds now.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// `true` when it holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many keys it holds at most.
    pub fn capacity(&self) -> usize {
        self.read().capacity()
    }

    // Poisoning is ignored: a panic cannot leave the cache half-written (every insert is one
    // slot assignment), and a verdict must not be lost to a poisoned lock.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, KeyCache<AffinePoint>> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, KeyCache<AffinePoint>> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl core::fmt::Debug for SharedKeyCache {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SharedKeyCache")
            .field("len", &self.len())
            .field("capacity", &self.capacity())
            .finish()
    }
}

/// A key as used in one batch.
#[derive(Clone, Copy, Debug)]
struct BatchKey {
    pk: [u8; 32],
    /// `None` until lifted (cold keys), or when the key is not an x coordinate.
    point: Option<CachedKey>,
    /// Whether the key failed parsing (x ≥ p) or lifting.
    invalid: bool,
}

/// One signature that passed the pre-checks (or is waiting for its lift).
#[derive(Clone, Copy, Debug)]
struct Prepared {
    /// Index into the caller's slice.
    idx: u32,
    /// Index into the batch's keys.
    key: u32,
    /// r < p and s < n (set with the lifts).
    parsed: bool,
    /// `R` once lifted (x = r, even y).
    r: AffinePoint,
    /// The weight `aᵢ`.
    a: u128,
    /// `sᵢ` and `eᵢ`, set with the lifts; the equation multiplies them by `aᵢ` as it sums them
    /// (one reduction per sum, see [`WideSum`]).
    s: Scalar,
    e: Scalar,
}

/// Reusable per-batch buffers.
#[derive(Debug, Default)]
struct Work {
    order: Vec<(u128, u32)>,
    /// Per input index: `u32::MAX`, or the index of the identical signature it duplicates.
    dup_of: Vec<u32>,
    keys: Vec<BatchKey>,
    prep: Vec<Prepared>,
    xs: Vec<FieldElement>,
    ys: Vec<FieldElement>,
    lifted: Vec<bool>,
    points: Vec<AffinePoint>,
    scalars: Vec<u128>,
    msm: msm::Scratch,
    /// Use two threads for the lifts and the top-level MSM ([`Verifier::verify_batch_two_threads`]).
    two_threads: bool,
    /// Per key of the batch: its place in narrowing's secret order (see [`Verifier::shuffle`]).
    key_rank: Vec<u128>,
    /// Narrowing's work budget (see [`Verifier::narrow`]).
    budget: Budget,
}

/// Narrowing's account, in [`SINGLE`]s: the work of its equations (by [`equation_cost`]) less
/// the single checks saved by the ones that held. One-at-a-time checking of the whole batch
/// plus `loss` is what narrowing has cost so far.
#[derive(Clone, Copy, Debug, Default)]
struct Budget {
    loss: i64,
    limit: i64,
    /// The limit was reached: every signature still open is checked one at a time.
    exhausted: bool,
}

/// The estimated cost of a batch equation over `points` MSM points, in thousandths of a single
/// check (the unit of [`SINGLE`] and [`Budget`]).
///
/// From the MSM sweep and the smallest-batch table of `docs/benchmarks.md`: µs per point of
/// the algorithm the MSM picks, divided by the time of one libsecp256k1 verification with a
/// cached key, then rounded up, on the IFMA backend. The portable backend's MSM takes about
/// twice as long, but the model is the same on both, so narrowing makes the same decisions on
/// either backend: scaled for portable, the budget no longer covered the two half equations
/// that find a lone invalid signature among distinct keys when the first half tested is the
/// failing one, and such a batch went one at a time. On portable, narrowing with a few
/// invalid signatures the sample misses may therefore spend up to twice the nominal budget.
fn equation_cost(points: usize) -> u64 {
    // (largest point count, cost per point in thousandths of a single check)
    const PER_POINT: [(usize, u64); 7] = [
        (20, 300),
        (32, 220),
        (80, 160),
        (160, 115),
        (320, 90),
        (640, 72),
        (1800, 68),
    ];
    let per_point = PER_POINT
        .iter()
        .find(|&&(max, _)| points <= max)
        .map_or(62, |&(_, c)| c);
    points as u64 * per_point
}

/// A batch verifier: a cache of lifted keys, the weights' secret, and scratch buffers.
/// Use one per thread (it is `Send`); see [`crate::with_thread_verifier`].
///
/// The key cache holds up to 2,048 valid keys (set-associative, 8 ways, least recently used
/// evicted within a set, indexed by SipHash under a per-instance random key). Per key it keeps
/// the lifted point, `λ·P`, and libsecp256k1's parsed key once a single verification needed it.
///
/// Its `Debug` output shows the counters and cache sizes, never the weights' secret (nor the
/// key cache's SipHash key).
pub struct Verifier {
    secret: [u8; 32],
    counter: u64,
    cache: KeyCache<CachedKey>,
    shared: Option<SharedKeyCache>,
    stats: Stats,
    work: Work,
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

/// `2^128·G`, computed once.
fn g128() -> &'static AffinePoint {
    static G128: OnceLock<AffinePoint> = OnceLock::new();
    G128.get_or_init(|| {
        let mut p = JacobianPoint::from_affine(&AffinePoint::GENERATOR);
        for _ in 0..128 {
            p = p.double_vartime();
        }
        p.to_affine_vartime()
    })
}

/// Whether two byte arrays (of a multiple of 8 bytes) are equal, compared as 64-bit words
/// with no early exit: inlined, where `==` on arrays calls `memcmp`.
#[inline]
fn eq_words<const N: usize>(a: &[u8; N], b: &[u8; N]) -> bool {
    const { assert!(N % 8 == 0) };
    a.chunks_exact(8)
        .zip(b.chunks_exact(8))
        .fold(0u64, |d, (x, y)| {
            let x = u64::from_ne_bytes(x.try_into().unwrap_or_default());
            let y = u64::from_ne_bytes(y.try_into().unwrap_or_default());
            d | (x ^ y)
        })
        == 0
}

/// The two 32-byte halves of a 64-byte signature: `r` and `s`.
fn halves(sig: &[u8; 64]) -> (&[u8; 32], &[u8; 32]) {
    let (r, s) = sig.split_at(32);
    (
        r.try_into().unwrap_or(&[0xff; 32]),
        s.try_into().unwrap_or(&[0xff; 32]),
    )
}

/// One half of a batch's per-signature work, run by one thread or two (one half each):
/// for each entry of `prep` (whose nonce x goes to the same index of `xs`), parses r and s
/// (r ≥ p or s ≥ n leaves it unparsed: `false` for that signature alone) and sets the
/// challenge `eᵢ`; lifts all of `xs` (which may hold cold keys after the nonces); sets `Rᵢ`.
/// Returns the SHA-256 of the half's transcript, `digest(eᵢ) ‖ sᵢ` of each parsed entry in
/// order (the unreduced challenge digest commits to `r`, the key and the message).
fn stage(
    prep: &mut [Prepared],
    xs: &mut [FieldElement],
    ys: &mut [FieldElement],
    lifted: &mut [bool],
    sigs: &[SigRef<'_>],
) -> [u8; 32] {
    use sha2::Digest;
    let mut transcript = sha2::Sha256::new();
    // Parse; then every parsed entry's challenge in one call (in vector lanes on CPUs without
    // SHA instructions, see `backend::sha`); then the transcript in entry order.
    let mut msgs: Vec<[u8; 96]> = Vec::with_capacity(prep.len());
    for (p, x) in prep.iter_mut().zip(xs.iter_mut()) {
        let sig = &sigs[p.idx as usize];
        let (r_bytes, s_bytes) = halves(sig.sig);
        let (Some(r), Some(s)) = (
            FieldElement::from_bytes(r_bytes),
            Scalar::from_bytes_checked(s_bytes),
        ) else {
            continue;
        };
        let mut m = [0u8; 96];
        m[..32].copy_from_slice(r_bytes);
        m[32..64].copy_from_slice(sig.pubkey);
        m[64..].copy_from_slice(sig.msg);
        msgs.push(m);
        *x = r;
        p.parsed = true;
        p.s = s;
    }
    let mut es = vec![[0u8; 32]; msgs.len()];
    challenge_hashes(&msgs, &mut es);
    for (p, e) in prep.iter_mut().filter(|p| p.parsed).zip(&es) {
        let (_, s_bytes) = halves(sigs[p.idx as usize].sig);
        transcript.update(e);
        transcript.update(s_bytes);
        p.e = Scalar::from_bytes_reduced(e);
    }
    backend::lift_x_many_vartime(xs, ys, lifted);
    for ((p, (x, y)), &ok) in prep
        .iter_mut()
        .zip(xs.iter().zip(ys.iter()))
        .zip(lifted.iter())
    {
        if p.parsed && ok {
            p.r = AffinePoint {
                x: *x,
                y: *y,
                infinity: false,
            };
        }
    }
    transcript.finalize().into()
}

/// Receives from a two-thread handover, spinning up to about 200 µs before blocking: the
/// two halves finish close together, and waking a sleeping thread costs tens of
/// microseconds on a virtual machine. `None` when the other side is gone.
fn recv_spinning<T>(rx: &std::sync::mpsc::Receiver<T>) -> Option<T> {
    use std::sync::mpsc::TryRecvError;
    let start = std::time::Instant::now();
    loop {
        match rx.try_recv() {
            Ok(v) => return Some(v),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if start.elapsed().as_micros() < 200 => {
                std::hint::spin_loop();
            }
            Err(TryRecvError::Empty) => return rx.recv().ok(),
        }
    }
}

/// The weights of `prep`, whose first entry has index `first` in the batch: weights `2j`
/// and `2j + 1` are the two halves of SHA-256(seed ‖ j) (tagged), at least 1, and the
/// batch's very first weight is 1. Sets `a` (an entry that did not parse gets its weight
/// too, and is dropped later). `first` may be odd: the pair
/// that straddles two calls is hashed by both.
fn weigh(prep: &mut [Prepared], seed: &[u8; 32], first: usize) {
    if prep.is_empty() {
        return;
    }
    // Every pair's SHA-256(seed ‖ j) in one call (vector lanes on CPUs without SHA
    // instructions, see `backend::sha`).
    let first_pair = first / 2;
    let pairs = (first + prep.len() - 1) / 2 - first_pair + 1;
    let blocks: Vec<[u8; 40]> = (0..pairs)
        .map(|j| {
            let mut block = [0u8; 40];
            block[..32].copy_from_slice(seed);
            block[32..].copy_from_slice(&((first_pair + j) as u64).to_le_bytes());
            block
        })
        .collect();
    let msgs: Vec<&[u8]> = blocks.iter().map(|b| &b[..]).collect();
    let mut hashes = vec![[0u8; 32]; pairs];
    crate::backend::sha::hash_many_from(weights_midstate(), 1, &msgs, &mut hashes);
    for (i, p) in prep.iter_mut().enumerate() {
        let index = first + i;
        let h = &hashes[index / 2 - first_pair];
        let half = &h[16 * (index % 2)..][..16];
        let a = if index == 0 {
            1
        } else {
            u128::from_le_bytes(half.try_into().unwrap_or_default()).max(1)
        };
        p.a = a;
    }
}

/// The low and high 128 bits of a scalar.
fn split_128(k: &Scalar) -> (u128, u128) {
    let l = k.to_limbs();
    (
        (l[0] as u128) | ((l[1] as u128) << 64),
        (l[2] as u128) | ((l[3] as u128) << 64),
    )
}

/// The uncompressed SEC 1 encoding of a point, for libsecp256k1.
fn uncompressed(p: &AffinePoint) -> [u8; 65] {
    let mut b = [4u8; 65];
    b[1..33].copy_from_slice(&p.x.to_bytes());
    b[33..].copy_from_slice(&p.y.to_bytes());
    b
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

    /// libsecp256k1's parsed key for a cached entry (made from the lifted point: a cheap
    /// uncompressed parse, no square root; libsecp256k1 checks the point is on the curve).
    fn xonly_of(c: &mut CachedKey) -> Option<XOnlyPublicKey> {
        if c.xonly.is_none() {
            c.xonly = PublicKey::from_slice(&uncompressed(&c.p))
                .ok()
                .map(|p| p.x_only_public_key().0);
        }
        c.xonly
    }

    /// Verifies one signature with libsecp256k1, the key taken from the cache.
    pub fn verify_one(&mut self, sig: &SigRef<'_>) -> bool {
        self.stats.single_checked += 1;
        if let Some(c) = self.cache.get(sig.pubkey) {
            self.stats.key_cache_hits += 1;
            if let Some(x) = Self::xonly_of(c) {
                return verify_parsed(&x, sig.msg, sig.sig);
            }
        }
        self.stats.key_cache_misses += 1;
        let shared = self
            .shared
            .as_ref()
            .and_then(|c| c.read().peek(sig.pubkey).copied());
        if let Some(p) = shared {
            self.stats.shared_cache_hits += 1;
            let c = self.cache.insert(sig.pubkey, CachedKey::new(p));
            if let Some(x) = Self::xonly_of(c) {
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
        ok.clear();
        ok.resize(sigs.len(), false);
        if sigs.len() < MIN_BATCH {
            for (o, s) in ok.iter_mut().zip(sigs) {
                *o = self.verify_one(s);
            }
            return ok.iter().all(|&b| b);
        }
        self.prepare(sigs);
        self.settle(sigs, ok);
        for i in 0..sigs.len() {
            let d = self.work.dup_of[i];
            if d != u32::MAX {
                ok[i] = ok[d as usize];
            }
        }
        ok.iter().all(|&b| b)
    }

    /// [`Verifier::verify_batch`] using two cores for one large batch (lower latency, same
    /// verdicts and the same weights): two fork/joins with one scoped helper thread
    /// (`std::thread::scope`). In the first, each thread parses, hashes the challenges and
    /// lifts the nonces and cold keys of one half, the helper hands its half's transcript
    /// digest over, and once the seed is known each weighs its half. In the second, each
    /// takes half of the Pippenger windows of the MSM (an odd middle window split by points).
    /// Inputs below 256 lifts or MSM points, and the sub-batches of narrowing, run on the
    /// calling thread.
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
        self.work.two_threads = true;
        let all = self.verify_batch(sigs, ok);
        self.work.two_threads = false;
        all
    }

    /// Evaluates the batch equation alone: `true` when every signature is valid (up to the
    /// 2^−128 chance of the equation holding over invalid signatures).
    pub fn verify_all(&mut self, sigs: &[SigRef<'_>]) -> bool {
        if sigs.len() < MIN_BATCH {
            return sigs.iter().all(|s| self.verify_one(s));
        }
        let unique = self.prepare(sigs);
        if self.work.prep.len() != unique {
            return false;
        }
        let m = self.work.prep.len();
        let held = self.equation(0, m);
        self.stats.batches += 1;
        if held {
            self.stats.batches_held += 1;
            self.stats.batch_accepted += sigs.len() as u64;
        }
        held
    }

    /// Parses, pre-checks, lifts, hashes and weighs `sigs` into `self.work.prep` (the ones that
    /// pass the pre-checks, grouped by key). Returns how many distinct signatures there are.
    fn prepare(&mut self, sigs: &[SigRef<'_>]) -> usize {
        let w = &mut self.work;
        w.order.clear();
        w.dup_of.clear();
        w.dup_of.resize(sigs.len(), u32::MAX);
        w.keys.clear();
        w.prep.clear();
        w.xs.clear();
        // Group by key (and put identical signatures next to each other): sort on a prefix of
        // the key and of r. Keys whose prefixes collide may form several groups, which is
        // correct, only slower.
        for (i, s) in sigs.iter().enumerate() {
            let kp = u64::from_be_bytes(s.pubkey[..8].try_into().unwrap_or_default());
            let rp = u64::from_be_bytes(s.sig[..8].try_into().unwrap_or_default());
            w.order.push((((kp as u128) << 64) | rp as u128, i as u32));
        }
        w.order.sort_unstable();
        // Whole inputs are compared only where the prefixes match (identical signatures, keys
        // shared); elsewhere the prefixes already tell them apart.
        let mut unique = 0;
        let mut prev: Option<(usize, u128)> = None;
        let mut rep: usize = 0;
        for oi in 0..w.order.len() {
            let (prefix, i) = w.order[oi];
            let i = i as usize;
            let s = &sigs[i];
            let same_key = match prev {
                Some((p, pp)) if (pp >> 64) == (prefix >> 64) => {
                    let q = &sigs[p];
                    if pp == prefix
                        && eq_words(q.sig, s.sig)
                        && eq_words(q.msg, s.msg)
                        && eq_words(q.pubkey, s.pubkey)
                    {
                        w.dup_of[i] = rep as u32;
                        continue;
                    }
                    eq_words(q.pubkey, s.pubkey)
                }
                _ => false,
            };
            prev = Some((i, prefix));
            rep = i;
            unique += 1;
            if !same_key {
                let point = self.cache.get(s.pubkey).copied();
                let invalid = match point {
                    Some(_) => {
                        self.stats.key_cache_hits += 1;
                        false
                    }
                    None => {
                        self.stats.key_cache_misses += 1;
                        FieldElement::from_bytes(s.pubkey).is_none()
                    }
                };
                w.keys.push(BatchKey {
                    pk: *s.pubkey,
                    point,
                    invalid,
                });
            }
            let key = w.keys.len() - 1;
            if w.keys[key].invalid {
                continue;
            }
            // r and s are parsed later, with the lifts (see `stage`).
            w.xs.push(FieldElement::ZERO);
            w.prep.push(Prepared {
                idx: i as u32,
                key: key as u32,
                parsed: false,
                r: AffinePoint::IDENTITY,
                a: 0,
                s: Scalar::ZERO,
                e: Scalar::ZERO,
            });
        }
        // Keys missing here may be in the shared cache: one read lock for all of them.
        if let Some(shared) = &self.shared {
            if w.keys.iter().any(|k| k.point.is_none() && !k.invalid) {
                let found = shared.read();
                for k in w.keys.iter_mut() {
                    if k.point.is_none() && !k.invalid {
                        if let Some(p) = found.peek(&k.pk) {
                            let c = CachedKey::new(*p);
                            self.cache.insert(&k.pk, c);
                            k.point = Some(c);
                            self.stats.shared_cache_hits += 1;
                        }
                    }
                }
            }
        }
        // Lift every nonce and every cold key in one call.
        let nr = w.xs.len();
        for k in &w.keys {
            if k.point.is_none() && !k.invalid {
                // from_bytes succeeded above.
                w.xs.push(FieldElement::from_bytes(&k.pk).unwrap_or(FieldElement::ZERO));
            }
        }
        w.ys.clear();
        w.ys.resize(w.xs.len(), FieldElement::ZERO);
        w.lifted.clear();
        w.lifted.resize(w.xs.len(), false);
        // Parsing, challenges, transcript digests and lifts in two halves (see `stage`): the
        // nonces of prep[..half] with xs[..half], then the other nonces with the rest of xs
        // (the cold keys at its end). `half` splits the lifts evenly; each thread takes one
        // half when there are two.
        let half = (w.xs.len() / 2).min(nr);
        // The weights: a seed committing to the secret, the counter and every input (the
        // digests cover each parsed signature's challenge digest and s, including the few
        // dropped below, which only adds inputs), then 128-bit weights from
        // SHA-256(seed ‖ pair index) over the entries in this order (before the dropped ones
        // are removed); a₁ = 1. The equation multiplies each weight into s and e.
        self.counter += 1;
        let mut head = [0u8; 32 + 8 + 8 + 8 + 64];
        head[..32].copy_from_slice(&self.secret);
        head[32..40].copy_from_slice(&self.counter.to_le_bytes());
        head[40..48].copy_from_slice(&(nr as u64).to_le_bytes());
        head[48..56].copy_from_slice(&(half as u64).to_le_bytes());
        let seed_of = |d0: &[u8; 32], d1: &[u8; 32]| {
            let mut head = head;
            head[56..88].copy_from_slice(d0);
            head[88..].copy_from_slice(d1);
            finish_from_midstate(weights_midstate(), &head)
        };
        // Two threads: one fork/join for staging and weighing. Each thread stages its half,
        // the helper hands its digest over and waits for the seed, then each weighs its half.
        let helped = w.two_threads && w.xs.len() >= TWO_THREADS_MIN && {
            let (xs0, xs1) = w.xs.split_at_mut(half);
            let (ys0, ys1) = w.ys.split_at_mut(half);
            let (ok0, ok1) = w.lifted.split_at_mut(half);
            let (prep0, prep1) = w.prep.split_at_mut(half);
            std::thread::scope(|scope| {
                let (digest_tx, digest_rx) = std::sync::mpsc::sync_channel::<[u8; 32]>(1);
                let (seed_tx, seed_rx) = std::sync::mpsc::sync_channel::<[u8; 32]>(1);
                // The OS may refuse a thread: then everything is done below, on this one.
                let Some(h) = try_spawn_scoped(scope, move || {
                    digest_tx.send(stage(prep1, xs1, ys1, ok1, sigs)).ok()?;
                    weigh(prep1, &recv_spinning(&seed_rx)?, half);
                    Some(())
                }) else {
                    return false;
                };
                let d0 = stage(prep0, xs0, ys0, ok0, sigs);
                let staged = recv_spinning(&digest_rx).map(|d1| {
                    let seed = seed_of(&d0, &d1);
                    let sent = seed_tx.send(seed).is_ok();
                    weigh(prep0, &seed, 0);
                    sent
                });
                let weighed = h.join().ok().flatten().is_some();
                staged == Some(true) && weighed
            })
        };
        // One thread; or no helper thread could be started; or the helper failed, which cannot
        // happen short of a bug, and then everything is redone here (staging is idempotent,
        // weighing overwrites).
        if !helped {
            let (xs0, xs1) = w.xs.split_at_mut(half);
            let (ys0, ys1) = w.ys.split_at_mut(half);
            let (ok0, ok1) = w.lifted.split_at_mut(half);
            let (prep0, prep1) = w.prep.split_at_mut(half);
            let d0 = stage(prep0, xs0, ys0, ok0, sigs);
            let d1 = stage(prep1, xs1, ys1, ok1, sigs);
            weigh(&mut w.prep, &seed_of(&d0, &d1), 0);
        }
        let mut j = nr;
        let mut to_share = self
            .shared
            .as_ref()
            .filter(|_| w.xs.len() > nr)
            .map(SharedKeyCache::write);
        for k in w.keys.iter_mut() {
            if k.point.is_none() && !k.invalid {
                if w.lifted[j] {
                    let p = AffinePoint {
                        x: w.xs[j],
                        y: w.ys[j],
                        infinity: false,
                    };
                    let c = CachedKey::new(p);
                    self.cache.insert(&k.pk, c);
                    if let Some(shared) = &mut to_share {
                        shared.insert(&k.pk, p);
                    }
                    k.point = Some(c);
                } else {
                    k.invalid = true;
                }
                j += 1;
            }
        }
        drop(to_share);
        // Keep the signatures that parsed and whose nonce and key lifted.
        let mut keep = 0;
        for t in 0..nr {
            let p = &w.prep[t];
            if !p.parsed || !w.lifted[t] || w.keys[p.key as usize].invalid {
                continue;
            }
            if keep != t {
                w.prep[keep] = w.prep[t];
            }
            keep += 1;
        }
        w.prep.truncate(keep);
        unique
    }

    /// The batch equation over `prep[lo..hi]`: true when it holds. A key of the range without
    /// its point (which `prepare` never leaves) fails it closed: `false`, and narrowing and
    /// libsecp256k1 decide.
    fn equation(&mut self, lo: usize, hi: usize) -> bool {
        self.equation_terms(lo, hi) && self.equation_holds(lo, hi)
    }

    /// Puts the terms of the batch equation over `prep[lo..hi]`, negated (see the module
    /// docs), into `work.points` and `work.scalars`. `false` (terms incomplete) when a key has
    /// no point.
    fn equation_terms(&mut self, lo: usize, hi: usize) -> bool {
        let w = &mut self.work;
        w.points.clear();
        w.scalars.clear();
        let mut g = WideSum::ZERO;
        let mut key_sum = WideSum::ZERO;
        let mut cur_key = u32::MAX;
        let mut complete = true;
        // (Σ aᵢ·eᵢ)·P, GLV-split: (±k1)·P + (±k2)·(λ·P). `false` when the key has no point.
        let flush = |key: u32,
                     sum: &WideSum,
                     keys: &[BatchKey],
                     pts: &mut Vec<AffinePoint>,
                     ks: &mut Vec<u128>|
         -> bool {
            if key == u32::MAX {
                return true;
            }
            let Some(c) = keys[key as usize].point else {
                return false;
            };
            let split = sum.reduce().split_lambda();
            pts.push(if split.k1_neg { c.p.neg() } else { c.p });
            ks.push(split.k1);
            pts.push(if split.k2_neg {
                c.lambda_p.neg()
            } else {
                c.lambda_p
            });
            ks.push(split.k2);
            true
        };
        for p in &w.prep[lo..hi] {
            // Σ aᵢ·sᵢ, for −(Σ aᵢ·sᵢ)·G below
            g.add_mul_u128(&p.s, p.a);
            // aᵢ·Rᵢ
            w.points.push(p.r);
            w.scalars.push(p.a);
            if p.key != cur_key {
                complete &= flush(cur_key, &key_sum, &w.keys, &mut w.points, &mut w.scalars);
                cur_key = p.key;
                key_sum = WideSum::ZERO;
            }
            key_sum.add_mul_u128(&p.e, p.a);
        }
        complete &= flush(cur_key, &key_sum, &w.keys, &mut w.points, &mut w.scalars);
        let (g_lo, g_hi) = split_128(&g.reduce().negate());
        w.points.push(AffinePoint::GENERATOR);
        w.scalars.push(g_lo);
        w.points.push(*g128());
        w.scalars.push(g_hi);
        complete
    }

    /// Runs the MSM over the terms [`Verifier::equation_terms`] made for `prep[lo..hi]`.
    fn equation_holds(&mut self, lo: usize, hi: usize) -> bool {
        let w = &mut self.work;
        if w.two_threads && lo == 0 && hi == w.prep.len() && w.points.len() >= TWO_THREADS_MIN {
            msm::msm_two_threads_vartime(&w.points, &w.scalars, &mut w.msm).is_infinity()
        } else {
            msm::msm_vartime(&w.points, &w.scalars, &mut w.msm).is_infinity()
        }
    }

    /// [`Self::equation_budgeted`] over `prep[lo..hi]`, with the budget's fallback: `true` when
    /// the node is settled (the equation held, or the budget ran out and the node was checked one
    /// at a time), `false` when the equation failed and the node still needs narrowing.
    fn settled_by_equation(
        &mut self,
        sigs: &[SigRef<'_>],
        ok: &mut [bool],
        lo: usize,
        hi: usize,
    ) -> bool {
        match self.equation_budgeted(ok, lo, hi) {
            Some(held) => held,
            None => {
                self.singles(sigs, ok, lo, hi);
                true
            }
        }
    }

    /// The batch equation over `prep[lo..hi]` within narrowing's budget: `None` (and the
    /// budget marked exhausted) when its estimated cost would take the account past the limit,
    /// else whether it holds. Signatures it accepts get `true` in `ok`.
    fn equation_budgeted(&mut self, ok: &mut [bool], lo: usize, hi: usize) -> Option<bool> {
        if self.work.budget.exhausted {
            return None;
        }
        if !self.equation_terms(lo, hi) {
            return Some(false);
        }
        let cost = equation_cost(self.work.points.len()) as i64;
        let b = &mut self.work.budget;
        if b.loss.saturating_add(cost) > b.limit {
            b.exhausted = true;
            self.stats.budget_exhausted += 1;
            return None;
        }
        b.loss += cost;
        self.stats.batches += 1;
        if !self.equation_holds(lo, hi) {
            return Some(false);
        }
        let m = (hi - lo) as i64;
        self.work.budget.loss -= m * SINGLE as i64;
        self.accept(ok, lo, hi);
        Some(true)
    }

    /// Records that the equation over `prep[lo..hi]` held: all of them valid.
    fn accept(&mut self, ok: &mut [bool], lo: usize, hi: usize) {
        self.stats.batches_held += 1;
        self.stats.batch_accepted += (hi - lo) as u64;
        for p in &self.work.prep[lo..hi] {
            ok[p.idx as usize] = true;
        }
    }

    /// libsecp256k1's verdicts on `prep[lo..hi]`, one at a time.
    fn singles(&mut self, sigs: &[SigRef<'_>], ok: &mut [bool], lo: usize, hi: usize) {
        for j in lo..hi {
            ok[self.work.prep[j].idx as usize] = self.single(sigs, j);
        }
    }

    /// libsecp256k1's verdict on prepared signature `j`.
    fn single(&mut self, sigs: &[SigRef<'_>], j: usize) -> bool {
        self.stats.single_checked += 1;
        let p = self.work.prep[j];
        let sig = &sigs[p.idx as usize];
        let key = &mut self.work.keys[p.key as usize];
        let x = match key.point.as_mut() {
            Some(c) => Self::xonly_of(c),
            None => None,
        };
        match x.or_else(|| parse_xonly(sig.pubkey)) {
            Some(x) => verify_parsed(&x, sig.msg, sig.sig),
            None => false,
        }
    }

    /// Finds the verdicts of all of `prep`: the batch equation, and narrowing if it fails.
    ///
    /// A batch of [`PROBE_FIRST`] or more first has one signature (picked by the weights)
    /// checked with libsecp256k1. If it is invalid, a second one elsewhere is checked: if that
    /// is invalid too, failures are likely dense (a flood of bad signatures) and everything is
    /// checked one at a time instead of paying for the equation too. If the second is valid,
    /// the first may have been the batch's only bad signature (a 1-in-m draw): it is set aside
    /// and the equation runs over the rest. Otherwise this costs one single check per batch.
    ///
    /// When the equation fails, a few signatures drawn with the weights are checked one at a
    /// time (about one per four single checks' worth of the failed equation, twice that if
    /// the first draw found exactly one invalid, at most [`SAMPLES_MAX`] in all): two or more
    /// invalid ones among them mean invalid signatures are
    /// dense (one in 16 or more, most likely), and the rest is checked one at a time, where
    /// narrowing would pay for equations on top. Otherwise the rest is put in an order secret
    /// to the submitter ([`Verifier::shuffle`]) and narrowed ([`Verifier::narrow`]) within a
    /// work budget of [`BUDGET_PER_SIG`] per signature; with one invalid sample, one equation
    /// over the rest first checks whether it was the only one.
    fn settle(&mut self, sigs: &[SigRef<'_>], ok: &mut [bool]) {
        let m = self.work.prep.len();
        if m == 0 {
            return;
        }
        let mut lo = 0;
        if m >= PROBE_FIRST {
            let probe = (self.work.prep[m / 2].a as usize) % m;
            let v = self.single(sigs, probe);
            ok[self.work.prep[probe].idx as usize] = v;
            if !v {
                let second = (probe + 1 + (self.work.prep[m / 4].a as usize) % (m - 1)) % m;
                let v2 = self.single(sigs, second);
                ok[self.work.prep[second].idx as usize] = v2;
                if !v2 {
                    for j in (0..m).filter(|&j| j != probe && j != second) {
                        ok[self.work.prep[j].idx as usize] = self.single(sigs, j);
                    }
                    return;
                }
                self.work.prep.swap(0, probe);
                lo = 1;
            }
        }
        self.stats.batches += 1;
        let complete = self.equation_terms(lo, m);
        let top_cost = equation_cost(self.work.points.len());
        if complete && self.equation_holds(lo, m) {
            self.accept(ok, lo, m);
            return;
        }
        self.work.budget = Budget {
            loss: 0,
            limit: (m as u64 * BUDGET_PER_SIG) as i64,
            exhausted: false,
        };
        // Sample: check signatures drawn with the weights one at a time, about one per four
        // single checks the failed equation cost (so the sample costs a small part of it).
        // Two or more invalid among them: failures are dense, and narrowing would only add
        // equations to the single checks; check the rest one at a time. Exactly one: draw as
        // many again before deciding (one in a sample is what both a lone invalid signature,
        // rarely, and a density near one in the sample size, often, give).
        let stage = ((top_cost / SINGLE) as usize / 4).min(SAMPLES_MAX / 2);
        let mut samples = 0;
        let mut invalid = 0;
        for round in 0..2 {
            if round == 1 && invalid != 1 {
                break;
            }
            let end = (samples + stage).min(m - lo);
            for i in samples..end {
                let pick = lo + i + ((self.work.prep[lo + i].a >> 64) as usize) % (m - lo - i);
                self.work.prep.swap(lo + i, pick);
                let v = self.single(sigs, lo + i);
                ok[self.work.prep[lo + i].idx as usize] = v;
                invalid += usize::from(!v);
            }
            samples = end;
        }
        let lo = lo + samples;
        if invalid >= 2 {
            self.singles(sigs, ok, lo, m);
            return;
        }
        self.shuffle(lo, m);
        if invalid == 1 {
            // Perhaps the batch's only invalid signature: one equation over the rest tells.
            if self.settled_by_equation(sigs, ok, lo, m) {
                return;
            }
        }
        self.narrow(sigs, ok, lo, m, true);
    }

    /// Reorders `prep[lo..hi]` by the weights, which the submitter cannot predict: key groups
    /// in the order of their first member's weight, and within a group by weight. The order
    /// the batch arrived in (grouped by key prefix and `r`, both the submitter's choice) no
    /// longer decides which signatures share a narrowing node, so invalid signatures cannot
    /// be placed one per node to make every node fail. Signatures of one key stay adjacent
    /// (one key term per node).
    fn shuffle(&mut self, lo: usize, hi: usize) {
        let w = &mut self.work;
        w.key_rank.clear();
        w.key_rank.resize(w.keys.len(), 0);
        for p in &w.prep[lo..hi] {
            let r = &mut w.key_rank[p.key as usize];
            if *r == 0 {
                *r = p.a;
            }
        }
        let rank = &w.key_rank;
        w.prep[lo..hi].sort_unstable_by_key(|p| (rank[p.key as usize], p.a));
    }

    /// Finds the verdicts of `prep[lo..hi]`; `failed` says the equation is known to fail there.
    ///
    /// Test the left half; if it holds, the right half is known to fail and is split without
    /// being tested; otherwise the right half is searched first (it usually holds, paying
    /// back the budget early), then the left. At every failing node one signature chosen
    /// with the weights is checked with libsecp256k1 first: if it is invalid, failures are
    /// likely dense there, and one equation over the rest decides between "it was the only
    /// one" and one-at-a-time for the node. Nodes of at most [`LEAF`] signatures go one at a
    /// time.
    ///
    /// # Budget
    /// Sprinkled invalid signatures (one in 5 to one in 16, say) make every node fail down to
    /// the leaves, so equations would come on top of a near-full set of single checks. The
    /// [`Budget`] keeps the account: each equation adds its estimated cost
    /// ([`equation_cost`]), each that holds takes off the single checks it saved. Narrowing
    /// then costs what one-at-a-time checking costs plus the account; when an equation would
    /// take it past [`BUDGET_PER_SIG`] per signature, every signature still open is checked
    /// one at a time. A lone invalid signature keeps the account negative (halves hold),
    /// so it never reaches the limit.
    fn narrow(&mut self, sigs: &[SigRef<'_>], ok: &mut [bool], lo: usize, hi: usize, failed: bool) {
        let m = hi - lo;
        if m == 0 {
            return;
        }
        if m <= LEAF || self.work.budget.exhausted {
            self.singles(sigs, ok, lo, hi);
            return;
        }
        if !failed && self.settled_by_equation(sigs, ok, lo, hi) {
            return;
        }
        // The equation fails on [lo, hi). Probe one signature picked by its weight.
        let probe = lo + (self.work.prep[lo].a as usize ^ self.work.prep[hi - 1].a as usize) % m;
        let v = self.single(sigs, probe);
        ok[self.work.prep[probe].idx as usize] = v;
        self.work.prep.swap(lo, probe);
        let lo = lo + 1;
        if lo == hi {
            return;
        }
        if !v {
            // The probe is invalid: either it was the node's only bad signature, or failures
            // are dense here. One equation over the rest tells which, so a lucky probe never
            // turns a single bad signature into a node's worth of single checks.
            if hi - lo > LEAF && self.equation_budgeted(ok, lo, hi) == Some(true) {
                return;
            }
            // Dense failures here (or no budget left): one at a time.
            self.singles(sigs, ok, lo, hi);
            return;
        }
        let mid = lo + (hi - lo) / 2;
        if mid == lo {
            // One signature left and the rest valid: it is the invalid one (libsecp256k1 says).
            self.narrow(sigs, ok, lo, hi, true);
            return;
        }
        match self.equation_budgeted(ok, lo, mid) {
            Some(true) => self.narrow(sigs, ok, mid, hi, true),
            Some(false) => {
                self.narrow(sigs, ok, mid, hi, false);
                self.narrow(sigs, ok, lo, mid, true);
            }
            None => self.singles(sigs, ok, lo, hi),
        }
    }
}

/// The SHA-256 midstate of the weights' tag, computed once.
fn weights_midstate() -> &'static [u32; 8] {
    static MID: OnceLock<[u32; 8]> = OnceLock::new();
    MID.get_or_init(|| tagged_midstate(WEIGHTS_TAG))
}

#[cfg(test)]
mod tests {
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
    fn g128_is_two_to_the_128_times_g() {
        // 2^128·G = (2^64·G) doubled 64 more times, computed independently via scalar mul of
        // the split: G·2^128 must equal the result of from_u128 arithmetic in the MSM.
        let k = Scalar::from_u128(u128::MAX).add(&Scalar::ONE); // 2^128
        let (lo, hi) = split_128(&k);
        assert_eq!((lo, hi), (0, 1));
        let mut s = msm::Scratch::default();
        let a = msm::msm_vartime(&[*g128()], &[1], &mut s);
        let mut b = JacobianPoint::from_affine(&AffinePoint::GENERATOR);
        for _ in 0..64 {
            b = b.double_vartime();
        }
        let b = b.to_affine_vartime();
        let c = msm::msm_vartime(&[b], &[1u128 << 64], &mut s);
        assert!(a.add_vartime(&c.neg()).is_infinity());
    }

    #[test]
    fn weights_are_fresh_and_nonzero() {
        // Same batch twice: different weights (the counter), first weight 1.
        let mut v = Verifier::new();
        // Key and r: the x of G (both lift); six different s values (no duplicates).
        let pk = AffinePoint::GENERATOR.x.to_bytes();
        let msg = [3u8; 32];
        let sigs = weight_inputs(6);
        let refs = refs_under(&pk, &msg, &sigs);
        v.prepare(&refs);
        let a1: Vec<u128> = v.work.prep.iter().map(|p| p.a).collect();
        v.prepare(&refs);
        let a2: Vec<u128> = v.work.prep.iter().map(|p| p.a).collect();
        assert_eq!(a1.len(), 6);
        assert_eq!(a1[0], 1);
        assert_ne!(a1[1..], a2[1..]);
        assert!(a1.iter().all(|&a| a != 0));
        // Weights of one batch differ from each other.
        assert!(a1[1..]
            .iter()
            .enumerate()
            .all(|(i, a)| a1[i + 2..].iter().all(|b| a != b)));
    }

    /// `n` distinct signatures (not valid ones: only the weights are looked at) over the
    /// key and nonce x(G), which both lift.
    fn weight_inputs(n: usize) -> Vec<[u8; 64]> {
        let x = AffinePoint::GENERATOR.x.to_bytes();
        (0..n)
            .map(|i| {
                let mut sig = [0u8; 64];
                sig[..32].copy_from_slice(&x);
                sig[56..].copy_from_slice(&(i as u64 + 1).to_be_bytes());
                sig
            })
            .collect()
    }

    /// Views of `sigs`, all under the key `pk` and the message `msg`.
    fn refs_under<'a>(
        pk: &'a [u8; 32],
        msg: &'a [u8; 32],
        sigs: &'a [[u8; 64]],
    ) -> Vec<SigRef<'a>> {
        sigs.iter()
            .map(|sig| SigRef {
                pubkey: pk,
                msg,
                sig,
            })
            .collect()
    }

    fn weights_of(v: &mut Verifier, sigs: &[[u8; 64]], msg: &[u8; 32]) -> Vec<(u128, Scalar)> {
        let pk = AffinePoint::GENERATOR.x.to_bytes();
        v.prepare(&refs_under(&pk, msg, sigs));
        v.work
            .prep
            .iter()
            .map(|p| (p.a, p.e.mul_u128(p.a)))
            .collect()
    }

    /// A batch's only invalid signature, picked by the first probe (a secret is searched for
    /// that makes it so): two single checks and one equation over the rest, never a batch's
    /// worth of single checks.
    #[test]
    fn first_probe_on_the_only_bad_signature() {
        let secp = secp256k1::Secp256k1::new();
        let n = PROBE_FIRST;
        let kps: Vec<secp256k1::Keypair> = (1..=8u8)
            .map(|i| secp256k1::Keypair::from_seckey_slice(&secp, &[i; 32]).expect("key"))
            .collect();
        let mut owned: Vec<([u8; 32], [u8; 32], [u8; 64])> = (0..n)
            .map(|i| {
                let kp = &kps[i % 8];
                let msg = [i as u8; 32];
                let sig = secp.sign_schnorr_no_aux_rand(&msg, kp).to_byte_array();
                (kp.x_only_public_key().0.serialize(), msg, sig)
            })
            .collect();
        let bad = 37;
        owned[bad].1[0] ^= 1;
        let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
        let secret = (0u32..20_000)
            .map(|k| {
                let mut s = [0u8; 32];
                s[..4].copy_from_slice(&k.to_le_bytes());
                s
            })
            .find(|s| {
                let mut v = Verifier::with_secret(*s);
                v.prepare(&refs);
                let m = v.work.prep.len();
                let probe = (v.work.prep[m / 2].a as usize) % m;
                v.work.prep[probe].idx as usize == bad
            })
            .expect("a secret whose first probe is the bad signature");
        let mut v = Verifier::with_secret(secret);
        let mut ok = Vec::new();
        assert!(!v.verify_batch(&refs, &mut ok));
        let want: Vec<bool> = (0..n).map(|i| i != bad).collect();
        assert_eq!(ok, want);
        let st = v.stats();
        assert_eq!(st.single_checked, 2, "{st:?}");
        assert_eq!((st.batches, st.batches_held), (1, 1), "{st:?}");
        assert_eq!(st.batch_accepted, n as u64 - 1, "{st:?}");
    }

    /// "Signatures" that satisfy `s·G = R` (s = the nonce, no key term) under the key x(G):
    /// invalid for BIP-340, yet the batch equation holds over them if the key terms are left
    /// out.
    fn keyless_sigs(n: usize) -> (Vec<[u8; 64]>, [u8; 32]) {
        let secp = secp256k1::Secp256k1::new();
        let sigs = (0..n)
            .map(|i| {
                let mut k = [0u8; 32];
                k[31] = 11 + i as u8;
                k[0] = 1;
                let sk = secp256k1::SecretKey::from_slice(&k).expect("nonce");
                let (x, parity) = sk.x_only_public_key(&secp);
                let sk = if parity == secp256k1::Parity::Odd {
                    sk.negate()
                } else {
                    sk
                };
                let mut sig = [0u8; 64];
                sig[..32].copy_from_slice(&x.serialize());
                sig[32..].copy_from_slice(&sk.secret_bytes());
                sig
            })
            .collect();
        (sigs, AffinePoint::GENERATOR.x.to_bytes())
    }

    #[test]
    fn equation_fails_closed_on_a_key_without_its_point() {
        let (sigs, pk) = keyless_sigs(6);
        let msg = [5u8; 32];
        let refs = refs_under(&pk, &msg, &sigs);
        let mut v = Verifier::with_secret([3; 32]);
        v.prepare(&refs);
        assert_eq!(v.work.prep.len(), 6);
        // As prepared, the key term is there and the equation fails (the signatures are invalid).
        assert!(!v.equation(0, 6));
        // A key without its point (a state `prepare` never leaves): the key term cannot be
        // formed, and the equation must fail rather than hold without it.
        for k in v.work.keys.iter_mut() {
            k.point = None;
        }
        assert!(!v.equation(0, 6));
        let mut ok = vec![false; 6];
        assert_eq!(v.equation_budgeted(&mut ok, 0, 6), Some(false));
        assert_eq!(ok, [false; 6]);
    }

    /// `n` signed events from 8 keys, every `bad`-th with a flipped message bit.
    fn signed(n: usize, bad: usize) -> Vec<([u8; 32], [u8; 32], [u8; 64])> {
        let secp = secp256k1::Secp256k1::new();
        let kps: Vec<secp256k1::Keypair> = (1..=8u8)
            .map(|i| secp256k1::Keypair::from_seckey_slice(&secp, &[i; 32]).expect("key"))
            .collect();
        (0..n)
            .map(|i| {
                let kp = &kps[i % 8];
                let mut msg = [0u8; 32];
                msg[..8].copy_from_slice(&(i as u64).to_le_bytes());
                let sig = secp.sign_schnorr_no_aux_rand(&msg, kp).to_byte_array();
                if i % bad == 0 {
                    msg[31] ^= 1;
                }
                (kp.x_only_public_key().0.serialize(), msg, sig)
            })
            .collect()
    }

    #[test]
    fn grouping_with_colliding_prefixes_matches_whole_compares() {
        // A second key sharing the first one's 8-byte prefix (a different x that lifts), the
        // first key's signatures repeated under it (same key and r prefixes, different key:
        // not duplicates, and invalid), exact duplicates, and distinct keys.
        let secp = secp256k1::Secp256k1::new();
        let kp = |i: u8| secp256k1::Keypair::from_seckey_slice(&secp, &[i; 32]).expect("key");
        let main = kp(1);
        let pk = main.x_only_public_key().0.serialize();
        let twin = (0..=255u8)
            .map(|t| {
                let mut b = pk;
                b[31] ^= t.wrapping_add(1);
                b
            })
            .find(|b| XOnlyPublicKey::from_byte_array(b).is_ok())
            .expect("a lifting x");
        let mut owned: Vec<([u8; 32], [u8; 32], [u8; 64])> = Vec::new();
        for i in 0..24u8 {
            let msg = [i; 32];
            let sig = secp.sign_schnorr_no_aux_rand(&msg, &main).to_byte_array();
            // Exact duplicates next to each other, and (i % 7 == 0) one after the twin's copy.
            let copies = 1 + usize::from(i % 5 == 0);
            owned.extend(std::iter::repeat_n((pk, msg, sig), copies));
            owned.extend(std::iter::repeat_n((twin, msg, sig), copies));
            if i % 7 == 0 {
                owned.push((pk, msg, sig));
            }
            let other = kp(2 + i % 3);
            let other_sig = secp.sign_schnorr_no_aux_rand(&msg, &other).to_byte_array();
            owned.push((other.x_only_public_key().0.serialize(), msg, other_sig));
        }
        let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
        let mut v = Verifier::with_secret([5; 32]);
        v.prepare(&refs);
        // The twin: whole-array compares along the same order.
        let mut dup_of = vec![u32::MAX; refs.len()];
        let mut keys: Vec<[u8; 32]> = Vec::new();
        let mut groups: Vec<(u32, usize)> = Vec::new();
        let mut prev: Option<usize> = None;
        for &(_, i) in &v.work.order {
            let (i, s) = (i as usize, &refs[i as usize]);
            if let Some(p) = prev {
                let q = &refs[p];
                if q.sig == s.sig && q.msg == s.msg && q.pubkey == s.pubkey {
                    dup_of[i] = groups.last().map_or(0, |g| g.0);
                    continue;
                }
            }
            if prev.is_none_or(|p| refs[p].pubkey != s.pubkey) {
                keys.push(*s.pubkey);
            }
            prev = Some(i);
            groups.push((i as u32, keys.len() - 1));
        }
        assert_eq!(v.work.dup_of, dup_of);
        assert!(dup_of.iter().any(|&d| d != u32::MAX));
        let got_keys: Vec<[u8; 32]> = v.work.keys.iter().map(|k| k.pk).collect();
        assert_eq!(got_keys, keys);
        assert!(keys.contains(&twin));
        let got: Vec<(u32, usize)> = v
            .work
            .prep
            .iter()
            .map(|p| (p.idx, p.key as usize))
            .collect();
        // Every entry parses and lifts (the twin's signatures fail only the equation).
        assert_eq!(got, groups);
        // And the verdicts.
        let want: Vec<bool> = refs.iter().map(crate::verify_one).collect();
        let mut ok = Vec::new();
        assert!(!v.verify_batch(&refs, &mut ok));
        assert_eq!(ok, want);
        assert!(want.iter().filter(|&&b| b).count() > refs.len() / 2);
    }

    #[test]
    fn two_threads_with_spawns_refused() {
        // Large enough for the two-thread staging; one bad signature in 50.
        let owned = signed(TWO_THREADS_MIN + 44, 50);
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
        refused.work.two_threads = true;
        one.prepare(&refs);
        crate::spawn::with_spawns_refused(|| refused.prepare(&refs));
        let a: Vec<u128> = one.work.prep.iter().map(|p| p.a).collect();
        let b: Vec<u128> = refused.work.prep.iter().map(|p| p.a).collect();
        assert_eq!(a, b);
    }

    #[test]
    fn budget_stops_narrowing_under_sprinkled_failures() {
        // One signature in 23 invalid, 8 keys: the sample after the failed equation rarely
        // calls that dense, every narrowing node fails, and the budget ends the equations.
        // The inputs and secrets are fixed, so is the outcome; unbounded narrowing takes
        // about 200 equations here.
        let owned = signed(1024, 23);
        let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
        let want: Vec<bool> = refs.iter().map(crate::verify_one).collect();
        let mut exhausted = 0;
        for k in 0..4u8 {
            let mut v = Verifier::with_secret([k; 32]);
            let mut ok = Vec::new();
            assert!(!v.verify_batch(&refs, &mut ok));
            assert_eq!(ok, want, "secret {k}");
            let st = v.stats();
            assert!(st.budget_exhausted <= 1, "{st:?}");
            assert!(st.batches <= 100, "{st:?}");
            assert!(st.single_checked <= 1024 + 2, "{st:?}");
            // The account never went past the limit.
            let b = v.work.budget;
            assert!(b.loss <= b.limit, "{b:?}");
            exhausted += st.budget_exhausted;
        }
        assert!(exhausted >= 2, "the budget path was not taken");
    }

    #[test]
    fn equation_cost_model() {
        // Per signature of a batch, the equation is cheaper than a single check from four
        // signatures on (MIN_BATCH), and far cheaper at scale.
        let per_sig = |n: usize, keys: usize| equation_cost(n + 2 * keys + 2) / n as u64;
        assert!(per_sig(4, 1) < SINGLE);
        assert!(per_sig(1024, 1024) < SINGLE / 4);
        assert!(per_sig(1024, 8) < SINGLE / 10);
        // The cost per point falls with N (larger windows amortise better), as in the sweep.
        let mut last = u64::MAX;
        for points in 1..10_000 {
            let c = equation_cost(points) / points as u64;
            assert!(c <= last, "cost per point rises at {points}");
            last = c;
        }
    }

    #[test]
    fn shuffle_keeps_key_groups_and_follows_the_weights() {
        let owned = signed(64, usize::MAX);
        let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
        let mut v = Verifier::with_secret([6; 32]);
        v.prepare(&refs);
        let before: Vec<u32> = v.work.prep.iter().map(|p| p.idx).collect();
        v.shuffle(0, 64);
        let after: Vec<u32> = v.work.prep.iter().map(|p| p.idx).collect();
        assert_ne!(before, after);
        let mut sorted = after.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..64).collect::<Vec<u32>>());
        // Each key's signatures are adjacent, in increasing weight.
        let keys: Vec<u32> = v.work.prep.iter().map(|p| p.key).collect();
        let runs = 1 + keys.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(runs, 8);
        assert!(v
            .work
            .prep
            .windows(2)
            .all(|w| w[0].key != w[1].key || w[0].a < w[1].a));
        // Another secret, another order.
        let mut u = Verifier::with_secret([7; 32]);
        u.prepare(&refs);
        u.shuffle(0, 64);
        let other: Vec<u32> = u.work.prep.iter().map(|p| p.idx).collect();
        assert_ne!(after, other);
    }

    #[test]
    fn two_threads_derive_the_same_weights() {
        // Same secret, same counter: the split work gives exactly the single-thread weights
        // and products, for even and odd sizes around the two-thread threshold.
        for n in [TWO_THREADS_MIN - 1, TWO_THREADS_MIN, 601, 1024] {
            let sigs = weight_inputs(n);
            let mut one = Verifier::with_secret([9; 32]);
            let mut two = Verifier::with_secret([9; 32]);
            two.work.two_threads = true;
            let a = weights_of(&mut one, &sigs, &[1; 32]);
            let b = weights_of(&mut two, &sigs, &[1; 32]);
            assert_eq!(a.len(), n);
            assert_eq!(a[0].0, 1, "n {n}");
            assert!(a == b, "n {n}: weights differ between one and two threads");
            // And they commit to the inputs: another message changes every later weight.
            let mut other = Verifier::with_secret([9; 32]);
            let c = weights_of(&mut other, &sigs, &[2; 32]);
            assert!(a[1..].iter().zip(&c[1..]).all(|(x, y)| x.0 != y.0), "n {n}");
        }
    }

    #[test]
    fn weights_are_the_halves_of_the_pair_hashes_on_every_sha_path() {
        use crate::backend::sha::{set_sha_selected, sha_selected, Sha};
        let seed = [0x5e; 32];
        // The reference: weight 2j + h of SHA-256_tag(seed ‖ j), one hash at a time.
        let want = |index: usize| -> u128 {
            if index == 0 {
                return 1;
            }
            let mut block = [0u8; 40];
            block[..32].copy_from_slice(&seed);
            block[32..].copy_from_slice(&((index / 2) as u64).to_le_bytes());
            let h = finish_from_midstate(weights_midstate(), &block);
            let half: [u8; 16] = h[16 * (index % 2)..][..16].try_into().unwrap();
            u128::from_le_bytes(half).max(1)
        };
        let before = sha_selected();
        let blank = Prepared {
            idx: 0,
            key: 0,
            parsed: false,
            r: AffinePoint::IDENTITY,
            a: 0,
            s: Scalar::ZERO,
            e: Scalar::ZERO,
        };
        for sha in Sha::available() {
            set_sha_selected(sha);
            for (first, len) in [(0usize, 1usize), (0, 37), (1, 1), (5, 20), (8, 33)] {
                let mut prep = vec![blank; len];
                weigh(&mut prep, &seed, first);
                for (i, p) in prep.iter().enumerate() {
                    assert_eq!(p.a, want(first + i), "{sha:?} first {first} entry {i}");
                }
            }
        }
        set_sha_selected(before);
    }

    #[test]
    fn weights_midstate_is_recomputed() {
        assert_eq!(
            *weights_midstate(),
            [
                0x733a_f9c4,
                0x2483_b932,
                0x07fb_f317,
                0xa75f_b2e0,
                0x3064_eada,
                0xf4c7_40b7,
                0xac4e_3e24,
                0x37d7_013b
            ]
        );
    }
}
