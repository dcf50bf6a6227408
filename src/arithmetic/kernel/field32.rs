//! The kernels' field element and Jacobian point under `cfg(nostr_verify_field32)`: the
//! 10×26-bit [`FieldElement`] and [`JacobianPoint`] behind the methods of
//! `arithmetic::words::FieldElement4x64` and `arithmetic::words::Jacobian4x64` (not compiled
//! under this cfg), so the kernels are written once.
//!
//! [`Field32`] keeps magnitude ≤ 1 between operations: `mul` and `square` return magnitude
//! 1, and `add`, `sub` and `neg` weakly normalize their result (one carry pass), which keeps
//! every input of the next multiplication within its bound of 8 without the kernels tracking
//! magnitudes. The one exception is named for it: `add_for_mul` and `sub_for_mul` skip the
//! carry pass (magnitude up to 3) for a value that only a multiplication, a zero test or
//! `sub_of_sum` reads (the pair additions' Δx, Δy, 2y, 3x², x₁ − x₃ and x₁ + x₂; 1–2 % of a
//! batch in node), and the debug build's magnitude checker fails any other use.
//! `from_fe_normalized` wraps an [`crate::arithmetic::group::AffinePoint`]'s normalized
//! coordinate without a carry pass.

use super::chain29::{Chain29, Lanes29};
use crate::arithmetic::field::{sqrt_chain, FieldElement, LIMB_COUNT};
use crate::arithmetic::group::{AffinePoint, JacobianPoint};

/// A field element of magnitude ≤ 1, with the word family's method names.
#[derive(Clone, Copy, Debug)]
pub struct Field32(FieldElement);

impl Field32 {
    /// Zero (all limbs 0: the pattern [`Field32::is_zero_pattern`] recognises).
    pub const ZERO: Self = Self(FieldElement::ZERO);
    /// One.
    pub const ONE: Self = Self(FieldElement::ONE);

    /// From a field element of any magnitude (one carry pass).
    #[inline(always)]
    pub fn from_fe(a: &FieldElement) -> Self {
        Self(a.normalize_weak())
    }

    /// From a normalized field element (an [`AffinePoint`]'s coordinate): no carry pass, which
    /// [`Field32::from_fe`] would spend on a value that needs none (4 a pair addition of the
    /// Pippenger pool).
    #[inline(always)]
    pub fn from_fe_normalized(a: &FieldElement) -> Self {
        Self(*a)
    }

    /// The normalized field element. A `Field32` of magnitude ≤ 1 comes out of `mul`,
    /// `square` or a carry pass, so its limbs are carried and one carry pass is spared
    /// ([`FieldElement::normalize_carried`], which checks that in debug builds).
    #[inline(always)]
    pub fn to_fe(&self) -> FieldElement {
        self.0.normalize_carried()
    }

