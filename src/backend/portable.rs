//! The portable arm: the backend operations on [`FieldElement`] and [`AffinePoint`], one
//! element at a time. Values are identical to the SIMD arms' (all outputs normalized).
//!
//! Every kernel here is `#[inline(always)]` down to the 4×64 word arithmetic, and the entry
//! points are thin: the same bodies are compiled a second time inside the `bmi2` module's
//! `#[target_feature(enable = "bmi2,adx")]` functions, where the multiplications become
//! `mulx` (see [`crate::backend::Backend::Portable`]). The entry points in this file are the
//! baseline build ([`crate::backend::Backend::PortableBaseline`]).

use super::straus_args::{StrausDigit, STRAUSS_G_WIDTH};
use crate::arithmetic::constants::BETA;
use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::{g128, odd_multiples_vartime, AffinePoint, JacobianPoint};
use crate::arithmetic::kernel::{KernelField as F, KernelJacobian as J};
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
            1 => lift_group::<1>(x, y, ok),
            #[cfg(not(nostr_verify_field32))]
            2 => lift_group::<2>(x, y, ok),
            _ => lift_group::<LIFT_LANES>(x, y, ok),
        }
    }
}

/// One group of at most `N` lifts, `N` chains interleaved; a short group is padded with
/// copies of its first x, whose roots are discarded.
#[inline(always)]
fn lift_group<const N: usize>(x: &[FieldElement], y: &mut [FieldElement], ok: &mut [bool]) {
    let mut c = [F::ZERO; N];
    for (i, c) in c.iter_mut().enumerate() {
        *c = curve_rhs(x.get(i).unwrap_or(&x[0]));
    }
    let r = F::sqrt_many_vartime(&c);
    for ((r, y), ok) in r.into_iter().zip(y.iter_mut()).zip(ok.iter_mut()) {
        (*y, *ok) = even_root(r);
    }
}

