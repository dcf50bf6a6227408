//! The layer-by-layer unwrapping pipeline shared by the key-based and signer-based entry
//! points.
//!
//! Stages, each over all wraps still alive: kind check → batch verification of the wraps
//! (id, then signature) → [strict: `p` tag] → decrypt + parse the seals → batch
//! verification of the seals → [strict: seal kind 13, no tags] → decrypt + parse the
//! rumors → rumor author == seal author. Per wrap, the first failing stage decides the
//! error, in `UnwrappedGift::from_gift_wrap`'s order, so every wrap gets exactly nostr's
//! outcome.

use crate::spawn::try_spawn_scoped;
use std::collections::{HashMap, HashSet};

use nostr::event::{Event, Kind, UnsignedEvent};
use nostr::key::{Keys, PublicKey, SecretKey};
use nostr::nips::nip44::v2::ConversationKey;
use nostr::nips::nip59::UnwrappedGift;

use super::error::{Error, Step};
use super::nip44::{decrypt_payload, derive_boxed, KeyCache, SecretBox};
use super::UnwrapOptions;
use crate::nostr::{Verdict, VerifyBatchExt};

/// Fewer wraps than this per thread are decrypted on the calling thread (a wrap's ECDH
/// costs ~40 µs, a thread start ~20 µs).
const MIN_SEALS_PER_THREAD: usize = 8;
/// Rumor decryption with a cached key is cheap; split only larger sets.
const MIN_RUMORS_PER_THREAD: usize = 32;
/// Verification batches are split across threads only above this size per thread.
const MIN_VERIFY_PER_THREAD: usize = 64;
/// Distinct new senders whose ECDH is split across threads.
const MIN_DERIVE_PER_THREAD: usize = 4;

pub(crate) type Outcome = Result<UnwrappedGift, Error>;

/// `f` over `items`, in order, on up to `threads` scoped threads (chunked).
pub(crate) fn par_map<T, R, F>(items: &[T], threads: usize, min_per_thread: usize, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let threads: usize = threads.min(items.len() / min_per_thread.max(1)).max(1);
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let chunk: usize = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        // A chunk whose thread the OS refused stays `Err` and runs here, in order.
        let handles: Vec<_> = items
            .chunks(chunk)
            .skip(1)
            .map(|c| try_spawn_scoped(s, move || c.iter().map(f).collect::<Vec<R>>()).ok_or(c))
            .collect();
        let mut out: Vec<R> = Vec::with_capacity(items.len());
        out.extend(items[..chunk].iter().map(f));
        for h in handles {
            match h {
                Ok(h) => match h.join() {
                    Ok(part) => out.extend(part),
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                Err(c) => out.extend(c.iter().map(f)),
            }
        }
        out
    })
}

/// `events.verify_batch()`, split into one batch per thread when large.
fn par_verify(events: &[Event], threads: usize) -> Vec<Verdict> {
    let threads: usize = threads.min(events.len() / MIN_VERIFY_PER_THREAD).max(1);
    if threads <= 1 {
        return events.verify_batch();
    }
    let chunk: usize = events.len().div_ceil(threads);
    let chunks: Vec<&[Event]> = events.chunks(chunk).collect();
    par_map(&chunks, threads, 1, |c| c.verify_batch())
        .into_iter()
        .flatten()
        .collect()
}

fn verdict_error(verdict: Verdict, wrap_layer: bool) -> Option<Error> {
    // nostr's `Event::verify` messages, so that `as_nostr()` equals its error.
    match (verdict, wrap_layer) {
        (Verdict::Valid, _) => None,
        (Verdict::InvalidId, true) => Some(Error::invalid(Step::WrapInvalidId, "Invalid event ID")),
        (Verdict::InvalidId, false) => {
            Some(Error::invalid(Step::SealInvalidId, "Invalid event ID"))
        }
        (Verdict::InvalidSignature, true) => Some(Error::invalid(
            Step::WrapInvalidSignature,
            "Invalid signature",
        )),
        (Verdict::InvalidSignature, false) => Some(Error::invalid(
            Step::SealInvalidSignature,
            "Invalid signature",
        )),
    }
}

/// Results so far: `None` while a wrap is still in the pipeline.
pub(crate) struct Board {
    out: Vec<Option<Outcome>>,
}

impl Board {
    fn new(n: usize) -> Self {
        Board {
            out: (0..n).map(|_| None).collect(),
        }
    }

