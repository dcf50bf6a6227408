//! `FieldElement` against `num-bigint` reference arithmetic mod p, on random inputs,
//! boundary values (0, 1, p − 1, p, 2^256 − 1, ...) and maximum-magnitude limbs.
//!
//! Counts scale with `SECP_DIFF_SCALE`. Run in debug too: there the magnitude checker
//! asserts every contract along the way.

mod common;

use common::bigint::{from_be as big_from_bytes, p, to_be as bytes_from_big};

use nostr_verify::arithmetic::field::{FieldElement, Limb, Limbs, LIMB_BITS, TOP_LIMB_BITS};
#[cfg(not(nostr_verify_field32))]
use nostr_verify::arithmetic::words::FieldElement4x64;
use num_bigint::BigUint;
use num_traits::{One, Zero};
use rand::{Rng, RngCore, SeedableRng};

/// A full limb's mask (2^52 − 1 in 5×52, 2^26 − 1 in 10×26: whichever `Repr` is compiled in).
const M_LIMB: Limb = (1 << LIMB_BITS) - 1;
/// The top limb's mask (2^48 − 1 or 2^22 − 1).
const M_TOP: Limb = (1 << TOP_LIMB_BITS) - 1;
/// 2^52 − 1, a boundary value for `from_u64`.
const M52: u64 = (1 << 52) - 1;

/// The integer the stored limbs stand for (not reduced).
fn raw_value(a: &FieldElement) -> BigUint {
    a.raw_limbs()
        .iter()
        .enumerate()
        .fold(BigUint::zero(), |acc, (i, &l)| {
            acc + (BigUint::from(l) << (LIMB_BITS as usize * i))
        })
}

/// The value mod p as the field element reports it.
fn value(a: &FieldElement) -> BigUint {
    let v = big_from_bytes(&a.to_bytes());
    assert!(v < p(), "to_bytes returned a value >= p");
    assert_eq!(v, raw_value(a) % p(), "to_bytes disagrees with the limbs");
    v
}

