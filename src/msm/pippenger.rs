//! Pippenger's bucket method with batch-affine bucket accumulation.
//!
//! Computes `Σ kᵢ·Pᵢ` for N affine points and scalars `kᵢ < 2^128`.
//!
//! 1. **Digits.** Each kᵢ is recoded into W = ⌈129/c⌉ signed c-bit digits
//!    `dᵢ,w ∈ [−2^(c−1)+1, 2^(c−1)]`, so `kᵢ = Σ_w dᵢ,w·2^(cw)` (129 bits: room for the last
//!    carry). A digit d ≠ 0 puts `sign(d)·Pᵢ` into bucket `|d| − 1` of window w; zero digits
//!    put nothing anywhere (empty buckets are absent, never a point (0, 0)).
//! 2. **Sorting.** A counting sort by (window, bucket) lays every bucket's points out
//!    contiguously, for all windows at once.
//! 3. **Batch-affine accumulation.** Each round adds neighbouring pairs inside every bucket of
//!    every window with *one* shared inversion ([`backend::add_affine_pairs_vartime`], Montgomery's
//!    trick), halving every bucket; ⌈log₂(largest bucket)⌉ rounds leave one point per bucket.
//!    A pair with equal x is exceptional (the same point twice: double it; P and −P: both
//!    vanish) and never reaches the shared inversion, where a zero denominator would poison the
//!    whole round.
//! 4. **Bucket reduction** per window, in Jacobian coordinates: `S_w = Σ_j (j+1)·B_w,j` by the
//!    running-sum trick (2 additions per non-empty bucket).
//! 5. **Horner** over the windows: `Σ_w 2^(cw)·S_w` with c doublings per window.
//!
//! Cost (scalar code): about `W·N` affine additions at ~6 field multiplications each plus a
//! share of one inversion per round, `2·W·2^(c−1)` Jacobian additions, and 129 doublings. The
//! window width c is chosen per N from the sweep in `docs/msm-sweep.md` (see [`window_for`]).
//!
//! # Variable time
//! Everything here branches on the scalars and points; public data only.

use super::recode::{signed_digits_u128, windows_u128};
use crate::arithmetic::group::{AffinePoint, JacobianPoint};
use crate::backend;

/// Window widths by point count, from the sweep in `docs/msm-sweep.md`: `(max N, c)`.
pub const WINDOWS: &[(usize, usize)] = &[
    (80, 3),
    (160, 4),
    (640, 5),
    (900, 6),
    (1800, 7),
    (2600, 8),
    (8000, 9),
];

/// The largest window width used (for N beyond the table).
pub const MAX_WINDOW: usize = 10;

/// The window width used for `n` points.
pub fn window_for(n: usize) -> usize {
    WINDOWS
        .iter()
        .find(|&&(max, _)| n <= max)
        .map_or(MAX_WINDOW, |&(_, c)| c)
}

/// Reusable buffers for [`msm_vartime`].
#[derive(Debug, Default)]
pub struct Scratch {
    /// Per input point: the point and its negation (index 2i, 2i + 1).
    signed: Vec<AffinePoint>,
    /// Per (point, window) with a non-zero digit: `(bucket, signed index)`.
    entries: Vec<(u32, u32)>,
    /// Bucket start offsets into the current round's points (len = buckets + 1).
    start: Vec<u32>,
    next_start: Vec<u32>,
    cur: Vec<AffinePoint>,
    next: Vec<AffinePoint>,
    a: Vec<AffinePoint>,
    b: Vec<AffinePoint>,
    out: Vec<AffinePoint>,
    /// Where each pair's sum goes in `next`.
    slot: Vec<u32>,
    /// Exceptional doublings: (slot in `next`, point).
    dbl: Vec<(u32, JacobianPoint)>,
    dbl_jac: Vec<JacobianPoint>,
    dbl_aff: Vec<AffinePoint>,
    /// The pair additions' working memory.
    pairs: backend::PairScratch,
}

/// Equality of two normalized field elements, limb by limb (the lowest limb almost always
/// decides; an inlined compare instead of a `memcmp` call in the hot loop).
#[inline(always)]
fn same_limbs(
    a: &crate::arithmetic::field::FieldElement,
    b: &crate::arithmetic::field::FieldElement,
) -> bool {
    let (a, b) = (a.raw_limbs(), b.raw_limbs());
    a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3] && a[4] == b[4]
}

