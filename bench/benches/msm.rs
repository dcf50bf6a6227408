//! Benchmark: multi-scalar multiplication in thread CPU time: Strauss and batch-affine Pippenger over the
//! point counts the batch verifier meets (`N = n + 2k + 2`), with the window the crate picks.
//!
//! `cargo bench -p nostr-verify-bench --bench msm`. The full width sweep behind the parameters is
//! `cargo run --profile bench -p nostr-verify-bench --example msm_sweep` (recorded in
//! `docs/benchmarks.md#msm-sweep-and-window-choice`).

#[path = "support/cpu_time.rs"]
mod cpu_time;

use std::hint::black_box;

use cpu_time::ThreadCpuTime;
use criterion::{BenchmarkId, Criterion, Throughput};
use nostr_verify::arithmetic::group::AffinePoint;
use nostr_verify::msm::{self, pippenger, straus};
use rand::{rngs::StdRng, RngCore, SeedableRng};

fn terms(n: usize) -> (Vec<AffinePoint>, Vec<u128>) {
    let mut rng = StdRng::seed_from_u64(n as u64);
    let mut pts = Vec::new();
    while pts.len() < n {
        let mut x = [0u8; 32];
        rng.fill_bytes(&mut x);
        if let Some(p) = AffinePoint::lift_x_bytes_vartime(&x) {
            pts.push(p);
        }
    }
    let ks = (0..n)
        .map(|_| ((rng.next_u64() as u128) << 64) | rng.next_u64() as u128)
        .collect();
    (pts, ks)
}

fn benches(c: &mut Criterion<ThreadCpuTime>) {
    let mut g = c.benchmark_group("msm");
    let mut scratch = msm::Scratch::default();
    let mut ss = straus::Scratch::default();
    for n in [8usize, 20, 82, 194, 1042, 3074] {
        let (pts, ks) = terms(n);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(
            BenchmarkId::new("msm_vartime (crate choice)", n),
            &n,
            |b, _| b.iter(|| black_box(msm::msm_vartime(black_box(&pts), &ks, &mut scratch))),
        );
        if n <= 82 {
            g.bench_with_input(BenchmarkId::new("straus w=4", n), &n, |b, _| {
                b.iter(|| black_box(straus::msm_vartime(black_box(&pts), &ks, 4, &mut ss)))
            });
        }
        let c = pippenger::window_for(n);
        let mut ps = pippenger::Scratch::default();
        g.bench_with_input(
            BenchmarkId::new(format!("pippenger c={c}"), n),
            &n,
            |b, _| b.iter(|| black_box(pippenger::msm_vartime(black_box(&pts), &ks, c, &mut ps))),
        );
    }
    g.finish();
}

fn main() {
    let mut c = Criterion::default()
        .with_measurement(ThreadCpuTime)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1))
        .sample_size(20)
        .configure_from_args();
    benches(&mut c);
    c.final_summary();
}
