//! Jacobian points over any [`CurveField`]: the one copy of the doubling and addition formulas.
//!
//! Formulas are the standard ones for a = 0 curves (Bernstein–Lange, Explicit-Formulas
//! Database, "dbl-2009-l"-style doubling with 3M + 4S and "madd-2007-bl"/"add-2007-bl"
//! additions without the Z² caching), written in libsecp256k1's style
//! (`src/group_impl.h`): each line ends with the magnitude of its result in parentheses (the
//! rules are [`CurveField`]'s), and the operation count is on the function.
//!
//! [`crate::arithmetic::group::JacobianPoint`] is this type over the crate's
//! [`crate::arithmetic::field::FieldElement`] (with what only it needs: inversion to affine,
//! equality); the portable kernels use it over their representation
//! (`arithmetic::kernel::KernelJacobian`: 4×64-bit words natively, 10×26-bit limbs on wasm32).
//!
//! # Inlining
//! The doublings and additions are `#[inline(always)]` natively (the chains of Strauss and
//! Pippenger inline them, in words, into each arm's build) and left to the compiler under
//! `cfg(nostr_verify_field32)`, as they were before the formulas were shared (wasm32 has no
//! second build to inline into; see `docs/experiments.md`, "Inlined point formulas in wasm").
//!
//! # Magnitude
//! Coordinates have magnitude ≤ 4 as inputs ([`MAX_COORD_MAGNITUDE`]) and are produced with
//! magnitude ≤ 2.
//!
//! # Variable time
//! Every addition and doubling here branches on its inputs (identity, equal or opposite
//! points): they are `_vartime` and meant for public data only.

use super::curve_field::CurveField;

/// The largest coordinate magnitude the point formulas accept.
pub const MAX_COORD_MAGNITUDE: u32 = 4;

/// A point in Jacobian coordinates `(X, Y, Z)`, standing for the affine point
/// `(X/Z², Y/Z³)`; the identity when `infinity` is set or `Z ≡ 0`.
#[derive(Clone, Copy, Debug)]
pub struct Jacobian<F> {
    /// X coordinate.
    pub x: F,
    /// Y coordinate.
    pub y: F,
    /// Z coordinate.
    pub z: F,
    /// Whether this is the point at infinity.
    pub infinity: bool,
}

impl<F: CurveField> Jacobian<F> {
    /// The point at infinity.
    pub const IDENTITY: Self = Self {
        x: F::ZERO,
        y: F::ONE,
        z: F::ZERO,
        infinity: true,
    };

    /// `(x, y, 1)` for coordinates of magnitude ≤ 4, not the identity.
    #[inline(always)]
    pub fn from_xy(x: &F, y: &F) -> Self {
        Self {
            x: *x,
            y: *y,
            z: F::ONE,
            infinity: false,
        }
    }

    /// Whether this is the point at infinity (flag set or Z ≡ 0).
    #[inline(always)]
    pub fn is_infinity(&self) -> bool {
        self.infinity || self.z.normalizes_to_zero()
    }

    /// `−self = (X, −Y, Z)`.
    ///
    /// # Magnitude
    /// Input coordinates ≤ 4; output Y has magnitude 1.
    #[inline]
    #[cfg(any(test, feature = "internals"))]
    pub fn neg(&self) -> Self {
        Self {
            x: self.x,
            y: self.y.negate(MAX_COORD_MAGNITUDE).normalize_weak(),
            z: self.z,
            infinity: self.infinity,
        }
    }

