// wasm/bench/index.html: wasm/bench/core.mjs on wasm/pkg-web, in the page's main thread.
// Arguments come as ?args=<JSON array> (what wasm/bench.mjs --engine chromium passes); the
// lines printed are in window.benchLines, and document.body.dataset.state ends "done" or "error".
import init, * as nv from "../pkg-web/nostr_verify_wasm.js";
import { parseOptions, runBench } from "./core.mjs";

window.benchLines = [];
const out = document.getElementById("out");
const log = (l) => {
  window.benchLines.push(l);
  out.textContent += l + "\n";
};
try {
  const args = JSON.parse(new URLSearchParams(location.search).get("args") ?? "[]");
  await init();
  const clock = {
    name: `performance.now() wall clock (browsers have no thread CPU clock; crossOriginIsolated ${globalThis.crossOriginIsolated})`,
    now: () => performance.now(),
  };
  await runBench({ nv, clock, log, options: parseOptions(args), engine: "chromium" });
  document.body.dataset.state = "done";
} catch (e) {
  log("error: " + (e && e.stack ? e.stack : String(e)));
  document.body.dataset.state = "error";
}
