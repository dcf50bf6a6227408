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

// A 64-bit fingerprint (two 32-bit lanes) of an event's signed fields and signature, under a
// tap's random seeds: every string length-prefixed, unit by unit, and the numbers as String()
// writes them. tap.verifyEvent looks up id + fingerprint, so that an event with the id and sig
// of a delivered one but any other field changed is not taken for it. The seeds never leave
// the process; a forger who cannot see fingerprints can only guess one (2^-64). Computed from
// the fields directly (no JSON.stringify): the worker and tap.verifyEvent both pay it per event.
// Throws when a field has the wrong type (verifyEvent then answers false).
// The two lanes live in an Int32Array between strings and in locals within one (module-level
// `let`s would box every value outside the small-integer range: an allocation a unit).
// Each unit's step (imul, xor-shift in each lane; frames.rs's Fingerprint::unit is the Rust
// twin) is written out three times below: as two small functions called from the loops it
// measured 8-10 % slower in node 20 (docs/experiments.md, "The tap fingerprint's step as a
// function").
const fpState = new Int32Array(2);
function fpLength(n) {
  let a = fpState[0];
  let b = fpState[1];
  const lo = n & 0xffff;
  const hi = n >>> 16;
  a = Math.imul(a ^ lo, 0x9e3779b1);
  a ^= a >>> 15;
  b = Math.imul(b + lo, 0x85ebca77);
  b ^= b >>> 13;
  a = Math.imul(a ^ hi, 0x9e3779b1);
  a ^= a >>> 15;
  b = Math.imul(b + hi, 0x85ebca77);
  b ^= b >>> 13;
  fpState[0] = a;
  fpState[1] = b;
}
function fpString(s) {
  if (typeof s !== "string") throw new TypeError("not a string");
  const n = s.length;
  fpLength(n);
  let a = fpState[0];
  let b = fpState[1];
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x9e3779b1);
    a ^= a >>> 15;
    b = Math.imul(b + c, 0x85ebca77);
    b ^= b >>> 13;
  }
  fpState[0] = a;
  fpState[1] = b;
}
function fingerprint(e, seeds) {
  fpState[0] = seeds[0];
  fpState[1] = seeds[1];
  fpString(e.pubkey);
  fpString(e.sig);
  if (typeof e.created_at !== "number" || typeof e.kind !== "number") throw new TypeError("not a number");
  fpString(String(e.created_at));
  fpString(String(e.kind));
  const tags = e.tags;
  if (!Array.isArray(tags)) throw new TypeError("not an array");
  fpLength(tags.length);
  for (let i = 0; i < tags.length; i++) {
    const tag = tags[i];
    if (!Array.isArray(tag)) throw new TypeError("not an array");
    fpLength(tag.length);
    for (let j = 0; j < tag.length; j++) fpString(tag[j]);
  }
  fpString(e.content);
  const fa = fpState[0];
  const fb = fpState[1];
  const a = Math.imul(fa ^ (fa >>> 16), 0x85ebca6b) ^ fb;
  const b = Math.imul(fb ^ (fb >>> 16), 0xc2b2ae35) ^ a;
  return (a >>> 0).toString(36) + "." + (b >>> 0).toString(36);
}

// The key tap.verifyEvent remembers for a delivered event: its id and its fingerprint.
function deliveredKey(e, seeds) {
  if (typeof e.id !== "string") throw new TypeError("not a string");
  return e.id + fingerprint(e, seeds);
}

