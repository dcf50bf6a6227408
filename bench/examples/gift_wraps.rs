//! Benchmark: opening many gift wraps: `nostr_verify::nip59` against a loop of nostr's
//! `UnwrappedGift::from_gift_wrap`, in the same run.
//!
//! ```text
//! cargo run --profile bench -p nostr-verify-bench --example gift_wraps -- [N] [K] [REPS]
//! ```
//! N wraps (default 1000) from K senders (default 10) to one recipient, REPS interleaved
//! repetitions (default 7). Single-threaded figures are thread CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`), medians (min in brackets). The breakdown times each
//! component alone over the same messages. The "1 thread vs 2 threads" rows give process
//! CPU time (`CLOCK_PROCESS_CPUTIME_ID`, every thread) and wall-clock time per message of
//! the same work on one and on two threads, medians of at least 9 interleaved repetitions,
//! with their ratios; the "small inputs" rows show where splitting starts to pay (the
//! default thresholds against `UnwrapOptions::always_split`). Wall-clock figures mean
//! something on idle cores only.

#[path = "../benches/support/cpu_time.rs"]
mod cpu_time;
use cpu_time::{median, min};

use ::cpu_time::ProcessTime;
use std::hint::black_box;
use std::time::Instant;

use nostr::nips::nip44::v2::ConversationKey;
use nostr::prelude::*;
use nostr_verify::nip59::{
    nip44_decrypt_with_key, unwrap_gift_wraps, GiftUnwrapper, UnwrapOptions,
};
use nostr_verify::{with_thread_verifier, SigRef, VerifyBatchExt};

/// Thread CPU seconds spent in `f`.
fn cpu<R>(f: impl FnOnce() -> R) -> f64 {
    let t0 = cpu_time::thread_cpu_ns();
    black_box(f());
    (cpu_time::thread_cpu_ns() - t0) as f64 * 1e-9
}

/// µs per message.
fn us(seconds: f64, n: usize) -> f64 {
    seconds * 1e6 / n as f64
}

struct Samples {
    name: &'static str,
    v: Vec<f64>,
}

