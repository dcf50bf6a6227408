//! Relay frames verified where they arrive as text: the tap's worker hands over the
//! `["EVENT", sub, event]` frames of a batch as one string, and this module parses them,
//! writes each event's packed record (exactly the bytes `pack_events` writes for the event
//! `JSON.parse` would build) and the fingerprint `tap.verifyEvent` looks up, so that no
//! JavaScript object is built, serialized and encoded per event on the worker.
//!
//! **Same verdicts or none.** A frame is decided here only where the record is provably the one
//! the JavaScript path would write: the frame parses as strict JSON (`serde_json`, which, like
//! `JSON.parse`, takes RFC 8259 and nothing else); it is an array whose first element is the
//! string `"EVENT"`, whose second is a string and whose third is an object; that object has
//! each of `id`, `pubkey`, `sig`, `content`, `created_at`, `kind` and `tags` exactly once (a
//! duplicate makes `JSON.parse` keep the last one); the strings are well-formed Unicode (an
//! escaped lone surrogate, which `JSON.stringify` writes back escaped, makes serde_json fail);
//! the numbers are integer tokens within ±(2^53 − 1), which `JSON.parse` reads exactly and
//! `JSON.stringify` writes as the same decimal digits (`1.0`, `1e3` or `-0` are not such
//! tokens, nor anything that would need correctly rounded float parsing); the tags are arrays
//! of strings. Every other frame gets [`UNDECIDED`], and the worker decides it the JavaScript
//! way (`JSON.parse`, `verifyEventsDetailed`), as every frame was before.
//!
//! For a decided frame, `JSON.stringify([0, pubkey, created_at, kind, tags, content])` is
//! written here with `JSON.stringify`'s escapes for well-formed strings (`\"`, `\\`, `\b`,
//! `\t`, `\n`, `\f`, `\r`, `\u00xx` for the other controls, lowercase, everything else as
//! it is), the record's fields are checked as `validateEvent` checks them (lengths counted in
//! UTF-16 units, as JavaScript counts them), and the record goes through
//! [`crate::verify_packed_events_detailed`] with every other frame of the batch: one batch, one
//! multi-scalar multiplication.

use crate::packed::{verdict, verify_packed_events_detailed, RECORD_HEX};
use crate::seen::SeenSignatures;
use nostr_verify::Verifier as BatchVerifier;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// The code of a frame this module leaves to the JavaScript path (see the module docs).
pub const UNDECIDED: u8 = 0;

/// The largest magnitude of an integer token decided here: `Number.MAX_SAFE_INTEGER`.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Verdicts on a batch of text frames: [`verify_frames`]' result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameVerdicts {
    /// One code per frame: a [`verdict`] code, or [`UNDECIDED`].
    pub codes: Vec<u8>,
    /// One key per frame, joined by `\n`: for a valid event its id followed by its
    /// fingerprint (the tap's `deliveredKey`), empty for every other frame.
    pub keys: String,
}

