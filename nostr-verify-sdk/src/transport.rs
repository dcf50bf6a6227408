//! [`BatchVerifyTransport`]: a `WebSocketTransport` wrapper that takes over the EVENT frames of
//! the subscriptions it owns and batch-verifies them before anything else sees them.
//!
//! nostr-sdk 0.44 verifies every incoming event itself, one at a time, inside the relay's reader
//! task (nostr-relay-pool's `handle_event_msg`), before the event reaches the database, the
//! notifications or any other public hook, and offers no switch to replace that check. The
//! transport stream is the only place before it, so the tap sits there: the relay's own reader
//! task polls [`TapStream`], which
//!
//! 1. scans the head of each text frame (`["EVENT","<sub>"`) without a full parse and intercepts
//!    only subscription ids that start with the tap's prefix (`bv:`; the SDK only generates
//!    32 lowercase hex characters, so the prefix never collides);
//! 2. buffers intercepted events per connection (tagged by subscription, in wire order) and
//!    flushes at [`TapOptions::batch_size`], when the socket has nothing more ready, before
//!    forwarding any other frame (an EOSE never overtakes its events) and at stream end;
//! 3. per event, in the SDK's order: message size, event size, tag count, NIP-40 expiry, then the
//!    id (always recomputed), then the signature unless the exact (id, signature) pair is in the
//!    verified LRU; signatures go through [`nostr_verify::VerifyBatchExt`] (the thread-local
//!    batch verifier);
//! 4. shares (id, signature) pairs in flight across connections, so an identical copy arriving
//!    from a second relay while the first connection is verifying it waits for that verdict
//!    instead of checking it again (a copy with other signature bytes is checked on its own);
//! 5. delivers [`TapEvent`]s to the registered subscription's bounded channel; a full channel
//!    makes the stream return `Pending`, which stops the relay's reader: back-pressure reaches
//!    the TCP socket instead of growing memory.
//!
//! Every other frame is passed through untouched, except that with
//! [`TapOptions::check_passthrough_ids`] pass-through EVENT frames are guarded too: the id is
//! recomputed and a mismatching frame dropped, and a copy whose signature bytes differ from the
//! ones forwarded before for the same id has its signature checked here. nostr-relay-pool 0.44.3
//! skips verification for any event whose claimed id is in its verification cache, so without the
//! guard a relay could get a tampered body or mangled signature bytes delivered unchecked on the
//! SDK's own subscriptions.

//!
//! Rooms: [`scan`] reads frame heads, [`cache`] holds the signature state the connections
//! share, [`stream`] is the per-connection state machine, `lock` the one locking helper;
//! this file holds the public types, the options and counters, and the transport wrapper.

mod cache;
mod lock;
pub(crate) mod scan;
mod stream;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_wsocket::ConnectionMode;
use nostr_sdk::pool::transport::error::TransportError;
use nostr_sdk::pool::transport::websocket::{
    DefaultWebsocketTransport, WebSocketSink, WebSocketStream, WebSocketTransport,
};
use nostr_sdk::pool::RelayLimits;
use nostr_sdk::prelude::{BoxedFuture, Event, RelayUrl, SubscriptionId, Url};
use tokio::sync::{mpsc, watch};

use cache::Cache;
use lock::lock;
pub use stream::TapStream;

/// The subscription-id prefix of the tap's subscriptions. It contains a character that is not
/// lowercase hex, so it never collides with `SubscriptionId::generate()`.
pub const DEFAULT_PREFIX: &str = "bv:";

/// What the tap delivers to a registered subscription, per connection and in wire order.
#[derive(Debug, Clone)]
pub enum TapEvent {
    /// A verified event (valid id and signature, passed the size, tag and expiry checks).
    Event {
        /// The relay it came from.
        relay_url: RelayUrl,
        /// The subscription it was sent for.
        subscription_id: SubscriptionId,
        /// The event.
        event: Box<Event>,
    },
    /// `EOSE` for the subscription; every event the relay sent before it was delivered first.
    Eose {
        /// The relay.
        relay_url: RelayUrl,
        /// The subscription.
        subscription_id: SubscriptionId,
    },
    /// `CLOSED` for the subscription.
    Closed {
        /// The relay.
        relay_url: RelayUrl,
        /// The subscription.
        subscription_id: SubscriptionId,
        /// The relay's message.
        message: String,
    },
    /// The connection ended (stream end, error, or the stream was dropped).
    Disconnected {
        /// The relay.
        relay_url: RelayUrl,
    },
}

