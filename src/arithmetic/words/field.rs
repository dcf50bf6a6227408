//! Field elements mod p = 2^256 − 2^32 − 977 as four full 64-bit words, for the portable
//! backend's hot loops (square roots and batch-affine additions).
//!
//! Why a second representation: with `u128` products, a 4×64 multiplication needs 16
//! products plus 5 for the reduction, against 25 plus about 7 in radix 2^52, and it is the
//! faster of the two with two or more independent chains (`docs/arithmetic.md`). The price is that additions carry
//! across words and fold their carry back (no lazy magnitudes), which is why the rest of
//! the crate stays in [`FieldElement`] and only the portable arm's two kernels
//! convert at their boundaries.
//!
//! # Representation
//! `FieldElement4x64(w)` stands for `w[0] + w[1]·2^64 + w[2]·2^128 + w[3]·2^192`, taken
//! mod p. **Every** 256-bit value is allowed (values in `[p, 2^256)` are the second
//! representative of `[0, 2^256 − p)`), and every operation accepts and returns any
//! 256-bit value, so there are no magnitudes to track. Only [`FieldElement4x64::reduce`]
//! gives the canonical value `< p`; comparisons, parity and conversion go through it.
//!
//! Reduction uses 2^256 ≡ 2^32 + 977 = 0x1000003D1 (33 bits) mod p.

use crate::arithmetic::curve_field::CurveField;
use crate::arithmetic::field::{invert_words_vartime, sqrt_chain, ChainOps, FieldElement};

/// 2^256 mod p (33 bits).
const R: u64 = 0x1_0000_03D1;
/// p as little-endian words.
const P: [u64; 4] = [0xFFFF_FFFE_FFFF_FC2F, !0, !0, !0];

#[inline(always)]
fn mul_wide(a: u64, b: u64) -> u128 {
    (a as u128) * (b as u128)
}

/// `a + k`, for a 256-bit `a` and `k < 2^64`, and the carry out of 2^256 (0 or 1).
#[inline(always)]
fn add_small(a: [u64; 4], k: u64) -> ([u64; 4], u64) {
    let mut r = [0u64; 4];
    let mut c = k as u128;
    for i in 0..4 {
        c += a[i] as u128;
        r[i] = c as u64;
        c >>= 64;
    }
    (r, c as u64)
}

/// `a + k` mod p, for a 256-bit `a` and `k < 2^64`: a carry out of 2^256 is worth R, and
/// adding it can carry out again only if the wrapped sum was `≥ 2^256 − R`, rare enough for a
/// branch; then the result is `< R`, so that second R fits.
#[inline(always)]
fn add_small_mod(a: [u64; 4], k: u64) -> [u64; 4] {
    let (r, c) = add_small(a, k);
    if c != 0 {
        add_small(r, R).0
    } else {
        r
    }
}

/// `a − k` mod 2^256, for `k < 2^64`, and the borrow (0 or 1).
#[inline(always)]
fn sub_small(a: [u64; 4], k: u64) -> ([u64; 4], u64) {
    let mut r = [0u64; 4];
    let mut borrow = k;
    for i in 0..4 {
        let (d, b) = a[i].overflowing_sub(borrow);
        r[i] = d;
        borrow = b as u64;
    }
    (r, borrow)
}

/// `a + b + c` for a carry-in `c`, as the low word and the carry out. Written with two
/// `overflowing_add`s, which LLVM lowers to one `add`/`adc` when chained.
#[inline(always)]
fn adc(a: u64, b: u64, c: bool) -> (u64, bool) {
    let (s, c1) = a.overflowing_add(b);
    let (s, c2) = s.overflowing_add(c as u64);
    (s, c1 | c2)
}

/// `x·b` for one word `x` and four words `b`, as five words. The four products' low and
/// high words are combined in one carry chain; a product's high word is at most `2^64 − 2`,
/// so the last carry fits in the fifth word.
#[inline(always)]
fn row(x: u64, b: &[u64; 4]) -> [u64; 5] {
    let p0 = mul_wide(x, b[0]);
    let p1 = mul_wide(x, b[1]);
    let p2 = mul_wide(x, b[2]);
    let p3 = mul_wide(x, b[3]);
    let (w1, c) = adc((p0 >> 64) as u64, p1 as u64, false);
    let (w2, c) = adc((p1 >> 64) as u64, p2 as u64, c);
    let (w3, c) = adc((p2 >> 64) as u64, p3 as u64, c);
    [p0 as u64, w1, w2, w3, (p3 >> 64) as u64 + c as u64]
}