/// Verifies the frames of `utf8` (the UTF-8 of the joined JavaScript string), frame `i`
/// ending at UTF-16 offset `ends[i]` (the string's `length` up to it): one [`verdict`] code
/// each, or [`UNDECIDED`], and the keys of the valid ones under the tap's fingerprint `seeds`.
/// Offsets that do not delimit the string (decreasing, past its end, inside a surrogate pair)
/// leave the frames from there on undecided; bytes that are not UTF-8 leave every frame
/// undecided.
///
/// # Examples
/// ```
/// use nostr_verify_wasm::frames::{verify_frames, UNDECIDED};
/// use nostr_verify_wasm::verdict::MALFORMED;
/// let mut v = nostr_verify::Verifier::new();
/// let a = r#"["EVENT","s",{"id":"x","pubkey":"y","sig":"z","content":"","created_at":1,"kind":1,"tags":[]}]"#;
/// let b = r#"["EVENT","s",{"kind":1.5}]"#;
/// let ends = [a.len() as u32, (a.len() + b.len()) as u32]; // ASCII: UTF-16 units are bytes
/// let got = verify_frames(&mut v, None, [a, b].concat().as_bytes(), &ends, [1, 2]);
/// assert_eq!(got.codes, [MALFORMED, UNDECIDED]);
/// assert_eq!(got.keys, "\n");
/// ```
pub fn verify_frames(
    v: &mut BatchVerifier,
    seen: Option<&mut SeenSignatures>,
    utf8: &[u8],
    ends: &[u32],
    seeds: [u32; 2],
) -> FrameVerdicts {
    let n = ends.len();
    let mut codes = vec![UNDECIDED; n];
    // Not UTF-8 (never what `encodeInto` writes): no frame can be delimited.
    let (joined, bounds) = match std::str::from_utf8(utf8) {
        Ok(joined) => (joined, byte_ends(joined, ends)),
        Err(_) => ("", Vec::new()),
    };
    // The decided frames' events and records, in frame order.
    let mut decided: Vec<(usize, Event<'_>)> = Vec::with_capacity(bounds.len());
    let mut bytes: Vec<u8> = Vec::with_capacity(joined.len());
    let mut rec_ends: Vec<u32> = Vec::with_capacity(bounds.len());
    let mut start = 0;
    for (i, &end) in bounds.iter().enumerate() {
        let text = &joined[start..end];
        start = end;
        if let Ok(Frame(event)) = serde_json::from_str::<Frame<'_>>(text) {
            event.record_into(&mut bytes);
            rec_ends.push(bytes.len() as u32);
            decided.push((i, event));
        }
    }
    let got = verify_packed_events_detailed(v, seen, &bytes, &rec_ends);
    let mut keys = String::with_capacity(n * 80);
    let mut next = decided.iter().zip(&got).peekable();
    for (i, code) in codes.iter_mut().enumerate() {
        if i > 0 {
            keys.push('\n');
        }
        if let Some(&(&(at, ref event), &c)) = next.peek() {
            if at == i {
                *code = c;
                if c == verdict::VALID {
                    keys.push_str(&event.id);
                    event.fingerprint_into(seeds, &mut keys);
                }
                next.next();
            }
        }
    }
    FrameVerdicts { codes, keys }
}

/// The byte offsets in `s` of the UTF-16 offsets `ends`, as far as they delimit `s` at
/// character boundaries in increasing order.
fn byte_ends(s: &str, ends: &[u32]) -> Vec<usize> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(ends.len());
    let (mut pos, mut units) = (0usize, 0u64);
    for &end in ends {
        let end = u64::from(end);
        while units < end && pos < bytes.len() {
            let b = bytes[pos];
            let (len, u) = match b {
                0x00..=0x7f => (1, 1),
                0x80..=0xdf => (2, 1),
                0xe0..=0xef => (3, 1),
                _ => (4, 2),
            };
            pos += len;
            units += u;
        }
        if units != end {
            break;
        }
        out.push(pos);
    }
    out
}

/// A JSON string, borrowed from the frame unless it had escapes.
struct Str<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(s)))
            }
        }
        d.deserialize_str(V)
    }
}

/// An integer token within ±`MAX_SAFE_INTEGER` (see the module docs): `JSON.parse` reads it
/// exactly and `String()` writes it back as these digits.
struct SafeInt(i64);

impl<'de> de::Deserialize<'de> for SafeInt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SafeInt;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer within 2^53 - 1")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<SafeInt, E> {
                if n <= MAX_SAFE_INTEGER {
                    Ok(SafeInt(n as i64))
                } else {
                    Err(E::custom("beyond 2^53 - 1"))
                }
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<SafeInt, E> {
                if n.unsigned_abs() <= MAX_SAFE_INTEGER {
                    Ok(SafeInt(n))
                } else {
                    Err(E::custom("beyond 2^53 - 1"))
                }
            }
            // A float token (a fraction, an exponent, or an integer beyond 64 bits): not
            // decided here, whatever its value (see the module docs).
        }
        d.deserialize_i64(V)
    }
}

/// The tags: arrays of strings.
struct Tags<'a>(Vec<Vec<Str<'a>>>);

impl<'de> de::Deserialize<'de> for Tags<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tags<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of arrays of strings")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tags<'de>, A::Error> {
                let mut tags = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(tag) = seq.next_element::<Vec<Str<'de>>>()? {
                    tags.push(tag);
                }
                Ok(Tags(tags))
            }
        }
        d.deserialize_seq(V)
    }
}

/// The fields of an event that the record and the fingerprint need.
struct Event<'a> {
    id: Cow<'a, str>,
    pubkey: Cow<'a, str>,
    sig: Cow<'a, str>,
    content: Cow<'a, str>,
    created_at: i64,
    kind: i64,
    tags: Vec<Vec<Str<'a>>>,
}

