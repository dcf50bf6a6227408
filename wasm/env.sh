# Sourced by .ci/wasm.sh and wasm/build.sh (bash, set -euo pipefail, from the repository
# root): makes sure the wasm32 toolchain of shared/PLATFORMS.md is there and defines
#   wb_version   the wasm-bindgen version in Cargo.lock
#   wb_tools     where wasm-bindgen-cli of that version is installed (bin/ under it)
#   wasm_cargo   cargo with Debian's rustc-web, std built from source (-Zbuild-std)
#   phase, die   progress lines and fatal errors
#
# Needs root and apt on a machine without them installed: Debian's `rustc-web` builds std
# from its own source, since rustup cannot add the wasm32 target here. `WASM_ENV_BROWSER=0`
# leaves Chromium out (wasm/build.sh needs no browser). Every failure is fatal.

wasm_root=$PWD
wasm_t0=${wasm_t0:-$(date +%s)}
phase() { echo "--- wasm: $* ($(( $(date +%s) - wasm_t0 )) s)"; }
die() { echo "wasm: $*" >&2; exit 1; }

# 1. System packages.
wasm_pkgs=(rustc-web cargo-web rust-web-src rust-web-llvm lld-22 clang-22)
[ "${WASM_ENV_BROWSER:-1}" = 0 ] || wasm_pkgs+=(chromium chromium-driver)
command -v node >/dev/null 2>&1 || wasm_pkgs+=(nodejs npm)
wasm_missing=()
for p in "${wasm_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || wasm_missing+=("$p")
done
if ((${#wasm_missing[@]})); then
  phase "apt-get install ${wasm_missing[*]}"
  [ "$(id -u)" = 0 ] || die "not root: cannot apt-get install ${wasm_missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${wasm_missing[@]}" >/dev/null
else
  phase "Debian packages already installed"
fi
for c in /usr/bin/rustc /usr/bin/cargo clang-22 node npm; do
  command -v "$c" >/dev/null 2>&1 || die "$c missing after the install"
done
if [ "${WASM_ENV_BROWSER:-1}" != 0 ]; then
  for c in /usr/bin/chromium /usr/bin/chromedriver; do
    [ -x "$c" ] || die "$c missing after the install"
  done
fi

# 2. wasm-bindgen-cli at exactly the version in Cargo.lock, built once into target/.
wb_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
[ -n "$wb_version" ] || die "no wasm-bindgen in Cargo.lock"
wb_tools=$wasm_root/target/wasm-tools/wasm-bindgen-$wb_version
if ! "$wb_tools/bin/wasm-bindgen" --version 2>/dev/null | grep -qx "wasm-bindgen $wb_version"; then
  phase "cargo install wasm-bindgen-cli $wb_version (debug build)"
  # A debug build: about 2 minutes instead of 8.5 for release; it only post-processes the
  # modules, so its own speed hardly matters. No --locked: the CLI's own lock file pins a
  # webpki-roots that no longer resolves.
  cargo install --quiet --debug wasm-bindgen-cli --version "=$wb_version" --root "$wb_tools"
fi
"$wb_tools/bin/wasm-bindgen" --version | grep -qx "wasm-bindgen $wb_version" \
  || die "wasm-bindgen-cli is not $wb_version"

# 3. Debian's compiler for cargo (rustup's proxies come first on PATH). Without debug info
# (CARGO_PROFILE_*_DEBUG=0) the modules are a tenth of the size, and wasm-bindgen's pass
# over each is that much faster. The `test` profile at opt-level 1 in wasm (natively it is
# unoptimized, see Cargo.toml): the suites in node and Chromium and the packages built with
# `--profile test` run optimized code, in minutes.
wasm_cargo() {
  env PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
    CC_wasm32_unknown_unknown=clang-22 CARGO_PROFILE_TEST_DEBUG=0 CARGO_PROFILE_RELEASE_DEBUG=0 \
    CARGO_PROFILE_TEST_OPT_LEVEL=1 \
    CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER="$wb_tools/bin/wasm-bindgen-test-runner" \
    "$@"
}
