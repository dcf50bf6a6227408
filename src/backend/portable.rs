//! The portable arm: the backend operations on [`FieldElement`] and [`AffinePoint`], one
//! element at a time. Values are identical to the SIMD arms' (all outputs normalized).
//!
//! Every kernel here is `#[inline(always)]` down to the 4×64 word arithmetic, and the entry
//! points are thin: the same bodies are compiled a second time inside the `bmi2` module's
//! `#[target_feature(enable = "bmi2,adx")]` functions, where the multiplications become
//! `mulx` (see [`crate::backend::Backend::Portable`]). The entry points in this file are the
//! baseline build ([`crate::backend::Backend::PortableBaseline`]).

use crate::arithmetic::curve_field::CurveField;
use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;
use crate::arithmetic::kernel::KernelField as F;
#[cfg(not(nostr_verify_field32))]
use crate::arithmetic::words::WordPoint;

/// See [`crate::backend::lift_x_many_vartime`]; lengths already checked. Baseline build.
pub(crate) fn lift_x_many_vartime(xs: &[FieldElement], ys: &mut [FieldElement], ok: &mut [bool]) {
    lift_x_many(xs, ys, ok);
}

/// Square roots in flight at once in [`lift_x_many`]: independent chains overlap in the
/// CPU (`docs/backend.md`, "Performance").
#[cfg(not(nostr_verify_field32))]
const LIFT_LANES: usize = 4;
/// Square roots in flight at once in [`lift_x_many`] under `cfg(nostr_verify_field32)`
/// (wasm32): one. Natively one 10×26 chain costs 9.3 µs a root against 10.9 for four
/// interleaved (ten limbs a lane do not fit the registers four times over), and in node the
/// wasm module verifies 1,024 signatures from 8 keys 8–13 % faster with one
/// (`docs/benchmarks.md`, "Lift groups"). The chain now runs in 9×29 limbs
/// (`kernel/chain29.rs`); two at once measured 15 % slower in node (`docs/experiments.md`,
/// "Two square-root chains a lift").
#[cfg(nostr_verify_field32)]
const LIFT_LANES: usize = 1;

/// x³ + 7 in the kernels' representation ([`F`]: 4×64-bit words, or 10×26-bit limbs under
/// `cfg(nostr_verify_field32)`).
#[inline(always)]
fn curve_rhs<G: CurveField>(x: &FieldElement) -> G {
    let x = G::from_fe(x);
    x.square()
        .mul(&x)
        .add(&G::from_fe_normalized(&FieldElement::from_u64(7)))
}

/// The even root of `r`, normalized, and `true`; or 0 and `false` for a non-residue.
#[inline(always)]
fn even_root<G: CurveField>(r: Option<G>) -> (FieldElement, bool) {
    match r {
        Some(r) => {
            let r = if r.is_odd_mod_p() {
                r.negate(1).normalize_weak()
            } else {
                r
            };
            (r.to_fe_normalized(), true)
        }
        None => (FieldElement::ZERO, false),
    }
}

/// The body of [`lift_x_many_vartime`], inlined into each build.
///
/// [`LIFT_LANES`] at a time in the kernels' representation ([`F::sqrt_many_vartime`]: in
/// 4×64-bit words the chains overlap, and the words multiply faster than 5×52 limbs). A last
/// group of one or two runs as one or two chains, not padded to four: in the BMI2 build one
/// root alone costs 3.0 µs against 8.9 for a padded group (`docs/benchmarks.md`, "Lift
/// groups"). A last group of three is padded (a three-chain copy made the compiler give up
/// interleaving the four-chain one: every group slowed to about 4 µs a root).
#[inline(always)]
pub(crate) fn lift_x_many(xs: &[FieldElement], ys: &mut [FieldElement], ok: &mut [bool]) {
    for ((x, y), ok) in xs
        .chunks(LIFT_LANES)
        .zip(ys.chunks_mut(LIFT_LANES))
        .zip(ok.chunks_mut(LIFT_LANES))
    {
        match x.len() {
            1 => lift_group::<F, 1>(x, y, ok),
            #[cfg(not(nostr_verify_field32))]
            2 => lift_group::<F, 2>(x, y, ok),
            _ => lift_group::<F, LIFT_LANES>(x, y, ok),
        }
    }
}

