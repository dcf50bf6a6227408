//! An async front end for relays and sync tools: many sources submit events, each gets its
//! [`Verdict`](crate::Verdict), and the verification runs in batches on worker threads
//! (feature `tokio`).
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
//!   and the workers share one [`SharedKeyCache`](crate::SharedKeyCache), so each new author is lifted once, not once
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

// Rooms: this file holds the public API; the machinery lives in one file per concern:
// `config` (the settings), `reply` (a batch's answers and the tickets awaiting them),
// `reputation` (peers, failure scores, demotion), `queue` (the per-peer lanes and the fair
// scheduler), `timer` (the latency budget), `workers` (the worker threads) and `shared` (the
// state they all share, and the steps every side takes on it).

mod buffer;
mod checked;
mod config;
mod lock;
mod queue;
mod reply;
mod reputation;
mod shared;
mod stats;
mod timer;
mod workers;

pub use checked::{Checked, IngestError};
pub use config::IngestConfig;
pub use reply::Ticket;
pub use stats::IngestStats;

use super::view::EventView;
#[cfg(test)]
use super::Verdict;
use buffer::SourceInner;
use core::fmt;
use core::hash::Hash;
use lock::lock;
use reply::Reply;
use reputation::{Peer, PeerKey};
use shared::Shared;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::Arc;
use std::time::Instant;
use workers::spawn_thread;

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
                shared.queue.close();
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
        new_source(&self.shared, self.shared.peers.new_peer(None))
    }

    /// A new source for the peer `peer`, e.g. an IP address or a relay URL: every source of
    /// the same peer shares one failure score and demotion (also across reconnects: drop the
    /// old source, make a new one), one queue lane and one admission share
    /// ([`IngestConfig::peer_capacity`]). Batches are still formed per source.
    ///
    /// The service remembers at most [`IngestConfig::peers`] peers and forgets the least
    /// recently used one first.
    pub fn source_for<K: Hash + Eq + Send + Sync + 'static>(&self, peer: K) -> Source<E> {
        let peer = self.shared.peers.peer_for(PeerKey::new(peer));
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
        inner: Arc::new(SourceInner::new(peer, shared.config.max_batch)),
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
        // Arm the latency timer for this generation, unless the service is closing.
        if st.buf.is_empty() && !shared.timers.arm(&self.inner, st.generation) {
            return Err(IngestError::Closed(event));
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
        self.inner.peer.is_demoted(Instant::now())
    }

    /// This source's peer's failure score now: failed batches, decayed by held batches and
    /// by time (see [`IngestConfig::demote_after`]).
    pub fn failure_score(&self) -> f64 {
        self.inner
            .peer
            .failure_score(Instant::now(), self.shared.config.failure_half_life)
    }
}

impl<E: EventView + Send + 'static> Drop for Source<E> {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    pub(super) fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
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
                workers::SPAWNS_ALLOWED.with(|a| a.set(usize::MAX));
            }
        }
        workers::SPAWNS_ALLOWED.with(|a| a.set(allowed));
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

    /// A worker that panics inside verification (the seam: an event whose id panics when
    /// read) loses its batch's answers (`Lost`) and is replaced; with more panics than workers
    /// the service still answers, from several sources at once, and shuts down clean.
    #[test]
    fn panicked_workers_are_replaced() {
        use crate::nostr::view::PanickingEvent;
        let service = IngestService::<PanickingEvent>::new(
            IngestConfig::default()
                .workers(2)
                .max_batch(8)
                .latency_budget(Duration::from_secs(3600)),
        );
        let events: Vec<PanickingEvent> = signed_events(400)
            .into_iter()
            .map(|event| PanickingEvent {
                event,
                panics: false,
            })
            .collect();
        rt().block_on(async {
            let source = service.source();
            // More panics than workers: without replacement nobody would be left to answer.
            for round in 0..3 {
                let mut tickets = Vec::new();
                for (k, e) in events[round * 4..round * 4 + 4].iter().enumerate() {
                    let mut e = e.clone();
                    e.panics = k == 2;
                    tickets.push(source.enqueue(e).await.expect("open"));
                }
                source.flush();
                for t in tickets {
                    let answer = tokio::time::timeout(Duration::from_secs(30), t).await;
                    assert_eq!(
                        answer.expect("answered in time").map(|a| a.verdict),
                        Err(IngestError::Lost)
                    );
                }
            }
            let deadline = std::time::Instant::now() + Duration::from_secs(30);
            while service.stats().workers_replaced < 3 && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let s = service.stats();
            assert_eq!((s.lost, s.workers_replaced, s.workers), (12, 3, 2));
            // Still answering, from several sources at once.
            let mut tickets = Vec::new();
            let sources: Vec<_> = (0..4).map(|_| service.source()).collect();
            for (k, src) in sources.iter().enumerate() {
                for e in &events[12 + k * 97..12 + (k + 1) * 97] {
                    tickets.push(src.enqueue(e.clone()).await.expect("open"));
                }
                src.flush();
            }
            for t in tickets {
                let answer = tokio::time::timeout(Duration::from_secs(60), t).await;
                assert_eq!(
                    answer.expect("answered in time").expect("verdict").verdict,
                    Verdict::Valid
                );
            }
            drop((source, sources));
        });
        let s = rt().block_on(service.shutdown());
        assert_eq!((s.answered, s.lost, s.workers), (4 * 97, 12, 0));
    }
}
