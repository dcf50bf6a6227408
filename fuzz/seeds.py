#!/usr/bin/env python3
"""Writes the committed seed corpora, fuzz/corpus/<target>/ (see docs/fuzzing.md).

Deterministic: the same files every run. Events come from the shared real-event data
($NOSTR_VERIFY_DATA, default ../shared/data beside the repository): the shortest events of a
few kinds, a few malformed ones, and byte strings that steer the generator targets
(verify_batch, gift_wrap) to each of their mutations. Run from anywhere:
    python3 fuzz/seeds.py
"""
import hashlib
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DATA = os.environ.get("NOSTR_VERIFY_DATA", os.path.join(REPO, "..", "shared", "data"))
OUT = os.path.join(HERE, "corpus")


def write(target, items):
    """Replaces the generated seeds of `target`; keeps its `regress-*` files (inputs of past
    findings, committed by hand)."""
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(d):
        if not name.startswith("regress-"):
            os.remove(os.path.join(d, name))
    for item in items:
        if isinstance(item, str):
            item = item.encode()
        name = hashlib.sha1(item).hexdigest()
        with open(os.path.join(d, name), "wb") as f:
            f.write(item)
    print(f"{target}: {len(items)} seeds")


def lines(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f if l.strip()]


# The shortest valid event of each of a few kinds, plus events with escapes in the content.
real = lines("events-real.jsonl")
# Keep the events whose id and signature are valid (the index says which are not).
with open(os.path.join(DATA, "events-real.index.tsv"), encoding="utf-8") as f:
    rows = [r.rstrip("\n").split("\t") for r in f][1:]
real = [l for l, r in zip(real, rows) if r[4] == "1" and r[5] == "1"]
by_kind = {}
for l in sorted(real, key=len):
    k = json.loads(l)["kind"]
    by_kind.setdefault(k, l)
events = [by_kind[k] for k in sorted(by_kind)][:12]
escaped = [l for l in sorted(real, key=len) if "\\n" in l or "\\u" in l or '\\"' in l][:4]
events += escaped
malformed = lines("events-real-malformed.jsonl")[:3]

# event_json: events as they are, a copy with the id field bumped, and malformed ones.
ej = events + malformed + [
    events[1].replace('"kind":', '"kind": ', 1),
    events[2].replace(json.loads(events[2])["content"][:1], "\\u0041", 1) if json.loads(events[2])["content"] else events[2],
    "{}",
]
write("event_json", ej)

# cli_line: the three accepted forms, bad hex, blank, not UTF-8, other messages.
e0, e1 = events[0], events[1]
cl = [
    e0,
    f'["EVENT","sub",{e1}]',
    f'  ["EVENT", {e0}]\t',
    e0.replace('"pubkey":"', '"pubkey":"00', 1),
    e0.replace('"sig":"', '"sig":"A', 1),
    " \t ",
    b"\xff" + e0.encode(),
    '["NOTICE","hi"]',
    f'["EVENT","a","b",{e0}]',
    "42",
] + malformed[:2]
write("cli_line", cl)

# relay_frame: frames of ours (bv:1), of another subscription, control frames, several frames
# per input (one a line), and frames followed by others.
def ev(sub, e):
    return f'["EVENT","{sub}",{e}]'

rf = [
    ev("bv:1", e0),
    ev("other", e1),
    '["EOSE","bv:1"]',
    '["CLOSED","bv:1","auth-required: x"]',
    '["NOTICE","hello"]',
    "\n".join([ev("bv:1", e0), ev("bv:1", e1), '["EOSE","bv:1"]']),
    "\n".join([ev("bv:1", e0), '["NOTICE","n"]', ev("bv:1", events[2])]),
    "\n".join([ev("x", e0), ev("bv:1", e1), '["OK","00","true",""]']),
    ev("bv:2", e0),
    ev("bv\\u003a1", e1),
    ev("bv:1", e0.replace('"content":"', '"content":"x', 1)),
    f' [ "EVENT" , "bv:1" , {e0} ] ',
    ev("bv:1", e0)[:-1] + ',"extra"]',
    # Regression (the tap trimmed Unicode spaces the SDK's parser rejects): U+00A0 first.
    "\u00a0" + ev("bv:1", e0),
]
write("relay_frame", rf)

# verify_batch: [count, mode, then (op, arg, lo, hi) per signature, raw bytes where an op
# takes them]. Ops 0-14 mutate, the rest leave a pool signature as it is.
def vb(count, mode, ops):
    out = bytes([count, mode])
    for i in range(count):
        op = ops[i % len(ops)]
        out += bytes([op, (i * 37) & 0xff]) + struct.pack("<H", i * 131)
        if op % 24 in (7, 8, 14):
            out += bytes(range(i, i + 32))
    return out

# mode: bit 0 picks the pool of distinct keys, 4 adds verify_all, bits 1-3 equal to 2 the
# two-thread entry.
vbs = [vb(8, 4, [20]), vb(40, 5, [20]), vb(24, 2, [20, 21]), vb(1, 0, [20]), vb(0, 0, [20])]
vbs += [vb(16, [0, 2, 4, 7][op % 4], [20, op, 21]) for op in range(15)]
def fnv1a(data):
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def large(seed):
    # The target pads an input to the two-thread sizes when FNV-1a of the whole input is
    # 0 mod 256; bytes after the ops are not read, so a suffix picks such an input.
    for k in range(1 << 16):
        out = seed + struct.pack("<H", k)
        if fnv1a(out) % 256 == 0:
            return out
    raise RuntimeError("no suffix")


vbs += [large(vb(4, 0, [20])), large(vb(4, 1, [20, 3])), large(vb(30, 2, [0, 20, 20, 20]))]
write("verify_batch", vbs)

# gift_wrap: [count, then per wrap (op, nonce, op's bytes)]. Ops 0-8 mutate a layer, 9 is the
# fixed wrap as it is.
def gw(ops, flag=0):
    out = bytes([(len(ops) - 1) | flag])
    for op, extra in ops:
        out += bytes([op, 3]) + extra
    return out

edits = bytes([2, 40, 0, ord("x"), 90, 0, 0xfe])
gws = [gw([(9, b"")]), gw([(9, b""), (25, b"")], 0x80)]
gws += [gw([(op, edits)]) for op in (0, 1, 2)]
gws += [gw([(3, bytes([20]) + b'{"kind":13,"x":1}   ')]), gw([(4, bytes([16]) + b'{"content":"hi"}')])]
gws += [gw([(5, b"")]), gw([(6, b"")]), gw([(7, bytes([8]) + b"AgAAAAAA")]), gw([(8, b""), (0x18, b"")], 0x80)]
gws += [gw([(0, bytes([1, 10, 0, ord("9")])), (9, b""), (1, edits), (2, edits)], 0x80)]
write("gift_wrap", gws)
