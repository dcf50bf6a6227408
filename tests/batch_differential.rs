//! The batch verifier against libsecp256k1, signature by signature.
//!
//! Every test compares `Verifier::verify_batch`'s per-signature verdicts, its return value and
//! `verify_all` with libsecp256k1's own verdicts (`nostr_verify::verify_one`). Counts are
//! multiplied by `SECP_DIFF_SCALE` (default 1).

#![allow(unreachable_pub)]

mod common;
#[path = "common/sigs.rs"]
mod sigs;

use nostr_verify::{SharedKeyCache, Stats, Verifier, MIN_BATCH};
use rand::{Rng, RngCore};
use sigs::{batch, cancelling_pair, check, corrupt, Keys, Owned, ALL_CORRUPTIONS};

const KEYS: [Keys; 3] = [Keys::One, Keys::Eight, Keys::Distinct];

/// Runs `rounds` random batches of size `n` for each key distribution: valid, then with 1..=3
/// random corruptions.
fn random_batches(seed: u64, n: usize, rounds: usize) {
    let mut r = sigs::rng(seed);
    let mut v = Verifier::new();
    for keys in KEYS {
        for round in 0..rounds {
            let mut b = batch(&mut r, n, keys);
            check(&mut v, &b, &format!("valid n={n} {keys:?} round {round}"));
            if n == 0 {
                continue;
            }
            let bad = 1 + (r.next_u32() as usize % 3);
            for _ in 0..bad {
                let i = sigs::pick(&mut r, n);
                let c = ALL_CORRUPTIONS[r.gen_range(0..ALL_CORRUPTIONS.len())];
                corrupt(&mut r, &mut b, i, c);
            }
            check(
                &mut v,
                &b,
                &format!("corrupted n={n} {keys:?} round {round}"),
            );
        }
    }
}

#[test]
fn sizes_0_to_5() {
    for n in 0..=5 {
        random_batches(100 + n as u64, n, 4 * common::scale());
    }
}

#[test]
fn around_min_batch() {
    for n in MIN_BATCH.saturating_sub(2)..=MIN_BATCH + 2 {
        random_batches(200 + n as u64, n, 3 * common::scale());
    }
}

#[test]
fn around_algorithm_switches() {
    // Batch sizes whose MSM point counts (n + 2k + 2) straddle the Strauss/Pippenger switch and
    // the Pippenger window changes, for each key distribution.
    let mut sizes = Vec::new();
    for &points in nostr_verify::msm::SWITCH_POINTS {
        for keys_per_sig in [0usize, 2] {
            // n + 2k + 2 = points with k = 1 (One/Eight, small k) or k = n (Distinct).
            let n = if keys_per_sig == 0 {
                points.saturating_sub(4)
            } else {
                points.saturating_sub(2) / 3
            };
            for d in [n.saturating_sub(1), n, n + 1] {
                if d > 0 && d <= 1200 && !sizes.contains(&d) {
                    sizes.push(d);
                }
            }
        }
    }
    for n in sizes {
        random_batches(300 + n as u64, n, common::scale());
    }
}

#[test]
fn size_64() {
    random_batches(64, 64, 2 * common::scale());
}

#[test]
fn size_1024() {
    random_batches(1024, 1024, common::scale());
}

#[test]
fn size_4096() {
    // Few iterations by default: one valid and one corrupted batch per key distribution.
    random_batches(4096, 4096, common::scale().div_ceil(4));
}

#[test]
fn every_corruption_alone_and_in_a_batch() {
    let mut r = sigs::rng(7);
    let mut v = Verifier::new();
    for round in 0..2 * common::scale() {
        for c in ALL_CORRUPTIONS {
            for n in [1usize, 2, 9, 40] {
                let mut b = batch(
                    &mut r,
                    n,
                    if round % 2 == 0 {
                        Keys::Eight
                    } else {
                        Keys::Distinct
                    },
                );
                let i = sigs::pick(&mut r, n);
                corrupt(&mut r, &mut b, i, c);
                check(&mut v, &b, &format!("{c:?} at {i} of {n}"));
            }
        }
    }
}

