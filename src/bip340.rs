//! BIP-340 inputs and the reference single verifier.
//!
//! [`SigRef`] borrows the three byte strings of one signature check: a 32-byte x-only public
//! key, a 32-byte message (for Nostr, the event id) and a 64-byte signature `r || s`.
//! [`verify_one`] is libsecp256k1's `secp256k1_schnorrsig_verify` through the `secp256k1`
//! crate: every `false` verdict this crate gives comes from it.

use secp256k1::{schnorr, Secp256k1, VerifyOnly, XOnlyPublicKey};
use std::sync::OnceLock;

use crate::Error;

/// One signature to check: borrowed public key, message and signature bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SigRef<'a> {
    /// The x-only public key (32 bytes, big-endian x coordinate).
    pub pubkey: &'a [u8; 32],
    /// The 32-byte message; for Nostr events, the event id.
    pub msg: &'a [u8; 32],
    /// The 64-byte signature `r || s`.
    pub sig: &'a [u8; 64],
}

impl<'a> From<&'a ([u8; 32], [u8; 32], [u8; 64])> for SigRef<'a> {
    /// Borrows an owned `(pubkey, msg, sig)` triple.
    ///
    /// ```
    /// use nostr_verify::SigRef;
    /// let owned = vec![([1u8; 32], [2u8; 32], [3u8; 64])];
    /// let refs: Vec<SigRef<'_>> = owned.iter().map(SigRef::from).collect();
    /// assert_eq!(refs[0].sig, &[3u8; 64]);
    /// ```
    fn from((pubkey, msg, sig): &'a ([u8; 32], [u8; 32], [u8; 64])) -> Self {
        SigRef { pubkey, msg, sig }
    }
}

impl<'a> SigRef<'a> {
    /// Borrows a signature from byte slices, checking their lengths (32, 32 and 64 bytes).
    ///
    /// # Errors
    /// [`Error::WrongLength`] naming the first input (`"pubkey"`, `"msg"`, `"sig"`) whose
    /// length is wrong.
    ///
    /// ```
    /// use nostr_verify::{Error, SigRef};
    /// let (pk, msg, sig) = ([1u8; 32], [2u8; 32], [3u8; 64]);
    /// assert!(SigRef::from_slices(&pk, &msg, &sig).is_ok());
    /// assert_eq!(
    ///     SigRef::from_slices(&pk, &msg, &sig[..63]),
    ///     Err(Error::WrongLength { what: "sig", expected: 64, got: 63 })
    /// );
    /// ```
    pub fn from_slices(pubkey: &'a [u8], msg: &'a [u8], sig: &'a [u8]) -> Result<Self, Error> {
        fn exact<'b, const N: usize>(
            what: &'static str,
            b: &'b [u8],
        ) -> Result<&'b [u8; N], Error> {
            b.try_into().map_err(|_| Error::WrongLength {
                what,
                expected: N,
                got: b.len(),
            })
        }
        Ok(SigRef {
            pubkey: exact("pubkey", pubkey)?,
            msg: exact("msg", msg)?,
            sig: exact("sig", sig)?,
        })
    }
}

/// The field size p, big-endian.
const P_BYTES: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0xff, 0xff, 0xfc, 0x2f,
];

/// The group order n, big-endian.
const N_BYTES: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
    0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
];

/// Verifies one signature like [`verify_one`] and, when it fails, says why.
///
/// The verdict is libsecp256k1's (`check_one(s).is_ok() == verify_one(s)` always); the reason
/// follows BIP-340's verification steps in order: the key, then `r < p`, `s < n`, then whether
/// r is an x coordinate at all (if not, no point can match it), and otherwise the equation.
/// Meant for diagnostics (logs, reject reasons); it costs one single verification.
///
/// # Errors
/// [`Error::InvalidPublicKey`], [`Error::InvalidR`], [`Error::InvalidS`] or
/// [`Error::EquationFailed`].
///
/// ```
/// use nostr_verify::{check_one, Error, SigRef};
/// let (pk, msg, sig) = ([0u8; 32], [0u8; 32], [0u8; 64]);
/// let s = SigRef { pubkey: &pk, msg: &msg, sig: &sig };
/// assert_eq!(check_one(&s), Err(Error::InvalidPublicKey)); // x = 0 is not on the curve
/// ```
pub fn check_one(sig: &SigRef<'_>) -> Result<(), Error> {
    if verify_one(sig) {
        return Ok(());
    }
    let (r, s) = sig.sig.split_at(32);
    Err(if parse_xonly(sig.pubkey).is_none() {
        Error::InvalidPublicKey
    } else if r >= &P_BYTES[..] {
        Error::InvalidR
    } else if s >= &N_BYTES[..] {
        Error::InvalidS
    } else if XOnlyPublicKey::from_slice(r).is_err() {
        Error::InvalidR
    } else {
        Error::EquationFailed
    })
}

