//! Benchmark of the backends: `lift_x_many_vartime` and `add_affine_pairs_vartime` on every arm this
//! machine can run, timed in thread CPU time.
//!
//! `cargo bench -p nostr-verify-bench --bench backend` first prints a summary table (median thread CPU time per
//! element, each arm and the ratio to the portable arm, measured in the same run), then runs
//! the criterion groups `lift_x_many/<arm>/<n>` and `add_affine_pairs/<arm>/<n>`.
//! `cargo bench -p nostr-verify-bench --bench backend -- summary` prints the table only.

#[path = "support/cpu_time.rs"]
mod cpu_time;

use core::hint::black_box;
use criterion::{BenchmarkId, Criterion, Throughput};
use nostr_verify::arithmetic::field::FieldElement;
use nostr_verify::arithmetic::group::AffinePoint;
use nostr_verify::backend::Backend;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn random_fe(rng: &mut StdRng) -> FieldElement {
    loop {
        if let Some(f) = FieldElement::from_bytes(&rng.gen()) {
            return f;
        }
    }
}

/// Random x coordinates: about half have a point (as for R of valid and invalid signatures,
/// the lift costs the same either way).
fn xs(n: usize) -> Vec<FieldElement> {
    let mut rng = StdRng::seed_from_u64(7);
    (0..n).map(|_| random_fe(&mut rng)).collect()
}

/// Pairs of random points with distinct x.
fn pairs(n: usize) -> (Vec<AffinePoint>, Vec<AffinePoint>) {
    let mut rng = StdRng::seed_from_u64(8);
    let mut pts = Vec::with_capacity(2 * n);
    while pts.len() < 2 * n {
        if let Some(p) = AffinePoint::lift_x_vartime(&random_fe(&mut rng)) {
            pts.push(p);
        }
    }
    let b = pts.split_off(n);
    (pts, b)
}

fn lift_ns(arm: Backend, xs: &[FieldElement]) -> f64 {
    let mut ys = vec![FieldElement::ZERO; xs.len()];
    let mut ok = vec![false; xs.len()];
    // At least about 48 roots a sample, so that small calls are not timer noise.
    let per_call = cpu_time::median_ns(15, (48 / xs.len().max(1)).max(3), || {
        arm.lift_x_many_vartime(black_box(xs), &mut ys, &mut ok);
    });
    per_call / xs.len() as f64
}

fn add_ns(arm: Backend, a: &[AffinePoint], b: &[AffinePoint]) -> f64 {
    let mut out = vec![AffinePoint::IDENTITY; a.len()];
    let per_call = cpu_time::median_ns(15, 3, || {
        arm.add_affine_pairs_vartime(black_box(a), black_box(b), &mut out);
    });
    per_call / a.len() as f64
}

/// The table quoted in docs/backend.md.
fn summary() {
    let arms = Backend::available();
    println!(
        "backend summary: median thread CPU time per element (15 samples of max(3, 48/n) calls)"
    );
    println!(
        "selected backend: {}",
        nostr_verify::backend::selected().name()
    );
    // 1-3 and 17: the short last groups of the portable lift (docs/benchmarks.md, "Lift groups").
    for n in [1usize, 2, 3, 4, 16, 17, 256, 1024] {
        let x = xs(n);
        let cells: Vec<(Backend, f64)> = arms.iter().map(|&arm| (arm, lift_ns(arm, &x))).collect();
        print_row("lift_x", n, &cells);
    }
    for n in [64usize, 256, 1024, 4096] {
        let (a, b) = pairs(n);
        let cells: Vec<(Backend, f64)> =
            arms.iter().map(|&arm| (arm, add_ns(arm, &a, &b))).collect();
        print_row("affine add", n, &cells);
    }
}

fn print_row(op: &str, n: usize, cells: &[(Backend, f64)]) {
    let portable = cells
        .iter()
        .find(|(b, _)| *b == Backend::Portable)
        .map(|c| c.1);
    let mut line = format!("{op:>10} n={n:<5}");
    for (arm, ns) in cells {
        line += &format!(" | {:>8}: {:>9.1} ns", arm.name(), ns);
        if let (Some(p), true) = (portable, *arm != Backend::Portable) {
            line += &format!(" ({:.2}x vs portable)", p / ns);
        }
    }
    println!("{line}");
}

fn bench_lift(c: &mut Criterion<cpu_time::ThreadCpuTime>) {
    let mut g = c.benchmark_group("lift_x_many");
    for arm in Backend::available() {
        for n in [16usize, 256, 1024] {
            let x = xs(n);
            let mut ys = vec![FieldElement::ZERO; n];
            let mut ok = vec![false; n];
            g.throughput(Throughput::Elements(n as u64));
            g.bench_with_input(BenchmarkId::new(arm.name(), n), &x, |bch, x| {
                bch.iter(|| arm.lift_x_many_vartime(black_box(x), &mut ys, &mut ok))
            });
        }
    }
    g.finish();
}

fn bench_add(c: &mut Criterion<cpu_time::ThreadCpuTime>) {
    let mut g = c.benchmark_group("add_affine_pairs");
    for arm in Backend::available() {
        for n in [64usize, 1024, 4096] {
            let (a, b) = pairs(n);
            let mut out = vec![AffinePoint::IDENTITY; n];
            g.throughput(Throughput::Elements(n as u64));
            g.bench_function(BenchmarkId::new(arm.name(), n), |bch| {
                bch.iter(|| arm.add_affine_pairs_vartime(black_box(&a), black_box(&b), &mut out))
            });
        }
    }
    g.finish();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let listing = args.iter().any(|a| a == "--list");
    // Under `cargo test --benches` (criterion's test mode) skip the timed summary.
    let test_mode = args.iter().any(|a| a == "--test") || !args.iter().any(|a| a == "--bench");
    if !listing && !test_mode {
        summary();
    }
    if args.iter().any(|a| a == "summary") {
        return;
    }
    let mut c = Criterion::default()
        .with_measurement(cpu_time::ThreadCpuTime)
        .configure_from_args();
    bench_lift(&mut c);
    bench_add(&mut c);
    c.final_summary();
}
