//! Benchmark: client CPU per synced event: stock `Client::sync` vs `VerifiedClient::sync`
//! (NIP-77 negentropy, then the download of the missing events).
//!
//! ```text
//! cargo run --release -p nostr-verify-sdk --example relay_sync -- --events 20000 --authors 50 --relays 2
//! ```
//!
//! The relays (nostr-relay-builder 0.44.1 `LocalRelay`s) run in a child process (this binary
//! re-executed with `--serve`), so the parent's process CPU time (`CLOCK_PROCESS_CPUTIME_ID`,
//! all threads) is the client's alone: reconciliation, frames, parsing, verification, the
//! database, channels. The relays hold overlapping sets: each an equal slice extended by a
//! fifth of a slice into its neighbours' (with 2 relays, the first 60 % and the last 60 %,
//! 20 % on both). Each round builds fresh clients, each
//! with a fresh in-memory database that keeps whole events (`MemoryDatabase` in event mode),
//! connects outside the measured window, then measures one sync of everything, stock
//! `Client::sync` then `VerifiedClient::sync`, and checks that both databases hold the same
//! event ids (all of them). Medians over the rounds; the last line is one JSON object.

use std::collections::BTreeSet;

use nostr_sdk::prelude::*;
use nostr_verify_sdk::{BatchVerifyTransport, TapStats, VerifiedClient, VerifiedSyncOptions};

#[path = "support/relays.rs"]
mod support;
use support::{connect, event_db, median, process_cpu_us, read_events, run_relays, Relays};

struct Args {
    events: usize,
    authors: usize,
    relays: usize,
    rounds: usize,
    chunk: usize,
    in_flight: usize,
    serve: Option<String>,
}

