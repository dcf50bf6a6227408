//! Serial twins of the lane kernels: the same limb algorithms on one element in plain
//! `u64`/`u128` code, with `vpmadd52{l,h}uq` emulated bit for bit (including the truncation
//! of both multiplicands to 52 bits). The tests compare every lane kernel with its twin limb
//! for limb, and the twins with `num-bigint`.

use super::field8::{MASK48, MASK52, R256, R260, TWO_P};

pub(crate) type Limbs = [u64; 5];

/// Emulates `vpmadd52luq` on one lane.
fn lo(acc: u64, b: u64, c: u64) -> u64 {
    let p = u128::from(b & MASK52) * u128::from(c & MASK52);
    acc.wrapping_add((p as u64) & MASK52)
}

/// Emulates `vpmadd52huq` on one lane.
fn hi(acc: u64, b: u64, c: u64) -> u64 {
    let p = u128::from(b & MASK52) * u128::from(c & MASK52);
    acc.wrapping_add((p >> 52) as u64)
}

fn reduce(c: [u64; 10]) -> Limbs {
    let (u5, v5) = (c[5] & MASK52, c[5] >> 52);
    let (u6, v6) = (c[6] & MASK52, c[6] >> 52);
    let (u7, v7) = (c[7] & MASK52, c[7] >> 52);
    let (u8, v8) = (c[8] & MASK52, c[8] >> 52);
    let u9 = c[9];
    let d0 = lo(c[0], u5, R260);
    let d1 = lo(lo(hi(c[1], u5, R260), u6, R260), v5, R260);
    let d2 = lo(lo(hi(c[2], u6, R260), u7, R260), v6, R260);
    let d3 = lo(lo(hi(c[3], u7, R260), u8, R260), v7, R260);
    let d4 = lo(lo(hi(c[4], u8, R260), u9, R260), v8, R260);
    let d5 = hi(0, u9, R260);
    let d4 = d4 + (d3 >> 52);
    let d3 = d3 & MASK52;
    let t = (d4 >> 48) + (d5 << 4);
    let d4 = d4 & MASK48;
    let d0 = lo(d0, t, R256);
    let d1 = hi(d1, t, R256);
    let d1 = d1 + (d0 >> 52);
    let d0 = d0 & MASK52;
    let d2 = d2 + (d1 >> 52);
    let d1 = d1 & MASK52;
    let d3 = d3 + (d2 >> 52);
    let d2 = d2 & MASK52;
    let d4 = d4 + (d3 >> 52);
    let d3 = d3 & MASK52;
    [d0, d1, d2, d3, d4]
}

pub(crate) fn mul(a: &Limbs, b: &Limbs) -> Limbs {
    let mut c = [0u64; 10];
    for i in 0..5 {
        for j in 0..5 {
            c[i + j] = lo(c[i + j], a[i], b[j]);
            c[i + j + 1] = hi(c[i + j + 1], a[i], b[j]);
        }
    }
    reduce(c)
}

pub(crate) fn sqr(a: &Limbs) -> Limbs {
    let mut x = [0u64; 10];
    for i in 0..5 {
        for j in (i + 1)..5 {
            x[i + j] = lo(x[i + j], a[i], a[j]);
            x[i + j + 1] = hi(x[i + j + 1], a[i], a[j]);
        }
    }
    let mut c = x.map(|v| v << 1);
    for i in 0..5 {
        c[2 * i] = lo(c[2 * i], a[i], a[i]);
        c[2 * i + 1] = hi(c[2 * i + 1], a[i], a[i]);
    }
    reduce(c)
}

pub(crate) fn sqr_n(a: &Limbs, n: usize) -> Limbs {
    let mut r = *a;
    for _ in 0..n {
        r = sqr(&r);
    }
    r
}

pub(crate) fn add(a: &Limbs, b: &Limbs) -> Limbs {
    core::array::from_fn(|i| a[i].wrapping_add(b[i]))
}

pub(crate) fn sub(a: &Limbs, b: &Limbs) -> Limbs {
    core::array::from_fn(|i| a[i].wrapping_add(TWO_P[i].wrapping_sub(b[i])))
}

