// wasm/pkg-node against nostr-tools' verifyEvent and @noble/curves' schnorr.verify, in node.
// Run by wasm/test/run.sh after wasm/build.sh.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { schnorr } from "@noble/curves/secp256k1.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { cases, expected, frameEvent, frameVerdict, randomBatch, rawFrames, rng, secretKey } from "./events.mjs";

const require = createRequire(import.meta.url);
const pkgDir = new URL("../pkg-node/", import.meta.url).pathname;
const nv = require(pkgDir);

test("verifyEvents, verifyEvent and Verifier agree with nostr-tools on every case", () => {
  const cs = cases();
  const want = cs.map(([, make]) => expected(make));
  assert.ok(want.includes(0) && want.includes(1));
  const got = nv.verifyEvents(cs.map(([, make]) => make()));
  assert.ok(got instanceof Uint8Array);
  const v = new nv.Verifier();
  const got2 = v.verifyEvents(cs.map(([, make]) => make()));
  cs.forEach(([what, make], i) => {
    assert.equal(got[i], want[i], `verifyEvents: ${i} (${what})`);
    assert.equal(got2[i], want[i], `Verifier.verifyEvents: ${i} (${what})`);
    assert.equal(nv.verifyEvent(make()), want[i] === 1, `verifyEvent: ${what}`);
    assert.equal(v.verifyEvent(make()), want[i] === 1, `Verifier.verifyEvent: ${what}`);
  });
  v.free();
});

test("random batches with mutations agree with nostr-tools", () => {
  const v = new nv.Verifier();
  for (const [n, k, every, seed] of [
    [5, 2, 0, 1],
    [64, 8, 0, 2],
    [64, 8, 16, 3],
    [300, 8, 3, 4],
    [300, 300, 50, 5],
  ]) {
    const events = randomBatch(n, k, every, seed);
    const want = events.map((e) => expected(() => ({ ...e })));
    assert.deepEqual([...nv.verifyEvents(events.map((e) => ({ ...e })))], want, `n=${n} k=${k}`);
    assert.deepEqual([...v.verifyEvents(events.map((e) => ({ ...e })))], want, `Verifier n=${n} k=${k}`);
  }
  v.free();
});

/** Verifier.verifyFrames on `texts` joined, as the tap's worker calls it: [codes, keys]. */
function verifyFrames(v, texts, seeds = [7, 0xdeadbeef]) {
  const joined = texts.join("");
  const ends = new Uint32Array(texts.length);
  let at = 0;
  texts.forEach((t, i) => (ends[i] = at += t.length));
  const [codes, keys] = v.verifyFrames(new TextEncoder().encode(joined), ends, seeds[0], seeds[1]);
  return [codes, keys.split("\n")];
}

/** The code verifyEventsDetailed gives the event JSON.parse reads from a frame's text. */
function jsCode(v, text) {
  return v.verifyEventsDetailed([frameEvent(text)])[0];
}

