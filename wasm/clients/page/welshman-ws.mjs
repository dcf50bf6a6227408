// Stands in for the `isomorphic-ws` package in the welshman bundle (esbuild's `alias`): welshman's
// Socket opens `new WebSocket(url)` with isomorphic-ws's class and takes no other, so the bundle
// gets this class, which opens whatever useWebSocket() was given (the tap's socket class).
let Impl = globalThis.WebSocket;

/** Sets the class that welshman's sockets are opened with. */
export function useWebSocket(ctor) {
  Impl = ctor;
}

export default function WebSocket(url, protocols) {
  return new Impl(url, protocols);
}
