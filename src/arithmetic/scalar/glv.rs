//! The GLV λ-decomposition of a scalar: k ≡ k1 + k2·λ (mod n) with |k1|, |k2| < 2^128.
//!
//! secp256k1 has an efficiently computable endomorphism φ(x, y) = (β·x, y) with
//! φ(P) = λ·P, where β³ ≡ 1 (mod p) and λ³ ≡ 1 (mod n) are nontrivial cube roots of unity
//! (Gallant, Lambert, Vanstone, CRYPTO 2001). Splitting k lets one 256-bit scalar
//! multiplication run as two 128-bit ones sharing their doublings.
//!
//! # Lattice and constants
//!
//! The vectors (a, b) with a + b·λ ≡ 0 (mod n) form a lattice L of determinant n. A reduced
//! basis comes from the extended Euclidean algorithm on (n, λ), stopped at the remainder
//! just below √n (Guide to Elliptic Curve Cryptography, Hankerson–Menezes–Vanstone,
//! Algorithm 3.74; the same values appear in libsecp256k1 `src/scalar_impl.h` and
//! `sage/gen_split_lambda_constants.sage`):
//!
//! ```text
//! a1 =  0x3086d221a7d46bcde86c90e49284eb15            (126 bits)
//! b1 = -0xe4437ed6010e88286f547fa90abfe4c3            (128 bits)
//! a2 =  0x114ca50f7a8e2f3f657c1108d9d44cfd8           (129 bits)
//! b2 =  a1
//! a1·b2 − a2·b1 = n
//! ```
//!
//! For k the rational coordinates of (k, 0) in this basis are d1 = b2·k/n and
//! d2 = −b1·k/n, since d1·(a1, b1) + d2·(a2, b2) = (k·(a1·b2 − a2·b1)/n, 0) = (k, 0).
//! Rounding them to integers c1, c2 gives the lattice point closest (up to rounding) to
//! (k, 0), and the split is the difference:
//!
//! ```text
//! k1 = k − c1·a1 − c2·a2,   k2 = −c1·b1 − c2·b2,   so k1 + k2·λ ≡ k − c1·(a1 + b1·λ) − c2·(a2 + b2·λ) ≡ k.
//! ```
//!
//! The divisions by n are replaced by multiplications with precomputed 2^384-scaled
//! quotients, rounded to nearest:
//!
//! ```text
//! g1 = round(2^384 · b2 / n)  = 0x3086d221a7d46bcde86c90e49284eb153daa8a1471e8ca7fe893209a45dbb031
//! g2 = round(2^384 · (−b1)/n) = 0xe4437ed6010e88286f547fa90abfe4c4221208ac9df506c61571b4ae8ac47f71
//! c1 = round(k·g1 / 2^384),   c2 = round(k·g2 / 2^384)
//! ```
//!
//! (the same g1, g2 as libsecp256k1's `scalar_split_lambda`; every constant is recomputed
//! from its definition by the tests below).
//!
//! # Our formulation: exact integers modulo 2^256, no reduction mod n
//!
//! libsecp256k1 evaluates k2 and k1 with multiplications modulo n. We instead note that
//! k1 and k2 as *integers* lie in (−2^128, 2^128) (proof below), so it suffices to evaluate
//! the two integer expressions modulo 2^256 with wrapping u64-limb arithmetic (c1·a1 etc.
//! are 128×129-bit products) and read the sign from the top limbs: a value in
//! (−2^128, 2^128) is determined by its residue mod 2^256. This needs two 256×256-bit
//! products for c1, c2 and four small products, no reduction mod n.
//!
//! # Bound proof
//!
//! ```text
//! Let x1 = k·g1/2^384 (exact rational) and d1 = b2·k/n. Since |g1 − 2^384·b2/n| ≤ 1/2,
//!   |x1 − d1| = k·|g1 − 2^384·b2/n| / 2^384 ≤ k / 2^385 < 2^256/2^385 = 2^−129   (k < n < 2^256).
//! c1 = round(x1), so δ1 := c1 − d1 satisfies |δ1| ≤ 1/2 + 2^−129. Likewise |δ2| ≤ 1/2 + 2^−129.
//!
//! (k1, k2) = (k, 0) − c1·(a1, b1) − c2·(a2, b2) = −δ1·(a1, b1) − δ2·(a2, b2), hence
//!   |k1| ≤ (1/2 + 2^−129)·(a1 + a2)
//!   |k2| ≤ (1/2 + 2^−129)·(|b1| + b2).
//! Numerically (a1 + a2)/2^129 = 0.6354, (|b1| + b2)/2^129 = 0.5406, and the 2^−129 terms add
//! less than 2 (a1 + a2 < 2^130). So |k1| < 0.64·2^128 and |k2| < 0.55·2^128: both < 2^128.
//! The test `bound_proof_inequalities` checks (2^128 + 1)·S < 2^257 exactly for both sums S.
//!
//! Intermediate sizes: g1 < 2^254 and k < 2^256 give c1 ≤ k·g1/2^384 + 1/2 < 2^126 + 1;
//! c2 ≤ k·g2/2^384 + 1/2 < n·g2/2^384 + 1/2 ≤ |b1| + 1 < 2^128. Both fit a u128.
//! ```
//!
//! λ and β are paired: λ·G has x-coordinate β·x_G (checked against libsecp256k1 in
//! `tests/scalar_differential.rs`), so φ(P) = (β·x, y) = λ·P for every P.

