//! An async front end for relays and sync tools: many sources submit events, each gets its
//! [`Verdict`], and the verification runs in batches on worker threads (feature `tokio`).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use nostr::event::{EventBuilder, FinalizeEvent, Kind};
//! use nostr::key::Keys;
//! use nostr_verify::ingest::{IngestConfig, IngestService};
//! use nostr_verify::Verdict;
//!
//! let service = IngestService::new(IngestConfig::default());
//! let handle = service.handle(); // Clone, Send: give one to every connection task
//! // One source per connection, keyed by the peer (an IP address, a relay URL, ...) so that
//! // its failure score survives reconnects; `handle.source()` for an anonymous one.
//! let source = handle.source_for("wss://relay.example.com");
//!
//! let keys = Keys::parse("6b911fd37cdf5c81d4c0adb1ab7fa822ed253ab0ad9aa18d77257c88b29b718e").unwrap();
//! let mut tickets = Vec::new();
//! for i in 0..10 {
//!     let event = EventBuilder::new(Kind::TextNote, format!("{i}")).finalize(&keys).unwrap();
//!     tickets.push(source.enqueue(event).await.unwrap()); // waits only under back-pressure
//! }
//! source.flush(); // e.g. at EOSE: do not wait for the latency budget
//! for t in tickets {
//!     let checked = t.await.unwrap();
//!     assert_eq!(checked.verdict, Verdict::Valid); // `checked.event` is the event, moved back
//! }
//! let stats = service.shutdown().await; // answers everything still pending, then stops
//! assert_eq!(stats.answered, 10);
//! # }
//! ```
//!
//! # How it works
//! * **Peers and sources.** A [`Source`] is one connection's way in: its own buffer. Sources
//!   made by [`IngestHandle::source_for`] with the same peer key (any `Hash + Eq` value: an IP
//!   address, a relay URL) share one *peer*: one failure score, one demotion, one queue lane
//!   and one admission share, kept across reconnects. [`IngestHandle::source`] makes an
//!   anonymous peer of its own that lives as long as its sources. Keyed peers are remembered in
//!   a map of at most [`IngestConfig::peers`] entries; when it is full, the peer used least
//!   recently (a source made for it, or a failed batch of it) is forgotten, so an attacker who
//!   cycles through identities costs bounded memory. A forgotten peer starts afresh at its next
//!   source (its live sources keep the old state until they are dropped).
//! * **Batches.** [`Source::enqueue`] appends to the source's buffer. The buffer becomes a
//!   batch when it holds [`IngestConfig::max_batch`] events, when the oldest event in it has
//!   waited [`IngestConfig::latency_budget`] (default 1 ms; a timer thread watches the
//!   deadlines), or on [`Source::flush`] (and when the `Source` is dropped).
//! * **Fair scheduling.** Each peer's batches wait in its own lane, oldest first; the workers
//!   serve the lanes round-robin, one batch per turn. A peer that floods the service only
//!   lengthens its own lane: another peer's batch waits for at most one turn of each peer
//!   ahead of it in the ring, not for the whole flood. And while another peer has handed in a
//!   batch within the last second, no peer holds every worker (with two or more): one worker
//!   stays free of it, so an honest batch does not wait for a flooding peer's turn to end. A
//!   peer alone uses every worker. A demoted peer's events are checked one
//!   at a time, which costs several times as much per event, so its turn is an eighth of
//!   `max_batch` events, about the time of a full batch; the rest of its batch waits for the
//!   next turn.
//! * **Workers.** [`IngestConfig::workers`] std threads (default one per core) run the
//!   batches, off the async executor; each thread uses its own thread-local
//!   [`Verifier`](crate::Verifier) (see [`with_thread_verifier`](crate::with_thread_verifier)),
//!   and the workers share one [`SharedKeyCache`], so each new author is lifted once, not once
//!   per worker. Verdicts are exactly
//!   [`VerifyBatchExt::verify_batch`](crate::VerifyBatchExt::verify_batch)'s. A worker that
//!   panics (a bug) answers its batch's tickets [`IngestError::Lost`] and hands over to a new
//!   thread, so the service keeps its number of workers; should the OS refuse that thread, the
//!   old one carries on.
//! * **Back-pressure and admission.** At most [`IngestConfig::capacity`] events are in the
//!   service at once (buffered, queued or being verified), and at most
//!   [`IngestConfig::peer_capacity`] of them from one peer; `enqueue` waits for room in both.
//!   A flooding peer waits for its own share and leaves the rest to the others.
//! * **Demotion.** A batch *fails* when one of its signatures is invalid (wrong ids are cheap
//!   and do not count): the batch verifier then has to narrow down the bad signatures, which
//!   costs more than checking singly. Each failed batch adds 1 to the peer's failure score;
//!   each batch that held multiplies it by [`IngestConfig::held_batch_decay`], and it halves
//!   every [`IngestConfig::failure_half_life`]. When a failed batch brings the score above
//!   [`IngestConfig::demote_after`] − ½, the peer is demoted for [`IngestConfig::demotion`]: its
//!   events are checked one at a time, so an attacker only slows its own traffic. Then it
//!   batches again, with the score it has left: a peer that keeps failing is demoted again
//!   sooner, and one that alternates good and bad batches still climbs to the threshold.
//! * **Threads.** [`IngestService::new`] never panics: if the OS refuses threads it runs with
//!   fewer workers (at least one), or, without a worker or the timer, returns a service that
//!   answers every event [`IngestError::Closed`]. [`IngestService::try_new`] returns the error
//!   instead.
//! * **Shutdown.** [`IngestService::shutdown`] stops accepting events, flushes every buffer,
//!   lets the workers answer everything queued, and joins the threads. Dropping the service
//!   does the same without waiting.

