//! A verdict per relay: forged events (bad id, bad signature, other signature bytes under a
//! genuine id) are counted against the relay that sent them, and `ForgedEventPolicy` counts,
//! disconnects or bans that relay; the honest relay's events still arrive. Real WebSockets on
//! 127.0.0.1 against nostr-relay-builder 0.44.1 `LocalRelay`s.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use nostr_relay_builder::LocalRelay;
use nostr_sdk::prelude::*;
use nostr_verify_sdk::{
    BatchVerifyTransport, DropReason, ForgedEventPolicy, TapStats, VerifiedClient,
    VerifiedClientOptions,
};

use common::*;

const FETCH: Duration = Duration::from_secs(30);

/// An honest relay and a forger, with a tapped client connected to both.
struct HonestAndForger {
    honest: LocalRelay,
    forger: LocalRelay,
    hu: RelayUrl,
    fu: RelayUrl,
    /// The honest relay's events.
    honest_events: Vec<Event>,
    /// The forger's valid events.
    forger_valid: Vec<Event>,
    /// Forged events the forger serves (bad id, bad signature, other signature bytes under
    /// one of the honest relay's ids).
    forged: usize,
    tap: BatchVerifyTransport,
    client: VerifiedClient,
}

impl HonestAndForger {
    async fn start(base: u64, forged_each: usize, policy: ForgedEventPolicy) -> Self {
        let honest_events = signed_events(300, 10, base);
        let forger_valid = signed_events(100, 5, base + 10_000);
        let extra = signed_events(2 * forged_each, 3, base + 20_000);
        let mut served = forger_valid.clone();
        for i in 0..forged_each {
            served.push(bad_id(extra[2 * i].clone()));
            served.push(bad_sig(extra[2 * i + 1].clone(), &extra[2 * i]));
            served.push(mangled_sig(&honest_events[i]));
        }
        let forged = 3 * forged_each;
        let honest = start_relay(seeded_db(&honest_events).await, 1_000, 0).await;
        let forger = start_relay(seeded_db(&served).await, 1_000, 0).await;
        let (hu, fu) = (honest.url().await, forger.url().await);
        let tap = BatchVerifyTransport::default();
        let client = VerifiedClient::with_options(
            Client::builder().websocket_transport(tap.clone()).build(),
            &tap,
            VerifiedClientOptions {
                forged_policy: policy,
                ..Default::default()
            },
        );
        connect(&client, &[hu.clone(), fu.clone()]).await;
        HonestAndForger {
            honest,
            forger,
            hu,
            fu,
            honest_events,
            forger_valid,
            forged,
            tap,
            client,
        }
    }

    async fn status(&self, url: &RelayUrl) -> RelayStatus {
        self.client.relay(url).await.expect("relay").status()
    }

