// wasm/pkg-web in headless Chromium: wasm/example/ verifies events in a Web Worker; its
// verdicts must be nostr-tools' (computed here, in node). Drives Debian's chromium through
// chromedriver's WebDriver endpoint and serves wasm/ from 127.0.0.1. Run by wasm/test/run.sh.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { cases, expected, randomBatch } from "./events.mjs";

const root = new URL("../", import.meta.url).pathname; // wasm/
const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };

function serve(routes) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (routes[path]) {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(routes[path]);
    }
    const file = normalize(join(root, path));
    if (!file.startsWith(root) || !statSync(file, { throwIfNoEntry: false })?.isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

async function freePort() {
  const s = await serve({});
  const port = s.address().port;
  await new Promise((ok) => s.close(ok));
  return port;
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

async function wd(base, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`WebDriver ${method} ${path}: ${JSON.stringify(json.value)}`);
  return json.value;
}

test("the example page verifies events in a Web Worker with nostr-tools' verdicts", { timeout: 180_000 }, async () => {
  const events = [
    ...cases().filter(([, , jsonSafe]) => jsonSafe).map(([, make]) => make()),
    ...randomBatch(256, 8, 20, 42),
  ];
  const want = events.map((e) => expected(() => JSON.parse(JSON.stringify(e)))).join("");
  assert.ok(want.includes("0") && want.includes("1"));
  const server = await serve({ "/events.json": JSON.stringify(events) });
  const port = await freePort();
  const driver = spawn("/usr/bin/chromedriver", [`--port=${port}`], { stdio: "ignore" });
  const profile = mkdtempSync(join(tmpdir(), "nv-chromium-"));
  const base = `http://127.0.0.1:${port}`;
  let session = null;
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await wd(base, "GET", "/status")).ready) break;
      } catch (e) {
        if (i > 100) throw new Error("chromedriver did not start: " + e.message);
      }
      await sleep(100);
    }
    session = (
      await wd(base, "POST", "/session", {
        capabilities: {
          alwaysMatch: {
            browserName: "chrome",
            "goog:chromeOptions": {
              binary: "/usr/bin/chromium",
              args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync", `--user-data-dir=${profile}`],
            },
          },
        },
      })
    ).sessionId;
    const url = `http://127.0.0.1:${server.address().port}/example/index.html?events=/events.json`;
    await wd(base, "POST", `/session/${session}/url`, { url });
    let out;
    for (let i = 0; i < 600; i++) {
      out = await wd(base, "POST", `/session/${session}/execute/sync`, {
        script: "return Object.assign({}, document.body.dataset);",
        args: [],
      });
      if (out.state) break;
      await sleep(200);
    }
    assert.equal(out.state, "done", `page state ${out.state}: ${out.error}`);
    assert.equal(out.verdicts, want, "Verifier.verifyEvents in the worker");
    assert.equal(out.again, want, "second batch, warm key cache");
    assert.equal(out.single, want, "verifyEvent in the worker");
    const stats = JSON.parse(out.stats);
    assert.ok(stats.batchesHeld >= 2 && stats.keyCacheHits > 0, out.stats);
  } finally {
    if (session) await wd(base, "DELETE", `/session/${session}`).catch(() => {});
    driver.kill();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
