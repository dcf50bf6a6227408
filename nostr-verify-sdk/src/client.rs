//! [`VerifiedClient`]: a `nostr_sdk::Client` whose event-delivery methods go through the tap.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::ops::Deref;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream;
use nostr_gossip::NostrGossip;
use nostr_sdk::client::Error;
use nostr_sdk::pool::policy::{AdmitPolicy, AdmitStatus};
use nostr_sdk::prelude::{
    BoxedStream, ClientMessage, DatabaseEventStatus, Event, EventId, Events, Filter, NostrDatabase,
    Output, RejectedReason, RelayMessage, RelayPoolNotification, RelayUrl, ReqExitPolicy,
    SaveEventStatus, SubscribeAutoCloseOptions, SubscriptionId,
};
use nostr_sdk::Client;
use tokio::sync::{broadcast, mpsc};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::transport::{TapEvent, TapHandle};

mod sync;

pub use sync::{VerifiedSyncOptions, DEFAULT_SYNC_CHUNK, DEFAULT_SYNC_IN_FLIGHT};

/// Options of an auto-closing subscription through the tap
/// ([`VerifiedClient::subscribe`] with `Some(opts)`): the same conditions as nostr-relay-pool
/// 0.44's `SubscribeAutoCloseOptions` (whose fields it keeps private, hence a type of this
/// crate), applied per relay as its `handle_auto_closing` does.
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoCloseOptions {
    /// When a relay's part ends (default `ExitOnEOSE`).
    pub exit_policy: ReqExitPolicy,
    /// The whole subscription ends after this long (default: never, as the SDK's).
    pub timeout: Option<Duration>,
    /// A relay's part ends when it sent no event of the subscription for this long (counted
    /// from the REQ, then from its last event; default: never).
    pub idle_timeout: Option<Duration>,
}

impl AutoCloseOptions {
    /// Sets the exit policy.
    pub fn exit_policy(mut self, policy: ReqExitPolicy) -> Self {
        self.exit_policy = policy;
        self
    }

    /// Sets the overall timeout.
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the idle timeout.
    pub fn idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self
    }
}

/// Options of [`VerifiedClient`].
#[derive(Clone, Default)]
pub struct VerifiedClientOptions {
    /// The gossip store given to `ClientBuilder::gossip`, if any: events delivered through the
    /// tap bypass the SDK's admission middleware, so the client feeds them to gossip itself.
    pub gossip: Option<Arc<dyn NostrGossip>>,
    /// The admission policy given to `ClientBuilder::admit_policy`, if any (applied to tap
    /// events the same way, after gossip).
    pub admit_policy: Option<Arc<dyn AdmitPolicy>>,
    /// Capacity of each subscription's tap channel (default 1024 when 0). A full channel stops
    /// the relay's reader (back-pressure).
    pub channel_capacity: usize,
    /// What to do with a relay that sends forged events (default: count them only).
    pub forged_policy: ForgedEventPolicy,
}

/// What [`VerifiedClient`] does with a relay that sends forged events: an id that is not the
/// hash of the event, or an invalid signature ([`crate::TapStats::forged`] in that relay's
/// [`TapHandle::relay_stats`]). Such events are always dropped; the policy decides what
/// happens to the relay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForgedEventPolicy {
    /// Count them per relay, nothing else (the default).
    #[default]
    Count,
    /// Disconnect the relay (`Relay::disconnect`: status `Terminated`, no automatic reconnect)
    /// at its first forged event. `Client::connect_relay` connects it again; its count is kept,
    /// so the next forged event disconnects it again.
    Disconnect,
    /// Ban the relay (`Relay::ban`: status `Banned`, it never reconnects) once it has sent this
    /// many forged events (0 counts as 1).
    BanAfter(u64),
}

impl std::fmt::Debug for VerifiedClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifiedClientOptions")
            .field("gossip", &self.gossip.is_some())
            .field("admit_policy", &self.admit_policy.is_some())
            .field("channel_capacity", &self.channel_capacity)
            .field("forged_policy", &self.forged_policy)
            .finish()
    }
}