use super::batch::{verify_into, Mode};
use super::view::EventView;
use super::Verdict;
use crate::SharedKeyCache;
use core::any::{Any, TypeId};
use core::fmt;
use core::future::Future;
use core::hash::{Hash, Hasher};
use core::pin::Pin;
use core::task::Waker;
use core::task::{Context, Poll};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Settings of an [`IngestService`]; start from `IngestConfig::default()`.
#[derive(Clone, Debug)]
pub struct IngestConfig {
    workers: usize,
    max_batch: usize,
    latency_budget: Duration,
    capacity: usize,
    peer_capacity: Option<usize>,
    demote_after: u32,
    held_batch_decay: f64,
    failure_half_life: Duration,
    demotion: Duration,
    peers: usize,
    shared_keys: usize,
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

    /// Events allowed in the service at once (buffered, queued or being verified; at least
    /// 1). [`Source::enqueue`] waits while it is full. Keep it at least `max_batch`, or no
    /// buffer can fill up and every batch waits for the latency budget.
    pub fn capacity(mut self, n: usize) -> Self {
        self.capacity = n.max(1);
        self
    }

    /// Events one peer (all the sources of one peer key, or one anonymous source) may have in
    /// the service at once, at least 1 and at most `capacity`. [`Source::enqueue`] waits while
    /// its peer's share is full, so one peer cannot take all of the capacity. Default: a
    /// quarter of `capacity`, but at least `max_batch` (still at most `capacity`).
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

    /// How many keyed peers (see [`IngestHandle::source_for`]) the service remembers; past
    /// that, the least recently used one is forgotten. 0: none, every source starts afresh.
    pub fn peers(mut self, n: usize) -> Self {
        self.peers = n;
        self
    }

    /// Capacity of the [`SharedKeyCache`] behind the workers' own key caches (0: none, each
    /// worker lifts every key it meets itself). Each key is lifted by one worker, then
    /// found by all; about 130 bytes per key, allocated when the service starts.
    pub fn shared_key_cache(mut self, keys: usize) -> Self {
        self.shared_keys = keys;
        self
    }

    fn effective_peer_capacity(&self) -> usize {
        self.peer_capacity
            .unwrap_or_else(|| (self.capacity / 4).max(self.max_batch))
            .min(self.capacity)
    }
}

/// An event with its verdict, handed back by a [`Ticket`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked<E> {
    /// The submitted event, moved back to the caller.
    pub event: E,
    /// Its verdict, as `Event::verify` decides.
    pub verdict: Verdict,
}

/// Why an event got no verdict.
#[derive(Debug, PartialEq, Eq)]
pub enum IngestError<E> {
    /// The service is shutting down or gone; the event is handed back unchecked.
    Closed(E),
    /// The worker dropped the event without a verdict (only possible if a worker thread
    /// panicked).
    Lost,
}

impl<E> fmt::Display for IngestError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IngestError::Closed(_) => "ingest service is closed",
            IngestError::Lost => "event lost by a failed worker",
        })
    }
}

impl<E: fmt::Debug> std::error::Error for IngestError<E> {}

/// Counters of an [`IngestService`] (a snapshot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IngestStats {
    /// Events accepted by [`Source::enqueue`].
    pub events: u64,
    /// Events answered with a verdict.
    pub answered: u64,
    /// Events answered [`IngestError::Lost`] because their worker panicked.
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

#[derive(Default)]
struct Counters {
    events: AtomicU64,
    answered: AtomicU64,
    lost: AtomicU64,
    batches: AtomicU64,
    batches_held: AtomicU64,
    batched_events: AtomicU64,
    single_events: AtomicU64,
    demotions: AtomicU64,
    recoveries: AtomicU64,
    workers: AtomicU64,
    workers_replaced: AtomicU64,
}

/// The answers of one batch, shared by the batch's [`Ticket`]s.
///
/// One per batch rather than a channel per event: the worker stores every answer, then wakes
/// the waiting tasks once. With a channel per event each send woke its receiver at once, and
/// a woken connection task that the scheduler ran on the worker's own core preempted the
/// worker after every single answer (`docs/experiments.md`, per-event channels).
struct Answers<E> {
    slots: Mutex<AnswerSlots<E>>,
}

struct AnswerSlots<E> {
    /// Set once, by [`Reply::finish`] or by dropping an unfinished [`Reply`].
    done: bool,
    /// Per ticket: its answer until the ticket takes it (`None` after, or if lost).
    results: Vec<Option<Checked<E>>>,
    /// Per ticket: the waker of the task awaiting it, while not done.
    wakers: Vec<Option<Waker>>,
}

impl<E> Answers<E> {
    fn new() -> Self {
        Answers {
            slots: Mutex::new(AnswerSlots {
                done: false,
                results: Vec::new(),
                wakers: Vec::new(),
            }),
        }
    }
}