fn parse_args() -> Args {
    let mut a = Args {
        events: 20_000,
        authors: 50,
        relays: 2,
        rounds: 5,
        chunk: nostr_verify_sdk::DEFAULT_SYNC_CHUNK,
        in_flight: nostr_verify_sdk::DEFAULT_SYNC_IN_FLIGHT,
        serve: None,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let val = |i: usize| argv.get(i + 1).cloned().unwrap_or_default();
        match argv[i].as_str() {
            "--events" => a.events = val(i).parse().expect("--events N"),
            "--authors" => a.authors = val(i).parse().expect("--authors N"),
            "--relays" => a.relays = val(i).parse().expect("--relays N"),
            "--rounds" => a.rounds = val(i).parse().expect("--rounds N"),
            // VerifiedSyncOptions::chunk_size / in_flight (defaults 500 / 4).
            "--chunk" => a.chunk = val(i).parse().expect("--chunk N"),
            "--in-flight" => a.in_flight = val(i).parse().expect("--in-flight N"),
            "--serve" => a.serve = Some(val(i)),
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    a.relays = a.relays.max(1);
    a.rounds = a.rounds.max(1);
    a
}

/// The event indexes relay `r` of `relays` holds: an equal slice, extended by a fifth of a
/// slice into each neighbour's (with 2 relays: 0..60 % and 40..100 %, 20 % on both).
fn share(r: usize, relays: usize, events: usize) -> std::ops::Range<usize> {
    if relays == 1 {
        return 0..events;
    }
    let slice = events / relays;
    let ext = slice / 5;
    let start = if r == 0 { 0 } else { r * slice - ext };
    let end = if r + 1 == relays {
        events
    } else {
        (r + 1) * slice + ext
    };
    start..end.min(events)
}

/// Child: serve the events of `file` from `relays` local relays, each with its own database
/// holding its share; print their URLs; exit on stdin EOF.
async fn serve(file: &str, relays: usize, events: usize) {
    let all = read_events(file);
    let mut dbs = Vec::new();
    for r in 0..relays {
        let db = event_db();
        for ev in &all[share(r, relays, all.len())] {
            db.save_event(ev).await.expect("save");
        }
        dbs.push(db);
    }
    run_relays(dbs, events).await;
}

fn filter() -> Filter {
    Filter::new().kind(Kind::TextNote)
}

async fn stored_ids(client: &Client) -> BTreeSet<EventId> {
    let evs = client.database().query(filter()).await.unwrap();
    evs.iter().map(|e| e.id).collect()
}

/// Stock `Client::sync` until it reports every id it listed as received: nostr-relay-pool
/// 0.44.3's sync can return `Ok` with downloads missing (`received` smaller than `remote`), so
/// a stock client has to sync again (each pass reconciles against what the database holds by
/// then). Every pass is in the measured CPU. Returns the CPU, the stored ids and the passes.
async fn stock_round(urls: &[RelayUrl]) -> (u64, BTreeSet<EventId>, usize) {
    let client = Client::builder().database(event_db()).build();
    connect(&client, urls).await;
    let t0 = process_cpu_us();
    let mut passes = 0;
    loop {
        passes += 1;
        let out = client
            .sync(filter(), &SyncOptions::default())
            .await
            .unwrap();
        assert!(out.failed.is_empty(), "stock sync failed: {:?}", out.failed);
        let rec = out.val;
        if rec.received.len() >= rec.remote.len() || passes == 20 {
            break;
        }
    }
    let cpu = process_cpu_us() - t0;
    let ids = stored_ids(&client).await;
    client.shutdown().await;
    (cpu, ids, passes)
}

async fn ours_round(
    urls: &[RelayUrl],
    opts: &VerifiedSyncOptions,
) -> (u64, BTreeSet<EventId>, TapStats) {
    let tap = BatchVerifyTransport::default();
    let client = VerifiedClient::new(
        Client::builder()
            .websocket_transport(tap.clone())
            .database(event_db())
            .build(),
        &tap,
    );
    connect(&client, urls).await;
    let t0 = process_cpu_us();
    let out = client.sync(filter(), opts).await.unwrap();
    let cpu = process_cpu_us() - t0;
    assert!(out.failed.is_empty(), "our sync failed: {:?}", out.failed);
    let stats = tap.stats();
    let ids = stored_ids(&client).await;
    client.shutdown().await;
    (cpu, ids, stats)
}

#[tokio::main]
async fn main() {
    let args = parse_args();
    if let Some(file) = &args.serve {
        serve(file, args.relays, args.events).await;
        return;
    }

    // Events, signed here and handed to the child through a file.
    let relays = Relays::start("relay_sync", args.events, args.authors, args.relays);
    let urls = relays.urls.clone();
    let copies: usize = (0..args.relays)
        .map(|r| share(r, args.relays, args.events).len())
        .sum();
    println!(
        "relay_sync: {} events ({} copies over {} relays, child pid {}), {} authors, {} rounds",
        args.events,
        copies,
        urls.len(),
        relays.child.id(),
        args.authors,
        args.rounds
    );

    let mut stock = Vec::new();
    let mut ours = Vec::new();
    let mut same_database = true;
    let mut stock_passes = Vec::new();
    let opts = VerifiedSyncOptions::new()
        .chunk_size(args.chunk)
        .in_flight(args.in_flight);
    let n = args.events as f64;
    for round in 0..args.rounds {
        let (cs, ids_s, passes) = stock_round(&urls).await;
        let (co, ids_o, st) = ours_round(&urls, &opts).await;
        let same = ids_s == ids_o && ids_s.len() == args.events;
        same_database &= same;
        println!(
            "round {round}: stock {:.1} us/event ({} stored, {passes} sync passes), ours {:.1} us/event ({} stored; delivered {}, signatures checked {}, batches {}), same database: {same}",
            cs as f64 / n,
            ids_s.len(),
            co as f64 / n,
            ids_o.len(),
            st.delivered,
            st.signatures_checked,
            st.batches
        );
        stock.push(cs as f64 / n);
        ours.push(co as f64 / n);
        stock_passes.push(passes);
    }
    relays.stop();

    let (s, o) = (median(stock), median(ours));
    println!(
        "median client CPU per synced event: stock {s:.2} us, ours {o:.2} us, ratio {:.2}",
        s / o
    );
    println!(
        "{{\"events\":{},\"authors\":{},\"relays\":{},\"rounds\":{},\"stock_cpu_us_per_event\":{:.2},\"ours_cpu_us_per_event\":{:.2},\"ratio\":{:.2},\"same_database\":{},\"stock_sync_passes\":{:?},\"chunk\":{},\"in_flight\":{}}}",
        args.events,
        args.authors,
        args.relays,
        args.rounds,
        s,
        o,
        s / o,
        same_database,
        stock_passes,
        args.chunk,
        args.in_flight
    );
}