/// See [`crate::backend::Backend::straus_vartime`]; lengths already checked. Inlined into
/// each build.
///
/// Strauss's chain is Horner's rule over the digit columns, `acc = 2·acc + Cᵢ` from the top
/// bit down, where the column sum `Cᵢ = Σⱼ ±table_j[|dᵢⱼ|/2]` adds the table entries of every
/// point whose digit i is non-zero. The columns do not depend on the accumulator, so they are
/// summed first, all together, with batch-affine additions ([`add_pairs`]: 5M + 1S a pair with
/// Montgomery's trick, one inversion a round): each round adds the items of every column in
/// pairs, all columns pooled, while a round has at least [`COLUMN_MIN_PAIRS`] pairs (below
/// that, its inversion costs more than its additions save over the chain's mixed additions).
/// The chain then adds what is left of each column (one item, in batches of tens of points)
/// with mixed additions (8M + 3S). Against adding every digit in the chain, each pair saves
/// about 5 field operations (`docs/benchmarks.md`, "Strauss's column sums").
///
/// A pair with equal x (a point and itself or its negation: repeated points with equal
/// digits) is not summed in a round: both items go to the chain, whose additions handle it.
#[inline(always)]
pub(crate) fn straus_vartime(
    points: &[AffinePoint],
    digits: &[StrausDigit],
    g_digits: &[StrausDigit],
    bits: usize,
    tlen: usize,
    s: &mut StrausBuf,
) -> JacobianPoint {
    s.table.clear();
    odd_multiples(points, tlen, &mut s.tables, &mut s.table);
    // The column sums reuse the table builder's pair-addition buffers (the two run in turn).
    let StrausBuf {
        tables: TableBuf {
            pair_buf, equal_x, ..
        },
        table,
        items,
        next,
        starts,
        next_starts,
        pairs,
        extra,
    } = s;
    // Every column's items, the columns in bit order: a counting sort of the digits by
    // column (stable, so a column keeps the digits' order). Scanning every point's dense
    // digit row column by column instead read about five zeros for each non-zero digit, with
    // a branch on each (6.8 µs of the 84 µs call at 20 points: `docs/experiments.md`).
    starts.clear();
    starts.resize(bits + 1, 0);
    for d in digits.iter().chain(g_digits) {
        starts[d.bit as usize + 1] += 1;
    }
    for c in 0..bits {
        starts[c + 1] += starts[c];
    }
    // Each column's next free slot.
    next_starts.clear();
    next_starts.extend_from_slice(&starts[..bits]);
    items.clear();
    items.resize(digits.len() + g_digits.len(), [F::ZERO; 2]);
    // Built on first use: a call without G's digits does not build them.
    let fixed = if g_digits.is_empty() {
        &[][..]
    } else {
        g_tables()
    };
    for (d, table, tlen) in digits
        .iter()
        .map(|d| (d, &table[..], tlen))
        .chain(g_digits.iter().map(|d| (d, fixed, G_TABLE_LEN)))
    {
        let entry = &table[d.point as usize * tlen + (d.digit.unsigned_abs() as usize >> 1)];
        // [x, y, −y]: y for a positive digit, −y for a negative one.
        let y = entry[1 + usize::from(d.digit < 0)];
        let slot = &mut next_starts[d.bit as usize];
        items[*slot as usize] = [entry[0], y];
        *slot += 1;
    }
    extra.clear();
    loop {
        let n_pairs: usize = starts.windows(2).map(|w| (w[1] - w[0]) as usize / 2).sum();
        if n_pairs < COLUMN_MIN_PAIRS {
            break;
        }
        // The next round's layout: per column, its pairs' sums, then its odd item. A pair is
        // [first item, second item, slot of its sum in `next`].
        pairs.clear();
        next.clear();
        next_starts.clear();
        for c in 0..bits {
            let (a, b) = (starts[c] as usize, starts[c + 1] as usize);
            next_starts.push(next.len() as u32);
            let mut k = a;
            while k + 1 < b {
                pairs.push([k as u32, (k + 1) as u32, next.len() as u32]);
                next.push([F::ZERO; 2]);
                k += 2;
            }
            if k < b {
                next.push(items[k]);
            }
        }
        next_starts.push(next.len() as u32);
        let (src, dst) = (&*items, &mut *next);
        add_pairs(
            pairs.len(),
            |i| {
                let [p, q, _] = pairs[i];
                let ([x1, y1], [x2, y2]) = (src[p as usize], src[q as usize]);
                [x1, y1, x2, y2]
            },
            |_| {},
            |i, x3, y3| dst[pairs[i][2] as usize] = [x3, y3],
            pair_buf,
            equal_x,
        );
        // Equal x: the first item stays in the slot, the second goes to the chain.
        for &i in equal_x.iter() {
            let [p, q, slot] = pairs[i as usize];
            next[slot as usize] = items[p as usize];
            let column = next_starts.partition_point(|&st| st <= slot) - 1;
            extra.push((column as u32, items[q as usize]));
        }
        core::mem::swap(items, next);
        core::mem::swap(starts, next_starts);
    }
    // Highest column first in the chain.
    extra.sort_unstable_by_key(|e| core::cmp::Reverse(e.0));
    let mut extra = extra.iter().peekable();
    let mut acc = J::IDENTITY;
    for c in (0..bits).rev() {
        if !acc.is_infinity() {
            acc = acc.double_vartime();
        }
        for [x, y] in &items[starts[c] as usize..starts[c + 1] as usize] {
            acc = acc.add_words_vartime(x, y);
        }
        while let Some((_, [x, y])) = extra.next_if(|e| e.0 as usize == c) {
            acc = acc.add_words_vartime(x, y);
        }
    }
    acc.to_jacobian()
}

/// Entries in each of the fixed tables of G and 2^128·G ([`g_tables`]): their scalars are
/// recoded in width-8 NAF ([`crate::backend::STRAUSS_G_WIDTH`]: odd digits below 128), against
/// width 4 and tables built every call for the other points.
pub(crate) const G_TABLE_LEN: usize = 1 << (STRAUSS_G_WIDTH - 2);

