//! Packed event records, as the JavaScript side packs them (`pack_events` in lib.rs) and as
//! [`crate::frames`] writes them: their hex fields decoded, their ids hashed all at once, and
//! their signatures checked in one batch.

use crate::seen::SeenSignatures;
use nostr_verify::{SigRef, Verifier as BatchVerifier};

/// The length of the fixed part of a packed event record: id (64 hex digits) and sig (128),
/// before the serialization (which holds the pubkey).
pub const RECORD_HEX: usize = 192;

/// How every serialization starts (`JSON.stringify([0, pubkey, …])`): its pubkey's digits
/// follow.
const SERIALIZATION_HEAD: &[u8] = b"[0,\"";

/// One event checked for its id, waiting for its signature check.
struct Pending {
    index: usize,
    pubkey: [u8; 32],
    id: [u8; 32],
    sig: [u8; 64],
}

/// The value of each byte as a hex digit: 0-15 for `0-9` and `a-f`, 16-31 for `A-F` (the
/// digit plus 16, so that lowercase-only fields reject them with one mask), [`NOT_HEX`] for
/// every other byte.
const HEX_DIGIT: [u8; 256] = {
    let mut t = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 16 + 10 + i as u8;
        i += 1;
    }
    t
};

/// [`HEX_DIGIT`]'s mark of a byte that is no hex digit.
const NOT_HEX: u8 = 0x80;

/// Decodes hex digits into `out`; `upper` allows `A`-`F` too. `None` on any other byte or a
/// wrong length.
fn hex_into(digits: &[u8], out: &mut [u8], upper: bool) -> Option<()> {
    if digits.len() != out.len() * 2 {
        return None;
    }
    // Any bit of `reject` in a table entry marks a byte this field does not take.
    let reject = if upper { NOT_HEX } else { NOT_HEX | 16 };
    let mut bad = 0u8;
    for (o, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let (hi, lo) = (HEX_DIGIT[pair[0] as usize], HEX_DIGIT[pair[1] as usize]);
        bad |= hi | lo;
        *o = (hi & 15) << 4 | (lo & 15);
    }
    (bad & reject == 0).then_some(())
}

/// Decodes one packed record's hex fields: `None` unless it is long enough and its fields are
/// hex. The id and the key must be lowercase hex (nostr-tools compares the id as a string
/// with the lowercase hex of the hash, and requires a lowercase key); the signature may be of
/// either case (nostr-tools decodes it with `hexToBytes`). The key is read from the
/// serialization (`rec[RECORD_HEX..]`), right after its `[0,"`: `JSON.stringify` writes a key
/// of 64 lowercase hex digits as they are, and anything else (an escaped or non-ASCII
/// character) puts a byte that is no digit among those 64. The id is checked against the
/// hash of the serialization afterwards, all records' hashes at once.
fn parse_record(index: usize, rec: &[u8]) -> Option<Pending> {
    let json = rec.get(RECORD_HEX..)?;
    let key = json
        .strip_prefix(SERIALIZATION_HEAD)
        .and_then(|rest| rest.get(..64))?;
    let mut p = Pending {
        index,
        pubkey: [0; 32],
        id: [0; 32],
        sig: [0; 64],
    };
    hex_into(&rec[..64], &mut p.id, false)?;
    hex_into(key, &mut p.pubkey, false)?;
    hex_into(&rec[64..RECORD_HEX], &mut p.sig, true)?;
    Some(p)
}

/// What [`verify_packed_events_detailed`] (JavaScript: `Verifier.verifyEventsDetailed`) says of
/// one event. `verifyEvents`' 1/0 is `code == VALID`.
pub mod verdict {
    /// Shape, id and signature valid.
    pub const VALID: u8 = 1;
    /// Not an event nostr-tools' `validateEvent` accepts, or an id, key or signature that is
    /// not hex of the right length.
    pub const MALFORMED: u8 = 2;
    /// Well formed, but the id is not the SHA-256 of the event's serialization.
    pub const INVALID_ID: u8 = 3;
    /// Well formed with the right id, but libsecp256k1 rejects the signature.
    pub const INVALID_SIG: u8 = 4;
}

/// `verifyEvents` in plain Rust, on events packed as the JavaScript side packs them: one
/// byte per event, 1 valid and 0 not (see [`verify_packed_events_detailed`]).
///
/// # Examples
/// ```
/// let mut v = nostr_verify::Verifier::new();
/// // Two events left empty by the packer (malformed), one record that is too short.
/// assert_eq!(nostr_verify_wasm::verify_packed_events(&mut v, b"abc", &[0, 0, 3]), [0, 0, 0]);
/// ```
pub fn verify_packed_events(v: &mut BatchVerifier, bytes: &[u8], ends: &[u32]) -> Vec<u8> {
    let mut out = verify_packed_events_detailed(v, None, bytes, ends);
    for code in &mut out {
        *code = u8::from(*code == verdict::VALID);
    }
    out
}