// Eight real kind-1 events by eight authors (public test fixtures of soapbox-pub/nostrify,
// fixtures/events.json, as in tests/data/events-sample.jsonl): the worker's warm-up batches.
const WARM_EVENTS = [
  {"id": "11d95e62ce9e2d95495d9507fccbd4083a82743ba08b184af21543ea40a3e551", "pubkey": "4e6aa3d26290a36b20bec7e232ffb43b340f353d2ecf637d201942302fb2b0cb", "created_at": 1711469112, "kind": 10002, "tags": [["r", "wss://relay.mostr.pub"], ["r", "wss://relay.shitforce.one"], ["r", "wss://nostr.coinfund.app"], ["proxy", "https://nicecrew.digital/users/KiKi88", "activitypub"]], "content": "", "sig": "5475cf97fdfdd0ee97a8771333565de2f68911e67f65ed64519b17008d3c56c6a40ddffb00b6fa8e9c73824708817335f09f14c1c2e3c923e611139c9209c32d"},
  {"id": "4688040640acaf86cce32acf288ff4817e65828db3c871d013f4104734ccf2b5", "pubkey": "867b1114e63fd5b56dd4aee04fb6572761847aefca36a63872fa64317d3208a8", "created_at": 1711469108, "kind": 5, "tags": [["e", "f76b90fde85aedbe7c10b2700bf927f518f271ed308eb1838b7dd0c2ea0bc00c"], ["proxy", "https://eveningzoo.club/activities/d73f60d8-19c8-4934-b566-767f0d03c5f8", "activitypub"]], "content": "", "sig": "66ff60683aa4d6887dd60497c6a432dd133c3b2abc12501032f1947123113343d494f9496d94b276ccc2f96ad3b687f0a1ed2d9b0abfdce235d42157ac2a89e9"},
  {"id": "b28887648f7b5037f0a116bfb6e2f15d60cf6b1b5028cba9b87e1346418e8813", "pubkey": "9322bd922f20c6fcd9e913454727b3bbc2d096be4811971055a826dda3d4cb0b", "created_at": 1711469103, "kind": 1, "tags": [], "content": "Live or die \n\nEither or \n\nGo for broke or hustle hard ", "sig": "df677b8f8290124c14648ed8a50f9f0af660cdf1888ad37eb71076a2065239c7ded14dab0e8ad377b7f79b81e8a115e5251dd62a4027ab52113fa50dc51968f9"},
  {"id": "6c9c4a6bec0a733bb08f13e93f3774f613f0e0f236bfd55886fc80c7f94d7a61", "pubkey": "b83b0f7fed19df06366ac01b2aa0d0ad2fcd8a38108b0eb254ebb1930926ae99", "created_at": 1711469102, "kind": 1, "tags": [["proxy", "https://newsmast.social/users/theguardianrss/statuses/112162839123797080", "activitypub"]], "content": "Concert arenas urged to add \u00a31 ticket levy to help small UK venues #breakingnews #news\n\nhttps://s3-eu-west-2.amazonaws.com/newsmast/media_attachments/files/112/162/839/111/583/971/original/b29a31703b2ada13.jpeg", "sig": "e1b6198f4ad3628a59b1a346343c3ac38d400833e081e8edce0fbf24c610924b732052d9df26af7f0edda7bb6c2fd3ef894bd9de28c7f7d55f52fbd9e2d55033"},
  {"id": "417a239931f57c739920e3a3916de12e8aa54f988941a3553191494b0f9df2dc", "pubkey": "cabf1ac8f38518a8b241f1505ab6d632d979a22c5df40e4e6cdd0711ab90530c", "created_at": 1711469088, "kind": 6, "tags": [["e", "7f13a52ae9c19b6a20f65d554c76eb33e148008e1829d3b8ca52a87272342fc8", "wss://relay.mostr.pub"], ["proxy", "https://poa.st/objects/8701a4a4-8d2f-4cf5-bdf7-e786820add52", "activitypub"]], "content": "", "sig": "06d7ecf5df10618186f041edc55d0b1d0298afb66ccecc529b5af20ab9aac339059417ee79537e19115b456d1f49578997504b0a94cdf022abcf0de269f3e91a"},
  {"id": "57e8b7b1839aba9a747c02bf057a548d89475fa1d16da9ced7f962873c508d99", "pubkey": "bc4520d31c7597810e35ec21dab851eb8d617f22f3c7d67ac2de37b9b7275a1b", "created_at": 1711469087, "kind": 1, "tags": [], "content": "YouTube \u3067\u52d5\u753b\u898b\u308b\u3068\u304d\u306f\u3001\u7247\u753b\u9762\u30df\u30e9\u30fc\u30ea\u30f3\u30b0\u30e2\u30fc\u30c9\u3067\u898b\u308b\u3088\u3046\u306b\u3057\u3066\u308b\n(\u6700\u9ad8\u306b\u8d05\u6ca2\u306a\u753b\u9762\u306e\u4f7f\u3044\u65b9)", "sig": "fab513ee66458f1ce3bd99beb050e5c8b1782b4c2d6ad8a6804be6ce3f84fe9cc20b6a2e367d8d6fbab70d2be7064422202c067c7cb91f0b4fafcbc889938128"},
  {"id": "0b7bd7003afb942d6151b9a527b2b10686095867e646ff3819ecd7a288f81850", "pubkey": "26d6a946675e603f8de4bf6f9cef442037b70c7eee170ff06ed7673fc34c98f1", "created_at": 1711469081, "kind": 1, "tags": [["e", "836fb0a0b35865799641d1ff2d1dbc07cf453fbfd3344cc583103c6897f47c61"], ["e", "d2b1718f9dcabf4ac9646fab253f51deaea1697bcb2e1dfc3dde1d0ec7336150"], ["p", "d4338b7c3306491cfdf54914d1a52b80a965685f7361311eae5f3eaff1d23a5b"], ["p", "d4338b7c3306491cfdf54914d1a52b80a965685f7361311eae5f3eaff1d23a5b"]], "content": "Fiddle leaf?", "sig": "70c9571c39e5a4bccabfe32046b608853e6a87f83790975f46b273d01b449d0a35f98961889fb9d59d7e459f04f65344f1c1c9056c984c450f963541b5e1d65d"},
  {"id": "46dedc0b27697c6350b17f043f12d1a84d640fb6c3bd164e59a40885ec09ea83", "pubkey": "50c67e07952f655005cc8032c37af33ed1f2d36be957f6c45dfc98eb882edc03", "created_at": 1711469075, "kind": 1, "tags": [["proxy", "https://journa.host/users/w7voa/statuses/112162837301229535", "activitypub"]], "content": "At 12:30 EDT, President Biden will deliver remarks on the collapse of the Francis Scott Key Bridge. - White House", "sig": "ea17e9d925a5f6f68e74cb634e2fcbc41d10a6b40d4b9ce69c6c093994a371423de31ea89f630fedb532e6f8f2d52570046a32375d0b1e96954c81316d31ceb5"}
];

