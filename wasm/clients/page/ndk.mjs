// NDK through the tap: NDK opens its sockets with the global WebSocket only, so the global is
// the tap's socket class while it runs; its own check asks the tap (an event NDK is handed was
// verified by the tap already).
import NDK from "@nostr-dev-kit/ndk";
import { start, NativeWebSocket } from "./harness.mjs";

start("ndk", async ({ tap, relays, filter, rec }) => {
  globalThis.WebSocket = tap.WebSocket;
  const ndk = new NDK({
    explicitRelayUrls: relays,
    signatureVerificationFunction: async (event) => tap.verifyEvent(event.rawEvent()),
  });
  try {
    await ndk.connect(5000);
    await new Promise((resolve) => {
      ndk.subscribe(filter, {
        closeOnEose: true,
        groupable: false,
        onEvent: (event) => rec.event(event.rawEvent()),
        onEose() {
          rec.done();
          resolve();
        },
      });
    });
  } finally {
    for (const relay of ndk.pool.relays.values()) relay.disconnect();
    globalThis.WebSocket = NativeWebSocket;
  }
});
