// The nostr-fetch client of ../harness.mjs (its recipe with the tap), in the page: see page.mjs.
import { nostrFetch } from "../harness.mjs";
import { start } from "./page.mjs";

start("nostr-fetch", nostrFetch);
