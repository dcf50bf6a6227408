// The six client libraries in headless Chromium: each library's client of harness.mjs (the
// recipes node.test.mjs runs) bundled by esbuild (page/NAME.mjs) with the browsers' package's
// tap (nostr-verify-wasm-web/tap from ../pkg-web), fetching real events plus forged copies from
// two local relays (relay.mjs, started here in node, on 127.0.0.1) through `tap.WebSocket`,
// with verification in the tap's module Web Worker (the default; nostr-tools also inline; and
// rx-nostr without the tap, its verifier createBatchVerifier's, page/rx-nostr-batch.mjs). One
// Chromium session for all (driven like wasm/bench/chromium.mjs: Debian's chromium through
// chromedriver, wasm/ served from 127.0.0.1); each library gets its own page load and tap.
// CLIENTS_BROWSER_EVENTS sets the scenario's size (default 1,500 corpus lines, as
// node.test.mjs), CLIENTS_BROWSER_LIBS=a,b runs only those libraries.
// Asserted per library, as in node.test.mjs: it delivers exactly the valid events, each once,
// all before its EOSE/completion; no forged event; the forged copies relay B sends first do not
// suppress relay A's valid ones; the tap counts every dropped event against the relay that sent
// it; verification ran in the worker, in batches. Run by run.sh.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, existsSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { withChromium, sleep } from "../bench/chromium.mjs";
import { loadCorpus, missingReason, scenario } from "./corpus.mjs";
import { startRelay } from "./relay.mjs";

const here = fileURLToPath(new URL("./", import.meta.url)); // wasm/clients/
const root = fileURLToPath(new URL("../", import.meta.url)); // wasm/ (served)
const allLibs = ["nostr-tools", "ndk", "rx-nostr", "nostr-fetch", "applesauce", "welshman"];
const libs = process.env.CLIENTS_BROWSER_LIBS ? process.env.CLIENTS_BROWSER_LIBS.split(",") : allLibs;

const canonical = (e) => JSON.stringify([e.id, e.pubkey, e.created_at, e.kind, e.tags, e.content, e.sig]);
const hostOf = (url) => new URL(url).host;

/**
 * Bundles page/NAME.mjs for every library into page/build/ (ES modules for browsers). The page
 * imports the tap by its package name, "nostr-verify-wasm-web/tap", resolved through the
 * package's `exports` in ../pkg-web (a package directory on esbuild's nodePaths).
 */
async function bundle() {
  const outdir = `${here}page/build`;
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const modules = mkdtempSync(join(tmpdir(), "nv-clients-"));
  symlinkSync(`${root}pkg-web`, join(modules, "nostr-verify-wasm-web"), "dir");
  try {
    await build({
      nodePaths: [modules],
      entryPoints: [...libs, "rx-nostr-batch"].map((lib) => `${here}page/${lib}.mjs`),
      outdir,
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      logLevel: "warning",
    });
  } finally {
    rmSync(modules, { recursive: true, force: true });
  }
}

const corpus = loadCorpus();