/// Adds the row `r` (from [`row`]) to the partial product `t` at word `i`, where
/// `t[i + 4] = 0` on entry. Before row i, `t = (a_0 + … + a_(i−1)·2^(64(i−1)))·b <
/// 2^(64i)·2^256`, and after it `t < 2^(64(i+1))·2^256`, so the carry out of word `i + 3`
/// is absorbed by `r[4]` with no overflow.
#[inline(always)]
fn add_row(t: &mut [u64; 8], i: usize, r: [u64; 5]) {
    let mut c = false;
    for j in 0..4 {
        (t[i + j], c) = adc(t[i + j], r[j], c);
    }
    t[i + 4] = r[4] + c as u64;
}

/// Reduces a 512-bit product `t` (little-endian words) to a 256-bit value `≡ t (mod p)`.
///
/// `t = H·2^256 + L` with `H, L < 2^256`, and `H·2^256 ≡ H·R`. The four products
/// `m_i = t[4 + i]·R` are each `< 2^64·2^33`, so their high words are `< 2^33`. Two plain
/// carry chains add them to L: the low words at their own offsets (carry `c ≤ 1`), then the
/// high words one word up (carry `d ≤ 1`). What is left above 2^256 is
/// `top = hi(m_3) + c + d < 2^33 + 2`, worth `top·R < 2^67`, which is added back in two
/// words. That last sum carries out of 2^256 only if the 256-bit part was within 2^67 of
/// 2^256; the wrapped value is then `< 2^67`, so adding `R` for the carry cannot carry
/// out again.
#[inline(always)]
pub(crate) fn reduce512(t: [u64; 8]) -> [u64; 4] {
    let m0 = mul_wide(t[4], R);
    let m1 = mul_wide(t[5], R);
    let m2 = mul_wide(t[6], R);
    let m3 = mul_wide(t[7], R);
    let (r0, c) = adc(t[0], m0 as u64, false);
    let (r1, c) = adc(t[1], m1 as u64, c);
    let (r2, c) = adc(t[2], m2 as u64, c);
    let (r3, c) = adc(t[3], m3 as u64, c);
    let (r1, d) = adc(r1, (m0 >> 64) as u64, false);
    let (r2, d) = adc(r2, (m1 >> 64) as u64, d);
    let (r3, d) = adc(r3, (m2 >> 64) as u64, d);
    let top = (m3 >> 64) as u64 + c as u64 + d as u64;
    let k = mul_wide(top, R);
    let (r0, c) = adc(r0, k as u64, false);
    let (r1, c) = adc(r1, (k >> 64) as u64, c);
    let (r2, c) = adc(r2, 0, c);
    let (r3, c) = adc(r3, 0, c);
    // A carry out (probability about 2^−190 for random inputs, so a branch that is never
    // taken beats a data dependency) is worth 2^256 ≡ R; then r < 2^67, so adding R cannot
    // carry out again.
    if c {
        add_small([r0, r1, r2, r3], R).0
    } else {
        [r0, r1, r2, r3]
    }
}

/// A field element mod p as four little-endian 64-bit words, for the portable backend's square
/// roots and pair additions.
///
/// Every 256-bit value is allowed: values in `[p, 2^256)` stand for themselves minus p, and
/// every operation accepts and returns any 256-bit value (no magnitudes to track). Only
/// [`FieldElement4x64::reduce`] gives the canonical value `< p`; comparisons, parity and
/// conversion go through it. Multiplication uses `u128` products (16, plus 5 for the
/// reduction with 2^256 ≡ 2^32 + 977); additions fold their carry back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldElement4x64(pub [u64; 4]);

impl FieldElement4x64 {
    /// Zero.
    pub const ZERO: Self = Self([0; 4]);
    /// One.
    pub const ONE: Self = Self([1, 0, 0, 0]);

