//! Inside wasm32 (feature `js`) the verifier's randomness comes from the Web Crypto API:
//! a spy installed on `globalThis.crypto.getRandomValues` sees the draws.

#![cfg(target_arch = "wasm32")]
#![allow(unreachable_pub, missing_docs)]

use nostr_verify::{SigRef, Verifier};
use nostr_verify_wasm_tests::crypto_spy;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn verifier_secret_and_cache_key_come_from_get_random_values() {
    crypto_spy::install();
    assert!(crypto_spy::installed(), "spy not in place");
    let (c0, b0) = crypto_spy::counts();
    let mut v = Verifier::new();
    let (c1, b1) = crypto_spy::counts();
    // Verifier::new draws its 32-byte secret (and its key cache a 16-byte SipHash key).
    assert!(
        c1 > c0,
        "Verifier::new drew nothing through crypto.getRandomValues"
    );
    assert!(b1 - b0 >= 32, "only {} bytes drawn for the secret", b1 - b0);
    // A second verifier draws again: no fixed or cached secret.
    let _w = Verifier::new();
    let (c2, b2) = crypto_spy::counts();
    assert!(c2 > c1 && b2 - b1 >= 32, "second Verifier drew nothing new");
    // Verifying draws nothing more: the weights come from the secret and the inputs.
    let (pk, msg, sig) = ([1u8; 32], [2u8; 32], [3u8; 64]);
    let s = SigRef {
        pubkey: &pk,
        msg: &msg,
        sig: &sig,
    };
    let mut ok = Vec::new();
    assert!(!v.verify_batch(&[s; 5], &mut ok));
    assert_eq!(
        crypto_spy::counts(),
        (c2, b2),
        "verify_batch drew randomness"
    );
    crypto_spy::remove();
    assert!(!crypto_spy::installed(), "spy still in place");
    let _x = Verifier::new();
    assert_eq!(crypto_spy::counts(), (c2, b2), "spy counted after removal");
}
