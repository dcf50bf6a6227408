//! The square-root chain's field element under `cfg(nostr_verify_field32)` (wasm32): nine
//! limbs in radix 2^29, for the 253 squarings and 13 multiplications of
//! [`crate::arithmetic::field::sqrt_chain`] and nothing else.
//!
//! A 10×26 squaring is 55 limb products plus 10 multiplications of the fold; in radix 2^29 it
//! is 45 and 9, and V8 runs `i64.mul` at one a cycle on x86-64. The chain needs only
//! multiplication and squaring of values that came out of one, so the limbs can be kept tight
//! (inputs and outputs below 2^29 + 2^8, the top limb below 2^24) and no magnitudes are tracked:
//! that is what lets nine 29-bit limbs fit the 64-bit columns (the general 10×26 element accepts
//! magnitude 8 at a multiplication's inputs, which 29-bit limbs could not). Values enter from
//! canonical words and leave as normalized field elements, once per root.
//!
//! # Bounds
//! Inputs: limbs 0..7 < 2^29 + 2^8, limb 8 < 2^24, so the value is < 2^256.01. A product of
//! two limbs is < 2^58.01, and a column of at most nine products is < 2^61.2 (a squaring's
//! merged `2·a[i]·a[j]` is < 2^59.01, at most four of them and one square a column).
//! [`Chain29::reduce`] argues the rest; outputs obey the input bounds.

use crate::arithmetic::field::{ChainOps, FieldElement, FieldElement10x26};

/// 2^29 − 1: mask of one limb.
const M29: u64 = (1 << 29) - 1;
/// 2^24 − 1: mask of the top limb (bits 232..256).
const M24: u64 = (1 << 24) - 1;
/// 2^261 mod p = 2^37 + 2^5·977: its low limb …
const R261_LO: u64 = 32 * 977;
/// … and the part one limb up (2^37 = 2^8·2^29).
const R261_HI: u64 = 1 << 8;
/// 2^256 mod p = 2^32 + 977: its low limb …
const R256_LO: u64 = 977;
/// … and the part one limb up (2^32 = 2^3·2^29).
const R256_HI: u64 = 1 << 3;

/// A field element mod p in nine limbs of radix 2^29 (limbs 0..7 < 2^29 + 2^8, limb 8 <
/// 2^24; see the module's bounds).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Chain29([u64; 9]);

impl Chain29 {
    /// From a value `< 2^256` given as four little-endian words (any value; the chain does not
    /// need it reduced).
    #[inline(always)]
    pub(crate) fn from_words(w: &[u64; 4]) -> Self {
        let mut l = [0u64; 9];
        for (i, l) in l.iter_mut().enumerate() {
            let bit = 29 * i;
            let (word, shift) = (bit / 64, bit % 64);
            let mut v = w[word] >> shift;
            if shift > 64 - 29 && word < 3 {
                v |= w[word + 1] << (64 - shift);
            }
            *l = v & M29;
        }
        Self(l)
    }

    /// The value as a normalized field element. After a carry pass the value is < 2^256 +
    /// 2^232, so when its bit 256 is set its low 256 bits are < 2^232: regrouped into 10×26
    /// limbs with bit 256 as the top limb's bit 22, the limbs are carried (the top limb at most
    /// 2^22), and the 10×26 field's own subtraction of p finishes
    /// ([`FieldElement10x26::normalize_carried`]).
    #[inline(always)]
    pub(crate) fn to_fe(self) -> FieldElement {
        let mut l = self.0;
        for k in 0..8 {
            l[k + 1] += l[k] >> 29;
            l[k] &= M29;
        }
        // The low 256 bits as words, and bit 256 (limb 8 ≤ 2^24 now).
        let mut w = [0u64; 4];
        for (i, &l) in l.iter().enumerate() {
            let bit = 29 * i;
            let (word, shift) = (bit / 64, bit % 64);
            w[word] |= l << shift;
            if shift > 64 - 29 && word < 3 {
                w[word + 1] |= l >> (64 - shift);
            }
        }
        let top = (l[8] >> 24) as u32;
        let mut limbs = FieldElement10x26::from_u64x4(&w).limbs();
        limbs[9] |= top << 22;
        let n = FieldElement10x26::from_limbs(limbs).normalize_carried();
        FieldElement::from_limbs_unchecked(n.limbs())
    }

    /// The limbs (tests).
    #[cfg(test)]
    fn limbs(&self) -> [u64; 9] {
        self.0
    }

