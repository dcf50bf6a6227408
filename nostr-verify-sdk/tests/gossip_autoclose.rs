//! Gossip mode and auto-closing subscriptions through the tap, on nostr-relay-builder 0.44.1
//! `LocalRelay`s on 127.0.0.1.
//!
//! Counting the SDK's one-at-a-time signature checks: nostr-relay-pool 0.44.3 verifies every
//! `EVENT` frame of its own subscriptions (one libsecp256k1 check each, unless the id is in its
//! verification cache) and none of the tap's, which never reach it. The tap counts the frames
//! it forwards to the SDK (`TapStats::passthrough_events`), so zero means the SDK checked no
//! signature on these connections.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use nostr_gossip::{GossipListKind, GossipPublicKeyStatus, NostrGossip};
use nostr_gossip_memory::prelude::NostrGossipMemory;
use nostr_relay_builder::LocalRelay;
use nostr_sdk::prelude::*;
use nostr_verify_sdk::{
    AutoCloseOptions, BatchVerifyTransport, VerifiedClient, VerifiedClientOptions,
};
use tokio::sync::broadcast;

use common::*;

const FETCH: Duration = Duration::from_secs(30);

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// 50 authors, each with a NIP-65 list naming the relay and 10 notes, on one relay.
struct GossipWorld {
    relay: LocalRelay,
    url: RelayUrl,
    authors: Vec<PublicKey>,
    notes: Vec<Event>,
}

impl GossipWorld {
    async fn start() -> Self {
        let port = free_port();
        let url = RelayUrl::parse(&format!("ws://127.0.0.1:{port}")).unwrap();
        let keys: Vec<Keys> = (0..50).map(|_| Keys::generate()).collect();
        let mut events = Vec::new();
        let mut notes = Vec::new();
        for (a, k) in keys.iter().enumerate() {
            let list = EventBuilder::relay_list([(url.clone(), None)])
                .sign_with_keys(k)
                .unwrap();
            events.push(list);
            for i in 0..10 {
                let note = EventBuilder::new(Kind::TextNote, format!("note {i} of author {a}"))
                    .custom_created_at(Timestamp::from(1_000_000 + (a * 10 + i) as u64))
                    .sign_with_keys(k)
                    .unwrap();
                notes.push(note.clone());
                events.push(note);
            }
        }
        let relay = start_relay(seeded_db(&events).await, 2_000, port).await;
        assert_eq!(relay.url().await, url);
        GossipWorld {
            relay,
            url,
            authors: keys.iter().map(|k| k.public_key()).collect(),
            notes,
        }
    }

    fn filter(&self) -> Filter {
        Filter::new()
            .authors(self.authors.iter().copied())
            .kind(Kind::TextNote)
    }

    /// A fresh gossip-mode client with its own tap and gossip store.
    async fn client(&self) -> (BatchVerifyTransport, Arc<NostrGossipMemory>, VerifiedClient) {
        let tap = BatchVerifyTransport::default();
        let gossip = Arc::new(NostrGossipMemory::unbounded());
        let client = Client::builder()
            .websocket_transport(tap.clone())
            .gossip(gossip.clone())
            .build();
        let client = VerifiedClient::with_options(
            client,
            &tap,
            VerifiedClientOptions {
                gossip: Some(gossip.clone()),
                ..Default::default()
            },
        );
        connect(&client, std::slice::from_ref(&self.url)).await;
        (tap, gossip, client)
    }

