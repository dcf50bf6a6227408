//! JavaScript bindings of [`nostr_verify`], built with wasm-bindgen into the npm packages
//! `wasm/pkg-node` and `wasm/pkg-web` (see `wasm/build.sh` and `wasm/README.md`).
//!
//! The JavaScript API:
//! - `verifySignatures(pubkeys, msgs, sigs): Uint8Array`: `n` BIP-340 checks given as
//!   `n·32`, `n·32` and `n·64` bytes, one verdict byte each (1 valid, 0 not);
//! - `verifyEvents(events): Uint8Array` and `verifyEvent(event): boolean`: Nostr events with
//!   nostr-tools' `verifyEvent` semantics (shape checked, id recomputed, signature checked);
//!   a malformed event gets 0, never an exception;
//! - `class Verifier`: the same three methods on a verifier of its own, whose key cache
//!   lasts across calls (the functions above share one per thread).
//!
//! Every verdict is libsecp256k1's (compiled into the same module): see [`nostr_verify`].
//!
//! The logic lives in plain Rust ([`verify_signatures_with`], [`verify_packed_events`]) so
//! that it is tested natively as well; the exported functions only move bytes across.

use nostr_verify::{SigRef, Verifier as BatchVerifier};
use wasm_bindgen::prelude::*;

pub mod frames;
mod packed;
mod seen;

pub use packed::{verdict, verify_packed_events, verify_packed_events_detailed, RECORD_HEX};
pub use seen::SeenSignatures;

/// The lengths given to `verifySignatures` do not describe `n` signatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LengthMismatch {
    /// Bytes of public keys given.
    pub pubkeys: usize,
    /// Bytes of messages given.
    pub msgs: usize,
    /// Bytes of signatures given.
    pub sigs: usize,
}

impl core::fmt::Display for LengthMismatch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "verifySignatures: for n signatures, pubkeys must hold n*32 bytes, msgs n*32 and \
             sigs n*64; got {}, {} and {} bytes",
            self.pubkeys, self.msgs, self.sigs
        )
    }
}

impl std::error::Error for LengthMismatch {}

/// `n` when `pubkeys`, `msgs` and `sigs` hold `n·32`, `n·32` and `n·64` bytes for one `n`.
fn signature_count(pubkeys: &[u8], msgs: &[u8], sigs: &[u8]) -> Result<usize, LengthMismatch> {
    let n = pubkeys.len() / 32;
    if pubkeys.len() % 32 != 0 || msgs.len() != n * 32 || sigs.len() != n * 64 {
        return Err(LengthMismatch {
            pubkeys: pubkeys.len(),
            msgs: msgs.len(),
            sigs: sigs.len(),
        });
    }
    Ok(n)
}

/// `verifySignatures` in plain Rust: one verdict byte per signature (1 valid, 0 not).
///
/// # Errors
/// [`LengthMismatch`] unless `pubkeys` holds `n·32` bytes, `msgs` `n·32` and `sigs` `n·64`
/// for one `n`.
///
/// # Examples
/// ```
/// let mut v = nostr_verify::Verifier::new();
/// let out = nostr_verify_wasm::verify_signatures_with(&mut v, &[1; 64], &[2; 64], &[3; 128]);
/// assert_eq!(out.unwrap(), [0, 0]);
/// assert!(nostr_verify_wasm::verify_signatures_with(&mut v, &[1; 32], &[2; 32], &[3; 63]).is_err());
/// ```
pub fn verify_signatures_with(
    v: &mut BatchVerifier,
    pubkeys: &[u8],
    msgs: &[u8],
    sigs: &[u8],
) -> Result<Vec<u8>, LengthMismatch> {
    let n = signature_count(pubkeys, msgs, sigs)?;
    let refs: Vec<SigRef<'_>> = pubkeys
        .chunks_exact(32)
        .zip(msgs.chunks_exact(32))
        .zip(sigs.chunks_exact(64))
        .filter_map(|((p, m), s)| SigRef::from_slices(p, m, s).ok())
        .collect();
    debug_assert_eq!(refs.len(), n);
    let mut ok = Vec::with_capacity(n);
    v.verify_batch(&refs, &mut ok);
    Ok(ok.into_iter().map(u8::from).collect())
}

