//! Scalars modulo the group order n of secp256k1.
//!
//! n = FFFFFFFF FFFFFFFF FFFFFFFF FFFFFFFE BAAEDCE6 AF48A03B BFD25E8C D0364141 (SEC 2, §2.4.1).
//!
//! # Representation
//!
//! A [`Scalar`] is four little-endian 64-bit limbs, value = Σ l\[i\]·2^(64·i), and is
//! **always fully reduced**: 0 ≤ value < n. Every constructor and every operation keeps
//! that invariant, so equality of values is equality of limbs (`==`).
//!
//! Reduction uses n = 2^256 − c with c = 2^256 − n, a 129-bit number
//! (c = 1·2^128 + `N_C_1`·2^64 + `N_C_0`), so 2^256 ≡ c (mod n): the high half of a wide
//! value is multiplied by c and folded into the low half (the approach of libsecp256k1's
//! `scalar_4x64`, written here from its description). The bounds of each fold are
//! proved on the private
//! `reduce_wide` beside the carries.
//!
//! # Example
//!
//! ```
//! use nostr_verify::arithmetic::scalar::{Scalar, WideSum};
//!
//! // s must be < n (BIP-340 rejects it otherwise); e = H(..) is reduced mod n.
//! let s = Scalar::from_bytes_checked(&[0x11; 32]).expect("below n");
//! let e = Scalar::from_bytes_reduced(&[0xff; 32]);
//! assert!(Scalar::from_bytes_checked(&[0xff; 32]).is_none());
//!
//! // k = k1 + k2·λ with |k1|, |k2| < 2^128, signs in the flags.
//! let k = s.mul(&e).negate();
//! assert_eq!(k.split_lambda().recombine(), k);
//!
//! // Σ aᵢ·sᵢ with 128-bit weights, reduced once.
//! let mut sum = WideSum::ZERO;
//! sum.add_mul_u128(&s, 3);
//! sum.add_mul_u128(&e, u128::MAX);
//! let expect = s.mul(&Scalar::from_u64(3)).add(&e.mul(&Scalar::from_u128(u128::MAX)));
//! assert_eq!(sum.reduce(), expect);
//! assert_eq!(e.mul(&e.invert_vartime()), Scalar::ONE);
//! ```
//!
//! # Timing
//!
//! `add`, `negate`, `sub` and `mul` contain no branches on the values (selections use
//! masks) but are not audited as constant time; everything in this crate processes
//! public data only. Items whose running time plainly depends on the input end in
//! `_vartime`.

pub mod glv;
pub mod safegcd;

pub use glv::GlvSplit;

/// n, little-endian limbs.
const N: [u64; 4] = [
    0xBFD2_5E8C_D036_4141,
    0xBAAE_DCE6_AF48_A03B,
    0xFFFF_FFFF_FFFF_FFFE,
    0xFFFF_FFFF_FFFF_FFFF,
];
/// Limb 0 of c = 2^256 − n = 0x1_4551231950B75FC4_402DA1732FC9BEBF (limb 2 is 1).
const N_C_0: u64 = 0x402D_A173_2FC9_BEBF;
/// Limb 1 of c = 2^256 − n.
const N_C_1: u64 = 0x4551_2319_50B7_5FC4;

/// An integer modulo n, the order of the secp256k1 group; always fully reduced.
///
/// See the [module documentation](self) for the representation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Scalar([u64; 4]);