/// One group of at most `N` lifts, `N` chains interleaved; a short group is padded with
/// copies of its first x, whose roots are discarded.
#[inline(always)]
fn lift_group<G: CurveField, const N: usize>(
    x: &[FieldElement],
    y: &mut [FieldElement],
    ok: &mut [bool],
) {
    let mut c = [G::ZERO; N];
    for (i, c) in c.iter_mut().enumerate() {
        *c = curve_rhs(x.get(i).unwrap_or(&x[0]));
    }
    let r = G::sqrt_many_vartime(&c);
    for ((r, y), ok) in r.into_iter().zip(y.iter_mut()).zip(ok.iter_mut()) {
        (*y, *ok) = even_root(r);
    }
}

/// The portable arm's part of [`crate::backend::PairScratch`], in the kernels'
/// representation (any [`CurveField`] in tests).
#[derive(Debug)]
pub(crate) struct PairBuf<G = F> {
    /// Δx of every pair (the word pattern 0 where it is 0 mod p).
    dx: Vec<G>,
    /// Prefix products of the nonzero Δx (Montgomery's trick), one per pair.
    prefix: Vec<G>,
    /// What the second pass needs of every pair, converted once in the first.
    pairs: Vec<PairIn<G>>,
}

impl<G> Default for PairBuf<G> {
    fn default() -> Self {
        Self {
            dx: Vec::new(),
            prefix: Vec::new(),
            pairs: Vec::new(),
        }
    }
}

/// One pair's inputs, kept from the first pass of [`add_pairs`] to the second.
#[derive(Clone, Copy, Debug)]
struct PairIn<G> {
    /// x₁ (magnitude 1).
    x1: G,
    /// y₁ (magnitude 1).
    y1: G,
    /// y₂ − y₁ (magnitude ≤ 3).
    dy: G,
    /// x₁ + x₂ (magnitude 2: a sum left without its carry pass where there are magnitudes,
    /// which x₃ = λ² − (x₁ + x₂) absorbs in its one).
    sx: G,
}

/// See [`crate::backend::add_affine_pairs_vartime`]; lengths already checked. Inlined into
/// each build.
#[inline(always)]
#[cfg(any(test, feature = "internals"))]
pub(crate) fn add_affine_pairs_vartime(
    a: &[AffinePoint],
    b: &[AffinePoint],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    add_pairs(
        out.len(),
        |i| coords(&a[i], &b[i]),
        |_| {},
        |i, x3, y3| out[i] = affine(x3, y3),
        buf,
        equal_x,
    );
}

/// See [`crate::backend::add_affine_pairs_gather_vartime`]; lengths already checked, an index
/// when its pair is read. Inlined into each build. `prefetch` is handed the points of the
/// pair [`PREFETCH_AHEAD`] places on while the current one is read (the BMI2/ADX build asks
/// the cache for them; the baseline build passes a no-op, having no `unsafe` to do it with).
#[inline(always)]
pub(crate) fn add_affine_pairs_gather_vartime(
    src: &[AffinePoint],
    pairs: &[[u32; 2]],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
    prefetch: impl Fn(&AffinePoint),
) {
    add_pairs(
        out.len(),
        |i| coords(&src[pairs[i][0] as usize], &src[pairs[i][1] as usize]),
        |i| prefetch_pair(src, pairs, i, &prefetch),
        |i, x3, y3| out[i] = affine(x3, y3),
        buf,
        equal_x,
    );
}

