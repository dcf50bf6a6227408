//! Benchmark: batch verification against libsecp256k1 single verification, in thread CPU time.
//!
//! `cargo bench -p nostr-verify-bench --bench batch`: per batch size (16, 64, 256, 1024) and key distribution
//! (all distinct, 8 keys), `Verifier::verify_batch` with a warm key cache and libsecp256k1
//! parse + verify one at a time (the baseline), `Throughput::Elements` = signatures. The
//! headline table with fresh keys every round is `cargo run --profile bench -p nostr-verify-bench --example batch`.

#[path = "support/cpu_time.rs"]
mod cpu_time;

use std::hint::black_box;

use cpu_time::ThreadCpuTime;
use criterion::{BenchmarkId, Criterion, Throughput};
use nostr_verify::{SigRef, Verifier};
use rand::{rngs::StdRng, RngCore, SeedableRng};
use secp256k1::{Keypair, Secp256k1};

type Owned = ([u8; 32], [u8; 32], [u8; 64]);

fn make(n: usize, keys: usize, seed: u64) -> Vec<Owned> {
    let mut rng = StdRng::seed_from_u64(seed);
    let s = Secp256k1::new();
    let kps: Vec<Keypair> = (0..keys).map(|_| Keypair::new(&s, &mut rng)).collect();
    (0..n)
        .map(|i| {
            let mut msg = [0u8; 32];
            rng.fill_bytes(&mut msg);
            let kp = &kps[i % keys];
            (
                kp.x_only_public_key().0.serialize(),
                msg,
                s.sign_schnorr_no_aux_rand(&msg, kp).to_byte_array(),
            )
        })
        .collect()
}

fn benches(c: &mut Criterion<ThreadCpuTime>) {
    let mut g = c.benchmark_group("batch");
    let mut v = Verifier::new();
    for n in [16usize, 64, 256, 1024] {
        for (name, keys) in [("distinct", n), ("8 keys", 8)] {
            let owned = make(n, keys, n as u64 + keys as u64);
            let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
            g.throughput(Throughput::Elements(n as u64));
            let mut ok = Vec::new();
            g.bench_with_input(
                BenchmarkId::new(format!("verify_batch, {name}"), n),
                &n,
                |b, _| b.iter(|| assert!(v.verify_batch(black_box(&refs), &mut ok))),
            );
            if keys == 8 {
                g.bench_with_input(
                    BenchmarkId::new("libsecp256k1 one at a time", n),
                    &n,
                    |b, _| {
                        b.iter(|| {
                            assert!(refs.iter().all(|r| nostr_verify::verify_one(black_box(r))))
                        })
                    },
                );
            }
        }
    }
    g.finish();
}

fn main() {
    let mut c = Criterion::default()
        .with_measurement(ThreadCpuTime)
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(2))
        .sample_size(20)
        .configure_from_args();
    benches(&mut c);
    c.final_summary();
}
