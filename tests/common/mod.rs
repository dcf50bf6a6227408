//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;

/// `../shared/data` beside the checkout (or `$NOSTR_VERIFY_DATA`), read in place.
///
/// When the folder is missing the test says so loudly and is skipped (`None`); under
/// `CI=true` a missing folder fails the test instead.
pub fn data_dir() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("NOSTR_VERIFY_DATA") {
        let p = PathBuf::from(p);
        if p.is_dir() {
            return Some(p);
        }
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for dir in manifest.ancestors() {
        let cand = dir.join("..").join("shared").join("data");
        if cand.join("README.md").is_file() {
            return Some(cand);
        }
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("../shared/data is missing: under CI=true the shared test data must be present");
    }
    eprintln!("\n*** SKIPPED: ../shared/data not found beside the checkout; data-driven test not run ***\n");
    None
}

/// The count multiplier from `SECP_DIFF_SCALE` (default 1).
pub fn scale() -> usize {
    std::env::var("SECP_DIFF_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1)
}