// Runs batches of the warm-up events of 48, 192 and 1,024 frames (the tap's default largest;
// the sizes reach the MSM's algorithms and window widths), the smallest ending with a forged
// copy so that narrowing and libsecp256k1's check of suspects run too, until each size runs at
// least 2.5 times faster than at first, or for 1.5 s at most: the engine's optimizing tier
// compiles the hot code in the background meanwhile, so that the first real batch runs
// optimized code (a cold module's first batch took 6-8 times a warm one's CPU; with warm-ups of
// 48 and 192 only, the first 1,024-batch and the first forged event still compiled code in the
// measured window: 13 % and 14 % of the tap's process CPU, docs/experiments.md). The pauses
// leave the compiler threads the CPU and let real requests through.
async function warmUp(wasm) {
  const v = new wasm.Verifier();
  const sizes = [48, 192, 1024];
  // As the tap sends them: EVENT frames joined into one string, with their ends.
  const frameText = WARM_EVENTS.map((e) => JSON.stringify(["EVENT", "warm-up", e]));
  // The smallest batch ends with a forged copy (another event's signature).
  const forged = { ...WARM_EVENTS[0], sig: WARM_EVENTS[1].sig };
  const batches = sizes.map((n, k) => {
    let joined = "";
    const ends = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      joined += k === 0 && i === n - 1 ? JSON.stringify(["EVENT", "warm-up", forged]) : frameText[i % frameText.length];
      ends[i] = joined.length;
    }
    return [joined, ends];
  });
  const first = sizes.map(() => 0);
  const last = sizes.map(() => Infinity);
  // What tap.stats().warmUp reports.
  const summary = { rounds: 0, ms: 0, forgedRejected: false, optimized: false };
  const t0 = performance.now();
  try {
    for (let round = 0; performance.now() - t0 < 1500; round++) {
      const k = round % sizes.length;
      const s = performance.now();
      const [codes] = v.verifyFrames(utf8Of(batches[k][0]), batches[k][1], 1, 2);
      summary.rounds++;
      // Never: the events are valid and the forged copy is not.
      if (codes[0] !== VERDICT_VALID) break;
      if (k === 0) {
        summary.forgedRejected = codes[sizes[0] - 1] === VERDICT_INVALID_SIG;
        if (!summary.forgedRejected) break;
      }
      const perEvent = (performance.now() - s) / sizes[k];
      if (round < sizes.length) first[k] = perEvent;
      else last[k] = perEvent;
      if (last.every((l, j) => l * 2.5 < first[j])) {
        summary.optimized = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 15));
    }
  } finally {
    v.free();
  }
  summary.ms = Math.round(performance.now() - t0);
  return summary;
}

