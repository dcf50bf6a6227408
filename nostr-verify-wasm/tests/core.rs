//! The plain-Rust core of the bindings against libsecp256k1 (natively and inside wasm32):
//! `verify_signatures_with` on random and mutated batches, its length checks, and
//! `verify_packed_events` on records packed as the JavaScript side packs them.

#![allow(unreachable_pub, missing_docs)]

#[path = "../../tests/common/sigs.rs"]
mod sigs;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use nostr_verify::Verifier;
use nostr_verify_wasm::verdict::{INVALID_ID, INVALID_SIG, MALFORMED, VALID};
use nostr_verify_wasm::{
    verify_packed_events, verify_packed_events_detailed, verify_signatures_with, LengthMismatch,
    SeenSignatures,
};
use rand::RngCore;
use secp256k1::{schnorr, Keypair, Secp256k1, XOnlyPublicKey};
use sha2::{Digest, Sha256};
use sigs::{Keys, Owned, ALL_CORRUPTIONS};

fn libsecp(o: &Owned) -> bool {
    let secp = Secp256k1::verification_only();
    let Ok(pk) = XOnlyPublicKey::from_byte_array(&o.pk) else {
        return false;
    };
    secp.verify_schnorr(&schnorr::Signature::from_byte_array(o.sig), &o.msg, &pk)
        .is_ok()
}

fn flat(b: &[Owned]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    (
        b.iter().flat_map(|o| o.pk).collect(),
        b.iter().flat_map(|o| o.msg).collect(),
        b.iter().flat_map(|o| o.sig).collect(),
    )
}

fn check(v: &mut Verifier, b: &[Owned], what: &str) {
    let (p, m, s) = flat(b);
    let got = verify_signatures_with(v, &p, &m, &s).expect("lengths match");
    let want: Vec<u8> = b.iter().map(|o| u8::from(libsecp(o))).collect();
    assert_eq!(got, want, "{what}");
}

#[test]
fn signatures_random_and_mutated_batches() {
    let mut r = sigs::rng(11);
    let mut v = Verifier::new();
    check(&mut v, &[], "empty");
    for n in [1usize, 3, 4, 17, 64, 130] {
        for keys in [Keys::One, Keys::Eight, Keys::Distinct] {
            let mut b = sigs::batch(&mut r, n, keys);
            check(&mut v, &b, &format!("valid {n} {keys:?}"));
            let bad = 1 + (r.next_u32() as usize) % n.min(5);
            for _ in 0..bad {
                let i = (r.next_u32() as usize) % n;
                let c = ALL_CORRUPTIONS[(r.next_u32() as usize) % ALL_CORRUPTIONS.len()];
                sigs::corrupt(&mut r, &mut b, i, c);
            }
            check(&mut v, &b, &format!("{bad} mutated of {n} {keys:?}"));
            b.extend_from_slice(&b.clone()[..n.min(3)]);
            check(&mut v, &b, &format!("with duplicates, {n} {keys:?}"));
        }
    }
}

#[test]
fn signatures_length_mismatches_are_errors() {
    let mut v = Verifier::new();
    for (p, m, s) in [
        (31usize, 32usize, 64usize),
        (32, 31, 64),
        (32, 32, 63),
        (32, 32, 128),
        (64, 32, 128),
        (0, 32, 0),
        (0, 0, 64),
        (33, 33, 66),
    ] {
        let err = verify_signatures_with(&mut v, &vec![1; p], &vec![2; m], &vec![3; s])
            .expect_err("mismatched lengths accepted");
        assert_eq!(
            err,
            LengthMismatch {
                pubkeys: p,
                msgs: m,
                sigs: s
            }
        );
        let text = err.to_string();
        assert!(
            text.contains("n*32") && text.contains(&format!("got {p}, {m} and {s} bytes")),
            "{text}"
        );
    }
}

/// A record as the JavaScript packer writes it, for a serialization given as a string (the
/// pubkey is read from it).
fn record(id: &str, sig: &str, json: &str) -> Vec<u8> {
    [id, sig, json].concat().into_bytes()
}

/// A signed event's (id hex, pubkey hex, sig hex, serialization).
fn event(r: &mut impl RngCore, kp: &Keypair, content: &str) -> (String, String, String, String) {
    let pk = hex::encode(kp.x_only_public_key().0.serialize());
    event_as(r, kp, content, &pk)
}

