// Type-checked (tsc --noEmit, wasm/test/run.sh) against the generated .d.ts of both packages:
// the API is usable as documented, and misuse is a type error.
import * as node from "../pkg-node/nostr_verify_wasm.js";
import init, * as web from "../pkg-web/nostr_verify_wasm.js";
// The packages' entry points: the module's API and the tap's.
import * as nodeIndex from "../pkg-node/index.js";
import webInit, { tapWebSocket, createBatchVerifier, type Tap, type TapStats, type TapWarmUp } from "../pkg-web/index.js";

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

const codes: Uint8Array = new node.Verifier(undefined, 65536).verifyEventsDetailed([event]);

async function tapped(): Promise<number> {
  await webInit();
  const tap: Tap = tapWebSocket(WebSocket, { maxBatch: 256, closeAfterForged: 3 });
  const ws: WebSocket = new tap.WebSocket("ws://127.0.0.1:1");
  ws.onmessage = (ev: MessageEvent) => void ev.data;
  const ok: boolean = tap.verifyEvent(event, "ws://127.0.0.1:1");
  const st: TapStats = tap.stats();
  await tap.ready;
  const warm: TapWarmUp | null = tap.stats().warmUp;
  const rounds: number = warm === null ? 0 : warm.rounds + Number(warm.forgedRejected && warm.optimized);
  await tap.close();
  const bv = nodeIndex.createBatchVerifier({ worker: false });
  const good: boolean = await bv.verify(event);
  const bvWarm: TapWarmUp | null = bv.stats().warmUp;
  await bv.close();
  const s2 = nodeIndex.tapWebSocket();
  return (ok && good ? 1 : 0) + st.batches + codes.length + Number(s2.stats().worker) + ws.readyState + rounds + (bvWarm?.ms ?? 0);
}

// @ts-expect-error: the tap's options are typed
tapWebSocket(WebSocket, { maxBatch: "many" });
// @ts-expect-error: verify takes one event and returns a Promise, not a boolean
const notBool: boolean = createBatchVerifier().verify(event);

// @ts-expect-error: verifyEvents takes an array of events
node.verifyEvents(event);
// @ts-expect-error: verifySignatures takes byte arrays
node.verifySignatures("aa", "bb", "cc");

export { verdicts, one, raw, hits, inBrowser, tapped, notBool };
