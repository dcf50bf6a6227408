// Headless Chromium for the wasm benchmark and profiler: wasm/ served on 127.0.0.1
// (cross-origin isolated, so performance.now() has 5 us resolution, not 100), and a browser
// driven through /usr/bin/chromedriver (WebDriver), with Chrome DevTools Protocol commands
// through chromedriver's goog/cdp/execute. Flags as .ci/wasm.sh's.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";

const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };

/**
 * Serves the directory `root` (ending in "/") on 127.0.0.1, cross-origin isolated; `routes`
 * maps extra paths to JSON bodies (strings), or to `{ type, body }` for another content type.
 */
function serve(root, routes) {
  const isolated = {
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "require-corp",
  };
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (Object.hasOwn(routes, path)) {
      const r = routes[path];
      const [type, body] = typeof r === "string" ? ["application/json", r] : [r.type, r.body];
      res.writeHead(200, { "content-type": type, ...isolated });
      return res.end(body);
    }
    const file = normalize(join(root, path));
    if (!file.startsWith(root) || !statSync(file, { throwIfNoEntry: false })?.isFile()) {
      res.writeHead(404);
      return res.end();
    }
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream", ...isolated });
    res.end(readFileSync(file));
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

export const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

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

/**
 * Runs `body(browser)` with a headless Chromium whose pages are served from `root` (plus the
 * JSON bodies of `routes`, path to string), then closes everything. `browser` has `version`, `open(path)` (navigates to a path under
 * `root`, e.g. "bench/index.html?args=..."), `exec(script)` (a synchronous script's return
 * value), `execAsync(script)` (the value an asynchronous script passes to its callback, the
 * last of its `arguments`), `cdp(cmd, params)` (a DevTools Protocol command's result),
 * `until(script)` (polls a script every 100 ms until it returns a truthy value, which it
 * returns) and `driverPid` (chromedriver's process id: Chromium's processes are below it).
 */
export async function withChromium(root, body, routes = {}) {
  const server = await serve(root, routes);
  const probe = await new Promise((ok) => { const s = createServer(); s.listen(0, "127.0.0.1", () => ok(s)); });
  const port = probe.address().port;
  await new Promise((ok) => probe.close(ok));
  const driver = spawn("/usr/bin/chromedriver", [`--port=${port}`], { stdio: "ignore" });
  const profile = mkdtempSync(join(tmpdir(), "nv-bench-chromium-"));
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
    const caps = await wd(base, "POST", "/session", {
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
    });
    session = caps.sessionId;
    // A page may run for a long time between polls (a slow peer's sample can take seconds).
    await wd(base, "POST", `/session/${session}/timeouts`, { script: 600_000, pageLoad: 600_000 });
    const exec = (script) => wd(base, "POST", `/session/${session}/execute/sync`, { script, args: [] });
    const browser = {
      version: caps.capabilities.browserVersion,
      open: (path) => wd(base, "POST", `/session/${session}/url`, { url: `http://127.0.0.1:${server.address().port}/${path}` }),
      exec,
      execAsync: (script) => wd(base, "POST", `/session/${session}/execute/async`, { script, args: [] }),
      driverPid: driver.pid,
      cdp: (cmd, params = {}) => wd(base, "POST", `/session/${session}/goog/cdp/execute`, { cmd, params }),
      until: async (script) => {
        for (;;) {
          const v = await exec(script);
          if (v) return v;
          await sleep(100);
        }
      },
    };
    return await body(browser);
  } finally {
    if (session) await wd(base, "DELETE", `/session/${session}`).catch(() => {});
    driver.kill();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
