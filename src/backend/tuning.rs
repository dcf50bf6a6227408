//! The MSM's parameters per backend, from the MSM sweep (`docs/batch.md`, "How it works";
//! `cargo run --profile bench -p nostr-verify-bench --example msm_sweep` reproduces it). The MSM reads them through
//! [`msm_tuning`] and never asks which arm runs.

use super::{selected, Backend};

/// Where the MSM switches algorithm and window width on one backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmTuning {
    /// Up to this many points, Strauss's method; above, batch-affine Pippenger.
    pub strauss_max: usize,
    /// Pippenger's window width by point count up to 256 points, where the arms differ:
    /// `(max N, c)`, ascending; then [`LARGE_WINDOWS`], shared; above its last, [`MAX_WINDOW`].
    pub small_windows: &'static [(usize, usize)],
}

/// The largest window width used (for N beyond every table).
pub const MAX_WINDOW: usize = 11;

/// Pippenger's window widths above each arm's [`MsmTuning::small_windows`], up to 8,000
/// points, the same on every arm: `(max N, c)`. No c = 7: in whole batches c = 8 was as fast
/// at 650 points and 2–3 % faster at 770 and 872 on the portable arm, 2 % at 770 on the IFMA
/// arm (`docs/benchmarks.md`, "c = 8 from 601 points").
pub const LARGE_WINDOWS: &[(usize, usize)] = &[(600, 6), (1400, 8), (2600, 9), (8000, 10)];

/// The IFMA arm: its cheap pair additions make Pippenger win from about 9 points, and keep
/// c = 3 up to 40, c = 4 up to 80 and c = 5 up to 256 (c = 6 from 129 points measured 3 %
/// slower at 146 points and a tie at 194: `docs/benchmarks.md`, "c = 6 from 129 points").
const IFMA: MsmTuning = MsmTuning {
    strauss_max: 8,
    small_windows: &[(40, 3), (80, 4), (256, 5)],
};

/// The portable arms (what ARM runs): Strauss's method (tables and column sums batch-affine,
/// chain and tables in 4×64-bit words) up to 56 points, then Pippenger with c = 5 (c = 5 beat
/// c = 4 from 48 points up). The MSM sweep alone puts the crossover at about 80 (a tie at 84);
/// in whole batches by one key it came earlier: Strauss 3 % ahead at 44 points, a tie at 52–66,
/// Pippenger 3 % ahead at 68 (`docs/benchmarks.md`, "Strauss's tables, batch-affine").
/// c = 6 from 129 points: in whole batches 3 % faster at 194 points (64 distinct keys) and
/// 1 % at 146, a tie at 122–130, 4–5 % slower at 68 and 82 (`docs/benchmarks.md`, "c = 6 from
/// 129 points").
#[cfg(not(nostr_verify_field32))]
const PORTABLE: MsmTuning = MsmTuning {
    strauss_max: 56,
    small_windows: &[(128, 5)],
};

/// The portable arm in 10×26-bit limbs (wasm32): Strauss up to 64 points, then Pippenger with
/// c = 5. A native 10×26 sweep (`NOSTR_VERIFY_FIELD32=1`, `docs/benchmarks.md`) has Strauss
/// 6 % ahead at 64 points, 2 % at 80 and a tie at 96; the bound stays below that by the margin
/// the 4×64 build lost between the sweep and whole batches.
/// c = 5 up to 256 points: c = 6 from 129 measured 2–3 % faster natively
/// (`NOSTR_VERIFY_FIELD32=1`) but was not measured in wasm, which decides this build's tuning.
#[cfg(nostr_verify_field32)]
const PORTABLE: MsmTuning = MsmTuning {
    strauss_max: 64,
    small_windows: &[(256, 5)],
};

impl MsmTuning {
    /// The window widths by point count, ascending: [`MsmTuning::small_windows`], then
    /// [`LARGE_WINDOWS`].
    pub fn windows(&self) -> impl Iterator<Item = (usize, usize)> {
        self.small_windows.iter().chain(LARGE_WINDOWS).copied()
    }

    /// The window width for `n` points.
    pub fn window_for(&self, n: usize) -> usize {
        self.windows()
            .find(|&(max, _)| n <= max)
            .map_or(MAX_WINDOW, |(_, c)| c)
    }
}

impl Backend {
    /// This backend's MSM parameters.
    pub fn msm_tuning(self) -> MsmTuning {
        match self {
            Backend::Ifma => IFMA,
            Backend::Portable | Backend::PortableBaseline => PORTABLE,
        }
    }
}

/// The selected backend's MSM parameters.
pub fn msm_tuning() -> MsmTuning {
    selected().msm_tuning()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_ascend_and_windows_grow() {
        for b in Backend::ALL {
            let t = b.msm_tuning();
            let w: Vec<(usize, usize)> = t.windows().collect();
            assert!(w.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
            assert!(t.strauss_max < w[0].0, "{b:?}");
            assert!(w.last().map_or(0, |w| w.1) < MAX_WINDOW);
            for &(max, c) in &w {
                assert_eq!(t.window_for(max), c);
                assert_ne!(t.window_for(max), t.window_for(max + 1));
            }
        }
    }
}
