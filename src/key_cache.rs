//! Bounded cache of parsed public keys.
//!
//! Nostr traffic repeats authors: a relay sees the same few thousand keys again and again. Lifting
//! an x-only key to its curve point costs a square root (about 4.5 µs in scalar code), so the
//! [`Verifier`](crate::Verifier) keeps the lifted point (and what else it needs per key) here.
//!
//! # Layout
//! Set-associative: `capacity / WAYS` sets of [`WAYS`] entries. A key goes to the set chosen by
//! SipHash-1-3 of its 32 bytes under a per-instance random 128-bit key drawn from the operating
//! system's CSPRNG (`getrandom`: the Web Crypto API on wasm32 with feature `js`), so an attacker
//! who does not know that key cannot aim many keys at one set to evict a victim's entries.
//! (`std::hash::RandomState` is not used: on targets without an OS source, such as wasm32, its
//! keys are predictable.) Within a set the least recently used entry is evicted.
//! Only keys that lifted successfully are inserted (the caller's duty: invalid keys are never
//! cached, so they are re-checked every time).

use crate::arithmetic::group::AffinePoint;
use secp256k1::{PublicKey, XOnlyPublicKey};
use siphasher::sip::SipHasher13;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::{Arc, PoisonError, RwLock};

/// Entries per set.
pub(crate) const WAYS: usize = 8;

/// The default number of keys held.
pub(crate) const DEFAULT_CAPACITY: usize = 2048;

#[derive(Clone, Debug)]
struct Slot<V> {
    key: [u8; 32],
    /// Last use (a tick of the cache); 0 = empty.
    stamp: u64,
    value: V,
}

/// A bounded, set-associative, LRU-per-set map from 32-byte keys to `V`.
pub(crate) struct KeyCache<V> {
    slots: Vec<Option<Slot<V>>>,
    sets_mask: usize,
    /// The SipHash key (secret: it decides which keys share a set).
    sip_key: [u64; 2],
    tick: u64,
    len: usize,
}

impl<V> core::fmt::Debug for KeyCache<V> {
    /// The sizes only: neither the SipHash key nor the entries.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KeyCache")
            .field("len", &self.len)
            .field("capacity", &self.slots.len())
            .finish_non_exhaustive()
    }
}

/// A fresh SipHash key from the operating system's CSPRNG. Should the OS have no randomness
/// (it then has none for [`crate::Verifier::new`] either, which panics), the key comes from
/// `RandomState` instead: still per process, only predictable where that is.
fn random_sip_key() -> [u64; 2] {
    let mut b = [0u8; 16];
    if getrandom::getrandom(&mut b).is_err() {
        let s = RandomState::new();
        b[..8].copy_from_slice(&s.hash_one(0u8).to_le_bytes());
        b[8..].copy_from_slice(&s.hash_one(1u8).to_le_bytes());
    }
    let (k0, k1) = b.split_at(8);
    [
        u64::from_le_bytes(k0.try_into().unwrap_or_default()),
        u64::from_le_bytes(k1.try_into().unwrap_or_default()),
    ]
}

impl<V> KeyCache<V> {
    /// A cache for at least `capacity` keys (rounded up to a power of two, at least [`WAYS`]).
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let sets = capacity.div_ceil(WAYS).max(1).next_power_of_two();
        let mut slots = Vec::with_capacity(sets * WAYS);
        slots.resize_with(sets * WAYS, || None);
        KeyCache {
            slots,
            sets_mask: sets - 1,
            sip_key: random_sip_key(),
            tick: 0,
            len: 0,
        }
    }

    /// How many keys the cache holds at most.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// How many keys the cache holds now.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    fn set_of(&self, key: &[u8; 32]) -> usize {
        let mut h = SipHasher13::new_with_keys(self.sip_key[0], self.sip_key[1]);
        h.write(key);
        (h.finish() as usize & self.sets_mask) * WAYS
    }

    /// Looks `key` up, marking it most recently used.
    pub(crate) fn get(&mut self, key: &[u8; 32]) -> Option<&mut V> {
        let base = self.set_of(key);
        self.tick += 1;
        let tick = self.tick;
        self.slots[base..base + WAYS]
            .iter_mut()
            .flatten()
            .find(|s| s.key == *key)
            .map(|s| {
                s.stamp = tick;
                &mut s.value
            })
    }

    /// Looks `key` up without marking it used (for readers sharing the cache behind a lock).
    pub(crate) fn peek(&self, key: &[u8; 32]) -> Option<&V> {
        let base = self.set_of(key);
        self.slots[base..base + WAYS]
            .iter()
            .flatten()
            .find(|s| s.key == *key)
            .map(|s| &s.value)
    }

    /// Inserts (or replaces) `key`, evicting the least recently used key of its set when full.
    pub(crate) fn insert(&mut self, key: &[u8; 32], value: V) -> &mut V {
        let base = self.set_of(key);
        self.tick += 1;
        let set = &mut self.slots[base..base + WAYS];
        let way = match set
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.key == *key))
        {
            Some(w) => w,
            None => match set.iter().position(Option::is_none) {
                Some(w) => {
                    self.len += 1;
                    w
                }
                None => {
                    let mut oldest = 0;
                    for (w, s) in set.iter().enumerate() {
                        if s.as_ref().map_or(0, |s| s.stamp)
                            < set[oldest].as_ref().map_or(0, |s| s.stamp)
                        {
                            oldest = w;
                        }
                    }
                    oldest
                }
            },
        };
        let slot = set[way].insert(Slot {
            key: *key,
            stamp: self.tick,
            value,
        });
        &mut slot.value
    }
}

// ---- the verifier's entries, and the cache several verifiers share

