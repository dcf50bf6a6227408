//! A byte budget for everything in flight: chunks of input on their way through the pipeline, and
//! events on their way into the database.
//!
//! Each holder draws from one [`Account`]. [`Budget::acquire`] blocks while the budget is spent,
//! unless nobody else holds bytes of the caller's account: a holder with nothing in flight
//! besides what it holds itself always gets to go ahead, so an item larger than the whole budget, or an account starved by another one, still
//! makes progress and the pipeline cannot deadlock. [`Budget::charge`] never blocks: the workers
//! use it for what they allocate while parsing a chunk that was already admitted (a worker that
//! waited for the budget could wait for chunks that are queued behind its own). Everything charged
//! or acquired is held until [`Budget::release`].
//!
//! So the bytes in use stay at most the budget, plus one admitted item per account, plus what the
//! workers charge for the chunks they hold.

use nostr::event::Event;
use std::sync::{Condvar, Mutex, MutexGuard};

/// Default budget for the bytes in flight: 64 MiB.
pub const DEFAULT_MAX_IN_FLIGHT_BYTES: usize = 64 << 20;

/// Who holds bytes of a [`Budget`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Account {
    /// Chunks of input lines, from the reader until their results were handed on.
    Chunks,
    /// Events queued for, or being written to, the database.
    Saves,
}

impl Account {
    fn index(self) -> usize {
        match self {
            Account::Chunks => 0,
            Account::Saves => 1,
        }
    }
}

#[derive(Debug, Default)]
struct State {
    used: usize,
    held: [usize; 2],
}

/// A byte budget shared by threads (see the module docs).
#[derive(Debug)]
pub struct Budget {
    total: usize,
    state: Mutex<State>,
    freed: Condvar,
}

impl Budget {
    /// A budget of `total` bytes.
    pub fn new(total: usize) -> Self {
        Budget {
            total,
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
        }
    }

    /// The budget in bytes.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Bytes in use now (all accounts).
    pub fn used(&self) -> usize {
        self.lock().used
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is two counters updated in one step; a panic elsewhere cannot leave it torn.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes `n` bytes for `account`, waiting while they do not fit and the account holds more
    /// than `own`, the bytes the caller itself holds (and keeps while it waits): a caller waits
    /// only for bytes that others will give back.
    pub fn acquire(&self, account: Account, n: usize, own: usize) {
        let mut s = self.lock();
        while s.held[account.index()] > own && s.used.saturating_add(n) > self.total {
            s = self.freed.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.used = s.used.saturating_add(n);
        s.held[account.index()] = s.held[account.index()].saturating_add(n);
    }

    /// Takes `n` bytes for `account` without waiting, even past the budget.
    pub fn charge(&self, account: Account, n: usize) {
        let mut s = self.lock();
        s.used = s.used.saturating_add(n);
        s.held[account.index()] = s.held[account.index()].saturating_add(n);
    }

    /// Gives back `n` bytes that `account` acquired or was charged.
    pub fn release(&self, account: Account, n: usize) {
        if n == 0 {
            return;
        }
        let mut s = self.lock();
        s.used = s.used.saturating_sub(n);
        s.held[account.index()] = s.held[account.index()].saturating_sub(n);
        drop(s);
        self.freed.notify_all();
    }
}

/// An estimate of the heap bytes a decoded event holds: the struct, its content, and every tag's
/// strings with their headers. Used to account for parsed events in a [`Budget`].
pub fn event_bytes(event: &Event) -> usize {
    let string = core::mem::size_of::<String>();
    // A tag is a `Vec<String>` inside the tag list's own vector.
    let tag = core::mem::size_of::<Vec<String>>();
    let tags: usize = event
        .tags
        .iter()
        .map(|t| tag + t.as_slice().iter().map(|s| string + s.len()).sum::<usize>())
        .sum();
    core::mem::size_of::<Event>() + event.content.len() + tags
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn acquire_waits_for_a_release_unless_the_account_is_empty() {
        let budget = Arc::new(Budget::new(100));
        // An account holding nothing goes ahead even past the budget.
        budget.acquire(Account::Chunks, 150, 0);
        budget.acquire(Account::Saves, 10, 0);
        // ... and so does one that holds all of its account's bytes itself.
        budget.acquire(Account::Saves, 10, 10);
        assert_eq!(budget.used(), 170);
        let done = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (budget, done) = (budget.clone(), done.clone());
            std::thread::spawn(move || {
                budget.acquire(Account::Chunks, 30, 0);
                done.store(true, Ordering::SeqCst);
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(!done.load(Ordering::SeqCst), "170 + 30 > 100: must wait");
        budget.release(Account::Chunks, 100);
        waiter.join().expect("waiter");
        assert!(done.load(Ordering::SeqCst));
        assert_eq!(budget.used(), 100);
        budget.charge(Account::Chunks, 1000);
        assert_eq!(budget.used(), 1100, "charging never waits");
    }
}
