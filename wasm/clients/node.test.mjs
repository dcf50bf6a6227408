// The WebSocket tap of wasm/pkg-node with six Nostr client libraries (nostr-tools, NDK, rx-nostr,
// nostr-fetch, applesauce, welshman), each fetching the real events of ../shared/data from two
// local relays (relay.mjs), one of which also sends forged copies: a bad id, a bad signature,
// and forged copies sent before the other relay's valid copy. Also the tap's batch verifier
// against nostr-tools' verifyEvent, and the relay itself. Run by wasm/clients/run.sh after
// wasm/build.sh; node 20 has no global WebSocket, so the tap wraps the `ws` package.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyEvent as nostrToolsVerify } from "nostr-tools/pure";
import { startRelay } from "./relay.mjs";
import { eventHash, forge, loadCorpus, missingReason, rng, scenario } from "./corpus.mjs";
import { libraries, nostrTools, rxNostr } from "./harness.mjs";

const require = createRequire(import.meta.url);
const WS = require("ws");
const pkgDir = new URL("../pkg-node/", import.meta.url).pathname;

/** The package under test; fails (does not skip) when it or its tap is missing. */
function nv() {
  if (!existsSync(`${pkgDir}tap.js`)) throw new Error(`${pkgDir}tap.js missing: run wasm/build.sh (or wasm/package/tap/assemble.sh)`);
  return require(pkgDir);
}

const corpus = loadCorpus();
// Lines of the corpus each library fetches (plus the invalid ones and the forgeries); the batch
// verifier test takes them all.
const EVENTS = 1500;
const skip = corpus ? false : missingReason();

/** nostr-tools' verdict; a throw counts as false. */
function reference(e) {
  try {
    return nostrToolsVerify(e) === true;
  } catch {
    return false;
  }
}

/** The stats of every socket the tap opened to the relay at `url` (keys differ by a trailing "/"), summed. */
function relayStats(tap, url) {
  const host = new URL(url).host;
  const sum = { sockets: 0, frames: 0, events: 0, delivered: 0, dropped: { invalidId: 0, invalidSig: 0, malformed: 0 }, closedForForgery: 0 };
  for (const [k, s] of Object.entries(tap.stats().relays)) {
    if (new URL(k).host !== host) continue;
    for (const f of ["sockets", "frames", "events", "delivered", "closedForForgery"]) sum[f] += s[f] ?? 0;
    for (const f of Object.keys(sum.dropped)) sum.dropped[f] += s.dropped?.[f] ?? 0;
  }
  return sum;
}

/** What the library handed over: exactly the valid events, each once, before completion, nothing forged. */
function checkDelivered(what, r, valid, forgedIds) {
  assert.deepEqual(r.after.map((e) => e.id), [], `${what}: events handed over after the EOSE/completion`);
  const seen = new Set();
  for (const e of r.before) {
    assert.ok(!seen.has(e.id), `${what}: ${e.id} delivered twice`);
    seen.add(e.id);
    const v = valid.get(e.id);
    assert.ok(v, `${what}: delivered ${e.id}, which is not a valid event${forgedIds.has(e.id) ? " (a forgery)" : ""}`);
    assert.equal(e.sig, v.sig, `${what}: ${e.id} delivered with a forged signature`);
    assert.equal(e.content, v.content, `${what}: ${e.id} delivered with forged content`);
    assert.equal(eventHash(e), e.id, `${what}: ${e.id} delivered with another hash`);
  }
  const missing = [...valid.keys()].filter((id) => !seen.has(id));
  assert.equal(missing.length, 0, `${what}: ${missing.length} of ${valid.size} valid events never delivered, e.g. ${missing.slice(0, 3)}`);
}

