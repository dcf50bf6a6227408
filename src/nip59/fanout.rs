//! Spreading one stage of the pipeline over threads, without repeating work.
//!
//! A stage is a list of independent items (wraps to decrypt, seals to open). [`Fan::map`]
//! cuts it into chunks and lets the calling thread and its helpers claim them one at a
//! time through one atomic index: every chunk is done exactly once, by whichever thread
//! claims it, so a thread that the OS deschedules (a shared machine) holds back only the
//! chunk it is on, and the others take the rest. Nothing spins: a thread that finds no
//! chunk left returns, and the caller waits for its helpers with `join` (a blocking wait).
//!
//! A stage is split only when it holds enough work to pay for the threads it starts: each
//! thread must get at least [`MIN_WORK_PER_THREAD_NS`] of (one-thread) work, by the estimate
//! the stage gives. Smaller stages, and so small inputs, run on the calling thread.

use crate::spawn::try_spawn_scoped;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Work (one-thread CPU time, ns) a thread must get before a stage is split for it.
///
/// Starting and joining a scoped thread costs about 15 µs of CPU and 30–60 µs of wall
/// time on the 2-core reference machine (`cargo run --profile bench -p nostr-verify-bench --example gift_wraps`,
/// "thread start" row); with 400 µs of work per thread the threads cost at most about 4 %
/// more CPU than one thread, and still finish sooner.
pub(crate) const MIN_WORK_PER_THREAD_NS: u64 = 400_000;

/// Chunks per thread: enough for the threads to even out when one is slowed down, few
/// enough that claiming and collecting them costs nothing measurable.
const CHUNKS_PER_THREAD: usize = 8;

/// How a call spreads its stages: up to `threads` threads (the caller included), each
/// stage split only when it is worth it, unless `always_split`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fan {
    pub(crate) threads: usize,
    /// Split every stage of two or more items, however small (tests, measurements).
    pub(crate) always_split: bool,
}

impl Fan {
    /// One thread: everything on the caller.
    #[cfg(test)]
    pub(crate) const ONE: Fan = Fan {
        threads: 1,
        always_split: false,
    };

    /// How many threads (the caller included) a stage of `items` items and `work_ns` of
    /// one-thread work in all should use.
    pub(crate) fn threads_for(&self, items: usize, work_ns: u64) -> usize {
        let cap = self.threads.min(items).max(1);
        if self.always_split {
            return cap;
        }
        let worth: u64 = work_ns / MIN_WORK_PER_THREAD_NS;
        cap.min(usize::try_from(worth).unwrap_or(usize::MAX)).max(1)
    }

    /// Whether a stage of `items` items and `work_ns` of work is worth more than one thread.
    pub(crate) fn splits(&self, items: usize, work_ns: u64) -> bool {
        self.threads_for(items, work_ns) > 1
    }