    /// Converts from the radix-2^52 element, of any magnitude, without normalizing it: the
    /// stored limbs (each < 2^58 at magnitude ≤ 32, so the value is < 2^267) are summed
    /// into four words, and the bits above 2^256 (< 2^11) are folded back with R.
    ///
    /// Limb i sits at bit 52i. Limb 0 lies inside word 0; limb i ≥ 1 straddles words
    /// i − 1 and i: its low bits shifted left into word i − 1 and the rest shifted right into
    /// word i (limb 4's rest, `< 2^10`, into the bits above 2^256). The parts that share a
    /// word are added in one carry chain.
    #[inline(always)]
    pub fn from_fe(a: &FieldElement) -> Self {
        let l = a.raw_limbs();
        let (w0, c) = adc(l[0], l[1] << 52, false);
        let (w1, c) = adc(l[1] >> 12, l[2] << 40, c);
        let (w2, c) = adc(l[2] >> 24, l[3] << 28, c);
        let (w3, c) = adc(l[3] >> 36, l[4] << 16, c);
        let top = (l[4] >> 48) + c as u64;
        let w = [w0, w1, w2, w3];
        if top == 0 {
            // The usual case: normalized and magnitude-1 inputs fit in 256 bits.
            Self(w)
        } else {
            // top < 2^11, so top·R < 2^44.
            Self(add_small_mod(w, top * R))
        }
    }

    /// [`Self::from_fe`] of a normalized element (an `AffinePoint`'s coordinate): the same
    /// conversion (its fold is never taken then).
    #[inline(always)]
    pub fn from_fe_normalized(a: &FieldElement) -> Self {
        Self::from_fe(a)
    }

    /// Converts to the radix-2^52 element, normalized.
    #[inline(always)]
    pub fn to_fe(&self) -> FieldElement {
        FieldElement::from_u64x4_normalized(&self.reduce().0)
    }

    /// `self^(−1)`; 0 maps to 0. Safegcd on the canonical words, the same inversion as
    /// [`FieldElement::invert_vartime`].
    ///
    /// # Variable time
    /// Running time depends on the value.
    pub fn invert_vartime(&self) -> Self {
        Self(invert_words_vartime(&self.reduce().0))
    }

    /// The canonical representative, `< p`. A value `≥ p` is `< 2^256 < 2p`, so one
    /// subtraction of p (adding R and dropping the carry) is enough.
    #[inline(always)]
    pub fn reduce(&self) -> Self {
        let (s, carry) = add_small(self.0, R);
        // self + R ≥ 2^256 exactly when self ≥ p; then self − p = self + R − 2^256 = s.
        if carry == 1 {
            Self(s)
        } else {
            *self
        }
    }

    /// Whether the value is 0 mod p (the word patterns 0 and p).
    #[inline(always)]
    pub fn is_zero(&self) -> bool {
        let w = &self.0;
        // Word by word rather than `==` on the arrays, which compiles to a vector load of
        // words just written as scalars: a store-to-load forwarding stall on every call.
        self.is_zero_pattern() || (w[0] == P[0] && (w[1] & w[2] & w[3]) == !0)
    }

    /// Whether the words are all 0 (the canonical zero; p is the other pattern of 0 mod p).
    #[inline(always)]
    pub fn is_zero_pattern(&self) -> bool {
        let w = &self.0;
        (w[0] | w[1] | w[2] | w[3]) == 0
    }

    /// Whether the canonical value is odd.
    #[inline(always)]
    pub fn is_odd(&self) -> bool {
        self.reduce().0[0] & 1 == 1
    }

    /// Equality mod p.
    #[inline(always)]
    pub fn eq_mod_p(&self, other: &Self) -> bool {
        self.reduce() == other.reduce()
    }