impl Samples {
    fn new(name: &'static str) -> Self {
        Samples {
            name,
            v: Vec::new(),
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000)
        .max(1);
    let k: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10)
        .max(1);
    let reps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(7).max(1);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());

    // ---------------------------------------------------------------- the inbox
    let me = Keys::generate();
    let senders: Vec<Keys> = (0..k).map(|_| Keys::generate()).collect();
    let wraps: Vec<Event> = (0..n)
        .map(|i| {
            let sender = &senders[i % k];
            let text =
                format!("message {i}: are you coming to the meetup tonight? bring the slides");
            let rumor = EventBuilder::new(Kind::PrivateDirectMessage, text)
                .tags([Tag::public_key(me.public_key())])
                .finalize_unsigned(sender.public_key());
            GiftWrapBuilder::new(me.public_key(), rumor)
                .finalize(sender)
                .expect("gift wrap")
        })
        .collect();
    println!("{n} gift wraps from {k} senders to one recipient; {reps} repetitions; {cores} cores");

    // ---------------------------------------------------------------- identical results
    let theirs: Vec<_> = wraps
        .iter()
        .map(|w| UnwrappedGift::from_gift_wrap(&me, w))
        .collect();
    let ours = unwrap_gift_wraps(&me, &wraps);
    let mut identical = 0;
    for (a, b) in ours.iter().zip(&theirs) {
        let same = match (a, b) {
            (Ok(x), Ok(y)) => x == y,
            (Err(x), Err(y)) => x.as_nostr() == y,
            _ => false,
        };
        identical += usize::from(same);
    }
    let opened = theirs.iter().filter(|r| r.is_ok()).count();
    println!("results identical to from_gift_wrap: {identical}/{n} ({opened} opened)");
    assert_eq!(identical, n, "results differ from from_gift_wrap");

    // ---------------------------------------------------------------- single thread
    let one = UnwrapOptions::default().threads(1);
    let mut warm = GiftUnwrapper::with_options(me.clone(), one);
    black_box(warm.unwrap_gift_wraps(&wraps));
    let mut s_loop = Samples::new("from_gift_wrap loop");
    let mut s_cold = Samples::new("unwrap, fresh cache (one-off call)");
    let mut s_warm = Samples::new("GiftUnwrapper, warm cache");
    for _ in 0..reps {
        s_loop.v.push(cpu(|| {
            wraps
                .iter()
                .map(|w| UnwrappedGift::from_gift_wrap(&me, w).is_ok())
                .filter(|&ok| ok)
                .count()
        }));
        s_cold.v.push(cpu(|| {
            GiftUnwrapper::with_options(me.clone(), one).unwrap_gift_wraps(&wraps)
        }));
        s_warm.v.push(cpu(|| warm.unwrap_gift_wraps(&wraps)));
    }
    let base = median(&s_loop.v);
    println!("\nsingle thread (thread CPU time, µs per message: median [min], speed-up vs loop)");
    for s in [&s_loop, &s_cold, &s_warm] {
        println!(
            "  {:<38} {:>8.1} [{:>7.1}]   {:.2}x",
            s.name,
            us(median(&s.v), n),
            us(min(&s.v), n),
            base / median(&s.v)
        );
    }

    // ---------------------------------------------------------------- where the time goes
    let sk = me.secret_key();
    let wrap_keys: Vec<ConversationKey> = wraps
        .iter()
        .map(|w| ConversationKey::derive(sk, &w.pubkey).expect("ecdh"))
        .collect();
    let seal_json: Vec<String> = wraps
        .iter()
        .zip(&wrap_keys)
        .map(|(w, ck)| nip44_decrypt_with_key(ck, &w.content).expect("seal"))
        .collect();
    let seals: Vec<Event> = seal_json
        .iter()
        .map(|j| Event::from_json(j).expect("seal json"))
        .collect();
    let sender_keys: Vec<ConversationKey> = seals
        .iter()
        .map(|s| ConversationKey::derive(sk, &s.pubkey).expect("ecdh"))
        .collect();
    let rumor_json: Vec<String> = seals
        .iter()
        .zip(&sender_keys)
        .map(|(s, ck)| nip44_decrypt_with_key(ck, &s.content).expect("rumor"))
        .collect();
    let sender_pks: Vec<PublicKey> = senders.iter().map(|s| s.public_key()).collect();

    let mut verify_batch = Vec::new();
    let mut verify_single = Vec::new();
    let mut verify_core = Vec::new();
    let mut ecdh_wraps = Vec::new();
    let mut ecdh_senders = Vec::new();
    let mut ecdh_raw = Vec::new();
    let mut ecdh_hashed = Vec::new();
    let mut decrypt = Vec::new();
    let mut parse = Vec::new();
    let secp_sk: &secp256k1::SecretKey = sk;
    let points: Vec<secp256k1::PublicKey> = wraps
        .iter()
        .map(|w| {
            let mut c = [2u8; 33];
            c[1..].copy_from_slice(w.pubkey.as_bytes());
            secp256k1::PublicKey::from_slice(&c).expect("point")
        })
        .collect();
    for _ in 0..reps {
        verify_batch.push(cpu(|| (wraps.verify_batch(), seals.verify_batch())));
        // What `verify_batch` on events costs when it is built on the core batch verifier:
        // id recomputation plus one `Verifier::verify_batch` per layer.
        verify_core.push(cpu(|| {
            let ids = wraps.iter().chain(&seals).filter(|e| e.verify_id()).count();
            let mut ok = Vec::new();
            let mut all = true;
            for layer in [&wraps, &seals] {
                let sigs: Vec<SigRef<'_>> = layer
                    .iter()
                    .map(|e| SigRef {
                        pubkey: e.pubkey.as_bytes(),
                        msg: e.id.as_bytes(),
                        sig: e.sig.as_bytes(),
                    })
                    .collect();
                all &= with_thread_verifier(|v| v.verify_batch(&sigs, &mut ok));
            }
            assert!(all && ids == 2 * n);
        }));
        verify_single.push(cpu(|| {
            wraps
                .iter()
                .chain(&seals)
                .filter(|e| e.verify().is_ok())
                .count()
        }));
        ecdh_wraps.push(cpu(|| {
            for w in &wraps {
                black_box(ConversationKey::derive(sk, &w.pubkey).is_ok());
            }
        }));
        ecdh_senders.push(cpu(|| {
            for pk in &sender_pks {
                black_box(ConversationKey::derive(sk, pk).is_ok());
            }
        }));
        ecdh_raw.push(cpu(|| {
            for p in &points {
                black_box(secp256k1::ecdh::shared_secret_point(p, secp_sk));
            }
        }));
        ecdh_hashed.push(cpu(|| {
            for p in &points {
                black_box(secp256k1::ecdh::SharedSecret::new(p, secp_sk));
            }
        }));
        decrypt.push(cpu(|| {
            for i in 0..n {
                black_box(nip44_decrypt_with_key(&wrap_keys[i], &wraps[i].content).is_ok());
                black_box(nip44_decrypt_with_key(&sender_keys[i], &seals[i].content).is_ok());
            }
        }));
        parse.push(cpu(|| {
            for i in 0..n {
                black_box(Event::from_json(&seal_json[i]).is_ok());
                black_box(UnsignedEvent::from_json(&rumor_json[i]).is_ok());
            }
        }));
    }
    let vb = us(median(&verify_batch), n);
    let vs = us(median(&verify_single), n);
    let vc = us(median(&verify_core), n);
    let ew = us(median(&ecdh_wraps), n);
    let es = us(median(&ecdh_senders), n);
    let de = us(median(&decrypt), n);
    let pa = us(median(&parse), n);
    let ours_total = us(median(&s_cold.v), n);
    let loop_total = us(base, n);
    let ours_sum = vb + ew + es + de + pa;
    let loop_sum = vs + 2.0 * ew + de + pa;
    let share = |x: f64, t: f64| 100.0 * x / t;
    println!("\nwhere the time goes (single thread, µs per message; components timed alone)");
    println!(
        "  {:<44} {:>16} {:>16}",
        "", "unwrap_gift_wraps", "from_gift_wrap"
    );
    println!(
        "  {:<44} {:>9.1} ({:>3.0}%) {:>9.1} ({:>3.0}%)",
        "verification, wrap + seal (id + signature)",
        vb,
        share(vb, ours_total),
        vs,
        share(vs, loop_total)
    );
    println!(
        "  {:<44} {:>9.1} ({:>3.0}%) {:>9.1} ({:>3.0}%)",
        "key agreement (ECDH + HKDF), wrap layer",
        ew,
        share(ew, ours_total),
        ew,
        share(ew, loop_total)
    );
    println!(
        "  {:<44} {:>9.1} ({:>3.0}%) {:>9.1} ({:>3.0}%)",
        "key agreement, seal layer",
        es,
        share(es, ours_total),
        ew,
        share(ew, loop_total)
    );
    println!(
        "  {:<44} {:>9.1} ({:>3.0}%) {:>9.1} ({:>3.0}%)",
        "decryption (base64, HMAC, ChaCha20), 2 layers",
        de,
        share(de, ours_total),
        de,
        share(de, loop_total)
    );
    println!(
        "  {:<44} {:>9.1} ({:>3.0}%) {:>9.1} ({:>3.0}%)",
        "parsing (seal Event + rumor JSON)",
        pa,
        share(pa, ours_total),
        pa,
        share(pa, loop_total)
    );
    println!(
        "  {:<44} {:>9.1} ({:>3.0}%) {:>9.1} ({:>3.0}%)",
        "other (copies, bookkeeping)",
        ours_total - ours_sum,
        share(ours_total - ours_sum, ours_total),
        loop_total - loop_sum,
        share(loop_total - loop_sum, loop_total)
    );
    println!(
        "  {:<44} {:>9.1}        {:>9.1}",
        "total (measured above)", ours_total, loop_total
    );
    println!(
        "\nverification through the core batch verifier directly (ids + Verifier::verify_batch \
         per layer): {vc:.1} µs per message; unwrap_gift_wraps total with it: {:.1} µs \
         (projected {:.2}x vs the loop)",
        ours_total - vb + vc,
        loop_total / (ours_total - vb + vc)
    );
    println!(
        "\nECDH variants per wrap (µs): nostr ConversationKey::derive {:.1} | \
         libsecp shared_secret_point on a pre-parsed point {:.1} | \
         libsecp SharedSecret::new (hashed, not NIP-44) {:.1}",
        ew,
        us(median(&ecdh_raw), n),
        us(median(&ecdh_hashed), n)
    );

    // ---------------------------------------------------------------- 1 thread vs 2
    // Process CPU time (every thread of the process: nothing else runs in it meanwhile) and
    // wall-clock time of the same work on one thread and on two, interleaved, the order
    // alternating by repetition. Ratios are medians of each repetition's own ratio.
    let two_reps = reps.max(9);
    let one_t = UnwrapOptions::default().threads(1);
    let two_t = UnwrapOptions::default().threads(2);
    let mut warm1 = GiftUnwrapper::with_options(me.clone(), one_t);
    let mut warm2 = GiftUnwrapper::with_options(me.clone(), two_t);
    black_box((
        warm1.unwrap_gift_wraps(&wraps),
        warm2.unwrap_gift_wraps(&wraps),
    ));
    let loop_on = |threads: usize| {
        let chunk = n.div_ceil(threads);
        std::thread::scope(|s| {
            let hs: Vec<_> = wraps
                .chunks(chunk)
                .skip(1)
                .map(|c| {
                    let me = &me;
                    s.spawn(move || {
                        c.iter()
                            .filter(|w| UnwrappedGift::from_gift_wrap(me, w).is_ok())
                            .count()
                    })
                })
                .collect();
            let here = wraps[..chunk.min(n)]
                .iter()
                .filter(|w| UnwrappedGift::from_gift_wrap(&me, w).is_ok())
                .count();
            here + hs
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .sum::<usize>()
        })
    };
    let mut pairs: Vec<Pair> = vec![
        Pair::new("from_gift_wrap loop, chunk per thread"),
        Pair::new("unwrap_gift_wraps, fresh cache"),
        Pair::new("GiftUnwrapper, warm cache"),
    ];
    for rep in 0..two_reps {
        for pass in 0..2 {
            let two = (rep + pass) % 2 == 1;
            let t: usize = if two { 2 } else { 1 };
            let opts = if two { two_t } else { one_t };
            let warm = if two { &mut warm2 } else { &mut warm1 };
            pairs[0].push(two, cpu_wall(|| loop_on(t)));
            pairs[1].push(
                two,
                cpu_wall(|| {
                    GiftUnwrapper::with_options(me.clone(), opts).unwrap_gift_wraps(&wraps)
                }),
            );
            pairs[2].push(two, cpu_wall(|| warm.unwrap_gift_wraps(&wraps)));
        }
    }
    println!(
        "\n1 thread vs 2 threads, same run ({cores} cores; µs per message, medians of {two_reps}; \
         process CPU = all threads; cpu 2t/1t at most 1.15 and wall 1t/2t at least 1.5 on idle \
         cores are the targets)"
    );
    println!(
        "  {:<38} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "cpu 1t", "cpu 2t", "2t/1t", "wall 1t", "wall 2t", "1t/2t"
    );
    for p in &pairs {
        p.print(n);
    }
    let (spawn_cpu, spawn_wall) = {
        let mut c = Vec::new();
        let mut w = Vec::new();
        for _ in 0..200 {
            let (ci, wi) = cpu_wall(|| std::thread::scope(|s| s.spawn(|| black_box(1)).join()));
            c.push(ci);
            w.push(wi);
        }
        (median(&c) * 1e6, median(&w) * 1e6)
    };
    println!(
        "  thread start + join (empty scoped thread): {spawn_cpu:.1} µs process CPU, \
         {spawn_wall:.1} µs wall (median of 200)"
    );

    // ---------------------------------------------------------------- small inputs
    // Where splitting starts to pay: the first m wraps, on one thread, on two threads with
    // the default thresholds (small stages stay on the caller), and on two threads with
    // every stage split (`always_split`).
    println!(
        "\nsmall inputs (µs per message, medians of {two_reps}): the default stays on the \
         calling thread until a stage holds enough work; always_split forces the threads"
    );
    println!(
        "  {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "wraps", "cpu 1t", "cpu 2t", "cpu 2t!", "wall 1t", "wall 2t", "wall 2t!"
    );
    let forced = two_t.always_split(true);
    for m in [1usize, 2, 4, 8, 16, 32, 64, 128, 256] {
        if m > n {
            break;
        }
        let part = &wraps[..m];
        let mut u: Vec<GiftUnwrapper> = [one_t, two_t, forced]
            .into_iter()
            .map(|o| GiftUnwrapper::with_options(me.clone(), o))
            .collect();
        for x in &mut u {
            black_box(x.unwrap_gift_wraps(part));
        }
        // Enough calls per sample for a steady figure.
        let calls = (2048 / m).max(4);
        let mut cpu_s: [Vec<f64>; 3] = Default::default();
        let mut wall_s: [Vec<f64>; 3] = Default::default();
        for rep in 0..two_reps {
            for k in 0..3 {
                let j = (k + rep) % 3;
                let (c, w) = cpu_wall(|| {
                    for _ in 0..calls {
                        black_box(u[j].unwrap_gift_wraps(part));
                    }
                });
                cpu_s[j].push(us(c, m * calls));
                wall_s[j].push(us(w, m * calls));
            }
        }
        println!(
            "  {:>6} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
            m,
            median(&cpu_s[0]),
            median(&cpu_s[1]),
            median(&cpu_s[2]),
            median(&wall_s[0]),
            median(&wall_s[1]),
            median(&wall_s[2]),
        );
    }
}

