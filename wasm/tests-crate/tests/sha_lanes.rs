//! The SHA-256 paths of `backend::sha` inside wasm32: `tests/sha_lanes.rs` of the main crate,
//! compiled here, where nostr-verify is built with the feature `simd128`, so that the 4-lane
//! `simd128` kernel (the automatic choice in wasm) is checked against `sha2` in node and in
//! headless Chromium on the NIST vectors, random lengths, midstates and both lane schedules.

#![allow(unreachable_pub, missing_docs)]

#[path = "../../../tests/sha_lanes.rs"]
mod shared;
