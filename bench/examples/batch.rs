//! The main benchmark: batch verification against libsecp256k1 one at a time, same run.
//!
//! `cargo run --profile bench -p nostr-verify-bench --example batch` signs its own events (fresh keys every round), then
//! for batch sizes 16, 64, 256, 1024 and keys all distinct / 8 / 1 prints microseconds per
//! signature (median of 21 rounds, thread CPU time) for libsecp256k1 parse + verify one at a
//! time (what `nostr::Event::verify` does) and for `Verifier::verify_batch`, and their ratio.
//! The ratio is the median of libsecp256k1's times over the median of ours; the "paired"
//! ratio beside it is the median over the rounds of each round's own ratio (both sides of a
//! round run back to back on the same core, so a host whose speed drifts during the run moves
//! both: the paired ratio is the steadier figure on a shared host).
//! Also: the single-signature gain of the key cache; batches with one / all signatures invalid,
//! and 1024 distinct keys with one signature in 5, 8 or 16 invalid (sprinkled evenly, the
//! pattern that makes narrowing most expensive); and the throughput of
//! `verify_batch_two_threads` against `verify_batch` (wall clock, four fresh batches back to
//! back per round, after an untimed warm-up batch in the same mode).
//!
//! Writes the figures as JSON to `target/bench/results.json` (under `CARGO_TARGET_DIR` when
//! that is set), or to the path given with `--out PATH`; `python3 bench/chart.py [PATH]` draws
//! them. `bench/results.json` is the committed reference run that the README and
//! `docs/benchmarks.md` tables come from; refresh it deliberately with
//! `--out bench/results.json`.
//!
//! When the CPU has a SIMD backend (AVX-512 IFMA), the batch cases run a second time on the
//! forced portable backend in the same run ("batch, portable backend" rows).
//!
//! Options: `--out PATH`, `ROUNDS=n` (default 21), `NOSTR_VERIFY_BACKEND=portable` to force the portable
//! backend everywhere, `NOSTR_VERIFY_BACKEND=portable-baseline` to run the portable arm's build
//! without BMI2/ADX as the main rows (the "portable backend" rows are then its BMI2/ADX build, in
//! the same run). Pin it for steadier numbers: `taskset -c 1 cargo run --profile bench -p nostr-verify-bench --example batch`.

use nostr_verify::backend::{self, Backend};
use nostr_verify::{SigRef, Verifier};
use secp256k1::{Keypair, Secp256k1};
use std::hint::black_box;

// Thread CPU time (immune to other processes stealing the core) and the median, shared with
// the benches.
#[path = "../benches/support/cpu_time.rs"]
mod support;
use support::{median, thread_cpu_ns as cpu_ns};

struct Owned {
    pk: [u8; 32],
    msg: [u8; 32],
    sig: [u8; 64],
}

/// Batches per two-thread measurement: the rows time this many batches back to back.
const TWO_BATCHES: usize = 4;

/// Wall-clock time in nanoseconds (for the two-thread figure, where thread CPU time would
/// miss the helper thread).
fn wall_ns() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

fn make(rng: &mut rand::rngs::ThreadRng, n: usize, keys: usize) -> Vec<Owned> {
    use rand::RngCore;
    let s = Secp256k1::new();
    let kps: Vec<Keypair> = (0..keys).map(|_| Keypair::new(&s, rng)).collect();
    (0..n)
        .map(|i| {
            let kp = &kps[i % keys];
            let mut msg = [0u8; 32];
            rng.fill_bytes(&mut msg);
            let sig = s.sign_schnorr_with_rng(&msg, kp, rng);
            Owned {
                pk: kp.x_only_public_key().0.serialize(),
                msg,
                sig: sig.to_byte_array(),
            }
        })
        .collect()
}

struct Case {
    name: String,
    n: usize,
    keys: String,
    base: Vec<f64>,
    ours: Vec<f64>,
}

impl Case {
    fn new(name: &str, n: usize, keys: &str) -> Self {
        Case {
            name: name.into(),
            n,
            keys: keys.into(),
            base: vec![],
            ours: vec![],
        }
    }
}

/// Borrowed views of owned signatures, in order.
fn refs(b: &[Owned]) -> Vec<SigRef<'_>> {
    b.iter()
        .map(|o| SigRef {
            pubkey: &o.pk,
            msg: &o.msg,
            sig: &o.sig,
        })
        .collect()
}

