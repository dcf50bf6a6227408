//! What the service, its handles, sources and threads share: the settings, the admission
//! semaphore, and the service's owned parts (the queue, the timers, the peers' book, the
//! counters, the shared key cache and the threads), each with its own lock; and the steps that
//! span parts (a snapshot of the counters, closing).

use super::buffer::{SourceInner, SourceState};
use super::config::IngestConfig;
use super::queue::JobQueue;
use super::reputation::PeerBook;
use super::stats::{Counters, IngestStats};
use super::timer::Timers;
use crate::SharedKeyCache;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use tokio::sync::Semaphore;

/// The state of one service.
pub(super) struct Shared<E> {
    pub(super) config: IngestConfig,
    pub(super) permits: Arc<Semaphore>,
    pub(super) closing: AtomicBool,
    pub(super) queue: JobQueue<E>,
    pub(super) timers: Timers<E>,
    pub(super) peers: PeerBook,
    pub(super) next_worker: AtomicU64,
    /// The key cache every worker attaches to its thread-local verifier.
    pub(super) keys: Option<SharedKeyCache>,
    /// Every thread started (workers, replacements, the timer), joined at shutdown.
    pub(super) threads: Mutex<Vec<JoinHandle<()>>>,
    pub(super) counters: Counters,
}

impl<E> Shared<E> {
    pub(super) fn new(config: IngestConfig) -> Self {
        let keys = (config.shared_keys > 0).then(|| SharedKeyCache::new(config.shared_keys));
        Shared {
            permits: Arc::new(Semaphore::new(config.capacity)),
            closing: AtomicBool::new(false),
            queue: JobQueue::new(),
            timers: Timers::new(config.latency_budget),
            peers: PeerBook::new(config.clone()),
            next_worker: AtomicU64::new(0),
            keys,
            threads: Mutex::new(Vec::new()),
            counters: Counters::default(),
            config,
        }
    }

    /// Turns the source's buffer into a job ([`SourceInner::flush_locked`]).
    pub(super) fn flush_locked(&self, source: &SourceInner<E>, st: &mut SourceState<E>) {
        source.flush_locked(st, &self.queue, self.config.max_batch);
    }

    /// The timer thread's body ([`Timers::run`]).
    pub(super) fn timer_loop(&self) {
        self.timers.run(&self.queue, self.config.max_batch);
    }

    pub(super) fn stats(&self) -> IngestStats {
        let c = &self.counters;
        let (queue_depth, queued_events) = self.queue.depth();
        IngestStats {
            events: c.events.load(Relaxed),
            answered: c.answered.load(Relaxed),
            lost: c.lost.load(Relaxed),
            batches: c.batches.load(Relaxed),
            batches_held: c.batches_held.load(Relaxed),
            batched_events: c.batched_events.load(Relaxed),
            single_events: c.single_events.load(Relaxed),
            demotions: self.peers.demotions.load(Relaxed),
            recoveries: self.peers.recoveries.load(Relaxed),
            queue_depth: queue_depth as u64,
            queued_events: queued_events as u64,
            in_flight: (self.config.capacity - self.permits.available_permits()) as u64,
            workers: c.workers.load(SeqCst),
            workers_replaced: c.workers_replaced.load(Relaxed),
            peers: self.peers.remembered() as u64,
        }
    }

    /// Stops intake; the timer thread then flushes all buffers and closes the queue.
    pub(super) fn close(&self) {
        self.closing.store(true, SeqCst);
        self.permits.close();
        self.timers.close();
    }
}
