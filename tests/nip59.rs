//! NIP-59 batch unwrapping: spec vectors, NIP-44 vectors through the cached decryption
//! path, and differential tests against nostr's `UnwrappedGift::from_gift_wrap`.

mod common;

use std::fs;

use base64::engine::{general_purpose::STANDARD, Engine};
use nostr::nips::nip44::v2::{self, ConversationKey};
use nostr::prelude::*;
use nostr_verify::nip59::{
    nip44_decrypt_with_key, unwrap_gift_wraps, unwrap_gift_wraps_with_async_signer,
    unwrap_gift_wraps_with_signer, Error as UnwrapError, GiftUnwrapper, Step, UnwrapOptions,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

type Outcome = Result<UnwrappedGift, UnwrapError>;

fn json_file(name: &str) -> Option<Value> {
    let dir = common::data_dir()?;
    let text = fs::read_to_string(dir.join(name)).expect("read data file");
    Some(serde_json::from_str(&text).expect("data file is JSON"))
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("missing string {key}"))
}

fn hex32(h: &str) -> [u8; 32] {
    hex::decode(h).expect("hex").try_into().expect("32 bytes")
}

/// Same outcome as nostr: equal `Ok` values, or both errors with equal nostr error
/// (kind and message).
fn assert_same(ours: &Outcome, theirs: &Result<UnwrappedGift, nostr::error::Error>, what: &str) {
    match (ours, theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{what}: different Ok values"),
        (Err(a), Err(b)) => {
            assert_eq!(a.as_nostr(), b, "{what}: different errors ({a} vs {b})");
            assert_eq!(a.as_nostr().to_string(), b.to_string(), "{what}");
            assert_eq!(a.kind(), b.kind(), "{what}");
        }
        (a, b) => panic!("{what}: ours {a:?}, nostr {b:?}"),
    }
}

// ---------------------------------------------------------------- spec vectors

#[cfg_attr(
    nostr_verify_no_data,
    ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
)]
#[test]
fn spec_vectors_open_to_expected_rumors() {
    let Some(doc) = json_file("nip59-vectors.json") else {
        return;
    };
    let vectors = doc["vectors"].as_array().expect("vectors");
    assert_eq!(vectors.len(), 9);
    let mut opened = 0;
    let mut legacy = 0;
    for v in vectors {
        let name = s(v, "name");
        let secret = v["recipient_sk"]
            .as_str()
            .or_else(|| v["recipient_nsec"].as_str())
            .expect("recipient key");
        let keys = Keys::parse(secret).expect("recipient key parses");
        let wrap = Event::from_json(v["gift_wrap"].to_string()).expect("wrap parses");
        let theirs = UnwrappedGift::from_gift_wrap(&keys, &wrap);
        let ours = unwrap_gift_wraps(&keys, std::slice::from_ref(&wrap));
        assert_eq!(ours.len(), 1);
        assert_same(&ours[0], &theirs, name);
        let signer = unwrap_gift_wraps_with_signer(&keys, &[wrap], &UnwrapOptions::default());
        assert_same(&signer[0], &theirs, name);

        let expected = &v["expected"];
        if s(v, "encryption") == "nip44-v2" {
            let gift = ours[0].as_ref().expect("v2 vector opens");
            assert_eq!(gift.rumor.content, s(expected, "rumor_content"), "{name}");
            assert_eq!(
                gift.rumor.kind.as_u16() as u64,
                expected["rumor_kind"].as_u64().expect("kind"),
                "{name}"
            );
            if let Some(id) = expected["rumor_id"].as_str() {
                assert_eq!(
                    gift.rumor.id.map(|i| i.to_hex()),
                    Some(id.to_string()),
                    "{name}"
                );
            }
            if let Some(rumor) = v.get("rumor") {
                assert_eq!(gift.sender.to_hex(), s(rumor, "pubkey"), "{name}");
            }
            opened += 1;
        } else {
            // Legacy drafts: nostr cannot decrypt them; we must fail the same way, at
            // the seal layer.
            let e = ours[0].as_ref().expect_err("legacy vector must not open");
            assert_eq!(e.step(), Step::SealDecrypt, "{name}: {e}");
            legacy += 1;
        }
    }
    assert_eq!((opened, legacy), (3, 6));
}