// A batch's joined frames as UTF-8 (Verifier.verifyFrames' input), in a buffer kept across
// batches (at most 3 bytes a UTF-16 unit; let go of after a batch of more than 16 MiB).
const frameEncoder = new TextEncoder();
let frameBytes = new Uint8Array(1 << 20);
function utf8Of(s) {
  if (frameBytes.length < s.length * 3) frameBytes = new Uint8Array(s.length * 3);
  const { written } = frameEncoder.encodeInto(s, frameBytes);
  const out = frameBytes.subarray(0, written);
  if (frameBytes.length > 1 << 24) frameBytes = new Uint8Array(1 << 20);
  return out;
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
      // Most frames are parsed, serialized and fingerprinted in Rust, with no object built
      // (Verifier.verifyFrames, nostr-verify-wasm/src/frames.rs); it leaves undecided (code 0)
      // the frames it cannot prove it reads as JSON.parse does, and a string with a lone
      // surrogate (which a WebSocket does not deliver) goes the JavaScript way whole.
      let codes;
      let keys;
      let slow = n;
      if (typeof joined.isWellFormed === "function" && joined.isWellFormed()) {
        const [fast, fastKeys] = verifier.verifyFrames(utf8Of(joined), ends, seeds[0] >>> 0, seeds[1] >>> 0);
        codes = fast;
        keys = fastKeys.split("\n");
        slow = 0;
        for (let i = 0; i < n; i++) if (codes[i] === 0) slow++;
        if (slow === 0) return { codes, keys, undecided: 0 };
      } else {
        codes = new Uint8Array(n);
        keys = new Array(n).fill("");
      }
      const at = [];
      const events = [];
      let start = 0;
      for (let i = 0; i < n; i++) {
        const end = ends[i];
        if (codes[i] === 0) {
          let event = null;
          try {
            const m = JSON.parse(joined.slice(start, end));
            if (Array.isArray(m) && m.length >= 3 && m[0] === "EVENT" && typeof m[1] === "string") {
              event = m[2];
            }
          } catch (_) {
            event = null; // not JSON: malformed
          }
          at.push(i);
          events.push(event);
        }
        start = end;
      }
      const slowCodes = verifier.verifyEventsDetailed(events);
      for (let j = 0; j < at.length; j++) {
        const i = at[j];
        codes[i] = slowCodes[j];
        keys[i] = slowCodes[j] === VERDICT_VALID ? deliveredKey(events[j], seeds) : "";
      }
      return { codes, keys, undecided: slow };
    },
    // Event objects (already copied to plain values by the caller): one code each.
    events(events) {
      return { codes: verifier.verifyEventsDetailed(events), keys: null, undecided: 0 };
    },
  };
}

// One request: { id, kind: "frames" | "events" | "ping", items, seeds } -> [reply, transfer].
// (A ping may carry wasmUrl: the browsers' worker loads the module from there.)
function handleRequest(work, m) {
  try {
    if (m.kind === "ping") return [{ id: m.id, codes: new Uint8Array(0), keys: null, undecided: 0, warmUp: null }, []];
    const r = m.kind === "frames" ? work.frames(m.items, m.seeds) : work.events(m.items);
    return [{ id: m.id, codes: r.codes, keys: r.keys, undecided: r.undecided }, [r.codes.buffer]];
  } catch (e) {
    return [{ id: m.id, error: String((e && e.stack) || e) }, []];
  }
}