#[wasm_bindgen(typescript_custom_section)]
const NOSTR_EVENT_TS: &'static str = r#"
/** A Nostr event (NIP-01), as nostr-tools types it. */
export interface NostrEvent {
  /** Lowercase hex of the SHA-256 of the serialized event (32 bytes). */
  id: string;
  /** Lowercase hex of the author's x-only public key (32 bytes). */
  pubkey: string;
  /** Unix time in seconds. */
  created_at: number;
  /** Event kind. */
  kind: number;
  /** Tags: arrays of strings. */
  tags: string[][];
  /** Content. */
  content: string;
  /** Hex of the BIP-340 signature of the id (64 bytes). */
  sig: string;
}
"#;

#[wasm_bindgen(inline_js = r#"
const encoder = new TextEncoder();

// nostr-tools' validateEvent, check for check, but for the pubkey's digits: only its length is
// checked here, its digits (lowercase hex) by the Rust side, which rejects the record
// otherwise (a non-ASCII character's first byte lands among the hex bytes too, and is no
// digit). One regular expression an event less.
function validEvent(event) {
  if (!(event instanceof Object)) return false;
  if (typeof event.kind !== "number") return false;
  if (typeof event.content !== "string") return false;
  if (typeof event.created_at !== "number") return false;
  if (typeof event.pubkey !== "string") return false;
  if (event.pubkey.length !== 64) return false;
  if (!Array.isArray(event.tags)) return false;
  for (let i = 0; i < event.tags.length; i++) {
    const tag = event.tags[i];
    if (!Array.isArray(tag)) return false;
    for (let j = 0; j < tag.length; j++) {
      if (typeof tag[j] !== "string") return false;
    }
  }
  return true;
}

// The fields of one event's record, [id, sig, serialization], or null when
// nostr-tools' verifyEvent would return false before checking the signature: a malformed
// event (getEventHash throws), an id that cannot equal the lowercase hex of a hash, a sig
// that hexToBytes cannot decode to 64 bytes. Of the id and the sig only the type and the
// length are checked here; the Rust side checks their digits (lowercase for the id, either
// case for the sig) as it decodes them.
function record(event) {
  if (!validEvent(event)) return null;
  const id = event.id;
  const sig = event.sig;
  if (typeof id !== "string" || id.length !== 64) return null;
  if (typeof sig !== "string" || sig.length !== 128) return null;
  const json = JSON.stringify([0, event.pubkey, event.created_at, event.kind, event.tags, event.content]);
  return [id, sig, json];
}

// The hex fields into `bytes` at `pos`, one byte a UTF-16 unit: ASCII as is, anything else as
// 0xff (no hex digit, so the Rust side rejects the record, as it rejects the UTF-8 that
// encodeInto would write). Returns the new position.
function asciiInto(s, bytes, pos) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    bytes[pos++] = c < 0x80 ? c : 0xff;
  }
  return pos;
}

// UTF-8 of `s` into `bytes` at `pos` (room for 3 bytes a unit is the caller's), as
// TextEncoder writes it: a lone surrogate becomes U+FFFD (JSON.stringify escapes lone
// surrogates, so for its output that branch only guards). Returns the new position.
function utf8Into(s, bytes, pos) {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      bytes[pos++] = c;
    } else if (c < 0x800) {
      bytes[pos++] = 0xc0 | (c >> 6);
      bytes[pos++] = 0x80 | (c & 63);
    } else {
      if (c >= 0xd800 && c < 0xe000) {
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (c < 0xdc00 && d >= 0xdc00 && d < 0xe000) {
          i++;
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          bytes[pos++] = 0xf0 | (c >> 18);
          bytes[pos++] = 0x80 | ((c >> 12) & 63);
          bytes[pos++] = 0x80 | ((c >> 6) & 63);
          bytes[pos++] = 0x80 | (c & 63);
          continue;
        }
        c = 0xfffd;
      }
      bytes[pos++] = 0xe0 | (c >> 12);
      bytes[pos++] = 0x80 | ((c >> 6) & 63);
      bytes[pos++] = 0x80 | (c & 63);
    }
  }
  return pos;
}

