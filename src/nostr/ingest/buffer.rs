//! A source's buffer: the events waiting to become a batch, and the step that turns them into
//! one (under the source's lock).

use super::queue::{Job, JobQueue};
use super::reply::Reply;
use super::reputation::Peer;
use std::sync::{Arc, Mutex};
use tokio::sync::OwnedSemaphorePermit;

/// A source's buffer and what travels with it into the batch.
pub(super) struct SourceState<E> {
    pub(super) buf: Vec<E>,
    /// The answers of the events in `buf` (present while `buf` is not empty).
    pub(super) reply: Option<Reply<E>>,
    /// The back-pressure permits of the events in `buf` (service, peer), each merged into one.
    pub(super) permits: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>,
    /// Bumped at every flush; a timer entry only flushes the generation it was armed for.
    pub(super) generation: u64,
}

/// What a [`Source`](super::Source) and its timer entries share.
pub(super) struct SourceInner<E> {
    pub(super) peer: Arc<Peer>,
    pub(super) state: Mutex<SourceState<E>>,
}

impl<E> SourceInner<E> {
    /// A source of `peer` with an empty buffer.
    pub(super) fn new(peer: Arc<Peer>, max_batch: usize) -> Self {
        SourceInner {
            peer,
            state: Mutex::new(SourceState {
                buf: Vec::with_capacity(max_batch),
                reply: None,
                permits: None,
                generation: 0,
            }),
        }
    }

    /// Turns the buffer `st` (this source's, locked) into a job on `queue`. The push to the
    /// queue happens under the source lock: see
    /// [`IngestService::shutdown`](super::IngestService::shutdown) for why that matters.
    pub(super) fn flush_locked(
        &self,
        st: &mut SourceState<E>,
        queue: &JobQueue<E>,
        max_batch: usize,
    ) {
        if st.buf.is_empty() {
            return;
        }
        st.generation += 1;
        let events = std::mem::replace(&mut st.buf, Vec::with_capacity(max_batch));
        let job = Job {
            peer: Arc::clone(&self.peer),
            events,
            reply: st.reply.take().unwrap_or_else(Reply::new),
            permits: st.permits.take(),
            verdicts: Vec::new(),
        };
        queue.push(job);
    }
}
