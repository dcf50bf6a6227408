//! The portable arm: the backend operations on [`FieldElement`] and [`AffinePoint`], one
//! element at a time. Values are identical to the SIMD arms' (all outputs normalized).

use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;

/// See [`crate::backend::lift_x_many_vartime`]; lengths already checked.
/// Two at a time ([`AffinePoint::lift_x_pair_vartime`]: the square roots' chains overlap).
pub(crate) fn lift_x_many_vartime(xs: &[FieldElement], ys: &mut [FieldElement], ok: &mut [bool]) {
    let set = |p: Option<AffinePoint>, y: &mut FieldElement, ok: &mut bool| {
        *ok = p.is_some();
        *y = p.map_or(FieldElement::ZERO, |p| p.y.normalize());
    };
    let mut pairs_x = xs.chunks_exact(2);
    let mut pairs_y = ys.chunks_exact_mut(2);
    let mut pairs_ok = ok.chunks_exact_mut(2);
    for ((x, y), ok) in (&mut pairs_x).zip(&mut pairs_y).zip(&mut pairs_ok) {
        let (p0, p1) = AffinePoint::lift_x_pair_vartime(&x[0], &x[1]);
        let (y0, y1) = y.split_at_mut(1);
        let (ok0, ok1) = ok.split_at_mut(1);
        set(p0, &mut y0[0], &mut ok0[0]);
        set(p1, &mut y1[0], &mut ok1[0]);
    }
    let rest = pairs_x.remainder().iter();
    let rest = rest
        .zip(pairs_y.into_remainder())
        .zip(pairs_ok.into_remainder());
    for ((x, y), ok) in rest {
        set(AffinePoint::lift_x_vartime(x), y, ok);
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
