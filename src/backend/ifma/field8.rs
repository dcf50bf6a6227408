//! Eight field elements in AVX-512 lanes, radix 2^52 (the IFMA limb kernels).
//!
//! # Layout
//!
//! An [`Fe8`] holds eight independent field elements, one per 64-bit lane, structure of
//! arrays: vector `i` holds limb `i` of every element.
//!
//! ```text
//!            lane 0    lane 1    ...   lane 7
//!   .0[0]  | a0.l0   | a1.l0   | ... | a7.l0 |   weight 2^0
//!   .0[1]  | a0.l1   | a1.l1   | ... | a7.l1 |   weight 2^52
//!   .0[2]  | a0.l2   | a1.l2   | ... | a7.l2 |   weight 2^104
//!   .0[3]  | a0.l3   | a1.l3   | ... | a7.l3 |   weight 2^156
//!   .0[4]  | a0.l4   | a1.l4   | ... | a7.l4 |   weight 2^208
//! ```
//!
//! Lane value = Σ lᵢ·2^(52i) mod p, p = 2^256 − 0x1000003D1.
//!
//! # Limb states used in this file
//!
//! - **IFMA-ready**: every limb < 2^52. `vpmadd52{l,h}uq` reads only bits 0..51 of its two
//!   multiplicands, so any operand of [`mul`] or [`sqr`] must be IFMA-ready or bits are lost.
//! - **carried**: limbs 0..3 < 2^52 and limb 4 < 2^49 (so IFMA-ready, value < 2^257).
//!   [`mul`], [`sqr`] and [`carry`] produce it.
//! - **normalized**: carried, limb 4 < 2^48 and value < p: the unique representation.
//!   [`normalize`] produces it.
//!
//! # Variable time
//!
//! The arithmetic here is constant time per lane, but the callers are `_vartime`.

use core::arch::x86_64::{
    __m512i, __mmask8, _mm512_add_epi64, _mm512_and_si512, _mm512_cmpeq_epu64_mask,
    _mm512_loadu_si512, _mm512_madd52hi_epu64, _mm512_madd52lo_epu64, _mm512_mask_blend_epi64,
    _mm512_set1_epi64, _mm512_setzero_si512, _mm512_slli_epi64, _mm512_srli_epi64,
    _mm512_storeu_si512, _mm512_sub_epi64, _mm512_test_epi64_mask,
};

/// 2^52 − 1.
pub(crate) const MASK52: u64 = (1 << 52) - 1;
/// 2^48 − 1 (the top limb of a normalized element).
pub(crate) const MASK48: u64 = (1 << 48) - 1;
/// 2^260 mod p = 0x1000003D1 · 2^4 (37 bits).
pub(crate) const R260: u64 = 0x10_0000_3D10;
/// 2^256 mod p = 2^32 + 977 (33 bits).
pub(crate) const R256: u64 = 0x1_0000_03D1;
/// The limbs of 2p (each limb 0..3 ≥ 2^53 − 2^33, limb 4 = 2^49 − 2), used by [`sub`].
pub(crate) const TWO_P: [u64; 5] = [
    0x1F_FFFD_FFFF_F85E,
    0x1F_FFFF_FFFF_FFFE,
    0x1F_FFFF_FFFF_FFFE,
    0x1F_FFFF_FFFF_FFFE,
    0x1_FFFF_FFFF_FFFE,
];

/// Eight field elements, one per lane (see the module docs for the layout).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fe8(pub(crate) [__m512i; 5]);

#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn splat(v: u64) -> __m512i {
    _mm512_set1_epi64(v as i64)
}

/// `acc + lo52(b·c)` per lane (bits 0..51 of the 104-bit product of the low 52 bits).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn lo(acc: __m512i, b: __m512i, c: __m512i) -> __m512i {
    _mm512_madd52lo_epu64(acc, b, c)
}

/// `acc + hi52(b·c)` per lane (bits 52..103 of the 104-bit product of the low 52 bits).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn hi(acc: __m512i, b: __m512i, c: __m512i) -> __m512i {
    _mm512_madd52hi_epu64(acc, b, c)
}

#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn add64(a: __m512i, b: __m512i) -> __m512i {
    _mm512_add_epi64(a, b)
}

#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn shr<const N: u32>(a: __m512i) -> __m512i {
    _mm512_srli_epi64::<N>(a)
}

#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn and(a: __m512i, b: __m512i) -> __m512i {
    _mm512_and_si512(a, b)
}

impl Fe8 {
    /// Eight copies of the normalized limbs `l`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
    pub(crate) fn splat(l: &[u64; 5]) -> Self {
        Fe8([
            splat(l[0]),
            splat(l[1]),
            splat(l[2]),
            splat(l[3]),
            splat(l[4]),
        ])
    }

