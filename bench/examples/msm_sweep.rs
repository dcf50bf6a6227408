//! Benchmark: the sweep behind the MSM parameters (`docs/benchmarks.md#msm-sweep-and-window-choice`):
//! Strauss widths and Pippenger window widths per point count, the crate's own choice
//! (`msm::msm_vartime`), and the batch size below which one-at-a-time wins.
//!
//! `cargo run --profile bench -p nostr-verify-bench --example msm_sweep` (thread CPU time, median of `ROUNDS`, default 7).
//! `SIZES=3074` (comma-separated point counts) sweeps only those sizes, `CS=8,9,10` only those
//! Pippenger widths; `SMALL=0` skips the small-batch table.

use nostr_verify::arithmetic::group::AffinePoint;
use nostr_verify::msm::{pippenger, straus};
use nostr_verify::{SigRef, Verifier};
use secp256k1::{Keypair, Secp256k1};
use std::hint::black_box;

#[path = "../benches/support/cpu_time.rs"]
mod support;
use support::{median, thread_cpu_ns as cpu_ns};

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

fn terms(n: usize, seed: &mut u64) -> (Vec<AffinePoint>, Vec<u128>) {
    let mut pts = Vec::new();
    while pts.len() < n {
        let mut x = [0u8; 32];
        for c in x.chunks_exact_mut(8) {
            c.copy_from_slice(&xorshift(seed).to_le_bytes());
        }
        if let Some(p) = AffinePoint::lift_x_bytes_vartime(&x) {
            pts.push(p);
        }
    }
    let ks = (0..n)
        .map(|_| ((xorshift(seed) as u128) << 64) | xorshift(seed) as u128)
        .collect();
    (pts, ks)
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let mut seed = 0x1234_5678_9abc_def1u64;
    println!(
        "backend: {:?}; µs per point (128-bit scalars), median of {rounds}",
        nostr_verify::backend::selected()
    );
    let list = |var: &str, default: &[usize]| -> Vec<usize> {
        std::env::var(var).ok().map_or_else(
            || default.to_vec(),
            |s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        )
    };
    let sizes = list(
        "SIZES",
        &[
            8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
            4096, 6144,
        ],
    );
    let cs = list("CS", &[3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    print!("| N | Strauss w=4 | w=5 | w=6 |");
    for &c in &cs {
        print!(" Pippenger c={c} |");
    }
    println!(" best | crate's choice |");
    print!("|---|---|---|---|");
    for _ in &cs {
        print!("---|");
    }
    println!("---|---|");
    let mut ms = nostr_verify::msm::Scratch::default();
    let mut ss = straus::Scratch::default();
    let mut ps = pippenger::Scratch::default();
    for n in sizes {
        let (pts, ks) = terms(n, &mut seed);
        let mut row = Vec::new();
        for w in [4usize, 5, 6] {
            if n > 256 {
                row.push((format!("Strauss w={w}"), f64::NAN));
                continue;
            }
            let t: Vec<f64> = (0..rounds)
                .map(|_| {
                    let t0 = cpu_ns();
                    black_box(straus::msm_vartime(black_box(&pts), &ks, w, &mut ss));
                    (cpu_ns() - t0) as f64 / 1e3 / n as f64
                })
                .collect();
            row.push((format!("Strauss w={w}"), median(&t)));
        }
        for &c in &cs {
            if (c >= 9 && n < 256) || (c <= 4 && n > 1024) || (c >= 12 && n < 1024) {
                row.push((format!("Pippenger c={c}"), f64::NAN));
                continue;
            }
            let t: Vec<f64> = (0..rounds)
                .map(|_| {
                    let t0 = cpu_ns();
                    black_box(pippenger::msm_vartime(black_box(&pts), &ks, c, &mut ps));
                    (cpu_ns() - t0) as f64 / 1e3 / n as f64
                })
                .collect();
            row.push((format!("Pippenger c={c}"), median(&t)));
        }
        let best = row
            .iter()
            .filter(|r| !r.1.is_nan())
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|r| r.0.clone());
        print!("| {n} |");
        for (_, t) in &row {
            if t.is_nan() {
                print!(" – |");
            } else {
                print!(" {t:.2} |");
            }
        }
        let chosen: Vec<f64> = (0..rounds)
            .map(|_| {
                let t0 = cpu_ns();
                black_box(nostr_verify::msm::msm_vartime(
                    black_box(&pts),
                    &ks,
                    &mut ms,
                ));
                (cpu_ns() - t0) as f64 / 1e3 / n as f64
            })
            .collect();
        println!(" {} | {:.2} |", best.unwrap_or_default(), median(&chosen));
    }
    if std::env::var("SMALL").is_ok_and(|v| v == "0") {
        return;
    }

    // Small batches: verify_batch vs one at a time with the same (warm) key cache.
    println!("\nsmall batches, 2 keys, warm cache: µs per signature, median of {rounds}");
    println!("| n | one at a time (Verifier::verify_one) | batch equation (verify_all) |");
    println!("|---|---|---|");
    let s = Secp256k1::new();
    let mut rng = rand::thread_rng();
    let kps: Vec<Keypair> = (0..2).map(|_| Keypair::new(&s, &mut rng)).collect();
    let mut v = Verifier::new();
    for n in 2..=10usize {
        let owned: Vec<([u8; 32], [u8; 32], [u8; 64])> = (0..n)
            .map(|i| {
                let msg = [i as u8; 32];
                let kp = &kps[i % 2];
                (
                    kp.x_only_public_key().0.serialize(),
                    msg,
                    s.sign_schnorr_no_aux_rand(&msg, kp).to_byte_array(),
                )
            })
            .collect();
        let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
        let mut one = Vec::new();
        let mut all = Vec::new();
        for _ in 0..rounds {
            let t0 = cpu_ns();
            for r in &refs {
                assert!(v.verify_one(black_box(r)));
            }
            let t1 = cpu_ns();
            assert!(v.verify_all(black_box(&refs)));
            let t2 = cpu_ns();
            one.push((t1 - t0) as f64 / 1e3 / n as f64);
            all.push((t2 - t1) as f64 / 1e3 / n as f64);
        }
        println!("| {n} | {:.2} | {:.2} |", median(&one), median(&all));
    }
}
