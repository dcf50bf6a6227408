//! Benchmark: opening many gift wraps: `nostr_verify::nip59` against a loop of nostr's
//! `UnwrappedGift::from_gift_wrap`, in the same run.
//!
//! ```text
//! cargo run --release --example gift_wraps -- [N] [K] [REPS]
//! ```
//! N wraps (default 1000) from K senders (default 10) to one recipient, REPS interleaved
//! repetitions (default 7). Single-threaded figures are thread CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`), medians (min in brackets); all-core figures are
//! wall-clock minima. The breakdown times each component alone over the same
//! messages.

#[path = "../benches/support/cpu_time.rs"]
mod cpu_time;
use cpu_time::{median, min};

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

/// Wall-clock seconds spent in `f`.
fn wall<R>(f: impl FnOnce() -> R) -> f64 {
    let t0 = Instant::now();
    black_box(f());
    t0.elapsed().as_secs_f64()
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

    // ---------------------------------------------------------------- all cores
    let mut w_loop = Vec::new();
    let mut w_ours = Vec::new();
    for _ in 0..reps {
        w_loop.push(wall(|| {
            let chunk = n.div_ceil(cores);
            std::thread::scope(|s| {
                let hs: Vec<_> = wraps
                    .chunks(chunk)
                    .map(|c| {
                        let me = &me;
                        s.spawn(move || {
                            c.iter()
                                .filter(|w| UnwrappedGift::from_gift_wrap(me, w).is_ok())
                                .count()
                        })
                    })
                    .collect();
                hs.into_iter()
                    .map(|h| h.join().expect("thread"))
                    .sum::<usize>()
            })
        }));
        w_ours.push(wall(|| unwrap_gift_wraps(&me, &wraps)));
    }
    println!("\nall {cores} cores (wall clock, µs per message, min over {reps})");
    println!(
        "  {:<38} {:>8.1}",
        "from_gift_wrap, chunks on all cores",
        us(min(&w_loop), n)
    );
    println!(
        "  {:<38} {:>8.1}   {:.2}x",
        "unwrap_gift_wraps (free function)",
        us(min(&w_ours), n),
        min(&w_loop) / min(&w_ours)
    );
}
