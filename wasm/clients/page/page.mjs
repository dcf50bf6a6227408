// The page's side of wasm/clients/browser.test.mjs, shared by the six library bundles (NAME.mjs):
// makes a tap over the browser's own WebSocket class (verification in the tap's module Web
// Worker, the default), runs one library's client from ../harness.mjs (the same recipes as
// node.test.mjs) against the test's two relays through it, and leaves the outcome in
// window.__result for the test to read:
//   { lib, state: "done" | "error", error, delivered: [canonical JSON of each event the library
//     handed over before its EOSE/completion, in order], late: [the same, after it], ms,
//     verifyEvent: { delivered, forged } (how many of the delivered events and of config.forged
//     tap.verifyEvent accepted), stats: tap.stats() }
// /config.json (served by the test): { relays, filter, settleMs, timeoutMs, workerUrl, wasmUrl,
// forged }. startWithBatchVerifier: no tap; the library's async hook is a batch
// verifier's verify (outcome as above, without verifyEvent; stats: the verifier's).
import { tapWebSocket, createBatchVerifier } from "nostr-verify-wasm-web/tap";

/** The event as the test compares it: every field, so that a forged copy of a valid event shows. */
const canonical = (e) => JSON.stringify([e.id, e.pubkey, e.created_at, e.kind, e.tags, e.content, e.sig]);

/** Runs `client` (a function of ../harness.mjs) through a new tap; see above. */
export async function start(lib, client) {
  const out = { lib, state: "running" };
  window.__result = out;
  let tap = null;
  try {
    const cfg = await (await fetch("/config.json")).json();
    // esbuild bundles tap.js but not its worker (nor `new URL("./tap-worker.js",
    // import.meta.url)`): the worker is served beside the package's other files, and the tap is
    // told where.
    const inline = new URLSearchParams(location.search).get("inline") === "1";
    // Inline mode loads the module on the page: in a bundle its default URL (beside the bundle)
    // is wrong, so the tap is told where it is served.
    tap = tapWebSocket(
      globalThis.WebSocket,
      inline ? { worker: false, wasmUrl: new URL(cfg.wasmUrl, location.href) } : { workerUrl: new URL(cfg.workerUrl, location.href) },
    );
    await tap.ready;
    const r = await client({
      urls: cfg.relays,
      filter: cfg.filter,
      WebSocket: globalThis.WebSocket,
      tap,
      settleMs: cfg.settleMs,
      timeoutMs: cfg.timeoutMs,
    });
    const verifyEvent = {
      delivered: r.before.filter((e) => tap.verifyEvent(e)).length,
      forged: cfg.forged.filter((e) => tap.verifyEvent(e)).length,
    };
    const stats = tap.stats();
    await tap.close();
    tap = null;
    Object.assign(out, { delivered: r.before.map(canonical), late: r.after.map(canonical), ms: r.ms, verifyEvent, stats, state: "done" });
  } catch (e) {
    if (tap) await tap.close().catch(() => {});
    Object.assign(out, { state: "error", error: String((e && e.stack) || e) });
  }
}

/**
 * Runs `client` over the browser's own WebSocket with `verifier` set to the `verify` of a new
 * createBatchVerifier (in its Web Worker); see above.
 */
export async function startWithBatchVerifier(lib, client) {
  const out = { lib, state: "running" };
  window.__result = out;
  let bv = null;
  try {
    const cfg = await (await fetch("/config.json")).json();
    bv = createBatchVerifier({ workerUrl: new URL(cfg.workerUrl, location.href) });
    await bv.ready;
    const r = await client({
      urls: cfg.relays,
      filter: cfg.filter,
      WebSocket: globalThis.WebSocket,
      verifier: bv.verify,
      settleMs: cfg.settleMs,
      timeoutMs: cfg.timeoutMs,
    });
    const stats = bv.stats();
    await bv.close();
    bv = null;
    Object.assign(out, { delivered: r.before.map(canonical), late: r.after.map(canonical), ms: r.ms, stats, state: "done" });
  } catch (e) {
    if (bv) await bv.close().catch(() => {});
    Object.assign(out, { state: "error", error: String((e && e.stack) || e) });
  }
}
