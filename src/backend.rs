//! The single dispatch point for SIMD backends.
//!
//! Two operations dominate a batch verification once the scalar work is done: lifting every
//! nonce R (and every cold key) with a square root, and the affine bucket additions of
//! Pippenger's method. Both are many independent instances of the same field arithmetic, so
//! they run in SIMD lanes where the CPU allows it. This module picks the implementation:
//!
//! | [`Backend`] | when | what |
//! |---|---|---|
//! | [`Backend::Ifma`] | x86_64, rustc ≥ 1.89, CPU with `avx512f` + `avx512ifma` + `avx512vl` | radix 2^52, 8 field elements per AVX-512 vector (`vpmadd52{l,h}uq`) |
//! | [`Backend::Portable`] | everywhere | scalar code in 4×64-bit words; on x86-64 CPUs with BMI2 and ADX, the same code compiled for them (`mulx`) |
//! | [`Backend::PortableBaseline`] | everywhere | the portable arm's baseline build only (what non-x86 targets run) |
//!
//! Detection runs once, on first use ([`selected`]). Setting the environment variable
//! `NOSTR_VERIFY_BACKEND=portable` (or `portable-baseline`) before that forces that arm (CI
//! runs the whole suite once with `portable`). Nothing outside `backend/` knows SIMD or CPU
//! features exist, and the CPU-feature modules `backend/ifma` and `backend/bmi2` are the only
//! ones in the crate allowed `unsafe`.
//!
//! Both arms compute exactly the same values (outputs are normalized, so they are equal limb
//! for limb); `tests/backend.rs` checks that on every machine that has IFMA.
//!
//! # Variable time
//!
//! Everything here is variable time and meant for public data only.
//!
//! The rest of this page is `docs/backend.md`: usage, measured figures, how the IFMA arm
//! works, its tests, and the AVX2 measurement.
//!
#![doc = include_str!("../docs/backend.md")]

// Compiled only under `cfg(nostr_verify_ifma)`, which build.rs sets for rustc >= 1.89 (the
// release that stabilized the AVX-512 intrinsics); the crate's MSRV (1.85) holds elsewhere.
#[cfg(target_arch = "x86_64")]
mod bmi2;
#[cfg(nostr_verify_ifma)]
#[clippy::msrv = "1.89"]
mod ifma;
mod job;
mod on_selected;
mod pool;
mod portable;
pub mod sha;
mod sha_core;
#[cfg(nostr_verify_ifma)]
#[clippy::msrv = "1.89"]
mod sha_lanes;
#[cfg(nostr_verify_sha_lanes)]
mod sha_refill;
#[cfg(all(target_arch = "wasm32", nostr_verify_sha_lanes))]
mod sha_simd128;
mod tuning;

pub use self::job::ArmJob;
pub use self::on_selected::lift_x_many_vartime;
#[cfg(any(test, feature = "internals"))]
pub use self::on_selected::{
    add_affine_pairs_gather_vartime, add_affine_pairs_in_vartime, add_affine_pairs_vartime,
};
pub use self::pool::{with_pool, PoolJob, PoolPoint};
pub(crate) use self::portable::{add_pairs, add_steps, PairBuf};
pub use self::tuning::{msm_tuning, MsmTuning, LARGE_WINDOWS, MAX_WINDOW};

use crate::arithmetic::field::FieldElement;
use crate::arithmetic::group::AffinePoint;
#[cfg(not(nostr_verify_field32))]
use crate::arithmetic::words::WordPoint;
use std::sync::atomic::{AtomicU8, Ordering};
#[cfg(nostr_verify_ifma)]
use std::sync::OnceLock;

