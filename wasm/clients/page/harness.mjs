// The page's side of wasm/clients/browser.test.mjs, shared by the six library bundles: makes a
// tap over the browser's own WebSocket (verification in its module Web Worker, the default),
// runs one library's fetch from the test's two relays through it, records what the library
// delivered and when, and leaves the outcome in window.__result for the test to read:
//   { lib, state: "done" | "error", error, delivered: [canonical event JSON, in delivery
//     order], late (events delivered after the library's EOSE/completion), done (whether it
//     came), ms, stats: tap.stats() }
// /config.json (served by the test): { relays: [url, url], filter, settleMs, timeoutMs,
// workerUrl }.
import { tapWebSocket } from "../../pkg-web/tap.js";

/** The browser's own WebSocket class, before any library bundle replaces the global one. */
export const NativeWebSocket = globalThis.WebSocket;

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** The event as the test compares it: every field, so that a forged copy with a valid copy's id or signature shows. */
const canonical = (e) => JSON.stringify([e.id, e.pubkey, e.created_at, e.kind, e.tags, e.content, e.sig]);

/**
 * Runs `run({ tap, relays, filter, rec })` for library `lib`: it must fetch `filter` from
 * `relays` through `tap.WebSocket`, call `rec.event(event)` for every event the library
 * delivers to the application and `rec.done()` at its EOSE/completion, and resolve after that.
 */
export async function start(lib, run) {
  const out = { lib, state: "running" };
  window.__result = out;
  let tap = null;
  try {
    const cfg = await (await fetch("/config.json")).json();
    // esbuild bundles tap.js but not its worker: the worker is served beside the package's
    // other files (/pkg-web/tap-worker.js), so the bundle is told where.
    tap = tapWebSocket(NativeWebSocket, { workerUrl: new URL(cfg.workerUrl, location.href) });
    await tap.ready;
    const delivered = [];
    let done = false;
    let late = 0;
    const rec = {
      event(e) {
        delivered.push(canonical(e));
        if (done) late++;
      },
      done() {
        done = true;
      },
    };
    const t0 = performance.now();
    let timer;
    const timeout = new Promise((_, fail) => {
      timer = setTimeout(() => fail(new Error(`${lib}: no completion within ${cfg.timeoutMs} ms`)), cfg.timeoutMs);
    });
    try {
      await Promise.race([run({ tap, relays: cfg.relays, filter: cfg.filter, rec }), timeout]);
    } finally {
      clearTimeout(timer);
    }
    const ms = performance.now() - t0;
    // Events that trail the completion would be counted in `late`.
    await sleep(cfg.settleMs);
    const stats = tap.stats();
    await tap.close();
    tap = null;
    Object.assign(out, { delivered, late, done, ms, stats, state: "done" });
  } catch (e) {
    if (tap) await tap.close().catch(() => {});
    Object.assign(out, { state: "error", error: String((e && e.stack) || e) });
  }
}
