//! SHA-256 of many messages at once, behind the backend door.
//!
//! A batch hashes one BIP-340 challenge per signature (`H_tag(r ‖ P ‖ m)`: two compressions
//! after the tag's midstate). One message's compressions form a serial chain, but the
//! challenges of a batch are independent, so on x86-64 CPUs without SHA instructions they run
//! side by side in vector lanes: 8 messages per AVX2 vector, 16 per AVX-512F vector
//! (`sha_lanes`). [`Sha`] names the paths; [`sha_selected`] picks one once:
//!
//! | [`Sha`] | when | what |
//! |---|---|---|
//! | [`Sha::Ni`] | the CPU has SHA instructions (x86 SHA-NI, ARMv8 SHA), and on every CPU without lanes | the `sha2` crate, one message at a time (its hardware path where the CPU has one, its portable code elsewhere) |
//! | [`Sha::Lanes16`] | x86-64, rustc ≥ 1.89, `avx512f`, no SHA-NI | 16 messages per AVX-512F vector |
//! | [`Sha::Lanes8`] | x86-64, rustc ≥ 1.89, `avx2`, no SHA-NI nor AVX-512F | 8 messages per AVX2 vector |
//! | [`Sha::Soft`] | only when asked for | this module's portable code, one message at a time: what `sha2` runs on a CPU without SHA instructions, forced here so that a machine with them can test and time it |
//!
//! `NOSTR_VERIFY_SHA=ni|lanes16|lanes8|soft` forces a path (read once, at the first call;
//! a path this build or CPU cannot run falls back to the automatic choice). Every path gives
//! the same digests; `tests/sha_lanes.rs` checks each one available against `sha2` on random
//! lengths up to 10,000 bytes and on the NIST vectors.
//!
//! Messages are hashed from a midstate (the state after some whole 64-byte blocks, such as
//! BIP-340's tag prefix). Lanes need messages of the same block count: [`hash_many_from`]
//! groups them by block count (a batch's challenges all have two) and fills the lanes of a
//! last, partial group with copies of one of its messages, whose results are dropped.

use std::sync::atomic::{AtomicU8, Ordering};

#[cfg(nostr_verify_ifma)]
use super::sha_lanes;

/// A SHA-256 implementation for many messages (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sha {
    /// The `sha2` crate, one message at a time: SHA-NI or ARMv8 SHA where the CPU has them.
    Ni,
    /// 16 messages per AVX-512F vector.
    Lanes16,
    /// 8 messages per AVX2 vector.
    Lanes8,
    /// Portable scalar code, one message at a time (`sha2`'s portable algorithm).
    Soft,
}

/// The SHA-256 round constants (FIPS 180-4, section 4.2.2).
pub(crate) const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/// The SHA-256 initial state (FIPS 180-4, section 5.3.3): the midstate of an empty prefix.
#[cfg(any(test, feature = "internals"))]
pub const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

const UNSET: u8 = 0;
const NI: u8 = 1;
const LANES16: u8 = 2;
const LANES8: u8 = 3;
const SOFT: u8 = 4;
static SELECTED: AtomicU8 = AtomicU8::new(UNSET);

fn code(s: Sha) -> u8 {
    match s {
        Sha::Ni => NI,
        Sha::Lanes16 => LANES16,
        Sha::Lanes8 => LANES8,
        Sha::Soft => SOFT,
    }
}

impl Sha {
    /// Every path, in the automatic order of preference.
    pub const ALL: [Sha; 4] = [Sha::Ni, Sha::Lanes16, Sha::Lanes8, Sha::Soft];