/// An implementation of the lane-parallel operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Scalar code in 4×64-bit words; available everywhere. On x86-64 CPUs with BMI2 and ADX
    /// (every one since about 2014) it runs a second build of the same code that may use
    /// `mulx`, picked at run time; elsewhere it is [`Backend::PortableBaseline`].
    Portable,
    /// The portable arm's baseline build, even where [`Backend::Portable`] would use BMI2
    /// and ADX: what a CPU without them, or another architecture, runs. For tests and
    /// benchmarks.
    PortableBaseline,
    /// AVX-512 IFMA: 8 field elements per vector, radix 2^52 (x86_64 with `avx512f`,
    /// `avx512ifma` and `avx512vl`, built with rustc ≥ 1.89).
    Ifma,
}

/// The BMI2/ADX detection result, computed once.
#[cfg(target_arch = "x86_64")]
fn bmi2_cpu() -> Option<bmi2::Detected> {
    static CPU: std::sync::OnceLock<Option<bmi2::Detected>> = std::sync::OnceLock::new();
    *CPU.get_or_init(bmi2::Detected::detect)
}

/// The IFMA detection result, computed once.
#[cfg(nostr_verify_ifma)]
fn ifma_cpu() -> Option<ifma::Detected> {
    static CPU: OnceLock<Option<ifma::Detected>> = OnceLock::new();
    *CPU.get_or_init(ifma::Detected::detect)
}

/// The backend the crate uses: detected once, on first call.
///
/// [`Backend::Ifma`] when this build and this CPU support it, unless the environment
/// variable `NOSTR_VERIFY_BACKEND` is `portable` or `portable-baseline` (read once, at the
/// first call), which forces [`Backend::Portable`] or [`Backend::PortableBaseline`]. Any other
/// value (`auto`, `ifma`, unset) means automatic choice. [`set_selected`] overrides the
/// choice later.
pub fn selected() -> Backend {
    match SELECTED.load(Ordering::Relaxed) {
        PORTABLE => Backend::Portable,
        BASELINE => Backend::PortableBaseline,
        IFMA => Backend::Ifma,
        _ => {
            let var = std::env::var("NOSTR_VERIFY_BACKEND").unwrap_or_default();
            let var = var.trim();
            let b = if var.eq_ignore_ascii_case("portable") {
                Backend::Portable
            } else if var.eq_ignore_ascii_case("portable-baseline") {
                Backend::PortableBaseline
            } else if Backend::Ifma.is_available() {
                Backend::Ifma
            } else {
                Backend::Portable
            };
            // A concurrent first call or `set_selected` may have won: keep its choice.
            let _ = SELECTED.compare_exchange(UNSET, code(b), Ordering::Relaxed, Ordering::Relaxed);
            selected()
        }
    }
}

/// Makes `backend` the one [`selected`] returns from now on, process-wide (or
/// [`Backend::Portable`] if `backend` is not [available](Backend::is_available) here), and
/// returns the backend actually selected.
///
/// Meant for benchmarks that report every backend in one run, and for tests. Every backend
/// computes the same values, so switching never changes a result, only the speed.
#[cfg(any(test, feature = "internals"))]
pub fn set_selected(backend: Backend) -> Backend {
    let b = if backend.is_available() {
        backend
    } else {
        Backend::Portable
    };
    SELECTED.store(code(b), Ordering::Relaxed);
    b
}

const UNSET: u8 = 0;
const PORTABLE: u8 = 1;
const IFMA: u8 = 2;
const BASELINE: u8 = 3;
static SELECTED: AtomicU8 = AtomicU8::new(UNSET);

fn code(b: Backend) -> u8 {
    match b {
        Backend::Portable => PORTABLE,
        Backend::PortableBaseline => BASELINE,
        Backend::Ifma => IFMA,
    }
}

impl Backend {
    /// Every backend this build knows, in order of preference (fastest first).
    #[cfg(any(test, feature = "internals"))]
    pub const ALL: [Backend; 3] = [Backend::Ifma, Backend::Portable, Backend::PortableBaseline];

