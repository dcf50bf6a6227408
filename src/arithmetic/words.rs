//! The 4×64-bit word family: field elements, Jacobian points and affine pool points whose
//! coordinates are four full 64-bit words, multiplied with `u128` products.
//!
//! The rest of the crate computes in [`super::field::FieldElement`] (5×52-bit limbs, lazy
//! magnitudes). On the portable arms (any CPU without IFMA, every non-x86 target) this family
//! is the faster choice where the work is long chains of multiplications, and those places
//! convert at their boundaries: the arms' square roots and batch-affine pair additions
//! (`crate::backend`), their Pippenger pool ([`WordPoint`], chosen by the backend through
//! `backend::with_pool`), and the serial tails of the multiplication (Straus's doubling chain,
//! Pippenger's Horner loop and bucket-reduction joins, in
//! [`super::jacobian::Jacobian`]`<`[`FieldElement4x64`]`>`).
//!
//! - [`FieldElement4x64`]: any 256-bit value stands for itself mod p; only `reduce` gives
//!   the canonical one. No magnitudes.
//! - [`WordPoint`]: a canonical affine point in one 64-byte cache line, the identity
//!   flagged by an x of all ones.

mod field;
mod point;

pub use field::FieldElement4x64;
pub use point::WordPoint;
