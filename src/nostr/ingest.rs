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
//! let source = handle.source(); // one per connection or peer
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
//! * **Per-source buffers.** [`Source::enqueue`] appends to the source's buffer. The buffer
//!   becomes a batch when it holds [`IngestConfig::max_batch`] events, when the oldest event in
//!   it has waited [`IngestConfig::latency_budget`] (default 1 ms; a timer thread watches the
//!   deadlines), or on [`Source::flush`] (and when the `Source` is dropped).
//! * **Workers.** Batches wait in one FIFO queue and run on [`IngestConfig::workers`] std
//!   threads (default one per core), off the async executor; each thread uses its own
//!   thread-local [`Verifier`](crate::Verifier) (see [`with_thread_verifier`](crate::with_thread_verifier)),
//!   and the workers share one [`SharedKeyCache`], so each new author
//!   is lifted once, not once per worker.
//!   Verdicts are exactly [`VerifyBatchExt::verify_batch`](crate::VerifyBatchExt::verify_batch)'s.
//! * **Back-pressure.** At most [`IngestConfig::capacity`] events are in the service at once
//!   (buffered, queued or being verified); `enqueue` waits for room.
//! * **Demotion.** A batch *fails* when one of its signatures is invalid (wrong ids are cheap
//!   and do not count): the batch verifier then has to narrow down the bad signatures, which
//!   costs more than checking singly. After [`IngestConfig::demote_after`] consecutive failed
//!   batches the source is demoted for [`IngestConfig::demotion`]: its events are checked one
//!   at a time, so an attacker only slows its own traffic. Then it batches again.
//! * **Shutdown.** [`IngestService::shutdown`] stops accepting events, flushes every buffer,
//!   lets the workers answer everything queued, and joins the threads. Dropping the service
//!   does the same without waiting.

use super::batch::{verify_into, Mode};
use super::view::EventView;
use super::Verdict;
use crate::SharedKeyCache;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::Waker;
use core::task::{Context, Poll};
use std::collections::VecDeque;
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
    demote_after: u32,
    demotion: Duration,
    shared_keys: usize,
}