/// The worker's side of a batch's [`Answers`]: answered once by [`Reply::finish`]; dropped
/// unanswered (a panicking worker, a buffer that never became a batch), its tickets resolve
/// to [`IngestError::Lost`] instead of waiting forever.
struct Reply<E> {
    answers: Arc<Answers<E>>,
}

impl<E> Reply<E> {
    fn new() -> Self {
        Reply {
            answers: Arc::new(Answers::new()),
        }
    }

    fn ticket(&self, index: usize) -> Ticket<E> {
        Ticket {
            answers: Arc::clone(&self.answers),
            index,
        }
    }

    /// Stores the answers (ticket `i` gets `results[i]`), then wakes the waiting tasks, after
    /// the lock is released.
    fn finish(self, results: Vec<Option<Checked<E>>>) {
        self.complete(results);
    }

    fn complete(&self, results: Vec<Option<Checked<E>>>) {
        let wakers = {
            let mut slots = lock(&self.answers.slots);
            if slots.done {
                return;
            }
            slots.done = true;
            slots.results = results;
            std::mem::take(&mut slots.wakers)
        };
        for w in wakers.into_iter().flatten() {
            w.wake();
        }
    }
}

impl<E> Drop for Reply<E> {
    fn drop(&mut self) {
        // After `finish` this finds `done` and does nothing.
        self.complete(Vec::new());
    }
}

/// A peer's standing: its failure score and demotion.
struct Reputation {
    /// Failed batches, decayed; exact as of `updated`.
    score: f64,
    updated: Instant,
    demoted_until: Option<Instant>,
}

