// rx-nostr through the tap: the tap's socket class as websocketCtor; its required async
// verifier asks the tap; uniq() leaves one copy of an event served by both relays.
import { createRxNostr, createRxBackwardReq, uniq } from "rx-nostr";
import { start } from "./harness.mjs";

start("rx-nostr", ({ tap, relays, filter, rec }) =>
  new Promise((resolve, reject) => {
    const rxNostr = createRxNostr({ websocketCtor: tap.WebSocket, verifier: async (event) => tap.verifyEvent(event) });
    rxNostr.setDefaultRelays(relays);
    const req = createRxBackwardReq();
    rxNostr
      .use(req)
      .pipe(uniq())
      .subscribe({
        next: (packet) => rec.event(packet.event),
        complete() {
          rec.done();
          rxNostr.dispose();
          resolve();
        },
        error: reject,
      });
    req.emit(filter);
    req.over();
  }));