describe("the six libraries through the tap", { skip }, () => {
  let s;
  let relayA;
  let relayB;
  let filter;
  before(async () => {
    s = scenario(corpus, { count: EVENTS });
    // A is honest and answers 150 ms after a REQ; B answers at once, its forged-first copies
    // first, and mixes forged copies into its answer (each just before its own valid copy).
    relayA = await startRelay({ events: s.a.items.map((it) => it.json), delayMs: 150 });
    relayB = await startRelay({ events: s.b.items.map((it) => it.json), first: s.b.first, forged: s.b.forged });
    filter = { kinds: [...new Set([...s.a.items, ...s.b.items].map((it) => it.event.kind))].sort((x, y) => x - y) };
    assert.ok(s.valid.size >= EVENTS - 5 && s.b.first.length > 100 && s.b.forged.length > 100, "the scenario is smaller than expected");
    assert.ok(s.invalidReal.a > 0 && s.invalidReal.b > 0, "each relay serves some of the corpus' invalid events");
    // No forgery passes nostr-tools' verifyEvent (the valid events' verdicts are the index's).
    for (const f of [...s.b.first, ...s.b.forged]) assert.equal(reference({ ...f }), false, `forgery ${f.id} verifies`);
  });
  after(async () => {
    await relayA?.close();
    await relayB?.close();
  });

  // [library, tap options, harness options]
  const modes = [
    ["nostr-tools", { worker: true }, {}],
    ["nostr-tools", { worker: false }, { global: true }],
    ["ndk", {}, {}],
    ["rx-nostr", {}, {}],
    ["nostr-fetch", {}, {}],
    ["applesauce", {}, {}],
    ["welshman", {}, {}],
  ];
  for (const [name, opts, hopts] of modes) {
    test(`${name}${opts.worker === false ? " (inline verification, useWebSocketImplementation)" : ""}: exactly the valid events, each once, before completion; forgeries counted per relay`, async (t) => {
      const tap = nv().tapWebSocket(WS, opts);
      const reqs0 = { a: relayA.stats().reqs, b: relayB.stats().reqs };
      try {
        const r = await libraries[name]({ urls: [relayA.url, relayB.url], filter, WebSocket: WS, tap, ...hopts });
        checkDelivered(name, r, s.valid, s.forgedIds);
        if (name === "ndk") assert.equal(r.invalidSig, 0, "NDK reported invalid signatures of delivered events");
        const st = tap.stats();
        assert.equal(st.pending, 0, "events still pending in the tap");
        assert.equal(st.worker, opts.worker !== false, "stats().worker");
        const a = relayStats(tap, relayA.url);
        const b = relayStats(tap, relayB.url);
        for (const [which, x] of [["A", a], ["B", b]]) {
          assert.ok(x.sockets >= 1, `${which}: no socket`);
          const dropped = x.dropped.invalidId + x.dropped.invalidSig + x.dropped.malformed;
          assert.equal(x.events, x.delivered + dropped, `${which}: events != delivered + dropped`);
          assert.equal(x.dropped.malformed, 0, `${which}: malformed`);
          assert.equal(x.closedForForgery, 0, `${which}: closed for forgery`);
        }
        // Forged events are counted against B, which sent them; A sent only the corpus' own bad ids.
        const reqs = { a: relayA.stats().reqs - reqs0.a, b: relayB.stats().reqs - reqs0.b };
        const exact = name !== "nostr-fetch"; // it pages (until = the oldest event seen): a second REQ re-sends some
        const cmp = exact ? assert.equal : (x, y, m) => assert.ok(x >= y, `${m}: ${x} < ${y}`);
        cmp(a.dropped.invalidId, s.invalidReal.a, "A: invalidId");
        assert.equal(a.dropped.invalidSig, 0, "A: invalidSig");
        cmp(b.dropped.invalidId, s.invalidReal.b + s.forgedBy.badId, "B: invalidId");
        cmp(b.dropped.invalidSig, s.forgedBy.badSig, "B: invalidSig");
        // The library's own hook: true for what the tap delivered, false for every forged copy,
        // those with the id and sig of a delivered event and other content included.
        for (const e of r.before.slice(0, 200)) assert.equal(tap.verifyEvent(e), true, `tap.verifyEvent(${e.id})`);
        const sameIdSig = s.b.first.filter((f) => f.sig === s.valid.get(f.id)?.sig && r.before.some((e) => e.id === f.id));
        assert.ok(sameIdSig.length > 50);
        for (const f of [...s.b.first, ...s.b.forged]) assert.equal(tap.verifyEvent(f), false, `tap.verifyEvent(forged ${f.id})`);
        t.diagnostic(`${name}: ${r.before.length} events in ${r.ms.toFixed(0)} ms; REQs ${reqs.a}/${reqs.b}; batches ${st.batches}, max batch ${st.maxBatchSize}, max latency ${st.maxLatencyMs.toFixed(0)} ms`);
      } finally {
        await tap.close();
      }
    });
  }

  test("closeAfterForged: the forging relay's socket is closed, the honest relay's events still arrive (nostr-tools)", async () => {
    const tap = nv().tapWebSocket(WS, { closeAfterForged: 10 });
    try {
      const r = await nostrTools({ urls: [relayA.url, relayB.url], filter, WebSocket: WS, tap });
      const onlyA = new Map(s.a.items.filter((it) => it.valid).map((it) => [it.event.id, it.event]));
      // Nothing forged, nothing twice, nothing after EOSE; every valid event A serves.
      const seen = new Set();
      for (const e of [...r.before, ...r.after]) {
        assert.ok(!seen.has(e.id), `${e.id} twice`);
        seen.add(e.id);
        const v = s.valid.get(e.id);
        assert.ok(v && v.sig === e.sig && v.content === e.content, `forged ${e.id} delivered`);
      }
      const missing = [...onlyA.keys()].filter((id) => !seen.has(id));
      assert.equal(missing.length, 0, `${missing.length} of A's ${onlyA.size} valid events missing`);
      const a = relayStats(tap, relayA.url);
      const b = relayStats(tap, relayB.url);
      assert.equal(a.closedForForgery, 0, "A closed");
      assert.ok(b.closedForForgery >= 1, "B not closed for forgery");
      // One socket to B, closed once 10 forged events came from it (B sends its whole answer at
      // once, so the frames already received are still verified and counted).
      assert.equal(b.sockets, 1, "B: sockets");
      const forged = b.dropped.invalidId + b.dropped.invalidSig;
      assert.ok(forged >= 10, `B: ${forged} forged events counted`);
    } finally {
      await tap.close();
    }
  });

  test("rx-nostr without the tap, with createBatchVerifier's verify as its verifier", async (t) => {
    const bv = nv().createBatchVerifier();
    try {
      const r = await rxNostr({ urls: [relayA.url, relayB.url], filter, WebSocket: WS, verifier: bv.verify });
      checkDelivered("rx-nostr + batch verifier", r, s.valid, s.forgedIds);
      const st = bv.stats();
      assert.ok(st.verified >= s.valid.size, `verified ${st.verified}`);
      assert.ok(st.maxBatchSize > 1, `no batch: max batch size ${st.maxBatchSize}`);
      t.diagnostic(`batch verifier: ${st.batches} batches, ${st.verified} events, max batch ${st.maxBatchSize}`);
    } finally {
      await bv.close();
    }
  });
});

