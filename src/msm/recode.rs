//! Digit recodings of scalars for the multi-scalar multiplications.
//!
//! - [`wnaf_u128`] / [`wnaf_u128_digits`]: width-w non-adjacent form, for Strauss's
//!   interleaved method: few non-zero digits (about 1 in w + 1), all odd, so a table of odd
//!   multiples suffices.
//! - [`signed_digits_u128`] / [`signed_digits`]: fixed-width signed radix-2^c digits, for
//!   Pippenger's bucket method: one digit per c-bit window, 2^(c−1) buckets per window
//!   (the sign is applied by negating the point).
//!
//! Both are carry-based: a digit that is "too large" is replaced by a negative one and a
//! carry of 1 moves into the next position, so a b-bit scalar may need one digit beyond bit
//! b − 1. For 128-bit scalars that means 129 bit positions; the windows counts below
//! include that carry position.
//!
//! # Variable time
//!
//! Both recodings branch on the scalar bits; they are for public scalars only.

/// The number of digit positions [`wnaf_u128`] may use: 129 (bits 0..=128).
pub const WNAF_U128_DIGITS: usize = 129;

/// Width-w NAF of a 128-bit scalar: k = Σ naf\[i\]·2^i.
///
/// Every non-zero digit is odd with |digit| ≤ 2^(w−1) − 1, and any non-zero digit is
/// followed by at least w − 1 zero digits. `naf` is zeroed and the digits written to
/// `naf[..129]`; the return value is the number of positions used (index of the highest
/// non-zero digit + 1; 0 for k = 0), at most [`WNAF_U128_DIGITS`].
///
/// # Why 129 positions suffice
///
/// At position i the next w bits plus the incoming carry form an odd `word` (an even one
/// is a zero digit and is skipped). If i > 128 − w, the bits at and above i are at most
/// 2^(128−i) − 1, so `word` ≤ 2^(128−i) ≤ 2^(w−1), and being odd (w ≥ 2) it is below 2^(w−1):
/// no carry leaves the top. Hence the only digit above bit 127 is a final +1 at position 128
/// (from a carry out of a window ending exactly at bit 127).
///
/// # Panics
///
/// If `w` is not in 2..=8 (digits must fit an `i8`) or `naf` is shorter than 129.
///
/// # Variable time
///
/// Branches on the bits of `k`.
#[cfg(any(test, feature = "internals"))]
pub fn wnaf_u128(k: u128, w: usize, naf: &mut [i8]) -> usize {
    assert!(
        naf.len() >= WNAF_U128_DIGITS,
        "wNAF buffer shorter than 129"
    );
    naf.fill(0);
    wnaf_u128_digits(k, w, |i, d| naf[i] = d)
}

/// [`wnaf_u128`]'s non-zero digits, handed to `emit(position, digit)` in ascending position
/// order instead of written to an array (Strauss's kernel takes them as a list: it never reads
/// the zeros). Returns the same length.
///
/// # Panics
///
/// If `w` is not in 2..=8.
///
/// # Variable time
///
/// Branches on the bits of `k`.
pub fn wnaf_u128_digits(k: u128, w: usize, mut emit: impl FnMut(usize, i8)) -> usize {
    assert!((2..=8).contains(&w), "wNAF width {w} outside 2..=8");
    let mask = (1u32 << w) - 1;
    let mut carry = 0u32;
    let mut len = 0;
    let mut i = 0usize;
    loop {
        // Skip the positions where bit + carry is even (digit 0): runs of zeros without a
        // carry, runs of ones with one (the carry moves up unchanged).
        let rest = if i < 128 { k >> i } else { 0 };
        if carry == 0 && rest == 0 {
            break;
        }
        // With a carry, !rest has ones above bit 127 − i, so the skip stops at bit 128 at
        // the latest, where the carry becomes the final digit +1.
        let skip = if carry == 0 {
            rest.trailing_zeros()
        } else {
            (!rest).trailing_zeros()
        };
        i += skip as usize;
        debug_assert!(i < WNAF_U128_DIGITS);
        let rest = if i < 128 { k >> i } else { 0 };
        // Odd word in [1, 2^w − 1] (it cannot be 2^w: that needs bit i = carry = 1).
        let word = (rest as u32 & mask) + carry;
        carry = word >> (w - 1);
        emit(i, (word as i32 - ((carry << w) as i32)) as i8);
        len = i + 1;
        i += w;
    }
    debug_assert_eq!(carry, 0, "a carry left position 128 (see the proof above)");
    len
}

