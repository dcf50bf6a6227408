// The real Nostr events of ../shared/data for the client tests and the tap benchmark, read in
// place (never copied into the repository), with the reference verdicts of
// events-real.index.tsv, and forged copies of them.
//
// Interface (ES module; no dependencies):
//   dataDir()                 the data directory: $NOSTR_VERIFY_DATA, else ../shared/data beside
//                             the checkout (the checkout root's parent).
//   loadCorpus()              { dir, items } or null. items: one per line of events-real.jsonl,
//                             { line, json, event, idOk, sigOk, valid } (json: the line's exact
//                             text; valid: id_ok && sig_ok from the index). When the corpus is
//                             missing it prints a loud message to stderr and returns null; under
//                             CI=true it throws instead. Cached: one read per process.
//   missingReason()           why loadCorpus() returned null (a string), for test skip messages.
//   forge(event, how, seed?)  a forged copy (a new object) of `event`: how = "badId" (content
//                             altered, id and sig kept: the id no longer matches),
//                             "badSig" (one hex digit of the sig changed), "newId" (content
//                             altered and the id recomputed, sig kept: the sig no longer
//                             matches; a different event, not a copy).
//   scenario(corpus, opts)    two relays' stored events for a fetch from both (see below).
//   rng(seed)                 a small deterministic PRNG (xorshift32).
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join, resolve } from "node:path";

const checkoutRoot = resolve(fileURLToPath(new URL("../../", import.meta.url)));

export function dataDir() {
  return process.env.NOSTR_VERIFY_DATA ? resolve(process.env.NOSTR_VERIFY_DATA) : resolve(checkoutRoot, "..", "shared", "data");
}

let cached;
let reason = "";

export function missingReason() {
  return reason;
}

export function loadCorpus() {
  if (cached !== undefined) return cached;
  const dir = dataDir();
  const jsonl = join(dir, "events-real.jsonl");
  const tsv = join(dir, "events-real.index.tsv");
  if (!existsSync(jsonl) || !existsSync(tsv)) {
    reason = `the real-event corpus is missing: ${jsonl} or ${tsv} not found (set NOSTR_VERIFY_DATA=DIR)`;
    if (process.env.CI === "true") throw new Error(`wasm/clients: ${reason}; CI=true, so this fails`);
    process.stderr.write(`\n!!! wasm/clients: ${reason}: SKIPPING the tests that need it !!!\n\n`);
    cached = null;
    return cached;
  }
  const lines = readFileSync(jsonl, "utf8").split("\n");
  if (lines.at(-1) === "") lines.pop();
  const rows = readFileSync(tsv, "utf8").split("\n").filter((l) => l !== "");
  const head = rows.shift().split("\t");
  const col = (name) => {
    const i = head.indexOf(name);
    if (i < 0) throw new Error(`${tsv}: no column ${name}`);
    return i;
  };
  const [cLine, cId, cIdOk, cSigOk] = ["line", "id", "id_ok", "sig_ok"].map(col);
  if (rows.length !== lines.length) throw new Error(`${tsv}: ${rows.length} rows for ${lines.length} lines of ${jsonl}`);
  const items = rows.map((r, i) => {
    const f = r.split("\t");
    const line = Number(f[cLine]);
    if (line !== i + 1) throw new Error(`${tsv}: row ${i + 1} is for line ${f[cLine]}`);
    const json = lines[i];
    const event = JSON.parse(json);
    if (event.id !== f[cId]) throw new Error(`${tsv}: line ${line}: id ${f[cId]} but the event has ${event.id}`);
    const idOk = f[cIdOk] === "1";
    const sigOk = f[cSigOk] === "1";
    return { line, json, event, idOk, sigOk, valid: idOk && sigOk };
  });
  cached = { dir, items };
  return cached;
}

