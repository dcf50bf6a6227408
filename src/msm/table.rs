//! Odd-multiple tables for Strauss's method, converted to affine together.

use crate::arithmetic::group::{AffinePoint, JacobianPoint};

/// Appends, for every point, its odd multiples `P, 3P, 5P, …, (2·len − 1)·P` in affine form to
/// `out` (`len` entries per point, in input order). All tables share one inversion
/// ([`JacobianPoint::batch_to_affine_vartime`]). `jac` is scratch.
///
/// Points must not be the identity.
///
/// # Variable time
/// Public data only.
pub fn odd_multiples_vartime(
    points: &[AffinePoint],
    len: usize,
    jac: &mut Vec<JacobianPoint>,
    out: &mut Vec<AffinePoint>,
) {
    jac.clear();
    for p in points {
        debug_assert!(!p.is_infinity());
        let p1 = JacobianPoint::from_affine(p);
        let p2 = p1.double_vartime();
        let mut t = p1;
        jac.push(t);
        for _ in 1..len {
            t = t.add_vartime(&p2);
            jac.push(t);
        }
    }
    JacobianPoint::batch_to_affine_vartime(jac, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msm::tests::{naive, random_terms};

    #[test]
    fn odd_multiples_are_right() {
        let (pts, _) = random_terms(3, 5);
        let mut jac = Vec::new();
        let mut out = Vec::new();
        odd_multiples_vartime(&pts, 8, &mut jac, &mut out);
        assert_eq!(out.len(), 24);
        for (i, p) in pts.iter().enumerate() {
            for j in 0..8 {
                let want = naive(&[*p], &[2 * j as u128 + 1]).to_affine_vartime();
                assert_eq!(out[8 * i + j], want);
            }
        }
    }
}