// Without the tap: the libraries that record an event's id as seen before its verdict lose
// the valid event when another relay sends a forged copy of it first. nostr-tools' pool and
// welshman's request tracker de-duplicate before verifying; applesauce's RelayPool.request
// de-duplicates (in an EventMemory) before the EventStore verifies; NDK caches a failed verdict
// by id (verifiedSignatures), so the valid copy then fails too. (rx-nostr and nostr-fetch verify
// before they de-duplicate: they lose nothing.) The tap drops the forged copy before any of them
// sees it: the tests above check that nothing is lost through it.
const holes = { "nostr-tools": nostrTools, ndk: libraries.ndk, applesauce: libraries.applesauce, welshman: libraries.welshman };
for (const [name, fetch] of Object.entries(holes)) {
  test(`without the tap, ${name} loses valid events to forged copies another relay sends first`, { skip }, async (t) => {
    // Other lines than the tests above (NDK's verdict cache outlives a fetch: see below).
    const s = scenario(corpus, { count: 240, offset: 3000 });
    // A answers 400 ms after the REQ, so that B's forged-first copies surely arrive first.
    const relayA = await startRelay({ events: s.a.items.map((it) => it.json), delayMs: 400 });
    const relayB = await startRelay({ events: s.b.items.map((it) => it.json), first: s.b.first, forged: s.b.forged });
    try {
      const filter = { kinds: [...new Set([...s.a.items, ...s.b.items].map((it) => it.event.kind))] };
      const r = await fetch({ urls: [relayA.url, relayB.url], filter, WebSocket: WS });
      const got = new Set(r.before.map((e) => e.id));
      for (const e of r.before) assert.ok(s.valid.get(e.id)?.sig === e.sig && s.valid.get(e.id).content === e.content, `forged ${e.id}`);
      // Every valid event whose forged copy B sent first is lost.
      const lost = s.b.first.filter((f) => !got.has(f.id));
      assert.ok(s.b.first.length > 10);
      assert.equal(lost.length, s.b.first.length, `${s.b.first.length - lost.length} forged-first events survived`);
      t.diagnostic(`stock ${name}: ${got.size} of ${s.valid.size} valid events delivered; all ${lost.length} forged-first copies suppressed theirs`);
    } finally {
      await relayA.close();
      await relayB.close();
    }
  });
}

