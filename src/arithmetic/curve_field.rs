//! The one contract the point formulas and the portable kernels compute under: [`CurveField`],
//! a representation of the field mod p, implemented by the 5×52-bit (10×26-bit under
//! `cfg(nostr_verify_field32)`) [`FieldElement`] and, natively, by the 4×64-bit
//! [`crate::arithmetic::words::FieldElement4x64`]. The IFMA arm's eight-lane elements keep their
//! own formulas (`backend/ifma/`).
//!
//! The Jacobian formulas ([`crate::arithmetic::jacobian::Jacobian`]), the batch-affine pair
//! additions and the square-root lifts (`backend/portable.rs`) and Strauss's tables and chain are
//! written once against this trait; each representation supplies the arithmetic.
//!
//! # Magnitude
//! Stated once here, in libsecp256k1's terms. A value's *magnitude* bounds how far its limbs
//! may have grown since the last carry:
//! - [`CurveField::mul`] and [`CurveField::square`] take inputs of magnitude ≤ 8 and return
//!   magnitude 1; so do [`CurveField::normalize_weak`] (any input ≤ 32) and
//!   [`CurveField::invert_vartime`];
//! - [`CurveField::add`] returns the sum of the magnitudes, [`CurveField::mul_int`] the
//!   magnitude times `k`, [`CurveField::negate`]`(m)` of a value of magnitude ≤ `m` returns
//!   `m + 1`, and [`CurveField::sub`]`(b, m)` is `self + b.negate(m)`;
//! - no value may exceed magnitude 32; a bound passed below the true magnitude is a
//!   violation.
//!
//! A formula is written with the bounds of [`FieldElement`], the representation that has
//! magnitudes; the debug build of [`FieldElement`] asserts every one of those rules at run time
//! (`field/checked.rs`), and the tests run every generic formula and kernel on it
//! (`jacobian.rs`, `backend/portable.rs`). `FieldElement4x64` has no magnitudes: every 256-bit
//! value is a valid input to every operation, so the bounds are vacuous there and its
//! [`CurveField::normalize_weak`] is the identity; the same generic code is checked on it
//! against the [`FieldElement`] results.

use super::field::FieldElement;

/// A representation of the field mod p that the point formulas compute in, with the
/// magnitude rules of the module documentation.
pub trait CurveField: Copy + core::fmt::Debug {
    /// Zero, as the canonical pattern [`CurveField::is_zero_pattern`] recognises.
    const ZERO: Self;
    /// One (magnitude 1).
    const ONE: Self;

    /// The same value as `a` (magnitude ≤ `a`'s).
    fn from_fe(a: &FieldElement) -> Self;
    /// The same value as a normalized `a` (magnitude 1), where a representation can skip work
    /// [`CurveField::from_fe`] does.
    fn from_fe_normalized(a: &FieldElement) -> Self;
    /// The same value as a [`FieldElement`] of magnitude ≤ this one's (where the
    /// representations differ: normalized).
    fn to_fe(&self) -> FieldElement;
    /// The normalized [`FieldElement`] of a value of magnitude 1 (out of
    /// [`CurveField::mul`], [`CurveField::square`] or [`CurveField::normalize_weak`]).
    fn to_fe_normalized(&self) -> FieldElement;

    /// `self · rhs`: inputs ≤ 8, output 1.
    fn mul(&self, rhs: &Self) -> Self;
    /// `self²`: input ≤ 8, output 1.
    fn square(&self) -> Self;
    /// `self + rhs`: the sum of the magnitudes.
    fn add(&self, rhs: &Self) -> Self;
    /// `k · self` for a small `k`: the magnitude times `k`.
    fn mul_int(&self, k: u32) -> Self;
    /// `−self`, `self` of magnitude ≤ `magnitude`: `magnitude + 1`.
    fn negate(&self, magnitude: u32) -> Self;
    /// `self − rhs`, `rhs` of magnitude ≤ `rhs_magnitude`: `self`'s magnitude
    /// `+ rhs_magnitude + 1`.
    fn sub(&self, rhs: &Self, rhs_magnitude: u32) -> Self;
    /// The same value with magnitude 1 (one carry pass; nothing where there are no
    /// magnitudes).
    fn normalize_weak(&self) -> Self;

    /// Whether the value is 0 mod p (any magnitude).
    fn normalizes_to_zero(&self) -> bool;
    /// Whether this is exactly the pattern of [`CurveField::ZERO`] (other patterns of 0 mod p
    /// are not).
    fn is_zero_pattern(&self) -> bool;
    /// Whether the canonical value is odd.
    fn is_odd_mod_p(&self) -> bool;

