//! NIP-01 event ids: the canonical serialization, streamed into SHA-256.
//!
//! The id of an event is `SHA-256([0,"<pubkey hex>",created_at,kind,tags,"content"])`, the array
//! written as compact UTF-8 JSON. rust-nostr builds that JSON with `serde_json` and hashes the
//! resulting buffer; we write the same bytes straight into a small staging buffer that feeds
//! `sha2` (SHA-NI when the CPU has it), with no allocation and no intermediate `String`.
//! Without SHA instructions a batch's events are serialized side by side instead and hashed
//! together in vector lanes ([`compute_ids`], `backend::sha::compute_ids`).
//!
//! The bytes must equal `serde_json`'s to the last one, so the string escaping follows
//! `serde_json`'s `format_escaped_str` exactly:
//!
//! | byte | written as |
//! |---|---|
//! | `"` | `\"` |
//! | `\` | `\\` |
//! | 0x08, 0x09, 0x0A, 0x0C, 0x0D | `\b`, `\t`, `\n`, `\f`, `\r` |
//! | other 0x00–0x1F | `\u00XX`, lowercase hex |
//! | everything else (0x7F, U+2028, non-ASCII, `/`) | itself |
//!
//! `tests/nostr_id.rs` checks this against `EventId::compute` for every control character and
//! for random strings.

use super::view::EventView;
use crate::backend::sha;
use sha2::{Digest, Sha256};

/// Events serialized per call of [`sha::compute_ids`] in [`compute_ids`]. A lane schedule
/// keeps 16 lanes busy only when the call holds far more blocks than its longest message
/// (the real corpus has events of about 1,500 blocks among a median of 7): in a simulation
/// on the corpus, 48 % of the 16-lane steps' lanes do useful work with 256 events a call,
/// 62 % with 512, 88 % with 1,024 (96 % of the ideal cost once the last two messages
/// finish on the scalar code), while 1,024 events' bytes (about 0.9 MB on the corpus) still
/// fit in L2 (measured in `bench/examples/sha_paths.rs`).
const IDS_PER_CALL: usize = 1024;

/// Staging buffer size: 32 SHA-256 blocks.
const STAGE: usize = 2048;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Where serialized bytes go.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Sha256 {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
}

impl Sink for &mut Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// A buffered JSON writer in front of a [`Sink`].
struct Writer<S: Sink> {
    sink: S,
    buf: [u8; STAGE],
    len: usize,
}

impl<S: Sink> Writer<S> {
    fn new(sink: S) -> Self {
        Writer {
            sink,
            buf: [0; STAGE],
            len: 0,
        }
    }

    fn flush(&mut self) {
        if self.len > 0 {
            self.sink.put(&self.buf[..self.len]);
            self.len = 0;
        }
    }

    #[inline]
    fn byte(&mut self, b: u8) {
        if self.len == STAGE {
            self.flush();
        }
        self.buf[self.len] = b;
        self.len += 1;
    }

    #[inline]
    fn bytes(&mut self, s: &[u8]) {
        if s.len() > STAGE - self.len {
            self.flush();
            if s.len() >= STAGE {
                self.sink.put(s);
                return;
            }
        }
        self.buf[self.len..self.len + s.len()].copy_from_slice(s);
        self.len += s.len();
    }

    fn decimal(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.bytes(&digits[i..]);
    }

    fn hex_string(&mut self, bytes: &[u8; 32]) {
        let mut out = [0u8; 66];
        out[0] = b'"';
        for (i, b) in bytes.iter().enumerate() {
            out[1 + 2 * i] = HEX[(b >> 4) as usize];
            out[2 + 2 * i] = HEX[(b & 15) as usize];
        }
        out[65] = b'"';
        self.bytes(&out);
    }

    /// A JSON string literal with `serde_json`'s escaping (see the module docs).
    fn string(&mut self, s: &str) {
        let s = s.as_bytes();
        self.byte(b'"');
        let mut start = 0;
        while start < s.len() {
            let i = start + find_escape(&s[start..]);
            self.bytes(&s[start..i]);
            if i == s.len() {
                break;
            }
            self.escape(s[i]);
            start = i + 1;
        }
        self.byte(b'"');
    }

