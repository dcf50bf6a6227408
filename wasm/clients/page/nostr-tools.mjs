// The nostr-tools client of ../harness.mjs (its recipe with the tap), in the page: see page.mjs.
import { nostrTools } from "../harness.mjs";
import { start } from "./page.mjs";

start("nostr-tools", nostrTools);
