//! A nostr-sdk 0.44 client with the batch-verifying tap: `VerifiedClient::fetch_events` over two
//! relays, every event's id recomputed and its signature batch-verified once across relays.
//!
//! ```text
//! cargo run -p nostr-verify-sdk --example client
//! ```
//!
//! Self-contained: it starts two local relays on 127.0.0.1 (nostr-relay-builder), publishes a
//! few hundred notes to both with a stock client, then fetches them through the tap. A real
//! client adds `wss://` relays instead.

use nostr_relay_builder::prelude::{LocalRelay, RateLimit, RelayBuilder};
use nostr_sdk::prelude::*;
use nostr_verify_sdk::{BatchVerifyTransport, VerifiedClient};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Two local relays, each holding the same 300 notes by 5 authors.
    let mut relays = Vec::new();
    for _ in 0..2 {
        // The default rate limit would refuse most of 300 notes a second from one client.
        let builder = RelayBuilder::default().rate_limit(RateLimit {
            max_reqs: 100,
            notes_per_minute: 100_000,
        });
        let relay = LocalRelay::new(builder);
        relay.run().await?;
        relays.push(relay);
    }
    let mut urls = Vec::new();
    for relay in &relays {
        urls.push(relay.url().await);
    }
    let publisher = Client::default();
    for url in &urls {
        publisher.add_relay(url.as_str()).await?;
    }
    publisher.connect().await;
    let authors: Vec<Keys> = (0..5).map(|_| Keys::generate()).collect();
    for i in 0..300 {
        let event = EventBuilder::text_note(format!("note {i}")).sign_with_keys(&authors[i % 5])?;
        publisher.send_event(&event).await?;
    }
    publisher.disconnect().await;

    // The client: the tap wraps the SDK's own WebSocket transport; `VerifiedClient` opens its
    // subscriptions through it. Everything else (connections, auth, reconnects) is the SDK's.
    let tap = BatchVerifyTransport::default();
    let client = Client::builder().websocket_transport(tap.clone()).build();
    let client = VerifiedClient::new(client, &tap);
    for url in &urls {
        client.add_relay(url.as_str()).await?;
    }
    client.connect().await;
    let filter = Filter::new().kind(Kind::TextNote).limit(1000);
    let events: Events = client.fetch_events(filter, Duration::from_secs(10)).await?;
    println!("{} verified events", events.len());
    println!("{:#?}", client.tap().stats());
    assert_eq!(events.len(), 300);
    client.client().disconnect().await;
    for relay in relays {
        relay.shutdown();
    }
    Ok(())
}