/// Events packed as the JavaScript side packs them, one [`verdict`] code each.
///
/// Event `i` is the record `bytes[ends[i-1]..ends[i]]` (from 0 for the first): its id and its
/// sig (strings of 64 and 128 UTF-16 units, so 192 bytes of hex digits when well formed: the
/// packer checks only their lengths; a non-ASCII character puts a byte that is no digit among
/// the first 192, its UTF-8 in node, 0xff in browsers), then the UTF-8 of
/// `JSON.stringify([0, pubkey, created_at, kind, tags, content])`, from which the pubkey is
/// read (bytes 4..68 of it). An empty or otherwise unusable record (the JavaScript side leaves
/// malformed events empty) is [`verdict::MALFORMED`]; a record whose id is not the SHA-256 of
/// its serialization [`verdict::INVALID_ID`]. The others get libsecp256k1's verdict on
/// (pubkey, id, sig), through one [`BatchVerifier::verify_batch`] call, except those whose
/// (id, sig) `seen` holds, which are valid without a second check. Valid pairs are added to
/// `seen`.
///
/// # Examples
/// ```
/// use nostr_verify_wasm::verdict::MALFORMED;
/// let mut v = nostr_verify::Verifier::new();
/// let got = nostr_verify_wasm::verify_packed_events_detailed(&mut v, None, b"abc", &[0, 3]);
/// assert_eq!(got, [MALFORMED, MALFORMED]);
/// ```
pub fn verify_packed_events_detailed(
    v: &mut BatchVerifier,
    mut seen: Option<&mut SeenSignatures>,
    bytes: &[u8],
    ends: &[u32],
) -> Vec<u8> {
    let mut out = vec![verdict::MALFORMED; ends.len()];
    let mut parsed = Vec::with_capacity(ends.len());
    let mut serialized: Vec<&[u8]> = Vec::with_capacity(ends.len());
    let mut start = 0usize;
    for (i, &end) in ends.iter().enumerate() {
        let end = end as usize;
        if end < start || end > bytes.len() {
            // Not what the packer writes: the rest cannot be delimited.
            break;
        }
        if let Some(p) = parse_record(i, &bytes[start..end]) {
            parsed.push(p);
            serialized.push(&bytes[start + RECORD_HEX..end]);
        }
        start = end;
    }
    // The ids, all hashed in one call (several serializations at once in SIMD lanes).
    let mut ids = vec![[0u8; 32]; parsed.len()];
    nostr_verify::sha256_many(&serialized, &mut ids);
    let mut pending: Vec<Pending> = Vec::with_capacity(parsed.len());
    for (p, id) in parsed.into_iter().zip(&ids) {
        if p.id != *id {
            out[p.index] = verdict::INVALID_ID;
        } else if seen.as_deref().is_some_and(|s| s.contains(&p.id, &p.sig)) {
            out[p.index] = verdict::VALID;
        } else {
            pending.push(p);
        }
    }
    let refs: Vec<SigRef<'_>> = pending
        .iter()
        .map(|p| SigRef {
            pubkey: &p.pubkey,
            msg: &p.id,
            sig: &p.sig,
        })
        .collect();
    let mut ok = Vec::with_capacity(refs.len());
    v.verify_batch(&refs, &mut ok);
    for (p, good) in pending.iter().zip(ok) {
        out[p.index] = if good {
            if let Some(s) = seen.as_deref_mut() {
                s.insert(&p.id, &p.sig);
            }
            verdict::VALID
        } else {
            verdict::INVALID_SIG
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::hex_into;
    // Inside wasm too (.ci/wasm.sh), where a plain #[test] does not run.
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// The digit rule written out plainly: the reference for the table.
    fn nibble(c: u8, upper: bool) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            b'A'..=b'F' if upper => Some(c - b'A' + 10),
            _ => None,
        }
    }

    #[test]
    fn hex_table_decodes_every_byte_pair_as_the_digit_rule() {
        for upper in [false, true] {
            for a in 0..=255u8 {
                for b in 0..=255u8 {
                    let mut out = [0u8; 1];
                    let got = hex_into(&[a, b], &mut out, upper).map(|()| out[0]);
                    let want = nibble(a, upper)
                        .zip(nibble(b, upper))
                        .map(|(h, l)| h << 4 | l);
                    assert_eq!(got, want, "{a:#x} {b:#x} upper {upper}");
                }
            }
        }
        // A bad digit anywhere in a longer field, and wrong lengths.
        let mut out = [0u8; 32];
        let mut digits = [b'a'; 64];
        assert_eq!(hex_into(&digits, &mut out, false), Some(()));
        assert_eq!(out, [0xaa; 32]);
        digits[63] = b'A';
        assert_eq!(hex_into(&digits, &mut out, false), None);
        assert_eq!(hex_into(&digits, &mut out, true), Some(()));
        assert_eq!(hex_into(&digits[..63], &mut out, true), None);
        assert_eq!(hex_into(&digits, &mut out[..31], true), None);
    }
}
