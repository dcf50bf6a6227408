//! Points of secp256k1, y² = x³ + 7 over the field mod p, in affine and Jacobian form.
//!
//! The doubling and addition formulas are written once, over any [`CurveField`], in
//! [`super::jacobian`]; [`JacobianPoint`] is that type over [`FieldElement`], and this module
//! adds what only it needs (affine conversion, equality) and the conversions between
//! representations.
//!
//! # Magnitude
//! [`AffinePoint`] coordinates are normalized when produced here (inputs of magnitude
//! ≤ 4 are accepted everywhere). [`JacobianPoint`] coordinates have magnitude ≤ 4 as
//! inputs and are produced with magnitude ≤ 2.
//!
//! # Variable time
//! Every addition and doubling here branches on its inputs (identity, equal or opposite
//! points): they are `_vartime` and meant for public data only.

use super::constants::{BETA, G_X, G_Y};
use super::curve_field::CurveField;
use super::field::FieldElement;
use super::jacobian::{Jacobian, MAX_COORD_MAGNITUDE};

/// A point in affine coordinates `(x, y)`, or the identity when `infinity` is set (then
/// `x` and `y` are meaningless, conventionally zero).
///
/// `PartialEq` compares points (value equality of coordinates, identity equals
/// identity).
#[derive(Clone, Copy, Debug, Default)]
pub struct AffinePoint {
    /// x coordinate.
    pub x: FieldElement,
    /// y coordinate.
    pub y: FieldElement,
    /// Whether this is the point at infinity.
    pub infinity: bool,
}

/// A point in Jacobian coordinates over [`FieldElement`] (see [`Jacobian`]).
pub type JacobianPoint = Jacobian<FieldElement>;

impl PartialEq for AffinePoint {
    fn eq(&self, other: &Self) -> bool {
        match (self.infinity, other.infinity) {
            (true, true) => true,
            (false, false) => self.x.eq_vartime(&other.x) && self.y.eq_vartime(&other.y),
            _ => false,
        }
    }
}

impl Eq for AffinePoint {}

/// `x³ + 7` (magnitude 2). Input magnitude ≤ 8.
#[inline]
#[cfg(any(test, feature = "internals"))]
fn curve_rhs(x: &FieldElement) -> FieldElement {
    x.square().mul(x).add(&super::constants::CURVE_B)
}

/// `2^128·G`, computed once: the batch equation splits G's scalar at 2^128 over G and this
/// point, and Strauss's kernel keeps fixed tables of both.
pub fn g128() -> &'static AffinePoint {
    static G128: std::sync::OnceLock<AffinePoint> = std::sync::OnceLock::new();
    G128.get_or_init(|| {
        let mut p = JacobianPoint::from_affine(&AffinePoint::GENERATOR);
        for _ in 0..128 {
            p = p.double_vartime();
        }
        p.to_affine_vartime()
    })
}

/// Appends, for every point, its odd multiples `P, 3P, 5P, …, (2·len − 1)·P` in affine form to
/// `out` (`len` entries per point, in input order). All tables share one inversion
/// ([`JacobianPoint::batch_to_affine_vartime`]). `jac` is scratch.
///
/// Strauss's fixed tables of G and 2^128·G are built this way, once (64 entries each: one
/// inversion, where the kernels' batch-affine builder would pay one a round); it is also the
/// reference the kernels' builder is tested against (`msm::table`).
///
/// Points must not be the identity.
///
/// # Variable time
/// Public data only.
pub(crate) fn odd_multiples_vartime(
    points: &[AffinePoint],
    len: usize,
    jac: &mut Vec<JacobianPoint>,
    out: &mut Vec<AffinePoint>,
) {
    jac.clear();
    for p in points {
        debug_assert!(!p.is_infinity());
        let p1 = JacobianPoint::from_affine(p);
        let p2 = p1.double_vartime();
        let mut t = p1;
        jac.push(t);
        for _ in 1..len {
            t = t.add_vartime(&p2);
            jac.push(t);
        }
    }
    JacobianPoint::batch_to_affine_vartime(jac, out);
}

impl AffinePoint {
    /// The generator G (see [`super::constants::G_X`] for its provenance).
    pub const GENERATOR: Self = Self {
        x: G_X,
        y: G_Y,
        infinity: false,
    };
    /// The point at infinity.
    pub const IDENTITY: Self = Self {
        x: FieldElement::ZERO,
        y: FieldElement::ZERO,
        infinity: true,
    };

