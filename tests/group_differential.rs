//! Group operations and BIP-340 `lift_x` against libsecp256k1 (the `secp256k1` crate):
//! addition (`PublicKey::combine`), doubling and λ·P (`mul_tweak`), negation, parsing
//! (`PublicKey::from_slice`, `XOnlyPublicKey::from_byte_array`), on thousands of random
//! points (times `SECP_DIFF_SCALE`), with Jacobian inputs at random Z and at the largest
//! coordinate magnitude the formulas accept.

mod common;

use common::bigint::{n, random_fe};

use nostr_verify::arithmetic::constants::{BETA, LAMBDA_BYTES};
use nostr_verify::arithmetic::field::FieldElement;
use nostr_verify::arithmetic::group::{AffinePoint, JacobianPoint};
use nostr_verify::backend::Backend;
use num_bigint::BigUint;
use num_traits::One;
use rand::{Rng, RngCore, SeedableRng};
use secp256k1::{Parity, PublicKey, Scalar, Secp256k1, SecretKey, XOnlyPublicKey};

fn rng() -> rand::rngs::StdRng {
    let seed = std::env::var("GROUP_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x0600_0509_u64);
    rand::rngs::StdRng::seed_from_u64(seed)
}

fn random_pubkey<C: secp256k1::Signing>(secp: &Secp256k1<C>, rng: &mut impl RngCore) -> PublicKey {
    loop {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        if let Ok(sk) = SecretKey::from_byte_array(&b) {
            return PublicKey::from_secret_key(secp, &sk);
        }
    }
}

fn to_ours(pk: &PublicKey) -> AffinePoint {
    let p = AffinePoint::from_compressed(&pk.serialize()).expect("libsecp256k1 key must parse");
    assert!(p.is_on_curve_vartime());
    p
}

fn compressed(p: &JacobianPoint) -> [u8; 33] {
    p.to_affine_vartime().to_compressed()
}

/// The same value at a higher magnitude: adds 2p (magnitude 1 each) `extra` times.
fn inflate(x: &FieldElement, extra: u32) -> FieldElement {
    let mut r = x.normalize_weak();
    for _ in 0..extra {
        r = r.add(&FieldElement::ZERO.negate(0));
    }
    r
}

/// A random nonzero field element.
/// `a` in Jacobian form with a random Z and coordinates of magnitude 1..=4.
fn random_jacobian(a: &AffinePoint, rng: &mut impl RngCore) -> JacobianPoint {
    let z = random_fe(rng);
    let z2 = z.square();
    let z3 = z2.mul(&z);
    let mag = |rng: &mut dyn RngCore| rng.gen_range(0..=3u32);
    JacobianPoint {
        x: inflate(&a.x.mul(&z2), mag(rng)),
        y: inflate(&a.y.mul(&z3), mag(rng)),
        z: inflate(&z, mag(rng)),
        infinity: false,
    }
}

#[test]
fn addition_matches_combine() {
    let secp = Secp256k1::new();
    let mut rng = rng();
    for _ in 0..1000 * common::scale() {
        let (p, q) = (
            random_pubkey(&secp, &mut rng),
            random_pubkey(&secp, &mut rng),
        );
        let expect = p
            .combine(&q)
            .expect("random keys do not cancel")
            .serialize();
        let (pa, qa) = (to_ours(&p), to_ours(&q));
        let (pj, qj) = (
            random_jacobian(&pa, &mut rng),
            random_jacobian(&qa, &mut rng),
        );
        assert_eq!(compressed(&pj.add_vartime(&qj)), expect, "Jacobian add");
        assert_eq!(compressed(&pj.add_affine_vartime(&qa)), expect, "mixed add");
        assert_eq!(
            compressed(&JacobianPoint::from_affine(&pa).add_affine_vartime(&qa)),
            expect,
            "mixed add, Z = 1"
        );
        let sum = pj.add_affine_vartime(&qa);
        assert!(sum.eq_vartime(&qj.add_vartime(&pj)));
        assert!(sum.to_affine_vartime().is_on_curve_vartime());
    }
}

#[test]
fn doubling_and_exceptional_additions() {
    let secp = Secp256k1::new();
    let mut rng = rng();
    let two = Scalar::from_be_bytes({
        let mut b = [0u8; 32];
        b[31] = 2;
        b
    })
    .expect("2 < n");
    for _ in 0..1000 * common::scale() {
        let p = random_pubkey(&secp, &mut rng);
        let expect = p.mul_tweak(&secp, &two).expect("2P").serialize();
        let pa = to_ours(&p);
        let pj = random_jacobian(&pa, &mut rng);
        let pj2 = random_jacobian(&pa, &mut rng);
        assert_eq!(compressed(&pj.double_vartime()), expect, "double");
        // P + P through the addition formulas must route to doubling.
        assert_eq!(compressed(&pj.add_vartime(&pj2)), expect, "P + P, Jacobian");
        assert_eq!(
            compressed(&pj.add_affine_vartime(&pa)),
            expect,
            "P + P, mixed"
        );
        // P + (−P) is the identity; libsecp256k1 refuses to combine them.
        let neg = p.negate(&secp);
        assert!(p.combine(&neg).is_err());
        assert_eq!(pa.neg().to_compressed(), neg.serialize(), "affine negation");
        assert_eq!(compressed(&pj.neg()), neg.serialize(), "Jacobian negation");
        assert!(pj
            .add_vartime(&random_jacobian(&pa.neg(), &mut rng))
            .is_infinity());
        assert!(pj.add_affine_vartime(&pa.neg()).is_infinity());
        assert!(pj.add_vartime(&pj.neg()).is_infinity());
        // The identity on either side.
        let id = JacobianPoint::IDENTITY;
        assert_eq!(compressed(&id.add_affine_vartime(&pa)), p.serialize());
        assert_eq!(
            compressed(&pj.add_affine_vartime(&AffinePoint::IDENTITY)),
            p.serialize()
        );
        assert_eq!(compressed(&id.add_vartime(&pj)), p.serialize());
        assert_eq!(compressed(&pj.add_vartime(&id)), p.serialize());
        // Z ≡ 0 without the flag is the identity too.
        let z0 = JacobianPoint {
            z: FieldElement::ZERO.negate(0),
            infinity: false,
            ..pj
        };
        assert!(z0.is_infinity());
        assert_eq!(compressed(&z0.add_vartime(&pj)), p.serialize());
        assert_eq!(compressed(&pj.add_vartime(&z0)), p.serialize());
        assert_eq!(compressed(&z0.add_affine_vartime(&pa)), p.serialize());
        assert!(z0.double_vartime().is_infinity());
    }
    assert!(JacobianPoint::IDENTITY.double_vartime().is_infinity());
    assert!(JacobianPoint::IDENTITY.to_affine_vartime().is_infinity());
    assert!(AffinePoint::IDENTITY.neg().is_infinity());
    assert!(AffinePoint::IDENTITY.endomorphism().is_infinity());
}

#[test]
fn repeated_operations_stay_in_contract() {
    // Long chains feed outputs back as inputs (output magnitudes must be valid inputs);
    // compare with libsecp256k1 at the end.
    let secp = Secp256k1::new();
    let mut rng = rng();
    let p = random_pubkey(&secp, &mut rng);
    let pa = to_ours(&p);
    let mut acc = JacobianPoint::from_affine(&pa);
    let mut expect = p;
    for i in 0..200 {
        if i % 3 == 0 {
            acc = acc.double_vartime();
            expect = expect.combine(&expect).expect("2P");
        } else if i % 3 == 1 {
            acc = acc.add_affine_vartime(&pa);
            expect = expect.combine(&p).expect("P + Q");
        } else {
            acc = acc
                .add_vartime(&acc.neg().double_vartime().neg())
                .neg()
                .neg();
            expect = expect
                .mul_tweak(
                    &secp,
                    &Scalar::from_be_bytes(
                        [0; 31]
                            .iter()
                            .chain(&[3u8])
                            .copied()
                            .collect::<Vec<_>>()
                            .try_into()
                            .expect("32"),
                    )
                    .expect("3"),
                )
                .expect("3P");
        }
        assert_eq!(compressed(&acc), expect.serialize(), "step {i}");
    }
}

#[test]
fn batch_to_affine_matches_single() {
    let secp = Secp256k1::new();
    let mut rng = rng();
    let mut out = Vec::new();
    for len in [0usize, 1, 2, 7, 64] {
        let mut pts = Vec::new();
        let mut expect = Vec::new();
        for i in 0..len {
            if len > 1 && (i == 0 || i == len - 1 || rng.gen_range(0..5) == 0) {
                pts.push(JacobianPoint::IDENTITY);
                expect.push(None);
            } else {
                let p = random_pubkey(&secp, &mut rng);
                pts.push(random_jacobian(&to_ours(&p), &mut rng));
                expect.push(Some(p.serialize()));
            }
        }
        JacobianPoint::batch_to_affine_vartime(&pts, &mut out);
        assert_eq!(out.len(), len);
        for ((a, e), j) in out.iter().zip(&expect).zip(&pts) {
            match e {
                None => assert!(a.is_infinity()),
                Some(e) => {
                    assert_eq!(a.to_compressed(), *e);
                    assert_eq!(
                        a.x.raw_limbs(),
                        a.x.to_limbs_normalized(),
                        "normalized output"
                    );
                    assert_eq!(*a, j.to_affine_vartime());
                }
            }
        }
    }
}

#[test]
fn lift_x_matches_xonly_parsing() {
    let secp = Secp256k1::new();
    let mut rng = rng();
    let p_bytes: [u8; 32] =
        hex::decode("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f")
            .expect("hex")
            .try_into()
            .expect("32");
    let mut inputs: Vec<[u8; 32]> = vec![[0u8; 32], [0xff; 32], p_bytes];
    let mut p_minus_1 = p_bytes;
    p_minus_1[31] -= 1;
    inputs.push(p_minus_1);
    let mut p_plus_1 = p_bytes;
    p_plus_1[31] += 1;
    inputs.push(p_plus_1);
    for _ in 0..3000 * common::scale() {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        inputs.push(b);
    }
    // x of real keys (always liftable) and of G.
    for _ in 0..200 {
        inputs.push(
            random_pubkey(&secp, &mut rng)
                .x_only_public_key()
                .0
                .serialize(),
        );
    }
    inputs.push(AffinePoint::GENERATOR.x.to_bytes());
    let (mut ok, mut bad) = (0, 0);
    for x in &inputs {
        let theirs = XOnlyPublicKey::from_byte_array(x).ok();
        let ours = AffinePoint::lift_x_bytes_vartime(x);
        assert_eq!(
            ours.is_some(),
            theirs.is_some(),
            "lift_x acceptance of {}",
            hex::encode(x)
        );
        match (ours, theirs) {
            (Some(o), Some(t)) => {
                assert!(!o.y.is_odd(), "lift_x must give even y");
                assert_eq!(
                    o.to_compressed(),
                    PublicKey::from_x_only_public_key(t, Parity::Even).serialize()
                );
                assert!(o.is_on_curve_vartime());
                ok += 1;
            }
            _ => bad += 1,
        }
        if let Some(fe) = FieldElement::from_bytes(x) {
            assert_eq!(AffinePoint::lift_x_vartime(&fe), ours);
            // Through the portable backend, which lifts in pairs: in either lane of a pair,
            // next to G (liftable) or 0 (not).
            for other in [AffinePoint::GENERATOR.x, FieldElement::ZERO] {
                for (xs, lane) in [([fe, other], 0), ([other, fe], 1)] {
                    let (mut ys, mut ok) = ([FieldElement::ONE; 2], [false; 2]);
                    Backend::Portable.lift_x_many_vartime(&xs, &mut ys, &mut ok);
                    let got = ok[lane].then(|| AffinePoint {
                        x: fe.normalize(),
                        y: ys[lane],
                        infinity: false,
                    });
                    assert_eq!(got, ours, "portable lift, lane {lane}");
                    assert_eq!(ok[1 - lane], AffinePoint::lift_x_vartime(&other).is_some());
                }
            }
            // Unreduced input of higher magnitude lifts to the same point.
            assert_eq!(AffinePoint::lift_x_vartime(&inflate(&fe, 3)), ours);
        }
    }
    assert!(ok > 1000 && bad > 1000, "{ok} liftable, {bad} not");
}

#[test]
fn compressed_parsing_matches_from_slice() {
    let secp = Secp256k1::new();
    let mut rng = rng();
    for i in 0..3000 * common::scale() {
        let mut b = [0u8; 33];
        if i % 4 == 0 {
            b = random_pubkey(&secp, &mut rng).serialize();
        } else {
            rng.fill_bytes(&mut b);
            b[0] = [0x02, 0x03, 0x04, 0x00, rng.gen()][i % 5];
        }
        let theirs = PublicKey::from_slice(&b).ok();
        let ours = AffinePoint::from_compressed(&b);
        assert_eq!(
            ours.is_some(),
            theirs.is_some(),
            "acceptance of {}",
            hex::encode(b)
        );
        if let (Some(o), Some(t)) = (ours, theirs) {
            assert_eq!(o.to_compressed(), t.serialize());
            assert_eq!(o.to_compressed(), b);
        }
    }
    assert_eq!(AffinePoint::IDENTITY.to_compressed(), [0u8; 33]);
    assert!(AffinePoint::from_compressed(&[0u8; 33]).is_none());
}

#[test]
fn generator_matches_libsecp256k1() {
    let secp = Secp256k1::new();
    let one = SecretKey::from_byte_array(&{
        let mut b = [0u8; 32];
        b[31] = 1;
        b
    })
    .expect("1 is a valid key");
    let g = PublicKey::from_secret_key(&secp, &one);
    assert_eq!(AffinePoint::GENERATOR.to_compressed(), g.serialize());
    assert!(AffinePoint::GENERATOR.is_on_curve_vartime());
}

#[test]
fn endomorphism_is_lambda_times_p() {
    // λ is a nontrivial cube root of unity mod n, recomputed here.
    let n = n();
    let lambda = BigUint::from_bytes_be(&LAMBDA_BYTES);
    assert!(lambda < n && lambda != BigUint::one());
    assert_eq!(lambda.modpow(&BigUint::from(3u32), &n), BigUint::one());
    // β is a nontrivial cube root of unity mod p.
    assert_ne!(BETA, FieldElement::ONE);
    assert_eq!(BETA.square().mul(&BETA), FieldElement::ONE);
    // And they match: λ·P = (β·x, y) by libsecp256k1's scalar multiplication.
    let secp = Secp256k1::new();
    let mut rng = rng();
    let tweak = Scalar::from_be_bytes(LAMBDA_BYTES).expect("λ < n");
    for _ in 0..200 * common::scale() {
        let p = random_pubkey(&secp, &mut rng);
        let expect = p.mul_tweak(&secp, &tweak).expect("λP");
        assert_eq!(
            to_ours(&p).endomorphism().to_compressed(),
            expect.serialize()
        );
    }
    // The other cube root β² would give λ²·P instead: make sure it does not match λ·P.
    let p = random_pubkey(&secp, &mut rng);
    let pa = to_ours(&p);
    let wrong = AffinePoint {
        x: pa.x.mul(&BETA.square()).normalize(),
        ..pa
    };
    assert_ne!(
        wrong.to_compressed(),
        p.mul_tweak(&secp, &tweak).expect("λP").serialize()
    );
}
