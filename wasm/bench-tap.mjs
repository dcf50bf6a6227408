#!/usr/bin/env node
// The WebSocket tap against the libraries' own verification (issue 47, item 4): kind-1 notes
// from --authors authors (signed here with nostr-tools' finalizeEvent, cached under
// target/bench-tap/), plus a few forged events (one in a thousand by default, at least 2: bad
// signatures and altered contents, each with an id of its own), served by two local relays
// (wasm/clients/relay.mjs, each a child process, so that their CPU is not the client's; half
// of the events on both relays, a quarter on each alone), fetched by each library (the
// versions pinned in wasm/clients) once with its default verification and once through the
// tap with its recipe (wasm/bench/tap-recipes.mjs); nostr-tools also with nostr-tools/wasm +
// nostr-wasm. Every run is a fresh client: in node a child `node` process, in Chromium a fresh
// page load.
//
// Per run: main-thread time per delivered event (node: the active time of
// performance.eventLoopUtilization(), and the main thread's own CPU time from
// /proc/self/task/PID/schedstat; Chromium: the page's TaskDuration and ScriptDuration from
// the DevTools Protocol's Performance.getMetrics), process CPU per event (node:
// process.cpuUsage(), every thread, the tap's worker included; Chromium: the renderer
// process(es) of the page, from /proc, its workers included), wall time from the
// subscription to the last event, and the tap's stats().maxLatencyMs (the longest an EVENT
// frame waited in the tap, from its arrival to its dispatch). Medians of --repeats runs, the
// variants interleaved; ratios stock / tap printed in the same run.
//
// Every run is checked: the events delivered must be exactly the distinct valid events, each
// once, no forged one (and the library's completion seen); any other outcome fails the
// benchmark (exit 1) after printing what was wrong. No timing is asserted.
//
//   bash wasm/build.sh && (cd wasm/clients && npm ci)
//   node wasm/bench-tap.mjs                                  # node, 10,000 events, 3 repeats
//   node wasm/bench-tap.mjs --engine chromium                # headless Chromium
//   node wasm/bench-tap.mjs --engine both --events 300 --repeats 1    # CI's short run (.ci/wasm.sh)
//
// Options: --engine node|chromium|both (node) --events N (10000) --authors N (50)
// --repeats N (3) --libraries a,b (all of nostr-tools,ndk,rx-nostr,nostr-fetch,applesauce,
// welshman) --variants a,b (all of stock,stock-wasm,tap) --forged N (events / 1000, at least 2)
// --seed N (1)
// --client-cpus LIST and --relay-cpus LIST (taskset -c for the clients and the relays; none by
// default) --helper-cpus LIST (node: before the window, every thread of the client but its main
// thread, the tap's worker and V8's platform threads, moved to LIST: the main thread alone on
// its CPUs, as on a host with cores to spare) --timeout-s N (a run that has not completed after N s fails; 300) --json FILE (the
// raw runs) --cpu-prof DIR (node: each client run under node --cpu-prof, its threads' profiles in
// DIR/LIBRARY-VARIANT-REPEAT/)
// --wasm-pkgs DIR (the module and its wasm-bindgen glue from DIR/pkg-node and DIR/pkg-web, the
// tap's JavaScript from wasm/pkg-*: e.g. a release build beside the test-profile packages CI
// builds; copied together under target/bench-tap/pkgs-PID/) --node-args "FLAGS" (node/V8 flags
// for the client processes, for experiments, e.g. "--single-threaded-gc").
import { spawn, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

const root = dirname(fileURLToPath(import.meta.url)); // wasm/
const repo = dirname(root);
const clients = join(root, "clients");
const cacheDir = join(repo, "target", "bench-tap");
const ALL_LIBRARIES = ["nostr-tools", "ndk", "rx-nostr", "nostr-fetch", "applesauce", "welshman"];
const ALL_VARIANTS = ["stock", "stock-wasm", "tap"];

const die = (msg) => {
  console.error("wasm/bench-tap.mjs: " + msg);
  process.exit(1);
};

function parseArgs(argv) {
  const o = {
    engine: "node", events: 10000, authors: 50, repeats: 3, libraries: ALL_LIBRARIES, variants: ALL_VARIANTS,
    forged: undefined, seed: 1, clientCpus: "", relayCpus: "", helperCpus: "", timeoutS: 300, json: "", cpuProf: "", child: "", wasmPkgs: "", nodeArgs: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) die(`${a} needs a value`);
      return argv[++i];
    };
    const int = (min) => {
      const v = Number(val());
      if (!Number.isInteger(v) || v < min) die(`${a} needs an integer >= ${min}`);
      return v;
    };
    if (a === "--engine") o.engine = val();
    else if (a === "--events") o.events = int(1);
    else if (a === "--authors") o.authors = int(1);
    else if (a === "--repeats") o.repeats = int(1);
    else if (a === "--forged") o.forged = int(0);
    else if (a === "--seed") o.seed = int(0);
    else if (a === "--timeout-s") o.timeoutS = int(1);
    else if (a === "--libraries") o.libraries = val().split(",");
    else if (a === "--variants") o.variants = val().split(",");
    else if (a === "--client-cpus") o.clientCpus = val();
    else if (a === "--relay-cpus") o.relayCpus = val();
    else if (a === "--helper-cpus") o.helperCpus = val();
    else if (a === "--json") o.json = val();
    else if (a === "--cpu-prof") o.cpuProf = val();
    else if (a === "--wasm-pkgs") o.wasmPkgs = val();
    else if (a === "--node-args") o.nodeArgs = val().split(" ").filter(Boolean);
    else if (a === "--child") o.child = val();
    else if (a === "--help" || a === "-h") {
      const lines = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n").slice(1);
      console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith("//"))).join("\n"));
      process.exit(0);
    } else die(`unknown option ${a} (--help)`);
  }
  if (!["node", "chromium", "both"].includes(o.engine)) die(`--engine node|chromium|both, not ${o.engine}`);
  if (o.helperCpus && o.engine !== "node") die("--helper-cpus: node only");
  for (const l of o.libraries) if (!ALL_LIBRARIES.includes(l)) die(`--libraries: unknown ${l} (${ALL_LIBRARIES.join(",")})`);
  for (const v of o.variants) if (!ALL_VARIANTS.includes(v)) die(`--variants: unknown ${v} (${ALL_VARIANTS.join(",")})`);
  o.forged ??= Math.max(2, Math.round(o.events / 1000));
  return o;
}

