//! SHA-256 compressions of 8 (AVX2) or 16 (AVX-512F) independent messages side by side: lane
//! i of every vector holds message i's word, so one vector instruction runs a step of the
//! round for all of them (the multi-buffer method; no SHA instructions needed).
//!
//! Compiled under `cfg(nostr_verify_ifma)` (x86-64, rustc ≥ 1.89, where the AVX-512F intrinsics
//! are stable). The kernels are safe functions marked `#[target_feature(enable = "avx2")]` or
//! `"avx512f"`, called (inside `unsafe`) only from [`step8`] and [`step16`], which require
//! the detection results of [`avx2`] and [`avx512`]. The other `unsafe` blocks are the
//! vector loads and stores of states and blocks (`loadu` / `storeu` from and into arrays of
//! at least the bytes they touch).
//!
//! A call compresses one block per lane: `blocks[lane]` is lane `lane`'s block, and the
//! states are kept word-major in memory between calls (`st[i][lane]` is word i of lane
//! `lane`'s state), so that a caller can put a new message into a lane whose message is
//! done while the others go on (messages of different lengths, as event ids: the refill
//! schedule of `sha::hash_many_from_on`). The blocks are read in place, each with whole
//! vector loads, and transposed in registers into the 16 word vectors.
#![allow(unsafe_code)]

