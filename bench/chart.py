#!/usr/bin/env python3
"""Draws the batch benchmark charts from a results.json of `bench/examples/batch.rs`.

Usage: `python3 bench/chart.py [PATH]`. Without PATH it reads the latest run,
`target/bench/results.json` (under `$CARGO_TARGET_DIR` when that is set), if there is one,
else the committed reference `bench/results.json`. Run `cargo run --profile bench -p nostr-verify-bench --example batch`
first to make a fresh one. Writes ratio.png (speed-up over libsecp256k1 one at a time per
batch size and key distribution) and us_per_sig.png (microseconds per signature) beside the
JSON file it read.
Needs matplotlib (`pip install matplotlib` or `apt-get install python3-matplotlib`).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def default_path():
    """The latest run if there is one, else the committed reference."""
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    latest = os.path.join(target, "bench", "results.json")
    return latest if os.path.isfile(latest) else os.path.join(HERE, "results.json")


def main():
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help")):
        sys.exit("usage: python3 bench/chart.py [PATH to results.json]")
    path = sys.argv[1] if len(sys.argv) == 2 else default_path()
    print(f"reading {path}")
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        sys.exit(f"{path} not found: run `cargo run --profile bench -p nostr-verify-bench --example batch` first")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("matplotlib is not installed: `pip install matplotlib` "
                 "(or `apt-get install python3-matplotlib`), then run this again")

    batch = [c for c in data["cases"] if c["case"] == "batch"]
    dists = ["distinct", "8 keys", "1 key"]
    sizes = sorted({c["n"] for c in batch})
    title = f"nostr-verify vs libsecp256k1 one at a time ({data['backend']} backend, median of {data['rounds']})"

    for key, ylabel, fname in [
        ("ratio", "speed-up (x)", "ratio.png"),
        ("ours_us", "µs per signature (thread CPU time)", "us_per_sig.png"),
    ]:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        width = 0.8 / len(dists)
        for j, d in enumerate(dists):
            ys = [next((c[key] for c in batch if c["n"] == n and c["keys"] == d), 0) for n in sizes]
            xs = [i + (j - 1) * width for i in range(len(sizes))]
            bars = ax.bar(xs, ys, width, label=d)
            ax.bar_label(bars, fmt="%.1f", fontsize=7)
        if key == "ours_us":
            base = [next(c["libsecp_us"] for c in batch if c["n"] == n) for n in sizes]
            ax.plot(range(len(sizes)), base, "k--", label="libsecp256k1 parse+verify")
        else:
            ax.axhline(1.0, color="k", linewidth=0.8)
        ax.set_xticks(range(len(sizes)))
        ax.set_xticklabels([str(n) for n in sizes])
        ax.set_xlabel("batch size")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.legend()
        fig.tight_layout()
        out = os.path.join(os.path.dirname(os.path.abspath(path)), fname)
        fig.savefig(out, dpi=120)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
