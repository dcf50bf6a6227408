// ---- worker-web.js: the tap's module Web Worker in browsers ----
// The module is loaded on the first message (the engine's ping), from its wasmUrl when given,
// else from beside this file.
// The engine's ping (tap.ready) is answered once warm (see warmUp); real requests are served
// meanwhile.
let ready = null;
let warm = null;
self.onmessage = async ({ data }) => {
  ready ??= (data.wasmUrl === undefined ? tapWasmInit() : tapWasmInit({ module_or_path: data.wasmUrl })).then(
    () => createWork(tapWasm),
  );
  let work;
  try {
    work = await ready;
  } catch (e) {
    self.postMessage({ id: data.id, error: "could not load the module: " + String((e && e.message) || e) });
    return;
  }
  warm ??= warmUp(tapWasm).catch(() => null);
  const [reply, transfer] = handleRequest(work, data);
  if (data.kind === "ping") reply.warmUp = await warm;
  self.postMessage(reply, transfer);
};
