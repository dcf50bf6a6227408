//! `VerifiedClient::sync` / `sync_with` against nostr-relay-builder 0.44.1 `LocalRelay`s on
//! 127.0.0.1 (which answer NIP-77 negentropy) and a bare WebSocket relay that does not: the
//! SDK's reconciliation as a dry run, the download through the tap, forged events counted
//! against the relay that sent them, retries on another relay that listed an id, directions,
//! dry run, progress, timeouts.

mod common;

use std::collections::HashSet;
use std::time::Duration;

use nostr_relay_builder::LocalRelay;
use nostr_sdk::prelude::*;
use nostr_verify_sdk::{BatchVerifyTransport, DropReason, VerifiedClient, VerifiedSyncOptions};

use common::*;

/// A tapped client whose database keeps whole events (so negentropy sees what it has).
async fn event_db_client(
    urls: &[RelayUrl],
    db: MemoryDatabase,
) -> (BatchVerifyTransport, VerifiedClient) {
    let tap = BatchVerifyTransport::default();
    let client = VerifiedClient::new(
        Client::builder()
            .websocket_transport(tap.clone())
            .database(db)
            .build(),
        &tap,
    );
    connect(&client, urls).await;
    (tap, client)
}

fn empty_event_db() -> MemoryDatabase {
    MemoryDatabase::with_opts(MemoryDatabaseOptions {
        events: true,
        max_events: None,
    })
}

async fn db_ids(client: &Client) -> Vec<EventId> {
    let evs = client.database().query(all_notes()).await.unwrap();
    ids(evs.iter())
}

fn set(evs: &[Event]) -> HashSet<EventId> {
    evs.iter().map(|e| e.id).collect()
}

/// Three relays: `a` and `b` with overlapping valid sets and forged events of their own, `c`
/// with only copies of some of `b`'s events under their genuine ids and other signature
/// bytes. `c` is asked first, so at least one of its forged copies is requested from it and
/// must be fetched again from `b`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_stores_every_valid_event_once_and_no_forged_one() {
    let n = 1_000 * scale();
    let valid = signed_events(n, 20, 5_000_000);
    let extra = signed_events(30, 3, 6_000_000);
    let forged_a: Vec<Event> = (0..10)
        .flat_map(|i| {
            [
                bad_id(extra[2 * i].clone()),
                bad_sig(extra[2 * i + 1].clone(), &extra[0]),
            ]
        })
        .collect();
    let forged_b: Vec<Event> = (20..25)
        .flat_map(|i| {
            [
                bad_id(extra[i].clone()),
                bad_sig(extra[i + 5].clone(), &extra[0]),
            ]
        })
        .collect();
    let a_valid = &valid[..n * 6 / 10];
    let b_valid = &valid[n * 4 / 10..];
    let c_copies: Vec<Event> = valid[n - 50..].iter().map(mangled_sig).collect();
    let mut a_all = a_valid.to_vec();
    a_all.extend(forged_a.iter().cloned());
    let mut b_all = b_valid.to_vec();
    b_all.extend(forged_b.iter().cloned());
    let ra = start_relay(seeded_db(&a_all).await, n, 0).await;
    let rb = start_relay(seeded_db(&b_all).await, n, 0).await;
    let rc = start_relay(seeded_db(&c_copies).await, n, 0).await;
    let (ua, ub, uc) = (ra.url().await, rb.url().await, rc.url().await);
    let (tap, client) =
        event_db_client(&[ua.clone(), ub.clone(), uc.clone()], empty_event_db()).await;

    let opts = VerifiedSyncOptions::new().chunk_size(97);
    let out = bounded(
        "sync",
        client.sync_with([uc.clone(), ua.clone(), ub.clone()], all_notes(), &opts),
    )
    .await
    .unwrap();
    assert_eq!(
        out.success,
        HashSet::from([ua.clone(), ub.clone(), uc.clone()])
    );
    assert!(out.failed.is_empty(), "{:?}", out.failed);
    // Reconciliation: the relays' ids (claimed ones, forged included), nothing local.
    let mut remote = set(&valid);
    remote.extend(set(&forged_a));
    remote.extend(set(&forged_b));
    assert_eq!(out.val.remote, remote);
    assert!(out.val.local.is_empty());
    assert!(out.val.sent.is_empty() && out.val.send_failures.is_empty());
    assert_eq!(out.val.received, set(&valid));

    // The database holds every valid event, with its genuine signature, and nothing else.
    assert_eq!(db_ids(&client).await, ids(&valid));
    let stored = client.database().query(all_notes()).await.unwrap();
    let genuine: HashSet<(EventId, Signature)> = valid.iter().map(|e| (e.id, e.sig)).collect();
    assert!(stored.iter().all(|e| genuine.contains(&(e.id, e.sig))));

    // Each valid event was downloaded and delivered once (overlaps fetched from one relay).
    let st = tap.stats();
    assert_eq!(st.delivered, n as u64);
    // Forged events counted against the relay that sent them.
    let (sa, sb, sc) = (
        tap.relay_stats_for(&ua),
        tap.relay_stats_for(&ub),
        tap.relay_stats_for(&uc),
    );
    assert_eq!(sa.forged(), forged_a.len() as u64);
    assert_eq!(sa.dropped(DropReason::InvalidId), 10);
    assert_eq!(sb.forged(), forged_b.len() as u64);
    assert!(sc.received >= 1, "no id was asked of the copies' relay");
    assert_eq!(sc.forged(), sc.received, "c sent only forged copies");
    assert_eq!(sc.delivered, 0);
    // c's forged copies were fetched again from b.
    assert_eq!(sa.delivered + sb.delivered, n as u64);
    // The SDK verified nothing itself.
    assert_eq!(st.passthrough_events, 0);

    // A second sync: the database has every valid event, so only the forged ids are missing;
    // they are asked for again and dropped again, nothing is stored twice.
    let out2 = bounded(
        "sync 2",
        client.sync_with([ua.clone(), ub.clone(), uc.clone()], all_notes(), &opts),
    )
    .await
    .unwrap();
    let mut forged_ids = set(&forged_a);
    forged_ids.extend(set(&forged_b));
    assert_eq!(out2.val.remote, forged_ids);
    assert!(out2.val.received.is_empty());
    assert_eq!(db_ids(&client).await, ids(&valid));
    assert_eq!(tap.stats().delivered, n as u64);
    client.shutdown().await;
    for r in [ra, rb, rc] {
        r.shutdown();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_downloads_nothing_and_progress_adds_up() {
    let valid = signed_events(300, 7, 7_000_000);
    let relay = start_relay(seeded_db(&valid).await, 1_000, 0).await;
    let url = relay.url().await;
    let (tap, client) = event_db_client(std::slice::from_ref(&url), empty_event_db()).await;

    let out = bounded(
        "dry run",
        client.sync(all_notes(), &VerifiedSyncOptions::new().dry_run()),
    )
    .await
    .unwrap();
    assert_eq!(out.val.remote, set(&valid));
    assert!(out.val.received.is_empty());
    assert!(db_ids(&client).await.is_empty());
    assert_eq!(tap.stats().received, 0);

    let (tx, rx) = SyncProgress::channel();
    let opts = VerifiedSyncOptions::new().chunk_size(64).progress(tx);
    let out = bounded("sync", client.sync(all_notes(), &opts))
        .await
        .unwrap();
    assert_eq!(out.val.received, set(&valid));
    let p = *rx.borrow();
    assert_eq!((p.total, p.current), (300, 300));
    assert_eq!(db_ids(&client).await, ids(&valid));
    client.shutdown().await;
    relay.shutdown();
}

/// `Up` sends through the SDK and downloads nothing; `Both` sends and downloads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_goes_through_the_sdk_and_both_does_both() {
    let mine = signed_events(40, 4, 8_000_000);
    let theirs = signed_events(60, 4, 8_100_000);
    for direction in [SyncDirection::Up, SyncDirection::Both] {
        let relay_db = seeded_db(&theirs).await;
        let relay = start_relay(relay_db.clone(), 1_000, 0).await;
        let url = relay.url().await;
        let (_tap, client) =
            event_db_client(std::slice::from_ref(&url), seeded_db(&mine).await).await;
        let opts = VerifiedSyncOptions::new().direction(direction);
        let out = bounded("sync", client.sync(all_notes(), &opts))
            .await
            .unwrap();
        assert_eq!(out.val.local, set(&mine), "{direction:?}");
        assert_eq!(out.val.remote, set(&theirs), "{direction:?}");
        assert_eq!(out.val.sent, set(&mine), "{direction:?}");
        assert!(out.val.send_failures.is_empty());
        let on_relay = relay_db.query(all_notes()).await.unwrap();
        let mut both = mine.clone();
        both.extend(theirs.iter().cloned());
        assert_eq!(ids(on_relay.iter()), ids(&both), "{direction:?}");
        if direction == SyncDirection::Up {
            assert!(out.val.received.is_empty());
            assert_eq!(db_ids(&client).await, ids(&mine));
        } else {
            assert_eq!(out.val.received, set(&theirs));
            assert_eq!(db_ids(&client).await, ids(&both));
        }
        client.shutdown().await;
        relay.shutdown();
    }
}