/// Why the tap dropped an event. Each reason has a counter in [`TapStats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The frame is larger than the message limit (nostr-sdk default: 5 MB).
    MessageTooLarge,
    /// The frame is not a valid `EVENT` message.
    Unparsable,
    /// The event's JSON is larger than the per-kind event size limit.
    EventTooLarge,
    /// More tags than the per-kind limit (nostr-sdk default: 2 000; 10 000 for kind 3).
    TooManyTags,
    /// NIP-40 expiration in the past.
    Expired,
    /// The id is not the NIP-01 hash of the event.
    InvalidId,
    /// The id is right but the signature is not valid.
    InvalidSignature,
    /// The subscription is not (or no longer) registered with the tap.
    Unrouted,
}

/// Tuning knobs of [`BatchVerifyTransport`].
#[derive(Debug, Clone)]
pub struct TapOptions {
    /// Subscription-id prefix the tap owns (default [`DEFAULT_PREFIX`]).
    pub prefix: String,
    /// Flush after this many buffered events (default 1024).
    pub batch_size: usize,
    /// Capacity of the verified LRU, keyed by the full 32-byte id together with the 64
    /// signature bytes (default 100 000).
    pub cache_capacity: usize,
    /// Message, event-size and tag-count limits, applied as the SDK applies
    /// `RelayOptions::limits` (default: the SDK's defaults).
    pub limits: RelayLimits,
    /// Guard pass-through `EVENT` frames too (default `true`): recompute the id and drop
    /// mismatches, and check the signature of a copy whose signature bytes differ from the
    /// ones already forwarded for that id (dropped if invalid).
    pub check_passthrough_ids: bool,
}

impl Default for TapOptions {
    fn default() -> Self {
        Self {
            prefix: DEFAULT_PREFIX.to_owned(),
            batch_size: 1024,
            cache_capacity: 100_000,
            limits: RelayLimits::default(),
            check_passthrough_ids: true,
        }
    }
}

/// Counters of a [`BatchVerifyTransport`] (shared by all its connections).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TapStats {
    /// `EVENT` frames of the tap's own subscriptions read from the relay(s), before any check.
    pub received: u64,
    /// Events delivered to a subscription.
    pub delivered: u64,
    /// Signatures checked on the tap's subscriptions (each event whose (id, signature) pair was
    /// not in the cache, once).
    pub signatures_checked: u64,
    /// Events whose (id, signature) pair was found in the verified cache: the id was recomputed
    /// and the signature bytes were identical to ones already verified for it, so the signature
    /// check was skipped.
    pub cache_hits: u64,
    /// Copies that waited for another connection's verdict on the same (id, signature) pair.
    pub deferred: u64,
    /// Batches flushed.
    pub batches: u64,
    /// `EVENT` frames of other subscriptions (the SDK's own) forwarded to the SDK, which checks
    /// each one's signature itself, one at a time, unless its id is in the SDK's verification
    /// cache. Zero means the SDK verified nothing on this tap's connections.
    pub passthrough_events: u64,
    /// Pass-through `EVENT` frames dropped by the guard because their id is wrong.
    pub passthrough_invalid_id: u64,
    /// Signatures the pass-through guard checked (copies whose signature bytes differed from
    /// the ones forwarded before for the same id).
    pub passthrough_signatures_checked: u64,
    /// Pass-through `EVENT` frames dropped by the guard because their signature is invalid.
    pub passthrough_invalid_signature: u64,
    /// Dropped: [`DropReason::MessageTooLarge`].
    pub message_too_large: u64,
    /// Dropped: [`DropReason::Unparsable`].
    pub unparsable: u64,
    /// Dropped: [`DropReason::EventTooLarge`].
    pub event_too_large: u64,
    /// Dropped: [`DropReason::TooManyTags`].
    pub too_many_tags: u64,
    /// Dropped: [`DropReason::Expired`].
    pub expired: u64,
    /// Dropped: [`DropReason::InvalidId`].
    pub invalid_id: u64,
    /// Dropped: [`DropReason::InvalidSignature`].
    pub invalid_signature: u64,
    /// Dropped: [`DropReason::Unrouted`].
    pub unrouted: u64,
}

