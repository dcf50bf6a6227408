//! [`VerifiedClient::sync`]: NIP-77 negentropy reconciliation by the SDK (as a dry run), the
//! download of the missing events through the tap; and the gossip relay lists fetched through
//! the tap before the SDK's gossip routing looks for outdated ones.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Duration;

use futures::StreamExt;
use nostr_gossip::{GossipListKind, GossipPublicKeyStatus};
use nostr_sdk::client::Error;
use nostr_sdk::pool;
use nostr_sdk::pool::pool::Error as PoolError;
use nostr_sdk::prelude::{
    EventId, Filter, FlagCheck, Kind, Output, PublicKey, Reconciliation, Relay, RelayServiceFlags,
    RelayUrl, ReqExitPolicy, SingleLetterTag, SyncDirection, SyncProgress, TryIntoUrl,
};
use tokio::sync::watch;
use tokio::time::Instant;

use super::options::closing;
use super::VerifiedClient;

/// Default ids per download REQ ([`VerifiedSyncOptions::chunk_size`]).
pub const DEFAULT_SYNC_CHUNK: usize = 500;
/// Default download REQs in flight per relay ([`VerifiedSyncOptions::in_flight`]).
pub const DEFAULT_SYNC_IN_FLIGHT: usize = 4;

/// Options of [`VerifiedClient::sync`]: those of nostr-relay-pool 0.44's `SyncOptions` (whose
/// fields it keeps private, hence a type of this crate) plus an overall timeout and the
/// download's chunking.
#[derive(Debug, Clone)]
pub struct VerifiedSyncOptions {
    initial_timeout: Duration,
    direction: SyncDirection,
    dry_run: bool,
    progress: Option<watch::Sender<SyncProgress>>,
    timeout: Option<Duration>,
    chunk_size: usize,
    in_flight: usize,
    chunk_timeout: Duration,
}

impl Default for VerifiedSyncOptions {
    fn default() -> Self {
        Self {
            initial_timeout: Duration::from_secs(10),
            direction: SyncDirection::Down,
            dry_run: false,
            progress: None,
            timeout: None,
            chunk_size: DEFAULT_SYNC_CHUNK,
            in_flight: DEFAULT_SYNC_IN_FLIGHT,
            chunk_timeout: Duration::from_secs(60),
        }
    }
}

impl VerifiedSyncOptions {
    /// The defaults: direction `Down`, 10 s initial timeout, no overall timeout, 500 ids per
    /// download REQ, 4 REQs in flight per relay, 60 s per REQ.
    pub fn new() -> Self {
        Self::default()
    }

    /// How long a relay has to answer the first negentropy message before it counts as not
    /// supporting negentropy and fails (default 10 s), as the SDK's `initial_timeout`.
    pub fn initial_timeout(mut self, t: Duration) -> Self {
        self.initial_timeout = t;
        self
    }

    /// `Down` (default) fetches what the relays have and the client lacks, through the tap;
    /// `Up` sends what the client has and the relays lack, through the SDK; `Both` does both.
    pub fn direction(mut self, d: SyncDirection) -> Self {
        self.direction = d;
        self
    }

    /// Reconcile only: fill `local` and `remote`, download and upload nothing.
    pub fn dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    /// Progress, as the SDK's: `total` grows by the ids to transfer, `current` by the ids done
    /// (received, given up, or uploaded). Create it with `SyncProgress::channel()`.
    pub fn progress(mut self, sender: watch::Sender<SyncProgress>) -> Self {
        self.progress = Some(sender);
        self
    }

    /// Overall timeout (default none): the reconciliations still running then fail with
    /// "timeout", and the downloads stop; what arrived before is kept and reported.
    pub fn timeout(mut self, t: Option<Duration>) -> Self {
        self.timeout = t;
        self
    }

    /// Ids per download REQ (default 500; 0 counts as 1). Keep it within the relays' maximum
    /// filter limit: each REQ carries `limit` = its number of ids.
    pub fn chunk_size(mut self, n: usize) -> Self {
        self.chunk_size = n.max(1);
        self
    }

    /// Download REQs in flight per relay (default 4; 0 counts as 1).
    pub fn in_flight(mut self, n: usize) -> Self {
        self.in_flight = n.max(1);
        self
    }

    /// Timeout of one download REQ (default 60 s); ids it did not deliver are asked of the
    /// next relay that listed them.
    pub fn chunk_timeout(mut self, t: Duration) -> Self {
        self.chunk_timeout = t;
        self
    }

