//! [`TapStream`], the per-connection state machine the relay's reader task polls: it reads
//! frames, intercepts the tap's own, verifies them in batches, and delivers them in wire order
//! before it forwards the next frame of the SDK's.

use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use async_wsocket::Message;
use futures::Stream;
use nostr_sdk::pool::transport::error::TransportError;
use nostr_sdk::pool::transport::websocket::WebSocketStream;
use nostr_sdk::prelude::{Event, JsonUtil, RelayMessage, RelayUrl, SubscriptionId};
use nostr_verify::{Verdict, VerifyBatchExt};
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;

use super::cache::{id_matches, key, Class, Forwarded, Resolve};
use super::lock::lock;
use super::scan::{event_object, needs_full_parse, scan_head, trim_json, Head};
use super::{Counters, DropReason, Shared, Stat, TapEvent};

/// One entry of the per-connection output queue, in wire order.
enum Slot {
    /// Ready to deliver.
    Ready(mpsc::Sender<TapEvent>, TapEvent),
    /// A copy whose id another connection was verifying when we flushed.
    Deferred(mpsc::Sender<TapEvent>, SubscriptionId, Box<Event>),
}

/// The stream [`BatchVerifyTransport`](crate::BatchVerifyTransport) returns to the relay's reader task.
pub struct TapStream {
    inner: WebSocketStream,
    shared: Arc<Shared>,
    relay_url: RelayUrl,
    /// This relay's counters (shared by every connection to its URL).
    relay: Arc<Counters>,
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
    pub(super) fn new(
        inner: WebSocketStream,
        shared: Arc<Shared>,
        relay_url: RelayUrl,
        relay: Arc<Counters>,
    ) -> Self {
        TapStream {
            inner,
            shared,
            relay_url,
            relay,
            pending: Vec::new(),
            out: VecDeque::new(),
            held: None,
            ended: false,
            sender: None,
            disconnect_sent: false,
        }
    }

    /// Adds `n` to a counter, for the tap and for this relay.
    fn add(&self, stat: Stat, n: u64) {
        self.shared.add(&self.relay, stat, n);
    }

    fn route(&self, id: &SubscriptionId) -> Option<mpsc::Sender<TapEvent>> {
        lock(&self.shared.routes).get(id).cloned()
    }

    fn owns(&self, id: &str) -> bool {
        id.starts_with(&self.shared.opts.prefix)
    }

