// wasm/pkg-web in headless Chromium: wasm/example/ verifies events in a Web Worker; its
// verdicts must be nostr-tools' (computed here, in node). Drives Debian's chromium through
// chromedriver's WebDriver endpoint and serves wasm/ from 127.0.0.1 (wasm/bench/chromium.mjs).
// Run by wasm/test/run.sh.
import { test } from "node:test";
import assert from "node:assert/strict";
import { withChromium, sleep } from "../bench/chromium.mjs";
import { cases, expected, randomBatch } from "./events.mjs";

const root = new URL("../", import.meta.url).pathname; // wasm/

test("the example page verifies events in a Web Worker with nostr-tools' verdicts", { timeout: 180_000 }, async () => {
  const events = [
    ...cases().filter(([, , jsonSafe]) => jsonSafe).map(([, make]) => make()),
    ...randomBatch(256, 8, 20, 42),
  ];
  const want = events.map((e) => expected(() => JSON.parse(JSON.stringify(e)))).join("");
  assert.ok(want.includes("0") && want.includes("1"));
  // All valid: every batch equation holds, whatever the weights.
  const clean = randomBatch(256, 8, 0, 43);
  await withChromium(root, async (browser) => {
    const run = async (path) => {
      await browser.open(`example/index.html?events=${path}`);
      let out;
      for (let i = 0; i < 600; i++) {
        out = await browser.exec("return Object.assign({}, document.body.dataset);");
        if (out.state) break;
        await sleep(200);
      }
      assert.equal(out.state, "done", `page state ${out.state}: ${out.error}`);
      return out;
    };
    const out = await run("/events.json");
    assert.equal(out.verdicts, want, "Verifier.verifyEvents in the worker");
    assert.equal(out.again, want, "second batch, warm key cache");
    assert.equal(out.single, want, "verifyEvent in the worker");
    // (No count of equations that held here: with about one invalid signature in 30, the
    // random weights' sample finds two in about 1.5 % of verifiers, and narrowing then checks
    // every signature one at a time, correctly, with no equation held: 3 in 200 in node.)
    assert.ok(JSON.parse(out.stats).keyCacheHits > 0, out.stats);
    // The batch path ran in the worker: both clean batches held as equations.
    const ok = await run("/clean.json");
    assert.equal(ok.verdicts, "1".repeat(clean.length));
    assert.equal(ok.again, ok.verdicts);
    const stats = JSON.parse(ok.stats);
    assert.ok(stats.batchesHeld >= 2 && stats.keyCacheHits > 0 && stats.singleChecked === 0, ok.stats);
  }, { "/events.json": JSON.stringify(events), "/clean.json": JSON.stringify(clean) });
});
