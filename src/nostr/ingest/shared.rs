//! What the service, its handles, sources and threads share: the settings, the admission
//! semaphore, the queue, the timers, the peers, the shared key cache and the counters; and the
//! steps every side takes on it (flushing a buffer into the queue, a snapshot of the counters,
//! closing).

use super::config::IngestConfig;
use super::queue::{Job, Queue};
use super::reply::Reply;
use super::reputation::Peers;
use super::timer::Timers;
use super::{IngestStats, SourceInner, SourceState};
use crate::SharedKeyCache;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use tokio::sync::Semaphore;

/// The running totals behind [`IngestStats`].
#[derive(Default)]
pub(super) struct Counters {
    pub(super) events: AtomicU64,
    pub(super) answered: AtomicU64,
    pub(super) lost: AtomicU64,
    pub(super) batches: AtomicU64,
    pub(super) batches_held: AtomicU64,
    pub(super) batched_events: AtomicU64,
    pub(super) single_events: AtomicU64,
    pub(super) demotions: AtomicU64,
    pub(super) recoveries: AtomicU64,
    pub(super) workers: AtomicU64,
    pub(super) workers_replaced: AtomicU64,
}

/// The state of one service.
pub(super) struct Shared<E> {
    pub(super) config: IngestConfig,
    pub(super) permits: Arc<Semaphore>,
    pub(super) closing: AtomicBool,
    pub(super) queue: Mutex<Queue<E>>,
    pub(super) queue_cv: Condvar,
    pub(super) timers: Mutex<Timers<E>>,
    pub(super) timers_cv: Condvar,
    pub(super) peers: Mutex<Peers>,
    pub(super) next_lane: AtomicU64,
    pub(super) next_worker: AtomicU64,
    /// The key cache every worker attaches to its thread-local verifier.
    pub(super) keys: Option<SharedKeyCache>,
    /// Every thread started (workers, replacements, the timer), joined at shutdown.
    pub(super) threads: Mutex<Vec<JoinHandle<()>>>,
    pub(super) counters: Counters,
}

/// Locks, ignoring poisoning: the protected data stays consistent because no code panics
/// while holding these locks (and a verdict must never be lost to a poisoned lock).
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<E> Shared<E> {
    pub(super) fn new(config: IngestConfig) -> Self {
        let keys = (config.shared_keys > 0).then(|| SharedKeyCache::new(config.shared_keys));
        Shared {
            permits: Arc::new(Semaphore::new(config.capacity)),
            closing: AtomicBool::new(false),
            queue: Mutex::new(Queue::new()),
            queue_cv: Condvar::new(),
            timers: Mutex::new(Timers::new()),
            timers_cv: Condvar::new(),
            peers: Mutex::new(Peers::new()),
            next_lane: AtomicU64::new(0),
            next_worker: AtomicU64::new(0),
            keys,
            threads: Mutex::new(Vec::new()),
            counters: Counters::default(),
            config,
        }
    }

    /// Turns the source's buffer into a job. The push to the queue happens under the source
    /// lock: see [`IngestService::shutdown`](super::IngestService::shutdown) for why that matters.
    pub(super) fn flush_locked(&self, source: &Arc<SourceInner<E>>, st: &mut SourceState<E>) {
        if st.buf.is_empty() {
            return;
        }
        st.generation += 1;
        let events = std::mem::replace(&mut st.buf, Vec::with_capacity(self.config.max_batch));
        let job = Job {
            peer: Arc::clone(&source.peer),
            events,
            reply: st.reply.take().unwrap_or_else(Reply::new),
            permits: st.permits.take(),
            panic: std::mem::take(&mut st.panic_next),
            verdicts: Vec::new(),
        };
        lock(&self.queue).push(job);
        self.queue_cv.notify_one();
    }

    /// Closes the queue: the workers drain it, then return.
    pub(super) fn close_queue(&self) {
        lock(&self.queue).closed = true;
        self.queue_cv.notify_all();
    }

    pub(super) fn stats(&self) -> IngestStats {
        let c = &self.counters;
        let (queue_depth, queued_events) = {
            let q = lock(&self.queue);
            (q.queued_jobs as u64, q.queued_events as u64)
        };
        IngestStats {
            events: c.events.load(Relaxed),
            answered: c.answered.load(Relaxed),
            lost: c.lost.load(Relaxed),
            batches: c.batches.load(Relaxed),
            batches_held: c.batches_held.load(Relaxed),
            batched_events: c.batched_events.load(Relaxed),
            single_events: c.single_events.load(Relaxed),
            demotions: c.demotions.load(Relaxed),
            recoveries: c.recoveries.load(Relaxed),
            queue_depth,
            queued_events,
            in_flight: (self.config.capacity - self.permits.available_permits()) as u64,
            workers: c.workers.load(SeqCst),
            workers_replaced: c.workers_replaced.load(Relaxed),
            peers: lock(&self.peers).map.len() as u64,
        }
    }

    /// Stops intake; the timer thread then flushes all buffers and closes the queue.
    pub(super) fn close(&self) {
        self.closing.store(true, SeqCst);
        self.permits.close();
        self.close_timers();
    }
}
