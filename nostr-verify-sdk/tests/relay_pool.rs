//! End to end over real WebSockets on 127.0.0.1 with nostr-relay-builder 0.44.1 `LocalRelay`s
//! through nostr-sdk 0.44.1's relay pool, with the tap as the client's WebSocket transport.
//! Every test starts and stops its own relays (any free port, in-memory databases seeded
//! without verification so forged events can be served); every wait is bounded.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use nostr_gossip::error::GossipError;
use nostr_gossip::{BestRelaySelection, GossipListKind, GossipPublicKeyStatus, NostrGossip};
use nostr_sdk::prelude::*;
use nostr_verify_sdk::{
    BatchVerifyTransport, DropReason, TapEvent, TapOptions, VerifiedClient, VerifiedClientOptions,
};
use tokio::sync::{broadcast, mpsc};

use common::*;

const FETCH: Duration = Duration::from_secs(30);

/// Valid events plus forged ones (bad id, bad signature) interleaved.
fn valid_and_forged(n: usize, forged: usize, base: u64) -> (Vec<Event>, Vec<Event>) {
    let valid = signed_events(n, 20, base);
    let extra = signed_events(2 * forged, 3, base + 1_000_000);
    let mut all = valid.clone();
    for i in 0..forged {
        all.push(bad_id(extra[2 * i].clone()));
        all.push(bad_sig(extra[2 * i + 1].clone(), &extra[2 * i]));
    }
    (valid, all)
}

