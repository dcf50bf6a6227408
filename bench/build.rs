//! Build script: sets `cfg(nostr_verify_field32)` exactly when the `nostr-verify` library
//! builds its 10×26-bit field (wasm32, or `NOSTR_VERIFY_FIELD32=1` at build time; see the root
//! `build.rs`), so that `benches/field.rs` labels its kernel rows after the field the library
//! computes in.

use std::env;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=NOSTR_VERIFY_FIELD32");
    println!("cargo::rustc-check-cfg=cfg(nostr_verify_field32)");
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if arch == "wasm32" || env::var_os("NOSTR_VERIFY_FIELD32").is_some_and(|v| v == "1") {
        println!("cargo::rustc-cfg=nostr_verify_field32");
    }
}