// How a record's fields reach the buffer: TextEncoder.encodeInto in node (whose encodeInto
// reads V8's string directly), asciiInto and utf8Into in browsers (where encodeInto first
// copies the string out of V8: the JavaScript writer is faster there, and slower in node).
// room(f) is the most bytes write(f, bytes, pos) adds; write returns the new position.
const inNode = typeof process === "object" && process !== null &&
  typeof process.versions === "object" && process.versions !== null &&
  typeof process.versions.node === "string";
const writer = inNode
  ? {
      room: (f) => (f[0].length + f[1].length + f[2].length) * 3,
      write: (f, bytes, pos) => pos + encoder.encodeInto(f[0] + f[1] + f[2], bytes.subarray(pos)).written,
    }
  : {
      room: (f) => f[0].length + f[1].length + f[2].length * 3,
      write: (f, bytes, pos) => utf8Into(f[2], bytes, asciiInto(f[1], bytes, asciiInto(f[0], bytes, pos))),
    };

export function pack_events(events, what) {
  if (!Array.isArray(events)) {
    throw new TypeError(what + ": expected an array of events, got " + (events === null ? "null" : typeof events));
  }
  const n = events.length;
  const ends = new Uint32Array(n);
  // Room for records of 1 KiB (a note of about 480 serialized bytes makes one of about 740):
  // most calls then neither regrow nor copy the buffer.
  let bytes = new Uint8Array(Math.max(4096, n * 1024));
  let pos = 0;
  for (let i = 0; i < n; i++) {
    let s = null;
    try {
      s = record(events[i]);
    } catch (_) {
      s = null; // a throwing getter or toJSON: this event alone is malformed
    }
    if (s !== null) {
      const need = writer.room(s);
      if (bytes.length - pos < need) {
        const grown = new Uint8Array(Math.max(bytes.length * 2, pos + need));
        grown.set(bytes.subarray(0, pos));
        bytes = grown;
      }
      pos = writer.write(s, bytes, pos);
    }
    ends[i] = pos;
  }
  return [bytes.subarray(0, pos), ends];
}
"#)]
extern "C" {
    #[wasm_bindgen(catch)]
    fn pack_events(events: &JsValue, what: &str) -> Result<js_sys::Array, JsValue>;
}

/// Packs `events` on the JavaScript side and verifies them: 1/0 each.
fn events_with(v: &mut BatchVerifier, events: &JsValue, what: &str) -> Result<Vec<u8>, JsValue> {
    let packed = pack_events(events, what)?;
    let bytes = js_sys::Uint8Array::from(packed.get(0)).to_vec();
    let ends = js_sys::Uint32Array::from(packed.get(1)).to_vec();
    Ok(verify_packed_events(v, &bytes, &ends))
}

/// Packs `events` on the JavaScript side and verifies them: a [`verdict`] code each.
fn events_detailed(
    v: &mut BatchVerifier,
    seen: Option<&mut SeenSignatures>,
    events: &JsValue,
    what: &str,
) -> Result<Vec<u8>, JsValue> {
    let packed = pack_events(events, what)?;
    let bytes = js_sys::Uint8Array::from(packed.get(0)).to_vec();
    let ends = js_sys::Uint32Array::from(packed.get(1)).to_vec();
    Ok(verify_packed_events_detailed(v, seen, &bytes, &ends))
}