// ---------------------------------------------------------------------------------------------
// The events: signed once per (seed, events, authors), the forged ones per count, cached.

const utf8 = new TextEncoder();
const WORDS = ("the a relay note zap client key event sign verify batch wasm worker socket fetch pool subscription " +
  "filter kind tag author bitcoin lightning nostr protocol decentralized censorship resistant social media post reply thread " +
  "morning coffee weather today build release bug fix merge ship weekend music photo garden mountain city train").split(" ");
const NON_ASCII = ["grüße", "café", "naïve", "日本語のテキスト", "привет", "🌍", "⚡", "🤙", "中文", "ñandú", "Ελληνικά", "🧡", "€100", "東京"];

function makeCorpus(nostr, o, have) {
  const rand = xorshift(o.seed * 2654435761 + 17);
  const sks = Array.from({ length: o.authors }, (_, i) => createHash("sha256").update(`nostr-verify bench-tap key ${o.seed} ${i}`).digest());
  const pubkeys = sks.map((sk) => nostr.getPublicKey(sk));
  const hex = (n) => createHash("sha256").update(`bench-tap ${o.seed} ${n}`).digest("hex");
  const note = (i) => {
    const words = 8 + (rand() % 70); // about 50 to 450 characters
    const parts = [];
    for (let w = 0; w < words; w++) parts.push(rand() % 9 === 0 ? NON_ASCII[rand() % NON_ASCII.length] : WORDS[rand() % WORDS.length]);
    if (i % 7 === 0) parts.push(`https://example.com/${hex(`url ${i}`).slice(0, 12)}.jpg`);
    if (i % 11 === 0) parts.push(`#${WORDS[rand() % WORDS.length]}`);
    const tags = [];
    const r = rand() % 10;
    if (r < 4) {
      tags.push(["e", hex(`root ${i}`), "wss://relay.example.com", "root"]);
      if (r < 2) tags.push(["e", hex(`reply ${i}`), "", "reply"]);
      tags.push(["p", pubkeys[rand() % pubkeys.length]]);
    }
    if (r === 5) for (let k = 0; k < 1 + (rand() % 4); k++) tags.push(["p", pubkeys[rand() % pubkeys.length]]);
    if (i % 11 === 0) tags.push(["t", parts.at(-1).slice(1)]);
    if (r === 9) tags.push(["client", "bench-tap"]);
    return { kind: 1, created_at: 1760000000 - i * 7 - (rand() % 5), tags, content: parts.join(" ") };
  };
  let valid = have;
  if (!valid) {
    valid = [];
    for (let i = 0; i < o.events; i++) valid.push(nostr.finalizeEvent(note(i), sks[i % o.authors]));
  } else {
    for (let i = 0; i < o.events; i++) note(i); // the same random stream for the forged ones
  }
  const forged = [];
  for (let i = 0; i < o.forged; i++) {
    const e = nostr.finalizeEvent(note(o.events + i), sks[i % o.authors]);
    const f = { id: e.id, pubkey: e.pubkey, created_at: e.created_at, kind: e.kind, tags: e.tags, content: e.content, sig: e.sig };
    if (i % 2 === 0) {
      // A bad signature: one hex digit changed.
      const at = rand() % 128;
      f.sig = f.sig.slice(0, at) + ((parseInt(f.sig[at], 16) + 1) % 16).toString(16) + f.sig.slice(at + 1);
      f.forgery = "badSig";
    } else {
      // Content altered, the id recomputed: the signature no longer matches.
      f.content += " (altered)";
      f.id = nostr.getEventHash(f);
      f.forgery = "altered";
    }
    forged.push(f);
  }
  const plain = (e) => ({ id: e.id, pubkey: e.pubkey, created_at: e.created_at, kind: e.kind, tags: e.tags, content: e.content, sig: e.sig });
  return { valid: valid.map(plain), forged };
}

function xorshift(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}