impl<'de> de::Deserialize<'de> for Event<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Event<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an event object")
            }
            // Only a JSON object: an array in its place is what `JSON.parse` makes an Array,
            // which is left undecided (serde would read a struct from a sequence).
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event<'de>, A::Error> {
                let (mut id, mut pubkey, mut sig, mut content) = (None, None, None, None);
                let (mut created_at, mut kind, mut tags) = (None, None, None);
                fn once<T, E: de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
                    match slot.replace(value) {
                        None => Ok(()),
                        Some(_) => Err(E::custom("duplicate field")),
                    }
                }
                while let Some(key) = map.next_key::<Str<'de>>()? {
                    match &*key.0 {
                        "id" => once(&mut id, map.next_value::<Str<'de>>()?.0)?,
                        "pubkey" => once(&mut pubkey, map.next_value::<Str<'de>>()?.0)?,
                        "sig" => once(&mut sig, map.next_value::<Str<'de>>()?.0)?,
                        "content" => once(&mut content, map.next_value::<Str<'de>>()?.0)?,
                        "created_at" => once(&mut created_at, map.next_value::<SafeInt>()?.0)?,
                        "kind" => once(&mut kind, map.next_value::<SafeInt>()?.0)?,
                        "tags" => once(&mut tags, map.next_value::<Tags<'de>>()?.0)?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let missing = || de::Error::custom("missing field");
                Ok(Event {
                    id: id.ok_or_else(missing)?,
                    pubkey: pubkey.ok_or_else(missing)?,
                    sig: sig.ok_or_else(missing)?,
                    content: content.ok_or_else(missing)?,
                    created_at: created_at.ok_or_else(missing)?,
                    kind: kind.ok_or_else(missing)?,
                    tags: tags.ok_or_else(missing)?,
                })
            }
        }
        d.deserialize_map(V)
    }
}

/// `["EVENT", <string>, <event>, ...]`: the event.
struct Frame<'a>(Event<'a>);

impl<'de> de::Deserialize<'de> for Frame<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Frame<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an EVENT frame")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Frame<'de>, A::Error> {
                let short = || de::Error::custom("not an EVENT frame");
                let tag = seq.next_element::<Str<'de>>()?.ok_or_else(short)?;
                if tag.0 != "EVENT" {
                    return Err(short());
                }
                seq.next_element::<Str<'de>>()?.ok_or_else(short)?;
                let event = seq.next_element::<Event<'de>>()?.ok_or_else(short)?;
                // Later elements are read (the frame must still be JSON) and ignored, as
                // the JavaScript path ignores them.
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Frame(event))
            }
        }
        d.deserialize_seq(V)
    }
}

/// UTF-16 units of `s` (JavaScript's `length`).
fn utf16_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().map(char::len_utf16).sum()
    }
}

impl Event<'_> {
    /// Appends the packed record `pack_events` writes for this event: empty where
    /// `validateEvent` or the record's length checks refuse it (see `record` in lib.rs's
    /// JavaScript), else the id, the sig and the serialization, in UTF-8.
    fn record_into(&self, out: &mut Vec<u8>) {
        if utf16_len(&self.pubkey) != 64 || utf16_len(&self.id) != 64 || utf16_len(&self.sig) != 128
        {
            return;
        }
        let start = out.len();
        out.extend_from_slice(self.id.as_bytes());
        out.extend_from_slice(self.sig.as_bytes());
        debug_assert!(out.len() - start >= RECORD_HEX);
        out.extend_from_slice(b"[0,");
        json_string(&self.pubkey, out);
        out.push(b',');
        let mut digits = Digits::default();
        out.extend_from_slice(digits.of(self.created_at));
        out.push(b',');
        out.extend_from_slice(digits.of(self.kind));
        out.extend_from_slice(b",[");
        for (i, tag) in self.tags.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'[');
            for (j, s) in tag.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                json_string(&s.0, out);
            }
            out.push(b']');
        }
        out.extend_from_slice(b"],");
        json_string(&self.content, out);
        out.push(b']');
    }

    /// Appends the fingerprint the tap's `fingerprint(event, seeds)` (work.js) computes, as
    /// it writes it: two base-36 numbers joined by a dot.
    fn fingerprint_into(&self, seeds: [u32; 2], out: &mut String) {
        let mut fp = Fingerprint {
            a: seeds[0],
            b: seeds[1],
        };
        fp.string(&self.pubkey);
        fp.string(&self.sig);
        let mut digits = Digits::default();
        fp.ascii(digits.of(self.created_at));
        fp.ascii(digits.of(self.kind));
        fp.length(self.tags.len());
        for tag in &self.tags {
            fp.length(tag.len());
            for s in tag {
                fp.string(&s.0);
            }
        }
        fp.string(&self.content);
        let (a, b) = fp.finish();
        base36_into(a, out);
        out.push('.');
        base36_into(b, out);
    }
}

