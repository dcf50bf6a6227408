//! The workers: each chunk goes to the worker that became idle last, which decodes its lines,
//! verifies its events in one batch and charges the budget for what they take. A panic costs
//! only the line it happened on.

use super::chunk::{Chunk, Done, Outcome, RawLine};
use super::options::Hooks;
use crate::budget::{event_bytes, Account, Budget};
use crate::line::{parse_line, Found, Problem};
use nostr::event::Event;
use nostr_verify::{Verdict, VerifyBatchExt};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Hands each chunk to the worker that became idle last. When long lines keep only a few chunks
/// in flight, the same few workers then do all the work, and only their allocator arenas grow
/// (glibc keeps freed memory per thread); with a first-come queue every worker would take its
/// turn and keep a long line's worth of memory.
pub(super) struct Dispatch {
    /// Per worker id: its chunk channel.
    pub(super) senders: Vec<mpsc::Sender<Chunk>>,
    pub(super) idle: Arc<IdleWorkers>,
}

impl Dispatch {
    /// Waits for an idle worker and gives it the chunk; false when no worker is left.
    pub(super) fn send(&self, chunk: Chunk) -> bool {
        self.idle
            .pop()
            .and_then(|id| self.senders.get(id))
            .is_some_and(|tx| tx.send(chunk).is_ok())
    }
}

/// The workers waiting for a chunk, most recently idle last, and how many are alive.
#[derive(Default)]
pub(super) struct IdleWorkers {
    state: Mutex<IdleState>,
    changed: Condvar,
}

#[derive(Default)]
struct IdleState {
    /// Idle workers, the most recently idle last.
    idle: Vec<usize>,
    /// Workers started and not yet returned.
    alive: usize,
}

impl IdleWorkers {
    fn lock(&self) -> MutexGuard<'_, IdleState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A worker was started.
    pub(super) fn started(&self) {
        self.lock().alive += 1;
    }

    fn push(&self, id: usize) {
        self.lock().idle.push(id);
        self.changed.notify_all();
    }

    fn gone(&self) {
        let mut s = self.lock();
        s.alive = s.alive.saturating_sub(1);
        drop(s);
        self.changed.notify_all();
    }

    /// The most recently idle worker, waiting for one; `None` when every worker has returned.
    fn pop(&self) -> Option<usize> {
        let mut s = self.lock();
        loop {
            if let Some(id) = s.idle.pop() {
                return Some(id);
            }
            if s.alive == 0 {
                return None;
            }
            s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Tells the dispatcher that a worker returned, however it returned.
struct Gone<'a>(&'a IdleWorkers);

impl Drop for Gone<'_> {
    fn drop(&mut self) {
        self.0.gone();
    }
}

/// A worker thread: parses and verifies the chunks handed to it until the reader is done.
pub(super) fn work(
    id: usize,
    idle: &IdleWorkers,
    chunks: &Receiver<Chunk>,
    done: &mpsc::Sender<Done>,
    budget: &Budget,
    hooks: &Hooks,
) {
    let _gone = Gone(idle);
    loop {
        idle.push(id);
        let Ok(mut chunk) = chunks.recv() else { return };
        let outcomes = process(&mut chunk, budget, hooks);
        if let Err(mpsc::SendError(unsent)) = done.send(Done { chunk, outcomes }) {
            budget.release(Account::Chunks, unsent.chunk.held);
            return;
        }
    }
}

/// Parses every line of a chunk, then verifies all its events in one batch, and charges the
/// budget for the decoded events. A panic while handling one line is caught and reported as
/// [`Problem::Internal`] for that line.
pub(super) fn process(chunk: &mut Chunk, budget: &Budget, hooks: &Hooks) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(chunk.lines.len());
    let mut events = Vec::with_capacity(chunk.lines.len());
    let mut slots = Vec::with_capacity(chunk.lines.len());
    for raw in &chunk.lines {
        let outcome = match *raw {
            RawLine::Blank { .. } => Outcome::Blank,
            RawLine::TooLong { len, .. } => Outcome::Problem(Problem::TooLong {
                cap: chunk.cap,
                len,
            }),
            RawLine::Text { no, range } => {
                match parse_guarded(&chunk.data[range.0..range.1], no, hooks) {
                    Ok(None) => Outcome::Blank,
                    Ok(Some(found)) => {
                        slots.push((outcomes.len(), found.span, no));
                        events.push(found.event);
                        Outcome::Blank // replaced below
                    }
                    Err(p) => Outcome::Problem(p),
                }
            }
        };
        outcomes.push(outcome);
    }
    let nos: Vec<u64> = slots.iter().map(|s| s.2).collect();
    let verdicts = verify_guarded(&events, &nos, hooks);
    let mut charge = outcomes.capacity() * core::mem::size_of::<Outcome>();
    for (((slot, span, _), event), verdict) in slots.into_iter().zip(events).zip(verdicts) {
        charge += event_bytes(&event);
        outcomes[slot] = match verdict {
            Some(verdict) => Outcome::Event {
                event,
                span,
                verdict,
            },
            None => Outcome::Problem(Problem::Internal),
        };
    }
    // Only what exceeds the allowance the reader took for this chunk.
    let charge = charge.saturating_sub(chunk.allowance());
    budget.charge(Account::Chunks, charge);
    chunk.held += charge;
    outcomes
}

/// [`parse_line`], with a panic turned into [`Problem::Internal`].
fn parse_guarded(bytes: &[u8], _no: u64, _hooks: &Hooks) -> Result<Option<Found>, Problem> {
    catch_unwind(AssertUnwindSafe(|| {
        #[cfg(test)]
        if _hooks.panic_parsing_line == Some(_no) {
            panic!("injected panic while parsing line {_no}");
        }
        parse_line(bytes)
    }))
    .unwrap_or(Err(Problem::Internal))
}

/// One verdict per event (`None`: verifying it panicked). The batch is verified at once; if that
/// panics or breaks the one-verdict-per-event contract, each event is verified on its own, so a
/// bad event costs only its own line.
fn verify_guarded(events: &[Event], nos: &[u64], hooks: &Hooks) -> Vec<Option<Verdict>> {
    let batch = |events: &[Event], nos: &[u64]| {
        catch_unwind(AssertUnwindSafe(|| {
            #[cfg(test)]
            if let Some(no) = hooks.panic_verifying_line.filter(|n| nos.contains(n)) {
                panic!("injected panic while verifying line {no}");
            }
            let _ = (nos, hooks);
            events.verify_batch()
        }))
        .ok()
        .filter(|v| v.len() == events.len())
    };
    if let Some(verdicts) = batch(events, nos) {
        return verdicts.into_iter().map(Some).collect();
    }
    events
        .iter()
        .zip(nos)
        .map(|(event, no)| {
            batch(core::slice::from_ref(event), core::slice::from_ref(no))
                .and_then(|v| v.into_iter().next())
        })
        .collect()
}