fn rng() -> rand::rngs::StdRng {
    let seed = std::env::var("FIELD_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_f1e1d);
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// Boundary values as 32 bytes: 0, 1, 2, p − 2, p − 1, p, p + 1, 2^256 − 1, 2^256 − 2, the
/// 2^256 mod p constant, limb-boundary powers of two and their neighbours.
fn boundary_bytes() -> Vec<[u8; 32]> {
    let p = p();
    let top: BigUint = (BigUint::one() << 256u32) - BigUint::one();
    let mut v: Vec<BigUint> = vec![
        BigUint::zero(),
        BigUint::one(),
        BigUint::from(2u32),
        BigUint::from(7u32),
        &p - 2u32,
        &p - 1u32,
        p.clone(),
        &p + 1u32,
        &p + BigUint::from(0x1_0000_03d0u64),
        top.clone(),
        &top - 1u32,
        BigUint::from(0x1_0000_03d1u64),
        (&p - 1u32) >> 1,
        (&p + 1u32) >> 1,
    ];
    for k in [52u32, 104, 156, 208, 255] {
        let b = BigUint::one() << k;
        v.push(&b - 1u32);
        v.push(b.clone());
        v.push(&b + 1u32);
    }
    v.iter().map(bytes_from_big).collect()
}

fn random_bytes(rng: &mut impl RngCore) -> [u8; 32] {
    let mut b = [0u8; 32];
    rng.fill_bytes(&mut b);
    // Bias some inputs towards the top of the range, where carries and p live.
    match rng.gen_range(0..8) {
        0 => b[..27].fill(0xff),
        1 => b[..20].fill(0),
        _ => {}
    }
    b
}

/// An element with random limbs of magnitude `m` (each limb uniform in its allowed
/// range, sometimes pinned to the bound itself).
fn random_with_magnitude(rng: &mut impl RngCore, m: u32) -> FieldElement {
    let m = m as Limb;
    let mut l: Limbs = Default::default();
    let top = l.len() - 1;
    for (i, x) in l.iter_mut().enumerate() {
        let bound = if i == top {
            2 * m * M_TOP
        } else {
            2 * m * M_LIMB
        };
        *x = match rng.gen_range(0..4) {
            0 => bound,
            _ => rng.gen_range(0..=bound),
        };
    }
    FieldElement::from_limbs_magnitude_unchecked(l, m as u32)
}

/// The largest limbs magnitude `m` allows.
fn max_with_magnitude(m: u32) -> FieldElement {
    let m = m as Limb;
    let mut l: Limbs = Default::default();
    l.fill(2 * m * M_LIMB);
    l[l.len() - 1] = 2 * m * M_TOP;
    FieldElement::from_limbs_magnitude_unchecked(l, m as u32)
}

/// Inputs of magnitude 1: boundary values (unreduced), then random ones.
fn inputs(n: usize) -> Vec<FieldElement> {
    let mut rng = rng();
    let mut v: Vec<FieldElement> = boundary_bytes()
        .iter()
        .map(FieldElement::from_bytes_unchecked)
        .collect();
    v.push(max_with_magnitude(1));
    for _ in 0..n {
        v.push(FieldElement::from_bytes_unchecked(&random_bytes(&mut rng)));
    }
    v
}

#[test]
fn bytes_parse_and_serialize() {
    let p = p();
    let mut rng = rng();
    let mut all = boundary_bytes();
    for _ in 0..2000 * common::scale() {
        all.push(random_bytes(&mut rng));
    }
    for b in &all {
        let x = big_from_bytes(b);
        let checked = FieldElement::from_bytes(b);
        assert_eq!(checked.is_some(), x < p, "from_bytes acceptance for {x:x}");
        if let Some(c) = checked {
            assert_eq!(c.to_bytes(), *b);
            assert_eq!(c.is_odd(), x.bit(0));
            assert_eq!(c.is_zero(), x.is_zero());
        }
        let u = FieldElement::from_bytes_unchecked(b);
        assert_eq!(
            raw_value(&u),
            x,
            "from_bytes_unchecked must keep the raw value"
        );
        assert_eq!(value(&u), &x % &p);
        let n = u.normalize();
        assert_eq!(
            raw_value(&n),
            &x % &p,
            "normalize must give the canonical limbs"
        );
        assert_eq!(n.to_limbs_normalized(), n.raw_limbs());
        assert_eq!(n.is_odd(), (&x % &p).bit(0));
        assert_eq!(n.is_zero(), (&x % &p).is_zero());
        assert_eq!(u.normalizes_to_zero(), (&x % &p).is_zero());
        assert_eq!(value(&u.normalize_weak()), &x % &p);
    }
}

#[test]
fn from_u64_and_limbs() {
    for v in [0u64, 1, 977, M52, M52 + 1, u64::MAX] {
        assert_eq!(value(&FieldElement::from_u64(v)), BigUint::from(v));
    }
    let p_minus_1 = FieldElement::from_bytes(&bytes_from_big(&(p() - 1u32))).expect("p - 1 < p");
    let l = p_minus_1.to_limbs_normalized();
    assert_eq!(FieldElement::from_limbs_unchecked(l), p_minus_1);
    assert_eq!(value(&FieldElement::from_limbs_unchecked(l)), p() - 1u32);
}

#[test]
fn add_negate_mul_int_match_bigint() {
    let p = p();
    let xs = inputs(300 * common::scale());
    let mut rng = rng();
    for (i, a) in xs.iter().enumerate() {
        let b = &xs[rng.gen_range(0..xs.len())];
        let j = (i * 7 + 3) % xs.len();
        let c = &xs[j];
        let (va, vb, vc) = (value(a), value(b), value(c));
        assert_eq!(value(&a.add(b)), (&va + &vb) % &p);
        assert_eq!(value(&a.negate(1)), (&p - &va) % &p);
        assert_eq!(value(&a.add(&b.negate(1))), (&va + &p - &vb) % &p);
        for k in [0u32, 1, 2, 3, 8, 31, 32] {
            assert_eq!(value(&a.mul_int(k)), (&va * k) % &p);
        }
        // Chains that climb magnitude: a + b + c (3), negate(3) (4), ·8 (32).
        let s = a.add(b).add(c);
        let n = s.negate(3);
        assert_eq!(value(&n), (&p * 2u32 - ((&va + &vb + &vc) % &p)) % &p);
        assert_eq!(
            value(&n.mul_int(8)),
            ((&p * 2u32 - ((&va + &vb + &vc) % &p)) * 8u32) % &p
        );
        assert!(a.add(&a.negate(1)).normalizes_to_zero());
        assert_eq!(a.eq_vartime(b), va == vb);
        assert!(a.mul_int(3).eq_vartime(&a.add(a).add(a)));
    }
}

#[test]
fn mul_square_match_bigint() {
    let p = p();
    let xs = inputs(1000 * common::scale());
    let mut rng = rng();
    for a in &xs {
        for _ in 0..4 {
            let b = &xs[rng.gen_range(0..xs.len())];
            let (va, vb) = (value(a), value(b));
            assert_eq!(value(&a.mul(b)), (&va * &vb) % &p);
        }
        let va = value(a);
        assert_eq!(value(&a.square()), (&va * &va) % &p);
        assert!(a.square().eq_vartime(&a.mul(a)));
    }
}

/// Every op on limbs at (and randomly below) the largest magnitude it accepts.
#[test]
fn maximum_magnitude_limbs() {
    let p = p();
    let mut rng = rng();
    for m in [1u32, 2, 4, 8] {
        let a = max_with_magnitude(m);
        let va = raw_value(&a) % &p;
        assert_eq!(value(&a.mul(&a)), (&va * &va) % &p, "mul at magnitude {m}");
        assert_eq!(
            value(&a.square()),
            (&va * &va) % &p,
            "square at magnitude {m}"
        );
        let out = a.square().raw_limbs();
        let top = out.len() - 1;
        assert!(
            out[..top].iter().all(|&l| l <= M_LIMB) && out[top] <= 2 * M_TOP,
            "square output magnitude 1"
        );
    }
    for m in [1u32, 8, 16, 31, 32] {
        let a = max_with_magnitude(m);
        let va = raw_value(&a) % &p;
        assert_eq!(raw_value(&a.normalize()), va, "normalize at magnitude {m}");
        assert_eq!(
            value(&a.normalize_weak()),
            va,
            "normalize_weak at magnitude {m}"
        );
        assert_eq!(a.normalizes_to_zero(), va.is_zero());
        if m < 32 {
            assert_eq!(value(&a.negate(m)), (&p - &va) % &p, "negate({m})");
            if 2 * m < 32 {
                assert!(a.add(&a.negate(m)).normalizes_to_zero());
            }
        }
    }
    // Multiples of p at high magnitude must normalize to zero; p + 1 multiples to one.
    for k in 1..=31u32 {
        let zero_k = FieldElement::ZERO.negate(k - 1); // 2k·p, magnitude k
        assert!(zero_k.normalizes_to_zero(), "2·{k}·p");
        assert!(zero_k.normalize().is_zero());
        let one_k = zero_k.add(&FieldElement::ONE);
        assert!(!one_k.normalizes_to_zero());
        assert_eq!(one_k.normalize(), FieldElement::ONE);
    }
    for _ in 0..2000 * common::scale() {
        let m = rng.gen_range(1..=8);
        let a = random_with_magnitude(&mut rng, m);
        let mb = rng.gen_range(1..=8);
        let b = random_with_magnitude(&mut rng, mb);
        let (va, vb) = (raw_value(&a) % &p, raw_value(&b) % &p);
        assert_eq!(value(&a.mul(&b)), (&va * &vb) % &p);
        assert_eq!(value(&a.square()), (&va * &va) % &p);
        assert_eq!(value(&a.negate(m)), (&p - &va) % &p);
        let mbig = rng.gen_range(1..=32);
        let big = random_with_magnitude(&mut rng, mbig);
        let vbig = raw_value(&big) % &p;
        assert_eq!(raw_value(&big.normalize()), vbig);
        assert_eq!(big.normalizes_to_zero(), vbig.is_zero());
        assert_eq!(value(&big.normalize_weak().mul(&a)), (&vbig * &va) % &p);
    }
}

#[test]
fn invert_matches_bigint() {
    let p = p();
    let e = &p - 2u32;
    let xs = inputs(100 * common::scale());
    for a in &xs {
        let va = value(a);
        let inv = a.invert_vartime();
        assert_eq!(value(&inv), va.modpow(&e, &p));
        assert_eq!(
            inv.raw_limbs(),
            inv.to_limbs_normalized(),
            "inverse is normalized"
        );
        assert_eq!(value(&a.invert_fermat()), va.modpow(&e, &p));
        if !va.is_zero() {
            assert!(inv.mul(a).eq_vartime(&FieldElement::ONE));
        }
    }
    assert!(
        max_with_magnitude(32)
            .invert_vartime()
            .mul(&max_with_magnitude(8))
            .eq_vartime(&FieldElement::ONE)
            == (raw_value(&max_with_magnitude(32)) % &p == raw_value(&max_with_magnitude(8)) % &p)
    );
}

/// safegcd against the Fermat chain on many inputs, including sparse and structured
/// ones (powers of two, p − 2^k, small values) that drive long zero runs and early
/// limb-count reductions.
#[test]
fn safegcd_matches_fermat() {
    let p = p();
    let mut xs: Vec<BigUint> = Vec::new();
    for k in 0..256u32 {
        xs.push(BigUint::one() << k);
        xs.push(&p - (BigUint::one() << k.min(255)) % &p);
        xs.push((BigUint::one() << k) - 1u32);
        xs.push(BigUint::from(k + 2));
    }
    let mut rng = rng();
    for _ in 0..5000 * common::scale() {
        let mut b = random_bytes(&mut rng);
        // Sparse values: clear most bytes.
        if rng.gen_range(0..4) == 0 {
            for byte in b.iter_mut() {
                if rng.gen_range(0..4) != 0 {
                    *byte = 0;
                }
            }
        }
        xs.push(big_from_bytes(&b) % &p);
    }
    for x in &xs {
        let x = x % &p;
        let a = FieldElement::from_bytes(&bytes_from_big(&x)).expect("reduced");
        let inv = a.invert_vartime();
        assert_eq!(inv.raw_limbs(), inv.to_limbs_normalized(), "normalized");
        assert_eq!(inv, a.invert_fermat(), "inverse of {x:x}");
        if !x.is_zero() {
            assert_eq!(inv.mul(&a), FieldElement::ONE);
        }
    }
}

#[test]
fn sqrt_on_residues_and_non_residues() {
    let p = p();
    let legendre_exp = (&p - 1u32) >> 1;
    let xs = inputs(100 * common::scale());
    let (mut residues, mut non_residues) = (0, 0);
    for a in &xs {
        for x in [*a, a.square()] {
            let vx = value(&x);
            let is_square = vx.is_zero() || vx.modpow(&legendre_exp, &p).is_one();
            match x.sqrt_vartime() {
                Some(y) => {
                    assert!(is_square, "sqrt returned a root of a non-residue");
                    let vy = value(&y);
                    assert_eq!(y.raw_limbs(), y.to_limbs_normalized(), "root is normalized");
                    assert_eq!((&vy * &vy) % &p, vx);
                    residues += 1;
                }
                None => {
                    assert!(!is_square, "sqrt missed the root of a residue");
                    non_residues += 1;
                }
            }
        }
    }
    assert!(
        residues > 50 && non_residues > 20,
        "{residues} residues, {non_residues} non-residues"
    );
    // -1 and 7 are non-residues mod p (p ≡ 3 mod 4; x³ + 7 at x = 0).
    assert!(FieldElement::ONE.negate(1).sqrt_vartime().is_none());
    assert!(FieldElement::from_u64(7).sqrt_vartime().is_none());
    // Maximum magnitude input.
    let big = max_with_magnitude(32);
    let vb = raw_value(&big) % &p;
    let sq = vb.modpow(&legendre_exp, &p).is_one() || vb.is_zero();
    assert_eq!(big.sqrt_vartime().is_some(), sq);
}

/// The portable backend's 4×64-bit square roots (two chains interleaved) against
/// `sqrt_vartime`: every mix of residue and non-residue in the two lanes, inputs of every
/// magnitude up to the maximum (converted without normalizing).
#[test]
#[cfg(not(nostr_verify_field32))]
fn sqrt_pair_4x64_matches_sqrt() {
    let mut xs = inputs(60 * common::scale());
    let squares: Vec<FieldElement> = xs.iter().map(FieldElement::square).collect();
    xs.extend(squares);
    xs.push(max_with_magnitude(32));
    xs.push(FieldElement::from_u64(7));
    xs.push(FieldElement::ZERO);
    let (mut some, mut none) = (0, 0);
    for (i, a) in xs.iter().enumerate() {
        let b = &xs[(i * 7 + 3) % xs.len()];
        let (ra, rb) = FieldElement4x64::sqrt_pair_vartime(
            &FieldElement4x64::from_fe(a),
            &FieldElement4x64::from_fe(b),
        );
        for (lane, (r, x)) in [(ra, a), (rb, b)].into_iter().enumerate() {
            let want = x.sqrt_vartime();
            assert_eq!(r.is_some(), want.is_some(), "lane {lane}, {i}");
            if let (Some(r), Some(w)) = (r, want) {
                // The chain is the same, so the root is the same one, not only up to sign.
                assert_eq!(r.to_fe().to_bytes(), w.to_bytes(), "lane {lane}, {i}");
                let r = r.to_fe();
                assert_eq!(r.raw_limbs(), r.to_limbs_normalized(), "to_fe normalizes");
            }
        }
        if ra.is_some() {
            some += 1;
        } else {
            none += 1;
        }
    }
    assert!(some > 20 && none > 20, "{some} roots, {none} non-residues");
}

#[test]
fn batch_invert_with_zeros_at_every_position() {
    let p = p();
    let e = &p - 2u32;
    let mut rng = rng();
    let mut scratch = Vec::new();
    for len in [0usize, 1, 2, 3, 5, 8, 17] {
        // Zero patterns: none, each single position, first+last, all.
        let mut patterns: Vec<Vec<bool>> = vec![vec![false; len], vec![true; len]];
        for z in 0..len {
            let mut pat = vec![false; len];
            pat[z] = true;
            patterns.push(pat);
        }
        if len >= 2 {
            let mut pat = vec![false; len];
            pat[0] = true;
            pat[len - 1] = true;
            patterns.push(pat);
        }
        for pat in patterns {
            let elems: Vec<FieldElement> = pat
                .iter()
                .map(|&zero| {
                    if zero {
                        // A zero given as 0, as p, or as 2p at magnitude 1..: all stay zero.
                        match rng.gen_range(0..3) {
                            0 => FieldElement::ZERO,
                            1 => FieldElement::from_bytes_unchecked(&bytes_from_big(&p)),
                            _ => FieldElement::ZERO.negate(1),
                        }
                    } else {
                        let mut b = [0u8; 32];
                        rng.fill_bytes(&mut b);
                        FieldElement::from_bytes_unchecked(&b).mul_int(rng.gen_range(1..=4))
                    }
                })
                .collect();
            let mut out = elems.clone();
            FieldElement::batch_invert_vartime(&mut out, &mut scratch);
            for (x, y) in elems.iter().zip(&out) {
                assert_eq!(y.raw_limbs(), y.to_limbs_normalized(), "output normalized");
                assert_eq!(value(y), value(x).modpow(&e, &p));
            }
        }
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn mul_add_distribute(a in any::<[u8; 32]>(), b in any::<[u8; 32]>(), c in any::<[u8; 32]>()) {
            let (a, b, c) = (FieldElement::from_bytes_unchecked(&a), FieldElement::from_bytes_unchecked(&b), FieldElement::from_bytes_unchecked(&c));
            let lhs = a.mul(&b.add(&c));
            let rhs = a.mul(&b).add(&a.mul(&c));
            prop_assert_eq!(lhs, rhs);
            prop_assert_eq!(value(&a.mul(&b)), (value(&a) * value(&b)) % p());
        }
    }
}

/// The 10×26-bit limb kernels themselves, under `cfg(nostr_verify_field32)` (where they are
/// `FieldElement`'s representation): edge values (0, 1, p − 1, p, p + 1, 2^256 − 1 and
/// 2^256 − 2 unnormalized), limbs at the largest magnitude each operation accepts, and random
/// limbs, against the big-integer reference. `.ci/run` checks that these are compiled in.
#[cfg(nostr_verify_field32)]
mod field_10x26 {
    use super::*;
    use nostr_verify::arithmetic::field::FieldElement10x26 as F;

    const M26: u32 = (1 << 26) - 1;
    const M22: u32 = (1 << 22) - 1;

    /// The integer the limbs stand for (not reduced).
    fn raw(a: &F) -> BigUint {
        a.limbs()
            .iter()
            .enumerate()
            .fold(BigUint::zero(), |acc, (i, &l)| {
                acc + (BigUint::from(l) << (26 * i))
            })
    }

    /// Limbs at the bound of magnitude `m`.
    fn max_limbs(m: u32) -> F {
        let mut l = [2 * m * M26; 10];
        l[9] = 2 * m * M22;
        let f = F::from_limbs(l);
        assert!(f.has_magnitude(m) && !F::from_limbs(l.map(|x| x + 1)).has_magnitude(m));
        f
    }

    /// Random limbs within magnitude `m`, each pinned to its bound a quarter of the time.
    fn random_limbs(rng: &mut impl RngCore, m: u32) -> F {
        let mut l = [0u32; 10];
        for (i, x) in l.iter_mut().enumerate() {
            let bound = 2 * m * if i == 9 { M22 } else { M26 };
            *x = if rng.gen_range(0..4) == 0 {
                bound
            } else {
                rng.gen_range(0..=bound)
            };
        }
        F::from_limbs(l)
    }

    /// Edge values as unnormalized magnitude-1 elements.
    fn edges() -> Vec<F> {
        let p = p();
        let top: BigUint = (BigUint::one() << 256u32) - 1u32;
        [
            BigUint::zero(),
            BigUint::one(),
            &p - 1u32,
            p.clone(),
            &p + 1u32,
            top.clone(),
            &top - 1u32,
        ]
        .iter()
        .map(|v| F::from_bytes_unchecked(&bytes_from_big(v)))
        .collect()
    }

    /// Checks every output of the arithmetic on `a` (magnitude `ma`) and `b` (magnitude `mb`).
    fn check(a: &F, ma: u32, b: &F, mb: u32) {
        let p = p();
        let (va, vb) = (raw(a) % &p, raw(b) % &p);
        if ma <= 8 && mb <= 8 {
            let m = a.mul(b);
            assert!(
                m.has_magnitude(1),
                "mul output magnitude 1: {:?}",
                m.limbs()
            );
            assert_eq!(
                raw(&m) % &p,
                (&va * &vb) % &p,
                "mul {:?} {:?}",
                a.limbs(),
                b.limbs()
            );
            let s = a.square();
            assert!(s.has_magnitude(1), "square output magnitude 1");
            assert_eq!(raw(&s) % &p, (&va * &va) % &p, "square {:?}", a.limbs());
        }
        if ma + mb <= 32 {
            assert_eq!(raw(&a.add(b)) % &p, (&va + &vb) % &p);
        }
        if ma < 32 {
            let n = a.negate(ma);
            assert!(n.has_magnitude(ma + 1), "negate magnitude");
            assert_eq!(raw(&n) % &p, (&p - &va) % &p);
        }
        let w = a.normalize_weak();
        assert!(w.has_magnitude(1));
        assert_eq!(raw(&w) % &p, va);
        // What `normalize_carried` (the kernels' `to_fe` in this build) takes: the carried
        // form every multiplication, squaring and weak normalization leaves, and the same
        // result as `normalize` on it.
        let mut outs = vec![w];
        if ma <= 8 && mb <= 8 {
            outs.push(a.mul(b));
            outs.push(a.square());
        }
        for o in &outs {
            let l = o.limbs();
            assert!(
                l[..9].iter().all(|&x| x < 1 << 26) && l[9] < (1 << 22) + (1 << 7),
                "not carried: {l:?}"
            );
            assert_eq!(o.normalize_carried().limbs(), o.normalize().limbs());
        }
        let n = a.normalize();
        assert!(
            n.is_normalized_repr(),
            "normalize is canonical: {:?}",
            n.limbs()
        );
        assert_eq!(raw(&n), va);
        assert_eq!(n.to_bytes(), bytes_from_big(&va));
        assert_eq!(a.normalizes_to_zero(), va.is_zero());
        assert_eq!(n.is_zero(), va.is_zero());
        assert_eq!(n.is_odd(), va.bit(0));
    }

    #[test]
    fn field_10x26_edge_values() {
        let p = p();
        let e = edges();
        for a in &e {
            assert_eq!(raw(a), big_from_bytes(&a.to_bytes()));
            assert_eq!(F::limbs_overflow(&a.limbs()), raw(a) >= p);
            for b in &e {
                check(a, 1, b, 1);
            }
        }
        // p and 0 in their canonical and unnormalized forms.
        assert!(F::from_bytes_unchecked(&bytes_from_big(&p)).normalizes_to_zero());
        assert!(F::ZERO.negate(0).normalizes_to_zero());
        assert!(F::ZERO.negate(30).normalize().is_zero());
        assert!(F::from_u64(0).is_normalized_repr() && F::ONE.is_normalized_repr());
    }

    #[test]
    fn field_10x26_max_magnitudes() {
        for m in [1u32, 2, 4, 8, 16, 31, 32] {
            let a = max_limbs(m);
            for mb in [1u32, 8] {
                check(&a, m, &max_limbs(mb), mb);
            }
        }
        // The largest top limb a weak normalization leaves: limbs 0..8 at their bound (the
        // largest carries into the top) and a top limb whose low 22 bits are all ones (below
        // its bound): the result's top limb is 2^22 − 1 plus the carry out of limb 8, above
        // 2^22 + 1 from magnitude 2 on (`normalize_carried` takes it up to 2^22 + 2^7).
        for m in [1u32, 2, 8, 31, 32] {
            let mut l = max_limbs(m).limbs();
            l[9] = (l[9] >> 22 << 22).saturating_sub(1).max(M22);
            let a = F::from_limbs(l);
            assert!(a.has_magnitude(m));
            check(&a, m, &max_limbs(1), 1);
            if m >= 2 {
                assert!(
                    a.normalize_weak().limbs()[9] > (1 << 22) + 1,
                    "magnitude {m}"
                );
            }
        }
        // Multiples of p at every magnitude: 2k·p normalizes to 0, 2k·p + 1 to 1.
        for k in 1..=31u32 {
            let z = F::ZERO.negate(k - 1);
            assert!(z.normalizes_to_zero() && z.normalize().is_zero(), "2·{k}·p");
            let one = z.add(&F::ONE);
            assert!(!one.normalizes_to_zero());
            assert_eq!(one.normalize().limbs(), F::ONE.limbs());
        }
    }

    #[test]
    fn field_10x26_random_limbs() {
        let mut rng = rng();
        for _ in 0..3000 * common::scale() {
            let (ma, mb) = (rng.gen_range(0..=32), rng.gen_range(0..=8));
            let (a, b) = (random_limbs(&mut rng, ma), random_limbs(&mut rng, mb));
            check(&a, ma, &b, mb);
            let ma = ma.min(8);
            check(&random_limbs(&mut rng, ma), ma, &b, mb);
        }
    }

    #[test]
    fn field_10x26_words_round_trip() {
        let mut rng = rng();
        for _ in 0..1000 {
            let mut w = [0u64; 4];
            for x in &mut w {
                *x = rng.gen();
            }
            let f = F::from_u64x4(&w);
            assert!(f.has_magnitude(1));
            assert_eq!(f.to_u64x4(), w);
            assert_eq!(F::from_u64(w[0]).to_u64x4(), [w[0], 0, 0, 0]);
        }
    }
}
