//! Signature generation and corruption helpers for the batch tests.
//!
//! Everything is signed with libsecp256k1 (`secp256k1` 0.30) or, for crafted cases, with
//! BIP-340 arithmetic done through libsecp256k1's own scalar tweaks; verdicts are compared
//! with `nostr_verify::verify_one`, which is libsecp256k1.
#![allow(dead_code)]

use rand::{Rng, RngCore, SeedableRng};
use secp256k1::{Keypair, PublicKey, Scalar, Secp256k1, SecretKey};
use sha2::{Digest, Sha256};

/// p, the field prime, big-endian.
pub const P: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xfc, 0x2f,
];
/// n, the group order, big-endian.
pub const N: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
    0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
];

/// One owned signature check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owned {
    pub pk: [u8; 32],
    pub msg: [u8; 32],
    pub sig: [u8; 64],
}

impl Owned {
    pub fn as_ref(&self) -> nostr_verify::SigRef<'_> {
        nostr_verify::SigRef {
            pubkey: &self.pk,
            msg: &self.msg,
            sig: &self.sig,
        }
    }
}

/// A deterministic RNG for one test (seeded, so failures reproduce).
pub fn rng(seed: u64) -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(seed)
}

pub fn secp() -> Secp256k1<secp256k1::All> {
    Secp256k1::new()
}

/// `k` fresh key pairs.
pub fn keypairs(r: &mut impl RngCore, k: usize) -> Vec<Keypair> {
    let s = secp();
    (0..k).map(|_| Keypair::new(&s, r)).collect()
}

/// `n` valid signatures from `keys`, assigned round-robin over a random permutation.
pub fn sign_batch(r: &mut impl RngCore, keys: &[Keypair], n: usize) -> Vec<Owned> {
    let s = secp();
    (0..n)
        .map(|_| {
            let kp = &keys[(r.next_u32() as usize) % keys.len()];
            let mut msg = [0u8; 32];
            r.fill_bytes(&mut msg);
            let mut aux = [0u8; 32];
            r.fill_bytes(&mut aux);
            let sig = s.sign_schnorr_with_aux_rand(&msg, kp, &aux);
            Owned {
                pk: kp.x_only_public_key().0.serialize(),
                msg,
                sig: sig.to_byte_array(),
            }
        })
        .collect()
}

/// Key distributions used across the tests.
#[derive(Clone, Copy, Debug)]
pub enum Keys {
    One,
    Eight,
    Distinct,
}

/// A valid batch of `n` with the given key distribution.
pub fn batch(r: &mut impl RngCore, n: usize, keys: Keys) -> Vec<Owned> {
    let k = match keys {
        Keys::One => 1,
        Keys::Eight => 8,
        Keys::Distinct => n.max(1),
    };
    let kps = keypairs(r, k);
    if let Keys::Distinct = keys {
        let s = secp();
        return kps
            .iter()
            .take(n)
            .map(|kp| {
                let mut msg = [0u8; 32];
                r.fill_bytes(&mut msg);
                let sig = s.sign_schnorr_with_aux_rand(&msg, kp, &[7u8; 32]);
                Owned {
                    pk: kp.x_only_public_key().0.serialize(),
                    msg,
                    sig: sig.to_byte_array(),
                }
            })
            .collect();
    }
    sign_batch(r, &kps, n)
}

/// The tagged hash `H_tag(data)`.
pub fn tagged(tag: &[u8], data: &[&[u8]]) -> [u8; 32] {
    let t = Sha256::digest(tag);
    let mut h = Sha256::new();
    h.update(t);
    h.update(t);
    for d in data {
        h.update(d);
    }
    h.finalize().into()
}

/// `v mod n` of a 32-byte big-endian value, as a libsecp256k1 scalar.
fn reduce(v: [u8; 32]) -> Scalar {
    Scalar::from_be_bytes(v).unwrap_or_else(|_| {
        // v >= n: subtract n once (v < 2^256 < 2n).
        let mut out = [0u8; 32];
        let mut borrow = 0i16;
        for i in (0..32).rev() {
            let d = v[i] as i16 - N[i] as i16 - borrow;
            borrow = (d < 0) as i16;
            out[i] = d.rem_euclid(256) as u8;
        }
        Scalar::from_be_bytes(out).expect("reduced")
    })
}

