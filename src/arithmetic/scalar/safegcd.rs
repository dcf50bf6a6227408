//! Variable-time modular inversion by Bernstein–Yang "safegcd" divsteps, for any odd
//! 256-bit modulus (used for scalars mod n and field elements mod p).
//!
//! Source: D. J. Bernstein, B.-Y. Yang, "Fast constant-time gcd computation and modular
//! inversion" (2019), and the variable-time refinements described in libsecp256k1
//! `doc/safegcd_implementation.md` (half-delta "eta", batches of 62 divsteps applied as a
//! 2×2 transition matrix, cancelling up to 6 low bits of g per step, shrinking the limb
//! count of f and g as they shrink). Written here from that description.
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
//! Numbers are "signed62": i64 limbs, value = Σ l\[i\]·2^(62·i). After each update the
//! limbs below the top one are in [0, 2^62) and the top one is signed. d and e keep five
//! limbs and stay in (−2M, M) (the md, me choice of the reference description guarantees
//! it), f and g in [−M, M]. As f and g shrink their top limbs become 0 or −1; such a limb
//! is folded into the one below (which then carries the sign) and the updates of f and g
//! run on one limb fewer. The modulus itself is stored with limbs in [−2^61, 2^61), so
//! that M = 2^256 − small has zero middle limbs, and the md·M products skip those limbs.
//!
//! # Variable time
//!
//! The number of batches, the steps inside each and the limb count depend on x.

/// Mask of the low 62 bits.
const M62: u64 = u64::MAX >> 2;

/// An odd modulus M < 2^256 in signed62 form with M^(−1) mod 2^62.
#[derive(Clone, Copy, Debug)]
pub struct Modulus {
    /// M in signed62 with limbs 0..3 in [−2^61, 2^61) (zero limbs are skipped).
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
            m: balance_s62(to_s62(&limbs)),
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

/// Rewrites non-negative signed62 limbs so that limbs 0..3 lie in [−2^61, 2^61), the value
/// unchanged (a limb of 2^61 or more becomes limb − 2^62 with a carry of 1 upward).
const fn balance_s62(a: [i64; 5]) -> [i64; 5] {
    let mut out = [0i64; 5];
    let mut carry = 0i64;
    let mut i = 0;
    while i < 4 {
        let l = a[i] + carry;
        if l >= 1 << 61 {
            out[i] = l - (1 << 62);
            carry = 1;
        } else {
            out[i] = l;
            carry = 0;
        }
        i += 1;
    }
    out[4] = a[4] + carry;
    out
}

/// −g/f mod 64 for odd f, as (f·g)·(f² − 2): f·f·(f² − 2) = (f² − 1)² − 1 ≡ −1 (mod 64), as
/// f² ≡ 1 (mod 8). The two inner products are independent, so the latency from a new f is
/// two multiplications.
#[inline(always)]
fn neg_div64(g: u64, f: u64) -> u64 {
    f.wrapping_mul(g)
        .wrapping_mul(f.wrapping_mul(f).wrapping_sub(2))
}

/// 62 divsteps on the low 62 bits of f (odd) and g, starting from `eta`.
///
/// Returns the new eta and t = (u, v, q, r) with 2^62·f' = u·f + v·g and
/// 2^62·g' = q·f + r·g, where f', g' are the values after the 62 steps. |u| + |v| ≤ 2^62
/// and |q| + |r| ≤ 2^62.
#[inline(always)]
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
        // Cancel the low min(eta + 1, i, 6) bits of g with w·f: as many divsteps without a
        // swap as eta allows, each adding f or not and halving, in one addition. (eta ≥ 0
        // here and i ≥ 1, so the count is at least 1.)
        let limit = ((eta + 1) as u64).min(i as u64);
        let mask = (u64::MAX >> (64 - limit)) & 63;
        // f has usually just changed (a swap), so −g/f is computed afresh rather than
        // kept as −1/f: one multiplication less on the loop's critical path.
        let w = neg_div64(g, f) & mask;
        g = g.wrapping_add(w.wrapping_mul(f));
        q += (w as i64) * u;
        r += (w as i64) * v;
        debug_assert_eq!(g & mask, 0);
    }
    (eta, [u, v, q, r])
}

