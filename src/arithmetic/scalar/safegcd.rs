//! Variable-time modular inversion by Bernstein–Yang "safegcd" divsteps, for any odd
//! 256-bit modulus (used for scalars mod n; usable for p as well).
//!
//! Source: D. J. Bernstein, B.-Y. Yang, "Fast constant-time gcd computation and modular
//! inversion" (2019), and the variable-time refinements described in libsecp256k1
//! `doc/safegcd_implementation.md` (half-delta "eta", batches of 62 divsteps applied as a
//! 2×2 transition matrix, cancelling up to 4 low bits of g per step). Written here from that
//! description.
//!
//! # Method
//!
//! State: f = M, g = x, d = 0, e = 1 and the invariants d·x ≡ f, e·x ≡ g (mod M), which
//! hold at the start (0·x ≡ M, 1·x ≡ x). Each batch of 62 divsteps yields a transition
//! matrix t = [[u, v], [q, r]] (entries scaled by 2^62), applied to both pairs:
//!
//! ```text
//! (f, g) ← (u·f + v·g, q·f + r·g) / 2^62          exact division
//! (d, e) ← (u·d + v·e + md·M, q·d + r·e + me·M) / 2^62   md, me chosen to make it exact
//! ```
//!
//! The same linear map on both pairs keeps the invariants (dividing by 2^62 is multiplying
//! by its inverse mod M, and adding md·M changes nothing mod M). When g reaches 0,
//! f = ±gcd(x, M) = ±1 for invertible x, and d·x ≡ ±1.
//!
//! Numbers are "signed62": five i64 limbs, value = Σ l\[i\]·2^(62·i), limbs 0..3 in
//! [0, 2^62) after each update and the top limb signed. d and e stay in (−2M, M) (the md,
//! me choice of the reference description guarantees it), f and g in [−M, M].
//!
//! # Variable time
//!
//! The number of batches and the steps inside each depend on x.

/// Mask of the low 62 bits.
const M62: u64 = u64::MAX >> 2;

/// −(2i + 1)^(−1) mod 16 for i in 0..8: w = g·NEG_INV16\[(f mod 16)/2\] mod 2^k makes
/// g + w·f ≡ 0 (mod 2^k) for k ≤ 4 and odd f.
const NEG_INV16: [u8; 8] = [15, 5, 3, 9, 7, 13, 11, 1];

/// An odd modulus M < 2^256 in signed62 form with M^(−1) mod 2^62.
#[derive(Clone, Copy, Debug)]
pub struct Modulus {
    m: [i64; 5],
    m_inv62: u64,
    limbs: [u64; 4],
}

impl Modulus {
    /// Prepares an odd modulus given as little-endian u64 limbs.
    ///
    /// # Panics
    ///
    /// If the modulus is even (at compile time when used in a `const`).
    pub const fn new(limbs: [u64; 4]) -> Self {
        assert!(limbs[0] & 1 == 1, "safegcd modulus must be odd");
        // Newton's iteration for the inverse mod 2^64: each step doubles the correct bits
        // (x = m is correct mod 2^3 for odd m).
        let m0 = limbs[0];
        let mut inv = m0;
        let mut i = 0;
        while i < 5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(m0.wrapping_mul(inv)));
            i += 1;
        }
        Modulus {
            m: to_s62(&limbs),
            m_inv62: inv & M62,
            limbs,
        }
    }
}

/// Little-endian u64 limbs → signed62 (all limbs non-negative).
const fn to_s62(a: &[u64; 4]) -> [i64; 5] {
    [
        (a[0] & M62) as i64,
        (((a[0] >> 62) | (a[1] << 2)) & M62) as i64,
        (((a[1] >> 60) | (a[2] << 4)) & M62) as i64,
        (((a[2] >> 58) | (a[3] << 6)) & M62) as i64,
        (a[3] >> 56) as i64,
    ]
}

