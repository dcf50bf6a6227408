//! Scalar arithmetic and the GLV split against libsecp256k1 (the `secp256k1` crate).
//!
//! Counts scale with `SECP_DIFF_SCALE` (see `tests/common/mod.rs`).

mod common;

use common::bigint::{n, p, to_be as bytes32};

use nostr_verify::arithmetic::constants::{BETA, LAMBDA_BYTES};
use nostr_verify::arithmetic::scalar::{glv::LAMBDA, Scalar};
use num_bigint::BigUint;
use rand::{rngs::StdRng, Rng, SeedableRng};
use secp256k1::{PublicKey, Secp256k1, SecretKey};

/// 32-byte strings at the edges: 0, 1, n − 1, n, n + 1, 2^256 − 1, λ, 2^128 ± 1, 2^255 …
fn edge_bytes() -> Vec<[u8; 32]> {
    let n = n();
    let one = BigUint::from(1u32);
    let lambda = BigUint::from_bytes_be(&LAMBDA_BYTES);
    let vals = [
        BigUint::from(0u32),
        one.clone(),
        BigUint::from(2u32),
        &n - 1u32,
        &n - 2u32,
        n.clone(),
        &n + 1u32,
        (&one << 256) - 1u32,
        &one << 255,
        lambda.clone(),
        &n - &lambda,
        (&one << 128) - 1u32,
        &one << 128,
        (&one << 128) + 1u32,
        (&one << 64) - 1u32,
        (&n - 1u32) / 2u32,
        (&n + 1u32) / 2u32,
    ];
    vals.iter().map(bytes32).collect()
}

fn random_scalars(rng: &mut StdRng, count: usize) -> Vec<Scalar> {
    let mut v: Vec<Scalar> = edge_bytes()
        .iter()
        .map(Scalar::from_bytes_reduced)
        .collect();
    for _ in 0..count {
        let mut b = [0u8; 32];
        rng.fill(&mut b);
        if rng.gen_range(0..4) == 0 {
            b[..12].fill(0xFF); // near n
        }
        v.push(Scalar::from_bytes_reduced(&b));
    }
    v
}

fn secret(s: &Scalar) -> Option<SecretKey> {
    SecretKey::from_byte_array(&s.to_bytes()).ok()
}

fn tweak(s: &Scalar) -> secp256k1::Scalar {
    secp256k1::Scalar::from_be_bytes(s.to_bytes()).unwrap()
}

#[test]
fn parsing_matches_libsecp256k1() {
    let mut rng = StdRng::seed_from_u64(21);
    let mut cases = edge_bytes();
    for _ in 0..2000 * common::scale() {
        let mut b = [0xFFu8; 32];
        // Mostly values near n (the only place where the check can go wrong).
        let from = rng.gen_range(12..32);
        rng.fill(&mut b[from..]);
        if rng.gen() {
            b[15] = 0xFE;
        }
        cases.push(b);
    }
    for b in cases {
        let ours = Scalar::from_bytes_checked(&b);
        let theirs = secp256k1::Scalar::from_be_bytes(b);
        assert_eq!(ours.is_some(), theirs.is_ok(), "{}", hex::encode(b));
        if let (Some(o), Ok(t)) = (ours, theirs) {
            assert_eq!(o.to_bytes(), t.to_be_bytes());
        }
        // The reduced variant equals the checked one below n and b − n above.
        let red = Scalar::from_bytes_reduced(&b);
        match ours {
            Some(o) => assert_eq!(red, o),
            None => {
                let expect = BigUint::from_bytes_be(&b) - n();
                assert_eq!(red.to_bytes(), bytes32(&expect));
            }
        }
    }
}

