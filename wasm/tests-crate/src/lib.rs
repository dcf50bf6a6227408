//! Support for running nostr-verify's tests inside wasm32-unknown-unknown.
//!
//! The tests in `tests/` are `wasm-bindgen-test` tests that `.ci/wasm.sh` runs in node and in
//! headless Chromium; on other targets the same test bodies run as ordinary `#[test]`s, except
//! those that need a JavaScript engine. This library holds what they need from JavaScript: a
//! spy on the Web Crypto API's `crypto.getRandomValues` (module `crypto_spy`, wasm32 only), so that a test
//! can show where the verifier's randomness comes from.

#[cfg(target_arch = "wasm32")]
pub mod crypto_spy {
    //! A counting wrapper around `globalThis.crypto.getRandomValues`.
    //!
    //! [`install`] replaces the method on the `crypto` object by a function that counts its
    //! calls and the bytes it fills, then calls the original (so the bytes are still the
    //! engine's). `getrandom` (feature `js`) looks the method up on every call, so the spy
    //! sees every draw made after it is installed, also by code that drew before.
    use wasm_bindgen::prelude::wasm_bindgen;

    #[wasm_bindgen(inline_js = r#"
let calls = 0;
let bytes = 0;
let original = null;
export function spy_install() {
  const c = globalThis.crypto;
  if (!c || typeof c.getRandomValues !== "function") {
    throw new Error("globalThis.crypto.getRandomValues is missing");
  }
  if (original !== null) return;
  original = c.getRandomValues;
  Object.defineProperty(c, "getRandomValues", {
    configurable: true,
    writable: true,
    value: function getRandomValues(a) {
      calls += 1;
      bytes += a.length;
      return original.call(c, a);
    },
  });
}
export function spy_remove() {
  if (original === null) return;
  delete globalThis.crypto.getRandomValues;
  original = null;
}
export function spy_calls() { return calls; }
export function spy_bytes() { return bytes; }
export function spy_is_own() {
  return Object.prototype.hasOwnProperty.call(globalThis.crypto, "getRandomValues");
}
"#)]
    extern "C" {
        fn spy_install();
        fn spy_remove();
        fn spy_calls() -> u32;
        fn spy_bytes() -> u32;
        fn spy_is_own() -> bool;
    }

    /// Installs the spy (once; later calls do nothing). Throws (a JS exception, which fails
    /// the test) when the engine has no `crypto.getRandomValues`.
    pub fn install() {
        spy_install();
    }

    /// Puts the engine's own `getRandomValues` back.
    pub fn remove() {
        spy_remove();
    }

    /// `(calls, bytes)` seen by the spy since the module was loaded.
    pub fn counts() -> (u32, u32) {
        (spy_calls(), spy_bytes())
    }

    /// Whether the spy is in place (an own property of `globalThis.crypto`).
    pub fn installed() -> bool {
        spy_is_own()
    }
}
