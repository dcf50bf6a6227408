//! Batch-affine point additions in lanes: 8 independent additions per vector, one
//! Montgomery prefix chain per lane, the 8 lane products inverted together by the caller.
//!
//! For pairs (P₁, P₂) with x₁ ≠ x₂:
//!
//! ```text
//! λ = (y₂ − y₁)·(x₂ − x₁)⁻¹,   x₃ = λ² − x₁ − x₂,   y₃ = λ·(x₁ − x₃) − y₁
//! ```
//!
//! Pair i sits in vector i / 8, lane i mod 8. Forward pass: Δx, Δy and the exclusive prefix
//! product of Δx per lane (1 M per vector). The 8 lane totals are inverted in the vector
//! ([`invert_lanes`]: Montgomery's trick across the lanes, one scalar inversion by the caller). Backward pass: each Δx⁻¹ (2 M), λ (1 M), λ² (1 S)
//! and y₃ (1 M): 5 M + 1 S per addition.
//!
//! A pair with Δx ≡ 0 (the caller's precondition excludes it) is kept out of the product
//! chain (its factor replaced by 1) and gets λ = 0, so it cannot poison the other additions;
//! its output is then (−x₁ − x₂, −y₁), the same value the portable arm computes.
//!
//! [`add_points`] reads the pairs straight from the caller's [`AffinePoint`]s, normalized by
//! the backend's contract, one hardware gather per limb ([`gather_points`]), and writes the
//! sums back through [`Fe8::to_lanes`].

use super::field8::{
    carry, eq_normalized, mul, normalize, normalize_carried, select, sqr, sub, Fe8,
};
use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;
use core::arch::x86_64::{
    __m512i, __mmask8, _mm512_add_epi64, _mm512_and_si512, _mm512_mask_cmpge_epu64_mask,
    _mm512_mask_i64gather_epi64, _mm512_mask_permutexvar_epi64, _mm512_maskz_loadu_epi64,
    _mm512_mullox_epi64, _mm512_set1_epi64, _mm512_set_epi64, _mm512_setzero_si512,
    _mm512_srli_epi64,
};

/// Per-vector state kept between the passes (structure of arrays, 8 pairs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Saved {
    x1: Fe8,
    y1: Fe8,
    x2: Fe8,
    dy: Fe8,
    /// Δx with zero lanes replaced by 1.
    dx: Fe8,
    /// Product of the Δx of all earlier vectors, per lane.
    prefix: Fe8,
    /// Lanes whose Δx ≡ 0.
    zero: u8,
}

impl Saved {
    /// The lanes of this vector whose pair had Δx ≡ 0 (never a padding lane: those get
    /// (0, 0) + (1, 0)).
    pub(crate) fn zero_lanes(&self) -> u8 {
        self.zero
    }
}

/// The lanes `0..k` of a vector (`k ≤ 8`).
#[inline]
pub(crate) fn lanes_below(k: usize) -> __mmask8 {
    (0xFFu16 >> (8 - k.min(8))) as __mmask8
}

