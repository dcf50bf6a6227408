//! `verify_batch()` and friends against each nostr release's own `Event::verify`, on the real
//! corpus, on mutated copies and on constructed events with every JSON escape.
//!
//! Every test body is generic over `Version` and runs for nostr 0.45 and (feature
//! `nostr-0-44`) nostr 0.44.

#![allow(unreachable_pub)] // test-crate helper modules

mod common;
#[path = "common/nostr.rs"]
mod nostr_support;

use nostr_support::*;
use nostr_verify::{compute_id, verify_iter, EventView};
use nostr_verify::{PartitionVerifiedExt, Verdict, VerifyBatchExt, VerifyEventExt};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeSet, HashSet};
use std::fmt::Display;

/// The five real events whose id does not match their content (shared/data README).
const INVALID_ID_LINES: [usize; 5] = [623, 1387, 1391, 1567, 1568];

fn parse_all<V: Version>(lines: &[String]) -> Vec<V::Event> {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| V::parse(l).unwrap_or_else(|e| panic!("{} line {}: {e}", V::NAME, i + 1)))
        .collect()
}

/// Checks every entry point against the reference on `events`, in several batch shapes.
fn check_all_forms<V: Version>(events: &[V::Event], what: &str)
where
    V::Event: VerifyEventExt,
    <V::Event as VerifyEventExt>::Error: Display,
{
    let want: Vec<Verdict> = events.iter().map(V::reference).collect();

    // Whole slice, chunks of 512 (the benchmark's shape), odd chunk sizes, one at a time.
    assert_eq!(
        events.verify_batch(),
        want,
        "{} {what}: whole slice",
        V::NAME
    );
    for size in [1, 7, 512] {
        let got: Vec<Verdict> = events.chunks(size).flat_map(|c| c.verify_batch()).collect();
        assert_eq!(got, want, "{} {what}: chunks of {size}", V::NAME);
    }
    for (c, w) in events.chunks(64).zip(want.chunks(64)) {
        assert_eq!(
            c.verify_all(),
            w.iter().all(|v| v.is_valid()),
            "{} {what}: verify_all",
            V::NAME
        );
    }

    // [&Event], an iterator, BTreeSet and HashSet (verdicts in their iteration order).
    let refs: Vec<&V::Event> = events.iter().collect();
    assert_eq!(refs.verify_batch(), want, "{} {what}: [&Event]", V::NAME);
    assert_eq!(verify_iter(events.iter()), want);
    let set: BTreeSet<V::Event> = events.iter().cloned().collect();
    let set_want: Vec<Verdict> = set.iter().map(V::reference).collect();
    assert_eq!(set.verify_batch(), set_want, "{} {what}: BTreeSet", V::NAME);
    assert_eq!(set.verify_all(), set_want.iter().all(|v| v.is_valid()));
    let hset: HashSet<V::Event> = events.iter().cloned().collect();
    let hset_want: Vec<Verdict> = hset.iter().map(V::reference).collect();
    assert_eq!(
        hset.verify_batch(),
        hset_want,
        "{} {what}: HashSet",
        V::NAME
    );

    // Single events: verdict and the exact error message of Event::verify.
    for (e, w) in events.iter().zip(&want) {
        assert_eq!(e.verdict_cached(), *w);
        let got = e.verify_cached().err().map(|e| e.to_string());
        assert_eq!(
            got,
            V::reference_message(e),
            "{} {what}: verify_cached",
            V::NAME
        );
    }

    // Partition: order kept on both sides, nothing lost.
    let (valid, rejected) = events.to_vec().partition_verified();
    let order: Vec<&V::Event> = events.iter().collect();
    assert_partition(&valid, &rejected, &order, &want);
}

