//! Curve constants, each with its provenance; the unit tests below and
//! `tests/field_differential.rs` / `tests/group_differential.rs` recompute every one.
//!
//! Constants are written as big-endian hex, as in SEC 2 and libsecp256k1, and turned
//! into limbs at compile time by [`fe_from_hex`].

use super::field::{FieldElement, Repr};

/// Parses 64 hex digits (big-endian) at compile time into 32 bytes.
///
/// # Panics
/// At compile time (or run time, if called outside a const context) on a string that
/// is not exactly 64 hex digits.
pub const fn bytes_from_hex(s: &str) -> [u8; 32] {
    let h = s.as_bytes();
    assert!(h.len() == 64, "expected 64 hex digits");
    let mut out = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        out[i] = (hex_digit(h[2 * i]) << 4) | hex_digit(h[2 * i + 1]);
        i += 1;
    }
    out
}

const fn hex_digit(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => panic!("not a hex digit"),
    }
}

/// A normalized field element from 64 hex digits (big-endian), at compile time.
///
/// # Panics
/// At compile time if the string is not 64 hex digits; in debug builds also if the
/// value is `≥ p`.
pub const fn fe_from_hex(s: &str) -> FieldElement {
    FieldElement::from_limbs_unchecked(Repr::from_bytes_unchecked(&bytes_from_hex(s)).limbs())
}

/// x of the generator G (SEC 2 v2, section 2.4.1, "sec256k1" base point in
/// uncompressed form `04 79BE667E...`; also libsecp256k1 `secp256k1_ge_const_g`).
/// Recomputed by the tests: G is on the curve and equals libsecp256k1's public key
/// of the secret key 1.
pub const G_X: FieldElement =
    fe_from_hex("79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798");
/// y of the generator G (same source; even).
pub const G_Y: FieldElement =
    fe_from_hex("483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8");

/// β, a primitive cube root of unity mod p: β³ = 1, β ≠ 1.
///
/// Provenance: the secp256k1 endomorphism φ(x, y) = (β·x, y) acts as multiplication by
/// λ (a cube root of unity mod n). Of the two primitive cube roots of unity mod p,
/// this is the one matching λ = `5363ad4c...1b23bd72` (libsecp256k1
/// `src/scalar_impl.h`, `secp256k1_const_lambda`; its β is in `src/group_impl.h`,
/// `secp256k1_const_beta`). It equals g^((p−1)/3) for the generator found by the
/// test `beta_is_a_cube_root_of_unity`, and `tests/group_differential.rs` checks
/// λ·P = (β·x, y) against libsecp256k1's `mul_tweak` on random points.
pub const BETA: FieldElement =
    fe_from_hex("7ae96a2b657c07106e64479eac3434e99cf0497512f58995c1396c28719501ee");

/// λ mod n matching [`BETA`] (as big-endian bytes; the scalar type lives in
/// `scalar`). λ³ ≡ 1 (mod n), λ ≠ 1; λ·(x, y) = (β·x, y). Source as for [`BETA`].
#[cfg(any(test, feature = "internals"))]
pub const LAMBDA_BYTES: [u8; 32] =
    bytes_from_hex("5363ad4cc05c30e0a5261c028812645a122e22ea20816678df02967c1b23bd72");

/// The curve constant b in y² = x³ + 7.
#[cfg(any(test, feature = "internals"))]
pub const CURVE_B: FieldElement = FieldElement::from_limbs_unchecked(Repr::from_u64(7).limbs());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_on_curve() {
        let lhs = G_Y.square();
        let rhs = G_X.square().mul(&G_X).add(&CURVE_B);
        assert_eq!(lhs, rhs);
        assert!(!G_Y.is_odd());
    }

    #[test]
    fn beta_is_a_cube_root_of_unity() {
        assert_ne!(BETA, FieldElement::ONE);
        assert_eq!(BETA.square().mul(&BETA), FieldElement::ONE);
        // Recompute β as g^((p−1)/3) for the smallest g whose power is not 1: the two
        // candidates are that value and its square; β must be one of them, and the
        // group test pins down which one by checking λ·P = (β·x, y).
        let exp = |x: &FieldElement| {
            // (p − 1)/3 via square-and-multiply over its big-endian bytes.
            let e =
                bytes_from_hex("55555555555555555555555555555555555555555555555555555554fffffeba");
            let mut acc = FieldElement::ONE;
            for byte in e {
                for bit in (0..8).rev() {
                    acc = acc.square();
                    if (byte >> bit) & 1 == 1 {
                        acc = acc.mul(x);
                    }
                }
            }
            acc
        };
        let mut g = 2u64;
        let root = loop {
            let r = exp(&FieldElement::from_u64(g));
            if r != FieldElement::ONE {
                break r;
            }
            g += 1;
        };
        assert!(
            root == BETA || root.square() == BETA,
            "beta is not g^((p-1)/3)"
        );
    }
}
