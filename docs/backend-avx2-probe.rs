// AVX2 probe for issue 8 item 3 (NOT part of the crate; cargo never compiles docs/).
// A 4-lane AVX2 radix-2^26 (10 limbs) field mul/sqr for secp256k1 with vpmuludq and the
// (p+1)/4 square-root chain, timed in thread CPU time. Reproduce (see docs/backend.md):
//   rustc --edition 2021 -C opt-level=3 docs/backend-avx2-probe.rs -o /tmp/avx2-probe
//   /tmp/avx2-probe | tee /tmp/avx2-probe.txt
// The CHK lines are x and the limbs of r = (x^2)^((p+1)/4); check r^2 = x^2 (mod p) with the
// python3 one-liner in docs/backend.md.
use std::arch::x86_64::*;
const M26: u64 = (1 << 26) - 1;
const M22: u64 = (1 << 22) - 1;
#[derive(Clone, Copy)]
struct F4([__m256i; 10]);

#[inline] #[target_feature(enable = "avx2")]
fn s(v: u64) -> __m256i { _mm256_set1_epi64x(v as i64) }

#[inline] #[target_feature(enable = "avx2")]
fn reduce(c: [__m256i; 19]) -> F4 {
    let m = s(M26);
    let mut c20 = [s(0); 20];
    // full carry chain: 20 limbs of 26 bits
    let mut carry = s(0);
    for k in 0..19 { let v = _mm256_add_epi64(c[k], carry); c20[k] = _mm256_and_si256(v, m); carry = _mm256_srli_epi64(v, 26); }
    c20[19] = carry; // < 2^33
    // fold H*2^260, R = 2^36 + 0x3D10: limb k>=10 -> d[k-10] += c*0x3D10, d[k-9] += c<<10
    let r0 = s(0x3D10);
    let mut d = [s(0); 11];
    for k in 0..10 { d[k] = c20[k]; }
    for k in 10..20 {
        d[k - 10] = _mm256_add_epi64(d[k - 10], _mm256_mul_epu32(c20[k], r0));
        d[k - 9] = _mm256_add_epi64(d[k - 9], _mm256_slli_epi64(c20[k], 10));
    }
    // d[10] (weight 2^260) < 2^43: fold again in two 26-bit pieces
    let lo = _mm256_and_si256(d[10], m); let hi = _mm256_srli_epi64(d[10], 26);
    d[0] = _mm256_add_epi64(d[0], _mm256_mul_epu32(lo, r0));
    d[1] = _mm256_add_epi64(d[1], _mm256_slli_epi64(lo, 10));
    d[1] = _mm256_add_epi64(d[1], _mm256_mul_epu32(hi, r0));
    d[2] = _mm256_add_epi64(d[2], _mm256_slli_epi64(hi, 10));
    // carry chain, top fold at 2^256 (limb 9 keeps 22 bits), 0x1000003D1 = 2^32 + 0x3D1
    let mut carry = s(0);
    for k in 0..9 { let v = _mm256_add_epi64(d[k], carry); d[k] = _mm256_and_si256(v, m); carry = _mm256_srli_epi64(v, 26); }
    let v = _mm256_add_epi64(d[9], carry);
    d[9] = _mm256_and_si256(v, s(M22)); let t = _mm256_srli_epi64(v, 22);
    d[0] = _mm256_add_epi64(d[0], _mm256_mul_epu32(t, s(0x3D1)));
    d[1] = _mm256_add_epi64(d[1], _mm256_slli_epi64(t, 6));
    // short carry: limbs 0,1 -> 2 (enough for the next mul's input bound < 2^27)
    let v = d[0]; d[0] = _mm256_and_si256(v, m); d[1] = _mm256_add_epi64(d[1], _mm256_srli_epi64(v, 26));
    let v = d[1]; d[1] = _mm256_and_si256(v, m); d[2] = _mm256_add_epi64(d[2], _mm256_srli_epi64(v, 26));
    F4([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9]])
}

