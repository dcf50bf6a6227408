//! Helpers shared by the integration tests. Suite-specific helpers live beside this file and
//! are included by path where needed: `sigs.rs` (signatures and batches), `nostr.rs` (nostr
//! events for both nostr releases); `scale.rs` is shared with the SDK's and the CLI's tests.
#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;

mod scale;
#[allow(unused_imports)] // not every suite scales its counts
pub use scale::scale;

/// The big-integer reference of the arithmetic suites (they need the `internals` layers).
#[cfg(feature = "internals")]
pub mod bigint;

/// The shared data folder, read in place: `$NOSTR_VERIFY_DATA` if set, else
/// `../shared/data` beside the checkout (the parent of this crate's root). No other place is
/// searched, so a stray folder higher up can never stand in for it.
///
/// When the folder is missing the test says so on the process's stderr (written directly, so
/// the test harness does not swallow it as it does `eprintln!` output of passing tests) and is
/// skipped (`None`); under `CI=true` a missing folder fails the test instead.
pub fn data_dir() -> Option<PathBuf> {
    let (dir, from_env) = match std::env::var_os("NOSTR_VERIFY_DATA") {
        Some(p) => (PathBuf::from(p), true),
        None => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("shared")
                .join("data"),
            false,
        ),
    };
    if dir.join("README.md").is_file() {
        return Some(dir);
    }
    let what = if from_env {
        format!("NOSTR_VERIFY_DATA={} holds no README.md", dir.display())
    } else {
        format!("{} not found beside the checkout", dir.display())
    };
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("shared test data missing: {what} (under CI=true it must be present)");
    }
    skip_loudly(&what);
    None
}

/// The shared data folder when it is present, else `None` without a word: for tests that run
/// on the vendored sample (`sample_dir`) in any clone and add the corpus when they can. Under
/// `CI=true` a missing folder fails the test, as in [`data_dir`].
pub fn data_dir_if_present() -> Option<PathBuf> {
    let dir = match std::env::var_os("NOSTR_VERIFY_DATA") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("shared")
            .join("data"),
    };
    if dir.join("README.md").is_file() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "shared test data missing: {} (under CI=true it must be present)",
            dir.display()
        );
    }
    None
}

/// `tests/data/`: the vendored vectors and the sample of real events
/// (`events-sample.jsonl`, 300 valid events, with `events-sample.index.tsv`), always present in
/// a checkout.
pub fn sample_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
}

/// Tells the person running the tests that a data-driven test did not run: straight to the
/// process's stderr, past the harness's output capture.
pub fn skip_loudly(what: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "\n*** SKIPPED ({}): {what}; data-driven test not run ***\n",
        std::thread::current().name().unwrap_or("test")
    );
}

/// A small spec-vector file vendored in `tests/data/` (always present in a checkout).
pub fn vector_file(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}
