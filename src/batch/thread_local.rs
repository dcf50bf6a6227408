//! One [`Verifier`] per thread, reused by every integration.

use super::Verifier;
use std::cell::RefCell;

thread_local! {
    static VERIFIER: RefCell<Verifier> = RefCell::new(Verifier::new());
}

/// Runs `f` with this thread's [`Verifier`] (created on first use, then reused, so its key
/// cache stays warm across calls).
///
/// A nested call from inside `f` gets a fresh temporary verifier instead of panicking, as
/// does a call during thread teardown (after the thread-local was destroyed).
///
/// This is the one thread-local verifier of the crate: `VerifyBatchExt`, `verify_cached`,
/// the ingest service's workers and the other integrations all go through it.
///
/// # Panics
/// Never: the `expect`s below guard a closure that is called at most once by construction.
///
/// # Examples
/// ```
/// let stats = nostr_verify::with_thread_verifier(|v| v.stats());
/// assert_eq!(stats.batches, 0);
/// ```
pub fn with_thread_verifier<R>(f: impl FnOnce(&mut Verifier) -> R) -> R {
    let mut f = Some(f);
    let r = VERIFIER.try_with(|cell| match cell.try_borrow_mut() {
        Ok(mut v) => Some((f.take().expect("called once"))(&mut v)),
        Err(_) => None,
    });
    match r {
        Ok(Some(r)) => r,
        _ => (f.take().expect("called once"))(&mut Verifier::new()),
    }
}
