//! Variable-time modular inversion mod p by Bernstein–Yang "safegcd" divsteps.
//!
//! Written from libsecp256k1's `doc/safegcd_implementation.md` (the variable-time
//! variant of sections 5–7: batches of 62 divsteps computed on the low bits of f and g
//! into a 2×2 transition matrix, applied to the full-width f, g and to the coefficients
//! d, e; runs of zero bits in g consumed at once; the loop ends when g = 0, shrinking
//! the limb count as f and g shrink). The code and comments are our own.
//!
//! Numbers are kept in *signed 62-bit limbs*: value = ∑ v[i]·2^(62·i), limbs 0..4 in
//! [0, 2^62) and the top limb signed (in the modulus, limb 0 is negative instead).
//!
//! Invariants (doc, section 2 and 6): with x the input, M = p,
//! - `d·x ≡ f` and `e·x ≡ g` (mod M) throughout (true for d = 0, f = M; e = 1, g = x);
//! - each batch multiplies `[f, g]` by the matrix and divides by 2^62 exactly, and does
//!   the same to `[d, e]` after adding the multiple of M that makes the division exact;
//! - `d`, `e` stay in (−2M, M); when g reaches 0, f = ±gcd = ±1, so x⁻¹ = ±d.

/// 2^62 − 1.
const M62: u64 = u64::MAX >> 2;

/// p in signed-62 limbs: 2^256 − (2^32 + 977) = 256·2^248 − 0x1000003D1.
const P62: [i64; 5] = [-0x1_0000_03D1, 0, 0, 0, 256];

/// p⁻¹ mod 2^62, by Newton iteration x ← x·(2 − p·x) (each step doubles the number of
/// correct low bits; p is odd, so x = p is right mod 8 to start).
const P_INV62: u64 = {
    let p = 0u64.wrapping_sub(0x1_0000_03D1); // p mod 2^64
    let mut x = p;
    let mut k = 0;
    while k < 6 {
        x = x.wrapping_mul(2u64.wrapping_sub(p.wrapping_mul(x)));
        k += 1;
    }
    x & M62
};

/// A transition matrix `[[u, v], [q, r]]` scaled by 2^62.
#[derive(Clone, Copy)]
struct Trans {
    u: i64,
    v: i64,
    q: i64,
    r: i64,
}

/// 62 divsteps on the low 64 bits of f (odd) and g, starting from `eta` (= −δ).
///
/// Returns the new eta and the matrix t with `t·[f, g] = 2^62·[f', g']`. Each row
/// satisfies |u| + |v| ≤ 2^62 (doc, section 5), so entries fit in i64.
///
/// Per step (doc, section 7): a run of zero bits of g is k halvings at once (η −= k);
/// when η < 0 the divstep swaps (f, g) ← (g, −f) and η ← −η; then up to
/// min(η + 1, steps left, 6) low bits of g are cancelled by adding w·f, with
/// w = −g/f mod 2^limit, which is the same as that many "g odd, no swap" divsteps.
#[inline]
fn divsteps_62_vartime(mut eta: i64, f0: u64, g0: u64) -> (i64, Trans) {
    let (mut u, mut v, mut q, mut r) = (1u64, 0u64, 0u64, 1u64);
    let (mut f, mut g) = (f0, g0);
    let mut i: u32 = 62;
    loop {
        // Zeros of g, counted only up to i (a sentinel bit at position i).
        let zeros = (g | (u64::MAX << i)).trailing_zeros();
        g >>= zeros;
        u <<= zeros;
        v <<= zeros;
        eta -= zeros as i64;
        i -= zeros;
        if i == 0 {
            break;
        }
        // f and g are odd here; u·f0 + v·g0 = f·2^(62−i), q·f0 + r·g0 = g·2^(62−i).
        if eta < 0 {
            eta = -eta;
            (f, g) = (g, f.wrapping_neg());
            (u, q) = (q, u.wrapping_neg());
            (v, r) = (r, v.wrapping_neg());
        }
        let limit = (eta + 1).min(i as i64).min(6) as u32;
        let mask = (u64::MAX >> (64 - limit)) & 63;
        // f·(f² − 2) ≡ −1/f (mod 64) for odd f (Newton step from f·f ≡ 1 mod 8).
        let w = g
            .wrapping_mul(f)
            .wrapping_mul(f.wrapping_mul(f).wrapping_sub(2))
            & mask;
        g = g.wrapping_add(f.wrapping_mul(w));
        q = q.wrapping_add(u.wrapping_mul(w));
        r = r.wrapping_add(v.wrapping_mul(w));
        debug_assert_eq!(g & mask, 0);
    }
    (
        eta,
        Trans {
            u: u as i64,
            v: v as i64,
            q: q as i64,
            r: r as i64,
        },
    )
}

