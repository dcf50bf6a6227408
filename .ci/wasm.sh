#!/usr/bin/env bash
# wasm32-unknown-unknown: build the library (`--no-default-features --features js`) and run
# the tests of wasm/tests-crate (the library) and nostr-verify-wasm (the JavaScript API) inside
# wasm, in node and in headless Chromium, with the libsecp256k1 C library compiled into the
# same modules (shared/PLATFORMS.md's recipe); then build the npm packages (wasm/build.sh)
# and test them (wasm/test/run.sh) and their WebSocket tap with six client libraries
# (wasm/clients/run.sh); then run the benchmarks briefly (wasm/bench.mjs, wasm/bench-tap.mjs).
#
# Needs root and apt (a fresh Debian machine with only rustup's toolchain is enough): Debian's
# `rustc-web` builds std from its own source with -Zbuild-std, since rustup cannot add the
# target here. wasm-bindgen-cli is built once, at the version of the `wasm-bindgen` crate in
# Cargo.lock, into target/wasm-tools/ (kept across runs while target/ is).
#
# Every failure fails the script: nothing here is optional.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
source wasm/env.sh
# The `test` profile for the build too, so that std is built once for both.
phase "build the library for wasm32 (--no-default-features --features js)"
wasm_cargo /usr/bin/cargo build -Zbuild-std=std,panic_abort --target wasm32-unknown-unknown \
  --profile test -p nostr-verify --lib --no-default-features --features js

