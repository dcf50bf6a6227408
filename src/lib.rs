// The README is the crate's front page. Its code blocks are complete programs for users to paste
// (no hidden lines), built and run by `tests/readme.rs`, so they are not collected as doctests;
// the compiled doctests live on the items (`Verifier`, `VerifyBatchExt`, `IngestService`, ...).
#![cfg_attr(not(doctest), doc = include_str!("../README.md"))]
// docs.rs builds with all features and `--cfg docsrs`: every item is marked with the feature it
// needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

// The arithmetic, the backends and the MSM are internals: public only under the `internals`
// feature, for this crate's own tests, benchmarks and examples, with no stability promise.
// Without it they are private, and the lints that judge an API (unused, unreachable `pub`,
// `to_*` conventions kept for the exported form) are off for them.
#[cfg(feature = "internals")]
pub mod arithmetic;
#[cfg(not(feature = "internals"))]
#[allow(unreachable_pub, unused_imports, clippy::wrong_self_convention)]
mod arithmetic;
#[cfg(feature = "internals")]
pub mod backend;
#[cfg(not(feature = "internals"))]
#[allow(unreachable_pub, unused_imports, clippy::wrong_self_convention)]
mod backend;
mod batch;
pub mod bip340;
mod error;
mod key_cache;
#[cfg(feature = "internals")]
pub mod msm;
#[cfg(not(feature = "internals"))]
#[allow(unreachable_pub, unused_imports, clippy::wrong_self_convention)]
mod msm;
#[cfg(feature = "nip59")]
pub mod nip59;
// rust-nostr integration. The module is private and its items are re-exported at the root,
// so `use nostr_verify::*` never shadows the `nostr` crate.
#[cfg(any(feature = "nostr", feature = "nostr-0-44"))]
mod nostr;
mod spawn;

#[cfg(feature = "tokio")]
pub use crate::nostr::ingest;
#[cfg(any(feature = "nostr", feature = "nostr-0-44"))]
pub use crate::nostr::{
    compute_id, compute_ids, id_preimage, verify_iter, EventView, PartitionVerifiedExt,
    Partitioned, Verdict, VerifyBatchExt, VerifyEventExt,
};
pub use batch::{with_thread_verifier, Stats, Verifier, MIN_BATCH};
pub use bip340::{check_one, verify_one, SigRef};
pub use error::Error;
pub use key_cache::SharedKeyCache;

/// SHA-256 of many messages at once: `out[i]` becomes `SHA-256(msgs[i])`, for messages of
/// any lengths. It runs on the path the verifier uses for its own hashing: the CPU's SHA
/// instructions where it has them, else several messages side by side in vector lanes
/// (AVX-512F or AVX2 on x86-64, WebAssembly `simd128` with the feature `simd128`), else
/// portable code. For NIP-01 event ids, hash the serializations (`[0,pubkey,created_at,kind,
/// tags,content]`) together: on the lane paths that is several times faster than one at a
/// time.
///
/// # Panics
/// If `msgs` and `out` differ in length.
///
/// # Examples
/// ```
/// let mut out = [[0u8; 32]; 2];
/// nostr_verify::sha256_many(&[b"abc", b""], &mut out);
/// assert_eq!(out[0][..4], [0xba, 0x78, 0x16, 0xbf]);
/// assert_eq!(out[1][..4], [0xe3, 0xb0, 0xc4, 0x42]);
/// ```
pub fn sha256_many(msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    backend::sha::compute_ids(msgs, out);
}
