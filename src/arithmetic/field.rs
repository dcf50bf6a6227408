//! The field of secp256k1 coordinates, integers mod p = 2^256 − 2^32 − 977.
//!
//! [`FieldElement`] carries the contract; the limb kernels live in
//! [`Repr`] one level down, and operations built from other operations
//! (inversion, square root, batch inversion) live here, above the limbs.
//!
//! # Representation
//! One of two limb layouts, chosen at compile time:
//! - `FieldElement5x52` (five `u64` limbs, radix 2^52, `u128` products): the default, for
//!   targets with a 64×64→128-bit multiply;
//! - `FieldElement10x26` (ten `u32` limbs, radix 2^26, `u32 × u32 → u64` products) under
//!   `cfg(nostr_verify_field32)`, which build.rs sets on wasm32 (no 128-bit products: `u128`
//!   multiplications become `__multi3` calls) and, for testing natively, when
//!   `NOSTR_VERIFY_FIELD32=1` is set at build time (`docs/arithmetic.md`, "The 10×26
//!   representation").
//!
//! Both have the same contract (below); [`Limbs`], [`LIMB_BITS`] and [`TOP_LIMB_BITS`] say
//! which one is compiled in.
//!
//! # Magnitude
//! Elements are kept lazily reduced. An element of *magnitude m* has limbs at most `m`
//! times (roughly) as large as a reduced one, and any value `< 2^256`-ish multiple of p
//! may be present (see [`Repr`] for the exact limb bounds). Additions add
//! magnitudes; [`FieldElement::mul`] and [`FieldElement::square`] accept magnitude ≤ 8
//! and return magnitude 1; no element may exceed magnitude 32. Each method states its
//! rule under `# Magnitude`. In debug builds every rule is asserted at run time
//! (`field/checked.rs`); in release builds the element is the bare limbs.
//!
//! # Variable time
//! The `_vartime` operations (inversion, square root, batch inversion, `eq_vartime`)
//! branch on their inputs. The crate only ever feeds them public data.

#[cfg(nostr_verify_field32)]
mod field_10x26;
#[cfg(not(nostr_verify_field32))]
mod field_5x52;

mod bytes;
#[cfg(debug_assertions)]
mod checked;
mod repr;

#[cfg(nostr_verify_field32)]
pub use self::repr::FieldElement10x26;
#[cfg(not(nostr_verify_field32))]
pub use self::repr::FieldElement5x52;
pub use self::repr::{Limb, Limbs, Repr, LIMB_COUNT};
#[cfg(any(test, feature = "internals"))]
pub use self::repr::{LIMB_BITS, TOP_LIMB_BITS};

#[cfg(debug_assertions)]
type Inner = checked::FieldElementChecked;
#[cfg(not(debug_assertions))]
type Inner = Repr;

/// An element of the secp256k1 base field in [`Repr`]'s limbs (5×52 or 10×26 bits), lazily
/// reduced.
///
/// See the [module docs](self) for the magnitude rules. `PartialEq` compares values
/// (any magnitudes, like [`FieldElement::eq_vartime`]).
#[derive(Clone, Copy)]
pub struct FieldElement(Inner);