/// A relay that ignores NEG-OPEN fails at the initial timeout, one that answers with an
/// "unknown cmd" notice fails at once; the negentropy relay beside them syncs fully. An
/// overall timeout ends a call whose initial timeout is longer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relays_without_negentropy_fail_without_hanging() {
    let valid = signed_events(200, 5, 9_000_000);
    let relay: LocalRelay = start_relay(seeded_db(&valid).await, 1_000, 0).await;
    let good = relay.url().await;
    let silent = FakeRelay::start(NegAnswer::Silent).await;
    let notice = FakeRelay::start(NegAnswer::Notice).await;
    let urls = [good.clone(), silent.url.clone(), notice.url.clone()];
    let (_tap, client) = event_db_client(&urls, empty_event_db()).await;

    let opts = VerifiedSyncOptions::new().initial_timeout(Duration::from_secs(2));
    let out = bounded("sync", client.sync(all_notes(), &opts))
        .await
        .unwrap();
    assert_eq!(out.success, HashSet::from([good.clone()]));
    assert_eq!(out.failed.len(), 2, "{:?}", out.failed);
    assert!(
        out.failed[&silent.url].contains("timeout"),
        "{:?}",
        out.failed
    );
    assert!(
        out.failed[&notice.url].contains("not supported"),
        "{:?}",
        out.failed
    );
    assert_eq!(out.val.received, set(&valid));
    assert_eq!(db_ids(&client).await, ids(&valid));

    // The overall timeout cuts the silent relay's 1 h initial timeout short.
    let opts = VerifiedSyncOptions::new()
        .initial_timeout(Duration::from_secs(3_600))
        .timeout(Some(Duration::from_secs(3)));
    let out = bounded(
        "sync with timeout",
        client.sync_with([good.clone(), silent.url.clone()], all_notes(), &opts),
    )
    .await
    .unwrap();
    assert_eq!(out.success, HashSet::from([good.clone()]));
    assert_eq!(out.failed[&silent.url], "timeout");
    client.shutdown().await;
    relay.shutdown();
}
