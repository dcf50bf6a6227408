// wasm/pkg-node against nostr-tools' verifyEvent and @noble/curves' schnorr.verify, in node.
// Run by wasm/test/run.sh after wasm/build.sh.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { schnorr } from "@noble/curves/secp256k1.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { cases, expected, randomBatch, rng, secretKey } from "./events.mjs";

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
