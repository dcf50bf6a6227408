#!/usr/bin/env bash
# Tests of the npm packages that wasm/build.sh made: wasm/pkg-node in node against nostr-tools'
# verifyEvent and @noble/curves (node.test.mjs), its WebSocket tap and batching verifier against
# scripted `ws` servers on 127.0.0.1 (tap.test.mjs), wasm/pkg-web in headless Chromium through
# the Web Worker example page (browser.test.mjs), and the TypeScript types of both (tsc).
# Needs node, npm, /usr/bin/chromium and /usr/bin/chromedriver (wasm/env.sh installs them).
set -euo pipefail
cd "$(dirname "$0")"
for f in ../pkg-node/package.json ../pkg-web/package.json; do
  [ -f "$f" ] || { echo "wasm/test/run.sh: $f missing: run wasm/build.sh first" >&2; exit 1; }
done
npm ci --no-audit --no-fund --silent
node --test node.test.mjs tap.test.mjs browser.test.mjs
npx --no-install tsc -p tsconfig.json
echo "wasm/test: types of pkg-node and pkg-web check"