/** A small deterministic PRNG (xorshift32), so that failures reproduce. */
export function rng(seed) {
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

const hex = "0123456789abcdef";

function flipHex(s, at) {
  const d = hex[(hex.indexOf(s[at]) + 1) % 16];
  return s.slice(0, at) + d + s.slice(at + 1);
}

/** NIP-01: sha256 of the serialization, as nostr-tools' getEventHash computes it. */
export function eventHash(e) {
  const ser = JSON.stringify([0, e.pubkey, e.created_at, e.kind, e.tags, e.content]);
  return createHash("sha256").update(ser, "utf8").digest("hex");
}

export function forge(event, how, seed = 1) {
  const e = { ...event, tags: event.tags.map((t) => [...t]) };
  const r = rng(seed);
  switch (how) {
    case "badId":
      e.content = `${e.content} (forged ${seed})`;
      return e;
    case "badSig":
      e.sig = flipHex(e.sig, r() % 128);
      return e;
    case "newId":
      e.content = `${e.content} (forged ${seed})`;
      e.id = eventHash(e);
      return e;
    default:
      throw new Error(`forge: unknown forgery ${how}`);
  }
}

/**
 * Whether a scenario uses the item: not a deletion (kind 5: EventStores apply them, which is not
 * verification) and not expired (NIP-40: relays do not serve them, rx-nostr and applesauce drop them).
 */
export function served(it) {
  if (it.event.kind === 5) return false;
  const exp = it.event.tags.find((t) => t[0] === "expiration");
  return !(exp && Number(exp[1]) <= Date.now() / 1000);
}

/**
 * Two relays for one fetch (corpus items that are `served`). From `count` corpus lines (every `stride`th line from `offset`;
 * the corpus' invalid lines always included, spread over the three parts), relay A stores the
 * first 2/3 and relay B the last 2/3 (a third served by both). B also stores, for every
 * `forgeEvery`th valid event that only A serves, a forged copy of it (alternately "badId" and
 * "badSig") in `first` (to be sent first, before anything else: the forged-first copies), and
 * for every `forgeEvery`th valid event that B serves, a forged copy in `forged` (mixed into B's
 * answer, just before the valid copy), plus `newIds` forged events of kind "newId" in `forged`.
 * With `seed` (0: none) the picked lines are shuffled before they are split.
 *
 * Returns { a: { items }, b: { items, first, forged }, valid: Map(id -> event), invalidReal:
 * { a, b } (counts of the corpus' own invalid events each relay stores, all with a bad id),
 * forgedBy: { badId, badSig } (counts of B's forgeries by reason), forgedIds: Set of the
 * forgeries' ids (new ids included) }. items are corpus items ({ json, event, ... }); first and
 * forged are event objects.
 */
export function scenario(corpus, { count = 6000, offset = 0, stride = 1, forgeEvery = 3, newIds = 5, seed = 47 } = {}) {
  const all = corpus.items.filter(served);
  const picked = [];
  for (let i = offset; i < all.length && picked.length < count; i += stride) picked.push(all[i]);
  // The corpus' invalid lines, spread over the three parts (only A, both, only B).
  const missing = all.filter((it) => !it.valid && !picked.includes(it));
  missing.forEach((it, j) => picked.splice(Math.floor(((j + 0.5) * picked.length) / missing.length), 0, it));
  if (seed) {
    // A deterministic shuffle, so that each part holds every kind of event (and invalid ones).
    const r = rng(seed);
    for (let i = picked.length - 1; i > 0; i--) {
      const j = r() % (i + 1);
      [picked[i], picked[j]] = [picked[j], picked[i]];
    }
  }
  const third = Math.floor(picked.length / 3);
  const aItems = picked.slice(0, picked.length - third);
  const bItems = picked.slice(third);
  const onlyA = picked.slice(0, third);
  const first = [];
  const forged = [];
  const forgedBy = { badId: 0, badSig: 0 };
  const forgedIds = new Set();
  let n = 0;
  const add = (list, it) => {
    const how = n % 2 === 0 ? "badId" : "badSig";
    const f = forge(it.event, how, ++n);
    list.push(f);
    forgedBy[how]++;
    forgedIds.add(f.id);
  };
  onlyA.forEach((it, i) => i % forgeEvery === 0 && it.valid && add(first, it));
  bItems.forEach((it, i) => i % forgeEvery === 1 && it.valid && add(forged, it));
  for (let i = 0; i < newIds; i++) {
    const f = forge(bItems[i * 7].event, "newId", 1000 + i);
    forged.push(f);
    forgedBy.badSig++;
    forgedIds.add(f.id);
  }
  const valid = new Map();
  for (const it of picked) if (it.valid) valid.set(it.event.id, it.event);
  return {
    a: { items: aItems },
    b: { items: bItems, first, forged },
    valid,
    invalidReal: { a: aItems.filter((it) => !it.valid).length, b: bItems.filter((it) => !it.valid).length },
    forgedBy,
    forgedIds,
  };
}