    /// `self + rhs` mod p. A carry out of 2^256 is worth R; adding it can carry out once
    /// more only if the wrapped sum was `≥ 2^256 − R`, and then the result is `< R`, so a
    /// second R fits.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn add(&self, rhs: &Self) -> Self {
        let mut r = [0u64; 4];
        let mut c: u128 = 0;
        for ((r, a), b) in r.iter_mut().zip(self.0).zip(rhs.0) {
            c += a as u128 + b as u128;
            *r = c as u64;
            c >>= 64;
        }
        Self(add_small_mod(r, c as u64 * R))
    }

    /// `self − rhs` mod p. A borrow means the wrapped result is 2^256 ≡ R too large, so R
    /// is subtracted; that borrows again only if the wrapped value was `< R`, and then it
    /// is `≥ 2^256 − R`, so a second R fits.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn sub(&self, rhs: &Self) -> Self {
        let mut r = [0u64; 4];
        let mut borrow = 0u64;
        for ((r, a), b) in r.iter_mut().zip(self.0).zip(rhs.0) {
            let (d, b1) = a.overflowing_sub(b);
            let (d, b2) = d.overflowing_sub(borrow);
            *r = d;
            borrow = (b1 | b2) as u64;
        }
        let (r, b2) = sub_small(r, borrow * R);
        // The second borrow needs a wrapped difference below R: rare, so a branch.
        if b2 != 0 {
            Self(sub_small(r, R).0)
        } else {
            Self(r)
        }
    }

    /// `−self` mod p.
    #[inline(always)]
    pub fn neg(&self) -> Self {
        Self::ZERO.sub(self)
    }

    /// `self · rhs` mod p: schoolbook 4×4 words by rows, then `reduce512` (fold the high
    /// half with 2^256 ≡ R).
    ///
    /// Each row `a_i·b` is assembled as five words with one carry chain (`row`), then
    /// added to the partial sum with a second chain (`add_row`): two plain add-with-carry
    /// chains per row instead of a 128-bit accumulator per product.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn mul(&self, rhs: &Self) -> Self {
        let (a, b) = (&self.0, &rhs.0);
        let mut t = [0u64; 8];
        t[..5].copy_from_slice(&row(a[0], b));
        add_row(&mut t, 1, row(a[1], b));
        add_row(&mut t, 2, row(a[2], b));
        add_row(&mut t, 3, row(a[3], b));
        Self(reduce512(t))
    }

    /// `self²` mod p: the six cross products once (three rows, each assembled with one
    /// carry chain and added with another), doubled by a shift, plus the four squares added
    /// in one carry chain, then `reduce512`.
    #[inline(always)]
    pub fn square(&self) -> Self {
        let a = &self.0;
        let mut t = [0u64; 8];
        // Row a_0·(a_1, a_2, a_3) at word 1.
        let p1 = mul_wide(a[0], a[1]);
        let p2 = mul_wide(a[0], a[2]);
        let p3 = mul_wide(a[0], a[3]);
        t[1] = p1 as u64;
        let c;
        (t[2], c) = adc((p1 >> 64) as u64, p2 as u64, false);
        let c2;
        (t[3], c2) = adc((p2 >> 64) as u64, p3 as u64, c);
        // A product's high word is at most 2^64 − 2: adding a carry cannot overflow.
        t[4] = (p3 >> 64) as u64 + c2 as u64;
        // Row a_1·(a_2, a_3) at word 3.
        let q2 = mul_wide(a[1], a[2]);
        let q3 = mul_wide(a[1], a[3]);
        let (w4, c) = adc((q2 >> 64) as u64, q3 as u64, false);
        let w5 = (q3 >> 64) as u64 + c as u64;
        let c;
        (t[3], c) = adc(t[3], q2 as u64, false);
        let c2;
        (t[4], c2) = adc(t[4], w4, c);
        // The cross sum so far, a_0·(a_1 + a_2·2^64 + a_3·2^128)·2^64 +
        // a_1·(a_2 + a_3·2^64)·2^192, is at most 2^384 − 2^257 + 2^192 with all-ones
        // words, so it fits in six words and the carry into word 5 is absorbed.
        t[5] = w5 + c2 as u64;
        // a_2·a_3 at word 5: a_2·a_3·2^320 ≤ 2^448 − 2^385 + 2^320, so the whole cross sum
        // is < 2^448 and again no carry is lost.
        let r = mul_wide(a[2], a[3]);
        let c;
        (t[5], c) = adc(t[5], r as u64, false);
        t[6] = (r >> 64) as u64 + c as u64;
        // Double (the cross sum is < 2^511, so the shift loses nothing).
        t[7] = t[6] >> 63;
        t[6] = (t[6] << 1) | (t[5] >> 63);
        t[5] = (t[5] << 1) | (t[4] >> 63);
        t[4] = (t[4] << 1) | (t[3] >> 63);
        t[3] = (t[3] << 1) | (t[2] >> 63);
        t[2] = (t[2] << 1) | (t[1] >> 63);
        t[1] <<= 1;
        // Add the squares on the diagonal in one chain; the total is a² < 2^512, so the
        // final carry is 0.
        let d0 = mul_wide(a[0], a[0]);
        let d1 = mul_wide(a[1], a[1]);
        let d2 = mul_wide(a[2], a[2]);
        let d3 = mul_wide(a[3], a[3]);
        t[0] = d0 as u64;
        let mut c;
        (t[1], c) = adc(t[1], (d0 >> 64) as u64, false);
        (t[2], c) = adc(t[2], d1 as u64, c);
        (t[3], c) = adc(t[3], (d1 >> 64) as u64, c);
        (t[4], c) = adc(t[4], d2 as u64, c);
        (t[5], c) = adc(t[5], (d2 >> 64) as u64, c);
        (t[6], c) = adc(t[6], d3 as u64, c);
        t[7] = t[7] + (d3 >> 64) as u64 + c as u64;
        Self(reduce512(t))
    }

    /// Square roots of two elements at once (see [`FieldElement4x64::sqrt_many_vartime`]).
    ///
    /// # Variable time
    /// Only the final check branches (on public data).
    #[inline(always)]
    #[cfg(any(test, feature = "internals"))]
    pub fn sqrt_pair_vartime(a: &Self, b: &Self) -> (Option<Self>, Option<Self>) {
        let [ra, rb] = Self::sqrt_many_vartime(&[*a, *b]);
        (ra, rb)
    }

    /// Square roots of `N` elements at once, the `N` exponent chains interleaved step by
    /// step so the CPU overlaps them: `x^((p+1)/4)` by the crate's one copy of libsecp256k1's
    /// chain (253 squarings, 13 multiplications, as [`FieldElement::sqrt_vartime`]), checked
    /// by squaring. `None` for a non-residue. Roots are returned in whichever sign the chain
    /// gives.
    ///
    /// # Variable time
    /// Only the final check branches (on public data).
    #[inline(always)]
    pub fn sqrt_many_vartime<const N: usize>(a: &[Self; N]) -> [Option<Self>; N] {
        let Lanes(y) = sqrt_chain(Lanes(*a));
        // Loops, not `core::array::from_fn`, which the compiler may keep out of line (and so
        // out of the portable arm's BMI2 build).
        let mut out = [None; N];
        for ((o, y), a) in out.iter_mut().zip(y).zip(a) {
            *o = y.square().eq_mod_p(a).then_some(y);
        }
        out
    }
}