test("verifyFrames decides the frames it reads as JSON.parse does, with its codes, and leaves the rest (0)", () => {
  const v = new nv.Verifier(undefined, 1024);
  const raw = rawFrames();
  const texts = raw.map(([, t]) => t);
  const keyShape = /^[0-9a-f]{64}[0-9a-z]{1,7}\.[0-9a-z]{1,7}$/;
  // One batch of all, and each frame alone: the same codes and keys.
  const batch = verifyFrames(v, texts);
  const alone = texts.map((t) => verifyFrames(v, [t]));
  for (const [codes, keys] of [batch, [alone.map(([c]) => c[0]), alone.map(([, k]) => k[0])]]) {
    raw.forEach(([what, text, rustDecides], i) => {
      const want = jsCode(v, text);
      assert.equal(want === 1, frameVerdict(text) === 1, `the JavaScript path agrees with nostr-tools: ${what}`);
      if (rustDecides) assert.equal(codes[i], want, `decided in Rust as in JavaScript: ${what}`);
      else assert.equal(codes[i], 0, `left to JSON.parse: ${what}`);
      if (codes[i] === 1) {
        assert.match(keys[i], keyShape, what);
        assert.equal(keys[i].slice(0, 64), JSON.parse(text)[2].id);
      } else assert.equal(keys[i], "", what);
    });
  }
  assert.deepEqual(alone.map(([, k]) => k[0]), batch[1], "keys do not depend on the batch");
  // Every case of the package tests, as a relay writes it: what Rust decides, it decides as
  // verifyEventsDetailed does; and it decides every ordinary event.
  const cs = cases().filter(([, , jsonSafe]) => jsonSafe);
  const caseTexts = cs.map(([, make]) => JSON.stringify(["EVENT", "s", make()]));
  const [codes] = verifyFrames(v, caseTexts);
  cs.forEach(([what], i) => {
    // Undecided: a lone surrogate (escaped by JSON.stringify), a number JSON.stringify writes
    // as a float, or not an event of strings and numbers.
    const exotic = /\\ud[89a-f]/.test(caseTexts[i]) || /"(created_at|kind)":(-?\d*\.|\d+e|[^-\d])/.test(caseTexts[i]);
    if (codes[i] !== 0) assert.equal(codes[i], jsCode(v, caseTexts[i]), `case ${i} (${what})`);
    else assert.ok(exotic || jsCode(v, caseTexts[i]) === 2, `undecided: ${what}`);
    if (!exotic && /^valid|^unicode|^escaped|^empty content|^random strings|digit|another|changed/.test(what)) {
      assert.notEqual(codes[i], 0, `decided in Rust: ${what}`);
    }
  });
  // Random batches with mutations, as one batch of frames.
  const events = randomBatch(300, 12, 5, 21);
  const [rc] = verifyFrames(v, events.map((e) => JSON.stringify(["EVENT", "r", e])));
  assert.deepEqual([...rc].map((c) => +(c === 1)), events.map((e) => expected(() => ({ ...e }))));
  v.free();
});

test("verifyFrames: ends that do not delimit the string, bytes that are not UTF-8, nothing: 0s, no exception", () => {
  const v = new nv.Verifier();
  const good = rawFrames()[0][1];
  const bytes = new TextEncoder().encode(good + good);
  const n = good.length;
  for (const [ends, want] of [
    [[n, 2 * n], [1, 1]],
    [[n, 2 * n + 1], [1, 0]],
    [[2 * n, n], [0, 0]],
    [[n - 1, 2 * n], [0, 0]],
    [[], []],
  ]) {
    const [codes, keys] = v.verifyFrames(bytes, Uint32Array.from(ends), 1, 2);
    assert.deepEqual([...codes].map((c) => +(c === 1)), want, JSON.stringify(ends));
    assert.equal(keys.split("\n").length, Math.max(1, ends.length));
  }
  const notUtf8 = Uint8Array.from([...bytes.subarray(0, n), 0xff, ...bytes.subarray(n)]);
  assert.deepEqual([...v.verifyFrames(notUtf8, Uint32Array.from([n, 2 * n + 1]), 1, 2)[0]], [0, 0]);
  v.free();
});

test("verifyEvents throws a TypeError only for a non-array", () => {
  for (const bad of [null, undefined, 3, "[]", {}, new Uint8Array(2)]) {
    assert.throws(() => nv.verifyEvents(bad), (e) => e instanceof TypeError && /^verifyEvents: expected an array/.test(e.message));
  }
  assert.deepEqual([...nv.verifyEvents([])], []);
  assert.equal(nv.verifyEvent(undefined), false);
});