#[cfg_attr(
    nostr_verify_no_data,
    ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
)]
#[test]
fn spec_example_passes_strict_checks_and_seal_matches() {
    let Some(doc) = json_file("nip59-vectors.json") else {
        return;
    };
    let v = &doc["vectors"][0];
    assert_eq!(s(v, "name"), "nip59-spec-example");
    let keys = Keys::parse(s(v, "recipient_sk")).expect("key");
    let wrap = Event::from_json(v["gift_wrap"].to_string()).expect("wrap");
    // The published seal is what the wrap decrypts to.
    let seal_json = nostr::nips::nip44::decrypt(keys.secret_key(), &wrap.pubkey, &wrap.content)
        .expect("decrypts");
    let seal = Event::from_json(seal_json).expect("seal");
    let published = Event::from_json(v["seal"].to_string()).expect("published seal");
    assert_eq!(seal, published);
    let mut strict = GiftUnwrapper::with_options(keys, UnwrapOptions::default().strict(true));
    let out = strict.unwrap_gift_wraps(&[wrap]);
    assert!(out[0].is_ok(), "{:?}", out[0]);
}

// ------------------------------------------------------ NIP-44 through the cache

#[test]
fn nip44_vectors_through_cached_path() {
    let doc: Value = serde_json::from_str(&common::vector_file("nip44.vectors.json"))
        .expect("nip44.vectors.json is JSON");
    let valid = &doc["v2"]["valid"];
    let invalid = &doc["v2"]["invalid"];

    // encrypt_decrypt: both directions, twice (miss, then hit), and against nostr.
    let mut count = 0;
    for v in valid["encrypt_decrypt"]
        .as_array()
        .expect("encrypt_decrypt")
    {
        let k1 = Keys::parse(s(v, "sec1")).expect("sec1");
        let k2 = Keys::parse(s(v, "sec2")).expect("sec2");
        let payload = s(v, "payload");
        let plaintext = s(v, "plaintext");
        let ck = ConversationKey::from_slice(&hex32(s(v, "conversation_key"))).expect("ck");
        assert_eq!(
            nip44_decrypt_with_key(&ck, payload).as_deref(),
            Ok(plaintext)
        );
        for (me, them) in [(&k2, &k1), (&k1, &k2)] {
            let mut u = GiftUnwrapper::new(me.clone());
            for round in 0..2 {
                let got = u.nip44_decrypt(&them.public_key(), payload);
                assert_eq!(got.as_deref(), Ok(plaintext), "round {round}");
            }
            let st = u.cache_stats();
            assert_eq!((st.len, st.hits, st.misses), (1, 1, 1));
            // Tampered payloads: every error equal to nostr's own decrypt.
            for pos in [
                0,
                1,
                2,
                5,
                30,
                44,
                payload.len() / 2,
                payload.len() - 5,
                payload.len() - 1,
            ] {
                for repl in ['A', '/', '=', '*', 'z'] {
                    let mut bad: Vec<char> = payload.chars().collect();
                    if pos >= bad.len() || bad[pos] == repl {
                        continue;
                    }
                    bad[pos] = repl;
                    let bad: String = bad.into_iter().collect();
                    let ours = u.nip44_decrypt(&them.public_key(), &bad);
                    let theirs =
                        nostr::nips::nip44::decrypt(me.secret_key(), &them.public_key(), &bad);
                    assert_eq!(ours, theirs, "pos {pos} repl {repl}");
                    assert_eq!(nip44_decrypt_with_key(&ck, &bad), theirs);
                }
            }
            for bad in [
                String::new(),
                "A".into(),
                "Ag==".into(),
                payload[..payload.len() - 4].to_string(),
                format!("{payload}AAAA"),
            ] {
                let ours = u.nip44_decrypt(&them.public_key(), &bad);
                let theirs = nostr::nips::nip44::decrypt(me.secret_key(), &them.public_key(), &bad);
                assert!(theirs.is_err());
                assert_eq!(ours, theirs, "{bad:?}");
            }
        }
        count += 1;
    }
    assert!(count >= 10);

    // get_conversation_key: the cached key must be the published one. Encrypt a probe
    // under the published key; the cached path must open it.
    for (j, v) in valid["get_conversation_key"]
        .as_array()
        .expect("gck")
        .iter()
        .enumerate()
    {
        let keys = Keys::parse(s(v, "sec1")).expect("sec1");
        let pk = PublicKey::from_hex(s(v, "pub2")).expect("pub2");
        let ck = ConversationKey::from_slice(&hex32(s(v, "conversation_key"))).expect("ck");
        let probe = format!("probe {j}");
        let bytes =
            v2::encrypt_to_bytes_with_nonce(&ck, probe.as_bytes(), [j as u8; 32]).expect("enc");
        let payload = STANDARD.encode(bytes);
        let mut u = GiftUnwrapper::new(keys);
        assert_eq!(
            u.nip44_decrypt(&pk, &payload).as_deref(),
            Ok(probe.as_str()),
            "vector {j}"
        );
    }

    // Long messages (65535 bytes and more): round trip through the key-based path.
    for v in valid["encrypt_decrypt_long_msg"].as_array().expect("long") {
        let ck = ConversationKey::from_slice(&hex32(s(v, "conversation_key"))).expect("ck");
        let plaintext = s(v, "pattern").repeat(v["repeat"].as_u64().expect("repeat") as usize);
        assert_eq!(
            hex::encode(Sha256::digest(&plaintext)),
            s(v, "plaintext_sha256")
        );
        let bytes =
            v2::encrypt_to_bytes_with_nonce(&ck, plaintext.as_bytes(), hex32(s(v, "nonce")))
                .expect("enc");
        let payload = STANDARD.encode(bytes);
        assert_eq!(
            hex::encode(Sha256::digest(&payload)),
            s(v, "payload_sha256")
        );
        assert_eq!(
            nip44_decrypt_with_key(&ck, &payload).as_deref(),
            Ok(plaintext.as_str())
        );
    }

    // invalid.decrypt: rejected.
    let mut rejected = 0;
    for v in invalid["decrypt"].as_array().expect("invalid decrypt") {
        let ck = ConversationKey::from_slice(&hex32(s(v, "conversation_key"))).expect("ck");
        let r = nip44_decrypt_with_key(&ck, s(v, "payload"));
        assert!(r.is_err(), "{}: {r:?}", s(v, "note"));
        rejected += 1;
    }
    assert_eq!(rejected, 12);

    // invalid.get_conversation_key: a bad secret key never becomes `Keys`; a public key
    // off the curve fails in the cached path exactly as in nostr, and is not cached.
    let probe_payload = s(&valid["encrypt_decrypt"][0], "payload");
    let mut bad_keys = 0;
    for v in invalid["get_conversation_key"]
        .as_array()
        .expect("invalid gck")
    {
        let Ok(keys) = Keys::parse(s(v, "sec1")) else {
            bad_keys += 1;
            continue;
        };
        let pk = PublicKey::from_hex(s(v, "pub2")).expect("hex parses");
        let mut u = GiftUnwrapper::new(keys.clone());
        let ours = u.nip44_decrypt(&pk, probe_payload);
        let theirs = nostr::nips::nip44::decrypt(keys.secret_key(), &pk, probe_payload);
        assert!(theirs.is_err(), "{}", s(v, "note"));
        assert_eq!(ours, theirs, "{}", s(v, "note"));
        assert_eq!(u.cache_stats().len, 0);
        bad_keys += 1;
    }
    assert_eq!(bad_keys, 8);
}

