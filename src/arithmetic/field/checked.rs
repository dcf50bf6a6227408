//! Debug-build field element that tracks magnitude and normalization.
//!
//! In debug builds [`super::FieldElement`] wraps this type instead of the bare limbs
//! ([`Repr`]: 5×52 or, under `cfg(nostr_verify_field32)`, 10×26, which have the same bounds
//! in their own radix), so every test run in debug checks every magnitude rule of the
//! contract (the role `VERIFY` plays in libsecp256k1 and `field_impl.rs` in k256). In
//! release builds this module is not compiled and the bookkeeping costs nothing.

use super::repr::{Limbs, Repr};

/// Largest magnitude any element may carry (limbs < 2^58 in 5×52, < 2^32 in 10×26).
pub(crate) const MAX_MAGNITUDE: u32 = 32;
/// Largest input magnitude of `mul` and `square`.
pub(crate) const MAX_MUL_MAGNITUDE: u32 = 8;

/// [`Repr`] plus its magnitude and whether it is normalized.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FieldElementChecked {
    inner: Repr,
    magnitude: u32,
    normalized: bool,
}

impl FieldElementChecked {
    /// Byte offset of the limbs inside this type (see `FieldElement::LIMBS_OFFSET`).
    #[cfg_attr(not(nostr_verify_ifma), allow(dead_code))]
    pub(crate) const INNER_OFFSET: usize = core::mem::offset_of!(Self, inner);
    pub(crate) const ZERO: Self = Self::new_const(Repr::ZERO, 0, true);
    pub(crate) const ONE: Self = Self::new_const(Repr::ONE, 1, true);

    /// Wraps limbs and asserts that they respect the stated magnitude (and, if
    /// `normalized`, that they are canonical).
    const fn new_const(inner: Repr, magnitude: u32, normalized: bool) -> Self {
        assert!(magnitude <= MAX_MAGNITUDE, "field: magnitude above 32");
        assert!(
            inner.has_magnitude(magnitude),
            "field: limbs exceed their magnitude"
        );
        assert!(
            !normalized || (magnitude <= 1 && inner.is_normalized_repr()),
            "field: not normalized"
        );
        Self {
            inner,
            magnitude,
            normalized,
        }
    }

    #[inline(always)]
    fn new(inner: Repr, magnitude: u32, normalized: bool) -> Self {
        Self::new_const(inner, magnitude, normalized)
    }

    #[inline(always)]
    pub(crate) fn inner(&self) -> &Repr {
        &self.inner
    }

    pub(crate) const fn from_limbs_unchecked(l: Limbs) -> Self {
        Self::new_const(Repr::from_limbs(l), 1, true)
    }

    #[cfg(any(test, feature = "internals"))]
    pub(crate) fn from_limbs_magnitude_unchecked(l: Limbs, magnitude: u32) -> Self {
        Self::new(Repr::from_limbs(l), magnitude, false)
    }

    #[cfg(any(test, feature = "internals"))]
    pub(crate) fn from_bytes_unchecked(b: &[u8; 32]) -> Self {
        Self::new(Repr::from_bytes_unchecked(b), 1, false)
    }

    pub(crate) fn from_bytes(b: &[u8; 32]) -> Option<Self> {
        let inner = Repr::from_bytes_unchecked(b);
        if Repr::limbs_overflow(&inner.limbs()) {
            None
        } else {
            Some(Self::new(inner, 1, true))
        }
    }

    pub(crate) fn from_u64(v: u64) -> Self {
        Self::new(Repr::from_u64(v), 1, true)
    }

    #[allow(clippy::wrong_self_convention)] // mirrors Repr::to_bytes
    pub(crate) fn to_bytes(&self) -> [u8; 32] {
        assert!(
            self.normalized,
            "field: to_bytes of a non-normalized element"
        );
        self.inner.to_bytes()
    }