test("six client libraries through the tap in headless Chromium", { skip: corpus ? false : missingReason(), timeout: 300_000 }, async (t) => {
  for (const f of ["tap.js", "tap-worker.js", "nostr_verify_wasm.js", "nostr_verify_wasm_bg.wasm"]) {
    assert.ok(existsSync(`${root}pkg-web/${f}`), `wasm/pkg-web/${f} missing: run wasm/build.sh first`);
  }
  const count = Number(process.env.CLIENTS_BROWSER_EVENTS || 1500); // as node.test.mjs
  const sc = scenario(corpus, { count });
  const validA = sc.a.items.filter((it) => it.valid).length;
  const validB = sc.b.items.filter((it) => it.valid).length;
  assert.ok(sc.valid.size >= 0.9 * count && sc.b.first.length > count / 20 && sc.b.forged.length > count / 20, "the scenario is smaller than expected");
  assert.ok(sc.invalidReal.a > 0 && sc.invalidReal.b > 0, "each relay serves some of the corpus' invalid events");
  // Relay A answers late, so that B's forged copies of A's events arrive first.
  const relayA = await startRelay({ events: sc.a.items.map((it) => it.json), delayMs: 150 });
  const relayB = await startRelay({ events: sc.b.items.map((it) => it.json), forged: sc.b.forged, first: sc.b.first });
  try {
    const t0 = performance.now();
    await bundle();
    t.diagnostic(`esbuild: the bundles in ${(performance.now() - t0).toFixed(0)} ms`);
    const want = new Set([...sc.valid.values()].map(canonical));
    const wantIds = new Set(sc.valid.keys());
    const forgedFirstIds = new Set(sc.b.first.map((e) => e.id));
    const forgeries = [...sc.b.first, ...sc.b.forged];
    const config = {
      relays: [relayA.url, relayB.url],
      filter: { kinds: [...new Set([...sc.a.items, ...sc.b.items].map((it) => it.event.kind))].sort((x, y) => x - y) },
      settleMs: 150,
      timeoutMs: 60_000,
      workerUrl: "/pkg-web/tap-worker.js",
      wasmUrl: "/pkg-web/nostr_verify_wasm_bg.wasm",
      // Every forgery, those with a valid event's id and sig but other content (corpus.mjs
      // "badId") included.
      forged: forgeries,
    };
    await withChromium(root, async (browser) => {
      t.diagnostic(`Chromium ${browser.version}`);
      // Every library with the default (worker) tap; as in node.test.mjs, nostr-tools also with
      // inline verification, and rx-nostr without the tap, its verifier createBatchVerifier's.
      const modes = libs.map((lib) => [lib, "worker"]);
      if (libs.includes("nostr-tools")) modes.push(["nostr-tools", "inline"]);
      if (libs.includes("rx-nostr")) modes.push(["rx-nostr", "batch"]);
      for (const [lib, mode] of modes) {
        const inline = mode === "inline";
        const name = { worker: lib, inline: `${lib} (inline verification)`, batch: `${lib} without the tap, createBatchVerifier's verify as its verifier` }[mode];
        await t.test(name, async () => {
          const sentA = relayA.stats();
          const sentB = relayB.stats();
          const t1 = performance.now();
          await browser.open(`clients/page/index.html?lib=${mode === "batch" ? `${lib}-batch` : lib}${inline ? "&inline=1" : ""}`);
          let state;
          // The page gives up after config.timeoutMs itself; this bound is for a page that never ran.
          const deadline = performance.now() + config.timeoutMs + 30_000;
          for (;;) {
            state = await browser.exec("return window.__result ? window.__result.state : 'no page';");
            if (state === "done" || state === "error") break;
            assert.ok(performance.now() < deadline, `${lib}: the page is still "${state}"`);
            await sleep(50);
          }
          const r = await browser.exec("return window.__result;");
          assert.equal(r.state, "done", `${lib}: ${r.error}`);
          const { relays: _, ...totals } = r.stats;
          t.diagnostic(`${name}: ${r.delivered.length} events in ${r.ms.toFixed(0)} ms (page ${(performance.now() - t1).toFixed(0)} ms); ${mode === "batch" ? "verifier" : "tap"} ${JSON.stringify(totals)}`);
          assert.deepEqual(r.late, [], `${lib}: events delivered after its EOSE/completion`);
          // Each once.
          const seen = new Set();
          const dups = r.delivered.filter((c) => (seen.has(c) ? true : (seen.add(c), false)));
          assert.equal(dups.length, 0, `${lib}: ${dups.length} events delivered more than once (kinds ${dups.map((c) => JSON.parse(c)[3])})`);
          // No forged event: nothing delivered that is not a valid corpus event, field for field.
          const foreign = r.delivered.filter((c) => !want.has(c));
          const forgedIds = foreign.map((c) => JSON.parse(c)[0]).filter((id) => sc.forgedIds.has(id) || wantIds.has(id));
          assert.equal(foreign.length, 0, `${lib}: ${foreign.length} events that are not valid corpus events (${forgedIds.length} forged copies)`);
          // Every valid event, the forged-first ones included.
          const missing = [...want].filter((c) => !seen.has(c));
          const suppressed = missing.filter((c) => forgedFirstIds.has(JSON.parse(c)[0]));
          assert.equal(missing.length, 0, `${lib}: ${missing.length} valid events missing (${suppressed.length} of them had a forged copy sent first)`);
          assert.equal(r.delivered.length, want.size);
          if (mode === "batch") {
            // Every event (forgeries included) went through the verifier, in batches, in the worker.
            const st = r.stats;
            assert.equal(st.worker, true, `${lib}: the batch verifier did not run in its Web Worker`);
            assert.ok(st.verified >= sc.valid.size && st.maxBatchSize > 1 && st.batches < st.verified, `${lib}: ${JSON.stringify(st)}`);
            assert.equal(st.pending, 0);
            return;
          }
          // The tap's counts, per relay.
          const s = r.stats;
          assert.equal(s.worker, !inline, `${lib}: stats().worker`);
          // The Web Worker warmed up before ready, its forged copy through narrowing; inline none.
          if (inline) assert.equal(s.warmUp, null, `${lib}: stats().warmUp inline`);
          else assert.equal(s.warmUp?.forgedRejected, true, `${lib}: stats().warmUp ${JSON.stringify(s.warmUp)}`);
          assert.ok(s.batches >= 1 && s.maxBatchSize > 1 && s.batches < s.verified, `${lib}: not verified in batches: ${JSON.stringify(s)}`);
          // The libraries' own hook: true for each event the tap delivered, false for forgeries.
          assert.deepEqual(r.verifyEvent, { delivered: r.delivered.length, forged: 0 }, `${lib}: tap.verifyEvent`);
          const per = {};
          for (const [url, st] of Object.entries(s.relays)) per[hostOf(url)] = st;
          const a = per[hostOf(relayA.url)];
          const b = per[hostOf(relayB.url)];
          assert.ok(a && b, `${lib}: the tap saw relays ${Object.keys(s.relays)}`);
          // The tap saw every EVENT frame each relay sent, and each was delivered or dropped.
          const reqs = { a: relayA.stats().reqs - sentA.reqs, b: relayB.stats().reqs - sentB.reqs };
          assert.equal(a.events, relayA.stats().events - sentA.events, `${lib}: relay A's EVENT frames`);
          assert.equal(b.events, relayB.stats().events - sentB.events, `${lib}: relay B's EVENT frames`);
          for (const [which, x] of [["A", a], ["B", b]]) {
            const d = x.dropped;
            assert.equal(x.events, x.delivered + d.invalidId + d.invalidSig + d.malformed, `${lib}: relay ${which}: ${JSON.stringify(x)}`);
            assert.equal(x.closedForForgery, 0, `${lib}: relay ${which} closed for forgery`);
          }
          // Every forged event counted against relay B, which sent it; relay A only sent the
          // corpus' own invalid events (bad ids). With one REQ per relay the counts are exact;
          // nostr-fetch pages through the relays (REQ with until = the oldest event so far), so
          // the events at a page's boundary come twice.
          const wantA = { delivered: validA, dropped: { invalidId: sc.invalidReal.a, invalidSig: 0, malformed: 0 } };
          const wantB = { delivered: validB, dropped: { invalidId: sc.invalidReal.b + sc.forgedBy.badId, invalidSig: sc.forgedBy.badSig, malformed: 0 } };
          const gotA = { delivered: a.delivered, dropped: a.dropped };
          const gotB = { delivered: b.delivered, dropped: b.dropped };
          if (reqs.a === 1 && reqs.b === 1) {
            assert.deepEqual(gotA, wantA, `${lib}: relay A (honest but for the corpus' own invalid events)`);
            assert.deepEqual(gotB, wantB, `${lib}: relay B (the forger)`);
          } else {
            t.diagnostic(`${lib}: ${reqs.a} and ${reqs.b} REQs: relay A ${JSON.stringify(gotA)}, relay B ${JSON.stringify(gotB)}`);
            assert.ok(reqs.a >= 1 && reqs.b >= 1, `${lib}: REQs ${JSON.stringify(reqs)}`);
            for (const [got, want, which] of [[gotA, wantA, "A"], [gotB, wantB, "B"]]) {
              assert.ok(got.delivered >= want.delivered, `${lib}: relay ${which}: ${JSON.stringify(got)}, at least ${JSON.stringify(want)}`);
              for (const k of ["invalidId", "invalidSig", "malformed"]) {
                assert.ok(got.dropped[k] >= want.dropped[k] && (want.dropped[k] > 0 || got.dropped[k] === 0), `${lib}: relay ${which}: ${JSON.stringify(got)}, at least ${JSON.stringify(want)}`);
              }
            }
          }
        });
      }
    }, { "/config.json": JSON.stringify(config) });
  } finally {
    await relayA.close();
    await relayB.close();
  }
});
