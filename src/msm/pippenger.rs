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
//!    A bucket down to one point (or none) retires, and later rounds walk only the others.
//!    A pair with equal x is exceptional (the same point twice: double it; P and −P: both
//!    vanish): the backend keeps it out of the shared inversion, where a zero denominator would
//!    poison the whole round, and reports it ([`backend::PairScratch::equal_x`]), and it is
//!    routed after the call.
//! 4. **Batch-affine bucket reduction**: `S_w = Σ_j (j+1)·B_w,j` by the running-sum trick
//!    (`R += B_w,j; S += R` from the top bucket down), with the running sums of all windows
//!    advancing together: every step (`S += R` for one bucket with `R += B` for the next, both
//!    reading the same R) is one batch of affine additions sharing one inversion, the
//!    exceptional cases routed as in step 3; the running and weighted sums live in the point
//!    pool, and the additions go to the backend as index pairs. Each window's buckets are cut into
//!    chunks ([`chunk_len`]) that run as lanes of their own, so a batch holds enough additions
//!    to pay for its inversion; the chunks of a window are joined at the end in Jacobian
//!    coordinates (`Σ_t S_t + len·Σ_t t·R_t`).
//! 5. **Horner** over the windows: `Σ_w 2^(cw)·S_w` with c doublings per window.
//!
//! Cost: about `W·N` affine additions in step 3 and `2·W·2^(c−1)` in step 4, at ~6 field
//! multiplications each plus a share of one inversion per batch, about `3·W·2^(c−1)/len`
//! Jacobian additions to join the chunks, and 129 doublings. The window width c is chosen per
//! N from the MSM sweep (`docs/batch.md`, "How it works"; see [`window_for`]).
//!
//! # Variable time
//! Everything here branches on the scalars and points; public data only.

use super::recode::{signed_digits_u128, windows_u128};
use crate::arithmetic::group::{AffinePoint, JacobianPoint};
use crate::arithmetic::kernel::KernelJacobian;
use crate::backend::{self, PoolJob, PoolPoint};

mod reduce;
mod scratch;
mod steps;
pub use self::reduce::chunk_len;
use self::reduce::reduce_batch_affine;
#[cfg(test)]
use self::reduce::reduce_serial;
#[cfg(test)]
use self::reduce::ReduceBuf;
pub use self::scratch::Scratch;
use self::scratch::{Pools, Typed, Work};
use self::steps::{drop_identities, grow, grow_with, scatter_doublings};

/// The most pair additions handed to the backend in one call during accumulation: a round
/// of all windows at a few thousand points holds tens of thousands of pairs, whose working
/// memory would not stay in cache between the forward and the backward pass. Swept with the
/// gathering kernels (`docs/experiments.md`, chunk and pair-block sizes): 1024 beat 512
/// and 2048 at every size from 82 to 3,074 points.
pub const PAIR_BLOCK: usize = 1024;

/// The window width used for `n` points on the selected backend (its [`backend::MsmTuning`]).
pub fn window_for(n: usize) -> usize {
    backend::msm_tuning().window_for(n)
}

/// The pairing copies a bucket's pairs in whole groups of `PAIR_GROUP`, reading and writing
/// past its end; the index vectors carry `PAIR_PAD` slots of slack for that.
const PAIR_GROUP: usize = 4;
const PAIR_PAD: usize = 2 * PAIR_GROUP;

/// The final index of a bucket that holds no point.
const NO_POINT: u32 = u32::MAX;

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
#[cfg(any(test, feature = "internals"))]
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
        // The OS may refuse the thread: then the calling thread does both halves.
        let h = crate::spawn::try_spawn_scoped(scope, || helper(&mut *s1));
        window_sums_vartime(points, scalars, c, 0..mid, shared_low, s0, &mut low);
        h.map(|h| h.join())
    });
    let high = match high {
        Some(Ok(high)) => high,
        // No thread, or the helper panicked (it cannot, short of a bug): its part runs here.
        _ => helper(s1),
    };
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

/// `Σ_w 2^(cw)·S_w` by Horner's rule, c doublings per window, in the kernels' representation
/// ([`KernelJacobian`]: 4×64-bit words, or 10×26-bit limbs under
/// `cfg(nostr_verify_field32)`), as a job in the selected arm's build.
fn horner(sums: &[JacobianPoint], c: usize) -> JacobianPoint {
    backend::selected().run_job(Horner { sums, c })
}

