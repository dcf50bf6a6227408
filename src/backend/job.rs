//! The door for whole computations: a job that a backend runs in its arm's build (a leaf, so
//! that the arms can name it without importing the door).

/// A whole computation run on one arm's build by
/// [`Backend::run_job`](super::Backend::run_job) (Strauss's method after its recoding:
/// `msm::straus`), so that the algorithm lives in one place above the backend and the backend
/// only chooses the build it runs in.
pub trait ArmJob {
    /// What the job returns.
    type Output;
    /// The work; `#[inline(always)]`, as everything it calls (see
    /// [`super::Backend::run_job`]).
    fn run(self) -> Self::Output;
}
