//! The SHA-256 paths of `backend::sha` (the `sha2` crate, 8 AVX2 lanes, 16 AVX-512F lanes,
//! 4 wasm `simd128` lanes, portable code), each called directly, so each one this machine
//! can run is tested whatever `NOSTR_VERIFY_SHA` says: against `sha2` on random lengths
//! 0-10,000 bytes (mixed lengths in one call, so lanes group them by block count and fill
//! partial groups), from the plain initial state and from midstates, and on the NIST
//! (FIPS 180-2) vectors. The lane paths
//! run with both lane schedules (a lane refilled as its message ends, the default; groups of
//! equal block count), in batches of 1, of each lane count ±1 and of equal lengths. The public
//! `sha256_many` is checked on the selected path. `wasm/tests-crate` runs this file inside
//! wasm32 too (node and headless Chromium), where the `simd128` lanes are required.

// Inside wasm32 (wasm/tests-crate includes this file) the tests are wasm-bindgen tests.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use nostr_verify::backend::sha::{
    self, hash_many_from_on, hash_many_scheduled_on, Schedule, Sha, IV,
};
use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};
use sha2::{Digest, Sha256};

/// The paths this machine runs; says so when lanes are missing.
fn paths() -> Vec<Sha> {
    let v = Sha::available();
    // wasm/tests-crate builds nostr-verify with the feature `simd128`: the lanes must be there.
    #[cfg(target_arch = "wasm32")]
    assert!(v.contains(&Sha::Lanes4), "simd128 lanes missing from {v:?}");
    for s in [Sha::Lanes16, Sha::Lanes8] {
        if !v.contains(&s) {
            eprintln!(
                "\n*** NOTE: {} is not available in this build/CPU: not tested here ***\n",
                s.name()
            );
        }
    }
    v
}

