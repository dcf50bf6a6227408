//! Shared helpers: local relays on 127.0.0.1, signed and forged events, tapped clients.
#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::time::Duration;

use nostr_relay_builder::prelude::{LocalRelay, RateLimit, RelayBuilder};
use nostr_sdk::prelude::*;
use nostr_verify_sdk::{
    BatchVerifyTransport, DefaultWebsocketTransport, TapOptions, VerifiedClient,
};

#[path = "../../../tests/common/scale.rs"]
mod scale;
#[allow(unused_imports)] // not every suite scales its counts
pub use scale::scale;

/// Generous bound for anything that should finish quickly.
pub const BOUND: Duration = Duration::from_secs(60);

/// Awaits `f` or panics after [`BOUND`].
pub async fn bounded<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(BOUND, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: not done within {BOUND:?}"),
    }
}

/// `n` text notes from `authors` keys, distinct timestamps.
pub fn signed_events(n: usize, authors: usize, base: u64) -> Vec<Event> {
    let keys: Vec<Keys> = (0..authors.max(1)).map(|_| Keys::generate()).collect();
    (0..n)
        .map(|i| {
            EventBuilder::new(Kind::TextNote, format!("note {i} of {base}"))
                .custom_created_at(Timestamp::from(base + i as u64))
                .sign_with_keys(&keys[i % keys.len()])
                .expect("sign")
        })
        .collect()
}

/// Signed, then content changed: the id no longer matches.
pub fn bad_id(mut ev: Event) -> Event {
    ev.content.push_str(" (edited)");
    ev
}

/// Signature of another event: id right, signature wrong.
pub fn bad_sig(mut ev: Event, other: &Event) -> Event {
    ev.sig = other.sig;
    ev
}

/// The same event with one bit of its signature flipped: id right, signature bytes differ.
pub fn mangled_sig(ev: &Event) -> Event {
    let sig = ev.sig.to_string();
    let last = sig.chars().last().expect("hex");
    let flipped = if last == '0' { '1' } else { '0' };
    let json = ev
        .as_json()
        .replacen(&sig, &format!("{}{flipped}", &sig[..sig.len() - 1]), 1);
    let out = Event::from_json(json).expect("still parses");
    assert_eq!(out.id, ev.id);
    assert_ne!(out.sig, ev.sig);
    out
}

/// A relay database holding `events` as given (no verification, so forged events can be seeded).
pub async fn seeded_db(events: &[Event]) -> MemoryDatabase {
    let db = MemoryDatabase::with_opts(MemoryDatabaseOptions {
        events: true,
        max_events: None,
    });
    for e in events {
        db.save_event(e).await.expect("seed");
    }
    db
}

/// A local relay on 127.0.0.1 serving `db` (port 0: any free port).
pub async fn start_relay(db: MemoryDatabase, max: usize, port: u16) -> LocalRelay {
    let mut builder = RelayBuilder::default()
        .database(db)
        .max_filter_limit(max + 100)
        .default_filter_limit(max + 100)
        .rate_limit(RateLimit {
            max_reqs: 500,
            notes_per_minute: 1_000_000,
        });
    if port != 0 {
        builder = builder.port(port);
    }
    let relay = LocalRelay::new(builder);
    relay.run().await.expect("relay runs");
    relay
}

/// A tapped client connected to `urls` (every connection must succeed).
pub async fn tapped_client(
    urls: &[RelayUrl],
    opts: TapOptions,
) -> (BatchVerifyTransport, VerifiedClient) {
    let tap = BatchVerifyTransport::with_options(DefaultWebsocketTransport, opts);
    let client = Client::builder().websocket_transport(tap.clone()).build();
    let client = VerifiedClient::new(client, &tap);
    connect(&client, urls).await;
    (tap, client)
}

/// Adds and connects `urls`; asserts all connected.
pub async fn connect(client: &Client, urls: &[RelayUrl]) {
    for u in urls {
        client.add_relay(u.clone()).await.expect("add relay");
    }
    let out = client.try_connect(Duration::from_secs(10)).await;
    assert_eq!(out.success.len(), urls.len(), "connected: {out:?}");
}

/// A text-note filter wide enough for every test event.
pub fn all_notes() -> Filter {
    Filter::new().kind(Kind::TextNote)
}

/// Ids of `events` as a sorted vector.
pub fn ids<'a>(events: impl IntoIterator<Item = &'a Event>) -> Vec<EventId> {
    let mut v: Vec<EventId> = events.into_iter().map(|e| e.id).collect();
    v.sort();
    v
}

/// How a [`FakeRelay`] answers a NIP-77 `NEG-OPEN`.
#[derive(Debug, Clone, Copy)]
pub enum NegAnswer {
    /// Never (a relay that ignores unknown commands).
    Silent,
    /// `NOTICE` "ERROR: bad msg: unknown cmd" (what relays without NIP-77 say).
    Notice,
}

/// A bare WebSocket server on 127.0.0.1 that speaks just enough NIP-01 for the SDK (EOSE for
/// every REQ, no events) and no negentropy: nostr-relay-builder's `LocalRelay` always answers
/// NEG-OPEN. Dropping it stops accepting.
pub struct FakeRelay {
    pub url: RelayUrl,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeRelay {
    pub async fn start(neg: NegAnswer) -> Self {
        use futures::{SinkExt, StreamExt};
        use tokio_tungstenite::tungstenite::Message;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = RelayUrl::parse(&format!("ws://{}", listener.local_addr().unwrap())).unwrap();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
                        return;
                    };
                    while let Some(Ok(msg)) = ws.next().await {
                        let Message::Text(text) = msg else { continue };
                        let Ok(v) = serde_json::from_str::<serde_json::Value>(text.as_str()) else {
                            continue;
                        };
                        let (cmd, sub) = (v[0].as_str().unwrap_or(""), v[1].clone());
                        let reply = match (cmd, neg) {
                            ("REQ", _) => Some(serde_json::json!(["EOSE", sub])),
                            ("NEG-OPEN", NegAnswer::Notice) => Some(serde_json::json!([
                                "NOTICE",
                                "ERROR: bad msg: unknown cmd NEG-OPEN"
                            ])),
                            _ => None,
                        };
                        if let Some(r) = reply {
                            if ws.send(Message::text(r.to_string())).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        FakeRelay { url, task }
    }
}
