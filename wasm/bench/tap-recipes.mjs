// wasm/bench-tap.mjs's fetches: one per library and verification, the same code in node and
// in headless Chromium (bundled by esbuild from the libraries pinned in wasm/clients, so
// nothing here is resolved at run time; the tap itself is passed in, not bundled, since its
// worker file must stay beside it).
//
// prepare(library, variant, env) -> { fetch(relays, filter, sink), close() }
//   variant: "stock" (the library's default verification; nostr-tools: pure JS),
//            "stock-wasm" (nostr-tools only: nostr-tools/wasm + nostr-wasm), "tap" (the
//            library's recipe with the tap of nostr-verify-wasm);
//   env: { WebSocket (the engine's socket class: ws in node, the browser's own in Chromium),
//          tap (tapWebSocket(env.WebSocket) for "tap", else null) };
//   sink: { event(e) for each event the library hands the application, eose() when the
//           library says the fetch is complete (EOSE of both relays, or its own completion) }.
// fetch() returns once the subscription is made; the caller decides when the run is over (all
// expected events delivered and the library's completion seen) and then calls close().
import { SimplePool } from "nostr-tools/pool";
import { setNostrWasm, verifyEvent as wasmVerifyEvent } from "nostr-tools/wasm";
import { initNostrWasm } from "nostr-wasm";
import NDK from "@nostr-dev-kit/ndk";
import { createRxBackwardReq, createRxNostr, uniq } from "rx-nostr";
import { verifier as rxVerifier } from "@rx-nostr/crypto";
import { NostrFetcher } from "nostr-fetch";
import { EventStore, mapEventsToStore } from "applesauce-core";
import { RelayPool } from "applesauce-relay";
export { makeChecker, runFetch, tapSummary } from "./tap-run.mjs";
import { Pool, Socket, request as welshmanRequest } from "@welshman/net";
// welshman's Socket on another WebSocket class: the recipe wasm/clients tests.
import { welshmanSocket } from "../clients/harness.mjs";

/** The libraries and their variants, in the order the tables show them. */
export const LIBRARIES = {
  "nostr-tools": ["stock", "stock-wasm", "tap"],
  ndk: ["stock", "tap"],
  "rx-nostr": ["stock", "tap"],
  "nostr-fetch": ["stock", "tap"],
  applesauce: ["stock", "tap"],
  welshman: ["stock", "tap"],
};

/** What each variant verifies with, for the tables. */
export const VARIANT_NOTES = {
  "nostr-tools": { stock: "nostr-tools/pure verifyEvent (noble, pure JS)", "stock-wasm": "nostr-tools/wasm + nostr-wasm", tap: "tap + tap.verifyEvent" },
  ndk: { stock: "NDK's verifySignature (noble schnorr, sync)", tap: "tap (globalThis.WebSocket) + signatureVerificationFunction from tap.verifyEvent" },
  "rx-nostr": { stock: "@rx-nostr/crypto verifier", tap: "tap (websocketCtor) + verifier from tap.verifyEvent" },
  "nostr-fetch": { stock: "default eventVerifier (verifyEventSig)", tap: "tap (webSocketConstructor) + eventVerifier tap.verifyEvent" },
  applesauce: { stock: "EventStore default verifyEvent (nostr-tools/pure)", tap: "tap (RelayPool WebSocket) + EventStore verifyEvent tap.verifyEvent" },
  welshman: { stock: "netContext.isEventValid (@welshman/util: nostr-wasm once loaded)", tap: "tap (Pool makeSocket) + isEventValid tap.verifyEvent" },
};

let nostrWasmReady = null;

/** Sets up `library` with `variant`; everything slow (wasm compiles) happens here, untimed. */
export async function prepare(library, variant, env) {
  const variants = LIBRARIES[library];
  if (!variants || !variants.includes(variant)) throw new Error(`unknown library/variant ${library}/${variant}`);
  const tap = variant === "tap" ? env.tap : null;
  if (variant === "tap" && !tap) throw new Error("the tap variant needs env.tap");
  if (variant === "stock-wasm" || (library === "welshman" && variant === "stock")) {
    // nostr-tools' documented setup; welshman's @welshman/util does the same by itself at
    // import and switches to it once loaded: awaited here so that it has.
    nostrWasmReady ??= initNostrWasm().then((nw) => setNostrWasm(nw));
    await nostrWasmReady;
  }
  return RECIPES[library](variant, env, tap);
}

