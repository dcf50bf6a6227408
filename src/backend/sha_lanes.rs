//! SHA-256 compressions of 8 (AVX2) or 16 (AVX-512F) independent messages side by side: lane
//! i of every vector holds message i's word, so one vector instruction runs a step of the
//! round for all of them (the multi-buffer method; no SHA instructions needed).
//!
//! Compiled under `cfg(nostr_verify_ifma)` (x86-64, rustc ≥ 1.89, where the AVX-512F intrinsics
//! are stable). The kernels are safe functions marked `#[target_feature(enable = "avx2")]` or
//! `"avx512f"`, called (inside `unsafe`) only from [`compress8`] and [`compress16`], which
//! require the detection results of [`avx2`] and [`avx512`] (likewise [`step8`] and
//! [`step16`]). The other `unsafe` blocks are the loads and stores of states (`loadu` /
//! `storeu` from and into arrays of exactly the vector's size).
//!
//! Two shapes of call:
//! - [`compress8`] / [`compress16`]: `nb` blocks for every lane (messages of one block count,
//!   as a batch's challenges); `states[lane]` is lane `lane`'s state, `blocks[lane * nb + k]`
//!   its k-th block. The state stays in registers from the first block to the last.
//! - [`step8`] / [`step16`]: one block per lane, the states kept word-major in memory
//!   between calls (`st[i][lane]` is word i of lane `lane`'s state), so that a caller can
//!   put a new message into a lane whose message is done while the others go on (messages
//!   of different lengths, as event ids: `sha::hash_many_from_on`'s refill scheduler).
#![allow(unsafe_code)]

use super::sha::K;
use core::arch::x86_64::{
    __m256i, __m512i, _mm256_add_epi32, _mm256_and_si256, _mm256_andnot_si256, _mm256_loadu_si256,
    _mm256_or_si256, _mm256_set1_epi32, _mm256_setr_epi32, _mm256_slli_epi32, _mm256_srli_epi32,
    _mm256_storeu_si256, _mm256_xor_si256, _mm512_add_epi32, _mm512_loadu_si512, _mm512_ror_epi32,
    _mm512_set1_epi32, _mm512_setr_epi32, _mm512_srli_epi32, _mm512_storeu_si512,
    _mm512_ternarylogic_epi32,
};
use std::sync::OnceLock;

/// Proof that the running CPU has AVX2.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

/// Proof that the running CPU has AVX-512F.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512(());

/// AVX2 detection, run once.
pub(crate) fn avx2() -> Option<Avx2> {
    static CPU: OnceLock<bool> = OnceLock::new();
    CPU.get_or_init(|| std::is_x86_feature_detected!("avx2"))
        .then_some(Avx2(()))
}

/// AVX-512F detection, run once.
pub(crate) fn avx512() -> Option<Avx512> {
    static CPU: OnceLock<bool> = OnceLock::new();
    CPU.get_or_init(|| std::is_x86_feature_detected!("avx512f"))
        .then_some(Avx512(()))
}

/// Big-endian word `j` of a block.
#[inline(always)]
fn word(b: &[u8; 64], j: usize) -> i32 {
    i32::from_be_bytes([b[4 * j], b[4 * j + 1], b[4 * j + 2], b[4 * j + 3]])
}

/// Compresses `nb` blocks per lane into 8 states (`states.len() == 8`,
/// `blocks.len() == 8 * nb`).
///
/// # Panics
/// If the lengths are not those, or this CPU has no AVX2 (never: [`Sha::Lanes8`] is
/// available only where [`avx2`] detected it).
///
/// [`Sha::Lanes8`]: super::sha::Sha::Lanes8
pub(crate) fn compress8(states: &mut [[u32; 8]], blocks: &[[u8; 64]], nb: usize) {
    assert!(
        states.len() == 8 && blocks.len() == 8 * nb,
        "compress8: lengths"
    );
    let Some(_cpu) = avx2() else {
        panic!("compress8 without AVX2")
    };
    let s: &mut [[u32; 8]; 8] = states.try_into().expect("8 states");
    // SAFETY: `avx2()` returned `Some`, so this CPU has AVX2, the only feature the kernel
    // enables.
    unsafe { compress8_kernel(s, blocks, nb) }
}