    /// Waits (bounded) until `url`'s status satisfies `f`.
    async fn wait_status(&self, url: &RelayUrl, f: impl Fn(RelayStatus) -> bool) -> RelayStatus {
        bounded("relay status", async {
            loop {
                let s = self.status(url).await;
                if f(s) {
                    return s;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
    }

    async fn shutdown(self) {
        self.client.shutdown().await;
        self.honest.shutdown();
        self.forger.shutdown();
    }
}

fn sum(a: TapStats, b: TapStats) -> (u64, u64, u64, u64) {
    (
        a.received + b.received,
        a.delivered + b.delivered,
        a.invalid_id + b.invalid_id,
        a.invalid_signature + b.invalid_signature,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_events_are_counted_against_the_relay_that_sent_them() {
    let r = HonestAndForger::start(1_000_000, 10, ForgedEventPolicy::Count).await;
    let got = bounded("fetch", r.client.fetch_events(all_notes(), FETCH))
        .await
        .unwrap();
    let mut want = r.honest_events.clone();
    want.extend(r.forger_valid.iter().cloned());
    assert_eq!(
        ids(got.iter()),
        ids(&want),
        "every valid event, no forged one"
    );

    let per = r.tap.relay_stats();
    assert_eq!(per.len(), 2, "{per:?}");
    let (h, f) = (per[&r.hu], per[&r.fu]);
    // The honest relay: everything it sent was delivered, nothing counted against it.
    assert_eq!(h.received, r.honest_events.len() as u64);
    assert_eq!(h.delivered, r.honest_events.len() as u64);
    assert_eq!(h.forged(), 0);
    // The forger: its valid events delivered, every forged one counted against it, by reason.
    assert_eq!(f.received, (r.forger_valid.len() + r.forged) as u64);
    assert_eq!(f.delivered, r.forger_valid.len() as u64);
    assert_eq!(f.dropped(DropReason::InvalidId), 10);
    assert_eq!(f.dropped(DropReason::InvalidSignature), 20);
    assert_eq!(f.forged(), r.forged as u64);
    // The per-relay entries add up to the tap's totals.
    let t = r.tap.stats();
    assert_eq!(
        sum(h, f),
        (t.received, t.delivered, t.invalid_id, t.invalid_signature)
    );
    assert_eq!(r.tap.relay_stats_for(&r.fu), f);
    // Count only: both relays stay connected.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(r.status(&r.fu).await, RelayStatus::Connected);
    assert_eq!(r.status(&r.hu).await, RelayStatus::Connected);
    r.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnect_policy_disconnects_the_forger_and_keeps_the_honest_relay() {
    let r = HonestAndForger::start(2_000_000, 10, ForgedEventPolicy::Disconnect).await;
    let got = bounded("fetch", r.client.fetch_events(all_notes(), FETCH))
        .await
        .unwrap();
    // The honest relay's events all arrive (the forger may be cut off before all of its own
    // valid ones did); nothing forged does.
    let got: HashSet<EventId> = got.iter().map(|e| e.id).collect();
    assert!(r.honest_events.iter().all(|e| got.contains(&e.id)));
    let valid: HashSet<EventId> = r
        .honest_events
        .iter()
        .chain(&r.forger_valid)
        .map(|e| e.id)
        .collect();
    assert!(got.is_subset(&valid));
    assert!(r.tap.relay_stats_for(&r.fu).forged() >= 1);
    let s = r.wait_status(&r.fu, |s| s == RelayStatus::Terminated).await;
    assert_eq!(s, RelayStatus::Terminated);
    assert_eq!(r.status(&r.hu).await, RelayStatus::Connected);
    assert_eq!(r.tap.relay_stats_for(&r.hu).forged(), 0);
    // Still usable: a second fetch from the honest relay alone.
    let again = bounded(
        "fetch again",
        r.client
            .fetch_events_from([r.hu.clone()], all_notes(), FETCH),
    )
    .await
    .unwrap();
    assert_eq!(ids(again.iter()), ids(&r.honest_events));
    r.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ban_after_n_bans_at_the_threshold_and_not_before() {
    // The forger serves 3 x 2 = 6 forged events.
    let r = HonestAndForger::start(3_000_000, 2, ForgedEventPolicy::BanAfter(6)).await;
    assert_eq!(r.forged, 6);
    let got = bounded("fetch", r.client.fetch_events(all_notes(), FETCH))
        .await
        .unwrap();
    let got: HashSet<EventId> = got.iter().map(|e| e.id).collect();
    assert!(r.honest_events.iter().all(|e| got.contains(&e.id)));
    assert_eq!(r.tap.relay_stats_for(&r.fu).forged(), 6);
    let s = r.wait_status(&r.fu, |s| s == RelayStatus::Banned).await;
    assert_eq!(s, RelayStatus::Banned);
    // A banned relay does not come back.
    assert!(r
        .client
        .try_connect_relay(&r.fu, Duration::from_secs(2))
        .await
        .is_err());
    assert_eq!(r.status(&r.fu).await, RelayStatus::Banned);
    assert_eq!(r.status(&r.hu).await, RelayStatus::Connected);
    r.shutdown().await;

    // One forged event short of the threshold: counted, not banned.
    let r = HonestAndForger::start(4_000_000, 2, ForgedEventPolicy::BanAfter(7)).await;
    let got = bounded("fetch", r.client.fetch_events(all_notes(), FETCH))
        .await
        .unwrap();
    assert_eq!(got.len(), r.honest_events.len() + r.forger_valid.len());
    assert_eq!(r.tap.relay_stats_for(&r.fu).forged(), 6);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(r.status(&r.fu).await, RelayStatus::Connected);
    r.shutdown().await;
}