/// The number of windows for width c: ⌈129/c⌉.
pub fn windows(c: usize) -> usize {
    windows_u128(c)
}

/// `Σ scalars[i]·points[i]` with window width `c` (2 ≤ c ≤ 16).
///
/// Identity points and zero scalars contribute nothing. Points must have normalized
/// coordinates.
///
/// # Panics
/// If the slices differ in length or c is out of range.
///
/// # Variable time
/// Public data only.
pub fn msm_vartime(
    points: &[AffinePoint],
    scalars: &[u128],
    c: usize,
    s: &mut Scratch,
) -> JacobianPoint {
    assert_eq!(points.len(), scalars.len(), "one scalar per point");
    assert!((2..=16).contains(&c), "window width {c}");
    let nwin = windows(c);
    let mut sums = Vec::with_capacity(nwin);
    window_sums_vartime(points, scalars, c, 0..nwin, None, s, &mut sums);
    horner(&sums, c)
}

/// [`msm_vartime`] on two threads: the windows are split in two halves, each accumulated and
/// reduced on its own thread with its own scratch (the points are shared read-only), then
/// Horner's rule runs on the calling thread. With an odd number of windows the middle one is
/// split by points (its sum is the sum of the two halves' sums), so both threads get the same
/// number of bucket additions.
///
/// # Panics
/// As [`msm_vartime`].
///
/// # Variable time
/// Public data only.
pub fn msm_two_threads_vartime(
    points: &[AffinePoint],
    scalars: &[u128],
    c: usize,
    s: [&mut Scratch; 2],
) -> JacobianPoint {
    assert_eq!(points.len(), scalars.len(), "one scalar per point");
    assert!((2..=16).contains(&c), "window width {c}");
    let nwin = windows(c);
    let mid = nwin / 2;
    // Windows 0..mid here, (mid + odd)..nwin on the helper; the middle window of an odd
    // count is shared: points 0..half here, half..n on the helper.
    let odd = nwin % 2 == 1;
    let half = points.len() / 2;
    let (shared_low, shared_high) = if odd {
        (Some((mid, 0..half)), Some((mid, half..points.len())))
    } else {
        (None, None)
    };
    let [s0, s1] = s;
    let mut low = Vec::with_capacity(nwin + 1);
    let high_wins = mid + odd as usize..nwin;
    let helper = |s1: &mut Scratch| {
        let mut high = Vec::with_capacity(nwin - mid + 1);
        window_sums_vartime(
            points,
            scalars,
            c,
            high_wins.clone(),
            shared_high.clone(),
            s1,
            &mut high,
        );
        high
    };
    let high = std::thread::scope(|scope| {
        let h = scope.spawn(|| helper(s1));
        window_sums_vartime(points, scalars, c, 0..mid, shared_low, s0, &mut low);
        h.join()
    });
    // The helper thread panicked (it cannot, short of a bug): redo its part here.
    let high = high.unwrap_or_else(|_| helper(&mut Scratch::default()));
    // low = S_0..S_(mid−1) [, S_mid(first half)]; high = S_(mid+odd).. [, S_mid(second half)].
    if odd {
        let (Some(&part_low), Some((&part_high, high))) = (low.last(), high.split_last()) else {
            unreachable!("both threads return their share of the middle window");
        };
        low.pop();
        low.push(part_low.add_vartime(&part_high));
        low.extend_from_slice(high);
    } else {
        low.extend(high);
    }
    horner(&low, c)
}

/// `Σ_w 2^(cw)·S_w` by Horner's rule, c doublings per window.
fn horner(sums: &[JacobianPoint], c: usize) -> JacobianPoint {
    let mut acc = JacobianPoint::IDENTITY;
    for sum in sums.iter().rev() {
        if !acc.is_infinity() {
            for _ in 0..c {
                acc = acc.double_vartime();
            }
        }
        acc = acc.add_vartime(sum);
    }
    acc
}

