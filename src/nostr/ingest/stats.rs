//! The service's counters: the public snapshot and the running totals behind it.

use std::sync::atomic::AtomicU64;

/// Counters of an [`IngestService`](super::IngestService) (a snapshot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngestStats {
    /// Events accepted by [`Source::enqueue`](super::Source::enqueue).
    pub events: u64,
    /// Events answered with a verdict.
    pub answered: u64,
    /// Events answered [`IngestError::Lost`](super::IngestError::Lost) because their worker
    /// panicked.
    pub lost: u64,
    /// Batches verified together (demoted peers' groups not included).
    pub batches: u64,
    /// Batches in which every signature was valid.
    pub batches_held: u64,
    /// Events that went through batches.
    pub batched_events: u64,
    /// Events of demoted peers, checked one at a time.
    pub single_events: u64,
    /// Times a peer was demoted.
    pub demotions: u64,
    /// Times a demoted peer went back to batches.
    pub recoveries: u64,
    /// Batches waiting for a worker now.
    pub queue_depth: u64,
    /// Events in those waiting batches.
    pub queued_events: u64,
    /// Events in the service now (buffered, queued or being verified).
    pub in_flight: u64,
    /// Worker threads running now.
    pub workers: u64,
    /// Worker threads that panicked and were replaced by a new thread.
    pub workers_replaced: u64,
    /// Keyed peers remembered now.
    pub peers: u64,
}

impl IngestStats {
    /// Share of batches whose signatures were all valid (`1.0` before the first batch).
    pub fn hit_rate(&self) -> f64 {
        if self.batches == 0 {
            1.0
        } else {
            self.batches_held as f64 / self.batches as f64
        }
    }
}

/// The running totals behind [`IngestStats`] (the peers' demotions and recoveries are counted
/// by the peers' book, `reputation::PeerBook`).
#[derive(Default)]
pub(super) struct Counters {
    pub(super) events: AtomicU64,
    pub(super) answered: AtomicU64,
    pub(super) lost: AtomicU64,
    pub(super) batches: AtomicU64,
    pub(super) batches_held: AtomicU64,
    pub(super) batched_events: AtomicU64,
    pub(super) single_events: AtomicU64,
    pub(super) workers: AtomicU64,
    pub(super) workers_replaced: AtomicU64,
}
