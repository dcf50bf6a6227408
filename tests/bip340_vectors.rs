//! The official BIP-340 test vectors (`tests/data/bip340-test-vectors.csv`) through the
//! single verifiers and the batch verifier, every `FALSE` row included.
//!
//! The crate verifies 32-byte messages (Nostr event ids), so the four vectors with other
//! message lengths (indices 15–18: 0, 1, 17 and 100 bytes) cannot be expressed as a
//! [`SigRef`]; the test counts them and checks they are exactly those.

#![allow(unreachable_pub)]

mod common;
#[path = "common/sigs.rs"]
mod sigs;

use nostr_verify::{SigRef, Verifier};

struct Vector {
    index: usize,
    pk: Vec<u8>,
    msg: Vec<u8>,
    sig: Vec<u8>,
    expected: bool,
}

fn vectors() -> Vec<Vector> {
    let text = common::vector_file("bip340-test-vectors.csv");
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        out.push(Vector {
            index: f[0].parse().expect("index"),
            pk: hex::decode(f[2]).expect("pk hex"),
            msg: hex::decode(f[4]).expect("msg hex"),
            sig: hex::decode(f[5]).expect("sig hex"),
            expected: f[6] == "TRUE",
        });
    }
    assert_eq!(out.len(), 19, "19 official vectors");
    out
}

#[test]
fn official_vectors_single_and_batch() {
    let vs = vectors();
    let mut skipped = Vec::new();
    let mut v = Verifier::new();
    let mut r = sigs::rng(340);
    let mut usable = Vec::new();
    for t in &vs {
        let (Ok(pk), Ok(msg), Ok(sig)) = (
            <[u8; 32]>::try_from(t.pk.as_slice()),
            <[u8; 32]>::try_from(t.msg.as_slice()),
            <[u8; 64]>::try_from(t.sig.as_slice()),
        ) else {
            skipped.push(t.index);
            continue;
        };
        let s = SigRef {
            pubkey: &pk,
            msg: &msg,
            sig: &sig,
        };
        assert_eq!(
            nostr_verify::verify_one(&s),
            t.expected,
            "vector {} (libsecp256k1)",
            t.index
        );
        assert_eq!(
            v.verify_one(&s),
            t.expected,
            "vector {} (Verifier::verify_one)",
            t.index
        );
        assert_eq!(
            v.verify_one(&s),
            t.expected,
            "vector {} (Verifier::verify_one, cached key)",
            t.index
        );
        // In batches of several sizes, at every position, among valid signatures.
        for n in [nostr_verify::MIN_BATCH, 9, 40] {
            let mut b = sigs::batch(&mut r, n, sigs::Keys::Eight);
            let i = sigs::pick(&mut r, n);
            b[i] = sigs::Owned { pk, msg, sig };
            let want = sigs::check(&mut v, &b, &format!("vector {} in a batch of {n}", t.index));
            assert_eq!(want[i], t.expected);
        }
        usable.push(sigs::Owned { pk, msg, sig });
    }
    assert_eq!(
        skipped,
        [15, 16, 17, 18],
        "only the variable-length-message vectors are skipped"
    );
    // All usable vectors together, twice over (duplicates), in one batch.
    let mut all = usable.clone();
    all.extend(usable.iter().copied());
    sigs::check(&mut v, &all, "all vectors");
    // The skipped ones still agree with libsecp256k1 when it verifies them directly.
    let secp = secp256k1::Secp256k1::verification_only();
    for t in vs.iter().filter(|t| skipped.contains(&t.index)) {
        let pk =
            secp256k1::XOnlyPublicKey::from_byte_array(&t.pk.as_slice().try_into().expect("32"))
                .expect("key");
        let sig = secp256k1::schnorr::Signature::from_byte_array(
            t.sig.as_slice().try_into().expect("64"),
        );
        assert_eq!(
            secp.verify_schnorr(&sig, &t.msg, &pk).is_ok(),
            t.expected,
            "vector {}",
            t.index
        );
    }
}