const DEFAULT_CHANNEL_CAPACITY: usize = 1024;
/// Same capacity as nostr-relay-pool's notification channel.
const NOTIFICATION_CAPACITY: usize = 4096;
/// Same capacity as nostr-relay-pool's `stream_events` channel.
const STREAM_CAPACITY: usize = 512;

/// What every delivered event goes through after verification: the SDK's steps after
/// `verify_and_cache` (`relay/inner.rs` 1201-1253 in nostr-relay-pool 0.44.3).
struct Core {
    database: Arc<dyn NostrDatabase>,
    gossip: Option<Arc<dyn NostrGossip>>,
    admit_policy: Option<Arc<dyn AdmitPolicy>>,
    notifications: broadcast::Sender<RelayPoolNotification>,
}

impl Core {
    /// Gossip, admission policy, database status and save, `Event` (first seen) and `Message`
    /// (every copy) notifications. Returns whether the SDK would hand the event to its
    /// subscription (`false`: rejected, deleted, replaced, ...).
    async fn admit(&self, relay_url: &RelayUrl, sub: &SubscriptionId, event: &Event) -> bool {
        if let Some(gossip) = &self.gossip {
            if gossip.process(event, Some(relay_url)).await.is_err() {
                return false;
            }
        }
        if let Some(policy) = &self.admit_policy {
            match policy.admit_event(relay_url, sub, event).await {
                Ok(AdmitStatus::Success) => {}
                Ok(AdmitStatus::Rejected { .. }) | Err(_) => return false,
            }
        }
        match self.database.check_id(&event.id).await {
            Ok(DatabaseEventStatus::Saved) => {}
            Ok(DatabaseEventStatus::Deleted) | Err(_) => return false,
            Ok(DatabaseEventStatus::NotExistent) => {
                let notify = match self.database.save_event(event).await {
                    Ok(SaveEventStatus::Success) => true,
                    Ok(SaveEventStatus::Rejected(reason)) => match reason {
                        RejectedReason::Ephemeral
                        | RejectedReason::Duplicate
                        | RejectedReason::Other => true,
                        RejectedReason::Deleted
                        | RejectedReason::Expired
                        | RejectedReason::Replaced
                        | RejectedReason::InvalidDelete => false,
                    },
                    Err(_) => return false,
                };
                if !notify {
                    return false;
                }
                if self.notifications.receiver_count() > 0 {
                    let _ = self.notifications.send(RelayPoolNotification::Event {
                        relay_url: relay_url.clone(),
                        subscription_id: sub.clone(),
                        event: Box::new(event.clone()),
                    });
                }
            }
        }
        if self.notifications.receiver_count() > 0 {
            let _ = self.notifications.send(RelayPoolNotification::Message {
                relay_url: relay_url.clone(),
                message: RelayMessage::event(sub.clone(), event.clone()),
            });
        }
        true
    }
}

struct Shared {
    core: Arc<Core>,
    live_tx: mpsc::Sender<TapEvent>,
    live_ids: Mutex<HashSet<SubscriptionId>>,
    capacity: usize,
    forwarder: AbortHandle,
    policy_task: Option<AbortHandle>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.forwarder.abort();
        if let Some(t) = &self.policy_task {
            t.abort();
        }
    }
}

/// A `nostr_sdk::Client` whose event delivery for its own subscriptions goes through a
/// [`crate::BatchVerifyTransport`]: events are batch-verified by the tap instead of one at a
/// time by the SDK.
///
/// Derefs to [`Client`] for everything else (relays, connections, publishing, auth, the
/// SDK-verified `Client::fetch_events` under `client.deref()`); its inherent methods
/// [`fetch_events`](Self::fetch_events), [`stream_events`](Self::stream_events),
/// [`subscribe`](Self::subscribe), [`unsubscribe`](Self::unsubscribe) and
/// [`notifications`](Self::notifications) shadow the SDK's with the same signatures and
/// semantics.
#[derive(Clone)]
pub struct VerifiedClient {
    client: Client,
    tap: TapHandle,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for VerifiedClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifiedClient")
            .field("client", &self.client)
            .finish()
    }
}

impl Deref for VerifiedClient {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
}

