//! The reusable buffers of Pippenger's method: [`Scratch`], split into the buffers that hold
//! no points ([`Work`]: digits, bucket indices, pairs) and the point pools, one per point
//! representation a backend chose ([`Typed`], behind [`Pools`]).

use super::reduce::ReduceBuf;
use crate::arithmetic::group::{AffinePoint, JacobianPoint};
use crate::backend::{self, PoolPoint};
use std::any::Any;

/// Reusable buffers for [`msm_vartime`](super::msm_vartime).
#[derive(Debug, Default)]
pub struct Scratch {
    /// The buffers that do not hold points.
    pub(super) work: Work,
    /// The point pools, one per representation a backend has asked for.
    pub(super) pools: Pools,
}

/// The buffers that hold points, one [`Typed`] per point type a backend chose
/// ([`backend::with_pool`]); normally only one is ever made.
#[derive(Default)]
pub(super) struct Pools(pub(super) Vec<Box<dyn Any + Send>>);

impl core::fmt::Debug for Pools {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Pools")
            .field("kinds", &self.0.len())
            .finish()
    }
}

impl Pools {
    /// The most points any of the pools holds (for tests that must span several blocks).
    #[cfg(test)]
    pub(super) fn largest(&mut self) -> usize {
        let a = self
            .typed::<crate::arithmetic::group::AffinePoint>()
            .pool
            .len();
        #[cfg(not(nostr_verify_field32))]
        let a = a.max(
            self.typed::<crate::arithmetic::words::WordPoint>()
                .pool
                .len(),
        );
        a
    }

    /// The buffers for points of type `P`, made on first use.
    pub(super) fn typed<P: PoolPoint>(&mut self) -> &mut Typed<P> {
        let i = match self.0.iter().position(|b| b.is::<Typed<P>>()) {
            Some(i) => i,
            None => {
                self.0.push(Box::new(Typed::<P>::default()));
                self.0.len() - 1
            }
        };
        match self.0[i].downcast_mut::<Typed<P>>() {
            Some(t) => t,
            None => unreachable!("the pool at {i} holds Typed<P>"),
        }
    }
}

/// The buffers of [`Scratch`] that hold points, in one representation `T`.
#[derive(Debug)]
pub(super) struct Typed<T> {
    /// Every point a bucket can hold, by index: per input point the point and its negation
    /// (index 2i, 2i + 1), then the sums of each accumulation round, appended, then the
    /// reduction's running and weighted sums. Only grows:
    /// slots past those written in the current call hold stale points and are never read.
    pub(super) pool: Vec<T>,
    /// The bucket reduction's lanes and working memory.
    pub(super) reduce: ReduceBuf<T>,
}

impl<T> Default for Typed<T> {
    fn default() -> Self {
        Typed {
            pool: Vec::new(),
            reduce: ReduceBuf::default(),
        }
    }
}

/// The buffers of [`Scratch`] that do not hold points.
#[derive(Debug, Default)]
pub(super) struct Work {
    /// Per (point, window) with a non-zero digit: `(bucket, signed index)`, window by window:
    /// window slot w's entries are `entries[w·N..][..win_len[w]]` for N points.
    pub(super) entries: Vec<(u32, u32)>,
    pub(super) win_len: Vec<u32>,
    /// Bucket start offsets into the current round's indices (len = buckets + 1).
    pub(super) start: Vec<u32>,
    pub(super) next_start: Vec<u32>,
    /// The current and the next round's active buckets (those that still pair up), as
    /// indices into the pool; `PAIR_PAD` slots longer than the last bucket's end.
    pub(super) cur: Vec<u32>,
    pub(super) next: Vec<u32>,
    /// The bucket numbers of the current and the next round's active buckets.
    pub(super) act: Vec<u32>,
    pub(super) next_act: Vec<u32>,
    /// Per bucket, once it is down to one point: that point's index into the pool, or
    /// [`NO_POINT`](super::NO_POINT) for an empty bucket.
    pub(super) fin: Vec<u32>,
    /// This round's additions: indices into the pool of the two points of each pair.
    pub(super) pair_idx: Vec<[u32; 2]>,
    /// A block's exceptional pairs: doublings (slot in the block, point) and cancellations
    /// (slot in the block).
    pub(super) dbl: Vec<(u32, JacobianPoint)>,
    pub(super) cancel: Vec<u32>,
    pub(super) dbl_jac: Vec<JacobianPoint>,
    pub(super) dbl_aff: Vec<AffinePoint>,
    /// The pair additions' working memory.
    pub(super) pairs: backend::PairScratch,
}
