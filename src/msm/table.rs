//! Tests of Strauss's odd-multiple tables against the reference,
//! [`crate::arithmetic::group::odd_multiples_vartime`] (5×52-bit limbs, full Jacobian
//! additions, converted to affine together; it also builds the fixed tables of G). Strauss's
//! method builds its tables in the kernels' representation (`msm/straus/tables.rs`,
//! `odd_multiples`: batch-affine doublings and additions, every table advancing together, one
//! inversion a round), and the test below holds that builder to this reference entry by entry.

#[cfg(test)]
mod tests {
    use crate::arithmetic::curve_field::CurveField;
    use crate::arithmetic::group::odd_multiples_vartime;
    use crate::arithmetic::kernel::KernelField;
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

    /// The kernel tables equal the 5×52 reference entry by entry, for every Strauss width
    /// (len 1, 2, 4, …, 32), including a point and its negation, repeated points, and
    /// λ-images beside their source (±λP after P, λ²P after λP: tables taken by β).
    #[test]
    fn kernel_tables_match_the_reference() {
        let (mut pts, _) = random_terms(5, 11);
        pts.push(pts[0].neg());
        pts.push(pts[1]);
        let l = pts[2].endomorphism();
        pts.insert(3, l);
        pts.insert(4, l.endomorphism());
        pts.insert(5, l.endomorphism().endomorphism().neg());
        pts.push(pts[0].endomorphism().neg());
        let (mut jac, mut reference) = (Vec::new(), Vec::new());
        let mut out = Vec::new();
        for len in [1usize, 2, 4, 8, 16, 32] {
            odd_multiples_vartime(&pts, len, &mut jac, &mut reference);
            // Appends: a stale prefix must stay as it was.
            out.clear();
            out.push([KernelField::ONE; 3]);
            crate::msm::straus::odd_multiples(&pts, len, &mut Default::default(), &mut out);
            assert_eq!(out.len(), 1 + pts.len() * len, "len {len}");
            for (k, (got, want)) in out[1..].iter().zip(&reference).enumerate() {
                assert_eq!(got[0].to_fe_normalized(), want.x, "x, len {len} entry {k}");
                assert_eq!(got[1].to_fe_normalized(), want.y, "y, len {len} entry {k}");
                assert_eq!(
                    got[2].to_fe_normalized(),
                    want.y.negate(1).normalize(),
                    "-y, len {len} entry {k}"
                );
            }
        }
    }
}
