//! Arbitrary batches through `Verifier::verify_batch`, compared with libsecp256k1 signature by
//! signature (`cargo +nightly fuzz run verify_batch`, from the repository root; not run by CI).
//!
//! Pure random bytes are almost never valid signatures, so the input drives a generator: it
//! picks a few signing keys, signs messages with them (valid signatures exercise the batch
//! equation and the MSM), then applies input-chosen mutations (bit flips in key, message and
//! signature, copied nonces, raw bytes, s or r pushed past n or p, duplicates). One input in 16
//! is padded with valid signatures to 300 and also checked through `verify_batch_two_threads`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nostr_verify::{SigRef, Verifier};
use secp256k1::{Keypair, Secp256k1, SecretKey};
use std::cell::RefCell;

thread_local! {
    static VERIFIER: RefCell<Verifier> = RefCell::new(Verifier::new());
}

fn take<const N: usize>(data: &mut &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let n = N.min(data.len());
    out[..n].copy_from_slice(&data[..n]);
    *data = &data[n..];
    out
}

fuzz_target!(|input: &[u8]| {
    let mut data = input;
    let [count, nkeys] = take::<2>(&mut data);
    // One input in 16: the batch is padded to 300 signatures and also goes through
    // verify_batch_two_threads (which splits work in two from 256 items on).
    let large = nkeys >= 240;
    let count = count as usize % 80;
    let nkeys = 1 + nkeys as usize % 8;
    let secp = Secp256k1::new();
    let keys: Vec<Keypair> = (0..nkeys)
        .map(|i| {
            let mut sk = [0u8; 32];
            sk[0] = 1;
            sk[31] = (i as u8).wrapping_add(take::<1>(&mut data)[0]);
            Keypair::from_secret_key(
                &secp,
                &SecretKey::from_byte_array(&sk).expect("nonzero, < n"),
            )
        })
        .collect();
    let mut sigs: Vec<([u8; 32], [u8; 32], [u8; 64])> = Vec::new();
    for i in 0..count {
        let [op, arg] = take::<2>(&mut data);
        let kp = &keys[arg as usize % nkeys];
        let mut msg = [0u8; 32];
        msg[..8].copy_from_slice(&take::<8>(&mut data));
        msg[31] = i as u8;
        let sig = secp.sign_schnorr_no_aux_rand(&msg, kp).to_byte_array();
        let mut e = (kp.x_only_public_key().0.serialize(), msg, sig);
        match op % 12 {
            0 => e.2[arg as usize % 64] ^= 1 << (op >> 5),
            1 => e.1[arg as usize % 32] ^= 1 << (op >> 5),
            2 => e.0[arg as usize % 32] ^= 1 << (op >> 5),
            3 if i > 0 => e = sigs[arg as usize % i],
            4 if i > 0 => e.2[..32].copy_from_slice(&sigs[arg as usize % i].2[..32]),
            5 => e.2[32..].fill(0xff),
            6 => e.2[..32].fill(0xff),
            7 => {
                let raw = take::<32>(&mut data);
                e.2[..32].copy_from_slice(&raw);
            }
            8 => e.0 = take::<32>(&mut data),
            9 if i > 0 => {
                // Someone else's signature under this key and message.
                e.2 = sigs[arg as usize % i].2;
            }
            _ => {}
        }
        sigs.push(e);
    }
    if large {
        for j in sigs.len()..300 {
            let kp = &keys[j % nkeys];
            let mut msg = [0u8; 32];
            msg[..8].copy_from_slice(&(j as u64).to_le_bytes());
            msg[31] = 0xa5;
            let sig = secp.sign_schnorr_no_aux_rand(&msg, kp).to_byte_array();
            sigs.push((kp.x_only_public_key().0.serialize(), msg, sig));
        }
    }
    let refs: Vec<SigRef<'_>> = sigs.iter().map(SigRef::from).collect();
    let want: Vec<bool> = refs.iter().map(nostr_verify::verify_one).collect();
    VERIFIER.with(|v| {
        let mut v = v.borrow_mut();
        let mut ok = Vec::new();
        let all = v.verify_batch(&refs, &mut ok);
        assert_eq!(ok, want, "per-signature verdicts differ from libsecp256k1");
        assert_eq!(all, want.iter().all(|&b| b));
        assert_eq!(v.verify_all(&refs), all);
        if large {
            let two = v.verify_batch_two_threads(&refs, &mut ok);
            assert_eq!(ok, want, "two threads: verdicts differ from libsecp256k1");
            assert_eq!(two, all);
        }
    });
});
