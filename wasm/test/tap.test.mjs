// The WebSocket tap and the batching verifier of wasm/pkg-node (wasm/package/tap/), against a
// `ws` server on 127.0.0.1 that each test scripts, with nostr-tools' verifyEvent as the
// reference verdict. The six client libraries are tested through the tap in wasm/clients/.
// Run by wasm/test/run.sh after wasm/build.sh.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { author, cases, expected, frameVerdict, randomBatch, rawFrames, sign } from "./events.mjs";

const require = createRequire(import.meta.url);
const WS = require("ws");
const nv = require(new URL("../pkg-node/", import.meta.url).pathname);
const { tapWebSocket, createBatchVerifier } = nv;

/** A server on 127.0.0.1 that runs `script(socket)` for each connection. */
async function serve(script) {
  const wss = new WS.WebSocketServer({ host: "127.0.0.1", port: 0 });
  wss.on("connection", (ws) => script(ws));
  await new Promise((r) => wss.once("listening", r));
  return { url: `ws://127.0.0.1:${wss.address().port}`, close: () => new Promise((r) => wss.close(r)) };
}

/** Opens `url` through `tap` and records every event dispatched, both ways a library listens,
 * until the close event (or `stop(record)` says to close). */
function record(tap, url, { stop, onOpen } = {}) {
  return new Promise((resolve, reject) => {
    const s = new tap.WebSocket(url);
    s.binaryType = "arraybuffer";
    const viaProperty = [];
    const viaListener = [];
    const entry = (ev) =>
      ev.type === "message"
        ? typeof ev.data === "string"
          ? ev.data
          : `binary:${Buffer.from(ev.data).toString("hex")}`
        : ev.type === "close"
          ? `close:${ev.code}`
          : ev.type;
    s.onopen = (ev) => {
      viaProperty.push(entry(ev));
      if (onOpen) onOpen(s);
    };
    s.onmessage = (ev) => {
      viaProperty.push(entry(ev));
      if (stop && stop(ev, s)) s.close();
    };
    s.onerror = (ev) => viaProperty.push(entry(ev));
    s.onclose = (ev) => {
      viaProperty.push(entry(ev));
      resolve({ viaProperty, viaListener, socket: s });
    };
    for (const t of ["open", "message", "error", "close"]) s.addEventListener(t, (ev) => viaListener.push(entry(ev)));
    setTimeout(() => reject(new Error("no close event within 60 s")), 60_000).unref();
  });
}

const frame = (e, sub = "s") => JSON.stringify(["EVENT", sub, e]);