/// Checks a `partition_verified` result against the verdicts `want` of the events in `order`:
/// the valid ones on one side and the rejected ones with their verdicts on the other, each in
/// that order, nothing lost.
fn assert_partition<'a, E: PartialEq + std::fmt::Debug + 'a>(
    valid: impl IntoIterator<Item = &'a E>,
    rejected: impl IntoIterator<Item = &'a (E, Verdict)>,
    order: &[&E],
    want: &[Verdict],
) {
    let side = |valid: bool| {
        order
            .iter()
            .zip(want)
            .filter(move |(_, w)| w.is_valid() == valid)
    };
    let want_valid: Vec<&E> = side(true).map(|(e, _)| *e).collect();
    assert_eq!(valid.into_iter().collect::<Vec<_>>(), want_valid);
    let want_rejected: Vec<(&E, Verdict)> = side(false).map(|(e, w)| (*e, *w)).collect();
    assert_eq!(
        rejected
            .into_iter()
            .map(|(e, v)| (e, *v))
            .collect::<Vec<_>>(),
        want_rejected
    );
}

fn real_corpus<V: Version>()
where
    V::Event: VerifyEventExt,
    <V::Event as VerifyEventExt>::Error: Display,
{
    let Some(dir) = common::data_dir() else {
        return;
    };
    let lines = lines(&dir, "events-real.jsonl");
    assert_eq!(lines.len(), 5882);
    let events = parse_all::<V>(&lines);
    let index = index(&dir, "events-real.index.tsv");
    assert_eq!(index.len(), events.len());

    // The reference agrees with the index, and our id with the reference id.
    for (e, &(line, id_ok, sig_ok)) in events.iter().zip(&index) {
        let want = if !id_ok {
            Verdict::InvalidId
        } else if !sig_ok {
            Verdict::InvalidSignature
        } else {
            Verdict::Valid
        };
        assert_eq!(V::reference(e), want, "{} line {line} vs index", V::NAME);
        assert_eq!(
            compute_id(e),
            V::reference_id(e),
            "{} line {line}: id",
            V::NAME
        );
    }

    // All the ids in one call on every SHA-256 path this machine runs (the lanes with the
    // corpus's mixed lengths); `verify_batch` below runs on the selected path, which CI
    // forces to each in turn (`NOSTR_VERIFY_SHA`).
    #[cfg(feature = "internals")]
    {
        use nostr_verify::backend::sha::{hash_many_from_on, Sha, IV};
        let preimages: Vec<Vec<u8>> = events.iter().map(nostr_verify::id_preimage).collect();
        let msgs: Vec<&[u8]> = preimages.iter().map(|p| &p[..]).collect();
        let want: Vec<[u8; 32]> = events.iter().map(V::reference_id).collect();
        for sha in Sha::available() {
            let mut got = vec![[0u8; 32]; msgs.len()];
            hash_many_from_on(sha, &IV, 0, &msgs, &mut got);
            assert_eq!(got, want, "{}: ids on {sha:?}", V::NAME);
        }
    }

    let verdicts = events.verify_batch();
    let bad: Vec<usize> = (0..verdicts.len())
        .filter(|&i| verdicts[i] != Verdict::Valid)
        .map(|i| i + 1)
        .collect();
    assert_eq!(bad, INVALID_ID_LINES, "{}: the five invalid ids", V::NAME);
    for l in INVALID_ID_LINES {
        assert_eq!(verdicts[l - 1], Verdict::InvalidId);
    }
    assert!(!events.verify_all());
    assert_eq!(
        events.iter().map(V::reference).collect::<Vec<_>>(),
        verdicts
    );
    // Every entry point on a sample (the whole corpus through each would take minutes with
    // a one-at-a-time verifier): every 8th event and the invalid ones.
    let sample: Vec<V::Event> = events
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 8 == 0 || INVALID_ID_LINES.contains(&(i + 1)))
        .map(|(_, e)| e.clone())
        .collect();
    check_all_forms::<V>(&sample, "events-real sample");
}