/// Compresses `nb` blocks per lane into 16 states (`states.len() == 16`,
/// `blocks.len() == 16 * nb`).
///
/// # Panics
/// If the lengths are not those, or this CPU has no AVX-512F (never: [`Sha::Lanes16`] is
/// available only where [`avx512`] detected it).
///
/// [`Sha::Lanes16`]: super::sha::Sha::Lanes16
pub(crate) fn compress16(states: &mut [[u32; 8]], blocks: &[[u8; 64]], nb: usize) {
    assert!(
        states.len() == 16 && blocks.len() == 16 * nb,
        "compress16: lengths"
    );
    let Some(_cpu) = avx512() else {
        panic!("compress16 without AVX-512F")
    };
    let s: &mut [[u32; 8]; 16] = states.try_into().expect("16 states");
    // SAFETY: `avx512()` returned `Some`, so this CPU has AVX-512F, the only feature the kernel
    // enables.
    unsafe { compress16_kernel(s, blocks, nb) }
}

// ---- AVX2: 8 lanes ----------------------------------------------------------------------

#[inline]
#[target_feature(enable = "avx2")]
fn add8(a: __m256i, b: __m256i) -> __m256i {
    _mm256_add_epi32(a, b)
}

#[inline]
#[target_feature(enable = "avx2")]
fn xor8(a: __m256i, b: __m256i) -> __m256i {
    _mm256_xor_si256(a, b)
}

/// Rotate every lane right by `R` (`L` = 32 − `R`: const generics cannot compute it).
#[inline]
#[target_feature(enable = "avx2")]
fn ror8<const R: i32, const L: i32>(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_srli_epi32::<R>(x), _mm256_slli_epi32::<L>(x))
}

#[inline]
#[target_feature(enable = "avx2")]
fn load8(blocks: &[[u8; 64]], nb: usize, k: usize, j: usize) -> __m256i {
    let w = |lane: usize| word(&blocks[lane * nb + k], j);
    _mm256_setr_epi32(w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7))
}

/// The 16 message words of block `k` of every lane (layout of [`compress8`]).
#[inline]
#[target_feature(enable = "avx2")]
fn words8(blocks: &[[u8; 64]], nb: usize, k: usize) -> [__m256i; 16] {
    let mut w = [_mm256_set1_epi32(0); 16];
    for (j, wj) in w.iter_mut().enumerate() {
        *wj = load8(blocks, nb, k, j);
    }
    w
}

/// One compression of 8 lanes: the 64 rounds on `st` with the message words `w`, plus the
/// feed-forward.
#[inline]
#[target_feature(enable = "avx2")]
fn block8(st: [__m256i; 8], mut w: [__m256i; 16]) -> [__m256i; 8] {
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = st;
    for t in 0..64 {
        let wt = if t < 16 {
            w[t]
        } else {
            // W[t] = σ1(W[t−2]) + W[t−7] + σ0(W[t−15]) + W[t−16], in a ring of 16.
            let w15 = w[(t + 1) & 15];
            let w2 = w[(t + 14) & 15];
            let s0 = xor8(
                xor8(ror8::<7, 25>(w15), ror8::<18, 14>(w15)),
                _mm256_srli_epi32::<3>(w15),
            );
            let s1 = xor8(
                xor8(ror8::<17, 15>(w2), ror8::<19, 13>(w2)),
                _mm256_srli_epi32::<10>(w2),
            );
            let v = add8(add8(w[t & 15], s0), add8(w[(t + 9) & 15], s1));
            w[t & 15] = v;
            v
        };
        let s1 = xor8(xor8(ror8::<6, 26>(e), ror8::<11, 21>(e)), ror8::<25, 7>(e));
        let ch = xor8(_mm256_and_si256(e, f), _mm256_andnot_si256(e, g));
        let t1 = add8(
            add8(h, s1),
            add8(ch, add8(_mm256_set1_epi32(K[t] as i32), wt)),
        );
        let s0 = xor8(xor8(ror8::<2, 30>(a), ror8::<13, 19>(a)), ror8::<22, 10>(a));
        let maj = _mm256_or_si256(
            _mm256_and_si256(a, b),
            _mm256_and_si256(c, _mm256_or_si256(a, b)),
        );
        let t2 = add8(s0, maj);
        h = g;
        g = f;
        f = e;
        e = add8(d, t1);
        d = c;
        c = b;
        b = a;
        a = add8(t1, t2);
    }
    let mut out = st;
    for (s, v) in out.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = add8(*s, v);
    }
    out
}

