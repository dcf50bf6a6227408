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
mod thread_local;

#[cfg(feature = "tokio")]
pub use crate::nostr::ingest;
#[cfg(any(feature = "nostr", feature = "nostr-0-44"))]
pub use crate::nostr::{
    compute_id, compute_ids, id_preimage, verify_iter, EventView, PartitionVerifiedExt,
    Partitioned, Verdict, VerifyBatchExt, VerifyEventExt,
};
pub use batch::{Stats, Verifier, MIN_BATCH};
pub use bip340::{check_one, verify_one, SigRef};
pub use error::Error;
pub use key_cache::SharedKeyCache;
pub use thread_local::with_thread_verifier;
