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

#[cfg(nostr_verify_ifma)]
use super::sha_lanes;
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
pub const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

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

/// One SHA-256 compression of `block` into `state`, portable scalar code (FIPS 180-4,
/// section 6.2.2).
///
/// Written for the registers: the 64 rounds unrolled by a macro that renames the eight
/// working variables instead of moving them, the message schedule in a ring of 16 words
/// computed a round ahead of use, `Ch` as `g ^ (e & (f ^ g))` and `Maj` as
/// `b ^ ((a ^ b) & (b ^ c))` with `a ^ b` carried to the next round as its `b ^ c`.
pub fn compress_soft(state: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 16];
    for (wi, c) in w.iter_mut().zip(block.chunks_exact(4)) {
        *wi = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    // `bc` is b ^ c of the round about to run.
    let mut bc = b ^ c;
    macro_rules! round {
        ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $t:expr) => {{
            let wt = if $t < 16 {
                w[$t & 15]
            } else {
                let w15 = w[($t + 1) & 15];
                let w2 = w[($t + 14) & 15];
                let s0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
                let s1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
                let v = w[$t & 15]
                    .wrapping_add(s0)
                    .wrapping_add(w[($t + 9) & 15])
                    .wrapping_add(s1);
                w[$t & 15] = v;
                v
            };
            let s1 = $e.rotate_right(6) ^ $e.rotate_right(11) ^ $e.rotate_right(25);
            let ch = $g ^ ($e & ($f ^ $g));
            let t1 = $h
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[$t].wrapping_add(wt));
            let s0 = $a.rotate_right(2) ^ $a.rotate_right(13) ^ $a.rotate_right(22);
            let ab = $a ^ $b;
            let maj = $b ^ (ab & bc);
            bc = ab;
            $d = $d.wrapping_add(t1);
            $h = t1.wrapping_add(s0).wrapping_add(maj);
        }};
    }
    macro_rules! eight {
        ($t:expr) => {
            round!(a, b, c, d, e, f, g, h, $t);
            round!(h, a, b, c, d, e, f, g, $t + 1);
            round!(g, h, a, b, c, d, e, f, $t + 2);
            round!(f, g, h, a, b, c, d, e, $t + 3);
            round!(e, f, g, h, a, b, c, d, $t + 4);
            round!(d, e, f, g, h, a, b, c, $t + 5);
            round!(c, d, e, f, g, h, a, b, $t + 6);
            round!(b, c, d, e, f, g, h, a, $t + 7);
        };
    }
    eight!(0);
    eight!(8);
    eight!(16);
    eight!(24);
    eight!(32);
    eight!(40);
    eight!(48);
    eight!(56);
    // The last rounds' schedule words and `b ^ c` are not needed (read here so the macro
    // can stay uniform).
    let _ = (w, bc);
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

/// A message in a lane: which one, how many of its padded blocks are done, and its last one
/// or two blocks (the rest of the bytes, the 0x80, the zeros and the bit length).
#[cfg(nostr_verify_sha_lanes)]
struct InLane {
    msg: usize,
    done: usize,
    whole: usize,
    total: usize,
    tail: [[u8; 64]; 2],
}

#[cfg(nostr_verify_sha_lanes)]
impl InLane {
    fn new(msg: usize, bytes: &[u8], prefix_blocks: u64) -> Self {
        let whole = bytes.len() / 64;
        let rest = &bytes[whole * 64..];
        let n = padded_blocks(rest.len());
        let mut tail = [[0u8; 64]; 2];
        pad_into(rest, prefix_blocks + whole as u64, &mut tail[..n]);
        InLane {
            msg,
            done: 0,
            whole,
            total: whole + n,
            tail,
        }
    }

    /// The next block to compress.
    fn block<'a>(&'a self, bytes: &'a [u8]) -> &'a [u8; 64] {
        if self.done < self.whole {
            bytes[self.done * 64..][..64]
                .try_into()
                .unwrap_or(&self.tail[0])
        } else {
            &self.tail[self.done - self.whole]
        }
    }
}

/// The block an idle lane compresses (its result is never read).
#[cfg(nostr_verify_sha_lanes)]
static IDLE: [u8; 64] = [0u8; 64];

