//! The types the portable backend's kernels (square roots, batch-affine pair additions,
//! Strauss's tables and doubling chain) and the MSM's serial tails (Pippenger's Horner loop and
//! bucket-reduction joins) compute in, chosen with the field representation at compile time.
//! The kernels are written once, against [`super::curve_field::CurveField`]; this module only
//! picks the representation:
//!
//! - by default, the 4×64-bit word family (`arithmetic::words`): `u128` products, faster than
//!   5×52-bit limbs on long chains of multiplications;
//! - under `cfg(nostr_verify_field32)` (wasm32, or `NOSTR_VERIFY_FIELD32=1`), the 10×26-bit
//!   [`super::field::FieldElement`] itself, so no `u128` is left on the hot path (its square
//!   roots run in 9×29-bit limbs, `chain29`).
//!
//! The callers name only [`KernelField`] and [`KernelJacobian`].

#[cfg(nostr_verify_field32)]
pub(crate) mod chain29;

use super::jacobian::Jacobian;

/// The kernels' field representation (10×26-bit limbs under `cfg(nostr_verify_field32)`).
#[cfg(nostr_verify_field32)]
pub use super::field::FieldElement as KernelField;
/// The kernels' field representation (4×64-bit words natively).
#[cfg(not(nostr_verify_field32))]
pub use super::words::FieldElement4x64 as KernelField;

/// Jacobian points in the kernels' representation.
pub type KernelJacobian = Jacobian<KernelField>;
