//! Inputs shared by the batch modules' unit tests.

use super::equation::Threads;
use super::Verifier;
use crate::arithmetic::group::AffinePoint;
use crate::arithmetic::scalar::Scalar;
use crate::bip340::SigRef;

/// `n` distinct signatures (not valid ones: only the weights are looked at) over the
/// key and nonce x(G), which both lift.
pub(super) fn weight_inputs(n: usize) -> Vec<[u8; 64]> {
    let x = AffinePoint::GENERATOR.x.to_bytes();
    (0..n)
        .map(|i| {
            let mut sig = [0u8; 64];
            sig[..32].copy_from_slice(&x);
            sig[56..].copy_from_slice(&(i as u64 + 1).to_be_bytes());
            sig
        })
        .collect()
}

/// Views of `sigs`, all under the key `pk` and the message `msg`.
pub(super) fn refs_under<'a>(
    pk: &'a [u8; 32],
    msg: &'a [u8; 32],
    sigs: &'a [[u8; 64]],
) -> Vec<SigRef<'a>> {
    sigs.iter()
        .map(|sig| SigRef {
            pubkey: pk,
            msg,
            sig,
        })
        .collect()
}

pub(super) fn weights_of(
    v: &mut Verifier,
    sigs: &[[u8; 64]],
    msg: &[u8; 32],
    threads: Threads,
) -> Vec<(u128, Scalar)> {
    let pk = AffinePoint::GENERATOR.x.to_bytes();
    v.prepare(&refs_under(&pk, msg, sigs), threads);
    v.work
        .prep
        .iter()
        .map(|p| (p.a, p.e.mul_u128(p.a)))
        .collect()
}

/// "Signatures" that satisfy `s·G = R` (s = the nonce, no key term) under the key x(G):
/// invalid for BIP-340, yet the batch equation holds over them if the key terms are left
/// out.
pub(super) fn keyless_sigs(n: usize) -> (Vec<[u8; 64]>, [u8; 32]) {
    let secp = secp256k1::Secp256k1::new();
    let sigs = (0..n)
        .map(|i| {
            let mut k = [0u8; 32];
            k[31] = 11 + i as u8;
            k[0] = 1;
            let sk = secp256k1::SecretKey::from_slice(&k).expect("nonce");
            let (x, parity) = sk.x_only_public_key(&secp);
            let sk = if parity == secp256k1::Parity::Odd {
                sk.negate()
            } else {
                sk
            };
            let mut sig = [0u8; 64];
            sig[..32].copy_from_slice(&x.serialize());
            sig[32..].copy_from_slice(&sk.secret_bytes());
            sig
        })
        .collect();
    (sigs, AffinePoint::GENERATOR.x.to_bytes())
}

/// `n` signed events from 8 keys, every `bad`-th with a flipped message bit.
pub(super) fn signed(n: usize, bad: usize) -> Vec<([u8; 32], [u8; 32], [u8; 64])> {
    let secp = secp256k1::Secp256k1::new();
    let kps: Vec<secp256k1::Keypair> = (1..=8u8)
        .map(|i| secp256k1::Keypair::from_seckey_slice(&secp, &[i; 32]).expect("key"))
        .collect();
    (0..n)
        .map(|i| {
            let kp = &kps[i % 8];
            let mut msg = [0u8; 32];
            msg[..8].copy_from_slice(&(i as u64).to_le_bytes());
            let sig = secp.sign_schnorr_no_aux_rand(&msg, kp).to_byte_array();
            if i % bad == 0 {
                msg[31] ^= 1;
            }
            (kp.x_only_public_key().0.serialize(), msg, sig)
        })
        .collect()
}