/// `check_one` gives libsecp256k1's verdict and BIP-340's reason for every official vector.
#[test]
fn official_vectors_reasons() {
    use nostr_verify::{check_one, Error};
    for t in vectors() {
        let Ok(s) = SigRef::from_slices(&t.pk, &t.msg, &t.sig) else {
            assert!(
                t.msg.len() != 32,
                "vector {}: only messages can differ",
                t.index
            );
            assert_eq!(
                SigRef::from_slices(&t.pk, &t.msg, &t.sig),
                Err(Error::WrongLength {
                    what: "msg",
                    expected: 32,
                    got: t.msg.len()
                })
            );
            continue;
        };
        let want = match t.index {
            0..=4 => Ok(()),
            5 | 14 => Err(Error::InvalidPublicKey),
            // 9 and 10: sG − eP is infinite; 9 has r = 0, not an x coordinate, while 10's
            // r = 1 is one, so only the equation rejects it.
            9 | 11 | 12 => Err(Error::InvalidR),
            13 => Err(Error::InvalidS),
            6..=8 | 10 => Err(Error::EquationFailed),
            i => panic!("vector {i} is not expected to have a 32-byte message"),
        };
        assert_eq!(check_one(&s), want, "vector {}", t.index);
        assert_eq!(check_one(&s).is_ok(), t.expected, "vector {}", t.index);
    }
}

/// `check_one` agrees with `verify_one` on every corruption kind, and names the reason the
/// corruption was built to produce where it is unambiguous.
#[test]
fn check_one_matches_libsecp256k1() {
    use nostr_verify::{check_one, verify_one, Error};
    let mut r = sigs::rng(7);
    let rounds = 8 * common::scale();
    for round in 0..rounds {
        for &c in &sigs::ALL_CORRUPTIONS {
            let mut b = sigs::batch(&mut r, 4, sigs::Keys::Distinct);
            sigs::corrupt(&mut r, &mut b, 1, c);
            for (i, o) in b.iter().enumerate() {
                let s = o.as_ref();
                let got = check_one(&s);
                assert_eq!(
                    got.is_ok(),
                    verify_one(&s),
                    "round {round}, {c:?}, item {i}"
                );
                if i == 1 {
                    let want = match c {
                        sigs::Corruption::KeyNotOnCurve => Some(Error::InvalidPublicKey),
                        sigs::Corruption::RGeP | sigs::Corruption::RNotOnCurve => {
                            Some(Error::InvalidR)
                        }
                        sigs::Corruption::SGeN | sigs::Corruption::SPlusN => Some(Error::InvalidS),
                        sigs::Corruption::FlipMsgBit | sigs::Corruption::OddYNonce => {
                            Some(Error::EquationFailed)
                        }
                        _ => None,
                    };
                    if let Some(want) = want {
                        assert_eq!(got, Err(want), "round {round}, {c:?}");
                    }
                }
            }
        }
    }
}

/// Wrong lengths are a per-input error naming the input, never a panic.
#[test]
fn from_slices_checks_every_length() {
    use nostr_verify::Error;
    let buf = [7u8; 65];
    for (pk, msg, sig, what) in [
        (31, 32, 64, Some("pubkey")),
        (33, 32, 64, Some("pubkey")),
        (32, 0, 64, Some("msg")),
        (32, 32, 65, Some("sig")),
        (0, 0, 0, Some("pubkey")),
        (32, 32, 64, None),
    ] {
        let got = SigRef::from_slices(&buf[..pk], &buf[..msg], &buf[..sig]);
        match what {
            None => assert_eq!(got.map(|s| s.sig.len()), Ok(64)),
            Some(w) => match got {
                Err(Error::WrongLength {
                    what,
                    expected,
                    got,
                }) => {
                    assert_eq!(what, w);
                    let len = [pk, msg, sig][["pubkey", "msg", "sig"]
                        .iter()
                        .position(|x| *x == w)
                        .expect("name")];
                    assert_eq!(got, len);
                    assert_ne!(expected, got);
                    assert!(Error::WrongLength {
                        what,
                        expected,
                        got
                    }
                    .to_string()
                    .contains(w));
                }
                other => panic!("{pk}/{msg}/{sig}: {other:?}"),
            },
        }
    }
}

/// The vendored vector files are the published ones, byte for byte.
#[test]
fn vendored_vectors_are_the_published_files() {
    use sha2::{Digest, Sha256};
    for (name, sha) in [
        (
            "bip340-test-vectors.csv",
            "34c9d1d9c3a88d524bc80778540dc43f8306ec249a7485293063c376db851c2d",
        ),
        (
            "nip44.vectors.json",
            "269ed0f69e4c192512cc779e78c555090cebc7c785b609e338a62afc3ce25040",
        ),
    ] {
        let text = common::vector_file(name);
        assert_eq!(hex::encode(Sha256::digest(text.as_bytes())), sha, "{name}");
    }
}