/// Steps 1–4 for the windows in `wins`: appends `S_w = Σ_j (j+1)·B_w,j` for each of them, in
/// order, to `out`; then, with `part = Some((w, range))`, the same sum for window `w` over the
/// points in `range` only.
fn window_sums_vartime(
    points: &[AffinePoint],
    scalars: &[u128],
    c: usize,
    wins: core::ops::Range<usize>,
    part: Option<(usize, core::ops::Range<usize>)>,
    s: &mut Scratch,
    out: &mut Vec<JacobianPoint>,
) {
    let nwin_all = windows(c);
    let half = 1usize << (c - 1);
    // The part's buckets come after the windows' (it is window slot `wins.len()`).
    let slots = wins.len() + part.is_some() as usize;
    let nbuckets = slots * half;

    // 1. Digits, and the signed copies of every point.
    s.signed.clear();
    s.entries.clear();
    let mut digits = [0i32; 129];
    for (i, (p, &k)) in points.iter().zip(scalars).enumerate() {
        s.signed.push(*p);
        s.signed.push(p.neg());
        if k == 0 || p.is_infinity() {
            continue;
        }
        signed_digits_u128(k, c, &mut digits[..nwin_all]);
        for (w, &d) in digits[wins.clone()].iter().enumerate() {
            if d != 0 {
                let bucket = (w * half + d.unsigned_abs() as usize - 1) as u32;
                s.entries.push((bucket, (2 * i + (d < 0) as usize) as u32));
            }
        }
        if let Some((pw, range)) = &part {
            let d = digits[*pw];
            if d != 0 && range.contains(&i) {
                let bucket = (wins.len() * half + d.unsigned_abs() as usize - 1) as u32;
                s.entries.push((bucket, (2 * i + (d < 0) as usize) as u32));
            }
        }
    }

    // 2. Counting sort by bucket.
    s.start.clear();
    s.start.resize(nbuckets + 1, 0);
    for &(b, _) in &s.entries {
        s.start[b as usize + 1] += 1;
    }
    for j in 0..nbuckets {
        s.start[j + 1] += s.start[j];
    }
    s.cur.clear();
    s.cur.resize(s.entries.len(), AffinePoint::IDENTITY);
    {
        // `next_start` doubles as the fill cursor here.
        s.next_start.clear();
        s.next_start.extend_from_slice(&s.start);
        for &(b, idx) in &s.entries {
            let pos = &mut s.next_start[b as usize];
            s.cur[*pos as usize] = s.signed[idx as usize];
            *pos += 1;
        }
    }

    // 3. Rounds of pairwise affine additions, all buckets of all windows together.
    loop {
        let mut any_pair = false;
        s.a.clear();
        s.b.clear();
        s.slot.clear();
        s.dbl.clear();
        s.next.clear();
        s.next_start.clear();
        for j in 0..nbuckets {
            s.next_start.push(s.next.len() as u32);
            let bucket = &s.cur[s.start[j] as usize..s.start[j + 1] as usize];
            let mut pairs = bucket.chunks_exact(2);
            for pq in &mut pairs {
                any_pair = true;
                let (p, q) = (&pq[0], &pq[1]);
                if same_limbs(&p.x, &q.x) {
                    if same_limbs(&p.y, &q.y) {
                        // The same point twice: a doubling (never the identity: secp256k1 has
                        // no point of order 2).
                        s.dbl.push((
                            s.next.len() as u32,
                            JacobianPoint::from_affine(p).double_vartime(),
                        ));
                        s.next.push(AffinePoint::IDENTITY);
                    }
                    // Otherwise P + (−P): nothing is left of the pair.
                } else {
                    s.a.push(*p);
                    s.b.push(*q);
                    s.slot.push(s.next.len() as u32);
                    s.next.push(AffinePoint::IDENTITY);
                }
            }
            if let [last] = pairs.remainder() {
                s.next.push(*last);
            }
        }
        s.next_start.push(s.next.len() as u32);
        if !any_pair {
            break;
        }
        s.out.clear();
        s.out.resize(s.a.len(), AffinePoint::IDENTITY);
        backend::add_affine_pairs_in_vartime(&s.a, &s.b, &mut s.out, &mut s.pairs);
        for (sum, &slot) in s.out.iter().zip(&s.slot) {
            s.next[slot as usize] = *sum;
        }
        if !s.dbl.is_empty() {
            s.dbl_jac.clear();
            s.dbl_jac.extend(s.dbl.iter().map(|d| d.1));
            JacobianPoint::batch_to_affine_vartime(&s.dbl_jac, &mut s.dbl_aff);
            for (p, d) in s.dbl_aff.iter().zip(&s.dbl) {
                s.next[d.0 as usize] = *p;
            }
        }
        core::mem::swap(&mut s.cur, &mut s.next);
        core::mem::swap(&mut s.start, &mut s.next_start);
    }

    // 4. Bucket reduction per window (running sums, Jacobian).
    for w in 0..slots {
        let mut running = JacobianPoint::IDENTITY;
        let mut sum = JacobianPoint::IDENTITY;
        for j in (0..half).rev() {
            let b = w * half + j;
            if s.start[b] != s.start[b + 1] {
                running = running.add_affine_vartime(&s.cur[s.start[b] as usize]);
            }
            if !running.is_infinity() {
                sum = sum.add_vartime(&running);
            }
        }
        out.push(sum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msm::tests::{naive, random_terms};

    #[test]
    fn matches_naive_across_windows_and_sizes() {
        for c in [2usize, 3, 4, 5, 6, 7, 8, 9, 10, 12] {
            for n in [0usize, 1, 2, 3, 7, 16, 33] {
                let (pts, ks) = random_terms(n, c as u64 * 1000 + n as u64);
                let mut s = Scratch::default();
                let got = msm_vartime(&pts, &ks, c, &mut s);
                assert!(
                    got.add_vartime(&naive(&pts, &ks).neg()).is_infinity(),
                    "c {c} n {n}"
                );
            }
        }
    }

    #[test]
    fn two_threads_match_naive_for_odd_and_even_window_counts() {
        // windows(c) for c = 2..=12: 65, 43, 33, 26, 22, 19, 17, 15, 13, 12, 11: odd counts
        // share the middle window between the threads, even ones do not.
        for c in 2usize..=12 {
            for n in [0usize, 1, 2, 3, 7, 33, 100] {
                let (mut pts, mut ks) = random_terms(n, c as u64 * 7919 + n as u64);
                if n > 3 {
                    // An identity point, a zero scalar and a repeated point in the mix.
                    pts[1] = AffinePoint::IDENTITY;
                    ks[2] = 0;
                    pts[3] = pts[0];
                }
                let (mut s0, mut s1) = (Scratch::default(), Scratch::default());
                let got = msm_two_threads_vartime(&pts, &ks, c, [&mut s0, &mut s1]);
                let want = naive(&pts, &ks);
                assert!(
                    got.add_vartime(&want.neg()).is_infinity(),
                    "c {c} (windows {}) n {n}",
                    windows(c)
                );
                // The same scratch again (reused buffers) gives the same point.
                let again = msm_two_threads_vartime(&pts, &ks, c, [&mut s0, &mut s1]);
                assert!(
                    again.add_vartime(&want.neg()).is_infinity(),
                    "c {c} n {n} again"
                );
            }
        }
    }

    #[test]
    fn duplicates_and_negations_in_buckets() {
        // The same point many times, its negation, and identical scalars: equal-x pairs in
        // every round.
        let (mut pts, mut ks) = random_terms(6, 77);
        let base = pts.clone();
        for i in 0..40 {
            let p = base[i % 3];
            pts.push(if i % 4 == 3 { p.neg() } else { p });
            ks.push(ks[i % 6] ^ (i as u128 % 2));
        }
        pts.push(AffinePoint::IDENTITY);
        ks.push(12345);
        for c in [3usize, 5, 8] {
            let mut s = Scratch::default();
            let got = msm_vartime(&pts, &ks, c, &mut s);
            assert!(
                got.add_vartime(&naive(&pts, &ks).neg()).is_infinity(),
                "c {c}"
            );
        }
        // A sum that cancels exactly.
        let p = base[0];
        let got = msm_vartime(&[p, p.neg()], &[99, 99], 4, &mut Scratch::default());
        assert!(got.is_infinity());
    }
}