    /// `2·self`. Cost: 3M + 4S.
    ///
    /// With S = Y², M = 3X², T = 4X·S:
    /// X₃ = M² − 2T, Y₃ = M·(T − X₃) − 8S², Z₃ = 2Y·Z.
    /// (a = 0, so the usual `a·Z⁴` term vanishes.)
    ///
    /// # Magnitude
    /// Inputs ≤ 4; outputs X₃, Y₃ magnitude 1, Z₃ magnitude 2.
    ///
    /// # Variable time
    /// Branches on the identity flag. An input with Z ≡ 0 (the identity without its
    /// flag) or Y ≡ 0 gives Z₃ ≡ 0, the identity, without a check (secp256k1 has no
    /// point with y = 0, so doubling a finite point never gives the identity).
    #[rustfmt::skip]
    #[cfg_attr(not(nostr_verify_field32), inline(always))]
    pub fn double_vartime(&self) -> Self {
        if self.infinity {
            return Self::IDENTITY;
        }
        let z3 = self.y.mul(&self.z).mul_int(2);                 // Z₃ = 2·Y·Z          (2)
        let s = self.y.square();                                 // S = Y²              (1)
        let m = self.x.square().mul_int(3);                      // M = 3·X²            (3)
        let t = self.x.mul(&s).mul_int(4);                       // T = 4·X·S           (4)
        let x3 = m.square().sub(&t.mul_int(2), 8)                // X₃ = M² − 2T        (1 + 9)
            .normalize_weak();                                   //                     (1)
        let y3 = m.mul(&t.sub(&x3, 1))                           // M·(T − X₃)          (1)
            .sub(&s.square().mul_int(8), 8)                      //   − 8·S²            (1 + 9)
            .normalize_weak();                                   //                     (1)
        Self { x: x3, y: y3, z: z3, infinity: false }
    }

    /// `self + (bx, by)` for an affine point, not the identity, of coordinates of magnitude
    /// ≤ 4 ("mixed" addition). Cost: 8M + 3S.
    ///
    /// With U₂ = x₂·Z₁², S₂ = y₂·Z₁³, H = U₂ − X₁, R = S₂ − Y₁:
    /// X₃ = R² − H³ − 2·X₁·H², Y₃ = R·(X₁·H² − X₃) − Y₁·H³, Z₃ = Z₁·H.
    /// H ≡ 0 means equal x: then R ≡ 0 is a doubling and anything else is P + (−P).
    ///
    /// # Magnitude
    /// Inputs ≤ 4; outputs magnitude 1.
    ///
    /// # Variable time
    /// Branches on the identity and the exceptional cases (equal x: a doubling or the
    /// identity).
    #[rustfmt::skip]
    #[cfg_attr(not(nostr_verify_field32), inline(always))]
    pub fn add_xy_vartime(&self, bx: &F, by: &F) -> Self {
        if self.is_infinity() {
            return Self::from_xy(bx, by);
        }
        let z1z1 = self.z.square();                              // Z₁²                 (1)
        let u2 = bx.mul(&z1z1);                                  // U₂ = x₂·Z₁²         (1)
        let s2 = by.mul(&z1z1).mul(&self.z);                     // S₂ = y₂·Z₁³         (1)
        self.finish_add(self.x, self.y, MAX_COORD_MAGNITUDE, u2, s2, self.z)
    }

    /// `self + b`. Cost: 12M + 4S.
    ///
    /// With U₁ = X₁·Z₂², U₂ = X₂·Z₁², S₁ = Y₁·Z₂³, S₂ = Y₂·Z₁³, H = U₂ − U₁, R = S₂ − S₁:
    /// X₃ = R² − H³ − 2·U₁·H², Y₃ = R·(U₁·H² − X₃) − S₁·H³, Z₃ = Z₁·Z₂·H.
    ///
    /// # Magnitude
    /// Inputs ≤ 4; outputs magnitude 1.
    ///
    /// # Variable time
    /// Branches on the identity and the exceptional cases.
    #[rustfmt::skip]
    #[cfg_attr(not(nostr_verify_field32), inline(always))]
    pub fn add_vartime(&self, b: &Self) -> Self {
        if b.is_infinity() {
            return *self;
        }
        if self.is_infinity() {
            return *b;
        }
        let z1z1 = self.z.square();                              // Z₁²                 (1)
        let z2z2 = b.z.square();                                 // Z₂²                 (1)
        let u1 = self.x.mul(&z2z2);                              // U₁ = X₁·Z₂²         (1)
        let u2 = b.x.mul(&z1z1);                                 // U₂ = X₂·Z₁²         (1)
        let s1 = self.y.mul(&z2z2).mul(&b.z);                    // S₁ = Y₁·Z₂³         (1)
        let s2 = b.y.mul(&z1z1).mul(&self.z);                    // S₂ = Y₂·Z₁³         (1)
        self.finish_add(u1, s1, 1, u2, s2, self.z.mul(&b.z))     // Z₁·Z₂               (1)
    }

