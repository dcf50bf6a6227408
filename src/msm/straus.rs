//! Strauss's method (interleaved wNAF) for small multi-scalar multiplications.
//!
//! `Σ kᵢ·Pᵢ` with one shared chain of 128 doublings: every scalar is recoded in width-w NAF
//! (odd digits in (−2^(w−1), 2^(w−1)), at least w−1 zeros after each non-zero digit), every
//! point gets a table of its odd multiples `P, 3P, …, (2^(w−1)−1)·P` (built with
//! batch-affine doublings and additions, all tables together, one inversion a round), and
//! the sum `±table[|d|/2]` over the non-zero digits of each bit position is added into the
//! doubling chain at that bit. The column sums do not depend on the chain, so they are formed
//! first with batch-affine additions (one inversion a round, all columns pooled). Cost per
//! point: 2^(w−2) table additions plus about 129/(w+1) affine additions; shared: 128
//! doublings and a mixed addition a column.
//!
//! Two kinds of points cost less. G and 2^128·G (the batch equation's G term, split at 2^128)
//! are recoded in width-8 NAF against fixed 64-entry tables built once, about 14 column items
//! each instead of 26 and no table steps. A point that is ±λ times the point before it (each
//! key's λP beside P) takes that table with every x times β.
//! (E. G. Straus, "Addition chains of vectors", 1964; wNAF interleaving as in libsecp256k1's
//! `ecmult_strauss_wnaf`.)
//!
//! Used below the crossover measured by the MSM sweep (`docs/batch.md`, "How it works")
//! ([`super::STRAUSS_MAX`]). The whole method is here: this file recodes the scalars, sorts the
//! digits into columns, sums the columns and runs the chain; `tables.rs` builds the tables.
//! The backend supplies only the batch-affine pair additions (`backend::add_pairs`,
//! `backend::add_steps`) and runs the work after the recoding as one job in its arm's build
//! ([`Backend::run_job`]: the portable arm's BMI2/ADX build where the CPU has it), in the
//! kernels' representation ([`crate::arithmetic::kernel`]: 4×64-bit words, or 10×26-bit limbs
//! under `cfg(nostr_verify_field32)`).
//!
//! # Variable time
//! Public data only.

mod tables;

pub use self::tables::STRAUSS_G_WIDTH;

pub(crate) use self::tables::odd_multiples;
use self::tables::{g_tables, TableBuf, G_TABLE_LEN};
use super::recode::wnaf_u128_digits;
use crate::arithmetic::group::{g128, AffinePoint, JacobianPoint};
use crate::arithmetic::kernel::{KernelField as F, KernelJacobian as J};
use crate::backend::{self, add_pairs, ArmJob, Backend};

/// Reusable buffers for [`msm_vartime`].
#[derive(Debug, Default)]
pub struct Scratch {
    live: Vec<AffinePoint>,
    /// Their scalars.
    live_k: Vec<u128>,
    /// The non-zero digits of every live point's scalar, point by point.
    digits: Vec<StrausDigit>,
    /// The same for G and 2^128·G (fixed tables: width-8 digits).
    g_digits: Vec<StrausDigit>,
    /// The tables and the column sums' buffers.
    kernel: StrausScratch,
}

