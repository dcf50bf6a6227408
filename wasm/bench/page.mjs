// wasm/bench/index.html: wasm/bench/core.mjs on wasm/pkg-web, in the page's main thread.
// Arguments come as ?args=<JSON array> (what wasm/bench.mjs --engine chromium passes); the
// lines printed are in window.benchLines, and document.body.dataset.state ends "done" or "error".
// With ?profile (wasm/bench/profile.mjs --engine chromium) the page instead makes the
// benchmark's 1024 events from 8 authors, warms up, sets the state "ready" and waits for
// window.go(seconds), which calls verifyEvents for that long (window.calls, window.wall) and
// sets the state "done". With ?ab=N (wasm/bench/ab.mjs --engine chromium) it compares the N
// builds copied to wasm/ab-pkgs/0 .. N-1 (compareBuilds) and sets the state "done".
import init, * as nv from "../pkg-web/nostr_verify_wasm.js";
import { initNostrWasm } from "nostr-wasm";
import { compareBuilds, makeEvents, parseOptions, runBench, verifyEventsFor } from "./core.mjs";

window.benchLines = [];
const out = document.getElementById("out");
const log = (l) => {
  window.benchLines.push(l);
  out.textContent += l + "\n";
};
try {
  const params = new URLSearchParams(location.search);
  if (params.has("ab")) {
    const mods = [];
    for (let k = 0; k < Number(params.get("ab")); k++) {
      const m = await import(`../ab-pkgs/${k}/nostr_verify_wasm.js`);
      await m.default();
      mods.push(m);
    }
    compareBuilds(mods, mods.map((_, k) => `build ${k}`), await initNostrWasm(), log);
    document.body.dataset.state = "done";
  } else if (params.has("profile")) {
    await init();
    const events = makeEvents(await initNostrWasm(), 1024, 8, 7);
    verifyEventsFor(nv, events); // warm-up, and the verdicts
    window.go = (seconds) => setTimeout(() => {
      Object.assign(window, verifyEventsFor(nv, events, seconds * 1000));
      document.body.dataset.state = "done";
    }, 0);
    document.body.dataset.state = "ready";
  } else {
    await init();
    const clock = {
      name: `performance.now() wall clock (browsers have no thread CPU clock; crossOriginIsolated ${globalThis.crossOriginIsolated})`,
      now: () => performance.now(),
    };
    await runBench({ nv, clock, log, options: parseOptions(JSON.parse(params.get("args") ?? "[]")), engine: "chromium" });
    document.body.dataset.state = "done";
  }
} catch (e) {
  log("error: " + (e && e.stack ? e.stack : String(e)));
  document.body.dataset.state = "error";
}