    /// The SDK options for the reconciliation: a dry run unless something goes up, which the
    /// SDK does itself (and still reports `remote`).
    fn sdk(&self) -> pool::SyncOptions {
        let o = pool::SyncOptions::default().initial_timeout(self.initial_timeout);
        let up = matches!(self.direction, SyncDirection::Up | SyncDirection::Both);
        if self.dry_run || !up {
            return o.direction(SyncDirection::Down).dry_run();
        }
        let o = o.direction(SyncDirection::Up);
        match &self.progress {
            Some(p) => o.progress(p.clone()),
            None => o,
        }
    }

    fn downloads(&self) -> bool {
        !self.dry_run && matches!(self.direction, SyncDirection::Down | SyncDirection::Both)
    }
}

fn merge(into: &mut Reconciliation, other: Reconciliation) {
    into.local.extend(other.local);
    into.remote.extend(other.remote);
    into.sent.extend(other.sent);
    into.received.extend(other.received);
    into.send_failures.extend(other.send_failures);
}

async fn until<F: std::future::Future>(deadline: Option<Instant>, f: F) -> Option<F::Output> {
    match deadline {
        Some(d) => tokio::time::timeout_at(d, f).await.ok(),
        None => Some(f.await),
    }
}

/// The gossip lists a filter needs, as nostr-sdk 0.44's `find_filter_pattern`: NIP-65, and
/// NIP-17 too when the filter asks for gift wraps or for `p` tags without kinds.
fn gossip_kinds(filter: &Filter) -> &'static [GossipListKind] {
    let (no_kinds, gift_wrap) = match &filter.kinds {
        Some(k) if k.is_empty() => (true, false),
        Some(k) => (false, k.contains(&Kind::GiftWrap)),
        None => (true, false),
    };
    let p_tags = filter
        .generic_tags
        .contains_key(&SingleLetterTag::lowercase(nostr_sdk::prelude::Alphabet::P));
    if gift_wrap || (p_tags && no_kinds) {
        &[GossipListKind::Nip65, GossipListKind::Nip17]
    } else {
        &[GossipListKind::Nip65]
    }
}

impl VerifiedClient {
    /// Negentropy sync with all relays, like `Client::sync`, with the events the client lacks
    /// batch-verified by the tap.
    ///
    /// Per relay, the SDK runs the NIP-77 reconciliation as a dry run (`Relay::sync_with_items`
    /// with the database's negentropy items), which yields the ids the relay has and the client
    /// lacks (`remote`) and the reverse (`local`). The missing ids are then downloaded through
    /// tap subscriptions: each id once, from one relay that listed it (spread over the relays),
    /// in REQs of [`VerifiedSyncOptions::chunk_size`] ids, several in flight per relay; an id a
    /// relay did not deliver (forged, withheld, timed out) is asked of the next relay that
    /// listed it. Delivered events go through gossip, the admission policy, the database and
    /// the notifications exactly as on the tap's other paths. `Up` and `Both` send through the
    /// SDK (its reconciliation then runs with direction `Up`).
    ///
    /// With a gossip store in the options, the filter's authors' outdated relay lists are
    /// fetched through the tap first, then the SDK's gossip routing picks the relays and runs
    /// the reconciliation (merged over relays: each missing id is asked of the relays that
    /// reconciled, in turn). The routing is the SDK's, so an overall timeout that ends the
    /// reconciliation there returns an empty `Output` (no relay listed as failed).
    ///
    /// Returns, like the SDK, the relays that reconciled (`success`), those that failed with
    /// the reason (`failed`: not connected, no negentropy support, initial or overall timeout,
    /// ...), and the merged `Reconciliation`: `remote`, `local`, `sent`, `send_failures`, and
    /// `received` (the downloaded ids that arrived, verified).
    ///
    /// # Errors
    /// As `Client::sync`: no relays, a database error, gossip errors.
    pub async fn sync(
        &self,
        filter: Filter,
        opts: &VerifiedSyncOptions,
    ) -> Result<Output<Reconciliation>, Error> {
        let deadline = opts.timeout.map(|t| Instant::now() + t);
        if self.shared.core.gossip.is_some() {
            self.refresh_gossip_lists(&filter).await?;
            let Some(out) = until(deadline, self.client.sync(filter, &opts.sdk())).await else {
                return Ok(Output::default()); // the whole reconciliation timed out
            };
            let mut out = out?;
            if opts.downloads() {
                let order: Vec<RelayUrl> = out.success.iter().cloned().collect();
                let listed: HashMap<EventId, Vec<RelayUrl>> = out
                    .val
                    .remote
                    .iter()
                    .map(|id| (*id, order.clone()))
                    .collect();
                let got = self.download(listed, opts, deadline).await;
                out.val.received.extend(got);
            }
            return Ok(out);
        }
        let urls: Vec<RelayUrl> = self.client.relays().await.into_keys().collect();
        self.sync_with(urls, filter, opts).await
    }