    async fn all_updated(&self, gossip: &NostrGossipMemory) -> bool {
        for pk in &self.authors {
            match gossip.status(pk, GossipListKind::Nip65).await.unwrap() {
                GossipPublicKeyStatus::Updated => {}
                GossipPublicKeyStatus::Outdated { .. } => return false,
            }
        }
        true
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gossip_fetch_of_50_authors_checks_no_signature_in_the_sdk() {
    let w = GossipWorld::start().await;

    // Control: the SDK's own gossip-mode fetch on a tapped client. Its relay-list sync and the
    // notes both reach the SDK, which checks them one at a time.
    let (tap, _gossip, client) = w.client().await;
    let got = bounded("sdk fetch", client.client().fetch_events(w.filter(), FETCH))
        .await
        .unwrap();
    assert_eq!(ids(got.iter()), ids(&w.notes));
    let sdk = tap.stats().passthrough_events;
    assert!(
        sdk >= (w.notes.len() + 50) as u64,
        "SDK saw only {sdk} events"
    );
    client.shutdown().await;

    // Ours: the outdated lists are fetched through the tap first, so the SDK's gossip check
    // finds nothing to do; the notes come through the tap.
    let (tap, gossip, client) = w.client().await;
    assert!(!w.all_updated(&gossip).await);
    let got = bounded("our fetch", client.fetch_events(w.filter(), FETCH))
        .await
        .unwrap();
    assert_eq!(ids(got.iter()), ids(&w.notes));
    let st = tap.stats();
    assert_eq!(
        st.passthrough_events, 0,
        "the SDK checked signatures: {st:?}"
    );
    assert!(w.all_updated(&gossip).await, "lists not processed");
    assert_eq!(st.delivered, (w.notes.len() + 50) as u64);
    // The gossip store learned the authors' write relay from the lists.
    let best = gossip
        .get_best_relays(
            &w.authors[0],
            nostr_gossip::BestRelaySelection::Write { limit: 3 },
        )
        .await
        .unwrap();
    assert!(best.contains(&w.url), "{best:?}");

    client.shutdown().await;

    // Gossip-mode sync goes the same way: lists through the tap, the SDK's routing and dry
    // run, the notes through the tap; no signature checked in the SDK.
    let (tap, gossip, client) = w.client().await;
    let out = bounded(
        "gossip sync",
        client.sync(w.filter(), &nostr_verify_sdk::VerifiedSyncOptions::new()),
    )
    .await
    .unwrap();
    assert!(out.success.contains(&w.url), "{out:?}");
    assert_eq!(out.val.received, w.notes.iter().map(|e| e.id).collect());
    assert!(w.all_updated(&gossip).await);
    assert_eq!(tap.stats().passthrough_events, 0);
    client.shutdown().await;
    w.relay.shutdown();
}

/// Waits (bounded) until the tap subscription `id` has closed.
async fn wait_closed(tap: &BatchVerifyTransport, id: &SubscriptionId) {
    bounded("subscription closed", async {
        while tap.is_registered(id) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
}

/// Collects first-seen `Event` notifications for `sub` until `n` arrived.
async fn events_for(
    rx: &mut broadcast::Receiver<RelayPoolNotification>,
    sub: &SubscriptionId,
    n: usize,
) -> HashSet<EventId> {
    let mut got = HashSet::new();
    while got.len() < n {
        if let Ok(RelayPoolNotification::Event {
            subscription_id,
            event,
            ..
        }) = bounded("event notification", rx.recv()).await
        {
            if &subscription_id == sub {
                got.insert(event.id);
            }
        }
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_closing_subscriptions_go_through_the_tap() {
    let stored = signed_events(40, 4, 11_000_000);
    let relay = start_relay(seeded_db(&stored).await, 1_000, 0).await;
    let url = relay.url().await;
    let (tap, client) = tapped_client(std::slice::from_ref(&url), Default::default()).await;
    let mut rx = client.notifications();
    let hour = Some(Duration::from_secs(3_600));

    // ExitOnEOSE: every stored event in the notifications, then closed.
    let out = client
        .subscribe(all_notes(), Some(AutoCloseOptions::default()))
        .await
        .unwrap();
    assert!(tap.owns(&out.val));
    let got = events_for(&mut rx, &out.val, stored.len()).await;
    assert_eq!(got, stored.iter().map(|e| e.id).collect());
    wait_closed(&tap, &out.val).await;

    // WaitForEvents(5) with a 1 h timeout: closed after 5 events.
    let opts = AutoCloseOptions::default()
        .exit_policy(ReqExitPolicy::WaitForEvents(5))
        .timeout(hour);
    let out = client.subscribe(all_notes(), Some(opts)).await.unwrap();
    wait_closed(&tap, &out.val).await;

    // WaitDurationAfterEOSE(1 h), ended by the idle timeout; a long-lived subscription opened
    // beside it gets the live event sent afterwards, the closed one does not.
    let opts = AutoCloseOptions::default()
        .exit_policy(ReqExitPolicy::WaitDurationAfterEOSE(Duration::from_secs(
            3_600,
        )))
        .idle_timeout(Some(Duration::from_millis(300)));
    let idle = client.subscribe(all_notes(), Some(opts)).await.unwrap();
    let live = client.subscribe(all_notes(), None).await.unwrap();
    wait_closed(&tap, &idle.val).await;
    assert!(tap.is_registered(&live.val));
    let late = signed_events(1, 1, 12_000_000).remove(0);
    relay.notify_event(late.clone());
    let mut copies: HashMap<SubscriptionId, usize> = HashMap::new();
    loop {
        if let Ok(RelayPoolNotification::Message {
            message:
                RelayMessage::Event {
                    subscription_id,
                    event,
                },
            ..
        }) = bounded("live copy", rx.recv()).await
        {
            if event.id == late.id {
                *copies.entry(subscription_id.into_owned()).or_default() += 1;
                if copies.contains_key(&live.val) {
                    break;
                }
            }
        }
    }
    assert!(!copies.contains_key(&idle.val), "{copies:?}");

    // WaitDurationAfterEOSE(1 h), ended by the overall timeout.
    let opts = AutoCloseOptions::default()
        .exit_policy(ReqExitPolicy::WaitDurationAfterEOSE(Duration::from_secs(
            3_600,
        )))
        .timeout(Some(Duration::from_millis(500)));
    let out = client.subscribe(all_notes(), Some(opts)).await.unwrap();
    wait_closed(&tap, &out.val).await;

    // None of it went through the SDK's verification.
    assert_eq!(tap.stats().passthrough_events, 0);
    client.unsubscribe(&live.val).await;
    client.shutdown().await;
    relay.shutdown();
}