    /// Decides what to do with one text frame.
    fn intercept(&mut self, text: &str) -> Intercept {
        let trimmed = trim_json(text);
        let head = scan_head(trimmed);
        let ours = match head {
            Head::Event(id, _) | Head::EoseOrClosed(id) => self.owns(id),
            Head::Escaped => true, // decided after the full parse below
            Head::Other => false,
        };
        if !ours {
            if let Head::Event(_, after) = head {
                let verdict = if self.shared.opts.check_passthrough_ids {
                    self.guard_passthrough(trimmed, after)
                } else {
                    Intercept::Forward
                };
                if let Intercept::Forward = verdict {
                    self.add(Stat::PassthroughEvents, 1);
                }
                return verdict;
            }
            return Intercept::Forward;
        }
        let is_event = matches!(head, Head::Event(..));
        if is_event {
            self.add(Stat::Received, 1);
        }
        let max = self.shared.opts.limits.messages.max_size;
        if max.is_some_and(|m| trimmed.len() > m as usize) {
            if is_event {
                self.add(Stat::Dropped(DropReason::MessageTooLarge), 1);
                return Intercept::Consumed;
            }
            return Intercept::Forward; // the SDK rejects it the same way
        }
        // Fast path: the id has no escapes, so the raw text is the id. An object with
        // something only the SDK's own parse may decide goes the slow way below.
        if let Head::Event(id, after) = head {
            let object = event_object(trimmed, after);
            if !object.is_some_and(needs_full_parse) {
                let parsed = object.and_then(|o| Event::from_json(o).ok());
                let Some(event) = parsed else {
                    self.add(Stat::Dropped(DropReason::Unparsable), 1);
                    return Intercept::Consumed;
                };
                let sub = SubscriptionId::new(id);
                match self.route(&sub) {
                    Some(tx) => self.pending.push((tx, sub, event)),
                    None => self.add(Stat::Dropped(DropReason::Unrouted), 1),
                }
                return Intercept::Consumed;
            }
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
                    let verdict = self.guard_parsed(&event);
                    if let Intercept::Forward = verdict {
                        self.add(Stat::PassthroughEvents, 1);
                    }
                    return verdict;
                }
                if !is_event {
                    self.add(Stat::Received, 1); // an escaped id: not counted above
                }
                let sub = subscription_id.into_owned();
                match self.route(&sub) {
                    Some(tx) => {
                        self.pending.push((tx, sub, event.into_owned()));
                        Intercept::Consumed
                    }
                    None => {
                        self.add(Stat::Dropped(DropReason::Unrouted), 1);
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
            self.add(Stat::PassthroughInvalidId, 1);
            return Intercept::Consumed;
        }
        let (id, sig) = key(event);
        match shared.cache.forwarded(id, sig) {
            Forwarded::First | Forwarded::Same => return Intercept::Forward,
            Forwarded::Other => {}
        }
        // Other signature bytes than the ones forwarded for this id: check them here.
        self.add(Stat::PassthroughSignaturesChecked, 1);
        if std::slice::from_ref(event).verify_batch()[0] == Verdict::Valid {
            shared.cache.forward(id, sig);
            Intercept::Forward
        } else {
            self.add(Stat::PassthroughInvalidSignature, 1);
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
        self.add(Stat::Batches, 1);
        let pending = std::mem::take(&mut self.pending);

        let (class, claimed_n) = shared
            .cache
            .classify(pending.iter().map(|(_, _, ev)| ev), |ev| {
                match self.precheck(ev) {
                    Some(r) => {
                        self.add(Stat::Dropped(r), 1);
                        true
                    }
                    None => false,
                }
            });

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
        self.add(Stat::SignaturesChecked, sig_checked as u64);

        // Publish results and release the claims, waking deferred copies.
        shared.cache.publish(&claimed, &verdicts);

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
                    self.add(Stat::CacheHits, 1);
                    let v = if id_matches(&ev) {
                        Verdict::Valid
                    } else {
                        Verdict::InvalidId
                    };
                    self.push_verdict(tx, sub, Box::new(ev), v);
                }
                (Class::Deferred, Some((tx, sub, ev))) => {
                    self.add(Stat::Deferred, 1);
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
            Verdict::InvalidId => self.add(Stat::Dropped(DropReason::InvalidId), 1),
            Verdict::InvalidSignature => self.add(Stat::Dropped(DropReason::InvalidSignature), 1),
        }
    }

    /// Resolves a deferred copy at the front of `out`: `Pending` while the id is still in
    /// flight elsewhere, otherwise a verdict from the cache or from verifying it here.
    fn resolve_deferred(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(Slot::Deferred(_, _, ev)) = self.out.front() else {
            return Poll::Ready(());
        };
        let k = key(ev);
        let cached = match self.shared.cache.resolve(&k, cx.waker()) {
            Resolve::Cached => true,
            Resolve::Waiting => return Poll::Pending,
            Resolve::Claimed => false,
        };
        let Some(Slot::Deferred(tx, sub, ev)) = self.out.pop_front() else {
            return Poll::Ready(());
        };
        let verdict = if cached {
            self.add(Stat::CacheHits, 1);
            if id_matches(&ev) {
                Verdict::Valid
            } else {
                Verdict::InvalidId
            }
        } else {
            let v = std::slice::from_ref(ev.as_ref()).verify_batch()[0];
            if v != Verdict::InvalidId {
                self.add(Stat::SignaturesChecked, 1);
            }
            self.shared.cache.publish_one(&k, v == Verdict::Valid);
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
            Verdict::InvalidId => self.add(Stat::Dropped(DropReason::InvalidId), 1),
            Verdict::InvalidSignature => self.add(Stat::Dropped(DropReason::InvalidSignature), 1),
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
                        self.add(Stat::Dropped(DropReason::Unrouted), 1);
                    }
                    self.sender = None;
                }
                Poll::Ready(Ok(())) => {
                    if let Some(Slot::Ready(_, item)) = self.out.pop_front() {
                        let is_event = matches!(item, TapEvent::Event { .. });
                        match sender.send_item(item) {
                            Ok(()) if is_event => {
                                self.add(Stat::Delivered, 1);
                            }
                            Ok(()) => {}
                            Err(_) if is_event => self.add(Stat::Dropped(DropReason::Unrouted), 1),
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