/// 62 divsteps on the low 62 bits of f (odd) and g, starting from `eta`.
///
/// Returns the new eta and t = (u, v, q, r) with 2^62·f' = u·f + v·g and
/// 2^62·g' = q·f + r·g, where f', g' are the values after the 62 steps. |u| + |v| ≤ 2^62
/// and |q| + |r| ≤ 2^62.
fn divsteps_62_var(mut eta: i64, f0: u64, g0: u64) -> (i64, [i64; 4]) {
    let (mut u, mut v, mut q, mut r) = (1i64, 0i64, 0i64, 1i64);
    let (mut f, mut g) = (f0, g0);
    let mut i: u32 = 62;
    loop {
        // Shift out the zeros at the bottom of g (at most i of them), doubling f's row.
        let zeros = (g | (u64::MAX << i)).trailing_zeros();
        g >>= zeros;
        u <<= zeros;
        v <<= zeros;
        eta -= zeros as i64;
        i -= zeros;
        if i == 0 {
            break;
        }
        debug_assert!(f & 1 == 1 && g & 1 == 1);
        if eta < 0 {
            // Swap and negate: (f, g) ← (g, −f).
            eta = -eta;
            let (of, ou, ov) = (f, u, v);
            f = g;
            u = q;
            v = r;
            g = of.wrapping_neg();
            q = -ou;
            r = -ov;
        }
        // Cancel up to min(eta + 1, i, 4) low bits of g with a multiple of f.
        let limit = ((eta + 1) as u32).min(i).min(4);
        let mask = (1u64 << limit) - 1;
        let w = g.wrapping_mul(NEG_INV16[((f & 15) >> 1) as usize] as u64) & mask;
        g = g.wrapping_add(w.wrapping_mul(f));
        q += (w as i64) * u;
        r += (w as i64) * v;
        debug_assert_eq!(g & mask, 0);
    }
    (eta, [u, v, q, r])
}

/// (f, g) ← (u·f + v·g, q·f + r·g) / 2^62 (exact).
fn update_fg(f: &mut [i64; 5], g: &mut [i64; 5], t: &[i64; 4]) {
    let [u, v, q, r] = t.map(|x| x as i128);
    let mut cf = u * f[0] as i128 + v * g[0] as i128;
    let mut cg = q * f[0] as i128 + r * g[0] as i128;
    debug_assert!(cf as u64 & M62 == 0 && cg as u64 & M62 == 0);
    cf >>= 62;
    cg >>= 62;
    for i in 1..5 {
        // |u|, |v| ≤ 2^62 with |u| + |v| ≤ 2^62 and limbs < 2^62 (top limb small): each sum is
        // below 2^125 in magnitude, far inside i128.
        cf += u * f[i] as i128 + v * g[i] as i128;
        cg += q * f[i] as i128 + r * g[i] as i128;
        f[i - 1] = (cf as u64 & M62) as i64;
        g[i - 1] = (cg as u64 & M62) as i64;
        cf >>= 62;
        cg >>= 62;
    }
    f[4] = cf as i64;
    g[4] = cg as i64;
}

/// (d, e) ← (u·d + v·e + md·M, q·d + r·e + me·M) / 2^62 with md, me making the division
/// exact and keeping d, e in (−2M, M).
fn update_de(d: &mut [i64; 5], e: &mut [i64; 5], t: &[i64; 4], m: &Modulus) {
    let [u, v, q, r] = *t;
    let sd = d[4] >> 63; // −1 if d < 0 else 0
    let se = e[4] >> 63;
    // Start with M·(u or 0 + v or 0): adding M for each negative input keeps the result's
    // range (the reference description's bound analysis).
    let mut md = (u & sd) + (v & se);
    let mut me = (q & sd) + (r & se);
    let (u, v, q, r) = (u as i128, v as i128, q as i128, r as i128);
    let mut cd = u * d[0] as i128 + v * e[0] as i128;
    let mut ce = q * d[0] as i128 + r * e[0] as i128;
    // Make the low 62 bits of cd + md·M zero: md −= (M^(−1)·cd + md) mod 2^62.
    md -= (m.m_inv62.wrapping_mul(cd as u64).wrapping_add(md as u64) & M62) as i64;
    me -= (m.m_inv62.wrapping_mul(ce as u64).wrapping_add(me as u64) & M62) as i64;
    cd += m.m[0] as i128 * md as i128;
    ce += m.m[0] as i128 * me as i128;
    debug_assert!(cd as u64 & M62 == 0 && ce as u64 & M62 == 0);
    cd >>= 62;
    ce >>= 62;
    for i in 1..5 {
        cd += u * d[i] as i128 + v * e[i] as i128 + m.m[i] as i128 * md as i128;
        ce += q * d[i] as i128 + r * e[i] as i128 + m.m[i] as i128 * me as i128;
        d[i - 1] = (cd as u64 & M62) as i64;
        e[i - 1] = (ce as u64 & M62) as i64;
        cd >>= 62;
        ce >>= 62;
    }
    d[4] = cd as i64;
    e[4] = ce as i64;
}