    fn escape(&mut self, b: u8) {
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x09 => b't',
            0x0A => b'n',
            0x0C => b'f',
            0x0D => b'r',
            _ => 0,
        };
        if short != 0 {
            self.bytes(&[b'\\', short]);
        } else {
            self.bytes(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 15) as usize],
            ]);
        }
    }

    /// `[0,"<pubkey>",created_at,kind,[[..],..],"content"]`
    fn event<E: EventView + ?Sized>(&mut self, e: &E) {
        self.bytes(b"[0,");
        self.hex_string(e.pubkey_bytes());
        self.byte(b',');
        self.decimal(e.created_at());
        self.byte(b',');
        self.decimal(u64::from(e.kind()));
        self.bytes(b",[");
        for (i, tag) in e.tag_slices().enumerate() {
            if i > 0 {
                self.byte(b',');
            }
            self.byte(b'[');
            for (j, value) in tag.iter().enumerate() {
                if j > 0 {
                    self.byte(b',');
                }
                self.string(value);
            }
            self.byte(b']');
        }
        self.bytes(b"],");
        self.string(e.content());
        self.byte(b']');
        self.flush();
    }
}

/// `true` for the bytes a JSON string must escape: `"`, `\` and 0x00–0x1F.
#[inline]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Index of the first byte of `s` that needs escaping, or `s.len()`.
///
/// Eight bytes at a time: with `L = 0x0101..01` and `H = 0x8080..80`, `(w - k·L) & !w & H` has
/// the high bit set in the lowest byte of `w` that is below `k` (for `k <= 0x80`), and
/// possibly in bytes above it (a borrow only propagates upwards). So the lowest flagged byte
/// over the three tests (`< 0x20`, `== '"'`, `== '\'`, the last two as "zero after xor") is
/// always a real hit, which is all we use.
#[inline]
fn find_escape(s: &[u8]) -> usize {
    const L: u64 = 0x0101_0101_0101_0101;
    const H: u64 = 0x8080_8080_8080_8080;
    #[inline(always)]
    fn word(s: &[u8], at: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w)
    }
    #[inline(always)]
    fn hits(w: u64) -> u64 {
        let ctrl = w.wrapping_sub(0x20 * L) & !w;
        let q = w ^ (b'"' as u64 * L);
        let quote = q.wrapping_sub(L) & !q;
        let b = w ^ (b'\\' as u64 * L);
        let backslash = b.wrapping_sub(L) & !b;
        (ctrl | quote | backslash) & H
    }
    let mut i = 0;
    // 32 bytes per step: four independent words, one branch.
    while i + 32 <= s.len() {
        let h = [
            hits(word(s, i)),
            hits(word(s, i + 8)),
            hits(word(s, i + 16)),
            hits(word(s, i + 24)),
        ];
        if h[0] | h[1] | h[2] | h[3] != 0 {
            break;
        }
        i += 32;
    }
    while i + 8 <= s.len() {
        let h = hits(word(s, i));
        if h != 0 {
            return i + (h.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < s.len() {
        if needs_escape(s[i]) {
            return i;
        }
        i += 1;
    }
    s.len()
}

/// The NIP-01 id of `event`, recomputed from its fields (not the claimed `id`).
///
/// Equal to rust-nostr's `EventId::compute(&pubkey, &created_at, &kind, &tags, &content)`
/// (0.45; `EventId::new` in 0.44), without allocating.
///
/// # Examples
/// ```
/// # #[cfg(feature = "nostr")] {
/// use nostr::event::Event;
/// let json = r#"{"id":"d3e8f1d9a1b1a6fd5b3e6f3d7de1d38be0a1dcfc4e28e6d7c4d36dd4b1e1b8e9","pubkey":"79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798","created_at":1,"kind":1,"tags":[],"content":"hi","sig":"00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"}"#;
/// let event = Event::from_json(json).unwrap();
/// let id = nostr_verify::compute_id(&event);
/// assert_eq!(
///     id,
///     *nostr::event::EventId::compute(&event.pubkey, &event.created_at, &event.kind, &event.tags, &event.content).as_bytes()
/// );
/// # }
/// ```
pub fn compute_id<E: EventView + ?Sized>(event: &E) -> [u8; 32] {
    let mut w = Writer::new(Sha256::new());
    w.event(event);
    w.sink.finalize().into()
}

/// The NIP-01 ids of `events` ([`compute_id`] of each, in order) into `out`, which is
/// cleared first. This is what `verify_batch()` checks the claimed ids against.
///
/// On CPUs with SHA instructions each event is streamed through `sha2` as in [`compute_id`];
/// on x86-64 CPUs without them the events are serialized 1,024 at a time and hashed together
/// in AVX2 or AVX-512F vector lanes (several times faster than one at a time; see
/// `docs/backend.md`, "SHA-256 in lanes").
///
/// # Examples
/// ```
/// # #[cfg(feature = "nostr")] {
/// use nostr::event::Event;
/// let json = r#"{"id":"d3e8f1d9a1b1a6fd5b3e6f3d7de1d38be0a1dcfc4e28e6d7c4d36dd4b1e1b8e9","pubkey":"79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798","created_at":1,"kind":1,"tags":[],"content":"hi","sig":"00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"}"#;
/// let events = vec![Event::from_json(json).unwrap(); 3];
/// let mut ids = Vec::new();
/// nostr_verify::compute_ids(&events, &mut ids);
/// assert_eq!(ids, vec![nostr_verify::compute_id(&events[0]); 3]);
/// # }
/// ```
pub fn compute_ids<E: EventView>(events: &[E], out: &mut Vec<[u8; 32]>) {
    out.clear();
    if !sha::hashes_in_batches() {
        out.extend(events.iter().map(|e| compute_id(e)));
        return;
    }
    let mut bytes = Vec::with_capacity(1024 * IDS_PER_CALL.min(events.len()));
    let mut ends = Vec::with_capacity(IDS_PER_CALL.min(events.len()));
    for group in events.chunks(IDS_PER_CALL) {
        bytes.clear();
        ends.clear();
        {
            // One writer for the group (`event` flushes at its end, so `sink` then holds
            // every byte so far).
            let mut w = Writer::new(&mut bytes);
            for e in group {
                w.event(e);
                ends.push(w.sink.len());
            }
        }
        let msgs: Vec<&[u8]> = ends
            .iter()
            .scan(0, |start, &end| {
                let m = &bytes[*start..end];
                *start = end;
                Some(m)
            })
            .collect();
        let at = out.len();
        out.resize(at + group.len(), [0u8; 32]);
        sha::compute_ids(&msgs, &mut out[at..]);
    }
}

/// The exact bytes [`compute_id`] hashes: the NIP-01 serialization of `event`.
pub fn id_preimage<E: EventView + ?Sized>(event: &E) -> Vec<u8> {
    let mut w = Writer::new(Vec::new());
    w.event(event);
    w.sink
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_escape_matches_the_bytewise_scan() {
        // Every byte value at every position of a 0..=72-byte window (both the 32- and 8-byte steps), on a clean background
        // that contains bytes just above and below each threshold.
        let background: Vec<u8> = (0..72)
            .map(|i| [0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff, 0x20][i % 8])
            .collect();
        for len in 0..=background.len() {
            for pos in 0..len {
                for b in 0..=255u8 {
                    let mut s = background[..len].to_vec();
                    s[pos] = b;
                    let want = s.iter().position(|&c| needs_escape(c)).unwrap_or(len);
                    assert_eq!(find_escape(&s), want, "len {len} pos {pos} byte {b:#04x}");
                }
            }
            let s = &background[..len];
            assert_eq!(find_escape(s), len);
        }
    }

    #[test]
    fn find_escape_lowest_of_two_hits() {
        for a in 0..40 {
            for b in a + 1..40 {
                for (x, y) in [(0x00u8, b'"'), (b'\\', 0x1f), (b'"', b'\\'), (0x1f, 0x00)] {
                    let mut s = vec![b'a'; 40];
                    s[a] = x;
                    s[b] = y;
                    assert_eq!(find_escape(&s), a);
                }
            }
        }
    }

    #[test]
    fn decimal_and_escape_forms() {
        let mut w = Writer::new(Vec::new());
        for n in [0u64, 9, 10, 65535, u64::MAX] {
            w.decimal(n);
            w.byte(b' ');
        }
        w.string("\u{0}\u{8}\t\n\u{b}\u{c}\r\u{1f}\"\\/\u{7f}\u{2028}😀");
        w.flush();
        let got = String::from_utf8(w.sink).unwrap();
        assert_eq!(
            got,
            "0 9 10 65535 18446744073709551615 \"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f\\\"\\\\/\u{7f}\u{2028}😀\""
        );
    }

    #[test]
    fn long_strings_cross_the_staging_buffer() {
        // Lengths around the staging size, with escapes placed at the boundary.
        for len in [STAGE - 3, STAGE - 1, STAGE, STAGE + 1, 3 * STAGE + 7] {
            let mut s = "x".repeat(len);
            s.replace_range(len / 2..len / 2 + 1, "\n");
            let mut w = Writer::new(Vec::new());
            w.byte(b'[');
            w.string(&s);
            w.flush();
            let want = format!("[\"{}\"", s.replace('\n', "\\n"));
            assert_eq!(String::from_utf8(w.sink).unwrap(), want);
        }
    }
}