/// The vendored sample of real events (`tests/data/events-sample.jsonl`): runs in any clone.
fn real_sample<V: Version>()
where
    V::Event: VerifyEventExt,
    <V::Event as VerifyEventExt>::Error: Display,
{
    let dir = common::sample_dir();
    let lines = lines(&dir, "events-sample.jsonl");
    assert_eq!(lines.len(), 300);
    let events = parse_all::<V>(&lines);
    let index = index(&dir, "events-sample.index.tsv");
    assert_eq!(index.len(), events.len());
    for (e, &(line, id_ok, sig_ok)) in events.iter().zip(&index) {
        assert!(
            id_ok && sig_ok,
            "line {line}: the sample holds valid events only"
        );
        assert_eq!(V::reference(e), Verdict::Valid, "{} line {line}", V::NAME);
        assert_eq!(
            compute_id(e),
            V::reference_id(e),
            "{} line {line}: id",
            V::NAME
        );
    }
    assert_eq!(events.verify_batch(), vec![Verdict::Valid; events.len()]);
    assert!(events.verify_all());
    check_all_forms::<V>(&events, "events-sample");
}

fn embedded_corpus<V: Version>()
where
    V::Event: VerifyEventExt,
    <V::Event as VerifyEventExt>::Error: Display,
{
    let Some(dir) = common::data_dir() else {
        return;
    };
    let lines = lines(&dir, "events-real-embedded.jsonl");
    assert_eq!(lines.len(), 200);
    let events = parse_all::<V>(&lines);
    for (e, (line, id_ok, sig_ok)) in events
        .iter()
        .zip(index(&dir, "events-real-embedded.index.tsv"))
    {
        assert!(id_ok && sig_ok, "index line {line}");
        assert_eq!(V::reference(e), Verdict::Valid);
    }
    assert_eq!(events.verify_batch(), vec![Verdict::Valid; 200]);
    assert!(events.verify_all());
    // Lines 144 and 145: same id, two different valid signatures; both must verify.
    assert_eq!(events[143].id_bytes(), events[144].id_bytes());
    assert_ne!(events[143].sig_bytes(), events[144].sig_bytes());
    assert_eq!(
        events[143..145].verify_batch(),
        [Verdict::Valid, Verdict::Valid]
    );
    check_all_forms::<V>(&events, "events-real-embedded");
}

fn malformed<V: Version>() {
    let Some(dir) = common::data_dir() else {
        return;
    };
    let lines = lines(&dir, "events-real-malformed.jsonl");
    assert_eq!(lines.len(), 2);
    for (i, l) in lines.iter().enumerate() {
        let r = std::panic::catch_unwind(|| V::parse(l));
        match r {
            Ok(Err(_)) => {}
            Ok(Ok(_)) => panic!("{} malformed line {} parsed", V::NAME, i + 1),
            Err(_) => panic!("{} malformed line {} panicked", V::NAME, i + 1),
        }
    }
}

/// Valid constructed events whose strings need every JSON escape.
fn constructed<V: Version>(rng: &mut StdRng) -> Vec<serde_json::Value> {
    let signer = Signer::new(rng);
    let mut out = Vec::new();
    for s in tricky_strings() {
        out.push(signer.event(1_700_000_000, 1, &[], &s));
        out.push(signer.event(
            0,
            0,
            &[vec![s.clone()], vec!["p".into(), s.clone(), String::new()]],
            "x",
        ));
        out.push(signer.event(
            u64::MAX,
            u16::MAX,
            &[vec!["t".into(), s.clone()]],
            &format!("a{s}b{s}"),
        ));
    }
    for _ in 0..50 * common::scale() {
        let tags: Vec<Vec<String>> = (0..rng.gen_range(0..4))
            .map(|_| {
                (0..rng.gen_range(1..4))
                    .map(|_| random_string(rng, 12))
                    .collect()
            })
            .collect();
        let content = random_string(rng, 200);
        out.push(signer.event(rng.gen(), rng.gen(), &tags, &content));
    }
    // Longer than the serializer's 2 KiB staging buffer, escapes on the boundaries.
    for len in [2040usize, 2047, 2048, 2049, 5000] {
        let content: String = (0..len)
            .map(|i| if i % 683 == 0 { '\u{1}' } else { 'y' })
            .collect();
        out.push(signer.event(5, 1, &[vec!["e".into(), content.clone()]], &content));
    }
    out
}

