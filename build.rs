//! Build script: enables the AVX-512 IFMA backend when the compiler can build it.
//!
//! The crate's MSRV is 1.85, but the AVX-512 intrinsics (`core::arch::x86_64::_mm512_*`,
//! including `vpmadd52{l,h}uq`) are stable only since Rust 1.89. On x86_64 with rustc >= 1.89
//! this script sets `--cfg nostr_verify_ifma`; older compilers and other targets build the
//! portable backend only. No dependencies: it runs `$RUSTC --version` and parses the output.
//! Setting `NOSTR_VERIFY_NO_IFMA=1` at build time leaves the IFMA code out as an old compiler
//! would (used to check that the portable-only build stays warning-free).
//!
//! It sets `--cfg nostr_verify_field32` on wasm32, and on any target when
//! `NOSTR_VERIFY_FIELD32=1` is set at build time (to test it natively): the field element is
//! then the 10×26-bit representation (`u32 × u32 → u64` products; wasm32 has no
//! 64×64→128-bit multiply) and the portable kernels compute in it instead of 4×64-bit words
//! (`docs/arithmetic.md`, "The 10×26 representation"). The IFMA arm, whose kernels read
//! 5×52-bit limbs, is left out under it.
//!
//! It sets `--cfg nostr_verify_sha_lanes` where a SHA-256 lane kernel is built: with
//! `nostr_verify_ifma` (AVX2 and AVX-512F lanes) and on wasm32 with the crate feature `simd128`
//! (4 lanes in `v128`).
//!
//! It also looks for the shared test data the data-driven tests read (`../shared/data` beside
//! the checkout, or `$NOSTR_VERIFY_DATA`). When it is absent and `CI` is not `true`, it sets
//! `--cfg nostr_verify_no_data`, under which those tests are `#[ignore]`d with a reason, so a
//! run without the data reports them as ignored, not passed (the script itself prints nothing:
//! most builds run no such test). Under `CI=true` the cfg is never set: the tests run and fail
//! loudly when the data is missing.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUSTC");
    println!("cargo::rerun-if-env-changed=NOSTR_VERIFY_NO_IFMA");
    println!("cargo::rerun-if-env-changed=NOSTR_VERIFY_FIELD32");
    println!("cargo::rustc-check-cfg=cfg(nostr_verify_ifma)");
    println!("cargo::rustc-check-cfg=cfg(nostr_verify_field32)");
    println!("cargo::rustc-check-cfg=cfg(nostr_verify_sha_lanes)");
    shared_data("..");

    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let field32 = arch == "wasm32" || env::var_os("NOSTR_VERIFY_FIELD32").is_some_and(|v| v == "1");
    if field32 {
        println!("cargo::rustc-cfg=nostr_verify_field32");
    }
    let x86_64 = arch == "x86_64";
    let opted_out = env::var_os("NOSTR_VERIFY_NO_IFMA").is_some_and(|v| v != "0");
    let ifma = x86_64 && !field32 && !opted_out && rustc_minor().is_some_and(|minor| minor >= 89);
    if ifma {
        println!("cargo::rustc-cfg=nostr_verify_ifma");
    }
    // SHA-256 lane kernels: AVX2 / AVX-512F with the IFMA build, simd128 on wasm32 when the
    // crate feature `simd128` asks for it.
    let simd128 = arch == "wasm32" && env::var_os("CARGO_FEATURE_SIMD128").is_some();
    if ifma || simd128 {
        println!("cargo::rustc-cfg=nostr_verify_sha_lanes");
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

/// Sets `cfg(nostr_verify_no_data)` when the shared test data is absent (see the module docs).
/// `up` leads from this package's manifest directory to the checkout's parent directory.
fn shared_data(up: &str) {
    println!("cargo::rustc-check-cfg=cfg(nostr_verify_no_data)");
    println!("cargo::rerun-if-env-changed=NOSTR_VERIFY_DATA");
    println!("cargo::rerun-if-env-changed=CI");
    let dir = match env::var_os("NOSTR_VERIFY_DATA") {
        Some(d) => std::path::PathBuf::from(d),
        None => std::path::Path::new(&env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default())
            .join(up)
            .join("shared")
            .join("data"),
    };
    let readme = dir.join("README.md");
    println!("cargo::rerun-if-changed={}", readme.display());
    let ci = env::var("CI").is_ok_and(|v| v == "true");
    if !ci && !readme.is_file() {
        // No `cargo::warning` here: the build cannot tell whether tests that need the corpus
        // will run (`cargo run --example quickstart` builds this script too). The ignored
        // tests name the data they need in their ignore reason, printed by `cargo test`.
        println!("cargo::rustc-cfg=nostr_verify_no_data");
    }
}