async function loadCorpus(o) {
  mkdirSync(cacheDir, { recursive: true });
  // The valid events and the forged ones are cached apart: the forged ones are made from
  // notes after the valid ones', so --forged changes nothing else.
  const base = `events-s${o.seed}-n${o.events}-a${o.authors}`;
  const validFile = join(cacheDir, `${base}.json`);
  const forgedFile = join(cacheDir, `${base}-forged${o.forged}.json`);
  const file = join(cacheDir, `${base}-f${o.forged}.corpus.json`);
  if (!existsSync(validFile) || !existsSync(forgedFile)) {
    const require = createRequire(join(clients, "package.json"));
    const t0 = performance.now();
    const mod = await import(pathToFileURL(require.resolve("nostr-tools/pure"))); // CommonJS
    const pure = mod.finalizeEvent ? mod : mod.default;
    const have = existsSync(validFile) ? JSON.parse(readFileSync(validFile, "utf8")) : null;
    const corpus = makeCorpus(pure, o, have);
    // Self-check with nostr-tools' verifyEvent: every valid one valid, every forged one not.
    for (const e of corpus.valid) if (!pure.verifyEvent({ ...e })) throw new Error("a generated event does not verify");
    for (const e of corpus.forged) if (pure.verifyEvent({ ...e })) throw new Error("a forged event verifies");
    if (!have) writeFileSync(validFile, JSON.stringify(corpus.valid));
    writeFileSync(forgedFile, JSON.stringify(corpus.forged));
    console.log(`# signed ${have ? 0 : corpus.valid.length} + ${corpus.forged.length} events in ${((performance.now() - t0) / 1000).toFixed(1)} s (cached under ${cacheDir})`);
  }
  const corpus = { valid: JSON.parse(readFileSync(validFile, "utf8")), forged: JSON.parse(readFileSync(forgedFile, "utf8")) };
  writeFileSync(file, JSON.stringify(corpus)); // what the clients read
  return { file, ...corpus };
}

/** Which relay serves which event: half on both, a quarter on each alone; the forged ones alternate. */
function split(corpus) {
  const a = [];
  const b = [];
  corpus.valid.forEach((e, i) => {
    if (i % 4 !== 3) a.push(e);
    if (i % 4 !== 0) b.push(e);
  });
  const fa = [];
  const fb = [];
  corpus.forged.forEach((e, i) => {
    const { forgery, ...wire } = e;
    (i % 2 === 0 ? fa : fb).push(wire);
  });
  return { a, b, fa, fb };
}

/**
 * The packages to run: wasm/pkg-node and wasm/pkg-web, or (--wasm-pkgs DIR) copies of them
 * under target/bench-tap/pkgs/ with DIR's module and glue. Returns { node, web } directories.
 */
function packages(o) {
  if (!o.wasmPkgs) return { node: join(root, "pkg-node"), web: join(root, "pkg-web") };
  const out = {};
  for (const flavor of ["node", "web"]) {
    const from = join(o.wasmPkgs, `pkg-${flavor}`);
    if (!existsSync(join(from, "nostr_verify_wasm_bg.wasm"))) die(`--wasm-pkgs: ${from}/nostr_verify_wasm_bg.wasm missing`);
    // Per benchmark process: another one running meanwhile has its own copy.
    const dir = join(cacheDir, `pkgs-${process.pid}`, `pkg-${flavor}`);
    rmSync(dir, { recursive: true, force: true });
    cpSync(join(root, `pkg-${flavor}`), dir, { recursive: true });
    rmSync(join(dir, "snippets"), { recursive: true, force: true });
    for (const f of readdirSync(from)) cpSync(join(from, f), join(dir, f), { recursive: true });
    out[flavor] = dir;
  }
  return out;
}

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir, prefix = "") {
  const out = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.isDirectory()) out.push(...filesUnder(join(dir, d.name), prefix + d.name + "/"));
    else out.push(prefix + d.name);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The relays: two child processes.

function withTaskset(cpus, cmd, args) {
  return cpus ? ["taskset", ["-c", cpus, cmd, ...args]] : [cmd, args];
}