    /// `f` over `items`, results in order; `work_ns` estimates the one-thread time of all of
    /// them.
    pub(crate) fn map<T, R, F>(&self, items: &[T], work_ns: u64, f: F) -> Vec<R>
    where
        T: Sync,
        R: Send,
        F: Fn(&T) -> R + Sync,
    {
        let threads: usize = self.threads_for(items.len(), work_ns);
        if threads <= 1 {
            return items.iter().map(f).collect();
        }
        let chunks: usize = (threads * CHUNKS_PER_THREAD).min(items.len());
        let size: usize = items.len().div_ceil(chunks);
        let pieces: Vec<&[T]> = items.chunks(size).collect();
        let next = AtomicUsize::new(0);
        // Claims chunks until none is left; returns the ones this thread did, with their index.
        let claim = || {
            let mut done: Vec<(usize, Vec<R>)> = Vec::new();
            loop {
                let c: usize = next.fetch_add(1, Ordering::Relaxed);
                let Some(piece) = pieces.get(c) else {
                    return done;
                };
                done.push((c, piece.iter().map(&f).collect()));
            }
        };
        let mut parts: Vec<Option<Vec<R>>> = (0..pieces.len()).map(|_| None).collect();
        std::thread::scope(|s| {
            // A helper the OS refuses is simply not there: the others claim its share.
            let helpers: Vec<_> = (1..threads)
                .filter_map(|_| try_spawn_scoped(s, claim))
                .collect();
            for (c, part) in claim() {
                parts[c] = Some(part);
            }
            for h in helpers {
                match h.join() {
                    Ok(done) => {
                        for (c, part) in done {
                            parts[c] = Some(part);
                        }
                    }
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        });
        let mut out: Vec<R> = Vec::with_capacity(items.len());
        for (part, piece) in parts.into_iter().zip(&pieces) {
            // Every chunk was claimed by a thread that returned; were one missing (a bug),
            // it is done here rather than lost.
            match part {
                Some(part) => out.extend(part),
                None => out.extend(piece.iter().map(&f)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::atomic::AtomicU32;
    use std::sync::Mutex;

    fn split(threads: usize) -> Fan {
        Fan {
            threads,
            always_split: true,
        }
    }

    #[test]
    fn keeps_order_and_does_each_item_once() {
        let items: Vec<u32> = (0..103).collect();
        for fan in [Fan::ONE, split(2), split(3), split(5), split(200)] {
            let calls: Vec<AtomicU32> = (0..items.len()).map(|_| AtomicU32::new(0)).collect();
            let got: Vec<u32> = fan.map(&items, 1, |&x| {
                calls[x as usize].fetch_add(1, Ordering::Relaxed);
                x * 3
            });
            let want: Vec<u32> = items.iter().map(|x| x * 3).collect();
            assert_eq!(got, want, "{fan:?}");
            assert!(
                calls.iter().all(|c| c.load(Ordering::Relaxed) == 1),
                "{fan:?}: an item was done twice or not at all"
            );
        }
        let empty: Vec<u32> = split(4).map(&[], 1, |x: &u32| *x);
        assert!(empty.is_empty());
        assert_eq!(split(4).map(&[9u32], 1, |x| x + 1), [10]);
    }

    #[test]
    fn forced_split_uses_the_helpers() {
        // Slow items, so that the helper starts before the caller has claimed everything.
        let items: Vec<u32> = (0..64).collect();
        let seen: Mutex<HashSet<std::thread::ThreadId>> = Mutex::new(HashSet::new());
        let got: Vec<u32> = split(2).map(&items, 1, |&x| {
            std::thread::sleep(std::time::Duration::from_millis(2));
            seen.lock()
                .map(|mut s| s.insert(std::thread::current().id()))
                .ok();
            x
        });
        assert_eq!(got, items);
        assert_eq!(
            seen.lock().map(|s| s.len()).ok(),
            Some(2),
            "both threads worked"
        );
    }

    #[test]
    fn small_stages_stay_on_the_caller() {
        let fan = Fan {
            threads: 4,
            always_split: false,
        };
        // Below two threads' worth of work: the caller alone.
        let unit = MIN_WORK_PER_THREAD_NS;
        assert_eq!(fan.threads_for(1000, 2 * unit - 1), 1);
        assert_eq!(fan.threads_for(1000, 2 * unit), 2);
        assert_eq!(fan.threads_for(3, 100 * unit), 3);
        assert_eq!(fan.threads_for(100, 3 * unit + 1), 3);
        assert_eq!(fan.threads_for(100, u64::MAX), 4);
        assert_eq!(fan.threads_for(0, 100 * unit), 1);
        let here = std::thread::current().id();
        let items: Vec<u32> = (0..50).collect();
        let got = fan.map(&items, unit, |&x| {
            assert_eq!(std::thread::current().id(), here);
            x
        });
        assert_eq!(got, items);
        // Forced: split whenever there are two items.
        assert_eq!(split(4).threads_for(2, 0), 2);
        assert_eq!(split(4).threads_for(1, 0), 1);
    }

    #[test]
    fn without_threads_everything_runs_here() {
        let items: Vec<u32> = (0..103).collect();
        let want: Vec<u32> = items.iter().map(|x| x + 1).collect();
        let here = std::thread::current().id();
        let before = crate::spawn::refused_so_far();
        let got = crate::spawn::with_spawns_refused(|| {
            split(4).map(&items, 1, |x| {
                assert_eq!(std::thread::current().id(), here, "no thread was refused");
                x + 1
            })
        });
        assert_eq!(got, want);
        assert_eq!(crate::spawn::refused_so_far(), before + 3);
    }
}
