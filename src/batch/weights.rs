//! The batch weights, and why they are unpredictable.
//!
//! The weights must be unknown to whoever chose the signatures, or invalid signatures could
//! be crafted to cancel out. Each [`Verifier`] draws a 32-byte secret from the operating
//! system (`getrandom`, the Web Crypto API on wasm32 with feature `js`) and counts its batches.
//! For each batch, the seed is the tagged SHA-256 (`nostr-verify/batch-weights`) of the
//! secret, the counter, and the SHA-256 of every signature's unreduced challenge digest and
//! `s`, hashed in two halves, each as four runs and their digests (the challenge digest
//! commits to `r`, `P` and `m`, so the seed commits to every input). The weights are SHA-256
//! of the seed and an index, 128 bits each. Thus (1) an attacker outside the process cannot
//! predict them (the secret never leaves the verifier), and (2) even with a broken random
//! source, the weights are a hash of all inputs, as BIP-340 recommends: changing any input
//! changes every weight, so finding a cancelling invalid batch costs about 2^128 hash
//! evaluations. Weights are reused unchanged while narrowing (sub-batches of a batch whose
//! weights nobody outside saw).
//!

use super::work::Prepared;
use crate::bip340::{finish_from_midstate, tagged_midstate};
use std::sync::OnceLock;

/// The tag of the weight derivation.
const WEIGHTS_TAG: &[u8] = b"nostr-verify/batch-weights";

/// The SHA-256 midstate of the weights' tag, computed once.
fn weights_midstate() -> &'static [u32; 8] {
    static MID: OnceLock<[u32; 8]> = OnceLock::new();
    MID.get_or_init(|| tagged_midstate(WEIGHTS_TAG))
}

/// The batch seed: the tagged SHA-256 of the verifier's secret, its batch counter, the
/// number of nonces and where the staging split them, and the two staging halves'
/// transcript digests (which commit to every parsed signature's challenge digest and `s`).
pub(super) fn seed(
    secret: &[u8; 32],
    counter: u64,
    nonces: usize,
    half: usize,
    digests: (&[u8; 32], &[u8; 32]),
) -> [u8; 32] {
    let mut head = [0u8; 32 + 8 + 8 + 8 + 64];
    head[..32].copy_from_slice(secret);
    head[32..40].copy_from_slice(&counter.to_le_bytes());
    head[40..48].copy_from_slice(&(nonces as u64).to_le_bytes());
    head[48..56].copy_from_slice(&(half as u64).to_le_bytes());
    head[56..88].copy_from_slice(digests.0);
    head[88..].copy_from_slice(digests.1);
    finish_from_midstate(weights_midstate(), &head)
}

