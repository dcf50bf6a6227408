//! BIP-340 inputs and the reference single verifier.
//!
//! [`SigRef`] borrows the three byte strings of one signature check: a 32-byte x-only public
//! key, a 32-byte message (for Nostr, the event id) and a 64-byte signature `r || s`.
//! [`verify_one`] is libsecp256k1's `secp256k1_schnorrsig_verify` through the `secp256k1`
//! crate: every `false` verdict this crate gives comes from it.

use secp256k1::{schnorr, Secp256k1, VerifyOnly, XOnlyPublicKey};
use std::sync::OnceLock;

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
