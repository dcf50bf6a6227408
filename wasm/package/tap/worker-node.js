// ---- worker-node.js: the tap's worker in node (worker_threads) ----
const { parentPort } = require("node:worker_threads");
const work = createWork(require("./nostr_verify_wasm.js"));
parentPort.on("message", (m) => {
  const [reply, transfer] = handleRequest(work, m);
  parentPort.postMessage(reply, transfer);
});
