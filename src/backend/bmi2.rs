//! The portable arm compiled a second time for x86-64 CPUs with BMI2 and ADX.
//!
//! The portable kernels multiply 64-bit words into 128-bit products. Built for the baseline
//! x86-64 instruction set, each product is a `mul`, which writes the fixed registers
//! `rdx:rax` and the flags, so the compiler spends about as many `mov`s as multiplications
//! shuffling operands around the carry chains. BMI2's `mulx` takes any registers and leaves
//! the flags alone. Every x86-64 CPU since about 2014 (Intel Broadwell, AMD Zen) has BMI2 and
//! ADX, and users build without `-C target-cpu`, so the crate picks this build at run time.
//!
//! The code is the portable arm's own: the functions below are
//! `#[target_feature(enable = "bmi2,adx")]` wrappers around its `#[inline(always)]` bodies, so
//! the compiler emits a second copy of the same arithmetic with those instructions allowed.
//! The values are the same limb for limb (`tests/backend.rs` compares this build, the
//! baseline build and the IFMA arm on every machine that has them).
//!
//! Calling a `#[target_feature]` function from code without those features needs `unsafe`.
//! That happens only in the entry points below, each reachable only with a [`Detected`]
//! token, which exists only after `is_x86_feature_detected!` confirmed both features on the
//! running CPU. The one other `unsafe` block is the SSE cache prefetch (`_mm_prefetch`, an
//! intrinsic that was `unsafe` before Rust 1.87) with which the gathering kernels ask for the
//! points of a later pair: a hint that reads nothing and cannot fault. No other `unsafe` is
//! here.
#![allow(unsafe_code)]

use super::job::ArmJob;
use super::portable::{self, PairBuf};
use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;
#[cfg(not(nostr_verify_field32))]
use crate::arithmetic::words::WordPoint;

/// Proof that the running CPU has `bmi2` and `adx`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Detected(());

impl Detected {
    /// Runs the CPU feature detection; `Some` iff both features are present.
    pub(crate) fn detect() -> Option<Self> {
        let ok = std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("adx");
        ok.then_some(Detected(()))
    }
}

#[target_feature(enable = "bmi2,adx")]
fn lift(xs: &[FieldElement], ys: &mut [FieldElement], ok: &mut [bool]) {
    portable::lift_x_many(xs, ys, ok);
}

#[target_feature(enable = "bmi2,adx")]
#[cfg(any(test, feature = "internals"))]
fn add(
    a: &[AffinePoint],
    b: &[AffinePoint],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    portable::add_affine_pairs_vartime(a, b, out, buf, equal_x);
}

#[target_feature(enable = "bmi2,adx")]
fn add_gather(
    src: &[AffinePoint],
    pairs: &[[u32; 2]],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    portable::add_affine_pairs_gather_vartime(src, pairs, out, buf, equal_x, prefetch);
}

#[target_feature(enable = "bmi2,adx")]
#[cfg(not(nostr_verify_field32))]
fn add_gather_words(
    src: &[WordPoint],
    pairs: &[[u32; 2]],
    out: &mut [WordPoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    portable::add_word_pairs_gather_vartime(src, pairs, out, buf, equal_x, prefetch);
}

#[target_feature(enable = "bmi2,adx")]
fn run<J: ArmJob>(job: J) -> J::Output {
    job.run()
}

/// Asks the CPU to start loading `p`'s cache lines (a hint: no effect on any value).
#[inline(always)]
fn prefetch<T>(p: &T) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    let ptr = (p as *const T).cast::<i8>();
    // SAFETY: a prefetch is a hint that never faults and changes no value; SSE is part of
    // the x86-64 baseline. The second address is inside `p` (its last byte), for a point that
    // straddles two cache lines.
    #[allow(unused_unsafe)]
    unsafe {
        _mm_prefetch::<_MM_HINT_T0>(ptr);
        _mm_prefetch::<_MM_HINT_T0>(ptr.wrapping_add(core::mem::size_of::<T>().saturating_sub(1)));
    }
}

/// [`crate::backend::lift_x_many_vartime`] on the portable arm's BMI2/ADX build (same
/// contract; lengths already checked).
pub(crate) fn lift_x_many_vartime(
    _cpu: Detected,
    xs: &[FieldElement],
    ys: &mut [FieldElement],
    ok: &mut [bool],
) {
    // SAFETY: a `Detected` value exists only if bmi2 and adx were detected on this CPU (see
    // `Detected::detect`), which are exactly the features `lift` enables.
    unsafe { lift(xs, ys, ok) }
}

/// [`crate::backend::add_affine_pairs_vartime`] on the portable arm's BMI2/ADX build (same
/// contract; lengths already checked).
#[cfg(any(test, feature = "internals"))]
pub(crate) fn add_affine_pairs_vartime(
    _cpu: Detected,
    a: &[AffinePoint],
    b: &[AffinePoint],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    // SAFETY: a `Detected` value exists only if bmi2 and adx were detected on this CPU (see
    // `Detected::detect`), which are exactly the features `add` enables.
    unsafe { add(a, b, out, buf, equal_x) }
}

/// [`crate::backend::add_affine_pairs_gather_vartime`] on the portable arm's BMI2/ADX build
/// (same contract; lengths already checked, each index when its pair is read).
pub(crate) fn add_affine_pairs_gather_vartime(
    _cpu: Detected,
    src: &[AffinePoint],
    pairs: &[[u32; 2]],
    out: &mut [AffinePoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    // SAFETY: a `Detected` value exists only if bmi2 and adx were detected on this CPU (see
    // `Detected::detect`), which are exactly the features `add_gather` enables.
    unsafe { add_gather(src, pairs, out, buf, equal_x) }
}

/// [`crate::backend::Backend::add_word_pairs_gather_vartime`] on the portable arm's BMI2/ADX
/// build (same contract; lengths already checked, each index when its pair is read).
#[cfg(not(nostr_verify_field32))]
pub(crate) fn add_word_pairs_gather_vartime(
    _cpu: Detected,
    src: &[WordPoint],
    pairs: &[[u32; 2]],
    out: &mut [WordPoint],
    buf: &mut PairBuf,
    equal_x: &mut Vec<u32>,
) {
    // SAFETY: a `Detected` value exists only if bmi2 and adx were detected on this CPU (see
    // `Detected::detect`), which are exactly the features `add_gather_words` enables.
    unsafe { add_gather_words(src, pairs, out, buf, equal_x) }
}

/// [`crate::backend::Backend::run_job`] on the portable arm's BMI2/ADX build: the job's
/// `#[inline(always)]` body compiled with those features.
pub(crate) fn run_job<J: ArmJob>(_cpu: Detected, job: J) -> J::Output {
    // SAFETY: a `Detected` value exists only if bmi2 and adx were detected on this CPU (see
    // `Detected::detect`), which are exactly the features `run` enables.
    unsafe { run(job) }
}
