//! Build script: looks for the shared test data the data-driven tests read (`../shared/data`
//! beside the checkout, two levels above this manifest, or `$NOSTR_VERIFY_DATA`). When it is
//! absent and `CI` is not `true`, it sets `--cfg nostr_verify_no_data`, under which those tests
//! are `#[ignore]`d with a reason (reported as ignored, not passed; the script prints nothing).
//! Under `CI=true` the tests run and fail loudly when the data is missing.

use std::env;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(nostr_verify_no_data)");
    println!("cargo::rerun-if-env-changed=NOSTR_VERIFY_DATA");
    println!("cargo::rerun-if-env-changed=CI");
    let dir = match env::var_os("NOSTR_VERIFY_DATA") {
        Some(d) => PathBuf::from(d),
        None => Path::new(&env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default())
            .join("../..")
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