#[test]
fn one_bad_signature_at_every_position() {
    let mut r = sigs::rng(8);
    let mut v = Verifier::new();
    for n in [MIN_BATCH + 1, 16, 33] {
        let base = batch(&mut r, n, Keys::Eight);
        for i in 0..n {
            for c in [
                sigs::Corruption::FlipMsgBit,
                sigs::Corruption::FlipSBit,
                sigs::Corruption::RNotOnCurve,
            ] {
                let mut b = base.clone();
                corrupt(&mut r, &mut b, i, c);
                let want = check(&mut v, &b, &format!("{c:?} at {i} of {n}"));
                assert!(!want[i], "the corruption must make signature {i} invalid");
            }
        }
    }
}

#[test]
fn cancelling_error_pairs() {
    let mut r = sigs::rng(9);
    let mut v = Verifier::new();
    for round in 0..8 * common::scale() {
        for n in [2usize, 3, 17, 64, 200] {
            let mut b = batch(&mut r, n, KEYS[round % 3]);
            let i = sigs::pick(&mut r, n);
            let mut j = sigs::pick(&mut r, n);
            if j == i {
                j = (i + 1) % n;
            }
            cancelling_pair(&mut r, &mut b, i, j);
            let want = check(&mut v, &b, &format!("cancelling pair {i},{j} of {n}"));
            assert!(
                !want[i] && !want[j],
                "both signatures of a cancelling pair are invalid"
            );
        }
    }
}

#[test]
fn duplicates() {
    let mut r = sigs::rng(10);
    let mut v = Verifier::new();
    for round in 0..4 * common::scale() {
        for n in [2usize, 5, 40, 300] {
            let mut b = batch(&mut r, n, KEYS[round % 3]);
            // Exact duplicates, some of them next to each other.
            let extra: Vec<Owned> = (0..n / 2 + 1).map(|_| b[sigs::pick(&mut r, n)]).collect();
            b.extend(extra);
            b.push(b[0]);
            check(&mut v, &b, &format!("duplicates n={n}"));
            // A duplicated invalid signature and a duplicate of a valid one.
            let i = sigs::pick(&mut r, b.len());
            corrupt(&mut r, &mut b, i, sigs::Corruption::FlipMsgBit);
            let bad = b[i];
            b.push(bad);
            b.push(bad);
            check(&mut v, &b, &format!("duplicated invalid n={n}"));
            // Everything identical.
            let same = vec![b[1]; n];
            check(&mut v, &same, &format!("all identical n={n}"));
        }
    }
}

#[test]
fn shared_nonces_and_negated_points() {
    // The same R in several signatures (nonce reuse across messages and keys), and signatures
    // whose R is the negation of another's (same x): both give equal-x pairs in the MSM.
    let mut r = sigs::rng(11);
    let mut v = Verifier::new();
    for _ in 0..4 * common::scale() {
        let k = secp256k1::SecretKey::new(&mut r);
        let keys: Vec<_> = (0..3).map(|_| secp256k1::SecretKey::new(&mut r)).collect();
        let mut b = Vec::new();
        for i in 0..24 {
            let mut msg = [0u8; 32];
            r.fill_bytes(&mut msg);
            b.push(sigs::sign_with_nonce(&keys[i % 3], &k, &msg, false).expect("signs"));
        }
        // Same key, same R, one signature used for its own message and the message of another.
        let mut fake = b[0];
        fake.msg = b[3].msg;
        b.push(fake);
        check(&mut v, &b, "shared nonce");
        // Keys equal to R and to -R's x.
        let mut b2 = b.clone();
        b2[5].pk = b2[5].sig[..32].try_into().expect("32");
        check(&mut v, &b2, "key equal to r");
    }
}

#[test]
fn more_keys_than_the_cache_holds() {
    let mut r = sigs::rng(12);
    let mut v = Verifier::new();
    // 3,000 distinct keys in one batch, then repeated batches cycling through 5,000 keys.
    let big = batch(&mut r, 3000, Keys::Distinct);
    check(&mut v, &big, "3000 distinct keys");
    let kps = sigs::keypairs(&mut r, 5000);
    for round in 0..2 * common::scale() {
        let chunk = &kps[(round * 1000) % 5000..][..1000];
        let mut b = sigs::sign_batch(&mut r, chunk, 700);
        check(&mut v, &b, &format!("cycling keys round {round}"));
        let i = sigs::pick(&mut r, b.len());
        corrupt(&mut r, &mut b, i, sigs::Corruption::FlipMsgBit);
        check(&mut v, &b, &format!("cycling keys corrupted round {round}"));
    }
}