#[target_feature(enable = "avx2")]
fn compress8_kernel(states: &mut [[u32; 8]; 8], blocks: &[[u8; 64]], nb: usize) {
    let lane = |i: usize| {
        let s = |lane: usize| states[lane][i] as i32;
        _mm256_setr_epi32(s(0), s(1), s(2), s(3), s(4), s(5), s(6), s(7))
    };
    let mut st: [__m256i; 8] = core::array::from_fn(lane);
    for k in 0..nb {
        st = block8(st, words8(blocks, nb, k));
    }
    for (i, v) in st.iter().enumerate() {
        let mut out = [0u32; 8];
        // SAFETY: `out` is 32 bytes, exactly one `__m256i`; `storeu` needs no alignment.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), *v) };
        for (lane, &x) in out.iter().enumerate() {
            states[lane][i] = x;
        }
    }
}

/// One block into each of 8 word-major states (`st[i][lane]`), `blocks[lane]` for lane
/// `lane`.
///
/// # Panics
/// If this CPU has no AVX2 (never: [`Sha::Lanes8`] is available only where [`avx2`]
/// detected it).
///
/// [`Sha::Lanes8`]: super::sha::Sha::Lanes8
pub(crate) fn step8(st: &mut [[u32; 8]; 8], blocks: &[&[u8; 64]; 8]) {
    let Some(_cpu) = avx2() else {
        panic!("step8 without AVX2")
    };
    // SAFETY: `avx2()` returned `Some`, so this CPU has AVX2, the only feature the kernel
    // enables.
    unsafe { step8_kernel(st, blocks) }
}

#[target_feature(enable = "avx2")]
fn step8_kernel(st: &mut [[u32; 8]; 8], blocks: &[&[u8; 64]; 8]) {
    // SAFETY: each `st[i]` is 32 bytes, exactly one `__m256i`; `loadu` needs no alignment.
    let s: [__m256i; 8] =
        core::array::from_fn(|i| unsafe { _mm256_loadu_si256(st[i].as_ptr().cast()) });
    let w: [__m256i; 16] = core::array::from_fn(|j| {
        let x = |lane: usize| word(blocks[lane], j);
        _mm256_setr_epi32(x(0), x(1), x(2), x(3), x(4), x(5), x(6), x(7))
    });
    let out = block8(s, w);
    for (row, v) in st.iter_mut().zip(out) {
        // SAFETY: `row` is 32 bytes, exactly one `__m256i`; `storeu` needs no alignment.
        unsafe { _mm256_storeu_si256(row.as_mut_ptr().cast(), v) };
    }
}

// ---- AVX-512F: 16 lanes -----------------------------------------------------------------

#[inline]
#[target_feature(enable = "avx512f")]
fn add16(a: __m512i, b: __m512i) -> __m512i {
    _mm512_add_epi32(a, b)
}

/// `a ^ b ^ c` in one instruction.
#[inline]
#[target_feature(enable = "avx512f")]
fn xor3(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
    _mm512_ternarylogic_epi32::<0x96>(a, b, c)
}

#[inline]
#[target_feature(enable = "avx512f")]
fn load16(blocks: &[[u8; 64]], nb: usize, k: usize, j: usize) -> __m512i {
    set16(|lane| word(&blocks[lane * nb + k], j))
}

