//! Layer 2: multi-scalar multiplication, `Σ kᵢ·Pᵢ` for affine points and 128-bit scalars.
//!
//! [`msm_vartime`] is the one entry point: Strauss's interleaved wNAF ([`straus`]) up to
//! the selected backend's Strauss bound ([`backend::MsmTuning`]), Pippenger's bucket method
//! with batch-affine additions ([`pippenger`]) above, with the window width from the same
//! tuning. Both the switch points and the windows come from
//! the MSM sweep described in `docs/batch.md` (`cargo run --profile bench -p nostr-verify-bench --example msm_sweep`
//! reproduces it).
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
#[cfg(test)]
mod table;

use crate::arithmetic::group::{AffinePoint, JacobianPoint};
use crate::backend;

/// The most points any backend gives Strauss's method (its [`backend::MsmTuning`] says
/// where each one switches); [`msm_two_threads_vartime`] cuts nothing up to twice this.
pub const STRAUSS_MAX: usize = 64;

/// The wNAF width Strauss's method uses.
pub const STRAUSS_WINDOW: usize = 4;

/// Point counts where the algorithm or the window width changes on some backend (for tests
/// that must cross every switch): every backend's Strauss bound and window bounds, ascending.
#[cfg(all(any(test, feature = "internals"), not(nostr_verify_field32)))]
pub const SWITCH_POINTS: &[usize] = &[8, 40, 56, 80, 128, 256, 600, 1400, 2600, 8000];
/// Point counts where the algorithm or the window width changes on some backend (10×26-bit
/// build).
#[cfg(all(any(test, feature = "internals"), nostr_verify_field32))]
pub const SWITCH_POINTS: &[usize] = &[8, 40, 64, 80, 256, 600, 1400, 2600, 8000];

/// Reusable buffers for [`msm_vartime`].
#[derive(Debug, Default)]
pub struct Scratch {
    straus: straus::Scratch,
    pippenger: pippenger::Scratch,
    /// The helper thread's buffers for [`msm_two_threads_vartime`].
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
    let tuning = backend::msm_tuning();
    if points.len() <= tuning.strauss_max {
        straus::msm_vartime(points, scalars, STRAUSS_WINDOW, &mut scratch.straus)
    } else {
        let c = tuning.window_for(points.len());
        pippenger::msm_vartime(points, scalars, c, &mut scratch.pippenger)
    }
}