/// Times libsecp256k1 one at a time and the batch on the same signatures; pushes µs/sig.
fn run(case: &mut Case, v: &mut Verifier, b: &[Owned], expect_all: bool) {
    let refs = refs(b);
    let n = refs.len() as f64;
    let t0 = cpu_ns();
    let mut good = 0;
    for r in &refs {
        good += nostr_verify::verify_one(black_box(r)) as usize;
    }
    let t1 = cpu_ns();
    let mut ok = Vec::new();
    let all = v.verify_batch(black_box(&refs), &mut ok);
    let t2 = cpu_ns();
    assert_eq!(all, expect_all);
    assert_eq!(
        ok.iter().filter(|&&x| x).count(),
        good,
        "verdicts differ from libsecp256k1"
    );
    case.base.push((t1 - t0) as f64 / 1e3 / n);
    case.ours.push((t2 - t1) as f64 / 1e3 / n);
}

/// Where the JSON goes: `--out PATH`, else `target/bench/results.json` (the target directory
/// being `CARGO_TARGET_DIR` when set), so that a run never rewrites the tracked reference.
fn out_path() -> std::path::PathBuf {
    let mut args = std::env::args().skip(1);
    if let Some(a) = args.next() {
        let path = match a.strip_prefix("--out=") {
            Some(p) => Some(p.to_owned()),
            None if a == "--out" => args.next(),
            None => {
                eprintln!("unknown argument {a:?} (usage: batch [--out PATH])");
                std::process::exit(2);
            }
        };
        match (path, args.next()) {
            (Some(p), None) => return p.into(),
            (None, _) => eprintln!("--out needs a path"),
            (Some(_), Some(extra)) => eprintln!("unexpected argument {extra:?}"),
        }
        std::process::exit(2);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("target")
        });
    target.join("bench").join("results.json")
}

