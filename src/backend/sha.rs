//! SHA-256 of many messages at once, behind the backend door.
//!
//! A batch hashes one BIP-340 challenge per signature (`H_tag(r ‖ P ‖ m)`: two compressions
//! after the tag's midstate). One message's compressions form a serial chain, but the
//! challenges of a batch are independent, so on x86-64 CPUs without SHA instructions they run
//! side by side in vector lanes: 8 messages per AVX2 vector, 16 per AVX-512F vector
//! (`sha_lanes`), 4 per WebAssembly `simd128` vector (`sha_simd128`). [`Sha`] names the
//! paths; [`sha_selected`] picks one once:
//!
//! | [`Sha`] | when | what |
//! |---|---|---|
//! | [`Sha::Ni`] | the CPU has SHA instructions (x86 SHA-NI, ARMv8 SHA), and on every CPU without lanes | the `sha2` crate, one message at a time (its hardware path where the CPU has one, its portable code elsewhere) |
//! | [`Sha::Lanes16`] | x86-64, rustc ≥ 1.89, `avx512f`, no SHA-NI | 16 messages per AVX-512F vector |
//! | [`Sha::Lanes8`] | x86-64, rustc ≥ 1.89, `avx2`, no SHA-NI nor AVX-512F | 8 messages per AVX2 vector |
//! | [`Sha::Lanes4`] | wasm32 with the crate feature `simd128` | 4 messages per WebAssembly `simd128` vector (`sha_simd128`) |
//! | [`Sha::Soft`] | only when asked for | this module's portable code, one message at a time: what `sha2` runs on a CPU without SHA instructions, forced here so that a machine with them can test and time it |
//!
//! `NOSTR_VERIFY_SHA=ni|lanes16|lanes8|lanes4|soft` forces a path (read once, at the first
//! call; a path this build or CPU cannot run falls back to the automatic choice). Every path gives
//! the same digests; `tests/sha_lanes.rs` checks each one available against `sha2` on random
//! lengths up to 10,000 bytes and on the NIST vectors.
//!
//! Messages are hashed from a midstate (the state after some whole 64-byte blocks, such as
//! BIP-340's tag prefix), and may have any lengths: on the lane paths a lane whose message
//! is done takes the next one (the refill schedule: messages longest first, one block per
//! lane per kernel call; the last two messages finish on the scalar code), so messages of
//! different lengths share a call without idle lanes until its very end. [`compute_ids`]
//! is the entry for plain SHA-256 of many messages, the NIP-01 event ids of a batch.

use std::sync::atomic::{AtomicU8, Ordering};

pub use super::sha_core::{compress_soft, padded_blocks, IV};
use super::sha_core::{digest_bytes, pad_into};
#[cfg(nostr_verify_ifma)]
use super::sha_lanes;
#[cfg(all(nostr_verify_sha_lanes, any(test, feature = "internals")))]
use super::sha_refill::grouped_in;
#[cfg(nostr_verify_sha_lanes)]
use super::sha_refill::refill;
#[cfg(all(target_arch = "wasm32", nostr_verify_sha_lanes))]
use super::sha_simd128;

/// A SHA-256 implementation for many messages (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sha {
    /// The `sha2` crate, one message at a time: SHA-NI or ARMv8 SHA where the CPU has them.
    Ni,
    /// 16 messages per AVX-512F vector.
    Lanes16,
    /// 8 messages per AVX2 vector.
    Lanes8,
    /// 4 messages per WebAssembly `simd128` vector (wasm32 with the feature `simd128`).
    Lanes4,
    /// Portable scalar code, one message at a time (`sha2`'s portable algorithm).
    Soft,
}

const UNSET: u8 = 0;
const NI: u8 = 1;
const LANES16: u8 = 2;
const LANES8: u8 = 3;
const SOFT: u8 = 4;
const LANES4: u8 = 5;
static SELECTED: AtomicU8 = AtomicU8::new(UNSET);

fn code(s: Sha) -> u8 {
    match s {
        Sha::Ni => NI,
        Sha::Lanes16 => LANES16,
        Sha::Lanes8 => LANES8,
        Sha::Soft => SOFT,
        Sha::Lanes4 => LANES4,
    }
}

impl Sha {
    /// Every path, in the automatic order of preference.
    pub const ALL: [Sha; 5] = [Sha::Ni, Sha::Lanes16, Sha::Lanes8, Sha::Lanes4, Sha::Soft];