    /// Short lowercase name (`"ni"`, `"lanes16"`, `"lanes8"`, `"soft"`), as accepted by
    /// `NOSTR_VERIFY_SHA`.
    pub fn name(self) -> &'static str {
        match self {
            Sha::Ni => "ni",
            Sha::Lanes16 => "lanes16",
            Sha::Lanes8 => "lanes8",
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
        }
    }

    /// The paths that can run here, in [`Sha::ALL`]'s order.
    #[cfg(any(test, feature = "internals"))]
    pub fn available() -> Vec<Sha> {
        Self::ALL.into_iter().filter(|s| s.is_available()).collect()
    }

    /// Messages hashed together by one call of this path's kernel.
    #[cfg(any(nostr_verify_ifma, test, feature = "internals"))]
    pub fn lanes(self) -> usize {
        match self {
            Sha::Ni | Sha::Soft => 1,
            Sha::Lanes16 => 16,
            Sha::Lanes8 => 8,
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

/// One SHA-256 compression of `block` into `state`, portable scalar code (FIPS 180-4,
/// section 6.2.2).
pub fn compress_soft(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 64];
    for (wi, c) in w.iter_mut().zip(block.chunks_exact(4)) {
        *wi = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
    }
    for t in 16..64 {
        let s0 = w[t - 15].rotate_right(7) ^ w[t - 15].rotate_right(18) ^ (w[t - 15] >> 3);
        let s1 = w[t - 2].rotate_right(17) ^ w[t - 2].rotate_right(19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16]
            .wrapping_add(s0)
            .wrapping_add(w[t - 7])
            .wrapping_add(s1);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for t in 0..64 {
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(s1)
            .wrapping_add(ch)
            .wrapping_add(K[t])
            .wrapping_add(w[t]);
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
}

/// One compression with the `sha2` crate (its SHA-NI / ARMv8 path where the CPU has one).
fn compress_sha2(state: &mut [u32; 8], block: &[u8; 64]) {
    sha2::compress256(
        state,
        core::slice::from_ref(sha2::digest::generic_array::GenericArray::from_slice(block)),
    );
}

/// The number of 64-byte blocks of a `len`-byte message after the padding (0x80, zeros, the
/// 64-bit length).
pub fn padded_blocks(len: usize) -> usize {
    (len + 9).div_ceil(64)
}

/// Writes `msg`'s padded blocks to `out` (`padded_blocks(msg.len())` of them), for a message
/// that follows `prefix_blocks` whole blocks of the same hash.
fn pad_into(msg: &[u8], prefix_blocks: u64, out: &mut [[u8; 64]]) {
    let n = out.len();
    debug_assert_eq!(n, padded_blocks(msg.len()));
    let flat = out.as_flattened_mut();
    flat[..msg.len()].copy_from_slice(msg);
    flat[msg.len()] = 0x80;
    flat[msg.len() + 1..].fill(0);
    let bits = (prefix_blocks * 64 + msg.len() as u64) * 8;
    flat[n * 64 - 8..].copy_from_slice(&bits.to_be_bytes());
}

/// Serializes a SHA-256 state as the big-endian digest.
fn digest_bytes(state: &[u32; 8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (o, w) in out.chunks_exact_mut(4).zip(state) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
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
        Sha::Lanes16 | Sha::Lanes8 => in_lanes(sha, midstate, prefix_blocks, msgs, out),
    }
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

/// The messages in groups of equal block count, `sha.lanes()` per kernel call.
#[cfg(nostr_verify_ifma)]
fn in_lanes(
    sha: Sha,
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    // Message indices by padded block count (stable: equal lengths keep their order).
    let mut order: Vec<(usize, u32)> = msgs
        .iter()
        .enumerate()
        .map(|(i, m)| (padded_blocks(m.len()), i as u32))
        .collect();
    order.sort_unstable();
    let lanes = sha.lanes();
    let mut blocks: Vec<[u8; 64]> = Vec::new();
    let mut states: Vec<[u32; 8]> = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let nb = order[start].0;
        let mut end = start;
        while end < order.len() && order[end].0 == nb {
            end += 1;
        }
        for group in order[start..end].chunks(lanes) {
            // The lanes of a partial group repeat its first message (results dropped); a group
            // of at most 8 runs in AVX2's 8 lanes when the kernel is 16 wide.
            let width = if group.len() <= 8 && sha == Sha::Lanes16 && Sha::Lanes8.is_available() {
                8
            } else {
                lanes
            };
            blocks.clear();
            blocks.resize(width * nb, [0u8; 64]);
            for lane in 0..width {
                let i = group[lane.min(group.len() - 1)].1 as usize;
                pad_into(
                    msgs[i],
                    prefix_blocks,
                    &mut blocks[lane * nb..(lane + 1) * nb],
                );
            }
            states.clear();
            states.resize(width, *midstate);
            if width == 16 {
                sha_lanes::compress16(&mut states, &blocks, nb);
            } else {
                sha_lanes::compress8(&mut states, &blocks, nb);
            }
            for (lane, &(_, i)) in group.iter().enumerate() {
                out[i as usize] = digest_bytes(&states[lane]);
            }
        }
        start = end;
    }
}

/// Without the lane kernels in this build, lanes are never available (see
/// [`Sha::is_available`]); the portable code stands in.
#[cfg(not(nostr_verify_ifma))]
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