test("verifySignatures agrees with @noble/curves on valid, mutated and invalid-key signatures", () => {
  const r = rng(77);
  const n = 200;
  const pubkeys = new Uint8Array(n * 32);
  const msgs = new Uint8Array(n * 32);
  const sigs = new Uint8Array(n * 64);
  for (let i = 0; i < n; i++) {
    const sk = secretKey(i % 9);
    const msg = sha256(new TextEncoder().encode(`m${i}`));
    pubkeys.set(schnorr.getPublicKey(sk), i * 32);
    msgs.set(msg, i * 32);
    sigs.set(schnorr.sign(msg, sk), i * 64);
    const m = r() % 10;
    if (m === 0) sigs[i * 64 + (r() % 64)] ^= 1 << (r() % 8);
    if (m === 1) msgs[i * 32 + (r() % 32)] ^= 1;
    if (m === 2) pubkeys.fill(0xff, i * 32, i * 32 + 32); // not a field element
    if (m === 3) for (let j = 0; j < 32; j++) pubkeys[i * 32 + j] = r() & 0xff; // half off the curve
  }
  const want = Array.from({ length: n }, (_, i) =>
    schnorr.verify(sigs.subarray(i * 64, i * 64 + 64), msgs.subarray(i * 32, i * 32 + 32), pubkeys.subarray(i * 32, i * 32 + 32)) ? 1 : 0,
  );
  assert.ok(want.includes(0) && want.includes(1));
  assert.deepEqual([...nv.verifySignatures(pubkeys, msgs, sigs)], want);
  const v = new nv.Verifier(64);
  assert.deepEqual([...v.verifySignatures(pubkeys, msgs, sigs)], want);
  assert.deepEqual([...nv.verifySignatures(new Uint8Array(0), new Uint8Array(0), new Uint8Array(0))], []);
  for (const [p, m, s] of [[32, 32, 63], [33, 32, 64], [64, 32, 128], [32, 64, 64]]) {
    assert.throws(
      () => nv.verifySignatures(new Uint8Array(p), new Uint8Array(m), new Uint8Array(s)),
      (e) => e instanceof Error && e.message.includes(`got ${p}, ${m} and ${s} bytes`),
    );
  }
});

test("a Verifier keeps its key cache across calls", () => {
  const v = new nv.Verifier();
  const a = randomBatch(64, 8, 0, 9);
  const b = randomBatch(64, 8, 0, 10); // the same 8 authors
  assert.deepEqual([...v.verifyEvents(a)], Array(64).fill(1));
  const s1 = v.stats();
  assert.ok(s1.keyCacheMisses >= 8 && s1.batchesHeld >= 1, JSON.stringify(s1));
  assert.deepEqual([...v.verifyEvents(b)], Array(64).fill(1));
  const s2 = v.stats();
  assert.equal(s2.keyCacheMisses, s1.keyCacheMisses, "cached keys missed on the second call");
  assert.ok(s2.keyCacheHits > s1.keyCacheHits);
  v.free();
});

test("pkg-node and pkg-web are npm packages with types and a README", () => {
  for (const flavor of ["node", "web"]) {
    const dir = new URL(`../pkg-${flavor}/`, import.meta.url).pathname;
    const pkg = JSON.parse(readFileSync(dir + "package.json", "utf8"));
    assert.match(pkg.version, /^\d+\.\d+\.\d+/);
    const [packed] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: dir, encoding: "utf8" }));
    const files = packed.files.map((f) => f.path);
    for (const f of ["package.json", "README.md", "LICENSE", pkg.main, pkg.types, "nostr_verify_wasm_bg.wasm",
      "nostr_verify_wasm.d.ts", "tap.js", "tap-worker.js", "tap.d.ts"]) {
      assert.ok(files.includes(f), `${flavor}: ${f} not packed (${files.join(", ")})`);
    }
    assert.ok(files.some((f) => f.startsWith("snippets/")), `${flavor}: JS snippets not packed`);
    // The entry point's types re-export the module's and the tap's.
    const index = readFileSync(dir + pkg.types, "utf8");
    for (const from of ['"./nostr_verify_wasm"', '"./tap"']) {
      assert.ok(index.includes(`export * from ${from};`), `${flavor}: ${pkg.types} does not re-export ${from}`);
    }
    const tapTypes = readFileSync(dir + "tap.d.ts", "utf8");
    for (const decl of ["export function tapWebSocket(", "export function createBatchVerifier(", "export interface TapStats"]) {
      assert.ok(tapTypes.includes(decl), `${flavor}: ${decl} missing from tap.d.ts`);
    }
    const dts = readFileSync(dir + "nostr_verify_wasm.d.ts", "utf8");
    for (const decl of [
      "export function verifySignatures(",
      "export function verifyEvents(events: NostrEvent[]): Uint8Array;",
      "export function verifyEvent(event: NostrEvent): boolean;",
      "export class Verifier",
      "export interface NostrEvent",
    ]) {
      assert.ok(dts.includes(decl), `${flavor}: ${decl} missing from the types`);
    }
  }
});