fn constructed_events<V: Version>()
where
    V::Event: VerifyEventExt,
    <V::Event as VerifyEventExt>::Error: Display,
{
    let mut rng = StdRng::seed_from_u64(4);
    let values = constructed::<V>(&mut rng);
    let events: Vec<V::Event> = values
        .iter()
        .map(|v| V::parse(&v.to_string()).expect("parses"))
        .collect();
    for e in &events {
        assert_eq!(
            compute_id(e),
            V::reference_id(e),
            "{}: id of {e:?}",
            V::NAME
        );
        assert_eq!(V::reference(e), Verdict::Valid);
    }
    assert_eq!(events.verify_batch(), vec![Verdict::Valid; events.len()]);
    check_all_forms::<V>(&events, "constructed");
}

fn mutated<V: Version>()
where
    V::Event: VerifyEventExt,
    <V::Event as VerifyEventExt>::Error: Display,
{
    let mut rng = StdRng::seed_from_u64(44);
    let other = Signer::new(&mut rng);
    let mut base: Vec<serde_json::Value> =
        constructed::<V>(&mut rng).into_iter().step_by(3).collect();
    // Real events: the vendored sample in every clone, the shared corpus too when present.
    for l in lines(&common::sample_dir(), "events-sample.jsonl")
        .iter()
        .step_by(3)
    {
        base.push(serde_json::from_str(l).expect("json"));
    }
    if let Some(dir) = common::data_dir_if_present() {
        let step = (40 / common::scale()).max(1);
        for (i, l) in lines(&dir, "events-real.jsonl").iter().enumerate() {
            if i % step == 0 || INVALID_ID_LINES.contains(&(i + 1)) {
                base.push(serde_json::from_str(l).expect("json"));
            }
        }
    }
    // Each mutation, mixed with untouched events at random positions, in batches of
    // random sizes (so one bad event sits at every kind of position).
    let mut all = Vec::new();
    let mut seen = std::collections::HashMap::<&str, [usize; 3]>::new();
    for v in &base {
        all.push(V::parse(&v.to_string()).expect("base parses"));
        let m = MUTATIONS[rng.gen_range(0..MUTATIONS.len())];
        let mv = mutate(v, m, &mut rng, &other);
        let e = V::parse(&mv.to_string()).unwrap_or_else(|err| panic!("{m}: {err}"));
        let r = V::reference(&e);
        seen.entry(m).or_default()[r as usize] += 1;
        all.push(e);
    }
    for m in MUTATIONS {
        // Make sure every mutation is exercised at least a few times.
        for v in base.iter().take(8) {
            let e = V::parse(&mutate(v, m, &mut rng, &other).to_string()).expect("parses");
            seen.entry(m).or_default()[V::reference(&e) as usize] += 1;
            all.push(e);
        }
    }
    for (m, counts) in &seen {
        // Every mutation is rejected by the reference (edits to an invalid-id event stay
        // invalid); signature-side mutations must yield InvalidSignature at least once.
        assert_eq!(counts[Verdict::Valid as usize], 0, "{m}: {counts:?}");
    }
    for m in ["sig", "sig-r-p", "sig-s-n", "resigned-wrong-key"] {
        assert!(
            seen[m][Verdict::InvalidSignature as usize] > 0,
            "{m}: {:?}",
            seen[m]
        );
    }
    assert!(seen["pubkey"][Verdict::InvalidId as usize] > 0);
    assert!(seen["pubkey-other"][Verdict::InvalidId as usize] > 0);
    let mut start = 0;
    while start < all.len() {
        let end = (start + rng.gen_range(1..300)).min(all.len());
        let chunk = &all[start..end];
        let want: Vec<Verdict> = chunk.iter().map(V::reference).collect();
        assert_eq!(
            chunk.verify_batch(),
            want,
            "{} mutated [{start}..{end})",
            V::NAME
        );
        start = end;
    }
    check_all_forms::<V>(&all, "mutated");
}

