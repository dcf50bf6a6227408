#!/usr/bin/env bash
# aarch64-unknown-linux-gnu under qemu: cross-builds the nostr-verify test binaries with
# Debian's rustc-web and a private arm64 std sysroot (shared/PLATFORMS.md's recipe), then runs
# the lib, bip340_vectors, backend, batch_differential and nostr_differential suites under
# qemu-aarch64-static. Nothing is forced: the crate picks what it picks on real ARM (the
# portable arm's baseline build; sha2 uses the ARMv8 SHA instructions where the CPU reports
# them, which qemu's default `max` CPU does). Emulated timings say nothing about ARM speed.
#
# Needs root (or sudo) and apt. Every install, build or test failure fails the script.
# Cold on a 2-core machine: about 10 min (7 of them the release build of the test binaries).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
TARGET=aarch64-unknown-linux-gnu
SR=${NOSTR_VERIFY_ARM64_SYSROOT:-/opt/sysroot-arm64}
now() { date +%s; }
t0=$(now)

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "aarch64: needs root or sudo to install the cross toolchain with apt" >&2
  exit 1
fi

echo "aarch64: installing rustc-web, the arm64 C cross compiler and qemu-user-static"
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends \
  rustc-web cargo-web qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross >/dev/null

RUSTC_VERSION=$(dpkg-query -W -f='${Version}' rustc-web)
RUSTLIB="$SR/usr/lib/rustlib/$TARGET/lib"
if ! ls "$RUSTLIB"/libstd-*.rlib >/dev/null 2>&1 \
   || [ "$(cat "$SR/.rustc-web-version" 2>/dev/null)" != "$RUSTC_VERSION" ]; then
  echo "aarch64: unpacking libstd-rust-web-dev:arm64 $RUSTC_VERSION into $SR"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    "${SUDO[@]}" dpkg --add-architecture arm64
  fi
  "${SUDO[@]}" apt-get update -qq
  dl=$(mktemp -d)
  (cd "$dl" && apt-get download -qq "libstd-rust-web-dev:arm64=$RUSTC_VERSION")
  "${SUDO[@]}" rm -rf "$SR"
  "${SUDO[@]}" mkdir -p "$SR"
  "${SUDO[@]}" dpkg -x "$dl"/libstd-rust-web-dev_*_arm64.deb "$SR"
  echo "$RUSTC_VERSION" | "${SUDO[@]}" tee "$SR/.rustc-web-version" >/dev/null
  rm -rf "$dl"
fi
ls "$RUSTLIB"/libstd-*.rlib >/dev/null   # fails loudly if the sysroot has no arm64 std

for tool in /usr/bin/rustc /usr/bin/cargo aarch64-linux-gnu-gcc qemu-aarch64-static; do
  command -v "$tool" >/dev/null || { echo "aarch64: $tool missing after install" >&2; exit 1; }
done
echo "aarch64: $(/usr/bin/rustc --version), $(qemu-aarch64-static --version | head -1)"
echo "aarch64: toolchain ready in $(( $(now) - t0 )) s"

# Debian's compiler and cargo (rustup's proxies come first on PATH). The test binaries are
# built once, in release (emulation is slow enough), without LTO and with many codegen units
# so the cold build stays short. Own target dir: another compiler, other fingerprints.
export PATH=/usr/bin:$PATH RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR_AARCH64:-target/aarch64-qemu}
export CARGO_PROFILE_RELEASE_LTO=false
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
export CARGO_PROFILE_RELEASE_DEBUG=0
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="--sysroot=$SR/usr"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64-static -L /usr/aarch64-linux-gnu"
unset NOSTR_VERIFY_BACKEND

# sha2 must be built with its `asm` feature for aarch64 (the ARMv8 SHA-256 path; see
# Cargo.toml), and the emulated CPU must report the instructions (tests/backend.rs checks).
sha2_features=$(/usr/bin/cargo tree --locked --target "$TARGET" -p nostr-verify -e features -i sha2)
grep -q 'sha2 feature "asm"' <<<"$sha2_features" \
  || { echo "aarch64: sha2 is not built with its asm feature (no ARMv8 SHA path)" >&2; exit 1; }
export NOSTR_VERIFY_EXPECT_ARM_SHA=1

SUITES=(--lib --test bip340_vectors --test backend --test batch_differential --test nostr_differential)
t1=$(now)
/usr/bin/cargo test --locked --release --target "$TARGET" -p nostr-verify "${SUITES[@]}" --no-run
echo "aarch64: test binaries built in $(( $(now) - t1 )) s"
t2=$(now)
/usr/bin/cargo test --locked --release --target "$TARGET" -p nostr-verify "${SUITES[@]}"
echo "aarch64: suites passed under qemu in $(( $(now) - t2 )) s (total $(( $(now) - t0 )) s)"
