// nostr-tools' SimplePool through the tap: the tap's socket class as its WebSocket, the tap's
// synchronous verifyEvent as its hook (the pool would otherwise verify every event again).
import { SimplePool } from "nostr-tools/pool";
import { start } from "./harness.mjs";

start("nostr-tools", ({ tap, relays, filter, rec }) =>
  new Promise((resolve) => {
    const pool = new SimplePool({ websocketImplementation: tap.WebSocket, verifyEvent: tap.verifyEvent });
    const sub = pool.subscribeMany(relays, filter, {
      onevent: (event) => rec.event(event),
      oneose() {
        rec.done();
        sub.close();
        pool.destroy();
        resolve();
      },
    });
  }));