    /// Short lowercase name (`"ni"`, `"lanes16"`, `"lanes8"`, `"lanes4"`, `"soft"`), as
    /// accepted by `NOSTR_VERIFY_SHA`.
    pub fn name(self) -> &'static str {
        match self {
            Sha::Ni => "ni",
            Sha::Lanes16 => "lanes16",
            Sha::Lanes8 => "lanes8",
            Sha::Lanes4 => "lanes4",
            Sha::Soft => "soft",
        }
    }

    /// Whether this path can run here (this build and this CPU). [`Sha::Ni`] and
    /// [`Sha::Soft`] run everywhere ([`Sha::Ni`] is the `sha2` crate, with or without SHA
    /// instructions).
    pub fn is_available(self) -> bool {
        match self {
            Sha::Ni | Sha::Soft => true,
            #[cfg(nostr_verify_ifma)]
            Sha::Lanes16 => sha_lanes::avx512().is_some(),
            #[cfg(nostr_verify_ifma)]
            Sha::Lanes8 => sha_lanes::avx2().is_some(),
            #[cfg(not(nostr_verify_ifma))]
            Sha::Lanes16 | Sha::Lanes8 => false,
            Sha::Lanes4 => cfg!(all(target_arch = "wasm32", nostr_verify_sha_lanes)),
        }
    }

    /// The paths that can run here, in [`Sha::ALL`]'s order.
    #[cfg(any(test, feature = "internals"))]
    pub fn available() -> Vec<Sha> {
        Self::ALL.into_iter().filter(|s| s.is_available()).collect()
    }

    /// Messages hashed together by one call of this path's kernel.
    #[cfg(any(test, feature = "internals"))]
    pub fn lanes(self) -> usize {
        match self {
            Sha::Ni | Sha::Soft => 1,
            Sha::Lanes16 => 16,
            Sha::Lanes8 => 8,
            Sha::Lanes4 => 4,
        }
    }
}

/// Whether the CPU has SHA instructions that the `sha2` crate uses (x86 SHA-NI; on aarch64
/// the ARMv8 SHA-256 extension, which `sha2` uses when built with its `asm` feature there).
pub fn cpu_has_sha_instructions() -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        std::is_x86_feature_detected!("sha") && std::is_x86_feature_detected!("sse4.1")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("sha2")
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// The automatic choice: [`Sha::Ni`] with SHA instructions, else the widest lanes available,
/// else [`Sha::Ni`] (the `sha2` crate's portable code).
fn detect() -> Sha {
    if cpu_has_sha_instructions() {
        Sha::Ni
    } else if Sha::Lanes16.is_available() {
        Sha::Lanes16
    } else if Sha::Lanes8.is_available() {
        Sha::Lanes8
    } else if Sha::Lanes4.is_available() {
        Sha::Lanes4
    } else {
        Sha::Ni
    }
}

/// The SHA-256 path the crate uses: `NOSTR_VERIFY_SHA` if set to an available path (read once,
/// at the first call), else the automatic choice (see the module docs). [`set_sha_selected`]
/// overrides it later.
pub fn sha_selected() -> Sha {
    match SELECTED.load(Ordering::Relaxed) {
        NI => Sha::Ni,
        LANES16 => Sha::Lanes16,
        LANES8 => Sha::Lanes8,
        SOFT => Sha::Soft,
        LANES4 => Sha::Lanes4,
        _ => {
            let var = std::env::var("NOSTR_VERIFY_SHA").unwrap_or_default();
            let var = var.trim();
            let forced = Sha::ALL
                .into_iter()
                .find(|s| var.eq_ignore_ascii_case(s.name()))
                .filter(|s| s.is_available());
            let s = forced.unwrap_or_else(detect);
            // A concurrent first call or `set_sha_selected` may have won: keep its choice.
            let _ = SELECTED.compare_exchange(UNSET, code(s), Ordering::Relaxed, Ordering::Relaxed);
            sha_selected()
        }
    }
}

/// Makes `sha` the path [`sha_selected`] returns from now on, process-wide (or the automatic
/// choice if `sha` is not available here), and returns the path actually selected. For
/// benchmarks and tests: every path gives the same digests.
#[cfg(any(test, feature = "internals"))]
pub fn set_sha_selected(sha: Sha) -> Sha {
    let s = if sha.is_available() { sha } else { detect() };
    SELECTED.store(code(s), Ordering::Relaxed);
    s
}

