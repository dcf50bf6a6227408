//! Benchmark: field microbenchmarks in thread CPU time: mul, square, sqrt, inverse, batch inverse.
//!
//! `cargo bench -p nostr-verify-bench --bench field` runs the criterion group and prints a summary table of
//! medians next to libsecp256k1's `bench_internal` figures on the reference machine
//! (`docs/benchmarks.md`): (fe_mul 17.6 ns and fe_sqr 14.4 ns over 8 independent chains, fe_sqrt 4.48 µs,
//! fe_inv_var 1.02 µs). The field kernels are not reachable through the `secp256k1`
//! crate, so no in-run libsecp256k1 column exists here.
//! `cargo bench -p nostr-verify-bench --bench field -- --summary-only` prints only the table.

#[path = "support/cpu_time.rs"]
mod cpu_time;

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use nostr_verify::arithmetic::field::FieldElement;
// The portable backend's kernel type: 4×64-bit words, or the 10×26 wrapper under
// cfg(nostr_verify_field32) (`arithmetic::kernel`).
use nostr_verify::arithmetic::kernel::KernelField as FieldElement4x64;
use rand::{rngs::StdRng, RngCore, SeedableRng};

use cpu_time::{median_ns, ThreadCpuTime};

const COUNT: usize = 1024;
/// Independent dependency chains per iteration.
const CHAINS: usize = 8;

fn inputs() -> Vec<FieldElement> {
    let mut rng = StdRng::seed_from_u64(7);
    (0..COUNT)
        .map(|_| {
            let mut b = [0u8; 32];
            rng.fill_bytes(&mut b);
            FieldElement::from_bytes_unchecked(&b)
        })
        .collect()
}

/// One step of 8 independent `x[i] = x[i]·y[i]` chains.
#[inline(always)]
fn mul8(x: &mut [FieldElement; CHAINS], y: &[FieldElement; CHAINS]) {
    for i in 0..CHAINS {
        x[i] = x[i].mul(&y[i]);
    }
}

/// One step of 8 independent `x[i] = x[i]²` chains.
#[inline(always)]
fn sqr8(x: &mut [FieldElement; CHAINS]) {
    for xi in x.iter_mut() {
        *xi = xi.square();
    }
}

fn benches(c: &mut Criterion<ThreadCpuTime>) {
    let v = inputs();
    let y: [FieldElement; CHAINS] = core::array::from_fn(|i| v[i]);
    let mut g = c.benchmark_group("field");
    g.throughput(Throughput::Elements(CHAINS as u64));
    g.bench_function("mul (8 chains)", |b| {
        let mut x: [FieldElement; CHAINS] = core::array::from_fn(|i| v[i + 8]);
        b.iter(|| mul8(&mut x, black_box(&y)));
        black_box(x);
    });
    g.bench_function("square (8 chains)", |b| {
        let mut x: [FieldElement; CHAINS] = core::array::from_fn(|i| v[i + 8]);
        b.iter(|| sqr8(&mut x));
        black_box(x);
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("mul (one chain)", |b| {
        let mut x = v[0];
        b.iter(|| x = x.mul(black_box(&v[1])));
        black_box(x);
    });
    g.bench_function("normalize", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % COUNT;
            black_box(black_box(&v[i]).normalize())
        })
    });
    g.bench_function("sqrt_vartime", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % COUNT;
            black_box(black_box(&v[i]).sqrt_vartime())
        })
    });
    g.bench_function("invert_vartime", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % COUNT;
            black_box(black_box(&v[i]).invert_vartime())
        })
    });
    for n in [64usize, 1024] {
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("batch_invert_vartime", n), &n, |b, &n| {
            let mut buf = v[..n].to_vec();
            let mut scratch = Vec::with_capacity(n);
            b.iter(|| {
                buf.copy_from_slice(&v[..n]);
                FieldElement::batch_invert_vartime(black_box(&mut buf), &mut scratch);
            });
        });
    }
    g.finish();
}

