// A small NIP-01 relay on 127.0.0.1 for the client tests and the tap benchmark, on the `ws`
// package's WebSocketServer. Read-only: it answers REQ from the events it was given, and can
// be told to serve forged ones.
//
// In-process:
//   import { startRelay } from "./relay.mjs";
//   const relay = await startRelay({
//     events: [],     // stored events: objects, or JSON strings sent verbatim (e.g. a corpus
//                     // line) and parsed for matching
//     forged: [],     // more events (same forms) mixed into the answers like stored ones: for
//                     // forged copies; an answer is sorted newest first (created_at, then
//                     // a forged copy before the stored event with the same id)
//     first: [],      // events sent FIRST in every answer, before the sorted ones (the
//                     // forged-first copies), when they match the REQ's filters
//     delayMs: 0,     // wait this long after a REQ before answering it (an honest relay that
//                     // lets another relay's forged copies arrive first)
//     port: 0, host: "127.0.0.1",
//   });
//   relay.url         // "ws://127.0.0.1:PORT"
//   relay.stats()     // { connections, open, reqs, closes, events (EVENT frames sent), eose, notices, closed }
//   await relay.close()  // terminates the clients and stops the server
//
// As a child process (for the benchmark, so that the relay's CPU is not the client's):
//   node relay.mjs [--port 0] [--host 127.0.0.1] [--events FILE.jsonl] [--forged FILE.jsonl]
//                  [--first FILE.jsonl] [--delay-ms N]
// prints its URL (one line) on stdout once listening, serves until SIGTERM/SIGINT or, when its stdin
// is a pipe, until that closes, then prints its stats as one JSON line on stderr. FILE.jsonl: one event per line,
// sent verbatim.
//
// Protocol: ["REQ", sub, filter...] -> matching ["EVENT", sub, event]... then ["EOSE", sub]
// (the subscription stays open; nothing new arrives); a REQ with an open sub id replaces it.
// Filters: ids, authors, kinds, since, until, limit (per filter: the newest `limit`), "#x" tag
// filters; several filters: the union. ["CLOSE", sub] ends it (and a pending delayed answer).
// ["COUNT", sub, filter...] -> ["COUNT", sub, { count }]. A bad REQ/COUNT (no string sub id, a
// filter that is not an object or has a malformed field) -> ["CLOSED", sub, "error: ..."];
// an unparseable frame or an unknown verb -> ["NOTICE", "..."]; ["EVENT", event] ->
// ["OK", id, false, "blocked: read-only relay"]; AUTH is ignored.
import { WebSocketServer } from "ws";
import { createInterface } from "node:readline";
import { fstatSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

function entry(e, forged) {
  return typeof e === "string" ? { event: JSON.parse(e), json: e, forged } : { event: e, json: JSON.stringify(e), forged };
}

const isStrings = (v) => Array.isArray(v) && v.every((s) => typeof s === "string");
const isInts = (v) => Array.isArray(v) && v.every((n) => Number.isInteger(n));

/** Why a filter is malformed, or "" when it is fine. */
function badFilter(f) {
  if (f === null || typeof f !== "object" || Array.isArray(f)) return "a filter is not an object";
  for (const [k, v] of Object.entries(f)) {
    if (k === "ids" || k === "authors") {
      if (!isStrings(v)) return `${k} is not an array of strings`;
    } else if (k === "kinds") {
      if (!isInts(v)) return "kinds is not an array of integers";
    } else if (k === "since" || k === "until" || k === "limit") {
      if (!Number.isInteger(v) || v < 0) return `${k} is not a non-negative integer`;
    } else if (/^#[a-zA-Z]$/.test(k)) {
      if (!isStrings(v)) return `${k} is not an array of strings`;
    } else if (k === "search") {
      return "search is not supported";
    }
    // Other keys are ignored, as most relays do.
  }
  return "";
}

function matches(f, e) {
  if (f.ids && !f.ids.includes(e.id)) return false;
  if (f.authors && !f.authors.includes(e.pubkey)) return false;
  if (f.kinds && !f.kinds.includes(e.kind)) return false;
  if (f.since !== undefined && e.created_at < f.since) return false;
  if (f.until !== undefined && e.created_at > f.until) return false;
  for (const k of Object.keys(f)) {
    if (k.length === 2 && k[0] === "#") {
      const want = f[k];
      if (!Array.isArray(e.tags) || !e.tags.some((t) => Array.isArray(t) && t[0] === k[1] && want.includes(t[1]))) return false;
    }
  }
  return true;
}

/** Newest first; at equal created_at, a forged copy before the real one with the same id, then by id. */
function newestFirst(x, y) {
  return y.event.created_at - x.event.created_at || (x.event.id < y.event.id ? -1 : x.event.id > y.event.id ? 1 : 0) || (y.forged ? 1 : 0) - (x.forged ? 1 : 0);
}

/** The entries matching any of `filters` (each with its own limit), each entry at most once, newest first. */
function select(sorted, filters) {
  const out = new Set();
  for (const f of filters) {
    let n = 0;
    const limit = f.limit ?? Infinity;
    if (limit === 0) continue;
    for (const x of sorted) {
      if (!matches(f, x.event)) continue;
      out.add(x);
      if (++n >= limit) break;
    }
  }
  return [...out].sort(newestFirst);
}

export async function startRelay({ events = [], forged = [], first = [], delayMs = 0, port = 0, host = "127.0.0.1" } = {}) {
  const sorted = [...events.map((e) => entry(e, false)), ...forged.map((e) => entry(e, true))].sort(newestFirst);
  const firsts = first.map((e) => entry(e, true));
  const st = { connections: 0, open: 0, reqs: 0, closes: 0, events: 0, eose: 0, notices: 0, closed: 0 };
  const wss = new WebSocketServer({ host, port, perMessageDeflate: false });
  await new Promise((ok, fail) => {
    wss.once("listening", ok);
    wss.once("error", fail);
  });
  wss.on("connection", (ws) => {
    st.connections++;
    st.open++;
    const pending = new Map(); // sub id -> timer of a delayed answer
    const notice = (msg) => {
      st.notices++;
      ws.send(JSON.stringify(["NOTICE", msg]));
    };
    const answer = (sub, filters) => {
      pending.delete(sub);
      if (ws.readyState !== ws.OPEN) return;
      const head = `["EVENT",${JSON.stringify(sub)},`;
      for (const x of firsts) {
        if (filters.some((f) => f.limit !== 0 && matches(f, x.event))) {
          ws.send(head + x.json + "]");
          st.events++;
        }
      }
      for (const x of select(sorted, filters)) {
        ws.send(head + x.json + "]");
        st.events++;
      }
      ws.send(JSON.stringify(["EOSE", sub]));
      st.eose++;
    };
    ws.on("close", () => {
      st.open--;
      for (const t of pending.values()) clearTimeout(t);
      pending.clear();
    });
    ws.on("error", () => {});
    ws.on("message", (data, isBinary) => {
      let msg;
      try {
        if (isBinary) throw new Error("binary");
        msg = JSON.parse(data.toString());
      } catch {
        return notice("error: could not parse the message");
      }
      if (!Array.isArray(msg) || typeof msg[0] !== "string") return notice("error: a message must be an array starting with a string");
      const [verb, sub, ...filters] = msg;
      if (verb === "REQ" || verb === "COUNT") {
        const closed = (why) => {
          st.closed++;
          ws.send(JSON.stringify(["CLOSED", typeof sub === "string" ? sub : "", `error: ${why}`]));
        };
        if (typeof sub !== "string" || sub === "") return closed("the subscription id must be a non-empty string");
        if (filters.length === 0) return closed("no filter");
        for (const f of filters) {
          const why = badFilter(f);
          if (why) return closed(why);
        }
        if (verb === "COUNT") return ws.send(JSON.stringify(["COUNT", sub, { count: select(sorted, filters).length }]));
        st.reqs++;
        clearTimeout(pending.get(sub));
        if (delayMs > 0) pending.set(sub, setTimeout(answer, delayMs, sub, filters));
        else answer(sub, filters);
      } else if (verb === "CLOSE") {
        st.closes++;
        clearTimeout(pending.get(sub));
        pending.delete(sub);
      } else if (verb === "EVENT") {
        const id = sub && typeof sub === "object" && typeof sub.id === "string" ? sub.id : "";
        ws.send(JSON.stringify(["OK", id, false, "blocked: read-only relay"]));
      } else if (verb !== "AUTH") {
        notice(`error: unknown message type ${JSON.stringify(verb)}`);
      }
    });
  });
  const { port: bound } = wss.address();
  return {
    url: `ws://${host}:${bound}`,
    stats: () => ({ ...st }),
    close: () =>
      new Promise((ok) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => ok());
      }),
  };
}

function readJsonl(file) {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
}

async function main(argv) {
  const opts = { port: 0, host: "127.0.0.1", events: [], forged: [], first: [], delayMs: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = argv[++i];
    if (v === undefined) throw new Error(`relay.mjs: ${a} needs a value`);
    if (a === "--port") opts.port = Number(v);
    else if (a === "--host") opts.host = v;
    else if (a === "--delay-ms") opts.delayMs = Number(v);
    else if (a === "--events" || a === "--forged" || a === "--first") opts[a.slice(2)] = readJsonl(v);
    else throw new Error(`relay.mjs: unknown option ${a}`);
  }
  const relay = await startRelay(opts);
  process.stdout.write(`${relay.url}\n`);
  let done = false;
  const stop = async () => {
    if (done) return;
    done = true;
    await relay.close();
    process.stderr.write(`${JSON.stringify(relay.stats())}\n`);
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  // Stop with the parent: when stdin is a pipe, its end means the parent is gone.
  if (fstatSync(0).isFIFO()) createInterface({ input: process.stdin }).on("close", stop);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  main(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`${e.stack ?? e}\n`);
    process.exit(1);
  });
}