/// The arguments of [`horner`], as a job for [`backend::Backend::run_job`].
struct Horner<'a> {
    sums: &'a [JacobianPoint],
    c: usize,
}

impl backend::ArmJob for Horner<'_> {
    type Output = JacobianPoint;

    #[inline(always)]
    fn run(self) -> JacobianPoint {
        horner_in(self.sums, self.c)
    }
}

/// [`horner`]'s body, inlined into each arm's build.
#[inline(always)]
fn horner_in(sums: &[JacobianPoint], c: usize) -> JacobianPoint {
    let mut acc = KernelJacobian::IDENTITY;
    for sum in sums.iter().rev() {
        if !acc.is_infinity() {
            for _ in 0..c {
                acc = acc.double_vartime();
            }
        }
        acc = acc.add_vartime(&KernelJacobian::from_jacobian(sum));
    }
    acc.to_jacobian()
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
    // One backend for the whole call, and the pool in the representation it chose.
    let Scratch { work, pools } = s;
    backend::with_pool(WindowSums {
        points,
        scalars,
        c,
        wins,
        part,
        work,
        pools,
        out,
    });
}

/// The arguments of [`window_sums_vartime`], as a job for [`backend::with_pool`].
struct WindowSums<'a> {
    points: &'a [AffinePoint],
    scalars: &'a [u128],
    c: usize,
    wins: core::ops::Range<usize>,
    part: Option<(usize, core::ops::Range<usize>)>,
    work: &'a mut Work,
    pools: &'a mut Pools,
    out: &'a mut Vec<JacobianPoint>,
}

impl PoolJob for WindowSums<'_> {
    type Output = ();
    fn run<P: PoolPoint>(self, b: backend::Backend) {
        let t = self.pools.typed::<P>();
        window_sums_in(
            b,
            self.points,
            self.scalars,
            self.c,
            self.wins,
            self.part,
            self.work,
            t,
            self.out,
        );
    }
}

