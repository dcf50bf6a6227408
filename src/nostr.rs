//! rust-nostr integration: batch verification on collections of events.
//!
//! INTERIM: verdicts currently come from a loop of `Event::verify`; issue 4 replaces the body
//! with batched id hashing and [`crate::Verifier::verify_batch`].

use core::fmt;

/// The outcome of verifying one event, with `Event::verify`'s semantics (id first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Id and signature are valid.
    Valid,
    /// The id is not the NIP-01 hash of the event (checked first).
    InvalidId,
    /// The id is right, but the signature over it is not valid.
    InvalidSignature,
}

impl Verdict {
    /// `true` for [`Verdict::Valid`].
    pub fn is_valid(self) -> bool {
        self == Verdict::Valid
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Valid => "valid",
            Verdict::InvalidId => "Invalid event ID",
            Verdict::InvalidSignature => "Invalid signature",
        })
    }
}

/// Batch verification for collections of nostr events (0.45 with feature `nostr`, 0.44 with
/// feature `nostr-0-44`).
pub trait VerifyBatchExt {
    /// One verdict per event, in iteration order, exactly as `Event::verify` decides.
    fn verify_batch(&self) -> Vec<Verdict>;
    /// `true` when every event is valid.
    fn verify_all(&self) -> bool {
        self.verify_batch().iter().all(|v| v.is_valid())
    }
}

macro_rules! reference_verdict {
    ($e:expr) => {
        if !$e.verify_id() {
            Verdict::InvalidId
        } else if !$e.verify_signature() {
            Verdict::InvalidSignature
        } else {
            Verdict::Valid
        }
    };
}

#[cfg(feature = "nostr")]
fn verdict_of(e: &::nostr::event::Event) -> Verdict {
    if !e.verify_id() {
        Verdict::InvalidId
    } else if !e.verify_signature() {
        Verdict::InvalidSignature
    } else {
        Verdict::Valid
    }
}

#[cfg(feature = "nostr")]
impl VerifyBatchExt for [::nostr::event::Event] {
    fn verify_batch(&self) -> Vec<Verdict> {
        self.iter().map(verdict_of).collect()
    }
}

#[cfg(feature = "nostr-0-44")]
impl VerifyBatchExt for [nostr044::Event] {
    fn verify_batch(&self) -> Vec<Verdict> {
        self.iter().map(|e| reference_verdict!(e)).collect()
    }
}