/// work.js's `fpUnit` state: two 32-bit lanes.
struct Fingerprint {
    a: u32,
    b: u32,
}

impl Fingerprint {
    fn unit(&mut self, c: u32) {
        self.a = (self.a ^ c).wrapping_mul(0x9e37_79b1);
        self.a ^= self.a >> 15;
        self.b = self.b.wrapping_add(c).wrapping_mul(0x85eb_ca77);
        self.b ^= self.b >> 13;
    }

    fn length(&mut self, n: usize) {
        self.unit(n as u32 & 0xffff);
        self.unit((n as u32) >> 16);
    }

    fn string(&mut self, s: &str) {
        if s.is_ascii() {
            self.ascii(s.as_bytes());
            return;
        }
        self.length(utf16_len(s));
        for u in s.encode_utf16() {
            self.unit(u32::from(u));
        }
    }

    /// [`Self::string`] of an ASCII string (one UTF-16 unit a byte), from its bytes.
    fn ascii(&mut self, s: &[u8]) {
        debug_assert!(s.is_ascii());
        self.length(s.len());
        for &b in s {
            self.unit(u32::from(b));
        }
    }

    fn finish(&self) -> (u32, u32) {
        let a = (self.a ^ (self.a >> 16)).wrapping_mul(0x85eb_ca6b) ^ self.b;
        let b = (self.b ^ (self.b >> 16)).wrapping_mul(0xc2b2_ae35) ^ a;
        (a, b)
    }
}

/// The decimal digits of an integer as `String()` (and `i64::to_string`) writes them, without
/// an allocation.
#[derive(Default)]
struct Digits([u8; 20]);

impl Digits {
    /// The digits of `n`, `-` first when it is negative.
    fn of(&mut self, n: i64) -> &[u8] {
        let buf = &mut self.0;
        let mut i = buf.len();
        let mut m = n.unsigned_abs();
        loop {
            i -= 1;
            buf[i] = b'0' + (m % 10) as u8;
            m /= 10;
            if m == 0 {
                break;
            }
        }
        if n < 0 {
            i -= 1;
            buf[i] = b'-';
        }
        &buf[i..]
    }
}

/// `n.toString(36)`.
fn base36_into(mut n: u32, out: &mut String) {
    let mut digits = [0u8; 7];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize];
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[i..].iter().map(|&d| char::from(d)));
}

