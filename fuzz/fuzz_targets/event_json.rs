//! Arbitrary bytes -> `Event::from_json` (nostr 0.45 and 0.44) -> the crate's verdicts and
//! NIP-01 serialization, against nostr's own (see docs/fuzzing.md).
//!
//! For every input that parses as an event, on each nostr version:
//! - `nostr_verify::id_preimage` equals, byte for byte, the serialization nostr hashes in
//!   `EventId::compute` (0.45: `serde_json::to_vec` of the tuple) or `EventId::new` (0.44:
//!   `json!([...]).to_string()`), and `compute_id` equals nostr's id;
//! - `verify_batch()` on a batch holding the event, the event with its id recomputed, and
//!   valid events signed once at start-up (so the batch equation runs) gives, per event,
//!   exactly `Event::verify`'s outcome (`InvalidId` where `verify_id` fails, then
//!   `InvalidSignature` where `verify_signature` fails);
//! - when both versions parse the input, their serializations are the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nostr::prelude::*;
use nostr_verify::{compute_id, id_preimage, Verdict, VerifyBatchExt};
use std::sync::LazyLock;

/// Valid events by two keys, signed once.
static VALID: LazyLock<Vec<Event>> = LazyLock::new(|| {
    let keys = [
        Keys::parse("6b911fd37cdf5c81d4c0adb1ab7fa822ed253ab0ad9aa18d77257c88b29b718e")
            .expect("key"),
        Keys::parse("7b911fd37cdf5c81d4c0adb1ab7fa822ed253ab0ad9aa18d77257c88b29b718e")
            .expect("key"),
    ];
    (0..14)
        .map(|i| {
            EventBuilder::new(Kind::TextNote, format!("note {i} \u{e9}\n\"q\""))
                .tags([Tag::parse(["t", "fuzz"]).expect("tag")])
                .custom_created_at(Timestamp::from_secs(1_700_000_000 + i))
                .finalize(&keys[i as usize % 2])
                .expect("sign")
        })
        .collect()
});

static VALID_044: LazyLock<Vec<nostr044::Event>> = LazyLock::new(|| {
    use nostr044::JsonUtil as _;
    VALID
        .iter()
        .map(|e| nostr044::Event::from_json(e.as_json()).expect("0.44 parses 0.45's JSON"))
        .collect()
});

fn verdict_045(e: &Event) -> Verdict {
    if !e.verify_id() {
        Verdict::InvalidId
    } else if !e.verify_signature() {
        Verdict::InvalidSignature
    } else {
        Verdict::Valid
    }
}

fn verdict_044(e: &nostr044::Event) -> Verdict {
    if !e.verify_id() {
        Verdict::InvalidId
    } else if !e.verify_signature() {
        Verdict::InvalidSignature
    } else {
        Verdict::Valid
    }
}

fn check_045(e: &Event) -> Vec<u8> {
    let reference =
        serde_json::to_vec(&(0u8, &e.pubkey, &e.created_at, &e.kind, &e.tags, &e.content))
            .expect("nostr's fields serialize");
    let ours = id_preimage(e);
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&reference),
        "0.45: NIP-01 serialization differs from nostr's"
    );
    assert_eq!(ours, reference);
    let id = EventId::compute(&e.pubkey, &e.created_at, &e.kind, &e.tags, &e.content);
    assert_eq!(
        compute_id(e),
        id.to_bytes(),
        "0.45: id differs from EventId::compute"
    );

    let mut fixed = e.clone();
    fixed.id = id;
    let mut batch = vec![e.clone(), fixed];
    batch.extend(VALID.iter().cloned());
    let want: Vec<Verdict> = batch.iter().map(verdict_045).collect();
    assert_eq!(
        batch.verify_batch(),
        want,
        "0.45: verdicts differ from Event::verify"
    );
    assert_eq!(batch.verify_all(), want.iter().all(|v| v.is_valid()));
    ours
}

fn check_044(e: &nostr044::Event) -> Vec<u8> {
    let reference = serde_json::json!([0, e.pubkey, e.created_at, e.kind, e.tags, e.content])
        .to_string()
        .into_bytes();
    let ours = id_preimage(e);
    assert_eq!(
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&reference),
        "0.44: NIP-01 serialization differs from nostr's"
    );
    assert_eq!(ours, reference);
    let id = nostr044::EventId::new(&e.pubkey, &e.created_at, &e.kind, &e.tags, &e.content);
    assert_eq!(
        compute_id(e),
        id.to_bytes(),
        "0.44: id differs from EventId::new"
    );

    let mut fixed = e.clone();
    fixed.id = id;
    let mut batch = vec![e.clone(), fixed];
    batch.extend(VALID_044.iter().cloned());
    let want: Vec<Verdict> = batch.iter().map(verdict_044).collect();
    assert_eq!(
        batch.verify_batch(),
        want,
        "0.44: verdicts differ from Event::verify"
    );
    assert_eq!(batch.verify_all(), want.iter().all(|v| v.is_valid()));
    ours
}

fuzz_target!(|data: &[u8]| {
    use nostr044::JsonUtil as _;
    let new = Event::from_json(data).ok().map(|e| check_045(&e));
    let old = nostr044::Event::from_json(data).ok().map(|e| check_044(&e));
    if let (Some(a), Some(b)) = (new, old) {
        assert_eq!(a, b, "the two nostr versions' events serialize differently");
    }
});
