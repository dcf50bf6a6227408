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

function createWork(wasm) {
  const verifier = new wasm.Verifier(undefined, SEEN_CAPACITY);
  return {
    // Raw text frames that start like ["EVENT", ...]: one verdict code each, and for each
    // valid one the key (id + sig) the main thread remembers for tap.verifyEvent.
    frames(frames) {
      const n = frames.length;
      const events = new Array(n);
      for (let i = 0; i < n; i++) {
        let event = null;
        try {
          const m = JSON.parse(frames[i]);
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
        keys[i] = codes[i] === VERDICT_VALID ? events[i].id + events[i].sig : "";
      }
      return { codes, keys };
    },
    // Event objects (already copied to plain values by the caller): one code each.
    events(events) {
      return { codes: verifier.verifyEventsDetailed(events), keys: null };
    },
  };
}

// One request: { id, kind: "frames" | "events" | "ping", items } -> [reply, transfer list].
function handleRequest(work, m) {
  try {
    if (m.kind === "ping") return [{ id: m.id, codes: new Uint8Array(0), keys: null }, []];
    const r = m.kind === "frames" ? work.frames(m.items) : work.events(m.items);
    return [{ id: m.id, codes: r.codes, keys: r.keys }, [r.codes.buffer]];
  } catch (e) {
    return [{ id: m.id, error: String((e && e.stack) || e) }, []];
  }
}
