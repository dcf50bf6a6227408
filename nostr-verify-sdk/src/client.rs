//! [`VerifiedClient`]: a `nostr_sdk::Client` whose event-delivery methods go through the tap.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::ops::Deref;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream;
use nostr_sdk::client::Error;
use nostr_sdk::prelude::{
    BoxedStream, Event, Events, Filter, Output, RelayPoolNotification, RelayUrl, ReqExitPolicy,
    SubscribeAutoCloseOptions, SubscriptionId,
};
use nostr_sdk::Client;
use tokio::sync::{broadcast, mpsc};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::transport::{TapEvent, TapHandle};

mod delivery;
mod driver;
mod options;
mod sync;

pub use options::{AutoCloseOptions, ForgedEventPolicy, VerifiedClientOptions};
pub use sync::{VerifiedSyncOptions, DEFAULT_SYNC_CHUNK, DEFAULT_SYNC_IN_FLIGHT};

use delivery::Core;
use driver::Driver;
use options::closing;

const DEFAULT_CHANNEL_CAPACITY: usize = 1024;
/// Same capacity as nostr-relay-pool's notification channel.
const NOTIFICATION_CAPACITY: usize = 4096;
/// Same capacity as nostr-relay-pool's `stream_events` channel.
const STREAM_CAPACITY: usize = 512;

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
