// Nostr events for the package tests: signed ones, mutated ones and malformed ones, each made
// fresh by a factory (so that no verifier sees an object another one has touched), with the
// expected verdict taken from nostr-tools' own verifyEvent.
import { schnorr } from "@noble/curves/secp256k1.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { verifyEvent as nostrToolsVerify } from "nostr-tools/pure";

const utf8 = new TextEncoder();

/** A deterministic secret key. */
export function secretKey(i) {
  return sha256(utf8.encode(`nostr-verify-wasm test key ${i}`));
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

/** Signs fields as NIP-01 says, whatever they are: id = sha256(JSON.stringify([...])). */
export function sign(fields, sk) {
  const ser = JSON.stringify([0, fields.pubkey, fields.created_at, fields.kind, fields.tags, fields.content]);
  const id = sha256(utf8.encode(ser));
  return { ...fields, id: bytesToHex(id), sig: bytesToHex(schnorr.sign(id, sk)) };
}

export function author(i) {
  const sk = secretKey(i);
  return { sk, pubkey: bytesToHex(schnorr.getPublicKey(sk)) };
}

const clone = (e) => ({ ...e, tags: Array.isArray(e.tags) ? e.tags.map((t) => (Array.isArray(t) ? [...t] : t)) : e.tags });

function flipHex(s, at) {
  const c = s[at];
  const d = "0123456789abcdef"[("0123456789abcdef".indexOf(c.toLowerCase()) + 1) % 16];
  return s.slice(0, at) + d + s.slice(at + 1);
}

/**
 * [what, factory, jsonSafe] for every case. jsonSafe: survives JSON.stringify/JSON.parse
 * unchanged (what the browser test can ship to the page).
 */
export function cases() {
  const out = [];
  const add = (what, make, jsonSafe = true) => out.push([what, make, jsonSafe]);
  const authors = Array.from({ length: 8 }, (_, i) => author(i));
  const note = (a, content, extra = {}) =>
    sign({ pubkey: a.pubkey, created_at: 1700000000, kind: 1, tags: [["t", "nostr"]], content, ...extra }, a.sk);
  for (let i = 0; i < 24; i++) {
    const e = note(authors[i % 8], `hello ${i}`, { created_at: 1700000000 + i });
    add("valid", () => clone(e));
  }
  const a = authors[0];
  const base = note(a, "base");
  const other = note(authors[1], "other");
  for (const [what, content] of [
    ["unicode content", "héllo 🌍 \u2028 \u007f ﷽"],
    ["escaped content", 'q"b\\s/\n\r\t\u0001\u001f'],
    ["lone surrogate content", "a\ud800b"],
    ["empty content", ""],
  ]) {
    const e = note(a, content, { tags: [] });
    add(what, () => clone(e));
  }
  const variants = [
    ["fractional created_at", { created_at: 1.5 }],
    ["huge numbers", { created_at: 1e21, kind: 1e300 }],
    ["negative kind", { kind: -1 }],
    ["many tags", { tags: [["p", a.pubkey, "wss://r", ""], [], ["e"]] }],
  ];
  for (const [what, extra] of variants) {
    const e = note(a, "x", extra);
    add(what, () => clone(e));
  }
  // Strings drawn from every class JSON.stringify treats apart (quotes, backslashes, each
  // escaped control, other controls, DEL, 2-, 3- and 4-byte UTF-8, U+2028, lone and paired
  // surrogates), in content and tags, with integer timestamps of every size: the browsers'
  // packer writes the serialization's UTF-8 itself, and each of these must hash as nostr-tools'
  // JSON.stringify and TextEncoder do.
  const pool = ['a', 'Z', ' ', '/', '"', "\\", "\b", "\t", "\n", "\f", "\r", "\u0000", "\u0001", "\u001f",
    "\u007f", "é", "ß", "€", "\u2028", "\ud800", "\udbff", "\udc00", "\udfff", "🌍", "\uffff", "\u0800"];
  const r = rng(2024);
  const randomString = () => {
    let out = "";
    const len = r() % 12;
    for (let i = 0; i < len; i++) out += pool[r() % pool.length];
    return out;
  };
  for (let i = 0; i < 40; i++) {
    const tags = Array.from({ length: r() % 3 }, () => Array.from({ length: r() % 3 }, randomString));
    const created_at = [0, 9, 10, 1700000000, 2 ** 53 - 1, r()][i % 6];
    const e = sign({ pubkey: authors[i % 8].pubkey, created_at, kind: r() % 40000, tags, content: randomString() }, authors[i % 8].sk);
    add("random strings", () => clone(e));
  }
  add("non-ASCII in the id", () => ({ ...clone(base), id: "é" + base.id.slice(1) }));
  add("non-ASCII in the pubkey", () => ({ ...clone(base), pubkey: "é" + base.pubkey.slice(1) }));
  add("non-ASCII in the sig", () => ({ ...clone(base), sig: base.sig.slice(0, 127) + "é" }));
  // A toJSON on the tags or on a tag: JSON.stringify calls it, so the id covers what it returns.
  const withToJSON = (on) => {
    const tags = [["t", "shown"]];
    const target = on === "tags" ? tags : tags[0];
    target.toJSON = () => (on === "tags" ? [["t", "replaced"]] : ["t", "replaced"]);
    return tags;
  };
  for (const on of ["tags", "tag"]) {
    const e = sign({ pubkey: a.pubkey, created_at: 1, kind: 1, tags: withToJSON(on), content: "x" }, a.sk);
    add(`toJSON on the ${on}`, () => ({ ...e, tags: withToJSON(on) }), false);
  }
  const nan = note(a, "x", { kind: NaN });
  add("NaN kind", () => clone(nan), false);
  add("extra field", () => ({ ...clone(base), relay: "wss://x" }));
  add("uppercase sig", () => ({ ...clone(base), sig: base.sig.toUpperCase() }));
  for (const at of [0, 63, 64, 127]) {
    add(`sig digit ${at} changed`, () => ({ ...clone(base), sig: flipHex(base.sig, at) }));
  }
  add("id digit changed", () => ({ ...clone(base), id: flipHex(base.id, 10) }));
  add("sig of another event", () => ({ ...clone(base), sig: other.sig }));
  add("id of another event", () => ({ ...clone(base), id: other.id }));
  add("uppercase id", () => ({ ...clone(base), id: base.id.toUpperCase() }));
  add("content changed", () => ({ ...clone(base), content: "based" }));
  add("pubkey of another author", () => ({ ...clone(base), pubkey: other.pubkey }));
  const upper = sign({ pubkey: a.pubkey.toUpperCase(), created_at: 1, kind: 1, tags: [], content: "x" }, a.sk);
  add("uppercase pubkey (signed as such)", () => clone(upper));
  add("kind as string", () => ({ ...clone(base), kind: "1" }));
  add("created_at as string", () => ({ ...clone(base), created_at: "1700000000" }));
  add("content as number", () => ({ ...clone(base), content: 5 }));
  add("tags not an array", () => ({ ...clone(base), tags: "t" }));
  add("tag not an array", () => ({ ...clone(base), tags: ["t"] }));
  add("tag with a number", () => ({ ...clone(base), tags: [[5]] }));
  add("short pubkey", () => ({ ...clone(base), pubkey: base.pubkey.slice(2) }));
  add("short sig", () => ({ ...clone(base), sig: base.sig.slice(2) }));
  add("long sig", () => ({ ...clone(base), sig: base.sig + "00" }));
  add("sig with a non-hex digit", () => ({ ...clone(base), sig: "z" + base.sig.slice(1) }));
  add("sig as number", () => ({ ...clone(base), sig: 7 }));
  add("id as number", () => ({ ...clone(base), id: 7 }));
  add("sig missing", () => {
    const e = clone(base);
    delete e.sig;
    return e;
  });
  add("null", () => null);
  add("number", () => 42);
  add("string", () => "{}");
  add("array", () => []);
  add("empty object", () => ({}));
  add("undefined", () => undefined, false);
  add("object without prototype", () => Object.assign(Object.create(null), clone(base)), false);
  add(
    "throwing getter",
    () => {
      const e = clone(base);
      Object.defineProperty(e, "content", { get() { throw new Error("getter"); } });
      return e;
    },
    false,
  );
  for (let i = 0; i < 8; i++) {
    const e = note(authors[i], "after");
    add("valid after the malformed", () => clone(e));
  }
  return out;
}

/** `n` events from `k` authors with about one in `every` mutated (id, sig or content). */
export function randomBatch(n, k, every, seed) {
  const r = rng(seed);
  const authors = Array.from({ length: k }, (_, i) => author(100 + i));
  const out = [];
  for (let i = 0; i < n; i++) {
    const a = authors[r() % k];
    let e = sign({ pubkey: a.pubkey, created_at: 1700000000 + (r() % 100000), kind: 1, tags: [], content: `n${i} ${r()}` }, a.sk);
    if (every && r() % every === 0) {
      const m = r() % 3;
      if (m === 0) e = { ...e, id: flipHex(e.id, r() % 64) };
      else if (m === 1) e = { ...e, sig: flipHex(e.sig, r() % 128) };
      else e = { ...e, content: e.content + "!" };
    }
    out.push(e);
  }
  return out;
}

/** nostr-tools' verdict on a fresh copy of the event. */
export function expected(make) {
  try {
    return nostrToolsVerify(make()) ? 1 : 0;
  } catch {
    return 0;
  }
}
