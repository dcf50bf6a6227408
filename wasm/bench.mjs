#!/usr/bin/env node
// Benchmark of nostr-verify-wasm against libsecp256k1 one at a time in the same wasm module,
// @noble/curves, nostr-wasm and nostr-tools, in node and in headless Chromium (the benchmark
// itself is wasm/bench/core.mjs; see there for what is measured and how verdicts are checked).
//
//   bash wasm/build.sh && (cd wasm/bench && npm ci)
//   node wasm/bench.mjs                         # node (wasm/pkg-node)
//   node wasm/bench.mjs --engine chromium       # headless Chromium (wasm/pkg-web, a page on 127.0.0.1)
//   node wasm/bench.mjs --engine both           # both, one after the other, in one run
//
// Options: --repeats N (7) --min-ms M (200, the least a sample lasts) --peers LIST (the
// peers to run, of libsecp,noble,nostr-wasm,nostr-tools, or none; all by default)
// --sizes 64,1024 --peer-sample N (the slow one-at-a-time JavaScript peers, @noble/curves and
// nostr-tools, on the first N of each input only: their cost per signature does not depend on
// the batch; for short CI runs) --clock auto|wall|process (node only; auto: the thread's CPU
// time where node has process.threadCpuUsage (23.9+), performance.now() otherwise; process:
// process.cpuUsage, steadier than the wall clock on a loaded machine).
// Chromium: /usr/bin/chromium driven by /usr/bin/chromedriver (WebDriver), flags as .ci/wasm.sh's
// (wasm/bench/chromium.mjs).
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { sleep, withChromium } from "./bench/chromium.mjs";

const root = new URL("./", import.meta.url).pathname; // wasm/
const die = (msg) => {
  console.error("wasm/bench.mjs: " + msg);
  process.exit(1);
};

let engine = "node";
let clockChoice = "auto";
const rest = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--engine") engine = argv[++i];
  else if (argv[i] === "--clock") clockChoice = argv[++i];
  else if (argv[i] === "--help" || argv[i] === "-h") {
    console.log(readFileSync(new URL(import.meta.url), "utf8").split("\n").filter((l) => l.startsWith("//")).join("\n"));
    process.exit(0);
  } else rest.push(argv[i]);
}
if (!["node", "chromium", "both"].includes(engine)) die(`--engine node|chromium|both, not ${engine}`);
if (!["auto", "wall", "process"].includes(clockChoice)) die(`--clock auto|wall|process, not ${clockChoice}`);
for (const f of ["pkg-node/package.json", "pkg-web/package.json"]) {
  if (!existsSync(join(root, f))) die(`wasm/${f} missing: run bash wasm/build.sh first`);
}
if (!existsSync(join(root, "bench/node_modules/nostr-wasm"))) die("wasm/bench/node_modules missing: run (cd wasm/bench && npm ci)");

const { parseOptions, runBench } = await import("./bench/core.mjs");
let options;
try {
  options = parseOptions(rest);
} catch (e) {
  die(e.message);
}

function nodeClock() {
  const c = clockChoice === "auto" ? (typeof process.threadCpuUsage === "function" ? "thread" : "wall") : clockChoice;
  if (c === "thread") {
    return { name: "thread CPU time (process.threadCpuUsage)", now: () => { const u = process.threadCpuUsage(); return (u.user + u.system) / 1000; } };
  }
  if (c === "process") {
    return { name: "process CPU time (process.cpuUsage: this thread and V8's helper threads)", now: () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; } };
  }
  return { name: `performance.now() wall clock (node ${process.version} has no thread CPU clock)`, now: () => performance.now() };
}

async function inNode() {
  const require = createRequire(import.meta.url);
  const nv = require("./pkg-node/nostr_verify_wasm.js");
  console.log(`# node ${process.version}, wasm/pkg-node`);
  await runBench({ nv, clock: nodeClock(), log: (l) => console.log(l), options, engine: "node" });
}

async function inChromium() {
  await withChromium(root, async (browser) => {
    console.log(`# Chromium ${browser.version} (headless), wasm/pkg-web`);
    await browser.open(`bench/index.html?args=${encodeURIComponent(JSON.stringify(rest))}`);
    let shown = 0;
    for (;;) {
      const out = await browser.exec("return { state: document.body.dataset.state || '', lines: window.benchLines || [] };");
      for (; shown < out.lines.length; shown++) console.log(out.lines[shown]);
      if (out.state === "error") throw new Error("the page failed: " + (out.lines.at(-1) ?? ""));
      if (out.state === "done") break;
      await sleep(250);
    }
  });
}

try {
  if (engine !== "chromium") await inNode();
  if (engine === "both") console.log("");
  if (engine !== "node") await inChromium();
} catch (e) {
  die(e.stack ?? String(e));
}
