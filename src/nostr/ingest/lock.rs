//! The one locking helper of the service's parts.

use std::sync::{Mutex, MutexGuard};

/// Locks, ignoring poisoning: the protected data stays consistent because no code panics
/// while holding these locks (and a verdict must never be lost to a poisoned lock).
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