/// A pubkey that is not a valid x-only key (x^3 + 7 not a square, or x >= p), with the id
/// computed correctly over it: Event::verify says "Invalid signature".
fn invalid_pubkeys<V: Version>() {
    let mut rng = StdRng::seed_from_u64(7);
    let signer = Signer::new(&mut rng);
    let good = signer.event(1, 1, &[], "hello");
    let mut events = Vec::new();
    for pk in [
        "ff".repeat(32),
        "00".repeat(32),
        "fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f".into(),
    ] {
        let mut v = good.clone();
        v["pubkey"] = serde_json::json!(pk);
        let e = V045::parse(&v.to_string()).expect("parses");
        v["id"] = serde_json::json!(hex::encode(V045::reference_id(&e)));
        events.push(V::parse(&v.to_string()).expect("parses"));
    }
    events.push(V::parse(&good.to_string()).expect("parses"));
    let want: Vec<Verdict> = events.iter().map(V::reference).collect();
    assert_eq!(want[..3], [Verdict::InvalidSignature; 3]);
    assert_eq!(events.verify_batch(), want);
}

macro_rules! suite {
    ($m:ident, $v:ty) => {
        mod $m {
            use super::*;
            #[cfg_attr(
                nostr_verify_no_data,
                ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
            )]
            #[test]
            fn real_corpus_matches_event_verify() {
                real_corpus::<$v>();
            }
            #[cfg_attr(
                nostr_verify_no_data,
                ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
            )]
            #[test]
            fn embedded_corpus_matches_event_verify() {
                embedded_corpus::<$v>();
            }
            #[cfg_attr(
                nostr_verify_no_data,
                ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
            )]
            #[test]
            fn malformed_lines_give_parse_errors() {
                malformed::<$v>();
            }
            #[test]
            fn real_sample_matches_event_verify() {
                real_sample::<$v>();
            }
            #[test]
            fn constructed_escapes_match_event_verify() {
                constructed_events::<$v>();
            }
            #[test]
            fn mutated_events_match_event_verify() {
                mutated::<$v>();
            }
            #[test]
            fn invalid_pubkeys_are_invalid_signatures() {
                invalid_pubkeys::<$v>();
            }
        }
    };
}

suite!(v045, V045);
#[cfg(feature = "nostr-0-44")]
suite!(v044, V044);

#[test]
fn empty_inputs() {
    let none: Vec<nostr::event::Event> = Vec::new();
    assert!(none.verify_batch().is_empty());
    assert!(none.verify_all());
    assert!(BTreeSet::<nostr::event::Event>::new().verify_all());
    let (a, b) = none.partition_verified();
    assert!(a.is_empty() && b.is_empty());
}

#[test]
fn into_result_matches_nostr_errors() {
    use nostr::error::ErrorKind;
    assert!(Verdict::Valid.into_result().is_ok());
    let e = Verdict::InvalidId.into_result().unwrap_err();
    assert_eq!(
        (e.kind(), e.to_string()),
        (ErrorKind::Invalid, "Invalid event ID".to_owned())
    );
    let e = Verdict::InvalidSignature.into_result().unwrap_err();
    assert_eq!(
        (e.kind(), e.to_string()),
        (ErrorKind::Invalid, "Invalid signature".to_owned())
    );
    #[cfg(feature = "nostr-0-44")]
    {
        use nostr044::event::Error;
        assert_eq!(Verdict::Valid.into_result_v044(), Ok(()));
        assert_eq!(Verdict::InvalidId.into_result_v044(), Err(Error::InvalidId));
        assert_eq!(
            Verdict::InvalidSignature.into_result_v044(),
            Err(Error::InvalidSignature)
        );
    }
}

