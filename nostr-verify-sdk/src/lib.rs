//! nostr-sdk 0.44 relay-pool tap: batch-verified event delivery for `nostr_sdk::Client`.
//!
//! nostr-sdk 0.44 checks every incoming event itself, one at a time, before any public hook. The
//! only place before that check is the WebSocket transport, so this crate provides
//!
//! * [`BatchVerifyTransport`]: a `WebSocketTransport` wrapper (default inner transport: the
//!   SDK's own) that takes over the `EVENT` frames of subscriptions whose id starts with `bv:`,
//!   recomputes every id, batch-verifies signatures with [`nostr_verify`] (cached by the full
//!   id together with the signature bytes, shared across connections) and drops invalid
//!   events, counting them by reason;
//! * [`VerifiedClient`]: a `Client` wrapper (derefs to it) whose `fetch_events`,
//!   `stream_events`, `subscribe` (long-lived, or auto-closing with [`AutoCloseOptions`]),
//!   `sync` / `sync_with` (NIP-77 negentropy, [`VerifiedSyncOptions`]) and `notifications`
//!   deliver through the tap with the SDK's semantics (exit policies, timeouts,
//!   de-duplication, database saves, notifications); in gossip mode the relay lists a call
//!   needs are fetched through the tap first; relays that send forged events are counted
//!   ([`TapHandle::relay_stats`]) and optionally disconnected or banned
//!   ([`ForgedEventPolicy`]).
//!
//! **What the SDK still does:** connections and reconnects, REQ/CLOSE, EOSE and timeout
//! handling, NIP-42 auth, gossip routing, publishing, the negentropy reconciliation itself and
//! `Up` transfers, and every subscription it opens itself (`Client`'s own methods through
//! `Deref`: those stay on the SDK's one-at-a-time path; the tap recomputes their ids and
//! checks a copy's signature when its bytes differ from the ones forwarded before for that
//! id, see [`TapOptions::check_passthrough_ids`]).
//!
//! # Switching a client over
//! ```no_run
//! use std::time::Duration;
//! use nostr_sdk::prelude::*;
//! use nostr_verify_sdk::{BatchVerifyTransport, VerifiedClient};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let tap = BatchVerifyTransport::default(); // wraps DefaultWebsocketTransport
//! let client = Client::builder().websocket_transport(tap.clone()).build();
//! let client = VerifiedClient::new(client, &tap);
//! client.add_relay("wss://relay.damus.io").await?;
//! client.connect().await;
//! let filter = Filter::new().kind(Kind::TextNote).limit(100);
//! let events: Events = client.fetch_events(filter, Duration::from_secs(10)).await?;
//! println!("{} verified events, {:?}", events.len(), client.tap().stats());
//! # Ok(())
//! # }
//! ```
//!
//! # Advisories
//! nostr-relay-pool 0.44 and nostr-relay-builder 0.44 (dev-dependency) are flagged unmaintained
//! by RUSTSEC-2026-0243 and RUSTSEC-2026-0237 (merged into nostr-sdk 0.45, whose releases are all
//! yanked). Ignore those two ids in cargo-audit / cargo-deny for this crate; nostr-relay-pool
//! 0.44.3 contains the fixes for RUSTSEC-2026-0224, -0231 and -0232.

mod client;
mod transport;

/// The SDK's own transport, the default inner transport of [`BatchVerifyTransport`].
pub use nostr_sdk::pool::transport::websocket::DefaultWebsocketTransport;

pub use client::{
    AutoCloseOptions, ForgedEventPolicy, VerifiedClient, VerifiedClientOptions,
    VerifiedSyncOptions, DEFAULT_SYNC_CHUNK, DEFAULT_SYNC_IN_FLIGHT,
};
pub use transport::{
    BatchVerifyTransport, DropReason, TapEvent, TapHandle, TapOptions, TapStats, TapStream,
    DEFAULT_PREFIX,
};

/// Entry points for fuzz targets. **Not a stable API**: hidden from the docs, exempt from
/// semver, and free to change or go in any release.
///
/// The frame scanner the tap runs on every text frame from a relay, before any parse:
/// [`scan_head`](__fuzz::scan_head) classifies a trimmed frame, and for
/// [`Head::Event`](__fuzz::Head::Event) [`event_object`](__fuzz::event_object) cuts out the
/// event object's text; [`trim_json`](__fuzz::trim_json) is the trim applied before. All take
/// any `&str` and must never panic.
#[doc(hidden)]
pub mod __fuzz {
    pub use crate::transport::scan::{event_object, needs_full_parse, scan_head, trim_json, Head};
}
