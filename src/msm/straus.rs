//! Strauss's method (interleaved wNAF) for small multi-scalar multiplications.
//!
//! `Σ kᵢ·Pᵢ` with one shared chain of 128 doublings: every scalar is recoded in width-w NAF
//! (odd digits in (−2^(w−1), 2^(w−1)), at least w−1 zeros after each non-zero digit), every
//! point gets a table of its odd multiples `P, 3P, …, (2^(w−1)−1)·P` (built with
//! batch-affine doublings and additions, all tables together, one inversion a round), and
//! the sum `±table[|d|/2]` over the non-zero digits of each bit position is added into the
//! doubling chain at that bit. The column sums do not depend on the chain, so they are formed
//! first with batch-affine additions (one inversion a round, all columns pooled). Cost per
//! point: 2^(w−2) table additions plus about 129/(w+1) affine additions; shared: 128
//! doublings and a mixed addition a column.
//!
//! Two kinds of points cost less. G and 2^128·G (the batch equation's G term, split at 2^128)
//! are recoded in width-8 NAF against fixed 64-entry tables built once, about 14 column items
//! each instead of 26 and no table steps. A point that is ±λ times the point before it (each
//! key's λP beside P) takes that table with every x times β.
//! (E. G. Straus, "Addition chains of vectors", 1964; wNAF interleaving as in libsecp256k1's
//! `ecmult_strauss_wnaf`.)
//!
//! Used below the crossover measured by the MSM sweep (`docs/batch.md`, "How it works")
//! ([`super::STRAUSS_MAX`]). This module recodes the scalars; the tables and the chain are a
//! backend kernel ([`crate::backend::Backend::straus_vartime`]), so they run in the portable
//! arm's BMI2/ADX build where the CPU has it.
//!
//! # Variable time
//! Public data only.

use super::recode::wnaf_u128_digits;
use crate::arithmetic::group::{g128, AffinePoint, JacobianPoint};
use crate::backend::{self, StrausDigit, StrausScratch};

/// Reusable buffers for [`msm_vartime`].
#[derive(Debug, Default)]
pub struct Scratch {
    live: Vec<AffinePoint>,
    /// Their scalars.
    live_k: Vec<u128>,
    /// The non-zero digits of every live point's scalar, point by point.
    digits: Vec<StrausDigit>,
    /// The same for G and 2^128·G (fixed tables: width-8 digits).
    g_digits: Vec<StrausDigit>,
    /// The backend's tables and buffers.
    kernel: StrausScratch,
}

/// `Σ scalars[i]·points[i]` by interleaved wNAF with window `w` (2 ≤ w ≤ 7), or w + 1 when
/// the points hold many λ-pairs ([`WIDE_PAIRS`]).
///
/// # Panics
/// If the slices differ in length or w is out of range.
///
/// # Variable time
/// Public data only.
pub fn msm_vartime(
    points: &[AffinePoint],
    scalars: &[u128],
    w: usize,
    s: &mut Scratch,
) -> JacobianPoint {
    assert_eq!(points.len(), scalars.len(), "one scalar per point");
    assert!((2..=7).contains(&w), "wNAF width {w}");
    s.live.clear();
    s.digits.clear();
    s.g_digits.clear();
    let g128 = g128();
    let (g_x0, g128_x0) = (
        AffinePoint::GENERATOR.x.raw_limbs()[0],
        g128.x.raw_limbs()[0],
    );
    s.live_k.clear();
    let mut bits = 0;
    for (p, &k) in points.iter().zip(scalars) {
        if k == 0 || p.is_infinity() {
            continue;
        }
        // G and 2^128·G (the batch equation's last two terms) use the kernel's fixed tables.
        // One stored limb of x first (a full comparison normalizes both sides): a point whose
        // limbs are stored otherwise only misses the fixed tables.
        let x0 = p.x.raw_limbs()[0];
        let fixed = if x0 == g_x0 && *p == AffinePoint::GENERATOR {
            0
        } else if x0 == g128_x0 && p == g128 {
            1
        } else {
            s.live.push(*p);
            s.live_k.push(k);
            continue;
        };
        bits = bits.max(recode(k, backend::STRAUSS_G_WIDTH, fixed, &mut s.g_digits));
    }
    let w = width(&s.live, w);
    for (j, &k) in s.live_k.iter().enumerate() {
        bits = bits.max(recode(k, w, j as u32, &mut s.digits));
    }
    let tlen = 1usize << (w - 2);
    // The tables and the doubling chain run in the backend, in the kernels' representation
    // (4×64-bit words, whose multiplications are about 1.6× faster than the 5×52-bit limbs'
    // in a baseline build; Strauss in the BMI2/ADX build measured about 2 % faster again;
    // 10×26-bit limbs under cfg(nostr_verify_field32)).
    backend::selected().straus_vartime(&s.live, &s.digits, &s.g_digits, bits, tlen, &mut s.kernel)
}