/// No magnitudes: every bound of the contract is vacuous, and `normalize_weak` is the
/// identity. Each operation is the word family's own, so the generic formulas compile to what
/// was written for these words by hand (small multiples as chains of additions).
impl CurveField for FieldElement4x64 {
    const ZERO: Self = FieldElement4x64::ZERO;
    const ONE: Self = FieldElement4x64::ONE;

    #[inline(always)]
    fn from_fe(a: &FieldElement) -> Self {
        FieldElement4x64::from_fe(a)
    }

    #[inline(always)]
    fn from_fe_normalized(a: &FieldElement) -> Self {
        FieldElement4x64::from_fe_normalized(a)
    }

    #[inline(always)]
    fn to_fe(&self) -> FieldElement {
        FieldElement4x64::to_fe(self)
    }

    #[inline(always)]
    fn to_fe_normalized(&self) -> FieldElement {
        FieldElement4x64::to_fe(self)
    }

    #[inline(always)]
    fn mul(&self, rhs: &Self) -> Self {
        FieldElement4x64::mul(self, rhs)
    }

    #[inline(always)]
    fn square(&self) -> Self {
        FieldElement4x64::square(self)
    }

    #[inline(always)]
    fn add(&self, rhs: &Self) -> Self {
        FieldElement4x64::add(self, rhs)
    }

    /// The small multiples the formulas use (2, 3, 4, 8) as additions; any other `k` by a
    /// multiplication.
    #[inline(always)]
    fn mul_int(&self, k: u32) -> Self {
        match k {
            1 => *self,
            2 => self.add(self),
            3 => self.add(self).add(self),
            4 => {
                let d = self.add(self);
                d.add(&d)
            }
            8 => {
                let d = self.add(self);
                let q = d.add(&d);
                q.add(&q)
            }
            _ => FieldElement4x64::mul(self, &Self([u64::from(k), 0, 0, 0])),
        }
    }

    #[inline(always)]
    fn negate(&self, _magnitude: u32) -> Self {
        self.neg()
    }

    #[inline(always)]
    fn sub(&self, rhs: &Self, _rhs_magnitude: u32) -> Self {
        FieldElement4x64::sub(self, rhs)
    }

    #[inline(always)]
    fn normalize_weak(&self) -> Self {
        *self
    }

    #[inline(always)]
    fn normalizes_to_zero(&self) -> bool {
        self.is_zero()
    }

    #[inline(always)]
    fn is_zero_pattern(&self) -> bool {
        FieldElement4x64::is_zero_pattern(self)
    }

    #[inline(always)]
    fn is_odd_mod_p(&self) -> bool {
        self.is_odd()
    }

    #[inline(always)]
    fn invert_vartime(&self) -> Self {
        FieldElement4x64::invert_vartime(self)
    }

    #[inline(always)]
    fn sqrt_many_vartime<const N: usize>(a: &[Self; N]) -> [Option<Self>; N] {
        FieldElement4x64::sqrt_many_vartime(a)
    }
}

