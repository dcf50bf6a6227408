//! Arbitrary batches through `Verifier::verify_batch` and `verify_batch_two_threads`, compared
//! with libsecp256k1 signature by signature (see docs/fuzzing.md).
//!
//! Random bytes are almost never valid signatures, so the input drives a generator over a pool
//! of signatures made once at start-up (no signing per input): each entry picks a pool
//! signature and a mutation (bit flips in key, message or signature, a copied nonce, raw bytes,
//! s or r at or past n or p, a key at or past p, a duplicate, another entry's signature or
//! message, s negated). Unmutated pool entries are known valid; every mutated one is checked
//! with libsecp256k1 (verdicts cached across inputs: libFuzzer's mutants repeat most entries
//! of their parent). At most `MAX_MUTATED` entries of an input are mutated: each invalid one
//! costs the verifier a libsecp256k1 check of its own, and a few among many valid ones is
//! what the narrowing is about.
//!
//! One input in 256 is padded to the sizes where `verify_batch_two_threads` forks (2,048
//! lifts: 2,100 signatures by 8 keys; 3,000 MSM points: 1,100 signatures by distinct keys),
//! with at most `MAX_MUTATED_LARGE` mutated entries (narrowing 2,000 signatures takes dozens
//! of large MSMs). Which inputs are large is decided by a hash of the whole input, not by a
//! byte of it: a byte would make the corpus's large inputs breed large mutants, and a large
//! input costs a hundred small ones.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nostr_verify::{SigRef, Verifier};
use secp256k1::{schnorr, Keypair, Secp256k1, SecretKey, XOnlyPublicKey};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::LazyLock;

/// (x-only key, message, signature).
type Entry = ([u8; 32], [u8; 32], [u8; 64]);

/// Pool signatures by 8 keys (staging fork: 2,048 lifts) and by distinct keys (MSM fork).
struct Pool {
    few: Vec<Entry>,
    many: Vec<Entry>,
}

const FEW: usize = 2_100;
const MANY: usize = 1_100;
/// Mutated entries per input, at most (the rest of the ops are ignored).
const MAX_MUTATED: usize = 8;
/// Mutated entries per large input, at most.
const MAX_MUTATED_LARGE: usize = 2;
/// Cached reference verdicts, at most (then the cache starts again).
const CACHE: usize = 1 << 20;
const N: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
    0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
];
const P: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xfc, 0x2f,
];

fn sign(secp: &Secp256k1<secp256k1::All>, key: u64, msg_no: u64) -> Entry {
    let mut sk = [0u8; 32];
    sk[0] = 0x42;
    sk[24..].copy_from_slice(&key.to_be_bytes());
    let kp = Keypair::from_secret_key(secp, &SecretKey::from_byte_array(&sk).expect("< n"));
    let mut msg = [0u8; 32];
    msg[..8].copy_from_slice(&msg_no.to_le_bytes());
    msg[8..16].copy_from_slice(&key.to_le_bytes());
    msg[31] = 0xa5;
    let sig = secp.sign_schnorr_no_aux_rand(&msg, &kp).to_byte_array();
    (kp.x_only_public_key().0.serialize(), msg, sig)
}

static POOL: LazyLock<Pool> = LazyLock::new(|| {
    let secp = Secp256k1::new();
    Pool {
        few: (0..FEW as u64).map(|j| sign(&secp, j % 8, j)).collect(),
        many: (0..MANY as u64)
            .map(|j| sign(&secp, 1_000 + j, j))
            .collect(),
    }
});

thread_local! {
    static VERIFIER: RefCell<Verifier> = RefCell::new(Verifier::new());
    static VERDICTS: RefCell<HashMap<Entry, bool>> = RefCell::new(HashMap::new());
}

fn take<const K: usize>(data: &mut &[u8]) -> [u8; K] {
    let mut out = [0u8; K];
    let n = K.min(data.len());
    out[..n].copy_from_slice(&data[..n]);
    *data = &data[n..];
    out
}

/// FNV-1a, 32 bits (fuzz/seeds.py computes the same to make its large seeds).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h, &b| {
        (h ^ b as u32).wrapping_mul(0x0100_0193)
    })
}

/// `x + small` as 32 big-endian bytes (wrapping; `x` is n or p, so the result stays ≥ x).
fn plus(x: [u8; 32], small: u8) -> [u8; 32] {
    let mut out = x;
    let mut carry = small as u16;
    for b in out.iter_mut().rev() {
        let v = *b as u16 + carry;
        *b = v as u8;
        carry = v >> 8;
    }
    out
}