/// Verifies `n` BIP-340 signatures: `pubkeys` (`n·32` bytes of x-only keys), `msgs` (`n·32`
/// bytes, for Nostr the event ids) and `sigs` (`n·64` bytes). Returns one byte per
/// signature, 1 valid and 0 not, exactly libsecp256k1's verdicts.
///
/// # Errors
/// Throws an `Error` when the lengths are not `n·32`, `n·32` and `n·64` for one `n`.
#[wasm_bindgen(js_name = verifySignatures)]
pub fn verify_signatures(pubkeys: &[u8], msgs: &[u8], sigs: &[u8]) -> Result<Vec<u8>, JsError> {
    nostr_verify::with_thread_verifier(|v| verify_signatures_with(v, pubkeys, msgs, sigs))
        .map_err(|e| JsError::new(&e.to_string()))
}

/// Not API: the benchmark's baseline (`wasm/bench.mjs`). `n` signatures given as
/// `verifySignatures` takes them, each key parsed and each signature verified on its own with
/// the `secp256k1` crate (libsecp256k1's C code, compiled into this same module), one verdict
/// byte each: what a caller of libsecp256k1 without batching gets, in the same engine.
///
/// # Errors
/// Throws an `Error` when the lengths are not `n·32`, `n·32` and `n·64` for one `n`.
#[doc(hidden)]
#[wasm_bindgen(js_name = __benchLibsecpVerifyEach)]
pub fn bench_libsecp_verify_each(
    pubkeys: &[u8],
    msgs: &[u8],
    sigs: &[u8],
) -> Result<Vec<u8>, JsError> {
    libsecp_verify_each(pubkeys, msgs, sigs).map_err(|e| JsError::new(&e.to_string()))
}

/// The plain-Rust body of `__benchLibsecpVerifyEach`: libsecp256k1 one signature at a time.
///
/// # Errors
/// [`LengthMismatch`] unless `pubkeys` holds `n·32` bytes, `msgs` `n·32` and `sigs` `n·64`
/// for one `n`.
#[doc(hidden)]
pub fn libsecp_verify_each(
    pubkeys: &[u8],
    msgs: &[u8],
    sigs: &[u8],
) -> Result<Vec<u8>, LengthMismatch> {
    signature_count(pubkeys, msgs, sigs)?;
    let secp = secp256k1::Secp256k1::verification_only();
    Ok(pubkeys
        .chunks_exact(32)
        .zip(msgs.chunks_exact(32))
        .zip(sigs.chunks_exact(64))
        .map(|((p, m), s)| {
            let p: &[u8; 32] = p.try_into().expect("chunks of 32");
            let s: [u8; 64] = s.try_into().expect("chunks of 64");
            let good = secp256k1::XOnlyPublicKey::from_byte_array(p).is_ok_and(|pk| {
                secp.verify_schnorr(&secp256k1::schnorr::Signature::from_byte_array(s), m, &pk)
                    .is_ok()
            });
            u8::from(good)
        })
        .collect())
}

/// Verifies Nostr events as nostr-tools' `verifyEvent` does, one verdict byte per event
/// (1 valid, 0 not): the event's shape (`validateEvent`), its id (the SHA-256 of its
/// serialization, compared as lowercase hex) and its signature (libsecp256k1's verdict). A
/// malformed event gets 0; it never throws for one event.
///
/// # Errors
/// Throws a `TypeError` when `events` is not an array.
#[wasm_bindgen(js_name = verifyEvents)]
pub fn verify_events(
    #[wasm_bindgen(unchecked_param_type = "NostrEvent[]")] events: &JsValue,
) -> Result<Vec<u8>, JsValue> {
    nostr_verify::with_thread_verifier(|v| events_with(v, events, "verifyEvents"))
}