    /// Product mod p, within the input bounds.
    #[inline(always)]
    pub(crate) fn mul(&self, rhs: &Self) -> Self {
        let (a, b) = (&self.0, &rhs.0);
        let mut c = [0u64; 17];
        for i in 0..9 {
            for j in 0..9 {
                c[i + j] += a[i] * b[j];
            }
        }
        Self::reduce(c)
    }

    /// Square mod p, within the input bounds (symmetric products merged).
    #[inline(always)]
    pub(crate) fn square(&self) -> Self {
        let a = &self.0;
        let mut c = [0u64; 17];
        for i in 0..9 {
            c[2 * i] += a[i] * a[i];
            let d = 2 * a[i];
            for j in i + 1..9 {
                c[i + j] += d * a[j];
            }
        }
        Self::reduce(c)
    }

    /// The product whose 17 columns (worth 2^(29k), each < 2^61.2) are `c`, within the
    /// input bounds.
    ///
    /// 1. Carry the high columns only, 9..16, starting with column 8's bits from 2^29 up
    ///    (< 2^32.2): digits < 2^29, carries < 2^32.3. Column 16 is `a[8]·b[8]` < 2^48, so
    ///    digit 17 (the last carry) is < 2^19.1. The low columns stay as they are: carrying
    ///    all 17 first cost 26 more operations a reduction, on the critical path of every
    ///    squaring (`docs/experiments.md`, "Shorter carry chains").
    /// 2. Fold digits 9..17 (worth 2^261 and up) into the uncarried low columns with
    ///    2^261 ≡ 31264 + 2^8·2^29: digit 9 + k adds < 2^44 to limb k and < 2^37 to limb
    ///    k + 1; digit 17 adds < 2^34.1 to limb 8 and gives limb 9 (< 2^27.1). Limbs 0..7 stay
    ///    below 2^61.2 + 2^44.1, so nothing overflows. Carry limbs 0..8 (carries < 2^33):
    ///    limbs 0..7 < 2^29, limb 8 whole (< 2^37.3).
    /// 3. Bits 256 and up (limb 8 from bit 24, < 2^13.3, and limb 9 shifted up by 5, < 2^32.1)
    ///    are < 2^32.2; fold them with 2^256 ≡ 977 + 2^3·2^29 (< 2^42.2 to limb 0, < 2^35.2
    ///    to limb 1) and carry limbs 0 and 1 only: limb 0's carry is < 2^13.3, limb 1's <
    ///    2^6.3, so limb 2 ends below 2^29 + 2^8 and the rest are as step 2 left them (limb 8
    ///    < 2^24). The carry through limbs 2..8 is left to the next reduction (2.5 % of a
    ///    batch in node).
    #[inline(always)]
    fn reduce(c: [u64; 17]) -> Self {
        // Step 1: carry the high columns 9..16 only.
        let mut d = [0u64; 9];
        let mut carry = c[8] >> 29;
        for k in 0..8 {
            let t = c[9 + k] + carry;
            d[k] = t & M29;
            carry = t >> 29;
        }
        let d17 = carry;
        // Step 2: fold them into the low columns, still uncarried.
        let mut t = [0u64; 9];
        t.copy_from_slice(&c[..9]);
        t[8] &= M29;
        for k in 0..8 {
            t[k] += d[k] * R261_LO;
            t[k + 1] += d[k] * R261_HI;
        }
        t[8] += d17 * R261_LO;
        let t9 = d17 * R261_HI;
        for k in 0..8 {
            t[k + 1] += t[k] >> 29;
            t[k] &= M29;
        }
        // Step 3.
        let x = (t[8] >> 24) + (t9 << 5);
        t[8] &= M24;
        t[0] += x * R256_LO;
        t[1] += x * R256_HI;
        for k in 0..2 {
            t[k + 1] += t[k] >> 29;
            t[k] &= M29;
        }
        Self(t)
    }
}

/// `N` elements stepped through the square-root chain together (one on wasm32).
#[derive(Clone, Copy)]
pub(crate) struct Lanes29<const N: usize>(pub [Chain29; N]);

