//! rust-nostr integration: batch verification of `Event`s with `Event::verify`'s verdicts.
//!
//! One `use` line gives collections of events a [`verify_batch`](VerifyBatchExt::verify_batch):
//!
//! ```
//! # #[cfg(feature = "nostr")] {
//! use nostr::event::{EventBuilder, FinalizeEvent, Kind};
//! use nostr::key::Keys;
//! use nostr_verify::{Verdict, VerifyBatchExt};
//!
//! let keys = Keys::parse("6b911fd37cdf5c81d4c0adb1ab7fa822ed253ab0ad9aa18d77257c88b29b718e").unwrap();
//! let mut events: Vec<_> = (0..3)
//!     .map(|i| EventBuilder::new(Kind::TextNote, format!("note {i}")).finalize(&keys).unwrap())
//!     .collect();
//! events[1].content.push('!'); // edited after signing: the id no longer matches
//! assert_eq!(events.verify_batch(), [Verdict::Valid, Verdict::InvalidId, Verdict::Valid]);
//! assert!(!events.verify_all());
//! # }
//! ```
//!
//! # Semantics
//! Exactly `Event::verify` (nostr 0.45.6 and 0.44.8), per event: the id is recomputed from
//! the NIP-01 serialization and compared with the claimed `id` first; then the signature is
//! checked over the claimed id. An event failing both is [`Verdict::InvalidId`]; a public
//! key that is not a valid x-only key is [`Verdict::InvalidSignature`], as are signatures with
//! `r >= p` or `s >= n`. Verdicts come in the iteration order of the collection.
//!
//! # How
//! Ids are recomputed by our own NIP-01 serializer streaming into SHA-256 ([`compute_id`];
//! on CPUs without SHA instructions a chunk's events are hashed together in vector lanes,
//! [`compute_ids`]), then every signature of an event whose id is right goes through one call of this thread's
//! [`Verifier::verify_batch`](crate::Verifier::verify_batch)
//! (see [`with_thread_verifier`](crate::with_thread_verifier)), so the key cache stays warm
//! across calls. Inputs longer than 4096 events are verified in chunks of 4096.
//!
//! # Versions
//! Feature `nostr` (default): `nostr::event::Event` of nostr 0.45.6. Feature `nostr-0-44`:
//! `nostr044::Event` of nostr 0.44.8 (nostr-sdk 0.44 users). Both go through the same code,
//! written against the sealed [`EventView`] trait.
//!
//! # Errors for `?` users
//! [`Verdict::into_result`] gives nostr 0.45's `Error` with `Event::verify`'s messages
//! ("Invalid event ID", "Invalid signature"); [`Verdict::into_result_v044`] gives nostr 0.44's
//! `event::Error::{InvalidId, InvalidSignature}`. [`VerifyEventExt::verify_cached`] returns
//! the same error type as the event's own `verify`.

use std::collections::{BTreeSet, HashSet};
use std::hash::BuildHasher;

mod batch;
mod id;
#[cfg(feature = "tokio")]
pub mod ingest;
mod verdict;
mod view;

pub use id::{compute_id, compute_ids, id_preimage};
pub use verdict::Verdict;
pub use view::EventView;

/// Batch verification for collections of nostr events: `[Event]` (so `Vec<Event>` and
/// slices), `[&Event]`, `BTreeSet<Event>` and `HashSet<Event>`, for nostr 0.45 (feature
/// `nostr`) and nostr 0.44 (feature `nostr-0-44`); and, with feature `nostr-0-44`,
/// nostr-database 0.44's `Events` (what nostr-sdk 0.44's `fetch_events` and databases return;
/// nostr 0.45 has no `Events` type).
///
/// Verdicts come in the collection's iteration order: for `Events` that is `Events::iter()`'s
/// order (newest first), not the order the events arrived in.
///
/// ```
/// use nostr::event::{Event, EventBuilder, FinalizeEvent, Kind};
/// use nostr::key::Keys;
/// use nostr_verify::{Verdict, VerifyBatchExt};
///
/// let keys = Keys::generate();
/// let mut events: Vec<Event> = (0..8)
///     .map(|i| EventBuilder::new(Kind::TextNote, format!("note {i}")).finalize(&keys).unwrap())
///     .collect();
/// events[3].content.push('!'); // edited after signing: the id no longer matches
/// events[5].sig = events[4].sig; // another event's signature
///
/// let verdicts = events.verify_batch(); // one per event, in order
/// assert_eq!(verdicts[3], Verdict::InvalidId);
/// assert_eq!(verdicts[5], Verdict::InvalidSignature);
/// assert_eq!(verdicts.iter().filter(|v| v.is_valid()).count(), 6);
/// assert!(!events.verify_all());
/// assert!(events[..3].verify_all());
/// ```
pub trait VerifyBatchExt {
    /// One verdict per event, in iteration order, exactly as `Event::verify` decides.
    fn verify_batch(&self) -> Vec<Verdict>;

    /// `true` when every event is valid.
    ///
    /// Stops at the first wrong id; the signatures are then checked with the batch equation
    /// alone ([`Verifier::verify_all`](crate::Verifier::verify_all)), which is cheaper than
    /// finding which one is bad.
    fn verify_all(&self) -> bool;
}

impl<E: EventView> VerifyBatchExt for [E] {
    fn verify_batch(&self) -> Vec<Verdict> {
        let mut out = Vec::with_capacity(self.len());
        batch::verify_into(self, batch::Mode::Batch, &mut out);
        out
    }