impl TapStats {
    /// The counter for one drop reason.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        match reason {
            DropReason::MessageTooLarge => self.message_too_large,
            DropReason::Unparsable => self.unparsable,
            DropReason::EventTooLarge => self.event_too_large,
            DropReason::TooManyTags => self.too_many_tags,
            DropReason::Expired => self.expired,
            DropReason::InvalidId => self.invalid_id,
            DropReason::InvalidSignature => self.invalid_signature,
            DropReason::Unrouted => self.unrouted,
        }
    }

    /// Forged events: an id that is not the hash of the event, or an invalid signature, on the
    /// tap's subscriptions or caught by the pass-through guard. Per relay
    /// ([`TapHandle::relay_stats`]), this is what [`crate::ForgedEventPolicy`] judges.
    pub fn forged(&self) -> u64 {
        self.invalid_id
            + self.invalid_signature
            + self.passthrough_invalid_id
            + self.passthrough_invalid_signature
    }
}

#[derive(Default)]
pub(crate) struct Counters {
    received: AtomicU64,
    delivered: AtomicU64,
    signatures_checked: AtomicU64,
    cache_hits: AtomicU64,
    deferred: AtomicU64,
    batches: AtomicU64,
    passthrough_events: AtomicU64,
    passthrough_invalid_id: AtomicU64,
    passthrough_signatures_checked: AtomicU64,
    passthrough_invalid_signature: AtomicU64,
    dropped: [AtomicU64; 8],
}

impl Counters {
    fn snapshot(&self) -> TapStats {
        let d = |r: DropReason| self.dropped[reason_index(r)].load(Ordering::Relaxed);
        TapStats {
            received: self.received.load(Ordering::Relaxed),
            delivered: self.delivered.load(Ordering::Relaxed),
            signatures_checked: self.signatures_checked.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            deferred: self.deferred.load(Ordering::Relaxed),
            batches: self.batches.load(Ordering::Relaxed),
            passthrough_events: self.passthrough_events.load(Ordering::Relaxed),
            passthrough_invalid_id: self.passthrough_invalid_id.load(Ordering::Relaxed),
            passthrough_signatures_checked: self
                .passthrough_signatures_checked
                .load(Ordering::Relaxed),
            passthrough_invalid_signature: self
                .passthrough_invalid_signature
                .load(Ordering::Relaxed),
            message_too_large: d(DropReason::MessageTooLarge),
            unparsable: d(DropReason::Unparsable),
            event_too_large: d(DropReason::EventTooLarge),
            too_many_tags: d(DropReason::TooManyTags),
            expired: d(DropReason::Expired),
            invalid_id: d(DropReason::InvalidId),
            invalid_signature: d(DropReason::InvalidSignature),
            unrouted: d(DropReason::Unrouted),
        }
    }
}

/// One counter of [`Counters`], named so a connection can bump its relay's copy and the tap's
/// total in one call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stat {
    Received,
    Delivered,
    SignaturesChecked,
    CacheHits,
    Deferred,
    Batches,
    PassthroughEvents,
    PassthroughInvalidId,
    PassthroughSignaturesChecked,
    PassthroughInvalidSignature,
    Dropped(DropReason),
}

impl Stat {
    fn of(self, c: &Counters) -> &AtomicU64 {
        match self {
            Stat::Received => &c.received,
            Stat::Delivered => &c.delivered,
            Stat::SignaturesChecked => &c.signatures_checked,
            Stat::CacheHits => &c.cache_hits,
            Stat::Deferred => &c.deferred,
            Stat::Batches => &c.batches,
            Stat::PassthroughEvents => &c.passthrough_events,
            Stat::PassthroughInvalidId => &c.passthrough_invalid_id,
            Stat::PassthroughSignaturesChecked => &c.passthrough_signatures_checked,
            Stat::PassthroughInvalidSignature => &c.passthrough_invalid_signature,
            Stat::Dropped(r) => &c.dropped[reason_index(r)],
        }
    }