    fn fail(&mut self, i: usize, e: Error) {
        self.out[i] = Some(Err(e));
    }

    pub(crate) fn finish(self) -> Vec<Outcome> {
        self.out
            .into_iter()
            .map(|o| {
                // Every wrap is decided by the last stage; a gap would be a pipeline bug,
                // reported as an error rather than a panic.
                o.unwrap_or_else(|| Err(Error::invalid(Step::RumorParse, "internal: undecided")))
            })
            .collect()
    }
}

/// Kind check, batch verification of the wraps, strict `p` tag. Returns the wraps alive.
pub(crate) fn check_wraps(
    board: &mut Board,
    wraps: &[Event],
    options: &UnwrapOptions,
    recipient: Option<&PublicKey>,
    threads: usize,
) -> Vec<usize> {
    let gift: Vec<usize> = (0..wraps.len())
        .filter(|&i| wraps[i].kind == Kind::GiftWrap)
        .collect();
    for (i, w) in wraps.iter().enumerate() {
        if w.kind != Kind::GiftWrap {
            board.fail(i, Error::invalid(Step::NotGiftWrap, "not a gift wrap"));
        }
    }
    // Verify only the gift wraps (copying them only when other kinds are mixed in).
    let verdicts: Vec<Verdict> = if gift.len() == wraps.len() {
        par_verify(wraps, threads)
    } else {
        let subset: Vec<Event> = gift.iter().map(|&i| wraps[i].clone()).collect();
        par_verify(&subset, threads)
    };
    let mut alive: Vec<usize> = Vec::with_capacity(gift.len());
    for (&i, &v) in gift.iter().zip(&verdicts) {
        if let Some(e) = verdict_error(v, true) {
            board.fail(i, e);
            continue;
        }
        if options.strict {
            let for_us: bool = match recipient {
                Some(me) => wraps[i].tags.public_keys().any(|p| p == *me),
                None => false,
            };
            if !for_us {
                let message: &'static str = if recipient.is_some() {
                    "gift wrap has no p tag naming the recipient"
                } else {
                    "strict mode needs the recipient public key (UnwrapOptions::recipient)"
                };
                board.fail(i, Error::invalid(Step::StrictNotForUs, message));
                continue;
            }
        }
        alive.push(i);
    }
    alive
}

/// Parses a decrypted seal (nostr's `Event::from_json`, error unchanged).
pub(crate) fn parse_seal(decrypted: Result<String, Error>) -> Result<Event, Error> {
    let json: String = decrypted?;
    Event::from_json(json).map_err(|e| Error::new(Step::SealParse, e))
}

/// Seals that decrypted and parsed, with the index of their wrap.
pub(crate) struct Seals {
    pub(crate) events: Vec<Event>,
    pub(crate) owner: Vec<usize>,
}

/// Records seal failures, batch-verifies the parsed seals, applies the strict seal checks.
pub(crate) fn verify_seals(
    board: &mut Board,
    opened: Vec<(usize, Result<Event, Error>)>,
    options: &UnwrapOptions,
    threads: usize,
) -> Seals {
    let mut events: Vec<Event> = Vec::with_capacity(opened.len());
    let mut owner: Vec<usize> = Vec::with_capacity(opened.len());
    for (i, r) in opened {
        match r {
            Ok(seal) => {
                events.push(seal);
                owner.push(i);
            }
            Err(e) => board.fail(i, e),
        }
    }
    let verdicts: Vec<Verdict> = par_verify(&events, threads);
    let mut seals = Seals {
        events: Vec::with_capacity(events.len()),
        owner: Vec::with_capacity(events.len()),
    };
    for ((seal, i), v) in events.into_iter().zip(owner).zip(verdicts) {
        if let Some(e) = verdict_error(v, false) {
            board.fail(i, e);
        } else if options.strict && seal.kind != Kind::Seal {
            board.fail(
                i,
                Error::invalid(Step::StrictSealKind, "seal is not kind 13"),
            );
        } else if options.strict && !seal.tags.is_empty() {
            board.fail(i, Error::invalid(Step::StrictSealTags, "seal has tags"));
        } else {
            seals.events.push(seal);
            seals.owner.push(i);
        }
    }
    seals
}

