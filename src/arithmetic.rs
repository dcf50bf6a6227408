//! Layer 1: field, scalar and group arithmetic for secp256k1.
//!
//! Low-level building blocks for the batch verifier. They are public so that benches,
//! tests and SIMD backends can use them, but most callers want the [`crate::Verifier`].
//!
//! # Representations and their invariants
//! - [`field::FieldElement`]: integers mod p = 2^256 − 2^32 − 977 as five 52-bit limbs
//!   ([`field::FieldElement5x52`]), lazily reduced. Each element has a *magnitude*
//!   (how far its limbs may exceed a reduced element's); every operation states the
//!   magnitudes it accepts and returns under `# Magnitude`, and debug builds assert
//!   them. *Normalized* means canonical: limbs reduced and value `< p`.
//! - [`group::AffinePoint`] `(x, y)` with normalized coordinates, or the identity;
//!   [`group::JacobianPoint`] `(X, Y, Z)` standing for `(X/Z², Y/Z³)`, coordinates of
//!   magnitude ≤ 4, the identity flagged (or `Z = 0`).
//! - [`constants`]: G, β, λ, each with its provenance and a test that recomputes it.
//!
//! # Variable time
//! Everything named `_vartime` branches on its inputs. The crate verifies signatures, so
//! the data reaching this layer is public (keys, messages, signatures) with one exception:
//! the batch weights, secret to the verifier, enter variable-time scalar arithmetic and
//! multiplication. That is safe because a verifier reveals no timing-dependent result other
//! than the verdicts (`src/batch.rs`, "Variable time").
//!
#![doc = include_str!("../docs/arithmetic.md")]

pub mod constants;
pub mod curve_field;
pub mod field;
pub mod group;
pub mod jacobian;
pub mod kernel;
pub mod scalar;
#[cfg(not(nostr_verify_field32))]
pub mod words;