/// Drains whatever is in `rx` now.
fn drain(rx: &mut broadcast::Receiver<RelayPoolNotification>) -> Vec<RelayPoolNotification> {
    let mut v = Vec::new();
    loop {
        match rx.try_recv() {
            Ok(n) => v.push(n),
            Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
            Err(_) => return v,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_valid_event_once_no_forged_one_and_sdk_fetch_still_works() {
    let n = 1_000 * scale();
    let (valid, all) = valid_and_forged(n, 25, 10_000);
    let relay = start_relay(seeded_db(&all).await, all.len(), 0).await;
    let url = relay.url().await;
    let (tap, client) = tapped_client(std::slice::from_ref(&url), TapOptions::default()).await;
    let mut sdk_rx = client.client().notifications();
    let mut our_rx = client.notifications();

    let got = bounded("fetch", client.fetch_events(all_notes(), FETCH))
        .await
        .unwrap();
    assert_eq!(ids(got.iter()), ids(&valid));
    let st = tap.stats();
    assert_eq!(st.dropped(DropReason::InvalidId), 25);
    assert_eq!(st.dropped(DropReason::InvalidSignature), 25);
    assert_eq!(st.delivered, n as u64);
    assert_eq!(st.signatures_checked, n as u64 + 25);

    // Our notifications: one first-seen Event and one Message per delivered event.
    let ours = drain(&mut our_rx);
    let firsts: Vec<EventId> = ours
        .iter()
        .filter_map(|x| match x {
            RelayPoolNotification::Event { event, .. } => Some(event.id),
            _ => None,
        })
        .collect();
    assert_eq!(ids(valid.iter()), {
        let mut f = firsts.clone();
        f.sort();
        f
    });
    // The SDK itself never saw (or verified) an event of a tap subscription: only its EOSE.
    for x in drain(&mut sdk_rx) {
        match x {
            RelayPoolNotification::Event {
                subscription_id, ..
            } => {
                assert!(
                    !tap.owns(&subscription_id),
                    "SDK event for {subscription_id}"
                )
            }
            RelayPoolNotification::Message {
                message:
                    RelayMessage::Event {
                        subscription_id, ..
                    },
                ..
            } => assert!(!tap.owns(&subscription_id)),
            _ => {}
        }
    }
    // The database got the verified events.
    assert_eq!(
        client.database().count(all_notes()).await.unwrap(),
        0,
        "default MemoryDatabase keeps ids only"
    );
    assert_eq!(
        client.database().check_id(&valid[0].id).await.unwrap(),
        DatabaseEventStatus::Saved
    );

    // The SDK's own fetch through the same client still works (the SDK verifies those).
    let sdk = bounded(
        "sdk fetch",
        client.client().fetch_events(all_notes(), FETCH),
    )
    .await
    .unwrap();
    assert_eq!(ids(sdk.iter()), ids(&valid));
    // And ours beside it, concurrently.
    let (a, b) = tokio::join!(
        client.fetch_events(all_notes(), FETCH),
        client.client().fetch_events(all_notes(), FETCH)
    );
    assert_eq!(ids(a.unwrap().iter()), ids(&valid));
    assert_eq!(ids(b.unwrap().iter()), ids(&valid));
    client.shutdown().await;
    relay.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eose_comes_after_its_events() {
    let n = 600 * scale();
    let (valid, all) = valid_and_forged(n, 10, 20_000);
    let relay = start_relay(seeded_db(&all).await, all.len(), 0).await;
    let url = relay.url().await;
    for batch_size in [7, 512] {
        let opts = TapOptions {
            batch_size,
            ..TapOptions::default()
        };
        let (tap, client) = tapped_client(std::slice::from_ref(&url), opts).await;
        let id = tap.new_subscription_id();
        let (tx, mut rx) = mpsc::channel(64);
        tap.register(id.clone(), tx);
        let auto = SubscribeAutoCloseOptions::default().timeout(Some(FETCH));
        client
            .client()
            .subscribe_with_id(id.clone(), all_notes(), Some(auto))
            .await
            .unwrap();
        let mut seen = HashSet::new();
        loop {
            match bounded("tap events", rx.recv()).await.expect("open") {
                TapEvent::Event {
                    event,
                    subscription_id,
                    ..
                } => {
                    assert_eq!(subscription_id, id);
                    assert!(seen.insert(event.id), "duplicate");
                }
                TapEvent::Eose {
                    subscription_id,
                    relay_url,
                } => {
                    assert_eq!((subscription_id, relay_url), (id.clone(), url.clone()));
                    break;
                }
                other => panic!("{other:?}"),
            }
        }
        let mut want: Vec<EventId> = seen.into_iter().collect();
        want.sort();
        assert_eq!(want, ids(&valid), "batch size {batch_size}");
        tap.unregister(&id);
        client.shutdown().await;
    }
    relay.shutdown();
}

/// Gossip store that counts the events it is fed.
#[derive(Debug, Default)]
struct CountingGossip(AtomicU64);

impl NostrGossip for CountingGossip {
    fn process<'a>(
        &'a self,
        _event: &'a Event,
        _relay_url: Option<&'a RelayUrl>,
    ) -> BoxedFuture<'a, Result<(), GossipError>> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Box::pin(async { Ok(()) })
    }
    fn status<'a>(
        &'a self,
        _public_key: &'a PublicKey,
        _list: GossipListKind,
    ) -> BoxedFuture<'a, Result<GossipPublicKeyStatus, GossipError>> {
        Box::pin(async { Ok(GossipPublicKeyStatus::Updated) })
    }
    fn update_fetch_attempt<'a>(
        &'a self,
        _public_key: &'a PublicKey,
        _list: GossipListKind,
    ) -> BoxedFuture<'a, Result<(), GossipError>> {
        Box::pin(async { Ok(()) })
    }
    fn get_best_relays<'a>(
        &'a self,
        _public_key: &'a PublicKey,
        _selection: BestRelaySelection,
    ) -> BoxedFuture<'a, Result<HashSet<RelayUrl>, GossipError>> {
        Box::pin(async { Ok(HashSet::new()) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_relays_same_events_each_signature_checked_once() {
    let n = 1_000 * scale();
    let (valid, all) = valid_and_forged(n, 20, 30_000);
    let db = seeded_db(&all).await;
    let r1 = start_relay(db.clone(), all.len(), 0).await;
    let r2 = start_relay(db, all.len(), 0).await;
    let urls = [r1.url().await, r2.url().await];
    let tap = BatchVerifyTransport::default();
    let gossip = Arc::new(CountingGossip::default());
    let client = VerifiedClient::with_options(
        Client::builder().websocket_transport(tap.clone()).build(),
        &tap,
        VerifiedClientOptions {
            gossip: Some(gossip.clone()),
            ..Default::default()
        },
    );
    connect(&client, &urls).await;

    let got = bounded("fetch", client.fetch_events(all_notes(), FETCH))
        .await
        .unwrap();
    assert_eq!(ids(got.iter()), ids(&valid));
    let st = tap.stats();
    assert_eq!(st.delivered, 2 * n as u64, "every copy reaches the client");
    // Shared in-flight claims + cache: one signature check per valid event; forged ones are
    // never cached, so each copy of a bad signature is checked (2 x 20).
    assert_eq!(st.signatures_checked, n as u64 + 40);
    assert_eq!(st.dropped(DropReason::InvalidId), 40);
    assert_eq!(st.dropped(DropReason::InvalidSignature), 40);
    // Gossip is fed every delivered copy, as the SDK's middleware does.
    assert_eq!(gossip.0.load(Ordering::Relaxed), 2 * n as u64);

    // A second fetch: ids recomputed, no valid signature checked again.
    let got = bounded("fetch 2", client.fetch_events(all_notes(), FETCH))
        .await
        .unwrap();
    assert_eq!(got.len(), n);
    let st2 = tap.stats();
    assert_eq!(st2.signatures_checked - st.signatures_checked, 40);
    assert_eq!(st2.cache_hits - st.cache_hits, 2 * n as u64);
    client.shutdown().await;
    r1.shutdown();
    r2.shutdown();
}

/// One relay serving genuine events and one serving other copies under the same ids, with a
/// tapped client connected to both.
struct GenuineAndCopies {
    good: nostr_relay_builder::LocalRelay,
    evil: nostr_relay_builder::LocalRelay,
    /// The genuine relay's and the copies' relay's URLs.
    gu: RelayUrl,
    eu: RelayUrl,
    tap: BatchVerifyTransport,
    client: VerifiedClient,
}

impl GenuineAndCopies {
    async fn start(genuine: &[Event], copies: &[Event]) -> Self {
        let good = start_relay(seeded_db(genuine).await, genuine.len(), 0).await;
        let evil = start_relay(seeded_db(copies).await, genuine.len(), 0).await;
        let (gu, eu) = (good.url().await, evil.url().await);
        let (tap, client) = tapped_client(&[gu.clone(), eu.clone()], TapOptions::default()).await;
        GenuineAndCopies {
            good,
            evil,
            gu,
            eu,
            tap,
            client,
        }
    }

    /// Our path: the tapped client's fetch from one relay.
    async fn ours(&self, what: &str, url: &RelayUrl) -> Events {
        let fetch = self
            .client
            .fetch_events_from([url.clone()], all_notes(), FETCH);
        bounded(what, fetch).await.unwrap()
    }

    /// Our path, from both relays at once.
    async fn ours_both(&self) -> Events {
        bounded("both", self.client.fetch_events(all_notes(), FETCH))
            .await
            .unwrap()
    }

    /// The SDK's own path (the pass-through guard) from one relay.
    async fn sdk(&self, url: &RelayUrl) -> Events {
        self.client
            .client()
            .fetch_events_from([url.clone()], all_notes(), FETCH)
            .await
            .unwrap()
    }

    async fn shutdown(self) {
        self.client.shutdown().await;
        self.good.shutdown();
        self.evil.shutdown();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tampered_copy_of_a_genuine_id_is_rejected_on_both_paths() {
    let n = 50;
    let genuine = signed_events(n, 5, 40_000);
    let tampered: Vec<Event> = genuine
        .iter()
        .map(|e| {
            let mut t = e.clone();
            t.content = format!("{} -- tampered", t.content);
            t
        })
        .collect();
    let r = GenuineAndCopies::start(&genuine, &tampered).await;
    let tap = &r.tap;

    // Ours: genuine first (cached), then the evil relay's copies: all rejected by id.
    let a = r.ours("good", &r.gu).await;
    assert_eq!(a.len(), n);
    let b = r.ours("evil", &r.eu).await;
    assert!(b.is_empty());
    assert_eq!(tap.stats().dropped(DropReason::InvalidId), n as u64);
    // Both at once: only genuine bodies.
    let both = r.ours_both().await;
    assert_eq!(both.len(), n);
    assert!(both.iter().all(|e| !e.content.contains("tampered")));

    // The SDK's own path: after the genuine events are in its cache, 0.44.3 would deliver the
    // tampered copies unchecked; the pass-through id guard drops them first.
    let sdk_a = r.sdk(&r.gu).await;
    assert_eq!(sdk_a.len(), n);
    let guard_before = tap.stats().passthrough_invalid_id;
    let sdk_b = r.sdk(&r.eu).await;
    assert!(sdk_b.is_empty(), "tampered copies reached the SDK path");
    assert_eq!(tap.stats().passthrough_invalid_id - guard_before, n as u64);
    r.shutdown().await;
}

/// A second relay serving the genuine events with other signature bytes (another event's
/// signature, or one bit flipped) under their genuine ids: the tap checks those bytes instead
/// of trusting the genuine copy's verdict, and the pass-through guard keeps them from the SDK,
/// whose verification cache is keyed by id alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_with_other_signature_bytes_is_rejected_on_both_paths() {
    let n = 50;
    let genuine = signed_events(n, 5, 50_000);
    let forged: Vec<Event> = genuine
        .iter()
        .enumerate()
        .map(|(i, e)| {
            if i % 2 == 0 {
                bad_sig(e.clone(), &genuine[(i + 1) % n])
            } else {
                mangled_sig(e)
            }
        })
        .collect();
    let sigs: HashMap<EventId, Signature> = genuine.iter().map(|e| (e.id, e.sig)).collect();
    let genuine_sigs = |evs: &Events| evs.iter().all(|e| sigs.get(&e.id) == Some(&e.sig));
    let r = GenuineAndCopies::start(&genuine, &forged).await;
    let tap = &r.tap;

    // Ours: genuine first (verified, cached), then the second relay's copies: all rejected.
    let a = r.ours("good", &r.gu).await;
    assert_eq!(a.len(), n);
    assert!(genuine_sigs(&a));
    let b = r.ours("evil", &r.eu).await;
    assert!(
        b.is_empty(),
        "copies with unchecked signature bytes delivered"
    );
    let st = tap.stats();
    assert_eq!(st.dropped(DropReason::InvalidSignature), n as u64);
    assert_eq!(st.signatures_checked, 2 * n as u64);
    // Both relays at once (copies in flight on both connections): every genuine event, with
    // its genuine signature.
    let both = r.ours_both().await;
    assert_eq!(both.len(), n);
    assert!(genuine_sigs(&both));
    assert_eq!(
        tap.stats().dropped(DropReason::InvalidSignature),
        2 * n as u64
    );

    // The SDK's own path: once the genuine ids are in its verification cache, nostr-relay-pool
    // 0.44.3 would deliver the other bytes unchecked; the guard checks and drops them.
    let sdk_a = r.sdk(&r.gu).await;
    assert_eq!(sdk_a.len(), n);
    let sdk_b = r.sdk(&r.eu).await;
    assert!(
        sdk_b.is_empty(),
        "unchecked signature bytes reached the SDK path"
    );
    let st = tap.stats();
    assert_eq!(st.passthrough_invalid_signature, n as u64);
    assert_eq!(st.passthrough_invalid_id, 0);
    r.shutdown().await;
}

/// Counts `Event` and `Message(EVENT)` notifications per id until `want` ids were first-seen.
async fn collect_live(
    rx: &mut broadcast::Receiver<RelayPoolNotification>,
    want: &HashSet<EventId>,
    firsts: &mut HashMap<EventId, usize>,
    copies: &mut HashMap<EventId, usize>,
) {
    while !want.iter().all(|id| firsts.contains_key(id)) {
        match bounded("live notification", rx.recv()).await {
            Ok(RelayPoolNotification::Event { event, .. }) => {
                *firsts.entry(event.id).or_default() += 1
            }
            Ok(RelayPoolNotification::Message {
                message: RelayMessage::Event { event, .. },
                ..
            }) => *copies.entry(event.id).or_default() += 1,
            Ok(_) => {}
            Err(e) => panic!("{e}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_subscription_one_event_and_every_copy() {
    let db = seeded_db(&[]).await;
    let r1 = start_relay(db.clone(), 10, 0).await;
    let r2 = start_relay(db, 10, 0).await;
    let urls = [r1.url().await, r2.url().await];
    let (tap, client) = tapped_client(&urls, TapOptions::default()).await;
    let mut rx = client.notifications();
    let out = client
        .subscribe(all_notes().since(Timestamp::from(1)), None)
        .await
        .unwrap();
    assert!(tap.owns(&out.val));
    assert_eq!(out.success.len(), 2);
    // Wait for both EOSEs so the subscriptions are live on both relays.
    let mut eose = 0;
    while eose < 2 {
        if let Ok(RelayPoolNotification::Message {
            message: RelayMessage::EndOfStoredEvents(id),
            ..
        }) = bounded("eose", rx.recv()).await
        {
            eose += usize::from(*id == out.val);
        }
    }
    let live = signed_events(3, 1, 50_000);
    let forged = bad_sig(signed_events(1, 1, 50_100)[0].clone(), &live[0]);
    for r in [&r1, &r2] {
        r.notify_event(forged.clone());
        for e in &live {
            r.notify_event(e.clone());
        }
    }
    let want: HashSet<EventId> = live.iter().map(|e| e.id).collect();
    let (mut firsts, mut copies) = (HashMap::new(), HashMap::new());
    collect_live(&mut rx, &want, &mut firsts, &mut copies).await;
    // Let the second copies arrive too (bounded: two per id).
    while !want.iter().all(|id| copies.get(id) == Some(&2)) {
        if let Ok(RelayPoolNotification::Message {
            message: RelayMessage::Event { event, .. },
            ..
        }) = bounded("copies", rx.recv()).await
        {
            *copies.entry(event.id).or_default() += 1;
        }
    }
    assert!(want.iter().all(|id| firsts[id] == 1));
    assert!(!firsts.contains_key(&forged.id) && !copies.contains_key(&forged.id));
    assert_eq!(tap.stats().dropped(DropReason::InvalidSignature), 2);
    client.unsubscribe(&out.val).await;
    client.shutdown().await;
    r1.shutdown();
    r2.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_events_and_wait_duration_after_eose() {
    let n = 200 * scale();
    let (valid, all) = valid_and_forged(n, 5, 60_000);
    let relay = start_relay(seeded_db(&all).await, all.len(), 0).await;
    let url = relay.url().await;
    let (_tap, client) = tapped_client(std::slice::from_ref(&url), TapOptions::default()).await;

    // WaitForEvents(10): done after 10 events, long before the (huge) timeout.
    let ten = bounded(
        "WaitForEvents",
        client.fetch_events_with_policy(
            all_notes(),
            Duration::from_secs(3_600),
            ReqExitPolicy::WaitForEvents(10),
        ),
    )
    .await
    .unwrap();
    assert_eq!(ten.len(), 10);

    // WaitDurationAfterEOSE: all stored events, plus a live one sent after the stored ones.
    let mut s = client
        .stream_events_with_policy(
            all_notes(),
            FETCH,
            ReqExitPolicy::WaitDurationAfterEOSE(Duration::from_millis(1_500)),
        )
        .await
        .unwrap();
    let mut got = Vec::new();
    while got.len() < n {
        got.push(bounded("stored", s.next()).await.expect("stream open"));
    }
    let live = signed_events(1, 1, 70_000).remove(0);
    relay.notify_event(live.clone());
    while let Some(e) = bounded("after eose", s.next()).await {
        got.push(e);
    }
    let mut want = valid.clone();
    want.push(live);
    assert_eq!(ids(got.iter()), ids(&want));
    client.shutdown().await;
    relay.shutdown();
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_resumes_subscription_without_duplicates() {
    let n = 100 * scale();
    let first = signed_events(n, 5, 80_000);
    let port = free_port();
    let db = seeded_db(&first).await;
    let relay = start_relay(db.clone(), 10 * n, port).await;
    let url = relay.url().await;

    let tap = BatchVerifyTransport::default();
    let client = VerifiedClient::new(
        Client::builder().websocket_transport(tap.clone()).build(),
        &tap,
    );
    let ropts = RelayOptions::new()
        .retry_interval(Duration::from_secs(1))
        .adjust_retry_interval(false);
    client.pool().add_relay(url.clone(), ropts).await.unwrap();
    assert_eq!(
        client
            .try_connect(Duration::from_secs(10))
            .await
            .success
            .len(),
        1
    );
    let mut rx = client.notifications();
    let out = client.subscribe(all_notes(), None).await.unwrap();

    let (mut firsts, mut copies) = (HashMap::new(), HashMap::new());
    let want: HashSet<EventId> = first.iter().map(|e| e.id).collect();
    collect_live(&mut rx, &want, &mut firsts, &mut copies).await;

    // Restart the relay on the same port with more events; the SDK reconnects and re-sends
    // the REQ of our subscription, whose events keep flowing through the tap.
    relay.shutdown();
    drop(relay);
    let more = signed_events(5, 2, 90_000);
    for e in &more {
        db.save_event(e).await.unwrap();
    }
    let mut relay2 = None;
    for _ in 0..50 {
        let b = nostr_relay_builder::RelayBuilder::default()
            .database(db.clone())
            .port(port)
            .max_filter_limit(10 * n)
            .default_filter_limit(10 * n);
        let r = nostr_relay_builder::LocalRelay::new(b);
        if r.run().await.is_ok() {
            relay2 = Some(r);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let relay2 = relay2.expect("port reusable");
    let want2: HashSet<EventId> = more.iter().map(|e| e.id).collect();
    collect_live(&mut rx, &want2, &mut firsts, &mut copies).await;
    // Every event notified as new exactly once, though the resubscription re-sent old ones.
    assert_eq!(firsts.len(), n + 5);
    assert!(
        firsts.values().all(|&c| c == 1),
        "duplicate Event notification"
    );
    assert!(tap.owns(&out.val));
    client.shutdown().await;
    relay2.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_counts_exact_under_load() {
    let s = scale();
    let (valid, mut all) = valid_and_forged(1_500 * s, 100 * s, 100_000);
    let keys = Keys::generate();
    let many_tags: Vec<Event> = (0..30)
        .map(|i| {
            EventBuilder::new(Kind::TextNote, format!("tags {i}"))
                .custom_created_at(Timestamp::from(100_000 + i))
                .tags((0..2_001).map(|t| Tag::hashtag(format!("t{t}"))))
                .sign_with_keys(&keys)
                .unwrap()
        })
        .collect();
    all.extend(many_tags);
    let db = seeded_db(&all).await;
    let r1 = start_relay(db.clone(), all.len(), 0).await;
    let r2 = start_relay(db, all.len(), 0).await;
    let urls = [r1.url().await, r2.url().await];
    let opts = TapOptions {
        batch_size: 64,
        ..TapOptions::default()
    };
    let (tap, client) = tapped_client(&urls, opts).await;
    // Three of ours and one of the SDK's at the same time.
    let (a, b, c, d) = tokio::join!(
        client.fetch_events(all_notes(), FETCH),
        client.fetch_events(all_notes(), FETCH),
        client.fetch_events(all_notes(), FETCH),
        client.client().fetch_events(all_notes(), FETCH),
    );
    for r in [a, b, c, d] {
        assert_eq!(ids(r.unwrap().iter()), ids(&valid));
    }
    let st = tap.stats();
    let copies = 3 * 2; // fetches x relays
    assert_eq!(st.dropped(DropReason::InvalidId), copies * 100 * s as u64);
    assert_eq!(
        st.dropped(DropReason::InvalidSignature),
        copies * 100 * s as u64
    );
    assert_eq!(st.dropped(DropReason::TooManyTags), copies * 30);
    assert_eq!(st.delivered, copies * valid.len() as u64);
    client.shutdown().await;
    r1.shutdown();
    r2.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backpressure_with_a_stalled_consumer() {
    let n = 3_000 * scale();
    let valid = signed_events(n, 20, 200_000);
    let relay = start_relay(seeded_db(&valid).await, n, 0).await;
    let url = relay.url().await;
    let tap = BatchVerifyTransport::default();
    let cap = 16;
    let client = VerifiedClient::with_options(
        Client::builder().websocket_transport(tap.clone()).build(),
        &tap,
        VerifiedClientOptions {
            channel_capacity: cap,
            ..Default::default()
        },
    );
    connect(&client, std::slice::from_ref(&url)).await;
    let mut s = client
        .stream_events(all_notes(), Duration::from_secs(120))
        .await
        .unwrap();
    let mut got = vec![bounded("first", s.next()).await.unwrap()];
    // Stall: what the tap has handed over is bounded by the channels, not by n.
    let mut last = u64::MAX;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let d = tap.stats().delivered;
        if d == last {
            break;
        }
        last = d;
    }
    let bound = (1 + 512 + 1 + cap + 1) as u64; // consumed + stream channel + driver + tap channel + in hand
    let delivered = tap.stats().delivered;
    assert!(
        delivered <= bound,
        "delivered {delivered} > {bound} while stalled"
    );
    assert!(delivered < n as u64);
    // Resume: everything arrives.
    while let Some(e) = bounded("drain", s.next()).await {
        got.push(e);
    }
    assert_eq!(ids(got.iter()), ids(&valid));
    client.shutdown().await;
    relay.shutdown();
}