    /// Transposes eight limb arrays (array-of-structures, one element per lane) into lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
    pub(crate) fn from_lanes(elems: &[[u64; 5]; 8]) -> Self {
        let mut t = [[0u64; 8]; 5];
        for (lane, e) in elems.iter().enumerate() {
            for (i, &limb) in e.iter().enumerate() {
                t[i][lane] = limb;
            }
        }
        Fe8([
            load(&t[0]),
            load(&t[1]),
            load(&t[2]),
            load(&t[3]),
            load(&t[4]),
        ])
    }

    /// Transposes the lanes back into eight limb arrays (the inverse of [`Fe8::from_lanes`]).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
    pub(crate) fn to_lanes(self) -> [[u64; 5]; 8] {
        let mut t = [[0u64; 8]; 5];
        for (i, v) in self.0.iter().enumerate() {
            store(&mut t[i], *v);
        }
        let mut out = [[0u64; 5]; 8];
        for (lane, e) in out.iter_mut().enumerate() {
            for (i, limb) in e.iter_mut().enumerate() {
                *limb = t[i][lane];
            }
        }
        out
    }
}

/// Loads eight `u64` into a vector.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn load(a: &[u64; 8]) -> __m512i {
    // SAFETY: `a` is a valid reference to 64 readable bytes, and `loadu` has no alignment
    // requirement. The target features this intrinsic needs are enabled on this function.
    unsafe { _mm512_loadu_si512(a.as_ptr().cast()) }
}

/// Stores a vector into eight `u64`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn store(out: &mut [u64; 8], v: __m512i) {
    // SAFETY: `out` is a valid exclusive reference to 64 writable bytes, and `storeu` has no
    // alignment requirement. The target features this intrinsic needs are enabled here.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), v) }
}

/// Reduces the ten product columns `c[0..10]` (column k has weight 2^(52k)) to a carried
/// element (limbs 0..3 < 2^52, limb 4 ≤ 2^48).
///
/// Precondition (established by [`mul`] and [`sqr`] for IFMA-ready inputs): column k is a sum
/// of at most N(k) terms each < 2^52, N = [1, 3, 5, 7, 9, 9, 7, 5, 3, 1]; so every column
/// is < 9·2^52 < 2^55.2 and column 9 (a single `hi` term) is < 2^52.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn reduce(c: [__m512i; 10]) -> Fe8 {
    let m52 = splat(MASK52);
    let m48 = splat(MASK48);
    let r260 = splat(R260);
    let r256 = splat(R256);

    // Columns 5..8 are < 2^55.2: split each as u + v·2^52 with u < 2^52 and v < 9 < 2^4, so
    // both are IFMA-ready. Column 9 < 2^52 is IFMA-ready as it stands.
    // Column k ≥ 5 has weight 2^(52(k-5))·2^260 ≡ 2^(52(k-5))·R260, so
    //   u_k·R260 (< 2^89) goes to column k-5 (lo 52 bits) and k-4 (hi 37 bits),
    //   v_k·2^52·R260 goes to column k-4; v_k·R260 < 2^41 is exact in the lo half.
    let (u5, v5) = (and(c[5], m52), shr::<52>(c[5]));
    let (u6, v6) = (and(c[6], m52), shr::<52>(c[6]));
    let (u7, v7) = (and(c[7], m52), shr::<52>(c[7]));
    let (u8, v8) = (and(c[8], m52), shr::<52>(c[8]));
    let u9 = c[9];

    // Each column below gains at most one lo term (< 2^52), one hi term (< 2^37) and one
    // v term (< 2^41): all stay < 10.01·2^52 < 2^55.4.
    let d0 = lo(c[0], u5, r260);
    let d1 = lo(lo(hi(c[1], u5, r260), u6, r260), v5, r260);
    let d2 = lo(lo(hi(c[2], u6, r260), u7, r260), v6, r260);
    let d3 = lo(lo(hi(c[3], u7, r260), u8, r260), v7, r260);
    let d4 = lo(lo(hi(c[4], u8, r260), u9, r260), v8, r260);
    // Weight 2^260 remains: hi52(u9·R260) < 2^37.
    let d5 = hi(_mm512_setzero_si512(), u9, r260);

    // Fold everything at or above 2^256 into limb 0 first (2^256 ≡ R256), as libsecp256k1
    // does, so that one carry chain ends with limb 4 ≤ 2^48.
    let d4 = add64(d4, shr::<52>(d3)); // < 2^55.4 + 2^4
    let d3 = and(d3, m52);
    // t = floor(value_above_2^256): (d4 >> 48) < 2^7.5, d5·2^4 < 2^41, so t < 2^42 (IFMA-ready).
    let t = add64(shr::<48>(d4), _mm512_slli_epi64::<4>(d5));
    let d4 = and(d4, m48);
    // t·R256 < 2^75: lo 52 bits to limb 0, hi (< 2^23) to limb 1.
    let d0 = lo(d0, t, r256); // < 2^53 + 2^52
    let d1 = hi(d1, t, r256); // < 2^55.4 + 2^23

    // Carry chain. Limb 3 was < 2^52 and gains < 2^4, so it carries at most 1 into limb 4,
    // which was < 2^48: the result has limb 4 ≤ 2^48.
    let d1 = add64(d1, shr::<52>(d0));
    let d0 = and(d0, m52);
    let d2 = add64(d2, shr::<52>(d1));
    let d1 = and(d1, m52);
    let d3 = add64(d3, shr::<52>(d2));
    let d2 = and(d2, m52);
    let d4 = add64(d4, shr::<52>(d3));
    let d3 = and(d3, m52);
    Fe8([d0, d1, d2, d3, d4])
}