/// The weights of the batch `prep`: weights `2j` and `2j + 1` are the two halves of
/// SHA-256(seed ‖ j) (tagged), at least 1, and the very first weight is 1. Sets `a` (an
/// entry that did not parse gets its weight too, and is dropped later).
pub(super) fn weigh(prep: &mut [Prepared], seed: &[u8; 32]) {
    // Every pair's SHA-256(seed ‖ j) in one call (vector lanes on CPUs without SHA
    // instructions, see `backend::sha`).
    let pairs = prep.len().div_ceil(2);
    let blocks: Vec<[u8; 40]> = (0..pairs)
        .map(|j| {
            let mut block = [0u8; 40];
            block[..32].copy_from_slice(seed);
            block[32..].copy_from_slice(&(j as u64).to_le_bytes());
            block
        })
        .collect();
    let msgs: Vec<&[u8]> = blocks.iter().map(|b| &b[..]).collect();
    let mut hashes = vec![[0u8; 32]; pairs];
    crate::backend::sha::hash_many_from(weights_midstate(), 1, &msgs, &mut hashes);
    for (index, p) in prep.iter_mut().enumerate() {
        let half = &hashes[index / 2][16 * (index % 2)..][..16];
        p.a = if index == 0 {
            1
        } else {
            u128::from_le_bytes(half.try_into().unwrap_or_default()).max(1)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::super::equation::Threads;
    use super::super::testing::{refs_under, weight_inputs, weights_of};
    use super::super::{Verifier, TWO_THREADS_MIN_LIFTS};
    use super::*;
    use crate::arithmetic::group::AffinePoint;

    #[test]
    fn weights_are_fresh_and_nonzero() {
        // Same batch twice: different weights (the counter), first weight 1.
        let mut v = Verifier::new();
        // Key and r: the x of G (both lift); six different s values (no duplicates).
        let pk = AffinePoint::GENERATOR.x.to_bytes();
        let msg = [3u8; 32];
        let sigs = weight_inputs(6);
        let refs = refs_under(&pk, &msg, &sigs);
        v.prepare(&refs, Threads::One);
        let a1: Vec<u128> = v.work.prep.iter().map(|p| p.a).collect();
        v.prepare(&refs, Threads::One);
        let a2: Vec<u128> = v.work.prep.iter().map(|p| p.a).collect();
        assert_eq!(a1.len(), 6);
        assert_eq!(a1[0], 1);
        assert_ne!(a1[1..], a2[1..]);
        assert!(a1.iter().all(|&a| a != 0));
        // Weights of one batch differ from each other.
        assert!(a1[1..]
            .iter()
            .enumerate()
            .all(|(i, a)| a1[i + 2..].iter().all(|b| a != b)));
    }

    #[test]
    fn two_threads_derive_the_same_weights() {
        // Same secret, same counter: the split work gives exactly the single-thread weights
        // and products, for even and odd sizes around the two-thread threshold.
        for n in [
            601,
            TWO_THREADS_MIN_LIFTS - 1,
            TWO_THREADS_MIN_LIFTS,
            TWO_THREADS_MIN_LIFTS + 601,
        ] {
            let sigs = weight_inputs(n);
            let mut one = Verifier::with_secret([9; 32]);
            let mut two = Verifier::with_secret([9; 32]);
            let a = weights_of(&mut one, &sigs, &[1; 32], Threads::One);
            let b = weights_of(&mut two, &sigs, &[1; 32], Threads::Two);
            assert_eq!(a.len(), n);
            assert_eq!(a[0].0, 1, "n {n}");
            assert!(a == b, "n {n}: weights differ between one and two threads");
            // And they commit to the inputs: another message changes every later weight.
            let mut other = Verifier::with_secret([9; 32]);
            let c = weights_of(&mut other, &sigs, &[2; 32], Threads::One);
            assert!(a[1..].iter().zip(&c[1..]).all(|(x, y)| x.0 != y.0), "n {n}");
        }
    }

    #[test]
    fn weights_are_the_halves_of_the_pair_hashes_on_every_sha_path() {
        use crate::arithmetic::scalar::Scalar;
        use crate::backend::sha::{set_sha_selected, sha_selected, Sha};
        let seed = [0x5e; 32];
        // The reference: weight 2j + h of SHA-256_tag(seed ‖ j), one hash at a time.
        let want = |index: usize| -> u128 {
            if index == 0 {
                return 1;
            }
            let mut block = [0u8; 40];
            block[..32].copy_from_slice(&seed);
            block[32..].copy_from_slice(&((index / 2) as u64).to_le_bytes());
            let h = finish_from_midstate(weights_midstate(), &block);
            let half: [u8; 16] = h[16 * (index % 2)..][..16].try_into().unwrap();
            u128::from_le_bytes(half).max(1)
        };
        let before = sha_selected();
        let blank = Prepared {
            idx: 0,
            key: 0,
            parsed: false,
            r: AffinePoint::IDENTITY,
            a: 0,
            s: Scalar::ZERO,
            e: Scalar::ZERO,
        };
        for sha in Sha::available() {
            set_sha_selected(sha);
            for len in [1usize, 2, 20, 33, 37] {
                let mut prep = vec![blank; len];
                weigh(&mut prep, &seed);
                for (i, p) in prep.iter().enumerate() {
                    assert_eq!(p.a, want(i), "{sha:?} len {len} entry {i}");
                }
            }
        }
        set_sha_selected(before);
    }

    #[test]
    fn weights_midstate_is_recomputed() {
        assert_eq!(
            *weights_midstate(),
            [
                0x733a_f9c4,
                0x2483_b932,
                0x07fb_f317,
                0xa75f_b2e0,
                0x3064_eada,
                0xf4c7_40b7,
                0xac4e_3e24,
                0x37d7_013b
            ]
        );
    }
}
