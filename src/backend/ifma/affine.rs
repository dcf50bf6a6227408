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
//! product of Δx per lane (1 M per vector). The caller inverts the 8 lane totals (one scalar
//! inversion with a scalar Montgomery trick). Backward pass: each Δx⁻¹ (2 M), λ (1 M), λ² (1 S)
//! and y₃ (1 M): 5 M + 1 S per addition.
//!
//! A pair with Δx ≡ 0 (the caller's precondition excludes it) is kept out of the product
//! chain (its factor replaced by 1) and gets λ = 0, so it cannot poison the other additions;
//! its output is then (−x₁ − x₂, −y₁), the same value the portable arm computes.

use super::field8::{carry, is_zero_normalized, mul, normalize, select, sqr, sub, Fe8};
use core::arch::x86_64::_mm512_setzero_si512;

/// Affine coordinates (x₁, y₁, x₂, y₂) of one pair: limbs < 2^62 (normalized in lanes).
pub(crate) type PairLimbs = [[u64; 5]; 4];

/// Padding for the tail lanes: (0, 0) + (1, 0), so Δx = 1 leaves the lane product alone.
const PAD: PairLimbs = [[0; 5], [0; 5], [1, 0, 0, 0, 0], [0; 5]];

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

/// Adds `n` pairs read through `get`, writes normalized (x₃, y₃) through `put`.
///
/// `invert8` receives the 8 normalized, nonzero lane products and must replace each with its
/// normalized inverse (the scalar Montgomery trick and one inversion live there).
#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]
pub(crate) fn add_pairs(
    n: usize,
    get: impl Fn(usize) -> PairLimbs,
    invert8: impl FnOnce(&mut [[u64; 5]; 8]),
    mut put: impl FnMut(usize, [u64; 5], [u64; 5]),
    saved: &mut Vec<Saved>,
) {
    if n == 0 {
        return;
    }
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
        let pairs: [PairLimbs; 8] = core::array::from_fn(|lane| {
            let i = 8 * v + lane;
            if i < n {
                get(i)
            } else {
                PAD
            }
        });
        // Any limbs < 2^62 in; carried here, which is all sub needs (its subtrahend carried).
        let x1 = carry(&Fe8::from_lanes(&pairs.map(|p| p[0])));
        let y1 = carry(&Fe8::from_lanes(&pairs.map(|p| p[1])));
        let x2 = carry(&Fe8::from_lanes(&pairs.map(|p| p[2])));
        let y2 = carry(&Fe8::from_lanes(&pairs.map(|p| p[3])));
        // Sub's limbs are < 2^54: normalize (canonical, for the zero test) and carry make
        // them IFMA-ready.
        let dx = normalize(&sub(&x2, &x1));
        let dy = carry(&sub(&y2, &y1));
        let zero = is_zero_normalized(&dx);
        let dx = select(zero, &dx, &one);
        saved.push(Saved {
            x1,
            y1,
            x2,
            dy,
            dx,
            prefix: acc,
            zero,
        });
        acc = mul(&acc, &dx);
    }

    // The 8 lane totals: nonzero (every factor is), inverted by the caller.
    let mut totals = normalize(&acc).to_lanes();
    invert8(&mut totals);
    let mut inv_acc = Fe8::from_lanes(&totals);

    // Backward pass: inv_acc holds (Δx of vectors 0..=v)⁻¹ per lane.
    for v in (0..nv).rev() {
        let s = &saved[v];
        let inv = mul(&inv_acc, &s.prefix); // Δx_v⁻¹
        inv_acc = mul(&inv_acc, &s.dx);
        // λ (carried), 0 in the lanes whose Δx ≡ 0.
        let l = select(s.zero, &mul(&s.dy, &inv), &Fe8([_mm512_setzero_si512(); 5]));
        // λ² carried; each sub adds < 2^54 per limb, so limbs < 2^56 before the carry.
        let x3 = carry(&sub(&sub(&sqr(&l), &s.x1), &s.x2));
        let t = carry(&sub(&s.x1, &x3));
        let y3 = sub(&mul(&l, &t), &s.y1);
        let x3 = normalize(&x3).to_lanes();
        let y3 = normalize(&y3).to_lanes();
        for lane in 0..8 {
            let i = 8 * v + lane;
            if i < n {
                put(i, x3[lane], y3[lane]);
            }
        }
    }
}