/// The shared libsecp256k1 verification context.
pub(crate) fn secp() -> &'static Secp256k1<VerifyOnly> {
    static CTX: OnceLock<Secp256k1<VerifyOnly>> = OnceLock::new();
    CTX.get_or_init(Secp256k1::verification_only)
}

/// Parses an x-only public key with libsecp256k1, `None` if it is not a valid key.
pub(crate) fn parse_xonly(pubkey: &[u8; 32]) -> Option<XOnlyPublicKey> {
    XOnlyPublicKey::from_byte_array(pubkey).ok()
}

/// Verifies with an already parsed key (libsecp256k1).
pub(crate) fn verify_parsed(pk: &XOnlyPublicKey, msg: &[u8; 32], sig: &[u8; 64]) -> bool {
    let sig = schnorr::Signature::from_byte_array(*sig);
    secp().verify_schnorr(&sig, msg, pk).is_ok()
}

/// Verifies one signature with libsecp256k1 (parse the key, then verify), with no cache.
///
/// This is the reference verifier: `nostr::Event::verify` does exactly this for the signature
/// part. Invalid keys give `false`.
///
/// # Examples
/// ```
/// let (pk, msg, sig) = ([0u8; 32], [0u8; 32], [0u8; 64]);
/// assert!(!nostr_verify::verify_one(&nostr_verify::SigRef { pubkey: &pk, msg: &msg, sig: &sig }));
/// ```
pub fn verify_one(sig: &SigRef<'_>) -> bool {
    match parse_xonly(sig.pubkey) {
        Some(pk) => verify_parsed(&pk, sig.msg, sig.sig),
        None => false,
    }
}

/// The BIP-340 challenge tag: `e = H_tag(r || P || m)` with this tag.
pub const CHALLENGE_TAG: &[u8] = b"BIP0340/challenge";

/// SHA-256 state after absorbing `SHA256(tag) || SHA256(tag)` for [`CHALLENGE_TAG`].
///
/// Derivation: one SHA-256 compression of the 64-byte block `SHA256(tag) || SHA256(tag)` from
/// the standard initial state (the same constant as libsecp256k1's
/// `secp256k1_schnorrsig_sha256_tagged`). `tests::challenge_midstate_is_recomputed` recomputes it.
const CHALLENGE_MIDSTATE: [u32; 8] = [
    0x9cec_ba11,
    0x2392_5381,
    0x1167_9112,
    0xd162_7e0f,
    0x97c8_7550,
    0x003c_c765,
    0x90f6_1164,
    0x33e9_b66a,
];

/// The SHA-256 initial state (FIPS 180-4, section 5.3.3).
const SHA256_IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// Runs SHA-256 compressions over whole 64-byte blocks (SHA-NI / ARMv8 SHA picked at run time
/// by the `sha2` crate).
fn compress(state: &mut [u32; 8], blocks: &[[u8; 64]]) {
    for b in blocks {
        sha2::compress256(
            state,
            core::slice::from_ref(sha2::digest::generic_array::GenericArray::from_slice(b)),
        );
    }
}

