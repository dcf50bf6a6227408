//! The latency timer: one thread that flushes a source's buffer once its oldest event has
//! waited the latency budget, and at shutdown flushes every buffer and closes the queue.

use super::shared::{lock, Shared};
use super::SourceInner;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

/// A buffer's deadline: the source's generation it was armed for.
struct TimerEntry<E> {
    deadline: Instant,
    generation: u64,
    source: Arc<SourceInner<E>>,
}

/// The armed deadlines, oldest first.
pub(super) struct Timers<E> {
    /// Deadlines are `now + budget` taken under this lock, so the deque is sorted.
    entries: VecDeque<TimerEntry<E>>,
    closed: bool,
}

impl<E> Timers<E> {
    pub(super) fn new() -> Self {
        Timers {
            entries: VecDeque::new(),
            closed: false,
        }
    }
}

impl<E> Shared<E> {
    /// Arms the latency timer for `source`'s buffer of `generation` (called under the source's
    /// lock, when the buffer gets its first event); `false` once the service is closing.
    pub(super) fn arm_timer(&self, source: &Arc<SourceInner<E>>, generation: u64) -> bool {
        let mut t = lock(&self.timers);
        if t.closed {
            return false;
        }
        let was_idle = t.entries.is_empty();
        t.entries.push_back(TimerEntry {
            deadline: Instant::now() + self.config.latency_budget,
            generation,
            source: Arc::clone(source),
        });
        drop(t);
        if was_idle {
            self.timers_cv.notify_one();
        }
        true
    }

    /// Stops the timer: it flushes every armed buffer, then closes the queue.
    pub(super) fn close_timers(&self) {
        lock(&self.timers).closed = true;
        self.timers_cv.notify_all();
    }

    /// The timer thread's body.
    pub(super) fn timer_loop(&self) {
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
}