// NDK caches a successful verdict by event id for a minute (verifiedSignatures, 1,000 entries)
// and then accepts any event with that id, whatever its content or signature: a relay can
// replace the content of a note the client verified a moment ago. Through the tap the forged
// copy never reaches NDK.
for (const withTap of [false, true]) {
  test(`${withTap ? "through the tap" : "without the tap"}, NDK ${withTap ? "never sees" : "accepts"} a forged copy of an event it verified a moment before`, { skip }, async () => {
    const items = corpus.items.slice(4500, 4700).filter((it) => it.valid && it.event.kind !== 5);
    const forged = items.map((it, i) => forge(it.event, "badId", i + 1));
    const honest = await startRelay({ events: items.map((it) => it.json) });
    const forger = await startRelay({ events: forged });
    const tap = withTap ? nv().tapWebSocket(WS) : null;
    try {
      const filter = { ids: items.map((it) => it.event.id) };
      const first = await libraries.ndk({ urls: [honest.url], filter, WebSocket: WS, tap });
      assert.equal(first.before.length, items.length, "the honest relay's events");
      const second = await libraries.ndk({ urls: [forger.url], filter, WebSocket: WS, tap });
      const accepted = second.before.filter((e) => e.content !== items.find((it) => it.event.id === e.id)?.event.content);
      if (withTap) {
        assert.equal(accepted.length, 0, `${accepted.length} forged copies delivered through the tap`);
        assert.equal(relayStats(tap, forger.url).dropped.invalidId, forged.length);
      } else {
        assert.equal(accepted.length, forged.length, `stock NDK accepted ${accepted.length} of ${forged.length} forged copies`);
      }
    } finally {
      await tap?.close();
      await honest.close();
      await forger.close();
    }
  });
}

