//! Small steps the accumulation (`pippenger.rs`) and the bucket reduction (`reduce.rs`) both
//! take: growing buffers, dropping cancelled pairs from the buckets, and converting a round's
//! doublings.

use crate::arithmetic::group::{AffinePoint, JacobianPoint};
use crate::backend::PoolPoint;

/// Grows `v` to at least `n` elements (new ones default); never shrinks it.
pub(super) fn grow<T: Default + Clone>(v: &mut Vec<T>, n: usize) {
    grow_with(v, n, T::default());
}

/// Grows `v` to at least `n` elements, new ones `fill`; never shrinks it.
pub(super) fn grow_with<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) {
    if v.len() < n {
        v.resize(n, fill);
    }
}

/// Removes from the buckets `(next, next_start)` every index `≥ from` whose pool point is the
/// identity (a pair that cancelled), keeping the order of the others. The slots of `next` past
/// the last bucket's new end keep what they held.
pub(super) fn drop_identities<T: PoolPoint>(
    pool: &[T],
    from: usize,
    next: &mut [u32],
    next_start: &mut [u32],
) {
    let mut kept = 0usize;
    let mut begin = 0usize;
    for j in 0..next_start.len() - 1 {
        let end = next_start[j + 1] as usize;
        next_start[j] = kept as u32;
        for t in begin..end {
            let idx = next[t];
            if (idx as usize) < from || !pool[idx as usize].is_identity() {
                next[kept] = idx;
                kept += 1;
            }
        }
        begin = end;
    }
    if let Some(last) = next_start.last_mut() {
        *last = kept as u32;
    }
}

/// The doublings of a round (equal points paired with themselves, computed in Jacobian
/// coordinates), converted with one shared inversion and handed to `put` with their slots.
pub(super) fn scatter_doublings(
    dbl: &[(u32, JacobianPoint)],
    jac: &mut Vec<JacobianPoint>,
    aff: &mut Vec<AffinePoint>,
    mut put: impl FnMut(u32, AffinePoint),
) {
    if dbl.is_empty() {
        return;
    }
    jac.clear();
    jac.extend(dbl.iter().map(|d| d.1));
    JacobianPoint::batch_to_affine_vartime(jac, aff);
    for (p, d) in aff.iter().zip(dbl) {
        put(d.0, *p);
    }
}
