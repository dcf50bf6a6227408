//! `Verifier::verify_batch` against libsecp256k1's verdicts (the C library compiled into the
//! same module), on random and mutated batches that take every narrowing path: one invalid
//! signature, several, all, dense floods (the probe-first path), duplicates, invalid keys and
//! cancelling pairs.
//!
//! Inside wasm32 these run in node and in headless Chromium (`.ci/wasm.sh`); elsewhere as
//! ordinary tests. Seeds are fixed, so a failure reproduces.

#![allow(unreachable_pub, missing_docs)]

#[path = "../../../tests/common/sigs.rs"]
mod sigs;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use nostr_verify::Verifier;
use rand::RngCore;
use secp256k1::{schnorr, Secp256k1, XOnlyPublicKey};
use sigs::{Corruption, Keys, Owned, ALL_CORRUPTIONS};

/// libsecp256k1's verdict, straight from the `secp256k1` crate.
fn libsecp(o: &Owned) -> bool {
    let secp = Secp256k1::verification_only();
    let Ok(pk) = XOnlyPublicKey::from_byte_array(&o.pk) else {
        return false;
    };
    secp.verify_schnorr(&schnorr::Signature::from_byte_array(o.sig), &o.msg, &pk)
        .is_ok()
}

/// Asserts that `verify_batch` gives libsecp256k1's verdict for every signature of `batch`;
/// returns the number of invalid ones.
fn check(v: &mut Verifier, batch: &[Owned], what: &str) -> usize {
    let refs: Vec<_> = batch.iter().map(Owned::as_ref).collect();
    let want: Vec<bool> = batch.iter().map(libsecp).collect();
    let mut ok = vec![true; 3]; // verify_batch must clear it
    let all = v.verify_batch(&refs, &mut ok);
    assert_eq!(ok.len(), batch.len(), "{what}: length of the verdicts");
    for (i, (g, w)) in ok.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "{what}: verdict {i} of {} differs from libsecp256k1",
            batch.len()
        );
    }
    assert_eq!(
        all,
        want.iter().all(|&b| b),
        "{what}: verify_batch's result"
    );
    want.iter().filter(|&&b| !b).count()
}

const SIZES: [usize; 9] = [1, 2, 3, 4, 5, 9, 33, 64, 130];
const KEYS: [Keys; 3] = [Keys::One, Keys::Eight, Keys::Distinct];

#[test]
fn random_valid_batches() {
    let mut r = sigs::rng(1);
    let mut v = Verifier::new();
    for n in SIZES {
        for keys in KEYS {
            let b = sigs::batch(&mut r, n, keys);
            assert_eq!(check(&mut v, &b, &format!("valid n={n} {keys:?}")), 0);
        }
    }
    let s = v.stats();
    assert!(
        s.batches_passed > 0 && s.batched > 0,
        "equation path not taken: {s:?}"
    );
}

#[test]
fn one_invalid_signature_every_corruption() {
    let mut r = sigs::rng(2);
    let mut v = Verifier::new();
    let before = v.stats();
    for (k, c) in ALL_CORRUPTIONS.into_iter().enumerate() {
        for n in [4usize, 9, 64, 130] {
            let keys = KEYS[k % 3];
            let mut b = sigs::batch(&mut r, n, keys);
            let i = (r.next_u32() as usize) % n;
            sigs::corrupt(&mut r, &mut b, i, c);
            check(&mut v, &b, &format!("one {c:?} at {i} of {n} {keys:?}"));
        }
    }
    // Narrowing ran equations on parts of failed batches, and some held.
    let s = v.stats();
    assert!(
        s.batches_passed > before.batches_passed && s.batched > 0,
        "narrowing never accepted a half: {s:?}"
    );
}

#[test]
fn several_invalid_signatures() {
    let mut r = sigs::rng(3);
    let mut v = Verifier::new();
    for n in [8usize, 33, 64, 200] {
        for bad in [2usize, 3, 5, 9] {
            if bad >= n {
                continue;
            }
            let keys = KEYS[(n + bad) % 3];
            let mut b = sigs::batch(&mut r, n, keys);
            for _ in 0..bad {
                let i = (r.next_u32() as usize) % n;
                let c = ALL_CORRUPTIONS[(r.next_u32() as usize) % ALL_CORRUPTIONS.len()];
                sigs::corrupt(&mut r, &mut b, i, c);
            }
            check(&mut v, &b, &format!("{bad} bad of {n} {keys:?}"));
        }
    }
}

