// wasm/bench/tap.html: one fetch of wasm/bench-tap.mjs --engine chromium in the page's main
// thread. ?spec=<JSON { library, variant, relays, timeoutS }>. The recipes' bundle (made by
// bench-tap.mjs from wasm/bench/tap-recipes.mjs and the libraries of wasm/clients) and the
// events come from the benchmark's server (/bench-tap/recipes.mjs, /bench-tap/corpus.json);
// the tap from the browsers' package that bench-tap.mjs serves as /bench-tap/pkg-web/ (its
// worker: tap-worker.js, found beside tap.js).
// Sets document.body.dataset.state "ready" once everything is loaded (the tap's worker
// included), then window.benchGo() runs the fetch and resolves to the run's result; "error"
// with window.benchError when something failed.
const NativeWebSocket = globalThis.WebSocket;
try {
  const spec = JSON.parse(new URLSearchParams(location.search).get("spec"));
  const recipes = await import("/bench-tap/recipes.mjs");
  const { tapWebSocket } = await import("/bench-tap/pkg-web/tap.js");
  const corpus = await (await fetch("/bench-tap/corpus.json")).json();
  const check = recipes.makeChecker(corpus);
  let tap = null;
  if (spec.variant === "tap") {
    tap = tapWebSocket(NativeWebSocket);
    await tap.ready;
  }
  const runner = await recipes.prepare(spec.library, spec.variant, { WebSocket: NativeWebSocket, tap });
  await new Promise((ok) => setTimeout(ok, 200));
  window.benchGo = async () => {
    const out = await recipes.runFetch({ runner, relays: spec.relays, check, timeoutS: spec.timeoutS, hooks: { start() {}, stop() {} } });
    const stats = tap ? tap.stats() : null;
    try {
      runner.close();
      if (tap) await tap.close();
    } catch {
      // closing is not measured
    }
    return { library: spec.library, variant: spec.variant, ...out, tap: recipes.tapSummary(stats) };
  };
  document.body.dataset.state = "ready";
} catch (e) {
  window.benchError = String((e && e.stack) || e);
  document.getElementById("out").textContent = window.benchError;
  document.body.dataset.state = "error";
}
