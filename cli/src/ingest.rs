//! Saving verified events into an embedded nostr-lmdb database, and counting what it holds.
//!
//! Saves go through `NostrDatabase::save_event` with up to [`CONCURRENT_SAVES`] calls in flight
//! (`buffer_unordered`): nostr-lmdb's ingester thread drains everything queued into one write
//! transaction, so concurrent calls are committed in a few large transactions instead of one
//! transaction (and one disk sync) per event, which is what makes saving one event at a time slow.
//! Calls are started in input order, so the database applies replacements and deletions in input
//! order.
//!
//! Events waiting for, or in, a `save_event` call hold their size (estimated by
//! [`event_bytes`]) of a [`Budget`], so a dump of large events cannot pile up in the queue: the
//! number of calls in flight is a cap, the bytes are the bound. The binary gives the saver its
//! own half of `--max-in-flight-bytes`: sharing one pool with the check pipeline would let the
//! reader's chunks fill it and leave the saver one event (one write transaction) at a time.
//!
//! The database's own rules decide what is stored (`SaveEventStatus`): already stored, deleted
//! (NIP-09), replaced by a newer replaceable/addressable event, ephemeral, vanished (NIP-62),
//! invalid deletion request. nostr-lmdb stores NIP-40 expired events and then never returns them,
//! so this module does not save events whose `expiration` tag is in the past and counts them as
//! rejected "expired".

use crate::budget::{event_bytes, Account, Budget};
use futures_util::stream::{self, StreamExt};
use nostr::event::Event;
use nostr::filter::Filter;
use nostr::types::Timestamp;
use nostr_database::{NostrDatabase, RejectedReason, SaveEventStatus};
use nostr_lmdb::NostrLmdb;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use tokio::sync::mpsc;

/// `save_event` calls in flight at once.
pub const CONCURRENT_SAVES: usize = 1024;

/// What the database did with the events handed to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbCounts {
    /// Newly stored.
    pub saved: u64,
    /// Already in the database (`RejectedReason::Duplicate`).
    pub already_stored: u64,
    /// Deleted earlier by a NIP-09 deletion request.
    pub deleted: u64,
    /// Older than the stored replaceable or addressable event of the same coordinate.
    pub replaced: u64,
    /// Carry a NIP-40 `expiration` in the past (not saved, see the module docs).
    pub expired: u64,
    /// Ephemeral kinds (20000–29999), never stored.
    pub ephemeral: u64,
    /// The author asked to vanish (NIP-62).
    pub vanished: u64,
    /// Deletion requests for events of another author.
    pub invalid_delete: u64,
    /// Any other rejection reason.
    pub other: u64,
    /// `save_event` failed (a database error, not a rejection).
    pub errors: u64,
    /// The first database error's message.
    pub first_error: Option<String>,
    /// Events the database held when it was opened.
    pub held_before: u64,
    /// Events it holds after the last save (what `count` reports).
    pub held_after: u64,
}

impl DbCounts {
    /// Events the database did not store, for any of its reasons (errors excluded).
    pub fn rejected(&self) -> u64 {
        self.already_stored
            + self.deleted
            + self.replaced
            + self.expired
            + self.ephemeral
            + self.vanished
            + self.invalid_delete
            + self.other
    }

    /// Stored events that later saves removed again: older versions of replaceable and
    /// addressable events replaced by newer ones, and events deleted by NIP-09 requests of the
    /// same input (or stored before it). `held_after = held_before + saved − superseded`.
    pub fn superseded(&self) -> u64 {
        (self.held_before + self.saved).saturating_sub(self.held_after)
    }

