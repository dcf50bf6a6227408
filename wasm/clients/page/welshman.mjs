// welshman (@welshman/net) through the tap: its sockets are opened with isomorphic-ws's class,
// which the bundle replaces by welshman-ws.mjs (esbuild alias), set to the tap's socket class;
// its synchronous isEventValid asks the tap.
import { Pool, request } from "@welshman/net";
import { useWebSocket } from "isomorphic-ws";
import { start } from "./harness.mjs";

start("welshman", async ({ tap, relays, filter, rec }) => {
  useWebSocket(tap.WebSocket);
  const pool = new Pool();
  try {
    await request({
      relays,
      filters: [filter],
      autoClose: true,
      context: { pool },
      isEventValid: (event, url) => tap.verifyEvent(event, url),
      onEvent: (event) => rec.event(event),
    });
    rec.done();
  } finally {
    pool.clear();
  }
});