    pub(crate) fn add(&self, rhs: &Self) -> Self {
        let m = self.magnitude + rhs.magnitude;
        assert!(
            m <= MAX_MAGNITUDE,
            "field: add would reach magnitude {m} > 32"
        );
        Self::new(self.inner.add(&rhs.inner), m, false)
    }

    pub(crate) fn mul_int(&self, k: u32) -> Self {
        let m = self.magnitude * k;
        assert!(
            m <= MAX_MAGNITUDE,
            "field: mul_int would reach magnitude {m} > 32"
        );
        Self::new(self.inner.mul_int(k), m, false)
    }

    pub(crate) fn negate(&self, magnitude: u32) -> Self {
        assert!(
            self.magnitude <= magnitude,
            "field: negate({magnitude}) of an element of magnitude {}",
            self.magnitude
        );
        assert!(
            magnitude < MAX_MAGNITUDE,
            "field: negate magnitude above 31"
        );
        Self::new(self.inner.negate(magnitude), magnitude + 1, false)
    }

    pub(crate) fn mul(&self, rhs: &Self) -> Self {
        assert!(
            self.magnitude <= MAX_MUL_MAGNITUDE && rhs.magnitude <= MAX_MUL_MAGNITUDE,
            "field: mul inputs of magnitude {} and {} (max 8)",
            self.magnitude,
            rhs.magnitude
        );
        Self::new(self.inner.mul(&rhs.inner), 1, false)
    }

    pub(crate) fn square(&self) -> Self {
        assert!(
            self.magnitude <= MAX_MUL_MAGNITUDE,
            "field: square input of magnitude {} (max 8)",
            self.magnitude
        );
        Self::new(self.inner.square(), 1, false)
    }

    pub(crate) fn normalize(&self) -> Self {
        Self::new(self.inner.normalize(), 1, true)
    }

    #[cfg(nostr_verify_field32)]
    pub(crate) fn normalize_carried(&self) -> Self {
        Self::new(self.inner.normalize_carried(), 1, true)
    }

    pub(crate) fn normalize_weak(&self) -> Self {
        Self::new(self.inner.normalize_weak(), 1, self.normalized)
    }

    pub(crate) fn normalizes_to_zero(&self) -> bool {
        self.inner.normalizes_to_zero()
    }

    pub(crate) fn is_zero(&self) -> bool {
        assert!(
            self.normalized,
            "field: is_zero of a non-normalized element"
        );
        self.inner.is_zero()
    }

    #[cfg(any(test, feature = "internals", nostr_verify_field32))]
    pub(crate) fn is_odd(&self) -> bool {
        assert!(self.normalized, "field: is_odd of a non-normalized element");
        self.inner.is_odd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "max 8")]
    fn mul_rejects_magnitude_9() {
        let a = FieldElementChecked::ONE.mul_int(9);
        let _ = a.mul(&FieldElementChecked::ONE);
    }

    #[test]
    #[should_panic(expected = "negate(1) of an element of magnitude 2")]
    fn negate_rejects_understated_magnitude() {
        let a = FieldElementChecked::ONE.add(&FieldElementChecked::ONE);
        let _ = a.negate(1);
    }

    #[test]
    #[should_panic(expected = "is_odd of a non-normalized")]
    fn is_odd_requires_normalized() {
        let _ = FieldElementChecked::ONE
            .mul(&FieldElementChecked::ONE)
            .is_odd();
    }

    #[test]
    #[should_panic(expected = "limbs exceed")]
    fn magnitude_claim_is_checked() {
        let mut l = [0; super::super::LIMB_COUNT];
        l[0] = 1 << (super::super::LIMB_BITS + 2);
        let _ = FieldElementChecked::from_limbs_magnitude_unchecked(l, 1);
    }

    #[test]
    #[should_panic(expected = "magnitude 33 > 32")]
    fn add_rejects_magnitude_33() {
        let a = FieldElementChecked::ONE.mul_int(32);
        let _ = a.add(&FieldElementChecked::ONE);
    }
}