/// (f, g) ← (u·f + v·g, q·f + r·g) / 2^62 (exact) on the low `LEN` limbs, limb LEN − 1
/// being the signed top.
#[inline(always)]
fn update_fg_len<const LEN: usize>(f: &mut [i64; 5], g: &mut [i64; 5], t: &[i64; 4]) {
    let [u, v, q, r] = t.map(|x| x as i128);
    let mut cf = u * f[0] as i128 + v * g[0] as i128;
    let mut cg = q * f[0] as i128 + r * g[0] as i128;
    debug_assert!(cf as u64 & M62 == 0 && cg as u64 & M62 == 0);
    cf >>= 62;
    cg >>= 62;
    for i in 1..LEN {
        // |u| + |v| ≤ 2^62 and limbs below 2^62 in magnitude: each sum is below 2^125 in
        // magnitude, far inside i128.
        cf += u * f[i] as i128 + v * g[i] as i128;
        cg += q * f[i] as i128 + r * g[i] as i128;
        f[i - 1] = (cf as u64 & M62) as i64;
        g[i - 1] = (cg as u64 & M62) as i64;
        cf >>= 62;
        cg >>= 62;
    }
    f[LEN - 1] = cf as i64;
    g[LEN - 1] = cg as i64;
}

/// [`update_fg_len`] for a run-time limb count `len` in 1..=5.
#[inline(always)]
fn update_fg(len: usize, f: &mut [i64; 5], g: &mut [i64; 5], t: &[i64; 4]) {
    match len {
        5 => update_fg_len::<5>(f, g, t),
        4 => update_fg_len::<4>(f, g, t),
        3 => update_fg_len::<3>(f, g, t),
        2 => update_fg_len::<2>(f, g, t),
        _ => update_fg_len::<1>(f, g, t),
    }
}

/// (d, e) ← (u·d + v·e + md·M, q·d + r·e + me·M) / 2^62 with md, me making the division
/// exact and keeping d, e in (−2M, M).
#[inline(always)]
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
        // |md|, |me| < 2^63 and |M limb| ≤ 2^61 (the top limb is at most 2^8): with the
        // d, e terms each sum stays below 2^126 in magnitude.
        cd += u * d[i] as i128 + v * e[i] as i128;
        ce += q * d[i] as i128 + r * e[i] as i128;
        if m.m[i] != 0 {
            cd += m.m[i] as i128 * md as i128;
            ce += m.m[i] as i128 * me as i128;
        }
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

/// Whether the signed62 number in the low `len` limbs of `a` (limb len − 1 signed, the ones
/// below in [0, 2^62)) is `target` (1 or −1).
fn s62_is(a: &[i64; 5], len: usize, target: i64) -> bool {
    if target == 1 {
        a[0] == 1 && a[1..len].iter().all(|&l| l == 0)
    } else {
        // −1: all lower limbs 2^62 − 1 and the top limb −1.
        a[len - 1] == -1 && a[..len - 1].iter().all(|&l| l == M62 as i64)
    }
}