    /// Short lowercase name (`"ifma"`, `"portable"`, `"portable-baseline"`), as accepted by
    /// `NOSTR_VERIFY_BACKEND`.
    #[cfg(any(test, feature = "internals"))]
    pub fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::PortableBaseline => "portable-baseline",
            Backend::Ifma => "ifma",
        }
    }

    /// Whether this backend can run here (this build and this CPU). Ignores
    /// `NOSTR_VERIFY_BACKEND`: tests and benchmarks use it to run every arm.
    pub fn is_available(self) -> bool {
        match self {
            Backend::Portable | Backend::PortableBaseline => true,
            #[cfg(nostr_verify_ifma)]
            Backend::Ifma => ifma_cpu().is_some(),
            #[cfg(not(nostr_verify_ifma))]
            Backend::Ifma => false,
        }
    }

    /// The backends that can run here, fastest first (always ends with [`Backend::Portable`]
    /// and [`Backend::PortableBaseline`]).
    #[cfg(any(test, feature = "internals"))]
    pub fn available() -> Vec<Backend> {
        Self::ALL.into_iter().filter(|b| b.is_available()).collect()
    }

    /// [`lift_x_many_vartime`] on this backend (the portable arm if this one is not
    /// [available](Backend::is_available) here).
    ///
    /// # Panics
    ///
    /// If the three slices have different lengths.
    ///
    /// # Variable time
    ///
    /// Branches on the inputs; public data only.
    pub fn lift_x_many_vartime(
        self,
        xs: &[FieldElement],
        ys: &mut [FieldElement],
        ok: &mut [bool],
    ) {
        assert!(
            xs.len() == ys.len() && xs.len() == ok.len(),
            "lift_x_many_vartime: {} xs, {} ys, {} oks",
            xs.len(),
            ys.len(),
            ok.len()
        );
        match self.arm() {
            #[cfg(nostr_verify_ifma)]
            Arm::Ifma(cpu) => ifma::lift_x_many_vartime(cpu, xs, ys, ok),
            #[cfg(target_arch = "x86_64")]
            Arm::Bmi2(cpu) => bmi2::lift_x_many_vartime(cpu, xs, ys, ok),
            Arm::Baseline => portable::lift_x_many_vartime(xs, ys, ok),
        }
    }

    /// [`add_affine_pairs_vartime`] on this backend (the portable arm if this one is not
    /// [available](Backend::is_available) here).
    ///
    /// # Panics
    ///
    /// If the three slices have different lengths.
    ///
    /// # Variable time
    ///
    /// Branches on the inputs; public data only.
    #[cfg(any(test, feature = "internals"))]
    pub fn add_affine_pairs_vartime(
        self,
        a: &[AffinePoint],
        b: &[AffinePoint],
        out: &mut [AffinePoint],
    ) {
        self.add_affine_pairs_in_vartime(a, b, out, &mut PairScratch::default());
    }

    /// [`Backend::add_affine_pairs_vartime`] with the caller's working memory, for callers
    /// that add pairs again and again (Pippenger's rounds).
    ///
    /// # Panics
    ///
    /// If the three slices have different lengths.
    ///
    /// # Variable time
    ///
    /// Branches on the inputs; public data only.
    #[cfg(any(test, feature = "internals"))]
    pub fn add_affine_pairs_in_vartime(
        self,
        a: &[AffinePoint],
        b: &[AffinePoint],
        out: &mut [AffinePoint],
        scratch: &mut PairScratch,
    ) {
        assert!(
            a.len() == b.len() && a.len() == out.len(),
            "add_affine_pairs_vartime: {} a, {} b, {} out",
            a.len(),
            b.len(),
            out.len()
        );
        let equal_x = &mut scratch.equal_x;
        match self.arm() {
            #[cfg(nostr_verify_ifma)]
            Arm::Ifma(cpu) => {
                ifma::add_affine_pairs_vartime(cpu, a, b, out, &mut scratch.ifma, equal_x);
            }
            #[cfg(target_arch = "x86_64")]
            Arm::Bmi2(cpu) => {
                bmi2::add_affine_pairs_vartime(cpu, a, b, out, &mut scratch.portable, equal_x);
            }
            Arm::Baseline => {
                portable::add_affine_pairs_vartime(a, b, out, &mut scratch.portable, equal_x);
            }
        }
    }

    /// [`add_affine_pairs_gather_vartime`] on this backend (the portable arm if this one is not
    /// [available](Backend::is_available) here).
    ///
    /// # Panics
    ///
    /// If `pairs` and `out` differ in length (checked before any work) or an index is out of
    /// range for `src` (checked before that pair is read; `out` may be partly written).
    ///
    /// # Variable time
    ///
    /// Branches on the inputs; public data only.
    pub fn add_affine_pairs_gather_vartime(
        self,
        src: &[AffinePoint],
        pairs: &[[u32; 2]],
        out: &mut [AffinePoint],
        scratch: &mut PairScratch,
    ) {
        assert_eq!(
            pairs.len(),
            out.len(),
            "add_affine_pairs_gather_vartime: {} pairs, {} out",
            pairs.len(),
            out.len()
        );
        // An index out of range panics in the arm, before it reads that pair (the IFMA gathers
        // check each vector's indices first; the portable arm indexes the slice): no scan of
        // all the pairs up front.
        let equal_x = &mut scratch.equal_x;
        match self.arm() {
            #[cfg(nostr_verify_ifma)]
            Arm::Ifma(cpu) => {
                let buf = &mut scratch.ifma;
                ifma::add_affine_pairs_gather_vartime(cpu, src, pairs, out, buf, equal_x);
            }
            #[cfg(target_arch = "x86_64")]
            Arm::Bmi2(cpu) => {
                let buf = &mut scratch.portable;
                bmi2::add_affine_pairs_gather_vartime(cpu, src, pairs, out, buf, equal_x);
            }
            Arm::Baseline => {
                let buf = &mut scratch.portable;
                portable::add_affine_pairs_gather_vartime(src, pairs, out, buf, equal_x, |_| {});
            }
        }
    }

    /// [`Backend::add_affine_pairs_gather_vartime`] on points in 4×64-bit words: the
    /// portable arm's kernel, with no conversion between 5×52-bit limbs and its own words on
    /// the way in or out. The portable arms' Pippenger keeps its points this way
    /// ([`Backend::with_pool`]). The IFMA arm has no kernel of its own for them and
    /// runs the portable arm's.
    ///
    /// No point may be the identity, and the same equal-x report is made
    /// ([`PairScratch::equal_x`]).
    ///
    /// # Panics
    ///
    /// As [`Backend::add_affine_pairs_gather_vartime`].
    ///
    /// # Variable time
    ///
    /// Branches on the inputs; public data only.
    #[cfg(not(nostr_verify_field32))]
    pub fn add_word_pairs_gather_vartime(
        self,
        src: &[WordPoint],
        pairs: &[[u32; 2]],
        out: &mut [WordPoint],
        scratch: &mut PairScratch,
    ) {
        assert_eq!(
            pairs.len(),
            out.len(),
            "add_word_pairs_gather_vartime: {} pairs, {} out",
            pairs.len(),
            out.len()
        );
        let (equal_x, buf) = (&mut scratch.equal_x, &mut scratch.portable);
        match self.arm() {
            #[cfg(nostr_verify_ifma)]
            Arm::Ifma(_) => {
                Backend::Portable.add_word_pairs_gather_vartime(src, pairs, out, scratch)
            }
            #[cfg(target_arch = "x86_64")]
            Arm::Bmi2(cpu) => {
                bmi2::add_word_pairs_gather_vartime(cpu, src, pairs, out, buf, equal_x);
            }
            Arm::Baseline => {
                portable::add_word_pairs_gather_vartime(src, pairs, out, buf, equal_x, |_| {});
            }
        }
    }

    /// Runs `job` whole on this backend's arm: in the portable arm's BMI2/ADX build where the
    /// CPU has it (the IFMA arm too: its vectors do not help the serial work such jobs are made
    /// of), else in its baseline build. The job is compiled into each build, so every function
    /// its [`ArmJob::run`] reaches, down to the field arithmetic, should be `#[inline(always)]`
    /// (what is not inlined runs as the baseline build compiled it).
    pub fn run_job<J: ArmJob>(self, job: J) -> J::Output {
        match self.arm() {
            #[cfg(nostr_verify_ifma)]
            Arm::Ifma(_) => Backend::Portable.run_job(job),
            #[cfg(target_arch = "x86_64")]
            Arm::Bmi2(cpu) => bmi2::run_job(cpu, job),
            Arm::Baseline => job.run(),
        }
    }

    /// Whether this backend's pool keeps its points as [`WordPoint`]s (the portable arms)
    /// rather than [`AffinePoint`]s (the IFMA arm, whose kernels read 52-bit limbs): the
    /// choice [`Backend::with_pool`] makes.
    #[cfg(not(nostr_verify_field32))]
    fn pool_in_words(self) -> bool {
        match self.arm() {
            #[cfg(nostr_verify_ifma)]
            Arm::Ifma(_) => false,
            #[cfg(target_arch = "x86_64")]
            Arm::Bmi2(_) => true,
            Arm::Baseline => true,
        }
    }

    /// The code that runs for this backend here: its own arm when the CPU has it, else the
    /// portable arm (its BMI2/ADX build unless [`Backend::PortableBaseline`] was asked for,
    /// or the CPU lacks BMI2/ADX).
    fn arm(self) -> Arm {
        #[cfg(nostr_verify_ifma)]
        if self == Backend::Ifma {
            if let Some(cpu) = ifma_cpu() {
                return Arm::Ifma(cpu);
            }
        }
        #[cfg(target_arch = "x86_64")]
        if self != Backend::PortableBaseline {
            if let Some(cpu) = bmi2_cpu() {
                return Arm::Bmi2(cpu);
            }
        }
        Arm::Baseline
    }
}