/// BIP-340 signing with a chosen nonce `k` (no even-y adjustment of R when `force_odd_r`
/// wants an odd-y R kept as is). Returns `None` when a degenerate value comes up.
pub fn sign_with_nonce(
    d: &SecretKey,
    k: &SecretKey,
    msg: &[u8; 32],
    keep_r_parity: bool,
) -> Option<Owned> {
    let s = secp();
    let (px, p_parity) = d.x_only_public_key(&s);
    let d = if p_parity == secp256k1::Parity::Odd {
        d.negate()
    } else {
        *d
    };
    let (rx, r_parity) = k.x_only_public_key(&s);
    let k = if r_parity == secp256k1::Parity::Odd && !keep_r_parity {
        k.negate()
    } else {
        *k
    };
    let r = rx.serialize();
    let pk = px.serialize();
    let e = reduce(tagged(b"BIP0340/challenge", &[&r, &pk, msg]));
    let ed = d.mul_tweak(&e).ok()?;
    let sk = ed.add_tweak(&Scalar::from(k)).ok()?;
    let mut sig = [0u8; 64];
    sig[..32].copy_from_slice(&r);
    sig[32..].copy_from_slice(&sk.secret_bytes());
    Some(Owned { pk, msg: *msg, sig })
}

/// A 32-byte value that is not the x coordinate of a curve point (x^3 + 7 not a square).
pub fn not_on_curve(r: &mut impl RngCore) -> [u8; 32] {
    loop {
        let mut x = [0u8; 32];
        r.fill_bytes(&mut x);
        let mut c = [2u8; 33];
        c[1..].copy_from_slice(&x);
        if PublicKey::from_slice(&c).is_err() && x < P {
            return x;
        }
    }
}

/// Adds `delta` (a libsecp256k1 scalar) to s mod n; `None` if s is not a valid scalar.
pub fn add_to_s(o: &mut Owned, delta: &Scalar) -> Option<()> {
    let s = SecretKey::from_byte_array(o.sig[32..].try_into().ok()?).ok()?;
    let s2 = s.add_tweak(delta).ok()?;
    o.sig[32..].copy_from_slice(&s2.secret_bytes());
    Some(())
}

/// Big-endian 256-bit addition (wrapping); returns whether it overflowed.
pub fn add_be(a: &[u8; 32], b: &[u8; 32]) -> ([u8; 32], bool) {
    let mut out = [0u8; 32];
    let mut carry = 0u16;
    for i in (0..32).rev() {
        let s = a[i] as u16 + b[i] as u16 + carry;
        out[i] = s as u8;
        carry = s >> 8;
    }
    (out, carry != 0)
}

/// The kinds of corruption the tests apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corruption {
    FlipSigBit,
    FlipRBit,
    FlipSBit,
    FlipMsgBit,
    FlipKeyBit,
    RandomKey,
    RandomR,
    RGeP,
    SGeN,
    SPlusN,
    KeyNotOnCurve,
    RNotOnCurve,
    OddYNonce,
    SwapSigWithNeighbour,
}

pub const ALL_CORRUPTIONS: [Corruption; 14] = [
    Corruption::FlipSigBit,
    Corruption::FlipRBit,
    Corruption::FlipSBit,
    Corruption::FlipMsgBit,
    Corruption::FlipKeyBit,
    Corruption::RandomKey,
    Corruption::RandomR,
    Corruption::RGeP,
    Corruption::SGeN,
    Corruption::SPlusN,
    Corruption::KeyNotOnCurve,
    Corruption::RNotOnCurve,
    Corruption::OddYNonce,
    Corruption::SwapSigWithNeighbour,
];

