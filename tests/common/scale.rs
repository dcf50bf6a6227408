//! The count multiplier of the randomized suites, for every crate of the workspace: the
//! library's tests take it through `tests/common/mod.rs`, the SDK's and the CLI's include this
//! file by path (`#[path]`), so it is defined once.

/// The count multiplier from `SECP_DIFF_SCALE` (default 1; 0 or anything unparsable counts
/// as 1).
pub fn scale() -> usize {
    std::env::var("SECP_DIFF_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
        .max(1)
}
