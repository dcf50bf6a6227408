#!/usr/bin/env bash
# Builds nostr-verify-wasm into two npm-ready packages:
#   wasm/pkg-node  (wasm-bindgen --target nodejs: CommonJS, `require("nostr-verify-wasm")`)
#   wasm/pkg-web   (wasm-bindgen --target web: an ES module for browsers and Web Workers)
# each with package.json, TypeScript types (.d.ts), README.md and LICENSE, and the WebSocket
# tap (tap.js, tap-worker.js: wasm/package/tap/) beside the module.
#
#   wasm/build.sh                  release build (what to publish)
#   wasm/build.sh --profile test   the `test` profile (opt-level 1, as .ci/wasm.sh's tests;
#                                  reuses their std build, so CI saves a release std build)
#   wasm/build.sh --no-simd        without WebAssembly SIMD (SHA-256 one message at a time), for
#                                  engines that lack it (Safari before 16.4); combines with
#                                  --profile
#
# The toolchain is shared/PLATFORMS.md's (see wasm/env.sh): Debian's rustc-web with std built
# from source, wasm-bindgen-cli at Cargo.lock's version, and binaryen's wasm-opt from npm
# (wasm/tools). Every failure is fatal.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
profile=release
simd=1
while (($#)); do
  case "$1" in
    --profile) profile=${2:?--profile needs a name}; shift 2 ;;
    --no-simd) simd=0; shift ;;
    *) echo "usage: wasm/build.sh [--profile PROFILE] [--no-simd]" >&2; exit 2 ;;
  esac
done
WASM_ENV_BROWSER=0 source wasm/env.sh
# nostr-verify-wasm's default feature `simd` is the SIMD SHA-256; --no-simd builds without it,
# and wasm-opt may then not use SIMD either.
features=() wasm_opt_simd=(--enable-simd) simd_label="with WebAssembly SIMD"
if [ "$simd" = 0 ]; then
  features=(--no-default-features) wasm_opt_simd=() simd_label="without WebAssembly SIMD"
fi

phase "build nostr-verify-wasm for wasm32 ($profile, $simd_label)"
wasm_cargo /usr/bin/cargo build -Zbuild-std=std,panic_abort --target wasm32-unknown-unknown \
  --profile "$profile" -p nostr-verify-wasm --lib "${features[@]}"
case "$profile" in
  dev | test) dir=debug ;;
  *) dir=$profile ;;
esac
module=target/wasm32-unknown-unknown/$dir/nostr_verify_wasm.wasm
[ -f "$module" ] || die "$module was not built"

# binaryen's wasm-opt (pinned in wasm/tools/package-lock.json), run on each module wasm-bindgen
# writes, as wasm-pack does: -O4 for the browsers' package (about 8 % off the signatures in
# Chromium 156, against 3-4 % for -O3), -O3 for node's (-O4 is about 2 % slower in node 20,
# -O3 no different from none); 4 % smaller (docs/benchmarks.md, "wasm32: wasm-opt"). -g keeps
# the name section (readable profiles). The features are what the module may use: an unknown
# instruction makes wasm-opt fail, and so the build.
phase "npm ci in wasm/tools (binaryen's wasm-opt)"
npm ci --prefix wasm/tools --no-audit --no-fund --silent
wasm_opt=(wasm/tools/node_modules/.bin/wasm-opt -g --enable-bulk-memory --enable-sign-ext
  --enable-mutable-globals --enable-nontrapping-float-to-int --enable-reference-types
  --enable-multivalue "${wasm_opt_simd[@]}")

version=$(awk -F'"' '/^version = / { print $2; exit }' nostr-verify-wasm/Cargo.toml)
[ -n "$version" ] || die "no version in nostr-verify-wasm/Cargo.toml"
for flavor in node web; do
  out=wasm/pkg-$flavor
  phase "wasm-bindgen --target $([ $flavor = node ] && echo nodejs || echo web) -> $out"
  rm -rf "$out"
  "$wb_tools/bin/wasm-bindgen" --target "$([ $flavor = node ] && echo nodejs || echo web)" \
    --out-dir "$out" "$module"
  level=$([ $flavor = node ] && echo -O3 || echo -O4)
  phase "wasm-opt $level $out/nostr_verify_wasm_bg.wasm"
  "${wasm_opt[@]}" "$level" "$out/nostr_verify_wasm_bg.wasm" -o "$out/nostr_verify_wasm_bg.wasm"
  sed "s/@VERSION@/$version/" "wasm/package/$flavor.package.json" >"$out/package.json"
  cp "wasm/package/README.$flavor.md" "$out/README.md"
  cp LICENSE "$out/LICENSE"
  for f in nostr_verify_wasm.js nostr_verify_wasm.d.ts nostr_verify_wasm_bg.wasm; do
    [ -s "$out/$f" ] || die "$out/$f missing"
  done
done
phase "the WebSocket tap (wasm/package/tap/assemble.sh)"
bash wasm/package/tap/assemble.sh
for flavor in node web; do
  for f in index.js index.d.ts tap.js tap.d.ts tap-worker.js; do
    [ -s "wasm/pkg-$flavor/$f" ] || die "wasm/pkg-$flavor/$f missing"
  done
done
phase "packages in wasm/pkg-node and wasm/pkg-web ($(wc -c <wasm/pkg-web/nostr_verify_wasm_bg.wasm) bytes of wasm, $simd_label)"
