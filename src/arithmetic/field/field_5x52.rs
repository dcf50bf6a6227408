//! Limb kernels for the field mod p = 2^256 − 2^32 − 977, radix 2^52.
//!
//! Written after reading libsecp256k1's `field_5x52_int128_impl.h` and k256's
//! `field_5x52.rs`; the column schedule is the same idea (fold each high product column
//! with 2^260 ≡ 0x1000003D10 as soon as it is complete), the code and the bound
//! arguments below are our own.

/// 2^52 − 1: mask of one full limb.
const M52: u64 = 0xF_FFFF_FFFF_FFFF;
/// 2^48 − 1: mask of the top limb (bits 208..256).
const M48: u64 = 0xFFFF_FFFF_FFFF;
/// 2^256 mod p = 2^32 + 977 (33 bits).
const R256: u64 = 0x1_0000_03D1;
/// 2^260 mod p = 16 · (2^32 + 977) (37 bits). Column 5 of a product sits at 2^260.
const R260: u64 = R256 << 4;
/// Lowest limb of p: 2^52 − (2^32 + 977).
const P0: u64 = M52 - R256 + 1;
/// Limbs of p; `negate` subtracts from a multiple of these.
const P_LIMBS: [u64; 5] = [P0, M52, M52, M52, M48];

/// A field element mod p as five unsigned 64-bit limbs in radix 2^52.
///
/// **Value.** `n[0] + n[1]·2^52 + n[2]·2^104 + n[3]·2^156 + n[4]·2^208`, taken mod p.
///
/// **Magnitude m.** The limbs obey `n[i] ≤ 2·m·(2^52 − 1)` for i < 4 and
/// `n[4] ≤ 2·m·(2^48 − 1)`. Sums of elements add their magnitudes; `mul`/`square`
/// accept magnitude ≤ 8 and return magnitude 1. Nothing here may exceed magnitude 32
/// (limbs < 2^58, so sums and small multiples never overflow 64 bits).
///
/// **Normalized.** `n[0..4] < 2^52`, `n[4] < 2^48` and the value is `< p`: the unique
/// canonical representation. Only normalized elements compare, serialize or test
/// parity correctly limb by limb.
///
/// This type does no bookkeeping; in debug builds [`super::FieldElement`] wraps it in a
/// checker that tracks magnitude and normalization and asserts every rule above.
#[derive(Clone, Copy, Debug)]
pub struct FieldElement5x52(pub(crate) [u64; 5]);

impl FieldElement5x52 {
    /// Zero (normalized).
    pub const ZERO: Self = Self([0; 5]);
    /// One (normalized).
    pub const ONE: Self = Self([1, 0, 0, 0, 0]);

    /// Limbs as stored, not normalized.
    #[inline(always)]
    pub const fn limbs(&self) -> [u64; 5] {
        self.0
    }

    /// Builds an element from raw limbs; the caller states their magnitude elsewhere.
    #[inline(always)]
    pub const fn from_limbs(l: [u64; 5]) -> Self {
        Self(l)
    }

    /// Splits 32 big-endian bytes into limbs without reducing: any 256-bit value,
    /// magnitude 1 (limbs < 2^52, top limb < 2^48), possibly `≥ p`.
    #[inline]
    pub const fn from_bytes_unchecked(b: &[u8; 32]) -> Self {
        Self::from_u64x4(&super::bytes::be_words(b))
    }

    /// Regroups a 256-bit value given as four little-endian u64 words into radix-2^52
    /// limbs (magnitude 1, possibly `≥ p`).
    #[inline]
    pub const fn from_u64x4(w: &[u64; 4]) -> Self {
        Self([
            w[0] & M52,
            ((w[0] >> 52) | (w[1] << 12)) & M52,
            ((w[1] >> 40) | (w[2] << 24)) & M52,
            ((w[2] >> 28) | (w[3] << 36)) & M52,
            w[3] >> 16,
        ])
    }

