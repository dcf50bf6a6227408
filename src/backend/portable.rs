//! The portable arm: the backend operations on [`FieldElement`] and [`AffinePoint`], one
//! element at a time. Values are identical to the SIMD arms' (all outputs normalized).

use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;

/// See [`crate::backend::lift_x_many_vartime`]; lengths already checked.
pub(crate) fn lift_x_many_vartime(xs: &[FieldElement], ys: &mut [FieldElement], ok: &mut [bool]) {
    for ((x, y), ok) in xs.iter().zip(ys.iter_mut()).zip(ok.iter_mut()) {
        match AffinePoint::lift_x_vartime(x) {
            Some(p) => {
                *y = p.y.normalize();
                *ok = true;
            }
            None => {
                *y = FieldElement::ZERO;
                *ok = false;
            }
        }
    }
}

/// The portable arm's part of [`crate::backend::PairScratch`].
#[derive(Debug, Default)]
pub(crate) struct PairBuf {
    inv: Vec<FieldElement>,
    prefix: Vec<FieldElement>,
}

/// See [`crate::backend::add_affine_pairs_vartime`]; lengths already checked.
pub(crate) fn add_affine_pairs_vartime(
    a: &[AffinePoint],
    b: &[AffinePoint],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
) {
    // Δx for every pair (magnitude 1 + 2 = 3), inverted together; a zero Δx stays 0, so that
    // pair gets λ = 0 and the others are unaffected.
    let PairBuf { inv, prefix } = buf;
    inv.clear();
    inv.extend(a.iter().zip(b).map(|(p, q)| q.x.add(&p.x.negate(1))));
    prefix.clear();
    FieldElement::batch_invert_vartime(inv, prefix);
    for (((p, q), inv), o) in a.iter().zip(b).zip(inv.iter()).zip(out.iter_mut()) {
        let dy = q.y.add(&p.y.negate(1)); // magnitude 3
        let l = dy.mul(inv); // λ, magnitude 1
                             // x₃ = λ² − x₁ − x₂ (magnitude 1 + 2 + 2 = 5)
        let x3 = l.square().add(&p.x.negate(1)).add(&q.x.negate(1));
        // y₃ = λ·(x₁ − x₃) − y₁: x₁ − x₃ has magnitude 1 + 6 = 7 ≤ 8 (mul's limit).
        let y3 = l.mul(&p.x.add(&x3.negate(5))).add(&p.y.negate(1));
        *o = AffinePoint {
            x: x3.normalize(),
            y: y3.normalize(),
            infinity: false,
        };
    }
}
