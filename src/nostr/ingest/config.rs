//! [`IngestConfig`]: the service's settings, with their defaults and bounds.

use core::time::Duration;

/// Settings of an [`IngestService`](super::IngestService); start from `IngestConfig::default()`.
#[derive(Clone, Debug)]
pub struct IngestConfig {
    pub(super) workers: usize,
    pub(super) max_batch: usize,
    pub(super) latency_budget: Duration,
    pub(super) capacity: usize,
    pub(super) peer_capacity: Option<usize>,
    pub(super) demote_after: u32,
    pub(super) held_batch_decay: f64,
    pub(super) failure_half_life: Duration,
    pub(super) demotion: Duration,
    pub(super) peers: usize,
    pub(super) shared_keys: usize,
}

impl Default for IngestConfig {
    /// One worker per core, batches of up to 512, 1 ms latency budget, 8192 events in the
    /// service and a quarter of them per peer (at least one batch), demotion at a failure score
    /// above 1.5 for 10 s, a score that held batches multiply by 0.9 and that halves every 30 s,
    /// 65,536 remembered peers, and a key cache of 65,536 keys shared by the workers.
    fn default() -> Self {
        IngestConfig {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_batch: 512,
            latency_budget: Duration::from_millis(1),
            capacity: 8192,
            peer_capacity: None,
            demote_after: 2,
            held_batch_decay: 0.9,
            failure_half_life: Duration::from_secs(30),
            demotion: Duration::from_secs(10),
            peers: 1 << 16,
            shared_keys: 1 << 16,
        }
    }
}

impl IngestConfig {
    /// Number of worker threads (at least 1).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = n.max(1);
        self
    }

    /// A source's buffer becomes a batch when it holds this many events (at least 1).
    pub fn max_batch(mut self, n: usize) -> Self {
        self.max_batch = n.max(1);
        self
    }

    /// The longest an event waits in its source's buffer before the buffer is flushed.
    pub fn latency_budget(mut self, d: Duration) -> Self {
        self.latency_budget = d;
        self
    }

    /// Events allowed in the service at once (buffered, queued or being verified; at least 1).
    /// [`Source::enqueue`](super::Source::enqueue) waits while it is full. Keep it at least
    /// `max_batch`, or no buffer can fill up and every batch waits for the latency budget.
    pub fn capacity(mut self, n: usize) -> Self {
        self.capacity = n.max(1);
        self
    }

    /// Events one peer (all the sources of one peer key, or one anonymous source) may have in the
    /// service at once, at least 1 and at most `capacity`.
    /// [`Source::enqueue`](super::Source::enqueue) waits while its peer's share is full, so one
    /// peer cannot take all of the capacity. Default: a quarter of `capacity`, but at least
    /// `max_batch` (still at most `capacity`).
    pub fn peer_capacity(mut self, n: usize) -> Self {
        self.peer_capacity = Some(n.max(1));
        self
    }

    /// The failure score at which a peer is demoted (at least 1). Each failed batch adds 1; a
    /// failed batch that brings the score above `n - 1/2` demotes the peer, so `n` failed
    /// batches in quick succession do, with less than half a failure's worth of decay
    /// between them.
    pub fn demote_after(mut self, n: u32) -> Self {
        self.demote_after = n.max(1);
        self
    }

    /// The factor (from 0 to 1) by which each batch whose signatures all held multiplies its
    /// peer's failure score: 0 forgives everything at the first good batch, 1 nothing.
    pub fn held_batch_decay(mut self, factor: f64) -> Self {
        self.held_batch_decay = if factor.is_nan() {
            1.0
        } else {
            factor.clamp(0.0, 1.0)
        };
        self
    }

    /// The time in which a peer's failure score halves, whatever it sends (zero: the score
    /// only counts the failed batch that just happened).
    pub fn failure_half_life(mut self, d: Duration) -> Self {
        self.failure_half_life = d;
        self
    }

    /// How long a demoted peer is checked one event at a time.
    pub fn demotion(mut self, d: Duration) -> Self {
        self.demotion = d;
        self
    }

    /// How many keyed peers (see [`IngestHandle::source_for`](super::IngestHandle::source_for)) the
    /// service remembers; past that, the least recently used one is forgotten. 0: none, every
    /// source starts afresh.
    pub fn peers(mut self, n: usize) -> Self {
        self.peers = n;
        self
    }

    /// Capacity of the [`SharedKeyCache`](crate::SharedKeyCache) behind the workers' own key caches
    /// (0: none, each worker lifts every key it meets itself). Each key is lifted by one worker,
    /// then found by all; about 130 bytes per key, allocated when the service starts.
    pub fn shared_key_cache(mut self, keys: usize) -> Self {
        self.shared_keys = keys;
        self
    }

    /// The admission share of one peer: [`peer_capacity`](Self::peer_capacity) or its default.
    pub(super) fn effective_peer_capacity(&self) -> usize {
        self.peer_capacity
            .unwrap_or_else(|| (self.capacity / 4).max(self.max_batch))
            .min(self.capacity)
    }
}
