// ---- worker-web.js: the tap's module Web Worker in browsers ----
const ready = tapWasmInit().then(() => createWork(tapWasm));
ready.catch(() => undefined);
self.onmessage = async ({ data }) => {
  let work;
  try {
    work = await ready;
  } catch (e) {
    self.postMessage({ id: data.id, error: "could not load the module: " + String((e && e.message) || e) });
    return;
  }
  const [reply, transfer] = handleRequest(work, data);
  self.postMessage(reply, transfer);
};
