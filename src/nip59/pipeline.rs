//! The layer-by-layer unwrapping pipeline shared by the key-based and signer-based entry
//! points.
//!
//! Stages, each over all wraps still alive: kind check → batch verification of the wraps
//! (id, then signature) → [strict: `p` tag] → decrypt + parse the seals → batch
//! verification of the seals → [strict: seal kind 13, no tags] → decrypt + parse the
//! rumors → rumor author == seal author. Per wrap, the first failing stage decides the
//! error, in `UnwrappedGift::from_gift_wrap`'s order, so every wrap gets exactly nostr's
//! outcome.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use nostr::event::{Event, Kind, UnsignedEvent};
use nostr::key::{Keys, PublicKey, SecretKey};
use nostr::nips::nip44::v2::ConversationKey;
use nostr::nips::nip59::UnwrappedGift;

use super::error::{Error, Step};
use super::fanout::Fan;
use super::nip44::{decrypt_payload, derive_boxed, KeyCache, SecretBox};
use super::options::UnwrapOptions;
use crate::nostr::{compute_id, Verdict};
use crate::{with_thread_verifier, SigRef};

// One-thread cost of each kind of item, in ns, from the breakdown of
// `cargo run --profile bench -p nostr-verify-bench --example gift_wraps` on the 2-core reference machine (rounded up);
// they only decide whether a stage is worth splitting (see `fanout`).
/// The NIP-01 id of a gift wrap (about 1.5 KB of JSON) or a seal.
const ID_NS: u64 = 2_000;
/// One signature of a batch (lifts, challenge, share of the MSM).
const SIGNATURE_NS: u64 = 3_000;
/// One key agreement (ECDH + HKDF-extract).
const ECDH_NS: u64 = 30_000;
/// NIP-44 decryption and JSON parsing of one layer, with the key known.
const OPEN_NS: u64 = 3_000;

/// Signatures per batch verification (bounds the verifier's scratch memory).
const SIG_CHUNK: usize = 4096;

pub(crate) type Outcome = Result<UnwrappedGift, Error>;

/// Whether each event's id is the NIP-01 hash of its fields (on threads when many).
fn ids_match(events: &[&Event], fan: &Fan) -> Vec<bool> {
    fan.map(events, events.len() as u64 * ID_NS, |e| id_matches(e))
}

fn id_matches(e: &Event) -> bool {
    compute_id(e) == *e.id.as_bytes()
}

