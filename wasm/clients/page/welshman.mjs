// The welshman client of ../harness.mjs (its recipe with the tap), in the page: see page.mjs.
import { welshman } from "../harness.mjs";
import { start } from "./page.mjs";

start("welshman", welshman);