/// Decrypts (on threads) and parses the seals of the wraps alive, then verifies them.
fn open_seals<F, E>(
    board: &mut Board,
    wraps: &[Event],
    alive: Vec<usize>,
    options: &UnwrapOptions,
    threads: usize,
    decrypt: F,
) -> Seals
where
    F: Fn(&Event) -> Result<String, E> + Sync,
    E: Into<Box<dyn core::error::Error + Send + Sync>>,
{
    let opened: Vec<Result<Event, Error>> = par_map(&alive, threads, MIN_SEALS_PER_THREAD, |&i| {
        parse_seal(decrypt(&wraps[i]).map_err(|e| Error::crypto(Step::SealDecrypt, e)))
    });
    verify_seals(
        board,
        alive.into_iter().zip(opened).collect(),
        options,
        threads,
    )
}

/// Parses the rumor and checks its author, as nostr's `parse_unwrapped_gift` does.
pub(crate) fn finish(seal: &Event, rumor: Result<String, Error>) -> Outcome {
    let json: String = rumor?;
    let rumor: UnsignedEvent =
        UnsignedEvent::from_json(json).map_err(|e| Error::new(Step::RumorParse, e))?;
    if rumor.pubkey != seal.pubkey {
        return Err(Error::invalid(Step::SenderMismatch, "sender mismatch"));
    }
    Ok(UnwrappedGift {
        sender: seal.pubkey,
        rumor,
    })
}

/// Records the final outcomes.
pub(crate) fn record(board: &mut Board, seals: &Seals, outcomes: Vec<Outcome>) {
    for (&i, o) in seals.owner.iter().zip(outcomes) {
        board.out[i] = Some(o);
    }
}