/// When no message is left to start, the lanes still busy are finished one at a time with
/// [`compress_soft`] once there are at most this many: a vector step costs about as much as
/// two or three scalar compressions (see `docs/backend.md`, "SHA-256 in lanes").
#[cfg(nostr_verify_sha_lanes)]
const FINISH_ALONE: usize = 2;

/// Messages of any lengths in `L` lanes: a lane whose message is done takes the next one
/// (longest first, so the last steps of the call find the lanes mostly busy), and every
/// call of `step` compresses one block in every lane. Lanes with nothing left to do hash a
/// zero block whose result is dropped, and the last [`FINISH_ALONE`] messages finish on
/// the scalar code.
#[cfg(nostr_verify_sha_lanes)]
fn refill<const L: usize>(
    step: fn(&mut [[u32; L]; 8], &[&[u8; 64]; L]),
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    let mut order: Vec<usize> = (0..msgs.len()).collect();
    order.sort_by_key(|&i| core::cmp::Reverse(msgs[i].len()));
    let mut next = order.into_iter().peekable();
    let mut lanes: [Option<InLane>; L] = core::array::from_fn(|_| None);
    let mut st = [[0u32; L]; 8];
    loop {
        let mut busy = 0;
        for (l, slot) in lanes.iter_mut().enumerate() {
            if let Some(m) = slot.as_ref().filter(|m| m.done == m.total) {
                out[m.msg] = digest_bytes(&core::array::from_fn(|i| st[i][l]));
                *slot = None;
            }
            if slot.is_none() {
                if let Some(i) = next.next() {
                    *slot = Some(InLane::new(i, msgs[i], prefix_blocks));
                    for (row, &w) in st.iter_mut().zip(midstate) {
                        row[l] = w;
                    }
                }
            }
            busy += usize::from(slot.is_some());
        }
        if busy <= FINISH_ALONE && next.peek().is_none() {
            for (l, m) in lanes.iter_mut().enumerate() {
                if let Some(m) = m.as_mut() {
                    let mut s: [u32; 8] = core::array::from_fn(|i| st[i][l]);
                    while m.done < m.total {
                        compress_soft(&mut s, m.block(msgs[m.msg]));
                        m.done += 1;
                    }
                    out[m.msg] = digest_bytes(&s);
                }
            }
            return;
        }
        let blocks: [&[u8; 64]; L] = core::array::from_fn(|l| match &lanes[l] {
            Some(m) => m.block(msgs[m.msg]),
            None => &IDLE,
        });
        step(&mut st, &blocks);
        for m in lanes.iter_mut().flatten() {
            m.done += 1;
        }
    }
}

/// The lane paths: [`refill`] with the path's kernel.
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

#[cfg(all(nostr_verify_sha_lanes, any(test, feature = "internals")))]
fn grouped_in<const L: usize>(
    step: fn(&mut [[u32; L]; 8], &[&[u8; 64]; L]),
    midstate: &[u32; 8],
    prefix_blocks: u64,
    msgs: &[&[u8]],
    out: &mut [[u8; 32]],
) {
    // Message indices by padded block count.
    let mut order: Vec<(usize, usize)> = msgs
        .iter()
        .enumerate()
        .map(|(i, m)| (padded_blocks(m.len()), i))
        .collect();
    order.sort_unstable();
    let mut blocks: Vec<[u8; 64]> = Vec::new();
    for class in order.chunk_by(|x, y| x.0 == y.0) {
        let nb = class[0].0;
        for group in class.chunks(L) {
            blocks.clear();
            blocks.resize(L * nb, [0u8; 64]);
            for lane in 0..L {
                let i = group[lane.min(group.len() - 1)].1;
                pad_into(
                    msgs[i],
                    prefix_blocks,
                    &mut blocks[lane * nb..(lane + 1) * nb],
                );
            }
            let mut st: [[u32; L]; 8] = core::array::from_fn(|i| [midstate[i]; L]);
            for k in 0..nb {
                let refs: [&[u8; 64]; L] = core::array::from_fn(|lane| &blocks[lane * nb + k]);
                step(&mut st, &refs);
            }
            for (lane, &(_, i)) in group.iter().enumerate() {
                out[i] = digest_bytes(&core::array::from_fn(|w| st[w][lane]));
            }
        }
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