    /// Forged: attributed to the relay by [`TapStats::forged`].
    fn is_forged(self) -> bool {
        matches!(
            self,
            Stat::PassthroughInvalidId
                | Stat::PassthroughInvalidSignature
                | Stat::Dropped(DropReason::InvalidId | DropReason::InvalidSignature)
        )
    }
}

fn reason_index(r: DropReason) -> usize {
    match r {
        DropReason::MessageTooLarge => 0,
        DropReason::Unparsable => 1,
        DropReason::EventTooLarge => 2,
        DropReason::TooManyTags => 3,
        DropReason::Expired => 4,
        DropReason::InvalidId => 5,
        DropReason::InvalidSignature => 6,
        DropReason::Unrouted => 7,
    }
}

/// State shared by every connection of one tap.
struct Shared {
    opts: TapOptions,
    /// Verified pairs, claims in flight, the pass-through guard's record.
    cache: Cache,
    /// Registered subscriptions.
    routes: Mutex<HashMap<SubscriptionId, mpsc::Sender<TapEvent>>>,
    counters: Counters,
    /// The same counters per relay URL (every connection to that URL adds to one entry).
    relays: Mutex<HashMap<RelayUrl, Arc<Counters>>>,
    /// Forged events attributed so far (all relays): watchers wake on every change.
    forged: watch::Sender<u64>,
}

impl Shared {
    /// The counters of `url`'s connections (created on first use).
    fn relay_counters(&self, url: &RelayUrl) -> Arc<Counters> {
        lock(&self.relays).entry(url.clone()).or_default().clone()
    }

    /// Adds `n` to one counter, in the tap's totals and in `relay`'s.
    pub(crate) fn add(&self, relay: &Counters, stat: Stat, n: u64) {
        if n == 0 {
            return;
        }
        stat.of(&self.counters).fetch_add(n, Ordering::Relaxed);
        stat.of(relay).fetch_add(n, Ordering::Relaxed);
        if stat.is_forged() {
            self.forged.send_modify(|v| *v += n);
        }
    }
}

/// A `WebSocketTransport` that batch-verifies the events of its own subscriptions.
///
/// Clone it freely: clones share the cache, the routes and the counters. Hand one clone to
/// `ClientBuilder::websocket_transport` and another to [`crate::VerifiedClient::new`].
#[derive(Clone)]
pub struct BatchVerifyTransport<T = DefaultWebsocketTransport> {
    inner: Arc<T>,
    handle: TapHandle,
}

/// The transport-independent part of a [`BatchVerifyTransport`]: routes, cache, counters.
/// [`BatchVerifyTransport`] derefs to it; clones share everything.
#[derive(Clone)]
pub struct TapHandle {
    shared: Arc<Shared>,
}

impl fmt::Debug for TapHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TapHandle")
            .field("opts", &self.shared.opts)
            .finish()
    }
}

impl<T> std::ops::Deref for BatchVerifyTransport<T> {
    type Target = TapHandle;

    fn deref(&self) -> &TapHandle {
        &self.handle
    }
}

impl<T: fmt::Debug> fmt::Debug for BatchVerifyTransport<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchVerifyTransport")
            .field("inner", &self.inner)
            .field("opts", &self.handle.shared.opts)
            .finish()
    }
}

impl Default for BatchVerifyTransport<DefaultWebsocketTransport> {
    fn default() -> Self {
        Self::new(DefaultWebsocketTransport)
    }
}

impl<T> BatchVerifyTransport<T> {
    /// Wraps `inner` with [`TapOptions::default`].
    pub fn new(inner: T) -> Self {
        Self::with_options(inner, TapOptions::default())
    }

    /// Wraps `inner` with the given options (a zero batch size or cache capacity counts as 1).
    pub fn with_options(inner: T, mut opts: TapOptions) -> Self {
        opts.batch_size = opts.batch_size.max(1);
        let cache = Cache::new(opts.cache_capacity);
        Self {
            inner: Arc::new(inner),
            handle: TapHandle {
                shared: Arc::new(Shared {
                    opts,
                    cache,
                    routes: Mutex::new(HashMap::new()),
                    counters: Counters::default(),
                    relays: Mutex::new(HashMap::new()),
                    forged: watch::channel(0).0,
                }),
            },
        }
    }

    /// A handle on the tap's routes, cache and counters (also reachable through `Deref`).
    pub fn handle(&self) -> &TapHandle {
        &self.handle
    }
}

