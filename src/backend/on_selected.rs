//! The lane operations on the [selected](super::selected) backend, for callers that do not
//! pick an arm (the methods of [`Backend`] run on a given one).

use super::selected;
#[cfg(doc)]
use super::Backend;
#[cfg(any(test, feature = "internals"))]
use super::PairScratch;
use crate::arithmetic::field::FieldElement;
#[cfg(any(test, feature = "internals"))]
use crate::arithmetic::group::AffinePoint;

/// BIP-340 lift_x for many x: `ys[i]` = the even y with y² = x³ + 7 and `ok[i] = true`, or
/// `ys[i]` = 0 and `ok[i] = false` where x³ + 7 is not a square.
///
/// `xs` must be normalized field elements (`< p`, e.g. from [`FieldElement::from_bytes`]).
/// Outputs are normalized. Runs on [`selected`]; see [`Backend::lift_x_many_vartime`] to pick
/// an arm.
///
/// # Panics
///
/// If the three slices have different lengths.
///
/// # Variable time
///
/// Branches on the inputs; public data only.
pub fn lift_x_many_vartime(xs: &[FieldElement], ys: &mut [FieldElement], ok: &mut [bool]) {
    selected().lift_x_many_vartime(xs, ys, ok);
}

/// Affine additions of many independent pairs with one shared inversion (Montgomery's trick):
/// `out[i] = a[i] + b[i]`.
///
/// Precondition: `a[i].x != b[i].x` for all i (the caller routes equal-x pairs to doubling or
/// cancellation), no point is the identity, all coordinates normalized. Outputs are
/// normalized, with `infinity = false`. A pair that violates the precondition does not
/// disturb the others: it is computed with λ = 0, giving the meaningless
/// `(−x₁ − x₂, −y₁)` on every backend. Runs on [`selected`]; see
/// [`Backend::add_affine_pairs_vartime`] to pick an arm.
///
/// # Panics
///
/// If the three slices have different lengths.
///
/// # Variable time
///
/// Branches on the inputs; public data only.
#[cfg(any(test, feature = "internals"))]
pub fn add_affine_pairs_vartime(a: &[AffinePoint], b: &[AffinePoint], out: &mut [AffinePoint]) {
    selected().add_affine_pairs_vartime(a, b, out);
}

/// [`add_affine_pairs_vartime`] with the caller's working memory (see [`PairScratch`]).
///
/// # Panics
///
/// If the three slices have different lengths.
///
/// # Variable time
///
/// Branches on the inputs; public data only.
#[cfg(any(test, feature = "internals"))]
pub fn add_affine_pairs_in_vartime(
    a: &[AffinePoint],
    b: &[AffinePoint],
    out: &mut [AffinePoint],
    scratch: &mut PairScratch,
) {
    selected().add_affine_pairs_in_vartime(a, b, out, scratch);
}

/// Affine additions of pairs of points picked by index, with one shared inversion:
/// `out[k] = src[pairs[k][0]] + src[pairs[k][1]]`.
///
/// The same additions, precondition and outputs as [`add_affine_pairs_vartime`], without
/// copying the points into pair arrays first (Pippenger's buckets hold indices). Runs on
/// [`selected`]; see [`Backend::add_affine_pairs_gather_vartime`] to pick an arm.
///
/// # Panics
///
/// If `pairs` and `out` differ in length, or an index is out of range for `src` (`out` may
/// then be partly written).
///
/// # Variable time
///
/// Branches on the inputs; public data only.
#[cfg(any(test, feature = "internals"))]
pub fn add_affine_pairs_gather_vartime(
    src: &[AffinePoint],
    pairs: &[[u32; 2]],
    out: &mut [AffinePoint],
    scratch: &mut PairScratch,
) {
    selected().add_affine_pairs_gather_vartime(src, pairs, out, scratch);
}
