// nostr-fetch through the tap: the tap's socket class as webSocketConstructor; its event
// verifier asks the tap.
import { NostrFetcher } from "nostr-fetch";
import { start } from "./harness.mjs";

start("nostr-fetch", async ({ tap, relays, filter, rec }) => {
  const fetcher = NostrFetcher.init({ webSocketConstructor: tap.WebSocket });
  try {
    const events = fetcher.allEventsIterator(relays, filter, {}, { eventVerifier: (event) => tap.verifyEvent(event) });
    for await (const event of events) rec.event(event);
    rec.done();
  } finally {
    fetcher.shutdown();
  }
});