impl VerifiedClient {
    /// Wraps `client`, which must have been built with (a clone of) `tap` as its websocket
    /// transport, with default options.
    ///
    /// # Panics
    /// Outside a Tokio runtime (it spawns the notification forwarder).
    pub fn new(client: Client, tap: &TapHandle) -> Self {
        Self::with_options(client, tap, VerifiedClientOptions::default())
    }

    /// Wraps `client` with options (gossip store and admission policy shared with the SDK).
    ///
    /// # Panics
    /// Outside a Tokio runtime (it spawns the notification forwarder).
    pub fn with_options(client: Client, tap: &TapHandle, opts: VerifiedClientOptions) -> Self {
        let capacity = if opts.channel_capacity == 0 {
            DEFAULT_CHANNEL_CAPACITY
        } else {
            opts.channel_capacity
        };
        let (notifications, _) = broadcast::channel(NOTIFICATION_CAPACITY);
        let core = Arc::new(Core {
            database: client.database().clone(),
            gossip: opts.gossip,
            admit_policy: opts.admit_policy,
            notifications,
        });
        let (live_tx, live_rx) = mpsc::channel(capacity);
        let sdk_rx = client.notifications();
        let forwarder = tokio::spawn(forward(core.clone(), live_rx, sdk_rx)).abort_handle();
        let policy_task = match opts.forged_policy {
            ForgedEventPolicy::Count => None,
            p => Some(tokio::spawn(enforce(client.clone(), tap.clone(), p)).abort_handle()),
        };
        Self {
            client,
            tap: tap.clone(),
            shared: Arc::new(Shared {
                core,
                live_tx,
                live_ids: Mutex::new(HashSet::new()),
                capacity,
                forwarder,
                policy_task,
            }),
        }
    }

    /// The wrapped SDK client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The tap handle (statistics, routes).
    pub fn tap(&self) -> &TapHandle {
        &self.tap
    }

    /// Notifications, like `Client::notifications`: everything the SDK emits, plus, for events
    /// delivered through the tap, `RelayPoolNotification::Event` the first time an event is seen
    /// (not yet in the database) and `RelayPoolNotification::Message` for every copy.
    ///
    /// A broadcast channel of 4 096, like the SDK's: a receiver that falls behind gets
    /// `RecvError::Lagged` instead of growing memory.
    pub fn notifications(&self) -> broadcast::Receiver<RelayPoolNotification> {
        self.shared.core.notifications.subscribe()
    }

    /// Like `Client::handle_notifications`, over [`VerifiedClient::notifications`]: calls
    /// `func` for each notification until it returns `Ok(true)`, after `Shutdown`, or when the
    /// receiver lags (as the SDK's loop does).
    ///
    /// # Errors
    /// The first error `func` returns.
    pub async fn handle_notifications<F, Fut>(&self, func: F) -> Result<(), Error>
    where
        F: Fn(RelayPoolNotification) -> Fut,
        Fut: Future<Output = Result<bool, Box<dyn std::error::Error>>>,
    {
        let mut rx = self.notifications();
        while let Ok(n) = rx.recv().await {
            let shutdown = matches!(n, RelayPoolNotification::Shutdown);
            let exit = func(n).await.map_err(|e| {
                Error::RelayPool(nostr_sdk::pool::pool::Error::Handler(e.to_string()))
            })?;
            if exit || shutdown {
                break;
            }
        }
        Ok(())
    }

    /// Fetch events from the read relays, exiting on EOSE: `Client::fetch_events` through the tap.
    ///
    /// # Errors
    /// As `Client::fetch_events` (no relays, subscription failure).
    pub async fn fetch_events(&self, filter: Filter, timeout: Duration) -> Result<Events, Error> {
        self.fetch_events_with_policy(filter, timeout, ReqExitPolicy::ExitOnEOSE)
            .await
    }

    /// [`fetch_events`](Self::fetch_events) with an exit policy (as `RelayPool::fetch_events`).
    ///
    /// # Errors
    /// As `Client::fetch_events`.
    pub async fn fetch_events_with_policy(
        &self,
        filter: Filter,
        timeout: Duration,
        policy: ReqExitPolicy,
    ) -> Result<Events, Error> {
        let mut events = Events::new(&filter);
        let mut s = self.stream(None, filter, closing(timeout, policy)).await?.1;
        while let Some(ev) = futures::StreamExt::next(&mut s).await {
            events.force_insert(ev);
        }
        Ok(events)
    }