    /// Four little-endian u64 words of a normalized element (inverse of
    /// [`Self::from_u64x4`]).
    #[inline]
    pub const fn to_u64x4(&self) -> [u64; 4] {
        let n = &self.0;
        [
            n[0] | (n[1] << 52),
            (n[1] >> 12) | (n[2] << 40),
            (n[2] >> 24) | (n[3] << 28),
            (n[3] >> 36) | (n[4] << 16),
        ]
    }

    /// Whether limbs of magnitude 1 (each < 2^52, top < 2^48) hold a value `≥ p`.
    #[inline]
    pub const fn limbs_overflow(l: &[u64; 5]) -> bool {
        l[4] == M48 && (l[3] & l[2] & l[1]) == M52 && l[0] >= P0
    }

    /// Whether the limbs are the canonical representation (see the type docs).
    #[cfg(any(test, debug_assertions, feature = "internals"))]
    pub const fn is_normalized_repr(&self) -> bool {
        let n = &self.0;
        n[0] <= M52
            && n[1] <= M52
            && n[2] <= M52
            && n[3] <= M52
            && n[4] <= M48
            && !Self::limbs_overflow(n)
    }

    /// Whether the limbs respect the bound of magnitude `m` (see the type docs).
    #[cfg(any(test, debug_assertions, feature = "internals"))]
    pub const fn has_magnitude(&self, m: u32) -> bool {
        let m = m as u64;
        let n = &self.0;
        n[0] <= 2 * m * M52
            && n[1] <= 2 * m * M52
            && n[2] <= 2 * m * M52
            && n[3] <= 2 * m * M52
            && n[4] <= 2 * m * M48
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
        Self([v & M52, v >> 52, 0, 0, 0])
    }

    /// Limb-wise sum. Magnitude: the sum of both magnitudes (≤ 32).
    #[inline(always)]
    pub const fn add(&self, rhs: &Self) -> Self {
        let (a, b) = (&self.0, &rhs.0);
        Self([
            a[0] + b[0],
            a[1] + b[1],
            a[2] + b[2],
            a[3] + b[3],
            a[4] + b[4],
        ])
    }

    /// Limb-wise product with a small integer. Magnitude: `m·k` (≤ 32).
    #[inline(always)]
    pub const fn mul_int(&self, k: u32) -> Self {
        let k = k as u64;
        let a = &self.0;
        Self([a[0] * k, a[1] * k, a[2] * k, a[3] * k, a[4] * k])
    }

    /// `2·(m+1)·p − self`, where `m ≥` the magnitude of `self` (m ≤ 31).
    ///
    /// Each limb of `2·(m+1)·P_LIMBS` is at least `2·(m+1)·(2^52 − 2^33)`, more than the
    /// `2·m·(2^52 − 1)` bound of `self` (top limb likewise with 2^48), so no limb
    /// underflows; the result's limbs are at most `2·(m+1)` times `P_LIMBS`, i.e.
    /// magnitude m + 1.
    #[inline(always)]
    pub const fn negate(&self, m: u32) -> Self {
        let k = 2 * (m as u64 + 1);
        let a = &self.0;
        Self([
            k * P_LIMBS[0] - a[0],
            k * P_LIMBS[1] - a[1],
            k * P_LIMBS[2] - a[2],
            k * P_LIMBS[3] - a[3],
            k * P_LIMBS[4] - a[4],
        ])
    }

    /// Adds `k·R256` to limb 0 and propagates carries up to the top limb (which keeps
    /// its excess). Callers bound k and the limbs so nothing overflows.
    #[inline(always)]
    fn fold_and_carry([mut t0, mut t1, mut t2, mut t3, mut t4]: [u64; 5], k: u64) -> [u64; 5] {
        t0 += k * R256;
        t1 += t0 >> 52;
        t0 &= M52;
        t2 += t1 >> 52;
        t1 &= M52;
        t3 += t2 >> 52;
        t2 &= M52;
        t4 += t3 >> 52;
        t3 &= M52;
        [t0, t1, t2, t3, t4]
    }

