//! The transport's locking helper (a leaf: the cache and the streams lock with it too).

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks cannot leave the maps inconsistent (every critical
    // section is a single insert/remove), so poisoning is ignored.
    m.lock().unwrap_or_else(|e| e.into_inner())
}
