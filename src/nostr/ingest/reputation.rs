//! Peers and their standing: the failure score with its decay, demotion and recovery, and the
//! bounded map of keyed peers (least recently used out first).

use super::config::IngestConfig;
use super::lock::lock;
use core::any::{Any, TypeId};
use core::hash::{Hash, Hasher};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// A peer's standing: its failure score and demotion.
pub(super) struct Reputation {
    /// Failed batches, decayed; exact as of `updated`.
    score: f64,
    updated: Instant,
    demoted_until: Option<Instant>,
}

impl Reputation {
    pub(super) fn new(now: Instant) -> Self {
        Reputation {
            score: 0.0,
            updated: now,
            demoted_until: None,
        }
    }

    /// Brings the score to `now`: it halves every `half_life`.
    fn decay_to(&mut self, now: Instant, half_life: Duration) {
        let elapsed = now.saturating_duration_since(self.updated);
        if half_life.is_zero() {
            self.score = 0.0;
        } else if !elapsed.is_zero() {
            self.score *= 0.5f64.powf(elapsed.as_secs_f64() / half_life.as_secs_f64());
        }
        self.updated = self.updated.max(now);
    }
}

/// What the sources of one peer share: standing, queue lane and admission share.
pub(super) struct Peer {
    /// The peer's lane in the scheduler.
    pub(super) lane: u64,
    /// Admission: permits for the events of this peer in the service.
    pub(super) permits: Arc<Semaphore>,
    pub(super) reputation: Mutex<Reputation>,
    /// Its key in the peer map (`None`: an anonymous peer).
    pub(super) key: Option<PeerKey>,
}

impl Peer {
    /// `true` while the peer is demoted to one-at-a-time checking.
    pub(super) fn is_demoted(&self, now: Instant) -> bool {
        lock(&self.reputation)
            .demoted_until
            .is_some_and(|t| now < t)
    }

    /// The failure score as of `now`.
    pub(super) fn failure_score(&self, now: Instant, half_life: Duration) -> f64 {
        let mut r = lock(&self.reputation);
        r.decay_to(now, half_life);
        r.score
    }
}

/// A peer key of any `Hash + Eq` type, compared and hashed through its concrete type; keys of
/// different types never compare equal.
trait DynKey: Any + Send + Sync {
    fn dyn_eq(&self, other: &dyn DynKey) -> bool;
    fn dyn_hash(&self, state: &mut dyn Hasher);
    fn as_any(&self) -> &dyn Any;
}

impl<K: Hash + Eq + Send + Sync + 'static> DynKey for K {
    fn dyn_eq(&self, other: &dyn DynKey) -> bool {
        other.as_any().downcast_ref::<K>() == Some(self)
    }

    fn dyn_hash(&self, mut state: &mut dyn Hasher) {
        TypeId::of::<K>().hash(&mut state);
        self.hash(&mut state);
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A peer key of any `Hash + Eq + Send + Sync + 'static` type.
#[derive(Clone)]
pub(super) struct PeerKey(Arc<dyn DynKey>);

impl PeerKey {
    pub(super) fn new<K: Hash + Eq + Send + Sync + 'static>(key: K) -> Self {
        PeerKey(Arc::new(key))
    }
}

impl PartialEq for PeerKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.dyn_eq(&*other.0)
    }
}

impl Eq for PeerKey {}

impl Hash for PeerKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.dyn_hash(state);
    }
}

/// The keyed peers, bounded, least recently used first out.
pub(super) struct Peers {
    /// Per key: the peer and its last use (a tick of `order`).
    pub(super) map: HashMap<PeerKey, (Arc<Peer>, u64)>,
    /// Keys by last use, oldest first.
    order: BTreeMap<u64, PeerKey>,
    tick: u64,
}

impl Peers {
    pub(super) fn new() -> Self {
        Peers {
            map: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
        }
    }

    /// Marks `key` as used now, if it is remembered.
    fn touch(&mut self, key: &PeerKey) {
        self.tick += 1;
        let tick = self.tick;
        if let Some((_, used)) = self.map.get_mut(key) {
            let old = std::mem::replace(used, tick);
            self.order.remove(&old);
            self.order.insert(tick, key.clone());
        }
    }
}

