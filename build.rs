//! Build script: enables the AVX-512 IFMA backend when the compiler can build it.
//!
//! The crate's MSRV is 1.85, but the AVX-512 intrinsics (`core::arch::x86_64::_mm512_*`,
//! including `vpmadd52{l,h}uq`) are stable only since Rust 1.89. On x86_64 with rustc >= 1.89
//! this script sets `--cfg nostr_verify_ifma`; older compilers and other targets build the
//! portable backend only. No dependencies: it runs `$RUSTC --version` and parses the output.
//! Setting `NOSTR_VERIFY_NO_IFMA=1` at build time leaves the IFMA code out as an old compiler
//! would (used to check that the portable-only build stays warning-free).

use std::env;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUSTC");
    println!("cargo::rerun-if-env-changed=NOSTR_VERIFY_NO_IFMA");
    println!("cargo::rustc-check-cfg=cfg(nostr_verify_ifma)");

    let x86_64 = env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "x86_64");
    let opted_out = env::var_os("NOSTR_VERIFY_NO_IFMA").is_some_and(|v| v != "0");
    if x86_64 && !opted_out && rustc_minor().is_some_and(|minor| minor >= 89) {
        println!("cargo::rustc-cfg=nostr_verify_ifma");
    }
}

/// The minor version of the compiler (`rustc 1.95.0 (...)` -> 95), if it is a 1.x rustc.
fn rustc_minor() -> Option<u32> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    if parts.next()? != "1" {
        return None;
    }
    parts.next()?.parse().ok()
}
