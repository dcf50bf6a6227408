//! This crate against the crates.io `nostr-verify` 0.1.0, same run, both on their portable
//! paths.
//!
//! `cargo run --release --manifest-path bench/peer/Cargo.toml` signs its own signatures (fresh
//! keys every round) and, for batch sizes 16, 64, 256, 1024 and keys all distinct / 8 / 1,
//! prints microseconds per signature of `verify_batch` (median of 21 rounds, thread CPU time)
//! for the crates.io `nostr-verify` 0.1.0 (an earlier implementation of the same design, what
//! `cargo add nostr-verify` gives a user today) and for ours, and their ratio (peer / ours).
//!
//! Ours runs on the portable arm ([`Backend::Portable`]: what ARM runs, plus `mulx` on an
//! x86-64 CPU with BMI2/ADX), or its baseline build under
//! `NOSTR_VERIFY_BACKEND=portable-baseline` (exactly what non-x86 targets run). The peer has
//! no SIMD curve arithmetic; on x86-64 with AVX2 it hashes the challenges eight at a time in
//! AVX2 lanes, and has no switch to turn that off; ours hashes with `sha2` (SHA-NI where the
//! CPU has it). Each round verifies the same fresh signatures with both, each with its own
//! verifier (neither meets keys the other parsed), the order alternating; the "paired" ratio is
//! the median over the rounds of each round's own ratio (the steadier figure on a shared host).
//!
//! Options: `ROUNDS=n` (default 21). Pin it for steadier numbers: `taskset -c 1 ...`.
//!
//! It lives outside the main workspace: see `bench/peer/Cargo.toml`.

use nostr_verify::backend::{self, Backend};
use nostr_verify::{SigRef, Verifier};
use nostr_verify_peer as peer;
use secp256k1::{Keypair, Secp256k1};
use std::hint::black_box;

/// One signature's public key, message and signature bytes.
struct Owned {
    pk: [u8; 32],
    msg: [u8; 32],
    sig: [u8; 64],
}

/// `n` signatures over random messages by `keys` fresh keys (round robin).
fn make(rng: &mut rand::rngs::ThreadRng, n: usize, keys: usize) -> Vec<Owned> {
    use rand::RngCore;
    let s = Secp256k1::new();
    let kps: Vec<Keypair> = (0..keys).map(|_| Keypair::new(&s, rng)).collect();
    (0..n)
        .map(|i| {
            let kp = &kps[i % keys];
            let mut msg = [0u8; 32];
            rng.fill_bytes(&mut msg);
            let sig = s.sign_schnorr_with_rng(&msg, kp, rng);
            Owned {
                pk: kp.x_only_public_key().0.serialize(),
                msg,
                sig: sig.to_byte_array(),
            }
        })
        .collect()
}

/// CPU time consumed by the calling thread, in nanoseconds.
fn cpu_ns() -> u64 {
    cpu_time::ThreadTime::now().as_duration().as_nanos() as u64
}

/// The median of `v` (the upper one for an even count).
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One row: µs per signature of each side, per round.
struct Row {
    n: usize,
    keys: &'static str,
    k: usize,
    peer: Vec<f64>,
    ours: Vec<f64>,
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);
    let arm = if backend::selected() == Backend::PortableBaseline {
        Backend::PortableBaseline
    } else {
        Backend::Portable
    };
    assert_eq!(backend::set_selected(arm), arm);
    eprintln!(
        "ours on `{}` (BMI2/ADX build {}); {rounds} rounds",
        arm.name(),
        if arm == Backend::Portable && backend::portable_uses_bmi2() {
            "used"
        } else {
            "not used"
        }
    );
    let mut rows: Vec<Row> = Vec::new();
    for n in [16usize, 64, 256, 1024] {
        for (keys, k) in [("distinct", n), ("8 keys", 8), ("1 key", 1)] {
            rows.push(Row {
                n,
                keys,
                k,
                peer: vec![],
                ours: vec![],
            });
        }
    }
    let mut rng = rand::thread_rng();
    let mut ours_v = Verifier::new();
    let mut peer_v = peer::Verifier::new();
    let mut ok = Vec::new();
    for round in 0..rounds {
        for (c, row) in rows.iter_mut().enumerate() {
            let b = make(&mut rng, row.n, row.k);
            let ours_refs: Vec<SigRef<'_>> = b
                .iter()
                .map(|o| SigRef {
                    pubkey: &o.pk,
                    msg: &o.msg,
                    sig: &o.sig,
                })
                .collect();
            let peer_refs: Vec<peer::SigRef<'_>> = b
                .iter()
                .map(|o| peer::SigRef {
                    pubkey: &o.pk,
                    msg: &o.msg,
                    sig: &o.sig,
                })
                .collect();
            let (mut t_ours, mut t_peer) = (0, 0);
            for side in 0..2 {
                let t0 = cpu_ns();
                if (round + c + side) % 2 == 0 {
                    assert!(ours_v.verify_batch(black_box(&ours_refs), &mut ok));
                    t_ours = cpu_ns() - t0;
                } else {
                    assert!(peer_v.verify_batch(black_box(&peer_refs), &mut ok));
                    t_peer = cpu_ns() - t0;
                }
            }
            row.ours.push(t_ours as f64 / 1e3 / row.n as f64);
            row.peer.push(t_peer as f64 / 1e3 / row.n as f64);
        }
        eprint!("\rround {}/{rounds}", round + 1);
    }
    eprintln!();
    println!(
        "crates.io nostr-verify 0.1.0 vs ours on `{}`: thread CPU time, median of {rounds} rounds, µs per signature; ratio = peer / ours",
        arm.name()
    );
    println!("| n | keys | nostr-verify 0.1.0 | ours | ratio | paired ratio |");
    println!("|---|---|---|---|---|---|");
    let mut worst = f64::INFINITY;
    for r in &rows {
        let (p, o) = (median(&r.peer), median(&r.ours));
        let per_round: Vec<f64> = r.peer.iter().zip(&r.ours).map(|(p, o)| p / o).collect();
        let paired = median(&per_round);
        worst = worst.min(paired);
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.2}x | {:.2}x |",
            r.n,
            r.keys,
            p,
            o,
            p / o,
            paired
        );
    }
    println!("smallest paired ratio: {worst:.2}x");
}