/// `N` elements stepped through an exponentiation chain together (the square roots).
#[derive(Clone, Copy)]
struct Lanes<const N: usize>([FieldElement4x64; N]);

impl<const N: usize> Lanes<N> {
    /// Squares every lane in place. Four lanes are written out one statement each: the
    /// compiler keeps a loop over the lanes as a loop, and the four squarings in one basic
    /// block overlap better (7.7 against 8.1 ns a squaring in a scratch harness; see
    /// `docs/benchmarks.md`, "Lift lanes written out").
    #[inline(always)]
    fn square_lanes(r: &mut [FieldElement4x64; N]) {
        if let Ok([a, b, c, d]) = <&mut [FieldElement4x64; 4]>::try_from(&mut r[..]) {
            *a = a.square();
            *b = b.square();
            *c = c.square();
            *d = d.square();
        } else {
            for v in r.iter_mut() {
                *v = v.square();
            }
        }
    }
}

impl<const N: usize> ChainOps for Lanes<N> {
    #[inline(always)]
    fn chain_square(&self) -> Self {
        let mut r = self.0;
        Self::square_lanes(&mut r);
        Lanes(r)
    }
    #[inline(always)]
    fn chain_mul(&self, rhs: &Self) -> Self {
        let mut r = self.0;
        if let (Ok([a, b, c, d]), Ok([e, f, g, h])) = (
            <&mut [FieldElement4x64; 4]>::try_from(&mut r[..]),
            <&[FieldElement4x64; 4]>::try_from(&rhs.0[..]),
        ) {
            *a = a.mul(e);
            *b = b.mul(f);
            *c = c.mul(g);
            *d = d.mul(h);
        } else {
            for (v, w) in r.iter_mut().zip(&rhs.0) {
                *v = v.mul(w);
            }
        }
        Lanes(r)
    }
    /// Squares in place: the default's copy of the whole array per squaring went through
    /// vector registers, and reading back as 16-byte loads what was just stored as 8-byte
    /// words stalls store-to-load forwarding.
    #[inline(always)]
    fn chain_pow2k(&self, k: u32) -> Self {
        let mut r = self.0;
        for _ in 0..k {
            Self::square_lanes(&mut r);
        }
        Lanes(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    fn p() -> BigUint {
        (BigUint::from(1u8) << 256u32) - BigUint::from(R)
    }
    fn big(w: &[u64]) -> BigUint {
        w.iter().rev().fold(BigUint::from(0u8), |acc, &x| {
            (acc << 64u32) + BigUint::from(x)
        })
    }
    fn val(a: &FieldElement4x64) -> BigUint {
        big(&a.0) % p()
    }

    /// Word patterns that push every carry and borrow path: zeros, all ones, p, p ± 1,
    /// 2^256 − R ± 1, R ± 1, single high bits.
    fn edge_values() -> Vec<FieldElement4x64> {
        let mut v = vec![
            [0, 0, 0, 0],
            [1, 0, 0, 0],
            [!0, !0, !0, !0],
            P,
            [P[0] + 1, !0, !0, !0],
            [P[0] - 1, !0, !0, !0],
            [R, 0, 0, 0],
            [R - 1, 0, 0, 0],
            [R + 1, 0, 0, 0],
            [0, 0, 0, 1 << 63],
            [!0, 0, 0, 0],
            [0, !0, !0, !0],
            [!0, !0, !0, 0],
            [!0 - R, !0, !0, !0],
            [1 << 63, 1 << 63, 1 << 63, 1 << 63],
        ];
        v.push([!0 - 2 * R, !0, !0, !0]);
        // One word away from the patterns of zero ([`FieldElement4x64::is_zero`] tests them
        // word by word).
        v.extend([
            [P[0], !0, !0 - 1, !0],
            [P[0], 0, !0, !0],
            [P[0], !0, !0, !0 >> 1],
            [P[0], !0 - (1 << 40), !0, !0],
            [0, 0, 0, 1],
            [0, 0, 1, 0],
            [0, 1 << 63, 0, 0],
        ]);
        v.into_iter().map(FieldElement4x64).collect()
    }

    fn random_values(n: usize, seed: u64) -> Vec<FieldElement4x64> {
        let mut rng = StdRng::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let mut w: [u64; 4] = rng.gen();
                // Every fourth value near the top of the word range, to exercise the folds.
                if i % 4 == 0 {
                    w[1] = !0;
                    w[2] = !0;
                    w[3] = !0 - (w[3] & 3);
                }
                FieldElement4x64(w)
            })
            .collect()
    }