/// nostr-database 0.44's `Events` (what nostr-sdk 0.44's `fetch_events` and databases return;
/// nostr 0.45 has no `Events` type): `verify_batch`, `verify_all` and `partition_verified`
/// against `Event::verify`, in `Events::iter()` order (newest first, not insertion order).
#[cfg(feature = "nostr-0-44")]
mod events_v044 {
    use super::*;
    use nostr_database044::Events;

    /// Valid events, events whose id is wrong and events whose signature is wrong (each kind
    /// of mutation from the differential suite), inserted in a shuffled order; plus a sample
    /// of the real corpus when the data directory is there.
    fn mixed(rng: &mut StdRng) -> Vec<nostr044::Event> {
        let signer = Signer::new(rng);
        let other = Signer::new(rng);
        let mut out = Vec::new();
        for (i, m) in MUTATIONS.iter().cycle().take(90).enumerate() {
            let content = random_string(rng, 24);
            let tags = vec![vec!["t".to_owned(), random_string(rng, 5)]];
            let v = signer.event(1_700_000_000 + i as u64 * 7, 1, &tags, &content);
            let v = match i % 3 {
                0 => v,
                _ => mutate(&v, m, rng, &other),
            };
            out.push(V044::parse(&v.to_string()).expect("parses"));
        }
        for l in lines(&common::sample_dir(), "events-sample.jsonl")
            .iter()
            .step_by(10)
        {
            out.push(V044::parse(l).expect("sample line parses"));
        }
        if let Some(dir) = common::data_dir_if_present() {
            for (i, l) in lines(&dir, "events-real.jsonl").iter().enumerate() {
                if i % 50 == 0 || INVALID_ID_LINES.contains(&(i + 1)) {
                    out.push(V044::parse(l).expect("corpus line parses"));
                }
            }
        }
        // Insertion order unlike the iteration order.
        for i in (1..out.len()).rev() {
            out.swap(i, rng.gen_range(0..=i));
        }
        out
    }

    #[test]
    fn events_match_event_verify_in_iteration_order() {
        let mut rng = StdRng::seed_from_u64(440);
        let input = mixed(&mut rng);
        let events: Events = input.iter().cloned().collect();
        assert_eq!(events.len(), input.len(), "distinct events");
        let order: Vec<&nostr044::Event> = events.iter().collect();
        assert_ne!(
            order.iter().map(|e| e.id).collect::<Vec<_>>(),
            input.iter().map(|e| e.id).collect::<Vec<_>>(),
            "iteration order differs from insertion order"
        );
        let want: Vec<Verdict> = order.iter().map(|e| V044::reference(e)).collect();
        for v in [
            Verdict::Valid,
            Verdict::InvalidId,
            Verdict::InvalidSignature,
        ] {
            assert!(want.contains(&v), "{v:?} present");
        }

        assert_eq!(events.verify_batch(), want);
        assert!(!events.verify_all());

        let (valid, rejected) = events.clone().partition_verified();
        assert_partition(&valid, &rejected, &order, &want);

        // Only the valid ones: every verdict valid, verify_all true, nothing rejected.
        let good: Events = valid.iter().cloned().collect();
        assert_eq!(good.verify_batch(), vec![Verdict::Valid; good.len()]);
        assert!(good.verify_all());
        assert!(good.partition_verified().1.is_empty());
        // One bad event among valid ones, wherever its timestamp puts it in the order.
        for bad in rejected.iter().take(6) {
            let mut one: Events = valid.iter().take(40).cloned().collect();
            one.insert(bad.0.clone());
            assert!(!one.verify_all());
            let want: Vec<Verdict> = one.iter().map(V044::reference).collect();
            assert_eq!(one.verify_batch(), want);
        }
    }

    #[test]
    fn empty_events() {
        let none = Events::default();
        assert!(none.verify_batch().is_empty());
        assert!(none.verify_all());
        let (a, b) = none.partition_verified();
        assert!(a.is_empty() && b.is_empty());
    }
}
