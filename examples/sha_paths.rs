//! The SHA-256 paths of the batch (`backend::sha`), same run: BIP-340 challenges (96 bytes after
//! the tag's midstate: two compressions) in µs per signature for each path this machine runs,
//! and `verify_batch` per signature with each path, on each backend, ratio against `soft`
//! (the portable algorithm `sha2` runs on CPUs without SHA instructions).
//!
//! `cargo run --release --example sha_paths` (thread CPU time, median of `ROUNDS`, default 21;
//! pin it with `taskset -c 1` for steadier figures).

use nostr_verify::backend::sha::{self, Sha, IV};
use nostr_verify::backend::{self, Backend};
use nostr_verify::{SigRef, Verifier};
use rand::RngCore;
use secp256k1::{Keypair, Secp256k1};
use std::hint::black_box;

#[path = "../benches/support/cpu_time.rs"]
mod support;
use support::{median, thread_cpu_ns as cpu_ns};

struct Owned {
    pk: [u8; 32],
    msg: [u8; 32],
    sig: [u8; 64],
}

fn make(n: usize) -> Vec<Owned> {
    let s = Secp256k1::new();
    let mut rng = rand::thread_rng();
    (0..n)
        .map(|_| {
            let kp = Keypair::new(&s, &mut rng);
            let mut msg = [0u8; 32];
            rng.fill_bytes(&mut msg);
            Owned {
                pk: kp.x_only_public_key().0.serialize(),
                msg,
                sig: s.sign_schnorr_with_rng(&msg, &kp, &mut rng).to_byte_array(),
            }
        })
        .collect()
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);
    let paths = Sha::available();
    eprintln!(
        "SHA-256 paths here: {:?}; selected {:?}; CPU SHA instructions: {}",
        paths,
        sha::sha_selected(),
        sha::cpu_has_sha_instructions()
    );
    let mut rng = rand::thread_rng();
    println!("BIP-340 challenges, µs per signature (thread CPU time, median of {rounds}); ratio = soft / path");
    print!("| n |");
    for p in &paths {
        print!(" {} |", p.name());
    }
    println!();
    println!("|---|{}", "---|".repeat(paths.len()));
    for n in [16usize, 64, 1024] {
        let data: Vec<[u8; 96]> = (0..n)
            .map(|_| {
                let mut m = [0u8; 96];
                rng.fill_bytes(&mut m);
                m
            })
            .collect();
        let msgs: Vec<&[u8]> = data.iter().map(|m| &m[..]).collect();
        let mut out = vec![[0u8; 32]; n];
        let iters = (20_000 / n).max(4);
        let per: Vec<f64> = paths
            .iter()
            .map(|&p| {
                median(
                    &(0..rounds)
                        .map(|_| {
                            let t = cpu_ns();
                            for _ in 0..iters {
                                sha::hash_many_from_on(p, &IV, 1, black_box(&msgs), &mut out);
                            }
                            (cpu_ns() - t) as f64 / 1e3 / (iters * n) as f64
                        })
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        let soft = per[paths.iter().position(|&p| p == Sha::Soft).unwrap_or(0)];
        print!("| {n} |");
        for v in &per {
            print!(" {v:.3} ({:.2}x) |", soft / v);
        }
        println!();
    }

    println!();
    println!(
        "verify_batch, distinct keys, µs per signature (median of {rounds}); ratio = soft / path"
    );
    let arms: Vec<Backend> = [Backend::Ifma, Backend::Portable]
        .into_iter()
        .filter(|b| b.is_available())
        .collect();
    print!("| backend | n |");
    for p in &paths {
        print!(" {} |", p.name());
    }
    println!();
    println!("|---|---|{}", "---|".repeat(paths.len()));
    let before = backend::selected();
    let sha_before = sha::sha_selected();
    for &arm in &arms {
        backend::set_selected(arm);
        for n in [64usize, 1024] {
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); paths.len()];
            let mut ok = Vec::new();
            for _ in 0..rounds {
                // Fresh keys for every path: no path profits from another's key cache.
                for (k, &p) in paths.iter().enumerate() {
                    let b = make(n);
                    let refs: Vec<SigRef<'_>> = b
                        .iter()
                        .map(|o| SigRef {
                            pubkey: &o.pk,
                            msg: &o.msg,
                            sig: &o.sig,
                        })
                        .collect();
                    let mut v = Verifier::new();
                    sha::set_sha_selected(p);
                    let t = cpu_ns();
                    assert!(v.verify_batch(black_box(&refs), &mut ok));
                    times[k].push((cpu_ns() - t) as f64 / 1e3 / n as f64);
                }
            }
            let med: Vec<f64> = times.iter().map(|t| median(t)).collect();
            let soft = med[paths.iter().position(|&p| p == Sha::Soft).unwrap_or(0)];
            print!("| {} | {n} |", arm.name());
            for v in &med {
                print!(" {v:.2} ({:.2}x) |", soft / v);
            }
            println!();
        }
    }
    backend::set_selected(before);
    sha::set_sha_selected(sha_before);
}
