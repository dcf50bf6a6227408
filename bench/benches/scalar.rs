//! Benchmark: scalar, GLV-split and digit-recoding microbenchmarks, in thread CPU time.
//!
//! `cargo bench -p nostr-verify-bench --bench scalar` runs the criterion groups and then prints a summary table of
//! medians with ratios against libsecp256k1: in-run through the `secp256k1` crate
//! (`SecretKey::mul_tweak` / `add_tweak`, which add parsing and range checks to the bare
//! scalar op) and against `bench_internal`'s figures on the reference machine (`docs/benchmarks.md`)
//! (scalar_mul 33 ns, scalar_split 148 ns, scalar_inverse_var 1.04 µs).
//! `cargo bench -p nostr-verify-bench --bench scalar -- --summary-only` prints only the table.

#[path = "support/cpu_time.rs"]
mod cpu_time;

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion};
use nostr_verify::arithmetic::scalar::{Scalar, WideSum};
use nostr_verify::msm::recode::{
    signed_digits, signed_digits_u128, windows_u128, wnaf_u128, WNAF_U128_DIGITS,
};
use rand::{rngs::StdRng, Rng, SeedableRng};
use secp256k1::SecretKey;

use cpu_time::{median_ns, ThreadCpuTime};

const COUNT: usize = 1024;

fn inputs() -> (Vec<Scalar>, Vec<u128>) {
    let mut rng = StdRng::seed_from_u64(99);
    let s = (0..COUNT)
        .map(|_| Scalar::from_bytes_reduced(&rng.gen()))
        .collect();
    let k = (0..COUNT).map(|_| rng.gen()).collect();
    (s, k)
}

fn benches(c: &mut Criterion<ThreadCpuTime>) {
    let (s, k) = inputs();
    let mut g = c.benchmark_group("scalar");
    g.bench_function("mul (dependent chain)", |b| {
        let mut x = s[0];
        let y = s[1];
        b.iter(|| {
            x = x.mul(black_box(&y));
        });
        black_box(x);
    });
    g.bench_function("add", |b| {
        let mut x = s[0];
        b.iter(|| x = x.add(black_box(&s[1])));
        black_box(x);
    });
    g.bench_function("split_lambda", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % COUNT;
            black_box(black_box(&s[i]).split_lambda())
        })
    });
    g.bench_function("invert_vartime", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % COUNT;
            black_box(black_box(&s[i]).invert_vartime())
        })
    });
    g.bench_function("libsecp256k1 SecretKey::mul_tweak", |b| {
        let mut x = SecretKey::from_byte_array(&s[0].to_bytes()).unwrap();
        let y = secp256k1::Scalar::from_be_bytes(s[1].to_bytes()).unwrap();
        b.iter(|| x = x.mul_tweak(black_box(&y)).unwrap());
        black_box(x);
    });
    g.finish();

    let mut g = c.benchmark_group("recode");
    for w in [4usize, 5, 6] {
        g.bench_with_input(BenchmarkId::new("wnaf_u128", w), &w, |b, &w| {
            let mut naf = [0i8; WNAF_U128_DIGITS];
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % COUNT;
                black_box(wnaf_u128(black_box(k[i]), w, &mut naf))
            })
        });
    }
    for cw in [5usize, 7, 10] {
        g.bench_with_input(BenchmarkId::new("signed_digits_u128", cw), &cw, |b, &cw| {
            let mut out = [0i32; 129];
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % COUNT;
                signed_digits_u128(black_box(k[i]), cw, &mut out);
                black_box(&out);
            })
        });
    }
    g.finish();
}

