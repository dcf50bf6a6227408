//! SHA-256 compressions of 4 independent messages side by side in WebAssembly `simd128`
//! vectors: lane i of every `v128` holds message i's word, so one vector instruction runs a
//! step of the round for all four (the multi-buffer method of `sha_lanes`, on wasm32).
//!
//! Compiled on wasm32 with the crate feature `simd128`. Only the kernels are
//! `#[target_feature(enable = "simd128")]`: the rest of the module is built without it, since
//! LLVM's autovectorization of the field code into `i64x2` products is slower in V8
//! (`docs/experiments.md`, "The wasm module built with `simd128`"). A module with these
//! instructions needs an engine with WebAssembly SIMD (all current browsers and node ≥ 16.4);
//! it fails to load, rather than misbehave, elsewhere. No `unsafe`: on wasm32 a safe
//! `#[target_feature]` function may be called from any code (an engine without the feature
//! rejects the whole module at validation), the words are read with scalar loads and every
//! vector operation used is safe.
//!
//! A call compresses one block per lane, with the states word-major (`st[i][lane]`), as the
//! lane kernels of x86-64: the refill schedule of `sha::hash_many_from_on` drives it.

use super::sha_core::K;
use core::arch::wasm32::{
    i32x4_shl, i32x4_splat, i8x16_swizzle, u32x4, u32x4_add, u32x4_extract_lane, u32x4_shr, u8x16,
    v128, v128_bitselect, v128_or, v128_xor,
};

/// Rotate every lane right by `r` (a constant after inlining: V8 emits immediate shifts).
#[inline]
#[target_feature(enable = "simd128")]
fn ror(x: v128, r: u32) -> v128 {
    v128_or(u32x4_shr(x, r), i32x4_shl(x, 32 - r))
}

/// The 16 message words of the 4 lanes' blocks (`w[j]` holds word j of every lane, as a
/// big-endian number): each vector gathered from four little-endian scalar loads, then its
/// words' bytes reversed by one swizzle.
#[inline]
#[target_feature(enable = "simd128")]
fn words4(blocks: &[&[u8; 64]; 4]) -> [v128; 16] {
    let bswap = u8x16(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    let le = |l: usize, j: usize| {
        let b = &blocks[l][4 * j..4 * j + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    };
    core::array::from_fn(|j| i8x16_swizzle(u32x4(le(0, j), le(1, j), le(2, j), le(3, j)), bswap))
}

/// One compression of 4 lanes: the 64 rounds on `st` with the message words `w`, plus the
/// feed-forward. `Ch` and `Maj` are one bit select each (`Maj(a, b, c)` is `c` where `a` and
/// `b` differ, else `b`).
#[inline]
#[target_feature(enable = "simd128")]
fn block4(st: [v128; 8], mut w: [v128; 16]) -> [v128; 8] {
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = st;
    for t in 0..64 {
        let wt = if t < 16 {
            w[t]
        } else {
            // W[t] = σ1(W[t−2]) + W[t−7] + σ0(W[t−15]) + W[t−16], in a ring of 16.
            let w15 = w[(t + 1) & 15];
            let w2 = w[(t + 14) & 15];
            let s0 = v128_xor(v128_xor(ror(w15, 7), ror(w15, 18)), u32x4_shr(w15, 3));
            let s1 = v128_xor(v128_xor(ror(w2, 17), ror(w2, 19)), u32x4_shr(w2, 10));
            let v = u32x4_add(u32x4_add(w[t & 15], s0), u32x4_add(w[(t + 9) & 15], s1));
            w[t & 15] = v;
            v
        };
        let s1 = v128_xor(v128_xor(ror(e, 6), ror(e, 11)), ror(e, 25));
        let ch = v128_bitselect(f, g, e);
        let t1 = u32x4_add(
            u32x4_add(h, s1),
            u32x4_add(ch, u32x4_add(i32x4_splat(K[t] as i32), wt)),
        );
        let s0 = v128_xor(v128_xor(ror(a, 2), ror(a, 13)), ror(a, 22));
        let ab = v128_xor(a, b);
        let maj = v128_bitselect(c, b, ab);
        let t2 = u32x4_add(s0, maj);
        h = g;
        g = f;
        f = e;
        e = u32x4_add(d, t1);
        d = c;
        c = b;
        b = a;
        a = u32x4_add(t1, t2);
    }
    let mut out = st;
    for (s, v) in out.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = u32x4_add(*s, v);
    }
    out
}

/// One block into each of 4 word-major states (`st[i][lane]`), `blocks[lane]` for lane
/// `lane`.
#[target_feature(enable = "simd128")]
pub(crate) fn step4(st: &mut [[u32; 4]; 8], blocks: &[&[u8; 64]; 4]) {
    let s: [v128; 8] = core::array::from_fn(|i| u32x4(st[i][0], st[i][1], st[i][2], st[i][3]));
    let out = block4(s, words4(blocks));
    for (row, v) in st.iter_mut().zip(out) {
        *row = [
            u32x4_extract_lane::<0>(v),
            u32x4_extract_lane::<1>(v),
            u32x4_extract_lane::<2>(v),
            u32x4_extract_lane::<3>(v),
        ];
    }
}