impl core::fmt::Debug for Scalar {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Scalar(0x")?;
        for b in self.to_bytes() {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

/// a + b + carry, returning (sum, carry out).
#[inline(always)]
#[cfg(any(test, feature = "internals"))]
fn adc(a: u64, b: u64, carry: u64) -> (u64, u64) {
    let t = a as u128 + b as u128 + carry as u128;
    (t as u64, (t >> 64) as u64)
}

/// a − b − borrow, returning (difference, borrow out ∈ {0, 1}).
#[inline(always)]
fn sbb(a: u64, b: u64, borrow: u64) -> (u64, u64) {
    let t = (a as u128).wrapping_sub(b as u128 + borrow as u128);
    (t as u64, ((t >> 64) as u64) & 1)
}

/// Value of `l + carry·2^256` reduced once: subtracts n when `carry == 1` or `l ≥ n`.
///
/// Precondition: `l + carry·2^256 < 2n`, so one subtraction reaches [0, n).
#[inline(always)]
fn reduce_once(l: [u64; 4], carry: u64) -> [u64; 4] {
    let (t0, b) = sbb(l[0], N[0], 0);
    let (t1, b) = sbb(l[1], N[1], b);
    let (t2, b) = sbb(l[2], N[2], b);
    let (t3, b) = sbb(l[3], N[3], b);
    // Subtract n exactly when there was a carry out of 2^256 or no borrow (l ≥ n). When the
    // carry is set, l − n wraps modulo 2^256 to the right value (l + 2^256 − n < n).
    let use_t = (carry | (b ^ 1)).wrapping_neg(); // all ones or zero
    [
        (t0 & use_t) | (l[0] & !use_t),
        (t1 & use_t) | (l[1] & !use_t),
        (t2 & use_t) | (l[2] & !use_t),
        (t3 & use_t) | (l[3] & !use_t),
    ]
}

/// A 192-bit column accumulator: value = lo + hi·2^128.
#[derive(Clone, Copy)]
struct Acc {
    lo: u128,
    hi: u64,
}

impl Acc {
    #[inline(always)]
    const fn new() -> Self {
        Acc { lo: 0, hi: 0 }
    }
    /// acc += a·b (a·b < 2^128).
    #[inline(always)]
    fn mac(&mut self, a: u64, b: u64) {
        let (s, o) = self.lo.overflowing_add(a as u128 * b as u128);
        self.lo = s;
        self.hi += o as u64;
    }
    /// acc += a.
    #[inline(always)]
    fn add(&mut self, a: u64) {
        let (s, o) = self.lo.overflowing_add(a as u128);
        self.lo = s;
        self.hi += o as u64;
    }
    /// Returns the low 64 bits and shifts the accumulator right by 64.
    #[inline(always)]
    fn take(&mut self) -> u64 {
        let r = self.lo as u64;
        self.lo = (self.lo >> 64) | ((self.hi as u128) << 64);
        self.hi = 0;
        r
    }
}

/// The full 512-bit product of two 256-bit values, little-endian limbs (schoolbook by columns).
///
/// Each column holds at most 4 products < 2^128 plus a carry < 2^66, so < 2^131: the
/// 192-bit accumulator never overflows.
#[inline(always)]
pub(crate) fn mul_wide(a: &[u64; 4], b: &[u64; 4]) -> [u64; 8] {
    let mut acc = Acc::new();
    let mut l = [0u64; 8];
    acc.mac(a[0], b[0]);
    l[0] = acc.take();
    acc.mac(a[0], b[1]);
    acc.mac(a[1], b[0]);
    l[1] = acc.take();
    acc.mac(a[0], b[2]);
    acc.mac(a[1], b[1]);
    acc.mac(a[2], b[0]);
    l[2] = acc.take();
    acc.mac(a[0], b[3]);
    acc.mac(a[1], b[2]);
    acc.mac(a[2], b[1]);
    acc.mac(a[3], b[0]);
    l[3] = acc.take();
    acc.mac(a[1], b[3]);
    acc.mac(a[2], b[2]);
    acc.mac(a[3], b[1]);
    l[4] = acc.take();
    acc.mac(a[2], b[3]);
    acc.mac(a[3], b[2]);
    l[5] = acc.take();
    acc.mac(a[3], b[3]);
    l[6] = acc.take();
    l[7] = acc.take();
    l
}

/// Reduces any 512-bit value modulo n.
///
/// Three folds with 2^256 ≡ c (mod n), c < 2^129 (c = N_C_0 + N_C_1·2^64 + 2^128):
///
/// 1. l = lo + hi·2^256 with lo, hi < 2^256 ↦ m = lo + hi·c < 2^256 + 2^385 < 2^386
///    (limbs m0..m6, m6 ≤ 3).
/// 2. m = m_lo + m_hi·2^256 with m_hi < 2^130 ↦ p = m_lo + m_hi·c < 2^256 + 2^259 < 2^260
///    (limbs p0..p4, p4 < 16).
/// 3. p = p_lo + p4·2^256 ↦ r = p_lo + p4·c < 2^256 + 2^133, so r = r_lo + carry·2^256
///    with carry ∈ {0, 1}. If carry = 1 then r_lo < 2^133 and r − n = r_lo + c < n;
///    otherwise r < 2^256 < 2n. Either way one conditional subtraction ([`reduce_once`])
///    ends in [0, n).
#[inline(always)]
pub(crate) fn reduce_wide(l: &[u64; 8]) -> [u64; 4] {
    let (c0, c1) = (N_C_0, N_C_1);
    let h = [l[4], l[5], l[6], l[7]];
    // Fold 1: m = l[0..4] + h·c. Column j collects h[i]·c[j−i] (c[2] = 1).
    let mut acc = Acc::new();
    acc.add(l[0]);
    acc.mac(h[0], c0);
    let m0 = acc.take();
    acc.add(l[1]);
    acc.mac(h[0], c1);
    acc.mac(h[1], c0);
    let m1 = acc.take();
    acc.add(l[2]);
    acc.mac(h[1], c1);
    acc.mac(h[2], c0);
    acc.add(h[0]);
    let m2 = acc.take();
    acc.add(l[3]);
    acc.mac(h[2], c1);
    acc.mac(h[3], c0);
    acc.add(h[1]);
    let m3 = acc.take();
    acc.mac(h[3], c1);
    acc.add(h[2]);
    let m4 = acc.take();
    acc.add(h[3]);
    let m5 = acc.take();
    let m6 = acc.take();
    debug_assert!(m6 <= 3);
    // Fold 2: p = m[0..4] + (m4, m5, m6)·c.
    acc.add(m0);
    acc.mac(m4, c0);
    let p0 = acc.take();
    acc.add(m1);
    acc.mac(m4, c1);
    acc.mac(m5, c0);
    let p1 = acc.take();
    acc.add(m2);
    acc.mac(m5, c1);
    acc.mac(m6, c0);
    acc.add(m4);
    let p2 = acc.take();
    acc.add(m3);
    acc.mac(m6, c1);
    acc.add(m5);
    let p3 = acc.take();
    acc.add(m6);
    let p4 = acc.take();
    debug_assert!(p4 < 16);
    // Fold 3: r = p[0..4] + p4·c.
    acc.add(p0);
    acc.mac(p4, c0);
    let r0 = acc.take();
    acc.add(p1);
    acc.mac(p4, c1);
    let r1 = acc.take();
    acc.add(p2);
    acc.add(p4);
    let r2 = acc.take();
    acc.add(p3);
    let r3 = acc.take();
    let carry = acc.take();
    debug_assert!(carry <= 1);
    reduce_once([r0, r1, r2, r3], carry)
}

impl Scalar {
    /// The scalar 0.
    pub const ZERO: Self = Scalar([0; 4]);
    /// The scalar 1.
    #[cfg(any(test, feature = "internals"))]
    pub const ONE: Self = Scalar([1, 0, 0, 0]);

    /// The value of 32 big-endian bytes reduced modulo n (for a challenge e = H(..) mod n).
    ///
    /// Any 256-bit input is accepted; since 2^256 < 2n one conditional subtraction suffices.
    pub fn from_bytes_reduced(b: &[u8; 32]) -> Self {
        Scalar(reduce_once(limbs_from_be(b), 0))
    }

    /// The scalar encoded by 32 big-endian bytes, or `None` if the value is ≥ n
    /// (BIP-340 rejects such an `s`).
    pub fn from_bytes_checked(b: &[u8; 32]) -> Option<Self> {
        Self::from_limbs(limbs_from_be(b))
    }

    /// The scalar with little-endian limbs `l`, or `None` if the value is ≥ n.
    pub fn from_limbs(l: [u64; 4]) -> Option<Self> {
        let (_, b) = sbb(l[0], N[0], 0);
        let (_, b) = sbb(l[1], N[1], b);
        let (_, b) = sbb(l[2], N[2], b);
        let (_, b) = sbb(l[3], N[3], b);
        (b == 1).then_some(Scalar(l))
    }

    /// The little-endian limbs of the (fully reduced) value.
    pub const fn to_limbs(&self) -> [u64; 4] {
        self.0
    }

    /// The scalar `v` (always < n, no reduction needed).
    #[cfg(any(test, feature = "internals"))]
    pub const fn from_u128(v: u128) -> Self {
        Scalar([v as u64, (v >> 64) as u64, 0, 0])
    }

    /// The scalar `v`.
    #[cfg(any(test, feature = "internals"))]
    pub const fn from_u64(v: u64) -> Self {
        Scalar([v, 0, 0, 0])
    }

    /// The 32-byte big-endian encoding of the value (< n).
    pub fn to_bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (i, limb) in self.0.iter().enumerate() {
            out[24 - 8 * i..32 - 8 * i].copy_from_slice(&limb.to_be_bytes());
        }
        out
    }

    /// self + rhs mod n.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    #[cfg(any(test, feature = "internals"))]
    pub fn add(&self, rhs: &Self) -> Self {
        let (l0, c) = adc(self.0[0], rhs.0[0], 0);
        let (l1, c) = adc(self.0[1], rhs.0[1], c);
        let (l2, c) = adc(self.0[2], rhs.0[2], c);
        let (l3, c) = adc(self.0[3], rhs.0[3], c);
        // self + rhs < 2n, the precondition of reduce_once.
        Scalar(reduce_once([l0, l1, l2, l3], c))
    }

    /// self − rhs mod n.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    #[cfg(any(test, feature = "internals"))]
    pub fn sub(&self, rhs: &Self) -> Self {
        self.add(&rhs.negate())
    }

    /// −self mod n (0 stays 0).
    #[inline]
    pub fn negate(&self) -> Self {
        let (t0, b) = sbb(N[0], self.0[0], 0);
        let (t1, b) = sbb(N[1], self.0[1], b);
        let (t2, b) = sbb(N[2], self.0[2], b);
        let (t3, _) = sbb(N[3], self.0[3], b);
        // n − 0 = n is not reduced: mask the result to 0 when self is 0.
        let nonzero = ((self.0[0] | self.0[1] | self.0[2] | self.0[3]) != 0) as u64;
        let mask = nonzero.wrapping_neg();
        Scalar([t0 & mask, t1 & mask, t2 & mask, t3 & mask])
    }

    /// self · rhs mod n: the 512-bit product reduced by three folds with 2^256 ≡ c
    /// (`reduce_wide`, whose comment proves the bounds).
    #[inline]
    #[allow(clippy::should_implement_trait)]
    #[cfg(any(test, feature = "internals"))]
    pub fn mul(&self, rhs: &Self) -> Self {
        Scalar(reduce_wide(&mul_wide(&self.0, &rhs.0)))
    }

    /// self² mod n.
    #[inline]
    #[cfg(any(test, feature = "internals"))]
    pub fn square(&self) -> Self {
        self.mul(self)
    }

    /// Whether the value is 0.
    #[inline]
    #[cfg(any(test, feature = "internals"))]
    pub fn is_zero(&self) -> bool {
        (self.0[0] | self.0[1] | self.0[2] | self.0[3]) == 0
    }

    /// Whether the value is greater than (n − 1)/2, i.e. whether −self is the smaller
    /// representative.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_high(&self) -> bool {
        // (n − 1)/2 = n >> 1 since n is odd; compare self > n >> 1.
        const N_HALF: [u64; 4] = [
            (N[0] >> 1) | (N[1] << 63),
            (N[1] >> 1) | (N[2] << 63),
            (N[2] >> 1) | (N[3] << 63),
            N[3] >> 1,
        ];
        let (_, b) = sbb(N_HALF[0], self.0[0], 0);
        let (_, b) = sbb(N_HALF[1], self.0[1], b);
        let (_, b) = sbb(N_HALF[2], self.0[2], b);
        let (_, b) = sbb(N_HALF[3], self.0[3], b);
        b == 1
    }

    /// self^e mod n for an exponent given as little-endian limbs (fixed 4-bit windows).
    ///
    /// # Variable time
    ///
    /// Skips the multiplications for zero windows of `e`.
    #[cfg(any(test, feature = "internals"))]
    pub fn pow_vartime(&self, e: &[u64; 4]) -> Self {
        // table[i] = self^i for i in 0..16.
        let mut table = [Scalar::ONE; 16];
        for i in 1..16 {
            table[i] = table[i - 1].mul(self);
        }
        let mut r = Scalar::ONE;
        let mut started = false;
        for i in (0..64).rev() {
            let nibble = ((e[i / 16] >> (4 * (i % 16))) & 0xF) as usize;
            if started {
                for _ in 0..4 {
                    r = r.square();
                }
            }
            if nibble != 0 {
                r = if started {
                    r.mul(&table[nibble])
                } else {
                    table[nibble]
                };
                started = true;
            }
        }
        r
    }

    /// The inverse modulo n (0 maps to 0), by variable-time safegcd ([`safegcd`]).
    ///
    /// # Variable time
    ///
    /// Running time depends on the value.
    #[cfg(any(test, feature = "internals"))]
    pub fn invert_vartime(&self) -> Self {
        const MODULUS_N: safegcd::Modulus = safegcd::Modulus::new(N);
        Scalar(safegcd::invert_vartime(&self.0, &MODULUS_N))
    }

    /// The inverse modulo n (0 maps to 0) by Fermat, self^(n−2) with fixed 4-bit windows
    /// (252 squarings, at most 77 multiplications): a slow, simple cross-check for
    /// [`Scalar::invert_vartime`].
    ///
    /// # Variable time
    ///
    /// The exponent is the public constant n − 2; the zero-window skips depend only on it.
    #[cfg(any(test, feature = "internals"))]
    pub fn invert_fermat(&self) -> Self {
        const N_MINUS_2: [u64; 4] = [N[0] - 2, N[1], N[2], N[3]];
        self.pow_vartime(&N_MINUS_2)
    }
}

/// An unreduced sum Σ sᵢ·aᵢ of scalars times 128-bit integers, reduced mod n once at the end
/// (lazy reduction: each term costs 8 limb products and no reduction, against a full
/// [`Scalar::mul`] and [`Scalar::add`]).
///
/// Kept as a 512-bit integer. Each term is below n·2^128 < 2^384, so fewer than 2^128 terms
/// cannot overflow; the batch verifier adds a few thousand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WideSum([u64; 8]);

impl WideSum {
    /// The empty sum.
    pub const ZERO: Self = WideSum([0; 8]);

