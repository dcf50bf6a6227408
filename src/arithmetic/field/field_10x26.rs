//! Limb kernels for the field mod p = 2^256 − 2^32 − 977, radix 2^26, for targets without a
//! 64×64→128-bit multiply (wasm32): every product is `u32 × u32 → u64`.
//!
//! Written after reading libsecp256k1's `field_10x26_impl.h` for the representation and its
//! limb bounds (the same ones as here); the multiplication schedule and the bound arguments
//! below are our own and simpler: all 19 product columns are summed first (each fits in 64
//! bits; a multiplication forms them with one level of Karatsuba), then carried, then folded
//! twice (at 2^260 and at 2^256).

/// 2^26 − 1: mask of one full limb.
const M26: u64 = 0x3FF_FFFF;
/// 2^22 − 1: mask of the top limb (bits 234..256).
const M22: u64 = 0x3F_FFFF;
/// 2^256 mod p = 2^32 + 977 = 977 + 2^6·2^26: its low limb …
const R256_LO: u64 = 0x3D1;
/// … and the part one limb up (2^32 = 2^6·2^26).
const R256_HI: u64 = 1 << 6;
/// 2^260 mod p = 2^36 + 15632 = 0x3D10 + 2^10·2^26: its low limb …
const R260_LO: u64 = 0x3D10;
/// … and the part one limb up.
const R260_HI: u64 = 1 << 10;
/// Lowest limb of p: 2^26 − 977.
const P0: u32 = 0x3FF_FC2F;
/// Second limb of p: 2^26 − 1 − 2^6.
const P1: u32 = 0x3FF_FFBF;
/// Limbs of p; `negate` subtracts from a multiple of these.
const P_LIMBS: [u32; 10] = [
    P0, P1, M26 as u32, M26 as u32, M26 as u32, M26 as u32, M26 as u32, M26 as u32, M26 as u32,
    M22 as u32,
];

/// A field element mod p as ten unsigned 32-bit limbs in radix 2^26.
///
/// **Value.** `∑ n[i]·2^(26·i)` for i in 0..10, taken mod p.
///
/// **Magnitude m.** The limbs obey `n[i] ≤ 2·m·(2^26 − 1)` for i < 9 and
/// `n[9] ≤ 2·m·(2^22 − 1)` (the bounds of `FieldElement5x52` with 26 and 22 for 52
/// and 48). Sums of elements add their magnitudes; `mul`/`square` accept magnitude ≤ 8 and
/// return magnitude 1. Nothing here may exceed magnitude 32: limbs `≤ 2^32 − 64`, so sums and
/// small multiples fit in `u32`, and the carry passes run in `u64`.
///
/// **Normalized.** `n[0..9] < 2^26`, `n[9] < 2^22` and the value is `< p`: the unique
/// canonical representation.
///
/// This type does no bookkeeping; in debug builds [`super::FieldElement`] wraps it in the same
/// checker as the 5×52 one (`field/checked.rs`).
#[derive(Clone, Copy, Debug)]
pub struct FieldElement10x26(pub(crate) [u32; 10]);