/// `Σ scalars[i]·points[i]` by interleaved wNAF with window `w` (2 ≤ w ≤ 7), or w + 1 when
/// the points hold many λ-pairs ([`WIDE_PAIRS`]).
///
/// # Panics
/// If the slices differ in length or w is out of range.
///
/// # Variable time
/// Public data only.
pub fn msm_vartime(
    points: &[AffinePoint],
    scalars: &[u128],
    w: usize,
    s: &mut Scratch,
) -> JacobianPoint {
    assert_eq!(points.len(), scalars.len(), "one scalar per point");
    assert!((2..=7).contains(&w), "wNAF width {w}");
    s.live.clear();
    s.digits.clear();
    s.g_digits.clear();
    let g128 = g128();
    let (g_x0, g128_x0) = (
        AffinePoint::GENERATOR.x.raw_limbs()[0],
        g128.x.raw_limbs()[0],
    );
    s.live_k.clear();
    let mut bits = 0;
    for (p, &k) in points.iter().zip(scalars) {
        if k == 0 || p.is_infinity() {
            continue;
        }
        // G and 2^128·G (the batch equation's last two terms) use the kernel's fixed tables.
        // One stored limb of x first (a full comparison normalizes both sides): a point whose
        // limbs are stored otherwise only misses the fixed tables.
        let x0 = p.x.raw_limbs()[0];
        let fixed = if x0 == g_x0 && *p == AffinePoint::GENERATOR {
            0
        } else if x0 == g128_x0 && p == g128 {
            1
        } else {
            s.live.push(*p);
            s.live_k.push(k);
            continue;
        };
        bits = bits.max(recode(k, STRAUSS_G_WIDTH, fixed, &mut s.g_digits));
    }
    let w = width(&s.live, w);
    for (j, &k) in s.live_k.iter().enumerate() {
        bits = bits.max(recode(k, w, j as u32, &mut s.digits));
    }
    let tlen = 1usize << (w - 2);
    // The tables and the doubling chain run in the kernels' representation (4×64-bit words,
    // whose multiplications are about 1.6× faster than the 5×52-bit limbs' in a baseline
    // build; Strauss in the BMI2/ADX build measured about 2 % faster again; 10×26-bit limbs
    // under cfg(nostr_verify_field32)).
    digits_vartime(
        backend::selected(),
        &s.live,
        &s.digits,
        &s.g_digits,
        bits,
        tlen,
        &mut s.kernel,
    )
}

/// One non-zero digit of [`digits_vartime`]'s input: `digit · 2^bit` times the point at index
/// `point`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrausDigit {
    /// The point's index.
    pub point: u32,
    /// The digit's position (its column), below the call's `bits`.
    pub bit: u8,
    /// The digit: odd, with `|digit| < 2·tlen`.
    pub digit: i8,
}

/// Working memory for [`digits_vartime`], reused across calls.
#[derive(Debug, Default)]
pub struct StrausScratch(StrausBuf);

/// Strauss's method after the recoding, on `backend`'s build: `Σ d·2^bit·P_point` over
/// `digits`, the non-zero width-w NAF digits of every point's scalar (odd, `|d| < 2·tlen`,
/// `tlen = 2^(w−2)`, columns below `bits`; any order, though digits of one column are summed in
/// the order given), plus the same over `g_digits` for G (`point` 0) and 2^128·G (`point` 1)
/// in width-8 NAF (`|d| < 128`), whose tables are fixed (built once). Builds every point's
/// table of odd multiples `P, 3P, …, (2·tlen − 1)·P` (batch-affine, one inversion a round),
/// sorts the digits' table entries into their columns (counting sort: the zeros are never
/// read), sums each column with batch-affine additions (all columns pooled, one inversion a
/// round) and runs the shared doubling chain over the column sums, as one job of `backend`'s
/// arm ([`Backend::run_job`]; the IFMA arm runs it in the portable arm's build: its vectors do
/// not help a serial chain, and its Pippenger takes over from 9 points).
///
/// # Panics
/// If `tlen` is 0, `bits` is above 256, or a digit is out of range (its point, its
/// column, or its size; for `g_digits`, a point other than 0 or 1 or a digit of 128 or
/// more). Points must not be the identity.
///
/// # Variable time
/// Branches on the inputs; public data only.
pub fn digits_vartime(
    backend: Backend,
    points: &[AffinePoint],
    digits: &[StrausDigit],
    g_digits: &[StrausDigit],
    bits: usize,
    tlen: usize,
    scratch: &mut StrausScratch,
) -> JacobianPoint {
    assert!(
        tlen >= 1 && bits <= 256,
        "straus digits_vartime: tlen {tlen}, bits {bits}"
    );
    // Every digit names a point, a column below `bits` and an odd multiple in its point's
    // table (a larger one would read the next point's table). G's digits: point 0 is G,
    // 1 is 2^128·G, width-8 NAF (fixed tables of 64 entries).
    for (list, n, len) in [(digits, points.len(), tlen), (g_digits, 2, G_TABLE_LEN)] {
        for d in list {
            assert!(
                (d.point as usize) < n
                    && (d.bit as usize) < bits
                    && d.digit % 2 != 0
                    && (d.digit.unsigned_abs() as usize) < 2 * len,
                "straus digits_vartime: digit {d:?} out of range (points {n}, bits {bits}, \
                 table entries {len})"
            );
        }
    }
    backend.run_job(Columns {
        points,
        digits,
        g_digits,
        bits,
        tlen,
        s: &mut scratch.0,
    })
}

