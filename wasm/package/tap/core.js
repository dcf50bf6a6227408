// ---- core.js: the tap and the batching verifier (main thread) ----
// Needs work.js before it and a `platform` object after it (node.js or web.js):
//   platform.defer(fn)            run fn soon, after the messages already queued
//   platform.now()                milliseconds, monotonic
//   platform.startWorker(url)     { post(msg), onMessage(cb), onError(cb), terminate(), ref(), unref() }
//   platform.loadInline()         Promise of the loaded wasm module (inline mode)
//   platform.makeMessage(data)    a "message" Event with .data
//   platform.makeClose(src)       a "close" Event with code, reason, wasClean copied from src

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

// Queue entries of a socket, in wire order.
const ENTRY_EVENT = 0; // an EVENT frame waiting for (or holding) its verdict
const ENTRY_MESSAGE = 1; // any other message, dispatched as it came
const ENTRY_ERROR = 2;
const ENTRY_CLOSE = 3;

// A batch is sent to the verifier while fewer than this many are in flight; the frames that
// arrive meanwhile form the next batch (batches grow with the load, latency stays bounded).
const MAX_IN_FLIGHT = 2;

// Backpressure: with this many batches' worth of EVENT frames waiting for verdicts (gathered
// or sent), the tap's sockets that can pause (the `ws` package's: pause() and resume()) stop
// reading until RESUME_AT batches' worth are left; the rest of the flood waits in the kernel's
// socket buffers, as it does when a library verifies inline. Sockets that cannot pause (the
// browsers') keep reading: the browser buffers their messages either way.
const PAUSE_AT = 4;
const RESUME_AT = 2;

