// ---- work.js: what the tap's worker does (also run on the main thread in inline mode) ----
// Shared by both packages' tap-worker.js and tap.js (wasm/package/tap/assemble.sh joins the
// parts). `wasm` is the loaded nostr-verify-wasm module.

// Verdict codes of Verifier.verifyEventsDetailed.
const VERDICT_VALID = 1;
const VERDICT_MALFORMED = 2;
const VERDICT_INVALID_ID = 3;
const VERDICT_INVALID_SIG = 4;

// How many valid (id, sig) pairs the worker's verifier remembers, so that the same event from
// a second relay costs a hash and not a second signature check (its id is still recomputed).
const SEEN_CAPACITY = 1 << 16;

// The string an event's id is the SHA-256 of (nostr-tools' serializeEvent).
function serialization(e) {
  return JSON.stringify([0, e.pubkey, e.created_at, e.kind, e.tags, e.content]);
}

// A 64-bit fingerprint (two 32-bit lanes) of a serialization under a tap's random seeds.
// tap.verifyEvent looks up id + sig + fingerprint, so that an event with the id and sig of a
// delivered one but any other field changed is not taken for it. The seeds never leave the
// process; a forger who cannot see fingerprints can only guess one (2^-64).
function fingerprint(s, seeds) {
  let a = seeds[0] ^ s.length;
  let b = seeds[1];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x9e3779b1);
    a ^= a >>> 15;
    b = Math.imul(b + c, 0x85ebca77);
    b ^= b >>> 13;
  }
  a = Math.imul(a ^ (a >>> 16), 0x85ebca6b) ^ b;
  b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35) ^ a;
  return (a >>> 0).toString(36) + "." + (b >>> 0).toString(36);
}

// The key tap.verifyEvent remembers for a delivered event.
function deliveredKey(e, seeds) {
  return e.id + e.sig + fingerprint(serialization(e), seeds);
}

function createWork(wasm) {
  const verifier = new wasm.Verifier(undefined, SEEN_CAPACITY);
  return {
    // Raw text frames that start like ["EVENT", ...], joined into one string (`batch.joined`,
    // frame i ending at `batch.ends[i]`: one copy to post, not one per frame): one verdict
    // code each, and for each valid one the key (deliveredKey) the main thread remembers for
    // tap.verifyEvent.
    frames(batch, seeds) {
      const { joined, ends } = batch;
      const n = ends.length;
      const events = new Array(n);
      let start = 0;
      for (let i = 0; i < n; i++) {
        let event = null;
        const frame = joined.slice(start, ends[i]);
        start = ends[i];
        try {
          const m = JSON.parse(frame);
          if (Array.isArray(m) && m.length >= 3 && m[0] === "EVENT" && typeof m[1] === "string") {
            event = m[2];
          }
        } catch (_) {
          event = null; // not JSON: malformed
        }
        events[i] = event;
      }
      const codes = verifier.verifyEventsDetailed(events);
      const keys = new Array(n);
      for (let i = 0; i < n; i++) {
        keys[i] = codes[i] === VERDICT_VALID ? deliveredKey(events[i], seeds) : "";
      }
      return { codes, keys };
    },
    // Event objects (already copied to plain values by the caller): one code each.
    events(events) {
      return { codes: verifier.verifyEventsDetailed(events), keys: null };
    },
  };
}

// One request: { id, kind: "frames" | "events" | "ping", items, seeds } -> [reply, transfer].
// (A ping may carry wasmUrl: the browsers' worker loads the module from there.)
function handleRequest(work, m) {
  try {
    if (m.kind === "ping") return [{ id: m.id, codes: new Uint8Array(0), keys: null }, []];
    const r = m.kind === "frames" ? work.frames(m.items, m.seeds) : work.events(m.items);
    return [{ id: m.id, codes: r.codes, keys: r.keys }, [r.codes.buffer]];
  } catch (e) {
    return [{ id: m.id, error: String((e && e.stack) || e) }, []];
  }
}