/// [`window_sums_vartime`] with the pool in the representation `T` of `b`'s kernels. Inlined
/// into the pool job, which runs in `b`'s arm build ([`backend::Backend::with_pool`]).
#[allow(clippy::too_many_arguments)]
#[cfg_attr(not(nostr_verify_field32), inline(always))]
fn window_sums_in<T: PoolPoint>(
    b: backend::Backend,
    points: &[AffinePoint],
    scalars: &[u128],
    c: usize,
    wins: core::ops::Range<usize>,
    part: Option<(usize, core::ops::Range<usize>)>,
    s: &mut Work,
    t: &mut Typed<T>,
    out: &mut Vec<JacobianPoint>,
) {
    let half = 1usize << (c - 1);
    // The part's buckets come after the windows' (it is window slot `wins.len()`).
    let slots = wins.len() + part.is_some() as usize;
    let nbuckets = slots * half;

    // 1. Digits, and the signed copies of every point. The pool is only ever grown: its
    // slots are overwritten before they are read (every index used below was written in this
    // call), so a reused scratch pays no initialisation.
    let mut used = 2 * points.len();
    // The rounds below append at most one sum per entry (each pair of a round makes one point
    // of two), and there are at most `points.len()` entries a slot: reserving that bound now
    // lets the pool grow without copying itself round after round on a fresh scratch.
    t.pool
        .reserve((used + points.len() * slots).saturating_sub(t.pool.len()));
    grow_with(&mut t.pool, used, T::IDENTITY);
    // Bucket sizes, counted as the entries are made (`start[b + 1]` for bucket b).
    s.start.clear();
    s.start.resize(nbuckets + 1, 0);
    recode(
        points,
        scalars,
        c,
        &wins,
        &part,
        &mut t.pool,
        &mut s.entries,
        &mut s.win_len,
        &mut s.start,
    );

    // 2. Counting sort by bucket (of indices: no point moves).
    for j in 0..nbuckets {
        s.start[j + 1] += s.start[j];
    }
    // Padded for the pairing's whole-group copies (see [`pair_up`]).
    s.cur.clear();
    s.cur.resize(s.start[nbuckets] as usize + PAIR_PAD, 0);
    {
        // `next_start` doubles as the fill cursor here. Window by window: the writes of one
        // window land in its own stretch of `cur`, which stays in cache.
        s.next_start.clear();
        s.next_start.extend_from_slice(&s.start);
        for (w, &len) in s.win_len.iter().enumerate() {
            for &(b, idx) in &s.entries[w * points.len()..][..len as usize] {
                let pos = &mut s.next_start[b as usize];
                s.cur[*pos as usize] = idx;
                *pos += 1;
            }
        }
    }

    // 3. Rounds of pairwise affine additions, all buckets of all windows together. A round's
    // sums go to the pool after its last used slot; the active buckets of the next round are
    // their indices (and the index of an odd bucket's last point, which stays where it is).
    // A bucket down to one point (or none) retires: its index goes to `fin`, and later rounds
    // no longer walk it. The first round walks every bucket. The pairing reads no point, and
    // neither does anything else before the backend: it reports each block's exceptional
    // (equal-x) pairs, which are routed after the call.
    s.act.clear();
    s.act.extend(0..nbuckets as u32);
    grow(&mut s.fin, nbuckets);
    loop {
        let base = used;
        pair_up(
            &s.cur,
            &s.start,
            &s.act,
            base,
            &mut s.pair_idx,
            &mut s.next,
            &mut s.next_start,
            &mut s.next_act,
            &mut s.fin,
        );
        if s.pair_idx.is_empty() {
            // Every bucket walked held one point or none: all have retired.
            debug_assert!(s.next_act.is_empty());
            break;
        }
        used = base + s.pair_idx.len();
        grow_with(&mut t.pool, used, T::IDENTITY);
        let (src, out) = t.pool.split_at_mut(base);
        let out = &mut out[..s.pair_idx.len()];
        // In blocks: each block's working memory stays in cache, at the price of one
        // inversion per block.
        let mut cancelled = false;
        for (pairs, out) in s
            .pair_idx
            .chunks(PAIR_BLOCK)
            .zip(out.chunks_mut(PAIR_BLOCK))
        {
            // The backend gives an equal-x pair a harmless λ = 0 sum and reports it; such a
            // pair is routed here, after the call, so no pass reads every pair's points first.
            T::add_pairs(b, src, pairs, out, &mut s.pairs);
            s.dbl.clear();
            s.cancel.clear();
            for &k in s.pairs.equal_x() {
                let pq = pairs[k as usize];
                let (p, q) = (&src[pq[0] as usize], &src[pq[1] as usize]);
                if p.same_y(q) {
                    // The same point twice: a doubling (never the identity: secp256k1 has no
                    // point of order 2).
                    s.dbl.push((
                        k,
                        JacobianPoint::from_affine(&p.to_affine()).double_vartime(),
                    ));
                } else {
                    // P + (−P): nothing is left of the pair.
                    s.cancel.push(k);
                }
            }
            scatter_doublings(&s.dbl, &mut s.dbl_jac, &mut s.dbl_aff, |k, p| {
                out[k as usize] = T::from_affine(&p);
            });
            for &k in &s.cancel {
                out[k as usize] = T::IDENTITY;
                cancelled = true;
            }
        }
        if cancelled {
            // Rare (a point and its negation in one bucket): drop the identities from the
            // next round's active buckets. A bucket that retired with a cancelled sum keeps
            // it: the reduction skips identities.
            drop_identities(&t.pool, base, &mut s.next, &mut s.next_start);
        }
        core::mem::swap(&mut s.cur, &mut s.next);
        core::mem::swap(&mut s.start, &mut s.next_start);
        core::mem::swap(&mut s.act, &mut s.next_act);
    }

    // 4. Bucket reduction, batch-affine, all windows together.
    let len = chunk_len(slots, half);
    let fin = &s.fin;
    // A bucket that cancelled to the identity is handed over as such: the reduction skips
    // identities.
    let bucket = |b: usize| (fin[b] != NO_POINT).then_some(fin[b]);
    reduce_batch_affine(
        slots,
        half,
        len,
        &mut t.pool,
        used,
        bucket,
        &mut t.reduce,
        b,
        out,
    );
}

