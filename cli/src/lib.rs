//! The library behind the `nostr-verify` binary: a streaming line reader, the parallel
//! check pipeline and the LMDB ingest. `src/main.rs` only parses arguments and prints.
//!
//! Data flow: one reader thread cuts the input into chunks of lines ([`input`]); N worker threads
//! parse each line ([`mod@line`]) and verify the chunk's events with
//! [`nostr_verify::VerifyBatchExt::verify_batch`]; the calling thread puts the chunks back in line
//! order, removes duplicates and hands every line's outcome to a callback ([`pipeline`]). What is
//! in flight (chunks of text, decoded events, events queued for the database) holds bytes of one
//! [`budget::Budget`], so memory stays bounded by bytes whatever the input and its line lengths.

pub mod budget;
pub mod ingest;
pub mod input;
pub mod line;
pub mod pipeline;
mod progress;

/// Entry points for fuzz targets. **Not a stable API**: hidden from the docs, exempt from
/// semver, and free to change or go in any release.
///
/// The line classifier every non-blank input line goes through before verification:
/// [`parse_line`](__fuzz::parse_line) takes any bytes and returns the decoded event with its
/// span, `Ok(None)` for a blank line, or the [`Problem`](line::Problem); it must never panic,
/// and a returned span always lies inside the line on UTF-8 boundaries.
#[doc(hidden)]
pub mod __fuzz {
    pub use crate::line::parse_line;
}
