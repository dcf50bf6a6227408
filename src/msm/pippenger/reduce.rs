//! Step 4 of Pippenger's method: every window's buckets summed by the running-sum trick,
//! batch-affine (the running sums of all windows advancing together, one shared inversion
//! per round), in chunks that run as parallel lanes.

use super::steps::{grow_with, scatter_doublings};
use crate::arithmetic::group::{AffinePoint, JacobianPoint};
use crate::arithmetic::kernel::KernelJacobian;
use crate::backend::{self, PoolPoint};

/// The chunk length of the batch-affine bucket reduction for `slots` windows of `half`
/// buckets: the power of two nearest `√(slots·half/2)`, at most `half`.
///
/// Each window's buckets are cut into `half / len` chunks that run their own running sums in
/// parallel lanes: `len + 1` rounds of additions, each with one shared inversion, then about three
/// Jacobian additions per chunk to join the chunks. The square root balances the two.
pub fn chunk_len(slots: usize, half: usize) -> usize {
    let target = ((slots * half) as f64 / 2.0).sqrt();
    let mut len = 1usize;
    while len < half && (2 * len) as f64 <= target * core::f64::consts::SQRT_2 {
        len *= 2;
    }
    len
}

/// Working memory of the batch-affine bucket reduction.
#[derive(Debug)]
pub(crate) struct ReduceBuf<T> {
    /// This step's additions: pool indices of the accumulator and the addend.
    pub(super) idx: Vec<[u32; 2]>,
    pub(super) out: Vec<T>,
    /// Running sums that cancel this step (pool indices), cleared after the additions that
    /// read them.
    pub(super) cancel: Vec<u32>,
    /// Doublings of this step: (pool index, the doubled point).
    pub(super) dbl: Vec<(u32, JacobianPoint)>,
    pub(super) dbl_jac: Vec<JacobianPoint>,
    pub(super) dbl_aff: Vec<AffinePoint>,
    pub(super) pairs: backend::PairScratch,
}

impl<T> Default for ReduceBuf<T> {
    fn default() -> Self {
        ReduceBuf {
            idx: Vec::new(),
            out: Vec::new(),
            cancel: Vec::new(),
            dbl: Vec::new(),
            dbl_jac: Vec::new(),
            dbl_aff: Vec::new(),
            pairs: backend::PairScratch::default(),
        }
    }
}

impl<T: PoolPoint> ReduceBuf<T> {
    /// `S_l += R_l` and `R_l += next(l)` for every lane l (lane l's weighted sum at pool slot
    /// `sum0 + l`, its running sum at `run0 + l`, `next(l)` a pool index), with one shared
    /// inversion: both read the running sum from before the step, so they are independent
    /// (absent addends leave a lane alone). The additions go to the backend as index pairs
    /// into the pool, no point copied on the way in. The cases the shared inversion cannot
    /// take are routed as in the accumulation: an identity on either side is a copy, the same
    /// point twice a doubling, P + (−P) the identity.
    pub(super) fn step(
        &mut self,
        b: backend::Backend,
        pool: &mut [T],
        sum0: usize,
        run0: usize,
        lanes: usize,
        next: impl Fn(usize) -> Option<u32>,
    ) {
        self.idx.clear();
        self.dbl.clear();
        self.cancel.clear();
        // The sums first: they read each running sum before its own update below. The
        // running sums change only after the additions (a cancellation is deferred), since
        // the sums' queued additions read them then.
        for l in 0..lanes {
            self.route(pool, sum0 + l, run0 + l);
        }
        for l in 0..lanes {
            if let Some(q) = next(l) {
                self.route(pool, run0 + l, q as usize);
            }
        }
        if !self.idx.is_empty() {
            self.out.clear();
            self.out.resize(self.idx.len(), T::IDENTITY);
            T::add_pairs(b, pool, &self.idx, &mut self.out, &mut self.pairs);
            for (p, pq) in self.out.iter().zip(&self.idx) {
                pool[pq[0] as usize] = *p;
            }
        }
        for &t in &self.cancel {
            pool[t as usize] = T::IDENTITY;
        }
        scatter_doublings(&self.dbl, &mut self.dbl_jac, &mut self.dbl_aff, |t, p| {
            pool[t as usize] = T::from_affine(&p);
        });
    }