/// `[d, e] ← (t·[d, e] + M·[md, me]) / 2^62`, with md, me chosen to make the division
/// exact and to keep d, e in (−2M, M) (doc, section 6: start md, me with the matrix
/// column of each negative input, then subtract what clears the low 62 bits).
#[inline]
fn update_de(d: &mut [i64; 5], e: &mut [i64; 5], t: &Trans) {
    let Trans { u, v, q, r } = *t;
    let sd = d[4] >> 63;
    let se = e[4] >> 63;
    let mut md = (u & sd) + (v & se);
    let mut me = (q & sd) + (r & se);
    let mut cd = u as i128 * d[0] as i128 + v as i128 * e[0] as i128;
    let mut ce = q as i128 * d[0] as i128 + r as i128 * e[0] as i128;
    md -= (P_INV62.wrapping_mul(cd as u64).wrapping_add(md as u64) & M62) as i64;
    me -= (P_INV62.wrapping_mul(ce as u64).wrapping_add(me as u64) & M62) as i64;
    cd += P62[0] as i128 * md as i128;
    ce += P62[0] as i128 * me as i128;
    debug_assert_eq!(cd as u64 & M62, 0);
    debug_assert_eq!(ce as u64 & M62, 0);
    cd >>= 62;
    ce >>= 62;
    // Limbs 1..3 of P62 are zero, so only limb 4 adds a modulus term below.
    for k in 1..4 {
        cd += u as i128 * d[k] as i128 + v as i128 * e[k] as i128;
        ce += q as i128 * d[k] as i128 + r as i128 * e[k] as i128;
        d[k - 1] = (cd as u64 & M62) as i64;
        e[k - 1] = (ce as u64 & M62) as i64;
        cd >>= 62;
        ce >>= 62;
    }
    cd += u as i128 * d[4] as i128 + v as i128 * e[4] as i128 + P62[4] as i128 * md as i128;
    ce += q as i128 * d[4] as i128 + r as i128 * e[4] as i128 + P62[4] as i128 * me as i128;
    d[3] = (cd as u64 & M62) as i64;
    e[3] = (ce as u64 & M62) as i64;
    d[4] = (cd >> 62) as i64;
    e[4] = (ce >> 62) as i64;
}

/// `[f, g] ← t·[f, g] / 2^62` on the first `len` limbs (the rest are sign extension).
#[inline]
fn update_fg(len: usize, f: &mut [i64; 5], g: &mut [i64; 5], t: &Trans) {
    let Trans { u, v, q, r } = *t;
    let mut cf = u as i128 * f[0] as i128 + v as i128 * g[0] as i128;
    let mut cg = q as i128 * f[0] as i128 + r as i128 * g[0] as i128;
    debug_assert_eq!(cf as u64 & M62, 0);
    debug_assert_eq!(cg as u64 & M62, 0);
    cf >>= 62;
    cg >>= 62;
    for k in 1..len {
        cf += u as i128 * f[k] as i128 + v as i128 * g[k] as i128;
        cg += q as i128 * f[k] as i128 + r as i128 * g[k] as i128;
        f[k - 1] = (cf as u64 & M62) as i64;
        g[k - 1] = (cg as u64 & M62) as i64;
        cf >>= 62;
        cg >>= 62;
    }
    f[len - 1] = cf as i64;
    g[len - 1] = cg as i64;
}

