//! The batch equation: its terms from a prepared batch, and the MSM that decides it.
//!
//! Over `prep[range]` (see the module doc of `batch` for the equation itself): every `Rᵢ` with
//! its weight `aᵢ`, every key's `Σ aᵢ·eᵢ` GLV-split over `P` and `λ·P`, and `−Σ aᵢ·sᵢ` split at
//! 2^128 over `G` and `2^128·G`, so that every scalar is below 2^128. The sum is ∞ iff the
//! equation holds.

use super::work::{BatchKey, Work};
use crate::arithmetic::group::{g128, AffinePoint};
use crate::arithmetic::scalar::{Scalar, WideSum};
use crate::msm;
use std::ops::Range;

/// [`Verifier::verify_batch_two_threads`](super::Verifier::verify_batch_two_threads) splits
/// the top-level MSM from this many points on (see
/// [`TWO_THREADS_MIN_LIFTS`](super::TWO_THREADS_MIN_LIFTS)): about 1,000 signatures by
/// distinct keys, 3,000 by a few.
pub(crate) const TWO_THREADS_MIN_POINTS: usize = 3000;

/// How many threads a call may use: `verify_batch_two_threads` passes `Two` to the staging
/// and to the top-level equation; narrowing's sub-equations always run on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Threads {
    /// The calling thread only.
    One,
    /// The calling thread and one scoped helper, for inputs large enough
    /// ([`TWO_THREADS_MIN_LIFTS`](super::TWO_THREADS_MIN_LIFTS), [`TWO_THREADS_MIN_POINTS`]).
    Two,
}

/// The low and high 128 bits of a scalar.
pub(super) fn split_128(k: &Scalar) -> (u128, u128) {
    let l = k.to_limbs();
    (
        (l[0] as u128) | ((l[1] as u128) << 64),
        (l[2] as u128) | ((l[3] as u128) << 64),
    )
}

/// The batch equation over `prep[range]`: true when it holds. A key of the range without its
/// point (which `prepare` never leaves) fails it closed: `false`, and narrowing and
/// libsecp256k1 decide.
pub(super) fn holds(w: &mut Work, range: Range<usize>, threads: Threads) -> bool {
    terms(w, range) && msm_is_infinity(w, threads)
}

/// Puts the terms of the batch equation over `prep[range]`, negated (see the module docs),
/// into `work.points` and `work.scalars`. `false` (terms incomplete) when a key has no point.
pub(super) fn terms(w: &mut Work, range: Range<usize>) -> bool {
    w.points.clear();
    w.scalars.clear();
    let mut g = WideSum::ZERO;
    let mut key_sum = WideSum::ZERO;
    let mut cur_key = u32::MAX;
    let mut complete = true;
    // (Σ aᵢ·eᵢ)·P, GLV-split: (±k1)·P + (±k2)·(λ·P). `false` when the key has no point.
    let flush = |key: u32,
                 sum: &WideSum,
                 keys: &[BatchKey],
                 pts: &mut Vec<AffinePoint>,
                 ks: &mut Vec<u128>|
     -> bool {
        if key == u32::MAX {
            return true;
        }
        let Some(c) = keys[key as usize].point else {
            return false;
        };
        let split = sum.reduce().split_lambda();
        pts.push(if split.k1_neg { c.p.neg() } else { c.p });
        ks.push(split.k1);
        pts.push(if split.k2_neg {
            c.lambda_p.neg()
        } else {
            c.lambda_p
        });
        ks.push(split.k2);
        true
    };
    for p in &w.prep[range] {
        // Σ aᵢ·sᵢ, for −(Σ aᵢ·sᵢ)·G below
        g.add_mul_u128(&p.s, p.a);
        // aᵢ·Rᵢ
        w.points.push(p.r);
        w.scalars.push(p.a);
        if p.key != cur_key {
            complete &= flush(cur_key, &key_sum, &w.keys, &mut w.points, &mut w.scalars);
            cur_key = p.key;
            key_sum = WideSum::ZERO;
        }
        key_sum.add_mul_u128(&p.e, p.a);
    }
    complete &= flush(cur_key, &key_sum, &w.keys, &mut w.points, &mut w.scalars);
    let (g_lo, g_hi) = split_128(&g.reduce().negate());
    w.points.push(AffinePoint::GENERATOR);
    w.scalars.push(g_lo);
    w.points.push(*g128());
    w.scalars.push(g_hi);
    complete
}

/// Runs the MSM over the terms [`terms`] put into `work`: true when the sum is ∞ (the
/// equation holds). On two threads when asked and the equation is large enough.
pub(super) fn msm_is_infinity(w: &mut Work, threads: Threads) -> bool {
    if threads == Threads::Two && w.points.len() >= TWO_THREADS_MIN_POINTS {
        msm::msm_two_threads_vartime(&w.points, &w.scalars, &mut w.msm).is_infinity()
    } else {
        msm::msm_vartime(&w.points, &w.scalars, &mut w.msm).is_infinity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arithmetic::group::JacobianPoint;

    #[test]
    fn g128_is_two_to_the_128_times_g() {
        // 2^128·G = (2^64·G) doubled 64 more times, computed independently via scalar mul of
        // the split: G·2^128 must equal the result of from_u128 arithmetic in the MSM.
        let k = Scalar::from_u128(u128::MAX).add(&Scalar::ONE); // 2^128
        let (lo, hi) = split_128(&k);
        assert_eq!((lo, hi), (0, 1));
        let mut s = msm::Scratch::default();
        let a = msm::msm_vartime(&[*g128()], &[1], &mut s);
        let mut b = JacobianPoint::from_affine(&AffinePoint::GENERATOR);
        for _ in 0..64 {
            b = b.double_vartime();
        }
        let b = b.to_affine_vartime();
        let c = msm::msm_vartime(&[b], &[1u128 << 64], &mut s);
        assert!(a.add_vartime(&c.neg()).is_infinity());
    }
}