fn main() {
    let path = out_path();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);
    let mut rng = rand::thread_rng();
    let mut v = Verifier::new();
    let sizes = [16usize, 64, 256, 1024];
    let dists: [(&str, usize); 3] = [("distinct", 0), ("8 keys", 8), ("1 key", 1)];
    let mut cases: Vec<Case> = Vec::new();
    for &n in &sizes {
        for (d, _) in dists {
            cases.push(Case::new("batch", n, d));
        }
    }
    // The same batch cases on the portable backend, in the same run (when the CPU has a faster
    // one): fresh keys for each, so neither backend profits from the other's key cache.
    let auto = nostr_verify::backend::selected();
    let compare_portable = auto != Backend::Portable;
    let mut portable_cases: Vec<Case> = Vec::new();
    if compare_portable {
        for &n in &sizes {
            for (d, _) in dists {
                portable_cases.push(Case::new("batch, portable backend", n, d));
            }
        }
    }
    let mut one_bad = Case::new("1024, 8 keys, one invalid", 1024, "8 keys");
    let mut all_bad = Case::new("1024, 8 keys, all invalid", 1024, "8 keys");
    let mut all_bad_d = Case::new("1024, distinct, all invalid", 1024, "distinct");
    // Sprinkled invalid signatures: every k-th of 1024 distinct-key signatures.
    let mut sprinkled: Vec<(usize, Case)> = [5usize, 8, 16]
        .into_iter()
        .map(|k| {
            let name = format!("1024, distinct, 1 in {k} invalid");
            (k, Case::new(&name, 1024, "distinct"))
        })
        .collect();
    let mut cache = Case::new("single signature, key cache", 1, "1 key");
    // Two threads (wall clock, 4 batches back to back): base = verify_batch, ours =
    // verify_batch_two_threads.
    let mut two_d = Case::new("two threads vs one, wall clock", 1024, "distinct");
    let mut two_8 = Case::new("two threads vs one, wall clock", 1024, "8 keys");
    let mut two_4k = Case::new("two threads vs one, wall clock", 4096, "8 keys");
    eprintln!(
        "backend: {:?}; {rounds} rounds; the portable arm's BMI2/ADX build {}",
        nostr_verify::backend::selected(),
        if backend::portable_uses_bmi2() {
            "is used here"
        } else {
            "is not available here"
        }
    );
    for round in 0..rounds {
        let mut c = 0;
        for &n in &sizes {
            for (_, k) in dists {
                let k = if k == 0 { n } else { k };
                let b = make(&mut rng, n, k);
                run(&mut cases[c], &mut v, &b, true);
                if compare_portable {
                    let b = make(&mut rng, n, k);
                    backend::set_selected(Backend::Portable);
                    run(&mut portable_cases[c], &mut v, &b, true);
                    backend::set_selected(auto);
                }
                c += 1;
            }
        }
        let mut b = make(&mut rng, 1024, 8);
        b[(round * 389) % 1024].msg[0] ^= 1;
        run(&mut one_bad, &mut v, &b, false);
        let mut b = make(&mut rng, 1024, 8);
        for o in &mut b {
            o.msg[5] ^= 0x10;
        }
        run(&mut all_bad, &mut v, &b, false);
        let mut b = make(&mut rng, 1024, 1024);
        for o in &mut b {
            o.msg[5] ^= 0x10;
        }
        run(&mut all_bad_d, &mut v, &b, false);
        for (k, case) in &mut sprinkled {
            let mut b = make(&mut rng, 1024, 1024);
            for o in b.iter_mut().skip(round % *k).step_by(*k) {
                o.msg[7] ^= 0x01;
            }
            run(case, &mut v, &b, false);
        }
        for (case, n, k) in [
            (&mut two_d, 1024usize, 1024usize),
            (&mut two_8, 1024, 8),
            (&mut two_4k, 4096, 8),
        ] {
            // Throughput: TWO_BATCHES fresh batches (new keys each) verified back to back, by
            // verify_batch and by verify_batch_two_threads, the order alternating by round.
            // Each side meets each batch's keys first in half the rounds.
            let owned: Vec<Vec<Owned>> = (0..TWO_BATCHES).map(|_| make(&mut rng, n, k)).collect();
            let batches: Vec<Vec<SigRef<'_>>> = owned.iter().map(|b| refs(b)).collect();
            // Warm-up, untimed, before each pass: a small batch of other keys in the pass's
            // mode, so that the second core is awake (after the single-threaded signing it
            // may have idled for a second) and neither side meets the timed keys early.
            let warm = make(&mut rng, 256, 8);
            let warm = refs(&warm);
            let mut ok = Vec::new();
            let (mut one, mut two) = (0, 0);
            for pass in 0..2 {
                if (round + pass) % 2 == 0 {
                    v.verify_batch(&warm, &mut ok);
                } else {
                    v.verify_batch_two_threads(&warm, &mut ok);
                }
                let t0 = wall_ns();
                if (round + pass) % 2 == 0 {
                    for b in &batches {
                        assert!(v.verify_batch(black_box(b), &mut ok));
                    }
                    one = wall_ns() - t0;
                } else {
                    for b in &batches {
                        assert!(v.verify_batch_two_threads(black_box(b), &mut ok));
                    }
                    two = wall_ns() - t0;
                }
            }
            let sigs = (TWO_BATCHES * n) as f64;
            case.base.push(one as f64 / 1e3 / sigs);
            case.ours.push(two as f64 / 1e3 / sigs);
        }
        // Single signatures: 200 signatures by one key, parse + verify vs cached verify_one.
        let b = make(&mut rng, 200, 1);
        let refs = refs(&b);
        v.verify_one(&refs[0]);
        let t0 = cpu_ns();
        for r in &refs {
            assert!(nostr_verify::verify_one(black_box(r)));
        }
        let t1 = cpu_ns();
        for r in &refs {
            assert!(v.verify_one(black_box(r)));
        }
        let t2 = cpu_ns();
        cache.base.push((t1 - t0) as f64 / 1e3 / 200.0);
        cache.ours.push((t2 - t1) as f64 / 1e3 / 200.0);
        eprint!("\rround {}/{rounds}", round + 1);
    }
    eprintln!();
    println!(
        "thread CPU time, median of {rounds} rounds, µs per signature; ratio = libsecp256k1 / ours"
    );
    println!(
        "| case | n | keys | libsecp256k1 parse+verify | nostr-verify | ratio | paired ratio |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut json = String::from("{\n  \"rounds\": ");
    json += &format!(
        "{rounds},\n  \"backend\": \"{:?}\",\n  \"cases\": [\n",
        nostr_verify::backend::selected()
    );
    let all: Vec<&mut Case> = cases
        .iter_mut()
        .chain(portable_cases.iter_mut())
        .chain([&mut one_bad, &mut all_bad, &mut all_bad_d])
        .chain(sprinkled.iter_mut().map(|(_, c)| c))
        .chain([&mut cache, &mut two_d, &mut two_8, &mut two_4k])
        .collect();
    let count = all.len();
    for (i, c) in all.into_iter().enumerate() {
        let b = median(&c.base);
        let o = median(&c.ours);
        let ratio = b / o;
        let per_round: Vec<f64> = c.base.iter().zip(&c.ours).map(|(b, o)| b / o).collect();
        let paired = median(&per_round);
        println!(
            "| {} | {} | {} | {:.2} | {:.2} | {:.2}x | {:.2}x |",
            c.name, c.n, c.keys, b, o, ratio, paired
        );
        json += &format!(
            "    {{\"case\": \"{}\", \"n\": {}, \"keys\": \"{}\", \"libsecp_us\": {:.3}, \"ours_us\": {:.3}, \"ratio\": {:.3}, \"paired_ratio\": {:.3}}}{}\n",
            c.name,
            c.n,
            c.keys,
            b,
            o,
            ratio,
            paired,
            if i + 1 < count { "," } else { "" }
        );
    }
    json += "  ]\n}\n";
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("could not create {}: {e}", dir.display());
        }
    }
    match std::fs::write(&path, json) {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => eprintln!("could not write {}: {e}", path.display()),
    }
}