    /// One carry pass that folds bits ≥ 256 back with 2^256 ≡ R256.
    ///
    /// For magnitude ≤ 32 the input limbs are < 2^58 (top < 2^54), so the fold adds
    /// < 2^6·2^33 to limb 0 and every carry is < 2^7. Output: limbs 0..4 < 2^52 and
    /// top limb ≤ 2^48 + 2^7, i.e. magnitude 1, value < 2^256 + 2^215.
    #[inline(always)]
    fn carry_pass(&self) -> [u64; 5] {
        let mut t = self.0;
        let x = t[4] >> 48;
        t[4] &= M48;
        Self::fold_and_carry(t, x)
    }

    /// Same value, magnitude 1 (input magnitude ≤ 32). Not normalized.
    #[inline(always)]
    pub fn normalize_weak(&self) -> Self {
        Self(self.carry_pass())
    }

    /// The canonical representation (input magnitude ≤ 32).
    ///
    /// After one carry pass (`carry_pass`) the value V is < 2^256 + 2^215 < 2p, so at
    /// most one subtraction of p is needed: exactly when bit 256 is set (top limb ≥ 2^48)
    /// or V lies in [p, 2^256). Subtracting p is adding R256 and clearing bit 256.
    #[inline]
    pub fn normalize(&self) -> Self {
        let t = self.carry_pass();
        let over = (t[4] >> 48) != 0 || Self::limbs_overflow(&t);
        let mut t = Self::fold_and_carry(t, over as u64);
        t[4] &= M48;
        Self(t)
    }

    /// Whether the value is 0 mod p (input magnitude ≤ 32).
    ///
    /// After one carry pass the value V < 2p (see `carry_pass`), so V ≡ 0 iff
    /// V = 0 or V = p, and both have a unique limb pattern in that form.
    #[inline]
    pub fn normalizes_to_zero(&self) -> bool {
        let t = self.carry_pass();
        // Word-wise, not `t == P_LIMBS`: an array comparison compiles to a call to `bcmp`,
        // which was 6-7 % of a 16-signature batch (Strauss checks Z on every addition).
        let zero = t[0] | t[1] | t[2] | t[3] | t[4];
        let p = (t[0] ^ P_LIMBS[0])
            | (t[1] ^ P_LIMBS[1])
            | (t[2] ^ P_LIMBS[2])
            | (t[3] ^ P_LIMBS[3])
            | (t[4] ^ P_LIMBS[4]);
        zero == 0 || p == 0
    }

    /// Whether a normalized element is zero.
    #[inline(always)]
    pub const fn is_zero(&self) -> bool {
        let n = &self.0;
        (n[0] | n[1] | n[2] | n[3] | n[4]) == 0
    }

    /// Parity of a normalized element.
    #[inline(always)]
    #[cfg(any(test, feature = "internals"))]
    pub const fn is_odd(&self) -> bool {
        self.0[0] & 1 == 1
    }

