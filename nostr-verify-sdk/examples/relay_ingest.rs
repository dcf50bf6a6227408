//! Benchmark: client CPU per event: stock `Client::fetch_events` vs `VerifiedClient::fetch_events`.
//!
//! ```text
//! cargo run --profile bench -p nostr-verify-sdk --example relay_ingest -- --events 20000 --authors 50 --relays 2
//! ```
//!
//! The relays run in a child process (this binary re-executed with `--serve`), so the parent's
//! process CPU time (`CLOCK_PROCESS_CPUTIME_ID`, all threads) is the client's alone: parsing,
//! verification, database bookkeeping, channels. Each round builds fresh clients (cold caches),
//! connects outside the measured window, then measures one fetch of every event from every
//! relay. Rounds alternate stock / ours; medians are reported. The last line is one JSON object.

use std::time::Duration;

use nostr_sdk::prelude::*;
use nostr_verify_sdk::{BatchVerifyTransport, VerifiedClient};

#[path = "support/relays.rs"]
mod support;
use support::{connect, event_db, median, process_cpu_us, read_events, run_relays, Relays};

struct Args {
    events: usize,
    authors: usize,
    relays: usize,
    rounds: usize,
    serve: Option<String>,
    only: Option<String>,
}

fn parse_args() -> Args {
    let mut a = Args {
        events: 20_000,
        authors: 50,
        relays: 2,
        rounds: 5,
        serve: None,
        only: None,
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
            "--serve" => a.serve = Some(val(i)),
            // Profiling aid: run only one side (no comparison, no JSON line).
            "--only" => a.only = Some(val(i)),
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    a
}

/// Child: serve the events of `file` from `relays` local relays sharing one database; print
/// their URLs; exit on stdin EOF.
async fn serve(file: &str, relays: usize, events: usize) {
    let db = event_db();
    for ev in read_events(file) {
        db.save_event(&ev).await.expect("save");
    }
    run_relays(vec![db; relays], events).await;
}

const TIMEOUT: Duration = Duration::from_secs(300);

async fn stock_round(urls: &[RelayUrl]) -> (u64, Vec<EventId>) {
    let client = Client::default();
    connect(&client, urls).await;
    let t0 = process_cpu_us();
    let events = client
        .fetch_events(Filter::new().kind(Kind::TextNote), TIMEOUT)
        .await
        .unwrap();
    let cpu = process_cpu_us() - t0;
    client.shutdown().await;
    (cpu, events.iter().map(|e| e.id).collect())
}

async fn ours_round(urls: &[RelayUrl]) -> (u64, Vec<EventId>, nostr_verify_sdk::TapStats) {
    let tap = BatchVerifyTransport::default();
    let client = VerifiedClient::new(
        Client::builder().websocket_transport(tap.clone()).build(),
        &tap,
    );
    connect(&client, urls).await;
    let t0 = process_cpu_us();
    let events = client
        .fetch_events(Filter::new().kind(Kind::TextNote), TIMEOUT)
        .await
        .unwrap();
    let cpu = process_cpu_us() - t0;
    let stats = tap.stats();
    client.shutdown().await;
    (cpu, events.iter().map(|e| e.id).collect(), stats)
}

#[tokio::main]
async fn main() {
    let args = parse_args();
    if let Some(file) = &args.serve {
        serve(file, args.relays, args.events).await;
        return;
    }

    // Events, signed here and handed to the child through a file.
    let relays = Relays::start("relay_ingest", args.events, args.authors, args.relays);
    let urls = relays.urls.clone();
    println!(
        "relay_ingest: {} events, {} authors, {} relays (child pid {}), {} rounds",
        args.events,
        args.authors,
        urls.len(),
        relays.child.id(),
        args.rounds
    );

    let mut stock = Vec::new();
    let mut ours = Vec::new();
    let n = args.events as f64;
    if let Some(side) = &args.only {
        for round in 0..args.rounds {
            let cpu = if side == "stock" {
                stock_round(&urls).await.0
            } else {
                ours_round(&urls).await.0
            };
            println!("round {round}: {side} {:.1} us/event", cpu as f64 / n);
        }
        relays.stop();
        return;
    }
    for round in 0..args.rounds {
        let (cs, mut ids_s) = stock_round(&urls).await;
        let (co, mut ids_o, st) = ours_round(&urls).await;
        ids_s.sort();
        ids_o.sort();
        assert_eq!(
            ids_s.len(),
            args.events,
            "stock fetched {} events",
            ids_s.len()
        );
        assert_eq!(ids_s, ids_o, "stock and ours fetched different sets");
        println!(
            "round {round}: stock {:.1} us/event, ours {:.1} us/event (signatures checked {}, cache hits {}, deferred {}, batches {})",
            cs as f64 / n,
            co as f64 / n,
            st.signatures_checked,
            st.cache_hits,
            st.deferred,
            st.batches
        );
        stock.push(cs as f64 / n);
        ours.push(co as f64 / n);
    }
    relays.stop();

    let (s, o) = (median(stock), median(ours));
    println!(
        "median client CPU per distinct event: stock {s:.2} us, ours {o:.2} us, ratio {:.2}",
        s / o
    );
    println!(
        "{{\"events\":{},\"stock_cpu_us_per_event\":{:.2},\"ours_cpu_us_per_event\":{:.2},\"ratio\":{:.2}}}",
        args.events,
        s,
        o,
        s / o
    );
}
