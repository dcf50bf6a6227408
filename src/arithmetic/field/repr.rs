//! The limb representation compiled in, and its shape: what the field's other modules
//! (`checked`, the element itself) are written against.

#[cfg(nostr_verify_field32)]
pub use super::field_10x26::FieldElement10x26;
#[cfg(not(nostr_verify_field32))]
pub use super::field_5x52::FieldElement5x52;

/// The limb representation compiled in: `FieldElement5x52` by default,
/// `FieldElement10x26` under `cfg(nostr_verify_field32)`.
#[cfg(not(nostr_verify_field32))]
pub type Repr = FieldElement5x52;
/// The limb representation compiled in: `FieldElement5x52` by default,
/// `FieldElement10x26` under `cfg(nostr_verify_field32)`.
#[cfg(nostr_verify_field32)]
pub type Repr = FieldElement10x26;

/// One limb of [`Repr`].
#[cfg(not(nostr_verify_field32))]
pub type Limb = u64;
/// One limb of [`Repr`].
#[cfg(nostr_verify_field32)]
pub type Limb = u32;

/// How many limbs [`Repr`] has (5 or 10).
pub const LIMB_COUNT: usize = if cfg!(nostr_verify_field32) { 10 } else { 5 };
/// The radix of [`Repr`] in bits (52 or 26): limb i is worth `2^(LIMB_BITS·i)`.
#[cfg(any(test, feature = "internals"))]
pub const LIMB_BITS: u32 = if cfg!(nostr_verify_field32) { 26 } else { 52 };
/// The width of a normalized top limb (48 or 22): `LIMB_BITS·(LIMB_COUNT − 1) +
/// TOP_LIMB_BITS = 256`.
#[cfg(any(test, feature = "internals"))]
pub const TOP_LIMB_BITS: u32 = 256 - LIMB_BITS * (LIMB_COUNT as u32 - 1);

/// The limbs of a [`FieldElement`](super::FieldElement), little-endian
/// ([`FieldElement::raw_limbs`](super::FieldElement::raw_limbs)).
pub type Limbs = [Limb; LIMB_COUNT];