// ["EVENT", …] frames: the common spelling tested first, JSON whitespace allowed.
const EVENT_HEAD = /^\s*\[\s*"EVENT"\s*,/;
function isEventFrame(s) {
  return s.startsWith('["EVENT",') || (s.length > 9 && EVENT_HEAD.test(s.slice(0, 64)));
}

// An "error" Event with the wrapped socket's error and message (neither engine's ErrorEvent
// takes them from another event).
function makeErrorEvent(src) {
  const e = new Event("error");
  Object.defineProperties(e, {
    error: { value: src && src.error, enumerable: true },
    message: { value: (src && src.message) || "WebSocket error", enumerable: true },
  });
  return e;
}

// The four WebSocket events, and how the `ws` package calls its emitter listeners for them.
const WS_EVENTS = new Set(["open", "message", "error", "close"]);
function emitterCall(type, fn, ev) {
  if (type === "message") fn(ev.data, typeof ev.data !== "string");
  else if (type === "close") fn(ev.code, ev.reason);
  else if (type === "error") fn(ev.error ?? ev);
  else fn();
}

// The event part of a frame written the common way, `["EVENT","<sub>",<event>]` with a sub id
// without escapes: the text after the sub id, without the closing bracket. "" for any other
// spelling. Two frames with the same event text get the same verdict whatever their sub ids.
function eventText(f) {
  if (!f.startsWith('["EVENT","')) return "";
  const q = f.indexOf('"', 10);
  if (q < 0 || f.charCodeAt(q + 1) !== 44 || f.charCodeAt(f.length - 1) !== 93) return "";
  if (f.lastIndexOf("\\", q) >= 10) return "";
  return f.slice(q + 2, f.length - 1);
}

// How many valid event texts a tap remembers at most (the newest 2,048 to 4,096, RecentMap), so
// that the copy of an event from a second relay gets its verdict without going to the verifier
// (about 2.5 MB for notes of 600 bytes).
const RECENT_TEXTS = 4096;

// A set of strings holding at least `capacity / 2` and at most `capacity` of the newest.
class RecentSet {
  constructor(capacity) {
    this.half = Math.max(1, Math.floor(capacity / 2));
    this.newer = new Set();
    this.older = new Set();
  }
  add(k) {
    if (this.newer.size >= this.half) {
      this.older = this.newer;
      this.newer = new Set();
    }
    this.newer.add(k);
  }
  has(k) {
    return this.newer.has(k) || this.older.has(k);
  }
  get size() {
    return this.newer.size + this.older.size;
  }
}

// A map of the same two generations: the newest `capacity / 2` to `capacity` keys (no
// eviction one key at a time: deleting a Map's oldest key leaves a hole that every later
// `keys().next()` walks over, about 1.2 µs an insertion at 4,096 keys against 0.07 µs here).
class RecentMap {
  constructor(capacity) {
    this.half = Math.max(1, Math.floor(capacity / 2));
    this.newer = new Map();
    this.older = new Map();
  }
  set(k, v) {
    if (this.newer.size >= this.half) {
      this.older = this.newer;
      this.newer = new Map();
    }
    this.newer.set(k, v);
  }
  get(k) {
    const v = this.newer.get(k);
    return v !== undefined ? v : this.older.get(k);
  }
}

// The event's seven fields as plain values (structured-cloneable), or null when one has the
// wrong type (nostr-tools' validateEvent would reject it; a getter that throws counts too).
// Never throws.
function plainEvent(e) {
  try {
    // nostr-tools' validateEvent starts with `event instanceof Object`.
    if (!(e instanceof Object)) return null;
    const { id, pubkey, created_at, kind, tags, content, sig } = e;
    if (typeof id !== "string" || typeof pubkey !== "string" || typeof sig !== "string") return null;
    if (typeof created_at !== "number" || typeof kind !== "number" || typeof content !== "string") return null;
    if (!Array.isArray(tags)) return null;
    let t = new Array(tags.length);
    let custom = tags.toJSON !== undefined;
    for (let i = 0; i < tags.length; i++) {
      const tag = tags[i];
      if (!Array.isArray(tag)) return null;
      custom ||= tag.toJSON !== undefined;
      const c = new Array(tag.length);
      for (let j = 0; j < tag.length; j++) {
        if (typeof tag[j] !== "string") return null;
        c[j] = tag[j];
      }
      t[i] = c;
    }
    // A toJSON on the tags changes their serialization (which nostr-tools hashes with
    // JSON.stringify): keep what it writes.
    if (custom) t = JSON.parse(JSON.stringify(tags));
    return { id, pubkey, created_at, kind, tags: t, content, sig };
  } catch (_) {
    return null;
  }
}

// ---- The verification engine: one worker shared by every tap and batch verifier of this
// module (per worker URL), or inline on the main thread. A worker that fails hands its pending
// requests and all later ones to the inline engine.

const engines = new Map();

class Engine {
  constructor(mode, workerUrl, wasmUrl) {
    this.mode = mode; // "worker" | "inline"
    this.workerUrl = workerUrl;
    this.wasmUrl = wasmUrl;
    this.users = 0;
    this.calls = new Map();
    this.nextId = 1;
    this.worker = null;
    this.work = null; // inline: createWork(wasm) once loaded
    this.error = null;
    if (mode === "worker") {
      try {
        this.startWorker();
      } catch (e) {
        this.fallBack(e);
      }
    }
    this.warmUp = null; // the worker's warm-up summary (work.js, warmUp), once ready
    this.ready = this.request("ping", null, { wasmUrl: wasmUrl === undefined ? undefined : String(wasmUrl) }).then(
      (reply) => {
        this.warmUp = reply.warmUp ?? null;
      },
    );
    // Nobody need await `ready`; a failure shows in the requests and in stats().
    this.ready.catch(() => undefined);
  }

  startWorker() {
    const w = platform.startWorker(this.workerUrl);
    this.worker = w;
    w.onMessage((reply) => {
      const call = this.calls.get(reply.id);
      if (!call) return;
      this.calls.delete(reply.id);
      this.idle();
      if (this.users === 0 && this.calls.size === 0) this.stop();
      if (reply.error) call.fail(new Error("nostr-verify tap worker: " + reply.error));
      else call.done(reply);
    });
    w.onError((e) => this.fallBack(e));
    w.unref();
  }

  // The worker failed (could not start, crashed, or could not load the module): every pending
  // request, and every later one, runs inline.
  fallBack(e) {
    this.error = String((e && e.message) || e);
    if (this.worker) {
      try {
        this.worker.terminate();
      } catch (_) {
        // already gone
      }
    }
    this.worker = null;
    this.mode = "inline";
    const pending = [...this.calls.values()];
    this.calls.clear();
    for (const call of pending) this.runInline(call);
  }

  request(kind, items, extra, transfer) {
    return new Promise((done, fail) => {
      const call = { id: this.nextId++, kind, items, extra, done, fail };
      if (this.mode === "worker" && this.worker) {
        this.calls.set(call.id, call);
        if (this.calls.size === 1) this.worker.ref();
        try {
          this.worker.post(Object.assign({ id: call.id, kind, items }, extra), transfer || []);
        } catch (e) {
          this.calls.delete(call.id);
          this.idle();
          this.runInline(call);
        }
      } else {
        this.runInline(call);
      }
    });
  }

  idle() {
    if (this.calls.size === 0 && this.worker) this.worker.unref();
  }

  runInline(call) {
    const go = () => {
      const m = Object.assign({ id: call.id, kind: call.kind, items: call.items }, call.extra);
      const [reply] = handleRequest(this.work, m);
      if (reply.error) call.fail(new Error("nostr-verify: " + reply.error));
      else call.done(reply);
    };
    if (this.work) {
      go();
      return;
    }
    this.loading ??= platform.loadInline(this.wasmUrl).then((wasm) => {
      this.work = createWork(wasm);
    });
    this.loading.then(go, (e) => call.fail(e));
  }

  // The last user gone: later users get a new engine; this one's worker ends once its pending
  // requests are answered.
  release() {
    if (--this.users > 0) return;
    engines.delete(this.key);
    if (this.calls.size === 0) this.stop();
  }

  stop() {
    if (this.worker) this.worker.terminate();
    this.worker = null;
  }
}

function acquireEngine(o) {
  const mode = o.worker === false ? "inline" : "worker";
  const key = [mode, o.workerUrl ? String(o.workerUrl) : "", o.wasmUrl ? String(o.wasmUrl) : ""].join(" ");
  let e = engines.get(key);
  if (!e) {
    e = new Engine(mode, o.workerUrl, o.wasmUrl);
    e.key = key;
    engines.set(key, e);
  }
  e.users++;
  return e;
}

function positiveInt(v, fallback, what) {
  if (v === undefined) return fallback;
  if (!Number.isInteger(v) || v < 0) throw new TypeError(`${what} must be a non-negative integer, got ${v}`);
  return v;
}

// A "deferred" runner: fn runs once soon after the first schedule() since it last ran.
function deferred(fn) {
  let scheduled = false;
  const run = () => {
    scheduled = false;
    fn();
  };
  return () => {
    if (!scheduled) {
      scheduled = true;
      platform.defer(run);
    }
  };
}

/**
 * A WebSocket tap: see tap.d.ts for the contract.
 */
function tapWebSocket(WebSocketImpl, options) {
  if (WebSocketImpl !== undefined && WebSocketImpl !== null && typeof WebSocketImpl !== "function") {
    if (options === undefined && typeof WebSocketImpl === "object") {
      options = WebSocketImpl; // tapWebSocket({ ...options })
      WebSocketImpl = undefined;
    } else {
      throw new TypeError("tapWebSocket: the first argument must be a WebSocket class");
    }
  }
  const Impl = WebSocketImpl || globalThis.WebSocket;
  if (typeof Impl !== "function") {
    throw new TypeError(
      "tapWebSocket: no WebSocket class given and no globalThis.WebSocket (node 20: pass require(\"ws\"))",
    );
  }
  const o = Object.assign({}, options);
  const maxBatch = Math.max(1, positiveInt(o.maxBatch, 1024, "maxBatch"));
  const closeAfterForged = positiveInt(o.closeAfterForged, 0, "closeAfterForged");
  const remember = Math.max(2, positiveInt(o.remember, 65536, "remember"));
  const fallback = typeof o.fallback === "function" ? o.fallback : null;
  const engine = acquireEngine(o);
  // This tap's fingerprint seeds (see work.js, fingerprint).
  const seeds = new Uint32Array(2);
  globalThis.crypto.getRandomValues(seeds);
  const seedList = [seeds[0] | 0, seeds[1] | 0];

  const delivered = new RecentSet(remember);
  const sockets = new Set();
  const relays = new Map();
  const totals = {
    batches: 0,
    verified: 0,
    parsedInJs: 0,
    copies: 0,
    maxBatchSize: 0,
    maxLatencyMs: 0,
    maxVerdictMs: 0,
    maxAwaiting: 0,
    pauses: 0,
    discarded: 0,
    unverified: 0,
  };
  // Valid event texts seen lately -> their delivered key; texts on their way to the verifier ->
  // the entry that carries them (copies wait for its verdict instead of being verified again).
  const recentValid = new RecentMap(RECENT_TEXTS);
  const inProgress = new Map();
  let batchStamp = 0; // when the first frame of the batch being gathered arrived
  let pending = []; // EVENT entries not yet sent, of every socket
  let inFlight = 0;
  let closed = false;
  let awaiting = 0; // EVENT frames gathered or sent, without their verdict yet
  let paused = false; // the pausable sockets are paused (PAUSE_AT)

  function relayStats(url) {
    let r = relays.get(url);
    if (!r) {
      r = {
        sockets: 0,
        frames: 0,
        events: 0,
        delivered: 0,
        dropped: { invalidId: 0, invalidSig: 0, malformed: 0 },
        closedForForgery: 0,
      };
      relays.set(url, r);
    }
    return r;
  }

  const schedule = deferred(() => {
    if (pending.length > 0 && inFlight < MAX_IN_FLIGHT) flush();
  });

  function flush() {
    const batch = pending;
    pending = [];
    inFlight++;
    totals.batches++;
    totals.verified += batch.length;
    if (batch.length > totals.maxBatchSize) totals.maxBatchSize = batch.length;
    const ends = new Uint32Array(batch.length);
    let joined = "";
    for (let i = 0; i < batch.length; i++) {
      joined += batch[i].data;
      ends[i] = joined.length;
    }
    // Not transferred: a worker that fails hands the request, ends included, to the inline engine.
    engine.request("frames", { joined, ends }, { seeds: seedList }).then(
      (reply) => {
        totals.parsedInJs += reply.undecided;
        settle(batch, reply.codes, reply.keys);
      },
      () => settle(batch, null, null),
    );
  }

  function settle(batch, codes, keys) {
    inFlight--;
    awaiting -= batch.length;
    if (batch.length > 0) {
      const ms = platform.now() - batch[0].t0;
      if (ms > totals.maxVerdictMs) totals.maxVerdictMs = ms;
    }
    const touched = new Set();
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i];
      // No verdict (the engine failed twice): never delivered, counted as unverified.
      e.code = codes ? codes[i] : -1;
      e.key = keys ? keys[i] : "";
      touched.add(e.sock);
      if (e.text !== "") {
        inProgress.delete(e.text);
        if (e.code === VERDICT_VALID) {
          recentValid.set(e.text, e.key);
        }
        if (e.twins !== null) {
          for (const t of e.twins) {
            t.code = e.code;
            t.key = e.key;
            touched.add(t.sock);
          }
        }
      }
    }
    for (const s of touched) s._drain();
    // Frames that came while this batch was out have waited long enough: send them now.
    if (pending.length > 0 && (inFlight < MAX_IN_FLIGHT || pending.length >= maxBatch)) flush();
    if (paused && awaiting <= RESUME_AT * maxBatch) {
      paused = false;
      for (const s of sockets) s._resume();
    }
  }

  class TapWebSocket extends EventTarget {
    constructor(url, protocols, ...rest) {
      super();
      if (closed) throw new Error("tapWebSocket: this tap is closed");
      const ws = protocols === undefined && rest.length === 0 ? new Impl(url) : new Impl(url, protocols, ...rest);
      this._ws = ws;
      this._url = String(url);
      this._stats = relayStats(this._url);
      this._stats.sockets++;
      this._queue = [];
      this._head = 0;
      this._draining = false;
      this._forged = 0;
      this._paused = false;
      this._stopped = false; // close() called here, or closed for forgery: messages discarded
      this._closeDispatched = false;
      this._handlers = { open: null, message: null, error: null, close: null };
      sockets.add(this);
      const listen = (type, fn) => {
        if (typeof ws.addEventListener === "function") ws.addEventListener(type, fn);
        else ws["on" + type] = fn;
      };
      listen("open", () => this.dispatchEvent(new Event("open")));
      listen("message", (ev) => this._onMessage(ev));
      listen("error", (ev) => this._push({ t: ENTRY_ERROR, ev }));
      listen("close", (ev) => this._push({ t: ENTRY_CLOSE, ev }));
      // The `ws` package's extras, which nostr-tools uses when they exist (ping, and
      // once("pong")). Its emitter methods reach the wrapped socket only for events other than
      // the four WebSocket events: those are the tap's (a "message" listener on the wrapped
      // socket would see unverified frames), given to a ws-style listener here as ws calls it.
      for (const m of ["ping", "pong", "terminate"]) {
        if (typeof ws[m] === "function") this[m] = (...args) => ws[m](...args);
      }
      for (const m of ["on", "once", "off", "addListener", "removeListener"]) {
        if (typeof ws[m] !== "function") continue;
        this[m] = (type, fn) => {
          if (!WS_EVENTS.has(type)) {
            ws[m](type, fn);
            return this;
          }
          if (m === "off" || m === "removeListener") {
            const w = this._emitterWrappers.get(fn);
            if (w) this.removeEventListener(type, w);
            return this;
          }
          const w = (ev) => emitterCall(type, fn, ev);
          this._emitterWrappers.set(fn, w);
          this.addEventListener(type, w, { once: m === "once" });
          return this;
        };
      }
      this._emitterWrappers = new WeakMap();
    }

    get url() {
      return this._ws.url ?? this._url;
    }
    get protocol() {
      return this._ws.protocol ?? "";
    }
    get extensions() {
      return this._ws.extensions ?? "";
    }
    get bufferedAmount() {
      return this._ws.bufferedAmount ?? 0;
    }
    get binaryType() {
      return this._ws.binaryType;
    }
    set binaryType(v) {
      this._ws.binaryType = v;
    }
    get readyState() {
      if (this._closeDispatched) return CLOSED;
      const s = this._ws.readyState;
      // Closed underneath with frames still to dispatch, or closing: CLOSING until the close
      // event is dispatched here.
      if (this._stopped || s === CLOSED) return CLOSING;
      return s;
    }
    send(data) {
      this._ws.send(data);
    }
    close(code, reason) {
      this._stopped = true;
      // A paused socket would not read the server's close frame.
      this._resume();
      if (code === undefined) this._ws.close();
      else this._ws.close(code, reason);
    }

    // Backpressure (PAUSE_AT): stops reading, when the wrapped socket can.
    _pause() {
      const ws = this._ws;
      if (this._paused || typeof ws.pause !== "function" || typeof ws.resume !== "function") return;
      this._paused = true;
      ws.pause();
    }

    _resume() {
      if (!this._paused) return;
      this._paused = false;
      this._ws.resume();
    }

    _onMessage(ev) {
      const data = ev.data;
      this._stats.frames++;
      if (typeof data === "string" && isEventFrame(data)) {
        this._stats.events++;
        // One timestamp a batch (the first frame's): latencies are measured from it.
        if (pending.length === 0) batchStamp = platform.now();
        const text = eventText(data);
        const e = { t: ENTRY_EVENT, sock: this, data, text, t0: batchStamp, code: 0, key: "", twins: null };
        this._queue.push(e);
        if (text !== "") {
          // A copy of an event verified lately (from another relay): its verdict is known.
          const key = recentValid.get(text);
          if (key !== undefined) {
            totals.copies++;
            e.code = VERDICT_VALID;
            e.key = key;
            this._drain();
            return;
          }
          // A copy of one on its way to the verifier: it takes that one's verdict.
          const first = inProgress.get(text);
          if (first !== undefined) {
            totals.copies++;
            (first.twins ??= []).push(e);
            return;
          }
          inProgress.set(text, e);
        }
        pending.push(e);
        if (++awaiting > totals.maxAwaiting) totals.maxAwaiting = awaiting;
        if (awaiting >= PAUSE_AT * maxBatch && !paused) {
          paused = true;
          totals.pauses++;
        }
        // (A socket being closed keeps reading: its close frame must get through.)
        if (paused && !this._stopped) this._pause();
        if (pending.length >= maxBatch) flush();
        else schedule();
      } else {
        this._push({ t: ENTRY_MESSAGE, data });
      }
    }

    // A non-EVENT entry: dispatched now when nothing waits before it, else queued.
    _push(entry) {
      this._queue.push(entry);
      this._drain();
    }

    // Dispatches the queue's head entries up to the first EVENT still without a verdict.
    _drain() {
      if (this._draining) return;
      this._draining = true;
      try {
        const q = this._queue;
        while (this._head < q.length) {
          const e = q[this._head];
          if (e.t === ENTRY_EVENT && e.code === 0) break;
          q[this._head++] = undefined;
          this._deliver(e);
        }
        if (this._head === q.length) {
          q.length = 0;
          this._head = 0;
        } else if (this._head > 1024 && this._head * 2 > q.length) {
          this._queue = q.slice(this._head);
          this._head = 0;
        }
      } finally {
        this._draining = false;
      }
    }

    _deliver(e) {
      const st = this._stats;
      switch (e.t) {
        case ENTRY_EVENT: {
          if (e.code === VERDICT_VALID) {
            if (this._stopped) {
              totals.discarded++;
              return;
            }
            delivered.add(e.key);
            st.delivered++;
            const ms = platform.now() - e.t0;
            if (ms > totals.maxLatencyMs) totals.maxLatencyMs = ms;
            this.dispatchEvent(platform.makeMessage(e.data));
            return;
          }
          if (e.code === VERDICT_INVALID_ID) st.dropped.invalidId++;
          else if (e.code === VERDICT_INVALID_SIG) st.dropped.invalidSig++;
          else if (e.code === VERDICT_MALFORMED) st.dropped.malformed++;
          else totals.unverified++;
          if (e.code === VERDICT_INVALID_ID || e.code === VERDICT_INVALID_SIG) {
            this._forged++;
            if (closeAfterForged > 0 && this._forged >= closeAfterForged && !this._stopped) {
              st.closedForForgery++;
              this._stopped = true;
              this._resume();
              try {
                this._ws.close(4001, `nostr-verify: ${this._forged} forged events`);
              } catch (_) {
                // already closing
              }
            }
          }
          return;
        }
        case ENTRY_MESSAGE:
          if (this._stopped) {
            totals.discarded++;
            return;
          }
          this.dispatchEvent(platform.makeMessage(e.data));
          return;
        case ENTRY_ERROR:
          this.dispatchEvent(makeErrorEvent(e.ev));
          return;
        default:
          this._closeDispatched = true;
          sockets.delete(this);
          this.dispatchEvent(platform.makeClose(e.ev));
      }
    }
  }

  for (const type of ["open", "message", "error", "close"]) {
    Object.defineProperty(TapWebSocket.prototype, "on" + type, {
      configurable: true,
      enumerable: true,
      get() {
        return this._handlers[type] ? this._handlers[type].fn : null;
      },
      set(fn) {
        const old = this._handlers[type];
        if (old) this.removeEventListener(type, old.wrapper);
        this._handlers[type] = null;
        if (typeof fn === "function") {
          const wrapper = (ev) => fn.call(this, ev);
          this._handlers[type] = { fn, wrapper };
          this.addEventListener(type, wrapper);
        }
      },
    });
  }
  for (const [name, value] of [
    ["CONNECTING", CONNECTING],
    ["OPEN", OPEN],
    ["CLOSING", CLOSING],
    ["CLOSED", CLOSED],
  ]) {
    Object.defineProperty(TapWebSocket, name, { value, enumerable: true });
    Object.defineProperty(TapWebSocket.prototype, name, { value, enumerable: true });
  }

  return {
    WebSocket: TapWebSocket,
    ready: engine.ready,
    verifyEvent(event /* , url */) {
      if (event !== null && typeof event === "object") {
        try {
          // The id, and the fingerprint of the sig and of everything the id covers.
          if (delivered.has(deliveredKey(event, seedList))) return true;
        } catch (_) {
          // a field of the wrong type, a getter that throws: not an event the tap delivered
        }
      }
      return fallback ? fallback(event) === true : false;
    },
    stats() {
      const out = {};
      for (const [url, r] of relays) out[url] = { ...r, dropped: { ...r.dropped } };
      return {
        relays: out,
        batches: totals.batches,
        verified: totals.verified,
        parsedInJs: totals.parsedInJs,
        maxBatchSize: totals.maxBatchSize,
        copies: totals.copies,
        maxLatencyMs: totals.maxLatencyMs,
        maxVerdictMs: totals.maxVerdictMs,
        pending: awaiting,
        maxAwaiting: totals.maxAwaiting,
        pauses: totals.pauses,
        discarded: totals.discarded,
        unverified: totals.unverified,
        remembered: delivered.size,
        worker: engine.mode === "worker",
        workerError: engine.error,
        warmUp: engine.warmUp,
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const s of [...sockets]) {
        try {
          s.close(1000, "tap closed");
        } catch (_) {
          // already closing
        }
      }
      engine.release();
    },
  };
}

