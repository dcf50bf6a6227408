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

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use nostr_relay_builder::prelude::{LocalRelay, RateLimit, RelayBuilder};
use nostr_sdk::prelude::*;
use nostr_verify_sdk::{BatchVerifyTransport, VerifiedClient};

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

/// CPU time of the whole process (all threads), in microseconds.
/// The whole process's CPU time in microseconds.
fn process_cpu_us() -> u64 {
    cpu_time::ProcessTime::now().as_duration().as_micros() as u64
}

/// Child: serve the events of `file` from `relays` local relays; print their URLs; exit on
/// stdin EOF.
async fn serve(file: &str, relays: usize, events: usize) {
    let db = MemoryDatabase::with_opts(MemoryDatabaseOptions {
        events: true,
        max_events: None,
    });
    let f = std::fs::File::open(file).expect("event file");
    for line in BufReader::new(f).lines() {
        let ev = Event::from_json(line.expect("line")).expect("event json");
        db.save_event(&ev).await.expect("save");
    }
    let mut running = Vec::new();
    for _ in 0..relays {
        let builder = RelayBuilder::default()
            .database(db.clone())
            .max_filter_limit(events + 100)
            .default_filter_limit(events + 100)
            .rate_limit(RateLimit {
                max_reqs: 500,
                notes_per_minute: 1_000_000,
            });
        let relay = LocalRelay::new(builder);
        relay.run().await.expect("relay");
        println!("{}", relay.url().await);
        running.push(relay);
    }
    println!("ready");
    std::io::stdout().flush().unwrap();
    tokio::task::spawn_blocking(|| {
        let mut s = String::new();
        while std::io::stdin()
            .read_line(&mut s)
            .map(|n| n > 0)
            .unwrap_or(false)
        {}
    })
    .await
    .unwrap();
    for r in running {
        r.shutdown();
    }
}

async fn connect(client: &Client, urls: &[RelayUrl]) {
    for u in urls {
        client.add_relay(u.clone()).await.unwrap();
    }
    let out = client.try_connect(Duration::from_secs(10)).await;
    assert_eq!(out.success.len(), urls.len());
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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let args = parse_args();
    if let Some(file) = &args.serve {
        serve(file, args.relays, args.events).await;
        return;
    }

    // Events, signed here and handed to the child through a file.
    let keys: Vec<Keys> = (0..args.authors.max(1)).map(|_| Keys::generate()).collect();
    let path = std::env::temp_dir().join(format!("relay_ingest_{}.jsonl", std::process::id()));
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        for i in 0..args.events {
            let ev = EventBuilder::new(Kind::TextNote, format!("relay_ingest note {i}"))
                .custom_created_at(Timestamp::from(1_700_000_000 + i as u64))
                .sign_with_keys(&keys[i % keys.len()])
                .unwrap();
            writeln!(f, "{}", ev.as_json()).unwrap();
        }
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--serve",
            path.to_str().unwrap(),
            "--relays",
            &args.relays.to_string(),
            "--events",
            &args.events.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn relay child");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut urls = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if line == "ready" {
            break;
        }
        urls.push(RelayUrl::parse(&line).unwrap());
    }
    println!(
        "relay_ingest: {} events, {} authors, {} relays (child pid {}), {} rounds",
        args.events,
        args.authors,
        urls.len(),
        child.id(),
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
        drop(child.stdin.take());
        let _ = child.wait();
        let _ = std::fs::remove_file(&path);
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
    drop(child.stdin.take());
    let _ = child.wait();
    let _ = std::fs::remove_file(&path);

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