    /// `self^(−1)`, 0 for 0: output magnitude 1.
    ///
    /// # Variable time
    /// Running time depends on the value.
    fn invert_vartime(&self) -> Self;
    /// Square roots of `N` values at once (their chains interleaved where that pays), inputs
    /// of magnitude ≤ 8, or `None` for a non-residue; either root, magnitude 1.
    ///
    /// # Variable time
    /// The final check branches (on public data).
    fn sqrt_many_vartime<const N: usize>(a: &[Self; N]) -> [Option<Self>; N];
}

impl CurveField for FieldElement {
    const ZERO: Self = FieldElement::ZERO;
    const ONE: Self = FieldElement::ONE;

    #[inline(always)]
    fn from_fe(a: &FieldElement) -> Self {
        *a
    }

    #[inline(always)]
    fn from_fe_normalized(a: &FieldElement) -> Self {
        *a
    }

    #[inline(always)]
    fn to_fe(&self) -> FieldElement {
        *self
    }

    /// In the 10×26 build one carry pass less than [`FieldElement::normalize`] (the limbs of
    /// a magnitude-1 value out of a multiplication or a carry pass are carried; checked in
    /// debug builds).
    #[inline(always)]
    fn to_fe_normalized(&self) -> FieldElement {
        #[cfg(nostr_verify_field32)]
        return self.normalize_carried();
        #[cfg(not(nostr_verify_field32))]
        return self.normalize();
    }

    #[inline(always)]
    fn mul(&self, rhs: &Self) -> Self {
        FieldElement::mul(self, rhs)
    }

    #[inline(always)]
    fn square(&self) -> Self {
        FieldElement::square(self)
    }

    #[inline(always)]
    fn add(&self, rhs: &Self) -> Self {
        FieldElement::add(self, rhs)
    }

    #[inline(always)]
    fn mul_int(&self, k: u32) -> Self {
        FieldElement::mul_int(self, k)
    }

    #[inline(always)]
    fn negate(&self, magnitude: u32) -> Self {
        FieldElement::negate(self, magnitude)
    }

    #[inline(always)]
    fn sub(&self, rhs: &Self, rhs_magnitude: u32) -> Self {
        FieldElement::add(self, &rhs.negate(rhs_magnitude))
    }

    #[inline(always)]
    fn normalize_weak(&self) -> Self {
        FieldElement::normalize_weak(self)
    }

    #[inline(always)]
    fn normalizes_to_zero(&self) -> bool {
        FieldElement::normalizes_to_zero(self)
    }

    #[inline(always)]
    fn is_zero_pattern(&self) -> bool {
        self.raw_limbs() == FieldElement::ZERO.raw_limbs()
    }

    #[inline(always)]
    fn is_odd_mod_p(&self) -> bool {
        #[cfg(nostr_verify_field32)]
        return self.normalize().is_odd();
        #[cfg(not(nostr_verify_field32))]
        return self.canonical_words()[0] & 1 == 1;
    }

    #[inline(always)]
    fn invert_vartime(&self) -> Self {
        FieldElement::invert_vartime(self)
    }

    /// Under `cfg(nostr_verify_field32)` the chains run in 9×29-bit limbs
    /// (`kernel/chain29.rs`: 45 limb products a squaring instead of 55), interleaved; in the
    /// 5×52 build (only tests reach it: the native kernels compute in 4×64 words) one
    /// [`FieldElement::sqrt_vartime`] each.
    #[inline(always)]
    fn sqrt_many_vartime<const N: usize>(a: &[Self; N]) -> [Option<Self>; N] {
        #[cfg(nostr_verify_field32)]
        {
            use super::field::sqrt_chain;
            use super::kernel::chain29::{Chain29, Lanes29};
            let x = Lanes29(a.map(|a| Chain29::from_words(&a.canonical_words())));
            let Lanes29(y) = sqrt_chain(x);
            let mut out = [None; N];
            for ((o, y), a) in out.iter_mut().zip(y).zip(a) {
                let y = y.to_fe();
                *o = y.square().eq_vartime(a).then_some(y);
            }
            out
        }
        #[cfg(not(nostr_verify_field32))]
        {
            let mut out = [None; N];
            for (o, a) in out.iter_mut().zip(a) {
                *o = a.sqrt_vartime();
            }
            out
        }
    }
}
