//! The ingest service: verdicts equal `Event::verify` under concurrency, nothing lost or
//! answered twice, back-pressure, demotion and recovery, graceful shutdown.
#![cfg(feature = "tokio")]
#![allow(unreachable_pub)] // test-crate helper modules

mod common;
mod nostr_support;

use nostr_support::*;
use nostr_verify::ingest::{Checked, IngestConfig, IngestError, IngestService};
use nostr_verify::Verdict;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use std::time::Duration;

type Event = nostr::event::Event;

/// `n` events with their reference verdicts: mostly valid, some with a wrong id, some with a
/// bad signature (from several authors), plus real events when the data is present.
fn mixed_events(n: usize, seed: u64) -> Vec<(Event, Verdict)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let signers: Vec<Signer> = (0..5).map(|_| Signer::new(&mut rng)).collect();
    let mut values: Vec<serde_json::Value> = Vec::new();
    if let Some(dir) = common::data_dir() {
        values.extend(
            lines(&dir, "events-real.jsonl")
                .iter()
                .take(n / 2)
                .map(|l| serde_json::from_str(l).unwrap()),
        );
    }
    while values.len() < n {
        let s = &signers[rng.gen_range(0..signers.len())];
        let content = random_string(&mut rng, 40);
        let v = s.event(
            rng.gen_range(0..2_000_000_000),
            1,
            &[vec!["t".into(), "x".into()]],
            &content,
        );
        values.push(match rng.gen_range(0..10) {
            0 => mutate(&v, "content", &mut rng, &signers[0]),
            1 => mutate(&v, "sig", &mut rng, &signers[0]),
            _ => v,
        });
    }
    values
        .iter()
        .map(|v| {
            let e = V045::parse(&v.to_string()).unwrap();
            let r = V045::reference(&e);
            (e, r)
        })
        .collect()
}

fn only_valid(n: usize, seed: u64) -> Vec<Event> {
    let mut rng = StdRng::seed_from_u64(seed);
    let s = Signer::new(&mut rng);
    (0..n)
        .map(|i| V045::parse(&s.event(i as u64, 1, &[], &format!("ok {i}")).to_string()).unwrap())
        .collect()
}

