//! The SHA-256 paths of the batch (`backend::sha`), same run, each path forced in turn:
//!
//! 1. one compression, ns per block: this crate's portable code (`soft`) and `sha2` (SHA-NI
//!    where the CPU has it);
//! 2. BIP-340 challenges and the weights' pair hashes (96 bytes after a midstate, two
//!    compressions, plus 40 bytes after a midstate for every two signatures), µs per
//!    signature;
//! 3. NIP-01 ids of the real corpus (serialization and hashing, `compute_ids` on the whole
//!    corpus: 4,096 events a call), µs per event, and the hashing alone with each lane
//!    schedule (a lane refilled as its message ends, against groups of equal block count)
//!    and call size;
//! 4. challenges + weights + id per signature, the sum of rows 2 and 3;
//! 5. `verify_batch()` on the real corpus (ids and signatures; the whole corpus in one call,
//!    which verifies 4,096 events at a time, and calls of 512 as in `bench/examples/events.rs`;
//!    each repetition on a fresh thread so every path starts with a cold key cache) on each
//!    backend, against a loop of nostr's `Event::verify()`.
//!
//! Ratios are `soft / path` (`soft`: the portable algorithm `sha2` runs on CPUs without SHA
//! instructions).
//!
//! ```text
//! NOSTR_VERIFY_DATA=../shared/data ROUNDS=11 taskset -c 1 \
//!     cargo run --profile bench -p nostr-verify-bench --example sha_paths
//! ```
//! Thread CPU time, median of `ROUNDS` (default 11). The corpus is
//! `$NOSTR_VERIFY_DATA/events-real.jsonl` (default `../shared/data`); rows 3-5 are skipped
//! without it.

use nostr::event::Event;
use nostr_verify::backend::sha::{self, Schedule, Sha, IV};
use nostr_verify::backend::{self, Backend};
use nostr_verify::{id_preimage, VerifyBatchExt};
use rand::RngCore;
use std::hint::black_box;

#[path = "../benches/support/cpu_time.rs"]
mod support;
use support::{median, thread_cpu_ns as cpu_ns};

/// Median over `rounds` of `f()`'s thread CPU time in µs divided by `per`.
fn time(rounds: usize, per: f64, mut f: impl FnMut()) -> f64 {
    median(
        &(0..rounds)
            .map(|_| {
                let t = cpu_ns();
                f();
                (cpu_ns() - t) as f64 / 1e3 / per
            })
            .collect::<Vec<_>>(),
    )
}

/// Runs `f` on a fresh thread and returns its thread CPU time in µs.
fn on_fresh_thread(f: impl FnOnce() + Send) -> f64 {
    std::thread::scope(|s| {
        s.spawn(|| {
            let t = cpu_ns();
            f();
            (cpu_ns() - t) as f64 / 1e3
        })
        .join()
        .expect("benchmark thread")
    })
}

fn row(label: &str, per: &[f64], soft: f64, digits: usize) {
    print!("| {label} |");
    for v in per {
        print!(" {v:.digits$} ({:.2}x) |", soft / v);
    }
    println!();
}

