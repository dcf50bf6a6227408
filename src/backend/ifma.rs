//! The AVX-512 IFMA backend: field arithmetic in radix 2^52, 8 elements per `__m512i` lane
//! set (`vpmadd52luq` / `vpmadd52huq`).
//!
//! This module is the only place in the crate with `unsafe`. Every kernel is a *safe* function
//! marked `#[target_feature(enable = "avx512f,avx512ifma,avx512vl")]`; the compiler only lets
//! code without those features call it inside `unsafe`. That happens in exactly two places,
//! the entry points below, and each is reachable only with a [`Detected`] token, which exists
//! only after `is_x86_feature_detected!` confirmed the three features on the running CPU.
//! Memory accesses are the other `unsafe` blocks, each with its `// SAFETY:` argument:
//! `loadu`/`storeu` on references in `field8.rs`, and in `affine.rs` the gathers of point
//! limbs (indices checked against the slice length first) and the masked load of index
//! pairs.
//!
//! - [`field8`](self): the limb kernels (mul, sqr, sub, carry, normalize) with their bounds.
//! - lift: BIP-340 lift_x, 16 square roots in flight.
//! - affine: batch-affine additions, 8 per vector, one shared inversion.
//! - twin (tests only): the same algorithms on one element in plain integer code.
#![allow(unsafe_code)]

mod affine;
mod field8;
mod lift;
#[cfg(test)]
mod twin;

use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;

/// Proof that the running CPU has `avx512f`, `avx512ifma` and `avx512vl`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Detected(());

impl Detected {
    /// Runs the CPU feature detection; `Some` iff all three features are present.
    pub(crate) fn detect() -> Option<Self> {
        let ok = std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512ifma")
            && std::is_x86_feature_detected!("avx512vl");
        ok.then_some(Detected(()))
    }
}

/// IFMA arm of [`crate::backend::lift_x_many_vartime`] (same contract; lengths already checked).
pub(crate) fn lift_x_many_vartime(
    _cpu: Detected,
    xs: &[FieldElement],
    ys: &mut [FieldElement],
    ok: &mut [bool],
) {
    // Raw limbs: the kernel normalizes in lanes, which accepts any limbs < 2^62 (every
    // FieldElement magnitude), far cheaper than normalizing one element at a time here.
    let get = |i: usize| xs[i].raw_limbs();
    let put = |i: usize, y: Option<[u64; 5]>| match y {
        Some(y) => {
            ys[i] = FieldElement::from_limbs_unchecked(y);
            ok[i] = true;
        }
        None => {
            ys[i] = FieldElement::ZERO;
            ok[i] = false;
        }
    };
    // SAFETY: a `Detected` value exists only if avx512f, avx512ifma and avx512vl were detected
    // on this CPU (see `Detected::detect`), which are exactly the features `lift_x_many` enables.
    unsafe { lift::lift_x_many(xs.len(), get, put) }
}

/// IFMA arm of [`crate::backend::add_affine_pairs_vartime`] (same contract; lengths already
/// checked).
#[cfg(any(test, feature = "internals"))]
pub(crate) fn add_affine_pairs_vartime(
    cpu: Detected,
    a: &[AffinePoint],
    b: &[AffinePoint],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    debug_assert!(a.iter().chain(b).all(normalized), "inputs not normalized");
    add_pairs(cpu, affine::Pairs::Copied(a, b), out, buf, equal_x);
}

/// IFMA arm of [`crate::backend::add_affine_pairs_gather_vartime`] (same contract; lengths
/// and indices already checked).
pub(crate) fn add_affine_pairs_gather_vartime(
    cpu: Detected,
    src: &[AffinePoint],
    pairs: &[[u32; 2]],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    debug_assert!(
        pairs
            .iter()
            .flatten()
            .all(|&i| normalized(&src[i as usize])),
        "inputs not normalized"
    );
    add_pairs(cpu, affine::Pairs::Gathered(src, pairs), out, buf, equal_x);
}

/// Whether both coordinates of `p` are normalized (the pair additions' precondition, which
/// the kernel relies on: it reads the limbs as they are).
fn normalized(p: &AffinePoint) -> bool {
    p.x.raw_limbs() == p.x.to_limbs_normalized() && p.y.raw_limbs() == p.y.to_limbs_normalized()
}

/// `out[i] = p + q` for the `i`-th pair of `pairs`, `i in 0..out.len()`, in lanes; `equal_x`
/// is set to the indices of the pairs whose x-coordinates were equal (the forward pass's
/// per-vector masks).
#[inline(always)]
fn add_pairs(
    _cpu: Detected,
    pairs: affine::Pairs<'_>,
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    let invert1 = |t: [u64; 5]| {
        FieldElement::from_limbs_unchecked(t)
            .invert_vartime()
            .to_limbs_normalized()
    };
    // SAFETY: a `Detected` value exists only if avx512f, avx512ifma and avx512vl were detected
    // on this CPU (see `Detected::detect`), which are exactly the features `add_points`
    // enables.
    unsafe { affine::add_points(pairs, out, invert1, &mut buf.0) }
    equal_x.clear();
    // `add_points` refills `buf.0` with one entry per vector, except for no pairs at all.
    for (v, saved) in buf.0.iter().take(out.len().div_ceil(8)).enumerate() {
        let mut zero = saved.zero_lanes();
        while zero != 0 {
            equal_x.push((8 * v) as u32 + zero.trailing_zeros());
            zero &= zero - 1;
        }
    }
}

/// The IFMA arm's part of [`crate::backend::PairScratch`]: the forward pass's state.
#[derive(Debug, Default)]
pub(crate) struct PairBuf(Vec<affine::Saved>);

#[cfg(test)]
mod tests;
