#!/usr/bin/env bash
# wasm32-unknown-unknown: build the library (`--no-default-features --features js`) and run
# the tests of wasm/tests-crate (the library) and nostr-verify-wasm (the JavaScript API) inside
# wasm, in node and in headless Chromium, with the libsecp256k1 C library compiled into the
# same modules (shared/PLATFORMS.md's recipe).
#
# Needs root and apt (a fresh Debian machine with only rustup's toolchain is enough): Debian's
# `rustc-web` builds std from its own source with -Zbuild-std, since rustup cannot add the
# target here. wasm-bindgen-cli is built once, at the version of the `wasm-bindgen` crate in
# Cargo.lock, into target/wasm-tools/ (kept across runs while target/ is).
#
# Every failure fails the script: nothing here is optional.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export CARGO_TERM_COLOR=never
t0=$(date +%s)
phase() { echo "--- wasm: $* ($(( $(date +%s) - t0 )) s)"; }
die() { echo "wasm.sh: $*" >&2; exit 1; }

# 1. System packages.
pkgs=(rustc-web cargo-web rust-web-src rust-web-llvm lld-22 clang-22 chromium chromium-driver)
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  phase "apt-get install ${missing[*]}"
  [ "$(id -u)" = 0 ] || die "not root: cannot apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  phase "Debian packages already installed"
fi
for c in /usr/bin/rustc /usr/bin/cargo clang-22 /usr/bin/chromium /usr/bin/chromedriver node; do
  command -v "$c" >/dev/null 2>&1 || die "$c missing after the install"
done

# 2. wasm-bindgen-cli at exactly the version in Cargo.lock.
wb_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
[ -n "$wb_version" ] || die "no wasm-bindgen in Cargo.lock"
tools=$root/target/wasm-tools/wasm-bindgen-$wb_version
runner=$tools/bin/wasm-bindgen-test-runner
if ! "$tools/bin/wasm-bindgen" --version 2>/dev/null | grep -qx "wasm-bindgen $wb_version"; then
  phase "cargo install wasm-bindgen-cli $wb_version (debug build)"
  # A debug build: about 2 minutes instead of 8.5 for release; it only post-processes the
  # modules, so its speed does not matter. No --locked: the CLI's own lock file pins a
  # webpki-roots that no longer resolves.
  cargo install --quiet --debug wasm-bindgen-cli --version "=$wb_version" --root "$tools"
fi
"$tools/bin/wasm-bindgen" --version | grep -qx "wasm-bindgen $wb_version" \
  || die "wasm-bindgen-cli is not $wb_version"

# 3. Debian's compiler for every cargo call below (rustup's proxies come first on PATH).
deb=(env PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
  CC_wasm32_unknown_unknown=clang-22 CARGO_PROFILE_TEST_DEBUG=0
  CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER="$runner")
wasm_cargo() { "${deb[@]}" "$@" /usr/bin/cargo "${cargo_cmd[@]}"; }
# The `test` profile for the build too, so that std is built once for both; without debug
# info (CARGO_PROFILE_TEST_DEBUG=0 above) the test modules are a tenth of the size and the
# test runner's wasm-bindgen pass over each is that much faster.
phase "build the library for wasm32 (--no-default-features --features js)"
cargo_cmd=(build -Zbuild-std=std,panic_abort --target wasm32-unknown-unknown --profile test
  -p nostr-verify --lib --no-default-features --features js)
wasm_cargo

# 4. The tests inside wasm. Each engine's output is checked: every test announced ran and
# passed, and there are at least as many as written in the two crates' tests/ today.
expect_tests=19
run_tests() {
  local engine=$1 log=$root/target/wasm-tools/test-$1.log
  shift
  phase "tests in $engine"
  cargo_cmd=(test -Zbuild-std=std,panic_abort --target wasm32-unknown-unknown
    -p nostr-verify-wasm-tests -p nostr-verify-wasm --tests)
  wasm_cargo "$@" 2>&1 | tee "$log"
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
cat >"$root/target/wasm-tools/webdriver.json" <<EOF
{"goog:chromeOptions": {"args": ["--headless", "--no-sandbox", "--disable-gpu",
  "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--user-data-dir=$profile"]}}
EOF
run_tests chromium WASM_BINDGEN_USE_BROWSER=1 CHROMEDRIVER=/usr/bin/chromedriver \
  WASM_BINDGEN_TEST_WEBDRIVER_JSON="$root/target/wasm-tools/webdriver.json"

phase "done"
