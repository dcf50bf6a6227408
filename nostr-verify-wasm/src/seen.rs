//! [`SeenSignatures`]: the (id, signature) pairs a verifier has accepted, so that a copy of
//! an event costs its hash only.

/// The (id, signature) pairs a verifier has found valid, so that a copy of the same event
/// (the same event from a second relay) costs a hash, not a second signature check.
///
/// A copy is recognised by its id and signature *after* its id has been recomputed from its
/// own serialization: a copy with other content hashes to another id and is checked afresh
/// (or rejected), so the set can only ever answer for exactly the event it saw. Bounded: two
/// generations of at most `capacity / 2` entries each; when the newer one fills up, the older
/// one is dropped. Keyed SipHash under a random key, so crafted ids cannot crowd one bucket.
pub struct SeenSignatures {
    capacity: usize,
    newer: std::collections::HashSet<[u8; 96], SeenHasher>,
    older: std::collections::HashSet<[u8; 96], SeenHasher>,
}

/// SipHash-1-3 under a random key (from `getrandom`: the Web Crypto API in wasm).
#[derive(Clone)]
struct SeenHasher {
    key: [u8; 16],
}

impl core::hash::BuildHasher for SeenHasher {
    type Hasher = siphasher::sip::SipHasher13;
    fn build_hasher(&self) -> Self::Hasher {
        siphasher::sip::SipHasher13::new_with_key(&self.key)
    }
}

impl SeenSignatures {
    /// A set that remembers at least `capacity / 2` and at most `capacity` pairs (0: none).
    pub fn new(capacity: usize) -> Self {
        let mut key = [0u8; 16];
        // Without randomness the key stays zero: only the bucket spread is then predictable.
        let _ = getrandom::getrandom(&mut key);
        let hasher = SeenHasher { key };
        SeenSignatures {
            capacity,
            newer: std::collections::HashSet::with_hasher(hasher.clone()),
            older: std::collections::HashSet::with_hasher(hasher),
        }
    }

    fn key(id: &[u8; 32], sig: &[u8; 64]) -> [u8; 96] {
        let mut k = [0u8; 96];
        k[..32].copy_from_slice(id);
        k[32..].copy_from_slice(sig);
        k
    }

    /// Whether (id, sig) was found valid before.
    pub fn contains(&self, id: &[u8; 32], sig: &[u8; 64]) -> bool {
        let k = Self::key(id, sig);
        self.newer.contains(&k) || self.older.contains(&k)
    }

    /// Remembers (id, sig) as valid.
    pub fn insert(&mut self, id: &[u8; 32], sig: &[u8; 64]) {
        if self.capacity < 2 {
            return;
        }
        if self.newer.len() >= self.capacity / 2 {
            self.older = core::mem::replace(
                &mut self.newer,
                std::collections::HashSet::with_hasher(self.older.hasher().clone()),
            );
        }
        self.newer.insert(Self::key(id, sig));
    }

    /// Pairs remembered now.
    pub fn len(&self) -> usize {
        self.newer.len() + self.older.len()
    }

    /// Whether no pair is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
