#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod arithmetic;
pub mod backend;
mod batch;
pub mod bip340;
mod error;
mod key_cache;
pub mod msm;
#[cfg(feature = "nip59")]
pub mod nip59;
#[cfg(any(feature = "nostr", feature = "nostr-0-44"))]
pub mod nostr;
mod thread_local;

#[cfg(any(feature = "nostr", feature = "nostr-0-44"))]
pub use crate::nostr::Verdict;
#[cfg(any(feature = "nostr", feature = "nostr-0-44"))]
pub use crate::nostr::{PartitionVerifiedExt, VerifyBatchExt, VerifyEventExt};
pub use batch::{SharedKeyCache, Stats, Verifier, MIN_BATCH};
pub use bip340::{verify_one, SigRef};
pub use error::Error;
pub use thread_local::with_thread_verifier;