// ------------------------------------------------------------ generated wraps

struct World {
    me: Keys,
    other: Keys,
    senders: Vec<Keys>,
}

fn encrypt(from: &Keys, to: &PublicKey, plaintext: &[u8]) -> String {
    nostr::nips::nip44::encrypt(
        from.secret_key(),
        to,
        plaintext,
        nostr::nips::nip44::Version::V2,
    )
    .expect("encrypt")
}

fn signed(keys: &Keys, kind: Kind, content: String, tags: Vec<Tag>) -> Event {
    EventBuilder::new(kind, content)
        .tags(tags)
        .finalize(keys)
        .expect("sign")
}

/// A wrap signed by a fresh one-time key around arbitrary (encrypted) seal bytes.
fn wrap_bytes(to: &PublicKey, seal_bytes: &[u8], p_tag: bool) -> Event {
    let one_time = Keys::generate();
    let tags = if p_tag {
        vec![Tag::public_key(*to)]
    } else {
        vec![]
    };
    signed(
        &one_time,
        Kind::GiftWrap,
        encrypt(&one_time, to, seal_bytes),
        tags,
    )
}

/// A seal from `sender` around arbitrary rumor bytes.
fn seal_bytes(sender: &Keys, to: &PublicKey, rumor: &[u8], kind: Kind, tags: Vec<Tag>) -> Event {
    signed(sender, kind, encrypt(sender, to, rumor), tags)
}

fn rumor_json(author: &PublicKey, text: &str) -> String {
    let mut r = EventBuilder::new(Kind::PrivateDirectMessage, text).finalize_unsigned(*author);
    r.ensure_id();
    r.as_json()
}

fn flip_hex_event_id(e: &mut Event) {
    let mut b = e.id.to_bytes();
    b[7] ^= 0x10;
    e.id = EventId::from_byte_array(b);
}

fn flip_sig(e: &mut Event, byte: usize) {
    let mut b = e.sig.to_bytes();
    b[byte] ^= 0x01;
    e.sig = Signature::from_byte_array(b);
}