impl<const N: usize> ChainOps for Lanes29<N> {
    #[inline(always)]
    fn chain_square(&self) -> Self {
        let mut r = self.0;
        for v in r.iter_mut() {
            *v = v.square();
        }
        Lanes29(r)
    }
    #[inline(always)]
    fn chain_mul(&self, rhs: &Self) -> Self {
        let mut r = self.0;
        for (v, w) in r.iter_mut().zip(&rhs.0) {
            *v = v.mul(w);
        }
        Lanes29(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;
    use num_traits::{One, Zero};
    use rand::{Rng, RngCore, SeedableRng};

    fn p() -> BigUint {
        (BigUint::one() << 256u32) - (BigUint::one() << 32u32) - 977u32
    }

    fn raw(a: &Chain29) -> BigUint {
        a.limbs()
            .iter()
            .enumerate()
            .fold(BigUint::zero(), |acc, (i, &l)| {
                acc + (BigUint::from(l) << (29 * i))
            })
    }

    fn words(v: &BigUint) -> [u64; 4] {
        let mut w = [0u64; 4];
        for (i, d) in v.to_u64_digits().into_iter().enumerate() {
            w[i] = d;
        }
        w
    }

    /// `v < 2^256` as 32 big-endian bytes.
    fn bytes(v: &BigUint) -> [u8; 32] {
        let mut o = [0u8; 32];
        let b = v.to_bytes_be();
        o[32 - b.len()..].copy_from_slice(&b);
        o
    }

    /// The largest limb values allowed.
    const BOUND: u64 = M29 + (1 << 8);
    const BOUND_TOP: u64 = M24;

    /// Limbs within the input bounds, each at its bound a quarter of the time.
    fn random(rng: &mut impl RngCore) -> Chain29 {
        let mut l = [0u64; 9];
        for (i, x) in l.iter_mut().enumerate() {
            let bound = if i == 8 { BOUND_TOP } else { BOUND };
            *x = if rng.gen_range(0..4) == 0 {
                bound
            } else {
                rng.gen_range(0..=bound)
            };
        }
        Chain29(l)
    }

    fn in_bounds(a: &Chain29) -> bool {
        a.0[..8].iter().all(|&l| l <= BOUND) && a.0[8] <= BOUND_TOP
    }

    fn check(a: &Chain29, b: &Chain29) {
        let p = p();
        let (va, vb) = (raw(a), raw(b));
        let m = a.mul(b);
        assert!(in_bounds(&m), "mul output bounds: {:?}", m.0);
        assert_eq!(raw(&m) % &p, (&va * &vb) % &p, "mul {:?} {:?}", a.0, b.0);
        let s = a.square();
        assert!(in_bounds(&s), "square output bounds: {:?}", s.0);
        assert_eq!(raw(&s) % &p, (&va * &va) % &p, "square {:?}", a.0);
        assert_eq!(a.to_fe().to_bytes(), bytes(&(&va % &p)), "to_fe {:?}", a.0);
    }

    #[test]
    fn chain29_at_the_bounds_and_edges() {
        let p = p();
        let mut max = Chain29([BOUND; 9]);
        max.0[8] = BOUND_TOP;
        let top: BigUint = (BigUint::one() << 256u32) - 1u32;
        let mut edges = vec![max, Chain29([0; 9])];
        for v in [
            BigUint::zero(),
            BigUint::one(),
            &p - 1u32,
            p.clone(),
            &p + 1u32,
            top.clone(),
            &top - 1u32,
        ] {
            let e = Chain29::from_words(&words(&v));
            assert_eq!(raw(&e), v);
            assert!(in_bounds(&e));
            edges.push(e);
        }
        for a in &edges {
            for b in &edges {
                check(a, b);
            }
        }
    }

    #[test]
    fn chain29_random_limbs() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(29);
        for _ in 0..20_000 {
            let (a, b) = (random(&mut rng), random(&mut rng));
            check(&a, &b);
        }
    }

    #[test]
    fn chain29_square_roots_match_the_field() {
        use crate::arithmetic::field::sqrt_chain;
        let mut rng = rand::rngs::StdRng::seed_from_u64(30);
        let p = p();
        let e = (&p + 1u32) >> 2u32;
        for i in 0..200 {
            let mut b = [0u8; 32];
            rng.fill_bytes(&mut b);
            if i == 0 {
                b = [0xff; 32];
            }
            let v = BigUint::from_bytes_be(&b) % &p;
            let x = FieldElement::from_bytes(&bytes(&v)).unwrap();
            let Lanes29([y]) = sqrt_chain(Lanes29([Chain29::from_words(&words(&v))]));
            assert_eq!(y.to_fe().to_bytes(), bytes(&v.modpow(&e, &p)));
            assert_eq!(y.to_fe().to_bytes(), sqrt_chain(x).normalize().to_bytes());
        }
    }
}