/// Verifies one Nostr event, a drop-in for nostr-tools' `verifyEvent` (it does not read or
/// set nostr-tools' `verifiedSymbol` cache): `true` when its shape, its id and its signature
/// are valid, `false` for anything else, malformed input included. Never throws.
#[wasm_bindgen(js_name = verifyEvent)]
pub fn verify_event(#[wasm_bindgen(unchecked_param_type = "NostrEvent")] event: &JsValue) -> bool {
    nostr_verify::with_thread_verifier(|v| verify_one_event(v, event))
}

/// One event through the packer.
fn verify_one_event(v: &mut BatchVerifier, event: &JsValue) -> bool {
    let one = js_sys::Array::of1(event);
    matches!(events_with(v, &one, "verifyEvent").as_deref(), Ok([1]))
}

/// The largest key cache a JavaScript `Verifier` gets (2^20 keys), whatever it asks for: a
/// larger number is more likely a mistake than a plan, and would take gigabytes.
pub const MAX_CACHE_CAPACITY: usize = 1 << 20;

/// A batch verifier of its own (JavaScript class `Verifier`): its key cache lasts across
/// calls, so repeated authors are parsed and lifted once.
#[wasm_bindgen(js_name = Verifier)]
pub struct JsVerifier {
    inner: BatchVerifier,
    seen: Option<SeenSignatures>,
}