/// Case `c` of the generated corpus: the wrap and the step we expect it to fail at
/// (`None`: opens). `strict` is the step strict mode adds, if any.
fn make_case(w: &World, c: usize, n: usize) -> (Event, Option<Step>, Option<Step>) {
    let me = w.me.public_key();
    let sender = &w.senders[n % w.senders.len()];
    let text = format!("message {n} from sender {}", n % w.senders.len());
    let good_rumor = rumor_json(&sender.public_key(), &text);
    let good_seal = || seal_bytes(sender, &me, good_rumor.as_bytes(), Kind::Seal, vec![]);
    match c {
        // Valid, built by nostr's own builder.
        0..=2 => {
            let rumor = EventBuilder::new(Kind::PrivateDirectMessage, text.clone())
                .finalize_unsigned(sender.public_key());
            let wrap = GiftWrapBuilder::new(me, rumor)
                .finalize(sender)
                .expect("wrap");
            (wrap, None, None)
        }
        // Valid, hand-built (same structure).
        3 => (
            wrap_bytes(&me, good_seal().as_json().as_bytes(), true),
            None,
            None,
        ),
        // Wrap content altered after signing: the id no longer matches.
        4 => {
            let mut wrap = wrap_bytes(&me, good_seal().as_json().as_bytes(), true);
            let mut chars: Vec<char> = wrap.content.chars().collect();
            let mid = chars.len() / 2;
            chars[mid] = if chars[mid] == 'A' { 'B' } else { 'A' };
            wrap.content = chars.into_iter().collect();
            (wrap, Some(Step::WrapInvalidId), None)
        }
        // Wrap content altered, then re-signed by the one-time key: MAC fails.
        5 => {
            let one_time = Keys::generate();
            let mut content = encrypt(&one_time, &me, good_seal().as_json().as_bytes());
            let mut chars: Vec<char> = content.chars().collect();
            let mid = chars.len() / 2;
            chars[mid] = if chars[mid] == 'A' { 'B' } else { 'A' };
            content = chars.into_iter().collect();
            let wrap = signed(
                &one_time,
                Kind::GiftWrap,
                content,
                vec![Tag::public_key(me)],
            );
            (wrap, Some(Step::SealDecrypt), None)
        }
        // Wrap id replaced.
        6 => {
            let mut wrap = wrap_bytes(&me, good_seal().as_json().as_bytes(), true);
            flip_hex_event_id(&mut wrap);
            (wrap, Some(Step::WrapInvalidId), None)
        }
        // Wrap signature altered (in R, then in s).
        7 | 8 => {
            let mut wrap = wrap_bytes(&me, good_seal().as_json().as_bytes(), true);
            flip_sig(&mut wrap, if c == 7 { 3 } else { 50 });
            (wrap, Some(Step::WrapInvalidSignature), None)
        }
        // Seal content altered after the sender signed it.
        9 => {
            let mut seal = good_seal();
            seal.content.insert(10, 'x');
            (
                wrap_bytes(&me, seal.as_json().as_bytes(), true),
                Some(Step::SealInvalidId),
                None,
            )
        }
        // Seal signature altered.
        10 => {
            let mut seal = good_seal();
            flip_sig(&mut seal, 40);
            (
                wrap_bytes(&me, seal.as_json().as_bytes(), true),
                Some(Step::SealInvalidSignature),
                None,
            )
        }
        // Seal id altered.
        11 => {
            let mut seal = good_seal();
            flip_hex_event_id(&mut seal);
            (
                wrap_bytes(&me, seal.as_json().as_bytes(), true),
                Some(Step::SealInvalidId),
                None,
            )
        }
        // Seal content tampered and re-signed by the sender: rumor MAC fails.
        12 => {
            let mut content = encrypt(sender, &me, good_rumor.as_bytes());
            let repl = if &content[60..61] == "Q" { "R" } else { "Q" };
            content.replace_range(60..61, repl);
            let seal = signed(sender, Kind::Seal, content, vec![]);
            (
                wrap_bytes(&me, seal.as_json().as_bytes(), true),
                Some(Step::RumorDecrypt),
                None,
            )
        }
        // Seal signed by someone other than the rumor's author (nostr's builder).
        13 => {
            let impostor = &w.senders[(n + 1) % w.senders.len()];
            let rumor = EventBuilder::new(Kind::PrivateDirectMessage, "spoofed")
                .finalize_unsigned(impostor.public_key());
            let wrap = GiftWrapBuilder::new(me, rumor)
                .finalize(sender)
                .expect("wrap");
            (wrap, Some(Step::SenderMismatch), None)
        }
        // A wrap for another recipient.
        14 => {
            let rumor = EventBuilder::new(Kind::PrivateDirectMessage, "not for you")
                .finalize_unsigned(sender.public_key());
            let wrap = GiftWrapBuilder::new(w.other.public_key(), rumor)
                .finalize(sender)
                .expect("wrap");
            // Strict mode stops it earlier, at the p tag.
            (wrap, Some(Step::SealDecrypt), Some(Step::StrictNotForUs))
        }
        // Not kind 1059 (a valid note; a would-be wrap with kind 4).
        15 => (
            signed(sender, Kind::TextNote, "hello".into(), vec![]),
            Some(Step::NotGiftWrap),
            None,
        ),
        16 => {
            let one_time = Keys::generate();
            let content = encrypt(&one_time, &me, good_seal().as_json().as_bytes());
            (
                signed(
                    &one_time,
                    Kind::EncryptedDirectMessage,
                    content,
                    vec![Tag::public_key(me)],
                ),
                Some(Step::NotGiftWrap),
                None,
            )
        }
        // Malformed JSON inside the wrap, and inside the seal.
        17 => (
            wrap_bytes(&me, b"{\"kind\":13, not json", true),
            Some(Step::SealParse),
            None,
        ),
        18 => (
            wrap_bytes(&me, b"{\"kind\":13}", true),
            Some(Step::SealParse),
            None,
        ),
        19 => {
            let seal = seal_bytes(sender, &me, b"[1,2,3]", Kind::Seal, vec![]);
            (
                wrap_bytes(&me, seal.as_json().as_bytes(), true),
                Some(Step::RumorParse),
                None,
            )
        }
        20 => {
            let seal = seal_bytes(sender, &me, b"{\"pubkey\":\"zz\"", Kind::Seal, vec![]);
            (
                wrap_bytes(&me, seal.as_json().as_bytes(), true),
                Some(Step::RumorParse),
                None,
            )
        }
        // Not UTF-8 inside the wrap, and inside the seal.
        21 => (
            wrap_bytes(&me, &[0x7b, 0xff, 0xfe, 0x7d], true),
            Some(Step::SealDecrypt),
            None,
        ),
        22 => {
            let seal = seal_bytes(sender, &me, &[0xc3, 0x28, 0x41], Kind::Seal, vec![]);
            (
                wrap_bytes(&me, seal.as_json().as_bytes(), true),
                Some(Step::RumorDecrypt),
                None,
            )
        }
        // Wrap content that is not a NIP-44 v2 payload (signed properly).
        23..=26 => {
            let content = match c {
                23 => "not base64 at all!".to_string(),
                24 => String::new(),
                25 => STANDARD.encode([1u8; 120]), // version 1
                _ => STANDARD.encode([2u8; 40]),   // too short
            };
            let one_time = Keys::generate();
            (
                signed(
                    &one_time,
                    Kind::GiftWrap,
                    content,
                    vec![Tag::public_key(me)],
                ),
                Some(Step::SealDecrypt),
                None,
            )
        }
        // nostr accepts these; strict mode does not.
        27 => {
            let seal = seal_bytes(sender, &me, good_rumor.as_bytes(), Kind::TextNote, vec![]);
            (
                wrap_bytes(&me, seal.as_json().as_bytes(), true),
                None,
                Some(Step::StrictSealKind),
            )
        }
        28 => {
            let tags = vec![Tag::public_key(me)];
            let seal = seal_bytes(sender, &me, good_rumor.as_bytes(), Kind::Seal, tags);
            (
                wrap_bytes(&me, seal.as_json().as_bytes(), true),
                None,
                Some(Step::StrictSealTags),
            )
        }
        29 => (
            wrap_bytes(&me, good_seal().as_json().as_bytes(), false),
            None,
            Some(Step::StrictNotForUs),
        ),
        30 => {
            // p tag naming someone else, but encrypted to us.
            let one_time = Keys::generate();
            let content = encrypt(&one_time, &me, good_seal().as_json().as_bytes());
            let tags = vec![Tag::public_key(w.other.public_key())];
            (
                signed(&one_time, Kind::GiftWrap, content, tags),
                None,
                Some(Step::StrictNotForUs),
            )
        }
        // A rumor whose id is wrong (nostr does not check it: it opens as given).
        31 => {
            let mut v: Value = serde_json::from_str(&good_rumor).expect("rumor json");
            v["id"] = Value::String("00".repeat(32));
            let seal = seal_bytes(sender, &me, v.to_string().as_bytes(), Kind::Seal, vec![]);
            (wrap_bytes(&me, seal.as_json().as_bytes(), true), None, None)
        }
        // Seal whose signer key is off the curve, with a matching id: the signature
        // check fails.
        32 => {
            let mut seal = good_seal();
            let mut pk = [0u8; 32];
            pk[31] = 5; // x = 5: 5^3 + 7 = 132 is not a square mod p
            seal.pubkey = PublicKey::from_byte_array(pk);
            seal.id = EventId::compute(
                &seal.pubkey,
                &seal.created_at,
                &seal.kind,
                &seal.tags,
                &seal.content,
            );
            (
                wrap_bytes(&me, seal.as_json().as_bytes(), true),
                Some(Step::SealInvalidSignature),
                None,
            )
        }
        _ => unreachable!("case {c}"),
    }
}