/// The arguments of [`columns_and_chain`], as a job for [`Backend::run_job`].
struct Columns<'a> {
    points: &'a [AffinePoint],
    digits: &'a [StrausDigit],
    g_digits: &'a [StrausDigit],
    bits: usize,
    tlen: usize,
    s: &'a mut StrausBuf,
}

impl ArmJob for Columns<'_> {
    type Output = JacobianPoint;

    #[inline(always)]
    fn run(self) -> JacobianPoint {
        columns_and_chain(
            self.points,
            self.digits,
            self.g_digits,
            self.bits,
            self.tlen,
            self.s,
        )
    }
}

/// [`digits_vartime`]'s work after its checks, inlined into each arm's build.
///
/// Strauss's chain is Horner's rule over the digit columns, `acc = 2·acc + Cᵢ` from the top
/// bit down, where the column sum `Cᵢ = Σⱼ ±table_j[|dᵢⱼ|/2]` adds the table entries of every
/// point whose digit i is non-zero. The columns do not depend on the accumulator, so they are
/// summed first, all together, with batch-affine additions (`backend::add_pairs`: 5M + 1S a
/// pair with Montgomery's trick, one inversion a round): each round adds the items of every
/// column in pairs, all columns pooled, while a round has at least [`COLUMN_MIN_PAIRS`] pairs
/// (below that, its inversion costs more than its additions save over the chain's mixed
/// additions).
/// The chain then adds what is left of each column (one item, in batches of tens of points)
/// with mixed additions (8M + 3S). Against adding every digit in the chain, each pair saves
/// about 5 field operations (`docs/benchmarks.md`, "Strauss's column sums").
///
/// A pair with equal x (a point and itself or its negation: repeated points with equal
/// digits) is not summed in a round: both items go to the chain, whose additions handle it.
#[inline(always)]
fn columns_and_chain(
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

/// The fewest pairs a round of the column sums must have: a round costs one
/// inversion (about 1 µs in 4×64-bit words) and saves about 5 field operations a pair.
const COLUMN_MIN_PAIRS: usize = 16;

/// The working memory of [`columns_and_chain`].
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

/// The non-zero width-`w` NAF digits of `k` for point `point`, appended to `digits`; returns
/// the NAF's length.
fn recode(k: u128, w: usize, point: u32, digits: &mut Vec<StrausDigit>) -> usize {
    wnaf_u128_digits(k, w, |bit, digit| {
        digits.push(StrausDigit {
            point,
            // At most 128 (`WNAF_U128_DIGITS` positions).
            bit: bit as u8,
            digit,
        })
    })
}

/// How many λ-pairs (a key's ±λP beside ±P) make [`msm_vartime`] widen the window by one.
pub const WIDE_PAIRS: usize = 8;

/// The NAF width for `live` (the points with tables built per call) given the base width
/// `w`: w + 1 when they hold at least [`WIDE_PAIRS`] λ-pairs (neighbours with the same y up to
/// sign: the kernel takes λP's table from P's by β, so a pair pays one table for two points'
/// fewer column items), else w. Measured at 16 signatures: w + 1 for every point is 1–2 %
/// faster with 8 or 16 keys, a tie with 4, 2–3 % slower with one key, and slower at 24–32
/// signatures by one key (`docs/benchmarks.md`, "Strauss's width by λ-pairs").
fn width(live: &[AffinePoint], w: usize) -> usize {
    let pairs = live
        .windows(2)
        .filter(|p| p[1].y == p[0].y || p[1].y == p[0].y.negate(1))
        .count();
    if w < 7 && pairs >= WIDE_PAIRS {
        w + 1
    } else {
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msm::tests::{naive, random_terms};

    #[test]
    fn matches_naive() {
        for w in 2..=7 {
            for n in [0usize, 1, 2, 5, 11] {
                let (pts, ks) = random_terms(n, 10 * w as u64 + n as u64);
                let got = msm_vartime(&pts, &ks, w, &mut Scratch::default());
                assert!(
                    got.add_vartime(&naive(&pts, &ks).neg()).is_infinity(),
                    "w {w} n {n}"
                );
            }
        }
        // Duplicated points and a cancelling pair.
        let (pts, _) = random_terms(2, 3);
        let p = [pts[0], pts[0], pts[1], pts[1].neg()];
        let got = msm_vartime(
            &p,
            &[5, 7, u128::MAX, u128::MAX],
            5,
            &mut Scratch::default(),
        );
        assert!(got
            .add_vartime(&naive(&[pts[0]], &[12]).neg())
            .is_infinity());
    }

    /// Keys beside their ±λ images (as the batch equation lays them out) widen the window
    /// from `WIDE_PAIRS` pairs on; the sums match naive ones either way.
    #[test]
    fn lambda_pairs_widen_the_window_and_match_naive() {
        let (pts, ks) = random_terms(2 * WIDE_PAIRS + 3, 91);
        let mut p = Vec::new();
        for (i, q) in pts[..WIDE_PAIRS].iter().enumerate() {
            let l = q.endomorphism();
            p.push(*q);
            p.push(if i % 2 == 0 { l } else { l.neg() });
        }
        p.extend_from_slice(&pts[WIDE_PAIRS..WIDE_PAIRS + 3]);
        let k = &ks[..p.len()];
        for w in [4, 5, 6, 7] {
            let want = if w < 7 { w + 1 } else { w };
            assert_eq!(width(&p, w), want, "w {w}");
            // One pair fewer: the base width.
            assert_eq!(width(&p[2..], w), w, "w {w}");
            for q in [&p[..], &p[2..]] {
                let got = msm_vartime(q, &k[..q.len()], w, &mut Scratch::default());
                assert!(
                    got.add_vartime(&naive(q, &k[..q.len()]).neg())
                        .is_infinity(),
                    "w {w}, {} points",
                    q.len()
                );
            }
        }
    }

    /// G and 2^128·G take the kernel's fixed width-8 tables, wherever they stand among the
    /// points, also twice and beside their negations (which take the ordinary path).
    #[test]
    fn generator_terms_match_naive() {
        let (g, g2) = (AffinePoint::GENERATOR, *g128());
        let (pts, ks) = random_terms(6, 77);
        for (p, k) in [
            (
                vec![pts[0], g, pts[1], g2],
                vec![ks[0], ks[1], ks[2], ks[3]],
            ),
            (vec![g2, g, pts[2]], vec![u128::MAX, 1, ks[4]]),
            (vec![g, g.neg(), g2, g2], vec![ks[5], ks[5], 3, u128::MAX]),
            (vec![g], vec![ks[0] >> 100]),
        ] {
            for w in [4, 5] {
                let got = msm_vartime(&p, &k, w, &mut Scratch::default());
                assert!(
                    got.add_vartime(&naive(&p, &k).neg()).is_infinity(),
                    "w {w}: {k:x?}"
                );
            }
        }
    }
}