use super::{mul_wide, Scalar};

/// A λ-decomposition of a scalar k: k ≡ (±k1) + (±k2)·λ (mod n), with k1, k2 < 2^128.
///
/// `k1_neg` / `k2_neg` say that the term enters with a minus sign. A zero magnitude always
/// has its flag `false`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct GlvSplit {
    /// |k1|.
    pub k1: u128,
    /// Whether k1 is negative.
    pub k1_neg: bool,
    /// |k2|.
    pub k2: u128,
    /// Whether k2 is negative.
    pub k2_neg: bool,
}

/// λ, the cube root of unity mod n with λ·(x, y) = (β·x, y):
/// 0x5363ad4cc05c30e0a5261c028812645a122e22ea20816678df02967c1b23bd72
/// (libsecp256k1 `SECP256K1_SCALAR_CONST` in `src/scalar_impl.h`; recomputed as a root of
/// λ² + λ + 1 ≡ 0 by the tests and paired with β against libsecp256k1's point arithmetic).
#[cfg(any(test, feature = "internals"))]
pub const LAMBDA: Scalar = Scalar([
    0xDF02_967C_1B23_BD72,
    0x122E_22EA_2081_6678,
    0xA526_1C02_8812_645A,
    0x5363_AD4C_C05C_30E0,
]);

/// a1 = 0x3086d221a7d46bcde86c90e49284eb15 (also b2).
const A1: u128 = 0x3086_d221_a7d4_6bcd_e86c_90e4_9284_eb15;
/// −b1 = 0xe4437ed6010e88286f547fa90abfe4c3.
const MINUS_B1: u128 = 0xe443_7ed6_010e_8828_6f54_7fa9_0abf_e4c3;
/// a2 − 2^128 = 0x14ca50f7a8e2f3f657c1108d9d44cfd8 (a2 has 129 bits).
const A2_LO: u128 = 0x14ca_50f7_a8e2_f3f6_57c1_108d_9d44_cfd8;
/// g1 = round(2^384·b2/n), little-endian limbs.
const G1: [u64; 4] = [
    0xE893_209A_45DB_B031,
    0x3DAA_8A14_71E8_CA7F,
    0xE86C_90E4_9284_EB15,
    0x3086_D221_A7D4_6BCD,
];
/// g2 = round(2^384·(−b1)/n), little-endian limbs.
const G2: [u64; 4] = [
    0x1571_B4AE_8AC4_7F71,
    0x2212_08AC_9DF5_06C6,
    0x6F54_7FA9_0ABF_E4C4,
    0xE443_7ED6_010E_8828,
];