/// Step 1 for [`window_sums_vartime`]: writes every point and its negation to `pool`
/// (slots 2i, 2i + 1), and for every non-zero digit of a window in `wins` (and of the part's
/// window, for its points) writes `(bucket, signed index)` to window slot w's stretch of
/// `entries` (`entries[w·N..][..win_len[w]]`, N points; the part's window is slot
/// `wins.len()`) and counts it in `start[bucket + 1]`.
///
/// Not inlined: as a function of its own, its slices are known not to alias.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn recode<T: PoolPoint>(
    points: &[AffinePoint],
    scalars: &[u128],
    c: usize,
    wins: &core::ops::Range<usize>,
    part: &Option<(usize, core::ops::Range<usize>)>,
    pool: &mut [T],
    entries: &mut Vec<(u32, u32)>,
    win_len: &mut Vec<u32>,
    start: &mut [u32],
) {
    let nwin_all = windows(c);
    let half = 1usize << (c - 1);
    let n = points.len();
    let slots = wins.len() + part.is_some() as usize;
    // Written by index into a vector grown to the bound (a digit per window and the part's
    // per point).
    grow(entries, n * slots);
    win_len.clear();
    win_len.resize(slots, 0);
    let (out, len) = (&mut entries[..], &mut win_len[..]);
    let mut digits = [0i32; 129];
    for (i, (p, &k)) in points.iter().zip(scalars).enumerate() {
        let q = T::from_affine(p);
        pool[2 * i] = q;
        pool[2 * i + 1] = q.neg();
        if k == 0 || p.is_infinity() {
            continue;
        }
        signed_digits_u128(k, c, &mut digits[..nwin_all]);
        for (w, &d) in digits[wins.clone()].iter().enumerate() {
            if d != 0 {
                let bucket = w * half + d.unsigned_abs() as usize - 1;
                start[bucket + 1] += 1;
                out[w * n + len[w] as usize] = (bucket as u32, (2 * i + (d < 0) as usize) as u32);
                len[w] += 1;
            }
        }
        if let Some((pw, range)) = part {
            let d = digits[*pw];
            if d != 0 && range.contains(&i) {
                let w = wins.len();
                let bucket = w * half + d.unsigned_abs() as usize - 1;
                start[bucket + 1] += 1;
                out[w * n + len[w] as usize] = (bucket as u32, (2 * i + (d < 0) as usize) as u32);
                len[w] += 1;
            }
        }
    }
}

