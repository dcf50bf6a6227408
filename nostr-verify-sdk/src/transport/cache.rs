//! What the connections of one tap share about signatures: the verified (id, signature) pairs,
//! the pairs some connection is verifying right now, and the pass-through guard's record of the
//! signature bytes forwarded to the SDK per id.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::task::Waker;

use lru::LruCache;
use nostr_sdk::prelude::Event;
use nostr_verify::{EventView, Verdict};

use super::lock::lock;
use std::sync::Mutex;

/// What a verdict is cached and claimed under: the full id and the full signature. The
/// signature check covers exactly these bytes (the public key through the id, which is
/// recomputed for every copy), so a copy with the same key was verified with the same result.
pub(super) type Key = ([u8; 32], [u8; 64]);

pub(super) fn key(event: &Event) -> Key {
    (*EventView::id_bytes(event), *EventView::sig_bytes(event))
}

/// Size of nostr-relay-pool 0.44.3's verification cache (ids it will not check again): the
/// pass-through guard remembers at least as many ids.
const SDK_VERIFICATION_CACHE: usize = 128_000;

/// The id check of a cache hit (the signature over this id was verified before) and of the
/// pass-through guard: the id is recomputed from the event's fields with the core's NIP-01
/// hashing (the same one `VerifyBatchExt` uses) and compared with the claimed one.
pub(super) fn id_matches(event: &Event) -> bool {
    nostr_verify::compute_id(event) == event.id.to_bytes()
}

/// Where a buffered event goes when its connection flushes.
pub(super) enum Class {
    /// Dropped by the pre-checks.
    Drop,
    /// Its pair was verified before.
    Hit,
    /// Claimed by this connection, which verifies it now.
    Claimed,
    /// In flight: another connection's claim, or a duplicate within this batch claimed a few
    /// events earlier; both resolve once the claim is released.
    Deferred,
}

/// What [`Cache::resolve`] found for a deferred copy.
pub(super) enum Resolve {
    /// The pair was verified meanwhile.
    Cached,
    /// Still in flight elsewhere; the waker is registered with the claim.
    Waiting,
    /// Not cached and nobody verifies it: the owner found its copy invalid (or the entry was
    /// evicted). The caller holds the claim now and must [`Cache::publish_one`] it.
    Claimed,
}

/// What the pass-through guard knows of an id.
pub(super) enum Forwarded {
    /// Never forwarded before: now recorded with these signature bytes.
    First,
    /// Forwarded before with the same signature bytes.
    Same,
    /// Forwarded before with other signature bytes.
    Other,
}

/// The shared signature state of a tap (all its connections).
pub(super) struct Cache {
    /// (id, signature) pairs whose signature was verified. Inserted only after success.
    verified: Mutex<LruCache<Key, ()>>,
    /// Pairs some connection is verifying right now, with the wakers of copies waiting for them.
    inflight: Mutex<HashMap<Key, Vec<Waker>>>,
    /// Pass-through guard: per id, the signature bytes forwarded to the SDK first (or, after
    /// the guard verified a different one, that one). Looked up without refreshing recency.
    passthrough: Mutex<LruCache<[u8; 32], [u8; 64]>>,
}

impl Cache {
    /// A cache of `capacity` verified pairs (at least 1); the pass-through record holds at least
    /// as many ids as the SDK's own verification cache.
    pub(super) fn new(capacity: usize) -> Self {
        let cap = NonZeroUsize::new(capacity.max(1)).unwrap_or(NonZeroUsize::MIN);
        let guard_cap =
            NonZeroUsize::new(capacity.max(SDK_VERIFICATION_CACHE)).unwrap_or(NonZeroUsize::MIN);
        Cache {
            verified: Mutex::new(LruCache::new(cap)),
            inflight: Mutex::new(HashMap::new()),
            passthrough: Mutex::new(LruCache::new(guard_cap)),
        }
    }

    /// Empties the verified pairs (the pass-through record stays).
    pub(super) fn clear(&self) {
        lock(&self.verified).clear();
    }

    /// Classifies a flush's events under both locks: [`Class::Drop`] where `dropped` says so
    /// (the pre-checks, which count their reason), else a hit, a new claim or a deferred copy.
    /// Returns the classes, in order, and the number of claims.
    pub(super) fn classify<'a>(
        &self,
        events: impl Iterator<Item = &'a Event>,
        mut dropped: impl FnMut(&Event) -> bool,
    ) -> (Vec<Class>, usize) {
        let mut class = Vec::with_capacity(events.size_hint().0);
        let mut claimed = 0usize;
        let mut verified = lock(&self.verified);
        let mut inflight = lock(&self.inflight);
        for ev in events {
            if dropped(ev) {
                class.push(Class::Drop);
                continue;
            }
            let k = key(ev);
            if verified.get(&k).is_some() {
                class.push(Class::Hit);
            } else if let Entry::Vacant(slot) = inflight.entry(k) {
                slot.insert(Vec::new());
                class.push(Class::Claimed);
                claimed += 1;
            } else {
                class.push(Class::Deferred);
            }
        }
        (class, claimed)
    }

    /// Publishes the verdicts of claimed events: valid pairs enter the cache, every claim is
    /// released, and the copies waiting for them are woken (after the locks are released).
    pub(super) fn publish(&self, claimed: &[Event], verdicts: &[Verdict]) {
        let mut wakers = Vec::new();
        {
            let mut verified = lock(&self.verified);
            let mut inflight = lock(&self.inflight);
            for (ev, v) in claimed.iter().zip(verdicts) {
                let k = key(ev);
                if *v == Verdict::Valid {
                    verified.put(k, ());
                }
                if let Some(w) = inflight.remove(&k) {
                    wakers.extend(w);
                }
            }
        }
        for w in wakers {
            w.wake();
        }
    }

    /// Looks a deferred copy's pair up: cached, still in flight (`waker` registered), or
    /// unclaimed, in which case the caller claims it.
    pub(super) fn resolve(&self, k: &Key, waker: &Waker) -> Resolve {
        let cache_hit = lock(&self.verified).get(k).is_some();
        if cache_hit {
            return Resolve::Cached;
        }
        let mut inflight = lock(&self.inflight);
        if let Some(w) = inflight.get_mut(k) {
            w.push(waker.clone());
            return Resolve::Waiting;
        }
        inflight.insert(*k, Vec::new());
        Resolve::Claimed
    }

    /// Publishes the verdict of one pair claimed by [`Cache::resolve`], as
    /// [`publish`](Self::publish) does.
    pub(super) fn publish_one(&self, k: &Key, valid: bool) {
        let waiters = {
            if valid {
                lock(&self.verified).put(*k, ());
            }
            lock(&self.inflight).remove(k)
        };
        for w in waiters.into_iter().flatten() {
            w.wake();
        }
    }

    /// The pass-through guard's view of `id`; a first copy is recorded with `sig`.
    pub(super) fn forwarded(&self, id: [u8; 32], sig: [u8; 64]) -> Forwarded {
        let mut seen = lock(&self.passthrough);
        match seen.peek(&id) {
            Some(known) if *known == sig => Forwarded::Same,
            Some(_) => Forwarded::Other,
            None => {
                seen.put(id, sig);
                Forwarded::First
            }
        }
    }

    /// Records `sig` as the signature bytes forwarded for `id` (the guard verified them).
    pub(super) fn forward(&self, id: [u8; 32], sig: [u8; 64]) {
        lock(&self.passthrough).put(id, sig);
    }
}