    /// BIP-340 `lift_x`: the point with this x and an even y, or `None` if x³ + 7 is not
    /// a square (no such point).
    ///
    /// # Magnitude
    /// `x`: magnitude ≤ 8; the result's coordinates are normalized.
    ///
    /// # Variable time
    /// Square root and parity fix-up branch on the input.
    #[cfg(any(test, feature = "internals"))]
    pub fn lift_x_vartime(x: &FieldElement) -> Option<Self> {
        let y = curve_rhs(x).sqrt_vartime()?;
        let y = if y.is_odd() {
            y.negate(1).normalize()
        } else {
            y
        };
        Some(Self {
            x: x.normalize(),
            y,
            infinity: false,
        })
    }

    /// [`Self::lift_x_vartime`] on 32 big-endian bytes; also `None` if x `≥ p` (BIP-340
    /// rejects such keys rather than reducing them).
    ///
    /// # Variable time
    /// As [`Self::lift_x_vartime`].
    #[cfg(any(test, feature = "internals"))]
    pub fn lift_x_bytes_vartime(x: &[u8; 32]) -> Option<Self> {
        Self::lift_x_vartime(&FieldElement::from_bytes(x)?)
    }

    /// Whether `y² = x³ + 7` holds (false for the identity).
    ///
    /// # Variable time
    /// Branches on the comparison.
    #[cfg(any(test, feature = "internals"))]
    pub fn is_on_curve_vartime(&self) -> bool {
        !self.infinity && self.y.square().eq_vartime(&curve_rhs(&self.x))
    }

    /// `−self = (x, −y)`; the identity stays the identity.
    ///
    /// # Magnitude
    /// Input coordinates ≤ 4; output normalized.
    pub fn neg(&self) -> Self {
        if self.infinity {
            return Self::IDENTITY;
        }
        Self {
            x: self.x.normalize(),
            y: self.y.negate(MAX_COORD_MAGNITUDE).normalize(),
            infinity: false,
        }
    }

    /// The endomorphism φ(x, y) = (β·x, y), which equals λ·(x, y) (see
    /// [`super::constants::BETA`]); the identity maps to itself.
    ///
    /// # Magnitude
    /// Input coordinates ≤ 4; output normalized.
    pub fn endomorphism(&self) -> Self {
        if self.infinity {
            return Self::IDENTITY;
        }
        Self {
            x: self.x.mul(&BETA).normalize(),
            y: self.y.normalize(),
            infinity: false,
        }
    }

    /// Whether this is the point at infinity.
    #[inline]
    pub fn is_infinity(&self) -> bool {
        self.infinity
    }

    /// SEC 1 compressed encoding: `02`/`03` (even/odd y) followed by x, 33 bytes. The
    /// identity, which has no such encoding, gives 33 zero bytes.
    #[cfg(any(test, feature = "internals"))]
    pub fn to_compressed(&self) -> [u8; 33] {
        let mut out = [0u8; 33];
        if self.infinity {
            return out;
        }
        let y = self.y.normalize();
        out[0] = if y.is_odd() { 0x03 } else { 0x02 };
        out[1..].copy_from_slice(&self.x.to_bytes());
        out
    }

    /// Parses a SEC 1 compressed point; `None` for a bad prefix, x `≥ p`, or an x with
    /// no point on the curve.
    ///
    /// # Variable time
    /// Square root branches on the input.
    #[cfg(any(test, feature = "internals"))]
    pub fn from_compressed(b: &[u8; 33]) -> Option<Self> {
        let odd = match b[0] {
            0x02 => false,
            0x03 => true,
            _ => return None,
        };
        let x_bytes: &[u8; 32] = b[1..].try_into().ok()?;
        let p = Self::lift_x_bytes_vartime(x_bytes)?;
        Some(if odd { p.neg() } else { p })
    }
}

impl<F: CurveField> Jacobian<F> {
    /// `(x, y, 1)`, or the identity.
    #[inline]
    pub fn from_affine(a: &AffinePoint) -> Self {
        if a.infinity {
            return Self::IDENTITY;
        }
        Self::from_xy(&F::from_fe(&a.x), &F::from_fe(&a.y))
    }

    /// `self + b` for an affine `b` ([`Jacobian::add_xy_vartime`]). Cost: 8M + 3S.
    ///
    /// # Magnitude
    /// Inputs ≤ 4; outputs magnitude 1.
    ///
    /// # Variable time
    /// Branches on the identity and the exceptional cases.
    #[inline]
    pub fn add_affine_vartime(&self, b: &AffinePoint) -> Self {
        if b.infinity {
            return *self;
        }
        self.add_xy_vartime(&F::from_fe(&b.x), &F::from_fe(&b.y))
    }

