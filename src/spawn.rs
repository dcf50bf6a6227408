//! Scoped threads that degrade to the calling thread when the OS refuses one.
//!
//! `std::thread::Scope::spawn` panics when a thread cannot be created (a container's pid or
//! memory limit, `RLIMIT_NPROC`). Every helper thread this crate starts is an optimisation, so a
//! refusal must cost speed, never a result: [`try_spawn_scoped`] returns `None` instead, and
//! the caller does that share of the work itself.

use std::thread::{Builder, Scope, ScopedJoinHandle};

/// Starts `f` on a new scoped thread, or returns `None` (and `f` unrun) when the OS refuses.
pub(crate) fn try_spawn_scoped<'scope, 'env, T, F>(
    scope: &'scope Scope<'scope, 'env>,
    f: F,
) -> Option<ScopedJoinHandle<'scope, T>>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    if refused_for_tests() {
        #[cfg(test)]
        REFUSED.with(|n| n.set(n.get() + 1));
        return None;
    }
    Builder::new().spawn_scoped(scope, f).ok()
}

#[cfg(test)]
thread_local! {
    /// Test hook: while set on a thread, every spawn it asks for is refused.
    static REFUSE: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
    /// Test hook: how many spawns were refused on this thread so far.
    static REFUSED: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// How many spawns [`with_spawns_refused`] has refused on this thread so far.
#[cfg(test)]
pub(crate) fn refused_so_far() -> usize {
    REFUSED.with(core::cell::Cell::get)
}

#[cfg(test)]
fn refused_for_tests() -> bool {
    REFUSE.with(core::cell::Cell::get)
}

#[cfg(not(test))]
#[inline(always)]
fn refused_for_tests() -> bool {
    false
}

/// Runs `f` with every spawn requested from this thread refused, as an OS out of threads would.
#[cfg(test)]
pub(crate) fn with_spawns_refused<R>(f: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            REFUSE.with(|r| r.set(false));
        }
    }
    REFUSE.with(|r| r.set(true));
    let _reset = Reset;
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawns_run_and_refusals_return_none() {
        std::thread::scope(|s| {
            let h = try_spawn_scoped(s, || 7).expect("a thread");
            assert_eq!(h.join().ok(), Some(7));
            let before = refused_so_far();
            with_spawns_refused(|| assert!(try_spawn_scoped(s, || 7).is_none()));
            assert_eq!(refused_so_far(), before + 1);
            // The hook is reset afterwards.
            assert!(try_spawn_scoped(s, || 8).is_some());
        });
    }
}