// applesauce's EventStore takes a kind-5 deletion without calling verifyEvent (EventStore.add
// handles deletions before it verifies), then removes the events it names and refuses them
// later: a relay can delete any note from the store with an unsigned deletion. Through the
// tap the forged deletion never reaches the store.
for (const withTap of [false, true]) {
  test(`${withTap ? "through the tap" : "without the tap"}, a forged deletion ${withTap ? "never reaches" : "removes events from"} applesauce's EventStore`, { skip }, async () => {
    const targets = corpus.items.slice(5000).filter((it) => it.valid && it.event.kind === 1).slice(0, 20);
    const deletions = targets.map((it, i) => {
      const d = { pubkey: it.event.pubkey, created_at: it.event.created_at + 1, kind: 5, tags: [["e", it.event.id]], content: "" };
      d.id = eventHash(d);
      d.sig = forge(it.event, "badSig", i + 1).sig; // not a signature of this id
      return d;
    });
    for (const d of deletions) assert.equal(reference({ ...d }), false);
    const honest = await startRelay({ events: targets.map((it) => it.json), delayMs: 200 });
    const forger = await startRelay({ events: deletions });
    const tap = withTap ? nv().tapWebSocket(WS) : null;
    try {
      const r = await libraries.applesauce({ urls: [honest.url, forger.url], filter: { kinds: [1, 5] }, WebSocket: WS, tap });
      const kept = targets.filter((it) => r.store.getEvent(it.event.id));
      if (withTap) {
        assert.equal(kept.length, targets.length, `${targets.length - kept.length} events missing from the store`);
        assert.equal(relayStats(tap, forger.url).dropped.invalidSig, deletions.length);
      } else {
        assert.equal(kept.length, 0, `${kept.length} of ${targets.length} events survived the forged deletions`);
      }
    } finally {
      await tap?.close();
      await honest.close();
      await forger.close();
    }
  });
}

/** Malformed inputs: each must get false, and none may throw or reject. */
function malformed(base) {
  const out = [null, undefined, 0, 42, "", "{}", [], {}, true, Symbol("x"), () => 1, new Uint8Array(64)];
  const drop = (k) => {
    const e = { ...base };
    delete e[k];
    return e;
  };
  for (const k of ["id", "pubkey", "created_at", "kind", "tags", "content", "sig"]) out.push(drop(k));
  out.push({ ...base, id: 7 }, { ...base, sig: 7 }, { ...base, sig: base.sig.toUpperCase() }, { ...base, id: base.id.toUpperCase() });
  out.push({ ...base, sig: base.sig.slice(2) }, { ...base, sig: `${base.sig}00` }, { ...base, pubkey: base.pubkey.slice(2) }, { ...base, id: `z${base.id.slice(1)}` });
  out.push({ ...base, kind: "1" }, { ...base, created_at: "1" }, { ...base, content: 5 }, { ...base, tags: "t" }, { ...base, tags: ["t"] }, { ...base, tags: [[5]] });
  out.push({ ...base, kind: NaN }, { ...base, created_at: Infinity }, { ...base, content: "x".repeat(1 << 20) });
  const getter = { ...base };
  Object.defineProperty(getter, "content", { get() { throw new Error("getter"); }, enumerable: true });
  out.push(getter);
  out.push(new Proxy({ ...base }, { get() { throw new Error("proxy"); } }));
  const cyclic = { ...base, tags: [] };
  cyclic.tags.push(cyclic.tags);
  out.push(cyclic);
  return out;
}

/** Real events (every one; verdicts from the index), mutated ones and nostr-tools' verdicts on a subset. */
let batchInputs;
function batchCases() {
  if (batchInputs) return batchInputs;
  const r = rng(47);
  const real = corpus.items.map((it) => it.event);
  const mutated = Array.from({ length: 300 }, (_, i) => forge(real[r() % real.length], ["badId", "badSig", "newId"][i % 3], i + 1));
  const events = [...real, ...mutated];
  const want = [...corpus.items.map((it) => it.valid), ...mutated.map(() => null)];
  // nostr-tools' verdict on every mutated event, every 8th real one and the invalid real ones;
  // where the index has one too, they agree.
  events.forEach((e, i) => {
    if (i < real.length && i % 8 !== 0 && want[i]) return;
    const v = reference(structuredClone(e));
    if (want[i] !== null) assert.equal(v, want[i], `nostr-tools and the index disagree on line ${i + 1}`);
    want[i] = v;
  });
  assert.equal(want.filter((v) => v === false).length, 5 + mutated.length);
  batchInputs = { real, events, want };
  return batchInputs;
}