/// The odd multiples `G, 3G, …, 127G`, then the same of 2^128·G, as `[x, y, −y]` in the
/// kernels' representation: built once, on first use, then read by every call of
/// [`straus_vartime`] (12 KB in 4×64-bit words). Against width-4 tables built per call, each of
/// the two points costs about 14 column items instead of 26 and no table steps
/// (`docs/experiments.md`, "Precomputed wide-window tables").
///
/// Built by [`odd_multiples_vartime`] (Jacobian additions, one shared inversion: about 30 µs),
/// not by [`odd_multiples`], whose 64 rounds of two points each would pay 64 inversions.
#[inline(never)]
pub(crate) fn g_tables() -> &'static [[F; 3]] {
    static TABLES: std::sync::OnceLock<Vec<[F; 3]>> = std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let mut affine = Vec::new();
        odd_multiples_vartime(
            &[AffinePoint::GENERATOR, *g128()],
            G_TABLE_LEN,
            &mut Vec::new(),
            &mut affine,
        );
        affine
            .iter()
            .map(|p| {
                let (x, y) = (F::from_fe(&p.x), F::from_fe(&p.y));
                [x, y, y.neg()]
            })
            .collect()
    })
}

/// The fewest pairs a round of [`straus_vartime`]'s column sums must have: a round costs one
/// inversion (about 1 µs in 4×64-bit words) and saves about 5 field operations a pair.
const COLUMN_MIN_PAIRS: usize = 16;

/// The working memory of [`straus_vartime`].
#[derive(Debug, Default)]
pub(crate) struct StrausBuf {
    /// The table builder's buffers.
    tables: TableBuf,
    /// Every point's table, `[x, y, −y]` per entry.
    table: Vec<[F; 3]>,
    /// The column sums' items `(x, y)`, column by column, and the next round's.
    items: Vec<[F; 2]>,
    next: Vec<[F; 2]>,
    /// Where each column starts in `items` (one more entry: the end), and in `next`.
    starts: Vec<u32>,
    next_starts: Vec<u32>,
    /// A round's pairs: two items and the slot of their sum.
    pairs: Vec<[u32; 3]>,
    /// Items left to the chain by pairs with equal x, with their column.
    extra: Vec<(u32, [F; 2])>,
}