/// One compression of 16 lanes: the 64 rounds on `st` with the message words `w`, plus the
/// feed-forward.
#[inline]
#[target_feature(enable = "avx512f")]
fn block16(st: [__m512i; 8], mut w: [__m512i; 16]) -> [__m512i; 8] {
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = st;
    for t in 0..64 {
        let wt = if t < 16 {
            w[t]
        } else {
            let w15 = w[(t + 1) & 15];
            let w2 = w[(t + 14) & 15];
            let s0 = xor3(
                _mm512_ror_epi32::<7>(w15),
                _mm512_ror_epi32::<18>(w15),
                _mm512_srli_epi32::<3>(w15),
            );
            let s1 = xor3(
                _mm512_ror_epi32::<17>(w2),
                _mm512_ror_epi32::<19>(w2),
                _mm512_srli_epi32::<10>(w2),
            );
            let v = add16(add16(w[t & 15], s0), add16(w[(t + 9) & 15], s1));
            w[t & 15] = v;
            v
        };
        let s1 = xor3(
            _mm512_ror_epi32::<6>(e),
            _mm512_ror_epi32::<11>(e),
            _mm512_ror_epi32::<25>(e),
        );
        // Ch(e, f, g) = e ? f : g (truth table 0xCA); Maj(a, b, c) (0xE8).
        let ch = _mm512_ternarylogic_epi32::<0xCA>(e, f, g);
        let t1 = add16(
            add16(h, s1),
            add16(ch, add16(_mm512_set1_epi32(K[t] as i32), wt)),
        );
        let s0 = xor3(
            _mm512_ror_epi32::<2>(a),
            _mm512_ror_epi32::<13>(a),
            _mm512_ror_epi32::<22>(a),
        );
        let maj = _mm512_ternarylogic_epi32::<0xE8>(a, b, c);
        let t2 = add16(s0, maj);
        h = g;
        g = f;
        f = e;
        e = add16(d, t1);
        d = c;
        c = b;
        b = a;
        a = add16(t1, t2);
    }
    let mut out = st;
    for (s, v) in out.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = add16(*s, v);
    }
    out
}

/// The vector whose lane `i` is `f(i)`.
#[inline]
#[target_feature(enable = "avx512f")]
fn set16(f: impl Fn(usize) -> i32) -> __m512i {
    _mm512_setr_epi32(
        f(0),
        f(1),
        f(2),
        f(3),
        f(4),
        f(5),
        f(6),
        f(7),
        f(8),
        f(9),
        f(10),
        f(11),
        f(12),
        f(13),
        f(14),
        f(15),
    )
}

#[target_feature(enable = "avx512f")]
fn compress16_kernel(states: &mut [[u32; 8]; 16], blocks: &[[u8; 64]], nb: usize) {
    let mut st: [__m512i; 8] = core::array::from_fn(|i| set16(|lane| states[lane][i] as i32));
    for k in 0..nb {
        let w: [__m512i; 16] = core::array::from_fn(|j| load16(blocks, nb, k, j));
        st = block16(st, w);
    }
    for (i, v) in st.iter().enumerate() {
        let mut out = [0u32; 16];
        // SAFETY: `out` is 64 bytes, exactly one `__m512i`; `storeu` needs no alignment.
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), *v) };
        for (lane, &x) in out.iter().enumerate() {
            states[lane][i] = x;
        }
    }
}

/// One block into each of 16 word-major states (`st[i][lane]`), `blocks[lane]` for lane
/// `lane`.
///
/// # Panics
/// If this CPU has no AVX-512F (never: [`Sha::Lanes16`] is available only where [`avx512`]
/// detected it).
///
/// [`Sha::Lanes16`]: super::sha::Sha::Lanes16
pub(crate) fn step16(st: &mut [[u32; 16]; 8], blocks: &[&[u8; 64]; 16]) {
    let Some(_cpu) = avx512() else {
        panic!("step16 without AVX-512F")
    };
    // SAFETY: `avx512()` returned `Some`, so this CPU has AVX-512F, the only feature the
    // kernel enables.
    unsafe { step16_kernel(st, blocks) }
}

#[target_feature(enable = "avx512f")]
fn step16_kernel(st: &mut [[u32; 16]; 8], blocks: &[&[u8; 64]; 16]) {
    // SAFETY: each `st[i]` is 64 bytes, exactly one `__m512i`; `loadu` needs no alignment.
    let s: [__m512i; 8] =
        core::array::from_fn(|i| unsafe { _mm512_loadu_si512(st[i].as_ptr().cast()) });
    let w: [__m512i; 16] = core::array::from_fn(|j| set16(|lane| word(blocks[lane], j)));
    let out = block16(s, w);
    for (row, v) in st.iter_mut().zip(out) {
        // SAFETY: `row` is 64 bytes, exactly one `__m512i`; `storeu` needs no alignment.
        unsafe { _mm512_storeu_si512(row.as_mut_ptr().cast(), v) };
    }
}
