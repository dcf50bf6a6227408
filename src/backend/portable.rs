//! The portable arm: the backend operations on [`FieldElement`] and [`AffinePoint`], one
//! element at a time. Values are identical to the SIMD arms' (all outputs normalized).

use crate::arithmetic::field::{FieldElement, FieldElement4x64 as F};
use crate::arithmetic::group::AffinePoint;

/// See [`crate::backend::lift_x_many_vartime`]; lengths already checked.
///
/// Two at a time in [`crate::arithmetic::field::FieldElement4x64`] ([`F::sqrt_pair_vartime`]: the
/// square roots' chains overlap, and 4×64-bit words multiply faster than 5×52 limbs).
pub(crate) fn lift_x_many_vartime(xs: &[FieldElement], ys: &mut [FieldElement], ok: &mut [bool]) {
    let seven = F::from_fe(&FieldElement::from_u64(7));
    // x³ + 7 for one x.
    let rhs = |x: &FieldElement| {
        let x = F::from_fe(x);
        x.square().mul(&x).add(&seven)
    };
    // The even root, normalized, or 0 and `false` for a non-residue.
    let set = |r: Option<F>, y: &mut FieldElement, ok: &mut bool| {
        *ok = r.is_some();
        *y = r.map_or(FieldElement::ZERO, |r| {
            if r.is_odd() { r.neg() } else { r }.to_fe()
        });
    };
    let mut pairs_x = xs.chunks_exact(2);
    let mut pairs_y = ys.chunks_exact_mut(2);
    let mut pairs_ok = ok.chunks_exact_mut(2);
    for ((x, y), ok) in (&mut pairs_x).zip(&mut pairs_y).zip(&mut pairs_ok) {
        let (r0, r1) = F::sqrt_pair_vartime(&rhs(&x[0]), &rhs(&x[1]));
        let (y0, y1) = y.split_at_mut(1);
        let (ok0, ok1) = ok.split_at_mut(1);
        set(r0, &mut y0[0], &mut ok0[0]);
        set(r1, &mut y1[0], &mut ok1[0]);
    }
    let rest = pairs_x.remainder().iter();
    let rest = rest
        .zip(pairs_y.into_remainder())
        .zip(pairs_ok.into_remainder());
    for ((x, y), ok) in rest {
        // A lone x is paired with itself (the second root is discarded).
        let c = rhs(x);
        set(F::sqrt_pair_vartime(&c, &c).0, y, ok);
    }
}

/// The portable arm's part of [`crate::backend::PairScratch`].
#[derive(Debug, Default)]
pub(crate) struct PairBuf {
    /// Δx of every pair, then its inverse.
    inv: Vec<F>,
    /// Prefix products of the nonzero Δx (Montgomery's trick), one per pair.
    prefix: Vec<F>,
    /// What the second pass needs of every pair, converted once in the first.
    pairs: Vec<PairIn>,
}

/// One pair's inputs in 4×64 words, kept from the first pass of [`add_pairs`] to the second.
#[derive(Clone, Copy, Debug)]
struct PairIn {
    x1: F,
    y1: F,
    /// y₂ − y₁.
    dy: F,
    /// x₁ + x₂.
    sx: F,
}

/// See [`crate::backend::add_affine_pairs_vartime`]; lengths already checked.
pub(crate) fn add_affine_pairs_vartime(
    a: &[AffinePoint],
    b: &[AffinePoint],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
) {
    add_pairs(|i| (&a[i], &b[i]), out, buf);
}

/// See [`crate::backend::add_affine_pairs_gather_vartime`]; lengths and indices already
/// checked.
pub(crate) fn add_affine_pairs_gather_vartime(
    src: &[AffinePoint],
    pairs: &[[u32; 2]],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
) {
    add_pairs(
        |i| (&src[pairs[i][0] as usize], &src[pairs[i][1] as usize]),
        out,
        buf,
    );
}

/// `out[i] = p + q` for `(p, q) = get(i)`, `i in 0..out.len()`.
///
/// Computed in [`crate::arithmetic::field::FieldElement4x64`]: λ = Δy/Δx with one inversion
/// for all pairs, x₃ = λ² − (x₁ + x₂), y₃ = λ·(x₁ − x₃) − y₁. Each input coordinate is
/// converted once, in the first pass, which keeps x₁, y₁, Δy and x₁ + x₂ for the second.
#[inline(always)]
fn add_pairs<'p>(
    get: impl Fn(usize) -> (&'p AffinePoint, &'p AffinePoint),
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
) {
    let PairBuf { inv, prefix, pairs } = buf;
    inv.clear();
    pairs.clear();
    inv.reserve(out.len());
    pairs.extend((0..out.len()).map(|i| {
        let (p, q) = get(i);
        let (x1, x2) = (F::from_fe(&p.x), F::from_fe(&q.x));
        let (y1, y2) = (F::from_fe(&p.y), F::from_fe(&q.y));
        inv.push(x2.sub(&x1));
        PairIn {
            x1,
            y1,
            dy: y2.sub(&y1),
            sx: x1.add(&x2),
        }
    }));
    batch_invert(inv, prefix);
    // A zero Δx was left 0, so that pair gets λ = 0 (x₃ = −x₁ − x₂, y₃ = −y₁) and the others
    // are unaffected.
    for ((inv, pair), o) in inv.iter().zip(pairs.iter()).zip(out.iter_mut()) {
        let l = pair.dy.mul(inv);
        let x3 = l.square().sub(&pair.sx);
        let y3 = l.mul(&pair.x1.sub(&x3)).sub(&pair.y1);
        *o = AffinePoint {
            x: x3.to_fe(),
            y: y3.to_fe(),
            infinity: false,
        };
    }
}

/// Inverts every element of `elems` in place with one inversion (Montgomery's trick);
/// elements that are 0 mod p become the word pattern 0. The one inversion is
/// [`F::invert_vartime`] (safegcd) on the product.
///
/// Zero is tested once per element, in the forward pass, which rewrites it as the word
/// pattern 0; the backward pass recognises that pattern (a nonzero element is never the
/// pattern 0, only p is the other zero pattern). `prefix[i]` is the product of the nonzero
/// elements among `elems[..=i]`.
fn batch_invert(elems: &mut [F], prefix: &mut Vec<F>) {
    prefix.clear();
    let mut acc = F::ONE;
    let mut any = false;
    for e in elems.iter_mut() {
        if e.is_zero() {
            *e = F::ZERO;
        } else {
            acc = acc.mul(e);
            any = true;
        }
        prefix.push(acc);
    }
    if !any {
        return;
    }
    // acc is a product of nonzero elements, so nonzero (p is prime).
    let mut inv = acc.invert_vartime();
    for (i, e) in elems.iter_mut().enumerate().rev() {
        if e.0 == [0; 4] {
            continue;
        }
        // inv = 1 / prefix[i]; prefix[i − 1] is the product of the nonzero elements before
        // this one (1 if there are none).
        let this_inv = if i == 0 { inv } else { inv.mul(&prefix[i - 1]) };
        inv = inv.mul(e);
        *e = this_inv;
    }
}