    /// [`sync`](Self::sync) with specific relays (no gossip routing, as `Client::sync_with`).
    ///
    /// # Errors
    /// As `Client::sync_with`: no relays specified, no relays, a relay not in the pool, an
    /// invalid URL, a database error.
    pub async fn sync_with<I, U>(
        &self,
        urls: I,
        filter: Filter,
        opts: &VerifiedSyncOptions,
    ) -> Result<Output<Reconciliation>, Error>
    where
        I: IntoIterator<Item = U>,
        U: TryIntoUrl,
        PoolError: From<<U as TryIntoUrl>::Err>,
    {
        let deadline = opts.timeout.map(|t| Instant::now() + t);
        let mut targets: Vec<RelayUrl> = Vec::new();
        for u in urls {
            let u = u.try_into_url().map_err(PoolError::from)?;
            if !targets.contains(&u) {
                targets.push(u);
            }
        }
        if targets.is_empty() {
            return Err(PoolError::NoRelaysSpecified.into());
        }
        let relays = self.client.relays().await;
        if relays.is_empty() {
            return Err(PoolError::NoRelays.into());
        }
        let relays: Vec<Relay> = targets
            .iter()
            .map(|u| relays.get(u).cloned().ok_or(PoolError::RelayNotFound))
            .collect::<Result<_, _>>()?;
        let items = self
            .client
            .database()
            .negentropy_items(filter.clone())
            .await
            .map_err(Error::Database)?;

        let sdk = opts.sdk();
        let runs = relays.iter().map(|r| {
            until(
                deadline,
                r.sync_with_items(filter.clone(), items.clone(), &sdk),
            )
        });
        let results = futures::future::join_all(runs).await;

        let mut out: Output<Reconciliation> = Output::default();
        let mut listed: HashMap<EventId, Vec<RelayUrl>> = HashMap::new();
        for (url, res) in targets.into_iter().zip(results) {
            match res {
                Some(Ok(rec)) => {
                    for id in &rec.remote {
                        listed.entry(*id).or_default().push(url.clone());
                    }
                    merge(&mut out.val, rec);
                    out.success.insert(url);
                }
                Some(Err(e)) => {
                    out.failed.insert(url, e.to_string());
                }
                None => {
                    out.failed.insert(url, "timeout".to_owned());
                }
            }
        }
        if opts.downloads() {
            let got = self.download(listed, opts, deadline).await;
            out.val.received.extend(got);
        }
        Ok(out)
    }

    /// Downloads `listed` (id → the relays that have it, in order of preference) through tap
    /// subscriptions; returns the ids that arrived.
    async fn download(
        &self,
        listed: HashMap<EventId, Vec<RelayUrl>>,
        opts: &VerifiedSyncOptions,
        deadline: Option<Instant>,
    ) -> HashSet<EventId> {
        let mut received: HashSet<EventId> = HashSet::new();
        if let Some(p) = &opts.progress {
            p.send_modify(|s| s.total += listed.len() as u64);
        }
        // First choice: the listing relay with the fewest ids so far (ids sorted for a stable
        // spread), so overlapping sets are fetched once and split between the relays.
        let mut ids: Vec<EventId> = listed.keys().copied().collect();
        ids.sort_unstable();
        let mut load: HashMap<RelayUrl, usize> = HashMap::new();
        let mut queue: HashMap<RelayUrl, Vec<EventId>> = HashMap::new();
        let mut tried: HashMap<EventId, u64> = HashMap::with_capacity(ids.len());
        for id in ids {
            let relays = &listed[&id];
            let Some((i, url)) = relays
                .iter()
                .enumerate()
                .min_by_key(|(_, u)| load.get(*u).copied().unwrap_or(0))
            else {
                continue;
            };
            *load.entry(url.clone()).or_default() += 1;
            queue.entry(url.clone()).or_default().push(id);
            tried.insert(id, 1u64 << i.min(63));
        }

        while !queue.is_empty() {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let rounds = queue
                .drain()
                .map(|(url, ids)| self.download_from(url, ids, opts, deadline));
            let results = futures::future::join_all(rounds).await;
            for missing in results {
                let (got, missing) = missing;
                if let Some(p) = &opts.progress {
                    p.send_modify(|s| s.current += got.len() as u64);
                }
                received.extend(got);
                for id in missing {
                    // The next relay that listed it and was not asked yet.
                    let relays = &listed[&id];
                    let mask = tried.entry(id).or_default();
                    let next = relays
                        .iter()
                        .enumerate()
                        .find(|(i, _)| *i < 64 && *mask & (1u64 << i) == 0);
                    match next {
                        Some((i, url)) => {
                            *mask |= 1u64 << i;
                            queue.entry(url.clone()).or_default().push(id);
                        }
                        None => {
                            if let Some(p) = &opts.progress {
                                p.send_modify(|s| s.current += 1);
                            }
                        }
                    }
                }
            }
        }
        received
    }

