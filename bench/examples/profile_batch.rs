//! Benchmark and profiling helper: verifies the same batch (`N` signatures, default 1024, by `KEYS` keys,
//! default all distinct; cold keys each time, scratch reused) in a loop (`ITERS`), for
//! `perf record`.
//! `cargo run --profile bench -p nostr-verify-bench --example profile_batch`.

use nostr_verify::{SigRef, Verifier};
use secp256k1::{Keypair, Secp256k1};

/// One signature's public key, message and signature bytes.
type Owned = ([u8; 32], [u8; 32], [u8; 64]);

fn main() {
    let keys: usize = std::env::var("KEYS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    let n: usize = std::env::var("N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1024);
    let iters: usize = std::env::var("ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let s = Secp256k1::new();
    let mut rng = rand::thread_rng();
    // Several batches, each with keys of its own, verified in turn by one verifier whose key
    // cache holds fewer keys than a batch brings: every batch meets cold keys (as in the
    // benchmark), while the verifier's scratch is reused (as in a service).
    const SETS: usize = 9;
    let sets: Vec<Vec<Owned>> = (0..SETS)
        .map(|_| {
            let kps: Vec<Keypair> = (0..keys).map(|_| Keypair::new(&s, &mut rng)).collect();
            (0..n)
                .map(|i| {
                    let msg = [(i % 251) as u8; 32];
                    let kp = &kps[i % keys];
                    (
                        kp.x_only_public_key().0.serialize(),
                        msg,
                        s.sign_schnorr_no_aux_rand(&msg, kp).to_byte_array(),
                    )
                })
                .collect()
        })
        .collect();
    let refs: Vec<Vec<SigRef<'_>>> = sets
        .iter()
        .map(|set| set.iter().map(SigRef::from).collect())
        .collect();
    let mut ok = Vec::new();
    let mut v = Verifier::with_cache_capacity(1);
    for i in 0..iters {
        assert!(v.verify_batch(&refs[i % SETS], &mut ok));
    }
}