fn header(first: &str, paths: &[Sha]) {
    print!("| {first} |");
    for p in paths {
        print!(" {} |", p.name());
    }
    println!();
    println!("|---|{}", "---|".repeat(paths.len()));
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(11);
    let paths = Sha::available();
    let soft_at = paths.iter().position(|&p| p == Sha::Soft).unwrap_or(0);
    eprintln!(
        "SHA-256 paths here: {:?}; selected {:?}; CPU SHA instructions: {}",
        paths,
        sha::sha_selected(),
        sha::cpu_has_sha_instructions()
    );
    let mut rng = rand::thread_rng();

    // 1. One compression.
    let mut block = [0u8; 64];
    rng.fill_bytes(&mut block);
    let reps = 200_000usize;
    let soft_ns = time(rounds, reps as f64 / 1e3, || {
        let mut s = IV;
        for _ in 0..reps {
            sha::compress_soft(&mut s, black_box(&block));
        }
        black_box(s);
    });
    let sha2_ns = time(rounds, reps as f64 / 1e3, || {
        let mut s = IV;
        let b = sha2::digest::generic_array::GenericArray::from_slice(&block);
        for _ in 0..reps {
            sha2::compress256(&mut s, core::slice::from_ref(black_box(b)));
        }
        black_box(s);
    });
    println!("One SHA-256 compression, ns per block (thread CPU time, median of {rounds})");
    println!(
        "| soft (this crate) | sha2 (SHA-NI here: {}) |",
        sha::cpu_has_sha_instructions()
    );
    println!("|---|---|");
    println!("| {soft_ns:.1} | {sha2_ns:.1} |");
    println!();

    // 2. Challenges and weights.
    println!(
        "BIP-340 challenges + weights, µs per signature (median of {rounds}); ratio = soft / path"
    );
    header("n", &paths);
    let mut challenges_per_sig = vec![0.0; paths.len()];
    for n in [64usize, 1024, 4096] {
        let challenges: Vec<[u8; 96]> = (0..n)
            .map(|_| {
                let mut m = [0u8; 96];
                rng.fill_bytes(&mut m);
                m
            })
            .collect();
        let pairs: Vec<[u8; 40]> = (0..n.div_ceil(2))
            .map(|j| {
                let mut m = [7u8; 40];
                m[32..].copy_from_slice(&(j as u64).to_le_bytes());
                m
            })
            .collect();
        let c: Vec<&[u8]> = challenges.iter().map(|m| &m[..]).collect();
        let w: Vec<&[u8]> = pairs.iter().map(|m| &m[..]).collect();
        let mut out_c = vec![[0u8; 32]; c.len()];
        let mut out_w = vec![[0u8; 32]; w.len()];
        let iters = (40_000 / n).max(2);
        let per: Vec<f64> = paths
            .iter()
            .map(|&p| {
                time(rounds, (iters * n) as f64, || {
                    for _ in 0..iters {
                        sha::hash_many_from_on(p, &IV, 1, black_box(&c), &mut out_c);
                        sha::hash_many_from_on(p, &IV, 1, black_box(&w), &mut out_w);
                    }
                })
            })
            .collect();
        row(&n.to_string(), &per, per[soft_at], 3);
        if n == 1024 {
            challenges_per_sig = per;
        }
    }
    println!();

    let dir = std::env::var("NOSTR_VERIFY_DATA").unwrap_or_else(|_| "../shared/data".into());
    let file = format!("{dir}/events-real.jsonl");
    let Ok(text) = std::fs::read_to_string(&file) else {
        eprintln!("{file} not found: the corpus rows are skipped (set NOSTR_VERIFY_DATA)");
        return;
    };
    let events: Vec<Event> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| Event::from_json(l).expect("corpus event parses"))
        .collect();
    let preimages: Vec<Vec<u8>> = events.iter().map(id_preimage).collect();
    let bytes: usize = preimages.iter().map(Vec::len).sum();
    let blocks: usize = preimages.iter().map(|p| sha::padded_blocks(p.len())).sum();
    let n = events.len() as f64;

    // 3. Ids.
    println!(
        "NIP-01 ids of the real corpus ({} events, {:.0} bytes and {:.1} blocks an event on average), µs per event (median of {rounds}); ratio = soft / path",
        events.len(),
        bytes as f64 / n,
        blocks as f64 / n
    );
    header("what", &paths);
    let mut ids = Vec::new();
    let before = sha::sha_selected();
    let ids_per_event: Vec<f64> = paths
        .iter()
        .map(|&p| {
            sha::set_sha_selected(p);
            time(rounds, n, || {
                nostr_verify::compute_ids(black_box(&events), &mut ids);
            })
        })
        .collect();
    sha::set_sha_selected(before);
    row(
        "`compute_ids` (serialize + hash)",
        &ids_per_event,
        ids_per_event[soft_at],
        3,
    );
    for (schedule, call) in [
        (Schedule::Refill, 4096),
        (Schedule::Refill, 512),
        (Schedule::Grouped, 4096),
    ] {
        let per: Vec<f64> = paths
            .iter()
            .map(|&p| {
                let mut out = vec![[0u8; 32]; call];
                time(rounds, n, || {
                    for c in preimages.chunks(call) {
                        let msgs: Vec<&[u8]> = c.iter().map(|m| &m[..]).collect();
                        sha::hash_many_scheduled_on(
                            p,
                            schedule,
                            &IV,
                            0,
                            black_box(&msgs),
                            &mut out[..msgs.len()],
                        );
                    }
                })
            })
            .collect();
        row(
            &format!("hash only, {call} a call, {schedule:?}"),
            &per,
            per[soft_at],
            3,
        );
    }
    println!();

    // 4. Sum.
    println!("Challenges + weights (1024 a call) + id, µs per signature; ratio = soft / path");
    header("what", &paths);
    let sum: Vec<f64> = challenges_per_sig
        .iter()
        .zip(&ids_per_event)
        .map(|(a, b)| a + b)
        .collect();
    row("challenges + weights + id", &sum, sum[soft_at], 3);
    println!();

    // 5. verify_batch on the corpus.
    println!(
        "verify_batch() on the real corpus (ids + signatures, cold key cache), µs per event (median of {rounds}); ratio = soft / path; last column nostr's Event::verify()"
    );
    print!("| backend | calls of |");
    for p in &paths {
        print!(" {} |", p.name());
    }
    println!(" Event::verify |");
    println!("|---|---|{}---|", "---|".repeat(paths.len()));
    let arms: Vec<Backend> = [Backend::Ifma, Backend::Portable]
        .into_iter()
        .filter(|b| b.is_available())
        .collect();
    let arm_before = backend::selected();
    for &arm in &arms {
        backend::set_selected(arm);
        for call in [events.len(), 512] {
            let mut times: Vec<Vec<f64>> = vec![Vec::new(); paths.len() + 1];
            for _ in 0..rounds {
                for (k, &p) in paths.iter().enumerate() {
                    sha::set_sha_selected(p);
                    times[k].push(
                        on_fresh_thread(|| {
                            for c in events.chunks(call) {
                                black_box(c.verify_batch());
                            }
                        }) / n,
                    );
                }
                times[paths.len()].push(
                    on_fresh_thread(|| {
                        for e in &events {
                            let _ = black_box(e.verify());
                        }
                    }) / n,
                );
            }
            let med: Vec<f64> = times.iter().map(|t| median(t)).collect();
            print!("| {} | {call} |", arm.name());
            for v in &med[..paths.len()] {
                print!(" {v:.2} ({:.2}x) |", med[soft_at] / v);
            }
            println!(" {:.2} |", med[paths.len()]);
        }
    }
    backend::set_selected(arm_before);
    sha::set_sha_selected(before);
}