/// The number of c-bit windows [`signed_digits_u128`] writes: W = ⌈129/c⌉.
///
/// # Panics
///
/// If `c` is 0.
pub const fn windows_u128(c: usize) -> usize {
    signed_windows(128, c)
}

/// The number of c-bit signed windows for a value below 2^bits: W = ⌈(bits + 1)/c⌉ (one
/// extra bit for the carry into the top window).
///
/// # Panics
///
/// If `c` is 0.
pub const fn signed_windows(bits: usize, c: usize) -> usize {
    (bits + 1).div_ceil(c)
}

/// Signed radix-2^c digits of a 128-bit scalar: k = Σ out\[j\]·2^(c·j) for j < W.
///
/// W = [`windows_u128`]`(c)` = ⌈129/c⌉ digits are written to `out[..W]`, each in
/// [−(2^(c−1) − 1), 2^(c−1)]: a window value v (its c bits plus the incoming carry, so
/// 0 ≤ v ≤ 2^c) becomes v − 2^c with carry 1 when v > 2^(c−1), else stays v with carry 0.
/// Magnitudes are at most 2^(c−1), so 2^(c−1) buckets per window. The top window takes the
/// carry and never produces one (see [`signed_digits`]), also when c does not divide 128.
///
/// # Panics
///
/// If `c` is not in 2..=16 or `out` is shorter than W.
///
/// # Variable time
///
/// Branches on the bits of `k`.
pub fn signed_digits_u128(k: u128, c: usize, out: &mut [i32]) {
    assert!((2..=16).contains(&c), "window width {c} outside 2..=16");
    let nwin = windows_u128(c);
    assert!(out.len() >= nwin, "digit buffer shorter than {nwin}");
    let mask = (1u32 << c) - 1;
    let half = 1u32 << (c - 1);
    let mut carry = 0u32;
    for (j, d) in out[..nwin].iter_mut().enumerate() {
        let v = (k.checked_shr((c * j) as u32).unwrap_or(0) as u32 & mask) + carry;
        carry = (v > half) as u32;
        *d = v as i32 - ((carry << c) as i32);
    }
    debug_assert_eq!(carry, 0, "W·c ≥ 129 leaves room for every carry");
}

