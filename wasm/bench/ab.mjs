// Same-process comparison of builds of the package: times `verifySignatures` and
// `verifyEvents` of each build in turn (alternating, 9 rounds of at least 150 ms each, a new
// Verifier a call, performance.now()), on 1024 signatures or events from 8 keys, 64 from 8
// keys and 1024 distinct, and prints the medians in microseconds per signature or event.
// For experiments on the wasm arithmetic: build, copy the package away, change, build again.
//
//   bash wasm/build.sh && cp -r wasm/pkg-node /tmp/pkgA    # then change something
//   bash wasm/build.sh && cp -r wasm/pkg-node /tmp/pkgB
//   (cd wasm/bench && npm ci) && node wasm/bench/ab.mjs /tmp/pkgA /tmp/pkgB
//
//   node wasm/bench/ab.mjs --engine chromium /tmp/webA /tmp/webB   # copies of wasm/pkg-web
//
// Each argument is a directory holding nostr_verify_wasm.js: a wasm-bindgen --target nodejs
// package in node, a --target web one in Chromium (all builds in one page: the directories
// are copied to wasm/ab-pkgs/, which the page imports, and the page is
// wasm/bench/index.html?ab=N); any number of builds may be compared. Verdicts are not checked
// here (the benchmark, wasm/bench.mjs, and the wasm test suites do that).
import { cpSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { initNostrWasm } from "nostr-wasm";
import { withChromium, sleep } from "./chromium.mjs";
import { compareBuilds } from "./core.mjs";

const args = process.argv.slice(2);
let engine = "node";
if (args[0] === "--engine") {
  engine = args[1];
  args.splice(0, 2);
}
if (args.length === 0 || !["node", "chromium"].includes(engine)) {
  console.error("usage: node wasm/bench/ab.mjs [--engine node|chromium] PKG_DIR [PKG_DIR...]");
  process.exit(2);
}

if (engine === "node") {
  const require = createRequire(import.meta.url);
  const mods = args.map((d) => require(resolve(d, "nostr_verify_wasm.js")));
  compareBuilds(mods, args, await initNostrWasm(), (l) => console.log(l));
} else {
  const root = new URL("../", import.meta.url).pathname; // wasm/
  const copies = resolve(root, "ab-pkgs");
  rmSync(copies, { recursive: true, force: true });
  args.forEach((d, k) => cpSync(resolve(d), resolve(copies, String(k)), { recursive: true }));
  try {
    await withChromium(root, async (browser) => {
      console.log(`# Chromium ${browser.version} (headless)`);
      await browser.open(`bench/index.html?ab=${args.length}`);
      let shown = 0;
      for (;;) {
        const out = await browser.exec("return { state: document.body.dataset.state || '', lines: window.benchLines || [] };");
        for (; shown < out.lines.length; shown++) console.log(out.lines[shown].replace(/build (\d+):/g, (_, k) => args[k] + ":"));
        if (out.state === "error") throw new Error("the page failed");
        if (out.state === "done") break;
        await sleep(250);
      }
    });
  } finally {
    rmSync(copies, { recursive: true, force: true });
  }
}