impl TapHandle {
    /// The options in use.
    pub fn options(&self) -> &TapOptions {
        &self.shared.opts
    }

    /// A fresh subscription id the tap owns: the prefix followed by 16 random hex characters.
    pub fn new_subscription_id(&self) -> SubscriptionId {
        let hex = SubscriptionId::generate().to_string();
        SubscriptionId::new(format!(
            "{}{}",
            self.shared.opts.prefix,
            &hex[..16.min(hex.len())]
        ))
    }

    /// `true` if `id` carries the tap's prefix (its EVENT frames are intercepted).
    pub fn owns(&self, id: &SubscriptionId) -> bool {
        id.as_str().starts_with(&self.shared.opts.prefix)
    }

    /// Routes the events of subscription `id` to `tx`. Register **before** sending the REQ.
    /// Events for an id with the prefix but no route are dropped (counted as
    /// [`DropReason::Unrouted`]).
    pub fn register(&self, id: SubscriptionId, tx: mpsc::Sender<TapEvent>) {
        lock(&self.shared.routes).insert(id, tx);
    }

    /// Removes the route of `id`.
    pub fn unregister(&self, id: &SubscriptionId) {
        lock(&self.shared.routes).remove(id);
    }

    /// `true` while subscription `id` has a route: a [`crate::VerifiedClient`] subscription
    /// is open (an auto-closing one unregisters when it has closed on every relay).
    pub fn is_registered(&self, id: &SubscriptionId) -> bool {
        lock(&self.shared.routes).contains_key(id)
    }

    /// A snapshot of the counters (all connections).
    pub fn stats(&self) -> TapStats {
        self.shared.counters.snapshot()
    }

    /// The counters per relay URL: what each relay sent on the tap's connections (events
    /// received, delivered, dropped by reason, forged, pass-through frames). Every connection
    /// to the same URL (reconnects included) adds to one entry; the entries add up to
    /// [`stats`](Self::stats).
    pub fn relay_stats(&self) -> HashMap<RelayUrl, TapStats> {
        lock(&self.shared.relays)
            .iter()
            .map(|(u, c)| (u.clone(), c.snapshot()))
            .collect()
    }

    /// The counters of one relay URL (all zero if it never connected through the tap).
    pub fn relay_stats_for(&self, url: &RelayUrl) -> TapStats {
        lock(&self.shared.relays)
            .get(url)
            .map(|c| c.snapshot())
            .unwrap_or_default()
    }

    /// A watch on the number of forged events (invalid id or signature, [`TapStats::forged`])
    /// attributed to any relay so far: it changes every time one is counted. Look up which
    /// relay in [`relay_stats`](Self::relay_stats).
    pub fn forged_events(&self) -> watch::Receiver<u64> {
        self.shared.forged.subscribe()
    }

    /// Empties the verified cache (the next copy of every event is signature-checked again).
    /// The pass-through guard's record of forwarded signatures is kept: the SDK's own
    /// verification cache, which it mirrors, is not cleared either.
    pub fn clear_cache(&self) {
        self.shared.cache.clear();
    }

    /// Wraps an already-connected transport stream (what [`WebSocketTransport::connect`] does
    /// with the inner transport's stream). Public so other transports can reuse the tap.
    pub fn wrap_stream(&self, relay_url: RelayUrl, inner: WebSocketStream) -> TapStream {
        let relay = self.shared.relay_counters(&relay_url);
        TapStream::new(inner, self.shared.clone(), relay_url, relay)
    }
}

impl<T: WebSocketTransport> WebSocketTransport for BatchVerifyTransport<T> {
    fn support_ping(&self) -> bool {
        self.inner.support_ping()
    }

    fn connect<'a>(
        &'a self,
        url: &'a Url,
        mode: &'a ConnectionMode,
        timeout: Duration,
    ) -> BoxedFuture<'a, Result<(WebSocketSink, WebSocketStream), TransportError>> {
        Box::pin(async move {
            let (sink, stream) = self.inner.connect(url, mode, timeout).await?;
            let relay_url = RelayUrl::parse(url.as_str()).map_err(TransportError::backend)?;
            let stream: WebSocketStream = Box::pin(self.wrap_stream(relay_url, stream));
            Ok((sink, stream))
        })
    }
}