const CASES: usize = 33;

fn world() -> World {
    World {
        me: Keys::generate(),
        other: Keys::generate(),
        senders: (0..5).map(|_| Keys::generate()).collect(),
    }
}

fn corpus(w: &World, n: usize) -> (Vec<Event>, Vec<Option<Step>>, Vec<Option<Step>>) {
    let mut wraps = Vec::with_capacity(n);
    let mut expect = Vec::with_capacity(n);
    let mut strict = Vec::with_capacity(n);
    for i in 0..n {
        // Every case at least once, then mostly valid traffic with each case mixed in.
        let c = if i < CASES {
            i
        } else if i % 3 == 0 {
            (i / 3) % CASES
        } else {
            i % 3
        };
        let (wrap, e, st) = make_case(w, c, i);
        wraps.push(wrap);
        expect.push(e);
        strict.push(st);
    }
    // A duplicate of the first valid wrap and of a bad one.
    wraps.push(wraps[0].clone());
    expect.push(expect[0]);
    strict.push(strict[0]);
    wraps.push(wraps[6].clone());
    expect.push(expect[6]);
    strict.push(strict[6]);
    (wraps, expect, strict)
}

fn check_all(
    label: &str,
    wraps: &[Event],
    ours: &[Outcome],
    theirs: &[Result<UnwrappedGift, nostr::error::Error>],
    expect: &[Option<Step>],
) {
    assert_eq!(ours.len(), wraps.len(), "{label}");
    for i in 0..wraps.len() {
        assert_same(&ours[i], &theirs[i], &format!("{label} wrap {i}"));
        assert_eq!(
            ours[i].as_ref().err().map(|e| e.step()),
            expect[i],
            "{label} wrap {i}"
        );
    }
}