/// [`msm_vartime`] on two threads for large inputs: the points are cut into two halves, the
/// calling thread and one scoped helper thread (`std::thread::scope`) each run Pippenger on
/// one half (with the window width for its size, and buffers of its own), and the two sums
/// are added. Inputs of at most `2 ·` [`STRAUSS_MAX`] points run on the calling thread alone.
///
/// Cutting by points costs 0–13 % more CPU than one thread (two smaller MSMs); cutting
/// Pippenger's windows in two instead ([`pippenger::msm_two_threads_vartime`]) cost 18–59 %
/// more, the halves each redoing the recoding and running a narrower bucket reduction
/// (measured in `docs/experiments.md`, "two-thread MSM").
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
    assert_eq!(points.len(), scalars.len(), "one scalar per point");
    if points.len() <= 2 * STRAUSS_MAX {
        return msm_vartime(points, scalars, scratch);
    }
    let half = points.len() / 2;
    let (p0, p1) = points.split_at(half);
    let (k0, k1) = scalars.split_at(half);
    let Scratch {
        pippenger: s0,
        pippenger2: s1,
        ..
    } = scratch;
    let run = |p: &[AffinePoint], k: &[u128], s: &mut pippenger::Scratch| {
        pippenger::msm_vartime(p, k, pippenger::window_for(p.len()), s)
    };
    let (low, high) = std::thread::scope(|scope| {
        // The OS may refuse the thread: then the calling thread does both halves.
        let h = crate::spawn::try_spawn_scoped(scope, || run(p1, k1, &mut *s1));
        let low = run(p0, k0, &mut *s0);
        (low, h.map(|h| h.join()))
    });
    let high = match high {
        Some(Ok(high)) => high,
        // No thread, or the helper panicked (it cannot, short of a bug): its half runs here.
        _ => run(p1, k1, s1),
    };
    low.add_vartime(&high)
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
    fn switch_points_are_the_strauss_bound_and_the_window_bounds() {
        let mut want = vec![];
        for b in backend::Backend::ALL {
            let t = b.msm_tuning();
            assert!(t.strauss_max <= STRAUSS_MAX, "{b:?}");
            want.push(t.strauss_max);
            want.extend(t.windows().map(|(max, _)| max));
        }
        want.sort_unstable();
        want.dedup();
        assert_eq!(SWITCH_POINTS, &want[..]);
    }

    /// `n` distinct points (an arithmetic progression Q, Q + H, Q + 2H, …: cheap to make in
    /// bulk) with random 128-bit scalars, a few of them zero or small.
    fn progression_terms(n: usize, seed: u64) -> (Vec<AffinePoint>, Vec<u128>) {
        let mut st = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let q = mul(&AffinePoint::GENERATOR, xorshift(&mut st) as u128 | 1);
        let h = mul(&AffinePoint::GENERATOR, xorshift(&mut st) as u128 | 1).to_affine_vartime();
        let mut jac = Vec::with_capacity(n);
        let mut p = q;
        for _ in 0..n {
            jac.push(p);
            p = p.add_affine_vartime(&h);
        }
        let mut pts = Vec::new();
        JacobianPoint::batch_to_affine_vartime(&jac, &mut pts);
        let ks = (0..n)
            .map(|i| match i % 97 {
                0 => 0,
                1 => 3,
                _ => ((xorshift(&mut st) as u128) << 64) | xorshift(&mut st) as u128,
            })
            .collect();
        (pts, ks)
    }

    #[test]
    fn every_switch_point_plus_minus_one_against_strauss() {
        let mut scratch = Scratch::default();
        for &sp in SWITCH_POINTS {
            for n in [sp - 1, sp, sp + 1] {
                let (pts, ks) = progression_terms(n, n as u64);
                let want = straus::msm_vartime(&pts, &ks, 5, &mut straus::Scratch::default());
                let one = msm_vartime(&pts, &ks, &mut scratch);
                assert!(one.eq_vartime(&want), "one thread, n {n}");
                let two = msm_two_threads_vartime(&pts, &ks, &mut scratch);
                assert!(two.eq_vartime(&want), "two threads, n {n}");
            }
        }
    }

    #[test]
    fn two_threads_cut_by_points_match_one_thread() {
        // Odd and even counts around the cut (2 · STRAUSS_MAX), where the halves' window
        // widths differ from the whole's, with a thread and with the thread refused.
        let mut scratch = Scratch::default();
        for n in [2 * STRAUSS_MAX, 2 * STRAUSS_MAX + 1, 81, 160, 161, 513] {
            let (pts, ks) = random_terms(n, n as u64 + 7);
            let want = msm_vartime(&pts, &ks, &mut scratch);
            assert!(
                want.add_vartime(&naive(&pts, &ks).neg()).is_infinity(),
                "n {n}"
            );
            let two = msm_two_threads_vartime(&pts, &ks, &mut scratch);
            assert!(two.eq_vartime(&want), "two threads, n {n}");
            let before = crate::spawn::refused_so_far();
            let here = crate::spawn::with_spawns_refused(|| {
                msm_two_threads_vartime(&pts, &ks, &mut scratch)
            });
            assert!(here.eq_vartime(&want), "thread refused, n {n}");
            let asked = crate::spawn::refused_so_far() - before;
            assert_eq!(asked, usize::from(n > 2 * STRAUSS_MAX), "n {n}");
        }
    }

    #[test]
    fn entry_point_across_the_switch() {
        for &n in &[
            0usize,
            1,
            7,
            8,
            9,
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