async function startRelays(corpus, o) {
  const dir = mkdtempSync(join(tmpdir(), "nv-bench-tap-"));
  const { a, b, fa, fb } = split(corpus);
  const jsonl = (list) => list.map((e) => JSON.stringify(e)).join("\n") + "\n";
  const files = { a: [jsonl(a), jsonl(fa)], b: [jsonl(b), jsonl(fb)] };
  const relays = [];
  for (const name of ["a", "b"]) {
    writeFileSync(join(dir, `${name}.jsonl`), files[name][0]);
    writeFileSync(join(dir, `${name}-forged.jsonl`), files[name][1]);
    const [cmd, args] = withTaskset(o.relayCpus, process.execPath, [
      join(clients, "relay.mjs"), "--events", join(dir, `${name}.jsonl`), "--forged", join(dir, `${name}-forged.jsonl`),
    ]);
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    const url = await new Promise((ok, fail) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const nl = out.indexOf("\n");
        if (nl >= 0) ok(out.slice(0, nl).trim());
      });
      child.on("exit", (code) => fail(new Error(`relay ${name} exited (${code}): ${err}`)));
    });
    process.on("exit", () => child.exitCode === null && child.kill("SIGTERM"));
    relays.push({ name, url, child, count: name === "a" ? a.length : b.length, forged: name === "a" ? fa.length : fb.length, err: () => err });
  }
  return {
    relays,
    dir,
    async stop() {
      for (const r of relays) {
        if (r.child.exitCode === null) {
          const gone = new Promise((ok) => r.child.on("exit", ok));
          r.child.kill("SIGTERM");
          await gone;
        }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The recipes, bundled with esbuild (from wasm/clients/node_modules) for node and for the page.

async function bundle(platform) {
  const require = createRequire(join(clients, "package.json"));
  const src = join(root, "bench", "tap-recipes.mjs");
  const key = createHash("sha256")
    .update(readFileSync(src))
    .update(readFileSync(join(root, "bench", "tap-run.mjs")))
    .update(readFileSync(fileURLToPath(import.meta.url))) // how it is bundled
    .update(readFileSync(join(clients, "package-lock.json")))
    .update(platform)
    .digest("hex")
    .slice(0, 16);
  const out = join(cacheDir, `recipes-${platform}-${key}.mjs`);
  if (existsSync(out)) return out;
  mkdirSync(cacheDir, { recursive: true });
  // Older bundles of this platform are stale (a source or the lock file changed).
  for (const f of readdirSync(cacheDir)) if (f.startsWith(`recipes-${platform}-`)) rmSync(join(cacheDir, f), { force: true });
  const esbuild = require("esbuild");
  // node: ws bundled in as well, so that a run needs nothing from wasm/clients/node_modules
  // (which an `npm ci` there may be replacing meanwhile).
  const entry = platform === "node"
    ? { stdin: { contents: `export * from ${JSON.stringify(src)};\nexport { default as NodeWebSocket } from "ws";\n`, resolveDir: clients, loader: "js" } }
    : { entryPoints: [src] };
  await esbuild.build({
    ...entry,
    bundle: true,
    format: "esm",
    platform,
    target: platform === "node" ? "node20" : "chrome120",
    outfile: out,
    nodePaths: [join(clients, "node_modules")],
    // ws' optional native helpers: required inside try/catch, absent here.
    external: ["bufferutil", "utf-8-validate"],
    // CommonJS dependencies bundled into an ES module may call require() for node's modules.
    banner: platform === "node" ? { js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);' } : undefined,
    logLevel: "error",
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// A client run in node (the child process).

function threadCpuMs(tid) {
  // schedstat: nanoseconds on the CPU, nanoseconds waiting, timeslices.
  try {
    return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return NaN;
  }
}

/** CPU milliseconds of each thread of this process, by thread id: { tid: [name, ms] }. */
function threadsCpu() {
  const out = {};
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const name = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
      out[tid] = [name, threadCpuMs(tid)];
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * The CPU time of each thread between two threadsCpu() snapshots, busiest first, the main
 * thread named "main" (node names every thread "node"): [[name, ms], ...].
 */
function threadsDelta(a, b) {
  const out = [];
  for (const [tid, [name, ms]] of Object.entries(b)) {
    const d = ms - (a[tid] ? a[tid][1] : 0);
    if (d > 0.05) out.push([Number(tid) === process.pid ? "main" : `${name}:${tid}`, Math.round(d * 10) / 10]);
  }
  return out.sort((x, y) => y[1] - x[1]);
}

/** Thread ids of this process, the main thread aside. */
function helperTids() {
  return readdirSync("/proc/self/task").filter((tid) => Number(tid) !== process.pid);
}

/** Moves every thread of this process but the main one to `cpus` (taskset -p); their count. */
function moveHelpers(cpus) {
  const tids = helperTids();
  for (const tid of tids) execFileSync("taskset", ["-p", "-c", cpus, tid], { stdio: "ignore" });
  return tids.length;
}

/** Threads of this process, the main one aside, not confined to `cpus` (created after the move). */
function helpersNotOn(cpus) {
  let n = 0;
  for (const tid of helperTids()) {
    try {
      const allowed = readFileSync(`/proc/self/task/${tid}/status`, "utf8").match(/Cpus_allowed_list:\s*(\S+)/)[1];
      if (allowed !== cpus) n++;
    } catch {
      // gone
    }
  }
  return n;
}

async function childRun(spec) {
  const { library, variant, relays, corpusFile, bundlePath, timeoutS, pkgNode } = spec;
  const corpus = JSON.parse(readFileSync(corpusFile, "utf8"));
  const recipes = await import(pathToFileURL(bundlePath));
  const WS = recipes.NodeWebSocket;
  const check = recipes.makeChecker(corpus);
  // Start-up (the tap and its worker, warm-up included, or the library's own set-up such as
  // nostr-wasm's init), reported apart from the measured window.
  const boot = process.cpuUsage();
  let tap = null;
  if (variant === "tap") {
    const { tapWebSocket } = createRequire(join(pkgNode, "package.json"))("./tap.js");
    tap = tapWebSocket(WS);
    await tap.ready;
  }
  const runner = await recipes.prepare(library, variant, { WebSocket: WS, tap });
  // Let the setup's leftovers (module compiles, worker start-up) settle before the window.
  await new Promise((ok) => setTimeout(ok, 200));
  // --helper-cpus: every thread but the main one (the tap's worker, V8's platform threads,
  // libuv's) moved to those CPUs before the window, as on a host with cores to spare.
  const moved = spec.helperCpus ? moveHelpers(spec.helperCpus) : null;
  const bootCpu = process.cpuUsage(boot);
  const startupCpuMs = (bootCpu.user + bootCpu.system) / 1000;
  let elu0, cpu0, main0, t0, threads0;
  let window = null;
  const hooks = {
    start() {
      elu0 = performance.eventLoopUtilization();
      cpu0 = process.cpuUsage();
      main0 = threadCpuMs(process.pid);
      threads0 = threadsCpu();
      t0 = performance.now();
    },
    stop() {
      const t1 = performance.now();
      const elu = performance.eventLoopUtilization(elu0);
      const cpu = process.cpuUsage(cpu0);
      window = {
        eluActiveMs: elu.active,
        eluUtilization: elu.utilization,
        mainCpuMs: threadCpuMs(process.pid) - main0,
        processCpuMs: (cpu.user + cpu.system) / 1000,
        userMs: cpu.user / 1000,
        systemMs: cpu.system / 1000,
        windowMs: t1 - t0,
        threadsMs: threadsDelta(threads0, threadsCpu()),
      };
    },
  };
  const out = await recipes.runFetch({ runner, relays, check, timeoutS, hooks });
  const stats = tap ? tap.stats() : null;
  try {
    runner.close();
    if (tap) await tap.close();
  } catch {
    // closing is not measured
  }
  const helpers = moved ? { moved, notMoved: helpersNotOn(spec.helperCpus) } : null;
  return { library, variant, engine: "node", startupCpuMs, ...window, ...out, helpers, tap: recipes.tapSummary(stats) };
}

// ---------------------------------------------------------------------------------------------
// The parent: runs, tables.

function spawnChild(spec, o) {
  const nodeArgs = [...o.nodeArgs];
  if (o.cpuProf) {
    // One directory per run: node writes a profile for each thread (workers included).
    const dir = join(o.cpuProf, `${spec.library}-${spec.variant}-${spec.repeat}`);
    mkdirSync(dir, { recursive: true });
    nodeArgs.push("--cpu-prof", "--cpu-prof-dir", dir);
  }
  const [cmd, args] = withTaskset(o.clientCpus, process.execPath, [...nodeArgs, fileURLToPath(import.meta.url), "--child", JSON.stringify(spec)]);
  return new Promise((ok, fail) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => {
      const line = out.split("\n").find((l) => l.startsWith("RESULT "));
      if (!line) return fail(new Error(`${spec.library}/${spec.variant}: the client exited (${code}) without a result:\n${out}${err}`));
      ok(JSON.parse(line.slice(7)));
    });
  });
}

const median = (xs) => {
  const a = xs.filter((x) => Number.isFinite(x)).sort((x, y) => x - y);
  if (a.length === 0) return NaN;
  return a.length % 2 ? a[a.length >> 1] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");

function summarize(runs) {
  const groups = new Map();
  for (const r of runs) {
    const k = `${r.library}/${r.variant}`;
    if (!groups.has(k)) groups.set(k, []);
    groups.get(k).push(r);
  }
  const rows = [];
  for (const [k, rs] of groups) {
    const per = (f) => median(rs.map((r) => f(r) / r.delivered * 1000)); // µs per delivered event
    rows.push({
      key: k,
      library: rs[0].library,
      variant: rs[0].variant,
      n: rs.length,
      delivered: rs.map((r) => r.delivered),
      expected: rs[0].expected,
      mainUs: per((r) => r.mainMs),
      mainCpuUs: per((r) => r.mainCpuMs),
      scriptUs: per((r) => r.scriptMs ?? NaN),
      processUs: per((r) => r.processCpuMs),
      wallMs: median(rs.map((r) => r.wallLastMs)),
      latencyMs: median(rs.map((r) => r.tap?.maxLatencyMs ?? NaN)),
      latencyMaxMs: Math.max(...rs.map((r) => r.tap?.maxLatencyMs ?? -Infinity)),
      batches: median(rs.map((r) => r.tap?.batches ?? NaN)),
      maxBatch: median(rs.map((r) => r.tap?.maxBatchSize ?? NaN)),
      dropped: median(rs.map((r) => r.tap?.dropped ?? NaN)),
    });
  }
  return rows;
}

function printTables(engine, runs, o, log, recipes) {
  const rows = summarize(runs);
  const mainName = engine === "node" ? "main thread, ELU active" : "main thread, TaskDuration";
  const second = engine === "node" ? "main thread CPU (schedstat)" : "main thread, ScriptDuration";
  const procName = engine === "node" ? "process CPU (all threads)" : "renderer CPU (page + workers)";
  log(`| ${engine}: tap | library | verification | delivered / valid | ${mainName}, µs/event | ${second}, µs/event | ${procName}, µs/event | wall to last event, ms | tap max latency, ms | tap batches (max size) |`);
  log("|---|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    const note = recipes.VARIANT_NOTES[r.library][r.variant];
    const sec = engine === "node" ? r.mainCpuUs : r.scriptUs;
    const tapCols = r.variant === "tap" ? `${fmt(r.latencyMs)} (max ${fmt(r.latencyMaxMs)}) | ${fmt(r.batches, 0)} (${fmt(r.maxBatch, 0)})` : "- | -";
    log(`| ${engine}: tap | ${r.library} | ${r.variant}: ${note} | ${r.delivered.join("/")} / ${r.expected} | ${fmt(r.mainUs)} | ${fmt(sec)} | ${fmt(r.processUs)} | ${fmt(r.wallMs, 0)} | ${tapCols} |`);
  }
  log("");
  log(`| ${engine}: ratios | library | stock / tap | main thread | ${engine === "node" ? "main CPU" : "script"} | ${engine === "node" ? "process CPU" : "renderer CPU"} | wall |`);
  log("|---|---|---|---|---|---|---|");
  const by = new Map(rows.map((r) => [r.key, r]));
  const ratios = [];
  for (const lib of o.libraries) {
    const t = by.get(`${lib}/tap`);
    if (!t) continue;
    for (const v of ["stock", "stock-wasm"]) {
      const s = by.get(`${lib}/${v}`);
      if (!s) continue;
      const sec = engine === "node" ? s.mainCpuUs / t.mainCpuUs : s.scriptUs / t.scriptUs;
      const r = { lib, v, main: s.mainUs / t.mainUs, sec, proc: s.processUs / t.processUs, wall: s.wallMs / t.wallMs };
      ratios.push(r);
      log(`| ${engine}: ratios | ${lib} | ${v} / tap | ${fmt(r.main, 2)}x | ${fmt(r.sec, 2)}x | ${fmt(r.proc, 2)}x | ${fmt(r.wall, 2)}x |`);
    }
  }
  log("");
  const bar = ratios.find((r) => r.lib === "nostr-tools" && r.v === "stock-wasm");
  if (bar) {
    const met = (x, k) => `${fmt(x, 2)}x (issue 47 asks >= ${k}: ${x >= k ? "met" : "NOT met"})`;
    const main = engine === "node"
      ? `main thread: ELU active ${met(bar.main, 10)}, CPU time (schedstat) ${met(bar.sec, 10)}`
      : `main thread: TaskDuration ${met(bar.main, 10)}`;
    const layout = engine !== "node" ? "" : o.helperCpus
      ? ` [main thread alone on CPUs ${o.clientCpus || "(any)"}, its other threads on ${o.helperCpus}]`
      : o.clientCpus ? ` [every thread of the client on CPUs ${o.clientCpus}: ELU counts the main thread's waits for them]` : "";
    log(`bar (${engine}, nostr-tools SimplePool, nostr-tools/wasm + nostr-wasm / tap)${layout}: ${main}; ${engine === "node" ? "process" : "renderer"} CPU ${met(bar.proc, 4)}`);
  }
  if (engine === "chromium") {
    const td = [...new Set(runs.map((r) => r.timeDomain))].join(", ");
    log(`(Chromium's Performance.getMetrics time domain: ${td}${td === "threadTicks" ? ": TaskDuration and ScriptDuration are the main thread's CPU time" : ": wall time"}; renderer CPU from /proc in 10 ms ticks)`);
  }
  const lat = rows.filter((r) => r.variant === "tap").map((r) => r.latencyMaxMs);
  if (lat.length) log(`tap latency (${engine}): the longest an EVENT frame waited in the tap, over every tap run: ${fmt(Math.max(...lat))} ms (nostr-tools' EOSE timeout: 4400 ms)`);
}

function checkRuns(runs, log) {
  let bad = 0;
  for (const r of runs) {
    if (r.problems.length || r.error || r.why !== "complete") {
      bad++;
      log(`FAILED: ${r.engine} ${r.library}/${r.variant} run ${r.repeat}: ${[r.why, ...r.problems, r.error].filter(Boolean).join("; ")}`);
    }
  }
  log(`checked: ${runs.length - bad} of ${runs.length} runs delivered exactly the valid events, each once, no forged one`);
  return bad === 0;
}

function plan(o) {
  const recipesVariants = {
    "nostr-tools": ["stock", "stock-wasm", "tap"],
    ndk: ["stock", "tap"], "rx-nostr": ["stock", "tap"], "nostr-fetch": ["stock", "tap"], applesauce: ["stock", "tap"], welshman: ["stock", "tap"],
  };
  const jobs = [];
  for (let r = 1; r <= o.repeats; r++) {
    for (const library of o.libraries) {
      for (const variant of recipesVariants[library]) if (o.variants.includes(variant)) jobs.push({ library, variant, repeat: r });
    }
  }
  return jobs;
}

async function inNode(o, corpus, relays, log, pkgs) {
  const bundlePath = await bundle("node");
  const runs = [];
  for (const job of plan(o)) {
    const spec = { ...job, relays: relays.relays.map((r) => r.url), corpusFile: corpus.file, bundlePath, timeoutS: o.timeoutS, pkgNode: pkgs.node, helperCpus: o.helperCpus };
    const r = await spawnChild(spec, o);
    r.repeat = job.repeat;
    r.mainMs = r.eluActiveMs;
    runs.push(r);
    const lat = r.tap ? `, tap max latency ${fmt(r.tap.maxLatencyMs)} ms` : "";
    process.stderr.write(`  node ${job.library}/${job.variant} #${job.repeat}: ${r.delivered}/${r.expected} in ${fmt(r.wallLastMs, 0)} ms, ` +
      `main ${fmt(r.eluActiveMs, 0)} ms, process CPU ${fmt(r.processCpuMs, 0)} ms${lat}` +
        `${r.startupCpuMs !== undefined ? `, start-up CPU ${fmt(r.startupCpuMs, 0)} ms (before the window)` : ""}` +
        `${r.helpers ? `, ${r.helpers.moved} helper threads moved to CPUs ${o.helperCpus} (${r.helpers.notMoved} elsewhere at the end)` : ""} (${r.why})\n`);
  }
  return runs;
}

// ---------------------------------------------------------------------------------------------
// Chromium: the page wasm/bench/tap.html runs one fetch per load; this side reads the
// DevTools Protocol's metrics and the renderer's CPU time from /proc.

function descendants(pid) {
  const kids = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(d));
    } catch {
      // gone
    }
  }
  const out = [];
  const walk = (p) => {
    for (const k of kids.get(p) ?? []) {
      out.push(k);
      walk(k);
    }
  };
  walk(pid);
  return out;
}

function procCpuMs(pid) {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = st.slice(st.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, clock ticks of 10 ms
  } catch {
    return 0;
  }
}

function chromiumCpu(driverPid) {
  let renderer = 0;
  let all = 0;
  for (const p of descendants(driverPid)) {
    let cmd = "";
    try {
      cmd = readFileSync(`/proc/${p}/cmdline`, "utf8");
    } catch {
      continue;
    }
    const ms = procCpuMs(p);
    all += ms;
    if (cmd.includes("--type=renderer")) renderer += ms;
  }
  return { renderer, all };
}

async function inChromium(o, corpus, relays, log, pkgs) {
  const { withChromium, sleep } = await import("./bench/chromium.mjs");
  const bundlePath = await bundle("browser");
  const runs = [];
  let timeDomain = "";
  const routes = {
    "/bench-tap/recipes.mjs": { type: "text/javascript", body: readFileSync(bundlePath) },
    "/bench-tap/corpus.json": JSON.stringify({ valid: corpus.valid, forged: corpus.forged }),
  };
  // The browsers' package, served as /bench-tap/pkg-web/ (the tap finds its worker and the
  // worker its module beside it).
  const types = { ".js": "text/javascript", ".wasm": "application/wasm", ".json": "application/json" };
  for (const f of filesUnder(pkgs.web)) {
    const ext = f.slice(f.lastIndexOf("."));
    routes[`/bench-tap/pkg-web/${f}`] = { type: types[ext] ?? "text/plain", body: readFileSync(join(pkgs.web, f)) };
  }
  await withChromium(root + "/", async (browser) => {
    log(`# Chromium ${browser.version} (headless), ${pkgs.web} served as /bench-tap/pkg-web/`);
    for (const job of plan(o)) {
      const spec = { library: job.library, variant: job.variant, relays: relays.relays.map((r) => r.url), timeoutS: o.timeoutS };
      const args = encodeURIComponent(JSON.stringify(spec));
      await browser.open(`bench/tap.html?spec=${args}`);
      const ready = await browser.until("return document.body.dataset.state === 'ready' || document.body.dataset.state === 'error' ? document.body.dataset.state : '';");
      if (ready === "error") throw new Error(`${job.library}/${job.variant}: the page failed: ${await browser.exec("return window.benchError;")}`);
      // Thread ticks where Chromium has them: TaskDuration is then the main thread's CPU time.
      await browser.cdp("Performance.disable").catch(() => {});
      try {
        await browser.cdp("Performance.enable", { timeDomain: "threadTicks" });
        timeDomain = "threadTicks";
      } catch {
        await browser.cdp("Performance.enable", {});
        timeDomain = "timeTicks";
      }
      const metrics = async () => Object.fromEntries((await browser.cdp("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]));
      const m0 = await metrics();
      const c0 = chromiumCpu(browser.driverPid);
      // One script call that returns when the page is done, so that polling adds no tasks.
      const r = await browser.execAsync("const done = arguments[arguments.length - 1]; window.benchGo().then(done, (e) => done({ error: String(e && e.stack || e) }));");
      const m1 = await metrics();
      const c1 = chromiumCpu(browser.driverPid);
      if (r.error && !r.library) throw new Error(`${job.library}/${job.variant}: ${r.error}`);
      r.engine = "chromium";
      r.timeDomain = timeDomain;
      r.repeat = job.repeat;
      r.mainMs = (m1.TaskDuration - m0.TaskDuration) * 1000;
      r.scriptMs = (m1.ScriptDuration - m0.ScriptDuration) * 1000;
      r.processCpuMs = c1.renderer - c0.renderer;
      r.chromiumCpuMs = c1.all - c0.all;
      runs.push(r);
      const lat = r.tap ? `, tap max latency ${fmt(r.tap.maxLatencyMs)} ms` : "";
      process.stderr.write(`  chromium ${job.library}/${job.variant} #${job.repeat}: ${r.delivered}/${r.expected} in ${fmt(r.wallLastMs, 0)} ms, ` +
        `main ${fmt(r.mainMs, 0)} ms, renderer CPU ${fmt(r.processCpuMs, 0)} ms${lat} (${r.why})\n`);
      await sleep(100);
    }
  }, routes);
  return runs;
}

// ---------------------------------------------------------------------------------------------

/**
 * The run check (tap-run.mjs, makeChecker) must catch every way a delivery can be wrong: a
 * duplicate, a forged event, an unknown one, a copy with a valid id but other fields (its
 * comparison runs after the measured window), a missing one. Dies if it does not.
 */
function checkTheChecker(recipes, corpus) {
  const [a, b] = corpus.valid;
  const small = { valid: [a, b], forged: corpus.forged.slice(0, 1) };
  const clean = recipes.makeChecker(small);
  for (const e of [a, b]) clean.add(structuredClone(e));
  const wrong = recipes.makeChecker(small);
  wrong.add({ ...a, content: a.content + "!" }); // altered, delivered first
  wrong.add(structuredClone(a)); // then the valid copy: a duplicate
  wrong.add(structuredClone(small.forged[0]));
  wrong.add({ ...a, id: "00".repeat(32) });
  const want = { delivered: 0, duplicates: 1, forged: 1, unknown: 1, altered: 1 };
  const got = wrong.result();
  const clean2 = clean.result();
  for (const [k, v] of Object.entries(want)) {
    if (got[k] !== v) die(`the run check counts ${k} ${got[k]}, not ${v}: ${JSON.stringify(got)}`);
  }
  if (clean2.problems.length !== 0 || clean2.delivered !== 2) die(`the run check fails a clean run: ${JSON.stringify(clean2)}`);
  if (!got.problems.some((p) => p.startsWith("2 of 2 valid events not delivered"))) die(`the run check misses the missing events: ${JSON.stringify(got)}`);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.child) {
    const r = await childRun(JSON.parse(o.child));
    process.stdout.write("RESULT " + JSON.stringify(r) + "\n");
    process.exit(0);
  }
  if (!existsSync(join(clients, "node_modules", "nostr-tools"))) die("wasm/clients/node_modules missing: run (cd wasm/clients && npm ci)");
  if (o.variants.includes("tap")) {
    for (const f of ["pkg-node/tap.js", "pkg-web/tap.js"]) if (!existsSync(join(root, f))) die(`wasm/${f} missing: run bash wasm/build.sh first`);
  }
  const log = (l) => console.log(l);
  const cpu = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? "?";
  const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  log(`# wasm/bench-tap.mjs ${process.argv.slice(2).join(" ")}`);
  log(`# ${cpu}, ${cpus().length} CPUs, load average ${load} at the start; node ${process.version}; ` +
    `clients ${o.clientCpus ? "on CPUs " + o.clientCpus : "unpinned"}, relays ${o.relayCpus ? "on CPUs " + o.relayCpus : "unpinned"}` +
    `${o.helperCpus ? `, the clients' threads other than their main thread on CPUs ${o.helperCpus} from the window on` : ""}`);
  let tapRev = "?";
  try {
    const git = (...a) => execFileSync("git", ["-C", repo, ...a], { stdio: ["ignore", "pipe", "ignore"] }).toString().trim();
    tapRev = `${git("log", "-1", "--format=%h", "--", "wasm/package/tap")}${git("status", "--porcelain", "--", "wasm/package/tap") ? " + uncommitted changes" : ""}`;
  } catch {
    // not a git checkout
  }
  log(`# the tap: wasm/package/tap at ${tapRev} (as assembled into wasm/pkg-*)`);
  const pkgs = packages(o);
  log(`# packages: ${pkgs.node} and ${pkgs.web}${o.wasmPkgs ? ` (the module from ${o.wasmPkgs}, the tap from wasm/pkg-*)` : ""}`);
  const corpus = await loadCorpus(o);
  const relays = await startRelays(corpus, o);
  log(`# ${corpus.valid.length} valid kind-1 events from ${o.authors} authors (${(corpus.valid.reduce((s, e) => s + JSON.stringify(e).length, 0) / corpus.valid.length).toFixed(0)} bytes of JSON on average) ` +
    `+ ${corpus.forged.length} forged (bad signature / altered content, ids of their own); relay A serves ${relays.relays[0].count} + ${relays.relays[0].forged} forged, ` +
    `relay B ${relays.relays[1].count} + ${relays.relays[1].forged} forged (${relays.relays[0].count + relays.relays[1].count} valid EVENT frames for ${corpus.valid.length} distinct events)`);
  log(`# medians of ${o.repeats} run(s), each a fresh client; µs per delivered event`);
  const recipes = await import(pathToFileURL(await bundle("node")));
  checkTheChecker(recipes, corpus);
  const all = [];
  let ok = true;
  try {
    for (const engine of o.engine === "both" ? ["node", "chromium"] : [o.engine]) {
      const runs = engine === "node" ? await inNode(o, corpus, relays, log, pkgs) : await inChromium(o, corpus, relays, log, pkgs);
      log("");
      printTables(engine, runs, o, log, recipes);
      ok = checkRuns(runs, log) && ok;
      log(`# load average at the end of ${engine}: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
      all.push(...runs);
    }
  } finally {
    await relays.stop();
  }
  if (o.wasmPkgs) rmSync(join(cacheDir, `pkgs-${process.pid}`), { recursive: true, force: true });
  if (o.json) writeFileSync(o.json, JSON.stringify(all, null, 1));
  if (!ok) die("some runs did not deliver exactly the valid events (see FAILED above)");
}

main().catch((e) => die(e.stack ?? String(e)));