    /// Fetch events from specific relays, exiting on EOSE.
    ///
    /// # Errors
    /// As `Client::fetch_events_from`.
    pub async fn fetch_events_from<I>(
        &self,
        urls: I,
        filter: Filter,
        timeout: Duration,
    ) -> Result<Events, Error>
    where
        I: IntoIterator<Item = RelayUrl>,
    {
        let mut events = Events::new(&filter);
        let urls: Vec<RelayUrl> = urls.into_iter().collect();
        let mut s = self
            .stream(
                Some(urls),
                filter,
                closing(timeout, ReqExitPolicy::ExitOnEOSE),
            )
            .await?
            .1;
        while let Some(ev) = futures::StreamExt::next(&mut s).await {
            events.force_insert(ev);
        }
        Ok(events)
    }

    /// Stream events from the read relays, exiting on EOSE: `Client::stream_events` through the
    /// tap. Events are de-duplicated across relays; the stream ends when every relay is done
    /// (EOSE, CLOSED or disconnected) or at `timeout`. Its channel holds 512 events: a consumer
    /// that stops reading stops the relays' readers (back-pressure).
    ///
    /// # Errors
    /// As `Client::stream_events`.
    pub async fn stream_events(
        &self,
        filter: Filter,
        timeout: Duration,
    ) -> Result<BoxedStream<Event>, Error> {
        Ok(self
            .stream(None, filter, closing(timeout, ReqExitPolicy::ExitOnEOSE))
            .await?
            .1)
    }

    /// [`stream_events`](Self::stream_events) with an exit policy.
    ///
    /// # Errors
    /// As `Client::stream_events`.
    pub async fn stream_events_with_policy(
        &self,
        filter: Filter,
        timeout: Duration,
        policy: ReqExitPolicy,
    ) -> Result<BoxedStream<Event>, Error> {
        Ok(self.stream(None, filter, closing(timeout, policy)).await?.1)
    }

    /// Stream events from specific relays, exiting on EOSE.
    ///
    /// # Errors
    /// As `Client::stream_events_from`.
    pub async fn stream_events_from<I>(
        &self,
        urls: I,
        filter: Filter,
        timeout: Duration,
    ) -> Result<BoxedStream<Event>, Error>
    where
        I: IntoIterator<Item = RelayUrl>,
    {
        let urls: Vec<RelayUrl> = urls.into_iter().collect();
        Ok(self
            .stream(
                Some(urls),
                filter,
                closing(timeout, ReqExitPolicy::ExitOnEOSE),
            )
            .await?
            .1)
    }

    /// Subscribe, like `Client::subscribe`, through the tap either way.
    ///
    /// With `opts == None` (long-lived) the events arrive in
    /// [`notifications`](Self::notifications) until [`unsubscribe`](Self::unsubscribe); the
    /// SDK re-sends the REQ after a reconnect. With `Some(opts)` the subscription auto-closes
    /// per relay on its exit policy or idle timeout, and entirely at its timeout, as the SDK's
    /// auto-closing subscriptions do; its events also arrive in the notifications. The options
    /// are this crate's [`AutoCloseOptions`]: nostr-relay-pool 0.44 keeps the fields of its
    /// own `SubscribeAutoCloseOptions` private, so they could not be honoured here.
    ///
    /// # Errors
    /// As `Client::subscribe`.
    pub async fn subscribe(
        &self,
        filter: Filter,
        opts: Option<AutoCloseOptions>,
    ) -> Result<Output<SubscriptionId>, Error> {
        if let Some(opts) = opts {
            let (out, mut s) = self.stream(None, filter, opts).await?;
            tokio::spawn(async move { while futures::StreamExt::next(&mut s).await.is_some() {} });
            return Ok(out);
        }
        self.refresh_gossip_lists(&filter).await?;
        let id = self.tap.new_subscription_id();
        self.tap.register(id.clone(), self.shared.live_tx.clone());
        match self
            .client
            .subscribe_with_id(id.clone(), filter, None)
            .await
        {
            Ok(out) => {
                lock(&self.shared.live_ids).insert(id.clone());
                Ok(Output {
                    val: id,
                    success: out.success,
                    failed: out.failed,
                })
            }
            Err(e) => {
                self.tap.unregister(&id);
                Err(e)
            }
        }
    }