/// n − s (mod n) for an s below n: big-endian subtraction.
fn negate(s: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let v = N[i] as i16 - s[i] as i16 - borrow;
        borrow = (v < 0) as i16;
        out[i] = v.rem_euclid(256) as u8;
    }
    out
}

/// libsecp256k1's verdict, cached.
fn reference(e: &Entry) -> bool {
    VERDICTS.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(&v) = c.get(e) {
            return v;
        }
        if c.len() >= CACHE {
            c.clear();
        }
        let v = reference_uncached(e);
        c.insert(*e, v);
        v
    })
}

fn reference_uncached(e: &Entry) -> bool {
    let Ok(pk) = XOnlyPublicKey::from_byte_array(&e.0) else {
        return false;
    };
    let sig = schnorr::Signature::from_byte_array(e.2);
    let secp = Secp256k1::verification_only();
    secp.verify_schnorr(&sig, &e.1, &pk).is_ok()
}

fuzz_target!(|input: &[u8]| {
    let pool = &*POOL;
    let mut data = input;
    let [count, mode] = take::<2>(&mut data);
    let large = fnv1a(input).is_multiple_of(256);
    let max_mutated = if large {
        MAX_MUTATED_LARGE
    } else {
        MAX_MUTATED
    };
    let from_many = mode & 1 == 1;
    let count = count as usize % 64;
    let section = if from_many { &pool.many } else { &pool.few };
    let mut sigs: Vec<Entry> = Vec::with_capacity(if large { FEW } else { count });
    let mut want: Vec<bool> = Vec::with_capacity(sigs.capacity());
    let mut mutations = 0;
    for i in 0..count {
        let [op, arg, lo, hi] = take::<4>(&mut data);
        let idx = u16::from_le_bytes([lo, hi]) as usize % section.len();
        let mut e = section[idx];
        let earlier = (i > 0).then(|| sigs[arg as usize % i]);
        let bit = 1u8 << (op >> 5);
        let op = if mutations < max_mutated { op % 24 } else { 24 };
        let mutated = match (op, earlier) {
            (0, _) => {
                e.2[arg as usize % 64] ^= bit;
                true
            }
            (1, _) => {
                e.1[arg as usize % 32] ^= bit;
                true
            }
            (2, _) => {
                e.0[arg as usize % 32] ^= bit;
                true
            }
            (3, Some(d)) => {
                e = d; // a duplicate: same verdict as the earlier copy
                true
            }
            (4, Some(d)) => {
                e.2[..32].copy_from_slice(&d.2[..32]);
                true
            }
            (5, _) => {
                e.2[32..].copy_from_slice(&plus(N, arg));
                true
            }
            (6, _) => {
                e.2[..32].copy_from_slice(&plus(P, arg));
                true
            }
            (7, _) => {
                e.2[..32].copy_from_slice(&take::<32>(&mut data));
                true
            }
            (8, _) => {
                e.0 = take::<32>(&mut data);
                true
            }
            (9, Some(d)) => {
                e.2 = d.2; // someone else's signature under this key and message
                true
            }
            (10, _) => {
                e.0 = plus(P, arg);
                true
            }
            (11, _) => {
                e.2[32..].fill(0);
                true
            }
            (12, Some(d)) => {
                e.1 = d.1;
                true
            }
            (13, _) => {
                let s = negate(&e.2[32..]);
                e.2[32..].copy_from_slice(&s);
                true
            }
            (14, _) => {
                e.2[32..].copy_from_slice(&take::<32>(&mut data));
                true
            }
            _ => false,
        };
        mutations += mutated as usize;
        want.push(!mutated || reference(&e));
        sigs.push(e);
    }
    if large {
        let target = if from_many { MANY } else { FEW };
        for j in 0..target.saturating_sub(sigs.len()) {
            sigs.push(section[j]);
            want.push(true);
        }
    }
    let refs: Vec<SigRef<'_>> = sigs.iter().map(SigRef::from).collect();
    VERIFIER.with(|v| {
        let mut v = v.borrow_mut();
        let mut ok = Vec::new();
        let all = v.verify_batch(&refs, &mut ok);
        assert_eq!(ok, want, "per-signature verdicts differ from libsecp256k1");
        assert_eq!(all, want.iter().all(|&b| b));
        // verify_all on half the small inputs; the two-thread entry on every large input and
        // on one small one in eight (below the fork sizes it runs the one-thread code, so
        // more would only repeat the call above).
        if !large && mode & 4 == 4 {
            assert_eq!(v.verify_all(&refs), all, "verify_all differs");
        }
        if large || mode & 14 == 2 {
            let two = v.verify_batch_two_threads(&refs, &mut ok);
            assert_eq!(ok, want, "two threads: verdicts differ from libsecp256k1");
            assert_eq!(two, all);
        }
    });
});
