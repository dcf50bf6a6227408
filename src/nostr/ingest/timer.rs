//! The latency timer: one thread that flushes a source's buffer once its oldest event has
//! waited the latency budget, and at shutdown flushes every buffer and closes the queue.

use super::buffer::SourceInner;
use super::lock::lock;
use super::queue::JobQueue;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A buffer's deadline: the source's generation it was armed for.
struct TimerEntry<E> {
    deadline: Instant,
    generation: u64,
    source: Arc<SourceInner<E>>,
}

/// The armed deadlines, oldest first.
struct Deadlines<E> {
    /// Deadlines are `now + budget` taken under this lock, so the deque is sorted.
    entries: VecDeque<TimerEntry<E>>,
    closed: bool,
}

/// The timer as the service shares it: the deadlines behind their lock, the condition
/// variable its thread waits on, and the latency budget.
pub(super) struct Timers<E> {
    deadlines: Mutex<Deadlines<E>>,
    cv: Condvar,
    budget: Duration,
}

impl<E> Timers<E> {
    pub(super) fn new(budget: Duration) -> Self {
        Timers {
            deadlines: Mutex::new(Deadlines {
                entries: VecDeque::new(),
                closed: false,
            }),
            cv: Condvar::new(),
            budget,
        }
    }

    /// Arms the latency timer for `source`'s buffer of `generation` (called under the source's
    /// lock, when the buffer gets its first event); `false` once the service is closing.
    pub(super) fn arm(&self, source: &Arc<SourceInner<E>>, generation: u64) -> bool {
        let mut t = lock(&self.deadlines);
        if t.closed {
            return false;
        }
        let was_idle = t.entries.is_empty();
        t.entries.push_back(TimerEntry {
            deadline: Instant::now() + self.budget,
            generation,
            source: Arc::clone(source),
        });
        drop(t);
        if was_idle {
            self.cv.notify_one();
        }
        true
    }

    /// Stops the timer: it flushes every armed buffer, then closes the queue.
    pub(super) fn close(&self) {
        lock(&self.deadlines).closed = true;
        self.cv.notify_all();
    }

    /// The timer thread's body: buffers are flushed into `queue` (new buffers with room for
    /// `max_batch` events), which is closed at the end.
    pub(super) fn run(&self, queue: &JobQueue<E>, max_batch: usize) {
        let mut t = lock(&self.deadlines);
        loop {
            if t.closed {
                // Shutdown: flush every armed buffer now, then let the workers finish.
                let entries = std::mem::take(&mut t.entries);
                drop(t);
                for e in entries {
                    fire(e, queue, max_batch);
                }
                queue.close();
                return;
            }
            match t.entries.front() {
                None => t = self.cv.wait(t).unwrap_or_else(|e| e.into_inner()),
                Some(front) => {
                    let now = Instant::now();
                    if front.deadline <= now {
                        let e = t.entries.pop_front().expect("front exists");
                        drop(t);
                        fire(e, queue, max_batch);
                        t = lock(&self.deadlines);
                    } else {
                        let wait = front.deadline - now;
                        t = self
                            .cv
                            .wait_timeout(t, wait)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                    }
                }
            }
        }
    }
}

/// Flushes `e`'s buffer if it is still the generation the entry was armed for.
fn fire<E>(e: TimerEntry<E>, queue: &JobQueue<E>, max_batch: usize) {
    let mut st = lock(&e.source.state);
    if st.generation == e.generation {
        e.source.flush_locked(&mut st, queue, max_batch);
    }
}
