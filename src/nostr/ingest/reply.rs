//! A batch's answers, and the [`Ticket`]s that wait for them: stored together by the worker,
//! then every waiting task woken once.

use super::checked::{Checked, IngestError};
use super::lock::lock;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use std::sync::{Arc, Mutex};

/// The answers of one batch, shared by the batch's [`Ticket`]s.
///
/// One per batch rather than a channel per event: the worker stores every answer, then wakes
/// the waiting tasks once. With a channel per event each send wakes its receiver at once, and
/// a connection task awaiting its tickets in turn wakes, takes one answer and waits again, once
/// per event instead of once per batch; where it runs on a worker's core it preempts that
/// worker each time.
///
/// Why not `tokio::sync::oneshot`: one per event is exactly that channel per event, and one per
/// batch cannot serve tickets of one batch awaited by several tasks. Measured with a oneshot
/// per event against this type, 16 interleaved runs each of
/// `cargo run --profile bench -p nostr-verify-bench --example events` (and `--example ingest_fairness`): about 19 times
/// the context switches (49k against 2.6k involuntary per run), 5–7% more worker CPU per event
/// in three of the four settings, a fifth less single-worker throughput, and a slower honest
/// source under a flood. The figures are in `docs/experiments.md` ("One channel per event for
/// ingest answers").
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
pub(super) struct Reply<E> {
    answers: Arc<Answers<E>>,
}

impl<E> Reply<E> {
    pub(super) fn new() -> Self {
        Reply {
            answers: Arc::new(Answers::new()),
        }
    }

    /// The ticket of the batch's event `index`.
    pub(super) fn ticket(&self, index: usize) -> Ticket<E> {
        Ticket {
            answers: Arc::clone(&self.answers),
            index,
        }
    }

    /// Stores the answers (ticket `i` gets `results[i]`), then wakes the waiting tasks, after
    /// the lock is released.
    pub(super) fn finish(self, results: Vec<Option<Checked<E>>>) {
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
    use super::super::tests::rt;
    use super::*;
    use crate::nostr::Verdict;
    use std::time::Duration;

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
