//! Benchmark: group microbenchmarks in thread CPU time: doubling, mixed and Jacobian addition,
//! lift_x, conversion to affine.
//!
//! `cargo bench -p nostr-verify-bench --bench group` runs the criterion group and prints a summary table of
//! medians next to libsecp256k1's `bench_internal` figures on the reference machine
//! (`docs/benchmarks.md`): (8 independent chains: `gej_add_ge_var` 226 ns, `gej_add_var` 330 ns, `gej_double`
//! 117 ns). `cargo bench -p nostr-verify-bench --bench group -- --summary-only` prints only the table.

#[path = "support/cpu_time.rs"]
mod cpu_time;

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use nostr_verify::arithmetic::field::FieldElement;
use nostr_verify::arithmetic::group::{AffinePoint, JacobianPoint};
use rand::{rngs::StdRng, RngCore, SeedableRng};

use cpu_time::{median_ns, ThreadCpuTime};

const COUNT: usize = 256;
const CHAINS: usize = 8;

/// Random affine points (lifted from random x) and their Jacobian forms at random Z.
fn inputs() -> (Vec<AffinePoint>, Vec<JacobianPoint>, Vec<[u8; 32]>) {
    let mut rng = StdRng::seed_from_u64(11);
    let mut aff = Vec::new();
    let mut xs = Vec::new();
    while aff.len() < COUNT {
        let mut b = [0u8; 32];
        rng.fill_bytes(&mut b);
        xs.push(b);
        if let Some(p) = AffinePoint::lift_x_bytes_vartime(&b) {
            aff.push(p);
        }
    }
    let jac = aff
        .iter()
        .map(|a| {
            let mut b = [0u8; 32];
            rng.fill_bytes(&mut b);
            let z = FieldElement::from_bytes_unchecked(&b).normalize();
            let z2 = z.square();
            JacobianPoint {
                x: a.x.mul(&z2),
                y: a.y.mul(&z2).mul(&z),
                z,
                infinity: false,
            }
        })
        .collect();
    (aff, jac, xs)
}

#[inline(always)]
fn madd8(acc: &mut [JacobianPoint; CHAINS], q: &[AffinePoint; CHAINS]) {
    for i in 0..CHAINS {
        acc[i] = acc[i].add_affine_vartime(&q[i]);
    }
}

#[inline(always)]
fn add8(acc: &mut [JacobianPoint; CHAINS], q: &[JacobianPoint; CHAINS]) {
    for i in 0..CHAINS {
        acc[i] = acc[i].add_vartime(&q[i]);
    }
}

#[inline(always)]
fn dbl8(acc: &mut [JacobianPoint; CHAINS]) {
    for a in acc.iter_mut() {
        *a = a.double_vartime();
    }
}

fn benches(c: &mut Criterion<ThreadCpuTime>) {
    let (aff, jac, xs) = inputs();
    let qa: [AffinePoint; CHAINS] = core::array::from_fn(|i| aff[i]);
    let qj: [JacobianPoint; CHAINS] = core::array::from_fn(|i| jac[i]);
    let mut g = c.benchmark_group("group");
    g.throughput(Throughput::Elements(CHAINS as u64));
    g.bench_function("add_affine_vartime (8 chains)", |b| {
        let mut acc: [JacobianPoint; CHAINS] = core::array::from_fn(|i| jac[i + 8]);
        b.iter(|| madd8(&mut acc, black_box(&qa)));
        black_box(acc);
    });
    g.bench_function("add_vartime (8 chains)", |b| {
        let mut acc: [JacobianPoint; CHAINS] = core::array::from_fn(|i| jac[i + 8]);
        b.iter(|| add8(&mut acc, black_box(&qj)));
        black_box(acc);
    });
    g.bench_function("double_vartime (8 chains)", |b| {
        let mut acc: [JacobianPoint; CHAINS] = core::array::from_fn(|i| jac[i + 8]);
        b.iter(|| dbl8(&mut acc));
        black_box(acc);
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("lift_x_bytes_vartime", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % xs.len();
            black_box(AffinePoint::lift_x_bytes_vartime(black_box(&xs[i])))
        })
    });
    g.bench_function("to_affine_vartime", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % COUNT;
            black_box(black_box(&jac[i]).to_affine_vartime())
        })
    });
    g.throughput(Throughput::Elements(COUNT as u64));
    g.bench_with_input(
        BenchmarkId::new("batch_to_affine_vartime", COUNT),
        &COUNT,
        |b, _| {
            let mut out = Vec::with_capacity(COUNT);
            b.iter(|| JacobianPoint::batch_to_affine_vartime(black_box(&jac), &mut out));
        },
    );
    g.finish();
}

/// Median ns per operation for the summary table.
fn summary() {
    let (aff, jac, xs) = inputs();
    let samples = 31;
    let qa: [AffinePoint; CHAINS] = core::array::from_fn(|i| aff[i]);
    let qj: [JacobianPoint; CHAINS] = core::array::from_fn(|i| jac[i]);
    let mut acc: [JacobianPoint; CHAINS] = core::array::from_fn(|i| jac[i + 8]);
    let madd = median_ns(samples, 500, || madd8(&mut acc, black_box(&qa))) / CHAINS as f64;
    let add = median_ns(samples, 500, || add8(&mut acc, black_box(&qj))) / CHAINS as f64;
    let dbl = median_ns(samples, 500, || dbl8(&mut acc)) / CHAINS as f64;
    black_box(acc);
    let mut i = 0;
    let lift = median_ns(samples, 100, || {
        i = (i + 1) % xs.len();
        black_box(AffinePoint::lift_x_bytes_vartime(black_box(&xs[i])));
    });
    let mut out = Vec::with_capacity(COUNT);
    let batch = median_ns(samples, 5, || {
        JacobianPoint::batch_to_affine_vartime(black_box(&jac), &mut out)
    }) / COUNT as f64;

    println!("\nSummary (median thread CPU time per op, {samples} samples):");
    println!("| op | ours | libsecp256k1 (bench_internal) | ratio |");
    println!("|---|---|---|---|");
    println!(
        "| mixed add (gej_add_ge_var), 8 chains | {madd:.1} ns | 226 ns | {:.2}× |",
        madd / 226.0
    );
    println!(
        "| Jacobian add (gej_add_var), 8 chains | {add:.1} ns | 330 ns | {:.2}× |",
        add / 330.0
    );
    println!(
        "| double (gej_double), 8 chains | {dbl:.1} ns | 117 ns | {:.2}× |",
        dbl / 117.0
    );
    println!(
        "| lift_x (random x, half liftable) | {:.2} µs | | |",
        lift / 1e3
    );
    println!("| batch_to_affine, per point (n = {COUNT}) | {batch:.1} ns | | |");
}

fn main() {
    cpu_time::run_with_summary(benches, summary);
}