impl Default for IngestConfig {
    /// One worker per core, batches of up to 512, 1 ms latency budget, 8192 events in the
    /// service, demotion after 2 consecutive failed batches for 10 s, and a key cache of
    /// 65,536 keys shared by the workers.
    fn default() -> Self {
        IngestConfig {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_batch: 512,
            latency_budget: Duration::from_millis(1),
            capacity: 8192,
            demote_after: 2,
            demotion: Duration::from_secs(10),
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

    /// Consecutive failed batches after which a source is demoted (at least 1).
    pub fn demote_after(mut self, n: u32) -> Self {
        self.demote_after = n.max(1);
        self
    }

    /// How long a demoted source is checked one event at a time.
    pub fn demotion(mut self, d: Duration) -> Self {
        self.demotion = d;
        self
    }

    /// Capacity of the [`SharedKeyCache`] behind the workers' own key caches (0: none, each
    /// worker lifts every key it meets itself). Each key is lifted by one worker, then
    /// found by all; about 130 bytes per key, allocated when the service starts.
    pub fn shared_key_cache(mut self, keys: usize) -> Self {
        self.shared_keys = keys;
        self
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
    /// Batches verified together (demoted sources' groups not included).
    pub batches: u64,
    /// Batches in which every signature was valid.
    pub batches_held: u64,
    /// Events that went through batches.
    pub batched_events: u64,
    /// Events of demoted sources, checked one at a time.
    pub single_events: u64,
    /// Times a source was demoted.
    pub demotions: u64,
    /// Times a demoted source went back to batches.
    pub recoveries: u64,
    /// Batches waiting for a worker now.
    pub queue_depth: u64,
    /// Events in those waiting batches.
    pub queued_events: u64,
    /// Events in the service now (buffered, queued or being verified).
    pub in_flight: u64,
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
    batches: AtomicU64,
    batches_held: AtomicU64,
    batched_events: AtomicU64,
    single_events: AtomicU64,
    demotions: AtomicU64,
    recoveries: AtomicU64,
}

/// The answers of one batch, shared by the batch's [`Ticket`]s.
///
/// One per batch rather than a channel per event: the worker stores every answer, then wakes
/// the waiting tasks once. With a channel per event each send woke its receiver at once, and
/// a woken connection task that the scheduler ran on the worker's own core preempted the
/// worker after every single answer (measured: ~1,300 wake-ups and twice the context
/// switches per 11,764 events with 2 workers on 2 cores).
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

struct SourceState<E> {
    buf: Vec<E>,
    /// The answers of the events in `buf` (present while `buf` is not empty).
    reply: Option<Reply<E>>,
    /// The back-pressure permits of the events in `buf`, merged into one.
    permit: Option<OwnedSemaphorePermit>,
    /// Bumped at every flush; a timer entry only flushes the generation it was armed for.
    generation: u64,
    failures: u32,
    demoted_until: Option<Instant>,
}

struct SourceInner<E> {
    state: Mutex<SourceState<E>>,
}

struct Job<E> {
    source: Arc<SourceInner<E>>,
    events: Vec<E>,
    reply: Reply<E>,
    /// Released after the answers, so the capacity counts events until they are answered.
    permit: Option<OwnedSemaphorePermit>,
}

struct Queue<E> {
    jobs: VecDeque<Job<E>>,
    queued_events: usize,
    closed: bool,
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
    counters: Counters,
}

/// Locks, ignoring poisoning: the protected data stays consistent because no code panics
/// while holding these locks (and a verdict must never be lost to a poisoned lock).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<E: EventView + Send + 'static> Shared<E> {
    /// Turns the source's buffer into a job. The push to the queue happens under the source
    /// lock: see [`IngestService::shutdown`] for why that matters.
    fn flush_locked(&self, source: &Arc<SourceInner<E>>, st: &mut SourceState<E>) {
        if st.buf.is_empty() {
            return;
        }
        st.generation += 1;
        let events = std::mem::replace(&mut st.buf, Vec::with_capacity(self.config.max_batch));
        let reply = st.reply.take().unwrap_or_else(Reply::new);
        let permit = st.permit.take();
        let mut q = lock(&self.queue);
        q.queued_events += events.len();
        q.jobs.push_back(Job {
            source: Arc::clone(source),
            events,
            reply,
            permit,
        });
        drop(q);
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
                lock(&self.queue).closed = true;
                self.queue_cv.notify_all();
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

    fn worker_loop(&self) {
        loop {
            let job = {
                let mut q = lock(&self.queue);
                loop {
                    if let Some(job) = q.jobs.pop_front() {
                        q.queued_events -= job.events.len();
                        break job;
                    }
                    if q.closed {
                        return;
                    }
                    q = self.queue_cv.wait(q).unwrap_or_else(|e| e.into_inner());
                }
            };
            self.run(job);
        }
    }

    fn run(&self, job: Job<E>) {
        let now = Instant::now();
        let demoted = {
            let mut st = lock(&job.source.state);
            match st.demoted_until {
                Some(until) if now < until => true,
                Some(_) => {
                    st.demoted_until = None;
                    self.counters.recoveries.fetch_add(1, Relaxed);
                    false
                }
                None => false,
            }
        };
        let Job {
            source,
            events,
            reply,
            permit,
        } = job;
        let n = events.len() as u64;
        let mut verdicts = Vec::with_capacity(events.len());
        let mode = if demoted { Mode::Single } else { Mode::Batch };
        verify_into(&events, mode, &mut verdicts);

        let c = &self.counters;
        if demoted {
            c.single_events.fetch_add(n, Relaxed);
        } else {
            let failed = verdicts.contains(&Verdict::InvalidSignature);
            c.batches.fetch_add(1, Relaxed);
            c.batched_events.fetch_add(n, Relaxed);
            let mut st = lock(&source.state);
            if failed {
                st.failures += 1;
                if st.failures >= self.config.demote_after {
                    st.failures = 0;
                    st.demoted_until = Some(now + self.config.demotion);
                    c.demotions.fetch_add(1, Relaxed);
                }
            } else {
                st.failures = 0;
                c.batches_held.fetch_add(1, Relaxed);
            }
        }
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
        drop(permit);
    }

    fn stats(&self) -> IngestStats {
        let c = &self.counters;
        let (queue_depth, queued_events) = {
            let q = lock(&self.queue);
            (q.jobs.len() as u64, q.queued_events as u64)
        };
        IngestStats {
            events: c.events.load(Relaxed),
            answered: c.answered.load(Relaxed),
            batches: c.batches.load(Relaxed),
            batches_held: c.batches_held.load(Relaxed),
            batched_events: c.batched_events.load(Relaxed),
            single_events: c.single_events.load(Relaxed),
            demotions: c.demotions.load(Relaxed),
            recoveries: c.recoveries.load(Relaxed),
            queue_depth,
            queued_events,
            in_flight: (self.config.capacity - self.permits.available_permits()) as u64,
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

/// The ingest service: worker threads, a timer thread and the shared queue.
///
/// `E` is the event type: `nostr::event::Event` (default) or, with feature `nostr-0-44`,
/// `nostr044::Event`.
pub struct IngestService<E: EventView + Send + 'static = ::nostr::event::Event> {
    shared: Arc<Shared<E>>,
    threads: Vec<JoinHandle<()>>,
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
    /// # Panics
    /// Panics if the operating system cannot start a thread.
    pub fn new(config: IngestConfig) -> Self {
        let shared = Arc::new(Shared {
            permits: Arc::new(Semaphore::new(config.capacity)),
            closing: AtomicBool::new(false),
            queue: Mutex::new(Queue {
                jobs: VecDeque::new(),
                queued_events: 0,
                closed: false,
            }),
            queue_cv: Condvar::new(),
            timers: Mutex::new(Timers {
                entries: VecDeque::new(),
                closed: false,
            }),
            timers_cv: Condvar::new(),
            counters: Counters::default(),
            config,
        });
        let mut threads = Vec::with_capacity(shared.config.workers + 1);
        let keys =
            (shared.config.shared_keys > 0).then(|| SharedKeyCache::new(shared.config.shared_keys));
        for i in 0..shared.config.workers {
            let s = Arc::clone(&shared);
            let keys = keys.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("nostr-verify-worker-{i}"))
                    .spawn(move || {
                        // The worker's thread-local verifier: this thread belongs to the
                        // service, so nothing else sees the attached cache.
                        crate::with_thread_verifier(|v| v.set_shared_cache(keys));
                        s.worker_loop()
                    })
                    .expect("spawn an ingest worker thread"),
            );
        }
        let s = Arc::clone(&shared);
        threads.push(
            std::thread::Builder::new()
                .name("nostr-verify-timer".into())
                .spawn(move || s.timer_loop())
                .expect("spawn the ingest timer thread"),
        );
        IngestService { shared, threads }
    }

    /// A cloneable, `Send` handle for connection tasks.
    pub fn handle(&self) -> IngestHandle<E> {
        IngestHandle {
            shared: Arc::clone(&self.shared),
        }
    }

    /// A new source (shorthand for `self.handle().source()`).
    pub fn source(&self) -> Source<E> {
        new_source(&self.shared)
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
    /// closes the queue; an `enqueue` into an empty buffer after the close is refused.
    pub async fn shutdown(mut self) -> IngestStats {
        self.shared.close();
        let threads = std::mem::take(&mut self.threads);
        // Joining blocks, so it happens off the async executor.
        let joined = tokio::task::spawn_blocking(move || {
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
    /// A new source: one per connection or peer. Batches are formed per source.
    pub fn source(&self) -> Source<E> {
        new_source(&self.shared)
    }

    /// The counters now.
    pub fn stats(&self) -> IngestStats {
        self.shared.stats()
    }
}

fn new_source<E: EventView + Send + 'static>(shared: &Arc<Shared<E>>) -> Source<E> {
    Source {
        shared: Arc::clone(shared),
        inner: Arc::new(SourceInner {
            state: Mutex::new(SourceState {
                buf: Vec::with_capacity(shared.config.max_batch),
                reply: None,
                permit: None,
                generation: 0,
                failures: 0,
                demoted_until: None,
            }),
        }),
    }
}

/// One connection's (or peer's) way into the service: its own buffer and demotion state.
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
            .finish_non_exhaustive()
    }
}

impl<E: EventView + Send + 'static> Source<E> {
    /// Adds `event` to this source's buffer and returns a [`Ticket`] for its verdict.
    ///
    /// Waits only while the service is full (back-pressure). Pipelining — enqueue many, then
    /// await the tickets — is what lets a source's events share a batch.
    ///
    /// # Errors
    /// [`IngestError::Closed`] with the event when the service is shutting down.
    pub async fn enqueue(&self, event: E) -> Result<Ticket<E>, IngestError<E>> {
        let shared = &self.shared;
        if shared.closing.load(SeqCst) {
            return Err(IngestError::Closed(event));
        }
        let permit = match Arc::clone(&shared.permits).acquire_owned().await {
            Ok(p) => p,
            Err(_) => return Err(IngestError::Closed(event)),
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
        match &mut st.permit {
            Some(p) => p.merge(permit),
            None => st.permit = Some(permit),
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

    /// `true` while this source is demoted to one-at-a-time checking.
    pub fn is_demoted(&self) -> bool {
        lock(&self.inner.state)
            .demoted_until
            .is_some_and(|t| Instant::now() < t)
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
}
