// The applesauce client of ../harness.mjs (its recipe with the tap), in the page: see page.mjs.
import { applesauce } from "../harness.mjs";
import { start } from "./page.mjs";

start("applesauce", applesauce);
