//! The big-integer reference shared by the differential suites: the curve's moduli and
//! conversions between `num-bigint` and the crate's field type. Every arithmetic suite
//! (field, group, scalar, backend) checks the crate against these, so they are written once,
//! from the definitions, and checked here against each other.
#![allow(dead_code, unreachable_pub)]

use nostr_verify::arithmetic::field::FieldElement;
use num_bigint::BigUint;
use rand::RngCore;

/// The field prime p = 2^256 − 2^32 − 977.
pub fn p() -> BigUint {
    (BigUint::from(1u8) << 256) - (BigUint::from(1u8) << 32) - BigUint::from(977u32)
}

/// The group order n (SEC 2, secp256k1).
pub fn n() -> BigUint {
    from_hex("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141")
}

/// A big-endian hex string as an integer.
pub fn from_hex(hex: &str) -> BigUint {
    BigUint::parse_bytes(hex.as_bytes(), 16).expect("hex digits")
}

/// 32 big-endian bytes as an integer.
pub fn from_be(b: &[u8; 32]) -> BigUint {
    BigUint::from_bytes_be(b)
}

/// An integer below 2^256 as 32 big-endian bytes.
pub fn to_be(x: &BigUint) -> [u8; 32] {
    let v = x.to_bytes_be();
    assert!(v.len() <= 32, "{x} does not fit in 32 bytes");
    let mut out = [0u8; 32];
    out[32 - v.len()..].copy_from_slice(&v);
    out
}

/// The value of a field element (its canonical encoding, so always below p).
pub fn fe_value(f: &FieldElement) -> BigUint {
    from_be(&f.to_bytes())
}

/// The field element of an integer below p.
pub fn fe_from(v: &BigUint) -> FieldElement {
    FieldElement::from_bytes(&to_be(v)).expect("value < p")
}

/// A uniformly random non-zero field element.
pub fn random_fe(rng: &mut impl RngCore) -> FieldElement {
    loop {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        if let Some(z) = FieldElement::from_bytes(&b) {
            if !z.is_zero() {
                return z;
            }
        }
    }
}

#[test]
fn the_reference_agrees_with_itself() {
    // p from its definition and from SEC 2's hex; n below p; conversions round-trip.
    assert_eq!(
        p(),
        from_hex("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFC2F")
    );
    assert!(n() < p());
    let x = p() - BigUint::from(1u8);
    assert_eq!(from_be(&to_be(&x)), x);
    assert_eq!(fe_value(&fe_from(&x)), x);
    assert_eq!(fe_value(&fe_from(&BigUint::from(0u8))), BigUint::from(0u8));
}