    /// `self · rhs`.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn mul(&self, rhs: &Self) -> Self {
        Self(self.0.mul(&rhs.0))
    }

    /// `self²`.
    #[inline(always)]
    pub fn square(&self) -> Self {
        Self(self.0.square())
    }

    /// `self + rhs`.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn add(&self, rhs: &Self) -> Self {
        Self(self.add_for_mul(rhs).0.normalize_weak())
    }

    /// `self − rhs`.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn sub(&self, rhs: &Self) -> Self {
        Self(self.sub_for_mul(rhs).0.normalize_weak())
    }

    /// `self − s` for a sum `s` of two magnitude-1 elements from [`Field32::add_for_mul`]
    /// (magnitude 2), with one carry pass (the magnitude before it is 1 + 6): x₃ = λ² − (x₁ +
    /// x₂) spends one carry pass instead of the sum's and the difference's two.
    #[inline(always)]
    pub fn sub_of_sum(&self, s: &Self) -> Self {
        Self(self.0.add(&s.0.negate(2)).normalize_weak())
    }

    /// `self + rhs` as the input of a multiplication only (or of [`Field32::is_zero`], or, of
    /// two magnitude-1 elements, of [`Field32::sub_of_sum`]): no carry pass, so the magnitudes
    /// add (`mul` takes up to 8; two such sums of magnitude-1 elements make 3). Not for `add`,
    /// `sub`, `neg` or an output, which take magnitude ≤ 1.
    #[inline(always)]
    pub fn add_for_mul(&self, rhs: &Self) -> Self {
        Self(self.0.add(&rhs.0))
    }

    /// `self − rhs` as the input of a multiplication only (or of [`Field32::is_zero`]): no
    /// carry pass, magnitude 3 for magnitude-1 inputs. Not for `add`, `sub`, `neg` or an
    /// output.
    #[inline(always)]
    pub fn sub_for_mul(&self, rhs: &Self) -> Self {
        Self(self.0.add(&rhs.0.negate(1)))
    }

    /// `−self`.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn neg(&self) -> Self {
        Self(self.0.negate(1).normalize_weak())
    }

    /// Whether the value is 0 mod p.
    #[inline(always)]
    pub fn is_zero(&self) -> bool {
        self.0.normalizes_to_zero()
    }

    /// Whether every limb is 0 (the canonical zero; any other zero is not this pattern).
    #[inline(always)]
    pub fn is_zero_pattern(&self) -> bool {
        self.0.raw_limbs() == [0; LIMB_COUNT]
    }

    /// Whether the canonical value is odd.
    #[inline(always)]
    pub fn is_odd(&self) -> bool {
        self.0.normalize().is_odd()
    }

    /// Equality mod p.
    #[inline(always)]
    pub fn eq_mod_p(&self, other: &Self) -> bool {
        self.0.eq_vartime(&other.0)
    }

    /// `self^(−1)`; 0 maps to 0 ([`FieldElement::invert_vartime`]).
    ///
    /// # Variable time
    /// Running time depends on the value.
    pub fn invert_vartime(&self) -> Self {
        Self(self.0.invert_vartime())
    }

    /// Square roots of `N` elements at once, the chains interleaved as in
    /// `FieldElement4x64::sqrt_many_vartime`; `None` for a
    /// non-residue.
    ///
    /// # Variable time
    /// Only the final check branches (on public data).
    #[inline(always)]
    pub fn sqrt_many_vartime<const N: usize>(a: &[Self; N]) -> [Option<Self>; N] {
        // The chain in radix 2^29 (`chain29`: 45 limb products a squaring instead of 55).
        let x = Lanes29(a.map(|a| Chain29::from_words(&a.0.canonical_words())));
        let Lanes29(y) = sqrt_chain(x);
        let y = y.map(|y| Self(y.to_fe()));
        let mut out = [None; N];
        for ((o, y), a) in out.iter_mut().zip(y).zip(a) {
            *o = y.square().eq_mod_p(a).then_some(y);
        }
        out
    }
}

/// A Jacobian point with `Jacobian4x64`'s method names.
#[derive(Clone, Copy, Debug)]
pub struct Jacobian32(JacobianPoint);

impl Jacobian32 {
    /// The identity.
    pub const IDENTITY: Self = Self(JacobianPoint::IDENTITY);

    /// From a Jacobian point.
    #[inline(always)]
    pub fn from_jacobian(p: &JacobianPoint) -> Self {
        Self(*p)
    }

    /// To a Jacobian point.
    #[inline(always)]
    pub fn to_jacobian(&self) -> JacobianPoint {
        self.0
    }

    /// Whether this is the identity.
    #[inline(always)]
    pub fn is_infinity(&self) -> bool {
        self.0.is_infinity()
    }

    /// `2·self`.
    #[inline(always)]
    pub fn double_vartime(&self) -> Self {
        Self(self.0.double_vartime())
    }

    /// `self + b`.
    #[inline(always)]
    pub fn add_vartime(&self, b: &Self) -> Self {
        Self(self.0.add_vartime(&b.0))
    }

    /// `self + b` for an affine `b`.
    #[inline(always)]
    pub fn add_affine_vartime(&self, b: &AffinePoint) -> Self {
        Self(self.0.add_affine_vartime(b))
    }

    /// `self + (bx, by)` for an affine point, not the identity.
    #[inline(always)]
    pub fn add_words_vartime(&self, bx: &Field32, by: &Field32) -> Self {
        self.add_affine_vartime(&AffinePoint {
            x: bx.0,
            y: by.0,
            infinity: false,
        })
    }
}