fn hex(d: &[u8; 32]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn nist_vectors_on_every_path() {
    let million = vec![b'a'; 1_000_000];
    let vectors: [(&[u8], &str); 5] = [
        (b"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (b"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (
            b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
        ),
        (
            b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
        ),
        (&million, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
    ];
    let msgs: Vec<&[u8]> = vectors.iter().map(|v| v.0).collect();
    for s in paths() {
        let mut out = vec![[0u8; 32]; msgs.len()];
        hash_many_from_on(s, &IV, 0, &msgs, &mut out);
        for (o, (m, want)) in out.iter().zip(&vectors) {
            assert_eq!(hex(o), *want, "{s:?}, {} bytes", m.len());
        }
        let mut grouped = vec![[0u8; 32]; msgs.len()];
        hash_many_scheduled_on(s, Schedule::Grouped, &IV, 0, &msgs, &mut grouped);
        assert_eq!(grouped, out, "{s:?} grouped");
        // Each vector alone too (one lane busy, the others idle or filled with copies).
        for (m, want) in &vectors {
            let mut one = [[0u8; 32]];
            hash_many_from_on(s, &IV, 0, &[m], &mut one);
            assert_eq!(hex(&one[0]), *want, "{s:?} alone, {} bytes", m.len());
        }
    }
}

#[test]
fn random_lengths_up_to_10000_on_every_path() {
    let mut rng = StdRng::seed_from_u64(0x5a17);
    for round in 0..6 {
        // Counts around the lane widths: partial groups of every size.
        let count = [1usize, 7, 8, 9, 16, 41][round];
        let data: Vec<Vec<u8>> = (0..count)
            .map(|_| {
                let len = match rng.gen_range(0..4) {
                    0 => rng.gen_range(0..130),
                    _ => rng.gen_range(0..=10_000),
                };
                let mut v = vec![0u8; len];
                rng.fill_bytes(&mut v);
                v
            })
            .collect();
        let msgs: Vec<&[u8]> = data.iter().map(|v| &v[..]).collect();
        let want: Vec<[u8; 32]> = msgs.iter().map(|m| Sha256::digest(m).into()).collect();
        for s in paths() {
            let mut got = vec![[0u8; 32]; msgs.len()];
            hash_many_from_on(s, &IV, 0, &msgs, &mut got);
            assert_eq!(got, want, "{s:?}, round {round}");
        }
    }
}

#[test]
fn equal_lengths_in_many_groups_on_every_path() {
    // What a batch hashes: many messages of one length (BIP-340 challenges: 96 bytes after a
    // one-block prefix), more than one full group of the widest lanes.
    let mut rng = StdRng::seed_from_u64(0x96);
    let prefix: [u8; 64] = core::array::from_fn(|i| (i * 3) as u8);
    let mut mid = IV;
    sha2::compress256(
        &mut mid,
        core::slice::from_ref(sha2::digest::generic_array::GenericArray::from_slice(
            &prefix,
        )),
    );
    for &len in &[0usize, 40, 55, 56, 64, 96, 119, 120, 1000] {
        let data: Vec<Vec<u8>> = (0..37)
            .map(|_| {
                let mut v = vec![0u8; len];
                rng.fill_bytes(&mut v);
                v
            })
            .collect();
        let msgs: Vec<&[u8]> = data.iter().map(|v| &v[..]).collect();
        let want: Vec<[u8; 32]> = msgs
            .iter()
            .map(|m| {
                let mut h = Sha256::new();
                h.update(prefix);
                h.update(m);
                h.finalize().into()
            })
            .collect();
        for s in paths() {
            let mut got = vec![[0u8; 32]; msgs.len()];
            hash_many_from_on(s, &mid, 1, &msgs, &mut got);
            assert_eq!(got, want, "{s:?}, {len} bytes after a prefix block");
        }
    }
}

#[test]
fn selection_follows_the_environment() {
    let var = std::env::var("NOSTR_VERIFY_SHA").unwrap_or_default();
    let forced = Sha::ALL
        .into_iter()
        .find(|s| var.trim().eq_ignore_ascii_case(s.name()));
    let selected = sha::sha_selected();
    match forced {
        Some(s) if s.is_available() => assert_eq!(selected, s),
        Some(s) => {
            eprintln!(
                "\n*** NOTE: NOSTR_VERIFY_SHA={} is not available here ***\n",
                s.name()
            );
            assert!(selected.is_available());
        }
        None if cfg!(target_arch = "wasm32") => assert_eq!(selected, Sha::Lanes4),
        None if sha::cpu_has_sha_instructions() => assert_eq!(selected, Sha::Ni),
        None => assert_ne!(selected, Sha::Soft, "soft is never the automatic choice"),
    }
    eprintln!("SHA-256 path: {}", selected.name());
    // The selected path hashes like every other (one call on the selected path).
    let msgs: [&[u8]; 3] = [b"abc", b"", &[7u8; 200]];
    let mut a = [[0u8; 32]; 3];
    sha::hash_many_from(&IV, 0, &msgs, &mut a);
    let want: Vec<[u8; 32]> = msgs.iter().map(|m| Sha256::digest(m).into()).collect();
    assert_eq!(a.to_vec(), want);
    // On x86-64 with rustc >= 1.89 both lane widths follow the CPU's AVX2 / AVX-512F.
    #[cfg(target_arch = "x86_64")]
    if Sha::Lanes16.is_available() {
        assert!(std::is_x86_feature_detected!("avx512f"));
    }
}

/// `count` random messages: lengths uniform in 0..=10,000, a quarter of them short (0..130),
/// or all of one random length when `equal`.
fn random_batch(rng: &mut StdRng, count: usize, equal: bool) -> Vec<Vec<u8>> {
    let one = rng.gen_range(0..=10_000);
    (0..count)
        .map(|_| {
            let len = if equal {
                one
            } else {
                match rng.gen_range(0..4) {
                    0 => rng.gen_range(0..130),
                    _ => rng.gen_range(0..=10_000),
                }
            };
            let mut v = vec![0u8; len];
            rng.fill_bytes(&mut v);
            v
        })
        .collect()
}

#[test]
fn mixed_batches_of_every_shape_on_every_path_and_schedule() {
    let mut rng = StdRng::seed_from_u64(0x1d5);
    let counts = [1usize, 2, 7, 8, 9, 15, 16, 17, 31, 33, 100];
    for &count in &counts {
        for equal in [false, true] {
            let data = random_batch(&mut rng, count, equal);
            let msgs: Vec<&[u8]> = data.iter().map(|v| &v[..]).collect();
            let want: Vec<[u8; 32]> = msgs.iter().map(|m| Sha256::digest(m).into()).collect();
            for s in paths() {
                for schedule in [Schedule::Refill, Schedule::Grouped] {
                    let mut got = vec![[0u8; 32]; count];
                    hash_many_scheduled_on(s, schedule, &IV, 0, &msgs, &mut got);
                    assert_eq!(
                        got, want,
                        "{s:?} {schedule:?}, {count} messages, equal {equal}"
                    );
                }
            }
            // The entry the events batch path calls, on the selected path.
            let mut got = vec![[0u8; 32]; count];
            sha::compute_ids(&msgs, &mut got);
            assert_eq!(got, want, "compute_ids, {count} messages, equal {equal}");
        }
    }
}

#[test]
fn every_length_across_the_block_boundaries_in_one_call() {
    // Lengths 0..=300 (every padding case, one to six blocks) shuffled into one call, so
    // that lanes are refilled at every block count next to every other.
    let mut rng = StdRng::seed_from_u64(0x300);
    let data: Vec<Vec<u8>> = (0..=300usize)
        .map(|len| {
            let mut v = vec![0u8; len];
            rng.fill_bytes(&mut v);
            v
        })
        .collect();
    let mut msgs: Vec<&[u8]> = data.iter().map(|v| &v[..]).collect();
    for i in (1..msgs.len()).rev() {
        msgs.swap(i, rng.gen_range(0..=i));
    }
    let want: Vec<[u8; 32]> = msgs.iter().map(|m| Sha256::digest(m).into()).collect();
    for s in paths() {
        for schedule in [Schedule::Refill, Schedule::Grouped] {
            let mut got = vec![[0u8; 32]; msgs.len()];
            hash_many_scheduled_on(s, schedule, &IV, 0, &msgs, &mut got);
            assert_eq!(got, want, "{s:?} {schedule:?}");
        }
    }
}

#[test]
fn sha256_many_hashes_like_sha2() {
    let mut rng = StdRng::seed_from_u64(0x256);
    let data = random_batch(&mut rng, 23, false);
    let msgs: Vec<&[u8]> = data.iter().map(|v| &v[..]).collect();
    let want: Vec<[u8; 32]> = msgs.iter().map(|m| Sha256::digest(m).into()).collect();
    let mut got = vec![[0u8; 32]; msgs.len()];
    nostr_verify::sha256_many(&msgs, &mut got);
    assert_eq!(got, want);
    nostr_verify::sha256_many(&[], &mut []);
}