impl Reputation {
    fn new(now: Instant) -> Self {
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
struct Peer {
    /// The peer's lane in the scheduler.
    lane: u64,
    /// Admission: permits for the events of this peer in the service.
    permits: Arc<Semaphore>,
    reputation: Mutex<Reputation>,
    /// Its key in the peer map (`None`: an anonymous peer).
    key: Option<PeerKey>,
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

#[derive(Clone)]
struct PeerKey(Arc<dyn DynKey>);

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
struct Peers {
    /// Per key: the peer and its last use (a tick of `order`).
    map: HashMap<PeerKey, (Arc<Peer>, u64)>,
    /// Keys by last use, oldest first.
    order: BTreeMap<u64, PeerKey>,
    tick: u64,
}

impl Peers {
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

struct SourceState<E> {
    buf: Vec<E>,
    /// The answers of the events in `buf` (present while `buf` is not empty).
    reply: Option<Reply<E>>,
    /// The back-pressure permits of the events in `buf` (service, peer), each merged into one.
    permits: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>,
    /// Bumped at every flush; a timer entry only flushes the generation it was armed for.
    generation: u64,
    /// Test hook: the next batch makes its worker panic.
    panic_next: bool,
}

struct SourceInner<E> {
    peer: Arc<Peer>,
    state: Mutex<SourceState<E>>,
}

struct Job<E> {
    peer: Arc<Peer>,
    events: Vec<E>,
    reply: Reply<E>,
    /// Released after the answers, so the capacity counts events until they are answered.
    permits: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>,
    /// Test hook: the worker panics instead of verifying.
    panic: bool,
    /// The verdicts of the first events, checked in earlier turns (a demoted peer's batch is
    /// checked a slice per turn).
    verdicts: Vec<Verdict>,
}

impl<E> Job<E> {
    /// Events not checked yet.
    fn remaining(&self) -> usize {
        self.events.len() - self.verdicts.len()
    }
}

/// The waiting batches: one lane per peer, served round-robin.
struct Queue<E> {
    /// Per peer with waiting batches: its batches, oldest first.
    lanes: HashMap<u64, VecDeque<Job<E>>>,
    /// The peers with waiting batches, in the order of their next turn.
    ring: VecDeque<u64>,
    queued_jobs: usize,
    queued_events: usize,
    closed: bool,
    /// Per lane: batches of that peer being verified now.
    busy: HashMap<u64, usize>,
    /// Per lane: when that peer last handed in a batch (peers active within
    /// [`ACTIVE_WINDOW`]; older entries are pruned when a batch comes in).
    active: HashMap<u64, Instant>,
}

/// A peer that handed in a batch this recently counts as active: while another peer is active,
/// no peer may hold every worker (see [`Queue::pop`]).
const ACTIVE_WINDOW: Duration = Duration::from_secs(1);

impl<E> Queue<E> {
    fn new() -> Self {
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

    fn push(&mut self, job: Job<E>) {
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
    fn finished(&mut self, lane: u64) {
        if let Some(n) = self.busy.get_mut(&lane) {
            *n -= 1;
            if *n == 0 {
                self.busy.remove(&lane);
            }
        }
    }

    /// Puts back a batch that has had its turn but is not done: first in its lane, whose next
    /// turn comes after every other waiting peer's.
    fn push_unfinished(&mut self, job: Job<E>) {
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
    fn pop(&mut self, workers: usize) -> Option<Job<E>> {
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

struct TimerEntry<E> {
    deadline: Instant,
    generation: u64,
    source: Arc<SourceInner<E>>,
}

struct Timers<E> {
    /// Deadlines are `now + budget` taken under this lock, so the deque is sorted.
    entries: VecDeque<TimerEntry<E>>,
    closed: bool,
}

struct Shared<E> {
    config: IngestConfig,
    permits: Arc<Semaphore>,
    closing: AtomicBool,
    queue: Mutex<Queue<E>>,
    queue_cv: Condvar,
    timers: Mutex<Timers<E>>,
    timers_cv: Condvar,
    peers: Mutex<Peers>,
    next_lane: AtomicU64,
    next_worker: AtomicU64,
    /// The key cache every worker attaches to its thread-local verifier.
    keys: Option<SharedKeyCache>,
    /// Every thread started (workers, replacements, the timer), joined at shutdown.
    threads: Mutex<Vec<JoinHandle<()>>>,
    counters: Counters,
}

/// Locks, ignoring poisoning: the protected data stays consistent because no code panics
/// while holding these locks (and a verdict must never be lost to a poisoned lock).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
thread_local! {
    /// Test hook: spawns this thread may still ask for before the OS "refuses" them.
    static SPAWNS_ALLOWED: core::cell::Cell<usize> = const { core::cell::Cell::new(usize::MAX) };
}

/// Starts a named thread, or returns the OS's refusal.
fn spawn_thread(
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
    fn new(config: IngestConfig) -> Self {
        let keys = (config.shared_keys > 0).then(|| SharedKeyCache::new(config.shared_keys));
        Shared {
            permits: Arc::new(Semaphore::new(config.capacity)),
            closing: AtomicBool::new(false),
            queue: Mutex::new(Queue::new()),
            queue_cv: Condvar::new(),
            timers: Mutex::new(Timers {
                entries: VecDeque::new(),
                closed: false,
            }),
            timers_cv: Condvar::new(),
            peers: Mutex::new(Peers {
                map: HashMap::new(),
                order: BTreeMap::new(),
                tick: 0,
            }),
            next_lane: AtomicU64::new(0),
            next_worker: AtomicU64::new(0),
            keys,
            threads: Mutex::new(Vec::new()),
            counters: Counters::default(),
            config,
        }
    }

    fn new_peer(&self, key: Option<PeerKey>) -> Arc<Peer> {
        Arc::new(Peer {
            lane: self.next_lane.fetch_add(1, Relaxed),
            permits: Arc::new(Semaphore::new(self.config.effective_peer_capacity())),
            reputation: Mutex::new(Reputation::new(Instant::now())),
            key,
        })
    }

    /// The peer of `key`: remembered, or new (forgetting the least recently used one if the
    /// map is full).
    fn peer_for(&self, key: PeerKey) -> Arc<Peer> {
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

    /// Turns the source's buffer into a job. The push to the queue happens under the source
    /// lock: see [`IngestService::shutdown`] for why that matters.
    fn flush_locked(&self, source: &Arc<SourceInner<E>>, st: &mut SourceState<E>) {
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

    fn timer_loop(&self) {
        let mut t = lock(&self.timers);
        loop {
            if t.closed {
                // Shutdown: flush every armed buffer now, then let the workers finish.
                let entries = std::mem::take(&mut t.entries);
                drop(t);
                for e in entries {
                    self.fire(e);
                }
                self.close_queue();
                return;
            }
            match t.entries.front() {
                None => t = self.timers_cv.wait(t).unwrap_or_else(|e| e.into_inner()),
                Some(front) => {
                    let now = Instant::now();
                    if front.deadline <= now {
                        let e = t.entries.pop_front().expect("front exists");
                        drop(t);
                        self.fire(e);
                        t = lock(&self.timers);
                    } else {
                        let wait = front.deadline - now;
                        t = self
                            .timers_cv
                            .wait_timeout(t, wait)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                    }
                }
            }
        }
    }

    fn fire(&self, e: TimerEntry<E>) {
        let mut st = lock(&e.source.state);
        if st.generation == e.generation {
            self.flush_locked(&e.source, &mut st);
        }
    }

    fn close_queue(&self) {
        lock(&self.queue).closed = true;
        self.queue_cv.notify_all();
    }

    /// Starts one worker thread (counted in `workers` while it runs).
    fn spawn_worker(self: &Arc<Self>) -> std::io::Result<()> {
        let i = self.next_worker.fetch_add(1, Relaxed);
        let s = Arc::clone(self);
        // Counted before the thread runs, so that a replacement is never seen missing.
        self.counters.workers.fetch_add(1, SeqCst);
        let spawned = spawn_thread(format!("nostr-verify-worker-{i}"), move || {
            // The worker's thread-local verifier: this thread belongs to the service, so
            // nothing else sees the attached cache.
            crate::with_thread_verifier(|v| v.set_shared_cache(s.keys.clone()));
            s.worker_loop();
            s.counters.workers.fetch_sub(1, SeqCst);
        });
        match spawned {
            Ok(handle) => {
                lock(&self.threads).push(handle);
                Ok(())
            }
            Err(e) => {
                self.counters.workers.fetch_sub(1, SeqCst);
                Err(e)
            }
        }
    }

    /// Runs batches until the queue is closed and empty, or until a batch panics and a new
    /// thread has taken over.
    fn worker_loop(self: &Arc<Self>) {
        loop {
            let job = {
                let mut q = lock(&self.queue);
                loop {
                    let workers = self.counters.workers.load(Relaxed) as usize;
                    if let Some(job) = q.pop(workers) {
                        break job;
                    }
                    if q.closed && q.queued_jobs == 0 {
                        return;
                    }
                    // Nothing this worker may take: new batches, finished turns and the end of
                    // another peer's activity window wake it.
                    q = self
                        .queue_cv
                        .wait_timeout(q, ACTIVE_WINDOW)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            };
            let n = job.events.len() as u64;
            let lane = job.peer.lane;
            // A panic drops the job while unwinding: its `Reply` answers the tickets `Lost`
            // and its permits go back. No lock is held across `run`.
            let outcome = catch_unwind(AssertUnwindSafe(|| self.run(job)));
            lock(&self.queue).finished(lane);
            self.queue_cv.notify_all();
            if outcome.is_err() {
                self.counters.lost.fetch_add(n, Relaxed);
                // The thread-local verifier may have been left mid-operation: hand over to a
                // fresh thread. If the OS refuses one, carry on here rather than lose a worker.
                if self.spawn_worker().is_ok() {
                    self.counters.workers_replaced.fetch_add(1, Relaxed);
                    return;
                }
            }
        }
    }

    /// One turn of a batch: all of it, or for a demoted peer the next
    /// [`single_turn`](Self::single_turn) events, after which the batch goes back to its lane.
    fn run(&self, mut job: Job<E>) {
        let now = Instant::now();
        let demoted = {
            let mut r = lock(&job.peer.reputation);
            match r.demoted_until {
                Some(until) if now < until => true,
                Some(_) => {
                    r.demoted_until = None;
                    self.counters.recoveries.fetch_add(1, Relaxed);
                    false
                }
                None => false,
            }
        };
        if job.panic {
            panic!("ingest worker test hook: panic on a marked batch");
        }
        let c = &self.counters;
        let start = job.verdicts.len();
        if demoted {
            let end = job.events.len().min(start + self.single_turn());
            verify_into(&job.events[start..end], Mode::Single, &mut job.verdicts);
            c.single_events.fetch_add((end - start) as u64, Relaxed);
            if job.remaining() > 0 {
                lock(&self.queue).push_unfinished(job);
                self.queue_cv.notify_one();
                return;
            }
        } else {
            verify_into(&job.events[start..], Mode::Batch, &mut job.verdicts);
            let failed = job.verdicts[start..].contains(&Verdict::InvalidSignature);
            c.batches.fetch_add(1, Relaxed);
            c.batched_events
                .fetch_add((job.events.len() - start) as u64, Relaxed);
            if failed {
                self.record_failure(&job.peer, now);
            } else {
                let mut r = lock(&job.peer.reputation);
                r.decay_to(now, self.config.failure_half_life);
                r.score *= self.config.held_batch_decay;
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

    /// A failed batch: the score grows by 1, and the peer is demoted if that reaches the
    /// threshold. A keyed peer counts as used, so a misbehaving peer is not the first one
    /// forgotten.
    fn record_failure(&self, peer: &Peer, now: Instant) {
        {
            let mut r = lock(&peer.reputation);
            r.decay_to(now, self.config.failure_half_life);
            r.score += 1.0;
            let demoted = r.demoted_until.is_some_and(|t| now < t);
            // Above n - 1/2 rather than at n: with time decay, n failures in quick succession
            // sum to a little less than n.
            if !demoted && r.score > f64::from(self.config.demote_after) - 0.5 {
                r.demoted_until = Some(now + self.config.demotion);
                self.counters.demotions.fetch_add(1, Relaxed);
            }
        }
        if let Some(key) = &peer.key {
            lock(&self.peers).touch(key);
        }
    }

    fn stats(&self) -> IngestStats {
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
    fn close(&self) {
        self.closing.store(true, SeqCst);
        self.permits.close();
        lock(&self.timers).closed = true;
        self.timers_cv.notify_all();
    }
}

/// The ingest service: worker threads, a timer thread, and the per-peer queues.
///
/// `E` is the event type: `nostr::event::Event` (default) or, with feature `nostr-0-44`,
/// `nostr044::Event`. `IngestService::new` alone cannot infer it: name it, as below.
///
/// ```
/// use nostr::event::{Event, EventBuilder, FinalizeEvent, Kind};
/// use nostr::key::Keys;
/// use nostr_verify::ingest::{IngestConfig, IngestService};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let service: IngestService<Event> = IngestService::new(IngestConfig::default().workers(2));
/// let source = service.source_for("wss://relay.example.com"); // one per connection
///
/// let keys = Keys::generate();
/// let mut bad = EventBuilder::new(Kind::TextNote, "edited").finalize(&keys)?;
/// bad.content.push('!');
/// let good = EventBuilder::new(Kind::TextNote, "hello").finalize(&keys)?;
///
/// let (t1, t2) = (source.enqueue(good).await?, source.enqueue(bad).await?);
/// source.flush(); // e.g. at EOSE: do not wait for the latency budget
/// assert!(t1.await?.verdict.is_valid());
/// assert!(!t2.await?.verdict.is_valid());
/// let stats = service.shutdown().await; // answers everything still pending
/// assert_eq!(stats.events, 2);
/// # Ok(())
/// # }
/// ```
pub struct IngestService<E: EventView + Send + 'static = ::nostr::event::Event> {
    shared: Arc<Shared<E>>,
}

impl<E: EventView + Send + 'static> fmt::Debug for IngestService<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IngestService")
            .field("config", &self.shared.config)
            .field("stats", &self.shared.stats())
            .finish()
    }
}

impl<E: EventView + Send + 'static> IngestService<E> {
    /// Starts the worker threads and the timer thread. Needs no async runtime.
    ///
    /// Never panics. If the OS refuses some worker threads, the service runs with those it
    /// got (see [`IngestStats::workers`]); if it refuses the timer thread or every worker,
    /// the service is returned closed: every [`Source::enqueue`] answers
    /// [`IngestError::Closed`] with the event. Use [`try_new`](Self::try_new) to get the
    /// error instead.
    pub fn new(config: IngestConfig) -> Self {
        match Self::try_new(config.clone()) {
            Ok(service) => service,
            Err(_) => {
                let shared = Arc::new(Shared::new(config));
                shared.close();
                shared.close_queue();
                IngestService { shared }
            }
        }
    }

    /// As [`new`](Self::new), but an error instead of a closed service.
    ///
    /// # Errors
    /// The operating system's error when it refuses the timer thread or every worker thread.
    /// Fewer workers than configured is not an error (see [`IngestStats::workers`]).
    pub fn try_new(config: IngestConfig) -> std::io::Result<Self> {
        let shared = Arc::new(Shared::new(config));
        let s = Arc::clone(&shared);
        let timer = spawn_thread("nostr-verify-timer".into(), move || s.timer_loop())?;
        lock(&shared.threads).push(timer);
        let mut first_error = None;
        for _ in 0..shared.config.workers {
            if let Err(e) = shared.spawn_worker() {
                first_error.get_or_insert(e);
            }
        }
        let service = IngestService { shared };
        match first_error {
            // Dropping the service stops the timer thread.
            Some(e) if service.shared.counters.workers.load(SeqCst) == 0 => Err(e),
            _ => Ok(service),
        }
    }

    /// A cloneable, `Send` handle for connection tasks.
    pub fn handle(&self) -> IngestHandle<E> {
        IngestHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// A new anonymous source (shorthand for `self.handle().source()`).
    pub fn source(&self) -> Source<E> {
        self.handle().source()
    }

    /// A new source for the peer `peer` (shorthand for `self.handle().source_for(peer)`).
    pub fn source_for<K: Hash + Eq + Send + Sync + 'static>(&self, peer: K) -> Source<E> {
        self.handle().source_for(peer)
    }

    /// The counters now.
    pub fn stats(&self) -> IngestStats {
        self.shared.stats()
    }

    /// Graceful shutdown: new events are refused ([`IngestError::Closed`]), every buffered
    /// and queued event is verified and answered, then the threads are joined. Returns the
    /// final counters.
    ///
    /// Why nothing is lost: every push to the queue happens under its source's lock; a
    /// non-empty buffer always has a timer entry armed for its current generation; the timer
    /// thread, once closed, fires all entries (each under the source's lock) and only then
    /// closes the queue; an `enqueue` into an empty buffer after the close is refused. A
    /// worker that hands over to a new thread registers it before it ends, so the joins
    /// below also wait for the replacement.
    pub async fn shutdown(self) -> IngestStats {
        self.shared.close();
        let shared = Arc::clone(&self.shared);
        // Joining blocks, so it happens off the async executor.
        let joined = tokio::task::spawn_blocking(move || loop {
            let threads = std::mem::take(&mut *lock(&shared.threads));
            if threads.is_empty() {
                break;
            }
            for t in threads {
                let _ = t.join();
            }
        })
        .await;
        debug_assert!(joined.is_ok());
        self.shared.stats()
    }
}

impl<E: EventView + Send + 'static> Drop for IngestService<E> {
    /// Starts the same shutdown as [`IngestService::shutdown`] without waiting for it: pending
    /// events are still answered by the (detached) threads.
    fn drop(&mut self) {
        self.shared.close();
    }
}

/// A cloneable handle to an [`IngestService`], for connection tasks.
pub struct IngestHandle<E: EventView + Send + 'static = ::nostr::event::Event> {
    shared: Arc<Shared<E>>,
}

impl<E: EventView + Send + 'static> Clone for IngestHandle<E> {
    fn clone(&self) -> Self {
        IngestHandle {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<E: EventView + Send + 'static> fmt::Debug for IngestHandle<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IngestHandle").finish_non_exhaustive()
    }
}

impl<E: EventView + Send + 'static> IngestHandle<E> {
    /// A new source with an anonymous peer of its own: its failure score, demotion, queue
    /// lane and admission share start afresh and end with it. Batches are formed per source.
    pub fn source(&self) -> Source<E> {
        new_source(&self.shared, self.shared.new_peer(None))
    }

    /// A new source for the peer `peer`, e.g. an IP address or a relay URL: every source of
    /// the same peer shares one failure score and demotion (also across reconnects: drop the
    /// old source, make a new one), one queue lane and one admission share
    /// ([`IngestConfig::peer_capacity`]). Batches are still formed per source.
    ///
    /// The service remembers at most [`IngestConfig::peers`] peers and forgets the least
    /// recently used one first.
    pub fn source_for<K: Hash + Eq + Send + Sync + 'static>(&self, peer: K) -> Source<E> {
        let peer = self.shared.peer_for(PeerKey(Arc::new(peer)));
        new_source(&self.shared, peer)
    }

    /// The counters now.
    pub fn stats(&self) -> IngestStats {
        self.shared.stats()
    }
}

fn new_source<E: EventView + Send + 'static>(
    shared: &Arc<Shared<E>>,
    peer: Arc<Peer>,
) -> Source<E> {
    Source {
        shared: Arc::clone(shared),
        inner: Arc::new(SourceInner {
            peer,
            state: Mutex::new(SourceState {
                buf: Vec::with_capacity(shared.config.max_batch),
                reply: None,
                permits: None,
                generation: 0,
                panic_next: false,
            }),
        }),
    }
}

/// One connection's way into the service: its own buffer, and its peer's standing.
///
/// Dropping a source flushes its buffer; its pending tickets are still answered.
pub struct Source<E: EventView + Send + 'static = ::nostr::event::Event> {
    shared: Arc<Shared<E>>,
    inner: Arc<SourceInner<E>>,
}

impl<E: EventView + Send + 'static> fmt::Debug for Source<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Source")
            .field("demoted", &self.is_demoted())
            .field("failure_score", &self.failure_score())
            .finish_non_exhaustive()
    }
}

impl<E: EventView + Send + 'static> Source<E> {
    /// Adds `event` to this source's buffer and returns a [`Ticket`] for its verdict.
    ///
    /// Waits only while the service, or this source's peer's share of it, is full
    /// (back-pressure). Pipelining — enqueue many, then await the tickets — is what lets a
    /// source's events share a batch.
    ///
    /// # Errors
    /// [`IngestError::Closed`] with the event when the service is shutting down.
    pub async fn enqueue(&self, event: E) -> Result<Ticket<E>, IngestError<E>> {
        let shared = &self.shared;
        if shared.closing.load(SeqCst) {
            return Err(IngestError::Closed(event));
        }
        // The peer's share first: a peer waiting for its own share holds none of the
        // service's permits meanwhile.
        let Ok(peer_permit) = Arc::clone(&self.inner.peer.permits).acquire_owned().await else {
            return Err(IngestError::Closed(event));
        };
        let Ok(permit) = Arc::clone(&shared.permits).acquire_owned().await else {
            return Err(IngestError::Closed(event));
        };
        let mut st = lock(&self.inner.state);
        if st.buf.is_empty() {
            // Arm the latency timer for this generation, unless the service is closing.
            let mut t = lock(&shared.timers);
            if t.closed {
                return Err(IngestError::Closed(event));
            }
            let was_idle = t.entries.is_empty();
            t.entries.push_back(TimerEntry {
                deadline: Instant::now() + shared.config.latency_budget,
                generation: st.generation,
                source: Arc::clone(&self.inner),
            });
            drop(t);
            if was_idle {
                shared.timers_cv.notify_one();
            }
        }
        shared.counters.events.fetch_add(1, Relaxed);
        let max_batch = shared.config.max_batch;
        let index = st.buf.len();
        let ticket = st.reply.get_or_insert_with(Reply::new).ticket(index);
        st.buf.push(event);
        match &mut st.permits {
            Some((p, q)) => {
                p.merge(permit);
                q.merge(peer_permit);
            }
            None => st.permits = Some((permit, peer_permit)),
        }
        if st.buf.len() >= max_batch {
            shared.flush_locked(&self.inner, &mut st);
        }
        Ok(ticket)
    }

    /// Enqueues `event` and waits for its verdict.
    ///
    /// A lone event waits for the latency budget; use [`enqueue`](Self::enqueue) to pipeline.
    ///
    /// # Errors
    /// As [`enqueue`](Self::enqueue) and [`Ticket`].
    pub async fn submit(&self, event: E) -> Result<Checked<E>, IngestError<E>> {
        self.enqueue(event).await?.await
    }

    /// Sends the buffered events to the workers now (e.g. at EOSE).
    pub fn flush(&self) {
        let mut st = lock(&self.inner.state);
        self.shared.flush_locked(&self.inner, &mut st);
    }

    /// `true` while this source's peer is demoted to one-at-a-time checking.
    pub fn is_demoted(&self) -> bool {
        lock(&self.inner.peer.reputation)
            .demoted_until
            .is_some_and(|t| Instant::now() < t)
    }

    /// This source's peer's failure score now: failed batches, decayed by held batches and
    /// by time (see [`IngestConfig::demote_after`]).
    pub fn failure_score(&self) -> f64 {
        let mut r = lock(&self.inner.peer.reputation);
        r.decay_to(Instant::now(), self.shared.config.failure_half_life);
        r.score
    }

    /// Test hook (feature `internals`, not a stable API): the worker that picks up this
    /// source's next batch panics instead of verifying it, as a verifier bug would.
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    pub fn panic_on_next_batch(&self) {
        lock(&self.inner.state).panic_next = true;
    }
}

impl<E: EventView + Send + 'static> Drop for Source<E> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The verdict of one enqueued event, to `.await`.
///
/// Dropping the ticket does not cancel the check; the verdict is discarded (it is freed with
/// the last ticket of its batch). Await a ticket once: polled again after it returned its
/// answer, it returns [`IngestError::Lost`].
pub struct Ticket<E> {
    answers: Arc<Answers<E>>,
    index: usize,
}

impl<E> fmt::Debug for Ticket<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ticket")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl<E> Future for Ticket<E> {
    type Output = Result<Checked<E>, IngestError<E>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut slots = lock(&self.answers.slots);
        if slots.done {
            return Poll::Ready(
                slots
                    .results
                    .get_mut(self.index)
                    .and_then(Option::take)
                    .ok_or(IngestError::Lost),
            );
        }
        let i = self.index;
        if slots.wakers.len() <= i {
            slots.wakers.resize_with(i + 1, || None);
        }
        match &mut slots.wakers[i] {
            Some(w) if w.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            panic: false,
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

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    fn checked(event: u32) -> Option<Checked<u32>> {
        Some(Checked {
            event,
            verdict: Verdict::Valid,
        })
    }

    #[test]
    fn each_ticket_gets_its_own_answer_once() {
        let reply = Reply::new();
        let tickets: Vec<_> = (0..3).map(|i| reply.ticket(i)).collect();
        // A verdict missing for the last ticket (a verifier bug) must read as lost.
        reply.finish(vec![checked(10), checked(11)]);
        rt().block_on(async {
            let mut tickets = tickets.into_iter();
            let mut first = tickets.next().expect("three");
            assert_eq!((&mut first).await.map(|c| c.event), Ok(10));
            // Polled again after its answer: lost, not a second answer.
            assert_eq!((&mut first).await, Err(IngestError::Lost));
            assert_eq!(
                tickets.next().expect("three").await.map(|c| c.event),
                Ok(11)
            );
            assert_eq!(tickets.next().expect("three").await, Err(IngestError::Lost));
        });
    }

    #[test]
    fn an_unanswered_reply_resolves_its_tickets_as_lost() {
        let reply = Reply::<u32>::new();
        let (a, b) = (reply.ticket(0), reply.ticket(1));
        let rt = rt();
        let waiting = rt.spawn(a);
        // Let the task poll (and register its waker) before the reply goes away.
        rt.block_on(tokio::task::yield_now());
        drop(reply);
        assert_eq!(rt.block_on(waiting).expect("task"), Err(IngestError::Lost));
        assert_eq!(rt.block_on(b), Err(IngestError::Lost));
    }

    #[test]
    fn finish_wakes_the_waiting_tasks_from_another_thread() {
        let reply = Reply::new();
        let tickets: Vec<_> = (0..4).map(|i| reply.ticket(i)).collect();
        let rt = rt();
        let got = rt.block_on(async move {
            let tasks: Vec<_> = tickets.into_iter().map(tokio::spawn).collect();
            tokio::task::yield_now().await; // every task is waiting now
            let worker = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                reply.finish((0..4).map(checked).collect());
            });
            let mut got = Vec::new();
            for t in tasks {
                got.push(t.await.expect("task").map(|c| c.event));
            }
            worker.join().expect("worker");
            got
        });
        assert_eq!(got, vec![Ok(0), Ok(1), Ok(2), Ok(3)]);
    }

    fn signed_events(n: usize) -> Vec<::nostr::event::Event> {
        use ::nostr::event::{EventBuilder, FinalizeEvent, Kind};
        use ::nostr::key::Keys;
        let keys = Keys::parse("6b911fd37cdf5c81d4c0adb1ab7fa822ed253ab0ad9aa18d77257c88b29b718e")
            .expect("key");
        (0..n)
            .map(|i| {
                EventBuilder::new(Kind::TextNote, format!("{i}"))
                    .finalize(&keys)
                    .expect("signed")
            })
            .collect()
    }

    /// Runs `f` with only `allowed` thread spawns granted to this thread, as an OS running
    /// out of threads would.
    fn with_spawns_allowed<R>(allowed: usize, f: impl FnOnce() -> R) -> R {
        struct Reset;
        impl Drop for Reset {
            fn drop(&mut self) {
                SPAWNS_ALLOWED.with(|a| a.set(usize::MAX));
            }
        }
        SPAWNS_ALLOWED.with(|a| a.set(allowed));
        let _reset = Reset;
        f()
    }

    #[test]
    fn refused_threads_never_panic_the_constructor() {
        type Service = IngestService<::nostr::event::Event>;
        let config = IngestConfig::default()
            .workers(3)
            .latency_budget(Duration::from_millis(1));
        let events = signed_events(20);
        // No timer, or a timer but no worker: `try_new` says so.
        assert!(with_spawns_allowed(0, || Service::try_new(config.clone())).is_err());
        assert!(with_spawns_allowed(1, || Service::try_new(config.clone())).is_err());

        // `new` returns a closed service: every event comes back unchecked.
        let closed = with_spawns_allowed(1, || Service::new(config.clone()));
        assert_eq!(closed.stats().workers, 0);
        rt().block_on(async {
            match closed.source().enqueue(events[0].clone()).await {
                Err(IngestError::Closed(e)) => assert_eq!(e, events[0]),
                other => panic!("expected Closed, got {:?}", other.map(|_| ())),
            }
            assert_eq!(closed.shutdown().await.answered, 0);
        });

        // The timer and one of three workers: the service runs with one.
        let one = with_spawns_allowed(2, || Service::try_new(config.clone())).expect("a worker");
        assert_eq!(one.stats().workers, 1);
        rt().block_on(async {
            let source = one.source();
            let mut tickets = Vec::new();
            for e in &events {
                tickets.push(source.enqueue(e.clone()).await.expect("open"));
            }
            source.flush();
            for t in tickets {
                assert_eq!(t.await.expect("verdict").verdict, Verdict::Valid);
            }
            drop(source);
            assert_eq!(one.shutdown().await.answered, 20);
        });
    }
}