#[inline] #[target_feature(enable = "avx2")]
fn mul(a: &F4, b: &F4) -> F4 {
    let mut c = [s(0); 19];
    for i in 0..10 { for j in 0..10 { c[i + j] = _mm256_add_epi64(c[i + j], _mm256_mul_epu32(a.0[i], b.0[j])); } }
    reduce(c)
}
#[inline] #[target_feature(enable = "avx2")]
fn sqr(a: &F4) -> F4 {
    let mut c = [s(0); 19];
    let mut a2 = a.0; for x in a2.iter_mut() { *x = _mm256_add_epi64(*x, *x); }
    for i in 0..10 {
        c[2 * i] = _mm256_add_epi64(c[2 * i], _mm256_mul_epu32(a.0[i], a.0[i]));
        for j in (i + 1)..10 { c[i + j] = _mm256_add_epi64(c[i + j], _mm256_mul_epu32(a2[i], a.0[j])); }
    }
    reduce(c)
}
const K: usize = 4;
#[inline] #[target_feature(enable = "avx2")]
fn sq(a: &[F4; K], n: usize) -> [F4; K] { let mut r = *a; for _ in 0..n { for v in r.iter_mut() { *v = sqr(v); } } r }
#[inline] #[target_feature(enable = "avx2")]
fn mu(a: &[F4; K], b: &[F4; K]) -> [F4; K] { let mut r = *a; for (v, w) in r.iter_mut().zip(b) { *v = mul(v, w); } r }
#[target_feature(enable = "avx2")]
fn sqrt_chain(a: &[F4; K]) -> [F4; K] {
    let x2 = mu(&sq(a, 1), a); let x3 = mu(&sq(&x2, 1), a); let x6 = mu(&sq(&x3, 3), &x3);
    let x9 = mu(&sq(&x6, 3), &x3); let x11 = mu(&sq(&x9, 2), &x2); let x22 = mu(&sq(&x11, 11), &x11);
    let x44 = mu(&sq(&x22, 22), &x22); let x88 = mu(&sq(&x44, 44), &x44); let x176 = mu(&sq(&x88, 88), &x88);
    let x220 = mu(&sq(&x176, 44), &x44); let x223 = mu(&sq(&x220, 3), &x3);
    let t = mu(&sq(&x223, 23), &x22); let t = mu(&sq(&t, 6), &x2); sq(&t, 2)
}
fn cpu_ns() -> u64 { let mut ts = libc_ts { s: 0, ns: 0 }; unsafe { clock_gettime(3, &mut ts) }; ts.s as u64 * 1_000_000_000 + ts.ns as u64 }
#[repr(C)] struct libc_ts { s: i64, ns: i64 }
extern "C" { fn clock_gettime(clk: i32, ts: *mut libc_ts) -> i32; }
fn to_arr(v: __m256i) -> [u64; 4] { let mut o = [0u64; 4]; unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), v) }; o }
fn main() {
    assert!(is_x86_feature_detected!("avx2"));
    // inputs: c = x^2 for x = 12345 + lane*K + k (limbs)
    let mut input = [F4([unsafe { _mm256_setzero_si256() }; 10]); K];
    let mut xs = vec![];
    for k in 0..K { let mut l = [[0u64; 4]; 10];
        for lane in 0..4 { let x: u128 = 0x1234_5678_9abc_def0_1122_3344 + (k * 4 + lane) as u128 * 0x9e37_79b9_7f4a_7c15; xs.push(x);
            let mut v = x; for i in 0..10 { l[i][lane] = (v as u64) & M26; v >>= 26; } }
        for i in 0..10 { input[k].0[i] = unsafe { _mm256_loadu_si256(l[i].as_ptr().cast()) }; } }
    let c = unsafe { let mut c = input; for v in c.iter_mut() { *v = sqr(v); } c };
    let r = unsafe { sqrt_chain(&c) };
    // print x and r limbs for a python check: r^2 == x^2 mod p
    for k in 0..K { for lane in 0..4 { let limbs: Vec<u64> = (0..10).map(|i| to_arr(r[k].0[i])[lane]).collect(); println!("CHK {} {:?}", xs[k * 4 + lane], limbs); } }
    // timing: sqrt chain on K vectors (4K roots), and sqr throughput
    let mut best = vec![];
    for _ in 0..21 { let t = cpu_ns(); let mut x = c; for _ in 0..10 { x = unsafe { sqrt_chain(&x) }; } let dt = cpu_ns() - t; std::hint::black_box(&x); best.push(dt as f64 / (10.0 * 4.0 * K as f64)); }
    best.sort_by(f64::total_cmp);
    println!("AVX2 4-lane sqrt, {K} vectors in flight: median {:.0} ns per root (min {:.0})", best[10], best[0]);
    let mut sb = vec![];
    for _ in 0..21 { let t = cpu_ns(); let x = unsafe { sq(&c, 1000) }; let dt = cpu_ns() - t; std::hint::black_box(&x); sb.push(dt as f64 / (1000.0 * 4.0 * K as f64)); }
    sb.sort_by(f64::total_cmp);
    println!("AVX2 4-lane sqr: median {:.2} ns per element", sb[10]);
}
