//! The types the portable backend's kernels (square roots, batch-affine pair additions,
//! Strauss's tables and doubling chain) and the MSM's serial tails (Pippenger's Horner loop and
//! bucket-reduction joins) compute in, chosen with the field representation at compile time:
//!
//! - by default, the 4×64-bit word family (`arithmetic::words`): `u128` products, faster than
//!   5×52-bit limbs on long chains of multiplications;
//! - under `cfg(nostr_verify_field32)` (wasm32, or `NOSTR_VERIFY_FIELD32=1`), where `u128`
//!   products are library calls, thin wrappers over the 10×26-bit [`FieldElement`] and
//!   [`super::group::JacobianPoint`] with the same methods (`kernel::field32`), so no `u128` is left
//!   on the hot path.
//!
//! The callers name only [`KernelField`] and [`KernelJacobian`].
//!
//! [`FieldElement`]: super::field::FieldElement

#[cfg(nostr_verify_field32)]
mod chain29;
#[cfg(nostr_verify_field32)]
pub mod field32;

#[cfg(not(nostr_verify_field32))]
pub use super::words::{FieldElement4x64 as KernelField, Jacobian4x64 as KernelJacobian};
#[cfg(nostr_verify_field32)]
pub use field32::{Field32 as KernelField, Jacobian32 as KernelJacobian};