/// Threads to use: the option, or every available core when it is 0.
pub(crate) fn thread_count(options: &UnwrapOptions) -> usize {
    match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// Thread count, an empty board, and the wraps alive after [`check_wraps`].
fn start(
    wraps: &[Event],
    options: &UnwrapOptions,
    recipient: Option<&PublicKey>,
) -> (usize, Board, Vec<usize>) {
    let threads: usize = thread_count(options);
    let mut board = Board::new(wraps.len());
    let alive: Vec<usize> = check_wraps(&mut board, wraps, options, recipient, threads);
    (threads, board, alive)
}

/// The whole pipeline with a secret key and the seal-layer key cache.
pub(crate) fn unwrap_with_keys(
    keys: &Keys,
    cache: &mut KeyCache,
    options: &UnwrapOptions,
    wraps: &[Event],
) -> Vec<Outcome> {
    let secret_key: &SecretKey = keys.secret_key();
    let (threads, mut board, alive) = start(wraps, options, Some(&keys.public_key()));

    // Seal layer: one-time wrap key, one ECDH per wrap, never cached.
    let seals: Seals = open_seals(&mut board, wraps, alive, options, threads, |wrap| {
        decrypt_payload(&wrap.content, || {
            ConversationKey::derive(secret_key, &wrap.pubkey)
        })
    });

    // Rumor layer: the sender's key, from the cache or derived once per new sender.
    let mut seen: HashSet<PublicKey> = HashSet::new();
    let senders: Vec<PublicKey> = seals
        .events
        .iter()
        .map(|s| s.pubkey)
        .filter(|pk| seen.insert(*pk))
        .collect();
    let missing: Vec<PublicKey> = senders
        .iter()
        .filter(|pk| !cache.touch(pk))
        .copied()
        .collect();
    let fresh: Vec<Option<SecretBox>> = par_map(&missing, threads, MIN_DERIVE_PER_THREAD, |pk| {
        // A verified seal's key always lifts, so this cannot fail; if it did, the rumor
        // step below re-derives and reports nostr's error for that wrap.
        derive_boxed(secret_key, pk).ok()
    });
    let outcomes: Vec<Outcome> = {
        let mut lookup: HashMap<PublicKey, &[u8; 32]> = HashMap::with_capacity(senders.len());
        for (pk, key) in missing.iter().zip(&fresh) {
            if let Some(key) = key {
                lookup.insert(*pk, &***key);
            }
        }
        for pk in &senders {
            if let Some(key) = cache.peek(pk) {
                lookup.entry(*pk).or_insert(key);
            }
        }
        let lookup = &lookup;
        let positions: Vec<usize> = (0..seals.events.len()).collect();
        par_map(&positions, threads, MIN_RUMORS_PER_THREAD, |&j| {
            let seal: &Event = &seals.events[j];
            let rumor = decrypt_payload(&seal.content, || match lookup.get(&seal.pubkey) {
                Some(bytes) => Ok(ConversationKey::new(**bytes)),
                None => ConversationKey::derive(secret_key, &seal.pubkey),
            })
            .map_err(|e| Error::crypto(Step::RumorDecrypt, e));
            finish(seal, rumor)
        })
    };
    for (pk, key) in missing.into_iter().zip(fresh) {
        if let Some(key) = key {
            cache.insert(pk, key);
        }
    }
    record(&mut board, &seals, outcomes);
    board.finish()
}

/// The pipeline with a synchronous NIP-44 signer (no key cache).
pub(crate) fn unwrap_with_signer<T>(
    signer: &T,
    options: &UnwrapOptions,
    wraps: &[Event],
) -> Vec<Outcome>
where
    T: nostr::nips::nip44::Nip44,
{
    let (threads, mut board, alive) = start(wraps, options, options.recipient.as_ref());
    let seals: Seals = open_seals(&mut board, wraps, alive, options, threads, |wrap| {
        signer.nip44_decrypt(&wrap.pubkey, &wrap.content)
    });
    let outcomes: Vec<Outcome> = par_map(&seals.events, threads, MIN_SEALS_PER_THREAD, |seal| {
        let rumor = signer
            .nip44_decrypt(&seal.pubkey, &seal.content)
            .map_err(|e| Error::crypto(Step::RumorDecrypt, e));
        finish(seal, rumor)
    });
    record(&mut board, &seals, outcomes);
    board.finish()
}

/// The pipeline with an asynchronous NIP-44 signer (no key cache; decryptions awaited
/// one after the other, verification still batched per layer).
pub(crate) async fn unwrap_with_async_signer<T>(
    signer: &T,
    options: &UnwrapOptions,
    wraps: &[Event],
) -> Vec<Outcome>
where
    T: nostr::nips::nip44::AsyncNip44,
{
    let (threads, mut board, alive) = start(wraps, options, options.recipient.as_ref());
    let mut opened: Vec<(usize, Result<Event, Error>)> = Vec::with_capacity(alive.len());
    for i in alive {
        let wrap: &Event = &wraps[i];
        let seal = signer
            .nip44_decrypt_async(&wrap.pubkey, &wrap.content)
            .await
            .map_err(|e| Error::crypto(Step::SealDecrypt, e));
        opened.push((i, parse_seal(seal)));
    }
    let seals: Seals = verify_seals(&mut board, opened, options, threads);
    let mut outcomes: Vec<Outcome> = Vec::with_capacity(seals.events.len());
    for seal in &seals.events {
        let rumor = signer
            .nip44_decrypt_async(&seal.pubkey, &seal.content)
            .await
            .map_err(|e| Error::crypto(Step::RumorDecrypt, e));
        outcomes.push(finish(seal, rumor));
    }
    record(&mut board, &seals, outcomes);
    board.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_map_keeps_order_for_every_split() {
        let items: Vec<u32> = (0..103).collect();
        for threads in 1..6 {
            for min in [1, 4, 50, 200] {
                let got: Vec<u32> = par_map(&items, threads, min, |x| x * 3);
                let want: Vec<u32> = items.iter().map(|x| x * 3).collect();
                assert_eq!(got, want, "threads {threads} min {min}");
            }
        }
        let empty: Vec<u32> = par_map(&[], 4, 1, |x: &u32| *x);
        assert!(empty.is_empty());
    }

    #[test]
    fn par_map_without_threads_runs_every_chunk_here() {
        let items: Vec<u32> = (0..103).collect();
        let want: Vec<u32> = items.iter().map(|x| x + 1).collect();
        let here = std::thread::current().id();
        let got = crate::spawn::with_spawns_refused(|| {
            par_map(&items, 4, 1, |x| {
                assert_eq!(std::thread::current().id(), here, "no thread was refused");
                x + 1
            })
        });
        assert_eq!(got, want);
    }

    #[test]
    fn undecided_slot_is_an_error_not_a_panic() {
        let mut board = Board::new(2);
        board.fail(0, Error::invalid(Step::NotGiftWrap, "not a gift wrap"));
        let out = board.finish();
        assert_eq!(
            out[0].as_ref().err().map(|e| e.step()),
            Some(Step::NotGiftWrap)
        );
        assert!(out[1].is_err());
    }
}