impl FieldElement10x26 {
    /// Zero (normalized).
    pub const ZERO: Self = Self([0; 10]);
    /// One (normalized).
    pub const ONE: Self = Self([1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);

    /// Limbs as stored, not normalized.
    #[inline(always)]
    pub const fn limbs(&self) -> [u32; 10] {
        self.0
    }

    /// Builds an element from raw limbs; the caller states their magnitude elsewhere.
    #[inline(always)]
    pub const fn from_limbs(l: [u32; 10]) -> Self {
        Self(l)
    }

    /// Splits 32 big-endian bytes into limbs without reducing: any 256-bit value,
    /// magnitude 1 (limbs < 2^26, top limb < 2^22), possibly `≥ p`.
    #[inline]
    pub const fn from_bytes_unchecked(b: &[u8; 32]) -> Self {
        Self::from_u64x4(&super::bytes::be_words(b))
    }

    /// Regroups a 256-bit value given as four little-endian u64 words into radix-2^26
    /// limbs (magnitude 1, possibly `≥ p`).
    #[inline]
    pub const fn from_u64x4(w: &[u64; 4]) -> Self {
        let mut l = [0u32; 10];
        let mut i = 0;
        while i < 10 {
            // Limb i is bits 26i..26i+26: from word 26i/64, and the next word if it straddles.
            let bit = 26 * i;
            let (word, shift) = (bit / 64, bit % 64);
            let mut v = w[word] >> shift;
            if shift > 64 - 26 && word < 3 {
                v |= w[word + 1] << (64 - shift);
            }
            l[i] = (v & M26) as u32;
            i += 1;
        }
        Self(l)
    }

    /// Four little-endian u64 words of a normalized element (inverse of
    /// [`Self::from_u64x4`]).
    #[inline]
    pub const fn to_u64x4(&self) -> [u64; 4] {
        let mut w = [0u64; 4];
        let mut i = 0;
        while i < 10 {
            let bit = 26 * i;
            let (word, shift) = (bit / 64, bit % 64);
            let v = self.0[i] as u64;
            w[word] |= v << shift;
            if shift > 64 - 26 && word < 3 {
                w[word + 1] |= v >> (64 - shift);
            }
            i += 1;
        }
        w
    }

    /// Whether limbs of magnitude 1 (each < 2^26, top < 2^22) hold a value `≥ p`: the top
    /// eight limbs are all ones and the low two are at least p's.
    #[inline]
    pub const fn limbs_overflow(l: &[u32; 10]) -> bool {
        let ones = l[2] & l[3] & l[4] & l[5] & l[6] & l[7] & l[8];
        l[9] == M22 as u32 && ones == M26 as u32 && (l[1] > P1 || (l[1] == P1 && l[0] >= P0))
    }

    /// Whether the limbs are the canonical representation (see the type docs).
    #[cfg(any(test, debug_assertions, feature = "internals"))]
    pub const fn is_normalized_repr(&self) -> bool {
        let n = &self.0;
        let mut i = 0;
        while i < 9 {
            if n[i] as u64 > M26 {
                return false;
            }
            i += 1;
        }
        n[9] as u64 <= M22 && !Self::limbs_overflow(n)
    }

    /// Whether the limbs respect the bound of magnitude `m` (see the type docs).
    #[cfg(any(test, debug_assertions, feature = "internals"))]
    pub const fn has_magnitude(&self, m: u32) -> bool {
        let m = m as u64;
        let n = &self.0;
        let mut i = 0;
        while i < 9 {
            if n[i] as u64 > 2 * m * M26 {
                return false;
            }
            i += 1;
        }
        n[9] as u64 <= 2 * m * M22
    }

    /// 32 big-endian bytes of a normalized element.
    #[inline]
    pub fn to_bytes(&self) -> [u8; 32] {
        let w = self.to_u64x4();
        let mut out = [0u8; 32];
        for (i, word) in w.iter().enumerate() {
            out[24 - 8 * i..32 - 8 * i].copy_from_slice(&word.to_be_bytes());
        }
        out
    }

    /// A small integer (normalized).
    #[inline]
    pub const fn from_u64(v: u64) -> Self {
        Self::from_u64x4(&[v, 0, 0, 0])
    }

    /// Limb-wise sum. Magnitude: the sum of both magnitudes (≤ 32).
    #[inline(always)]
    pub fn add(&self, rhs: &Self) -> Self {
        let mut r = self.0;
        for (r, b) in r.iter_mut().zip(rhs.0) {
            *r += b;
        }
        Self(r)
    }

    /// Limb-wise product with a small integer. Magnitude: `m·k` (≤ 32).
    #[inline(always)]
    pub fn mul_int(&self, k: u32) -> Self {
        let mut r = self.0;
        for r in r.iter_mut() {
            *r *= k;
        }
        Self(r)
    }

    /// `2·(m+1)·p − self`, where `m ≥` the magnitude of `self` (m ≤ 31).
    ///
    /// Each limb of `2·(m+1)·P_LIMBS` is at least the bound `2·m·(2^26 − 1)` of `self`'s
    /// (limb 0: `(m+1)·P0 ≥ m·(2^26 − 1)` because `2^26 − 1 − P0 = 976` and `976·m < P0`;
    /// limb 1 likewise with 64; the others and the top limb are the unit of the bound
    /// itself), so no limb underflows, and none exceeds `2·(m+1)` times its unit: magnitude
    /// m + 1, at most `64·(2^26 − 1) < 2^32`.
    #[inline(always)]
    pub fn negate(&self, m: u32) -> Self {
        let k = 2 * (m + 1);
        let mut r = [0u32; 10];
        for ((r, a), p) in r.iter_mut().zip(self.0).zip(P_LIMBS) {
            *r = k * p - a;
        }
        Self(r)
    }

    /// Adds `k·R256` (limb 0 and limb 1) and propagates carries up to the top limb, which
    /// keeps its excess. Callers bound k and the limbs so nothing overflows 64 bits.
    #[inline(always)]
    fn fold_and_carry(mut t: [u64; 10], k: u64) -> [u64; 10] {
        t[0] += k * R256_LO;
        t[1] += k * R256_HI;
        for i in 0..9 {
            t[i + 1] += t[i] >> 26;
            t[i] &= M26;
        }
        t
    }

    /// One carry pass that folds bits ≥ 256 back with 2^256 ≡ R256, in 64-bit lanes.
    ///
    /// For magnitude ≤ 32 the limbs are < 2^32 (top < 2^28), so the fold adds < 2^6·2^10 to
    /// limb 0 and < 2^12 to limb 1, and every carry is < 2^7. Output: limbs 0..9 < 2^26 and
    /// top limb < 2^22 + 2^7 (its low 22 bits plus the carry out of limb 8), i.e. magnitude 1,
    /// value < 2^256 + 2^241.
    #[inline(always)]
    fn carry_pass(&self) -> [u64; 10] {
        let mut t = self.wide();
        let x = t[9] >> 22;
        t[9] &= M22;
        Self::fold_and_carry(t, x)
    }

    /// The limbs in 64-bit lanes.
    #[inline(always)]
    fn wide(&self) -> [u64; 10] {
        let mut t = [0u64; 10];
        for (t, &l) in t.iter_mut().zip(&self.0) {
            *t = l as u64;
        }
        t
    }

    /// The limbs of a carried 64-bit array (each fits in 32 bits by the caller's bound).
    #[inline(always)]
    fn narrow(t: [u64; 10]) -> Self {
        let mut r = [0u32; 10];
        for (r, t) in r.iter_mut().zip(t) {
            *r = t as u32;
        }
        Self(r)
    }

    /// Same value, magnitude 1 (input magnitude ≤ 32). Not normalized.
    #[inline(always)]
    pub fn normalize_weak(&self) -> Self {
        Self::narrow(self.carry_pass())
    }

    /// [`Self::normalize`] of an element whose limbs are already carried, as [`Self::mul`],
    /// [`Self::square`] and [`Self::normalize_weak`] leave them (limbs 0..8 < 2^26, top limb
    /// < 2^22 + 2^7): the value is < 2^256 + 2^241 < 2p, so the first carry pass of
    /// `normalize` has nothing to do and only the conditional subtraction of p is left (bit
    /// 256 set, or the value in [p, 2^256): add 2^256 − p, carry, drop bit 256).
    #[inline(always)]
    pub fn normalize_carried(&self) -> Self {
        debug_assert!(
            self.0[..9].iter().all(|&l| l >> 26 == 0) && self.0[9] < (1 << 22) + (1 << 7),
            "normalize_carried of limbs not carried: {:?}",
            self.0
        );
        Self::subtract_p_once(self.wide())
    }

    /// The canonical representation (input magnitude ≤ 32).
    ///
    /// After one carry pass the value V is < 2^256 + 2^241 < 2p, so at most one subtraction
    /// of p is needed: exactly when bit 256 is set (top limb ≥ 2^22) or V lies in
    /// [p, 2^256). Subtracting p is adding R256 and clearing bit 256.
    #[inline]
    pub fn normalize(&self) -> Self {
        Self::subtract_p_once(self.carry_pass())
    }

    /// The canonical form of carried limbs `t` (limbs 0..8 < 2^26, value V < 2p): V − p when
    /// bit 256 is set or V lies in [p, 2^256) (adding R256, carrying, clearing bit 256), else
    /// V. The tail of [`Self::normalize`] and [`Self::normalize_carried`].
    #[inline(always)]
    fn subtract_p_once(t: [u64; 10]) -> Self {
        let over = (t[9] >> 22) != 0 || Self::limbs_overflow(&Self::narrow(t).0);
        let mut t = Self::fold_and_carry(t, over as u64);
        t[9] &= M22;
        Self::narrow(t)
    }

    /// Whether the value is 0 mod p (input magnitude ≤ 32).
    ///
    /// After one carry pass V < 2p (see `carry_pass`), so V ≡ 0 iff V = 0 or V = p, and
    /// both have a unique limb pattern in that form.
    #[inline]
    pub fn normalizes_to_zero(&self) -> bool {
        let t = self.carry_pass();
        let (mut zero, mut p) = (0u64, 0u64);
        for (t, pl) in t.iter().zip(P_LIMBS) {
            zero |= t;
            p |= t ^ pl as u64;
        }
        zero == 0 || p == 0
    }

    /// Whether a normalized element is zero.
    #[inline(always)]
    pub fn is_zero(&self) -> bool {
        self.0.iter().fold(0, |acc, l| acc | l) == 0
    }

    /// Parity of a normalized element.
    #[inline(always)]
    #[cfg(any(test, feature = "internals", nostr_verify_field32))]
    pub const fn is_odd(&self) -> bool {
        self.0[0] & 1 == 1
    }

    /// Product mod p. Inputs: magnitude ≤ 8. Output: magnitude 1 (limbs 0..9 < 2^26, top
    /// limb ≤ 2^22), not normalized.
    ///
    /// # Bounds
    /// Magnitude 8 means `a[i], b[i] ≤ 16·(2^26 − 1) < 2^30` (i < 9) and `a[9], b[9] < 2^26`.
    /// A product of two low limbs is < 2^60, one with a top limb < 2^56, so column
    /// k = `∑_{i+j=k} a[i]·b[j]` (at most ten products, at most eight of them of low limbs)
    /// is < 8·2^60 + 2·2^56 < 2^63.1: all 19 columns fit in `u64` before any carry.
    /// See [`Self::reduce_columns`] for the rest.
    ///
    /// # Karatsuba
    /// The columns are computed from three products of five-limb halves (75 products instead
    /// of 100): with a = A0 + A1·2^130 and b likewise, A0·B0, A1·B1 and (A0 − A1)·(B1 − B0),
    /// whose sum with the first two is the cross product A0·B1 + A1·B0. The differences are
    /// signed, and every step is done mod 2^64 (wrapping); since each final column equals the
    /// schoolbook column above, an integer in [0, 2^63.1), the columns mod 2^64 are the
    /// columns. In V8 the wasm module's `i64.mul`s are what a multiplication waits on (one a
    /// cycle on x86-64): this verified 1,024 signatures from 8 keys 15 % faster in node
    /// (`docs/benchmarks.md`, "wasm32: Karatsuba").
    #[inline(always)]
    pub fn mul(&self, rhs: &Self) -> Self {
        let (a, b) = (&self.0, &rhs.0);
        debug_assert!(a[..9].iter().chain(&b[..9]).all(|&l| l >> 30 == 0));
        debug_assert!(a[9] >> 26 == 0 && b[9] >> 26 == 0);
        let (a0, a1) = halves(a);
        let (b0, b1) = halves(b);
        let p0 = mul5(&a0, &b0);
        let p2 = mul5(&a1, &b1);
        let pm = mul5(&sub5(&a0, &a1), &sub5(&b1, &b0));
        Self::reduce_columns(karatsuba_columns(&p0, &p2, &pm))
    }

    /// Square mod p: the schoolbook columns with the symmetric products merged (`2·a[i]·a[j]`
    /// once instead of two products, the doubled limb < 2^31, each merged product < 2^61), so
    /// every column is the same sum as in `mul` and keeps its bound. Input magnitude ≤ 8;
    /// output magnitude 1. (Karatsuba here, 45 products instead of 55, was slower in V8:
    /// `docs/experiments.md`, "Karatsuba in the 10×26 squaring".)
    #[inline(always)]
    pub fn square(&self) -> Self {
        let a = &self.0;
        debug_assert!(a[..9].iter().all(|&l| l >> 30 == 0) && a[9] >> 26 == 0);
        let mut c = [0u64; 19];
        for i in 0..10 {
            c[2 * i] += a[i] as u64 * a[i] as u64;
            let d = 2 * a[i] as u64;
            for j in i + 1..10 {
                c[i + j] += d * a[j] as u64;
            }
        }
        Self::reduce_columns(c)
    }

    /// The product whose 19 columns (worth 2^(26k), each < 2^63.1) are `c`, reduced to
    /// magnitude 1.
    ///
    /// 1. Carry the high columns only, 10..18, starting with column 9's bits from 2^26 up
    ///    (< 2^37.1): digits < 2^26, carries < 2^37.2. Column 18 is `a[9]·b[9]` < 2^52, so
    ///    digit 19 (the last carry) is < 2^26.01.
    /// 2. Fold digits 10..19 (worth 2^260 and up) into the uncarried low columns with
    ///    2^260 ≡ 0x3D10 + 2^10·2^26: digit 10 + k adds < 2^40 to limb k and < 2^36 to limb
    ///    k + 1; digit 19 adds < 2^40 to limb 9 and gives limb 10 (< 2^36.01). Limbs 0..8
    ///    stay below 2^63.1 + 2^40.1 < 2^64. Carry limbs 0..9 (carries < 2^37.2): limbs 0..8
    ///    < 2^26, limb 9 < 2^40.4. Carrying all 19 columns first (37 serial steps instead of
    ///    28) measured 1–4 % slower per signature in Chromium (`docs/experiments.md`,
    ///    "Shorter carry chains").
    /// 3. Bits 256 and up (`t[9] >> 22`, < 2^18.4, and limb 10 shifted up by 4, < 2^40.01)
    ///    are < 2^40.1; fold them with 2^256 ≡ 0x3D1 + 2^6·2^26 (adds < 2^50 to limb 0,
    ///    < 2^46.1 to limb 1) and carry once more: limbs 0..9 < 2^26 and the top limb gets a
    ///    carry of at most 1, so it is ≤ 2^22: magnitude 1.
    #[inline(always)]
    fn reduce_columns(c: [u64; 19]) -> Self {
        // Step 1.
        let mut d = [0u64; 9];
        let mut carry = c[9] >> 26;
        for k in 0..9 {
            let t = c[10 + k] + carry;
            d[k] = t & M26;
            carry = t >> 26;
        }
        let d19 = carry;
        // Step 2.
        let mut t = [0u64; 10];
        t.copy_from_slice(&c[..10]);
        t[9] &= M26;
        for k in 0..9 {
            t[k] += d[k] * R260_LO;
            t[k + 1] += d[k] * R260_HI;
        }
        t[9] += d19 * R260_LO;
        let t10 = d19 * R260_HI;
        for k in 0..9 {
            t[k + 1] += t[k] >> 26;
            t[k] &= M26;
        }
        // Step 3.
        let x = (t[9] >> 22) + (t10 << 4);
        t[9] &= M22;
        Self::narrow(Self::fold_and_carry(t, x))
    }
}

/// The low and high five limbs of `a`, widened.
#[inline(always)]
fn halves(a: &[u32; 10]) -> ([u64; 5], [u64; 5]) {
    let mut lo = [0u64; 5];
    let mut hi = [0u64; 5];
    for i in 0..5 {
        lo[i] = a[i] as u64;
        hi[i] = a[5 + i] as u64;
    }
    (lo, hi)
}

/// `a − b` limb by limb, each difference as a two's-complement `u64`.
#[inline(always)]
fn sub5(a: &[u64; 5], b: &[u64; 5]) -> [u64; 5] {
    let mut d = [0u64; 5];
    for i in 0..5 {
        d[i] = a[i].wrapping_sub(b[i]);
    }
    d
}

/// The nine product columns of two five-limb halves, mod 2^64.
#[inline(always)]
fn mul5(a: &[u64; 5], b: &[u64; 5]) -> [u64; 9] {
    let mut c = [0u64; 9];
    for i in 0..5 {
        for j in 0..5 {
            c[i + j] = c[i + j].wrapping_add(a[i].wrapping_mul(b[j]));
        }
    }
    c
}

/// The 19 columns of a product from Karatsuba's three half products: `lo` = A0·B0, `hi` =
/// A1·B1 and `mid` with `lo + hi + mid` = A0·B1 + A1·B0 (the cross product, at 2^130).
///
/// Every step is mod 2^64 (the differences A0 − A1 are signed), and each returned column
/// equals the schoolbook column, which is < 2^63.1 ([`FieldElement10x26::mul`]): so the
/// columns are exact.
#[inline(always)]
fn karatsuba_columns(lo: &[u64; 9], hi: &[u64; 9], mid: &[u64; 9]) -> [u64; 19] {
    let mut c = [0u64; 19];
    c[..9].copy_from_slice(lo);
    c[10..].copy_from_slice(hi);
    for k in 0..9 {
        let m = lo[k].wrapping_add(hi[k]).wrapping_add(mid[k]);
        c[5 + k] = c[5 + k].wrapping_add(m);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// p = 2^256 − 2^32 − 977 in big-endian bytes.
    fn p_bytes() -> [u8; 32] {
        let mut p = [0xffu8; 32];
        p[27] = 0xfe;
        p[28] = 0xff;
        p[29] = 0xff;
        p[30] = 0xfc;
        p[31] = 0x2f;
        p
    }

    #[test]
    fn p_limbs_match_p() {
        assert_eq!(
            FieldElement10x26::from_bytes_unchecked(&p_bytes()).0,
            P_LIMBS
        );
        assert!(FieldElement10x26::limbs_overflow(&P_LIMBS));
        assert!(FieldElement10x26(P_LIMBS).normalizes_to_zero());
        assert!(FieldElement10x26(P_LIMBS).normalize().is_zero());
        let mut below = P_LIMBS;
        below[0] -= 1;
        assert!(!FieldElement10x26::limbs_overflow(&below));
        below[0] = M26 as u32;
        below[1] -= 1;
        assert!(!FieldElement10x26::limbs_overflow(&below));
    }

    #[test]
    fn bytes_and_words_round_trip() {
        let mut b = [0u8; 32];
        for (i, x) in b.iter_mut().enumerate() {
            *x = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
        b[0] = 0x7f;
        let f = FieldElement10x26::from_bytes_unchecked(&b);
        assert_eq!(f.to_bytes(), b);
        let w = [u64::MAX, 1 << 63, 0x0123_4567_89ab_cdef, 5];
        assert_eq!(FieldElement10x26::from_u64x4(&w).to_u64x4(), w);
        assert_eq!(
            FieldElement10x26::from_u64(u64::MAX).to_u64x4(),
            [u64::MAX, 0, 0, 0]
        );
    }
}
