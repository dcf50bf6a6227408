// Type-checked (tsc --noEmit, wasm/test/run.sh) against the generated .d.ts of both packages:
// the API is usable as documented, and misuse is a type error.
import * as node from "../pkg-node/nostr_verify_wasm.js";
import init, * as web from "../pkg-web/nostr_verify_wasm.js";

const event: node.NostrEvent = {
  id: "00".repeat(32),
  pubkey: "00".repeat(32),
  created_at: 1,
  kind: 1,
  tags: [["t", "x"]],
  content: "",
  sig: "00".repeat(64),
};

const verdicts: Uint8Array = node.verifyEvents([event]);
const one: boolean = node.verifyEvent(event);
const raw: Uint8Array = node.verifySignatures(new Uint8Array(32), new Uint8Array(32), new Uint8Array(64));
const v = new node.Verifier(4096);
const stats: node.VerifierStats = v.stats();
const hits: number = stats.keyCacheHits;
v.verifyEvents([event]);
v.free();

async function inBrowser(): Promise<boolean> {
  await init();
  const w = new web.Verifier();
  const e: web.NostrEvent = event;
  return w.verifyEvent(e) && web.verifyEvents([e])[0] === 1;
}

// @ts-expect-error: verifyEvents takes an array of events
node.verifyEvents(event);
// @ts-expect-error: verifySignatures takes byte arrays
node.verifySignatures("aa", "bb", "cc");

export { verdicts, one, raw, hits, inBrowser };
