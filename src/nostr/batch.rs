//! The one generic implementation behind every extension trait and the ingest service.
//!
//! Per event, in `Event::verify`'s order: recompute the NIP-01 id ([`compute_ids`], all the
//! chunk's ids in one call, so that SHA-256 lanes can hash them together) and compare
//! it with the claimed id (mismatch: [`Verdict::InvalidId`], the signature is not looked at);
//! the events whose id is right then go, all together, through this thread's
//! [`Verifier::verify_batch`](crate::Verifier::verify_batch) with the claimed id as message.
//! A `false` there (bad signature, or a public key that is not a valid x-only key) is
//! [`Verdict::InvalidSignature`].

use super::id::{compute_id, compute_ids};
use super::view::EventView;
use super::Verdict;
use crate::{with_thread_verifier, SigRef};

/// Events verified per call of the batch verifier; longer inputs are cut into chunks so
/// scratch memory stays bounded.
pub(crate) const CHUNK: usize = 4096;

/// How the signatures of one group of events are checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// All together through `Verifier::verify_batch`.
    Batch,
    /// One at a time through `Verifier::verify_one` (demoted sources in the ingest service).
    #[cfg_attr(not(feature = "tokio"), allow(dead_code))]
    Single,
}

/// Appends one verdict per event of `events`, in order, to `out`.
pub(crate) fn verify_into<E: EventView>(events: &[E], mode: Mode, out: &mut Vec<Verdict>) {
    for chunk in events.chunks(CHUNK) {
        verify_chunk(chunk, mode, out);
    }
}

/// The id stage: pushes `Valid` or `InvalidId` per event and returns the signatures to check
/// with the index of their event in `events`.
fn check_ids<'a, E: EventView>(
    events: &'a [E],
    out: &mut Vec<Verdict>,
) -> (Vec<SigRef<'a>>, Vec<usize>) {
    let mut sigs = Vec::with_capacity(events.len());
    let mut index = Vec::with_capacity(events.len());
    let mut ids = Vec::with_capacity(events.len());
    compute_ids(events, &mut ids);
    for (i, (e, id)) in events.iter().zip(&ids).enumerate() {
        if *id == *e.id_bytes() {
            out.push(Verdict::Valid);
            sigs.push(SigRef {
                pubkey: e.pubkey_bytes(),
                msg: e.id_bytes(),
                sig: e.sig_bytes(),
            });
            index.push(i);
        } else {
            out.push(Verdict::InvalidId);
        }
    }
    (sigs, index)
}

fn verify_chunk<E: EventView>(events: &[E], mode: Mode, out: &mut Vec<Verdict>) {
    let base = out.len();
    let (sigs, index) = check_ids(events, out);
    if sigs.is_empty() {
        return;
    }
    let mut ok = Vec::with_capacity(sigs.len());
    with_thread_verifier(|v| match mode {
        Mode::Batch => {
            v.verify_batch(&sigs, &mut ok);
        }
        Mode::Single => ok.extend(sigs.iter().map(|s| v.verify_one(s))),
    });
    for (k, &i) in index.iter().enumerate() {
        // A missing answer can only be a verifier bug; it must never read as valid.
        if ok.get(k) != Some(&true) {
            out[base + i] = Verdict::InvalidSignature;
        }
    }
}

/// `true` when every event is valid: false at the first chunk with a wrong id (its ids are
/// computed together), else the batch equation alone decides the signatures.
pub(crate) fn all_valid<E: EventView>(events: &[E]) -> bool {
    let mut ids = Vec::new();
    events.chunks(CHUNK).all(|chunk| {
        compute_ids(chunk, &mut ids);
        let mut sigs = Vec::with_capacity(chunk.len());
        for (e, id) in chunk.iter().zip(&ids) {
            if *id != *e.id_bytes() {
                return false;
            }
            sigs.push(SigRef {
                pubkey: e.pubkey_bytes(),
                msg: e.id_bytes(),
                sig: e.sig_bytes(),
            });
        }
        sigs.is_empty() || with_thread_verifier(|v| v.verify_all(&sigs))
    })
}

/// The verdict of one event through the thread-local verifier (its key cache).
pub(crate) fn verdict_one<E: EventView + ?Sized>(e: &E) -> Verdict {
    if compute_id(e) != *e.id_bytes() {
        return Verdict::InvalidId;
    }
    let sig = SigRef {
        pubkey: e.pubkey_bytes(),
        msg: e.id_bytes(),
        sig: e.sig_bytes(),
    };
    if with_thread_verifier(|v| v.verify_one(&sig)) {
        Verdict::Valid
    } else {
        Verdict::InvalidSignature
    }
}