    /// Routes `pool[acc] += pool[q]`: done at once when the shared inversion cannot take it
    /// (a cancellation deferred to after the additions), else queued as an index pair.
    pub(super) fn route(&mut self, pool: &mut [T], acc: usize, q: usize) {
        let (a, b) = (&pool[acc], &pool[q]);
        if b.is_identity() {
            return;
        }
        if a.is_identity() {
            pool[acc] = pool[q];
        } else if a.same_x(b) {
            if a.same_y(b) {
                self.dbl.push((
                    acc as u32,
                    JacobianPoint::from_affine(&a.to_affine()).double_vartime(),
                ));
            } else {
                self.cancel.push(acc as u32);
            }
        } else {
            self.idx.push([acc as u32, q as u32]);
        }
    }
}

/// Step 4, batch-affine: appends `S_w = Σ_j (j+1)·B_w,j` for `w in 0..slots` to `out`, where
/// `bucket(w·half + j)` is the pool index of `B_w,j` (`None` when empty; an identity is
/// skipped). The lanes' sums live in the pool from slot `from` on (grown as needed).
///
/// Every window's buckets are cut into chunks of `len` (a power of two dividing `half`); lane
/// (w, t) runs the running-sum trick over buckets `t·len .. (t+1)·len` of window w, highest
/// first: `R += B; S += R`, all lanes together, each `S += R` sharing one inversion with the
/// next `R += B` (both read the same R), so `len + 1` inversions in all. Then per
/// window, in Jacobian coordinates, `S_w = Σ_t S_t + len·Σ_t t·R_t` (the second sum by the
/// running-sum trick over the chunks, then log₂(len) doublings).
/// Inlined into the pool job, so that its joins run in the arm's build (`Backend::with_pool`).
#[allow(clippy::too_many_arguments)]
#[cfg_attr(not(nostr_verify_field32), inline(always))]
pub(super) fn reduce_batch_affine<T: PoolPoint>(
    slots: usize,
    half: usize,
    len: usize,
    pool: &mut Vec<T>,
    from: usize,
    bucket: impl Fn(usize) -> Option<u32>,
    buf: &mut ReduceBuf<T>,
    b: backend::Backend,
    out: &mut Vec<JacobianPoint>,
) {
    debug_assert!(len.is_power_of_two() && half % len == 0);
    let chunks = half / len;
    let lanes = slots * chunks;
    // Lane l's weighted sum at `from + l`, its running sum at `from + lanes + l`.
    let (sum0, run0) = (from, from + lanes);
    grow_with(pool, from + 2 * lanes, T::IDENTITY);
    pool[from..from + 2 * lanes].fill(T::IDENTITY);
    // Lane l = w·chunks + t covers buckets w·half + t·len + (0..len).
    // Step i adds bucket i to the running sum and the running sum of bucket i + 1 to the
    // weighted sum; the last step only the latter.
    for i in (0..len).rev() {
        buf.step(b, pool, sum0, run0, lanes, |l| bucket(l * len + i));
    }
    buf.step(b, pool, sum0, run0, lanes, |_| None);
    let doublings = len.trailing_zeros();
    for w in 0..slots {
        let lanes = w * chunks..(w + 1) * chunks;
        let (running, sum) = (
            &pool[run0 + lanes.start..run0 + lanes.end],
            &pool[sum0 + lanes.start..sum0 + lanes.end],
        );
        // Σ_t t·R_t, in the kernels' representation ([`KernelJacobian`]).
        let mut run = KernelJacobian::IDENTITY;
        let mut weighted = KernelJacobian::IDENTITY;
        for r in running[1..].iter().rev() {
            if !r.is_identity() {
                run = run.add_affine_vartime(&r.to_affine());
            }
            if !run.is_infinity() {
                weighted = weighted.add_vartime(&run);
            }
        }
        if !weighted.is_infinity() {
            for _ in 0..doublings {
                weighted = weighted.double_vartime();
            }
        }
        for s in sum {
            if !s.is_identity() {
                weighted = weighted.add_affine_vartime(&s.to_affine());
            }
        }
        out.push(weighted.to_jacobian());
    }
}

/// The serial twin of [`reduce_batch_affine`]: the running-sum trick per window in Jacobian
/// coordinates, one bucket at a time.
#[cfg(test)]
pub(super) fn reduce_serial<'p>(
    slots: usize,
    half: usize,
    bucket: impl Fn(usize) -> Option<&'p AffinePoint>,
    out: &mut Vec<JacobianPoint>,
) {
    for w in 0..slots {
        let mut running = JacobianPoint::IDENTITY;
        let mut sum = JacobianPoint::IDENTITY;
        for j in (0..half).rev() {
            if let Some(b) = bucket(w * half + j) {
                running = running.add_affine_vartime(b);
            }
            if !running.is_infinity() {
                sum = sum.add_vartime(&running);
            }
        }
        out.push(sum);
    }
}