#[test]
fn differential_against_from_gift_wrap() {
    let w = world();
    let n = 1500 * common::scale();
    let (wraps, expect, _) = corpus(&w, n);
    let theirs: Vec<_> = wraps
        .iter()
        .map(|x| UnwrappedGift::from_gift_wrap(&w.me, x))
        .collect();
    let ok = theirs.iter().filter(|r| r.is_ok()).count();
    assert!(
        ok > n / 2 && ok < wraps.len(),
        "corpus mixes good and bad: {ok}"
    );

    // The free function (all cores).
    check_all(
        "free fn",
        &wraps,
        &unwrap_gift_wraps(&w.me, &wraps),
        &theirs,
        &expect,
    );

    // A reusable unwrapper, one thread, used twice: the second call hits the cache.
    let mut u = GiftUnwrapper::with_options(w.me.clone(), UnwrapOptions::default().threads(1));
    check_all(
        "1 thread",
        &wraps,
        &u.unwrap_gift_wraps(&wraps),
        &theirs,
        &expect,
    );
    let first = u.cache_stats();
    assert_eq!(first.len, 5, "one key per sender");
    check_all(
        "1 thread again",
        &wraps,
        &u.unwrap_gift_wraps(&wraps),
        &theirs,
        &expect,
    );
    let second = u.cache_stats();
    assert_eq!(second.misses, first.misses, "no new ECDH for known senders");
    assert!(second.hits > first.hits);

    // Cache smaller than the sender set (evictions), and no cache at all, 3 threads.
    for cap in [0, 2] {
        let opts = UnwrapOptions::default().cache_capacity(cap).threads(3);
        let mut u = GiftUnwrapper::with_options(w.me.clone(), opts);
        for round in 0..2 {
            let label = format!("cap {cap} round {round}");
            check_all(
                &label,
                &wraps,
                &u.unwrap_gift_wraps(&wraps),
                &theirs,
                &expect,
            );
        }
        assert!(u.cache_stats().len <= cap);
    }
    // Small slices and single wraps (no threads, no batching).
    for (k, chunk) in wraps.chunks(7).enumerate().take(30) {
        let start = k * 7;
        check_all(
            "chunk",
            chunk,
            &unwrap_gift_wraps(&w.me, chunk),
            &theirs[start..start + chunk.len()],
            &expect[start..start + chunk.len()],
        );
    }
    assert!(unwrap_gift_wraps(&w.me, &[]).is_empty());
}

/// Same outcome from two of our paths: equal `Ok` values, or errors at the same step with
/// the same nostr error.
fn assert_equal_outcomes(a: &[Outcome], b: &[Outcome], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        match (x, y) {
            (Ok(x), Ok(y)) => assert_eq!(x, y, "{what} wrap {i}"),
            (Err(x), Err(y)) => assert_eq!(
                (x.step(), x.as_nostr()),
                (y.step(), y.as_nostr()),
                "{what} wrap {i}"
            ),
            (x, y) => panic!("{what} wrap {i}: {x:?} vs {y:?}"),
        }
    }
}