/// The non-zero width-`w` NAF digits of `k` for point `point`, appended to `digits`; returns
/// the NAF's length.
fn recode(k: u128, w: usize, point: u32, digits: &mut Vec<StrausDigit>) -> usize {
    wnaf_u128_digits(k, w, |bit, digit| {
        digits.push(StrausDigit {
            point,
            // At most 128 (`WNAF_U128_DIGITS` positions).
            bit: bit as u8,
            digit,
        })
    })
}

/// How many λ-pairs (a key's ±λP beside ±P) make [`msm_vartime`] widen the window by one.
pub const WIDE_PAIRS: usize = 8;

/// The NAF width for `live` (the points with tables built per call) given the base width
/// `w`: w + 1 when they hold at least [`WIDE_PAIRS`] λ-pairs (neighbours with the same y up to
/// sign: the kernel takes λP's table from P's by β, so a pair pays one table for two points'
/// fewer column items), else w. Measured at 16 signatures: w + 1 for every point is 1–2 %
/// faster with 8 or 16 keys, a tie with 4, 2–3 % slower with one key, and slower at 24–32
/// signatures by one key (`docs/benchmarks.md`, "Strauss's width by λ-pairs").
fn width(live: &[AffinePoint], w: usize) -> usize {
    let pairs = live
        .windows(2)
        .filter(|p| p[1].y == p[0].y || p[1].y == p[0].y.negate(1))
        .count();
    if w < 7 && pairs >= WIDE_PAIRS {
        w + 1
    } else {
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msm::tests::{naive, random_terms};

    #[test]
    fn matches_naive() {
        for w in 2..=7 {
            for n in [0usize, 1, 2, 5, 11] {
                let (pts, ks) = random_terms(n, 10 * w as u64 + n as u64);
                let got = msm_vartime(&pts, &ks, w, &mut Scratch::default());
                assert!(
                    got.add_vartime(&naive(&pts, &ks).neg()).is_infinity(),
                    "w {w} n {n}"
                );
            }
        }
        // Duplicated points and a cancelling pair.
        let (pts, _) = random_terms(2, 3);
        let p = [pts[0], pts[0], pts[1], pts[1].neg()];
        let got = msm_vartime(
            &p,
            &[5, 7, u128::MAX, u128::MAX],
            5,
            &mut Scratch::default(),
        );
        assert!(got
            .add_vartime(&naive(&[pts[0]], &[12]).neg())
            .is_infinity());
    }

    /// Keys beside their ±λ images (as the batch equation lays them out) widen the window
    /// from `WIDE_PAIRS` pairs on; the sums match naive ones either way.
    #[test]
    fn lambda_pairs_widen_the_window_and_match_naive() {
        let (pts, ks) = random_terms(2 * WIDE_PAIRS + 3, 91);
        let mut p = Vec::new();
        for (i, q) in pts[..WIDE_PAIRS].iter().enumerate() {
            let l = q.endomorphism();
            p.push(*q);
            p.push(if i % 2 == 0 { l } else { l.neg() });
        }
        p.extend_from_slice(&pts[WIDE_PAIRS..WIDE_PAIRS + 3]);
        let k = &ks[..p.len()];
        for w in [4, 5, 6, 7] {
            let want = if w < 7 { w + 1 } else { w };
            assert_eq!(width(&p, w), want, "w {w}");
            // One pair fewer: the base width.
            assert_eq!(width(&p[2..], w), w, "w {w}");
            for q in [&p[..], &p[2..]] {
                let got = msm_vartime(q, &k[..q.len()], w, &mut Scratch::default());
                assert!(
                    got.add_vartime(&naive(q, &k[..q.len()]).neg())
                        .is_infinity(),
                    "w {w}, {} points",
                    q.len()
                );
            }
        }
    }

    /// G and 2^128·G take the kernel's fixed width-8 tables, wherever they stand among the
    /// points, also twice and beside their negations (which take the ordinary path).
    #[test]
    fn generator_terms_match_naive() {
        let (g, g2) = (AffinePoint::GENERATOR, *g128());
        let (pts, ks) = random_terms(6, 77);
        for (p, k) in [
            (
                vec![pts[0], g, pts[1], g2],
                vec![ks[0], ks[1], ks[2], ks[3]],
            ),
            (vec![g2, g, pts[2]], vec![u128::MAX, 1, ks[4]]),
            (vec![g, g.neg(), g2, g2], vec![ks[5], ks[5], 3, u128::MAX]),
            (vec![g], vec![ks[0] >> 100]),
        ] {
            for w in [4, 5] {
                let got = msm_vartime(&p, &k, w, &mut Scratch::default());
                assert!(
                    got.add_vartime(&naive(&p, &k).neg()).is_infinity(),
                    "w {w}: {k:x?}"
                );
            }
        }
    }
}