/// `JSON.stringify(s)` for a well-formed string, appended as UTF-8.
fn json_string(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut run = 0;
    // Eight bytes at a time up to the first that may need an escape (a control, `"` or `\`),
    // then byte by byte from there (most strings have none).
    let mut from = 0;
    while from + 8 <= bytes.len() {
        let mut chunk = [0u8; 8];
        chunk.copy_from_slice(&bytes[from..from + 8]);
        if may_need_escape(u64::from_le_bytes(chunk)) {
            break;
        }
        from += 8;
    }
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x09 => b't',
            0x0a => b'n',
            0x0c => b'f',
            0x0d => b'r',
            0x00..=0x1f => b'u',
            _ => continue,
        };
        out.extend_from_slice(&bytes[run..i]);
        run = i + 1;
        out.push(b'\\');
        out.push(short);
        if short == b'u' {
            out.extend_from_slice(&[
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ]);
        }
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// Whether one of the eight bytes of `x` is below 0x20, `"` or `\` (exact: the borrows of
/// the subtractions only reach bytes above the first that matches).
fn may_need_escape(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_in = |y: u64| y.wrapping_sub(ONES) & !y & HIGH != 0;
    x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0
        || zero_in(x ^ (ONES * u64::from(b'"')))
        || zero_in(x ^ (ONES * u64::from(b'\\')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_string_writes_json_stringify_escapes() {
        // serde_json writes strings as JSON.stringify writes well-formed ones.
        let all: String =
            (0u32..0x80).filter_map(char::from_u32).collect::<String>() + "é\u{2028}\u{7f}😀/";
        let mut out = Vec::new();
        json_string(&all, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(&all).unwrap()
        );
    }

    #[test]
    fn json_string_escapes_at_every_offset() {
        // Each character JSON.stringify treats apart, at every offset of strings of every
        // length around the eight-byte steps, among ASCII and multi-byte characters.
        for special in ['"', '\\', '\u{0}', '\n', '\u{1f}', ' ', '\u{7f}', 'é', '😀'] {
            for fill in ['a', 'ß'] {
                for len in 0..27 {
                    for at in 0..=len {
                        let s: String = (0..len)
                            .map(|i| if i == at { special } else { fill })
                            .collect();
                        let mut out = Vec::new();
                        json_string(&s, &mut out);
                        assert_eq!(
                            String::from_utf8(out).unwrap(),
                            serde_json::to_string(&s).unwrap(),
                            "{s:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn may_need_escape_is_exact() {
        for b in 0..=255u8 {
            let want = b < 0x20 || b == b'"' || b == b'\\';
            for at in 0..8 {
                for fill in [b'a', 0x21, 0x5d, 0x80, 0xff] {
                    let mut bytes = [fill; 8];
                    bytes[at] = b;
                    assert_eq!(
                        may_need_escape(u64::from_le_bytes(bytes)),
                        want,
                        "{b} at {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn digits_are_to_string() {
        let mut d = Digits::default();
        let safe = (1i64 << 53) - 1;
        for n in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            99,
            100,
            1_700_000_000,
            safe,
            -safe,
            i64::MAX,
            i64::MIN,
        ]
        .into_iter()
        .chain((-1000..1000).map(|k| k * 7919))
        {
            assert_eq!(d.of(n), n.to_string().as_bytes());
        }
    }

    /// work.js's `fpString`, one UTF-16 unit a step as it is written there.
    fn fp_units(seeds: [u32; 2], strings: &[&str]) -> (u32, u32) {
        let mut fp = Fingerprint {
            a: seeds[0],
            b: seeds[1],
        };
        for s in strings {
            let units: Vec<u16> = s.encode_utf16().collect();
            fp.unit(units.len() as u32 & 0xffff);
            fp.unit(units.len() as u32 >> 16);
            for u in units {
                fp.unit(u32::from(u));
            }
        }
        fp.finish()
    }

    #[test]
    fn fingerprint_strings_are_their_utf16_units() {
        let long = "x".repeat(70_000) + "é";
        let strings = [
            "",
            "a",
            "ab",
            "abc",
            "é",
            "aé",
            "😀",
            "a😀b",
            "\u{ffff}\u{10000}\u{10ffff}",
            "q\"b\\\n",
            &long,
            &long[..70_000],
        ];
        for s in strings {
            let mut fp = Fingerprint {
                a: 7,
                b: 0xdead_beef,
            };
            fp.string(s);
            assert_eq!(fp.finish(), fp_units([7, 0xdead_beef], &[s]), "{s:?}");
        }
        let mut fp = Fingerprint { a: 1, b: 2 };
        let mut d = Digits::default();
        fp.ascii(d.of(-1_700_000_000));
        assert_eq!(fp.finish(), fp_units([1, 2], &["-1700000000"]));
    }

    #[test]
    fn base36_matches_to_string_36() {
        let mut s = String::new();
        for (n, want) in [(0, "0"), (35, "z"), (36, "10"), (u32::MAX, "1z141z3")] {
            s.clear();
            base36_into(n, &mut s);
            assert_eq!(s, want);
        }
    }

    #[test]
    fn byte_ends_counts_utf16_units() {
        // "a" (1 unit), "é" (1 unit, 2 bytes), "😀" (2 units, 4 bytes).
        let s = "aé😀b";
        assert_eq!(byte_ends(s, &[1, 2, 4, 5]), [1, 3, 7, 8]);
        // Inside the surrogate pair, past the end, decreasing: stops there.
        assert_eq!(byte_ends(s, &[1, 3, 5]), [1]);
        assert_eq!(byte_ends(s, &[5, 6]), [8]);
        assert_eq!(byte_ends(s, &[2, 1]), [3]);
    }

    #[test]
    fn numbers_decided_only_as_safe_integer_tokens() {
        for (tok, ok) in [
            ("0", true),
            ("-5", true),
            ("9007199254740991", true),
            ("-9007199254740991", true),
            ("9007199254740992", false),
            ("1.0", false),
            ("1e3", false),
            ("-0", false), // serde_json reads it as the float -0.0
            ("18446744073709551616", false),
        ] {
            let got = serde_json::from_str::<SafeInt>(tok);
            assert_eq!(got.is_ok(), ok, "{tok}");
        }
    }
}
