// The rx-nostr client of ../harness.mjs (its recipe with the tap), in the page: see page.mjs.
import { rxNostr } from "../harness.mjs";
import { start } from "./page.mjs";

start("rx-nostr", rxNostr);
