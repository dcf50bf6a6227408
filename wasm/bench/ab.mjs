// Same-process comparison of builds of the node package: times `verifySignatures` and
// `verifyEvents` of each build in turn (alternating, 9 rounds of at least 150 ms each, a new
// Verifier a call, performance.now()), on 1024 signatures or events from 8 keys, 64 from 8
// keys and 1024 distinct, and prints the medians in microseconds per signature or event.
// For experiments on the wasm arithmetic: build, copy wasm/pkg-node away, change, build again.
//
//   bash wasm/build.sh && cp -r wasm/pkg-node /tmp/pkgA    # then change something
//   bash wasm/build.sh && cp -r wasm/pkg-node /tmp/pkgB
//   (cd wasm/bench && npm ci) && node wasm/bench/ab.mjs /tmp/pkgA /tmp/pkgB
//
// Each argument is a directory holding nostr_verify_wasm.js (a wasm-bindgen --target nodejs
// package); any number of builds may be compared. Verdicts are not checked here (the
// benchmark, wasm/bench.mjs, and the wasm test suites do that).
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { initNostrWasm } from "nostr-wasm";
import { makeEvents } from "./core.mjs";
const require = createRequire(import.meta.url);
const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  console.error("usage: node wasm/bench/ab.mjs PKG_DIR [PKG_DIR...]");
  process.exit(2);
}
const mods = dirs.map((d) => require(resolve(d, "nostr_verify_wasm.js")));
const nw = await initNostrWasm();
const hex = (s) => Uint8Array.from(s.match(/../g), (h) => parseInt(h, 16));
function flat(ev) {
  const n = ev.length, pk = new Uint8Array(n * 32), m = new Uint8Array(n * 32), sg = new Uint8Array(n * 64);
  ev.forEach((e, i) => { pk.set(hex(e.pubkey), i * 32); m.set(hex(e.id), i * 32); sg.set(hex(e.sig), i * 64); });
  return [pk, m, sg];
}
const cases = [["1024/8", makeEvents(nw, 1024, 8, 3)], ["64/8", makeEvents(nw, 64, 8, 4)], ["1024/d", makeEvents(nw, 1024, 0, 5)]];
for (const [name, ev] of cases) {
  const f = flat(ev);
  const res = mods.map(() => ({ s: [], e: [] }));
  for (let r = 0; r < 9; r++) {
    mods.forEach((nv, k) => {
      let t0 = performance.now(), c = 0;
      while (performance.now() - t0 < 150) { const v = new nv.Verifier(); v.verifySignatures(...f); v.free(); c++; }
      res[k].s.push((performance.now() - t0) / c / ev.length * 1000);
      t0 = performance.now(); c = 0;
      while (performance.now() - t0 < 150) { const v = new nv.Verifier(); v.verifyEvents(ev); v.free(); c++; }
      res[k].e.push((performance.now() - t0) / c / ev.length * 1000);
    });
  }
  const med = (a) => a.sort((x, y) => x - y)[a.length >> 1].toFixed(2);
  console.log(name, res.map((r, k) => `${dirs[k]}: sigs ${med(r.s)} events ${med(r.e)}`).join(" | "));
}
