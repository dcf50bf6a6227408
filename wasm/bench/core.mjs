// The benchmark itself, the same in node (wasm/bench.mjs) and in headless Chromium
// (wasm/bench/index.html, driven by wasm/bench.mjs --chromium): microseconds per signature,
// median of repeats, for
//   signatures (64 and 1024; from 8 keys and all distinct):
//     libsecp256k1 one at a time (parse + verify) inside the same wasm module
//     (__benchLibsecpVerifyEach), this package's verifySignatures, @noble/curves schnorr.verify;
//   events (64 and 1024 from 8 authors): this package's verifyEvents, nostr-wasm's verifyEvent
//     (libsecp256k1 in its own wasm module) in a loop, nostr-tools' verifyEvent in a loop;
// and the ratios. Before anything is timed, every engine's verdicts are checked equal on
// mutated copies of the inputs (about one in seven invalid); every call on the inputs
// themselves, the warm-up and each timed one, is checked afterwards to have accepted all of
// them, so no row measures wrong answers.
//
// This package's rows use a new Verifier for every call (made outside the timed region): its
// key cache starts empty, as libsecp256k1's parse does, so repeated calls on the same inputs do
// not profit from keys cached by the call before.
import { schnorr } from "@noble/curves/secp256k1.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, hexToBytes } from "@noble/hashes/utils.js";
import { verifyEvent as toolsVerifyEvent } from "nostr-tools/pure";
import { initNostrWasm } from "nostr-wasm";

export const ENGINES = ["libsecp", "noble", "nostr-wasm", "nostr-tools"];

const utf8 = new TextEncoder();

/** Options from command-line style arguments (node's argv, or the page's query string). */
export function parseOptions(args) {
  const o = { repeats: 7, minMs: 200, peers: new Set(ENGINES), sizes: [64, 1024], peerSample: 0 };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const val = () => {
      if (i + 1 >= args.length) throw new Error(`${a} needs a value`);
      return args[++i];
    };
    if (a === "--repeats") o.repeats = Math.max(1, parseInt(val(), 10));
    else if (a === "--min-ms") o.minMs = Math.max(0, Number(val()));
    else if (a === "--peers") {
      const v = val();
      o.peers = new Set(v === "none" ? [] : v.split(","));
      for (const p of o.peers) if (!ENGINES.includes(p)) throw new Error(`--peers: unknown ${p} (${ENGINES.join(",")}, or none)`);
    } else if (a === "--peer-sample") o.peerSample = Math.max(0, parseInt(val(), 10));
    else if (a === "--sizes") o.sizes = val().split(",").map((s) => parseInt(s, 10));
    else throw new Error(`unknown option ${a}`);
  }
  if (!Number.isFinite(o.repeats) || !Number.isFinite(o.minMs) || !Number.isFinite(o.peerSample)) throw new Error("bad --repeats or --min-ms");
  return o;
}

/** Deterministic secret key `i` (a hash, so valid with overwhelming probability). */
function secretKey(i) {
  return sha256(utf8.encode(`nostr-verify-wasm bench key ${i}`));
}

/**
 * `n` signed kind-1 events from `authors` authors (0: all distinct), signed with nostr-wasm
 * (libsecp256k1): content of about 200 characters and three tags, close to a typical note.
 */
export function makeEvents(nw, n, authors, seed) {
  const k = authors === 0 ? n : authors;
  const sks = Array.from({ length: k }, (_, i) => secretKey(seed * 100000 + i));
  const out = [];
  for (let i = 0; i < n; i++) {
    const sk = sks[i % k];
    const e = {
      kind: 1,
      created_at: 1700000000 + i,
      tags: [
        ["e", bytesToHex(sha256(utf8.encode(`parent ${seed} ${i}`))), "wss://relay.example.com", "reply"],
        ["p", bytesToHex(sha256(utf8.encode(`mention ${seed} ${i}`)))],
        ["t", "bench"],
      ],
      content: `Note ${i} of ${n} (seed ${seed}): the quick brown fox jumps over the lazy dog; ` +
        "grüße, ünïcödé and an emoji 🌍 so that the serialization is not plain ASCII. " +
        "Another sentence to reach a typical length.",
    };
    nw.finalizeEvent(e, sk);
    out.push({ id: e.id, pubkey: e.pubkey, created_at: e.created_at, kind: e.kind, tags: e.tags, content: e.content, sig: e.sig });
  }
  return out;
}

/**
 * wasm/bench/ab.mjs: times `verifySignatures` and `verifyEvents` of each module of `mods`
 * (nostr-verify-wasm builds, initialized) in turn, 9 rounds of at least 150 ms each, a new
 * Verifier a call, after three untimed calls each, on 1024 signatures or events from 8 keys,
 * 64 from 8 keys and 1024 distinct; logs the medians (µs per signature or event) under
 * `names`.
 */
