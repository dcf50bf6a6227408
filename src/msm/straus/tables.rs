//! Strauss's tables: every point's odd multiples `P, 3P, …, (2·len − 1)·P` as affine
//! `[x, y, −y]` in the kernels' representation, built with the backend's batch-affine pair
//! additions; and the fixed width-8 tables of G and 2^128·G, built once. Inlined into whichever
//! arm build runs the Strauss job ([`super::digits_vartime`]).

use crate::arithmetic::constants::BETA;
use crate::arithmetic::curve_field::CurveField;
use crate::arithmetic::group::{g128, odd_multiples_vartime, AffinePoint};
use crate::arithmetic::kernel::KernelField as F;
use crate::backend::{add_pairs, add_steps, PairBuf};

/// The NAF width of the scalars of G and 2^128·G in [`super::digits_vartime`] (its
/// `g_digits`): their tables are fixed, `2^(width − 2)` = 64 entries each.
pub const STRAUSS_G_WIDTH: usize = 8;

/// Entries in each of the fixed tables of G and 2^128·G ([`g_tables`]): their scalars are
/// recoded in width-8 NAF ([`STRAUSS_G_WIDTH`]: odd digits below 128), against
/// width 4 and tables built every call for the other points.
pub(crate) const G_TABLE_LEN: usize = 1 << (STRAUSS_G_WIDTH - 2);

/// The odd multiples `G, 3G, …, 127G`, then the same of 2^128·G, as `[x, y, −y]` in the
/// kernels' representation: built once, on first use, then read by every call of
/// [`super::digits_vartime`] (12 KB in 4×64-bit words). Against width-4 tables built per call, each of
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
    /// The batch-affine additions' buffers (also the column sums').
    pub(super) pair_buf: PairBuf,
    pub(super) equal_x: Vec<u32>,
    /// The points whose tables are built, and those taken from the point before by β (with
    /// whether y is negated).
    built: Vec<u32>,
    derived: Vec<(u32, bool)>,
}