use super::sha_core::K;
use core::arch::x86_64::{
    __m256i, __m512i, _mm256_add_epi32, _mm256_and_si256, _mm256_andnot_si256, _mm256_loadu_si256,
    _mm256_or_si256, _mm256_permute2x128_si256, _mm256_set1_epi32, _mm256_setr_epi8,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_srli_epi32,
    _mm256_storeu_si256, _mm256_unpackhi_epi32, _mm256_unpackhi_epi64, _mm256_unpacklo_epi32,
    _mm256_unpacklo_epi64, _mm256_xor_si256, _mm512_add_epi32, _mm512_loadu_si512,
    _mm512_ror_epi32, _mm512_set1_epi32, _mm512_setzero_si512, _mm512_shuffle_i32x4,
    _mm512_srli_epi32, _mm512_storeu_si512, _mm512_ternarylogic_epi32, _mm512_unpackhi_epi32,
    _mm512_unpackhi_epi64, _mm512_unpacklo_epi32, _mm512_unpacklo_epi64,
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

/// The 16 message words of the 8 lanes' blocks (`w[j]` holds word j of every lane, as a
/// big-endian number): two 32-byte loads a block, a byte shuffle and an 8×8 transpose for
/// each half of the words.
#[inline]
#[target_feature(enable = "avx2")]
fn words8(blocks: &[&[u8; 64]; 8]) -> [__m256i; 16] {
    // Reverses the bytes of every 32-bit word (the shuffle works within 128-bit halves).
    let bswap = _mm256_setr_epi8(
        3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8,
        15, 14, 13, 12,
    );
    let mut w = [_mm256_setzero_si256(); 16];
    for half in 0..2 {
        // r[l]: words 8·half .. 8·half + 7 of lane l.
        let r: [__m256i; 8] = core::array::from_fn(|l| {
            // SAFETY: the block is 64 bytes; this reads bytes 32·half .. 32·half + 31 of it,
            // within bounds, and `loadu` needs no alignment.
            let v = unsafe { _mm256_loadu_si256(blocks[l][32 * half..].as_ptr().cast()) };
            _mm256_shuffle_epi8(v, bswap)
        });
        // Pairs of lanes interleaved: t[2i] holds words {0, 1 | 4, 5} of lanes 2i, 2i + 1,
        // t[2i + 1] words {2, 3 | 6, 7}.
        let mut t = [_mm256_setzero_si256(); 8];
        for i in 0..4 {
            t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
            t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
        }
        // u[4g + j]: word j (low 128 bits) and word 4 + j (high) of lanes 4g .. 4g + 3.
        let mut u = [_mm256_setzero_si256(); 8];
        for g in 0..2 {
            let (a0, a1, b0, b1) = (t[4 * g], t[4 * g + 1], t[4 * g + 2], t[4 * g + 3]);
            u[4 * g] = _mm256_unpacklo_epi64(a0, b0);
            u[4 * g + 1] = _mm256_unpackhi_epi64(a0, b0);
            u[4 * g + 2] = _mm256_unpacklo_epi64(a1, b1);
            u[4 * g + 3] = _mm256_unpackhi_epi64(a1, b1);
        }
        for j in 0..4 {
            w[8 * half + j] = _mm256_permute2x128_si256::<0x20>(u[j], u[4 + j]);
            w[8 * half + 4 + j] = _mm256_permute2x128_si256::<0x31>(u[j], u[4 + j]);
        }
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
    let out = block8(s, words8(blocks));
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

/// The 16 message words of the 16 lanes' blocks (`w[j]` holds word j of every lane, as a
/// big-endian number): one 64-byte load a block, a 16×16 transpose in four rounds of
/// shuffles, and a byte reversal by two rotations and a bit select.
#[inline]
#[target_feature(enable = "avx512f")]
fn words16(blocks: &[&[u8; 64]; 16]) -> [__m512i; 16] {
    // SAFETY: each block is 64 bytes, exactly one `__m512i`; `loadu` needs no alignment.
    let r: [__m512i; 16] =
        core::array::from_fn(|l| unsafe { _mm512_loadu_si512(blocks[l].as_ptr().cast()) });
    // In every 128-bit chunk c (words 4c .. 4c + 3 of a lane): a[2i] holds words 4c, 4c + 1
    // of lanes 2i, 2i + 1 interleaved, a[2i + 1] words 4c + 2, 4c + 3.
    let a: [__m512i; 16] = core::array::from_fn(|k| {
        let (x, y) = (r[k & !1], r[k | 1]);
        if k & 1 == 0 {
            _mm512_unpacklo_epi32(x, y)
        } else {
            _mm512_unpackhi_epi32(x, y)
        }
    });
    // b[4g + j], chunk c: word 4c + j of lanes 4g .. 4g + 3.
    let b: [__m512i; 16] = core::array::from_fn(|k| {
        let (g, j) = (k / 4, k % 4);
        let (x, y) = (a[4 * g + j / 2], a[4 * g + 2 + j / 2]);
        if j % 2 == 0 {
            _mm512_unpacklo_epi64(x, y)
        } else {
            _mm512_unpackhi_epi64(x, y)
        }
    });
    // A 4×4 transpose of 128-bit chunks among b[j], b[4 + j], b[8 + j], b[12 + j].
    let mut w = [_mm512_setzero_si512(); 16];
    for j in 0..4 {
        let p0 = _mm512_shuffle_i32x4::<0x44>(b[j], b[4 + j]);
        let p1 = _mm512_shuffle_i32x4::<0xEE>(b[j], b[4 + j]);
        let q0 = _mm512_shuffle_i32x4::<0x44>(b[8 + j], b[12 + j]);
        let q1 = _mm512_shuffle_i32x4::<0xEE>(b[8 + j], b[12 + j]);
        w[j] = _mm512_shuffle_i32x4::<0x88>(p0, q0);
        w[4 + j] = _mm512_shuffle_i32x4::<0xDD>(p0, q0);
        w[8 + j] = _mm512_shuffle_i32x4::<0x88>(p1, q1);
        w[12 + j] = _mm512_shuffle_i32x4::<0xDD>(p1, q1);
    }
    // Byte reversal: bytes 3 and 1 from the rotation by 8, bytes 2 and 0 from the one by 24
    // (0xCA: mask ? x : y, bit by bit).
    let mask = _mm512_set1_epi32(0xFF00_FF00_u32 as i32);
    for v in &mut w {
        *v = _mm512_ternarylogic_epi32::<0xCA>(
            mask,
            _mm512_ror_epi32::<8>(*v),
            _mm512_ror_epi32::<24>(*v),
        );
    }
    w
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
    let out = block16(s, words16(blocks));
    for (row, v) in st.iter_mut().zip(out) {
        // SAFETY: `row` is 64 bytes, exactly one `__m512i`; `storeu` needs no alignment.
        unsafe { _mm512_storeu_si512(row.as_mut_ptr().cast(), v) };
    }
}