/// Lane-wise product.
///
/// # Magnitude
///
/// Inputs IFMA-ready (every limb < 2^52; any carried element is); output carried
/// (limbs 0..3 < 2^52, limb 4 ≤ 2^48).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn mul(a: &Fe8, b: &Fe8) -> Fe8 {
    let z = _mm512_setzero_si512();
    // Two accumulators per column (lo products and hi products) halve the dependent madd
    // chains. aᵢ·bⱼ < 2^104: its lo 52 bits go to column i+j, its hi 52 bits to i+j+1.
    let mut cl = [z; 10];
    let mut ch = [z; 10];
    for i in 0..5 {
        for j in 0..5 {
            cl[i + j] = lo(cl[i + j], a.0[i], b.0[j]);
            ch[i + j + 1] = hi(ch[i + j + 1], a.0[i], b.0[j]);
        }
    }
    let mut c = [z; 10];
    for k in 0..10 {
        c[k] = add64(cl[k], ch[k]);
    }
    reduce(c)
}

/// Lane-wise square.
///
/// # Magnitude
///
/// Input IFMA-ready; output carried. The columns equal those of `mul(a, a)`, so the bounds
/// of [`reduce`] hold.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn sqr(a: &Fe8) -> Fe8 {
    let z = _mm512_setzero_si512();
    // Cross products aᵢ·aⱼ (i < j) once, then doubled by a shift; doubling the operand
    // instead could push it past 2^52, which IFMA would truncate.
    let mut x = [z; 10];
    for i in 0..5 {
        for j in (i + 1)..5 {
            x[i + j] = lo(x[i + j], a.0[i], a.0[j]);
            x[i + j + 1] = hi(x[i + j + 1], a.0[i], a.0[j]);
        }
    }
    let mut c = [z; 10];
    for k in 0..10 {
        c[k] = _mm512_slli_epi64::<1>(x[k]);
    }
    for i in 0..5 {
        c[2 * i] = lo(c[2 * i], a.0[i], a.0[i]);
        c[2 * i + 1] = hi(c[2 * i + 1], a.0[i], a.0[i]);
    }
    reduce(c)
}

/// Lane-wise sum without carries.
///
/// # Magnitude
///
/// Limbs add; the result is not IFMA-ready in general: pass it through [`carry`].
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn add(a: &Fe8, b: &Fe8) -> Fe8 {
    Fe8([
        add64(a.0[0], b.0[0]),
        add64(a.0[1], b.0[1]),
        add64(a.0[2], b.0[2]),
        add64(a.0[3], b.0[3]),
        add64(a.0[4], b.0[4]),
    ])
}

/// Lane-wise `a − b`, computed as `a + 2p − b` without carries.
///
/// # Magnitude
///
/// `b` must be carried (limbs 0..3 < 2^52 ≤ 2p's limbs 0..3, limb 4 ≤ 2^49 − 2 = 2p's
/// limb 4; [`carry`] gives < 2^48 + 2^11), so no limb borrows. `a`'s limbs must be < 2^62. Each output limb is < a's limb + 2^54: pass
/// the result through [`carry`] before multiplying.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn sub(a: &Fe8, b: &Fe8) -> Fe8 {
    let mut r = [_mm512_setzero_si512(); 5];
    for i in 0..5 {
        r[i] = add64(a.0[i], _mm512_sub_epi64(splat(TWO_P[i]), b.0[i]));
    }
    Fe8(r)
}