/// Median ns per operation for the summary table.
fn summary() {
    let v = inputs();
    let samples = 31;
    let y: [FieldElement; CHAINS] = core::array::from_fn(|i| v[i]);
    let mut x: [FieldElement; CHAINS] = core::array::from_fn(|i| v[i + 8]);
    let mul = median_ns(samples, 2000, || mul8(&mut x, black_box(&y))) / CHAINS as f64;
    let sqr = median_ns(samples, 2000, || sqr8(&mut x)) / CHAINS as f64;
    let mut z = v[0];
    let mul1 = median_ns(samples, 2000, || z = z.mul(black_box(&v[1])));
    let mut i = 0;
    let sqrt = median_ns(samples, 100, || {
        i = (i + 1) % COUNT;
        black_box(black_box(&v[i]).sqrt_vartime());
    });
    let inv = median_ns(samples, 100, || {
        i = (i + 1) % COUNT;
        black_box(black_box(&v[i]).invert_vartime());
    });
    let mut buf = v.clone();
    let mut scratch = Vec::with_capacity(COUNT);
    let batch = median_ns(samples, 5, || {
        buf.copy_from_slice(&v);
        FieldElement::batch_invert_vartime(black_box(&mut buf), &mut scratch);
    }) / COUNT as f64;
    black_box((x, z));
    // The portable backend's 4×64-bit kernels on the same values.
    let y4: [FieldElement4x64; CHAINS] = core::array::from_fn(|i| FieldElement4x64::from_fe(&v[i]));
    let mut x4: [FieldElement4x64; CHAINS] =
        core::array::from_fn(|i| FieldElement4x64::from_fe(&v[i + 8]));
    let mul4 = median_ns(samples, 2000, || {
        for i in 0..CHAINS {
            x4[i] = x4[i].mul(black_box(&y4[i]));
        }
    }) / CHAINS as f64;
    let sqr4 = median_ns(samples, 2000, || {
        for xi in x4.iter_mut() {
            *xi = xi.square();
        }
    }) / CHAINS as f64;
    let sqrt4 = median_ns(samples, 100, || {
        i = (i + 2) % COUNT;
        let (a, b) = (y4[i % CHAINS], x4[(i + 1) % CHAINS]);
        black_box(FieldElement4x64::sqrt_many_vartime(&[
            black_box(a),
            black_box(b),
        ]));
    }) / 2.0;
    black_box(x4);

    println!("\nSummary (median thread CPU time per op, {samples} samples):");
    println!("| op | ours | libsecp256k1 (bench_internal) | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| fe mul, 8 chains | {mul:.1} ns | 17.6 ns | {:.2}× |",
        mul / 17.6
    );
    println!(
        "| fe sqr, 8 chains | {sqr:.1} ns | 14.4 ns | {:.2}× |",
        sqr / 14.4
    );
    println!("| fe mul, 1 chain (latency) | {mul1:.1} ns | | |");
    println!(
        "| sqrt_vartime | {:.2} µs | 4.48 µs | {:.2}× |",
        sqrt / 1e3,
        sqrt / 4480.0
    );
    println!(
        "| invert_vartime | {:.2} µs | 1.02 µs (fe_inv_var) | {:.2}× |",
        inv / 1e3,
        inv / 1020.0
    );
    println!("| batch_invert_vartime, per element (n = {COUNT}) | {batch:.1} ns | | |");
    let kernel = if cfg!(nostr_verify_field32) {
        "10×26 (kernel)"
    } else {
        "4×64"
    };
    println!(
        "| {kernel} mul, 8 chains (portable backend) | {mul4:.1} ns | 17.6 ns | {:.2}× |",
        mul4 / 17.6
    );
    println!(
        "| {kernel} sqr, 8 chains (portable backend) | {sqr4:.1} ns | 14.4 ns | {:.2}× |",
        sqr4 / 14.4
    );
    println!(
        "| {kernel} sqrt, two interleaved, per root | {:.2} µs | 4.48 µs | {:.2}× |",
        sqrt4 / 1e3,
        sqrt4 / 4480.0
    );
}

fn main() {
    cpu_time::run_with_summary(benches, summary);
}
