// The ndk client of ../harness.mjs (its recipe with the tap), in the page: see page.mjs.
import { ndk } from "../harness.mjs";
import { start } from "./page.mjs";

start("ndk", ndk);
