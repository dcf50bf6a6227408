// One client per library, fetching `filter` from every relay in `urls` the way an application
// would, with either the library's own verification (tap: null) or through the WebSocket tap of
// nostr-verify-wasm with the recipe of wasm/package/tap (tap: the object tapWebSocket returned).
// Shared by node.test.mjs and the Chromium tests (bundled with esbuild; nothing node-only here).
//
// Every function takes { urls, filter, WebSocket, tap = null, settleMs = 150, timeoutMs = 30000 }
//   WebSocket  the socket class to use without the tap (node 20: the `ws` package; browsers:
//              globalThis.WebSocket); with the tap, tap.WebSocket is used instead
// and resolves to { before, after, ms }: the events the library handed to the application before
// its EOSE/completion signal, those it handed over in the `settleMs` after it, and the time from
// the start to that signal. It rejects when the library gives no completion within timeoutMs.
import { SimplePool, useWebSocketImplementation } from "nostr-tools/pool";
import NDK from "@nostr-dev-kit/ndk";
import { createRxBackwardReq, createRxNostr, uniq } from "rx-nostr";
import { verifier as rxCryptoVerifier } from "@rx-nostr/crypto";
import { NostrFetcher } from "nostr-fetch";
import { EventStore, mapEventsToStore } from "applesauce-core";
import { RelayPool } from "applesauce-relay";
import { Pool, Socket, SocketEvent, SocketStatus, defaultSocketPolicies, request as welshmanRequest } from "@welshman/net";

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** Collects events, split at the completion signal. */
function collector(timeoutMs, what) {
  const before = [];
  const after = [];
  const t0 = performance.now();
  let ms = -1;
  let resolve;
  let reject;
  const done = new Promise((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  const timer = setTimeout(() => reject(new Error(`${what}: no completion within ${timeoutMs} ms (${before.length} events so far)`)), timeoutMs);
  return {
    push: (e) => (ms < 0 ? before : after).push(e),
    complete: () => {
      if (ms >= 0) return;
      ms = performance.now() - t0;
      clearTimeout(timer);
      resolve();
    },
    fail: (e) => {
      clearTimeout(timer);
      reject(e);
    },
    done,
    result: () => ({ before, after, ms }),
  };
}

/**
 * nostr-tools SimplePool. Recipe: `websocketImplementation: tap.WebSocket` (or, with `global`,
 * `useWebSocketImplementation(tap.WebSocket)` before the pool is made) and
 * `verifyEvent: tap.verifyEvent` (synchronous: the tap verified the event already).
 */
export async function nostrTools({ urls, filter, WebSocket, tap = null, global = false, settleMs = 150, timeoutMs = 30000 }) {
  const ws = tap ? tap.WebSocket : WebSocket;
  if (global) useWebSocketImplementation(ws);
  const pool = new SimplePool({ ...(global ? {} : { websocketImplementation: ws }), ...(tap ? { verifyEvent: tap.verifyEvent } : {}) });
  if (global) useWebSocketImplementation(undefined);
  const c = collector(timeoutMs, "nostr-tools");
  const sub = pool.subscribeMany(urls, filter, {
    onevent: c.push,
    oneose: c.complete,
    // Not the default 4.4 s EOSE timeout: on a loaded machine (load ~11 on 2 cores, the
    // test-profile wasm) the tap's worker latency reached 3.1-3.6 s for 3,300 events, and
    // stock verification is slower still; an EOSE timeout would count the last events as late
    // (the tests check deliveries, not speed: wasm/bench-tap.mjs measures that).
    maxWait: timeoutMs,
  });
  try {
    await c.done;
    await sleep(settleMs);
  } finally {
    sub.close();
    pool.destroy();
  }
  return c.result();
}

/**
 * NDK. It opens `new WebSocket(url)` on the global only, so the recipe sets
 * `globalThis.WebSocket = tap.WebSocket`; its own check is replaced by
 * `signatureVerificationFunction: async (e) => tap.verifyEvent(e)` (NDK does not await it, but
 * the tap dropped forged events before NDK saw them). Its result also has `invalidSig`, the
 * number of "event:invalid-sig" reports.
 */
export async function ndk({ urls, filter, WebSocket, tap = null, settleMs = 150, timeoutMs = 30000 }) {
  const had = Object.hasOwn(globalThis, "WebSocket");
  const saved = globalThis.WebSocket;
  globalThis.WebSocket = tap ? tap.WebSocket : WebSocket;
  const client = new NDK({
    explicitRelayUrls: urls,
    enableOutboxModel: false,
    ...(tap ? { signatureVerificationFunction: async (e) => tap.verifyEvent(e) } : {}),
  });
  const c = collector(timeoutMs, "NDK");
  // Verdicts of false reach the application here (after the event itself, when asynchronous).
  let invalidSig = 0;
  client.on("event:invalid-sig", () => invalidSig++);
  let sub;
  try {
    await client.connect(5000);
    sub = client.subscribe(filter, { closeOnEose: false, groupable: false }, {
      onEvent: (e) => c.push(e.rawEvent()),
      onEose: c.complete,
    });
    await c.done;
    await sleep(settleMs);
  } finally {
    sub?.stop();
    for (const relay of client.pool.relays.values()) relay.disconnect();
    if (had) globalThis.WebSocket = saved;
    else delete globalThis.WebSocket;
  }
  return { ...c.result(), invalidSig };
}

/**
 * rx-nostr, a backward request through `uniq()`. Recipe: `websocketCtor: tap.WebSocket` and a
 * verifier that trusts the tap, `verifier: async (e) => tap.verifyEvent(e)`. `verifier`
 * overrides the verifier (e.g. a batch verifier's `verify`) whatever `tap` is.
 */
export async function rxNostr({ urls, filter, WebSocket, tap = null, verifier = null, settleMs = 150, timeoutMs = 30000 }) {
  const rx = createRxNostr({
    websocketCtor: tap ? tap.WebSocket : WebSocket,
    verifier: verifier ?? (tap ? async (e) => tap.verifyEvent(e) : rxCryptoVerifier),
  });
  rx.setDefaultRelays(urls);
  const c = collector(timeoutMs, "rx-nostr");
  const req = createRxBackwardReq();
  const sub = rx
    .use(req)
    .pipe(uniq())
    .subscribe({ next: (p) => c.push(p.event), complete: c.complete, error: c.fail });
  req.emit(filter);
  req.over();
  try {
    await c.done;
    await sleep(settleMs);
  } finally {
    sub.unsubscribe();
    rx.dispose();
  }
  return c.result();
}

/**
 * nostr-fetch, allEventsIterator. Recipe: `webSocketConstructor: tap.WebSocket` and the
 * synchronous `eventVerifier: tap.verifyEvent` (an async verifier lets an EOSE overtake pending
 * verdicts there).
 */
export async function nostrFetch({ urls, filter, WebSocket, tap = null, settleMs = 150, timeoutMs = 30000 }) {
  const fetcher = NostrFetcher.init({ webSocketConstructor: tap ? tap.WebSocket : WebSocket, minLogLevel: "none" });
  const c = collector(timeoutMs, "nostr-fetch");
  try {
    const it = fetcher.allEventsIterator(urls, filter, {}, tap ? { eventVerifier: tap.verifyEvent } : {});
    (async () => {
      for await (const e of it) c.push(e);
      c.complete();
    })().catch(c.fail);
    await c.done;
    await sleep(settleMs);
  } finally {
    fetcher.shutdown();
  }
  return c.result();
}

/**
 * applesauce: RelayPool.request piped into an EventStore (mapEventsToStore), the events being
 * what the store accepted. Recipe: `new RelayPool({ WebSocket: tap.WebSocket })` and
 * `eventStore.verifyEvent = tap.verifyEvent`. The store keeps old versions of replaceable events
 * and expired ones, so that it accepts every valid event (those rules are not verification).
 * Its result also has `store`, the EventStore.
 */
export async function applesauce({ urls, filter, WebSocket, tap = null, settleMs = 150, timeoutMs = 30000 }) {
  const store = new EventStore({ keepOldVersions: true, keepExpired: true });
  if (tap) store.verifyEvent = tap.verifyEvent;
  const pool = new RelayPool({ WebSocket: tap ? tap.WebSocket : WebSocket });
  const c = collector(timeoutMs, "applesauce");
  const sub = pool
    .request(urls, filter)
    .pipe(mapEventsToStore(store))
    .subscribe({ next: c.push, complete: c.complete, error: c.fail });
  try {
    await c.done;
    await sleep(settleMs);
  } finally {
    sub.unsubscribe();
    pool.close();
  }
  return { ...c.result(), store };
}

/**
 * Welshman's Socket.open with another WebSocket class: @welshman/net opens `new WebSocket(url)`
 * from isomorphic-ws and has no option for the class, so the recipe's makeSocket replaces `open`
 * on each Socket with this copy of it (@welshman/net 0.8.15, src/socket.ts).
 */
function openWith(socket, WebSocketImpl) {
  return () => {
    if (socket._ws) throw new Error("Attempted to open a websocket that has not been closed");
    try {
      socket._ws = new WebSocketImpl(socket.url);
      socket.emit(SocketEvent.Status, SocketStatus.Opening, socket.url);
      socket._ws.onopen = () => {
        socket.emit(SocketEvent.Status, SocketStatus.Open, socket.url);
        socket._sendQueue.start();
      };
      socket._ws.onerror = () => {
        socket._ws = undefined;
        socket._sendQueue.stop();
        socket.emit(SocketEvent.Status, SocketStatus.Error, socket.url);
      };
      socket._ws.onclose = () => {
        socket._ws = undefined;
        socket._sendQueue.stop();
        if (socket.status !== SocketStatus.Error) socket.emit(SocketEvent.Status, SocketStatus.Closed, socket.url);
      };
      socket._ws.onmessage = (event) => {
        try {
          const message = JSON.parse(event.data);
          if (Array.isArray(message)) {
            socket._recvQueue.push(message);
            socket.emit(SocketEvent.Receiving, message, socket.url);
          } else {
            socket.emit(SocketEvent.Error, "Invalid message received", socket.url);
          }
        } catch {
          socket.emit(SocketEvent.Error, "Invalid message received", socket.url);
        }
      };
    } catch {
      socket.emit(SocketEvent.Status, SocketStatus.Error, socket.url);
    }
  };
}

/** A welshman Socket on the class `WebSocketImpl` (see openWith). */
export function welshmanSocket(url, WebSocketImpl) {
  const socket = new Socket(url, defaultSocketPolicies);
  socket.open = openWith(socket, WebSocketImpl);
  return socket;
}

/**
 * @welshman/net request() with autoClose. Recipe: `new Pool({ makeSocket: (url) =>
 * welshmanSocket(url, tap.WebSocket) })` as the request's context pool and
 * `isEventValid: (e) => tap.verifyEvent(e)`. Welshman hands received messages over in batches
 * of Socket.batchSize (20) every 100 ms; `batchSize` raises it for the test's large fetches.
 */
export async function welshman({ urls, filter, WebSocket, tap = null, settleMs = 150, timeoutMs = 30000, batchSize = 1000 }) {
  Socket.batchSize = batchSize;
  // Without the tap, welshman's own Socket (isomorphic-ws: `ws` in node, the global in browsers).
  const pool = tap ? new Pool({ makeSocket: (url) => welshmanSocket(url, tap.WebSocket) }) : new Pool();
  const c = collector(timeoutMs, "welshman");
  try {
    welshmanRequest({
      relays: urls,
      filters: [filter],
      autoClose: true,
      context: { pool },
      ...(tap ? { isEventValid: (e) => tap.verifyEvent(e) } : {}),
      onEvent: (e) => c.push(e),
    }).then(c.complete, c.fail);
    await c.done;
    await sleep(settleMs);
  } finally {
    pool.clear();
  }
  return c.result();
}

/** The six libraries, by name. */
export const libraries = { "nostr-tools": nostrTools, ndk, "rx-nostr": rxNostr, "nostr-fetch": nostrFetch, applesauce, welshman };