/// The multi-thread path, forced on inputs of any size (`always_split`), gives exactly the
/// one-thread path's outcomes and nostr's, on valid, tampered, wrong-recipient and malformed
/// wraps: whole corpora, small slices, a warm cache, strict mode, and the signer paths.
#[test]
fn forced_multi_thread_path_matches_one_thread_and_nostr() {
    let w = world();
    // More than 256 wraps: the wrap layer's signature batch goes through the two-thread
    // verifier as well.
    let (wraps, expect, strict) = corpus(&w, 400 * common::scale());
    let theirs: Vec<_> = wraps
        .iter()
        .map(|x| UnwrappedGift::from_gift_wrap(&w.me, x))
        .collect();
    let mut one = GiftUnwrapper::with_options(w.me.clone(), UnwrapOptions::default().threads(1));
    let want: Vec<Outcome> = one.unwrap_gift_wraps(&wraps);
    check_all("one thread", &wraps, &want, &theirs, &expect);
    let one_stats = one.cache_stats();

    for threads in [2, 3, 4] {
        let opts = UnwrapOptions::default().threads(threads).always_split(true);
        let mut u = GiftUnwrapper::with_options(w.me.clone(), opts);
        for round in 0..2 {
            let label = format!("{threads} threads forced, round {round}");
            let got = u.unwrap_gift_wraps(&wraps);
            check_all(&label, &wraps, &got, &theirs, &expect);
            assert_equal_outcomes(&got, &want, &label);
        }
        // One key derived per sender, on the first call only, however many threads.
        let stats = u.cache_stats();
        assert_eq!(stats.len, one_stats.len, "{threads} threads");
        assert_eq!(stats.misses, one_stats.misses, "{threads} threads");
        assert_eq!(
            stats.hits,
            one_stats.hits + one_stats.misses,
            "{threads} threads"
        );

        // Without a cache: every call derives again, outcomes unchanged.
        let mut nocache = GiftUnwrapper::with_options(w.me.clone(), opts.cache_capacity(0));
        let got = nocache.unwrap_gift_wraps(&wraps);
        assert_equal_outcomes(&got, &want, &format!("{threads} threads, no cache"));

        // Small slices (one wrap to a dozen): forced through the threads as well.
        let mut start = 0;
        for len in (1..=12).cycle().take(40) {
            if start + len > wraps.len() {
                break;
            }
            let part = &wraps[start..start + len];
            let label = format!("{threads} threads forced, wraps {start}..{}", start + len);
            let got = GiftUnwrapper::with_options(w.me.clone(), opts).unwrap_gift_wraps(part);
            check_all(
                &label,
                part,
                &got,
                &theirs[start..start + len],
                &expect[start..start + len],
            );
            start += len;
        }

        // Strict mode, forced: the same as strict mode on one thread.
        let strict_one = GiftUnwrapper::with_options(
            w.me.clone(),
            UnwrapOptions::default().threads(1).strict(true),
        )
        .unwrap_gift_wraps(&wraps);
        let strict_forced =
            GiftUnwrapper::with_options(w.me.clone(), opts.strict(true)).unwrap_gift_wraps(&wraps);
        assert_equal_outcomes(&strict_forced, &strict_one, "strict, forced");
        for (i, st) in strict.iter().enumerate() {
            if let Some(step) = st {
                assert_eq!(
                    strict_forced[i].as_ref().err().map(|e| e.step()),
                    Some(*step),
                    "strict wrap {i}"
                );
            }
        }

        // The signer path, forced.
        let signer = unwrap_gift_wraps_with_signer(&w.me, &wraps, &opts);
        check_all("signer, forced", &wraps, &signer, &theirs, &expect);
    }
}

