//! The worker pool: std threads that take batches from the queue and verify them (a demoted
//! peer's a slice per turn, one event at a time), answer their tickets, and hand over to a new
//! thread after a panic.

use super::checked::Checked;
use super::lock::lock;
use super::queue::Job;
use super::shared::Shared;
use crate::nostr::batch::{verify_into, Mode};
use crate::nostr::view::EventView;
use crate::nostr::Verdict;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

#[cfg(test)]
thread_local! {
    /// Test hook: spawns this thread may still ask for before the OS "refuses" them.
    pub(super) static SPAWNS_ALLOWED: core::cell::Cell<usize> =
        const { core::cell::Cell::new(usize::MAX) };
}

/// Starts a named thread, or returns the OS's refusal.
pub(super) fn spawn_thread(
    name: String,
    f: impl FnOnce() + Send + 'static,
) -> std::io::Result<JoinHandle<()>> {
    #[cfg(test)]
    {
        let allowed = SPAWNS_ALLOWED.with(core::cell::Cell::get);
        if allowed == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                "thread refused (test hook)",
            ));
        }
        SPAWNS_ALLOWED.with(|a| a.set(allowed - 1));
    }
    std::thread::Builder::new().name(name).spawn(f)
}

impl<E: EventView + Send + 'static> Shared<E> {
    /// Starts one worker thread (counted in `workers` while it runs).
    pub(super) fn spawn_worker(self: &Arc<Self>) -> std::io::Result<()> {
        // Counted before the thread runs, so that a new worker is never seen missing.
        self.counters.workers.fetch_add(1, SeqCst);
        let spawned = self.start_worker_thread();
        if spawned.is_err() {
            self.counters.workers.fetch_sub(1, SeqCst);
        }
        spawned
    }

    /// Starts a worker thread that takes over an existing worker's place in `workers`: the
    /// count is handed over, never raised, so that it never reads more than the workers
    /// configured (a replacement counted before its predecessor returns would).
    fn start_worker_thread(self: &Arc<Self>) -> std::io::Result<()> {
        let i = self.next_worker.fetch_add(1, Relaxed);
        let s = Arc::clone(self);
        let handle = spawn_thread(format!("nostr-verify-worker-{i}"), move || {
            // The worker's thread-local verifier: this thread belongs to the service, so
            // nothing else sees the attached cache.
            crate::with_thread_verifier(|v| v.set_shared_cache(s.keys.clone()));
            if !s.worker_loop() {
                s.counters.workers.fetch_sub(1, SeqCst);
            }
        })?;
        lock(&self.threads).push(handle);
        Ok(())
    }

    /// Runs batches until the queue is closed and empty (returns `false`), or until a batch
    /// panics and a new thread has taken over this worker's place (returns `true`).
    fn worker_loop(self: &Arc<Self>) -> bool {
        loop {
            let Some(job) = self.queue.take(&self.counters.workers) else {
                return false;
            };
            let n = job.events.len() as u64;
            let lane = job.peer.lane;
            // A panic drops the job while unwinding: its `Reply` answers the tickets `Lost`
            // and its permits go back. No lock is held across `run`.
            let outcome = catch_unwind(AssertUnwindSafe(|| self.run(job)));
            self.queue.finished(lane);
            if outcome.is_err() {
                self.counters.lost.fetch_add(n, Relaxed);
                // The thread-local verifier may have been left mid-operation: hand over to a
                // fresh thread. If the OS refuses one, carry on here rather than lose a worker.
                if self.start_worker_thread().is_ok() {
                    self.counters.workers_replaced.fetch_add(1, Relaxed);
                    return true;
                }
            }
        }
    }

    /// One turn of a batch: all of it, or for a demoted peer the next
    /// [`single_turn`](Self::single_turn) events, after which the batch goes back to its lane.
    fn run(&self, mut job: Job<E>) {
        let now = Instant::now();
        let demoted = self.peers.demoted_now(&job.peer, now);
        let c = &self.counters;
        let start = job.verdicts.len();
        if demoted {
            let end = job.events.len().min(start + self.single_turn());
            verify_into(&job.events[start..end], Mode::Single, &mut job.verdicts);
            c.single_events.fetch_add((end - start) as u64, Relaxed);
            if job.remaining() > 0 {
                self.queue.push_unfinished(job);
                return;
            }
        } else {
            verify_into(&job.events[start..], Mode::Batch, &mut job.verdicts);
            let failed = job.verdicts[start..].contains(&Verdict::InvalidSignature);
            c.batches.fetch_add(1, Relaxed);
            c.batched_events
                .fetch_add((job.events.len() - start) as u64, Relaxed);
            if failed {
                self.peers.record_failure(&job.peer, now);
            } else {
                self.peers.record_held(&job.peer, now);
                c.batches_held.fetch_add(1, Relaxed);
            }
        }
        let Job {
            events,
            reply,
            permits,
            verdicts,
            ..
        } = job;
        // A missing verdict (a verifier bug) leaves its ticket `Lost`, never valid.
        let results: Vec<_> = events
            .into_iter()
            .zip(verdicts)
            .map(|(event, verdict)| Some(Checked { event, verdict }))
            .collect();
        // Counted before the answers so that a caller who saw its verdict sees it counted.
        c.answered.fetch_add(results.len() as u64, Relaxed);
        reply.finish(results);
        // One release for the whole batch: one wake-up of a task waiting for room.
        drop(permits);
    }

    /// Events of a demoted peer checked in one turn: checked one at a time, an event costs
    /// several times its share of a batch, so a turn takes an eighth of `max_batch`, about the
    /// time of a full batch, and a demoted flood delays the other peers no more than a batching
    /// one.
    fn single_turn(&self) -> usize {
        (self.config.max_batch / 8).max(1)
    }
}