#[wasm_bindgen(js_class = Verifier)]
impl JsVerifier {
    /// A verifier whose key cache holds at least `cacheCapacity` keys (default 2,048; at
    /// most [`MAX_CACHE_CAPACITY`] are kept). Its secret comes from `crypto.getRandomValues`.
    /// With `seenCapacity` (default 0: none; at most [`MAX_CACHE_CAPACITY`]),
    /// `verifyEventsDetailed` remembers that many valid (id, signature) pairs, so that a copy
    /// of an event it has accepted (the same event from another relay) costs only its id's
    /// hash: see [`SeenSignatures`].
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(js_name = cacheCapacity)] cache_capacity: Option<u32>,
        #[wasm_bindgen(js_name = seenCapacity)] seen_capacity: Option<u32>,
    ) -> JsVerifier {
        let inner = match cache_capacity {
            Some(c) => BatchVerifier::with_cache_capacity((c as usize).min(MAX_CACHE_CAPACITY)),
            None => BatchVerifier::new(),
        };
        let seen = seen_capacity
            .filter(|&c| c > 0)
            .map(|c| SeenSignatures::new((c as usize).min(MAX_CACHE_CAPACITY)));
        JsVerifier { inner, seen }
    }

    /// As `verifyEvents`, with a reason for each event: 1 valid, 2 malformed, 3 invalid id,
    /// 4 invalid signature ([`verdict`]). Events whose (id, signature) this verifier accepted
    /// before skip the signature check when it was built with a `seenCapacity`.
    ///
    /// # Errors
    /// Throws a `TypeError` when `events` is not an array.
    #[wasm_bindgen(js_name = verifyEventsDetailed)]
    pub fn verify_events_detailed(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "NostrEvent[]")] events: &JsValue,
    ) -> Result<Vec<u8>, JsValue> {
        events_detailed(
            &mut self.inner,
            self.seen.as_mut(),
            events,
            "verifyEventsDetailed",
        )
    }

    /// The tap's worker's call: text frames joined into one string, given as its UTF-8
    /// (`TextEncoder.encodeInto`: one native copy, where a `string` parameter would be copied
    /// by wasm-bindgen's loop over its characters), frame `i` ending at UTF-16 offset
    /// `ends[i]` of the string; verified without building an object per event (see
    /// [`frames`]). Returns `[codes, keys]`: a `Uint8Array` of one code per frame (as
    /// `verifyEventsDetailed`'s, or 0 for a frame left to the caller: anything but a plain
    /// `["EVENT", sub, event]` frame of well-formed strings and safe integers, and every frame
    /// when `utf8` is not UTF-8), and for the valid ones their id and fingerprint under
    /// `seedA`, `seedB` (the tap's `deliveredKey`), joined by newlines, empty for the others.
    #[wasm_bindgen(js_name = verifyFrames, unchecked_return_type = "[Uint8Array, string]")]
    pub fn verify_frames(
        &mut self,
        utf8: &[u8],
        ends: &[u32],
        #[wasm_bindgen(js_name = seedA)] seed_a: u32,
        #[wasm_bindgen(js_name = seedB)] seed_b: u32,
    ) -> js_sys::Array {
        let got = frames::verify_frames(
            &mut self.inner,
            self.seen.as_mut(),
            utf8,
            ends,
            [seed_a, seed_b],
        );
        js_sys::Array::of2(
            &js_sys::Uint8Array::from(&got.codes[..]).into(),
            &JsValue::from_str(&got.keys),
        )
    }

    /// Valid (id, signature) pairs remembered now (see `seenCapacity`).
    #[wasm_bindgen(getter, js_name = seenSize)]
    pub fn seen_size(&self) -> u32 {
        self.seen.as_ref().map_or(0, |s| s.len() as u32)
    }

    /// As the function `verifySignatures`, with this verifier's key cache.
    ///
    /// # Errors
    /// Throws an `Error` when the lengths are not `n·32`, `n·32` and `n·64` for one `n`.
    #[wasm_bindgen(js_name = verifySignatures)]
    pub fn verify_signatures(
        &mut self,
        pubkeys: &[u8],
        msgs: &[u8],
        sigs: &[u8],
    ) -> Result<Vec<u8>, JsError> {
        verify_signatures_with(&mut self.inner, pubkeys, msgs, sigs)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// As the function `verifyEvents`, with this verifier's key cache.
    ///
    /// # Errors
    /// Throws a `TypeError` when `events` is not an array.
    #[wasm_bindgen(js_name = verifyEvents)]
    pub fn verify_events(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "NostrEvent[]")] events: &JsValue,
    ) -> Result<Vec<u8>, JsValue> {
        events_with(&mut self.inner, events, "verifyEvents")
    }

    /// As the function `verifyEvent`, with this verifier's key cache.
    #[wasm_bindgen(js_name = verifyEvent)]
    pub fn verify_event(
        &mut self,
        #[wasm_bindgen(unchecked_param_type = "NostrEvent")] event: &JsValue,
    ) -> bool {
        verify_one_event(&mut self.inner, event)
    }

    /// This verifier's counters: `{ batches, batchesHeld, batchAccepted, singleChecked,
    /// keyCacheHits, keyCacheMisses }` (numbers), for monitoring and tests.
    #[wasm_bindgen(unchecked_return_type = "VerifierStats")]
    pub fn stats(&self) -> JsValue {
        let s = self.inner.stats();
        let o = js_sys::Object::new();
        for (k, n) in [
            ("batches", s.batches),
            ("batchesHeld", s.batches_passed),
            ("batchAccepted", s.batched),
            ("singleChecked", s.one_at_a_time),
            ("keyCacheHits", s.key_hits),
            ("keyCacheMisses", s.key_misses),
        ] {
            // Setting a data property on a fresh plain object cannot fail.
            let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), &JsValue::from_f64(n as f64));
        }
        o.into()
    }
}

#[wasm_bindgen(typescript_custom_section)]
const VERIFIER_STATS_TS: &'static str = r#"
/** Counters of a Verifier (see Verifier.stats()). */
export interface VerifierStats {
  /** Batch equations evaluated. */
  batches: number;
  /** Batch equations that held. */
  batchesHeld: number;
  /** Signatures accepted by an equation that held. */
  batchAccepted: number;
  /** Signatures checked one at a time with libsecp256k1. */
  singleChecked: number;
  /** Key-cache hits. */
  keyCacheHits: number;
  /** Key-cache misses. */
  keyCacheMisses: number;
}
"#;