/// Adds `n` pairs read a vector at a time through `load`, writes normalized (x₃, y₃) a
/// vector at a time through `store`.
///
/// `load(v, mask)` returns (x₁, y₁, x₂, y₂) of pairs `8v..8v + 8` in lanes, `mask` marking
/// the lanes `< n`; those lanes must be **normalized** (the backend's precondition; every
/// coordinate the crate produces is), the others may hold anything. `store(v, mask, x₃, y₃)`
/// receives normalized results, meaningful in the lanes of `mask`.
///
/// `invert1` receives one normalized, nonzero element (the product of every Δx) and must
/// return its normalized inverse; the lanes share it through [`invert_lanes`].
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn add_pairs(
    n: usize,
    load: impl Fn(usize, __mmask8) -> [Fe8; 4],
    invert1: impl FnOnce([u64; 5]) -> [u64; 5],
    mut store: impl FnMut(usize, __mmask8, &Fe8, &Fe8),
    saved: &mut Vec<Saved>,
) {
    if n == 0 {
        return;
    }
    let zero = Fe8([_mm512_setzero_si512(); 5]);
    let one = Fe8::splat(&[1, 0, 0, 0, 0]);
    let nv = n.div_ceil(8);
    // The caller's buffer (about 2 KB per 8 pairs), reused across calls: allocated per
    // call, a large round's buffer went back to the kernel at every free and was
    // page-faulted in again (~40 faults per 125-event batch in the ingest service).
    saved.clear();
    saved.reserve(nv);

    // Forward pass.
    let mut acc = one;
    for v in 0..nv {
        let mask = lanes_below(n - 8 * v);
        let [mut x1, mut y1, mut x2, mut y2] = load(v, mask);
        if mask != 0xFF {
            // Padding for the tail lanes: (0, 0) + (1, 0), so Δx = 1 leaves the lane
            // product alone.
            x1 = select(mask, &zero, &x1);
            y1 = select(mask, &zero, &y1);
            x2 = select(mask, &one, &x2);
            y2 = select(mask, &zero, &y2);
        }
        // Normalized inputs are carried (limbs < 2^52, limb 4 < 2^48), which is all sub
        // needs of its subtrahend. Canonical, so Δx ≡ 0 iff the limbs of x₁ and x₂ agree.
        let zero_lanes = eq_normalized(&x1, &x2);
        // Sub's limbs are < 2^52 + 2^54: one carry makes them IFMA-ready.
        let dx = select(zero_lanes, &carry(&sub(&x2, &x1)), &one);
        let dy = carry(&sub(&y2, &y1));
        saved.push(Saved {
            x1,
            y1,
            x2,
            dy,
            dx,
            prefix: acc,
            zero: zero_lanes,
        });
        acc = mul(&acc, &dx);
    }

    // The 8 lane totals: nonzero (every factor is); acc is a mul output (carried).
    let mut inv_acc = invert_lanes(&acc, invert1);

    // Backward pass: inv_acc holds (Δx of vectors 0..=v)⁻¹ per lane.
    for v in (0..nv).rev() {
        let s = &saved[v];
        let inv = mul(&inv_acc, &s.prefix); // Δx_v⁻¹
        inv_acc = mul(&inv_acc, &s.dx);
        // λ (carried), 0 in the lanes whose Δx ≡ 0.
        let l = select(s.zero, &mul(&s.dy, &inv), &zero);
        // λ² carried, x₁ and x₂ normalized; each sub adds < 2^54 per limb, so limbs
        // < 2^56 before the carry.
        let x3 = carry(&sub(&sub(&sqr(&l), &s.x1), &s.x2));
        let t = carry(&sub(&s.x1, &x3));
        // mul's output carried, y₁ normalized: limbs < 2^52 + 2^54, two carry passes.
        let y3 = sub(&mul(&l, &t), &s.y1);
        // x₃ is carried already: one carry pass fewer.
        store(
            v,
            lanes_below(n - 8 * v),
            &normalize_carried(&x3),
            &normalize(&y3),
        );
    }
}

/// Size of an [`AffinePoint`] in bytes, the stride of the gathers.
const STRIDE: u64 = core::mem::size_of::<AffinePoint>() as u64;
/// Byte offsets of the limbs of x and y inside an [`AffinePoint`] (from the actual layout).
const X_LIMBS: usize = core::mem::offset_of!(AffinePoint, x) + FieldElement::LIMBS_OFFSET;
const Y_LIMBS: usize = core::mem::offset_of!(AffinePoint, y) + FieldElement::LIMBS_OFFSET;

