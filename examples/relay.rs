//! A relay's ingest loop on the ingest service (feature `tokio`): several connections submit
//! the events their clients publish, each gets its own verdict, and the relay answers each
//! event with NIP-01's `["OK", <id>, true|false, <message>]`.
//!
//! ```text
//! cargo run --example relay
//! ```
//!
//! The connections here are tasks that sign their own events (one of them a forger); a real
//! relay reads them off its WebSockets. The service batches what arrives together across
//! connections (per-peer buffers, flushed when full, after a 1 ms budget, or on `flush()`),
//! verifies on worker threads off the async executor, and keeps a failure score per peer, so a
//! forger's events slow only the forger's own.

use nostr::event::{Event, EventBuilder, FinalizeEvent, Kind};
use nostr::key::Keys;
use nostr_verify::ingest::{IngestConfig, IngestService};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service: IngestService<Event> = IngestService::new(IngestConfig::default());

    let mut connections = Vec::new();
    for (peer, forger) in [
        ("198.51.100.1", false),
        ("198.51.100.2", false),
        ("203.0.113.9", true),
    ] {
        // One source per connection, keyed by the peer's address: its failure score survives
        // reconnects.
        let source = service.source_for(peer);
        connections.push(tokio::spawn(async move {
            let keys = Keys::generate();
            let mut tickets = Vec::new();
            for i in 0..20 {
                let mut event = EventBuilder::new(Kind::TextNote, format!("{peer} says {i}"))
                    .finalize(&keys)
                    .expect("sign");
                if forger && i % 4 == 0 {
                    event.content.push_str(" (edited after signing)"); // its id no longer matches
                }
                // Waits only while admission is full (back-pressure).
                tickets.push(source.enqueue(event).await.expect("service running"));
            }
            source.flush(); // this client is done for now: do not wait for the latency budget
            let mut answers = Vec::new();
            let (mut accepted, mut rejected) = (0, 0);
            for ticket in tickets {
                let checked = ticket.await.expect("answered");
                let ok = checked.verdict.is_valid();
                if ok {
                    accepted += 1; // a real relay stores `checked.event` here
                } else {
                    rejected += 1;
                }
                let message = if ok {
                    String::new()
                } else {
                    format!("invalid: {}", checked.verdict)
                };
                answers.push(format!(r#"["OK","{}",{ok},"{message}"]"#, checked.event.id));
            }
            println!("{peer}: {accepted} accepted, {rejected} rejected");
            if let Some(first_rejection) = answers.iter().find(|a| a.contains(",false,")) {
                println!("  e.g. {first_rejection}");
            }
            (accepted, rejected)
        }));
    }
    let (mut accepted, mut rejected) = (0, 0);
    for connection in connections {
        let (a, r) = connection.await?;
        accepted += a;
        rejected += r;
    }
    assert_eq!((accepted, rejected), (55, 5));
    let stats = service.shutdown().await; // answers everything still pending
    println!(
        "{} events in {} batches ({} held), {} checked one at a time",
        stats.events, stats.batches, stats.batches_held, stats.single_events
    );
    Ok(())
}
