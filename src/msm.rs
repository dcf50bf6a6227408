//! Layer 2: multi-scalar multiplication, `Σ kᵢ·Pᵢ` for affine points and 128-bit scalars.
//!
//! [`msm_vartime`] is the one entry point: Strauss's interleaved wNAF ([`straus`]) up to
//! [`STRAUSS_MAX`] points, Pippenger's bucket method with batch-affine additions
//! ([`pippenger`]) above, with the window width from [`pippenger::window_for`]. Both the
//! switch point and the windows come from the sweep recorded in
//! `docs/benchmarks.md#msm-sweep-and-window-choice` (`cargo run --release --example msm_sweep`).
//!
//! Scalars are at most 128 bits: the batch verifier's random weights are 128-bit already, and
//! 256-bit scalars are GLV-split (key terms) or split at 2^128 (the generator) before they get
//! here, so every algorithm runs 129-bit digit chains.
//!
//! # Variable time
//! Everything here branches on its inputs and is meant for public data only.

pub mod pippenger;
pub mod recode;
pub mod straus;
pub mod table;

use crate::arithmetic::group::{AffinePoint, JacobianPoint};

/// Up to this many points, [`msm_vartime`] uses Strauss's method.
pub const STRAUSS_MAX: usize = 20;

/// The wNAF width Strauss's method uses.
pub const STRAUSS_WINDOW: usize = 4;

/// Point counts where the algorithm or the window width changes (for tests that must cross
/// every switch).
pub const SWITCH_POINTS: &[usize] = &[STRAUSS_MAX, 80, 160, 640, 900, 1800, 2600, 8000];

/// Reusable buffers for [`msm_vartime`].
#[derive(Debug, Default)]
pub struct Scratch {
    straus: straus::Scratch,
    pippenger: pippenger::Scratch,
    /// The second thread's buffers for [`msm_two_threads_vartime`].
    pippenger2: pippenger::Scratch,
}

/// `Σ scalars[i]·points[i]` (identity points and zero scalars contribute nothing).
///
/// # Panics
/// If the slices differ in length.
///
/// # Variable time
/// Public data only.
pub fn msm_vartime(
    points: &[AffinePoint],
    scalars: &[u128],
    scratch: &mut Scratch,
) -> JacobianPoint {
    if points.len() <= STRAUSS_MAX {
        straus::msm_vartime(points, scalars, STRAUSS_WINDOW, &mut scratch.straus)
    } else {
        let c = pippenger::window_for(points.len());
        pippenger::msm_vartime(points, scalars, c, &mut scratch.pippenger)
    }
}

/// [`msm_vartime`] on two threads for large inputs: Pippenger's windows are split between the
/// calling thread and one scoped helper thread (`std::thread::scope`). Inputs of at most
/// [`STRAUSS_MAX`] points run on the calling thread alone.
///
/// # Panics
/// If the slices differ in length.
///
/// # Variable time
/// Public data only.
pub fn msm_two_threads_vartime(
    points: &[AffinePoint],
    scalars: &[u128],
    scratch: &mut Scratch,
) -> JacobianPoint {
    if points.len() <= STRAUSS_MAX {
        return msm_vartime(points, scalars, scratch);
    }
    let c = pippenger::window_for(points.len());
    pippenger::msm_two_threads_vartime(
        points,
        scalars,
        c,
        [&mut scratch.pippenger, &mut scratch.pippenger2],
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `k·P` by double-and-add, the slow reference.
    fn mul(p: &AffinePoint, k: u128) -> JacobianPoint {
        let mut acc = JacobianPoint::IDENTITY;
        for i in (0..128).rev() {
            acc = acc.double_vartime();
            if (k >> i) & 1 == 1 {
                acc = acc.add_affine_vartime(p);
            }
        }
        acc
    }

    /// `Σ kᵢ·Pᵢ` one term at a time.
    pub(crate) fn naive(points: &[AffinePoint], scalars: &[u128]) -> JacobianPoint {
        let mut acc = JacobianPoint::IDENTITY;
        for (p, &k) in points.iter().zip(scalars) {
            if !p.is_infinity() {
                acc = acc.add_vartime(&mul(p, k));
            }
        }
        acc
    }

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// `n` pseudo-random points (multiples of G) and scalars: full 128-bit, small, and zero.
    pub(crate) fn random_terms(n: usize, seed: u64) -> (Vec<AffinePoint>, Vec<u128>) {
        let mut st = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut pts = Vec::new();
        let mut ks = Vec::new();
        for i in 0..n {
            let k = ((xorshift(&mut st) as u128) << 64) | xorshift(&mut st) as u128;
            pts.push(mul(&AffinePoint::GENERATOR, k | 1).to_affine_vartime());
            ks.push(match i % 7 {
                5 => xorshift(&mut st) as u128 % 17,
                6 if i % 3 == 0 => 0,
                _ => ((xorshift(&mut st) as u128) << 64) | xorshift(&mut st) as u128,
            });
        }
        (pts, ks)
    }

    #[test]
    fn entry_point_across_the_switch() {
        for &n in &[
            0usize,
            1,
            STRAUSS_MAX - 1,
            STRAUSS_MAX,
            STRAUSS_MAX + 1,
            97,
            200,
        ] {
            let (pts, ks) = random_terms(n, n as u64 + 1);
            let got = msm_vartime(&pts, &ks, &mut Scratch::default());
            assert!(
                got.add_vartime(&naive(&pts, &ks).neg()).is_infinity(),
                "n {n}"
            );
        }
    }
}