    fn verify_all(&self) -> bool {
        batch::all_valid(self)
    }
}

impl<E: EventView> VerifyBatchExt for BTreeSet<E> {
    fn verify_batch(&self) -> Vec<Verdict> {
        self.iter().collect::<Vec<&E>>().verify_batch()
    }

    fn verify_all(&self) -> bool {
        self.iter().collect::<Vec<&E>>().verify_all()
    }
}

impl<E: EventView, S: BuildHasher> VerifyBatchExt for HashSet<E, S> {
    fn verify_batch(&self) -> Vec<Verdict> {
        self.iter().collect::<Vec<&E>>().verify_batch()
    }

    fn verify_all(&self) -> bool {
        self.iter().collect::<Vec<&E>>().verify_all()
    }
}

/// `Events` of nostr-database 0.44: verdicts in `Events::iter()` order (newest first).
#[cfg(feature = "nostr-0-44")]
impl VerifyBatchExt for nostr_database044::Events {
    fn verify_batch(&self) -> Vec<Verdict> {
        self.iter()
            .collect::<Vec<&nostr044::Event>>()
            .verify_batch()
    }

    fn verify_all(&self) -> bool {
        self.iter().collect::<Vec<&nostr044::Event>>().verify_all()
    }
}

/// One verdict per event of any iterator of event references, in order (for collections
/// without a [`VerifyBatchExt`] impl).
pub fn verify_iter<'a, E: EventView + 'a>(events: impl IntoIterator<Item = &'a E>) -> Vec<Verdict> {
    events.into_iter().collect::<Vec<&E>>().verify_batch()
}

/// Single-event verification through the thread-local [`Verifier`](crate::Verifier), whose
/// key cache makes repeated authors cheaper than `Event::verify`.
pub trait VerifyEventExt {
    /// The error type of this nostr version's `Event::verify`.
    type Error;

    /// Same result as `Event::verify`, computed with our id hashing and the thread's
    /// verifier.
    ///
    /// # Errors
    /// The error `Event::verify` gives: invalid id first, then invalid signature
    /// (see [`Verdict::into_result`]).
    fn verify_cached(&self) -> Result<(), Self::Error>;

    /// The [`Verdict`] that [`verify_cached`](Self::verify_cached) reports.
    fn verdict_cached(&self) -> Verdict;
}

#[cfg(feature = "nostr")]
impl VerifyEventExt for ::nostr::event::Event {
    type Error = ::nostr::error::Error;

    fn verify_cached(&self) -> Result<(), Self::Error> {
        self.verdict_cached().into_result()
    }

    fn verdict_cached(&self) -> Verdict {
        batch::verdict_one(self)
    }
}

#[cfg(feature = "nostr-0-44")]
impl VerifyEventExt for nostr044::Event {
    type Error = nostr044::event::Error;

    fn verify_cached(&self) -> Result<(), Self::Error> {
        self.verdict_cached().into_result_v044()
    }

    fn verdict_cached(&self) -> Verdict {
        batch::verdict_one(self)
    }
}

/// Splitting an owned `Vec` of events (or, with feature `nostr-0-44`, nostr-database 0.44's
/// `Events`) into the valid ones and the rejected ones, without cloning any event.
pub trait PartitionVerifiedExt {
    /// The event type.
    type Event;

    /// `(valid, rejected)`: each side keeps the input order; each rejected event comes with
    /// its verdict.
    ///
    /// # Examples
    /// ```
    /// # #[cfg(feature = "nostr")] {
    /// use nostr::event::{EventBuilder, FinalizeEvent, Kind};
    /// use nostr::key::Keys;
    /// use nostr_verify::{PartitionVerifiedExt, Verdict};
    ///
    /// let keys = Keys::parse("6b911fd37cdf5c81d4c0adb1ab7fa822ed253ab0ad9aa18d77257c88b29b718e").unwrap();
    /// let good = EventBuilder::new(Kind::TextNote, "a").finalize(&keys).unwrap();
    /// let mut bad = EventBuilder::new(Kind::TextNote, "b").finalize(&keys).unwrap();
    /// bad.content = "edited".into();
    /// let (valid, rejected) = vec![good.clone(), bad].partition_verified();
    /// assert_eq!(valid, [good]);
    /// assert_eq!(rejected[0].1, Verdict::InvalidId);
    /// # }
    /// ```
    fn partition_verified(self) -> Partitioned<Self::Event>;
}

/// `(valid, rejected with their verdicts)`, as returned by
/// [`PartitionVerifiedExt::partition_verified`].
pub type Partitioned<E> = (Vec<E>, Vec<(E, Verdict)>);

impl<E: EventView> PartitionVerifiedExt for Vec<E> {
    type Event = E;

    fn partition_verified(self) -> Partitioned<E> {
        let verdicts = self.verify_batch();
        let mut valid = Vec::with_capacity(self.len());
        let mut rejected = Vec::new();
        for (e, v) in self.into_iter().zip(verdicts) {
            if v.is_valid() {
                valid.push(e);
            } else {
                rejected.push((e, v));
            }
        }
        (valid, rejected)
    }
}

/// `Events` of nostr-database 0.44: both sides in `Events::iter()` order (newest first), as
/// `Vec`s.
#[cfg(feature = "nostr-0-44")]
impl PartitionVerifiedExt for nostr_database044::Events {
    type Event = nostr044::Event;

    fn partition_verified(self) -> Partitioned<nostr044::Event> {
        self.to_vec().partition_verified()
    }
}
