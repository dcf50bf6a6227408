//! The waiting batches: one lane per peer, served round-robin, with one worker kept free of any
//! peer while another is active.

use super::lock::lock;
use super::reply::Reply;
use super::reputation::Peer;
use crate::nostr::Verdict;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::OwnedSemaphorePermit;

/// A batch: one source's buffer, handed to the workers.
pub(super) struct Job<E> {
    pub(super) peer: Arc<Peer>,
    pub(super) events: Vec<E>,
    pub(super) reply: Reply<E>,
    /// Released after the answers, so the capacity counts events until they are answered.
    pub(super) permits: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>,
    /// The verdicts of the first events, checked in earlier turns (a demoted peer's batch is
    /// checked a slice per turn).
    pub(super) verdicts: Vec<Verdict>,
}

impl<E> Job<E> {
    /// Events not checked yet.
    pub(super) fn remaining(&self) -> usize {
        self.events.len() - self.verdicts.len()
    }
}

/// The waiting batches: one lane per peer, served round-robin.
pub(super) struct Queue<E> {
    /// Per peer with waiting batches: its batches, oldest first.
    lanes: HashMap<u64, VecDeque<Job<E>>>,
    /// The peers with waiting batches, in the order of their next turn.
    ring: VecDeque<u64>,
    pub(super) queued_jobs: usize,
    pub(super) queued_events: usize,
    pub(super) closed: bool,
    /// Per lane: batches of that peer being verified now.
    busy: HashMap<u64, usize>,
    /// Per lane: when that peer last handed in a batch (peers active within
    /// [`ACTIVE_WINDOW`]; older entries are pruned when a batch comes in).
    active: HashMap<u64, Instant>,
}

/// A peer that handed in a batch this recently counts as active: while another peer is active,
/// no peer may hold every worker (see [`Queue::pop`]).
pub(super) const ACTIVE_WINDOW: Duration = Duration::from_secs(1);

impl<E> Queue<E> {
    pub(super) fn new() -> Self {
        Queue {
            lanes: HashMap::new(),
            ring: VecDeque::new(),
            queued_jobs: 0,
            queued_events: 0,
            closed: false,
            busy: HashMap::new(),
            active: HashMap::new(),
        }
    }

    /// A new batch: last in its peer's lane; the peer counts as active from now.
    pub(super) fn push(&mut self, job: Job<E>) {
        let now = Instant::now();
        self.active
            .retain(|_, t| now.saturating_duration_since(*t) < ACTIVE_WINDOW);
        self.active.insert(job.peer.lane, now);
        self.enter(job, false);
    }

    /// Whether a peer other than `lane` handed in a batch within [`ACTIVE_WINDOW`].
    fn other_active(&self, lane: u64, now: Instant) -> bool {
        self.active
            .iter()
            .any(|(&l, &t)| l != lane && now.saturating_duration_since(t) < ACTIVE_WINDOW)
    }

    /// A batch of `lane` is done (or its turn is over).
    pub(super) fn finished(&mut self, lane: u64) {
        if let Some(n) = self.busy.get_mut(&lane) {
            *n -= 1;
            if *n == 0 {
                self.busy.remove(&lane);
            }
        }
    }

    /// Puts back a batch that has had its turn but is not done: first in its lane, whose next
    /// turn comes after every other waiting peer's.
    pub(super) fn push_unfinished(&mut self, job: Job<E>) {
        self.enter(job, true);
    }

    fn enter(&mut self, job: Job<E>, front: bool) {
        self.queued_jobs += 1;
        self.queued_events += job.remaining();
        let lane = job.peer.lane;
        let jobs = self.lanes.entry(lane).or_default();
        if jobs.is_empty() {
            self.ring.push_back(lane);
        }
        if front {
            jobs.push_front(job);
        } else {
            jobs.push_back(job);
        }
    }

    /// The oldest batch of the first peer in the ring that may take a worker now; that peer
    /// goes to the back of the ring. With `workers` > 1, a peer already holding `workers - 1`
    /// workers is passed over while another peer is active (one worker stays free for the
    /// others, so a flooding peer cannot make an honest batch wait for a turn); a peer alone
    /// uses every worker, and so does everyone once the queue is closed.
    pub(super) fn pop(&mut self, workers: usize) -> Option<Job<E>> {
        let now = Instant::now();
        let cap = workers.saturating_sub(1).max(1);
        let pos = self.ring.iter().position(|&lane| {
            self.closed
                || workers < 2
                || self.busy.get(&lane).copied().unwrap_or(0) < cap
                || !self.other_active(lane, now)
        })?;
        let lane = self.ring.remove(pos)?;
        let jobs = self.lanes.get_mut(&lane)?;
        let job = jobs.pop_front()?;
        *self.busy.entry(lane).or_default() += 1;
        if jobs.is_empty() {
            self.lanes.remove(&lane);
        } else {
            self.ring.push_back(lane);
        }
        self.queued_jobs -= 1;
        self.queued_events -= job.remaining();
        Some(job)
    }
}