/// round(k·g / 2^384) for k < 2^256, g < 2^256 whose result fits 128 bits.
#[inline(always)]
fn mul_shift_384_round(k: &[u64; 4], g: &[u64; 4]) -> u128 {
    let l = mul_wide(k, g);
    // floor(x + 1/2) = floor(x) + (bit 383 of the product).
    ((l[6] as u128) | ((l[7] as u128) << 64)) + (l[5] >> 63) as u128
}

/// The exact 256-bit product of two u128 values, little-endian limbs.
#[inline(always)]
fn mul_128(a: u128, b: u128) -> [u64; 4] {
    let (a0, a1) = (a as u64 as u128, (a >> 64) as u64 as u128);
    let (b0, b1) = (b as u64 as u128, (b >> 64) as u64 as u128);
    let lo = a0 * b0;
    let mid1 = a0 * b1;
    let mid2 = a1 * b0;
    let hi = a1 * b1;
    let (mid, mid_carry) = mid1.overflowing_add(mid2);
    let (low, c) = lo.overflowing_add(mid << 64);
    let high = hi + (mid >> 64) + ((mid_carry as u128) << 64) + c as u128;
    [
        low as u64,
        (low >> 64) as u64,
        high as u64,
        (high >> 64) as u64,
    ]
}

/// a − b mod 2^256.
#[inline(always)]
fn wrapping_sub_256(a: &[u64; 4], b: &[u64; 4]) -> [u64; 4] {
    let lo = ((a[0] as u128) | ((a[1] as u128) << 64))
        .overflowing_sub((b[0] as u128) | ((b[1] as u128) << 64));
    let hi = ((a[2] as u128) | ((a[3] as u128) << 64))
        .wrapping_sub((b[2] as u128) | ((b[3] as u128) << 64))
        .wrapping_sub(lo.1 as u128);
    [
        lo.0 as u64,
        (lo.0 >> 64) as u64,
        hi as u64,
        (hi >> 64) as u64,
    ]
}

/// Magnitude and sign of an integer in (−2^128, 2^128) given modulo 2^256.
#[inline(always)]
fn signed_128(v: &[u64; 4]) -> (u128, bool) {
    let lo = (v[0] as u128) | ((v[1] as u128) << 64);
    if v[2] == 0 && v[3] == 0 {
        (lo, false)
    } else {
        // Bound proof (module docs): a negative value −m has 0 < m < 2^128, so its residue is
        // 2^256 − m, whose upper two limbs are all ones.
        debug_assert!(
            v[2] == u64::MAX && v[3] == u64::MAX,
            "GLV bound violated: {v:x?}"
        );
        (lo.wrapping_neg(), true)
    }
}

impl Scalar {
    /// Splits self = k into k ≡ (±k1) + (±k2)·λ (mod n) with k1, k2 < 2^128.
    ///
    /// The method, its constants and the proof of the bound are in the
    /// [module documentation](self). Actual bounds: |k1| < 0.64·2^128, |k2| < 0.55·2^128.
    pub fn split_lambda(&self) -> GlvSplit {
        let k = &self.0;
        let c1 = mul_shift_384_round(k, &G1);
        let c2 = mul_shift_384_round(k, &G2);
        // k1 = k − c1·a1 − c2·a2 with a2 = 2^128 + A2_LO, all mod 2^256.
        let c2_a2_lo = mul_128(c2, A2_LO);
        let c2_shift = [0, 0, c2 as u64, (c2 >> 64) as u64];
        let k1 = wrapping_sub_256(
            &wrapping_sub_256(&wrapping_sub_256(k, &mul_128(c1, A1)), &c2_a2_lo),
            &c2_shift,
        );
        // k2 = −c1·b1 − c2·b2 = c1·(−b1) − c2·a1.
        let k2 = wrapping_sub_256(&mul_128(c1, MINUS_B1), &mul_128(c2, A1));
        let (k1, k1_neg) = signed_128(&k1);
        let (k2, k2_neg) = signed_128(&k2);
        GlvSplit {
            k1,
            k1_neg,
            k2,
            k2_neg,
        }
    }
}