#[test]
fn many_invalid_signatures() {
    let mut r = sigs::rng(13);
    let mut v = Verifier::new();
    for &n in &[8usize, 64, 300] {
        for frac in [2usize, 4, 32] {
            let mut b = batch(&mut r, n, Keys::Eight);
            for i in 0..n {
                if r.next_u32() as usize % frac == 0 {
                    corrupt(&mut r, &mut b, i, sigs::Corruption::FlipMsgBit);
                }
            }
            check(&mut v, &b, &format!("1/{frac} invalid of {n}"));
        }
        let mut b = batch(&mut r, n, Keys::Distinct);
        for i in 0..n {
            corrupt(&mut r, &mut b, i, sigs::Corruption::FlipSBit);
        }
        check(&mut v, &b, &format!("all invalid of {n}"));
    }
}

#[test]
fn verify_one_matches_reference() {
    let mut r = sigs::rng(14);
    let mut v = Verifier::new();
    for round in 0..50 * common::scale() {
        let mut b = batch(&mut r, 1, Keys::One);
        if round % 2 == 1 {
            let c = ALL_CORRUPTIONS[round / 2 % ALL_CORRUPTIONS.len()];
            corrupt(&mut r, &mut b, 0, c);
        }
        // Twice: the second time the key comes from the cache.
        for _ in 0..2 {
            assert_eq!(
                v.verify_one(&b[0].as_ref()),
                nostr_verify::verify_one(&b[0].as_ref()),
                "round {round}"
            );
        }
    }
}

#[cfg_attr(
    nostr_verify_no_data,
    ignore = "needs the shared test data (../shared/data beside the checkout, or NOSTR_VERIFY_DATA)"
)]
#[test]
fn real_events() {
    // The signatures of the real corpus: all valid over their claimed ids.
    let Some(dir) = common::data_dir() else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("events-real.jsonl")).expect("corpus");
    let mut b = Vec::new();
    for line in text.lines().take(1500 * common::scale()) {
        let field = |name: &str| -> Option<Vec<u8>> {
            let k = format!("\"{name}\":\"");
            let start = line.find(&k)? + k.len();
            let end = start + line[start..].find('"')?;
            hex::decode(&line[start..end]).ok()
        };
        let (Some(id), Some(pk), Some(sig)) = (field("id"), field("pubkey"), field("sig")) else {
            continue;
        };
        let (Ok(msg), Ok(pk), Ok(sig)) = (id.try_into(), pk.try_into(), sig.try_into()) else {
            continue;
        };
        b.push(Owned { pk, msg, sig });
    }
    assert!(b.len() > 1000, "corpus parsed");
    let mut v = Verifier::new();
    let want = check(&mut v, &b, "real events");
    assert!(want.iter().all(|&x| x));
    let mut r = sigs::rng(15);
    let i = sigs::pick(&mut r, b.len());
    corrupt(&mut r, &mut b, i, sigs::Corruption::FlipSBit);
    check(&mut v, &b, "real events, one corrupted");
}

#[test]
fn valid_batches_are_accepted_by_the_equation() {
    // The batch path is really used: a valid batch costs one equation and no single check.
    let mut r = sigs::rng(16);
    let mut v = Verifier::new();
    for (n, keys) in [
        (MIN_BATCH, Keys::One),
        (64, Keys::Eight),
        (300, Keys::Distinct),
    ] {
        let b = batch(&mut r, n, keys);
        let before = v.stats();
        check(&mut v, &b, "stats");
        let after = v.stats();
        // verify_batch, then verify_all: two equations, both held.
        assert_eq!(after.batches - before.batches, 2, "n {n}");
        assert_eq!(after.batches_passed - before.batches_passed, 2, "n {n}");
        assert_eq!(after.batched - before.batched, 2 * n as u64, "n {n}");
        // No single check: a verifier that has met no flood does not probe a large batch
        // before its equation (`src/batch/narrow.rs`, "Narrowing", step 1).
        assert_eq!(after.one_at_a_time - before.one_at_a_time, 0, "n {n}");
    }
    // One bad signature: narrowing accepts the others by equations, and the bad one is found by
    // libsecp256k1 (at most a handful of single checks).
    let mut b = batch(&mut r, 512, Keys::Eight);
    corrupt(&mut r, &mut b, 100, sigs::Corruption::FlipMsgBit);
    let before = v.stats();
    let refs: Vec<_> = b.iter().map(Owned::as_ref).collect();
    let mut ok = Vec::new();
    assert!(!v.verify_batch(&refs, &mut ok));
    assert_eq!(ok.iter().filter(|&&x| !x).count(), 1);
    assert!(!ok[100]);
    let after = v.stats();
    assert!(
        after.one_at_a_time - before.one_at_a_time <= 40,
        "{:?}",
        after
    );
    assert!(after.batched - before.batched >= 470, "{:?}", after);
    // The second sighting of these keys hits the cache.
    v.verify_batch(&refs, &mut ok);
    assert_eq!(v.stats().key_hits - after.key_hits, 8);
}