    /// From a [`JacobianPoint`] (coordinates of magnitude ≤ 4).
    #[inline]
    pub fn from_jacobian(p: &JacobianPoint) -> Self {
        if p.is_infinity() {
            return Self::IDENTITY;
        }
        Self {
            x: F::from_fe(&p.x),
            y: F::from_fe(&p.y),
            z: F::from_fe(&p.z),
            infinity: false,
        }
    }

    /// The same point as a [`JacobianPoint`] (coordinates of magnitude ≤ this one's).
    #[inline]
    pub fn to_jacobian(&self) -> JacobianPoint {
        if self.is_infinity() {
            return JacobianPoint::IDENTITY;
        }
        JacobianPoint {
            x: self.x.to_fe(),
            y: self.y.to_fe(),
            z: self.z.to_fe(),
            infinity: false,
        }
    }
}

impl JacobianPoint {
    /// Whether both stand for the same point (cross-multiplied, no inversion).
    ///
    /// # Variable time
    /// Branches on the comparisons.
    #[cfg(any(test, feature = "internals"))]
    pub fn eq_vartime(&self, other: &Self) -> bool {
        match (self.is_infinity(), other.is_infinity()) {
            (true, true) => return true,
            (false, false) => {}
            _ => return false,
        }
        let z1z1 = self.z.square();
        let z2z2 = other.z.square();
        self.x.mul(&z2z2).eq_vartime(&other.x.mul(&z1z1))
            && self
                .y
                .mul(&z2z2)
                .mul(&other.z)
                .eq_vartime(&other.y.mul(&z1z1).mul(&self.z))
    }

    /// The affine form `(X/Z², Y/Z³)` (one inversion).
    ///
    /// # Magnitude
    /// Output normalized.
    ///
    /// # Variable time
    /// Inversion and identity check branch on the input.
    pub fn to_affine_vartime(&self) -> AffinePoint {
        if self.is_infinity() {
            return AffinePoint::IDENTITY;
        }
        self.affine_with_zinv(&self.z.invert_vartime())
    }

    #[inline]
    fn affine_with_zinv(&self, zinv: &FieldElement) -> AffinePoint {
        let zinv2 = zinv.square();
        AffinePoint {
            x: self.x.mul(&zinv2).normalize(),
            y: self.y.mul(&zinv2).mul(zinv).normalize(),
            infinity: false,
        }
    }

    /// Converts many points to affine with one shared inversion (Montgomery's trick):
    /// `out` is cleared and receives one affine point per input, in order; identities
    /// stay identities.
    ///
    /// # Magnitude
    /// Outputs normalized.
    ///
    /// # Variable time
    /// Branches on which inputs are the identity.
    pub fn batch_to_affine_vartime(points: &[Self], out: &mut Vec<AffinePoint>) {
        out.clear();
        let mut zinv: Vec<FieldElement> = points
            .iter()
            .map(|p| if p.infinity { FieldElement::ZERO } else { p.z })
            .collect();
        let mut scratch = Vec::with_capacity(points.len());
        // Zero Z (identity) stays zero; every other Z is inverted.
        FieldElement::batch_invert_vartime(&mut zinv, &mut scratch);
        out.extend(points.iter().zip(&zinv).map(|(p, zi)| {
            if zi.is_zero() {
                AffinePoint::IDENTITY
            } else {
                p.affine_with_zinv(zi)
            }
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_multiples_agree() {
        let g = AffinePoint::GENERATOR;
        let gj = JacobianPoint::from_affine(&g);
        let g2 = gj.double_vartime();
        assert!(g2.eq_vartime(&gj.add_affine_vartime(&g)));
        assert!(g2.eq_vartime(&gj.add_vartime(&gj)));
        let g3 = g2.add_affine_vartime(&g);
        assert!(g3.eq_vartime(&g2.add_vartime(&gj)));
        assert!(g3.to_affine_vartime().is_on_curve_vartime());
        assert!(gj.add_affine_vartime(&g.neg()).is_infinity());
        assert!(gj.add_vartime(&gj.neg()).is_infinity());
        assert!(JacobianPoint::IDENTITY
            .add_affine_vartime(&g)
            .eq_vartime(&gj));
        assert_eq!(AffinePoint::from_compressed(&g.to_compressed()), Some(g));
        assert_eq!(AffinePoint::lift_x_vartime(&g.x), Some(g));
    }
}
