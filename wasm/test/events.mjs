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

/**
 * EVENT frames as a relay could write them, byte for byte: [what, text, rustDecides] for
 * each. rustDecides: whether the tap's Rust frame reader (nostr-verify-wasm/src/frames.rs)
 * must decide the frame itself; the others it must leave to JSON.parse. Whatever a frame is,
 * its verdict must be nostr-tools' verifyEvent on what JSON.parse makes of it (`frameVerdict`).
 */
export function rawFrames() {
  const out = [];
  const add = (what, text, rustDecides) => out.push([what, text, rustDecides]);
  const a = author(40);
  const b = author(41);
  const signed = (extra) =>
    sign({ pubkey: a.pubkey, created_at: 1700000000, kind: 1, tags: [["t", "x"]], content: "raw", ...extra }, a.sk);
  const obj = (e) => JSON.stringify(e);
  const wrap = (body, sub = '"s"') => `["EVENT",${sub},${body}]`;
  let n = 0;
  // Each frame distinct (the tap shares verdicts between identical texts): a fresh event.
  const fresh = (extra = {}) => signed({ created_at: 1700000000 + n++, ...extra });

  add("canonical", wrap(obj(fresh())), true);
  const e1 = fresh();
  const reordered = `{"sig":"${e1.sig}","tags":${JSON.stringify(e1.tags)},"kind":1,"content":"raw","created_at":${e1.created_at},"pubkey":"${e1.pubkey}","id":"${e1.id}"}`;
  add("fields in another order", wrap(reordered), true);
  add("whitespace and newlines between tokens", ` [ "EVENT" ,\n\t"s" ,\r\n${obj(fresh()).replace(/,"/g, ' ,\n  "').replace(/":/g, '" : ')} ]\n`, true);
  const e2 = fresh();
  add("escaped key names", wrap(obj(e2).replace('"id":', '"\\u0069d":').replace('"kind":', '"k\\u0069nd":')), true);
  const e3 = fresh({ content: "A/b\u00e9" });
  add("content with needless escapes", wrap(obj(e3).replace('"A/b\u00e9"', '"\\u0041\\/b\\u00E9"')), true);
  add("content of every escape class", wrap(obj(fresh({ content: 'q"b\\s\n\r\t\b\f\u0000\u001f\u007f\u2028 é€🌍' }))), true);
  add("tags of unicode and escapes", wrap(obj(fresh({ tags: [["t", "🌍"], ["e", "a\"b", "\\", ""], []] }))), true);
  add("extra elements after the event", `["EVENT","s",${obj(fresh())},"more",{"x":[1,2]}]`, true);
  add("unknown fields, repeated", wrap(obj(fresh()).replace("{", '{"x":1,"x":{"y":[null,true]},"__proto__":{"kind":7},')), true);
  add("sub id with escapes", wrap(obj(fresh()), '"a\\"b\\u00e9"'), true);
  add("created_at 2^53 - 1", wrap(obj(fresh({ created_at: 2 ** 53 - 1, content: "max" }))), true);
  add("negative created_at and kind", wrap(obj(fresh({ created_at: -5, kind: -1 }))), true);
  add("created_at 0", wrap(obj(fresh({ created_at: 0, content: "zero" }))), true);
  add("uppercase id", wrap(obj({ ...fresh(), id: fresh().id.toUpperCase() })), true);
  const e4 = fresh();
  add("id escaped to non-ASCII", wrap(obj(e4).replace(`"id":"${e4.id[0]}`, '"id":"\\u00e9')), true);
  add("sig of another event", wrap(obj({ ...fresh(), sig: fresh().sig })), true);
  add("content altered", wrap(obj({ ...fresh(), content: "altered" })), true);
  add("pubkey of another author", wrap(obj({ ...fresh(), pubkey: b.pubkey })), true);
  add("short sig", wrap(obj({ ...fresh(), sig: "ab" })), true);
  add("missing field", wrap(obj({ ...fresh(), sig: undefined })), false);
  add("content a number", wrap(obj(fresh()).replace('"content":"raw"', '"content":5')), false);
  add("tag with a number", wrap(obj(fresh()).replace('["t","x"]', '["t",5]')), false);
  add("tag an object", wrap(obj(fresh()).replace('["t","x"]', '{"t":"x"}')), false);
  // Numbers JSON.parse reads as integers, but not written as plain integer tokens.
  const e5 = fresh();
  add("created_at with a fraction of zero", wrap(obj(e5).replace(`"created_at":${e5.created_at}`, `"created_at":${e5.created_at}.0`)), false);
  const e6 = fresh();
  add("created_at with an exponent", wrap(obj(e6).replace(`"created_at":${e6.created_at}`, `"created_at":${e6.created_at / 100}e2`)), false);
  const e7 = fresh({ kind: 0 });
  add("kind -0", wrap(obj(e7).replace('"kind":0', '"kind":-0')), false);
  add("created_at 2^53", wrap(obj(fresh({ created_at: 2 ** 53, content: "2^53" }))), false);
  add("created_at 1e21", wrap(obj(fresh({ created_at: 1e21 }))), false);
  add("fractional created_at", wrap(obj(fresh({ created_at: 1.5 }))), false);
  const e8 = fresh({ content: "a\ud800b" });
  add("content with an escaped lone surrogate", wrap(obj(e8)), false);
  // Duplicated fields: JSON.parse keeps the last one.
  const e9 = fresh();
  add("content twice, the real one last", wrap(obj(e9).replace('"content":"raw"', '"content":"forged","content":"raw"')), false);
  const e10 = fresh();
  add("content twice, a forged one last", wrap(obj(e10).replace('"content":"raw"', '"content":"raw","content":"forged"')), false);
  add("event an array", wrap(JSON.stringify(Object.values(fresh()))), false);
  add("event null", wrap("null"), false);
  add("sub id a number", wrap(obj(fresh()), "5"), false);
  add("no event", '["EVENT","s"]', false);
  add("EVENTS", `["EVENTS","s",${obj(fresh())}]`, false);
  add("truncated", wrap(obj(fresh())).slice(0, -9), false);
  add("trailing comma", `["EVENT","s",${obj(fresh())},]`, false);
  add("byte order mark", "\ufeff" + wrap(obj(fresh())), false);
  add("raw control character in content", wrap(obj(fresh({ content: "tab" })).replace('"tab"', '"t\u0001b"')), false);
  add("single quotes", wrap(obj(fresh())).replace('"EVENT"', "'EVENT'"), false);
  add("canonical, after all that", wrap(obj(fresh())), true);
  return out;
}

/** The event of a frame's text as the tap's JavaScript path reads it, or null (not an EVENT frame). */
export function frameEvent(text) {
  let m;
  try {
    m = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(m) || m.length < 3 || m[0] !== "EVENT" || typeof m[1] !== "string") return null;
  return m[2];
}

/** nostr-tools' verdict (1/0) on the event of a frame's text, as the tap's JavaScript path reads it. */
export function frameVerdict(text) {
  const event = frameEvent(text);
  return event === null ? 0 : expected(() => event);
}