/// Weak normalization: one carry pass that makes any element with limbs < 2^62 carried.
///
/// # Magnitude
///
/// Input limbs < 2^62; output limbs 0..3 < 2^52 and limb 4 < 2^48 + 2^11 (carried).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn carry(a: &Fe8) -> Fe8 {
    let m52 = splat(MASK52);
    let [l0, l1, l2, l3, l4] = a.0;
    // The part of limb 4 at or above 2^256: t < 2^14, t·R256 < 2^47, exact in the lo half.
    let t = shr::<48>(l4);
    let l4 = and(l4, splat(MASK48));
    let l0 = lo(l0, t, splat(R256)); // < 2^62 + 2^47
                                     // Each carry is < 2^11, so limb 4 ends < 2^48 + 2^11.
    let l1 = add64(l1, shr::<52>(l0));
    let l0 = and(l0, m52);
    let l2 = add64(l2, shr::<52>(l1));
    let l1 = and(l1, m52);
    let l3 = add64(l3, shr::<52>(l2));
    let l2 = and(l2, m52);
    let l4 = add64(l4, shr::<52>(l3));
    let l3 = and(l3, m52);
    Fe8([l0, l1, l2, l3, l4])
}

/// Full normalization: the unique representation, value < p.
///
/// # Magnitude
///
/// Input limbs < 2^62; output normalized.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn normalize(a: &Fe8) -> Fe8 {
    // One carry pass makes it carried (limb 4 < 2^48 + 2^11), what `normalize_carried` needs.
    normalize_carried(&carry(a))
}

/// Full normalization of a carried element: one conditional subtraction of p, no carry pass.
///
/// # Magnitude
///
/// Input carried (limbs 0..3 < 2^52, limb 4 < 2^48 + 2^11: what [`carry`], [`mul`] and
/// [`sqr`] return); output normalized.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn normalize_carried(a: &Fe8) -> Fe8 {
    let m52 = splat(MASK52);
    let m48 = splat(MASK48);
    // The value v < 2^208 + (2^48 + 2^11)·2^208 = 2^256 + 2^219 < 2p, so one subtraction of
    // p suffices.
    let [l0, l1, l2, l3, l4] = a.0;
    // v ≥ p iff w = v + R256 ≥ 2^256; then v − p = w − 2^256 < p.
    let w0 = add64(l0, splat(R256));
    let w1 = add64(l1, shr::<52>(w0));
    let w0 = and(w0, m52);
    let w2 = add64(l2, shr::<52>(w1));
    let w1 = and(w1, m52);
    let w3 = add64(l3, shr::<52>(w2));
    let w2 = and(w2, m52);
    let w4 = add64(l4, shr::<52>(w3));
    let w3 = and(w3, m52);
    // w0 < 2^52 + 2^33 carries at most 1, and so does each limb after it: w4 ≤ 2^48 + 2^11
    // < 2^49, and the masked limbs 0..3 are < 2^52, so w ≥ 2^256 iff bit 48 of w4 is set.
    // Where it is clear, v < p and limb 4 of v (≤ w4) is < 2^48: v is normalized as it is.
    let ge: __mmask8 = _mm512_test_epi64_mask(w4, splat(1 << 48));
    let w4 = and(w4, m48);
    select(ge, &Fe8([l0, l1, l2, l3, l4]), &Fe8([w0, w1, w2, w3, w4]))
}

/// Lanes where the two normalized inputs are equal (bit i = lane i).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn eq_normalized(a: &Fe8, b: &Fe8) -> __mmask8 {
    let mut m: __mmask8 = 0xFF;
    for i in 0..5 {
        m &= _mm512_cmpeq_epu64_mask(a.0[i], b.0[i]);
    }
    m
}

/// Lanes where the normalized input is odd.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn is_odd_normalized(a: &Fe8) -> __mmask8 {
    _mm512_test_epi64_mask(a.0[0], splat(1))
}

/// Per lane: `b` where `mask` is set, `a` elsewhere.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn select(mask: __mmask8, a: &Fe8, b: &Fe8) -> Fe8 {
    let [a0, a1, a2, a3, a4] = a.0;
    let [b0, b1, b2, b3, b4] = b.0;
    Fe8([
        _mm512_mask_blend_epi64(mask, a0, b0),
        _mm512_mask_blend_epi64(mask, a1, b1),
        _mm512_mask_blend_epi64(mask, a2, b2),
        _mm512_mask_blend_epi64(mask, a3, b3),
        _mm512_mask_blend_epi64(mask, a4, b4),
    ])
}

/// Negates (mod p) the lanes selected by `mask` of a normalized element; normalized output.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn negate_lanes(a: &Fe8, mask: __mmask8) -> Fe8 {
    let zero = Fe8([_mm512_setzero_si512(); 5]);
    // 2p − a ∈ (p, 2p] for a < p, limbs < 2^54: normalize maps it to p − a (or 0 for a = 0).
    select(mask, a, &normalize(&sub(&zero, a)))
}
