#!/usr/bin/env bash
# Same-run comparison of two revisions on the real corpus: builds `bench/examples/events` at REV_A
# and REV_B (git worktrees under target/revisions/, one target dir each, so a second run
# rebuilds only what changed) and runs the two binaries alternately, ROUNDS times, pinned to
# one CPU. Prints `verify_batch()` µs per event (thread CPU time, the example's median of 5
# repetitions, each on a fresh thread with a cold key cache) for every round, the medians and
# the median of the paired ratios B / A.
#
#   bench/revisions.sh REV_A REV_B [ROUNDS]        # ROUNDS defaults to 8
#   NOSTR_VERIFY_BACKEND=portable bench/revisions.sh 95178bb HEAD
#   NOSTR_VERIFY_SHA=soft bench/revisions.sh ...   # any variable the example reads passes through
#
# The corpus is $NOSTR_VERIFY_DATA/events-real.jsonl (default ../shared/data). REV_B may be
# `WORKTREE` for the checkout as it is, uncommitted changes included. `CPU=N` pins to
# another CPU (default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,15p' "$0"; exit 2; }
rev_a=$1
rev_b=$2
rounds=${3:-8}
data=${NOSTR_VERIFY_DATA:-$(cd .. && pwd)/shared/data}
corpus=$data/events-real.jsonl
[ -f "$corpus" ] || { echo "bench/revisions.sh: $corpus not found (set NOSTR_VERIFY_DATA)" >&2; exit 1; }
root=$(pwd)
mkdir -p target/revisions

# The events binary of a revision, built with the profile its benchmarks used: since 0.2.0 the
# program is bench/examples/events.rs (package nostr-verify-bench, the bench profile, output
# in target/release like the release profile's); before, examples/events.rs of the root package
# (`--release`, then carrying the LTO settings).
build_in() {
  if [ -f bench/examples/events.rs ]; then
    cargo build -q --profile bench -p nostr-verify-bench --example events
  else
    cargo build -q --release --example events
  fi
}
build() {
  local rev=$1 dir
  if [ "$rev" = WORKTREE ]; then
    build_in >&2
    echo "${CARGO_TARGET_DIR:-$root/target}/release/examples/events"
    return
  fi
  local sha
  sha=$(git rev-parse --short=12 "$rev^{commit}")
  dir=$root/target/revisions/$sha
  if [ ! -d "$dir/.git" ] && [ ! -f "$dir/.git" ]; then
    git worktree add -f --detach "$dir" "$sha" >/dev/null 2>&1
  fi
  (cd "$dir" && CARGO_TARGET_DIR="$dir/target" build_in) >&2
  echo "$dir/target/release/examples/events"
}

echo "building $rev_a and $rev_b (bench profile, the events benchmark)" >&2
bin_a=$(build "$rev_a")
bin_b=$(build "$rev_b")

one() {
  taskset -c "${CPU:-1}" "$1" "$corpus" 5 2>&1 | awk '/^verify_batch/ { for (i = 1; i <= NF; i++) if ($i ~ /^\([0-9.]+$/) { sub(/\(/, "", $i); print $i; exit } }'
}

a=()
b=()
for r in $(seq "$rounds"); do
  x=$(one "$bin_a")
  y=$(one "$bin_b")
  [ -n "$x" ] && [ -n "$y" ] || { echo "bench/revisions.sh: no verify_batch line in round $r" >&2; exit 1; }
  a+=("$x")
  b+=("$y")
  echo "round $r: A $x  B $y µs/event"
done
python3 - "${a[*]}" "${b[*]}" "$rev_a" "$rev_b" <<'EOF'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
print(f"verify_batch() on the corpus, µs per event, median of {len(a)} rounds: "
      f"A ({sys.argv[3]}) {statistics.median(a):.2f}, B ({sys.argv[4]}) {statistics.median(b):.2f}; "
      f"paired B / A: median {statistics.median([y / x for x, y in zip(a, b)]):.3f}, "
      f"range {min(y / x for x, y in zip(a, b)):.3f}-{max(y / x for x, y in zip(a, b)):.3f}")
EOF
