//! What the relay benchmarks (`relay_ingest`, `relay_sync`) share: the relay child process
//! (this binary re-executed with `--serve`: its relays, its start-up and its stop), the
//! process CPU clock, the client's connection and the median. Included by `#[path = "support/relays.rs"] mod support;`.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nostr_relay_builder::prelude::{LocalRelay, RateLimit, RelayBuilder};
use nostr_sdk::prelude::*;

/// The whole process's CPU time (all threads), in microseconds.
pub(crate) fn process_cpu_us() -> u64 {
    cpu_time::ProcessTime::now().as_duration().as_micros() as u64
}

/// An in-memory database that keeps whole events.
pub(crate) fn event_db() -> MemoryDatabase {
    MemoryDatabase::with_opts(MemoryDatabaseOptions {
        events: true,
        max_events: None,
    })
}

/// The events of the JSON-lines file `file`.
pub(crate) fn read_events(file: &str) -> Vec<Event> {
    let f = std::fs::File::open(file).expect("event file");
    BufReader::new(f)
        .lines()
        .map(|l| Event::from_json(l.expect("line")).expect("event json"))
        .collect()
}

/// Child: runs one local relay per database (filter limits above `events`); prints their
/// URLs, then `ready`; stops them at stdin EOF.
pub(crate) async fn run_relays(dbs: Vec<MemoryDatabase>, events: usize) {
    let mut running = Vec::new();
    for db in dbs {
        let builder = RelayBuilder::default()
            .database(db)
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

/// The relay child process and the event file it serves.
pub(crate) struct Relays {
    /// The child (its stdin open until [`Relays::stop`]).
    pub(crate) child: Child,
    /// The relays' URLs.
    pub(crate) urls: Vec<RelayUrl>,
    path: PathBuf,
}

impl Relays {
    /// Signs `events` text notes (`"{name} note {i}"`) by `authors` keys, writes them to a
    /// file, and starts this binary with `--serve FILE --relays N --events N`, returning once
    /// its relays are ready.
    pub(crate) fn start(name: &str, events: usize, authors: usize, relays: usize) -> Self {
        let keys: Vec<Keys> = (0..authors.max(1)).map(|_| Keys::generate()).collect();
        let path = std::env::temp_dir().join(format!("{name}_{}.jsonl", std::process::id()));
        {
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            for i in 0..events {
                let ev = EventBuilder::new(Kind::TextNote, format!("{name} note {i}"))
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
                &relays.to_string(),
                "--events",
                &events.to_string(),
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
        Relays { child, urls, path }
    }

    /// Closes the child's stdin (its relays stop), waits for it, removes the event file.
    pub(crate) fn stop(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Adds `urls` to `client` and connects to all of them (panics otherwise).
pub(crate) async fn connect(client: &Client, urls: &[RelayUrl]) {
    for u in urls {
        client.add_relay(u.clone()).await.unwrap();
    }
    let out = client.try_connect(Duration::from_secs(10)).await;
    assert_eq!(out.success.len(), urls.len());
}

/// The median of `v` (the upper one of an even count).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}