/// [`event`] with `pk` written into the serialization as the pubkey, signed by `kp` all the
/// same (an id that matches its serialization, a signature valid for `kp`'s key).
fn event_as(
    r: &mut impl RngCore,
    kp: &Keypair,
    content: &str,
    pk: &str,
) -> (String, String, String, String) {
    let pk = pk.to_string();
    let created = 1_700_000_000 + (r.next_u32() % 1_000_000);
    let json = format!("[0,\"{pk}\",{created},1,[[\"p\",\"{pk}\"],[\"t\",\"x\"]],\"{content}\"]");
    let id: [u8; 32] = Sha256::digest(json.as_bytes()).into();
    let sig = Secp256k1::new().sign_schnorr_no_aux_rand(&id, kp);
    (hex::encode(id), pk, hex::encode(sig.to_byte_array()), json)
}

fn pack(records: &[Vec<u8>]) -> (Vec<u8>, Vec<u32>) {
    let mut bytes = Vec::new();
    let mut ends = Vec::new();
    for rec in records {
        bytes.extend_from_slice(rec);
        ends.push(bytes.len() as u32);
    }
    (bytes, ends)
}

#[test]
fn packed_events_ids_and_signatures() {
    let mut r = sigs::rng(12);
    let s = Secp256k1::new();
    let kps: Vec<Keypair> = (0..3).map(|_| Keypair::new(&s, &mut r)).collect();
    let mut v = Verifier::new();
    let mut records = Vec::new();
    let mut want = Vec::new();
    for i in 0..52 {
        let kp = &kps[i % 3];
        let content = format!("note {i} \\u00e9 ok");
        let (id, pk, sig, json) = event(&mut r, kp, &content);
        let (rec, w) = match i % 13 {
            // Untouched.
            0..=2 => (record(&id, &sig, &json), VALID),
            // The signature in uppercase hex is still decoded (nostr-tools' hexToBytes).
            3 => (record(&id, &sig.to_uppercase(), &json), VALID),
            // An uppercase id is not the lowercase hex of the hash.
            4 => (record(&id.to_uppercase(), &sig, &json), MALFORMED),
            // Content changed after signing: the id no longer matches.
            5 => (record(&id, &sig, &json.replace("note", "nope")), INVALID_ID),
            // A valid id under a signature of another message.
            6 => {
                let mut b = hex::decode(&sig).expect("hex");
                b[40] ^= 1;
                (record(&id, &hex::encode(b), &json), INVALID_SIG)
            }
            // Non-hex digits where the packer never puts them.
            7 => (record(&id, &sig.replacen('0', "g", 1), &json), MALFORMED),
            // Left empty by the packer (a malformed event).
            8 => (Vec::new(), MALFORMED),
            // The key in uppercase in the serialization, the id its hash and the signature
            // valid for the key: nostr-tools requires a lowercase key.
            9 => {
                let (id, _, sig, json) = event_as(&mut r, kp, &content, &pk.to_uppercase());
                (record(&id, &sig, &json), MALFORMED)
            }
            // A key with an escaped character in its place (64 units, JSON's `\n` among
            // the digits), the rest as before.
            10 => {
                let bad = format!("{}\\n", &pk[..62]);
                let (id, _, sig, json) = event_as(&mut r, kp, &content, &bad);
                (record(&id, &sig, &json), MALFORMED)
            }
            // A serialization that is not the packer's (no `[0,"` before the key).
            11 => (
                record(&id, &sig, &json.replacen("[0,", "[1,", 1)),
                MALFORMED,
            ),
            // Too short to hold the hex fields.
            _ => (id.clone().into_bytes(), MALFORMED),
        };
        records.push(rec);
        want.push(w);
    }
    let (bytes, ends) = pack(&records);
    let ones: Vec<u8> = want.iter().map(|&w| u8::from(w == VALID)).collect();
    assert_eq!(verify_packed_events(&mut v, &bytes, &ends), ones);
    assert_eq!(
        verify_packed_events_detailed(&mut v, None, &bytes, &ends),
        want
    );
    // With a seen set, twice: the second pass answers the valid ones from the set, the same.
    let mut seen = SeenSignatures::new(1024);
    for pass in 0..2 {
        let got = verify_packed_events_detailed(&mut v, Some(&mut seen), &bytes, &ends);
        assert_eq!(got, want, "pass {pass} with a seen set");
        assert_eq!(seen.len(), want.iter().filter(|&&w| w == VALID).count());
    }
    // Each alone too (below the batch threshold: libsecp256k1 directly).
    for (rec, (&w, &one)) in records.iter().zip(want.iter().zip(&ones)) {
        let (b, e) = pack(std::slice::from_ref(rec));
        assert_eq!(verify_packed_events(&mut v, &b, &e), [one]);
        assert_eq!(verify_packed_events_detailed(&mut v, None, &b, &e), [w]);
    }
}