for (const worker of [true, false]) {
  const mode = worker ? "worker" : "inline";

  test(`${mode}: frames keep wire order behind the events before them; invalid events dropped`, async () => {
    const [good1, good2, good3] = randomBatch(3, 2, 0, 11);
    const badId = { ...good1, content: good1.content + "!" };
    const badSig = { ...good2, sig: good3.sig };
    const script = [
      frame(good1),
      '["NOTICE","hello"]',
      frame(badId),
      ` [ "EVENT" , "s" , ${JSON.stringify(good2)} ]`, // JSON whitespace is still an EVENT frame
      Buffer.from([1, 2, 3]),
      frame(badSig),
      '["EVENT","s",{"not":"an event"}]',
      '["EVENT", broken json',
      '["EOSE","s"]',
      frame(good3),
      '["OK","abc",true,""]',
    ];
    const server = await serve((ws) => {
      for (const f of script) ws.send(f, { binary: Buffer.isBuffer(f) });
      ws.close(4321, "done");
    });
    const tap = tapWebSocket(WS, { worker });
    const { viaProperty, viaListener, socket } = await record(tap, server.url);
    const want = ["open", script[0], script[1], script[3], "binary:010203", script[8], script[9], script[10], "close:4321"];
    assert.deepEqual(viaProperty, want);
    assert.deepEqual(viaListener, want);
    assert.equal(socket.readyState, tap.WebSocket.CLOSED);
    const st = tap.stats();
    assert.equal(st.worker, worker);
    assert.deepEqual(st.relays[server.url].dropped, { invalidId: 1, invalidSig: 1, malformed: 2 });
    assert.equal(st.relays[server.url].events, 7);
    assert.equal(st.relays[server.url].delivered, 3);
    assert.equal(st.relays[server.url].frames, script.length);
    assert.ok(st.maxLatencyMs >= 0 && st.maxLatencyMs < 10_000, `latency ${st.maxLatencyMs}`);
    // The synchronous hook knows exactly the delivered (id, sig) pairs.
    for (const e of [good1, good2, good3]) assert.equal(tap.verifyEvent(JSON.parse(JSON.stringify(e))), true);
    assert.equal(tap.verifyEvent(badSig), false);
    assert.equal(tap.verifyEvent({ ...good1, sig: good2.sig }), false);
    // The id and sig of a delivered event over other fields: refused, field by field.
    for (const [k, v] of [["content", "forged"], ["kind", 7], ["created_at", 1], ["tags", [["p", "x"]]], ["pubkey", "ab".repeat(32)]]) {
      assert.equal(tap.verifyEvent({ ...good1, [k]: v }), false, `altered ${k}`);
    }
    assert.equal(tap.verifyEvent(badId), false, "the forged copy the tap dropped");
    const cyclic = { ...good1, tags: [] };
    cyclic.tags.push(cyclic.tags);
    assert.equal(tap.verifyEvent(cyclic), false);
    for (const bad of [null, undefined, 1, "x", {}, { id: 1, sig: 2 }]) assert.equal(tap.verifyEvent(bad), false);
    await tap.close();
    await server.close();
  });

  test(`${mode}: every case and random batches give nostr-tools' verdicts, each valid event once`, async () => {
    const events = [
      ...cases()
        .filter(([, , jsonSafe]) => jsonSafe)
        .map(([, make]) => make()),
      ...randomBatch(200, 12, 7, 12),
    ];
    const want = events.map((e) => expected(() => JSON.parse(JSON.stringify(e))));
    assert.ok(want.includes(0) && want.includes(1));
    const server = await serve((ws) => {
      for (const e of events) ws.send(frame(e));
      ws.send('["EOSE","s"]');
    });
    const tap = tapWebSocket(WS, { worker, maxBatch: 128 });
    const { viaProperty } = await record(tap, server.url, { stop: (ev) => ev.data === '["EOSE","s"]' });
    const wantFrames = events.map((e) => frame(e)).filter((_, i) => want[i] === 1);
    assert.deepEqual(viaProperty.slice(1, -2), wantFrames, "the valid events, in order, each once");
    // The keys the worker wrote (in Rust for most frames) are the ones tap.verifyEvent computes.
    for (const f of wantFrames) assert.equal(tap.verifyEvent(JSON.parse(f)[2]), true, f);
    assert.equal(viaProperty.at(-2), '["EOSE","s"]');
    const st = tap.stats();
    const r = st.relays[server.url];
    assert.equal(r.delivered, wantFrames.length);
    assert.equal(r.dropped.invalidId + r.dropped.invalidSig + r.dropped.malformed, events.length - wantFrames.length);
    assert.ok(st.batches >= 2 && st.maxBatchSize <= 128, JSON.stringify(st));
    await tap.close();
    await server.close();
  });

  test(`${mode}: raw frames: JSON.parse's reading decides, whether Rust or JavaScript parses them`, async () => {
    const raw = rawFrames();
    const server = await serve((ws) => {
      for (const [, text] of raw) ws.send(text);
      ws.send('["EOSE","s"]');
    });
    const tap = tapWebSocket(WS, { worker, maxBatch: 16 });
    const { viaProperty } = await record(tap, server.url, { stop: (ev) => ev.data === '["EOSE","s"]' });
    // What the tap takes for an EVENT frame (["EVENT", with JSON whitespace); it passes the
    // others ("EVENTS", single quotes) through as it passes NOTICE or EOSE.
    const isEvent = (t) => /^\s*\[\s*"EVENT"\s*,/.test(t);
    const wantFrames = raw.map(([, t]) => t).filter((t) => !isEvent(t) || frameVerdict(t) === 1);
    const valid = wantFrames.filter(isEvent);
    assert.ok(valid.length >= 15 && wantFrames.length < raw.length);
    assert.deepEqual(viaProperty.slice(1, -2), wantFrames, "exactly nostr-tools' valid frames (and the others), in order");
    for (const t of valid) assert.equal(tap.verifyEvent(JSON.parse(t)[2]), true, t);
    const st = tap.stats();
    const left = raw.filter(([, t, rustDecides]) => isEvent(t) && !rustDecides).length;
    assert.equal(st.parsedInJs, left, "what Rust leaves, and only that");
    await tap.close();
    await server.close();
  });
}

// A WebSocket class of our own whose sockets open and deliver `texts` as they are, in order
// (no UTF-8 on the way: a raw lone surrogate survives), then close when asked.
function fakeSocket(texts) {
  return class Fake extends EventTarget {
    constructor(url) {
      super();
      this.url = url;
      this.readyState = 0;
      setTimeout(() => {
        this.readyState = 1;
        this.dispatchEvent(new Event("open"));
        for (const data of texts) this.dispatchEvent(Object.assign(new Event("message"), { data }));
      }, 1);
    }
    send() {}
    close() {
      this.readyState = 3;
      setTimeout(() => this.dispatchEvent(Object.assign(new Event("close"), { code: 1000, reason: "", wasClean: true })), 1);
    }
  };
}

test("a frame holding a raw lone surrogate (no WebSocket delivers one, a custom socket may): its batch goes the JavaScript way", async () => {
  // JSON.parse keeps the raw lone surrogate; JSON.stringify escapes it: the id covers "\ud800".
  const a = author(50);
  const lone = sign({ pubkey: a.pubkey, created_at: 1, kind: 1, tags: [], content: "a\ud800b" }, a.sk);
  const loneText = frame(lone).replace("\\ud800", "\ud800");
  assert.notEqual(loneText, frame(lone));
  assert.equal(frameVerdict(loneText), 1);
  const plain = randomBatch(5, 2, 0, 31).map((e) => frame(e));
  const texts = [plain[0], loneText, ...plain.slice(1), '["EOSE","s"]'];
  // A socket of our own that delivers the texts as they are (UTF-8 would replace the surrogate).
  const Fake = fakeSocket(texts);
  for (const worker of [true, false]) {
    const tap = tapWebSocket(Fake, { worker });
    const { viaProperty } = await record(tap, "ws://fake", { stop: (ev) => ev.data === '["EOSE","s"]' });
    assert.deepEqual(viaProperty.slice(1, -1), texts, `every frame delivered (${worker ? "worker" : "inline"})`);
    assert.equal(tap.verifyEvent(JSON.parse(loneText)[2]), true);
    assert.ok(tap.stats().parsedInJs >= 1, JSON.stringify(tap.stats()));
    await tap.close();
  }
});

test("one batch led by a byte order mark, frames left to JavaScript among multi-byte ones: each frame read where it is, each key found", async () => {
  // The keys of a batch with frames left to JavaScript come as an array (Rust's lines and
  // deliveredKey's); the offsets of the frames JSON.parse reads are UTF-16 offsets into the
  // joined string.
  const a = author(51);
  const ev = (i, content) => sign({ pubkey: a.pubkey, created_at: 1700000000 + i, kind: 1, tags: [["t", "é🌍"]], content }, a.sk);
  const float = (e) => frame(e).replace(`"created_at":${e.created_at}`, `"created_at":${e.created_at}.0`);
  const texts = [
    "\ufeff" + frame(ev(0, "bom")),
    float(ev(1, "héllo 🌍 one")),
    frame(ev(2, "€ two 🌍🌍")),
    float(ev(3, "three ﷽")),
    frame(ev(4, "four")),
    '["EOSE","s"]',
  ];
  // What the tap takes for an EVENT frame (JSON whitespace, which for a RegExp includes U+FEFF).
  const isEvent = (t) => /^\s*\[\s*"EVENT"\s*,/.test(t);
  assert.deepEqual(texts.map((t) => (isEvent(t) ? frameVerdict(t) : -1)), [0, 1, 1, 1, 1, -1]);
  const want = texts.slice(1);
  const Fake = fakeSocket(texts);
  for (const worker of [true, false]) {
    const tap = tapWebSocket(Fake, { worker });
    const { viaProperty } = await record(tap, "ws://fake", { stop: (ev) => ev.data === '["EOSE","s"]' });
    assert.deepEqual(viaProperty.slice(1, -1), want, `the valid frames (${worker ? "worker" : "inline"})`);
    for (const t of want.slice(0, -1)) assert.equal(tap.verifyEvent(JSON.parse(t)[2]), true, t);
    const st = tap.stats();
    assert.equal(st.batches, 1, JSON.stringify(st));
    assert.equal(st.parsedInJs, 3, JSON.stringify(st));
    assert.equal(st.relays["ws://fake"].dropped.malformed, 1);
    await tap.close();
  }
});

test("closeAfterForged closes a forging socket; what it sends after that is discarded", async () => {
  const good = randomBatch(40, 4, 0, 13);
  const forged = good.slice(0, 3).map((e) => ({ ...e, content: "forged " + e.content }));
  const server = await serve((ws) => {
    ws.send(frame(good[0]));
    for (const e of forged) ws.send(frame(e));
    for (const e of good.slice(1)) ws.send(frame(e));
  });
  const tap = tapWebSocket(WS, { closeAfterForged: 2, maxBatch: 1 });
  const { viaProperty } = await record(tap, server.url);
  assert.equal(viaProperty[1], frame(good[0]));
  assert.equal(viaProperty.at(-1), "close:4001");
  const delivered = viaProperty.filter((x) => x.startsWith('["EVENT"'));
  assert.deepEqual(delivered, [frame(good[0])], "nothing after the second forged event");
  const r = tap.stats().relays[server.url];
  assert.equal(r.closedForForgery, 1);
  assert.ok(r.dropped.invalidId >= 2);
  await tap.close();
  await server.close();
});

test("close() by the app: messages still queued are discarded, as a native WebSocket does", async () => {
  const events = randomBatch(300, 3, 0, 14);
  const server = await serve((ws) => {
    for (const e of events) ws.send(frame(e));
  });
  const tap = tapWebSocket(WS, { maxBatch: 16 });
  let closedAt = -1;
  const { viaProperty } = await record(tap, server.url, {
    stop: (ev) => {
      closedAt = closedAt < 0 ? 1 : closedAt;
      return true; // close on the first message
    },
  });
  const messages = viaProperty.filter((x) => x.startsWith('["EVENT"'));
  assert.equal(messages.length, 1, "one message, then close()");
  assert.ok(tap.stats().discarded > 0 || tap.stats().relays[server.url].frames < 300);
  await tap.close();
  await server.close();
});

test("a worker that cannot start hands its work to the main thread", async () => {
  const events = randomBatch(50, 5, 10, 15);
  const want = events.map((e) => expected(() => ({ ...e })));
  const server = await serve((ws) => {
    for (const e of events) ws.send(frame(e));
    ws.close(1000);
  });
  const tap = tapWebSocket(WS, { workerUrl: new URL("./no-such-worker.js", import.meta.url).pathname });
  const { viaProperty } = await record(tap, server.url);
  assert.deepEqual(
    viaProperty.filter((x) => x.startsWith('["EVENT"')),
    events.filter((_, i) => want[i] === 1).map((e) => frame(e)),
  );
  const st = tap.stats();
  assert.equal(st.worker, false);
  assert.match(String(st.workerError), /no-such-worker|Cannot find module|exited/);
  await tap.close();
  await server.close();
});

test("verifyEvent remembers a bounded number of delivered events, the newest; fallback answers the rest", async () => {
  const events = randomBatch(20, 2, 0, 16);
  const server = await serve((ws) => {
    for (const e of events) ws.send(frame(e));
    ws.close(1000);
  });
  const tap = tapWebSocket(WS, { remember: 4, fallback: (e) => e === "mine" });
  await record(tap, server.url);
  assert.equal(tap.verifyEvent(events[19]), true);
  assert.equal(tap.verifyEvent(events[0]), false);
  assert.ok(tap.stats().remembered <= 4);
  assert.equal(tap.verifyEvent("mine"), true);
  await tap.close();
  await server.close();
});

test("the tap class has the WebSocket interface the libraries use", async () => {
  const tap = tapWebSocket(WS);
  const T = tap.WebSocket;
  assert.deepEqual([T.CONNECTING, T.OPEN, T.CLOSING, T.CLOSED], [0, 1, 2, 3]);
  const server = await serve((ws) => ws.on("message", (m) => ws.send(`echo:${m}`)));
  const s = new T(server.url);
  assert.deepEqual([s.CONNECTING, s.OPEN, s.CLOSING, s.CLOSED], [0, 1, 2, 3]);
  assert.equal(s.readyState, T.CONNECTING);
  assert.equal(typeof s.ping, "function", "ws's ping forwarded");
  await new Promise((r) => (s.onopen = r));
  assert.equal(s.readyState, T.OPEN);
  assert.equal(s.url.startsWith(server.url), true);
  assert.equal(s.protocol, "");
  assert.equal(s.bufferedAmount, 0);
  const echo = new Promise((r) => s.addEventListener("message", (ev) => r(ev.data), { once: true }));
  // A ws-style "message" listener sees what the tap dispatches (never the raw socket).
  const viaOn = new Promise((r) => s.once("message", (data, isBinary) => r([data, isBinary])));
  s.send("hi");
  assert.equal(await echo, "echo:hi");
  assert.deepEqual(await viaOn, ["echo:hi", false]);
  const pong = new Promise((r) => s.once("pong", () => r(true)));
  s.ping();
  assert.equal(await pong, true);
  const handler = () => {};
  s.onmessage = handler;
  assert.equal(s.onmessage, handler);
  s.onmessage = null;
  assert.equal(s.onmessage, null);
  const closed = new Promise((r) => (s.onclose = r));
  s.close(1000, "bye");
  assert.equal(s.readyState, T.CLOSING);
  const ev = await closed;
  assert.equal(ev.code, 1000);
  assert.equal(s.readyState, T.CLOSED);
  assert.throws(() => tapWebSocket(42), TypeError);
  await tap.close();
  assert.throws(() => new T(server.url), /closed/);
  await server.close();
});

for (const worker of [true, false]) {
  test(`createBatchVerifier (${worker ? "worker" : "inline"}) gives nostr-tools' verdicts, in batches, never throwing`, async () => {
    const cs = cases();
    const made = cs.map(([, make]) => make());
    const want = cs.map(([, make]) => expected(make) === 1);
    const random = randomBatch(150, 9, 5, 17);
    const wantRandom = random.map((e) => expected(() => ({ ...e })) === 1);
    const bv = createBatchVerifier({ worker, maxBatch: 128 });
    const got = await Promise.all([...made, ...random].map((e) => bv.verify(e)));
    assert.deepEqual(got, [...want, ...wantRandom]);
    const hostile = [null, undefined, 7, "event", [], { tags: [[{}]] }, { get id() { throw new Error("getter"); } }];
    assert.deepEqual(await Promise.all(hostile.map((e) => bv.verify(e))), hostile.map(() => false));
    const st = bv.stats();
    assert.equal(st.worker, worker);
    assert.ok(st.batches <= 3 && st.maxBatchSize >= 100, JSON.stringify(st));
    await bv.close();
    await assert.rejects(bv.verify(random[0]), /closed/);
  });
}

test("a copy of an event from a second socket takes the first one's verdict; a forged copy does not", async () => {
  const events = randomBatch(120, 6, 0, 18);
  const forged = events.slice(0, 10).map((e) => ({ ...e, content: "forged" }));
  const server = await serve((ws) => {
    ws.on("message", (m) => {
      const sub = JSON.parse(m)[1];
      for (const e of [...forged, ...events]) ws.send(frame(e, sub));
      ws.send(JSON.stringify(["EOSE", sub]));
    });
  });
  const tap = tapWebSocket(WS, { maxBatch: 32 });
  const want = events.map((e) => frame(e));
  // Sub ids: plain, and one with an escape (not the fast path: verified again, same verdicts).
  const subs = ["a", "b", 'q\\"x'];
  const runs = await Promise.all(
    subs.map((sub) =>
      record(tap, server.url, {
        onOpen: (s) => s.send(JSON.stringify(["REQ", JSON.parse(`"${sub}"`), {}])),
        stop: (ev) => ev.data.startsWith('["EOSE"'),
      }),
    ),
  );
  runs.forEach(({ viaProperty }, i) => {
    const sub = JSON.parse(`"${subs[i]}"`);
    const got = viaProperty.filter((x) => x.startsWith('["EVENT"'));
    assert.deepEqual(got, events.map((e) => frame(e, sub)), `socket ${i}: every valid event, in order`);
    assert.equal(viaProperty.at(-2), JSON.stringify(["EOSE", sub]));
  });
  const st = tap.stats();
  assert.ok(st.copies >= want.length, `copies ${st.copies}`);
  const r = st.relays[server.url];
  assert.equal(r.dropped.invalidId, 3 * forged.length, "every forged copy dropped on every socket");
  assert.equal(r.delivered, 3 * events.length);
  assert.ok(st.maxVerdictMs <= st.maxLatencyMs + 1e-6 || st.maxLatencyMs === 0, JSON.stringify(st));
  await tap.close();
  await server.close();
});

test("a connection that fails gives error, then close, as the wrapped socket does", async () => {
  const tap = tapWebSocket(WS);
  const { viaProperty, viaListener } = await record(tap, "ws://127.0.0.1:1");
  assert.deepEqual(viaProperty, ["error", "close:1006"]);
  assert.deepEqual(viaListener, ["error", "close:1006"]);
  await tap.close();
});

test("the worker warms up before ready: every batch size, the forged copy rejected; inline has no warm-up", async () => {
  const tap = tapWebSocket(WS);
  assert.equal(tap.stats().warmUp, null, "nothing to report before ready");
  await tap.ready;
  const w = tap.stats().warmUp;
  assert.ok(w !== null, "the worker reports its warm-up");
  // At least one round of each of the three sizes, unless the 1.5 s ran out first.
  assert.ok(w.rounds >= 3 || w.ms >= 1500, JSON.stringify(w));
  assert.equal(w.forgedRejected, true, "the smallest batch's forged copy took the narrowing path and was rejected");
  assert.equal(typeof w.optimized, "boolean");
  assert.ok(w.ms >= 0 && w.ms < 10_000, JSON.stringify(w));
  await tap.close();
  const inline = tapWebSocket(WS, { worker: false });
  await inline.ready;
  assert.equal(inline.stats().warmUp, null);
  await inline.close();
  const bv = createBatchVerifier();
  await bv.ready;
  assert.equal(bv.stats().warmUp.forgedRejected, true);
  await bv.close();
});

test("a flood: the tap pauses its ws sockets while 4 batches wait, and delivers every valid event in order", async () => {
  const valid = randomBatch(150, 5, 0, 23);
  // 6,000 distinct forged frames (other content under each event's id and signature: each
  // costs the verifier an id hash), sent as fast as the server can, the valid ones among them.
  const flood = [];
  for (let i = 0; i < 6000; i++) {
    const e = valid[i % valid.length];
    flood.push({ ...e, content: `${e.content} forged ${i}` });
    if (i % 40 === 39) flood.push(valid[(i - 39) / 40]);
  }
  const server = await serve((ws) => {
    for (const e of flood) ws.send(frame(e));
    ws.send('["EOSE","s"]');
  });
  const maxBatch = 32;
  const tap = tapWebSocket(WS, { maxBatch });
  const { viaProperty, socket } = await record(tap, server.url, { stop: (ev) => ev.data === '["EOSE","s"]' });
  const got = viaProperty.filter((x) => x.startsWith('["EVENT"'));
  assert.deepEqual(got, valid.map((e) => frame(e)), "every valid event, in order, once");
  assert.equal(viaProperty.at(-2), '["EOSE","s"]', "EOSE after them");
  const st = tap.stats();
  assert.equal(st.relays[server.url].dropped.invalidId, 6000);
  assert.ok(st.pauses >= 1, `the socket was never paused: ${JSON.stringify(st)}`);
  // Paused at 4 batches; ws still hands over what it had read (one socket read, about 64 KiB).
  assert.ok(st.maxAwaiting <= 4 * maxBatch + 600, `frames waiting at once: ${st.maxAwaiting}`);
  assert.equal(st.pending, 0);
  assert.equal(socket.readyState, tap.WebSocket.CLOSED);
  await tap.close();
  await server.close();
});