    /// An auto-closing subscription through the tap: events go to
    /// [`notifications`](Self::notifications) until `policy` is met on every relay or at
    /// `timeout`. Shorthand for [`subscribe`](Self::subscribe) with [`AutoCloseOptions`].
    ///
    /// # Errors
    /// As `Client::subscribe`.
    pub async fn subscribe_auto_closing(
        &self,
        filter: Filter,
        timeout: Duration,
        policy: ReqExitPolicy,
    ) -> Result<Output<SubscriptionId>, Error> {
        let opts = AutoCloseOptions::default()
            .exit_policy(policy)
            .timeout(Some(timeout));
        self.subscribe(filter, Some(opts)).await
    }

    /// Unsubscribe, like `Client::unsubscribe` (and drop the tap route).
    pub async fn unsubscribe(&self, id: &SubscriptionId) {
        self.client.unsubscribe(id).await;
        if lock(&self.shared.live_ids).remove(id) {
            self.tap.unregister(id);
        }
    }

    /// Unsubscribe from all subscriptions, like `Client::unsubscribe_all`.
    pub async fn unsubscribe_all(&self) {
        self.client.unsubscribe_all().await;
        let ids: Vec<SubscriptionId> = lock(&self.shared.live_ids).drain().collect();
        for id in ids {
            self.tap.unregister(&id);
        }
    }

    /// Registers a tap subscription, sends the auto-closing REQ and spawns its driver.
    /// Without `urls`, in gossip mode, the filter's outdated relay lists are fetched through
    /// the tap first.
    async fn stream(
        &self,
        urls: Option<Vec<RelayUrl>>,
        filter: Filter,
        opts: AutoCloseOptions,
    ) -> Result<(Output<SubscriptionId>, BoxedStream<Event>), Error> {
        if urls.is_none() {
            self.refresh_gossip_lists(&filter).await?;
        }
        self.open(urls, filter, opts).await
    }

    /// [`stream`](Self::stream) without the gossip lists' refresh.
    async fn open(
        &self,
        urls: Option<Vec<RelayUrl>>,
        filter: Filter,
        opts: AutoCloseOptions,
    ) -> Result<(Output<SubscriptionId>, BoxedStream<Event>), Error> {
        let id = self.tap.new_subscription_id();
        let (tx, rx) = mpsc::channel(self.shared.capacity);
        self.tap.register(id.clone(), tx);
        // The SDK's side: the REQ, auth, EOSE and the overall timeout (it sends CLOSE then).
        // Not the idle timeout: the SDK never sees the tap's events, so it would fire.
        let sdk_opts = SubscribeAutoCloseOptions::default()
            .exit_policy(opts.exit_policy)
            .timeout(opts.timeout);
        let res = match urls {
            None => {
                self.client
                    .subscribe_with_id(id.clone(), filter, Some(sdk_opts))
                    .await
            }
            Some(urls) => {
                self.client
                    .subscribe_with_id_to(urls, id.clone(), filter, Some(sdk_opts))
                    .await
            }
        };
        let out = match res {
            Ok(out) => out,
            Err(e) => {
                self.tap.unregister(&id);
                return Err(e);
            }
        };
        let (etx, mut erx) = mpsc::channel(STREAM_CAPACITY);
        let driver = Driver {
            client: self.client.clone(),
            tap: self.tap.clone(),
            core: self.shared.core.clone(),
            id: id.clone(),
            policy: opts.exit_policy,
            deadline: opts.timeout.map(|t| Instant::now() + t),
            idle: opts.idle_timeout,
        };
        let relays = out.success.clone();
        tokio::spawn(driver.run(relays, rx, etx));
        let s: BoxedStream<Event> = Box::pin(stream::poll_fn(move |cx| erx.poll_recv(cx)));
        Ok((
            Output {
                val: id,
                success: out.success,
                failed: out.failed,
            },
            s,
        ))
    }
}