export function compareBuilds(mods, names, nw, log) {
  const cases = [["1024/8", makeEvents(nw, 1024, 8, 3)], ["64/8", makeEvents(nw, 64, 8, 4)], ["1024/d", makeEvents(nw, 1024, 0, 5)]];
  for (const [name, ev] of cases) {
    const { pubkeys, msgs, sigs } = flatten(ev);
    const f = [pubkeys, msgs, sigs];
    const res = mods.map(() => ({ s: [], e: [] }));
    // Warm-up (tier-up of the wasm code), untimed.
    for (const nv of mods) {
      for (let j = 0; j < 3; j++) {
        const v = new nv.Verifier();
        v.verifySignatures(...f);
        v.verifyEvents(ev);
        v.free();
      }
    }
    for (let r = 0; r < 9; r++) {
      mods.forEach((nv, k) => {
        let t0 = performance.now(), c = 0;
        while (performance.now() - t0 < 150) { const v = new nv.Verifier(); v.verifySignatures(...f); v.free(); c++; }
        res[k].s.push((performance.now() - t0) / c / ev.length * 1000);
        t0 = performance.now(); c = 0;
        while (performance.now() - t0 < 150) { const v = new nv.Verifier(); v.verifyEvents(ev); v.free(); c++; }
        res[k].e.push((performance.now() - t0) / c / ev.length * 1000);
      });
    }
    const med = (a) => a.sort((x, y) => x - y)[a.length >> 1].toFixed(2);
    log(name + " " + res.map((r, k) => `${names[k]}: sigs ${med(r.s)} events ${med(r.e)}`).join(" | "));
  }
}

/**
 * What wasm/bench/profile.mjs profiles, in node and in the page: three checked warm-up calls
 * of `verifyEvents` on `events`, then (when `ms` is given) calls for `ms` milliseconds, each on
 * a new Verifier. Returns `{ calls, wall }` (wall in milliseconds).
 */
export function verifyEventsFor(nv, events, ms) {
  for (let i = 0; i < 3; i++) {
    const v = new nv.Verifier();
    const ok = v.verifyEvents(events).every((x) => x === 1);
    v.free();
    if (!ok) throw new Error("a valid event rejected");
  }
  let calls = 0;
  const t0 = performance.now();
  while (ms !== undefined && performance.now() - t0 < ms) {
    const v = new nv.Verifier();
    v.verifyEvents(events);
    v.free();
    calls++;
  }
  return { calls, wall: performance.now() - t0 };
}

/** The signatures of `events` as verifySignatures takes them, plus per-signature views for noble. */
function flatten(events) {
  const n = events.length;
  const pubkeys = new Uint8Array(n * 32);
  const msgs = new Uint8Array(n * 32);
  const sigs = new Uint8Array(n * 64);
  events.forEach((e, i) => {
    pubkeys.set(hexToBytes(e.pubkey), i * 32);
    msgs.set(hexToBytes(e.id), i * 32);
    sigs.set(hexToBytes(e.sig), i * 64);
  });
  const each = events.map((_, i) => [sigs.subarray(i * 64, i * 64 + 64), msgs.subarray(i * 32, i * 32 + 32), pubkeys.subarray(i * 32, i * 32 + 32)]);
  return { n, pubkeys, msgs, sigs, each };
}

/** A copy of `b` with about one signature in seven made invalid (a bit of the sig, msg or key). */
function mutateSigs(b) {
  const m = { n: b.n, pubkeys: b.pubkeys.slice(), msgs: b.msgs.slice(), sigs: b.sigs.slice() };
  for (let i = 0; i < b.n; i += 7) {
    const which = (i / 7) % 4;
    if (which === 0) m.sigs[i * 64 + 63] ^= 1; // s
    else if (which === 1) m.sigs[i * 64 + 5] ^= 0x10; // r
    else if (which === 2) m.msgs[i * 32 + 31] ^= 1;
    else m.pubkeys[i * 32 + 31] ^= 2; // another key, or not on the curve
  }
  m.each = Array.from({ length: m.n }, (_, i) => [m.sigs.subarray(i * 64, i * 64 + 64), m.msgs.subarray(i * 32, i * 32 + 32), m.pubkeys.subarray(i * 32, i * 32 + 32)]);
  return m;
}

/** A copy of `events` with about one in seven made invalid (content, id or sig changed). */
function mutateEvents(events) {
  return events.map((e, i) => {
    const c = { ...e };
    if (i % 7 === 0) {
      const which = (i / 7) % 3;
      if (which === 0) c.content += "!";
      else if (which === 1) c.sig = (c.sig[0] === "0" ? "1" : "0") + c.sig.slice(1);
      else c.id = c.id.slice(0, 63) + (c.id[63] === "0" ? "1" : "0");
    }
    return c;
  });
}

