//! BIP-340 lift_x in lanes: 16 square roots at a time (two [`Fe8`] in flight).
//!
//! Per lane: c = x³ + 7, r = c^((p+1)/4) by the 253 S + 13 M chain, ok iff r² = c (both fully
//! normalized), y = r normalized and negated if odd. No inversion anywhere.

use super::field8::{
    add, carry, eq_normalized, is_odd_normalized, mul, negate_lanes, normalize, sqr, Fe8,
};
use core::arch::x86_64::__mmask8;

/// Vectors in flight: two independent chains hide the IFMA latency (`docs/backend.md`, "How
/// the IFMA arm works"; four in flight measured no faster: `docs/experiments.md`). A tail of at most 8 elements runs as a single vector.
pub(crate) const K: usize = 2;
/// Padding for the tail lanes of the last block: a valid (normalized) x whose result is
/// discarded.
const PAD_X: [u64; 5] = [1, 0, 0, 0, 0];

#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn sqr_k<const K: usize>(a: &[Fe8; K], n: usize) -> [Fe8; K] {
    let mut r = *a;
    for _ in 0..n {
        for v in r.iter_mut() {
            *v = sqr(v);
        }
    }
    r
}

#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn mul_k<const K: usize>(a: &[Fe8; K], b: &[Fe8; K]) -> [Fe8; K] {
    let mut r = *a;
    for (v, w) in r.iter_mut().zip(b) {
        *v = mul(v, w);
    }
    r
}

/// a^((p+1)/4) per lane, for K vectors at once.
///
/// (p+1)/4 = 2^254 − 2^30 − 244: its binary form is 223 ones, one zero, 22 ones, four zeros,
/// then `11 00`. The chain builds x_k = a^(2^k − 1) for the block lengths it needs
/// (x2, x3, x6, x9, x11, x22, x44, x88, x176, x220, x223) and appends the tail.
///
/// # Magnitude
///
/// Input IFMA-ready; output carried (not normalized).
#[rustfmt::skip]
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn sqrt_candidate<const K: usize>(a: &[Fe8; K]) -> [Fe8; K] {
    let x2   = mul_k(&sqr_k(a, 1), a);            //   1 S, 1 M
    let x3   = mul_k(&sqr_k(&x2, 1), a);          //   1 S, 1 M
    let x6   = mul_k(&sqr_k(&x3, 3), &x3);        //   3 S, 1 M
    let x9   = mul_k(&sqr_k(&x6, 3), &x3);        //   3 S, 1 M
    let x11  = mul_k(&sqr_k(&x9, 2), &x2);        //   2 S, 1 M
    let x22  = mul_k(&sqr_k(&x11, 11), &x11);     //  11 S, 1 M
    let x44  = mul_k(&sqr_k(&x22, 22), &x22);     //  22 S, 1 M
    let x88  = mul_k(&sqr_k(&x44, 44), &x44);     //  44 S, 1 M
    let x176 = mul_k(&sqr_k(&x88, 88), &x88);     //  88 S, 1 M
    let x220 = mul_k(&sqr_k(&x176, 44), &x44);    //  44 S, 1 M
    let x223 = mul_k(&sqr_k(&x220, 3), &x3);      //   3 S, 1 M
    let t    = mul_k(&sqr_k(&x223, 23), &x22);    //  23 S, 1 M: 223 ones, 1 zero, 22 ones
    let t    = mul_k(&sqr_k(&t, 6), &x2);         //   6 S, 1 M: 4 zeros, then 11
    sqr_k(&t, 2)                                  //   2 S: the final 00; 253 S + 13 M total
}

/// Lifts K·8 x-coordinates: (even y, mask of lanes where x³ + 7 is a square) per vector.
///
/// # Magnitude
///
/// Inputs IFMA-ready (normalized x in practice); outputs normalized.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn lift_block<const K: usize>(xs: &[Fe8; K]) -> ([Fe8; K], [__mmask8; K]) {
    let seven = Fe8::splat(&[7, 0, 0, 0, 0]);
    let mut c = *xs;
    for (ci, x) in c.iter_mut().zip(xs) {
        // x³ is carried (limbs 0..3 < 2^52, limb 4 ≤ 2^48); +7 may reach 2^52 + 6 in limb 0,
        // so carry again to make c IFMA-ready.
        *ci = carry(&add(&mul(&sqr(x), x), &seven));
    }
    let r = sqrt_candidate(&c);
    let mut ys = r;
    let mut ok = [0; K];
    for k in 0..K {
        ok[k] = eq_normalized(&normalize(&sqr(&r[k])), &normalize(&c[k]));
        let y = normalize(&r[k]);
        ys[k] = negate_lanes(&y, is_odd_normalized(&y));
    }
    (ys, ok)
}

/// lift_x for `n` x-coordinates read through `get` (any limbs < 2^62; they are normalized
/// here), results written through `put(i, Some(even y))` or `put(i, None)`. Blocks of 16
/// (K vectors), a tail of at most 8 as one vector, padded with a valid x.
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn lift_x_many(
    n: usize,
    get: impl Fn(usize) -> [u64; 5],
    mut put: impl FnMut(usize, Option<[u64; 5]>),
) {
    let mut start = 0;
    while start + 8 < n {
        lift_chunk::<K>(start, n, &get, &mut put);
        start += 8 * K;
    }
    if start < n {
        lift_chunk::<1>(start, n, &get, &mut put);
    }
}

/// Lifts elements `start .. min(start + 8·KK, n)` as KK vectors.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn lift_chunk<const KK: usize>(
    start: usize,
    n: usize,
    get: &impl Fn(usize) -> [u64; 5],
    put: &mut impl FnMut(usize, Option<[u64; 5]>),
) {
    let mut xs = [Fe8::splat(&PAD_X); KK];
    for (k, x) in xs.iter_mut().enumerate() {
        let mut lanes = [PAD_X; 8];
        for (lane, l) in lanes.iter_mut().enumerate() {
            let i = start + 8 * k + lane;
            if i < n {
                *l = get(i);
            }
        }
        *x = normalize(&Fe8::from_lanes(&lanes));
    }
    let (ys, ok) = lift_block(&xs);
    for k in 0..KK {
        let lanes = ys[k].to_lanes();
        for (lane, y) in lanes.iter().enumerate() {
            let i = start + 8 * k + lane;
            if i < n {
                put(i, ((ok[k] >> lane) & 1 == 1).then_some(*y));
            }
        }
    }
}