/// Applies `c` to `batch[i]` (some corruptions look at other entries).
pub fn corrupt(r: &mut impl RngCore, batch: &mut [Owned], i: usize, c: Corruption) {
    let n = batch.len();
    let o = &mut batch[i];
    let bit = |r: &mut dyn RngCore, len: usize| {
        let b = (r.next_u32() as usize) % (len * 8);
        (b / 8, 1u8 << (b % 8))
    };
    match c {
        Corruption::FlipSigBit => {
            let (j, m) = bit(r, 64);
            o.sig[j] ^= m;
        }
        Corruption::FlipRBit => {
            let (j, m) = bit(r, 32);
            o.sig[j] ^= m;
        }
        Corruption::FlipSBit => {
            let (j, m) = bit(r, 32);
            o.sig[32 + j] ^= m;
        }
        Corruption::FlipMsgBit => {
            let (j, m) = bit(r, 32);
            o.msg[j] ^= m;
        }
        Corruption::FlipKeyBit => {
            let (j, m) = bit(r, 32);
            o.pk[j] ^= m;
        }
        Corruption::RandomKey => {
            let kp = keypairs(r, 1);
            o.pk = kp[0].x_only_public_key().0.serialize();
        }
        Corruption::RandomR => {
            // A valid curve x, unrelated to the nonce.
            let kp = keypairs(r, 1);
            o.sig[..32].copy_from_slice(&kp[0].x_only_public_key().0.serialize());
        }
        Corruption::RGeP => {
            // r in [p, 2^256): p plus a small random offset.
            let mut add = [0u8; 32];
            add[31] = (r.next_u32() % 0x3d) as u8;
            let (v, _) = add_be(&P, &add);
            o.sig[..32].copy_from_slice(&v);
        }
        Corruption::SGeN => {
            let mut add = [0u8; 32];
            add[28..].copy_from_slice(&r.next_u32().to_be_bytes());
            let (v, of) = add_be(&N, &add);
            if !of {
                o.sig[32..].copy_from_slice(&v);
            }
        }
        Corruption::SPlusN => {
            let s: [u8; 32] = o.sig[32..].try_into().expect("32 bytes");
            let (v, of) = add_be(&s, &N);
            // s + n fits in 256 bits only when s < 2^256 - n; otherwise use n + (s mod 2^32).
            if !of {
                o.sig[32..].copy_from_slice(&v);
            } else {
                let mut add = [0u8; 32];
                add[28..].copy_from_slice(&s[28..]);
                o.sig[32..].copy_from_slice(&add_be(&N, &add).0);
            }
        }
        Corruption::KeyNotOnCurve => o.pk = not_on_curve(r),
        Corruption::RNotOnCurve => {
            let x = not_on_curve(r);
            o.sig[..32].copy_from_slice(&x);
        }
        Corruption::OddYNonce => {
            // A fresh signature on the same message whose R has odd y and is used as is.
            let s = secp();
            loop {
                let d = SecretKey::new(r);
                let k = SecretKey::new(r);
                if k.x_only_public_key(&s).1 != secp256k1::Parity::Odd {
                    continue;
                }
                if let Some(x) = sign_with_nonce(&d, &k, &o.msg, true) {
                    *o = x;
                    break;
                }
            }
        }
        Corruption::SwapSigWithNeighbour => {
            let j = (i + 1) % n;
            if j != i {
                let other = batch[j].sig;
                batch[i].sig = other;
            } else {
                batch[i].sig[63] ^= 1;
            }
        }
    }
}

/// Two signatures whose errors cancel in an unweighted sum: s_i + δ and s_j − δ.
pub fn cancelling_pair(r: &mut impl RngCore, batch: &mut [Owned], i: usize, j: usize) {
    let mut d = [0u8; 32];
    r.fill_bytes(&mut d[16..]);
    d[16] |= 1;
    let delta = Scalar::from_be_bytes(d).expect("small");
    let neg = SecretKey::from_byte_array(&d).expect("nonzero").negate();
    let neg = Scalar::from(neg);
    add_to_s(&mut batch[i], &delta).expect("valid s");
    add_to_s(&mut batch[j], &neg).expect("valid s");
}

/// libsecp256k1's verdicts.
pub fn reference(batch: &[Owned]) -> Vec<bool> {
    batch
        .iter()
        .map(|o| nostr_verify::verify_one(&o.as_ref()))
        .collect()
}

/// Runs `verify_batch` and `verify_all` on `batch` and asserts they agree with libsecp256k1.
pub fn check(v: &mut nostr_verify::Verifier, batch: &[Owned], what: &str) -> Vec<bool> {
    let refs: Vec<_> = batch.iter().map(Owned::as_ref).collect();
    let want = reference(batch);
    let mut ok = vec![true; 3]; // must be cleared by verify_batch
    let all = v.verify_batch(&refs, &mut ok);
    assert_eq!(ok.len(), batch.len(), "{what}: ok has the wrong length");
    for (i, (g, w)) in ok.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "{what}: verdict of signature {i} differs from libsecp256k1 (n = {})",
            batch.len()
        );
    }
    let want_all = want.iter().all(|&b| b);
    assert_eq!(all, want_all, "{what}: verify_batch's return value");
    assert_eq!(v.verify_all(&refs), want_all, "{what}: verify_all");
    want
}

/// A random index in `0..n`.
pub fn pick(r: &mut impl Rng, n: usize) -> usize {
    r.gen_range(0..n)
}