/// The raw limbs of x and y of `src[idx[lane]]` in the lanes of `mask` (zero elsewhere),
/// with one hardware gather per limb.
///
/// # Panics
///
/// If a lane of `mask` holds an index `≥ src.len()` (checked before any load).
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn gather_points(src: &[AffinePoint], idx: __m512i, mask: __mmask8) -> (Fe8, Fe8) {
    let len = _mm512_set1_epi64(src.len() as i64);
    assert!(
        _mm512_mask_cmpge_epu64_mask(mask, idx, len) == 0,
        "gather_points: index out of range"
    );
    // idx < src.len(), so idx·STRIDE + 80 fits the slice's byte length (< isize::MAX).
    let offs = _mm512_mullox_epi64(idx, _mm512_set1_epi64(STRIDE as i64));
    let base = src.as_ptr().cast::<u8>();
    let z = _mm512_setzero_si512();
    let mut x = Fe8([z; 5]);
    let mut y = Fe8([z; 5]);
    for k in 0..5 {
        let px = base.wrapping_add(X_LIMBS + 8 * k).cast::<i64>();
        let py = base.wrapping_add(Y_LIMBS + 8 * k).cast::<i64>();
        // SAFETY: every lane of `mask` reads the 8 bytes at `base + idx·STRIDE + off + 8k`
        // (off = X_LIMBS or Y_LIMBS, from `offset_of!`): limb k of the x or y coordinate of
        // `src[idx]`, with idx < src.len() asserted above, so in bounds, 8-byte aligned and
        // an initialized `u64`. Lanes outside `mask` read nothing. The target features the
        // intrinsic needs are enabled on this function.
        unsafe {
            x.0[k] = _mm512_mask_i64gather_epi64::<1>(z, mask, offs, px);
            y.0[k] = _mm512_mask_i64gather_epi64::<1>(z, mask, offs, py);
        }
    }
    (x, y)
}

/// `v·8 + lane` in each lane.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
#[cfg(any(test, feature = "internals"))]
pub(crate) fn consecutive(v: usize) -> __m512i {
    let base = core::arch::x86_64::_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    _mm512_add_epi64(base, _mm512_set1_epi64((8 * v) as i64))
}

/// Every limb vector of `a` with its lanes moved `k` places up (lane i gets lane i − k) or
/// down (lane i gets lane i + k); the lanes left without a source get `fill`'s.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
fn shift_lanes(a: &Fe8, up: bool, k: usize, fill: &Fe8) -> Fe8 {
    let src = |i: usize| (if up { i.wrapping_sub(k) } else { i + k } & 7) as i64;
    let idx = _mm512_set_epi64(
        src(7),
        src(6),
        src(5),
        src(4),
        src(3),
        src(2),
        src(1),
        src(0),
    );
    let mask: __mmask8 = if up { 0xFF << k } else { 0xFF >> k };
    Fe8(core::array::from_fn(|l| {
        _mm512_mask_permutexvar_epi64(fill.0[l], mask, idx, a.0[l])
    }))
}

/// The inverses of the 8 lanes of `a`, carried: one inversion in all.
///
/// `a` must be IFMA-ready (a `mul` output is) and nonzero in every lane mod p. `invert1`
/// receives the normalized product of the lanes and returns its normalized inverse. The rest is
/// Montgomery's trick across the lanes in vector form: inclusive prefix and suffix products by
/// Hillis–Steele scans (lanes shifted by 1, 2 and 4 and multiplied in, the vacated lanes
/// filled with 1), then `a_i⁻¹ = (Π_{j<i} a_j)·(Π_{j>i} a_j)·(Π_j a_j)⁻¹`: eight vector
/// multiplications in place of a scalar trick over the lanes.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn invert_lanes(a: &Fe8, invert1: impl FnOnce([u64; 5]) -> [u64; 5]) -> Fe8 {
    let one = Fe8::splat(&[1, 0, 0, 0, 0]);
    // mul's outputs are carried, so IFMA-ready for the next step; shifting moves whole
    // elements and fills with 1.
    let (mut pre, mut suf) = (*a, *a);
    for k in [1, 2, 4] {
        pre = mul(&pre, &shift_lanes(&pre, true, k, &one));
        suf = mul(&suf, &shift_lanes(&suf, false, k, &one));
    }
    // Lane 7 of the inclusive prefix is the product of all lanes (nonzero: p is prime).
    let total = normalize_carried(&pre).to_lanes()[7];
    let inv = Fe8::splat(&invert1(total));
    let before = shift_lanes(&pre, true, 1, &one);
    let after = shift_lanes(&suf, false, 1, &one);
    mul(&mul(&before, &after), &inv)
}