/** The first `m` signatures of `b`, or the first `m` events of an array (`m` 0: all). */
function prefix(input, m) {
  if (Array.isArray(input)) return m > 0 && m < input.length ? input.slice(0, m) : input;
  if (!(m > 0 && m < input.n)) return input;
  return { n: m, pubkeys: input.pubkeys.subarray(0, m * 32), msgs: input.msgs.subarray(0, m * 32), sigs: input.sigs.subarray(0, m * 64), each: input.each.slice(0, m) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Frees a Verifier made by a `prepare` (wasm memory is not collected). */
const free = (v) => {
  if (v && typeof v.free === "function") v.free();
};

/** Lets the event loop run (a page stays responsive to its driver between samples). */
const pause = () => new Promise((ok) => setTimeout(ok, 0));

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Runs the benchmark. `nv` is the nostr-verify-wasm module (initialized), `clock` is
 * `{ name, now() }` in milliseconds, `log` prints one line. Returns `{ sigRows, eventRows }`.
 */
export async function runBench({ nv, clock, log, options, engine }) {
  const o = options;
  const t0 = Date.now();
  const nw = await initNostrWasm();
  const has = (p) => o.peers.has(p);

  // Engines on signatures: each returns one verdict (0/1) per signature.
  const sigEngines = [];
  if (has("libsecp")) sigEngines.push({ key: "libsecp", title: "libsecp256k1 each, same wasm", run: (b) => Array.from(nv.__benchLibsecpVerifyEach(b.pubkeys, b.msgs, b.sigs)) });
  sigEngines.push({ key: "ours", title: "verifySignatures", prepare: () => new nv.Verifier(), run: (b, v) => Array.from(v.verifySignatures(b.pubkeys, b.msgs, b.sigs)) });
  if (has("noble")) sigEngines.push({ key: "noble", title: "@noble/curves schnorr.verify", sample: true, run: (b) => b.each.map(([s, m, p]) => (schnorr.verify(s, m, p) ? 1 : 0)) });

  // Engines on events.
  const eventEngines = [];
  eventEngines.push({ key: "ours", title: "verifyEvents", prepare: () => new nv.Verifier(), run: (evs, v) => Array.from(v.verifyEvents(evs)) });
  if (has("nostr-wasm")) {
    eventEngines.push({
      key: "nostr-wasm", title: "nostr-wasm verifyEvent loop",
      run: (evs) => evs.map((e) => {
        try {
          nw.verifyEvent(e);
          return 1;
        } catch (_) {
          return 0;
        }
      }),
    });
  }
  if (has("nostr-tools")) {
    // nostr-tools caches its verdict on the object (verifiedSymbol): every call gets fresh
    // copies, made outside the timed region.
    eventEngines.push({
      key: "nostr-tools", title: "nostr-tools verifyEvent loop", sample: true,
      prepare: (evs) => evs.map((e) => ({ ...e })),
      run: (evs, copies) => copies.map((e) => (toolsVerifyEvent(e) ? 1 : 0)),
    });
  }

  // Inputs.
  const sigCases = [];
  const eventCases = [];
  let seed = 1;
  for (const n of o.sizes) {
    for (const [label, authors] of [["8 keys", 8], ["distinct", 0]]) {
      const evs = makeEvents(nw, n, authors, seed++);
      sigCases.push({ label: `${n} sigs, ${label}`, n, input: flatten(evs) });
    }
    eventCases.push({ label: `${n} events, 8 authors`, n, input: makeEvents(nw, n, 8, seed++) });
  }
  const bytes = eventCases.flatMap((c) => c.input).map((e) => utf8.encode(JSON.stringify([0, e.pubkey, e.created_at, e.kind, e.tags, e.content])).length);
  log(`inputs made in ${((Date.now() - t0) / 1000).toFixed(1)} s (events: ${(bytes.reduce((a, b) => a + b, 0) / bytes.length).toFixed(0)} bytes serialized on average)`);

  // Verdicts: every engine equal on mutated copies of the inputs (some invalid).
  let checked = 0;
  let invalid = 0;
  const agree = async (engines, input, what) => {
    let first = null;
    for (const e of engines) {
      await pause();
      const inp = e.sample ? prefix(input, o.peerSample) : input;
      const prep = e.prepare ? e.prepare(inp) : undefined;
      const got = e.run(inp, prep);
      free(prep);
      if (got.length !== (inp.n ?? inp.length)) throw new Error(`${what}: ${e.title} gave ${got.length} verdicts`);
      if (first === null) first = { e, got };
      else if (!same(first.got.slice(0, got.length), got)) throw new Error(`${what}: ${e.title}'s verdicts differ from ${first.e.title}'s`);
    }
    const zeros = first.got.filter((g) => g === 0).length;
    if (zeros === 0 || zeros === first.got.length) throw new Error(`${what}: the mutated copy has ${zeros} invalid of ${first.got.length}`);
    invalid += zeros;
    checked += first.got.length;
  };
  // (On the bench inputs themselves, all valid, every call below is checked to accept all.)
  for (const c of sigCases) await agree(sigEngines, mutateSigs(c.input), c.label + " (mutated)");
  for (const c of eventCases) await agree(eventEngines, mutateEvents(c.input), c.label + " (mutated)");
  log(`verdicts: ${sigEngines.length} signature engines and ${eventEngines.length} event engines agree on ${checked} verdicts ` +
    `of mutated copies of the inputs (${invalid} invalid); every timed call is checked to accept all of the valid inputs`);

  // Timing: per repeat, each engine in turn (interleaved, so drift hits all alike); a sample
  // runs the call k times (k from a first, untimed call, so that a sample lasts >= minMs; at most
  // 64 times, since each of this package's calls holds a Verifier of its own).
  const measure = async (engines, cases) => {
    const rows = [];
    for (const c of cases) {
      const plans = [];
      for (const e of engines) {
        await pause();
        const input = e.sample ? prefix(c.input, o.peerSample) : c.input;
        const n = input.n ?? input.length;
        const prep = e.prepare ? e.prepare(input) : undefined;
        const s = clock.now();
        const got = e.run(input, prep);
        const ms = Math.max(clock.now() - s, 1e-3);
        free(prep);
        if (!got.every((g) => g === 1)) throw new Error(`${c.label}: ${e.title} warm-up rejected a valid input`);
        plans.push({ e, input, n, k: Math.max(1, Math.min(64, Math.ceil(o.minMs / ms))), samples: [] });
      }
      for (let r = 0; r < o.repeats; r++) {
        for (const p of plans) {
          await pause();
          const preps = Array.from({ length: p.k }, () => (p.e.prepare ? p.e.prepare(p.input) : undefined));
          const outs = new Array(p.k);
          const s = clock.now();
          for (let j = 0; j < p.k; j++) outs[j] = p.e.run(p.input, preps[j]);
          const ms = clock.now() - s;
          for (const got of outs) if (!got.every((g) => g === 1)) throw new Error(`${c.label}: ${p.e.title} rejected a valid input`);
          preps.forEach(free);
          p.samples.push((ms * 1000) / (p.k * p.n));
        }
      }
      const us = Object.fromEntries(plans.map((p) => [p.e.key, median(p.samples)]));
      rows.push({ label: c.label, us });
    }
    return rows;
  };

  const fmt = (x) => (x === undefined ? "-" : x >= 100 ? x.toFixed(0) : x.toFixed(1));
  const ratio = (a, b) => (a === undefined || b === undefined ? "-" : (a / b).toFixed(2) + "x");
  log(`timing: ${clock.name}; median of ${o.repeats} repeats, each sample >= ${o.minMs} ms; microseconds per signature`);
  if (o.peerSample > 0) {
    log(`(--peer-sample ${o.peerSample}: @noble/curves and nostr-tools, one at a time in JavaScript, ran on the first ${o.peerSample} of each input)`);
  }
  const sigRows = await measure(sigEngines, sigCases);
  log("");
  log(`| ${engine}: signatures | libsecp256k1 each, same wasm | verifySignatures | @noble/curves | vs libsecp256k1 | vs noble |`);
  log("|---|---|---|---|---|---|");
  for (const r of sigRows) {
    log(`| ${r.label} | ${fmt(r.us.libsecp)} | ${fmt(r.us.ours)} | ${fmt(r.us.noble)} | ${ratio(r.us.libsecp, r.us.ours)} | ${ratio(r.us.noble, r.us.ours)} |`);
  }
  const eventRows = await measure(eventEngines, eventCases);
  log("");
  log(`| ${engine}: events | nostr-wasm verifyEvent | nostr-tools verifyEvent | verifyEvents | vs nostr-wasm | vs nostr-tools |`);
  log("|---|---|---|---|---|---|");
  for (const r of eventRows) {
    log(`| ${r.label} | ${fmt(r.us["nostr-wasm"])} | ${fmt(r.us["nostr-tools"])} | ${fmt(r.us.ours)} | ${ratio(r.us["nostr-wasm"], r.us.ours)} | ${ratio(r.us["nostr-tools"], r.us.ours)} |`);
  }
  log("");
  log(`bench done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { sigRows, eventRows };
}