    /// self += s·a (exact, no reduction).
    #[inline]
    pub fn add_mul_u128(&mut self, s: &Scalar, a: u128) {
        let (a0, a1) = (a as u64, (a >> 64) as u64);
        let s = &s.0;
        let l = &mut self.0;
        let mut acc = Acc::new();
        acc.add(l[0]);
        acc.mac(s[0], a0);
        l[0] = acc.take();
        acc.add(l[1]);
        acc.mac(s[0], a1);
        acc.mac(s[1], a0);
        l[1] = acc.take();
        acc.add(l[2]);
        acc.mac(s[1], a1);
        acc.mac(s[2], a0);
        l[2] = acc.take();
        acc.add(l[3]);
        acc.mac(s[2], a1);
        acc.mac(s[3], a0);
        l[3] = acc.take();
        acc.add(l[4]);
        acc.mac(s[3], a1);
        l[4] = acc.take();
        acc.add(l[5]);
        l[5] = acc.take();
        acc.add(l[6]);
        l[6] = acc.take();
        acc.add(l[7]);
        l[7] = acc.take();
        debug_assert_eq!(acc.take(), 0, "WideSum overflow (2^128 terms?)");
    }

    /// The sum modulo n.
    #[inline]
    pub fn reduce(&self) -> Scalar {
        Scalar(reduce_wide(&self.0))
    }
}

impl Scalar {
    /// self · a mod n for a 128-bit a (the product has at most 384 bits).
    #[inline]
    #[cfg(any(test, feature = "internals"))]
    pub fn mul_u128(&self, a: u128) -> Self {
        let mut w = WideSum::ZERO;
        w.add_mul_u128(self, a);
        w.reduce()
    }
}

/// Little-endian limbs of 32 big-endian bytes.
#[inline]
fn limbs_from_be(b: &[u8; 32]) -> [u64; 4] {
    let mut l = [0u64; 4];
    for (i, limb) in l.iter_mut().enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[24 - 8 * i..32 - 8 * i]);
        *limb = u64::from_be_bytes(w);
    }
    l
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use num_bigint::BigUint;
    use num_traits::{One, Zero};
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// The count multiplier from `SECP_DIFF_SCALE` (default 1), for the unit tests of
    /// `scalar`, `scalar::glv` and `msm::recode`.
    pub(crate) fn scale() -> usize {
        std::env::var("SECP_DIFF_SCALE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1)
            .max(1)
    }

    fn n_big() -> BigUint {
        BigUint::from_bytes_be(
            &hex::decode("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141")
                .unwrap(),
        )
    }

    fn big(s: &Scalar) -> BigUint {
        BigUint::from_bytes_be(&s.to_bytes())
    }

    fn bytes32(v: &BigUint) -> [u8; 32] {
        let b = v.to_bytes_be();
        assert!(b.len() <= 32);
        let mut out = [0u8; 32];
        out[32 - b.len()..].copy_from_slice(&b);
        out
    }

    /// Boundary 256-bit values (as integers, possibly ≥ n).
    fn edge_values() -> Vec<BigUint> {
        let n = n_big();
        let two = BigUint::from(2u32);
        let lambda = BigUint::parse_bytes(
            b"5363ad4cc05c30e0a5261c028812645a122e22ea20816678df02967c1b23bd72",
            16,
        )
        .unwrap();
        let mut v = vec![
            BigUint::zero(),
            BigUint::one(),
            two.clone(),
            &n - 1u32,
            &n - 2u32,
            n.clone(),
            &n + 1u32,
            two.pow(256) - 1u32,
            two.pow(255),
            two.pow(128) - 1u32,
            two.pow(128),
            two.pow(128) + 1u32,
            two.pow(64) - 1u32,
            two.pow(64),
            two.pow(192) - 1u32,
            lambda.clone(),
            &n - &lambda,
            (&n - 1u32) / 2u32,
            (&n + 1u32) / 2u32,
        ];
        v.push(two.pow(256) - &n); // c
        v.push(two.pow(256) - &n - 1u32);
        v
    }

    fn random_bytes(rng: &mut StdRng) -> [u8; 32] {
        let mut b = [0u8; 32];
        rng.fill(&mut b);
        // Bias a third of the samples towards limbs of all ones / zeros.
        match rng.gen_range(0..6) {
            0 => b[..16].fill(0xFF),
            1 => b[..8].fill(0),
            2 => b[16..].fill(0xFF),
            _ => {}
        }
        b
    }

    #[test]
    fn constants_match_n() {
        let n = n_big();
        let mut l = [0u8; 32];
        l.copy_from_slice(&bytes32(&n));
        assert_eq!(limbs_from_be(&l), N);
        let c = BigUint::from(2u32).pow(256) - &n;
        let expect = BigUint::from(N_C_0) + (BigUint::from(N_C_1) << 64) + (BigUint::one() << 128);
        assert_eq!(c, expect);
    }

    #[test]
    fn bytes_roundtrip_and_checks() {
        let n = n_big();
        let mut rng = StdRng::seed_from_u64(1);
        let mut inputs: Vec<BigUint> = edge_values();
        for _ in 0..2000 * scale() {
            inputs.push(BigUint::from_bytes_be(&random_bytes(&mut rng)));
        }
        for v in &inputs {
            let b = bytes32(v);
            let red = Scalar::from_bytes_reduced(&b);
            assert_eq!(big(&red), v % &n, "reduced {v:x}");
            let chk = Scalar::from_bytes_checked(&b);
            if v < &n {
                assert_eq!(chk.map(|s| big(&s)), Some(v.clone()));
                assert_eq!(chk.unwrap().to_bytes(), b);
            } else {
                assert!(chk.is_none(), "{v:x} >= n must be rejected");
            }
        }
        assert_eq!(big(&Scalar::from_u128(u128::MAX)), BigUint::from(u128::MAX));
        assert_eq!(big(&Scalar::from_u64(u64::MAX)), BigUint::from(u64::MAX));
        assert_eq!(Scalar::ONE, Scalar::from_u64(1));
        assert!(Scalar::ZERO.is_zero() && !Scalar::ONE.is_zero());
    }

    #[test]
    fn ops_match_bigint() {
        let n = n_big();
        let mut rng = StdRng::seed_from_u64(2);
        let mut vals: Vec<Scalar> = edge_values()
            .iter()
            .map(|v| Scalar::from_bytes_reduced(&bytes32(v)))
            .collect();
        let edges = vals.len();
        for _ in 0..300 * scale() {
            vals.push(Scalar::from_bytes_reduced(&random_bytes(&mut rng)));
        }
        // All edge pairs, plus each random value against a random partner and every edge.
        let mut pairs = Vec::new();
        for i in 0..edges {
            for j in 0..vals.len() {
                pairs.push((i, j));
            }
        }
        for _ in 0..5000 * scale() {
            pairs.push((rng.gen_range(0..vals.len()), rng.gen_range(0..vals.len())));
        }
        for (i, j) in pairs {
            let (a, b) = (vals[i], vals[j]);
            let (x, y) = (big(&a), big(&b));
            assert_eq!(big(&a.add(&b)), (&x + &y) % &n, "add {a:?} {b:?}");
            assert_eq!(big(&a.sub(&b)), (&x + &n - &y) % &n, "sub {a:?} {b:?}");
            assert_eq!(big(&a.mul(&b)), (&x * &y) % &n, "mul {a:?} {b:?}");
        }
        for a in &vals {
            let x = big(a);
            assert_eq!(big(&a.negate()), (&n - &x) % &n, "negate {a:?}");
            assert_eq!(big(&a.square()), (&x * &x) % &n, "square {a:?}");
            assert_eq!(a.is_zero(), x.is_zero());
            assert_eq!(a.is_high(), x > (&n - 1u32) / 2u32, "is_high {a:?}");
            assert_eq!(Scalar::from_limbs(a.to_limbs()), Some(*a));
        }
    }

    #[test]
    fn reduce_wide_matches_bigint_on_extremes() {
        // Wide values not reachable as products of reduced scalars: all ones, single high bits.
        let n = n_big();
        let mut rng = StdRng::seed_from_u64(3);
        let mut cases = vec![[u64::MAX; 8], [0; 8]];
        for k in 0..8 {
            let mut l = [0u64; 8];
            l[k] = u64::MAX;
            cases.push(l);
            let mut l = [u64::MAX; 8];
            l[k] = 0;
            cases.push(l);
        }
        for _ in 0..2000 * scale() {
            let mut l = [0u64; 8];
            for x in l.iter_mut() {
                *x = match rng.gen_range(0..4) {
                    0 => u64::MAX,
                    1 => 0,
                    _ => rng.gen(),
                };
            }
            cases.push(l);
        }
        for l in cases {
            let mut v = BigUint::zero();
            for (i, limb) in l.iter().enumerate() {
                v += BigUint::from(*limb) << (64 * i);
            }
            let r = Scalar(reduce_wide(&l));
            assert_eq!(big(&r), &v % &n, "{l:x?}");
            assert!(Scalar::from_limbs(r.0).is_some());
        }
    }

    #[test]
    fn invert_matches_bigint() {
        let n = n_big();
        let mut rng = StdRng::seed_from_u64(4);
        let mut vals: Vec<Scalar> = edge_values()
            .iter()
            .map(|v| Scalar::from_bytes_reduced(&bytes32(v)))
            .collect();
        for _ in 0..100 * scale() {
            vals.push(Scalar::from_bytes_reduced(&random_bytes(&mut rng)));
        }
        for a in vals {
            let inv = a.invert_vartime();
            let x = big(&a);
            let expect = x.modpow(&(&n - 2u32), &n);
            assert_eq!(big(&inv), expect, "invert {a:?}");
            assert_eq!(
                a.invert_fermat(),
                inv,
                "Fermat and safegcd disagree on {a:?}"
            );
            if !a.is_zero() {
                assert_eq!(a.mul(&inv), Scalar::ONE);
            } else {
                assert!(inv.is_zero());
            }
        }
    }

    #[test]
    fn pow_matches_bigint() {
        let n = n_big();
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..50 * scale() {
            let a = Scalar::from_bytes_reduced(&random_bytes(&mut rng));
            let e: [u64; 4] = [
                rng.gen(),
                rng.gen(),
                if rng.gen() { 0 } else { rng.gen() },
                rng.gen(),
            ];
            let mut eb = BigUint::zero();
            for (i, limb) in e.iter().enumerate() {
                eb += BigUint::from(*limb) << (64 * i);
            }
            assert_eq!(big(&a.pow_vartime(&e)), big(&a).modpow(&eb, &n));
        }
        let a = Scalar::from_u64(7);
        assert_eq!(a.pow_vartime(&[0; 4]), Scalar::ONE);
        assert_eq!(a.pow_vartime(&[1, 0, 0, 0]), a);
    }

    #[test]
    fn wide_sum_and_mul_u128_match_bigint() {
        let n = n_big();
        let mut rng = StdRng::seed_from_u64(6);
        let edges: Vec<Scalar> = edge_values()
            .iter()
            .map(|v| Scalar::from_bytes_reduced(&bytes32(v)))
            .collect();
        let edge_a = [0u128, 1, u128::MAX, 1 << 127, (1 << 64) - 1, 1 << 64];
        for s in &edges {
            for &a in &edge_a {
                let expect = (big(s) * BigUint::from(a)) % &n;
                assert_eq!(big(&s.mul_u128(a)), expect, "{s:?} * {a:#x}");
            }
        }
        for round in 0..20 * scale() {
            // Sums of up to 3000 terms; the first rounds use only maximal terms.
            let terms = [1usize, 2, 3000, 257][round % 4];
            let mut w = WideSum::ZERO;
            let mut expect = BigUint::zero();
            let mut reference = Scalar::ZERO;
            for _ in 0..terms {
                let (s, a) = if round < 4 {
                    (Scalar::ONE.negate(), u128::MAX)
                } else {
                    (
                        Scalar::from_bytes_reduced(&random_bytes(&mut rng)),
                        rng.gen::<u128>(),
                    )
                };
                w.add_mul_u128(&s, a);
                expect += big(&s) * BigUint::from(a);
                reference = reference.add(&s.mul(&Scalar::from_u128(a)));
            }
            assert_eq!(big(&w.reduce()), &expect % &n);
            assert_eq!(w.reduce(), reference);
        }
    }
}
