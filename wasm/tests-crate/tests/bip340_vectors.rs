//! The official BIP-340 test vectors through libsecp256k1 (the C library compiled into the same
//! module), `Verifier::verify_one` and `Verifier::verify_batch`, every `FALSE` row included.
//!
//! Inside wasm32 these run in node and in headless Chromium (`.ci/wasm.sh`); elsewhere as
//! ordinary tests. The vectors are compiled in, since a wasm module has no file system.

#![allow(unreachable_pub, missing_docs)]

#[path = "../../../tests/common/sigs.rs"]
mod sigs;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use nostr_verify::{SigRef, Verifier};
use secp256k1::{schnorr, Secp256k1, XOnlyPublicKey};

const VECTORS: &str = include_str!("../../../tests/data/bip340-test-vectors.csv");

struct Vector {
    index: usize,
    pk: Vec<u8>,
    msg: Vec<u8>,
    sig: Vec<u8>,
    expected: bool,
}

fn vectors() -> Vec<Vector> {
    let out: Vec<Vector> = VECTORS
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            Vector {
                index: f[0].parse().expect("index"),
                pk: hex::decode(f[2]).expect("pk hex"),
                msg: hex::decode(f[4]).expect("msg hex"),
                sig: hex::decode(f[5]).expect("sig hex"),
                expected: f[6] == "TRUE",
            }
        })
        .collect();
    assert_eq!(out.len(), 19, "19 official vectors");
    out
}

/// libsecp256k1's verdict, straight from the `secp256k1` crate (any message length).
fn libsecp(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    let secp = Secp256k1::verification_only();
    let (Ok(pk), Ok(sig)) = (
        XOnlyPublicKey::from_slice(pk),
        schnorr::Signature::from_slice(sig),
    ) else {
        return false;
    };
    secp.verify_schnorr(&sig, msg, &pk).is_ok()
}

#[test]
fn libsecp256k1_in_this_module_agrees_with_every_vector() {
    for t in vectors() {
        assert_eq!(
            libsecp(&t.pk, &t.msg, &t.sig),
            t.expected,
            "vector {} (libsecp256k1)",
            t.index
        );
    }
}

#[test]
fn verifier_agrees_with_every_vector_alone_and_in_batches() {
    let mut v = Verifier::new();
    let mut r = sigs::rng(340);
    let filler = sigs::batch(&mut r, 9, sigs::Keys::Eight);
    let mut usable = 0;
    let mut ok = Vec::new();
    for t in vectors() {
        let (Ok(pk), Ok(msg), Ok(sig)) = (
            <[u8; 32]>::try_from(t.pk.as_slice()),
            <[u8; 32]>::try_from(t.msg.as_slice()),
            <[u8; 64]>::try_from(t.sig.as_slice()),
        ) else {
            // Vectors 15-18 have messages of 0, 1, 17 and 100 bytes; Nostr ids are 32.
            assert!((15..=18).contains(&t.index), "vector {} unusable", t.index);
            continue;
        };
        usable += 1;
        let s = SigRef {
            pubkey: &pk,
            msg: &msg,
            sig: &sig,
        };
        assert_eq!(
            nostr_verify::verify_one(&s),
            t.expected,
            "vector {}",
            t.index
        );
        assert_eq!(
            v.verify_one(&s),
            t.expected,
            "vector {} (cold key)",
            t.index
        );
        assert_eq!(
            v.verify_one(&s),
            t.expected,
            "vector {} (cached key)",
            t.index
        );
        // At every position of a batch of valid signatures (the equation path from 4 on).
        for n in [4usize, 10] {
            for pos in 0..n {
                let mut refs: Vec<SigRef<'_>> =
                    filler[..n - 1].iter().map(sigs::Owned::as_ref).collect();
                refs.insert(pos, s);
                let all = v.verify_batch(&refs, &mut ok);
                for (i, &got) in ok.iter().enumerate() {
                    let want = if i == pos { t.expected } else { true };
                    assert_eq!(got, want, "vector {} at {pos} of {n}: verdict {i}", t.index);
                }
                assert_eq!(all, t.expected, "vector {} at {pos} of {n}", t.index);
            }
        }
    }
    assert_eq!(usable, 15, "15 vectors with 32-byte messages");
}
