//! The portable arm: the backend operations on [`FieldElement`] and [`AffinePoint`], one
//! element at a time. Values are identical to the SIMD arms' (all outputs normalized).
//!
//! Every kernel here is `#[inline(always)]` down to the 4×64 word arithmetic, and the entry
//! points are thin: the same bodies are compiled a second time inside the `bmi2` module's
//! `#[target_feature(enable = "bmi2,adx")]` functions, where the multiplications become
//! `mulx` (see [`crate::backend::Backend::Portable`]). The entry points in this file are the
//! baseline build ([`crate::backend::Backend::PortableBaseline`]).

use crate::arithmetic::field::{FieldElement, FieldElement4x64 as F};
use crate::arithmetic::group::AffinePoint;

/// See [`crate::backend::lift_x_many_vartime`]; lengths already checked. Baseline build.
pub(crate) fn lift_x_many_vartime(xs: &[FieldElement], ys: &mut [FieldElement], ok: &mut [bool]) {
    lift_x_many(xs, ys, ok);
}

/// Square roots in flight at once in [`lift_x_many`]: independent chains overlap in the
/// CPU (`docs/benchmarks.md`, "Portable arm: BMI2 and ADX").
const LIFT_LANES: usize = 4;

/// x³ + 7 in 4×64-bit words.
#[inline(always)]
fn curve_rhs(x: &FieldElement) -> F {
    let x = F::from_fe(x);
    x.square()
        .mul(&x)
        .add(&F::from_fe(&FieldElement::from_u64(7)))
}

/// The even root of `r`, normalized, and `true`; or 0 and `false` for a non-residue.
#[inline(always)]
fn even_root(r: Option<F>) -> (FieldElement, bool) {
    match r {
        Some(r) => (if r.is_odd() { r.neg() } else { r }.to_fe(), true),
        None => (FieldElement::ZERO, false),
    }
}

/// The body of [`lift_x_many_vartime`], inlined into each build.
///
/// [`LIFT_LANES`] at a time in [`crate::arithmetic::field::FieldElement4x64`]
/// ([`F::sqrt_many_vartime`]: the square roots' chains overlap, and 4×64-bit words multiply
/// faster than 5×52 limbs). A short last group is padded with copies of its first x, whose
/// roots are discarded.
#[inline(always)]
pub(crate) fn lift_x_many(xs: &[FieldElement], ys: &mut [FieldElement], ok: &mut [bool]) {
    for ((x, y), ok) in xs
        .chunks(LIFT_LANES)
        .zip(ys.chunks_mut(LIFT_LANES))
        .zip(ok.chunks_mut(LIFT_LANES))
    {
        let mut c = [F::ZERO; LIFT_LANES];
        for (i, c) in c.iter_mut().enumerate() {
            *c = curve_rhs(x.get(i).unwrap_or(&x[0]));
        }
        let r = F::sqrt_many_vartime(&c);
        for ((r, y), ok) in r.into_iter().zip(y.iter_mut()).zip(ok.iter_mut()) {
            (*y, *ok) = even_root(r);
        }
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

/// See [`crate::backend::add_affine_pairs_vartime`]; lengths already checked. Inlined into
/// each build.
#[inline(always)]
pub(crate) fn add_affine_pairs_vartime(
    a: &[AffinePoint],
    b: &[AffinePoint],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    add_pairs(|i| (&a[i], &b[i]), out, buf, equal_x);
}

/// See [`crate::backend::add_affine_pairs_gather_vartime`]; lengths and indices already
/// checked. Inlined into each build.
#[inline(always)]
pub(crate) fn add_affine_pairs_gather_vartime(
    src: &[AffinePoint],
    pairs: &[[u32; 2]],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    add_pairs(
        |i| (&src[pairs[i][0] as usize], &src[pairs[i][1] as usize]),
        out,
        buf,
        equal_x,
    );
}

/// `out[i] = p + q` for `(p, q) = get(i)`, `i in 0..out.len()`; `equal_x` is set to the
/// indices of the pairs whose Δx ≡ 0 (their inverse is left the word pattern 0).
///
/// Computed in [`crate::arithmetic::field::FieldElement4x64`]: λ = Δy/Δx with one inversion
/// for all pairs, x₃ = λ² − (x₁ + x₂), y₃ = λ·(x₁ − x₃) − y₁. Each input coordinate is
/// converted once, in the first pass, which keeps x₁, y₁, Δy and x₁ + x₂ for the second.
#[inline(always)]
fn add_pairs<'p>(
    get: impl Fn(usize) -> (&'p AffinePoint, &'p AffinePoint),
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    let PairBuf { inv, prefix, pairs } = buf;
    equal_x.clear();
    inv.clear();
    pairs.clear();
    inv.reserve(out.len());
    pairs.reserve(out.len());
    // A plain loop rather than `extend`, which the compiler kept out of line (and so out of
    // the BMI2 build).
    for i in 0..out.len() {
        let (p, q) = get(i);
        let (x1, x2) = (F::from_fe(&p.x), F::from_fe(&q.x));
        let (y1, y2) = (F::from_fe(&p.y), F::from_fe(&q.y));
        inv.push(x2.sub(&x1));
        pairs.push(PairIn {
            x1,
            y1,
            dy: y2.sub(&y1),
            sx: x1.add(&x2),
        });
    }
    batch_invert(inv, prefix);
    // A zero Δx was left 0, so that pair gets λ = 0 (x₃ = −x₁ − x₂, y₃ = −y₁) and the others
    // are unaffected.
    for (k, ((inv, pair), o)) in inv.iter().zip(pairs.iter()).zip(out.iter_mut()).enumerate() {
        // The inverse of a nonzero element is never the word pattern 0.
        if inv.0 == [0; 4] {
            equal_x.push(k as u32);
        }
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
#[inline(always)]
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