/// Every peer's standing as the service keeps it: the keyed peers, the lanes handed out, the
/// settings of the score, and the demotions and recoveries counted.
pub(super) struct PeerBook {
    peers: Mutex<Peers>,
    next_lane: AtomicU64,
    config: IngestConfig,
    /// Times a peer was demoted ([`IngestStats::demotions`](super::IngestStats::demotions)).
    pub(super) demotions: AtomicU64,
    /// Times a demoted peer went back to batches
    /// ([`IngestStats::recoveries`](super::IngestStats::recoveries)).
    pub(super) recoveries: AtomicU64,
}

impl PeerBook {
    pub(super) fn new(config: IngestConfig) -> Self {
        PeerBook {
            peers: Mutex::new(Peers::new()),
            next_lane: AtomicU64::new(0),
            config,
            demotions: AtomicU64::new(0),
            recoveries: AtomicU64::new(0),
        }
    }

    /// Keyed peers remembered now.
    pub(super) fn remembered(&self) -> usize {
        lock(&self.peers).map.len()
    }

    /// A new peer, with a lane of its own and a fresh standing.
    pub(super) fn new_peer(&self, key: Option<PeerKey>) -> Arc<Peer> {
        Arc::new(Peer {
            lane: self.next_lane.fetch_add(1, Relaxed),
            permits: Arc::new(Semaphore::new(self.config.effective_peer_capacity())),
            reputation: Mutex::new(Reputation::new(Instant::now())),
            key,
        })
    }

    /// The peer of `key`: remembered, or new (forgetting the least recently used one if the
    /// map is full).
    pub(super) fn peer_for(&self, key: PeerKey) -> Arc<Peer> {
        let cap = self.config.peers;
        if cap == 0 {
            return self.new_peer(None);
        }
        let mut peers = lock(&self.peers);
        if let Some((peer, _)) = peers.map.get(&key) {
            let peer = Arc::clone(peer);
            peers.touch(&key);
            return peer;
        }
        while peers.map.len() >= cap {
            let Some((_, oldest)) = peers.order.pop_first() else {
                break;
            };
            peers.map.remove(&oldest);
        }
        let peer = self.new_peer(Some(key.clone()));
        peers.tick += 1;
        let tick = peers.tick;
        peers.order.insert(tick, key.clone());
        peers.map.insert(key, (Arc::clone(&peer), tick));
        peer
    }

    /// A failed batch: the score grows by 1, and the peer is demoted if that reaches the
    /// threshold. A keyed peer counts as used, so a misbehaving peer is not the first one
    /// forgotten.
    pub(super) fn record_failure(&self, peer: &Peer, now: Instant) {
        {
            let mut r = lock(&peer.reputation);
            r.decay_to(now, self.config.failure_half_life);
            r.score += 1.0;
            let demoted = r.demoted_until.is_some_and(|t| now < t);
            // Above n - 1/2 rather than at n: with time decay, n failures in quick succession
            // sum to a little less than n.
            if !demoted && r.score > f64::from(self.config.demote_after) - 0.5 {
                r.demoted_until = Some(now + self.config.demotion);
                self.demotions.fetch_add(1, Relaxed);
            }
        }
        if let Some(key) = &peer.key {
            lock(&self.peers).touch(key);
        }
    }

    /// Whether `peer`'s batches are checked one at a time now; ends (and counts) a demotion
    /// that has run out.
    pub(super) fn demoted_now(&self, peer: &Peer, now: Instant) -> bool {
        let mut r = lock(&peer.reputation);
        match r.demoted_until {
            Some(until) if now < until => true,
            Some(_) => {
                r.demoted_until = None;
                self.recoveries.fetch_add(1, Relaxed);
                false
            }
            None => false,
        }
    }

    /// A batch whose signatures all held: the score is multiplied by the held-batch decay.
    pub(super) fn record_held(&self, peer: &Peer, now: Instant) {
        let mut r = lock(&peer.reputation);
        r.decay_to(now, self.config.failure_half_life);
        r.score *= self.config.held_batch_decay;
    }
}
