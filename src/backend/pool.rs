//! The door between the MSM's point pool and the backends: each backend chooses the point
//! representation its pair-addition kernels read and write, and runs the MSM's job on it.
//! Nothing above this module asks which arm runs.

use super::job::ArmJob;
use super::{selected, Backend, PairScratch};
use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;
#[cfg(not(nostr_verify_field32))]
use crate::arithmetic::words::WordPoint;

/// Work generic over the pool's point type, run by [`Backend::with_pool`] with the type the
/// backend chose.
pub trait PoolJob {
    /// What the job returns.
    type Output;
    /// Runs the job with points of type `P`, whose kernels run on `backend`.
    fn run<P: PoolPoint>(self, backend: Backend) -> Self::Output;
}

impl Backend {
    /// Runs `job` with this backend's pool point type: [`AffinePoint`] on the IFMA arm (its
    /// kernels gather 52-bit limbs), [`WordPoint`] on the portable arms; under
    /// `cfg(nostr_verify_field32)` [`AffinePoint`] (10×26-bit limbs, what the portable kernels
    /// compute in there) on every arm. The job runs whole in the arm's build
    /// ([`Backend::run_job`]): what it inlines (Pippenger's bucket reduction and its joins)
    /// gets the portable arm's BMI2/ADX build where the CPU has it.
    pub fn with_pool<J: PoolJob>(self, job: J) -> J::Output {
        #[cfg(not(nostr_verify_field32))]
        if self.pool_in_words() {
            return self.run_job(InPool::<J, WordPoint>::new(job, self));
        }
        self.run_job(InPool::<J, AffinePoint>::new(job, self))
    }
}

/// A [`PoolJob`] with its point type chosen, as an [`ArmJob`].
struct InPool<J, P> {
    job: J,
    backend: Backend,
    point: core::marker::PhantomData<P>,
}

impl<J, P> InPool<J, P> {
    fn new(job: J, backend: Backend) -> Self {
        Self {
            job,
            backend,
            point: core::marker::PhantomData,
        }
    }
}

impl<J: PoolJob, P: PoolPoint> ArmJob for InPool<J, P> {
    type Output = J::Output;

    #[inline(always)]
    fn run(self) -> J::Output {
        self.job.run::<P>(self.backend)
    }
}

/// [`Backend::with_pool`] on the selected backend.
pub fn with_pool<J: PoolJob>(job: J) -> J::Output {
    selected().with_pool(job)
}

/// A point as a backend's pair-addition kernels read and write it, and what Pippenger needs
/// of it besides. Each backend picks one ([`Backend::with_pool`]): [`AffinePoint`] (5×52-bit
/// limbs) where the kernels read limbs, [`WordPoint`] (4×64-bit words, no conversion) where
/// they read words.
pub trait PoolPoint: Copy + core::fmt::Debug + Send + 'static {
    /// The point at infinity.
    const IDENTITY: Self;
    /// From an affine point with normalized coordinates.
    fn from_affine(p: &AffinePoint) -> Self;
    /// To an affine point with normalized coordinates.
    fn to_affine(&self) -> AffinePoint;
    /// −p.
    fn neg(&self) -> Self;
    /// Whether this is the identity.
    fn is_identity(&self) -> bool;
    /// Equal x-coordinates (neither point the identity).
    fn same_x(&self, other: &Self) -> bool;
    /// Equal y-coordinates (neither point the identity).
    fn same_y(&self, other: &Self) -> bool;
    /// `out[k] = src[pairs[k][0]] + src[pairs[k][1]]` on `backend`, with the equal-x report
    /// in `scratch` ([`Backend::add_affine_pairs_gather_vartime`]).
    fn add_pairs(
        backend: Backend,
        src: &[Self],
        pairs: &[[u32; 2]],
        out: &mut [Self],
        scratch: &mut PairScratch,
    );
}

impl PoolPoint for AffinePoint {
    const IDENTITY: Self = AffinePoint::IDENTITY;
    #[inline(always)]
    fn from_affine(p: &AffinePoint) -> Self {
        *p
    }
    #[inline(always)]
    fn to_affine(&self) -> AffinePoint {
        *self
    }
    #[inline(always)]
    fn neg(&self) -> Self {
        AffinePoint::neg(self)
    }
    #[inline(always)]
    fn is_identity(&self) -> bool {
        self.infinity
    }
    #[inline(always)]
    fn same_x(&self, other: &Self) -> bool {
        same_limbs(&self.x, &other.x)
    }
    #[inline(always)]
    fn same_y(&self, other: &Self) -> bool {
        same_limbs(&self.y, &other.y)
    }
    #[inline(always)]
    fn add_pairs(
        backend: Backend,
        src: &[Self],
        pairs: &[[u32; 2]],
        out: &mut [Self],
        scratch: &mut PairScratch,
    ) {
        backend.add_affine_pairs_gather_vartime(src, pairs, out, scratch);
    }
}

#[cfg(not(nostr_verify_field32))]
impl PoolPoint for WordPoint {
    const IDENTITY: Self = WordPoint::IDENTITY;
    #[inline(always)]
    fn from_affine(p: &AffinePoint) -> Self {
        WordPoint::from_affine(p)
    }
    #[inline(always)]
    fn to_affine(&self) -> AffinePoint {
        WordPoint::to_affine(self)
    }
    #[inline(always)]
    fn neg(&self) -> Self {
        WordPoint::neg(self)
    }
    #[inline(always)]
    fn is_identity(&self) -> bool {
        WordPoint::is_identity(self)
    }
    #[inline(always)]
    fn same_x(&self, other: &Self) -> bool {
        WordPoint::same_x(self, other)
    }
    #[inline(always)]
    fn same_y(&self, other: &Self) -> bool {
        WordPoint::same_y(self, other)
    }
    #[inline(always)]
    fn add_pairs(
        backend: Backend,
        src: &[Self],
        pairs: &[[u32; 2]],
        out: &mut [Self],
        scratch: &mut PairScratch,
    ) {
        backend.add_word_pairs_gather_vartime(src, pairs, out, scratch);
    }
}

/// Equality of two normalized field elements, limb by limb (the lowest limb almost always
/// decides; an inlined compare instead of a `memcmp` call in the hot loop).
#[inline(always)]
fn same_limbs(a: &FieldElement, b: &FieldElement) -> bool {
    let (a, b) = (a.raw_limbs(), b.raw_limbs());
    a.iter().zip(&b).fold(0, |acc, (x, y)| acc | (x ^ y)) == 0
}
