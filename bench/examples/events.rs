//! Benchmark: verifying real Nostr events: `verify_batch()` against a loop of nostr's `Event::verify()`,
//! in the same run, then the ingest service's throughput with 1 and 2 worker threads.
//!
//! ```text
//! cargo run --profile bench -p nostr-verify-bench --example events -- [PATH] [REPS]
//! ```
//! PATH: one event per line (default `../shared/data/events-real.jsonl`); REPS interleaved
//! repetitions (default 5).
//!
//! * id hashing, `verify_batch()` and `Event::verify()`: thread CPU time
//!   (`CLOCK_THREAD_CPUTIME_ID`), median of REPS (min in brackets). Every repetition runs on a
//!   fresh thread, so the batch side starts with a cold key cache (a new thread-local
//!   `Verifier`); `verify_batch()` goes over the file in order, in chunks of 512.
//! * the ingest service: wall-clock time (the work runs on several threads), best of REPS,
//!   with 1 and 2 workers interleaved; 32 sources, each pipelining its share of the events
//!   (the corpus twice); process CPU time is printed beside it. Two settings: *cold*, a new
//!   service per run timed from its first event (new worker threads, empty key caches: the
//!   headline), and *warm*, the second pass through the same service.

use nostr::event::{Event, EventId};
use nostr_verify::ingest::{IngestConfig, IngestService, IngestStats};
use nostr_verify::{compute_id, id_preimage};
use nostr_verify::{Verdict, VerifyBatchExt};
use std::hint::black_box;
use std::time::Instant;
#[path = "../benches/support/cpu_time.rs"]
mod support;
use support::{median, min};

/// This thread's CPU time in seconds.
fn thread_cpu_seconds() -> f64 {
    cpu_time::ThreadTime::now().as_duration().as_secs_f64()
}

/// The whole process's CPU time in seconds.
fn process_cpu_seconds() -> f64 {
    cpu_time::ProcessTime::now().as_duration().as_secs_f64()
}

/// Runs `f` on a fresh thread; returns its result and the thread CPU seconds it took.
fn on_fresh_thread<R: Send>(f: impl FnOnce() -> R + Send) -> (R, f64) {
    std::thread::scope(|s| {
        s.spawn(|| {
            let t0 = thread_cpu_seconds();
            let r = black_box(f());
            (r, thread_cpu_seconds() - t0)
        })
        .join()
        .expect("benchmark thread")
    })
}

fn reference(events: &[Event]) -> Vec<Verdict> {
    events
        .iter()
        .map(|e| match e.verify() {
            Ok(()) => Verdict::Valid,
            Err(_) if !e.verify_id() => Verdict::InvalidId,
            Err(_) => Verdict::InvalidSignature,
        })
        .collect()
}

fn batched(events: &[Event]) -> Vec<Verdict> {
    events.chunks(512).flat_map(|c| c.verify_batch()).collect()
}

/// One timed pass through the ingest service.
#[derive(Clone, Copy)]
struct Run {
    wall: f64,
    process_cpu: f64,
    producer_cpu: f64,
    valid: u64,
    /// Counters of this pass alone.
    answered: u64,
    batches: u64,
    batched_events: u64,
}

/// A new service answering every event of `per_source` (sources send bursts of 64 in turn),
/// timed from its start: cold worker threads and key caches. With `warm`, the same events
/// go through once untimed first and the timed pass is the second one: what a long-running
/// relay sees once it has met its authors.
fn service_run(workers: usize, per_source: &[Vec<Event>], warm: bool) -> Run {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let service = IngestService::new(IngestConfig::default().workers(workers));
        if warm {
            service_pass(&service, per_source.to_vec()).await;
        }
        let run = service_pass(&service, per_source.to_vec()).await;
        service.shutdown().await;
        run
    })
}

