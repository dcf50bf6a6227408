#!/usr/bin/env bash
# The WebSocket tap of the npm packages (wasm/pkg-node, wasm/pkg-web, made by wasm/build.sh) with
# six Nostr client libraries pinned in package-lock.json (nostr-tools, NDK, rx-nostr,
# nostr-fetch, applesauce, welshman), against local relays (relay.mjs) serving the real events
# of ../shared/data plus forged copies. Run by .ci/wasm.sh after wasm/test/run.sh. Without the
# corpus the tests that need it say so and skip; under CI=true they fail.
set -euo pipefail
cd "$(dirname "$0")"
for f in ../pkg-node/package.json ../pkg-node/tap.js ../pkg-web/package.json; do
  [ -f "$f" ] || { echo "wasm/clients/run.sh: $f missing: run wasm/build.sh first" >&2; exit 1; }
done
npm ci --no-audit --no-fund --silent

# Node: each library through the tap, the stock libraries' forged-first hole, the batch
# verifier against nostr-tools, the relay. --test-force-exit: NDK and nostr-fetch leave
# timers behind that would keep the process alive for 30 s.
node --test --test-force-exit node.test.mjs

# --- Chromium (browser.test.mjs, by the browser helper): add its command below this line. ---
# Chromium: the same clients (harness.mjs) bundled by esbuild with the tap of ../pkg-web, its
# worker verifying, one headless session for all six libraries (wasm/env.sh installs
# /usr/bin/chromium and /usr/bin/chromedriver).
for f in ../pkg-web/tap.js ../pkg-web/tap-worker.js /usr/bin/chromium /usr/bin/chromedriver; do
  [ -e "$f" ] || { echo "wasm/clients/run.sh: $f missing (wasm/build.sh, wasm/env.sh)" >&2; exit 1; }
done
node --test browser.test.mjs