#[test]
fn every_signature_invalid() {
    let mut r = sigs::rng(4);
    let mut v = Verifier::new();
    for n in [4usize, 9, 64, 150] {
        for keys in KEYS {
            let mut b = sigs::batch(&mut r, n, keys);
            for i in 0..n {
                let c = [
                    Corruption::FlipSBit,
                    Corruption::FlipMsgBit,
                    Corruption::RandomR,
                ][i % 3];
                sigs::corrupt(&mut r, &mut b, i, c);
            }
            let before = v.stats();
            let bad = check(&mut v, &b, &format!("all {n} bad {keys:?}"));
            assert_eq!(bad, n, "all {n} bad {keys:?}: mutations left some valid");
            if n >= 128 {
                // The probe-first path (the verifier is wary after the floods above, and a
                // random r that is off the curve makes a batch probe anyway): two failed
                // probes, then one at a time, no equation.
                let s = v.stats();
                assert_eq!(s.batches, before.batches, "all bad {n}: an equation ran");
                assert_eq!(s.one_at_a_time - before.one_at_a_time, n as u64);
            }
        }
    }
}

#[test]
fn sprinkled_invalid_signatures() {
    // Every k-th signature invalid: the sampled dense path and the work budget.
    let mut r = sigs::rng(5);
    let mut v = Verifier::new();
    for (n, every) in [(64usize, 4usize), (130, 8), (256, 16), (256, 3)] {
        let mut b = sigs::batch(&mut r, n, Keys::Eight);
        for i in (every / 2..n).step_by(every) {
            sigs::corrupt(&mut r, &mut b, i, Corruption::FlipSigBit);
        }
        check(&mut v, &b, &format!("every {every}th of {n} bad"));
    }
}

#[test]
fn duplicates_valid_and_invalid() {
    let mut r = sigs::rng(6);
    let mut v = Verifier::new();
    let base = sigs::batch(&mut r, 40, Keys::Eight);
    // The same valid signature many times, alone and among others.
    check(&mut v, &vec![base[0]; 12], "one valid signature 12 times");
    let mut b = base.clone();
    b.extend_from_slice(&base[..10]);
    check(&mut v, &b, "valid batch with 10 repeated");
    // An invalid signature repeated, and a valid one repeated next to it.
    let mut bad = base[3];
    bad.sig[40] ^= 0x10;
    check(&mut v, &vec![bad; 9], "one invalid signature 9 times");
    let mut b = base.clone();
    for i in [0usize, 7, 19, 39] {
        b[i] = bad;
    }
    b.push(base[5]);
    b.push(base[5]);
    check(&mut v, &b, "invalid repeated among valid and duplicates");
    // Same key and message, one valid and one mutated signature.
    let mut b = base[..16].to_vec();
    let mut twin = b[2];
    twin.sig[63] ^= 1;
    b.push(twin);
    check(&mut v, &b, "valid and invalid twin");
}

/// Changes one signature in place.
type Mutation = fn(&mut rand::rngs::StdRng, &mut Owned);

#[test]
fn invalid_keys_and_out_of_range_values() {
    let mut r = sigs::rng(7);
    let mut v = Verifier::new();
    let cases: [(&str, Mutation); 6] = [
        ("key not on the curve", |r, o| o.pk = sigs::not_on_curve(r)),
        ("key = p", |_, o| o.pk = sigs::P),
        ("key = 2^256 - 1", |_, o| o.pk = [0xff; 32]),
        ("key = 0", |_, o| o.pk = [0; 32]),
        ("r = p", |_, o| o.sig[..32].copy_from_slice(&sigs::P)),
        ("s = n", |_, o| o.sig[32..].copy_from_slice(&sigs::N)),
    ];
    for (what, f) in cases {
        for n in [4usize, 17, 130] {
            let mut b = sigs::batch(&mut r, n, Keys::Eight);
            for _ in 0..3 {
                let i = (r.next_u32() as usize) % n;
                f(&mut r, &mut b[i]);
            }
            let bad = check(&mut v, &b, &format!("{what}, n={n}"));
            assert!(bad > 0, "{what}: no invalid signature made");
        }
    }
    // A whole batch under one invalid key.
    let mut b = sigs::batch(&mut r, 20, Keys::One);
    let k = sigs::not_on_curve(&mut r);
    for o in &mut b {
        o.pk = k;
    }
    assert_eq!(check(&mut v, &b, "every key invalid"), 20);
}

#[test]
fn cancelling_pairs_are_caught() {
    // s_i + d and s_j - d: an unweighted sum would hold; the random weights must not.
    let mut r = sigs::rng(8);
    let mut v = Verifier::new();
    for n in [4usize, 16, 64, 130] {
        for keys in KEYS {
            let mut b = sigs::batch(&mut r, n, keys);
            let i = (r.next_u32() as usize) % n;
            let j = (i + 1 + (r.next_u32() as usize) % (n - 1)) % n;
            sigs::cancelling_pair(&mut r, &mut b, i, j);
            assert_eq!(
                check(&mut v, &b, &format!("cancelling pair n={n} {keys:?}")),
                2
            );
        }
    }
}