/// The value of a signed62 number in (−2M, 2M), reduced into [0, M), as u64 limbs.
fn reduce_s62(a: &[i64; 5], negate: bool, m: &Modulus) -> [u64; 4] {
    // v = ±a + 2M ∈ (0, 4M) ⊂ [0, 2^258): carry-propagate into non-negative 62-bit limbs.
    let mut limbs = [0u64; 5];
    let mut c: i128 = 0;
    for i in 0..5 {
        let ai = if negate {
            -(a[i] as i128)
        } else {
            a[i] as i128
        };
        c += ai + 2 * m.m[i] as i128;
        limbs[i] = (c as u64) & M62;
        c >>= 62;
    }
    debug_assert_eq!(c, 0);
    // Pack 5×62 = 310 bits into 5 u64 limbs (the top one holds bits 256..309).
    let mut w = [0u64; 5];
    w[0] = limbs[0] | (limbs[1] << 62);
    w[1] = (limbs[1] >> 2) | (limbs[2] << 60);
    w[2] = (limbs[2] >> 4) | (limbs[3] << 58);
    w[3] = (limbs[3] >> 6) | (limbs[4] << 56);
    w[4] = limbs[4] >> 8;
    // Subtract M while w ≥ M (at most 3 times).
    loop {
        let mut t = [0u64; 5];
        let mut borrow = 0u64;
        for i in 0..5 {
            let mi = if i < 4 { m.limbs[i] } else { 0 };
            let (x, b1) = w[i].overflowing_sub(mi);
            let (x, b2) = x.overflowing_sub(borrow);
            t[i] = x;
            borrow = (b1 | b2) as u64;
        }
        if borrow == 1 {
            break;
        }
        w = t;
    }
    debug_assert_eq!(w[4], 0);
    [w[0], w[1], w[2], w[3]]
}