/// One compression with the `sha2` crate (its SHA-NI / ARMv8 path where the CPU has one).
fn compress_sha2(state: &mut [u32; 8], block: &[u8; 64]) {
    sha2::compress256(
        state,
        core::slice::from_ref(sha2::digest::generic_array::GenericArray::from_slice(block)),
    );
}

/// `out[i] = SHA-256(prefix ‖ msgs[i])` on the [selected](sha_selected) path, where `prefix` is
/// `prefix_blocks` whole 64-byte blocks whose state is `midstate` ([`IV`] and 0 for a plain
/// SHA-256).
///
/// # Panics
/// If `msgs` and `out` differ in length.
pub fn hash_many_from(
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    hash_many_from_on(sha_selected(), midstate, prefix_blocks, msgs, out);
}

/// [`hash_many_from`] on the path `sha` (the automatic choice if it is not available here).
///
/// # Panics
/// If `msgs` and `out` differ in length.
pub fn hash_many_from_on(
    sha: Sha,
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    assert_eq!(
        msgs.len(),
        out.len(),
        "hash_many_from: one digest per message"
    );
    let sha = if sha.is_available() { sha } else { detect() };
    match sha {
        Sha::Ni => one_at_a_time(compress_sha2, midstate, prefix_blocks, msgs, out),
        Sha::Soft => one_at_a_time(compress_soft, midstate, prefix_blocks, msgs, out),
        Sha::Lanes16 | Sha::Lanes8 | Sha::Lanes4 => {
            in_lanes(sha, midstate, prefix_blocks, msgs, out)
        }
    }
}

/// Whether the selected path wants many messages in one call ([`compute_ids`],
/// [`hash_many_from`]) rather than each hashed as it is produced: false for [`Sha::Ni`]
/// (the `sha2` crate streams a message through its hardware path with no gain from
/// company), true for the lanes and for the forced portable path.
#[cfg(any(feature = "nostr", feature = "nostr-0-44", test, feature = "internals"))]
pub fn hashes_in_batches() -> bool {
    sha_selected() != Sha::Ni
}

/// `out[i] = SHA-256(msgs[i])` for messages of any lengths, on the [selected](sha_selected)
/// path: the NIP-01 event ids of a batch (each id the hash of a serialized event, typically
/// 5-16 blocks). On the lane paths a lane whose message is done takes the next one, so
/// lanes are not held back by the longest message of a group.
///
/// # Panics
/// If `msgs` and `out` differ in length.
pub fn compute_ids(msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    hash_many_from(&IV, 0, msgs, out);
}

/// Each message on its own with `compress`.
fn one_at_a_time(
    compress: fn(&mut [u32; 8], &[u8; 64]),
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    let mut tail = [[0u8; 64]; 2];
    for (m, o) in msgs.iter().zip(out.iter_mut()) {
        let mut s = *midstate;
        let mut whole = m.chunks_exact(64);
        for c in &mut whole {
            let mut b = [0u8; 64];
            b.copy_from_slice(c);
            compress(&mut s, &b);
        }
        let rest = whole.remainder();
        let n = padded_blocks(rest.len());
        let bits_prefix = prefix_blocks + (m.len() / 64) as u64;
        pad_into(rest, bits_prefix, &mut tail[..n]);
        for b in &tail[..n] {
            compress(&mut s, b);
        }
        *o = digest_bytes(&s);
    }
}

/// How the lane paths share their lanes among messages of different lengths.
#[cfg(any(test, feature = "internals"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Each lane takes the next message as soon as its own is done ([`hash_many_from`]'s way).
    Refill,
    /// Messages sorted into groups of equal block count, a group per kernel call, the lanes
    /// of a partial group filled with copies (the first lane kernels' way, kept to measure).
    Grouped,
}

/// [`hash_many_from_on`] with the lane schedule `schedule` (for the lane paths; the others
/// have no lanes to share). For benchmarks and tests.
///
/// # Panics
/// If `msgs` and `out` differ in length.
#[cfg(any(test, feature = "internals"))]
pub fn hash_many_scheduled_on(
    sha: Sha,
    schedule: Schedule,
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    let sha = if sha.is_available() { sha } else { detect() };
    #[cfg(nostr_verify_sha_lanes)]
    if schedule == Schedule::Grouped && sha.lanes() > 1 {
        assert_eq!(
            msgs.len(),
            out.len(),
            "hash_many_from: one digest per message"
        );
        return grouped(sha, midstate, prefix_blocks, msgs, out);
    }
    let _ = schedule;
    hash_many_from_on(sha, midstate, prefix_blocks, msgs, out);
}