/// Serializes a SHA-256 state as the big-endian digest.
fn state_bytes(state: &[u32; 8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (o, w) in out.chunks_exact_mut(4).zip(state) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// The SHA-256 state after absorbing the 64-byte prefix `SHA256(tag) || SHA256(tag)` of a BIP-340
/// tagged hash.
pub(crate) fn tagged_midstate(tag: &[u8]) -> [u32; 8] {
    use sha2::Digest;
    let t: [u8; 32] = sha2::Sha256::digest(tag).into();
    let mut block = [0u8; 64];
    block[..32].copy_from_slice(&t);
    block[32..].copy_from_slice(&t);
    let mut s = SHA256_IV;
    compress(&mut s, &[block]);
    s
}

/// Finishes a SHA-256 hash from `midstate` (which has absorbed exactly one 64-byte block) over
/// `data` (any length): the tagged hash `H_tag(data)` when `midstate` is [`tagged_midstate`].
pub(crate) fn finish_from_midstate(midstate: &[u32; 8], data: &[u8]) -> [u8; 32] {
    let mut s = *midstate;
    let mut chunks = data.chunks_exact(64);
    for c in &mut chunks {
        let mut b = [0u8; 64];
        b.copy_from_slice(c);
        compress(&mut s, &[b]);
    }
    let rest = chunks.remainder();
    let bits = ((64 + data.len()) as u64) * 8;
    let mut tail = [[0u8; 64]; 2];
    let flat = tail.as_flattened_mut();
    flat[..rest.len()].copy_from_slice(rest);
    flat[rest.len()] = 0x80;
    let nblocks = if rest.len() + 9 <= 64 { 1 } else { 2 };
    flat[nblocks * 64 - 8..nblocks * 64].copy_from_slice(&bits.to_be_bytes());
    compress(&mut s, &tail[..nblocks]);
    state_bytes(&s)
}

/// The BIP-340 challenge digest `H_BIP0340/challenge(r || P || m)` for a 32-byte message, before
/// reduction mod n.
///
/// Two SHA-256 compressions from the precomputed tag midstate: `r || P` fills one block, `m`
/// plus padding (total length 160 bytes) the second.
pub fn challenge_hash(r: &[u8; 32], pubkey: &[u8; 32], msg: &[u8; 32]) -> [u8; 32] {
    let mut blocks = [[0u8; 64]; 2];
    blocks[0][..32].copy_from_slice(r);
    blocks[0][32..].copy_from_slice(pubkey);
    blocks[1][..32].copy_from_slice(msg);
    blocks[1][32] = 0x80;
    // Message length: 64 (tag prefix) + 96 bytes = 1280 bits.
    blocks[1][62] = 0x05;
    let mut s = CHALLENGE_MIDSTATE;
    compress(&mut s, &blocks);
    state_bytes(&s)
}

/// [`challenge_hash`] of many signatures at once, each given as `r ‖ P ‖ m` (96 bytes), on
/// the selected SHA-256 path (`backend::sha`: in vector lanes on x86-64 CPUs without SHA-NI).
pub(crate) fn challenge_hashes(msgs: &[[u8; 96]], out: &mut [[u8; 32]]) {
    let refs: Vec<&[u8]> = msgs.iter().map(|m| &m[..]).collect();
    crate::backend::sha::hash_many_from(&CHALLENGE_MIDSTATE, 1, &refs, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn challenge_hashes_match_challenge_hash_on_every_path() {
        use crate::backend::sha::{hash_many_from_on, Sha};
        let msgs: Vec<[u8; 96]> = (0..37u8)
            .map(|i| core::array::from_fn(|j| i.wrapping_mul(17).wrapping_add(j as u8)))
            .collect();
        let want: Vec<[u8; 32]> = msgs
            .iter()
            .map(|m| {
                let r: &[u8; 32] = m[..32].try_into().unwrap();
                let p: &[u8; 32] = m[32..64].try_into().unwrap();
                let msg: &[u8; 32] = m[64..].try_into().unwrap();
                challenge_hash(r, p, msg)
            })
            .collect();
        let mut got = vec![[0u8; 32]; msgs.len()];
        challenge_hashes(&msgs, &mut got);
        assert_eq!(got, want, "selected path");
        let refs: Vec<&[u8]> = msgs.iter().map(|m| &m[..]).collect();
        for sha in Sha::available() {
            hash_many_from_on(sha, &CHALLENGE_MIDSTATE, 1, &refs, &mut got);
            assert_eq!(got, want, "{sha:?}");
        }
    }

    fn plain_tagged(tag: &[u8], data: &[u8]) -> [u8; 32] {
        let t = Sha256::digest(tag);
        let mut h = Sha256::new();
        h.update(t);
        h.update(t);
        h.update(data);
        h.finalize().into()
    }

    #[test]
    fn challenge_midstate_is_recomputed() {
        assert_eq!(tagged_midstate(CHALLENGE_TAG), CHALLENGE_MIDSTATE);
    }

    #[test]
    fn challenge_matches_plain_tagged_hash() {
        let mut x = [0u8; 96];
        for round in 0..200u32 {
            for (i, b) in x.iter_mut().enumerate() {
                *b = (round
                    .wrapping_mul(2_654_435_761)
                    .wrapping_add(i as u32 * 40_503)
                    >> 7) as u8;
            }
            let (r, rest) = x.split_at(32);
            let (p, m) = rest.split_at(32);
            let e = challenge_hash(
                r.try_into().unwrap(),
                p.try_into().unwrap(),
                m.try_into().unwrap(),
            );
            assert_eq!(e, plain_tagged(CHALLENGE_TAG, &x));
        }
    }

    #[test]
    fn finish_from_midstate_matches_plain_for_all_lengths() {
        let tag = b"nostr-verify/test";
        let mid = tagged_midstate(tag);
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in 0..data.len() {
            assert_eq!(
                finish_from_midstate(&mid, &data[..len]),
                plain_tagged(tag, &data[..len]),
                "len {len}"
            );
        }
    }
}
