#!/usr/bin/env python3
"""Source files over 600 lines outside their `#[cfg(test)]` module (issue 49).

For every `.rs` file under the `src/` of each crate of the workspace, counts the lines before
the file's first top-level `#[cfg(test)]` attribute that opens a module (`#[cfg(test)]`
followed by `mod name {` or `mod name;`), or all its lines if it has none; prints each file
over the limit with its count and exits 1, or prints nothing and exits 0. A file that is
itself a test module (declared `#[cfg(test)] mod name;`) is not counted, nor are test files
(`tests/`) and the benchmarks' and examples' programs.
Python 3 standard library only.

Files named in ALLOWED are known debts with a reason: printed on stderr, they do not fail
(up to the count given, so they cannot grow); an allowance no longer needed is reported.
"""
import os
import re
import sys

LIMIT = 600
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ALLOWED = {}
SRC_DIRS = [
    "src",
    "nostr-verify-sdk/src",
    "nostr-verify-wasm/src",
    "cli/src",
    "bench/src",
    "wasm/tests-crate/src",
]
TEST_MOD = re.compile(r"^#\[cfg\(test\)\]\s*\n(?:#\[[^\n]*\]\s*\n)*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*[{;]",
                      re.M)


def code_lines(path):
    text = open(path, encoding="utf-8").read()
    m = TEST_MOD.search(text)
    if m:
        text = text[:m.start()]
    return text.count("\n")


def test_module_files(path):
    """The files of the modules `path` declares as `#[cfg(test)] mod name;`."""
    text = open(path, encoding="utf-8").read()
    d, base = os.path.split(path)
    if base not in ("lib.rs", "main.rs", "mod.rs"):
        d = os.path.join(d, base[:-3])
    out = set()
    for m in TEST_MOD.finditer(text):
        if m.group(0).endswith(";"):
            name = re.search(r"mod\s+(\w+)\s*;$", m.group(0)).group(1)
            out.add(os.path.join(d, name + ".rs"))
            out.add(os.path.join(d, name, "mod.rs"))
    return out


def main():
    over = []
    skip = set()
    for d in SRC_DIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, d)):
            for f in files:
                if f.endswith(".rs"):
                    skip |= test_module_files(os.path.join(dirpath, f))
    for d in SRC_DIRS:
        base = os.path.join(ROOT, d)
        if not os.path.isdir(base):
            print(f"file-lengths: {d} is missing", file=sys.stderr)
            sys.exit(2)
        for dirpath, _, files in os.walk(base):
            for f in sorted(files):
                if f.endswith(".rs"):
                    p = os.path.join(dirpath, f)
                    if p in skip:
                        continue
                    n = code_lines(p)
                    if n > LIMIT:
                        over.append((os.path.relpath(p, ROOT), n))
    failed = False
    for p, n in sorted(over):
        if p in ALLOWED and n <= ALLOWED[p]:
            print(f"{p}: {n} lines outside #[cfg(test)] (known, allowed up to {ALLOWED[p]})",
                  file=sys.stderr)
        else:
            failed = True
            print(f"{p}: {n} lines outside #[cfg(test)] (limit {LIMIT})")
    for p in sorted(set(ALLOWED) - {q for q, _ in over}):
        print(f"file-lengths: {p} is within the limit now: remove its allowance", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