/**
 * A batching verifier for asynchronous hooks: see tap.d.ts for the contract.
 */
function createBatchVerifier(options) {
  const o = Object.assign({}, options);
  const maxBatch = Math.max(1, positiveInt(o.maxBatch, 1024, "maxBatch"));
  const engine = acquireEngine(o);
  const totals = { batches: 0, verified: 0, maxBatchSize: 0 };
  let pending = [];
  let closed = false;
  const inFlight = new Set();

  function flush() {
    const batch = pending;
    pending = [];
    totals.batches++;
    totals.verified += batch.length;
    if (batch.length > totals.maxBatchSize) totals.maxBatchSize = batch.length;
    const items = new Array(batch.length);
    for (let i = 0; i < batch.length; i++) items[i] = batch[i].event;
    const call = engine.request("events", items).then(
      (reply) => {
        for (let i = 0; i < batch.length; i++) batch[i].resolve(reply.codes[i] === VERDICT_VALID);
      },
      () => {
        for (const p of batch) p.resolve(false);
      },
    );
    inFlight.add(call);
    call.then(() => inFlight.delete(call));
  }
  const schedule = deferred(() => {
    if (pending.length > 0) flush();
  });

  return {
    ready: engine.ready,
    verify(event) {
      if (closed) return Promise.reject(new Error("createBatchVerifier: this verifier is closed"));
      const plain = plainEvent(event);
      if (plain === null) return Promise.resolve(false);
      return new Promise((resolve) => {
        pending.push({ event: plain, resolve });
        if (pending.length >= maxBatch) flush();
        else schedule();
      });
    },
    stats() {
      return { ...totals, pending: pending.length, worker: engine.mode === "worker", workerError: engine.error, warmUp: engine.warmUp };
    },
    async close() {
      if (closed) return;
      closed = true;
      if (pending.length > 0) flush();
      await Promise.all([...inFlight]);
      engine.release();
    },
  };
}
