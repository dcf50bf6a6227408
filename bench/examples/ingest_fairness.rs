//! Benchmark: fairness of the ingest service: an honest source's latency alone, then while another
//! source floods the service at full speed with valid events, then with invalid signatures.
//!
//! ```text
//! cargo run --profile bench -p nostr-verify-bench --example ingest_fairness -- [ROUNDS] [WORKERS]
//! ```
//! ROUNDS honest rounds per setting (default 200), WORKERS worker threads (default 2). The
//! service has its default settings otherwise (batches of up to 512 events, 1 ms latency
//! budget, 8192 events of capacity).
//!
//! The honest source, on the main thread, repeats: enqueue 16 events, flush, await their 16
//! verdicts; its latency is the wall-clock time of one round (the time a client waits for its
//! OKs). The attacker runs on its own thread and enqueues as fast as back-pressure lets it,
//! dropping its tickets. Before the honest rounds start, the flood is given time to fill the
//! attacker's share of the service. Printed: median, p90 and maximum of the honest rounds, the
//! ratio of the medians against the alone run, and the service's counters.

use nostr::event::{Event, EventBuilder, FinalizeEvent, Kind};
use nostr::key::Keys;
use nostr_verify::ingest::{IngestConfig, IngestService, Source};
use nostr_verify::Verdict;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const HONEST_BATCH: usize = 16;

fn signed(keys: &Keys, n: usize, tag: &str) -> Vec<Event> {
    (0..n)
        .map(|i| {
            EventBuilder::new(Kind::TextNote, format!("{tag} {i}"))
                .finalize(keys)
                .expect("signed")
        })
        .collect()
}

/// The same events with one hex digit of each signature changed: right ids, bad signatures.
fn bad_signatures(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .map(|e| {
            let mut v: serde_json::Value = serde_json::from_str(&e.as_json()).expect("json");
            let mut sig = v["sig"].as_str().expect("sig").to_owned();
            let last = if sig.ends_with('0') { "1" } else { "0" };
            sig.replace_range(sig.len() - 1.., last);
            v["sig"] = serde_json::Value::String(sig);
            Event::from_json(v.to_string()).expect("event")
        })
        .collect()
}

/// Latencies of `rounds` honest rounds, sorted.
async fn honest_rounds(source: &Source, events: &[Event], rounds: usize) -> Vec<Duration> {
    let mut times = Vec::with_capacity(rounds);
    for r in 0..rounds {
        let start = Instant::now();
        let mut tickets = Vec::with_capacity(HONEST_BATCH);
        for e in events
            .iter()
            .cycle()
            .skip(r * HONEST_BATCH)
            .take(HONEST_BATCH)
        {
            tickets.push(source.enqueue(e.clone()).await.expect("open"));
        }
        source.flush();
        for t in tickets {
            assert_eq!(t.await.expect("verdict").verdict, Verdict::Valid);
        }
        times.push(start.elapsed());
    }
    times.sort();
    times
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(200, |a| a.parse().expect("ROUNDS"));
    let workers: usize = args.next().map_or(2, |a| a.parse().expect("WORKERS"));
    let honest_events = signed(&Keys::generate(), 256, "honest");
    let flood_valid = signed(&Keys::generate(), 1024, "flood");
    let flood_invalid = bad_signatures(&flood_valid);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "honest source: {rounds} rounds of {HONEST_BATCH} events; {workers} workers, default settings otherwise (load average {})",
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    let mut alone_median = None;
    for (name, flood) in [
        ("alone", None),
        ("valid flood", Some(&flood_valid)),
        ("invalid flood", Some(&flood_invalid)),
    ] {
        let service = IngestService::new(IngestConfig::default().workers(workers));
        let honest = service.source();
        rt.block_on(honest_rounds(&honest, &honest_events, 10)); // warm-up
        let stop = Arc::new(AtomicBool::new(false));
        let flooder = flood.map(|flood| {
            let attacker = service.source();
            let flood = flood.clone();
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                rt.block_on(async {
                    for e in flood.iter().cycle() {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        if attacker.enqueue(e.clone()).await.is_err() {
                            break;
                        }
                    }
                });
            })
        });
        if flooder.is_some() {
            std::thread::sleep(Duration::from_millis(500));
        }
        let before = service.stats();
        let times = rt.block_on(honest_rounds(&honest, &honest_events, rounds));
        let after = service.stats();
        stop.store(true, Ordering::Relaxed);
        drop(service);
        if let Some(f) = flooder {
            f.join().expect("flooder");
        }
        let median = times[times.len() / 2];
        let p90 = times[times.len() * 9 / 10];
        let max = times[times.len() - 1];
        let ratio = alone_median.map_or(String::new(), |a: Duration| {
            format!(
                "  median x{:.1} of alone",
                median.as_secs_f64() / a.as_secs_f64()
            )
        });
        alone_median.get_or_insert(median);
        println!(
            "  {name:<13}: median {:7.2} ms, p90 {:7.2} ms, max {:7.2} ms{ratio}",
            ms(median),
            ms(p90),
            ms(max)
        );
        println!(
            "                 during the rounds: {} events answered, {} batches, {} checked singly, {} demotions; queue at the end: {} events",
            after.answered - before.answered,
            after.batches - before.batches,
            after.single_events - before.single_events,
            after.demotions,
            after.queued_events
        );
    }
}