fn bad_signature(seed: u64) -> Event {
    let mut rng = StdRng::seed_from_u64(seed);
    let s = Signer::new(&mut rng);
    let v = mutate(&s.event(1, 1, &[], "bad"), "sig", &mut rng, &s);
    V045::parse(&v.to_string()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_sources_interleaved_flushes_match_reference() {
    let events = Arc::new(mixed_events(1200 * common::scale(), 1));
    let service = IngestService::new(
        IngestConfig::default()
            .workers(2)
            .max_batch(32)
            .capacity(128) // well below the number of events: back-pressure is exercised
            .demote_after(1_000_000), // keep every source batching here
    );
    let sources = 16;
    let mut tasks = Vec::new();
    for s in 0..sources {
        let handle = service.handle();
        let events = Arc::clone(&events);
        tasks.push(tokio::spawn(async move {
            let source = handle.source();
            let mut rng = StdRng::seed_from_u64(100 + s as u64);
            let mut pending = Vec::new();
            let mut answered = 0usize;
            for (i, (e, want)) in events.iter().enumerate().filter(|(i, _)| i % sources == s) {
                pending.push((i, *want, source.enqueue(e.clone()).await.expect("open")));
                match rng.gen_range(0..20) {
                    0 => source.flush(), // an EOSE
                    1 => tokio::task::yield_now().await,
                    2 => {
                        // Await what is outstanding (a client waiting for OKs).
                        for (i, want, t) in pending.drain(..) {
                            let Checked { event, verdict } = t.await.expect("verdict");
                            assert_eq!(verdict, want, "event {i}");
                            assert_eq!(event, events[i].0, "event {i} came back");
                            answered += 1;
                        }
                    }
                    _ => {}
                }
            }
            source.flush();
            for (i, want, t) in pending {
                let Checked { event, verdict } = t.await.expect("verdict");
                assert_eq!(verdict, want, "event {i}");
                assert_eq!(event, events[i].0, "event {i} came back");
                answered += 1;
            }
            answered
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.expect("task");
    }
    assert_eq!(total, events.len());
    let stats = service.shutdown().await;
    assert_eq!(stats.events, events.len() as u64);
    assert_eq!(
        stats.answered,
        events.len() as u64,
        "each event answered exactly once"
    );
    assert_eq!(stats.batched_events, events.len() as u64);
    assert_eq!(
        (stats.queue_depth, stats.queued_events, stats.in_flight),
        (0, 0, 0)
    );
    assert!(stats.batches >= (events.len() / 32) as u64);
    assert!(
        stats.batches_held < stats.batches,
        "some batches had bad signatures"
    );
}

#[tokio::test]
async fn back_pressure_blocks_until_room() {
    let service = IngestService::new(
        IngestConfig::default()
            .workers(1)
            .capacity(4)
            .max_batch(100)
            .latency_budget(Duration::from_secs(3600)),
    );
    let source = service.source();
    let events = only_valid(5, 2);
    let mut tickets = Vec::new();
    for e in &events[..4] {
        tickets.push(source.enqueue(e.clone()).await.unwrap());
    }
    assert_eq!(service.stats().in_flight, 4);
    // Full: the fifth waits (no timer will flush for an hour).
    let fifth = source.enqueue(events[4].clone());
    tokio::pin!(fifth);
    assert!(tokio::time::timeout(Duration::from_millis(50), &mut fifth)
        .await
        .is_err());
    source.flush();
    for t in tickets {
        assert_eq!(t.await.unwrap().verdict, Verdict::Valid);
    }
    let t5 = fifth.await.unwrap();
    source.flush();
    assert_eq!(t5.await.unwrap().verdict, Verdict::Valid);
    assert_eq!(service.shutdown().await.answered, 5);
}

#[tokio::test]
async fn latency_budget_and_drop_flush() {
    let service = IngestService::new(
        IngestConfig::default()
            .workers(1)
            .latency_budget(Duration::from_millis(2)),
    );
    let events = only_valid(3, 3);
    // A lone event is answered once the budget expires, without any flush.
    let source = service.source();
    assert_eq!(
        source.submit(events[0].clone()).await.unwrap().verdict,
        Verdict::Valid
    );
    // Dropping a source flushes it, even with a budget of an hour.
    let service2 = IngestService::new(
        IngestConfig::default()
            .workers(1)
            .latency_budget(Duration::from_secs(3600)),
    );
    let s2 = service2.source();
    let t = s2.enqueue(events[1].clone()).await.unwrap();
    drop(s2);
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(30), t)
            .await
            .unwrap()
            .unwrap()
            .verdict,
        Verdict::Valid
    );
    assert_eq!(service.stats().batches, 1);
}

#[tokio::test]
async fn demotion_engages_and_recovers() {
    let demotion = Duration::from_millis(300);
    let service = IngestService::new(
        IngestConfig::default()
            .workers(1)
            .max_batch(4)
            .latency_budget(Duration::from_secs(3600))
            .demote_after(2)
            .demotion(demotion),
    );
    let attacker = service.source();
    let honest = service.source();
    let good = only_valid(64, 4);
    let mut good = good.into_iter();
    let bad = bad_signature(5);

    async fn batch(source: &nostr_verify::ingest::Source, events: Vec<Event>) -> Vec<Verdict> {
        let mut ts = Vec::new();
        for e in events {
            ts.push(source.enqueue(e).await.unwrap());
        }
        source.flush();
        let mut out = Vec::new();
        for t in ts {
            out.push(t.await.unwrap().verdict);
        }
        out
    }
    let mixed = |g: &mut dyn Iterator<Item = Event>| {
        vec![g.next().unwrap(), bad.clone(), g.next().unwrap()]
    };
    use Verdict::{InvalidSignature as Bad, Valid};

    // One failed batch: not yet demoted (demote_after = 2); a clean batch resets the count.
    assert_eq!(
        batch(&attacker, mixed(&mut good)).await,
        [Valid, Bad, Valid]
    );
    assert!(!attacker.is_demoted());
    assert_eq!(batch(&attacker, vec![good.next().unwrap()]).await, [Valid]);
    assert_eq!(
        batch(&attacker, mixed(&mut good)).await,
        [Valid, Bad, Valid]
    );
    assert!(!attacker.is_demoted());
    // Second consecutive failure: demoted.
    assert_eq!(
        batch(&attacker, mixed(&mut good)).await,
        [Valid, Bad, Valid]
    );
    assert!(attacker.is_demoted());
    let s = service.stats();
    assert_eq!(
        (s.demotions, s.batches, s.batches_held, s.single_events),
        (1, 4, 1, 0)
    );

    // While demoted: checked one at a time, same verdicts; the honest source still batches.
    assert_eq!(
        batch(&attacker, mixed(&mut good)).await,
        [Valid, Bad, Valid]
    );
    assert_eq!(
        batch(&honest, vec![good.next().unwrap(), good.next().unwrap()]).await,
        [Valid, Valid]
    );
    assert!(!honest.is_demoted());
    let s = service.stats();
    assert_eq!((s.single_events, s.batches, s.batches_held), (3, 5, 2));

    // After the demotion period: back to batches.
    tokio::time::sleep(demotion + Duration::from_millis(50)).await;
    assert!(!attacker.is_demoted());
    assert_eq!(
        batch(&attacker, vec![good.next().unwrap(), good.next().unwrap()]).await,
        [Valid, Valid]
    );
    let s = service.stats();
    assert_eq!(
        (s.recoveries, s.batches, s.batches_held, s.single_events),
        (1, 6, 3, 3)
    );
    assert_eq!(s.hit_rate(), 0.5);
    drop((attacker, honest));
    service.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drains_buffers_and_queue_then_refuses() {
    let service = IngestService::new(
        IngestConfig::default()
            .workers(2)
            .max_batch(16)
            .latency_budget(Duration::from_secs(3600)),
    );
    let handle = service.handle();
    let events = mixed_events(300, 6);
    let sources: Vec<_> = (0..7).map(|_| handle.source()).collect();
    let mut tickets = Vec::new();
    for (i, (e, want)) in events.iter().enumerate() {
        // Full batches go to the queue; the remainders stay buffered (no timer for an hour).
        tickets.push((*want, sources[i % 7].enqueue(e.clone()).await.unwrap()));
    }
    let stats = service.shutdown().await;
    assert_eq!(stats.answered, events.len() as u64);
    for (want, t) in tickets {
        assert_eq!(t.await.unwrap().verdict, want);
    }
    // Refused afterwards, with the event handed back.
    match sources[0].enqueue(events[0].0.clone()).await {
        Err(IngestError::Closed(e)) => assert_eq!(e, events[0].0),
        other => panic!("expected Closed, got {:?}", other.map(|_| ())),
    }
    assert!(matches!(
        handle.source().submit(events[1].0.clone()).await,
        Err(IngestError::Closed(_))
    ));
}

#[cfg(feature = "nostr-0-44")]
#[tokio::test]
async fn nostr_044_events_through_the_service() {
    let service: IngestService<nostr044::Event> =
        IngestService::new(IngestConfig::default().workers(1));
    let source = service.source();
    let mut tickets = Vec::new();
    for (e, _) in mixed_events(200, 7) {
        let e44 = V044::parse(&e.as_json()).unwrap();
        let want = V044::reference(&e44);
        tickets.push((want, source.enqueue(e44).await.unwrap()));
    }
    source.flush();
    for (want, t) in tickets {
        assert_eq!(t.await.unwrap().verdict, want);
    }
    drop(source);
    assert_eq!(service.shutdown().await.answered, 200);
}