/// The queue as the service shares it: the waiting batches behind their lock, and the
/// condition variable the workers wait on.
pub(super) struct JobQueue<E> {
    queue: Mutex<Queue<E>>,
    cv: Condvar,
}

impl<E> JobQueue<E> {
    pub(super) fn new() -> Self {
        JobQueue {
            queue: Mutex::new(Queue::new()),
            cv: Condvar::new(),
        }
    }

    /// A new batch ([`Queue::push`]); one waiting worker is woken.
    pub(super) fn push(&self, job: Job<E>) {
        lock(&self.queue).push(job);
        self.cv.notify_one();
    }

    /// A batch that has had its turn but is not done ([`Queue::push_unfinished`]).
    pub(super) fn push_unfinished(&self, job: Job<E>) {
        lock(&self.queue).push_unfinished(job);
        self.cv.notify_one();
    }

    /// A batch of `lane` is done or its turn is over ([`Queue::finished`]): every waiting
    /// worker is woken, as one of them may take that peer's next batch now.
    pub(super) fn finished(&self, lane: u64) {
        lock(&self.queue).finished(lane);
        self.cv.notify_all();
    }

    /// Closes the queue: the workers drain it, then return.
    pub(super) fn close(&self) {
        lock(&self.queue).closed = true;
        self.cv.notify_all();
    }

    /// The waiting batches and their events now.
    pub(super) fn depth(&self) -> (usize, usize) {
        let q = lock(&self.queue);
        (q.queued_jobs, q.queued_events)
    }

    /// The next batch a worker may take ([`Queue::pop`], with the number of workers read
    /// from `workers` at each try), waiting for one; `None` once the queue is closed and
    /// empty.
    pub(super) fn take(&self, workers: &AtomicU64) -> Option<Job<E>> {
        let mut q = lock(&self.queue);
        loop {
            if let Some(job) = q.pop(workers.load(Relaxed) as usize) {
                return Some(job);
            }
            if q.closed && q.queued_jobs == 0 {
                return None;
            }
            // Nothing this worker may take: new batches, finished turns and the end of
            // another peer's activity window wake it.
            q = self
                .cv
                .wait_timeout(q, ACTIVE_WINDOW)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::reputation::Reputation;
    use super::*;
    use std::sync::Mutex;
    use tokio::sync::Semaphore;

    fn job_of(lane: u64) -> Job<u32> {
        Job {
            peer: Arc::new(Peer {
                lane,
                permits: Arc::new(Semaphore::new(1)),
                reputation: Mutex::new(Reputation::new(Instant::now())),
                key: None,
            }),
            events: vec![lane as u32],
            reply: Reply::new(),
            permits: None,
            verdicts: Vec::new(),
        }
    }

    #[test]
    fn a_peer_never_holds_every_worker_while_another_is_active() {
        let lanes = |q: &mut Queue<u32>, workers| {
            let mut taken = Vec::new();
            while let Some(job) = q.pop(workers) {
                taken.push(job.peer.lane);
            }
            taken
        };
        // Alone, a peer takes every worker.
        let mut q = Queue::new();
        for _ in 0..3 {
            q.push(job_of(1));
        }
        assert_eq!(lanes(&mut q, 3), [1, 1, 1]);

        // Peer 2 was active a moment ago (its batch is being verified now): peer 1 gets at
        // most workers - 1 of them, and its next batch waits for one to finish.
        let mut q = Queue::new();
        q.push(job_of(2));
        assert_eq!(lanes(&mut q, 3), [2]);
        for _ in 0..3 {
            q.push(job_of(1));
        }
        assert_eq!(lanes(&mut q, 3), [1, 1]);
        q.finished(1);
        assert_eq!(lanes(&mut q, 3), [1]);
        // Peer 2's next batch is not held back by peer 1's.
        q.push(job_of(2));
        assert_eq!(lanes(&mut q, 3), [2]);

        // One worker: nobody is held back. A closed queue drains with every worker.
        let mut q = Queue::new();
        q.push(job_of(2));
        q.push(job_of(1));
        q.push(job_of(1));
        assert_eq!(lanes(&mut q, 1), [2, 1, 1]);
        let mut q = Queue::new();
        q.push(job_of(2));
        q.push(job_of(1));
        q.push(job_of(1));
        q.closed = true;
        assert_eq!(lanes(&mut q, 2), [2, 1, 1]);

        // Once the other peer's activity is older than the window, the rule lifts.
        let mut q = Queue::new();
        q.push(job_of(2));
        assert_eq!(lanes(&mut q, 2), [2]);
        q.push(job_of(1));
        q.push(job_of(1));
        assert_eq!(lanes(&mut q, 2), [1]);
        let past = Instant::now() - ACTIVE_WINDOW;
        q.active.insert(2, past);
        assert_eq!(lanes(&mut q, 2), [1]);
    }
}
