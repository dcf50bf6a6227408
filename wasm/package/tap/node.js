// ---- node.js: the platform of the node package (worker_threads) ----
const platform = {
  defer: (fn) => setImmediate(fn),
  now: () => performance.now(),
  startWorker(url) {
    const { Worker } = require("node:worker_threads");
    const w = new Worker(url ? url : require("node:path").join(__dirname, "tap-worker.js"));
    let failed = null;
    return {
      post: (msg, transfer) => w.postMessage(msg, transfer),
      onMessage: (cb) => w.on("message", cb),
      onError(cb) {
        failed = cb;
        w.on("error", (e) => failed && failed(e));
        // An exit nobody asked for (terminate() clears `failed` first).
        w.on("exit", (code) => failed && failed(new Error("worker exited with code " + code)));
      },
      terminate() {
        failed = null;
        w.terminate();
      },
      ref: () => w.ref(),
      unref: () => w.unref(),
    };
  },
  loadInline: () => Promise.resolve().then(() => require("./nostr_verify_wasm.js")),
  makeMessage: (data) => new MessageEvent("message", { data }),
  makeClose(src) {
    const e = new Event("close");
    Object.defineProperties(e, {
      code: { value: src && typeof src.code === "number" ? src.code : 1006, enumerable: true },
      reason: { value: src && src.reason !== undefined ? String(src.reason) : "", enumerable: true },
      wasClean: { value: !!(src && src.wasClean), enumerable: true },
    });
    return e;
  },
};

module.exports = { tapWebSocket, createBatchVerifier };
