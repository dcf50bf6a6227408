#!/usr/bin/env python3
"""Import cycles between modules, in every crate of the workspace (issue 49).

Prints each cycle (a strongly connected component of more than one module) and exits 1 if
there is any; prints nothing and exits 0 otherwise. Python 3 standard library only.

The graph, per crate (each `src/lib.rs` / `src/main.rs` of the crates listed in CRATES):
- A module is a file or an inline `mod name { ... }` block (test modules included), found by
  following `mod` declarations (and `#[path = "..."]`) from the crate root.
- Edges come from `use crate::...`, `use super::...`, `use self::...`, `use child::...` (a
  child module of the current one) and from `crate::`/`super::`/`self::`/`child::` paths in
  code.
  A path leads to the deepest module it names: `crate::a::b::Item` is an edge to `a::b` if
  that is a module, else to `a`. An item reached through a re-export (`pub use x::Item;` or a
  glob `pub use x::*;`) leads to the module the re-export names, followed to its end, so that
  `crate::Verifier` counts as a use of the module that defines `Verifier`.
- `mod child;` (a parent declaring its child) is not an edge. A child using its parent's items
  is an edge (child -> parent).
- The facade rule: a `pub use` (any visibility) in a module of a path into that module's own
  descendants is a re-export, not an edge; the parent publishes the child's items, it does not
  depend on them. A private `use child::Item` that the parent's own code uses is an edge.
- `$crate::` in macros, comments, strings and `#[cfg]` are ignored (every cfg arm counts).

Cycles named in ALLOWED (by crate and their set of modules) are known debts with a reason:
they are printed as such on stderr and do not fail; any other cycle fails. An allowance that
no longer matches a cycle is reported on stderr, to be removed.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
# (crate, frozenset of modules): known cycles with a reason; none now.
ALLOWED = set()
CRATES = [
    ("nostr-verify", "src/lib.rs"),
    ("nostr-verify-sdk", "nostr-verify-sdk/src/lib.rs"),
    ("nostr-verify-wasm", "nostr-verify-wasm/src/lib.rs"),
    ("nostr-verify-cli", "cli/src/lib.rs"),
    ("nostr-verify-cli (bin)", "cli/src/main.rs"),
    ("nostr-verify-bench", "bench/src/lib.rs"),
    ("wasm-tests-crate", "wasm/tests-crate/src/lib.rs"),
]


def strip(text):
    """Comments, string and char literals blanked (newlines and offsets kept)."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "rb" and re.match(r"(?:br|r)#*\"", text[i:i + 300]) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            m = re.match(r"(?:br|r)(#*)\"", text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            blank(i + 1, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            if i + 1 < n and text[i + 1] == "\\":
                j = text.find("'", i + 3)
                blank(i + 1, j)
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                blank(i + 1, i + 2)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def match_brace(s, i):
    """Index just past the `}` matching the `{` at s[i]."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(s)


def split_use_tree(tree):
    """`a::{b, c::d as e, f::*}` -> [(['a','b'], None), (['a','c','d'], 'e'), (['a','f','*'], None)]."""
    tree = re.sub(r"\s+", " ", tree).strip()
    out = []

    def walk(prefix, t):
        t = t.strip()
        if not t:
            return
        if t.endswith("}") and "{" in t:
            k = t.index("{")
            head = [s for s in t[:k].strip().rstrip(":").split("::") if s.strip()]
            inner, depth, cur = t[k + 1:-1], 0, ""
            parts = []
            for ch in inner:
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                if ch == "," and depth == 0:
                    parts.append(cur)
                    cur = ""
                else:
                    cur += ch
            parts.append(cur)
            for p in parts:
                walk(prefix + [h.strip() for h in head], p)
            return
        alias = None
        m = re.match(r"(.*?)\s+as\s+(\w+)$", t)
        if m:
            t, alias = m.group(1), m.group(2)
        segs = [s.strip() for s in t.split("::")]
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        out.append((prefix + segs, alias))

    walk([], tree)
    return out


USE_RE = re.compile(r"\b(pub\s*(?:\([^)]*\))?\s+)?use\s+([^;]+);")
PATH_RE = re.compile(r"(?<![\w$:])(crate|super|self)((?:\s*::\s*(?:\w+))+)")
MOD_RE = re.compile(r"\bmod\s+(\w+)\s*([;{])")
DEF_RE = re.compile(
    r"\b(?:fn|struct|enum|union|trait|type|const|static|macro_rules\s*!)\s+(\w+)")


class Module:
    def __init__(self, path, file):
        self.path = path  # tuple of names, () = crate root
        self.file = file
        self.children = {}  # name -> path
        self.uses = []  # (is_pub, segments, alias)
        self.exprs = []  # segments
        self.defs = set()


def load_crate(root_file):
    mods = {}

    def parse(path, file, text, raw, dir_for_children):
        m = Module(path, file)
        mods[path] = m
        own = text
        # inline and file modules
        pos = 0
        spans = []
        while True:
            mm = MOD_RE.search(text, pos)
            if not mm:
                break
            name = mm.group(1)
            before = raw[max(0, mm.start() - 300):mm.start()]
            pattr = None
            pm = list(re.finditer(r"#\[path\s*=\s*\"([^\"]+)\"\]", before))
            if pm and not re.search(r";|\}", before[pm[-1].end():]):
                pattr = pm[-1].group(1)
            child = path + (name,)
            m.children[name] = child
            if mm.group(2) == "{":
                b = mm.end() - 1
                e = match_brace(text, b)
                spans.append((mm.start(), e))
                sub_dir = os.path.join(dir_for_children, name)
                parse(child, file, text[b + 1:e - 1], raw[b + 1:e - 1], sub_dir)
                pos = e
            else:
                spans.append((mm.start(), mm.end()))
                if pattr:
                    cands = [os.path.join(os.path.dirname(file), pattr)]
                else:
                    cands = [os.path.join(dir_for_children, name + ".rs"),
                             os.path.join(dir_for_children, name, "mod.rs")]
                cf = next((c for c in cands if os.path.exists(c)), None)
                if cf is None:
                    print(f"module-cycles: cannot find module {name} of {file}", file=sys.stderr)
                    sys.exit(2)
                load_file(child, cf)
                pos = mm.end()
        for a, e in reversed(spans):
            own = own[:a] + " " * (e - a) + own[e:]
        for um in USE_RE.finditer(own):
            is_pub = bool(um.group(1))
            for segs, alias in split_use_tree(um.group(2)):
                m.uses.append((is_pub, segs, alias))
        body = USE_RE.sub(lambda x: " " * len(x.group(0)), own)
        for pm in PATH_RE.finditer(body):
            segs = [pm.group(1)] + [s.strip() for s in pm.group(2).split("::") if s.strip()]
            m.exprs.append(segs)
        for child in m.children:
            for pm in re.finditer(r"(?<![\w$:])" + child + r"((?:\s*::\s*(?:\w+))+)", body):
                m.exprs.append([child] + [s.strip() for s in pm.group(1).split("::") if s.strip()])
        m.defs = set(DEF_RE.findall(own))

    def load_file(path, file):
        raw = open(file, encoding="utf-8").read()
        text = strip(raw)
        base = os.path.basename(file)
        if base in ("lib.rs", "main.rs", "mod.rs") or path == ():
            child_dir = os.path.dirname(file)
        else:
            child_dir = os.path.join(os.path.dirname(file), base[:-3])
        parse(path, file, text, raw, child_dir)

    load_file((), root_file)
    return mods


def resolve(mods, here, segs, depth=0):
    """The module a path names (or whose item it names), or None if outside the crate."""
    if depth > 20 or not segs:
        return None
    first = segs[0]
    if first == "crate":
        cur, rest = (), segs[1:]
    elif first == "super":
        cur, rest = here, segs
        while rest and rest[0] == "super":
            cur, rest = cur[:-1], rest[1:]
    elif first == "self":
        cur, rest = here, segs[1:]
    elif first in mods[here].children:
        cur, rest = here, segs
    else:
        return None
    for seg in rest:
        m = mods[cur]
        if seg in m.children:
            cur = m.children[seg]
            continue
        if seg == "*":
            return cur
        return item_home(mods, cur, seg, depth)
    return cur


def item_home(mods, cur, name, depth):
    """Where item `name`, reached as `cur::name`, is defined (through re-exports)."""
    m = mods[cur]
    if name in m.defs:
        return cur
    for _, segs, alias in m.uses:
        if segs and (alias or segs[-1]) == name and segs[-1] != "*":
            t = resolve(mods, cur, segs, depth + 1)
            return t if t is not None else cur
    for _, segs, _ in m.uses:
        if segs and segs[-1] == "*":
            t = resolve(mods, cur, segs[:-1], depth + 1)
            if t is not None and t != cur and depth < 20:
                h = item_home(mods, t, name, depth + 1)
                if h != t or name in mods[t].defs:
                    return h
    return cur


def is_under(a, b):
    return len(a) > len(b) and a[:len(b)] == b


def edges_of(mods):
    edges = {p: set() for p in mods}
    for p, m in mods.items():
        for is_pub, segs, _ in m.uses:
            t = resolve(mods, p, segs)
            if t is None or t == p:
                continue
            if is_pub and is_under(t, p):
                continue  # the facade rule
            edges[p].add(t)
        for segs in m.exprs:
            t = resolve(mods, p, segs)
            if t is not None and t != p:
                edges[p].add(t)
    return edges


def sccs(nodes, edges):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def name(p):
    return "crate" if not p else "crate::" + "::".join(p)


def main():
    found = 0
    seen_allowed = set()
    for crate, root in CRATES:
        f = os.path.join(ROOT, root)
        if not os.path.exists(f):
            print(f"module-cycles: {root} is missing", file=sys.stderr)
            sys.exit(2)
        mods = load_crate(f)
        edges = edges_of(mods)
        for comp in sccs(list(mods), edges):
            if len(comp) < 2:
                continue
            cs = set(comp)
            key = (crate, frozenset(name(p) for p in comp))
            out = sys.stdout
            if key in ALLOWED:
                seen_allowed.add(key)
                out = sys.stderr
                print(f"{crate}: known cycle (allowed, see ALLOWED) between {len(comp)} modules:",
                      file=out)
            else:
                found += 1
                print(f"{crate}: cycle between {len(comp)} modules:")
            for p in sorted(comp):
                rel = os.path.relpath(mods[p].file, ROOT)
                deps = ", ".join(name(t) for t in sorted(edges[p] & cs))
                print(f"  {name(p)} ({rel}) -> {deps}", file=out)
    for crate, mset in sorted(ALLOWED - seen_allowed, key=str):
        print(f"module-cycles: the allowance for {crate} {sorted(mset)} matches no cycle now: "
              "remove it from ALLOWED", file=sys.stderr)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