    /// Product mod p. Inputs: magnitude ≤ 8. Output: magnitude 1 (limbs 0..4 < 2^52,
    /// top limb < 2^48 + 2^44), not normalized.
    ///
    /// # Bounds
    /// Magnitude 8 means `a[i], b[i] < 16·2^52 = 2^56` (i < 4) and `a[4], b[4] < 2^52`.
    /// So a product of two low limbs is < 2^112, and any product involving a top limb
    /// is < 2^108. Column k is `∑_{i+j=k} a[i]·b[j]`, worth 2^(52k). Columns 5..8 are
    /// folded down: 2^260 ≡ R260 (< 2^37), i.e. column 5+k folds into column k times
    /// R260. Two u128 accumulators run interleaved: `d` walks the high columns
    /// (3, 4, 5, 6, 7) and `c` the low ones (8 first, then 0, 1, 2, 3, 4). Each line's
    /// comment gives the accumulator bound after that line.
    #[inline(always)]
    pub fn mul(&self, rhs: &Self) -> Self {
        let [a0, a1, a2, a3, a4] = self.0;
        let [b0, b1, b2, b3, b4] = rhs.0;
        let m = |x: u64, y: u64| (x as u128) * (y as u128);
        debug_assert!(
            a0 >> 56 == 0 && a1 >> 56 == 0 && a2 >> 56 == 0 && a3 >> 56 == 0 && a4 >> 52 == 0
        );
        debug_assert!(
            b0 >> 56 == 0 && b1 >> 56 == 0 && b2 >> 56 == 0 && b3 >> 56 == 0 && b4 >> 52 == 0
        );

        // Column 3 (four products < 2^112): d < 2^114.
        let mut d = m(a0, b3) + m(a1, b2) + m(a2, b1) + m(a3, b0);
        // Column 8 (< 2^104). Its low 64 bits fold into column 3 (2^416 = 2^260·2^156):
        // + R260·(c mod 2^64) < 2^101, so d < 2^115. The high part c>>64 < 2^40 is
        // worth 2^480 = 2^260·2^220, i.e. column 4 shifted by 12 bits.
        let mut c = m(a4, b4);
        d += m(R260, c as u64);
        c >>= 64;
        let t3 = (d as u64) & M52;
        d >>= 52; // d < 2^63
                  // Column 4 (three products < 2^112, two < 2^108, plus (R260<<12)·c < 2^89):
                  // d < 2^63 + 3·2^112 + 2^109 + 2^89 < 2^114.
        d += m(a0, b4) + m(a1, b3) + m(a2, b2) + m(a3, b1) + m(a4, b0);
        d += m(R260 << 12, c as u64);
        let t4full = (d as u64) & M52;
        d >>= 52; // d < 2^62
                  // Bits 48..52 of column 4 are bits 256..260 of the product: keep them as tx
                  // and fold them with column 5 below.
        let tx = t4full >> 48;
        let t4 = t4full & M48;

        // Column 0: c = a0·b0 < 2^112.
        c = m(a0, b0);
        // Column 5 (two products < 2^112, two < 2^108): d < 2^62 + 2^113 + 2^109 < 2^114.
        d += m(a1, b4) + m(a2, b3) + m(a3, b2) + m(a4, b1);
        // Low 52 bits of column 5 with tx below them: a 56-bit number worth 2^256,
        // folded into column 0 with R256 (< 2^33): + < 2^89, so c < 2^113.
        let u0 = (((d as u64) & M52) << 4) | tx;
        d >>= 52; // d < 2^62
        c += m(u0, R256);
        let r0 = (c as u64) & M52;
        c >>= 52; // c < 2^61

        // Column 1 (two products < 2^112): c < 2^114.
        c += m(a0, b1) + m(a1, b0);
        // Column 6 (one < 2^112, two < 2^108): d < 2^62 + 2^113 < 2^114. Its low 52
        // bits fold into column 1 with R260: + < 2^89, c < 2^115.
        d += m(a2, b4) + m(a3, b3) + m(a4, b2);
        c += m((d as u64) & M52, R260);
        d >>= 52; // d < 2^62
        let r1 = (c as u64) & M52;
        c >>= 52; // c < 2^63

        // Column 2 (three products < 2^112): c < 2^63 + 3·2^112 < 2^114.
        c += m(a0, b2) + m(a1, b1) + m(a2, b0);
        // Column 7 (two products < 2^108): d < 2^62 + 2^109 < 2^110. Its low 64 bits
        // fold into column 2 (+ < 2^101, c < 2^115); the rest d>>64 < 2^46 is worth
        // column 2 + 64 bits = column 3 + 12 bits.
        d += m(a3, b4) + m(a4, b3);
        c += m(R260, d as u64);
        d >>= 64;
        let r2 = (c as u64) & M52;
        c >>= 52; // c < 2^63

        // Column 3: saved t3 (< 2^52) plus (R260<<12)·d < 2^95: c < 2^96.
        c += m(R260 << 12, d as u64) + t3 as u128;
        let r3 = (c as u64) & M52;
        c >>= 52; // c < 2^44
                  // Column 4: t4 < 2^48, so r4 < 2^48 + 2^44.
        let r4 = (c as u64) + t4;
        Self([r0, r1, r2, r3, r4])
    }