#[test]
fn two_threads_agree() {
    let mut r = sigs::rng(17);
    let mut v = Verifier::new();
    // Sizes below and above the two-thread thresholds (2,048 lifts, 3,000 MSM points):
    // 1,100 distinct keys split both stages, 3,100 signatures by 8 keys too.
    for (n, keys) in [
        (5usize, Keys::One),
        (300, Keys::Distinct),
        (1024, Keys::Eight),
        (1100, Keys::Distinct),
        (3100, Keys::Eight),
    ] {
        for bad in [0usize, 1, 3] {
            let mut b = batch(&mut r, n, keys);
            for _ in 0..bad {
                let i = sigs::pick(&mut r, n);
                corrupt(&mut r, &mut b, i, sigs::Corruption::FlipMsgBit);
            }
            let refs: Vec<_> = b.iter().map(Owned::as_ref).collect();
            let want = sigs::reference(&b);
            let mut ok = Vec::new();
            let all = v.verify_batch_two_threads(&refs, &mut ok);
            assert_eq!(ok, want, "two threads, n {n}, {bad} bad");
            assert_eq!(all, bad == 0 || want.iter().all(|&x| x));
        }
        // Every kind of corruption, a few in each half: several are dropped before the
        // equation (r ≥ p, s ≥ n, no curve point), after both threads have weighed their
        // halves, so the weights of the rest are those of their places before the drop.
        for c in sigs::ALL_CORRUPTIONS {
            let mut b = batch(&mut r, n, keys);
            for _ in 0..(1 + n / 128) {
                let i = sigs::pick(&mut r, n);
                corrupt(&mut r, &mut b, i, c);
            }
            let refs: Vec<_> = b.iter().map(Owned::as_ref).collect();
            let want = sigs::reference(&b);
            let mut ok = Vec::new();
            v.verify_batch_two_threads(&refs, &mut ok);
            assert_eq!(ok, want, "two threads, n {n}, {c:?}");
        }
    }
}

