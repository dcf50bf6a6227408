//! Profiling helper: verifies the same batch (`N` signatures, default 1024, by `KEYS` keys,
//! default all distinct; cold key cache each time) in a loop (`ITERS`), for `perf record`.
//! `cargo run --release --example profile_batch`.

use nostr_verify::{SigRef, Verifier};
use secp256k1::{Keypair, Secp256k1};

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
    let kps: Vec<Keypair> = (0..keys).map(|_| Keypair::new(&s, &mut rng)).collect();
    let owned: Vec<([u8; 32], [u8; 32], [u8; 64])> = (0..n)
        .map(|i| {
            let msg = [(i % 251) as u8; 32];
            let kp = &kps[i % keys];
            (
                kp.x_only_public_key().0.serialize(),
                msg,
                s.sign_schnorr_no_aux_rand(&msg, kp).to_byte_array(),
            )
        })
        .collect();
    let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
    let mut ok = Vec::new();
    for _ in 0..iters {
        // A fresh verifier each time: cold key cache, as in the benchmark.
        let mut v = Verifier::with_cache_capacity(8);
        assert!(v.verify_batch(&refs, &mut ok));
    }
}