impl core::fmt::Debug for FieldElement {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "FieldElement(0x")?;
        for b in self.to_bytes() {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

impl Default for FieldElement {
    fn default() -> Self {
        Self::ZERO
    }
}

impl PartialEq for FieldElement {
    fn eq(&self, other: &Self) -> bool {
        self.eq_vartime(other)
    }
}

impl Eq for FieldElement {}

/// The limb-level operations shared by both inner types; [`Repr`] in release builds (no
/// bookkeeping) and `checked::FieldElementChecked` in debug.
#[cfg(not(debug_assertions))]
impl Repr {
    #[inline(always)]
    #[cfg(any(test, feature = "internals"))]
    fn from_limbs_magnitude_unchecked(l: Limbs, _magnitude: u32) -> Self {
        Self::from_limbs(l)
    }
    #[inline(always)]
    fn inner(&self) -> &Self {
        self
    }
    #[inline(always)]
    fn from_bytes(b: &[u8; 32]) -> Option<Self> {
        let inner = Self::from_bytes_unchecked(b);
        if Self::limbs_overflow(&inner.limbs()) {
            None
        } else {
            Some(inner)
        }
    }
}

/// `w^(−1) mod p` for little-endian words `w < p` (0 maps to 0): safegcd, the crate's one
/// inversion for any odd modulus ([`crate::arithmetic::scalar::safegcd`]). The result is `< p`.
/// Shared by [`FieldElement::invert_vartime`] and [`FieldElement4x64::invert_vartime`].
pub(crate) fn invert_words_vartime(w: &[u64; 4]) -> [u64; 4] {
    use crate::arithmetic::scalar::safegcd::{invert_vartime, Modulus};
    /// p as four little-endian u64 words.
    const P: Modulus = Modulus::new([0xFFFF_FFFE_FFFF_FC2F, u64::MAX, u64::MAX, u64::MAX]);
    invert_vartime(w, &P)
}

/// The two operations an exponentiation chain needs. Implemented by [`FieldElement`] and by
/// the portable backend's pair of [`FieldElement4x64`] lanes, so that one copy of each
/// addition chain serves both representations.
pub(crate) trait ChainOps: Copy {
    /// `self²`.
    fn chain_square(&self) -> Self;
    /// `self · rhs`.
    fn chain_mul(&self, rhs: &Self) -> Self;
    /// `self^(2^k)`.
    #[inline(always)]
    fn chain_pow2k(&self, k: u32) -> Self {
        let mut x = *self;
        for _ in 0..k {
            x = x.chain_square();
        }
        x
    }
}

impl ChainOps for FieldElement {
    #[inline(always)]
    fn chain_square(&self) -> Self {
        self.square()
    }
    #[inline(always)]
    fn chain_mul(&self, rhs: &Self) -> Self {
        self.mul(rhs)
    }
}

/// `x^(2^k − 1)` for the run lengths k of the addition-chain prefix shared by inversion and
/// square root (p − 2 and (p + 1)/4 both start with 223 one-bits): x2, x3, x6, x9, x11,
/// x22, x44, x88, x176, x220, x223. Returns `(x2, x22, x223)`; 218 squarings and 10
/// multiplications. For [`FieldElement`] the input must have magnitude ≤ 8 (every output
/// has magnitude 1).
#[rustfmt::skip]
#[inline(always)]
pub(crate) fn chain_prefix<T: ChainOps>(x1: T) -> (T, T, T) {
    let x2   = x1.chain_square().chain_mul(&x1);        // 2^2 − 1
    let x3   = x2.chain_square().chain_mul(&x1);        // 2^3 − 1
    let x6   = x3.chain_pow2k(3).chain_mul(&x3);        // 2^6 − 1
    let x9   = x6.chain_pow2k(3).chain_mul(&x3);        // 2^9 − 1
    let x11  = x9.chain_pow2k(2).chain_mul(&x2);        // 2^11 − 1
    let x22  = x11.chain_pow2k(11).chain_mul(&x11);     // 2^22 − 1
    let x44  = x22.chain_pow2k(22).chain_mul(&x22);     // 2^44 − 1
    let x88  = x44.chain_pow2k(44).chain_mul(&x44);     // 2^88 − 1
    let x176 = x88.chain_pow2k(88).chain_mul(&x88);     // 2^176 − 1
    let x220 = x176.chain_pow2k(44).chain_mul(&x44);    // 2^220 − 1
    let x223 = x220.chain_pow2k(3).chain_mul(&x3);      // 2^223 − 1
    (x2, x22, x223)
}

/// `x^((p+1)/4)`, the square-root candidate (see [`FieldElement::sqrt_vartime`]): the
/// prefix, then ·2^23·x22, ·2^6·x2, ·2^2 (253 squarings, 13 multiplications). The caller
/// checks it by squaring.
#[inline(always)]
pub(crate) fn sqrt_chain<T: ChainOps>(x1: T) -> T {
    let (x2, x22, x223) = chain_prefix(x1);
    let t = x223.chain_pow2k(23).chain_mul(&x22);
    let t = t.chain_pow2k(6).chain_mul(&x2);
    t.chain_pow2k(2)
}

impl FieldElement {
    /// Byte offset of the limbs ([`FieldElement::raw_limbs`]) inside a
    /// `FieldElement`, for code that reads many elements with vector gathers. Taken from the
    /// actual layout (`offset_of!`), so it holds for the debug build's checked wrapper too.
    #[cfg(not(debug_assertions))]
    // Read only by the IFMA arm's gathers.
    #[cfg_attr(not(nostr_verify_ifma), allow(dead_code))]
    pub(crate) const LIMBS_OFFSET: usize =
        core::mem::offset_of!(Self, 0) + core::mem::offset_of!(Repr, 0);
    /// Byte offset of the limbs ([`FieldElement::raw_limbs`]) inside a
    /// `FieldElement`, for code that reads many elements with vector gathers. Taken from the
    /// actual layout (`offset_of!`), so it holds for the debug build's checked wrapper too.
    #[cfg(debug_assertions)]
    // Read only by the IFMA arm's gathers.
    #[cfg_attr(not(nostr_verify_ifma), allow(dead_code))]
    pub(crate) const LIMBS_OFFSET: usize = core::mem::offset_of!(Self, 0)
        + checked::FieldElementChecked::INNER_OFFSET
        + core::mem::offset_of!(Repr, 0);

    /// Zero (normalized, magnitude 0: `ZERO.negate(0)` is valid and gives 2p).
    pub const ZERO: Self = Self(Inner::ZERO);
    /// One (normalized).
    pub const ONE: Self = Self(Inner::ONE);

    /// Parses 32 big-endian bytes, rejecting values `≥ p`.
    ///
    /// # Magnitude
    /// The result is normalized.
    #[inline]
    pub fn from_bytes(b: &[u8; 32]) -> Option<Self> {
        Inner::from_bytes(b).map(Self)
    }

    /// Reads any 256-bit big-endian value without reducing it.
    ///
    /// # Magnitude
    /// Magnitude 1, not normalized (the value may be `≥ p`; it stands for itself mod p).
    #[inline]
    #[cfg(any(test, feature = "internals"))]
    pub fn from_bytes_unchecked(b: &[u8; 32]) -> Self {
        Self(Inner::from_bytes_unchecked(b))
    }

    /// The 32 big-endian bytes of the canonical value (normalizes a copy).
    ///
    /// # Magnitude
    /// Accepts magnitude ≤ 32.
    #[inline]
    pub fn to_bytes(&self) -> [u8; 32] {
        self.normalize().0.to_bytes()
    }

    /// A small integer.
    ///
    /// # Magnitude
    /// Normalized.
    #[inline]
    pub fn from_u64(v: u64) -> Self {
        Self(Inner::from_u64(v))
    }

    /// Wraps [`Repr`] limbs (little-endian: value = ∑ `l[i]`·2^(`LIMB_BITS`·i)).
    ///
    /// The caller guarantees they are normalized: each limb `< 2^LIMB_BITS`, the top limb
    /// `< 2^TOP_LIMB_BITS` and the value `< p` (asserted in debug builds, also in const
    /// context).
    ///
    /// # Magnitude
    /// Normalized.
    #[inline(always)]
    pub const fn from_limbs_unchecked(l: Limbs) -> Self {
        #[cfg(debug_assertions)]
        {
            Self(checked::FieldElementChecked::from_limbs_unchecked(l))
        }
        #[cfg(not(debug_assertions))]
        {
            Self(Repr::from_limbs(l))
        }
    }

    /// Wraps [`Repr`] limbs of magnitude at most `magnitude` (≤ 32), e.g. the output
    /// of a SIMD kernel that does not normalize. The caller guarantees the limb bounds
    /// of [`Repr`] for that magnitude (asserted in debug builds).
    ///
    /// # Magnitude
    /// `magnitude`, not normalized.
    #[inline(always)]
    #[cfg(any(test, feature = "internals"))]
    pub fn from_limbs_magnitude_unchecked(l: Limbs, magnitude: u32) -> Self {
        Self(Inner::from_limbs_magnitude_unchecked(l, magnitude))
    }

    /// The limbs of the canonical value (each `< 2^LIMB_BITS`, top `< 2^TOP_LIMB_BITS`,
    /// value `< p`).
    ///
    /// # Magnitude
    /// Accepts magnitude ≤ 32.
    #[inline(always)]
    pub fn to_limbs_normalized(&self) -> Limbs {
        self.normalize().0.inner().limbs()
    }

    /// The limbs as stored, in whatever magnitude the element has (no reduction).
    #[inline(always)]
    pub fn raw_limbs(&self) -> Limbs {
        self.0.inner().limbs()
    }

    /// `self + rhs`.
    ///
    /// # Magnitude
    /// The sum of both magnitudes, which must be ≤ 32.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn add(&self, rhs: &Self) -> Self {
        Self(self.0.add(&rhs.0))
    }

    /// `−self`, given an upper bound `magnitude` (≤ 31) on the magnitude of `self`.
    ///
    /// # Magnitude
    /// `magnitude + 1`. Passing a bound below the true magnitude is a contract
    /// violation (wrong result in release, assertion in debug).
    #[inline(always)]
    pub fn negate(&self, magnitude: u32) -> Self {
        Self(self.0.negate(magnitude))
    }

    /// `self · rhs`.
    ///
    /// # Magnitude
    /// Inputs ≤ 8; output 1, not normalized.
    #[inline(always)]
    #[allow(clippy::should_implement_trait)]
    pub fn mul(&self, rhs: &Self) -> Self {
        Self(self.0.mul(&rhs.0))
    }

    /// `self²`.
    ///
    /// # Magnitude
    /// Input ≤ 8; output 1, not normalized.
    #[inline(always)]
    pub fn square(&self) -> Self {
        Self(self.0.square())
    }

    /// `self · k` for a small integer `k`.
    ///
    /// # Magnitude
    /// `magnitude · k`, which must be ≤ 32.
    #[inline(always)]
    pub fn mul_int(&self, k: u32) -> Self {
        Self(self.0.mul_int(k))
    }

    /// The canonical representation of the same value.
    ///
    /// # Magnitude
    /// Input ≤ 32; output normalized.
    #[inline]
    pub fn normalize(&self) -> Self {
        Self(self.0.normalize())
    }

    /// [`Self::normalize`] of an element whose 10×26 limbs are already carried (limbs 0..8 <
    /// 2^26, top limb < 2^22 + 2^7: what a multiplication, a squaring and
    /// [`Self::normalize_weak`] return); checked in debug builds. One carry pass less.
    ///
    /// # Magnitude
    /// Input: carried limbs as above; output normalized.
    #[cfg(nostr_verify_field32)]
    #[inline(always)]
    pub(crate) fn normalize_carried(&self) -> Self {
        Self(self.0.normalize_carried())
    }

    /// The same value with magnitude 1 (cheaper than [`Self::normalize`]; the value
    /// may still be `≥ p`).
    ///
    /// # Magnitude
    /// Input ≤ 32; output 1 (normalized if the input was).
    #[inline(always)]
    pub fn normalize_weak(&self) -> Self {
        Self(self.0.normalize_weak())
    }

    /// Whether the value is 0 mod p, for any magnitude ≤ 32 (no normalization needed).
    #[inline]
    pub fn normalizes_to_zero(&self) -> bool {
        self.0.normalizes_to_zero()
    }

    /// Whether a normalized element is zero.
    ///
    /// # Magnitude
    /// Requires normalized (asserted in debug builds); see
    /// [`Self::normalizes_to_zero`] otherwise.
    #[inline(always)]
    pub fn is_zero(&self) -> bool {
        self.0.is_zero()
    }

    /// Whether a normalized element is odd.
    ///
    /// # Magnitude
    /// Requires normalized (asserted in debug builds).
    #[inline(always)]
    #[cfg(any(test, feature = "internals", nostr_verify_field32))]
    pub fn is_odd(&self) -> bool {
        self.0.is_odd()
    }

    /// Whether two elements have the same value mod p.
    ///
    /// # Magnitude
    /// Any magnitudes ≤ 32.
    ///
    /// # Variable time
    /// Returns as soon as a limb differs.
    #[inline]
    pub fn eq_vartime(&self, other: &Self) -> bool {
        self.to_limbs_normalized() == other.to_limbs_normalized()
    }

    /// `self^(2^k)`: k successive squarings.
    ///
    /// # Magnitude
    /// Input ≤ 8; output 1 (for k = 0 the input is returned unchanged).
    #[inline(always)]
    #[cfg(any(test, feature = "internals"))]
    pub fn pow2k(&self, k: u32) -> Self {
        let mut x = *self;
        for _ in 0..k {
            x = x.square();
        }
        x
    }

    /// `self^(−1)` by Fermat's little theorem, `self^(p−2)`; 0 maps to 0.
    ///
    /// p − 2 = 2^256 − 2^32 − 979 has bits: 223 ones, a zero, 22 ones, then
    /// `0000101101`. Chain: x223, ·2^23·x22, ·2^5·x, ·2^3·x2, ·2^2·x
    /// (255 squarings, 15 multiplications).
    ///
    /// # Magnitude
    /// Input ≤ 32; output normalized.
    ///
    /// Kept as the reference for [`Self::invert_vartime`] (the tests compare them) and
    /// as the constant-time twin: this chain does not branch on the input.
    #[rustfmt::skip]
    #[cfg(any(test, feature = "internals"))]
    pub fn invert_fermat(&self) -> Self {
        let x1 = self.normalize_weak();
        let (x2, x22, x223) = chain_prefix(x1);
        let t = x223.pow2k(23).mul(&x22);
        let t = t.pow2k(5).mul(&x1);
        let t = t.pow2k(3).mul(&x2);
        let t = t.pow2k(2).mul(&x1);
        t.normalize()
    }

    /// `self^(−1)`; 0 maps to 0.
    ///
    /// Bernstein–Yang safegcd in its variable-time form, the crate's one implementation
    /// for any odd modulus ([`crate::arithmetic::scalar::safegcd`], shared with the
    /// scalars): about 3× faster than the Fermat chain [`Self::invert_fermat`]
    /// (≈ 1.3 µs against ≈ 4 µs here), which matters because the batch verifier inverts
    /// once per batch-affine round.
    ///
    /// # Magnitude
    /// Input ≤ 32; output normalized.
    ///
    /// # Variable time
    /// The number of divstep batches and the work inside each depend on the input.
    #[inline]
    pub fn invert_vartime(&self) -> Self {
        Self::from_u64x4_normalized(&invert_words_vartime(&self.canonical_words()))
    }

    /// Wraps four little-endian words of a value `< p` (checked in debug builds through the
    /// limb bounds): the regrouping of [`Repr::from_u64x4`].
    ///
    /// # Magnitude
    /// Normalized.
    #[inline(always)]
    pub(crate) fn from_u64x4_normalized(w: &[u64; 4]) -> Self {
        Self::from_limbs_unchecked(Repr::from_u64x4(w).limbs())
    }

    /// The canonical value (`< p`) as four little-endian words.
    ///
    /// # Magnitude
    /// Accepts magnitude ≤ 32.
    #[inline(always)]
    pub(crate) fn canonical_words(&self) -> [u64; 4] {
        Repr::from_limbs(self.to_limbs_normalized()).to_u64x4()
    }

    /// A square root of `self`, or `None` if `self` is not a square mod p.
    ///
    /// Since p ≡ 3 (mod 4), `y = self^((p+1)/4)` is a root whenever one exists; it is
    /// checked by squaring. (p + 1)/4 = 2^254 − 2^30 − 244 has bits: 223 ones, a zero,
    /// 22 ones, `0000 11`, `00`. Chain: x223, ·2^23·x22, ·2^6·x2, ·2^2
    /// (253 squarings, 13 multiplications, plus one squaring for the check).
    ///
    /// # Magnitude
    /// Input ≤ 32; the root is normalized. Which of the two roots is returned is not
    /// specified (it is the one that is itself a square); callers fix the parity.
    ///
    /// # Variable time
    /// Branches on whether a root exists.
    #[rustfmt::skip]
    #[cfg(any(test, feature = "internals", not(nostr_verify_field32)))]
    pub fn sqrt_vartime(&self) -> Option<Self> {
        let x1 = self.normalize_weak();
        let y = sqrt_chain(x1);
        if y.square().eq_vartime(&x1) {
            Some(y.normalize())
        } else {
            None
        }
    }

    /// Inverts every element of `elems` in place with one inversion (Montgomery's trick).
    ///
    /// Elements that are zero mod p stay zero; all others are replaced by their inverse.
    /// `scratch` is reused storage for the prefix products (cleared, then grown to the
    /// number of nonzero inputs).
    ///
    /// Cost: one inversion plus about 3 multiplications per element.
    ///
    /// # Magnitude
    /// Inputs ≤ 32; outputs normalized.
    ///
    /// # Variable time
    /// Branches on which inputs are zero.
    pub fn batch_invert_vartime(elems: &mut [Self], scratch: &mut Vec<Self>) {
        scratch.clear();
        // Forward pass: scratch[j] = product of the first j+1 nonzero inputs.
        let mut acc = Self::ONE;
        for e in elems.iter_mut() {
            if e.normalizes_to_zero() {
                *e = Self::ZERO;
                continue;
            }
            *e = e.normalize_weak();
            acc = acc.mul(e);
            scratch.push(acc);
        }
        if scratch.is_empty() {
            return;
        }
        // acc is the product of all nonzero inputs, itself nonzero (p is prime).
        let mut inv = acc.invert_vartime();
        // Backward pass: inv = (product of the first j+1 nonzero inputs)^(−1).
        let mut j = scratch.len();
        for e in elems.iter_mut().rev() {
            if e.is_zero_raw() {
                continue;
            }
            j -= 1;
            let this_inv = if j == 0 {
                inv
            } else {
                inv.mul(&scratch[j - 1])
            };
            inv = inv.mul(e);
            *e = this_inv.normalize();
        }
    }

    /// Zero test on the stored limbs (used only where zeros were stored as `ZERO`).
    #[inline(always)]
    fn is_zero_raw(&self) -> bool {
        self.raw_limbs() == [0; LIMB_COUNT]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fe(v: u64) -> FieldElement {
        FieldElement::from_u64(v)
    }

    #[test]
    fn small_arithmetic() {
        assert_eq!(fe(3).mul(&fe(5)), fe(15));
        assert_eq!(fe(3).add(&fe(5).negate(1)).add(&fe(2)), FieldElement::ZERO);
        assert_eq!(fe(7).invert_vartime().mul(&fe(7)), FieldElement::ONE);
        assert_eq!(FieldElement::ZERO.invert_vartime(), FieldElement::ZERO);
        assert_eq!(fe(9).sqrt_vartime().map(|r| r.square()), Some(fe(9)));
    }

    #[test]
    fn batch_invert_handles_zeros() {
        let mut v = vec![fe(0), fe(2), fe(0), fe(3), fe(0)];
        let mut scratch = Vec::new();
        FieldElement::batch_invert_vartime(&mut v, &mut scratch);
        assert!(v[0].is_zero() && v[2].is_zero() && v[4].is_zero());
        assert_eq!(v[1].mul(&fe(2)), FieldElement::ONE);
        assert_eq!(v[3].mul(&fe(3)), FieldElement::ONE);
        let mut all_zero = vec![fe(0); 3];
        FieldElement::batch_invert_vartime(&mut all_zero, &mut scratch);
        assert!(all_zero.iter().all(|z| z.is_zero()));
        let mut empty: Vec<FieldElement> = Vec::new();
        FieldElement::batch_invert_vartime(&mut empty, &mut scratch);
    }
}