    /// The common tail of the additions: with H = U₂ − U₁ and R = S₂ − S₁,
    /// X₃ = R² − H³ − 2·U₁·H², Y₃ = R·(U₁·H² − X₃) − S₁·H³, Z₃ = Z·H, where `z` is Z₁ (mixed)
    /// or Z₁·Z₂, and `m1` bounds the magnitudes of U₁ and S₁. H ≡ 0 means equal x: R ≡ 0 is a
    /// doubling of `self`, anything else P + (−P).
    #[rustfmt::skip]
    #[cfg_attr(not(nostr_verify_field32), inline(always))]
    fn finish_add(&self, u1: F, s1: F, m1: u32, u2: F, s2: F, z: F) -> Self {
        let h = u2.sub(&u1, m1);                                 // H = U₂ − U₁         (≤ 6)
        let r = s2.sub(&s1, m1);                                 // R = S₂ − S₁         (≤ 6)
        if h.normalizes_to_zero() {
            return if r.normalizes_to_zero() { self.double_vartime() } else { Self::IDENTITY };
        }
        let h2 = h.square();                                     // H²                  (1)
        let h3 = h.mul(&h2);                                     // H³                  (1)
        let v = u1.mul(&h2);                                     // V = U₁·H²           (1)
        let x3 = r.square()                                      // R²                  (1)
            .sub(&h3, 1)                                         //   − H³              (3)
            .sub(&v.mul_int(2), 2)                               //   − 2V              (6)
            .normalize_weak();                                   //                     (1)
        let y3 = r.mul(&v.sub(&x3, 1))                           // R·(V − X₃)          (1)
            .sub(&s1.mul(&h3), 1)                                //   − S₁·H³           (3)
            .normalize_weak();                                   //                     (1)
        Self { x: x3, y: y3, z: z.mul(&h), infinity: false }     // Z₃ = Z·H            (1)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::arithmetic::field::FieldElement;
    use crate::arithmetic::group::{AffinePoint, JacobianPoint};
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// The reference: the chord-and-tangent rule in affine coordinates, one inversion a step
    /// (not the formulas under test).
    pub(crate) fn affine_add(p: &AffinePoint, q: &AffinePoint) -> AffinePoint {
        if p.infinity {
            return *q;
        }
        if q.infinity {
            return *p;
        }
        let lambda = if p.x.eq_vartime(&q.x) {
            if !p.y.eq_vartime(&q.y) {
                return AffinePoint::IDENTITY;
            }
            // 3x² / 2y.
            let x2 = p.x.square();
            x2.mul_int(3).mul(&p.y.mul_int(2).invert_vartime())
        } else {
            let dy = q.y.add(&p.y.negate(1));
            let dx = q.x.add(&p.x.negate(1));
            dy.mul(&dx.invert_vartime())
        };
        let x3 = lambda
            .square()
            .add(&p.x.negate(1))
            .add(&q.x.negate(1))
            .normalize();
        let y3 = lambda
            .mul(&p.x.add(&x3.negate(1)))
            .add(&p.y.negate(1))
            .normalize();
        AffinePoint {
            x: x3,
            y: y3,
            infinity: false,
        }
    }

    /// Random points in Jacobian form with a random Z.
    fn points(rng: &mut StdRng, n: usize) -> Vec<JacobianPoint> {
        let mut v = Vec::new();
        while v.len() < n {
            let mut b = [0u8; 32];
            rng.fill(&mut b);
            let Some(a) = AffinePoint::lift_x_bytes_vartime(&b) else {
                continue;
            };
            let a = if rng.gen() { a.neg() } else { a };
            // (x·z², y·z³, z) for a random z: the same point, not normalized to Z = 1.
            let mut zb = [0u8; 32];
            rng.fill(&mut zb);
            zb[0] &= 0x7f;
            let z = FieldElement::from_bytes_unchecked(&zb).normalize();
            let z2 = z.square();
            v.push(JacobianPoint {
                x: a.x.mul(&z2).normalize(),
                y: a.y.mul(&z2).mul(&z).normalize(),
                z,
                infinity: false,
            });
        }
        v
    }

    fn affine<F: CurveField>(p: &Jacobian<F>) -> AffinePoint {
        p.to_jacobian().to_affine_vartime()
    }

    fn same<F: CurveField>(got: &Jacobian<F>, want: &AffinePoint, what: &str) {
        assert_eq!(affine(got), *want, "{what}");
        assert_eq!(got.is_infinity(), want.infinity, "{what}: identity");
    }

    /// Every formula on `F` against the affine rule, and in chains (non-canonical
    /// coordinates feeding the next operation; in a debug build of [`FieldElement`] every
    /// magnitude bound is asserted on the way).
    fn formulas_agree<F: CurveField>(seed: u64) {
        let mut rng = StdRng::seed_from_u64(seed);
        let n = 40 * crate::arithmetic::scalar::tests::scale();
        let ps = points(&mut rng, n);
        let qs = points(&mut rng, n);
        for (p, q) in ps.iter().zip(&qs) {
            let (pa, qa) = (p.to_affine_vartime(), q.to_affine_vartime());
            let (pf, qf) = (
                Jacobian::<F>::from_jacobian(p),
                Jacobian::<F>::from_jacobian(q),
            );
            same(&pf, &pa, "round trip");
            same(&pf.double_vartime(), &affine_add(&pa, &pa), "double");
            same(&pf.add_vartime(&qf), &affine_add(&pa, &qa), "add");
            same(
                &pf.add_affine_vartime(&qa),
                &affine_add(&pa, &qa),
                "add affine",
            );
            let (qx, qy) = (F::from_fe(&qa.x), F::from_fe(&qa.y));
            same(
                &pf.add_xy_vartime(&qx, &qy),
                &affine_add(&pa, &qa),
                "add xy",
            );
            same(
                &pf.add_xy_vartime(&qx, &qy.negate(1).normalize_weak()),
                &affine_add(&pa, &qa.neg()),
                "add negated xy",
            );
            same(
                &Jacobian::<F>::IDENTITY.add_xy_vartime(&qx, &qy),
                &qa,
                "O + xy",
            );
            let (mut a, mut want) = (pf, pa);
            for k in 0..6 {
                a = a.double_vartime().add_vartime(&qf).add_affine_vartime(&qa);
                want = affine_add(&affine_add(&affine_add(&want, &want), &qa), &qa);
                same(&a, &want, &format!("chain {k}"));
            }
        }
    }

    /// The identity on either side, P + P and P + (−P) through every addition.
    fn exceptional_cases<F: CurveField>(seed: u64) {
        let mut rng = StdRng::seed_from_u64(seed);
        let id = Jacobian::<F>::IDENTITY;
        assert!(id.is_infinity() && id.double_vartime().is_infinity());
        assert!(id.to_jacobian().is_infinity());
        assert!(Jacobian::<F>::from_jacobian(&JacobianPoint::IDENTITY).is_infinity());
        assert!(Jacobian::<F>::from_affine(&AffinePoint::IDENTITY).is_infinity());
        for p in &points(&mut rng, 8) {
            let pa = p.to_affine_vartime();
            let pf = Jacobian::<F>::from_jacobian(p);
            same(&pf.add_vartime(&id), &pa, "p + O");
            same(&id.add_vartime(&pf), &pa, "O + p");
            same(&id.add_affine_vartime(&pa), &pa, "O + p (affine)");
            same(
                &pf.add_affine_vartime(&AffinePoint::IDENTITY),
                &pa,
                "p + O (affine)",
            );
            // The same point in another Z: a doubling; its negation: the identity.
            let p2 = Jacobian::<F>::from_affine(&pa);
            let double = affine_add(&pa, &pa);
            same(&pf.add_vartime(&p2), &double, "p + p");
            same(&pf.add_affine_vartime(&pa), &double, "p + p (affine)");
            assert!(pf.add_vartime(&p2.neg()).is_infinity(), "p + (−p)");
            assert!(
                pf.add_affine_vartime(&pa.neg()).is_infinity(),
                "p + (−p) (affine)"
            );
            assert!(pf.add_vartime(&pf.neg()).is_infinity(), "p + (−p), same Z");
        }
    }

    #[test]
    fn formulas_agree_with_the_affine_rule_in_limbs() {
        formulas_agree::<FieldElement>(0x4a63);
        exceptional_cases::<FieldElement>(0x4a66);
    }

    #[test]
    #[cfg(not(nostr_verify_field32))]
    fn formulas_agree_with_the_affine_rule_in_words() {
        use crate::arithmetic::words::FieldElement4x64;
        formulas_agree::<FieldElement4x64>(0x4a64);
        exceptional_cases::<FieldElement4x64>(0x4a65);
    }
}