#[test]
fn strict_mode_rejects_only_what_it_adds() {
    let w = world();
    let (wraps, expect, strict) = corpus(&w, 200);
    let theirs: Vec<_> = wraps
        .iter()
        .map(|x| UnwrappedGift::from_gift_wrap(&w.me, x))
        .collect();
    let mut u = GiftUnwrapper::with_options(w.me.clone(), UnwrapOptions::default().strict(true));
    let ours = u.unwrap_gift_wraps(&wraps);
    let mut added = 0;
    for i in 0..wraps.len() {
        match strict[i] {
            Some(step) => {
                let e = ours[i].as_ref().expect_err("strict rejects");
                assert_eq!(e.step(), step, "wrap {i}");
                assert_eq!(e.kind(), ErrorKind::Invalid);
                assert_eq!(theirs[i].is_ok(), expect[i].is_none(), "wrap {i}");
                if theirs[i].is_ok() {
                    added += 1;
                }
            }
            None => {
                assert_same(&ours[i], &theirs[i], &format!("strict wrap {i}"));
                assert_eq!(ours[i].as_ref().err().map(|e| e.step()), expect[i]);
            }
        }
    }
    assert!(added >= 4);

    // With a signer, strict needs the recipient; without it, it fails closed.
    let opts = UnwrapOptions::default().strict(true);
    let closed = unwrap_gift_wraps_with_signer(&w.me, &wraps[..3], &opts);
    assert!(closed
        .iter()
        .all(|r| r.as_ref().is_err_and(|e| e.step() == Step::StrictNotForUs)));
    let opts = opts.recipient(w.me.public_key());
    let signer = unwrap_gift_wraps_with_signer(&w.me, &wraps, &opts);
    for i in 0..wraps.len() {
        match (&signer[i], &ours[i]) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(b)) => assert_eq!((a.step(), a.as_nostr()), (b.step(), b.as_nostr())),
            (a, b) => panic!("wrap {i}: {a:?} vs {b:?}"),
        }
    }
}

/// A signer that never exposes its key and has its own error type.
#[derive(Debug)]
struct Bunker(Keys);

#[derive(Debug)]
struct BunkerError(String);

impl std::fmt::Display for BunkerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bunker refused: {}", self.0)
    }
}

impl std::error::Error for BunkerError {}

impl Nip44 for Bunker {
    type Error = BunkerError;
    fn nip44_encrypt(&self, pk: &PublicKey, content: &str) -> Result<String, BunkerError> {
        self.0
            .nip44_encrypt(pk, content)
            .map_err(|e| BunkerError(e.to_string()))
    }
    fn nip44_decrypt(&self, pk: &PublicKey, payload: &str) -> Result<String, BunkerError> {
        self.0
            .nip44_decrypt(pk, payload)
            .map_err(|e| BunkerError(e.to_string()))
    }
}

impl AsyncNip44 for Bunker {
    type Error = BunkerError;
    fn nip44_encrypt_async<'a>(
        &'a self,
        pk: &'a PublicKey,
        content: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, BunkerError>> + Send + 'a>>
    {
        Box::pin(async move { Nip44::nip44_encrypt(self, pk, content) })
    }
    fn nip44_decrypt_async<'a>(
        &'a self,
        pk: &'a PublicKey,
        payload: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, BunkerError>> + Send + 'a>>
    {
        Box::pin(async move { Nip44::nip44_decrypt(self, pk, payload) })
    }
}

#[test]
fn signer_variants_match_nostr() {
    let w = world();
    let (wraps, expect, _) = corpus(&w, 300 * common::scale());
    let bunker = Bunker(w.me.clone());
    let theirs: Vec<_> = wraps
        .iter()
        .map(|x| UnwrappedGift::from_gift_wrap(&bunker, x))
        .collect();
    for threads in [1, 2] {
        let opts = UnwrapOptions::default().threads(threads);
        let ours = unwrap_gift_wraps_with_signer(&bunker, &wraps, &opts);
        check_all("sync signer", &wraps, &ours, &theirs, &expect);
    }
    // The bunker's own message survives, wrapped as nostr wraps it.
    let bad = expect
        .iter()
        .position(|e| *e == Some(Step::SealDecrypt))
        .expect("a seal failure");
    let e = unwrap_gift_wraps_with_signer(&bunker, &wraps[bad..=bad], &UnwrapOptions::default());
    let msg = e[0].as_ref().expect_err("fails").to_string();
    assert!(msg.contains("bunker refused"), "{msg}");

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let ours = rt.block_on(unwrap_gift_wraps_with_async_signer(
        &bunker,
        &wraps,
        &UnwrapOptions::default(),
    ));
    let theirs_async: Vec<_> = rt.block_on(async {
        let mut v = Vec::new();
        for x in &wraps {
            v.push(UnwrappedGift::from_gift_wrap_async(&bunker, x).await);
        }
        v
    });
    check_all("async signer", &wraps, &ours, &theirs_async, &expect);
}

#[test]
fn errors_name_the_step_and_convert_to_nostr() {
    let w = world();
    let (wraps, expect, _) = corpus(&w, CASES);
    let ours = unwrap_gift_wraps(&w.me, &wraps);
    for (r, e) in ours.into_iter().zip(expect) {
        if let Some(step) = e {
            let err = r.expect_err("fails");
            let text = err.to_string();
            assert!(text.starts_with(step.describe()), "{text}");
            assert!(std::error::Error::source(&err).is_some());
            let theirs: nostr::error::Error = err.into();
            assert!(text.ends_with(&theirs.to_string()), "{text}");
        }
    }
}