/// x^(−1) mod M for x < M given as little-endian limbs; 0 (and any x sharing a factor with M)
/// maps to 0.
///
/// # Variable time
///
/// Running time depends on x.
pub fn invert_vartime(x: &[u64; 4], m: &Modulus) -> [u64; 4] {
    if *x == [0; 4] {
        return [0; 4];
    }
    let mut f = m.m;
    let mut g = to_s62(x);
    let mut d = [0i64; 5];
    let mut e = [1i64, 0, 0, 0, 0];
    let mut eta: i64 = -1;
    // Limbs of f and g in use.
    let mut len = 5;
    // Bernstein–Yang: 590 divsteps suffice for 256-bit inputs (⌈(49·256 + 57)/17⌉ = 742 is
    // the general bound; the variable-time loop stops as soon as g = 0). The cap guards
    // against a bug turning into an endless loop.
    let mut done = false;
    for _ in 0..20 {
        let (eta2, t) = divsteps_62_var(eta, f[0] as u64, g[0] as u64);
        eta = eta2;
        update_fg(len, &mut f, &mut g, &t);
        update_de(&mut d, &mut e, &t, m);
        // g = 0 needs its low limb 0 first.
        if g[0] == 0 && g[1..len].iter().all(|&l| l == 0) {
            done = true;
            break;
        }
        // Both top limbs 0 or −1 (l ^ (l >> 63) == 0): fold them into the limb below.
        let (ft, gt) = (f[len - 1], g[len - 1]);
        if len > 1 && (ft ^ (ft >> 63)) | (gt ^ (gt >> 63)) == 0 {
            f[len - 2] |= ((ft as u64) << 62) as i64;
            g[len - 2] |= ((gt as u64) << 62) as i64;
            len -= 1;
        }
    }
    debug_assert!(done, "safegcd did not converge");
    // f = ±gcd(x, M); anything else than ±1: not invertible, return 0.
    let f_is_minus_one = s62_is(&f, len, -1);
    if !(f_is_minus_one || s62_is(&f, len, 1)) {
        return [0; 4];
    }
    reduce_s62(&d, f_is_minus_one, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arithmetic::scalar::tests::scale;
    use num_bigint::{BigInt, BigUint};
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

    /// The signed value of a signed62 number's low `len` limbs.
    fn s62_value(a: &[i64], len: usize) -> BigInt {
        let mut v = BigInt::default();
        for (i, l) in a[..len].iter().enumerate() {
            v += BigInt::from(*l) << (62 * i);
        }
        v
    }

    #[test]
    fn neg_div64_cancels_six_bits() {
        let mut rng = StdRng::seed_from_u64(3);
        let odd: Vec<u64> = (1u64..64)
            .step_by(2)
            .chain((0..200).map(|_| rng.gen::<u64>() | 1))
            .collect();
        let gs: Vec<u64> = (0u64..64).chain((0..50).map(|_| rng.gen())).collect();
        for &f in &odd {
            for &g in &gs {
                let w = neg_div64(g, f);
                assert_eq!(
                    g.wrapping_add((w & 63).wrapping_mul(f)) & 63,
                    0,
                    "f {f}, g {g}"
                );
            }
        }
    }

    #[test]
    fn modulus_limbs_and_inverse_mod_2_62() {
        let mut rng = StdRng::seed_from_u64(4);
        let mut ms = vec![N, P, [3, 0, 0, 0], [u64::MAX; 4], [1, 0, 0, 1 << 63]];
        ms.extend((0..200).map(|_| {
            let mut m: [u64; 4] = rng.gen();
            m[0] |= 1;
            m
        }));
        for m in ms {
            let md = Modulus::new(m);
            assert_eq!(md.m_inv62.wrapping_mul(m[0]) & M62, 1);
            assert_eq!(s62_value(&md.m, 5), BigInt::from(big(&m)), "{m:x?}");
            for l in &md.m[..4] {
                assert!((-(1i64 << 61)..1i64 << 61).contains(l), "{m:x?}");
            }
        }
        // The sparse limbs that update_de skips: p = 2^256 − 0x1000003D1 has three zero
        // middle limbs, n one.
        assert_eq!(Modulus::new(P).m, [-0x1_0000_03D1, 0, 0, 0, 256]);
        assert_eq!(Modulus::new(N).m[3..], [0, 256]);
    }

    /// Divsteps one at a time: the reference for [`divsteps_62_var`].
    fn divsteps_62_bitwise(mut eta: i64, mut f: u64, mut g: u64) -> (i64, [i64; 4]) {
        let (mut u, mut v, mut q, mut r) = (1i64, 0i64, 0i64, 1i64);
        for _ in 0..62 {
            if g & 1 == 1 {
                if eta < 0 {
                    eta = -eta;
                    (f, g) = (g, f.wrapping_neg());
                    (u, v, q, r) = (q, r, -u, -v);
                }
                g = g.wrapping_add(f);
                q += u;
                r += v;
            }
            g >>= 1;
            u <<= 1;
            v <<= 1;
            eta -= 1;
        }
        (eta, [u, v, q, r])
    }

    #[test]
    fn divsteps_match_one_at_a_time() {
        let mut rng = StdRng::seed_from_u64(5);
        let mut cases: Vec<(i64, u64, u64)> = Vec::new();
        for _ in 0..20_000 * scale() {
            let eta = match rng.gen_range(0..4) {
                0 => rng.gen_range(-2..3),
                1 => rng.gen_range(-8..9),
                2 => rng.gen_range(-70..71),
                _ => rng.gen_range(-800..801),
            };
            let f = rng.gen::<u64>() | 1;
            let g = match rng.gen_range(0..4) {
                // Long runs of zeros and ones at the bottom of g.
                0 => rng.gen::<u64>() << rng.gen_range(0..64),
                1 => !(rng.gen::<u64>() << rng.gen_range(0..64)),
                _ => rng.gen(),
            };
            cases.push((eta, f, g));
        }
        for (f, g) in [
            (1, 0),
            (1, 1),
            (u64::MAX, 1),
            (1, u64::MAX),
            (u64::MAX, u64::MAX),
        ] {
            for eta in [-1, 0, 1, 5, 6, 7, 62, -62] {
                cases.push((eta, f, g));
            }
        }
        for (eta, f, g) in cases {
            let (e1, t1) = divsteps_62_var(eta, f, g);
            let (e2, t2) = divsteps_62_bitwise(eta, f, g);
            assert_eq!((e1, t1), (e2, t2), "eta {eta}, f {f:#x}, g {g:#x}");
            let [u, v, q, r] = t1;
            assert!(u.unsigned_abs() + v.unsigned_abs() <= 1 << 62);
            assert!(q.unsigned_abs() + r.unsigned_abs() <= 1 << 62);
        }
    }

    #[test]
    fn update_fg_every_length_matches_bigint() {
        let mut rng = StdRng::seed_from_u64(6);
        for len in 1..=5usize {
            for _ in 0..2000 * scale() {
                // f odd, |f|, |g| < 2^(62·len − 2) in signed62 form with a signed top limb.
                let mut f = [0i64; 5];
                let mut g = [0i64; 5];
                for i in 0..len - 1 {
                    f[i] = (rng.gen::<u64>() & M62) as i64;
                    g[i] = (rng.gen::<u64>() & M62) as i64;
                }
                f[len - 1] = rng.gen::<i64>() >> 2;
                g[len - 1] = rng.gen::<i64>() >> 2;
                f[0] |= 1;
                let (fv, gv) = (s62_value(&f, len), s62_value(&g, len));
                let eta = rng.gen_range(-20..20);
                let (_, t) = divsteps_62_var(eta, f[0] as u64, g[0] as u64);
                let (f_stale, g_stale) = (f[len..].to_vec(), g[len..].to_vec());
                update_fg(len, &mut f, &mut g, &t);
                let tv = t.map(BigInt::from);
                let two62 = BigInt::from(1u64 << 62);
                assert_eq!(s62_value(&f, len) * &two62, &tv[0] * &fv + &tv[1] * &gv);
                assert_eq!(s62_value(&g, len) * &two62, &tv[2] * &fv + &tv[3] * &gv);
                for i in 0..len - 1 {
                    assert!(f[i] >= 0 && f[i] as u64 <= M62 && g[i] >= 0 && g[i] as u64 <= M62);
                }
                // Limbs above len are left alone.
                assert_eq!((f[len..].to_vec(), g[len..].to_vec()), (f_stale, g_stale));
            }
        }
    }

    /// The number of divsteps (from eta = −1) until g = 0, one at a time on big integers.
    fn divstep_count(m: &BigInt, x: &BigInt) -> usize {
        let (mut f, mut g, mut eta) = (m.clone(), x.clone(), -1i64);
        let mut n = 0;
        while g != BigInt::default() {
            if g.bit(0) {
                if eta < 0 {
                    eta = -eta;
                    (f, g) = (g, -f);
                }
                g += &f;
            }
            g >>= 1;
            eta -= 1;
            n += 1;
        }
        n
    }

    #[test]
    fn inverse_on_adversarial_inputs() {
        let mut rng = StdRng::seed_from_u64(7);
        for m in [N, P] {
            let md = Modulus::new(m);
            let mb = big(&m);
            let mut xs: Vec<BigUint> = vec![1u32.into(), &mb - 1u32, (&mb + 1u32) / 2u32];
            for k in 0..256usize {
                let pk: BigUint = (BigUint::from(1u32) << k) % &mb;
                xs.push(&mb - &pk);
                xs.push(pk.clone() - 1u32);
                xs.push((pk.clone() + 1u32) % &mb);
                // The inverse of 2^k, and x = 2^k·(small odd).
                xs.push(pk.modinv(&mb).unwrap());
                xs.push((&pk * 0x1234_5677u32) % &mb);
                xs.push(pk);
            }
            // g shrinking fast or slowly: small x, x near M, x with a small inverse, x with
            // long runs of equal bits.
            for s in 1u32..200 {
                xs.push(s.into());
                xs.push(&mb - s);
                xs.push(BigUint::from(s).modinv(&mb).unwrap());
                xs.push(&mb - BigUint::from(s).modinv(&mb).unwrap());
            }
            for &k in &[62usize, 124, 186, 248] {
                xs.push(((BigUint::from(1u32) << k) - 1u32) % &mb);
                xs.push(((BigUint::from(1u32) << 256) - (BigUint::from(1u32) << k)) % &mb);
            }
            // The inputs with the longest divstep runs out of a random pool.
            let mut pool: Vec<(usize, BigUint)> = (0..2000 * scale())
                .map(|_| {
                    let x = big(&rng.gen()) % &mb;
                    (
                        divstep_count(&BigInt::from(mb.clone()), &BigInt::from(x.clone())),
                        x,
                    )
                })
                .collect();
            pool.sort_by_key(|b| std::cmp::Reverse(b.0));
            // Runs long enough to need nine or more batches of 62.
            assert!(pool[0].0 > 8 * 62, "longest run {}", pool[0].0);
            xs.extend(pool.into_iter().take(50).map(|(_, x)| x));
            for x in xs {
                assert_inverse(&(x % &mb), &md, &mb);
            }
        }
    }

    /// `invert_vartime(x)` against num-bigint's `modinv` (0 where gcd(x, M) > 1).
    fn assert_inverse(x: &BigUint, md: &Modulus, mb: &BigUint) {
        let inv = invert_vartime(&limbs(x), md);
        let expect = x.modinv(mb).unwrap_or_default();
        assert_eq!(big(&inv), expect, "inverse of {x:x} mod {mb:x}");
    }

    #[test]
    fn inverse_for_random_moduli_of_every_size() {
        // Small and odd-shaped moduli take the length-shrinking path down to one limb and
        // the sparse-limb path of update_de; gcd > 1 must give 0.
        let mut rng = StdRng::seed_from_u64(8);
        for _ in 0..3000 * scale() {
            let bits = rng.gen_range(2..=256);
            let mut m: [u64; 4] = rng.gen();
            for (i, l) in m.iter_mut().enumerate() {
                let lo = 64 * i;
                if lo >= bits {
                    *l = 0;
                } else if bits - lo < 64 {
                    *l &= (1u64 << (bits - lo)) - 1;
                }
            }
            m[0] |= 1;
            let mb = big(&m);
            if mb == BigUint::from(1u32) {
                continue;
            }
            let md = Modulus::new(m);
            for _ in 0..4 {
                assert_inverse(&(big(&rng.gen()) % &mb), &md, &mb);
            }
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
