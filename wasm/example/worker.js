// The worker: loads nostr-verify-wasm-web once and verifies each batch it is sent with one
// Verifier (its key cache lasts across batches); the main thread never blocks on it.
import init, { Verifier, verifyEvent } from "../pkg-web/nostr_verify_wasm.js";

const ready = init();
let verifier = null;

onmessage = async ({ data }) => {
  try {
    await ready;
    verifier ??= new Verifier();
    const t0 = performance.now();
    const verdicts = verifier.verifyEvents(data.events);
    const ms = performance.now() - t0;
    // The one-event function too, so the page can check both give the same verdicts.
    const single = Uint8Array.from(data.events, (e) => (verifyEvent(e) ? 1 : 0));
    postMessage({ id: data.id, verdicts, single, ms, stats: verifier.stats() }, [verdicts.buffer]);
  } catch (e) {
    postMessage({ id: data.id, error: String(e && e.stack || e) });
  }
};