/// The seen set answers for exactly the (id, sig) pairs it holds, after the id is recomputed:
/// a pair planted in it (never verified) is taken as valid, which shows the signature check is
/// skipped; a copy with other content, or the same id under another signature, is not.
#[test]
fn seen_set_skips_only_the_exact_pair_and_stays_bounded() {
    let mut r = sigs::rng(14);
    let kp = Keypair::new(&Secp256k1::new(), &mut r);
    let (id, _, sig, json) = event(&mut r, &kp, "seen");
    let mut bad_sig = hex::decode(&sig).expect("hex");
    bad_sig[10] ^= 1;
    let bad_sig_hex = hex::encode(&bad_sig);
    let mut v = Verifier::new();
    let rec = record(&id, &bad_sig_hex, &json);
    let (b, e) = pack(std::slice::from_ref(&rec));
    let mut seen = SeenSignatures::new(8);
    assert_eq!(
        verify_packed_events_detailed(&mut v, Some(&mut seen), &b, &e),
        [INVALID_SIG]
    );
    assert!(seen.is_empty(), "an invalid pair is never remembered");
    let id_bytes: [u8; 32] = hex::decode(&id).expect("hex").try_into().expect("32");
    let bad: [u8; 64] = bad_sig.clone().try_into().expect("64");
    seen.insert(&id_bytes, &bad);
    assert_eq!(
        verify_packed_events_detailed(&mut v, Some(&mut seen), &b, &e),
        [VALID]
    );
    // Other content under the same id and signature: the id is recomputed first.
    let other = record(&id, &bad_sig_hex, &json.replace("seen", "seem"));
    let (b2, e2) = pack(std::slice::from_ref(&other));
    assert_eq!(
        verify_packed_events_detailed(&mut v, Some(&mut seen), &b2, &e2),
        [INVALID_ID]
    );
    // The genuine signature is its own pair: checked, valid, then remembered.
    let good = record(&id, &sig, &json);
    let (b3, e3) = pack(std::slice::from_ref(&good));
    assert_eq!(
        verify_packed_events_detailed(&mut v, Some(&mut seen), &b3, &e3),
        [VALID]
    );
    assert_eq!(seen.len(), 2);
    // Bounded: never more than its capacity, the newest kept.
    for i in 0..50u8 {
        seen.insert(&[i; 32], &[i; 64]);
        assert!(seen.len() <= 8, "{} pairs in a set of 8", seen.len());
    }
    assert!(seen.contains(&[49; 32], &[49; 64]));
    assert!(!seen.contains(&[0; 32], &[0; 64]));
    // Capacity 0 or 1: remembers nothing.
    let mut none = SeenSignatures::new(1);
    none.insert(&[1; 32], &[1; 64]);
    assert!(none.is_empty());
}

#[test]
fn packed_events_bad_ends_give_zero_not_a_panic() {
    let mut r = sigs::rng(13);
    let kp = Keypair::new(&Secp256k1::new(), &mut r);
    let (id, _, sig, json) = event(&mut r, &kp, "x");
    let rec = record(&id, &sig, &json);
    let n = rec.len() as u32;
    let mut v = Verifier::new();
    assert_eq!(verify_packed_events(&mut v, &rec, &[n]), [1]);
    assert_eq!(verify_packed_events(&mut v, &rec, &[n + 1]), [0]);
    assert_eq!(verify_packed_events(&mut v, &rec, &[n, 5]), [1, 0]);
    assert_eq!(verify_packed_events(&mut v, &rec, &[]), Vec::<u8>::new());
    assert_eq!(verify_packed_events(&mut v, &[], &[0, 0]), [0, 0]);
}