/// Signed-62 limbs of a value given as normalized radix-2^52 limbs.
#[inline]
fn from_52(a: &[u64; 5]) -> [i64; 5] {
    [
        ((a[0] | (a[1] << 52)) & M62) as i64,
        (((a[1] >> 10) | (a[2] << 42)) & M62) as i64,
        (((a[2] >> 20) | (a[3] << 32)) & M62) as i64,
        (((a[3] >> 30) | (a[4] << 22)) & M62) as i64,
        (a[4] >> 40) as i64,
    ]
}

/// `sign·d + 2p` (sign = ±1) as radix-2^52 limbs: d ∈ (−2p, p) gives a value in
/// (0, 4p) < 2^258, i.e. limbs 0..4 < 2^52 and a top limb < 2^50 (magnitude 3).
#[inline]
fn to_52_plus_2p(d: &[i64; 5], negate: bool) -> [u64; 5] {
    let s: i128 = if negate { -1 } else { 1 };
    let mut v = [0u64; 5];
    let mut c: i128 = 0;
    for k in 0..5 {
        c += s * d[k] as i128 + 2 * P62[k] as i128;
        v[k] = if k < 4 { c as u64 & M62 } else { c as u64 };
        c >>= 62;
    }
    debug_assert!(c == 0 && v[4] < 1 << 10, "safegcd result out of range");
    const M52: u64 = (1 << 52) - 1;
    [
        v[0] & M52,
        ((v[0] >> 52) | (v[1] << 10)) & M52,
        ((v[1] >> 42) | (v[2] << 20)) & M52,
        ((v[2] >> 32) | (v[3] << 30)) & M52,
        (v[3] >> 22) | (v[4] << 40),
    ]
}

/// The inverse of the value of normalized limbs `a` (nonzero, `< p`), as radix-2^52
/// limbs of magnitude ≤ 3 (value `< 4p`, to be normalized by the caller).
pub(super) fn invert_vartime(a: &[u64; 5]) -> [u64; 5] {
    let mut d = [0i64; 5];
    let mut e = [1i64, 0, 0, 0, 0];
    let mut f = P62;
    let mut g = from_52(a);
    let mut len = 5;
    let mut eta: i64 = -1;
    loop {
        let (eta2, t) = divsteps_62_vartime(eta, f[0] as u64, g[0] as u64);
        eta = eta2;
        update_de(&mut d, &mut e, &t);
        update_fg(len, &mut f, &mut g, &t);
        if g[0] == 0 && g[1..len].iter().all(|&x| x == 0) {
            break;
        }
        // When the top limbs of both f and g are 0 or −1 (pure sign), fold the sign into
        // the limb below and drop one limb.
        let (fn_, gn) = (f[len - 1], g[len - 1]);
        if len > 1 && (fn_ ^ (fn_ >> 63)) == 0 && (gn ^ (gn >> 63)) == 0 {
            f[len - 2] |= ((fn_ as u64) << 62) as i64;
            g[len - 2] |= ((gn as u64) << 62) as i64;
            len -= 1;
        }
    }
    // f = ±1 now; the inverse is sign(f)·d.
    to_52_plus_2p(&d, f[len - 1] < 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p_inv62_is_the_inverse() {
        let p = 0u64.wrapping_sub(0x1_0000_03D1);
        assert_eq!(p.wrapping_mul(P_INV62) & M62, 1);
    }

    #[test]
    fn p62_is_p() {
        // p = 256·2^248 − 0x1000003D1; its 52-bit limbs via the +2p path from d = −p.
        let neg_p = [0x1_0000_03D1i64, 0, 0, 0, -256];
        // −p + 2p = p, whose limbs are P's.
        let l = to_52_plus_2p(&neg_p, false);
        assert_eq!(
            l,
            [
                0xF_FFFE_FFFF_FC2F,
                (1 << 52) - 1,
                (1 << 52) - 1,
                (1 << 52) - 1,
                (1 << 48) - 1
            ]
        );
    }
}