impl GlvSplit {
    /// The scalar (±k1) + (±k2)·λ mod n that this split represents.
    #[cfg(any(test, feature = "internals"))]
    pub fn recombine(&self) -> Scalar {
        let mut s1 = Scalar::from_u128(self.k1);
        if self.k1_neg {
            s1 = s1.negate();
        }
        let mut s2 = Scalar::from_u128(self.k2);
        if self.k2_neg {
            s2 = s2.negate();
        }
        s1.add(&s2.mul(&LAMBDA))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arithmetic::scalar::tests::scale;
    use num_bigint::{BigInt, BigUint, Sign};
    use num_integer::Integer;
    use num_traits::{One, Signed, Zero};
    use rand::{rngs::StdRng, Rng, SeedableRng};

    fn hexint(s: &str) -> BigInt {
        BigInt::parse_bytes(s.as_bytes(), 16).unwrap()
    }

    fn n() -> BigInt {
        hexint("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141")
    }

    fn limbs_int(l: &[u64; 4]) -> BigInt {
        let mut v = BigInt::zero();
        for (i, x) in l.iter().enumerate() {
            v += BigInt::from(*x) << (64 * i);
        }
        v
    }

    fn scalar_int(s: &Scalar) -> BigInt {
        BigInt::from_bytes_be(Sign::Plus, &s.to_bytes())
    }

    fn scalar_of(v: &BigInt) -> Scalar {
        let (_, b) = v.mod_floor(&n()).to_bytes_be();
        let mut out = [0u8; 32];
        out[32 - b.len()..].copy_from_slice(&b);
        Scalar::from_bytes_checked(&out).unwrap()
    }

    /// Signed value of one half of a split.
    fn signed(m: u128, neg: bool) -> BigInt {
        let v = BigInt::from(m);
        if neg {
            -v
        } else {
            v
        }
    }

    /// The lattice basis, recomputed by the extended Euclidean algorithm on (n, λ).
    fn lattice_basis() -> (BigInt, BigInt, BigInt, BigInt) {
        // Remainder sequence r_i = s_i·n + t_i·λ; vectors (r_i, −t_i) satisfy r − (−t)·λ… we
        // need a + b·λ ≡ 0, and r_i − t_i·λ ≡ s_i·n ≡ 0 (mod n), so (a, b) = (r_i, −t_i).
        let n = n();
        let lambda = scalar_int(&LAMBDA);
        let sqrt_n = n.sqrt();
        let (mut r0, mut r1) = (n.clone(), lambda.clone());
        let (mut t0, mut t1) = (BigInt::zero(), BigInt::one());
        // Find the largest l with r_l ≥ √n.
        while r1 >= sqrt_n {
            let q = &r0 / &r1;
            let r2 = &r0 - &q * &r1;
            let t2 = &t0 - &q * &t1;
            r0 = std::mem::replace(&mut r1, r2);
            t0 = std::mem::replace(&mut t1, t2);
        }
        // Now r0 = r_l ≥ √n > r1 = r_{l+1}. (a1, b1) = (r_{l+1}, −t_{l+1}); (a2, b2) is the
        // shorter of (r_l, −t_l) and (r_{l+2}, −t_{l+2}).
        let (a1, b1) = (r1.clone(), -t1.clone());
        let q = &r0 / &r1;
        let r2 = &r0 - &q * &r1;
        let t2 = &t0 - &q * &t1;
        let len = |a: &BigInt, b: &BigInt| a * a + b * b;
        let (a2, b2) = if len(&r0, &t0) <= len(&r2, &t2) {
            (r0.clone(), -t0.clone())
        } else {
            (r2.clone(), -t2.clone())
        };
        (a1, b1, a2, b2)
    }

    #[test]
    fn lambda_is_a_nontrivial_cube_root_of_unity() {
        let n = n();
        let l = scalar_int(&LAMBDA);
        assert_ne!(l, BigInt::one());
        assert_eq!(l.modpow(&BigInt::from(3), &n), BigInt::one());
        assert_eq!((&l * &l + &l + 1) % &n, BigInt::zero());
        // In our own arithmetic too.
        assert_eq!(LAMBDA.mul(&LAMBDA).mul(&LAMBDA), Scalar::ONE);
        assert_ne!(LAMBDA, Scalar::ONE);
        // λ is one of exactly two roots of x² + x + 1; the other is −1 − λ.
        let other = (&n - 1 - &l) % &n;
        assert_ne!(other, l);
    }

    #[test]
    fn lattice_constants_recomputed() {
        let n = n();
        let lambda = scalar_int(&LAMBDA);
        let a1 = BigInt::from(A1);
        let b1 = -BigInt::from(MINUS_B1);
        let a2: BigInt = (BigInt::one() << 128) + BigInt::from(A2_LO);
        let b2: BigInt = BigInt::from(A1);
        // In the lattice.
        assert_eq!((&a1 + &b1 * &lambda).mod_floor(&n), BigInt::zero());
        assert_eq!((&a2 + &b2 * &lambda).mod_floor(&n), BigInt::zero());
        // A basis: determinant n.
        assert_eq!(&a1 * &b2 - &a2 * &b1, n);
        // The same vectors as the extended Euclidean algorithm gives (up to sign).
        let (e1a, e1b, e2a, e2b) = lattice_basis();
        assert_eq!((e1a.abs(), e1b.abs()), (a1.abs(), b1.abs()));
        assert_eq!((e2a.abs(), e2b.abs()), (a2.abs(), b2.abs()));
        // Bit sizes as documented.
        assert_eq!((a1.bits(), b1.bits(), a2.bits()), (126, 128, 129));
    }

    #[test]
    fn g_constants_recomputed() {
        let n = n();
        let b2 = BigInt::from(A1);
        let minus_b1 = BigInt::from(MINUS_B1);
        let round_div = |num: BigInt, den: &BigInt| (num * 2 + den) / (den * 2);
        let g1 = round_div(&b2 << 384, &n);
        let g2 = round_div(&minus_b1 << 384, &n);
        assert_eq!(limbs_int(&G1), g1);
        assert_eq!(limbs_int(&G2), g2);
        assert!(g1.bits() <= 254 && g2.bits() <= 256);
    }

    #[test]
    fn bound_proof_inequalities() {
        // (1/2 + 2^−129)·S < 2^128  ⟺  (2^128 + 1)·S < 2^257.
        let a1 = BigUint::from(A1);
        let a2 = (BigUint::one() << 128) + BigUint::from(A2_LO);
        let s1 = &a1 + &a2;
        let s2 = BigUint::from(MINUS_B1) + &a1;
        let lhs = |s: &BigUint| ((BigUint::one() << 128) + 1u32) * s;
        assert!(lhs(&s1) < BigUint::one() << 257);
        assert!(lhs(&s2) < BigUint::one() << 257);
        // The documented tighter bounds: 0.64·2^128 and 0.55·2^128.
        assert!(lhs(&s1) * 100u32 < (BigUint::one() << 257) * 64u32);
        assert!(lhs(&s2) * 100u32 < (BigUint::one() << 257) * 55u32);
    }

    fn check_split(k: &Scalar) {
        let s = k.split_lambda();
        let k1 = signed(s.k1, s.k1_neg);
        let k2 = signed(s.k2, s.k2_neg);
        // Recombination in exact integers vs num-bigint.
        let lhs = (&k1 + &k2 * scalar_int(&LAMBDA)).mod_floor(&n());
        assert_eq!(lhs, scalar_int(k), "recombination failed for {k:?}: {s:?}");
        assert_eq!(s.recombine(), *k);
        // Bounds (documented: 0.64·2^128, 0.55·2^128) and canonical zero sign.
        let two128: BigInt = BigInt::one() << 128;
        assert!(k1.abs() * 100 < &two128 * 64, "|k1| too large for {k:?}");
        assert!(k2.abs() * 100 < &two128 * 55, "|k2| too large for {k:?}");
        assert!(s.k1 != 0 || !s.k1_neg, "-0 for k1");
        assert!(s.k2 != 0 || !s.k2_neg, "-0 for k2");
    }

    /// Edge scalars: 0, 1, n−1, λ, 2^128 ± 1, values near lattice vectors and near the
    /// rounding boundaries of c1, c2.
    fn edge_scalars() -> Vec<Scalar> {
        let n = n();
        let lambda = scalar_int(&LAMBDA);
        let two128: BigInt = BigInt::one() << 128;
        let mut v: Vec<BigInt> = vec![
            BigInt::zero(),
            BigInt::one(),
            BigInt::from(2),
            &n - 1,
            &n - 2,
            lambda.clone(),
            &n - &lambda,
            &lambda + 1,
            &two128 - 1,
            two128.clone(),
            &two128 + 1,
            &n - &two128,
            (BigInt::one() << 255) - 1,
            BigInt::one() << 255,
            (&n - 1) / 2,
            (&n + 1) / 2,
            BigInt::from(A1),
            BigInt::from(MINUS_B1),
            (BigInt::one() << 128) + BigInt::from(A2_LO),
        ];
        // k where b2·k/n or −b1·k/n is (close to) a half-integer: k ≈ (m + 1/2)·n/b.
        let b2 = BigInt::from(A1);
        let mb1 = BigInt::from(MINUS_B1);
        for b in [&b2, &mb1] {
            for m in [0u64, 1, 2, 1000, 123_456_789] {
                let k = ((BigInt::from(2 * m + 1)) * &n) / (b * 2);
                for d in -2i32..=2 {
                    v.push(&k + d);
                }
            }
            // Near the top: m = b − 1.
            let k = ((b * 2 - 1) * &n) / (b * 2);
            for d in -2i32..=2 {
                v.push(&k + d);
            }
        }
        // Values of the form j·λ + i for small i, j (split should be tiny).
        for i in -3i32..=3 {
            for j in -3i32..=3 {
                v.push(BigInt::from(i) + BigInt::from(j) * &lambda);
            }
        }
        v.iter().map(scalar_of).collect()
    }

    #[test]
    fn split_edge_scalars() {
        for k in edge_scalars() {
            check_split(&k);
        }
        assert_eq!(Scalar::ZERO.split_lambda(), GlvSplit::default());
        assert_eq!(
            Scalar::ONE.split_lambda(),
            GlvSplit {
                k1: 1,
                ..GlvSplit::default()
            }
        );
        assert_eq!(
            LAMBDA.split_lambda(),
            GlvSplit {
                k2: 1,
                ..GlvSplit::default()
            }
        );
        let minus_one = Scalar::ONE.negate();
        assert_eq!(
            minus_one.split_lambda(),
            GlvSplit {
                k1: 1,
                k1_neg: true,
                ..GlvSplit::default()
            }
        );
    }

    #[test]
    fn split_random_scalars() {
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..20_000 * scale() {
            let mut b = [0u8; 32];
            rng.fill(&mut b);
            check_split(&Scalar::from_bytes_reduced(&b));
        }
    }

    #[test]
    fn mul_128_matches_bigint() {
        let mut rng = StdRng::seed_from_u64(8);
        let mut cases = vec![
            (0u128, 0u128),
            (u128::MAX, u128::MAX),
            (u128::MAX, 1),
            (1 << 127, 1 << 127),
        ];
        for _ in 0..1000 * scale() {
            cases.push((rng.gen(), rng.gen()));
        }
        for (a, b) in cases {
            assert_eq!(limbs_int(&mul_128(a, b)), BigInt::from(a) * BigInt::from(b));
        }
    }
}