/// An [`AutoCloseOptions`] with `policy` and an overall `timeout`.
fn closing(timeout: Duration, policy: ReqExitPolicy) -> AutoCloseOptions {
    AutoCloseOptions::default()
        .exit_policy(policy)
        .timeout(Some(timeout))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Applies a [`ForgedEventPolicy`] other than `Count`: wakes on every forged event the tap
/// attributes, and disconnects or bans each relay of this client whose count reached the
/// threshold (once per count: a relay connected again is disconnected again at its next one).
async fn enforce(client: Client, tap: TapHandle, policy: ForgedEventPolicy) {
    let threshold = match policy {
        ForgedEventPolicy::Count => return,
        ForgedEventPolicy::Disconnect => 1,
        ForgedEventPolicy::BanAfter(n) => n.max(1),
    };
    let mut rx = tap.forged_events();
    // Forged counts already acted on, per relay.
    let mut acted: HashMap<RelayUrl, u64> = HashMap::new();
    loop {
        for (url, st) in tap.relay_stats() {
            let forged = st.forged();
            if forged < threshold || acted.get(&url).is_some_and(|&n| n >= forged) {
                continue;
            }
            let Ok(relay) = client.relay(&url).await else {
                continue; // another client's relay on a shared tap
            };
            acted.insert(url, forged);
            match policy {
                ForgedEventPolicy::BanAfter(_) => relay.ban(),
                _ => relay.disconnect(),
            }
        }
        if rx.changed().await.is_err() {
            return;
        }
    }
}

/// Feeds [`VerifiedClient::notifications`]: tap events of long-lived subscriptions first
/// (`biased`), then everything the SDK emits.
async fn forward(
    core: Arc<Core>,
    mut live_rx: mpsc::Receiver<TapEvent>,
    mut sdk_rx: broadcast::Receiver<RelayPoolNotification>,
) {
    loop {
        tokio::select! {
            biased;
            Some(ev) = live_rx.recv() => {
                if let TapEvent::Event { relay_url, subscription_id, event } = ev {
                    core.admit(&relay_url, &subscription_id, &event).await;
                }
            }
            n = sdk_rx.recv() => match n {
                Ok(n) => {
                    let shutdown = matches!(n, RelayPoolNotification::Shutdown);
                    let _ = core.notifications.send(n);
                    if shutdown {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum RelayState {
    /// Before EOSE: events received.
    Open {
        events: u16,
    },
    /// After EOSE: events received since, and the end for `WaitDurationAfterEOSE`.
    AfterEose {
        events: u16,
        until: Option<Instant>,
    },
    Done,
}

/// One auto-closing tap subscription: applies the exit policy and the idle timeout per relay,
/// de-duplicates and forwards to the caller's stream.
struct Driver {
    client: Client,
    tap: TapHandle,
    core: Arc<Core>,
    id: SubscriptionId,
    policy: ReqExitPolicy,
    /// The overall timeout.
    deadline: Option<Instant>,
    /// A relay is done after this long without an event of the subscription.
    idle: Option<Duration>,
}

impl Driver {
    async fn run(
        self,
        relays: HashSet<RelayUrl>,
        mut rx: mpsc::Receiver<TapEvent>,
        etx: mpsc::Sender<Event>,
    ) {
        let start = Instant::now();
        let mut state: HashMap<RelayUrl, RelayState> = relays
            .into_iter()
            .map(|r| (r, RelayState::Open { events: 0 }))
            .collect();
        // Last event (or the start) per relay, for the idle timeout.
        let mut last: HashMap<RelayUrl, Instant> =
            state.keys().map(|r| (r.clone(), start)).collect();
        let mut seen: HashSet<EventId> = HashSet::new();
        let mut consumer_gone = false;
        while !consumer_gone && state.values().any(|s| !matches!(s, RelayState::Done)) {
            let mut wake = self.deadline;
            let mut sooner = |t: Instant| wake = Some(wake.map_or(t, |w| w.min(t)));
            for (url, s) in &state {
                if let RelayState::AfterEose { until: Some(u), .. } = s {
                    sooner(*u);
                }
                if let (Some(idle), false) = (self.idle, matches!(s, RelayState::Done)) {
                    sooner(last[url] + idle);
                }
            }
            let next = match wake {
                Some(w) => tokio::time::timeout_at(w, rx.recv()).await,
                None => Ok(rx.recv().await),
            };
            let ev = match next {
                Ok(Some(ev)) => ev,
                Ok(None) => break,
                Err(_) => {
                    let now = Instant::now();
                    if self.deadline.is_some_and(|d| now >= d) {
                        break; // overall timeout: the SDK's handler sends CLOSE
                    }
                    let mut idle_done = Vec::new();
                    for (url, s) in state.iter_mut() {
                        if let RelayState::AfterEose { until: Some(u), .. } = s {
                            if *u <= now {
                                *s = RelayState::Done;
                            }
                        }
                        if let Some(idle) = self.idle {
                            if !matches!(s, RelayState::Done) && last[url] + idle <= now {
                                *s = RelayState::Done;
                                idle_done.push(url.clone());
                            }
                        }
                    }
                    if !idle_done.is_empty() {
                        let _ = self
                            .client
                            .send_msg_to(idle_done, ClientMessage::close(self.id.clone()))
                            .await;
                    }
                    continue;
                }
            };
            match ev {
                TapEvent::Event {
                    relay_url,
                    subscription_id,
                    event,
                } => {
                    let deliver = self.core.admit(&relay_url, &subscription_id, &event).await;
                    let Some(s) = state.get_mut(&relay_url) else {
                        continue;
                    };
                    if matches!(s, RelayState::Done) {
                        continue;
                    }
                    last.insert(relay_url.clone(), Instant::now());
                    if deliver && seen.insert(event.id) && etx.send(*event).await.is_err() {
                        consumer_gone = true;
                    }
                    if self.count_event(s) {
                        *s = RelayState::Done;
                        let _ = self
                            .client
                            .send_msg_to([relay_url], ClientMessage::close(self.id.clone()))
                            .await;
                    }
                }
                TapEvent::Eose { relay_url, .. } => {
                    if let Some(s) = state.get_mut(&relay_url) {
                        *s = match (self.policy, *s) {
                            (_, RelayState::Done) => RelayState::Done,
                            (ReqExitPolicy::ExitOnEOSE, _) => RelayState::Done,
                            (ReqExitPolicy::WaitDurationAfterEOSE(d), _) => RelayState::AfterEose {
                                events: 0,
                                until: Some(Instant::now() + d),
                            },
                            (ReqExitPolicy::WaitForEventsAfterEOSE(0), _) => RelayState::Done,
                            (ReqExitPolicy::WaitForEventsAfterEOSE(_), _) => {
                                RelayState::AfterEose {
                                    events: 0,
                                    until: None,
                                }
                            }
                            (ReqExitPolicy::WaitForEvents(_), s) => s,
                        };
                    }
                }
                TapEvent::Closed {
                    relay_url, message, ..
                } => {
                    // `auth-required:` is retried by the SDK after authentication.
                    if !message.starts_with("auth-required:") {
                        state.insert(relay_url, RelayState::Done);
                    }
                }
                TapEvent::Disconnected { relay_url } => {
                    if let Some(s) = state.get_mut(&relay_url) {
                        *s = RelayState::Done;
                    }
                }
            }
        }
        self.tap.unregister(&self.id);
    }

    /// Counts one event for a relay; `true` if the relay's exit policy is now met.
    fn count_event(&self, s: &mut RelayState) -> bool {
        match (self.policy, s) {
            (ReqExitPolicy::WaitForEvents(n), RelayState::Open { events })
            | (ReqExitPolicy::WaitForEvents(n), RelayState::AfterEose { events, .. }) => {
                *events = events.saturating_add(1);
                *events >= n
            }
            (ReqExitPolicy::WaitForEventsAfterEOSE(n), RelayState::AfterEose { events, .. }) => {
                *events = events.saturating_add(1);
                *events >= n
            }
            _ => false,
        }
    }
}