/// `Event::verify`'s verdicts for `events`, whose id checks are `id_ok`: the signatures of
/// the events with a good id in one batch (per [`SIG_CHUNK`]) through this thread's
/// verifier, so that every key is lifted once and kept in its cache. A large batch is
/// verified on two threads ([`crate::Verifier::verify_batch_two_threads`]: the same work,
/// split in halves).
fn verdicts(events: &[&Event], id_ok: &[bool], fan: &Fan) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = id_ok
        .iter()
        .map(|&ok| {
            if ok {
                Verdict::Valid
            } else {
                Verdict::InvalidId
            }
        })
        .collect();
    let checked: Vec<usize> = (0..events.len()).filter(|&i| id_ok[i]).collect();
    let mut ok: Vec<bool> = Vec::new();
    for part in checked.chunks(SIG_CHUNK) {
        let sigs: Vec<SigRef<'_>> = part
            .iter()
            .map(|&i| SigRef {
                pubkey: events[i].pubkey.as_bytes(),
                msg: events[i].id.as_bytes(),
                sig: events[i].sig.as_bytes(),
            })
            .collect();
        let two: bool = fan.splits(sigs.len(), sigs.len() as u64 * SIGNATURE_NS);
        with_thread_verifier(|v| {
            if two {
                v.verify_batch_two_threads(&sigs, &mut ok)
            } else {
                v.verify_batch(&sigs, &mut ok)
            }
        });
        for (k, &i) in part.iter().enumerate() {
            // A missing answer can only be a verifier bug; it must never read as valid.
            if ok.get(k) != Some(&true) {
                out[i] = Verdict::InvalidSignature;
            }
        }
    }
    out
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
    fan: &Fan,
) -> Vec<usize> {
    let mut gift: Vec<usize> = Vec::with_capacity(wraps.len());
    for (i, w) in wraps.iter().enumerate() {
        if w.kind == Kind::GiftWrap {
            gift.push(i);
        } else {
            board.fail(i, Error::invalid(Step::NotGiftWrap, "not a gift wrap"));
        }
    }
    // Verify only the gift wraps.
    let events: Vec<&Event> = gift.iter().map(|&i| &wraps[i]).collect();
    let verdicts: Vec<Verdict> = verdicts(&events, &ids_match(&events, fan), fan);
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

/// A seal that decrypted and parsed, and whether its id matches.
pub(crate) type Opened = Result<(Event, bool), Error>;

/// Parses a decrypted seal (nostr's `Event::from_json`, error unchanged) and checks its id.
pub(crate) fn parse_seal(decrypted: Result<String, Error>) -> Opened {
    let json: String = decrypted?;
    let seal: Event = Event::from_json(json).map_err(|e| Error::new(Step::SealParse, e))?;
    let id_ok: bool = id_matches(&seal);
    Ok((seal, id_ok))
}

/// Seals that decrypted and parsed, with the index of their wrap.
pub(crate) struct Seals {
    pub(crate) events: Vec<Event>,
    pub(crate) owner: Vec<usize>,
}

/// Records seal failures, batch-verifies the parsed seals, applies the strict seal checks.
pub(crate) fn verify_seals(
    board: &mut Board,
    opened: Vec<(usize, Opened)>,
    options: &UnwrapOptions,
    fan: &Fan,
) -> Seals {
    let mut events: Vec<Event> = Vec::with_capacity(opened.len());
    let mut id_ok: Vec<bool> = Vec::with_capacity(opened.len());
    let mut owner: Vec<usize> = Vec::with_capacity(opened.len());
    for (i, r) in opened {
        match r {
            Ok((seal, id)) => {
                events.push(seal);
                id_ok.push(id);
                owner.push(i);
            }
            Err(e) => board.fail(i, e),
        }
    }
    let verdicts: Vec<Verdict> = {
        let refs: Vec<&Event> = events.iter().collect();
        verdicts(&refs, &id_ok, fan)
    };
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

/// Decrypts, parses and id-checks (on threads) the seals of the wraps alive, then verifies
/// them. `decrypt_ns` estimates one decryption.
fn open_seals<F, E>(
    board: &mut Board,
    wraps: &[Event],
    alive: Vec<usize>,
    options: &UnwrapOptions,
    fan: &Fan,
    decrypt_ns: u64,
    decrypt: F,
) -> Seals
where
    F: Fn(&Event) -> Result<String, E> + Sync,
    E: Into<Box<dyn core::error::Error + Send + Sync>>,
{
    let work: u64 = alive.len() as u64 * (decrypt_ns + ID_NS);
    let opened: Vec<Opened> = fan.map(&alive, work, |&i| {
        parse_seal(decrypt(&wraps[i]).map_err(|e| Error::crypto(Step::SealDecrypt, e)))
    });
    verify_seals(board, alive.into_iter().zip(opened).collect(), options, fan)
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

/// How a call spreads its work: the option's thread count (every available core when it is
/// 0) and its forced split.
pub(crate) fn fan_of(options: &UnwrapOptions) -> Fan {
    let threads: usize = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    Fan {
        threads,
        always_split: options.always_split,
    }
}

/// The fan, an empty board, and the wraps alive after [`check_wraps`].
fn start(
    wraps: &[Event],
    options: &UnwrapOptions,
    recipient: Option<&PublicKey>,
) -> (Fan, Board, Vec<usize>) {
    let fan: Fan = fan_of(options);
    let mut board = Board::new(wraps.len());
    let alive: Vec<usize> = check_wraps(&mut board, wraps, options, recipient, &fan);
    (fan, board, alive)
}

/// A sender's conversation key during one call: from the cache, or derived here, once, by
/// whichever thread needs it first (the others wait for it; nobody derives it twice).
enum SenderKey<'a> {
    Cached(&'a [u8; 32]),
    Fresh(&'a OnceLock<Option<SecretBox>>),
}

/// The whole pipeline with a secret key and the seal-layer key cache.
pub(crate) fn unwrap_with_keys(
    keys: &Keys,
    cache: &mut KeyCache,
    options: &UnwrapOptions,
    wraps: &[Event],
) -> Vec<Outcome> {
    let secret_key: &SecretKey = keys.secret_key();
    let (fan, mut board, alive) = start(wraps, options, Some(&keys.public_key()));

    // Seal layer: one-time wrap key, one ECDH per wrap, never cached.
    let seals: Seals = open_seals(
        &mut board,
        wraps,
        alive,
        options,
        &fan,
        ECDH_NS + OPEN_NS,
        |wrap| {
            decrypt_payload(&wrap.content, || {
                ConversationKey::derive(secret_key, &wrap.pubkey)
            })
        },
    );

    // Rumor layer: the sender's key, from the cache or derived once per new sender.
    let mut seen: HashSet<PublicKey> = HashSet::new();
    let senders: Vec<PublicKey> = seals
        .events
        .iter()
        .map(|s| s.pubkey)
        .filter(|pk| seen.insert(*pk))
        .collect();
    let cached: Vec<bool> = senders.iter().map(|pk| cache.touch(pk)).collect();
    let fresh: Vec<(PublicKey, OnceLock<Option<SecretBox>>)> = senders
        .iter()
        .zip(&cached)
        .filter(|(_, &hit)| !hit)
        .map(|(pk, _)| (*pk, OnceLock::new()))
        .collect();
    let outcomes: Vec<Outcome> = {
        let mut lookup: HashMap<PublicKey, SenderKey<'_>> = HashMap::with_capacity(senders.len());
        for (pk, cell) in &fresh {
            lookup.insert(*pk, SenderKey::Fresh(cell));
        }
        for (pk, _) in senders.iter().zip(&cached).filter(|(_, &hit)| hit) {
            if let Some(key) = cache.peek(pk) {
                lookup.insert(*pk, SenderKey::Cached(key));
            }
        }
        let lookup = &lookup;
        let work: u64 = seals.events.len() as u64 * OPEN_NS + fresh.len() as u64 * ECDH_NS;
        fan.map(&seals.events, work, |seal| {
            let key = || match lookup.get(&seal.pubkey) {
                Some(SenderKey::Cached(bytes)) => Ok(ConversationKey::new(**bytes)),
                // A verified seal's key always lifts, so the derivation cannot fail; if it
                // did, deriving again here reports nostr's error for this wrap.
                Some(SenderKey::Fresh(cell)) => {
                    match cell.get_or_init(|| derive_boxed(secret_key, &seal.pubkey).ok()) {
                        Some(bytes) => Ok(ConversationKey::new(***bytes)),
                        None => ConversationKey::derive(secret_key, &seal.pubkey),
                    }
                }
                None => ConversationKey::derive(secret_key, &seal.pubkey),
            };
            let rumor = decrypt_payload(&seal.content, key)
                .map_err(|e| Error::crypto(Step::RumorDecrypt, e));
            finish(seal, rumor)
        })
    };
    for (pk, cell) in fresh {
        if let Some(Some(key)) = cell.into_inner() {
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
    let (fan, mut board, alive) = start(wraps, options, options.recipient.as_ref());
    let seals: Seals = open_seals(
        &mut board,
        wraps,
        alive,
        options,
        &fan,
        ECDH_NS + OPEN_NS,
        |wrap| signer.nip44_decrypt(&wrap.pubkey, &wrap.content),
    );
    let work: u64 = seals.events.len() as u64 * (ECDH_NS + OPEN_NS);
    let outcomes: Vec<Outcome> = fan.map(&seals.events, work, |seal| {
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
    let (fan, mut board, alive) = start(wraps, options, options.recipient.as_ref());
    let mut opened: Vec<(usize, Opened)> = Vec::with_capacity(alive.len());
    for i in alive {
        let wrap: &Event = &wraps[i];
        let seal = signer
            .nip44_decrypt_async(&wrap.pubkey, &wrap.content)
            .await
            .map_err(|e| Error::crypto(Step::SealDecrypt, e));
        opened.push((i, parse_seal(seal)));
    }
    let seals: Seals = verify_seals(&mut board, opened, options, &fan);
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
    use nostr::prelude::{EventBuilder, FinalizeEvent, FinalizeUnsignedEvent, GiftWrapBuilder};

    fn inbox(me: &Keys, n: usize) -> Vec<Event> {
        let senders: Vec<Keys> = (0..3).map(|_| Keys::generate()).collect();
        (0..n)
            .map(|i| {
                let from = &senders[i % senders.len()];
                let rumor = EventBuilder::new(Kind::PrivateDirectMessage, format!("m{i}"))
                    .finalize_unsigned(from.public_key());
                let mut wrap = GiftWrapBuilder::new(me.public_key(), rumor)
                    .finalize(from)
                    .expect("wrap");
                if i % 5 == 4 {
                    // Tampered: the wrap's id no longer matches.
                    wrap.content.push('A');
                }
                wrap
            })
            .collect()
    }

    fn same(a: &[Outcome], b: &[Outcome]) -> bool {
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| match (x, y) {
                (Ok(x), Ok(y)) => x == y,
                (Err(x), Err(y)) => x.step() == y.step() && x.as_nostr() == y.as_nostr(),
                _ => false,
            })
    }

    #[test]
    fn forced_split_asks_for_threads_and_falls_back_when_refused() {
        let me = Keys::generate();
        let wraps = inbox(&me, 12);
        let one = UnwrapOptions::default().threads(1);
        let forced = UnwrapOptions::default().threads(2).always_split(true);
        let fan = fan_of(&forced);
        assert!(fan.always_split && fan.threads == 2 && fan.splits(2, 0));
        assert!(!fan_of(&UnwrapOptions::default().threads(2)).splits(12, 12 * ECDH_NS));
        let want = unwrap_with_keys(&me, &mut KeyCache::new(8), &one, &wraps);
        assert_eq!(want.iter().filter(|r| r.is_ok()).count(), 10);
        assert!(same(
            &unwrap_with_keys(&me, &mut KeyCache::new(8), &forced, &wraps),
            &want
        ));
        // Every stage asks for a helper thread; refused, the caller does all of it.
        let before = crate::spawn::refused_so_far();
        let got = crate::spawn::with_spawns_refused(|| {
            unwrap_with_keys(&me, &mut KeyCache::new(8), &forced, &wraps)
        });
        assert!(same(&got, &want));
        // Wrap ids, seal opening, rumors: at least one refusal each.
        assert!(crate::spawn::refused_so_far() >= before + 3);
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