#[test]
fn add_mul_negate_match_libsecp256k1() {
    let mut rng = StdRng::seed_from_u64(22);
    let vals = random_scalars(&mut rng, 500 * common::scale());
    for (i, a) in vals.iter().enumerate() {
        let b = &vals[(i * 7 + 3) % vals.len()];
        let Some(sa) = secret(a) else {
            assert!(a.is_zero());
            continue;
        };
        // add_tweak fails exactly when the sum is 0.
        match sa.add_tweak(&tweak(b)) {
            Ok(s) => assert_eq!(s.secret_bytes(), a.add(b).to_bytes(), "{a:?} + {b:?}"),
            Err(_) => assert!(a.add(b).is_zero()),
        }
        match sa.mul_tweak(&tweak(b)) {
            Ok(s) => assert_eq!(s.secret_bytes(), a.mul(b).to_bytes(), "{a:?} * {b:?}"),
            Err(_) => assert!(b.is_zero()),
        }
        assert_eq!(sa.negate().secret_bytes(), a.negate().to_bytes(), "-{a:?}");
        // The inverse: a · a⁻¹ = 1 in libsecp256k1's arithmetic.
        let inv = a.invert_vartime();
        let one = sa.mul_tweak(&tweak(&inv)).unwrap();
        assert_eq!(
            one.secret_bytes(),
            Scalar::ONE.to_bytes(),
            "inverse of {a:?}"
        );
    }
}

/// ±k·P with libsecp256k1 (`None` for k = 0).
fn signed_mul(
    secp: &Secp256k1<secp256k1::All>,
    p: &PublicKey,
    k: u128,
    neg: bool,
) -> Option<PublicKey> {
    if k == 0 {
        return None;
    }
    let q = p.mul_tweak(secp, &tweak(&Scalar::from_u128(k))).unwrap();
    Some(if neg { q.negate(secp) } else { q })
}

#[test]
fn lambda_times_g_is_beta_x_g() {
    let secp = Secp256k1::new();
    assert_eq!(
        LAMBDA.to_bytes(),
        LAMBDA_BYTES,
        "glv::LAMBDA and constants::LAMBDA_BYTES"
    );
    let p = p();
    let beta = BigUint::from_bytes_be(&BETA.to_bytes());
    let mut rng = StdRng::seed_from_u64(23);
    for i in 0..50 * common::scale() {
        // P = r·G (r = 1 first: P = G).
        let r = if i == 0 {
            Scalar::ONE
        } else {
            Scalar::from_bytes_reduced(&rng.gen())
        };
        let Some(sr) = secret(&r) else { continue };
        let pt = PublicKey::from_secret_key(&secp, &sr);
        let lp = pt.mul_tweak(&secp, &tweak(&LAMBDA)).unwrap();
        let (a, b) = (pt.serialize_uncompressed(), lp.serialize_uncompressed());
        let x = BigUint::from_bytes_be(&a[1..33]);
        let lx = BigUint::from_bytes_be(&b[1..33]);
        assert_eq!(lx, (&beta * &x) % &p, "λ·P has x = β·x for P = {r:?}·G");
        assert_eq!(a[33..], b[33..], "λ·P keeps y");
    }
}

#[test]
fn split_lambda_matches_point_multiplication() {
    let secp = Secp256k1::new();
    let g = PublicKey::from_secret_key(
        &secp,
        &SecretKey::from_byte_array(&Scalar::ONE.to_bytes()).unwrap(),
    );
    let lambda_g = g.mul_tweak(&secp, &tweak(&LAMBDA)).unwrap();
    let mut rng = StdRng::seed_from_u64(24);
    for k in random_scalars(&mut rng, 300 * common::scale()) {
        let split = k.split_lambda();
        // Documented bounds: |k1| < 0.64·2^128, |k2| < 0.55·2^128.
        assert!(
            split.k1 < u128::MAX / 100 * 64 && split.k2 < u128::MAX / 100 * 55,
            "{k:?}: {split:?}"
        );
        let q1 = signed_mul(&secp, &g, split.k1, split.k1_neg);
        let q2 = signed_mul(&secp, &lambda_g, split.k2, split.k2_neg);
        let sum = match (q1, q2) {
            (Some(a), Some(b)) => a.combine(&b).ok(),
            (a, b) => a.or(b),
        };
        let expect = secret(&k).map(|s| PublicKey::from_secret_key(&secp, &s));
        assert_eq!(sum, expect, "k·G ≠ k1·G + k2·λG for {k:?}: {split:?}");
    }
}