    fn add(&mut self, status: Result<SaveEventStatus, nostr_database::error::Error>) {
        match status {
            Ok(SaveEventStatus::Success) => self.saved += 1,
            Ok(SaveEventStatus::Rejected(reason)) => match reason {
                RejectedReason::Duplicate => self.already_stored += 1,
                RejectedReason::Deleted => self.deleted += 1,
                RejectedReason::Replaced => self.replaced += 1,
                RejectedReason::Expired => self.expired += 1,
                RejectedReason::Ephemeral => self.ephemeral += 1,
                RejectedReason::Vanished => self.vanished += 1,
                RejectedReason::InvalidDelete => self.invalid_delete += 1,
                RejectedReason::Other => self.other += 1,
            },
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

/// A database opened on its own thread (with a single-threaded tokio runtime), fed through a
/// bounded channel so the check pipeline never waits for more than one channel's worth.
pub struct Saver {
    tx: mpsc::Sender<(Event, usize)>,
    budget: Arc<Budget>,
    thread: JoinHandle<DbCounts>,
    expired: u64,
    now: Timestamp,
}

impl Saver {
    /// Opens (creating if missing) the nostr-lmdb database in `dir`, on its own thread. Queued
    /// events hold their bytes of `budget` until their save completed.
    ///
    /// # Errors
    /// The thread, the runtime or the database could not be started (message for the user).
    pub fn open(dir: &Path, budget: Arc<Budget>) -> Result<Saver, String> {
        check_db_dir(dir)?;
        Self::open_spawning(dir, budget, |name, f| {
            thread::Builder::new().name(name.into()).spawn(f)
        })
    }

    /// [`Saver::open`] with the thread started by `spawn` (the tests refuse it).
    fn open_spawning(
        dir: &Path,
        budget: Arc<Budget>,
        spawn: impl FnOnce(
            &str,
            Box<dyn FnOnce() -> DbCounts + Send>,
        ) -> io::Result<JoinHandle<DbCounts>>,
    ) -> Result<Saver, String> {
        let (tx, rx) = mpsc::channel::<(Event, usize)>(CONCURRENT_SAVES);
        let (opened_tx, opened_rx) = std_mpsc::channel::<Result<(), String>>();
        let dir: PathBuf = dir.to_path_buf();
        let db_budget = budget.clone();
        let body = Box::new(move || {
            let mut counts = DbCounts::default();
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = opened_tx.send(Err(format!("cannot start the async runtime: {e}")));
                    return counts;
                }
            };
            rt.block_on(async {
                let db = match NostrLmdb::builder(&dir).build().await {
                    Ok(db) => db,
                    Err(e) => {
                        let _ = opened_tx
                            .send(Err(format!("cannot open database {}: {e}", dir.display())));
                        return;
                    }
                };
                counts.held_before = match db.count(Filter::new()).await {
                    Ok(n) => n as u64,
                    Err(e) => {
                        let _ = opened_tx
                            .send(Err(format!("cannot read database {}: {e}", dir.display())));
                        return;
                    }
                };
                let _ = opened_tx.send(Ok(()));
                let events =
                    stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|e| (e, rx)) });
                let (db, budget) = (&db, &db_budget);
                let statuses = events
                    .map(|(event, size)| async move {
                        let status = db.save_event(&event).await;
                        drop(event);
                        budget.release(Account::Saves, size);
                        status
                    })
                    .buffer_unordered(CONCURRENT_SAVES);
                let mut statuses = std::pin::pin!(statuses);
                while let Some(status) = statuses.next().await {
                    counts.add(status);
                }
                match db.count(Filter::new()).await {
                    Ok(n) => counts.held_after = n as u64,
                    Err(e) => counts.add(Err(e)),
                }
            });
            counts
        });
        let thread = spawn("nostr-verify-db", body)
            .map_err(|e| format!("cannot start the database thread: {e}"))?;
        match opened_rx.recv() {
            Ok(Ok(())) => Ok(Saver {
                tx,
                budget,
                thread,
                expired: 0,
                now: Timestamp::now(),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err("the database thread failed".to_string()),
        }
    }

    /// Queues a verified event for saving (blocks while the queue is full or the budget spent).
    /// Events that carry an expired NIP-40 `expiration` tag are counted and dropped.
    ///
    /// # Errors
    /// The database thread has stopped.
    pub fn save(&mut self, event: Event) -> Result<(), String> {
        if event.is_expired_at(self.now) {
            self.expired += 1;
            return Ok(());
        }
        let size = event_bytes(&event);
        self.budget.acquire(Account::Saves, size, 0);
        self.tx.blocking_send((event, size)).map_err(|_| {
            self.budget.release(Account::Saves, size);
            "the database thread stopped".to_string()
        })
    }

    /// Waits for every queued save and returns the counts.
    ///
    /// # Errors
    /// The database thread panicked.
    pub fn finish(self) -> Result<DbCounts, String> {
        drop(self.tx);
        let mut counts = self
            .thread
            .join()
            .map_err(|_| "the database thread failed".to_string())?;
        counts.expired += self.expired;
        Ok(counts)
    }
}