    /// Square mod p: [`Self::mul`] with the symmetric products merged (doubled factor
    /// < 2^57, so each merged product is still < 2^113 and the column bounds of `mul`
    /// hold with room to spare). Input magnitude ≤ 8; output magnitude 1.
    #[inline(always)]
    pub fn square(&self) -> Self {
        let [a0, a1, a2, a3, a4] = self.0;
        let m = |x: u64, y: u64| (x as u128) * (y as u128);
        debug_assert!(
            a0 >> 56 == 0 && a1 >> 56 == 0 && a2 >> 56 == 0 && a3 >> 56 == 0 && a4 >> 52 == 0
        );

        // Column 3: 2·a0·a3 + 2·a1·a2 (each < 2^113), d < 2^114.
        let mut d = m(a0 * 2, a3) + m(a1 * 2, a2);
        // Column 8 as in mul.
        let mut c = m(a4, a4);
        d += m(R260, c as u64);
        c >>= 64;
        let t3 = (d as u64) & M52;
        d >>= 52;
        // Column 4: 2·a0·a4 + 2·a1·a3 + a2², d < 2^63 + 2^109 + 2^113 + 2^112 + 2^89.
        let a4x2 = a4 * 2;
        d += m(a0, a4x2) + m(a1 * 2, a3) + m(a2, a2);
        d += m(R260 << 12, c as u64);
        let t4full = (d as u64) & M52;
        d >>= 52;
        let tx = t4full >> 48;
        let t4 = t4full & M48;

        // Column 0 and column 5 (2·a1·a4 + 2·a2·a3).
        c = m(a0, a0);
        d += m(a1, a4x2) + m(a2 * 2, a3);
        let u0 = (((d as u64) & M52) << 4) | tx;
        d >>= 52;
        c += m(u0, R256);
        let r0 = (c as u64) & M52;
        c >>= 52;

        // Column 1 (2·a0·a1) and column 6 (2·a2·a4 + a3²).
        let a0x2 = a0 * 2;
        c += m(a0x2, a1);
        d += m(a2, a4x2) + m(a3, a3);
        c += m((d as u64) & M52, R260);
        d >>= 52;
        let r1 = (c as u64) & M52;
        c >>= 52;

        // Column 2 (2·a0·a2 + a1²) and column 7 (2·a3·a4).
        c += m(a0x2, a2) + m(a1, a1);
        d += m(a3, a4x2);
        c += m(R260, d as u64);
        d >>= 64;
        let r2 = (c as u64) & M52;
        c >>= 52;

        c += m(R260 << 12, d as u64) + t3 as u128;
        let r3 = (c as u64) & M52;
        c >>= 52;
        let r4 = (c as u64) + t4;
        Self([r0, r1, r2, r3, r4])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_limbs_match_p() {
        // p = 2^256 - 2^32 - 977 in big-endian bytes.
        let mut p = [0xffu8; 32];
        p[27] = 0xfe;
        p[28] = 0xff;
        p[29] = 0xff;
        p[30] = 0xfc;
        p[31] = 0x2f;
        assert_eq!(FieldElement5x52::from_bytes_unchecked(&p).0, P_LIMBS);
        assert!(FieldElement5x52::limbs_overflow(&P_LIMBS));
        assert!(FieldElement5x52(P_LIMBS).normalizes_to_zero());
        assert!(FieldElement5x52(P_LIMBS).normalize().is_zero());
    }

    #[test]
    fn bytes_round_trip() {
        let mut b = [0u8; 32];
        for (i, x) in b.iter_mut().enumerate() {
            *x = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
        b[0] = 0x7f;
        assert_eq!(FieldElement5x52::from_bytes_unchecked(&b).to_bytes(), b);
    }
}
