// The rx-nostr client of ../harness.mjs without the tap, its verifier a batch verifier's
// verify (createBatchVerifier, in its Web Worker): see page.mjs.
import { rxNostr } from "../harness.mjs";
import { startWithBatchVerifier } from "./page.mjs";

startWithBatchVerifier("rx-nostr-batch", rxNostr);