/// A [`Backend`] resolved against this build and this CPU ([`Backend::arm`]), holding the
/// detection token its code needs.
#[derive(Clone, Copy, Debug)]
enum Arm {
    #[cfg(nostr_verify_ifma)]
    Ifma(ifma::Detected),
    #[cfg(target_arch = "x86_64")]
    Bmi2(bmi2::Detected),
    Baseline,
}

/// Whether [`Backend::Portable`] runs its BMI2/ADX build on this machine (an x86-64 CPU with
/// both features); otherwise it is the same code as [`Backend::PortableBaseline`]. Tests and
/// benchmarks say which build they measured.
#[cfg(any(test, feature = "internals"))]
pub fn portable_uses_bmi2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        bmi2_cpu().is_some()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Working memory of [`add_affine_pairs_in_vartime`], kept by the caller between calls.
///
/// Adding n pairs needs O(n) temporary field elements (about 250 bytes per pair on the
/// IFMA arm). Allocated per call, a large round's buffer went back to the kernel on free
/// and was page-faulted in again by the next round; a `PairScratch` kept next to the other
/// buffers of a multi-scalar multiplication avoids that.
///
/// It also reports, after each call, which pairs had equal x ([`PairScratch::equal_x`]), so a
/// caller can route those (a doubling, or P + (−P)) without reading every pair's points
/// beforehand.
#[derive(Debug, Default)]
pub struct PairScratch {
    portable: portable::PairBuf,
    #[cfg(nostr_verify_ifma)]
    ifma: ifma::PairBuf,
    /// The indices of the last call's pairs whose x-coordinates were equal, ascending.
    equal_x: Vec<u32>,
}

impl PairScratch {
    /// The indices `k`, ascending, of the pairs of the last call made with this scratch
    /// (any arm, copied or gathered) whose two points had equal x-coordinates: those broke the
    /// precondition, and their `out[k]` is the meaningless λ = 0 value. Empty before any call.
    pub fn equal_x(&self) -> &[u32] {
        &self.equal_x
    }
}