/// Signed radix-2^c digits of a value k < 2^bits given as little-endian u64 limbs:
/// k = Σ out\[j\]·2^(c·j) for j < W = [`signed_windows`]`(bits, c)` = ⌈(bits + 1)/c⌉.
///
/// Digits lie in [−(2^(c−1) − 1), 2^(c−1)], chosen as in [`signed_digits_u128`] (a full
/// scalar mod n uses bits = 256, a 64-bit GLV-structured half bits = 64).
///
/// # Top window
///
/// The top window starts at bit s = (W − 1)·c ≥ bits + 1 − c. The bits of k at and above s
/// are at most 2^(bits−s) − 1, so its value plus the carry is at most 2^(bits−s) ≤ 2^(c−1):
/// it stays positive and no carry is lost. (Bits of `k` at or above `bits` must be zero.)
///
/// # Panics
///
/// If `c` is not in 2..=16, `out` is shorter than W, `bits > 64·k.len()`, or (debug builds)
/// k has a set bit at or above `bits`.
///
/// # Variable time
///
/// Branches on the bits of `k`.
#[cfg(any(test, feature = "internals"))]
pub fn signed_digits(k: &[u64], bits: usize, c: usize, out: &mut [i32]) {
    assert!((2..=16).contains(&c), "window width {c} outside 2..=16");
    assert!(
        bits <= 64 * k.len(),
        "{bits} bits do not fit {} limbs",
        k.len()
    );
    debug_assert!(
        (bits..64 * k.len()).all(|b| (k[b / 64] >> (b % 64)) & 1 == 0),
        "value has bits at or above {bits}"
    );
    let nwin = signed_windows(bits, c);
    assert!(out.len() >= nwin, "digit buffer shorter than {nwin}");
    let mask = (1u64 << c) - 1;
    let half = 1u64 << (c - 1);
    let limb = |i: usize| k.get(i).copied().unwrap_or(0);
    let mut carry = 0u64;
    for (j, d) in out[..nwin].iter_mut().enumerate() {
        let s = c * j;
        let (q, r) = (s / 64, s % 64);
        // The window may straddle two limbs (c ≤ 16 < 64, so never three).
        let mut bitsw = limb(q) >> r;
        if r + c > 64 {
            bitsw |= limb(q + 1) << (64 - r);
        }
        let v = (bitsw & mask) + carry;
        carry = (v > half) as u64;
        *d = v as i32 - ((carry << c) as i32);
    }
    debug_assert_eq!(carry, 0, "W·c ≥ bits + 1 leaves room for every carry");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arithmetic::scalar::tests::scale;
    use num_bigint::BigInt;
    use num_traits::Zero;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// 0, 1, 2^128 − 1, 2^127, 2^64 ± 1, every 2^i and 2^i − 1, alternating patterns, and
    /// values whose windows are all exactly 2^(c−1) or 2^(c−1) + 1 for some c.
    fn edge_u128() -> Vec<u128> {
        let mut v = vec![
            0,
            1,
            2,
            3,
            u128::MAX,
            u128::MAX - 1,
            1 << 127,
            (1 << 127) - 1,
            (1 << 127) + 1,
            (1 << 64) - 1,
            1 << 64,
            (1 << 64) + 1,
            0x5555_5555_5555_5555_5555_5555_5555_5555,
            0xAAAA_AAAA_AAAA_AAAA_AAAA_AAAA_AAAA_AAAA,
        ];
        for i in 0..128 {
            v.push(1 << i);
            v.push((1u128 << i).wrapping_sub(1));
            v.push(u128::MAX << i);
        }
        for c in 2..=16 {
            let mut a = 0u128;
            let mut b = 0u128;
            for j in 0..128usize.div_ceil(c) {
                a |= (1u128 << (c - 1)).checked_shl((c * j) as u32).unwrap_or(0);
                b |= ((1u128 << (c - 1)) + 1)
                    .checked_shl((c * j) as u32)
                    .unwrap_or(0);
            }
            v.push(a);
            v.push(b);
        }
        v
    }

    fn inputs() -> Vec<u128> {
        let mut v = edge_u128();
        let mut rng = StdRng::seed_from_u64(11);
        for _ in 0..300 * scale() {
            let x: u128 = rng.gen();
            // Also short scalars, as the MSM sees for small weights.
            v.push(x >> rng.gen_range(0..128));
            v.push(x);
        }
        v
    }

    fn check_wnaf(k: u128, w: usize) {
        let mut naf = [0i8; 135];
        naf[130..].fill(99); // beyond 129: must be zeroed too (whole slice)
        let len = wnaf_u128(k, w, &mut naf);
        assert!(naf[129..].iter().all(|&d| d == 0));
        let mut sum = BigInt::zero();
        let mut last_nonzero: Option<usize> = None;
        for (i, &d) in naf.iter().enumerate() {
            sum += BigInt::from(d) << i;
            if d != 0 {
                assert_eq!(d & 1, 1, "even digit at {i} (k {k:#x}, w {w})");
                assert!(
                    (d as i32).abs() < 1 << (w - 1),
                    "digit {d} too large, w {w}"
                );
                if let Some(j) = last_nonzero {
                    assert!(i - j >= w, "non-zero digits {j} and {i} too close, w {w}");
                }
                last_nonzero = Some(i);
            }
        }
        assert_eq!(sum, BigInt::from(k), "wNAF of {k:#x}, w {w}");
        assert_eq!(len, last_nonzero.map_or(0, |j| j + 1), "length of {k:#x}");
        assert!(len <= WNAF_U128_DIGITS);
        // The list form: exactly the non-zero digits, ascending, and the same length.
        let mut listed = Vec::new();
        let len2 = wnaf_u128_digits(k, w, |i, d| listed.push((i, d)));
        let want: Vec<(usize, i8)> = naf
            .iter()
            .enumerate()
            .filter(|(_, &d)| d != 0)
            .map(|(i, &d)| (i, d))
            .collect();
        assert_eq!(listed, want, "digit list of {k:#x}, w {w}");
        assert_eq!(len2, len);
    }

    #[test]
    fn wnaf_recombines_with_valid_digits() {
        for k in inputs() {
            for w in 2..=8 {
                check_wnaf(k, w);
            }
        }
    }

    #[test]
    fn wnaf_uses_position_128_when_needed() {
        // 2^128 − 1 in width 2: digits −1 at 0 and +1 at 128.
        let mut naf = [0i8; 129];
        assert_eq!(wnaf_u128(u128::MAX, 2, &mut naf), 129);
        assert_eq!((naf[0], naf[128]), (-1, 1));
        assert_eq!(wnaf_u128(0, 5, &mut naf), 0);
        assert_eq!(wnaf_u128(1, 5, &mut naf), 1);
    }

    #[test]
    #[should_panic]
    fn wnaf_rejects_width_9() {
        wnaf_u128(5, 9, &mut [0i8; 129]);
    }

    fn check_digits(digits: &[i32], c: usize, expect: &BigInt) {
        let half = 1i32 << (c - 1);
        let mut sum = BigInt::zero();
        for (j, &d) in digits.iter().enumerate() {
            assert!(d > -half && d <= half, "digit {d} out of range for c {c}");
            sum += BigInt::from(d) << (c * j);
        }
        assert_eq!(&sum, expect, "c {c}");
    }

    #[test]
    fn signed_digits_u128_recombine() {
        for c in 2..=16 {
            let nwin = windows_u128(c);
            assert_eq!(nwin, 129usize.div_ceil(c));
            assert!(nwin * c >= 129 && (nwin - 1) * c < 129);
            for k in inputs() {
                let mut out = vec![7777i32; nwin + 2];
                signed_digits_u128(k, c, &mut out);
                check_digits(&out[..nwin], c, &BigInt::from(k));
                assert_eq!(&out[nwin..], &[7777, 7777], "wrote past W");
                // The generic version agrees digit for digit.
                let mut gen = vec![0i32; nwin];
                signed_digits(&[k as u64, (k >> 64) as u64], 128, c, &mut gen);
                assert_eq!(&gen[..], &out[..nwin], "k {k:#x}, c {c}");
            }
        }
    }

    #[test]
    fn signed_digits_top_window_takes_the_carry() {
        // c = 8 divides 128: 2^128 − 1 needs the 17th window for the carry.
        let mut out = [0i32; 17];
        signed_digits_u128(u128::MAX, 8, &mut out);
        assert_eq!(out[0], -1);
        assert_eq!(out[16], 1);
        // c = 7: top window (bits 126..) gets 3 + carry = 4 ≤ 64, no further carry.
        let mut out = [0i32; 19];
        signed_digits_u128(u128::MAX, 7, &mut out);
        assert_eq!(out[18], 4);
        // c = 2: 129/2 → 65 windows, top one is just the carry.
        let mut out = [0i32; 65];
        signed_digits_u128(u128::MAX, 2, &mut out);
        assert_eq!((out[0], out[64]), (-1, 1));
    }

    #[test]
    fn signed_digits_wide_and_narrow_values() {
        let mut rng = StdRng::seed_from_u64(12);
        for bits in [64usize, 129, 200, 256] {
            let limbs = bits.div_ceil(64);
            let mut cases: Vec<Vec<u64>> = Vec::new();
            let top_mask = |l: &mut Vec<u64>| {
                let r = bits % 64;
                if r != 0 {
                    *l.last_mut().unwrap() &= (1u64 << r) - 1;
                }
            };
            let mut all = vec![u64::MAX; limbs];
            top_mask(&mut all);
            cases.push(all);
            cases.push(vec![0; limbs]);
            let mut one = vec![0; limbs];
            one[0] = 1;
            cases.push(one);
            for _ in 0..100 * scale() {
                let mut l: Vec<u64> = (0..limbs).map(|_| rng.gen()).collect();
                top_mask(&mut l);
                cases.push(l);
            }
            for k in &cases {
                let mut expect = BigInt::zero();
                for (i, &x) in k.iter().enumerate() {
                    expect += BigInt::from(x) << (64 * i);
                }
                for c in 2..=16 {
                    let nwin = signed_windows(bits, c);
                    let mut out = vec![0i32; nwin];
                    signed_digits(k, bits, c, &mut out);
                    check_digits(&out, c, &expect);
                }
            }
        }
    }
}
