//! The portable arm's Strauss: the tables (built per call, and the fixed ones of G and
//! 2^128·G), the column sums and the doubling chain of
//! [`Backend::straus_vartime`](crate::backend::Backend::straus_vartime), on the pair additions of
//! [`super`]. Like the rest of the arm, every kernel is `#[inline(always)]` and compiled again in
//! the `bmi2` build.

use super::super::straus_args::{StrausDigit, STRAUSS_G_WIDTH};
use super::{add_pairs, add_steps, PairBuf, F};
use crate::arithmetic::constants::BETA;
use crate::arithmetic::curve_field::CurveField;
use crate::arithmetic::group::{g128, odd_multiples_vartime, AffinePoint, JacobianPoint};
use crate::arithmetic::kernel::KernelJacobian as J;

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
            acc = acc.add_xy_vartime(x, y);
        }
        while let Some((_, [x, y])) = extra.next_if(|e| e.0 as usize == c) {
            acc = acc.add_xy_vartime(x, y);
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
                [x, y, y.negate(1).normalize_weak()]
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
        out.push([x, y, y.negate(1).normalize_weak()]);
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
    add_steps::<F, true>(
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
            out[start + j as usize * len + k] = [*x, *y, y.negate(1).normalize_weak()];
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