pub(crate) fn carry(a: &Limbs) -> Limbs {
    let [l0, l1, l2, l3, l4] = *a;
    let t = l4 >> 48;
    let l4 = l4 & MASK48;
    let l0 = lo(l0, t, R256);
    let l1 = l1 + (l0 >> 52);
    let l0 = l0 & MASK52;
    let l2 = l2 + (l1 >> 52);
    let l1 = l1 & MASK52;
    let l3 = l3 + (l2 >> 52);
    let l2 = l2 & MASK52;
    let l4 = l4 + (l3 >> 52);
    let l3 = l3 & MASK52;
    [l0, l1, l2, l3, l4]
}

pub(crate) fn normalize(a: &Limbs) -> Limbs {
    normalize_carried(&carry(a))
}

pub(crate) fn normalize_carried(a: &Limbs) -> Limbs {
    let l = *a;
    let w0 = l[0] + R256;
    let w1 = l[1] + (w0 >> 52);
    let w2 = l[2] + (w1 >> 52);
    let w3 = l[3] + (w2 >> 52);
    let w4 = l[4] + (w3 >> 52);
    if w4 & (1 << 48) != 0 {
        [
            w0 & MASK52,
            w1 & MASK52,
            w2 & MASK52,
            w3 & MASK52,
            w4 & MASK48,
        ]
    } else {
        l
    }
}

/// a^((p+1)/4) with the same 253 S + 13 M chain as the lane kernel.
pub(crate) fn sqrt_candidate(a: &Limbs) -> Limbs {
    let x2 = mul(&sqr(a), a);
    let x3 = mul(&sqr(&x2), a);
    let x6 = mul(&sqr_n(&x3, 3), &x3);
    let x9 = mul(&sqr_n(&x6, 3), &x3);
    let x11 = mul(&sqr_n(&x9, 2), &x2);
    let x22 = mul(&sqr_n(&x11, 11), &x11);
    let x44 = mul(&sqr_n(&x22, 22), &x22);
    let x88 = mul(&sqr_n(&x44, 44), &x44);
    let x176 = mul(&sqr_n(&x88, 88), &x88);
    let x220 = mul(&sqr_n(&x176, 44), &x44);
    let x223 = mul(&sqr_n(&x220, 3), &x3);
    let t = mul(&sqr_n(&x223, 23), &x22);
    let t = mul(&sqr_n(&t, 6), &x2);
    sqr_n(&t, 2)
}

/// Serial BIP-340 lift_x on normalized limbs: `Some(even y)` or `None`.
pub(crate) fn lift_x(x: &Limbs) -> Option<Limbs> {
    let c = carry(&add(&mul(&sqr(x), x), &[7, 0, 0, 0, 0]));
    let r = sqrt_candidate(&c);
    if normalize(&sqr(&r)) != normalize(&c) {
        return None;
    }
    let y = normalize(&r);
    Some(if y[0] & 1 == 1 {
        normalize(&sub(&[0; 5], &y))
    } else {
        y
    })
}

/// a^(p−2) (Fermat), slow but independent of any other inversion.
pub(crate) fn invert(a: &Limbs) -> Limbs {
    // p − 2 = 2^256 − 2^32 − 979: bits from the top, square-and-multiply.
    let e: [u64; 4] = [0xFFFF_FFFE_FFFF_FC2D, u64::MAX, u64::MAX, u64::MAX];
    let mut r: Limbs = [1, 0, 0, 0, 0];
    for w in (0..4).rev() {
        for b in (0..64).rev() {
            r = sqr(&r);
            if (e[w] >> b) & 1 == 1 {
                r = mul(&r, a);
            }
        }
    }
    normalize(&r)
}

/// Serial affine addition of two points with distinct x: normalized (x3, y3).
pub(crate) fn add_affine(p1: (&Limbs, &Limbs), p2: (&Limbs, &Limbs)) -> (Limbs, Limbs) {
    let (x1, y1) = p1;
    let (x2, y2) = p2;
    let dx = carry(&sub(x2, x1));
    let dy = carry(&sub(y2, y1));
    let l = mul(&dy, &invert(&dx));
    let x3 = carry(&sub(&sub(&sqr(&l), x1), x2));
    let y3 = carry(&sub(&mul(&l, &carry(&sub(x1, &x3))), y1));
    (normalize(&x3), normalize(&y3))
}
