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
//! with `a₁ = 1` and the other `aᵢ` 128-bit weights (BIP-340, "Batch Verification"). If any
//! signature is invalid the sum is ∞ only with probability about 2^−128 over the weights.
//! Signatures by the same key merge into one key term. The multi-scalar multiplication
//! ([`crate::msm`]) sees `N = n + 2k + 2` points with scalars below 2^128: every `−Rᵢ` with
//! `aᵢ` (unsplit), every key's scalar GLV-split over `P` and `λ·P = (β·x, y)`, and `Σ aᵢ·sᵢ`
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
use crate::arithmetic::scalar::Scalar;
use crate::backend;
use crate::bip340::{
    challenge_hash, finish_from_midstate, parse_xonly, tagged_midstate, verify_parsed, SigRef,
};
use crate::key_cache::{KeyCache, DEFAULT_CAPACITY};
use crate::msm;
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
    /// `−R` once lifted (x = r).
    neg_r: AffinePoint,
    s: Scalar,
    e: Scalar,
    /// The weight `aᵢ`.
    a: u128,
    /// `aᵢ·sᵢ` and `aᵢ·eᵢ`, set with the weight.
    a_s: Scalar,
    a_e: Scalar,
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
}

/// A batch verifier: a cache of lifted keys, the weights' secret, and scratch buffers.
/// Use one per thread (it is `Send`); see [`crate::with_thread_verifier`].
///
/// The key cache holds up to 2,048 valid keys (set-associative, 8 ways, least recently used
/// evicted within a set, indexed by SipHash under a per-instance random key). Per key it keeps
/// the lifted point, `λ·P`, and libsecp256k1's parsed key once a single verification needed it.
#[derive(Debug)]
pub struct Verifier {
    secret: [u8; 32],
    counter: u64,
    cache: KeyCache<CachedKey>,
    shared: Option<SharedKeyCache>,
    stats: Stats,
    work: Work,
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
/// challenge `eᵢ`; lifts all of `xs` (which may hold cold keys after the nonces); sets `−Rᵢ`.
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
    for (p, x) in prep.iter_mut().zip(xs.iter_mut()) {
        let sig = &sigs[p.idx as usize];
        let (r_bytes, s_bytes) = halves(sig.sig);
        let (Some(r), Some(s)) = (
            FieldElement::from_bytes(r_bytes),
            Scalar::from_bytes_checked(s_bytes),
        ) else {
            continue;
        };
        let e = challenge_hash(r_bytes, sig.pubkey, sig.msg);
        transcript.update(e);
        transcript.update(s_bytes);
        *x = r;
        p.parsed = true;
        p.s = s;
        p.e = Scalar::from_bytes_reduced(&e);
    }
    backend::lift_x_many_vartime(xs, ys, lifted);
    for ((p, (x, y)), &ok) in prep
        .iter_mut()
        .zip(xs.iter().zip(ys.iter()))
        .zip(lifted.iter())
    {
        if p.parsed && ok {
            p.neg_r = AffinePoint {
                x: *x,
                y: *y,
                infinity: false,
            }
            .neg();
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
/// batch's very first weight is 1. Sets `a`, `a·s` and `a·e` (an entry that did not parse
/// gets its weight, with `s = e = 0`, and is dropped later). `first` may be odd: the pair
/// that straddles two calls is hashed by both.
fn weigh(prep: &mut [Prepared], seed: &[u8; 32], first: usize) {
    let mid = weights_midstate();
    let mut block = [0u8; 40];
    block[..32].copy_from_slice(seed);
    let mut h = [0u8; 32];
    for (i, p) in prep.iter_mut().enumerate() {
        let index = first + i;
        let pair = index / 2;
        if i == 0 || index % 2 == 0 {
            block[32..].copy_from_slice(&(pair as u64).to_le_bytes());
            h = finish_from_midstate(mid, &block);
        }
        let half = &h[16 * (index % 2)..][..16];
        let a = if index == 0 {
            1
        } else {
            u128::from_le_bytes(half.try_into().unwrap_or_default()).max(1)
        };
        let sa = Scalar::from_u128(a);
        p.a = a;
        p.a_s = sa.mul(&p.s);
        p.a_e = sa.mul(&p.e);
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
        let m = self.work.prep.len();
        self.narrow(sigs, ok, 0, m, false);
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
        let mut unique = 0;
        let mut prev: Option<usize> = None;
        let mut rep: usize = 0;
        for oi in 0..w.order.len() {
            let i = w.order[oi].1 as usize;
            let s = &sigs[i];
            if let Some(p) = prev {
                let q = &sigs[p];
                if q.sig == s.sig && q.msg == s.msg && q.pubkey == s.pubkey {
                    w.dup_of[i] = rep as u32;
                    continue;
                }
            }
            let same_key = prev.is_some_and(|p| sigs[p].pubkey == s.pubkey);
            prev = Some(i);
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
                neg_r: AffinePoint::IDENTITY,
                s: Scalar::ZERO,
                e: Scalar::ZERO,
                a: 0,
                a_s: Scalar::ZERO,
                a_e: Scalar::ZERO,
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
        // are removed); a₁ = 1. Each weight is multiplied into s and e here.
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
                let h = scope.spawn(move || {
                    digest_tx.send(stage(prep1, xs1, ys1, ok1, sigs)).ok()?;
                    weigh(prep1, &recv_spinning(&seed_rx)?, half);
                    Some(())
                });
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
        // One thread; or the helper failed, which cannot happen short of a bug, and then
        // everything is redone here (staging is idempotent, weighing overwrites).
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
            let p = w.prep[t];
            if !p.parsed || !w.lifted[t] || w.keys[p.key as usize].invalid {
                continue;
            }
            if keep != t {
                w.prep[keep] = p;
            }
            keep += 1;
        }
        w.prep.truncate(keep);
        unique
    }

    /// The batch equation over `prep[lo..hi]`: true when it holds.
    fn equation(&mut self, lo: usize, hi: usize) -> bool {
        let w = &mut self.work;
        w.points.clear();
        w.scalars.clear();
        let mut g = Scalar::ZERO;
        let mut key_sum = Scalar::ZERO;
        let mut cur_key = u32::MAX;
        let flush = |key: u32,
                     sum: &Scalar,
                     keys: &[BatchKey],
                     pts: &mut Vec<AffinePoint>,
                     ks: &mut Vec<u128>| {
            if key == u32::MAX {
                return;
            }
            // −(Σ aᵢ·eᵢ)·P, GLV-split: (±k1)·P + (±k2)·(λ·P).
            let Some(c) = keys[key as usize].point else {
                return;
            };
            let split = sum.negate().split_lambda();
            pts.push(if split.k1_neg { c.p.neg() } else { c.p });
            ks.push(split.k1);
            pts.push(if split.k2_neg {
                c.lambda_p.neg()
            } else {
                c.lambda_p
            });
            ks.push(split.k2);
        };
        for p in &w.prep[lo..hi] {
            // (Σ aᵢ·sᵢ)·G
            g = g.add(&p.a_s);
            // −aᵢ·Rᵢ
            w.points.push(p.neg_r);
            w.scalars.push(p.a);
            if p.key != cur_key {
                flush(cur_key, &key_sum, &w.keys, &mut w.points, &mut w.scalars);
                cur_key = p.key;
                key_sum = Scalar::ZERO;
            }
            key_sum = key_sum.add(&p.a_e);
        }
        flush(cur_key, &key_sum, &w.keys, &mut w.points, &mut w.scalars);
        let (g_lo, g_hi) = split_128(&g);
        w.points.push(AffinePoint::GENERATOR);
        w.scalars.push(g_lo);
        w.points.push(*g128());
        w.scalars.push(g_hi);
        if w.two_threads && lo == 0 && hi == w.prep.len() && w.points.len() >= TWO_THREADS_MIN {
            msm::msm_two_threads_vartime(&w.points, &w.scalars, &mut w.msm).is_infinity()
        } else {
            msm::msm_vartime(&w.points, &w.scalars, &mut w.msm).is_infinity()
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

    /// Finds the verdicts of `prep[lo..hi]`; `failed` says the equation is known to fail there.
    fn narrow(&mut self, sigs: &[SigRef<'_>], ok: &mut [bool], lo: usize, hi: usize, failed: bool) {
        let m = hi - lo;
        if m == 0 {
            return;
        }
        if m <= LEAF && (failed || lo != 0 || hi != self.work.prep.len()) {
            for j in lo..hi {
                ok[self.work.prep[j].idx as usize] = self.single(sigs, j);
            }
            return;
        }
        if !failed && lo == 0 && hi == self.work.prep.len() && m >= PROBE_FIRST {
            // A large batch: check one signature (picked by the weights) with libsecp256k1
            // before the equation. If it is invalid, check a second one elsewhere: if that is
            // invalid too, failures are likely dense (a flood of bad signatures), so check
            // everything one at a time instead of paying for the equation too. If the second
            // is valid, the first may have been the batch's only bad signature (a 1-in-m
            // draw): set it aside and go on with the rest. Otherwise this costs one single
            // check per batch.
            let probe = (self.work.prep[m / 2].a as usize) % m;
            let v = self.single(sigs, probe);
            ok[self.work.prep[probe].idx as usize] = v;
            if !v {
                let second = (probe + 1 + (self.work.prep[m / 4].a as usize) % (m - 1)) % m;
                let v2 = self.single(sigs, second);
                ok[self.work.prep[second].idx as usize] = v2;
                if v2 {
                    self.work.prep.swap(0, probe);
                    self.narrow(sigs, ok, 1, m, false);
                    return;
                }
                for j in (0..m).filter(|&j| j != probe && j != second) {
                    ok[self.work.prep[j].idx as usize] = self.single(sigs, j);
                }
                return;
            }
        }
        if !failed {
            self.stats.batches += 1;
            if self.equation(lo, hi) {
                self.stats.batches_held += 1;
                self.stats.batch_accepted += m as u64;
                for p in &self.work.prep[lo..hi] {
                    ok[p.idx as usize] = true;
                }
                return;
            }
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
            if hi - lo > LEAF {
                self.stats.batches += 1;
                if self.equation(lo, hi) {
                    self.stats.batches_held += 1;
                    self.stats.batch_accepted += (hi - lo) as u64;
                    for p in &self.work.prep[lo..hi] {
                        ok[p.idx as usize] = true;
                    }
                    return;
                }
            }
            // Dense failures here: one at a time.
            for j in lo..hi {
                ok[self.work.prep[j].idx as usize] = self.single(sigs, j);
            }
            return;
        }
        let mid = lo + (hi - lo) / 2;
        if mid == lo {
            // One signature left and the rest valid: it is the invalid one (libsecp256k1 says).
            self.narrow(sigs, ok, lo, hi, true);
            return;
        }
        self.stats.batches += 1;
        if self.equation(lo, mid) {
            self.stats.batches_held += 1;
            self.stats.batch_accepted += (mid - lo) as u64;
            for p in &self.work.prep[lo..mid] {
                ok[p.idx as usize] = true;
            }
            self.narrow(sigs, ok, mid, hi, true);
        } else {
            self.narrow(sigs, ok, lo, mid, true);
            self.narrow(sigs, ok, mid, hi, false);
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
        let mut sigs = Vec::new();
        for i in 0..6u8 {
            let mut sig = [0u8; 64];
            sig[..32].copy_from_slice(&pk);
            sig[63] = i + 1;
            sigs.push(sig);
        }
        let refs: Vec<_> = sigs
            .iter()
            .map(|s| SigRef {
                pubkey: &pk,
                msg: &msg,
                sig: s,
            })
            .collect();
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

    fn weights_of(v: &mut Verifier, sigs: &[[u8; 64]], msg: &[u8; 32]) -> Vec<(u128, Scalar)> {
        let pk = AffinePoint::GENERATOR.x.to_bytes();
        let refs: Vec<_> = sigs
            .iter()
            .map(|s| SigRef {
                pubkey: &pk,
                msg,
                sig: s,
            })
            .collect();
        v.prepare(&refs);
        v.work.prep.iter().map(|p| (p.a, p.a_e)).collect()
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