/// Verifiers on several threads sharing one [`SharedKeyCache`]: every verdict is still
/// libsecp256k1's, keys lifted by one verifier are found by the others, corrupted and
/// invalid keys never enter the shared cache, and single checks find shared keys too.
#[test]
fn shared_key_cache_across_threads() {
    let mut r = sigs::rng(21);
    let shared = SharedKeyCache::new(4096);
    assert!(shared.is_empty());
    let kps = sigs::keypairs(&mut r, 300);
    let valid_keys: std::collections::HashSet<[u8; 32]> = kps
        .iter()
        .map(|k| k.x_only_public_key().0.serialize())
        .collect();
    // Each thread verifies batches over the same 300 keys, some corrupted (keys included).
    let batches: Vec<Vec<Vec<Owned>>> = (0..2)
        .map(|_| {
            (0..3 * common::scale())
                .map(|round| {
                    let mut b = sigs::sign_batch(&mut r, &kps, 200);
                    if round % 2 == 1 {
                        for _ in 0..3 {
                            let i = sigs::pick(&mut r, b.len());
                            let c = ALL_CORRUPTIONS[r.gen_range(0..ALL_CORRUPTIONS.len())];
                            corrupt(&mut r, &mut b, i, c);
                        }
                    }
                    b
                })
                .collect()
        })
        .collect();
    let stats: Vec<nostr_verify::Stats> = std::thread::scope(|s| {
        let handles: Vec<_> = batches
            .iter()
            .enumerate()
            .map(|(t, rounds)| {
                let shared = shared.clone();
                s.spawn(move || {
                    let mut v = Verifier::new().with_shared_cache(shared);
                    for (round, b) in rounds.iter().enumerate() {
                        check(&mut v, b, &format!("thread {t} round {round}"));
                    }
                    v.stats()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    // 300 keys were lifted once each; a corrupted key may have lifted too, but only keys
    // that are x coordinates get in, and the cache never holds more than it has room for.
    assert!(shared.len() >= valid_keys.len(), "{}", shared.len());
    assert!(shared.len() <= shared.capacity());
    let found: u64 = stats.iter().map(|s| s.shared_cache_hits).sum();
    // The two threads met the same 300 keys, each over 3 or more batches: keys lifted by one
    // were found by the other (how many depends on the interleaving).
    assert!(found > 0, "no shared hits: {stats:?}");

    // A fresh verifier on the shared cache: its misses are answered by the shared cache,
    // for batches and for single checks, and the verdicts stay libsecp256k1's.
    let mut v = Verifier::new().with_shared_cache(shared.clone());
    let mut b = sigs::sign_batch(&mut r, &kps[..50], 64);
    check(&mut v, &b, "fresh verifier, shared keys");
    assert_eq!(v.stats().shared_cache_hits, v.stats().key_misses);
    let mut w = Verifier::new().with_shared_cache(shared.clone());
    for (i, o) in b.iter().enumerate() {
        assert_eq!(
            w.verify_one(&o.as_ref()),
            nostr_verify::verify_one(&o.as_ref()),
            "single check {i} with a shared key"
        );
    }
    assert!(w.stats().shared_cache_hits > 0);
    // A key that is not an x coordinate never gets in.
    let i = sigs::pick(&mut r, b.len());
    corrupt(&mut r, &mut b, i, sigs::Corruption::KeyNotOnCurve);
    let before = shared.len();
    check(&mut v, &b, "fresh verifier, one key not on the curve");
    assert_eq!(shared.len(), before);
    // Detaching works: no more shared hits.
    v.set_shared_cache(None);
    assert!(v.shared_cache().is_none());
}

/// The indices of `b` in the order the verifier groups a batch before the equation (key
/// prefix, then `r` prefix): the submitter's own choice, so the order in which an attacker
/// would place invalid signatures on narrowing's node boundaries.
fn grouped_order(b: &[Owned]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..b.len()).collect();
    idx.sort_by_key(|&i| (b[i].pk, b[i].sig));
    idx
}

/// Flips a message bit of each signature at the given ranks of [`grouped_order`].
fn corrupt_ranks(r: &mut impl RngCore, b: &mut [Owned], ranks: impl IntoIterator<Item = usize>) {
    let order = grouped_order(b);
    for k in ranks {
        corrupt(r, b, order[k], sigs::Corruption::FlipMsgBit);
    }
}

#[test]
fn sprinkled_invalid_signatures() {
    // Every k-th signature invalid (k = 2..32), in the grouped order, from a random phase.
    let mut r = sigs::rng(17);
    let mut v = Verifier::new();
    for keys in KEYS {
        for n in [40usize, 300] {
            for every in 2..=32usize {
                let mut b = batch(&mut r, n, keys);
                let phase = r.gen_range(0..every);
                corrupt_ranks(&mut r, &mut b, (phase..n).step_by(every));
                check(&mut v, &b, &format!("1 in {every} of {n}, {keys:?}"));
            }
        }
    }
}

#[test]
fn clustered_invalid_signatures() {
    // Runs of adjacent invalid signatures (in the grouped order), one or two per batch.
    let mut r = sigs::rng(18);
    let mut v = Verifier::new();
    for keys in KEYS {
        for round in 0..12 * common::scale() {
            let n = [64usize, 200, 300][round % 3];
            let mut b = batch(&mut r, n, keys);
            let mut ranks = Vec::new();
            for _ in 0..1 + round % 2 {
                let len = r.gen_range(2..=40usize);
                let start = r.gen_range(0..n - len);
                ranks.extend(start..start + len);
            }
            ranks.sort_unstable();
            ranks.dedup();
            corrupt_ranks(&mut r, &mut b, ranks);
            check(&mut v, &b, &format!("clustered round {round}, {keys:?}"));
        }
    }
}

#[test]
fn invalid_signatures_on_node_boundaries() {
    // Narrowing halves its nodes: aim at the edges of halves, quarters, ... and leaves (in the
    // submitter's order, which the verifier no longer narrows on).
    let mut r = sigs::rng(19);
    let mut v = Verifier::new();
    for keys in KEYS {
        for n in [64usize, 256, 300] {
            let mut patterns: Vec<Vec<usize>> = Vec::new();
            for span in [4usize, 8, 16, 32, n / 4, n / 2] {
                // The first or last signature of every node of this size, or both.
                patterns.push((0..n).step_by(span).collect());
                patterns.push((span - 1..n).step_by(span).collect());
                patterns.push(
                    (0..n)
                        .filter(|i| i % span == 0 || i % span == span - 1)
                        .collect(),
                );
            }
            patterns.push(vec![n / 2 - 1, n / 2]);
            patterns.push(vec![0, n - 1]);
            for (p, ranks) in patterns.into_iter().enumerate() {
                let mut b = batch(&mut r, n, keys);
                corrupt_ranks(&mut r, &mut b, ranks);
                check(
                    &mut v,
                    &b,
                    &format!("boundary pattern {p} of {n}, {keys:?}"),
                );
            }
        }
    }
}

/// The counters' growth from `a` to `b`.
fn delta(a: Stats, b: Stats) -> Stats {
    // `Stats` is `#[non_exhaustive]`: start from `b` and subtract field by field.
    let mut d = b;
    d.batches -= a.batches;
    d.batches_passed -= a.batches_passed;
    d.batched -= a.batched;
    d.one_at_a_time -= a.one_at_a_time;
    d.budget_exhausted -= a.budget_exhausted;
    d.key_hits -= a.key_hits;
    d.key_misses -= a.key_misses;
    d.shared_cache_hits -= a.shared_cache_hits;
    d
}

#[test]
fn narrowing_budget_under_sprinkled_attack() {
    // One signature in 5, 8 or 16 invalid, spread evenly: every narrowing node fails down to
    // the leaves. The sample taken after the failed equation, or else the work budget, stops
    // the equations early and checks the rest one at a time: at most a few dozen equations
    // and about one single check per signature, where unbounded narrowing evaluates an
    // equation for most nodes (100 to 250 here; the unit test
    // `budget_stops_narrowing_under_sprinkled_failures` pins that down with fixed secrets).
    let mut r = sigs::rng(20);
    let mut v = Verifier::new();
    let n = 1024;
    for keys in KEYS {
        for every in [5usize, 8, 16] {
            let mut b = batch(&mut r, n, keys);
            let phase = r.gen_range(0..every);
            corrupt_ranks(&mut r, &mut b, (phase..n).step_by(every));
            let refs: Vec<_> = b.iter().map(Owned::as_ref).collect();
            let want = sigs::reference(&b);
            let before = v.stats();
            let mut ok = Vec::new();
            assert!(!v.verify_batch(&refs, &mut ok));
            assert_eq!(ok, want, "1 in {every}, {keys:?}");
            let d = delta(before, v.stats());
            let what = format!("1 in {every}, {keys:?}: {d:?}");
            assert!(d.budget_exhausted <= 1, "{what}");
            assert!(d.batches <= 100, "{what}");
            assert!(d.one_at_a_time <= n as u64 + 2, "{what}");
        }
    }
    // A lone invalid signature never exhausts the budget (the halves that hold pay it back).
    for keys in KEYS {
        for _ in 0..3 {
            let mut b = batch(&mut r, n, keys);
            let i = sigs::pick(&mut r, n);
            corrupt(&mut r, &mut b, i, sigs::Corruption::FlipMsgBit);
            let before = v.stats();
            check(&mut v, &b, &format!("one invalid, {keys:?}"));
            let d = delta(before, v.stats());
            assert_eq!(d.budget_exhausted, 0, "{keys:?}: {d:?}");
            // The sample after the failed equation (at most 96) and a few leaves.
            assert!(d.one_at_a_time <= 96 + 40, "{keys:?}: {d:?}");
        }
    }
}
