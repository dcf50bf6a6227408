//! The data model of one batch: its keys, its prepared signatures, and the reusable buffers.

use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;
use crate::arithmetic::scalar::Scalar;
use crate::key_cache::CachedKey;
use crate::msm;

/// A key as used in one batch.
#[derive(Clone, Copy, Debug)]
pub(super) struct BatchKey {
    pub(super) pk: [u8; 32],
    /// `None` until lifted (cold keys), or when the key is not an x coordinate.
    pub(super) point: Option<CachedKey>,
    /// Whether the key failed parsing (x ≥ p) or lifting.
    pub(super) invalid: bool,
}

/// One signature that passed the pre-checks (or is waiting for its lift).
#[derive(Clone, Copy, Debug)]
pub(super) struct Prepared {
    /// Index into the caller's slice.
    pub(super) idx: u32,
    /// Index into the batch's keys.
    pub(super) key: u32,
    /// r < p and s < n (set with the lifts).
    pub(super) parsed: bool,
    /// `R` once lifted (x = r, even y).
    pub(super) r: AffinePoint,
    /// The weight `aᵢ`.
    pub(super) a: u128,
    /// `sᵢ` and `eᵢ`, set with the lifts; the equation multiplies them by `aᵢ` as it sums them
    /// (one reduction per sum, see [`WideSum`](crate::arithmetic::scalar::WideSum)).
    pub(super) s: Scalar,
    pub(super) e: Scalar,
}

/// Reusable per-batch buffers.
#[derive(Debug, Default)]
pub(super) struct Work {
    pub(super) order: Vec<(u128, u32)>,
    /// Per input index: `u32::MAX`, or the index of the identical signature it duplicates.
    pub(super) dup_of: Vec<u32>,
    pub(super) keys: Vec<BatchKey>,
    pub(super) prep: Vec<Prepared>,
    pub(super) xs: Vec<FieldElement>,
    pub(super) ys: Vec<FieldElement>,
    pub(super) lifted: Vec<bool>,
    pub(super) points: Vec<AffinePoint>,
    pub(super) scalars: Vec<u128>,
    pub(super) msm: msm::Scratch,
    /// Per key of the batch: its place in narrowing's secret order (see `narrow`).
    pub(super) key_rank: Vec<u128>,
}