/// Where [`add_points`] reads its pairs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Pairs<'a> {
    /// Pair i is `(a[i], b[i])`; both at least as long as the output (the copied entry,
    /// `backend::add_affine_pairs_vartime`, kept for tests and benchmarks).
    #[cfg(any(test, feature = "internals"))]
    Copied(&'a [AffinePoint], &'a [AffinePoint]),
    /// Pair i is `(src[pairs[i][0]], src[pairs[i][1]])`; `pairs` at least as long as the
    /// output.
    Gathered(&'a [AffinePoint], &'a [[u32; 2]]),
}

/// `out[i]` = the sum of pair i of `pairs` for `i in 0..out.len()`, normalized, with
/// `infinity = false` (the contract of `backend::add_affine_pairs_vartime`: normalized
/// inputs, Δx ≡ 0 pairs get λ = 0). `invert1` and `saved` as in [`add_pairs`].
///
/// # Panics
///
/// If an index or a slice is out of range (checked by the loads, before any read).
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn add_points(
    pairs: Pairs<'_>,
    out: &mut [AffinePoint],
    invert1: impl FnOnce([u64; 5]) -> [u64; 5],
    saved: &mut Vec<Saved>,
) {
    let load = |v: usize, mask: __mmask8| {
        let (src1, src2, i1, i2) = match pairs {
            #[cfg(any(test, feature = "internals"))]
            Pairs::Copied(a, b) => {
                let i = consecutive(v);
                (a, b, i, i)
            }
            Pairs::Gathered(src, p) => {
                let (i1, i2) = pair_indices(&p[8 * v..], mask);
                (src, src, i1, i2)
            }
        };
        let (x1, y1) = gather_points(src1, i1, mask);
        let (x2, y2) = gather_points(src2, i2, mask);
        [x1, y1, x2, y2]
    };
    let n = out.len();
    let store = |v: usize, mask: __mmask8, x: &Fe8, y: &Fe8| {
        store_points(&mut out[8 * v..], mask, x, y);
    };
    add_pairs(n, load, invert1, store, saved);
}

/// The two indices of each of `pairs[0..8]` in the lanes of `mask` (zero elsewhere).
///
/// # Panics
///
/// If `pairs` is shorter than the highest lane of `mask`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn pair_indices(pairs: &[[u32; 2]], mask: __mmask8) -> (__m512i, __m512i) {
    assert!(
        8 - (mask.leading_zeros() as usize) <= pairs.len(),
        "pair_indices: too few pairs"
    );
    // SAFETY: the lanes of `mask` read `pairs[lane]` (8 bytes each, one `[u32; 2]`), in
    // bounds by the assertion above; lanes outside `mask` read nothing, and `loadu` needs no
    // alignment. The target features the intrinsic needs are enabled on this function.
    let q = unsafe { _mm512_maskz_loadu_epi64(mask, pairs.as_ptr().cast::<i64>()) };
    // Little endian: `pairs[lane][0]` is the low half of the lane's qword.
    let lo = _mm512_and_si512(q, _mm512_set1_epi64(u32::MAX as i64));
    (lo, _mm512_srli_epi64::<32>(q))
}

/// Writes lanes `0..8` of `mask` (a prefix) of (x, y) to `out[0..]` as normalized affine
/// points, `infinity = false`.
///
/// # Panics
///
/// If `out` is shorter than the highest lane of `mask`.
#[inline]
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn store_points(out: &mut [AffinePoint], mask: __mmask8, x: &Fe8, y: &Fe8) {
    let k = 8 - mask.leading_zeros() as usize;
    let x = x.to_lanes();
    let y = y.to_lanes();
    for (lane, o) in out[..k].iter_mut().enumerate() {
        *o = AffinePoint {
            x: FieldElement::from_limbs_unchecked(x[lane]),
            y: FieldElement::from_limbs_unchecked(y[lane]),
            infinity: false,
        };
    }
}