/// One timed pass of `per_source` through `service` (the events are moved in).
async fn service_pass(service: &IngestService, per_source: Vec<Vec<Event>>) -> Run {
    let total: usize = per_source.iter().map(Vec::len).sum();
    let before: IngestStats = service.stats();
    let sources: Vec<_> = per_source.iter().map(|_| service.source()).collect();
    let wall0 = Instant::now();
    let cpu0 = process_cpu_seconds();
    let thread0 = thread_cpu_seconds();
    let mut tickets = Vec::with_capacity(total);
    let mut iters: Vec<_> = per_source.into_iter().map(Vec::into_iter).collect();
    // Round-robin over the sources, a burst of 64 events each turn, as events arrive from
    // many connections; batches form by size or by the 1 ms latency budget.
    let mut live = true;
    while live {
        live = false;
        for (s, it) in sources.iter().zip(iters.iter_mut()) {
            for e in it.by_ref().take(64) {
                tickets.push(s.enqueue(e).await.expect("open"));
                live = true;
            }
        }
    }
    for s in &sources {
        s.flush();
    }
    // The caller keeps the checked events (a relay stores or forwards them): freeing them is
    // not the service's work, so it happens after the clock stops.
    let mut valid = 0u64;
    let mut kept = Vec::with_capacity(total);
    for t in tickets {
        let checked = t.await.expect("verdict");
        valid += u64::from(checked.verdict.is_valid());
        kept.push(checked.event);
    }
    let wall = wall0.elapsed().as_secs_f64();
    let process_cpu = process_cpu_seconds() - cpu0;
    let producer_cpu = thread_cpu_seconds() - thread0;
    drop(kept);
    let after = service.stats();
    Run {
        wall,
        process_cpu,
        producer_cpu,
        valid,
        answered: after.answered - before.answered,
        batches: after.batches - before.batches,
        batched_events: after.batched_events - before.batched_events,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "../shared/data/events-real.jsonl".into());
    let reps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5).max(1);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut events = Vec::new();
    let mut unparsed = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match Event::from_json(line) {
            Ok(e) => events.push(e),
            Err(_) => unparsed += 1,
        }
    }
    let n = events.len();
    let bytes: usize = events.iter().map(|e| id_preimage(e).len()).sum();
    println!(
        "{path}: {n} events ({unparsed} lines did not parse), {:.1} MB of NIP-01 id preimages",
        bytes as f64 / 1e6
    );

    // Same verdicts first.
    let want = reference(&events);
    assert_eq!(
        batched(&events),
        want,
        "verify_batch disagrees with Event::verify"
    );
    let count = |v: Verdict| want.iter().filter(|&&w| w == v).count();
    println!(
        "verdicts (equal for both): {} valid, {} invalid id, {} invalid signature",
        count(Verdict::Valid),
        count(Verdict::InvalidId),
        count(Verdict::InvalidSignature)
    );

    // Id hashing alone, and SHA-256 alone over the same bytes (the floor).
    let preimages: Vec<Vec<u8>> = events.iter().map(id_preimage).collect();
    let (mut ours, mut theirs, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        use sha2::Digest;
        floor.push(
            on_fresh_thread(|| {
                preimages
                    .iter()
                    .map(|p| sha2::Sha256::digest(p)[0] as u64)
                    .sum::<u64>()
            })
            .1,
        );
        ours.push(
            on_fresh_thread(|| events.iter().map(|e| compute_id(e)[0] as u64).sum::<u64>()).1,
        );
        theirs.push(
            on_fresh_thread(|| {
                events
                    .iter()
                    .map(|e| {
                        EventId::compute(&e.pubkey, &e.created_at, &e.kind, &e.tags, &e.content)
                            .as_bytes()[0] as u64
                    })
                    .sum::<u64>()
            })
            .1,
        );
    }
    println!(
        "id hashing   compute_id: {:>6.3} µs/event, {:>5.0} MB/s [min {:.3}]   nostr EventId::compute: {:>6.3} µs/event [min {:.3}]   x{:.2}",
        median(&ours) * 1e6 / n as f64,
        bytes as f64 / median(&ours) / 1e6,
        min(&ours) * 1e6 / n as f64,
        median(&theirs) * 1e6 / n as f64,
        min(&theirs) * 1e6 / n as f64,
        median(&theirs) / median(&ours)
    );
    println!(
        "             SHA-256 alone over the same bytes: {:.3} µs/event, {:.0} MB/s",
        median(&floor) * 1e6 / n as f64,
        bytes as f64 / median(&floor) / 1e6
    );

    // Full verification, cold key cache every repetition.
    let (mut batch, mut single) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        single.push(on_fresh_thread(|| reference(&events)).1);
        batch.push(on_fresh_thread(|| batched(&events)).1);
    }
    let (mb, ms) = (median(&batch), median(&single));
    println!(
        "Event::verify loop:        {:>9.0} events/s  ({:.2} µs/event, min {:.2})",
        n as f64 / ms,
        ms * 1e6 / n as f64,
        min(&single) * 1e6 / n as f64
    );
    println!(
        "verify_batch (512/chunk):  {:>9.0} events/s  ({:.2} µs/event, min {:.2})   ratio x{:.2} (target >= 2.5)",
        n as f64 / mb,
        mb * 1e6 / n as f64,
        min(&batch) * 1e6 / n as f64,
        ms / mb
    );

    // The ingest service, 1 and 2 workers interleaved.
    let sources = 32;
    let mut per_source = vec![Vec::new(); sources];
    for round in 0..2 {
        for (i, e) in events.iter().enumerate() {
            per_source[(i / 64 + round) % sources].push(e.clone());
        }
    }
    let total: usize = per_source.iter().map(Vec::len).sum();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "ingest service, {total} events from {sources} sources; best wall clock of {reps} (load average {}):",
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    for warm in [false, true] {
        // [1 worker, 2 workers], interleaved.
        let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..reps {
            for (k, workers) in [1, 2].into_iter().enumerate() {
                let run = service_run(workers, &per_source, warm);
                assert_eq!(run.valid as usize, 2 * count(Verdict::Valid));
                assert_eq!(run.answered as usize, total);
                runs[k].push(run);
            }
        }
        let best = |k: usize| {
            *runs[k]
                .iter()
                .min_by(|a, b| a.wall.total_cmp(&b.wall))
                .expect("reps >= 1")
        };
        println!(
            "  {}",
            if warm {
                "warm: the second pass through the same service (workers and key caches warm)"
            } else {
                "cold: a new service per run, timed from its first event (the headline)"
            }
        );
        let (r1, r2) = (best(0), best(1));
        for (workers, r) in [(1, r1), (2, r2)] {
            let worker_cpu = r.process_cpu - r.producer_cpu;
            println!(
                "    {workers} worker{}: {:>7.0} events/s wall ({:.3} s); CPU: process {:.3} s, producer thread {:.3} s, \
                 rest (workers + timer) {:.3} s = {:.2} µs/event; {} batches, mean {:.0} events",
                if workers == 1 { " " } else { "s" },
                total as f64 / r.wall,
                r.wall,
                r.process_cpu,
                r.producer_cpu,
                worker_cpu,
                worker_cpu * 1e6 / total as f64,
                r.batches,
                r.batched_events as f64 / r.batches.max(1) as f64,
            );
        }
        println!(
            "    2 workers / 1 worker, wall clock: x{:.2} (target >= 1.7; only meaningful on an idle machine)",
            r1.wall / r2.wall
        );
    }
}