const RECIPES = {
  "nostr-tools"(variant, env, tap) {
    const opts = { websocketImplementation: tap ? tap.WebSocket : env.WebSocket };
    if (variant === "stock-wasm") opts.verifyEvent = wasmVerifyEvent;
    if (tap) opts.verifyEvent = tap.verifyEvent;
    const pool = new SimplePool(opts);
    let sub = null;
    let urls = [];
    return {
      fetch(relays, filter, sink) {
        urls = relays;
        sub = pool.subscribeMany(relays, filter, { onevent: (e) => sink.event(e), oneose: () => sink.eose() });
      },
      close() {
        sub?.close();
        pool.close(urls);
      },
    };
  },

  ndk(variant, env, tap) {
    // NDK opens sockets with the global WebSocket only.
    globalThis.WebSocket = tap ? tap.WebSocket : env.WebSocket;
    let ndk = null;
    let sub = null;
    return {
      async fetch(relays, filter, sink) {
        const opts = { explicitRelayUrls: relays, enableOutboxModel: false, autoConnectUserRelays: false };
        // The tap has verified and dropped the forged ones already: NDK's asynchronous hook only
        // confirms (its events are emitted before the verdict anyway).
        if (tap) opts.signatureVerificationFunction = async (e) => tap.verifyEvent(e);
        ndk = new NDK(opts);
        await ndk.connect(5000);
        sub = ndk.subscribe(filter, {
          closeOnEose: false,
          groupable: false,
          cacheUsage: "ONLY_RELAY",
          onEvent: (e) => sink.event(e.rawEvent ? e.rawEvent() : e),
          onEose: () => sink.eose(),
        });
      },
      close() {
        sub?.stop();
        for (const r of ndk?.pool?.relays?.values() ?? []) r.disconnect();
      },
    };
  },

  "rx-nostr"(variant, env, tap) {
    const rx = createRxNostr({
      websocketCtor: tap ? tap.WebSocket : env.WebSocket,
      verifier: tap ? async (e) => tap.verifyEvent(e) : rxVerifier,
      skipFetchNip11: true,
      eoseTimeout: 600_000,
    });
    let sub = null;
    return {
      fetch(relays, filter, sink) {
        rx.setDefaultRelays(relays);
        const req = createRxBackwardReq();
        sub = rx.use(req).pipe(uniq()).subscribe({ next: (p) => sink.event(p.event), complete: () => sink.eose() });
        req.emit(filter);
        req.over();
      },
      close() {
        sub?.unsubscribe();
        rx.dispose();
      },
    };
  },

  "nostr-fetch"(variant, env, tap) {
    const fetcher = NostrFetcher.init({ webSocketConstructor: tap ? tap.WebSocket : env.WebSocket, minLogLevel: "none" });
    const opts = tap ? { eventVerifier: tap.verifyEvent } : {};
    return {
      fetch(relays, filter, sink) {
        (async () => {
          for await (const e of fetcher.allEventsIterator(relays, filter, {}, opts)) sink.event(e);
          sink.eose();
        })().catch((e) => sink.error(e));
      },
      close() {
        fetcher.shutdown();
      },
    };
  },

  applesauce(variant, env, tap) {
    // As wasm/clients' recipe: RelayPool.request piped into an EventStore (mapEventsToStore),
    // whose add() verifies (its verifyEvent: nostr-tools/pure's by default); the events are
    // what the store took. Old versions and expired events kept (not verification).
    const store = new EventStore({ keepOldVersions: true, keepExpired: true });
    if (tap) store.verifyEvent = tap.verifyEvent;
    const pool = new RelayPool({ WebSocket: tap ? tap.WebSocket : env.WebSocket });
    let sub = null;
    return {
      fetch(relays, filter, sink) {
        sub = pool
          .request(relays, filter)
          .pipe(mapEventsToStore(store))
          .subscribe({ next: (e) => sink.event(e), complete: () => sink.eose(), error: (e) => sink.error(e) });
      },
      close() {
        sub?.unsubscribe();
        pool.close();
      },
    };
  },

  welshman(variant, env, tap) {
    // As wasm/clients' recipe: @welshman/net opens its sockets with isomorphic-ws' class and
    // takes no other, so the Pool's makeSocket gives Sockets whose open() is a copy of
    // Socket.open (0.8.15) on the tap's class. Without the tap, welshman's own Socket
    // (isomorphic-ws: ws in node, the browser's in Chromium).
    const pool = tap ? new Pool({ makeSocket: (url) => welshmanSocket(url, tap.WebSocket) }) : new Pool();
    const ctrl = new AbortController();
    return {
      fetch(relays, filter, sink) {
        welshmanRequest({
          relays,
          filters: [filter],
          autoClose: true,
          signal: ctrl.signal,
          context: { pool },
          ...(tap ? { isEventValid: (e) => tap.verifyEvent(e) } : {}),
          onEvent: (e) => sink.event(e),
        }).then(() => sink.eose(), (e) => sink.error(e));
      },
      close() {
        ctrl.abort();
        pool.clear();
      },
    };
  },
};

