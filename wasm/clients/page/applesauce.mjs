// applesauce through the tap: the tap's socket class for its RelayPool; the EventStore's
// synchronous verifyEvent asks the tap. The store keeps old versions of replaceable events
// and expired ones, so that it hands on every valid event the relays serve.
import { EventStore } from "applesauce-core";
import { RelayPool } from "applesauce-relay";
import { start } from "./harness.mjs";

start("applesauce", ({ tap, relays, filter, rec }) =>
  new Promise((resolve, reject) => {
    const store = new EventStore({ verifyEvent: tap.verifyEvent, keepOldVersions: true, keepExpired: true });
    const pool = new RelayPool({ WebSocket: tap.WebSocket });
    pool.request(relays, filter, { eventStore: store }).subscribe({
      next: (event) => rec.event(event),
      complete() {
        rec.done();
        for (const relay of pool.relays.values()) relay.close?.();
        resolve();
      },
      error: reject,
    });
  }));
