// ---- worker-node.js: the tap's worker in node (worker_threads) ----
const { parentPort } = require("node:worker_threads");
const wasm = require("./nostr_verify_wasm.js");
const work = createWork(wasm);
// The engine's ping (tap.ready) is answered once warm; real requests are served meanwhile.
const warm = warmUp(wasm).catch(() => null);
parentPort.on("message", (m) => {
  const [reply, transfer] = handleRequest(work, m);
  if (m.kind === "ping") warm.then((w) => parentPort.postMessage({ ...reply, warmUp: w }, transfer));
  else parentPort.postMessage(reply, transfer);
});