/// Appends, for every point, its odd multiples `P, 3P, …, (2·len − 1)·P` as affine
/// `[x, y, −y]` in the kernels' representation to `out` (`len` entries per point, in input
/// order).
///
/// Batch-affine steps ([`add_steps`]: one inversion a round, 6–7 field operations a step):
/// `D = 2P` for every point in one round of doublings, then `len − 1` rounds of pair
/// additions `T_k = T_(k−1) + D`, every point's table advancing together in each round. Until
/// stop 37 each table was a chain of mixed additions (8M + 3S) on the isomorphic curve
/// `y² = x³ + 7·Z⁶` (libsecp256k1's `ecmult_odd_multiples_table`), all entries converted to
/// affine with one inversion at the end (7 more operations an entry): one inversion in all,
/// but about three times the field operations; Strauss with these tables measured 7 % faster
/// at 20 points and 11 % at 48 (`docs/benchmarks.md`, "Strauss's tables, batch-affine").
///
/// Points must not be the identity (then no step meets equal x: `(2k − 1)P = ±2P` would
/// need a point of small order, and the group has prime order).
///
/// # Variable time
/// Public data only.
#[inline(always)]
pub(crate) fn odd_multiples(
    points: &[AffinePoint],
    len: usize,
    t: &mut TableBuf,
    out: &mut Vec<[F; 3]>,
) {
    assert!(len >= 1, "a table has at least P");
    let TableBuf {
        d,
        round,
        pair_buf,
        equal_x,
        built,
        derived,
    } = t;
    let start = out.len();
    for p in points {
        debug_assert!(!p.is_infinity());
        let (x, y) = (F::from_fe(&p.x), F::from_fe(&p.y));
        out.push([x, y, y.neg()]);
        for _ in 1..len {
            out.push([F::ZERO; 3]);
        }
    }
    if len == 1 {
        return;
    }
    // A point that is ±λ·(the point before it) (the batch equation puts each key's ±λP
    // beside ±P) takes that point's table with every x times β: λ·(kP) = k·(λP), and
    // λ·(x, y) = (β·x, y). One multiplication an entry instead of a batch-affine step.
    built.clear();
    derived.clear();
    for (j, q) in points.iter().enumerate() {
        match j.checked_sub(1).and_then(|i| lambda_image(&points[i], q)) {
            Some(neg) => derived.push((j as u32, neg)),
            None => built.push(j as u32),
        }
    }
    let n = built.len();
    d.clear();
    d.resize(n, [F::ZERO; 2]);
    let table = &out[start..];
    add_steps::<true>(
        n,
        |i| {
            let [x, y, _] = table[built[i] as usize * len];
            [x, y, x, y]
        },
        |_| {},
        |i, x3, y3| d[i] = [x3, y3],
        pair_buf,
        equal_x,
    );
    debug_assert!(equal_x.is_empty(), "a point of order 2");
    round.clear();
    round.resize(n, [F::ZERO; 2]);
    for k in 1..len {
        let table = &out[start..];
        add_pairs(
            n,
            |i| {
                let [x1, y1, _] = table[built[i] as usize * len + k - 1];
                let [x2, y2] = d[i];
                [x1, y1, x2, y2]
            },
            |_| {},
            |i, x3, y3| round[i] = [x3, y3],
            pair_buf,
            equal_x,
        );
        debug_assert!(equal_x.is_empty(), "a point of small order");
        for (&j, [x, y]) in built.iter().zip(round.iter()) {
            out[start + j as usize * len + k] = [*x, *y, y.neg()];
        }
    }
    // In index order: a point derived from a derived one (λ²P beside λP) finds its source's
    // table done.
    let beta = F::from_fe(&BETA);
    for &(j, neg) in derived.iter() {
        let (to, from) = (start + j as usize * len, start + (j as usize - 1) * len);
        for k in 1..len {
            let [x, y, ny] = out[from + k];
            out[to + k] = if neg {
                [x.mul(&beta), ny, y]
            } else {
                [x.mul(&beta), y, ny]
            };
        }
    }
}

/// `Some(false)` if `q = λ·p` (β·x, y), `Some(true)` if `q = −λ·p` (β·x, −y), else `None`.
#[inline(always)]
fn lambda_image(p: &AffinePoint, q: &AffinePoint) -> Option<bool> {
    let neg = if q.y == p.y {
        false
    } else if q.y == p.y.negate(1) {
        true
    } else {
        return None;
    };
    (q.x == p.x.mul(&BETA)).then_some(neg)
}

/// The working memory of [`odd_multiples`].
#[derive(Debug, Default)]
pub(crate) struct TableBuf {
    /// `2P` for every point.
    d: Vec<[F; 2]>,
    /// One round's sums.
    round: Vec<[F; 2]>,
    /// The batch-affine additions' buffers (also [`straus_vartime`]'s column sums').
    pair_buf: PairBuf,
    equal_x: Vec<u32>,
    /// The points whose tables are built, and those taken from the point before by β (with
    /// whether y is negated).
    built: Vec<u32>,
    derived: Vec<(u32, bool)>,
}