/// x^(−1) mod M for x < M given as little-endian limbs; 0 (and any x sharing a factor with M)
/// maps to 0.
///
/// # Variable time
///
/// Running time depends on x.
pub fn invert_vartime(x: &[u64; 4], m: &Modulus) -> [u64; 4] {
    let mut f = m.m;
    let mut g = to_s62(x);
    let mut d = [0i64; 5];
    let mut e = [1i64, 0, 0, 0, 0];
    let mut eta: i64 = -1;
    // Bernstein–Yang: 590 divsteps suffice for 256-bit inputs (⌈(49·256 + 57)/17⌉ = 742 is
    // the general bound; the variable-time loop stops as soon as g = 0). The cap guards
    // against a bug turning into an endless loop.
    for _ in 0..20 {
        if g == [0; 5] {
            break;
        }
        let (eta2, t) = divsteps_62_var(eta, f[0] as u64, g[0] as u64);
        eta = eta2;
        update_fg(&mut f, &mut g, &t);
        update_de(&mut d, &mut e, &t, m);
    }
    debug_assert_eq!(g, [0; 5], "safegcd did not converge");
    // f = ±gcd(x, M). Not invertible (x = 0): return 0.
    let f_is_one = f == [1, 0, 0, 0, 0];
    let f_is_minus_one = f == [M62 as i64, M62 as i64, M62 as i64, M62 as i64, -1];
    if !(f_is_one || f_is_minus_one) {
        return [0; 4];
    }
    reduce_s62(&d, f_is_minus_one, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arithmetic::scalar::tests::scale;
    use num_bigint::BigUint;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    const N: [u64; 4] = [
        0xBFD2_5E8C_D036_4141,
        0xBAAE_DCE6_AF48_A03B,
        0xFFFF_FFFF_FFFF_FFFE,
        0xFFFF_FFFF_FFFF_FFFF,
    ];
    const P: [u64; 4] = [
        0xFFFF_FFFE_FFFF_FC2F,
        0xFFFF_FFFF_FFFF_FFFF,
        0xFFFF_FFFF_FFFF_FFFF,
        0xFFFF_FFFF_FFFF_FFFF,
    ];

    fn big(l: &[u64; 4]) -> BigUint {
        let mut v = BigUint::default();
        for (i, x) in l.iter().enumerate() {
            v += BigUint::from(*x) << (64 * i);
        }
        v
    }

    fn limbs(v: &BigUint) -> [u64; 4] {
        let mut out = [0u64; 4];
        for (i, d) in v.to_u64_digits().iter().enumerate() {
            out[i] = *d;
        }
        out
    }

    #[test]
    fn neg_inv16_table() {
        for f in (1u32..16).step_by(2) {
            assert_eq!(f * NEG_INV16[(f / 2) as usize] as u32 % 16, 15, "f = {f}");
        }
    }

    #[test]
    fn modulus_inverse_mod_2_62() {
        for m in [N, P, [3, 0, 0, 0], [u64::MAX; 4]] {
            let md = Modulus::new(m);
            assert_eq!(md.m_inv62.wrapping_mul(m[0]) & M62, 1);
            assert_eq!(big(&m), {
                let mut v = BigUint::default();
                for (i, l) in md.m.iter().enumerate() {
                    v += BigUint::from(*l as u64) << (62 * i);
                }
                v
            });
        }
    }

    #[test]
    fn inverse_matches_bigint_mod_n_and_p() {
        let mut rng = StdRng::seed_from_u64(31);
        for m in [N, P] {
            let md = Modulus::new(m);
            let mb = big(&m);
            let mut xs: Vec<BigUint> = vec![
                1u32.into(),
                2u32.into(),
                3u32.into(),
                &mb - 1u32,
                &mb - 2u32,
                (&mb - 1u32) / 2u32,
                (BigUint::from(1u32) << 128) - 1u32,
                BigUint::from(1u32) << 128,
                (BigUint::from(1u32) << 128) + 1u32,
                BigUint::from(1u32) << 255,
                BigUint::from(u64::MAX),
            ];
            for _ in 0..2000 * scale() {
                let mut l: [u64; 4] = rng.gen();
                match rng.gen_range(0..5) {
                    0 => l[3] = 0,
                    1 => l[1..].fill(0),
                    2 => l[0] = u64::MAX,
                    _ => {}
                }
                xs.push(big(&l) % &mb);
            }
            for x in xs {
                if x == BigUint::default() {
                    continue;
                }
                let inv = invert_vartime(&limbs(&x), &md);
                let expect = x.modpow(&(&mb - 2u32), &mb);
                assert_eq!(big(&inv), expect, "inverse of {x:x}");
            }
            assert_eq!(invert_vartime(&[0; 4], &md), [0; 4]);
        }
    }

    #[test]
    fn not_invertible_gives_zero() {
        // Modulus 15 = 3·5: 3, 5, 6, 10 share factors; 2 is invertible (2·8 = 16 ≡ 1).
        let md = Modulus::new([15, 0, 0, 0]);
        for x in [3u64, 5, 6, 9, 10, 12] {
            assert_eq!(invert_vartime(&[x, 0, 0, 0], &md), [0; 4], "{x}");
        }
        assert_eq!(invert_vartime(&[2, 0, 0, 0], &md), [8, 0, 0, 0]);
        assert_eq!(invert_vartime(&[14, 0, 0, 0], &md), [14, 0, 0, 0]);
    }
}
