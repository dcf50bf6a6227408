// ---- web.js: the platform of the browsers' package (module Web Worker) ----
let tapChannel = null; // made on first use: a listening port keeps node's event loop alive
const tapDeferred = [];
function tapPort() {
  if (tapChannel === null && typeof MessageChannel === "function") {
    tapChannel = new MessageChannel();
    tapChannel.port1.onmessage = () => {
      const fns = tapDeferred.splice(0);
      for (const fn of fns) fn();
    };
    // The browsers' build run by node (tests, server-side rendering): never hold the process.
    if (typeof tapChannel.port1.unref === "function") tapChannel.port1.unref();
  }
  return tapChannel;
}
const platform = {
  // A task after the ones already queued (WebSocket messages included); setTimeout where
  // there is no MessageChannel.
  defer(fn) {
    const channel = tapPort();
    if (!channel) {
      setTimeout(fn, 0);
      return;
    }
    tapDeferred.push(fn);
    if (tapDeferred.length === 1) channel.port2.postMessage(0);
  },
  now: () => performance.now(),
  startWorker(url) {
    const w = new Worker(url ? url : new URL("./tap-worker.js", import.meta.url), { type: "module" });
    let failed = null;
    return {
      post: (msg, transfer) => w.postMessage(msg, transfer),
      onMessage: (cb) => w.addEventListener("message", (e) => cb(e.data)),
      onError(cb) {
        failed = cb;
        w.addEventListener("error", (e) => {
          e.preventDefault();
          if (failed) failed(new Error(e.message || "the tap worker failed to start"));
        });
      },
      terminate() {
        failed = null;
        w.terminate();
      },
      ref() {},
      unref() {},
    };
  },
  async loadInline(wasmUrl) {
    await (wasmUrl === undefined ? tapWasmInit() : tapWasmInit({ module_or_path: wasmUrl }));
    return tapWasm;
  },
  makeMessage: (data) => new MessageEvent("message", { data }),
  makeClose: (src) =>
    new CloseEvent("close", {
      code: src && typeof src.code === "number" ? src.code : 1006,
      reason: src && src.reason !== undefined ? String(src.reason) : "",
      wasClean: !!(src && src.wasClean),
    }),
};

export { tapWebSocket, createBatchVerifier };