for (const worker of [true, false]) {
  test(`createBatchVerifier (worker: ${worker}) agrees with nostr-tools and the index on real, mutated and malformed events`, { skip }, async () => {
    const all = batchCases();
    // Inline, every 4th real event and the mutated ones (the worker takes them all).
    const pick = (xs) => (worker ? xs : xs.filter((_, i) => i >= all.real.length || i % 4 === 0));
    const [real, events, want] = [all.real, pick(all.events), pick(all.want)];
    const bv = nv().createBatchVerifier({ worker });
    try {
      // All at once (a few large batches), then in small groups with pauses (many small ones).
      const got = await Promise.all(events.map((e) => bv.verify(structuredClone(e))));
      events.forEach((e, i) => assert.equal(got[i], want[i], `event ${i} (${e.id})`));
      for (let i = 0; i < 60; i += 3) {
        const part = await Promise.all(events.slice(i, i + 3).map((e) => bv.verify(structuredClone(e))));
        part.forEach((v, j) => assert.equal(v, want[i + j], `event ${i + j} in a small batch`));
      }
      // Malformed inputs: nostr-tools' verdict (a throw counts as false) for each, the same from
      // the batch verifier, which never rejects; valid events around them are unaffected.
      const bad = malformed(real[0]);
      const badWant = bad.map((e) => reference(e));
      assert.equal(badWant.filter((v) => v).length, 1, "nostr-tools accepts only the uppercase sig among the malformed");
      const mixed = [real[1], ...bad, real[2]];
      const verdicts = await Promise.all(mixed.map((e) => bv.verify(e)));
      assert.equal(verdicts[0], true, "the valid event before the malformed ones");
      assert.equal(verdicts.at(-1), true, "the valid event after the malformed ones");
      verdicts.slice(1, -1).forEach((v, i) => assert.equal(v, badWant[i], `malformed input ${i}`));
      const st = bv.stats();
      assert.ok(st.maxBatchSize > 100, `max batch ${st.maxBatchSize}: calls made together were not batched`);
    } finally {
      await bv.close();
    }
  });
}