/// The portable arm's part of [`crate::backend::PairScratch`].
#[derive(Debug, Default)]
pub(crate) struct PairBuf {
    /// Δx of every pair (the word pattern 0 where it is 0 mod p).
    dx: Vec<F>,
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
    /// x₁ + x₂ ([`F::add_for_mul`]: in the 10×26 build without its carry pass, for
    /// [`F::sub_of_sum`]).
    sx: F,
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

/// `[x₁, y₁, x₂, y₂]` of two affine points, in 4×64-bit words.
#[inline(always)]
fn coords(p: &AffinePoint, q: &AffinePoint) -> [F; 4] {
    [
        F::from_fe_normalized(&p.x),
        F::from_fe_normalized(&p.y),
        F::from_fe_normalized(&q.x),
        F::from_fe_normalized(&q.y),
    ]
}

/// The affine point (x, y), normalized.
#[inline(always)]
fn affine(x: F, y: F) -> AffinePoint {
    AffinePoint {
        x: x.to_fe(),
        y: y.to_fe(),
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
fn add_pairs(
    n: usize,
    get: impl Fn(usize) -> [F; 4],
    prefetch: impl Fn(usize),
    put: impl FnMut(usize, F, F),
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    add_steps::<false>(n, get, prefetch, put, buf, equal_x);
}

/// The inputs of the addition `(x₁, y₁) + (x₂, y₂)` as [`add_steps`] keeps them, and its
/// denominator Δx.
#[inline(always)]
fn pair_step(x1: F, y1: F, x2: F, y2: F) -> (PairIn, F) {
    let step = PairIn {
        x1,
        y1,
        dy: y2.sub_for_mul(&y1),
        sx: x1.add_for_mul(&x2),
    };
    (step, x2.sub_for_mul(&x1))
}

/// The inputs of a doubling of `(x, y)` as [`add_steps`] keeps them: λ = 3x²/(2y),
/// x₃ = λ² − 2x, y₃ = λ·(x − x₃) − y; and its denominator 2y. On secp256k1 y ≠ 0 (no point
/// of order 2), so the denominator is never 0.
#[inline(always)]
fn double_step(x: F, y: F) -> (PairIn, F) {
    let x2 = x.square();
    let step = PairIn {
        x1: x,
        y1: y,
        dy: x2.add_for_mul(&x2).add_for_mul(&x2),
        sx: x.add_for_mul(&x),
    };
    (step, y.add_for_mul(&y))
}

/// [`add_pairs`], and with `DOUBLE` the same for doublings: `get(i)` returns `[x, y, _, _]` and
/// `put(i, x₃, y₃)` receives `2·(x, y)` ([`double_step`]; the steps share the inversion and
/// the formula's tail, λ = num/den, x₃ = λ² − sx, y₃ = λ·(x₁ − x₃) − y₁). The step's inputs
/// are formed here by `#[inline(always)]` functions rather than by a closure around `get`:
/// such closures stayed out of line, outside the BMI2/ADX build (4.7 % of a 16-signature
/// batch in `perf`, the doubling's squaring without `mulx`).
#[inline(always)]
fn add_steps<const DOUBLE: bool>(
    n: usize,
    get: impl Fn(usize) -> [F; 4],
    prefetch: impl Fn(usize),
    mut put: impl FnMut(usize, F, F),
    buf: &mut PairBuf,
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
    let mut acc = F::ONE;
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
    if any && acc.is_zero() {
        acc = F::ONE;
        any = false;
        for (d, prefix) in dx.iter_mut().zip(prefix.iter_mut()) {
            if d.is_zero() {
                *d = F::ZERO;
            } else {
                acc = acc.mul(d);
                any = true;
            }
            *prefix = acc;
        }
    }
    // With no nonzero Δx the inverse is never used.
    let mut inv = if any { acc.invert_vartime() } else { F::ZERO };
    for i in (0..n).rev() {
        let d = &dx[i];
        let pair = &pairs[i];
        // inv = 1/prefix[i] here; prefix[i − 1] is the product of the nonzero Δx before
        // pair i (1 if there are none).
        let this_inv = if d.is_zero_pattern() {
            equal_x.push(i as u32);
            F::ZERO
        } else {
            let t = if i == 0 { inv } else { inv.mul(&prefix[i - 1]) };
            inv = inv.mul(d);
            t
        };
        let l = pair.dy.mul(&this_inv);
        let x3 = l.square().sub_of_sum(&pair.sx);
        let y3 = l.mul(&pair.x1.sub_for_mul(&x3)).sub(&pair.y1);
        put(i, x3, y3);
    }
    // Found from the last pair down.
    equal_x.reverse();
}