/// Median ns per call for the summary table.
fn summary() {
    let (s, k) = inputs();
    let (samples, iters) = (31, 2000);
    let mut x = s[0];
    let mul = median_ns(samples, iters, || x = x.mul(black_box(&s[1])));
    let mut sk = SecretKey::from_byte_array(&s[0].to_bytes()).unwrap();
    let tw = secp256k1::Scalar::from_be_bytes(s[1].to_bytes()).unwrap();
    let mul_tweak = median_ns(samples, iters, || {
        sk = sk.mul_tweak(black_box(&tw)).unwrap()
    });
    let mut y = s[0];
    let add = median_ns(samples, iters, || y = y.add(black_box(&s[1])));
    let mut sk2 = SecretKey::from_byte_array(&s[0].to_bytes()).unwrap();
    let add_tweak = median_ns(samples, iters, || {
        sk2 = sk2.add_tweak(black_box(&tw)).unwrap()
    });
    let mut z = s[0];
    let mul_u128 = median_ns(samples, iters, || z = z.mul_u128(black_box(k[1])));
    let mut wide = WideSum::ZERO;
    let wide_add = median_ns(samples, iters, || {
        wide.add_mul_u128(black_box(&s[2]), black_box(k[3]))
    });
    let wide_reduce = median_ns(samples, iters, || {
        black_box(black_box(&wide).reduce());
    });
    let mut i = 0;
    let split = median_ns(samples, iters, || {
        i = (i + 1) % COUNT;
        black_box(black_box(&s[i]).split_lambda());
    });
    let inv = median_ns(samples, 50, || {
        i = (i + 1) % COUNT;
        black_box(black_box(&s[i]).invert_vartime());
    });
    let mut naf = [0i8; WNAF_U128_DIGITS];
    let wnaf5 = median_ns(samples, iters, || {
        i = (i + 1) % COUNT;
        black_box(wnaf_u128(black_box(k[i]), 5, &mut naf));
    });
    let mut out = [0i32; 129];
    let mut digits = |c: usize| {
        median_ns(samples, iters, || {
            i = (i + 1) % COUNT;
            signed_digits_u128(black_box(k[i]), c, &mut out);
            black_box(&out);
        })
    };
    let (d5, d7, d10) = (digits(5), digits(7), digits(10));
    let limbs = s[7].to_limbs();
    let mut out256 = [0i32; 257];
    let d256 = median_ns(samples, iters, || {
        signed_digits(black_box(&limbs), 256, 7, &mut out256);
        black_box(&out256);
    });
    black_box((x, y, z, sk, sk2));

    println!("\nSummary (median thread CPU time per call, {samples} samples × {iters} calls):");
    println!("| op | ours | libsecp256k1 in-run | ratio | libsecp256k1 bench_internal | ratio |");
    println!("|---|---|---|---|---|---|");
    println!("| scalar mul (chain) | {mul:.1} ns | {mul_tweak:.1} ns (mul_tweak) | {:.2}× | 33 ns | {:.2}× |", mul / mul_tweak, mul / 33.0);
    println!(
        "| scalar add | {add:.1} ns | {add_tweak:.1} ns (add_tweak) | {:.2}× | | |",
        add / add_tweak
    );
    println!(
        "| split_lambda | {split:.1} ns | | | 148 ns | {:.2}× |",
        split / 148.0
    );
    println!(
        "| invert_vartime | {:.2} µs | | | 1.04 µs | {:.2}× |",
        inv / 1e3,
        inv / 1040.0
    );
    println!("| scalar mul_u128 (chain) | {mul_u128:.1} ns | | | | |");
    println!("| WideSum add_mul_u128 / reduce | {wide_add:.1} / {wide_reduce:.1} ns | | | | |");
    println!("| wnaf_u128 w=5 | {wnaf5:.1} ns | | | | |");
    println!(
        "| signed_digits_u128 c=5 / 7 / 10 | {d5:.1} / {d7:.1} / {d10:.1} ns ({} / {} / {} windows) | | | | |",
        windows_u128(5),
        windows_u128(7),
        windows_u128(10)
    );
    println!("| signed_digits 256-bit c=7 | {d256:.1} ns | | | | |");
}

fn main() {
    cpu_time::run_with_summary(benches, summary);
}