    /// One relay's share: REQs of `chunk_size` ids, `in_flight` at a time. Returns the ids
    /// that arrived and those that did not.
    async fn download_from(
        &self,
        url: RelayUrl,
        ids: Vec<EventId>,
        opts: &VerifiedSyncOptions,
        deadline: Option<Instant>,
    ) -> (Vec<EventId>, Vec<EventId>) {
        let chunks: Vec<Vec<EventId>> = ids.chunks(opts.chunk_size).map(<[_]>::to_vec).collect();
        let fetches = chunks.into_iter().map(|chunk| {
            let url = url.clone();
            async move {
                let mut timeout = opts.chunk_timeout;
                if let Some(d) = deadline {
                    timeout = timeout.min(d.saturating_duration_since(Instant::now()));
                }
                let want: HashSet<EventId> = chunk.iter().copied().collect();
                let filter = Filter::new().ids(chunk.iter().copied()).limit(chunk.len());
                let mut got: HashSet<EventId> = HashSet::new();
                if let Ok((_, mut s)) = self
                    .stream(
                        Some(vec![url]),
                        filter,
                        closing(timeout, ReqExitPolicy::ExitOnEOSE),
                    )
                    .await
                {
                    while let Some(ev) = s.next().await {
                        if want.contains(&ev.id) {
                            got.insert(ev.id);
                        }
                    }
                }
                let missing: Vec<EventId> =
                    chunk.into_iter().filter(|id| !got.contains(id)).collect();
                (got, missing)
            }
        });
        let mut s = futures::stream::iter(fetches).buffer_unordered(opts.in_flight);
        let (mut got_all, mut missing_all) = (Vec::new(), Vec::new());
        while let Some((got, missing)) = s.next().await {
            got_all.extend(got);
            missing_all.extend(missing);
        }
        (got_all, missing_all)
    }

    /// Before a gossip-mode call: fetches, through the tap, the outdated NIP-65 (and, where
    /// the filter needs them, NIP-17) relay lists of the filter's public keys from the
    /// discovery and read relays, feeds them to gossip (through the same admission path as
    /// every tap event) and records the fetch attempt, so the SDK's own check finds nothing
    /// outdated and verifies nothing one at a time. A no-op without a gossip store or keys.
    pub(super) async fn refresh_gossip_lists(&self, filter: &Filter) -> Result<(), Error> {
        let Some(gossip) = self.shared.core.gossip.clone() else {
            return Ok(());
        };
        let keys: BTreeSet<PublicKey> = filter.extract_public_keys();
        if keys.is_empty() {
            return Ok(());
        }
        for &kind in gossip_kinds(filter) {
            let mut outdated: Vec<PublicKey> = Vec::new();
            for pk in &keys {
                if let GossipPublicKeyStatus::Outdated { .. } =
                    gossip.status(pk, kind).await.map_err(Error::Gossip)?
                {
                    outdated.push(*pk);
                }
            }
            if outdated.is_empty() {
                continue;
            }
            let urls: Vec<RelayUrl> = self
                .client
                .relays()
                .await
                .into_iter()
                .filter(|(_, r)| {
                    r.flags().has(
                        RelayServiceFlags::DISCOVERY | RelayServiceFlags::READ,
                        FlagCheck::Any,
                    )
                })
                .map(|(u, _)| u)
                .collect();
            if !urls.is_empty() {
                let f = Filter::new()
                    .authors(outdated.iter().copied())
                    .kind(kind.to_event_kind());
                // The events are fed to gossip by the tap's admission path (`Core::admit`).
                if let Ok((_, mut s)) = self
                    .open(
                        Some(urls),
                        f,
                        closing(Duration::from_secs(10), ReqExitPolicy::ExitOnEOSE),
                    )
                    .await
                {
                    while s.next().await.is_some() {}
                }
            }
            for pk in &outdated {
                gossip
                    .update_fetch_attempt(pk, kind)
                    .await
                    .map_err(Error::Gossip)?;
            }
        }
        Ok(())
    }
}