# The tests inside wasm. Each engine's output is checked: every test announced ran and
# passed, and there are at least as many as written in the two crates' tests/ today.
expect_tests=28
run_tests() {
  local engine=$1 log=$wasm_root/target/wasm-tools/test-$1.log
  shift
  phase "tests in $engine"
  wasm_cargo "$@" /usr/bin/cargo test -Zbuild-std=std,panic_abort --target wasm32-unknown-unknown \
    -p nostr-verify-wasm-tests -p nostr-verify-wasm --tests 2>&1 | tee "$log"
  grep -qi "skipping" "$log" && die "$engine: the test runner skipped a suite"
  local passed announced
  passed=$(sed -n 's/^test result: ok\. \([0-9]*\) passed.*/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
  announced=$(sed -n 's/^running \([0-9]*\) tests\{0,1\}$/\1/p' "$log" | awk '{ s += $1 } END { print s + 0 }')
  grep -q "^test result: FAILED" "$log" && die "$engine: tests failed"
  [ "$passed" = "$announced" ] || die "$engine: $announced tests announced, $passed passed"
  [ "$passed" -ge "$expect_tests" ] || die "$engine: $passed tests passed, at least $expect_tests expected"
  echo "wasm: $passed tests passed in $engine"
}
run_tests node
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
cat >"$wasm_root/target/wasm-tools/webdriver.json" <<EOF
{"goog:chromeOptions": {"args": ["--headless", "--no-sandbox", "--disable-gpu",
  "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--user-data-dir=$profile"]}}
EOF
run_tests chromium WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=/usr/bin/chromedriver \
  WASM_BINDGEN_TEST_WEBDRIVER_JSON="$wasm_root/target/wasm-tools/webdriver.json"

# The npm packages (the `test` profile: the same code as release, and the std build above is
# reused). First without WebAssembly SIMD (wasm/build.sh --no-simd, for engines that lack it),
# tested in node against nostr-tools; then the default packages, tested in node against
# nostr-tools and in headless Chromium in a Web Worker, and benchmarked below. The module cargo
# built (before wasm-bindgen and wasm-opt, which may inline the kernel away) names the
# simd128 SHA-256 kernel in its name section exactly when it is compiled in.
module=target/wasm32-unknown-unknown/debug/nostr_verify_wasm.wasm
phase "wasm/build.sh --profile test --no-simd, tested in node"
bash wasm/build.sh --profile test --no-simd
if grep -q sha_simd128 "$module"; then
  die "--no-simd: the module still holds the simd128 kernel"
fi
(cd wasm/test && npm ci --no-audit --no-fund --silent && node --test node.test.mjs)
phase "wasm/build.sh --profile test"
bash wasm/build.sh --profile test
grep -q sha_simd128 "$module" || die "the packages lack the simd128 kernel"
phase "wasm/test/run.sh (node, Chromium, TypeScript)"
bash wasm/test/run.sh
# The packages as npm publishes them: `npm pack` of both, the tarballs' file lists checked, and
# each installed from its tarball into an empty project and loaded by its package name (the
# `exports` of the entry point and of ./tap).
phase "npm pack of pkg-node and pkg-web, installed from the tarballs and loaded"
packs=$wasm_root/target/npm-pack
rm -rf "$packs" && mkdir -p "$packs/try"
for flavor in node web; do
  (cd "wasm/pkg-$flavor" && npm pack --silent --pack-destination "$packs" >/dev/null)
done
for t in "$packs"/nostr-verify-wasm-[0-9]*.tgz "$packs"/nostr-verify-wasm-web-[0-9]*.tgz; do
  [ -f "$t" ] || die "npm pack: $t missing"
  listing=$(tar -tzf "$t") # whole, not piped into grep -q (pipefail and SIGPIPE)
  for f in index.js index.d.ts tap.js tap.d.ts tap-worker.js nostr_verify_wasm.js \
    nostr_verify_wasm.d.ts nostr_verify_wasm_bg.wasm README.md LICENSE package.json; do
    grep -qx "package/$f" <<<"$listing" || die "npm pack: $(basename "$t") lacks $f"
  done
done
(cd "$packs/try" && echo '{"name":"try","private":true}' >package.json &&
  npm install --no-audit --no-fund --silent "$packs"/nostr-verify-wasm-[0-9]*.tgz "$packs"/nostr-verify-wasm-web-[0-9]*.tgz &&
  node -e '
    const m = require("nostr-verify-wasm"), t = require("nostr-verify-wasm/tap");
    for (const f of ["verifyEvents", "verifyEvent", "verifySignatures", "Verifier", "tapWebSocket", "createBatchVerifier"])
      if (typeof m[f] !== "function") throw new Error("nostr-verify-wasm: no " + f);
    if (t.tapWebSocket !== m.tapWebSocket) throw new Error("nostr-verify-wasm/tap is not the same tap");
    const bv = m.createBatchVerifier();
    bv.verify({}).then(async (ok) => { if (ok !== false) throw new Error("verify({})"); await bv.close(); });
  ' &&
  node --input-type=module -e '
    const m = await import("nostr-verify-wasm-web"), t = await import("nostr-verify-wasm-web/tap");
    for (const f of ["default", "verifyEvents", "Verifier", "tapWebSocket", "createBatchVerifier"])
      if (typeof m[f] !== "function") throw new Error("nostr-verify-wasm-web: no " + f);
    if (t.tapWebSocket !== m.tapWebSocket) throw new Error("nostr-verify-wasm-web/tap is not the same tap");
  ') || die "npm pack: the installed packages do not load"
echo "npm pack: $(cd "$packs" && ls *.tgz | tr '\n' ' ')checked"

# The tap with six Nostr client libraries (pinned in wasm/clients/package-lock.json) against
# local relays serving ../shared/data's real events and forged copies (issue 47).
phase "wasm/clients/run.sh (nostr-tools, NDK, rx-nostr, nostr-fetch, applesauce, welshman through the tap)"
bash wasm/clients/run.sh

# The benchmark (wasm/bench.mjs), briefly, in node and in Chromium: it checks every engine's
# verdicts on its inputs itself; here, that it ran and printed every row with every figure
# (on the `test` profile build its timings mean little, and no threshold is checked).
phase "wasm/bench.mjs --engine both (short)"
(cd wasm/bench && npm ci --no-audit --no-fund --silent)
bench_log=$wasm_root/target/wasm-tools/bench.log
node wasm/bench.mjs --engine both --repeats 1 --min-ms 0 --peer-sample 64 | tee "$bench_log"
num='[0-9]+(\.[0-9]+)?'
for engine in node chromium; do
  for table in signatures events; do
    grep -qE "^\| $engine: $table \|" "$bench_log" || die "bench: no $engine $table table"
  done
done
rows=$(grep -cE "^\| (64|1024) (sigs, (8 keys|distinct)|events, 8 authors) \| $num \| $num \| $num \| ${num}x \| ${num}x \|$" "$bench_log" || true)
[ "$rows" = 12 ] || die "bench: $rows complete rows, 12 expected (6 in each engine)"
[ "$(grep -c "^verdicts: .* agree on" "$bench_log")" = 2 ] || die "bench: a verdict check line is missing"

# The tap against the six libraries' own verification (wasm/bench-tap.mjs), briefly, in node
# and in Chromium: it fails by itself when a run does not deliver exactly the valid events;
# here, that every row and ratio was printed with its figures (no threshold is checked).
phase "wasm/bench-tap.mjs --engine both (short)"
[ -d wasm/clients/node_modules ] || (cd wasm/clients && npm ci --no-audit --no-fund --silent)
tap_log=$wasm_root/target/wasm-tools/bench-tap.log
node wasm/bench-tap.mjs --engine both --events 300 --repeats 1 | tee "$tap_log"
for engine in node chromium; do
  rows=$(grep -cE "^\| $engine: tap \| [a-z-]+ \| (stock|stock-wasm|tap): [^|]+ \| 300 / 300 \| $num \| $num \| $num \| $num \| ($num \(max $num\) \| $num \($num\)|- \| -) \|$" "$tap_log" || true)
  [ "$rows" = 13 ] || die "bench-tap: $rows complete $engine rows, 13 expected (3 for nostr-tools, 2 for each other library)"
  ratios=$(grep -cE "^\| $engine: ratios \| [a-z-]+ \| (stock|stock-wasm) / tap \| ${num}x \| ${num}x \| ${num}x \| ${num}x \|$" "$tap_log" || true)
  [ "$ratios" = 7 ] || die "bench-tap: $ratios $engine ratio rows, 7 expected"
  grep -qE "^bar \($engine, nostr-tools SimplePool" "$tap_log" || die "bench-tap: no $engine bar line"
  grep -qE "^tap latency \($engine\): .*: $num ms" "$tap_log" || die "bench-tap: no $engine latency line"
done
[ "$(grep -c "^checked: 13 of 13 runs delivered exactly the valid events" "$tap_log")" = 2 ] || die "bench-tap: a check line is missing"

phase "done"
