// Where verifyEvents' time goes, on 1024 events from 8 authors (the benchmark's inputs), in
// node or in headless Chromium: V8's sampling CPU profiler (node:inspector in node; the
// DevTools Protocol through chromedriver in Chromium, on wasm/bench/index.html?profile) over
// repeated calls, each on a new Verifier, then the self time of every function (JavaScript
// and wasm, by the module's name section) and the self time summed by what it does: packing
// the events in JavaScript, SHA-256, the batch's field, scalar and group arithmetic,
// libsecp256k1, glue.
//
//   bash wasm/build.sh && (cd wasm/bench && npm ci)
//   node wasm/bench/profile.mjs [--engine node|chromium] [--seconds S] [--top N]
import { Session } from "node:inspector/promises";
import { createRequire } from "node:module";
import { initNostrWasm } from "nostr-wasm";
import { withChromium } from "./chromium.mjs";
import { makeEvents, verifyEventsFor } from "./core.mjs";

const args = process.argv.slice(2);
const arg = (name, d) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : d;
};
const seconds = Number(arg("--seconds", 6));
const top = Number(arg("--top", 30));
const engine = arg("--engine", "node");
if (!["node", "chromium"].includes(engine)) {
  console.error(`profile.mjs: --engine node|chromium, not ${engine}`);
  process.exit(1);
}

/** The profile of `seconds` of verifyEvents calls in node: `{ profile, calls, wall }`. */
async function inNode() {
  const require = createRequire(import.meta.url);
  const nv = require("../pkg-node/nostr_verify_wasm.js");
  const nw = await initNostrWasm();
  const events = makeEvents(nw, 1024, 8, 7);
  verifyEventsFor(nv, events); // warm-up, and the verdicts
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  const { calls, wall } = verifyEventsFor(nv, events, seconds * 1000);
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  return { profile, calls, wall };
}

/** The same in headless Chromium (wasm/pkg-web, wasm/bench/index.html?profile). */
async function inChromium() {
  const root = new URL("../", import.meta.url).pathname; // wasm/
  return withChromium(root, async (browser) => {
    console.log(`# Chromium ${browser.version} (headless), wasm/pkg-web`);
    await browser.open("bench/index.html?profile");
    const state = await browser.until("return document.body.dataset.state || '';");
    if (state !== "ready") throw new Error("the page failed: " + (await browser.exec("return window.benchLines.at(-1);")));
    await browser.cdp("Profiler.enable");
    await browser.cdp("Profiler.setSamplingInterval", { interval: 100 });
    await browser.cdp("Profiler.start");
    await browser.exec(`window.go(${seconds}); return 0;`);
    await browser.until("return document.body.dataset.state === 'done';");
    const { profile } = await browser.cdp("Profiler.stop");
    const { calls, wall } = await browser.exec("return { calls: window.calls, wall: window.wall };");
    return { profile, calls, wall };
  });
}

const { profile, calls, wall } = engine === "node" ? await inNode() : await inChromium();

// Self time per function, from the samples (timeDeltas in microseconds).
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const n = byId.get(profile.samples[i]);
  const name = n.callFrame.functionName || `(anonymous ${n.callFrame.url.split("/").pop()}:${n.callFrame.lineNumber})`;
  self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const perEvent = (us) => (us / calls / 1024).toFixed(2);
console.log(`verifyEvents on 1024 events from 8 authors: ${calls} calls in ${(wall / 1000).toFixed(1)} s, ` +
  `${((wall * 1000) / calls / 1024).toFixed(1)} us an event (wall clock, profiler on)`);
console.log(`\nself time, top ${top} (us an event, share):`);
const sorted = [...self.entries()].sort((a, b) => b[1] - a[1]);
for (const [name, us] of sorted.slice(0, top)) {
  console.log(`  ${perEvent(us).padStart(7)}  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${name}`);
}

// Grouped by what the code does (first match wins; the names are Rust's, demangled by V8,
// and the JavaScript packer's).
const groups = [
  ["JS: pack events (validate, JSON.stringify, encodeInto)", /^(pack_events|record|validEvent|encodeInto)$/],
  ["SHA-256 (ids, challenges, weights: simd128 lanes)", /sha2.*compress256|Sha256|sha_simd128|backend::sha::/],
  ["field: u128 products (__multi3, wasm32 has no 64x64->128 multiply)", /^__multi3$/],
  ["square roots (key and R lifts: lift_x_many; with the staging where wasm-opt inlined them)", /lift_x|prepare::stage/],
  ["point additions (batch-affine pairs)", /add_word_pairs|add_affine_pairs|add_pairs/],
  ["libsecp256k1 (C: single checks, its SHA-256)", /^rustsecp256k1/],
  ["other field, scalar and group code", /arithmetic::|msm::|scalar|Scalar|Jacobian|WordPoint|invert/],
  ["batch: staging, weights, equation, narrowing", /batch::/],
  ["hex decoding, records, wasm-bindgen glue", /nostr_verify_wasm|wasm_bindgen|__wbg|getUint8ArrayMemory|passArray|getArray|^decode$/],
  ["memory (malloc, memcpy, memset)", /alloc|malloc|dlmalloc|unlink_chunk|memcpy|memset|memmove/],
  ["(garbage collector)", /^\(garbage collector\)$/],
  ["(program, idle)", /^\((program|idle|root)\)$/],
];
const grouped = new Map(groups.map(([g]) => [g, 0]));
grouped.set("other", 0);
const other = [];
for (const [name, us] of sorted) {
  const g = groups.find(([, re]) => re.test(name));
  if (g) grouped.set(g[0], grouped.get(g[0]) + us);
  else {
    grouped.set("other", grouped.get("other") + us);
    other.push([name, us]);
  }
}
console.log("\nself time by what it does (us an event, share):");
for (const [g, us] of grouped) {
  if (us > 0) console.log(`  ${perEvent(us).padStart(7)}  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${g}`);
}
if (other.length) console.log(`  (other: ${other.slice(0, 8).map(([n]) => n).join(", ")}${other.length > 8 ? ", ..." : ""})`);