/// Process CPU seconds and wall-clock seconds spent in `f`.
fn cpu_wall<R>(f: impl FnOnce() -> R) -> (f64, f64) {
    let (c0, t0) = (ProcessTime::now(), Instant::now());
    black_box(f());
    (c0.elapsed().as_secs_f64(), t0.elapsed().as_secs_f64())
}

/// One workload on one thread and on two: (process CPU, wall) seconds per repetition.
struct Pair {
    name: &'static str,
    one: Vec<(f64, f64)>,
    two: Vec<(f64, f64)>,
}

impl Pair {
    fn new(name: &'static str) -> Self {
        Pair {
            name,
            one: Vec::new(),
            two: Vec::new(),
        }
    }

    fn push(&mut self, two: bool, sample: (f64, f64)) {
        if two {
            self.two.push(sample);
        } else {
            self.one.push(sample);
        }
    }

    fn print(&self, n: usize) {
        let col = |v: &[(f64, f64)], wall: bool| {
            let x: Vec<f64> = v.iter().map(|s| if wall { s.1 } else { s.0 }).collect();
            us(median(&x), n)
        };
        let cpu_ratio: Vec<f64> = self
            .one
            .iter()
            .zip(&self.two)
            .map(|(a, b)| b.0 / a.0)
            .collect();
        let wall_ratio: Vec<f64> = self
            .one
            .iter()
            .zip(&self.two)
            .map(|(a, b)| a.1 / b.1)
            .collect();
        println!(
            "  {:<38} {:>9.1} {:>9.1} {:>8.2}x {:>9.1} {:>9.1} {:>8.2}x",
            self.name,
            col(&self.one, false),
            col(&self.two, false),
            median(&cpu_ratio),
            col(&self.one, true),
            col(&self.two, true),
            median(&wall_ratio),
        );
    }
}