/// `dir` can hold a database: a directory, or a path that does not exist yet. A regular file (or
/// anything else) is refused with a message that says so, before nostr-lmdb's own "File exists".
fn check_db_dir(dir: &Path) -> Result<(), String> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(format!(
            "--db {}: not a directory (a nostr-lmdb database is a directory; give a new or existing directory)",
            dir.display()
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("--db {}: {e}", dir.display())),
    }
}

/// What a database holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbContents {
    /// `count` over an empty filter.
    pub total: u64,
    /// Events per kind, from a paged scan of the whole database.
    pub kinds: BTreeMap<u16, u64>,
}

/// Events fetched per page when counting kinds.
const PAGE: usize = 10_000;

/// Counts the events of an existing database, in total and per kind. Memory stays at one page of
/// events (plus all events sharing one timestamp).
///
/// # Errors
/// `dir` holds no nostr-lmdb database, or a query failed.
pub fn count(dir: &Path) -> Result<DbContents, String> {
    check_db_dir(dir)?;
    if !dir.join("data.mdb").is_file() {
        return Err(format!(
            "no database at {} (data.mdb not found)",
            dir.display()
        ));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async {
        let err = |e: nostr_database::error::Error| format!("database error: {e}");
        let db = NostrLmdb::builder(dir).build().await.map_err(err)?;
        let total = db.count(Filter::new()).await.map_err(err)? as u64;
        let mut kinds: BTreeMap<u16, u64> = BTreeMap::new();
        let mut until = Timestamp::from_secs(u64::MAX);
        loop {
            // Newest first: everything strictly newer than the page's oldest timestamp is complete;
            // the oldest timestamp itself is re-read whole, then the scan continues below it.
            let page = db
                .query(Filter::new().until(until).limit(PAGE))
                .await
                .map_err(err)?;
            let Some(oldest) = page.iter().map(|e| e.created_at).min() else {
                break;
            };
            let last_page = page.len() < PAGE;
            for e in page.iter().filter(|e| last_page || e.created_at > oldest) {
                *kinds.entry(e.kind.as_u16()).or_default() += 1;
            }
            if last_page {
                break;
            }
            let same = db
                .query(Filter::new().since(oldest).until(oldest))
                .await
                .map_err(err)?;
            for e in &same {
                *kinds.entry(e.kind.as_u16()).or_default() += 1;
            }
            match oldest.as_secs().checked_sub(1) {
                Some(t) => until = Timestamp::from_secs(t),
                None => break,
            }
        }
        Ok(DbContents { total, kinds })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_database_thread_is_an_error_not_a_panic() {
        let dir = std::env::temp_dir().join(format!("nv-ingest-refused-{}", std::process::id()));
        let budget = Arc::new(Budget::new(1 << 20));
        let got = Saver::open_spawning(&dir, budget, |_, _| {
            Err(io::Error::other("refused by the test"))
        });
        match got {
            Err(e) => assert_eq!(e, "cannot start the database thread: refused by the test"),
            Ok(_) => panic!("the database cannot run without its thread"),
        }
        assert!(!dir.exists(), "nothing was created");
    }
}