/// The lane paths: [`refill`](super::sha_refill::refill) with the path's kernel.
#[cfg(nostr_verify_sha_lanes)]
fn in_lanes(
    sha: Sha,
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    match sha {
        #[cfg(nostr_verify_ifma)]
        Sha::Lanes16 => refill::<16>(sha_lanes::step16, midstate, prefix_blocks, msgs, out),
        #[cfg(nostr_verify_ifma)]
        Sha::Lanes8 => refill::<8>(sha_lanes::step8, midstate, prefix_blocks, msgs, out),
        #[cfg(target_arch = "wasm32")]
        Sha::Lanes4 => refill::<4>(sha_simd128::step4, midstate, prefix_blocks, msgs, out),
        _ => one_at_a_time(compress_soft, midstate, prefix_blocks, msgs, out),
    }
}

/// The messages in groups of equal block count, `sha.lanes()` per group, the lanes of a
/// partial group repeating its first message (results dropped) ([`Schedule::Grouped`]).
#[cfg(all(nostr_verify_sha_lanes, any(test, feature = "internals")))]
fn grouped(
    sha: Sha,
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    match sha {
        #[cfg(nostr_verify_ifma)]
        Sha::Lanes16 => grouped_in::<16>(sha_lanes::step16, midstate, prefix_blocks, msgs, out),
        #[cfg(nostr_verify_ifma)]
        Sha::Lanes8 => grouped_in::<8>(sha_lanes::step8, midstate, prefix_blocks, msgs, out),
        #[cfg(target_arch = "wasm32")]
        Sha::Lanes4 => grouped_in::<4>(sha_simd128::step4, midstate, prefix_blocks, msgs, out),
        _ => one_at_a_time(compress_soft, midstate, prefix_blocks, msgs, out),
    }
}

/// Without the lane kernels in this build, lanes are never available (see
/// [`Sha::is_available`]); the portable code stands in.
#[cfg(not(nostr_verify_sha_lanes))]
fn in_lanes(_: Sha, midstate: &[u32; 8], prefix_blocks: u64, msgs: &[&[u8]], out: &mut [[u8; 32]]) {
    one_at_a_time(compress_soft, midstate, prefix_blocks, msgs, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn soft_compress_matches_sha2() {
        let mut s1 = IV;
        let mut s2 = IV;
        let mut block = [0u8; 64];
        for round in 0..50u8 {
            for (i, b) in block.iter_mut().enumerate() {
                *b = (i as u8)
                    .wrapping_mul(31)
                    .wrapping_add(round.wrapping_mul(7));
            }
            compress_soft(&mut s1, &block);
            compress_sha2(&mut s2, &block);
            assert_eq!(s1, s2, "round {round}");
        }
    }

    #[test]
    fn every_path_hashes_every_length_like_sha2() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 131 + 7) as u8).collect();
        let msgs: Vec<&[u8]> = (0..=200).map(|n| &data[..n]).collect();
        let want: Vec<[u8; 32]> = msgs.iter().map(|m| Sha256::digest(m).into()).collect();
        for sha in Sha::available() {
            let mut got = vec![[0u8; 32]; msgs.len()];
            hash_many_from_on(sha, &IV, 0, &msgs, &mut got);
            assert_eq!(got, want, "{sha:?}");
        }
    }

    #[test]
    fn padding_block_counts() {
        assert_eq!(padded_blocks(0), 1);
        assert_eq!(padded_blocks(55), 1);
        assert_eq!(padded_blocks(56), 2);
        assert_eq!(padded_blocks(64), 2);
        assert_eq!(padded_blocks(119), 2);
        assert_eq!(padded_blocks(120), 3);
        assert_eq!(Sha::available()[0], Sha::Ni);
        assert!(Sha::available().contains(&Sha::Soft));
        for s in Sha::ALL {
            assert_eq!(Sha::ALL.iter().filter(|t| t.name() == s.name()).count(), 1);
        }
    }
}