/// [`add_affine_pairs_gather_vartime`] on points in 4×64-bit words
/// ([`crate::arithmetic::words::WordPoint`], the portable arm's Pippenger pool): no conversion on the
/// way in, and only the reduction to canonical words on the way out. Inlined into each build.
#[inline(always)]
#[cfg(not(nostr_verify_field32))]
pub(crate) fn add_word_pairs_gather_vartime(
    src: &[WordPoint],
    pairs: &[[u32; 2]],
    out: &mut [WordPoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
    prefetch: impl Fn(&WordPoint),
) {
    add_pairs(
        out.len(),
        |i| {
            let (p, q) = (&src[pairs[i][0] as usize], &src[pairs[i][1] as usize]);
            [F(p.x), F(p.y), F(q.x), F(q.y)]
        },
        |i| prefetch_pair(src, pairs, i, &prefetch),
        |i, x3, y3| {
            out[i] = WordPoint {
                x: x3.reduce().0,
                y: y3.reduce().0,
            }
        },
        buf,
        equal_x,
    );
}

/// Hands `prefetch` the two points of pair `i`, if there is such a pair and its indices are
/// in range (a later read of a bad index panics; a prefetch of one is skipped).
#[inline(always)]
fn prefetch_pair<T>(src: &[T], pairs: &[[u32; 2]], i: usize, prefetch: &impl Fn(&T)) {
    if let Some(&[a, b]) = pairs.get(i) {
        if let (Some(a), Some(b)) = (src.get(a as usize), src.get(b as usize)) {
            prefetch(a);
            prefetch(b);
        }
    }
}

/// `[x₁, y₁, x₂, y₂]` of two affine points, in the kernels' representation.
#[inline(always)]
fn coords<G: CurveField>(p: &AffinePoint, q: &AffinePoint) -> [G; 4] {
    [
        G::from_fe_normalized(&p.x),
        G::from_fe_normalized(&p.y),
        G::from_fe_normalized(&q.x),
        G::from_fe_normalized(&q.y),
    ]
}

/// The affine point (x, y), normalized.
#[inline(always)]
fn affine<G: CurveField>(x: G, y: G) -> AffinePoint {
    AffinePoint {
        x: x.to_fe_normalized(),
        y: y.to_fe_normalized(),
        infinity: false,
    }
}

/// How many pairs ahead of the one being read [`add_pairs`] asks for a pair's points, where the
/// build can prefetch (the BMI2/ADX build): the gathered points of a Pippenger round are
/// scattered over a pool of megabytes, and each read otherwise waits on the cache miss.
/// 2 to 25 measured within noise of each other (`docs/experiments.md`, prefetch distances).
const PREFETCH_AHEAD: usize = 8;

/// `put(i, p + q)` for the points `(p, q)` whose coordinates `get(i)` returns, `i in 0..n`;
/// `equal_x` is set to the indices, ascending, of the pairs whose Δx ≡ 0 (they get λ = 0:
/// x₃ = −x₁ − x₂, y₃ = −y₁, and the other pairs are unaffected). `prefetch(i)` is called before pair i is read, with
/// the index of a later pair to fetch (possibly past the end: then it does nothing).
///
/// Computed in [`crate::arithmetic::words::FieldElement4x64`]: λ = Δy/Δx with one inversion
/// for all pairs (Montgomery's trick), x₃ = λ² − (x₁ + x₂), y₃ = λ·(x₁ − x₃) − y₁. Two
/// passes:
///
/// 1. Forward: each pair's coordinates are read once (`get`); Δx is multiplied into the
///    running product, whose value after each pair is kept (`prefix`) with Δx, x₁, y₁, Δy
///    and x₁ + x₂. Only when the whole product is 0 (some Δx ≡ 0: the same x twice) are the Δx
///    tested one by one: those that are 0 mod p are rewritten as the word pattern 0 and left
///    out, and the prefix products are recomputed without them.
/// 2. Backward, after the one inversion of the whole product ([`F::invert_vartime`],
///    safegcd): each pair's inverse `1/Δx = inv·prefix[i − 1]` is used at once for its sum,
///    then `inv ← inv·Δx` moves past it. Nothing is written back between the inversion and
///    the sums (measured against a separate third pass: `docs/experiments.md`).
///
/// A nonzero Δx is never the word pattern 0 (only p is the other pattern of 0), so the
/// backward pass recognises the pairs left out by that pattern.
#[inline(always)]
pub(crate) fn add_pairs<G: CurveField>(
    n: usize,
    get: impl Fn(usize) -> [G; 4],
    prefetch: impl Fn(usize),
    put: impl FnMut(usize, G, G),
    buf: &mut PairBuf<G>,
    equal_x: &mut Vec<u32>,
) {
    add_steps::<G, false>(n, get, prefetch, put, buf, equal_x);
}

/// The inputs of the addition `(x₁, y₁) + (x₂, y₂)` as [`add_steps`] keeps them, and its
/// denominator Δx.
#[inline(always)]
fn pair_step<G: CurveField>(x1: G, y1: G, x2: G, y2: G) -> (PairIn<G>, G) {
    let step = PairIn {
        x1,
        y1,
        dy: y2.sub(&y1, 1),
        sx: x1.add(&x2),
    };
    (step, x2.sub(&x1, 1))
}

/// The inputs of a doubling of `(x, y)` as [`add_steps`] keeps them: λ = 3x²/(2y),
/// x₃ = λ² − 2x, y₃ = λ·(x − x₃) − y; and its denominator 2y. On secp256k1 y ≠ 0 (no point
/// of order 2), so the denominator is never 0.
#[inline(always)]
fn double_step<G: CurveField>(x: G, y: G) -> (PairIn<G>, G) {
    let x2 = x.square();
    let step = PairIn {
        x1: x,
        y1: y,
        dy: x2.add(&x2).add(&x2),
        sx: x.add(&x),
    };
    (step, y.add(&y))
}

/// [`add_pairs`], and with `DOUBLE` the same for doublings: `get(i)` returns `[x, y, _, _]` and
/// `put(i, x₃, y₃)` receives `2·(x, y)` ([`double_step`]; the steps share the inversion and
/// the formula's tail, λ = num/den, x₃ = λ² − sx, y₃ = λ·(x₁ − x₃) − y₁). The step's inputs
/// are formed here by `#[inline(always)]` functions rather than by a closure around `get`:
/// such closures stayed out of line, outside the BMI2/ADX build (4.7 % of a 16-signature
/// batch in `perf`, the doubling's squaring without `mulx`).
#[inline(always)]
pub(crate) fn add_steps<G: CurveField, const DOUBLE: bool>(
    n: usize,
    get: impl Fn(usize) -> [G; 4],
    prefetch: impl Fn(usize),
    mut put: impl FnMut(usize, G, G),
    buf: &mut PairBuf<G>,
    equal_x: &mut Vec<u32>,
) {
    let PairBuf { dx, prefix, pairs } = buf;
    equal_x.clear();
    dx.clear();
    prefix.clear();
    pairs.clear();
    dx.reserve(n);
    prefix.reserve(n);
    pairs.reserve(n);
    let mut acc = G::ONE;
    // Plain loops rather than `extend`, which the compiler kept out of line (and so out of
    // the BMI2 build).
    for i in 0..n {
        prefetch(i + PREFETCH_AHEAD);
        let [x1, y1, x2, y2] = get(i);
        let (step, d) = if DOUBLE {
            double_step(x1, y1)
        } else {
            pair_step(x1, y1, x2, y2)
        };
        acc = acc.mul(&d);
        prefix.push(acc);
        dx.push(d);
        pairs.push(step);
    }
    // A Δx ≡ 0 makes the whole product 0: only then is every Δx tested, and those left out
    // (a doubling's 2y is never 0 on the curve). Testing each Δx as it came cost a carry pass
    // a pair in the 10×26 build.
    let mut any = n > 0;
    if any && acc.normalizes_to_zero() {
        acc = G::ONE;
        any = false;
        for (d, prefix) in dx.iter_mut().zip(prefix.iter_mut()) {
            if d.normalizes_to_zero() {
                *d = G::ZERO;
            } else {
                acc = acc.mul(d);
                any = true;
            }
            *prefix = acc;
        }
    }
    // With no nonzero Δx the inverse is never used.
    let mut inv = if any { acc.invert_vartime() } else { G::ZERO };
    for i in (0..n).rev() {
        let d = &dx[i];
        let pair = &pairs[i];
        // inv = 1/prefix[i] here; prefix[i − 1] is the product of the nonzero Δx before
        // pair i (1 if there are none).
        let this_inv = if d.is_zero_pattern() {
            equal_x.push(i as u32);
            G::ZERO
        } else {
            let t = if i == 0 { inv } else { inv.mul(&prefix[i - 1]) };
            inv = inv.mul(d);
            t
        };
        let l = pair.dy.mul(&this_inv);
        let x3 = l.square().sub(&pair.sx, 2).normalize_weak();
        let y3 = l
            .mul(&pair.x1.sub(&x3, 1))
            .sub(&pair.y1, 1)
            .normalize_weak();
        put(i, x3, y3);
    }
    // Found from the last pair down.
    equal_x.reverse();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arithmetic::jacobian::tests::affine_add;
    use crate::msm::tests::random_terms;

    /// The lifts and the pair kernels, generic over the representation, on `G` against the
    /// affine rule: random pairs, a point and itself, a point and its negation (both reported
    /// as equal x), and the doublings. On [`FieldElement`] in a debug build every magnitude
    /// bound of [`CurveField`] is asserted on the way.
    fn kernels_agree<G: CurveField>(seed: u64) {
        let n = 64;
        // Random points (the other half of them random partners), a point beside itself and
        // beside its negation.
        let (pts, _) = random_terms(2 * n, seed);
        let a = &pts[..n];
        let b: Vec<AffinePoint> = (0..n)
            .map(|i| match i % 7 {
                3 => a[i],
                5 => a[i].neg(),
                _ => pts[n + i],
            })
            .collect();
        let mut buf = PairBuf::<G>::default();
        let mut equal_x = Vec::new();
        let mut out = vec![(G::ZERO, G::ZERO); n];
        add_pairs(
            n,
            |i| coords::<G>(&a[i], &b[i]),
            |_| {},
            |i, x, y| out[i] = (x, y),
            &mut buf,
            &mut equal_x,
        );
        let want_equal: Vec<u32> = (0..n as u32).filter(|i| i % 7 == 3 || i % 7 == 5).collect();
        assert_eq!(equal_x, want_equal);
        for i in (0..n).filter(|i| i % 7 != 3 && i % 7 != 5) {
            assert_eq!(
                affine(out[i].0, out[i].1),
                affine_add(&a[i], &b[i]),
                "pair {i}"
            );
        }
        add_steps::<G, true>(
            n,
            |i| coords::<G>(&a[i], &a[i]),
            |_| {},
            |i, x, y| out[i] = (x, y),
            &mut buf,
            &mut equal_x,
        );
        assert!(equal_x.is_empty());
        for i in 0..n {
            assert_eq!(
                affine(out[i].0, out[i].1),
                affine_add(&a[i], &a[i]),
                "double {i}"
            );
        }
        // Lifts: every x of a point, and x's that are not on the curve, in groups of 1 to 4.
        let mut xs: Vec<FieldElement> = a.iter().map(|p| p.x).collect();
        xs.extend((0..16u64).map(FieldElement::from_u64));
        for group in xs.chunks(4) {
            let mut ys = vec![FieldElement::ZERO; group.len()];
            let mut ok = vec![false; group.len()];
            match group.len() {
                4 => lift_group::<G, 4>(group, &mut ys, &mut ok),
                _ => lift_group::<G, 1>(&group[..1], &mut ys[..1], &mut ok[..1]),
            }
            for (k, x) in group
                .iter()
                .enumerate()
                .take(if group.len() == 4 { 4 } else { 1 })
            {
                let want = AffinePoint::lift_x_vartime(x);
                assert_eq!(ok[k], want.is_some(), "lift {k}");
                if let Some(w) = want {
                    assert_eq!(ys[k], w.y, "lift {k}");
                }
            }
        }
    }

    #[test]
    fn kernels_agree_in_limbs() {
        kernels_agree::<FieldElement>(0x9a1);
    }

    #[test]
    fn kernels_agree_in_the_kernels_representation() {
        kernels_agree::<F>(0x9a2);
    }
}
