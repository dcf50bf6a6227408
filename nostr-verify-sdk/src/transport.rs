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

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use async_wsocket::{ConnectionMode, Message};
use futures::Stream;
use lru::LruCache;
use nostr_sdk::pool::transport::error::TransportError;
use nostr_sdk::pool::transport::websocket::{
    DefaultWebsocketTransport, WebSocketSink, WebSocketStream, WebSocketTransport,
};
use nostr_sdk::pool::RelayLimits;
use nostr_sdk::prelude::{
    BoxedFuture, Event, JsonUtil, RelayMessage, RelayUrl, SubscriptionId, Url,
};
use nostr_verify::{EventView, Verdict, VerifyBatchExt};
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;

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
}

#[derive(Default)]
struct Counters {
    delivered: AtomicU64,
    signatures_checked: AtomicU64,
    cache_hits: AtomicU64,
    deferred: AtomicU64,
    batches: AtomicU64,
    passthrough_invalid_id: AtomicU64,
    passthrough_signatures_checked: AtomicU64,
    passthrough_invalid_signature: AtomicU64,
    dropped: [AtomicU64; 8],
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

/// What a verdict is cached and claimed under: the full id and the full signature. The
/// signature check covers exactly these bytes (the public key through the id, which is
/// recomputed for every copy), so a copy with the same key was verified with the same result.
type Key = ([u8; 32], [u8; 64]);

fn key(event: &Event) -> Key {
    (*EventView::id_bytes(event), *EventView::sig_bytes(event))
}

/// Size of nostr-relay-pool 0.44.3's verification cache (ids it will not check again): the
/// pass-through guard remembers at least as many ids.
const SDK_VERIFICATION_CACHE: usize = 128_000;

/// State shared by every connection of one tap.
struct Shared {
    opts: TapOptions,
    /// (id, signature) pairs whose signature was verified. Inserted only after success.
    cache: Mutex<LruCache<Key, ()>>,
    /// Pairs some connection is verifying right now, with the wakers of copies waiting for them.
    inflight: Mutex<HashMap<Key, Vec<Waker>>>,
    /// Pass-through guard: per id, the signature bytes forwarded to the SDK first (or, after
    /// the guard verified a different one, that one). Looked up without refreshing recency.
    passthrough: Mutex<LruCache<[u8; 32], [u8; 64]>>,
    /// Registered subscriptions.
    routes: Mutex<HashMap<SubscriptionId, mpsc::Sender<TapEvent>>>,
    counters: Counters,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks cannot leave the maps inconsistent (every critical
    // section is a single insert/remove), so poisoning is ignored.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn count(&self, r: DropReason, n: u64) {
        self.counters.dropped[reason_index(r)].fetch_add(n, Ordering::Relaxed);
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
        let cap = NonZeroUsize::new(opts.cache_capacity.max(1)).unwrap_or(NonZeroUsize::MIN);
        let guard_cap = NonZeroUsize::new(opts.cache_capacity.max(SDK_VERIFICATION_CACHE))
            .unwrap_or(NonZeroUsize::MIN);
        Self {
            inner: Arc::new(inner),
            handle: TapHandle {
                shared: Arc::new(Shared {
                    opts,
                    cache: Mutex::new(LruCache::new(cap)),
                    inflight: Mutex::new(HashMap::new()),
                    passthrough: Mutex::new(LruCache::new(guard_cap)),
                    routes: Mutex::new(HashMap::new()),
                    counters: Counters::default(),
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

    /// A snapshot of the counters.
    pub fn stats(&self) -> TapStats {
        let c = &self.shared.counters;
        let d = |r: DropReason| c.dropped[reason_index(r)].load(Ordering::Relaxed);
        TapStats {
            delivered: c.delivered.load(Ordering::Relaxed),
            signatures_checked: c.signatures_checked.load(Ordering::Relaxed),
            cache_hits: c.cache_hits.load(Ordering::Relaxed),
            deferred: c.deferred.load(Ordering::Relaxed),
            batches: c.batches.load(Ordering::Relaxed),
            passthrough_invalid_id: c.passthrough_invalid_id.load(Ordering::Relaxed),
            passthrough_signatures_checked: c
                .passthrough_signatures_checked
                .load(Ordering::Relaxed),
            passthrough_invalid_signature: c.passthrough_invalid_signature.load(Ordering::Relaxed),
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

    /// Empties the verified cache (the next copy of every event is signature-checked again).
    /// The pass-through guard's record of forwarded signatures is kept: the SDK's own
    /// verification cache, which it mirrors, is not cleared either.
    pub fn clear_cache(&self) {
        lock(&self.shared.cache).clear();
    }

    /// Wraps an already-connected transport stream (what [`WebSocketTransport::connect`] does
    /// with the inner transport's stream). Public so other transports can reuse the tap.
    pub fn wrap_stream(&self, relay_url: RelayUrl, inner: WebSocketStream) -> TapStream {
        TapStream {
            inner,
            shared: self.shared.clone(),
            relay_url,
            pending: Vec::new(),
            out: VecDeque::new(),
            held: None,
            ended: false,
            sender: None,
            disconnect_sent: false,
        }
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

/// Kind of frame, from a scan of its head.
#[derive(Debug, PartialEq, Eq)]
enum Head<'a> {
    /// `["EVENT","<id>"` with the raw (unescaped) id and the index just after it.
    Event(&'a str, usize),
    /// `["EOSE"` or `["CLOSED"` with the raw id.
    EoseOrClosed(&'a str),
    /// Anything else, or an id containing an escape (needs a full parse).
    Other,
    /// An id containing a backslash: decide after a full parse.
    Escaped,
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Reads `"<string>"` at `i`; returns the raw content and the index after the closing quote,
/// or `Err(())` if the string contains a backslash, `None` if malformed.
fn raw_string(s: &str, i: usize) -> Option<Result<(&str, usize), ()>> {
    let b = s.as_bytes();
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let start = i + 1;
    let mut j = start;
    while j < b.len() {
        match b[j] {
            b'"' => return Some(Ok((&s[start..j], j + 1))),
            b'\\' => return Some(Err(())),
            _ => j += 1,
        }
    }
    None
}

/// The event object of an `EVENT` frame: the text after `,` following the subscription id, up
/// to the closing `]`. Parsing it directly skips the `serde_json::Value` tree that
/// `RelayMessage::from_json` builds first. A frame with extra elements after the event does not
/// parse as an event and is dropped.
fn event_object(s: &str, after_id: usize) -> Option<&str> {
    let b = s.as_bytes();
    let i = skip_ws(b, after_id);
    if b.get(i) != Some(&b',') {
        return None;
    }
    s[i + 1..].trim_end().strip_suffix(']')
}

fn scan_head(s: &str) -> Head<'_> {
    let b = s.as_bytes();
    let i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return Head::Other;
    }
    let i = skip_ws(b, i + 1);
    let (kind, i) = match raw_string(s, i) {
        Some(Ok(x)) => x,
        _ => return Head::Other,
    };
    let i = skip_ws(b, i);
    if b.get(i) != Some(&b',') {
        return Head::Other;
    }
    let i = skip_ws(b, i + 1);
    let (id, after) = match raw_string(s, i) {
        Some(Ok(x)) => x,
        Some(Err(())) => return Head::Escaped,
        None => return Head::Other,
    };
    match kind {
        "EVENT" => Head::Event(id, after),
        "EOSE" | "CLOSED" => Head::EoseOrClosed(id),
        _ => Head::Other,
    }
}

/// The id check of a cache hit (the signature over this id was verified before) and of the
/// pass-through guard: the id is recomputed from the event's fields with the core's NIP-01
/// hashing (the same one `VerifyBatchExt` uses) and compared with the claimed one.
fn id_matches(event: &Event) -> bool {
    nostr_verify::compute_id(event) == event.id.to_bytes()
}

/// One entry of the per-connection output queue, in wire order.
enum Slot {
    /// Ready to deliver.
    Ready(mpsc::Sender<TapEvent>, TapEvent),
    /// A copy whose id another connection was verifying when we flushed.
    Deferred(mpsc::Sender<TapEvent>, SubscriptionId, Box<Event>),
}

/// The stream [`BatchVerifyTransport`] returns to the relay's reader task.
pub struct TapStream {
    inner: WebSocketStream,
    shared: Arc<Shared>,
    relay_url: RelayUrl,
    /// Parsed, not yet verified events of our subscriptions.
    pending: Vec<(mpsc::Sender<TapEvent>, SubscriptionId, Event)>,
    /// Verified results waiting for channel capacity, in wire order.
    out: VecDeque<Slot>,
    /// A frame (or the end / an error) to forward once `pending` and `out` are empty.
    held: Option<Option<Result<Message, TransportError>>>,
    ended: bool,
    sender: Option<PollSender<TapEvent>>,
    disconnect_sent: bool,
}

impl fmt::Debug for TapStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TapStream")
            .field("relay_url", &self.relay_url)
            .field("pending", &self.pending.len())
            .field("out", &self.out.len())
            .finish()
    }
}

enum Intercept {
    /// Forward the frame to the SDK.
    Forward,
    /// The frame was consumed (buffered or dropped).
    Consumed,
    /// The frame is an EOSE/CLOSED of ours: deliver it after the buffered events, then forward.
    Control(mpsc::Sender<TapEvent>, TapEvent),
}

impl TapStream {
    fn route(&self, id: &SubscriptionId) -> Option<mpsc::Sender<TapEvent>> {
        lock(&self.shared.routes).get(id).cloned()
    }

    fn owns(&self, id: &str) -> bool {
        id.starts_with(&self.shared.opts.prefix)
    }

    /// Decides what to do with one text frame.
    fn intercept(&mut self, text: &str) -> Intercept {
        let trimmed = text.trim();
        let head = scan_head(trimmed);
        let ours = match head {
            Head::Event(id, _) | Head::EoseOrClosed(id) => self.owns(id),
            Head::Escaped => true, // decided after the full parse below
            Head::Other => false,
        };
        if !ours {
            if let Head::Event(_, after) = head {
                if self.shared.opts.check_passthrough_ids {
                    return self.guard_passthrough(trimmed, after);
                }
            }
            return Intercept::Forward;
        }
        let is_event = matches!(head, Head::Event(..));
        let max = self.shared.opts.limits.messages.max_size;
        if max.is_some_and(|m| trimmed.len() > m as usize) {
            if is_event {
                self.shared.count(DropReason::MessageTooLarge, 1);
                return Intercept::Consumed;
            }
            return Intercept::Forward; // the SDK rejects it the same way
        }
        if let Head::Event(id, after) = head {
            // Fast path: the id has no escapes, so the raw text is the id.
            let parsed = event_object(trimmed, after).and_then(|o| Event::from_json(o).ok());
            let Some(event) = parsed else {
                self.shared.count(DropReason::Unparsable, 1);
                return Intercept::Consumed;
            };
            let sub = SubscriptionId::new(id);
            match self.route(&sub) {
                Some(tx) => self.pending.push((tx, sub, event)),
                None => self.shared.count(DropReason::Unrouted, 1),
            }
            return Intercept::Consumed;
        }
        let msg = match RelayMessage::from_json(trimmed) {
            Ok(m) => m,
            Err(_) => return Intercept::Forward, // not an EVENT: the SDK reports it
        };
        match msg {
            RelayMessage::Event {
                subscription_id,
                event,
            } => {
                if !self.owns(subscription_id.as_str()) {
                    // An escaped id that is not ours after all.
                    return self.guard_parsed(&event);
                }
                let sub = subscription_id.into_owned();
                match self.route(&sub) {
                    Some(tx) => {
                        self.pending.push((tx, sub, event.into_owned()));
                        Intercept::Consumed
                    }
                    None => {
                        self.shared.count(DropReason::Unrouted, 1);
                        Intercept::Consumed
                    }
                }
            }
            RelayMessage::EndOfStoredEvents(id) if self.owns(id.as_str()) => {
                let sub = id.into_owned();
                match self.route(&sub) {
                    Some(tx) => Intercept::Control(
                        tx,
                        TapEvent::Eose {
                            relay_url: self.relay_url.clone(),
                            subscription_id: sub,
                        },
                    ),
                    None => Intercept::Forward,
                }
            }
            RelayMessage::Closed {
                subscription_id,
                message,
            } if self.owns(subscription_id.as_str()) => {
                let sub = subscription_id.into_owned();
                match self.route(&sub) {
                    Some(tx) => Intercept::Control(
                        tx,
                        TapEvent::Closed {
                            relay_url: self.relay_url.clone(),
                            subscription_id: sub,
                            message: message.into_owned(),
                        },
                    ),
                    None => Intercept::Forward,
                }
            }
            _ => Intercept::Forward,
        }
    }

    /// The optional id guard on pass-through EVENT frames.
    fn guard_passthrough(&self, trimmed: &str, after_id: usize) -> Intercept {
        match event_object(trimmed, after_id).and_then(|o| Event::from_json(o).ok()) {
            Some(event) => self.guard_parsed(&event),
            None => Intercept::Forward, // the SDK reports its own parse error
        }
    }

    /// The pass-through guard. The SDK verifies a forwarded event itself unless its claimed id
    /// is in its verification cache, so the guard makes sure that every copy it forwards either
    /// is the first one for its id, or carries the same signature bytes as a copy forwarded
    /// before, or has a signature the guard verified itself. With the id recomputed for every
    /// copy, the SDK never skips a check for bytes that nobody checked.
    fn guard_parsed(&self, event: &Event) -> Intercept {
        let shared = &self.shared;
        if !shared.opts.check_passthrough_ids {
            return Intercept::Forward;
        }
        if !id_matches(event) {
            shared
                .counters
                .passthrough_invalid_id
                .fetch_add(1, Ordering::Relaxed);
            return Intercept::Consumed;
        }
        let (id, sig) = key(event);
        {
            let mut seen = lock(&shared.passthrough);
            match seen.peek(&id) {
                Some(known) if *known == sig => return Intercept::Forward,
                Some(_) => {}
                None => {
                    seen.put(id, sig);
                    return Intercept::Forward;
                }
            }
        }
        // Other signature bytes than the ones forwarded for this id: check them here.
        shared
            .counters
            .passthrough_signatures_checked
            .fetch_add(1, Ordering::Relaxed);
        if std::slice::from_ref(event).verify_batch()[0] == Verdict::Valid {
            lock(&shared.passthrough).put(id, sig);
            Intercept::Forward
        } else {
            shared
                .counters
                .passthrough_invalid_signature
                .fetch_add(1, Ordering::Relaxed);
            Intercept::Consumed
        }
    }

    /// Pre-checks in the SDK's order; `None` if the event passes.
    fn precheck(&self, event: &Event) -> Option<DropReason> {
        let limits = &self.shared.opts.limits.events;
        if let Some(max) = limits.get_max_size(&event.kind) {
            if event.as_json().len() > max as usize {
                return Some(DropReason::EventTooLarge);
            }
        }
        if let Some(max) = limits.get_max_num_tags(&event.kind) {
            if event.tags.len() > max as usize {
                return Some(DropReason::TooManyTags);
            }
        }
        if event.is_expired() {
            return Some(DropReason::Expired);
        }
        None
    }

    /// Verifies the buffered events and moves them to `out`, in wire order.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let shared = self.shared.clone();
        shared.counters.batches.fetch_add(1, Ordering::Relaxed);
        let pending = std::mem::take(&mut self.pending);

        /// Where each buffered event went.
        enum Class {
            Drop,
            Hit,
            Claimed,
            Deferred,
        }
        // Classify under the locks: dropped by the pre-checks, cache hit, claimed by this
        // connection, or in flight (another connection's claim, or a duplicate within this
        // batch claimed a few iterations earlier; both resolve once the claim is released).
        let mut class = Vec::with_capacity(pending.len());
        let mut claimed_n = 0usize;
        {
            let mut cache = lock(&shared.cache);
            let mut inflight = lock(&shared.inflight);
            for (_, _, ev) in &pending {
                if let Some(r) = self.precheck(ev) {
                    shared.count(r, 1);
                    class.push(Class::Drop);
                    continue;
                }
                let k = key(ev);
                if cache.get(&k).is_some() {
                    class.push(Class::Hit);
                } else if let std::collections::hash_map::Entry::Vacant(slot) = inflight.entry(k) {
                    slot.insert(Vec::new());
                    class.push(Class::Claimed);
                    claimed_n += 1;
                } else {
                    class.push(Class::Deferred);
                }
            }
        }

        // Move the claimed events out (no clones) and verify them in one batch: id recomputed,
        // then the signature, through the thread-local batch verifier.
        let mut claimed: Vec<Event> = Vec::with_capacity(claimed_n);
        let mut rest: Vec<Option<(mpsc::Sender<TapEvent>, SubscriptionId, Event)>> =
            Vec::with_capacity(pending.len());
        let mut claimed_meta: Vec<(mpsc::Sender<TapEvent>, SubscriptionId)> =
            Vec::with_capacity(claimed_n);
        for ((tx, sub, ev), c) in pending.into_iter().zip(&class) {
            if let Class::Claimed = c {
                claimed.push(ev);
                claimed_meta.push((tx, sub));
                rest.push(None);
            } else {
                rest.push(Some((tx, sub, ev)));
            }
        }
        let verdicts = if claimed.is_empty() {
            Vec::new()
        } else {
            claimed.verify_batch()
        };
        let sig_checked = verdicts
            .iter()
            .filter(|v| **v != Verdict::InvalidId)
            .count();
        shared
            .counters
            .signatures_checked
            .fetch_add(sig_checked as u64, Ordering::Relaxed);

        // Publish results and release the claims, waking deferred copies.
        let mut wakers = Vec::new();
        {
            let mut cache = lock(&shared.cache);
            let mut inflight = lock(&shared.inflight);
            for (ev, v) in claimed.iter().zip(&verdicts) {
                let k = key(ev);
                if *v == Verdict::Valid {
                    cache.put(k, ());
                }
                if let Some(w) = inflight.remove(&k) {
                    wakers.extend(w);
                }
            }
        }
        for w in wakers {
            w.wake();
        }

        // Queue the results in wire order.
        let mut claimed_iter = claimed.into_iter().zip(claimed_meta).zip(verdicts);
        for (c, r) in class.into_iter().zip(rest) {
            match (c, r) {
                (Class::Drop, _) => {}
                (Class::Claimed, _) => {
                    if let Some(((ev, (tx, sub)), v)) = claimed_iter.next() {
                        self.push_verdict(tx, sub, Box::new(ev), v);
                    }
                }
                (Class::Hit, Some((tx, sub, ev))) => {
                    shared.counters.cache_hits.fetch_add(1, Ordering::Relaxed);
                    let v = if id_matches(&ev) {
                        Verdict::Valid
                    } else {
                        Verdict::InvalidId
                    };
                    self.push_verdict(tx, sub, Box::new(ev), v);
                }
                (Class::Deferred, Some((tx, sub, ev))) => {
                    shared.counters.deferred.fetch_add(1, Ordering::Relaxed);
                    self.out.push_back(Slot::Deferred(tx, sub, Box::new(ev)));
                }
                (_, None) => {}
            }
        }
    }

    fn push_verdict(
        &mut self,
        tx: mpsc::Sender<TapEvent>,
        sub: SubscriptionId,
        event: Box<Event>,
        verdict: Verdict,
    ) {
        match verdict {
            Verdict::Valid => self.out.push_back(Slot::Ready(
                tx,
                TapEvent::Event {
                    relay_url: self.relay_url.clone(),
                    subscription_id: sub,
                    event,
                },
            )),
            Verdict::InvalidId => self.shared.count(DropReason::InvalidId, 1),
            Verdict::InvalidSignature => self.shared.count(DropReason::InvalidSignature, 1),
        }
    }

    /// Resolves a deferred copy at the front of `out`: `Pending` while the id is still in
    /// flight elsewhere, otherwise a verdict from the cache or from verifying it here.
    fn resolve_deferred(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(Slot::Deferred(_, _, ev)) = self.out.front() else {
            return Poll::Ready(());
        };
        let k = key(ev);
        let cached = {
            let cache_hit = lock(&self.shared.cache).get(&k).is_some();
            if cache_hit {
                true
            } else {
                let mut inflight = lock(&self.shared.inflight);
                if let Some(w) = inflight.get_mut(&k) {
                    w.push(cx.waker().clone());
                    return Poll::Pending;
                }
                // Not cached and nobody verifies it: the owner found its copy invalid (or the
                // entry was evicted). Claim it and verify our copy ourselves.
                inflight.insert(k, Vec::new());
                false
            }
        };
        let Some(Slot::Deferred(tx, sub, ev)) = self.out.pop_front() else {
            return Poll::Ready(());
        };
        let verdict = if cached {
            self.shared
                .counters
                .cache_hits
                .fetch_add(1, Ordering::Relaxed);
            if id_matches(&ev) {
                Verdict::Valid
            } else {
                Verdict::InvalidId
            }
        } else {
            let v = std::slice::from_ref(ev.as_ref()).verify_batch()[0];
            if v != Verdict::InvalidId {
                self.shared
                    .counters
                    .signatures_checked
                    .fetch_add(1, Ordering::Relaxed);
            }
            let waiters = {
                if v == Verdict::Valid {
                    lock(&self.shared.cache).put(k, ());
                }
                lock(&self.shared.inflight).remove(&k)
            };
            for w in waiters.into_iter().flatten() {
                w.wake();
            }
            v
        };
        // Re-insert at the front so delivery order is kept.
        match verdict {
            Verdict::Valid => self.out.push_front(Slot::Ready(
                tx,
                TapEvent::Event {
                    relay_url: self.relay_url.clone(),
                    subscription_id: sub,
                    event: ev,
                },
            )),
            Verdict::InvalidId => self.shared.count(DropReason::InvalidId, 1),
            Verdict::InvalidSignature => self.shared.count(DropReason::InvalidSignature, 1),
        }
        Poll::Ready(())
    }

    /// Delivers `out` front to back. `Pending` when a channel is full (or a deferred copy waits).
    fn poll_deliver(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            match self.out.front() {
                None => return Poll::Ready(()),
                Some(Slot::Deferred(..)) => {
                    if self.resolve_deferred(cx).is_pending() {
                        return Poll::Pending;
                    }
                    continue;
                }
                Some(Slot::Ready(tx, _)) => {
                    let same = self
                        .sender
                        .as_ref()
                        .and_then(|s| s.get_ref())
                        .is_some_and(|s| s.same_channel(tx));
                    if !same {
                        self.sender = Some(PollSender::new(tx.clone()));
                    }
                }
            }
            let sender = self.sender.as_mut().expect("set above");
            match sender.poll_reserve(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(_)) => {
                    // Receiver gone: drop the item.
                    if let Some(Slot::Ready(_, TapEvent::Event { .. })) = self.out.pop_front() {
                        self.shared.count(DropReason::Unrouted, 1);
                    }
                    self.sender = None;
                }
                Poll::Ready(Ok(())) => {
                    if let Some(Slot::Ready(_, item)) = self.out.pop_front() {
                        let is_event = matches!(item, TapEvent::Event { .. });
                        match sender.send_item(item) {
                            Ok(()) if is_event => {
                                self.shared
                                    .counters
                                    .delivered
                                    .fetch_add(1, Ordering::Relaxed);
                            }
                            Ok(()) => {}
                            Err(_) if is_event => self.shared.count(DropReason::Unrouted, 1),
                            Err(_) => {}
                        }
                    }
                }
            }
        }
    }

    /// Queues a `Disconnected` for every registered subscription.
    fn queue_disconnect(&mut self) {
        if self.disconnect_sent {
            return;
        }
        self.disconnect_sent = true;
        let routes: Vec<mpsc::Sender<TapEvent>> =
            lock(&self.shared.routes).values().cloned().collect();
        let mut seen: Vec<mpsc::Sender<TapEvent>> = Vec::new();
        for tx in routes {
            if seen.iter().any(|s| s.same_channel(&tx)) {
                continue;
            }
            seen.push(tx.clone());
            self.out.push_back(Slot::Ready(
                tx,
                TapEvent::Disconnected {
                    relay_url: self.relay_url.clone(),
                },
            ));
        }
    }
}

impl Stream for TapStream {
    type Item = Result<Message, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            // 1. Deliver verified results (back-pressure: Pending while a channel is full).
            if this.poll_deliver(cx).is_pending() {
                return Poll::Pending;
            }
            // 2. A held frame goes out only after everything before it was delivered.
            if let Some(held) = this.held.take() {
                if !this.pending.is_empty() {
                    this.held = Some(held);
                    this.flush();
                    continue;
                }
                return Poll::Ready(held);
            }
            if this.ended {
                return Poll::Ready(None);
            }
            // 3. Read the socket.
            match this.inner.as_mut().poll_next(cx) {
                Poll::Ready(Some(Ok(Message::Text(text)))) => match this.intercept(&text) {
                    Intercept::Consumed => {
                        if this.pending.len() >= this.shared.opts.batch_size {
                            this.flush();
                        }
                    }
                    Intercept::Forward => {
                        if this.pending.is_empty() && this.out.is_empty() {
                            return Poll::Ready(Some(Ok(Message::Text(text))));
                        }
                        this.held = Some(Some(Ok(Message::Text(text))));
                        this.flush();
                    }
                    Intercept::Control(tx, ev) => {
                        this.flush();
                        this.out.push_back(Slot::Ready(tx, ev));
                        this.held = Some(Some(Ok(Message::Text(text))));
                    }
                },
                Poll::Ready(Some(other)) => {
                    let is_err = other.is_err();
                    this.flush();
                    if is_err {
                        this.queue_disconnect();
                    }
                    this.held = Some(Some(other));
                }
                Poll::Ready(None) => {
                    this.flush();
                    this.queue_disconnect();
                    this.ended = true;
                }
                Poll::Pending => {
                    if this.pending.is_empty() {
                        return Poll::Pending;
                    }
                    this.flush();
                }
            }
        }
    }
}

impl Drop for TapStream {
    fn drop(&mut self) {
        // Best effort: tell waiting subscriptions the connection is gone (never blocks).
        if !self.disconnect_sent {
            for tx in lock(&self.shared.routes).values() {
                let _ = tx.try_send(TapEvent::Disconnected {
                    relay_url: self.relay_url.clone(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_scan() {
        assert_eq!(scan_head(r#"["EVENT","bv:1",{}]"#), Head::Event("bv:1", 15));
        assert_eq!(
            scan_head(r#" [ "EVENT" , "abc" ,{}]"#),
            Head::Event("abc", 18)
        );
        assert_eq!(scan_head(r#"["EOSE","bv:1"]"#), Head::EoseOrClosed("bv:1"));
        assert_eq!(
            scan_head(r#"["CLOSED","bv:1","x"]"#),
            Head::EoseOrClosed("bv:1")
        );
        assert_eq!(scan_head(r#"["EVENT","bv\u003a1",{}]"#), Head::Escaped);
        assert_eq!(scan_head(r#"["NOTICE","hi"]"#), Head::Other);
        assert_eq!(scan_head(r#"["OK","id",true,""]"#), Head::Other);
        assert_eq!(scan_head(r#"["EVENT""#), Head::Other);
        assert_eq!(scan_head(r#"{"EVENT":1}"#), Head::Other);
        assert_eq!(scan_head(""), Head::Other);
        let f = r#"["EVENT","bv:1" , {"a":[1]} ] "#.trim();
        assert_eq!(event_object(f, 15), Some(r#" {"a":[1]} "#));
        assert_eq!(event_object(r#"["EVENT","bv:1"]"#, 15), None);
        assert_eq!(event_object(r#"["EVENT","bv:1",{}"#, 15), None);
    }
}
