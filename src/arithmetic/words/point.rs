//! Affine points in 4×64-bit words: the portable arms' Pippenger pool points.

use super::FieldElement4x64;
use crate::arithmetic::group::AffinePoint;

/// An affine point as the portable arm's kernels read and write it: x and y in four
/// little-endian 64-bit words each, canonical (`< p`), in one 64-byte cache line. The
/// identity is the one point with x all ones (never canonical).
///
/// [`AffinePoint`] keeps 5×52-bit limbs, which the IFMA arm's kernels use as they are but the
/// portable arm converts on every read and write. The portable arms' Pippenger pool holds
/// these instead (`Backend::add_word_pairs_gather_vartime` in `crate::backend`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct WordPoint {
    // Written directly by the portable kernels (`crate::backend`), which produce canonical
    // words.
    pub(crate) x: [u64; 4],
    pub(crate) y: [u64; 4],
}

impl WordPoint {
    /// The point at infinity.
    pub const IDENTITY: WordPoint = WordPoint {
        x: [!0; 4],
        y: [0; 4],
    };

    /// `p` in words (any magnitude of its coordinates; the identity maps to the identity).
    pub fn from_affine(p: &AffinePoint) -> Self {
        if p.infinity {
            return Self::IDENTITY;
        }
        WordPoint {
            x: FieldElement4x64::from_fe(&p.x).reduce().0,
            y: FieldElement4x64::from_fe(&p.y).reduce().0,
        }
    }

    /// The same point as an [`AffinePoint`] (normalized coordinates).
    pub fn to_affine(&self) -> AffinePoint {
        if self.is_identity() {
            return AffinePoint::IDENTITY;
        }
        AffinePoint {
            x: FieldElement4x64(self.x).to_fe(),
            y: FieldElement4x64(self.y).to_fe(),
            infinity: false,
        }
    }

    /// Whether this is the point at infinity.
    pub fn is_identity(&self) -> bool {
        (self.x[0] & self.x[1] & self.x[2] & self.x[3]) == !0
    }

    /// −p (the identity for the identity).
    pub fn neg(&self) -> Self {
        if self.is_identity() {
            return *self;
        }
        WordPoint {
            x: self.x,
            y: FieldElement4x64(self.y).neg().reduce().0,
        }
    }

    /// Whether the two points have the same x-coordinate (both canonical, so equal words).
    pub fn same_x(&self, other: &Self) -> bool {
        same_words(&self.x, &other.x)
    }

    /// Whether the two points have the same y-coordinate.
    pub fn same_y(&self, other: &Self) -> bool {
        same_words(&self.y, &other.y)
    }
}

/// Word-by-word equality (`==` on the arrays may compile to a vector load of words just
/// stored as scalars, a store-forwarding stall).
#[inline(always)]
fn same_words(a: &[u64; 4], b: &[u64; 4]) -> bool {
    ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3])) == 0
}
