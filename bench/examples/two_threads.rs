//! What `Verifier::verify_batch_two_threads` costs against `Verifier::verify_batch`, same run.
//!
//! ```text
//! cargo run --profile bench -p nostr-verify-bench --example two_threads -- [ROUNDS]
//! ```
//! For batches of 256 to 4096 signatures, with all-distinct keys never seen before (cold: every
//! key is lifted, as for gift wraps' one-time keys) and with 8 keys the verifier already holds
//! (warm), prints per signature the **process CPU time** (`CLOCK_PROCESS_CPUTIME_ID`: every
//! thread of the process, so the helper thread counts) and the wall-clock time of both, and
//! their ratios: `cpu 2t/1t` (at most 1.15 is the target: the second thread may not add work)
//! and `wall 1t/2t` (the speed-up on two idle cores). Medians over ROUNDS (default 15) rounds;
//! each round verifies a fresh batch with each, the order alternating by round. Nothing else
//! runs in the process meanwhile; wall-clock figures need two idle cores to mean anything.

use cpu_time::ProcessTime;
use nostr_verify::{SigRef, Verifier};
use secp256k1::{Keypair, Secp256k1};
use std::hint::black_box;
use std::time::Instant;

struct Owned {
    pk: [u8; 32],
    msg: [u8; 32],
    sig: [u8; 64],
}

fn sign(kps: &[Keypair], n: usize, rng: &mut rand::rngs::ThreadRng) -> Vec<Owned> {
    use rand::RngCore;
    let s = Secp256k1::new();
    (0..n)
        .map(|i| {
            let kp = &kps[i % kps.len()];
            let mut msg = [0u8; 32];
            rng.fill_bytes(&mut msg);
            Owned {
                pk: kp.x_only_public_key().0.serialize(),
                msg,
                sig: s.sign_schnorr_with_rng(&msg, kp, rng).to_byte_array(),
            }
        })
        .collect()
}

fn keypairs(k: usize, rng: &mut rand::rngs::ThreadRng) -> Vec<Keypair> {
    let s = Secp256k1::new();
    (0..k).map(|_| Keypair::new(&s, rng)).collect()
}

fn refs(b: &[Owned]) -> Vec<SigRef<'_>> {
    b.iter()
        .map(|o| SigRef {
            pubkey: &o.pk,
            msg: &o.msg,
            sig: &o.sig,
        })
        .collect()
}

/// (process CPU seconds, wall seconds) of `f`.
fn measure(f: impl FnOnce() -> bool) -> (f64, f64) {
    let (c0, t0) = (ProcessTime::now(), Instant::now());
    assert!(black_box(f()), "every signature is valid");
    (c0.elapsed().as_secs_f64(), t0.elapsed().as_secs_f64())
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(15)
        .max(1);
    let mut rng = rand::thread_rng();
    let mut v = Verifier::new();
    let mut ok = Vec::new();
    println!(
        "verify_batch (1t) vs verify_batch_two_threads (2t), {rounds} rounds, medians, \
         µs per signature; {} cores",
        std::thread::available_parallelism().map_or(1, |c| c.get())
    );
    println!(
        "| n | keys | cpu 1t | cpu 2t | cpu 2t/1t | wall 1t | wall 2t | wall 1t/2t |\n\
         |---|---|---|---|---|---|---|---|"
    );
    for n in [256usize, 512, 1024, 2048, 4096] {
        for cold in [true, false] {
            let warm_keys = keypairs(8, &mut rng);
            if !cold {
                // The verifier meets the 8 keys once, untimed.
                let b = sign(&warm_keys, 64, &mut rng);
                v.verify_batch(&refs(&b), &mut ok);
            }
            let mut cpu: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            let mut wall: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            let mut cpu_ratio: Vec<f64> = Vec::new();
            let mut wall_ratio: Vec<f64> = Vec::new();
            for round in 0..rounds {
                let batches: Vec<Vec<Owned>> = (0..2)
                    .map(|_| {
                        if cold {
                            sign(&keypairs(n, &mut rng), n, &mut rng)
                        } else {
                            sign(&warm_keys, n, &mut rng)
                        }
                    })
                    .collect();
                let mut got = [(0.0, 0.0); 2];
                for (pass, batch) in batches.iter().enumerate() {
                    let two = (round + pass) % 2 == 1;
                    let sigs = refs(batch);
                    got[usize::from(two)] = if two {
                        measure(|| v.verify_batch_two_threads(black_box(&sigs), &mut ok))
                    } else {
                        measure(|| v.verify_batch(black_box(&sigs), &mut ok))
                    };
                }
                for (t, (c, w)) in got.into_iter().enumerate() {
                    cpu[t].push(c * 1e6 / n as f64);
                    wall[t].push(w * 1e6 / n as f64);
                }
                cpu_ratio.push(got[1].0 / got[0].0);
                wall_ratio.push(got[0].1 / got[1].1);
            }
            println!(
                "| {n} | {} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                if cold { "distinct, cold" } else { "8, warm" },
                median(&cpu[0]),
                median(&cpu[1]),
                median(&cpu_ratio),
                median(&wall[0]),
                median(&wall[1]),
                median(&wall_ratio),
            );
        }
    }
}