/// What the key cache keeps per key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CachedKey {
    /// The key's point, even y.
    pub(crate) p: AffinePoint,
    /// λ·P = (β·x, y).
    pub(crate) lambda_p: AffinePoint,
    /// libsecp256k1's parsed key, made on first single verification.
    pub(crate) xonly: Option<XOnlyPublicKey>,
}

impl CachedKey {
    pub(crate) fn new(p: AffinePoint) -> Self {
        CachedKey {
            p,
            lambda_p: p.endomorphism(),
            xonly: None,
        }
    }

    /// libsecp256k1's parsed key (made from the lifted point on first use: a cheap
    /// uncompressed parse, no square root; libsecp256k1 checks the point is on the curve).
    pub(crate) fn xonly(&mut self) -> Option<XOnlyPublicKey> {
        if self.xonly.is_none() {
            self.xonly = PublicKey::from_slice(&uncompressed(&self.p))
                .ok()
                .map(|p| p.x_only_public_key().0);
        }
        self.xonly
    }
}

/// The uncompressed SEC 1 encoding of a point, for libsecp256k1.
fn uncompressed(p: &AffinePoint) -> [u8; 65] {
    let mut b = [4u8; 65];
    b[1..33].copy_from_slice(&p.x.to_bytes());
    b[33..].copy_from_slice(&p.y.to_bytes());
    b
}

/// Lifted keys shared by several [`Verifier`](crate::Verifier)s, for instance one per worker thread.
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
    pub(crate) fn read(&self) -> std::sync::RwLockReadGuard<'_, KeyCache<AffinePoint>> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn write(&self) -> std::sync::RwLockWriteGuard<'_, KeyCache<AffinePoint>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> [u8; 32] {
        let mut k = [0u8; 32];
        k[..4].copy_from_slice(&i.to_le_bytes());
        k[31] = 0x5a;
        k
    }

    #[test]
    fn insert_then_get() {
        let mut c = KeyCache::with_capacity(64);
        assert!(c.get(&key(1)).is_none());
        c.insert(&key(1), 11u32);
        c.insert(&key(2), 22u32);
        assert_eq!(c.get(&key(1)).copied(), Some(11));
        assert_eq!(c.get(&key(2)).copied(), Some(22));
        assert!(c.get(&key(3)).is_none());
        c.insert(&key(1), 12u32);
        assert_eq!(c.get(&key(1)).copied(), Some(12));
        assert_eq!(c.peek(&key(1)).copied(), Some(12));
        assert_eq!(c.peek(&key(2)).copied(), Some(22));
        assert!(c.peek(&key(3)).is_none());
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn bounded_and_keeps_recent_keys() {
        let mut c = KeyCache::with_capacity(DEFAULT_CAPACITY);
        assert_eq!(c.capacity(), DEFAULT_CAPACITY);
        for i in 0..10_000u32 {
            c.insert(&key(i), i);
            // A hot key touched every round is never evicted.
            c.insert(&key(u32::MAX), 0);
            assert!(c.len() <= c.capacity());
        }
        assert_eq!(c.len(), c.capacity());
        assert_eq!(c.get(&key(u32::MAX)).copied(), Some(0));
        // The last key inserted is there, with its own value.
        assert_eq!(c.get(&key(9_999)).copied(), Some(9_999));
        let held = (0..10_000u32).filter(|&i| c.get(&key(i)).is_some()).count();
        assert_eq!(held, c.capacity() - 1);
    }

    #[test]
    fn lru_within_a_set() {
        // One set only: capacity WAYS. After each round's touch, the next insert evicts the
        // least recently used key: `get` refreshes a key, `peek` does not.
        let mut c = KeyCache::with_capacity(WAYS);
        for i in 0..WAYS as u32 {
            c.insert(&key(i), i);
        }
        // Touch key 0 with get: key 1 is now the least recently used.
        assert!(c.get(&key(0)).is_some());
        c.insert(&key(100), 100);
        assert!(c.get(&key(1)).is_none());
        assert!(c.get(&key(0)).is_some());
        assert_eq!(c.len(), WAYS);
        // Key 2 is now the oldest; peeking at it leaves it so, and it is the one evicted.
        assert!(c.peek(&key(2)).is_some());
        c.insert(&key(101), 101);
        assert!(c.peek(&key(2)).is_none());
        assert!(c.peek(&key(3)).is_some());
    }

    #[test]
    fn salts_differ_between_instances() {
        // Two instances place the same keys in different sets (with overwhelming probability over
        // 64 keys and 256 sets).
        let a = KeyCache::<()>::with_capacity(DEFAULT_CAPACITY);
        let b = KeyCache::<()>::with_capacity(DEFAULT_CAPACITY);
        assert!((0..64).any(|i| a.set_of(&key(i)) != b.set_of(&key(i))));
    }

    #[test]
    fn sip_keys_are_random_per_instance() {
        let a = KeyCache::<()>::with_capacity(64);
        let b = KeyCache::<()>::with_capacity(64);
        assert_ne!(a.sip_key, b.sip_key);
        assert_ne!(a.sip_key, [0, 0]);
        assert_ne!(b.sip_key, [0, 0]);
        // The set index is SipHash-1-3 under exactly that key (nothing else feeds it).
        let mut h = SipHasher13::new_with_keys(a.sip_key[0], a.sip_key[1]);
        h.write(&key(7));
        assert_eq!(
            a.set_of(&key(7)),
            (h.finish() as usize & a.sets_mask) * WAYS
        );
    }

    #[test]
    fn debug_shows_no_key() {
        let mut c = KeyCache::with_capacity(64);
        c.insert(&key(1), 5u32);
        let d = format!("{c:?}");
        assert_eq!(d, "KeyCache { len: 1, capacity: 64, .. }");
    }
}
