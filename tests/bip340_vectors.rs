//! The official BIP-340 test vectors (`../shared/data/bip340-test-vectors.csv`) through the
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

fn vectors() -> Option<Vec<Vector>> {
    let dir = common::data_dir()?;
    let text =
        std::fs::read_to_string(dir.join("bip340-test-vectors.csv")).expect("read the vectors");
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
    Some(out)
}

#[test]
fn official_vectors_single_and_batch() {
    let Some(vs) = vectors() else { return };
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
