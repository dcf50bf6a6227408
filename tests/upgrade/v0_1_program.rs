// A program written against the crates.io `nostr-verify` 0.1.0: every public call of its README
// (the snippets and the table "The calls") and of its `examples/batch.rs`, under the crate
// path `v01`. `tests/upgrade_from_0_1.rs` compiles and runs it against this crate
// (`use nostr_verify as v01;`); `bench/peer/tests/upgrade_from_0_1.rs` compiles the same file
// against the crates.io 0.1.0 itself (`use nostr_verify_peer as v01;`), so a call that 0.1.0
// does not have, or that this crate renamed, fails one build or the other. Only the values
// differ between the two: `MIN_BATCH` is 3 in 0.1.0 and 4 here.
//
// It is `include!`d, so it holds items only (no inner attributes or docs).

use secp256k1::{Keypair, Secp256k1};
use std::cell::RefCell;
use v01::{SigRef, Stats, Verifier, MIN_BATCH};

/// One signed message, owned (0.1.0's `examples/batch.rs` keeps its inputs this way).
struct Owned {
    pk: [u8; 32],
    msg: [u8; 32],
    sig: [u8; 64],
}

/// `n` signatures by `keys` distinct keys, over random messages (0.1.0's `examples/batch.rs`).
fn signed(n: usize, keys: usize) -> Vec<Owned> {
    let secp = Secp256k1::new();
    let pairs: Vec<Keypair> = (0..keys)
        .map(|_| Keypair::new(&secp, &mut rand::thread_rng()))
        .collect();
    (0..n)
        .map(|i| {
            let kp = &pairs[i % keys];
            let msg: [u8; 32] = rand::random();
            let sig = secp.sign_schnorr_no_aux_rand(&msg, kp);
            Owned {
                pk: kp.x_only_public_key().0.serialize(),
                msg,
                sig: sig.to_byte_array(),
            }
        })
        .collect()
}

fn refs(v: &[Owned]) -> Vec<SigRef<'_>> {
    v.iter()
        .map(|o| SigRef {
            pubkey: &o.pk,
            msg: &o.msg,
            sig: &o.sig,
        })
        .collect()
}

thread_local! {
    static VERIFIER: RefCell<Verifier> = RefCell::new(Verifier::new());
}

/// 0.1.0's README, "With rust-nostr", on byte triples: the thread's verifier, borrowed.
fn signatures(sigs: &[SigRef<'_>]) -> Vec<bool> {
    let mut ok = Vec::new();
    VERIFIER.with_borrow_mut(|v| v.verify_batch(sigs, &mut ok));
    ok
}

/// Runs every call and checks each verdict against libsecp256k1's (`v01::verify_one`) and
/// the counters against what the calls did. Returns the final counters.
fn run_v0_1_program() -> Stats {
    // README "Use": a batch, one verdict per signature.
    let owned = signed(64, 8);
    let sigs = refs(&owned);
    let mut verifier = Verifier::new();
    let mut ok = Vec::new();
    let all = verifier.verify_batch(&sigs, &mut ok);
    assert!(all);
    assert_eq!(ok, vec![true; sigs.len()]);

    // A forged signature: a batch that fails is narrowed, its `false` is libsecp256k1's.
    let mut bad = signed(32, 4);
    bad[7].sig[63] ^= 1;
    let bad_refs = refs(&bad);
    assert!(!verifier.verify_batch(&bad_refs, &mut ok));
    for (c, &v) in bad_refs.iter().zip(&ok) {
        assert_eq!(v, v01::verify_one(c), "the reference verdict");
    }
    assert!(!ok[7]);

    // The calls table: `verify_all`, `Verifier::verify_one`, the free `verify_one`.
    assert!(verifier.verify_all(&sigs));
    assert!(!verifier.verify_all(&bad_refs));
    assert!(verifier.verify_one(&sigs[0]));
    assert!(!verifier.verify_one(&bad_refs[7]));
    assert!(v01::verify_one(&sigs[1]));

    // Fewer than MIN_BATCH signatures are checked one at a time. The return value differs
    // here: 0.1.0 returns whether a batch equation held at once (false below MIN_BATCH), this
    // crate whether every signature is valid (true); the verdicts are the same.
    let small = signed(MIN_BATCH - 1, 1);
    let before = verifier.stats();
    let returned = verifier.verify_batch(&refs(&small), &mut ok);
    assert_eq!(ok, vec![true; MIN_BATCH - 1]);
    println!("verify_batch below MIN_BATCH returned {returned}");
    let after = verifier.stats();
    assert_eq!(after.batches, before.batches);
    assert_eq!(
        after.one_at_a_time - before.one_at_a_time,
        (MIN_BATCH - 1) as u64
    );

    // `Verifier::stats()`: the counters under 0.1.0's names.
    let s: Stats = verifier.stats();
    assert!(s.batches >= 2 && s.batches_passed >= 1 && s.batches_passed <= s.batches);
    assert!(s.batched >= 64);
    assert!(s.one_at_a_time >= 2);
    assert!(s.key_hits + s.key_misses > 0);
    assert_ne!(s, Stats::default());
    println!("{s:?}");

    // The thread-local verifier of "With rust-nostr", and `Default`.
    assert!(signatures(&sigs).iter().all(|&v| v));
    let mut other = Verifier::default();
    assert!(other.verify_batch(&sigs, &mut ok));
    s
}