/// One round's pairing: the active buckets `(cur, start, act)` (the k-th is bucket `act[k]`,
/// with the indices `cur[start[k]..start[k + 1]]`) are cut into neighbouring pairs, listed in
/// `pair_idx`. Each pair's sum is at pool slot `base` + its place in `pair_idx`; an odd
/// bucket's last index stays as it stands. A bucket left with two points or more stays active
/// in `(next, next_start, next_act)`; one left with one point (or none) retires: `fin[bucket]`
/// is that point's index (or [`NO_POINT`]).
///
/// Branch-light: the pairs are copied in whole groups of [`PAIR_GROUP`] and the odd index
/// whether there is one or not, so `cur` must hold [`PAIR_PAD`] slots past the last bucket
/// and `next` is left as long (its slots past the last bucket hold junk).
///
/// Not inlined: as a function of its own, its slices are known not to alias.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn pair_up(
    cur: &[u32],
    start: &[u32],
    act: &[u32],
    base: usize,
    pair_idx: &mut Vec<[u32; 2]>,
    next: &mut Vec<u32>,
    next_start: &mut Vec<u32>,
    next_act: &mut Vec<u32>,
    fin: &mut [u32],
) {
    let total = start[act.len()] as usize;
    assert!(cur.len() >= total + PAIR_PAD, "the pairing's slack");
    // Written by index into vectors grown to the bounds (at most half the indices pair up,
    // every index leaves at most one, plus the slack of the whole-group copies), then cut to
    // length: no capacity check per element.
    grow(pair_idx, total / 2 + PAIR_GROUP);
    grow(next, total + PAIR_PAD);
    grow(next_start, act.len() + 1);
    grow(next_act, act.len());
    let (pi, nx, ns, na) = (
        &mut pair_idx[..],
        &mut next[..],
        &mut next_start[..],
        &mut next_act[..],
    );
    let (mut np, mut nn, mut nk) = (0usize, 0usize, 0usize);
    ns[0] = 0;
    for (k, &b) in act.iter().enumerate() {
        let (t, end) = (start[k] as usize, start[k + 1] as usize);
        let pairs = (end - t) / 2;
        // Whole groups (one for all but the largest buckets): the slots past the bucket's
        // pairs are overwritten by the next bucket's, or lie in the slack.
        let mut g = 0;
        loop {
            let src = &cur[t + 2 * g..][..2 * PAIR_GROUP];
            let dst = &mut pi[np + g..][..PAIR_GROUP];
            let sums = &mut nx[nn + g..][..PAIR_GROUP];
            for q in 0..PAIR_GROUP {
                dst[q] = [src[2 * q], src[2 * q + 1]];
                sums[q] = (base + np + g + q) as u32;
            }
            g += PAIR_GROUP;
            if g >= pairs {
                break;
            }
        }
        // The odd index, copied whether there is one or not (an even bucket's slot is
        // overwritten by the next bucket kept, or lies in the slack).
        let left = pairs + (end - t) % 2;
        nx[nn + pairs] = cur[t + 2 * pairs];
        // A kept bucket's `fin` is overwritten when it retires.
        fin[b as usize] = if left == 0 { NO_POINT } else { nx[nn] };
        let keep = left >= 2;
        na[nk] = b;
        nk += keep as usize;
        nn += if keep { left } else { 0 };
        ns[nk] = nn as u32;
        np += pairs;
    }
    pair_idx.truncate(np);
    next_start.truncate(nk + 1);
    next_act.truncate(nk);
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(not(nostr_verify_field32))]
    use crate::arithmetic::words::WordPoint;
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

    /// Buckets for `slots` windows of `half`: empty, random, repeated (equal running sums and
    /// buckets: doublings), and negations (cancellations), chosen by `seed`.
    fn bucket_mix(slots: usize, half: usize, seed: u64) -> Vec<Option<AffinePoint>> {
        let (pts, _) = random_terms(4, seed);
        let mut st = seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1;
        (0..slots * half)
            .map(|_| {
                st ^= st << 13;
                st ^= st >> 7;
                st ^= st << 17;
                let p = pts[(st >> 8) as usize % 4];
                match st % 8 {
                    0 | 1 => None,
                    2 => Some(p.neg()),
                    3 => Some(pts[0]),
                    _ => Some(p),
                }
            })
            .collect()
    }

    /// [`reduce_batch_affine`] on `buckets` laid out in a pool (behind a few unrelated points,
    /// with stale points past them, as in a reused scratch); an identity bucket is handed
    /// over as one. Once per pool representation and backend that can run here (both pools
    /// on every backend: a SIMD arm without its own word kernel runs the portable one), each
    /// result with its name.
    fn reduce_buckets(
        slots: usize,
        half: usize,
        len: usize,
        buckets: &[Option<AffinePoint>],
    ) -> Vec<(String, Vec<JacobianPoint>)> {
        let mut all = Vec::new();
        for b in backend::Backend::available() {
            let got = reduce_buckets_in::<AffinePoint>(b, slots, half, len, buckets);
            all.push((format!("affine pool, {}", b.name()), got));
        }
        #[cfg(not(nostr_verify_field32))]
        for b in backend::Backend::available() {
            let got = reduce_buckets_in::<WordPoint>(b, slots, half, len, buckets);
            all.push((format!("word pool, {}", b.name()), got));
        }
        all
    }

    fn reduce_buckets_in<T: PoolPoint>(
        b: backend::Backend,
        slots: usize,
        half: usize,
        len: usize,
        buckets: &[Option<AffinePoint>],
    ) -> Vec<JacobianPoint> {
        let mut pool: Vec<T> = random_terms(3, 17).0.iter().map(T::from_affine).collect();
        let from_buckets = pool.len();
        pool.extend(buckets.iter().flatten().map(T::from_affine));
        let mut idx = vec![];
        let mut at = from_buckets as u32;
        for b in buckets {
            idx.push(b.map(|_| {
                at += 1;
                at - 1
            }));
        }
        let from = pool.len();
        pool.extend(random_terms(5, 23).0.iter().map(T::from_affine));
        let mut got = Vec::new();
        reduce_batch_affine(
            slots,
            half,
            len,
            &mut pool,
            from,
            |b| idx[b],
            &mut ReduceBuf::default(),
            b,
            &mut got,
        );
        got
    }

    #[test]
    fn batch_affine_reduction_matches_its_serial_twin() {
        for (c, slots) in [(2usize, 3usize), (3, 5), (4, 2), (5, 7), (6, 3), (8, 2)] {
            let half = 1usize << (c - 1);
            for seed in 0..6u64 {
                let buckets = bucket_mix(slots, half, seed * 31 + c as u64);
                let get = |b: usize| buckets[b].as_ref();
                let mut want = Vec::new();
                reduce_serial(slots, half, get, &mut want);
                let mut len = 1;
                while len <= half {
                    for (name, got) in reduce_buckets(slots, half, len, &buckets) {
                        assert_eq!(got.len(), slots);
                        for (w, (g, e)) in got.iter().zip(&want).enumerate() {
                            assert!(
                                g.eq_vartime(e),
                                "{name}: c {c} slots {slots} seed {seed} len {len} window {w}"
                            );
                        }
                    }
                    len *= 2;
                }
            }
        }
    }

    #[test]
    fn batch_affine_reduction_cancels_to_the_identity() {
        // B_3 = P, B_2 = −P: the running sum cancels to the identity after two buckets (the
        // P + (−P) route) and stays there while the weighted sum carries on.
        let (pts, _) = random_terms(1, 5);
        let p = pts[0];
        let buckets = [None, None, Some(p.neg()), Some(p)];
        for len in [1usize, 2, 4] {
            for (name, got) in reduce_buckets(1, 4, len, &buckets) {
                // S = 4·P + 3·(−P) = P.
                assert!(
                    got[0]
                        .add_vartime(&JacobianPoint::from_affine(&p).neg())
                        .is_infinity(),
                    "{name}, len {len}"
                );
            }
        }
    }

    #[test]
    fn batch_affine_reduction_cancels_a_running_sum_the_weighted_sum_reads() {
        // B_7 = Q, B_6 = P, B_5 = −(P + Q), B_4 an identity, B_3 = R: at bucket 5 the weighted
        // sum (Q) adds the running sum (P + Q) in the same step as the running sum cancels;
        // the addition must read P + Q, not the identity.
        let pts = random_terms(3, 8).0;
        let (p, q, r) = (pts[0], pts[1], pts[2]);
        let pq = JacobianPoint::from_affine(&p)
            .add_affine_vartime(&q)
            .to_affine_vartime();
        let buckets = [
            None,
            None,
            None,
            Some(r),
            Some(AffinePoint::IDENTITY),
            Some(pq.neg()),
            Some(p),
            Some(q),
        ];
        let get = |b: usize| buckets[b].as_ref().filter(|p| !p.infinity);
        let mut want = Vec::new();
        reduce_serial(1, 8, get, &mut want);
        for len in [2usize, 4, 8] {
            for (name, got) in reduce_buckets(1, 8, len, &buckets) {
                assert!(got[0].eq_vartime(&want[0]), "{name}, len {len}");
            }
        }
    }

    #[test]
    fn chunk_len_is_a_power_of_two_within_the_window() {
        for c in 2..=16usize {
            let half = 1usize << (c - 1);
            for slots in [1usize, 2, 7, 13, 65] {
                let len = chunk_len(slots, half);
                assert!(len.is_power_of_two() && len <= half, "c {c} slots {slots}");
            }
        }
    }

    #[test]
    fn two_threads_without_a_thread_run_on_the_caller() {
        for c in [3usize, 6] {
            let (pts, ks) = random_terms(57, c as u64 + 400);
            let (mut s0, mut s1) = (Scratch::default(), Scratch::default());
            let got = crate::spawn::with_spawns_refused(|| {
                msm_two_threads_vartime(&pts, &ks, c, [&mut s0, &mut s1])
            });
            assert!(
                got.add_vartime(&naive(&pts, &ks).neg()).is_infinity(),
                "c {c}"
            );
        }
    }

    #[test]
    fn exceptional_pairs_in_every_block_and_a_reused_scratch() {
        // Each point twice in a row with one scalar (every second pair negated): with c = 2
        // every round-1 pair of every window is a doubling or a cancellation, tens of blocks
        // of them (slots past the first block), and the cancelled sums must leave the
        // buckets. The scratch is reused across sizes, so stale pool slots exist.
        let (base, ks) = random_terms(400, 4242);
        let mut pts = Vec::new();
        let mut scalars = Vec::new();
        for (i, (p, &k)) in base.iter().zip(&ks).enumerate() {
            pts.push(*p);
            pts.push(if i % 2 == 1 { p.neg() } else { *p });
            scalars.extend([k, k]);
        }
        let expect = naive(&pts, &scalars);
        let (small_pts, small_ks) = random_terms(33, 99);
        let small = naive(&small_pts, &small_ks);
        let mut s = Scratch::default();
        for c in [2usize, 3, 6] {
            let got = msm_vartime(&pts, &scalars, c, &mut s);
            assert!(got.add_vartime(&expect.neg()).is_infinity(), "c {c}");
            let got = msm_vartime(&small_pts, &small_ks, c, &mut s);
            assert!(got.add_vartime(&small.neg()).is_infinity(), "small, c {c}");
        }
        assert!(
            s.pools.largest() > 2 * PAIR_BLOCK,
            "the test must span several blocks"
        );
    }

    /// The model of [`pair_up`]: per active bucket, its pairs, then either the bucket it
    /// leaves (two indices or more) or its retirement (one index, or none).
    #[test]
    fn pair_up_keeps_and_retires_buckets_like_its_model() {
        let mut st = 0x9e37_79b9u64;
        let mut rnd = |m: u64| {
            st ^= st << 13;
            st ^= st >> 7;
            st ^= st << 17;
            st % m
        };
        for case in 0..200 {
            // Sizes around the group boundaries, empty and single buckets next to kept ones,
            // and now and then one huge bucket; the bucket numbers out of order.
            let nb = 1 + rnd(12) as usize;
            let mut sizes: Vec<usize> = (0..nb)
                .map(|_| match rnd(6) {
                    0 => 0,
                    1 => 1,
                    2 => 2 + rnd(3) as usize,
                    3 => 7 + rnd(4) as usize,
                    4 => 15 + rnd(5) as usize,
                    _ => rnd(6) as usize,
                })
                .collect();
            if case % 17 == 0 {
                sizes[nb / 2] = 100 + case;
            }
            let act: Vec<u32> = (0..nb as u32).map(|k| (k * 7 + 3) % 97).collect();
            let mut start = vec![0u32];
            for sz in &sizes {
                start.push(start.last().unwrap() + *sz as u32);
            }
            let total = *start.last().unwrap() as usize;
            // Distinct indices, then junk in the slack.
            let mut cur: Vec<u32> = (0..total as u32).map(|i| 1000 + 3 * i).collect();
            cur.extend((0..PAIR_PAD).map(|_| 0xdead));
            let base = 500_000;
            let (mut pi, mut nx, mut ns, mut na) = (vec![], vec![7; 3], vec![], vec![]);
            let mut fin = vec![12345u32; 97];
            pair_up(
                &cur, &start, &act, base, &mut pi, &mut nx, &mut ns, &mut na, &mut fin,
            );
            let (mut want_pi, mut want_nx, mut want_ns, mut want_na) =
                (vec![], Vec::<u32>::new(), vec![0u32], vec![]);
            let mut want_fin = vec![12345u32; 97];
            for (k, &b) in act.iter().enumerate() {
                let idx = &cur[start[k] as usize..start[k + 1] as usize];
                let mut left = vec![];
                for pq in idx.chunks(2) {
                    if let [p, q] = *pq {
                        left.push((base + want_pi.len()) as u32);
                        want_pi.push([p, q]);
                    } else {
                        left.push(pq[0]);
                    }
                }
                if left.len() >= 2 {
                    want_na.push(b);
                    want_nx.extend(&left);
                    want_ns.push(want_nx.len() as u32);
                } else {
                    want_fin[b as usize] = left.first().copied().unwrap_or(NO_POINT);
                }
            }
            assert_eq!(pi, want_pi, "case {case}");
            assert_eq!(ns, want_ns, "case {case}");
            assert_eq!(na, want_na, "case {case}");
            let end = *ns.last().unwrap() as usize;
            assert_eq!(nx[..end], want_nx[..], "case {case}");
            assert!(nx.len() >= end + PAIR_PAD, "case {case}: the slack");
            for b in 0..97 {
                // A kept bucket's `fin` is not read before it retires.
                if !na.contains(&(b as u32)) {
                    assert_eq!(fin[b], want_fin[b], "case {case} bucket {b}");
                }
            }
        }
    }

    #[test]
    fn buckets_retiring_in_every_round_match_naive() {
        // c = 4, digits 1..=8 only in window 0 (or shifted into window 1): bucket d − 1 of
        // that window holds exactly the points given for d. Buckets retire in rounds 1 to 6
        // (one huge bucket), next to empty and single ones; some cancel on the way.
        let c = 4;
        let fresh = random_terms(120, 31337).0;
        let mut fresh = fresh.into_iter();
        let mut take = |n: usize| -> Vec<AffinePoint> { (&mut fresh).take(n).collect() };
        let [p, q, x] = [take(1)[0], take(1)[0], take(1)[0]];
        // y with x + y = −(p + q): the bucket [p, q, x, y] cancels in round 2.
        let pq = JacobianPoint::from_affine(&p).add_affine_vartime(&q);
        let y = pq.add_affine_vartime(&x).neg().to_affine_vartime();
        let layouts: Vec<Vec<(u128, Vec<AffinePoint>)>> = vec![
            // All buckets of one point: no round at all.
            (1..=8).map(|d| (d, take(1))).collect(),
            vec![
                (1, take(1)),
                (2, take(2)),
                (3, take(3)),
                (5, take(5)),
                (6, take(9)),
                (7, take(40)),
                (8, take(4)),
            ],
            vec![
                // P + (−P) alone: retires at once with the identity.
                (1, vec![p, p.neg()]),
                // Both pairs cancel: kept with two identities, then empty.
                (2, vec![p, p.neg(), q, q.neg()]),
                // Cancels down to a single point.
                (3, vec![p, p.neg(), q, q.neg(), x]),
                // Cancels in round 2.
                (4, vec![p, q, x, y]),
                // One cancelled pair among others.
                (5, vec![q, q.neg(), p, x, y]),
                (6, vec![x, x, x]),
                (8, vec![p]),
            ],
        ];
        for layout in &layouts {
            for shift in [0u32, 4] {
                let mut pts = vec![];
                let mut ks = vec![];
                for (d, ps) in layout {
                    for pt in ps {
                        pts.push(*pt);
                        ks.push(d << shift);
                    }
                }
                let got = msm_vartime(&pts, &ks, c, &mut Scratch::default());
                assert!(
                    got.add_vartime(&naive(&pts, &ks).neg()).is_infinity(),
                    "shift {shift} layout {:?}",
                    layout
                        .iter()
                        .map(|(d, ps)| (d, ps.len()))
                        .collect::<Vec<_>>()
                );
            }
        }
    }

    #[test]
    fn drop_identities_keeps_order_and_bucket_bounds() {
        fn check<T: PoolPoint>() {
            let p = T::from_affine(&random_terms(1, 5).0[0]);
            let mut pool = vec![p; 8];
            pool[5] = T::IDENTITY;
            pool[6] = T::IDENTITY;
            // Index 1 is below `from` (an input copy): kept even though it is the identity.
            pool[1] = T::IDENTITY;
            let mut next = vec![5, 1, 6, 7, 4, 6];
            let mut start = vec![0, 2, 2, 4, 6];
            drop_identities(&pool, 4, &mut next, &mut start);
            assert_eq!(next[..3], [1, 7, 4]);
            assert_eq!(start, vec![0, 1, 1, 2, 3]);
        }
        check::<AffinePoint>();
        #[cfg(not(nostr_verify_field32))]
        check::<WordPoint>();
    }

    /// Steps 1–4 in each pool representation on each backend that can run here, whatever
    /// backend is selected. Inputs with identities, zero scalars, repeated points and negations,
    /// so that every exceptional route runs.
    #[test]
    fn both_pool_representations_match_naive() {
        fn sums<T: PoolPoint>(
            b: backend::Backend,
            pts: &[AffinePoint],
            ks: &[u128],
            c: usize,
            s: &mut Work,
            t: &mut Typed<T>,
        ) -> JacobianPoint {
            let mut out = Vec::new();
            window_sums_in(b, pts, ks, c, 0..windows(c), None, s, t, &mut out);
            horner(&out, c)
        }
        let mut work = Work::default();
        let mut aff = Typed::<AffinePoint>::default();
        #[cfg(not(nostr_verify_field32))]
        let mut words = Typed::<WordPoint>::default();
        for (c, n) in [(2usize, 9usize), (4, 40), (5, 130), (7, 300), (9, 700)] {
            let (mut pts, mut ks) = random_terms(n, 1000 + c as u64);
            pts[1] = AffinePoint::IDENTITY;
            ks[2] = 0;
            pts[3] = pts[0];
            ks[3] = ks[0];
            pts[4] = pts[0].neg();
            ks[4] = ks[0];
            pts[5] = pts[6];
            let want = naive(&pts, &ks);
            #[cfg(not(nostr_verify_field32))]
            for b in backend::Backend::available() {
                let got = sums(b, &pts, &ks, c, &mut work, &mut words);
                assert!(got.eq_vartime(&want), "word pool, {} c {c} n {n}", b.name());
            }
            for b in backend::Backend::available() {
                let got = sums(b, &pts, &ks, c, &mut work, &mut aff);
                assert!(
                    got.eq_vartime(&want),
                    "affine pool, {} c {c} n {n}",
                    b.name()
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