describe("relay.mjs", () => {
  const mk = (i, kind, created_at, tags = []) => ({ id: i.toString(16).padStart(64, "0"), pubkey: (i % 3).toString(16).padStart(64, "a"), created_at, kind, tags, content: `e${i}`, sig: "0".repeat(128) });
  const events = [mk(1, 1, 100), mk(2, 1, 200, [["p", "x"]]), mk(3, 7, 300), mk(4, 1, 400, [["e", "y"]]), mk(5, 0, 500)];
  let relay;
  let ws;
  const inbox = [];
  const waitFor = async (pred) => {
    for (let i = 0; i < 100; i++) {
      const m = inbox.find(pred);
      if (m) return m;
      await new Promise((ok) => setTimeout(ok, 10));
    }
    throw new Error("no such message");
  };
  const req = async (sub, ...filters) => {
    ws.send(JSON.stringify(["REQ", sub, ...filters]));
    await waitFor((m) => m[0] === "EOSE" && m[1] === sub);
    return inbox.filter((m) => m[0] === "EVENT" && m[1] === sub).map((m) => m[2].content);
  };
  before(async () => {
    relay = await startRelay({ events: [...events.slice(0, 4), JSON.stringify(events[4])], first: [{ ...events[0], content: "forged" }] });
    ws = new WS(relay.url);
    ws.on("message", (d) => inbox.push(JSON.parse(d.toString())));
    await new Promise((ok, fail) => (ws.once("open", ok), ws.once("error", fail)));
  });
  after(async () => {
    ws?.close();
    await relay?.close();
  });
  test("filters, newest first, forged-first copies, bad requests", async () => {
    assert.deepEqual(await req("a", { kinds: [7, 0] }), ["e5", "e3"]);
    assert.deepEqual(await req("b", { kinds: [1], limit: 2 }), ["forged", "e4", "e2"]);
    assert.deepEqual(await req("c", { since: 200, until: 400 }), ["e4", "e3", "e2"]);
    // Events 1 and 4 share an author (and the forged copy of 1 goes first).
    assert.deepEqual(await req("d", { ids: [events[2].id] }, { authors: [events[3].pubkey] }), ["forged", "e4", "e3", "e1"]);
    assert.deepEqual(await req("e", { "#p": ["x"] }, { "#e": ["y"] }), ["e4", "e2"]);
    assert.deepEqual(await req("f", { limit: 0 }), []);
    ws.send(JSON.stringify(["REQ", "g", { kinds: "1" }]));
    assert.match((await waitFor((m) => m[0] === "CLOSED" && m[1] === "g"))[2], /^error: kinds/);
    ws.send(JSON.stringify(["REQ", 5, {}]));
    await waitFor((m) => m[0] === "CLOSED" && m[1] === "");
    ws.send("not json");
    await waitFor((m) => m[0] === "NOTICE");
    ws.send(JSON.stringify(["COUNT", "h", { kinds: [1] }]));
    assert.deepEqual((await waitFor((m) => m[0] === "COUNT")).slice(1), ["h", { count: 3 }]);
    ws.send(JSON.stringify(["EVENT", events[0]]));
    assert.equal((await waitFor((m) => m[0] === "OK"))[2], false);
    ws.send(JSON.stringify(["CLOSE", "a"]));
    const st = relay.stats();
    assert.equal(st.connections, 1);
    assert.ok(st.reqs >= 6 && st.closed === 2);
  });
  test("as a child process: prints its URL, serves the files' lines verbatim, prints its stats on SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "relay-"));
    try {
      // Verbatim: the relay must not re-serialize a line (here with a space and an escaped slash).
      const lines = events.map((e) => JSON.stringify(e).replace('"content":"', '"content": "\\/'));
      writeFileSync(join(dir, "events.jsonl"), `${lines.join("\n")}\n`);
      writeFileSync(join(dir, "first.jsonl"), `${JSON.stringify({ ...events[1], content: "forged" })}\n`);
      const child = spawn(process.execPath, [new URL("relay.mjs", import.meta.url).pathname, "--port", "0", "--events", join(dir, "events.jsonl"), "--first", join(dir, "first.jsonl"), "--delay-ms", "20"], { stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const url = await new Promise((ok, fail) => {
        child.stdout.once("data", (d) => ok(d.toString().trim()));
        child.once("exit", (code) => fail(new Error(`relay exited with ${code}: ${stderr}`)));
      });
      assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+$/);
      const c = new WS(url);
      const raw = [];
      c.on("message", (d) => raw.push(d.toString()));
      await new Promise((ok, fail) => (c.once("open", ok), c.once("error", fail)));
      c.send(JSON.stringify(["REQ", "x", { kinds: [1] }]));
      for (let i = 0; i < 100 && !raw.some((m) => m.startsWith('["EOSE"')); i++) await new Promise((ok) => setTimeout(ok, 10));
      const kind1 = lines.filter((l) => JSON.parse(l).kind === 1).sort((x, y) => JSON.parse(y).created_at - JSON.parse(x).created_at);
      const forged = JSON.stringify({ ...events[1], content: "forged" });
      assert.deepEqual(raw, [`["EVENT","x",${forged}]`, ...kind1.map((l) => `["EVENT","x",${l}]`), '["EOSE","x"]']);
      c.close();
      const exited = new Promise((ok) => child.once("exit", ok));
      child.kill("SIGTERM");
      assert.equal(await exited, 0);
      const st = JSON.parse(stderr.trim().split("\n").at(-1));
      assert.equal(st.reqs, 1);
      assert.equal(st.events, kind1.length + 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