    fn scale() -> usize {
        std::env::var("SECP_DIFF_SCALE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1)
    }

    #[test]
    fn ops_match_bigint() {
        let p = p();
        let mut vals = edge_values();
        vals.extend(random_values(60 * scale(), 1));
        for a in &vals {
            for b in &vals {
                let (x, y) = (val(a), val(b));
                assert_eq!(val(&a.mul(b)), (&x * &y) % &p, "mul {a:?} {b:?}");
                assert_eq!(val(&a.add(b)), (&x + &y) % &p, "add {a:?} {b:?}");
                assert_eq!(val(&a.sub(b)), (&x + &p - &y) % &p, "sub {a:?} {b:?}");
            }
            let x = val(a);
            assert_eq!(val(&a.square()), (&x * &x) % &p, "square {a:?}");
            assert_eq!(val(&a.neg()), (&p - &x) % &p, "neg {a:?}");
            let r = a.reduce();
            assert!(big(&r.0) < p, "reduce {a:?}");
            assert_eq!(big(&r.0), x);
            assert_eq!(a.is_zero(), x == BigUint::from(0u8));
            assert_eq!(a.is_zero_pattern(), a.0 == [0; 4], "{a:?}");
            let inv = a.invert_vartime();
            let want_inv = if a.is_zero() {
                BigUint::from(0u8)
            } else {
                x.modpow(&(&p - 2u8), &p)
            };
            assert_eq!(big(&inv.0), want_inv, "invert {a:?}");
            assert_eq!(a.is_odd(), x.bit(0));
            assert_eq!(FieldElement4x64::from_fe(&a.to_fe()).0, r.0);
        }
    }

    /// The 512-bit reduction on inputs built to hit its second and third carry: a low half
    /// near 2^256 with high halves that make `c·R` carry out.
    #[test]
    fn reduce512_carry_paths() {
        let p = p();
        let mut rng = StdRng::seed_from_u64(2);
        let highs = [[0u64; 4], [1, 0, 0, 0], [!0; 4], [!0, !0, !0, 0], P];
        for _ in 0..(200 * scale()) {
            let mut t = [0u64; 8];
            t[0] = rng.gen();
            t[1..4].copy_from_slice(&[!0, !0, !0]);
            t[4..].copy_from_slice(&highs[rng.gen_range(0..highs.len())]);
            if rng.gen_bool(0.5) {
                t[4] = rng.gen();
            }
            let r = reduce512(t);
            assert_eq!(big(&r) % &p, big(&t) % &p, "{t:x?}");
        }
        // All ones: the largest input.
        let t = [!0u64; 8];
        assert_eq!(big(&reduce512(t)) % &p, big(&t) % &p);
    }

    /// Words that sit on the carry boundaries of `row`, `add_row` and `reduce512`.
    const WORDS: [u64; 8] = [0, 1, 2, !0, !0 - 1, 1 << 63, R, P[0]];

    /// `reduce512` with every word drawn from [`WORDS`]: its two carry chains carry at once
    /// (low half all ones with high words near 2^64), the leftover `top` is at its largest,
    /// and the final fold carries out.
    #[test]
    fn reduce512_word_patterns() {
        let p = p();
        let mut rng = StdRng::seed_from_u64(5);
        for _ in 0..(20_000 * scale()) {
            let t: [u64; 8] = core::array::from_fn(|_| WORDS[rng.gen_range(0..WORDS.len())]);
            assert_eq!(big(&reduce512(t)) % &p, big(&t) % &p, "{t:x?}");
        }
    }

    /// `mul` and `square` on elements whose words are drawn from [`WORDS`] (values near p,
    /// near 2^256, all-ones words): the row chains' fifth word and the carries between rows
    /// at their extremes.
    #[test]
    fn mul_square_word_patterns() {
        let p = p();
        let mut rng = StdRng::seed_from_u64(6);
        let mut pick = || {
            FieldElement4x64(core::array::from_fn(|_| {
                WORDS[rng.gen_range(0..WORDS.len())]
            }))
        };
        for _ in 0..(5_000 * scale()) {
            let (a, b) = (pick(), pick());
            let (x, y) = (val(&a), val(&b));
            assert_eq!(val(&a.mul(&b)), (&x * &y) % &p, "mul {a:?} {b:?}");
            assert_eq!(val(&a.square()), (&x * &x) % &p, "square {a:?}");
        }
    }

    /// `from_fe` reads limbs of any magnitude, up to the largest allowed (32), including
    /// values above 2^256 whose top bits must be folded back.
    #[test]
    fn from_fe_any_magnitude() {
        let p = p();
        let mut rng = StdRng::seed_from_u64(4);
        let max = |m: u64, top: bool| 2 * m * if top { (1 << 48) - 1 } else { (1 << 52) - 1 };
        for i in 0..(400 * scale()) {
            let m: u64 = [1, 2, 8, 32][i % 4];
            let l: [u64; 5] = core::array::from_fn(|j| {
                let bound = max(m, j == 4);
                match i % 3 {
                    0 => bound,
                    _ => rng.gen_range(0..=bound),
                }
            });
            let a = FieldElement::from_limbs_magnitude_unchecked(l, m as u32);
            let want = l.iter().rev().fold(BigUint::from(0u8), |acc, &x| {
                (acc << 52u32) + BigUint::from(x)
            }) % &p;
            assert_eq!(val(&FieldElement4x64::from_fe(&a)), want, "{l:x?}");
            assert_eq!(FieldElement4x64::from_fe(&a).to_fe(), a);
        }
    }

    /// `from_fe` on limbs drawn from values whose low bits are all ones (or a single high
    /// bit), up to each magnitude's bound: the parts that share a word then sum to just
    /// below, at or above 2^64, so the carry chain runs through every word into the bits
    /// above 2^256 (a limb 4 whose low 48 bits are all ones plus a carry from word 2).
    #[test]
    fn from_fe_limb_patterns() {
        let p = p();
        let mut rng = StdRng::seed_from_u64(7);
        for i in 0..(20_000 * scale()) {
            let m: u64 = [1, 2, 8, 32][i % 4];
            let l: [u64; 5] = core::array::from_fn(|j| {
                let bound = 2 * m * if j == 4 { (1 << 48) - 1 } else { (1 << 52) - 1 };
                let bits = rng.gen_range(0..=60u32);
                let v = match rng.gen_range(0..4) {
                    0 => (1u64 << bits) - 1,
                    1 => 1u64 << bits,
                    2 => bound,
                    _ => bound - rng.gen_range(0..3).min(bound),
                };
                v.min(bound)
            });
            let a = FieldElement::from_limbs_magnitude_unchecked(l, m as u32);
            let want = l.iter().rev().fold(BigUint::from(0u8), |acc, &x| {
                (acc << 52u32) + BigUint::from(x)
            }) % &p;
            assert_eq!(val(&FieldElement4x64::from_fe(&a)), want, "{l:x?}");
        }
    }

    /// Any number of interleaved chains gives each lane its own root: lanes are not mixed up.
    #[test]
    fn sqrt_many_lanes_are_independent() {
        let vals = random_values(12, 8);
        let one = |x: &FieldElement4x64| FieldElement4x64::sqrt_many_vartime(&[*x])[0];
        let want: Vec<_> = vals.iter().map(one).collect();
        assert!(want.iter().any(Option::is_some) && want.iter().any(Option::is_none));
        for (w, x) in want.iter().zip(&vals) {
            if let Some(r) = w {
                assert!(r.square().eq_mod_p(x));
            }
        }
        for (k, three) in vals.chunks_exact(3).enumerate() {
            let got = FieldElement4x64::sqrt_many_vartime(&[three[0], three[1], three[2]]);
            assert_eq!(got[..], want[3 * k..3 * k + 3]);
        }
        for (k, four) in vals.chunks_exact(4).enumerate() {
            let got = FieldElement4x64::sqrt_many_vartime(&[four[0], four[1], four[2], four[3]]);
            assert_eq!(got[..], want[4 * k..4 * k + 4]);
        }
    }

    #[test]
    fn sqrt_pair_matches_radix_52() {
        let mut vals = edge_values();
        vals.extend(random_values(40 * scale(), 3));
        let p = p();
        for pair in vals.chunks_exact(2) {
            let (ra, rb) = FieldElement4x64::sqrt_pair_vartime(&pair[0], &pair[1]);
            for (x, r) in [(pair[0], ra), (pair[1], rb)] {
                let want = x.to_fe().sqrt_vartime();
                assert_eq!(r.is_some(), want.is_some(), "{x:?}");
                if let (Some(r), Some(w)) = (r, want) {
                    let (r, w) = (r.to_fe(), w);
                    assert!(r == w || r == w.negate(1), "{x:?}");
                    assert_eq!((val(&FieldElement4x64::from_fe(&r)).pow(2)) % &p, val(&x));
                }
            }
        }
    }
}
