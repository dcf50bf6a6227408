#!/usr/bin/env bash
# Fuzz step of CI (called from .ci/run): builds the five differential targets of fuzz/ with
# libFuzzer (the libfuzzer-sys crate, through plain cargo: no cargo-fuzz needed) and runs each
# for FUZZ_SECONDS (default 60), two at a time (FUZZ_JOBS), one process each. docs/fuzzing.md has the details.
#
# The flags are the ones `cargo fuzz build -s none` passes (SanitizerCoverage's inline 8-bit
# counters, PC table, compare tracing and stack depth; `--cfg fuzzing`; release with debug
# assertions and overflow checks, set in fuzz/Cargo.toml). They are stable codegen options,
# so the machine's stable rustc builds the targets; a rustc that refuses them (or has no C++
# compiler for libFuzzer) makes this step skip, saying why. A crash fails the step and prints
# the reproducer's path and the command that replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
# The targets build with fuzz/Cargo.toml's release profile (line tables for crash reports):
# profile overrides from the environment (.ci/run exports some for its test builds) are dropped.
unset CARGO_PROFILE_RELEASE_LTO CARGO_PROFILE_RELEASE_CODEGEN_UNITS CARGO_PROFILE_RELEASE_DEBUG
source fuzz/libfuzzer.sh
secs=${FUZZ_SECONDS:-60}
# FUZZ_TARGETS: a space-separated subset (default: all five).
read -r -a targets <<<"${FUZZ_TARGETS:-verify_batch event_json relay_frame cli_line gift_wrap}"
start=$(date +%s)

# fuzz/ is outside the workspace, so `cargo fmt --all` does not see it.
cargo fmt --manifest-path fuzz/Cargo.toml -- --check

host=$(rustc -vV | sed -n 's/^host: //p')
sancov="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
sancov+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
sancov+=" -Cllvm-args=-sanitizer-coverage-pc-table"
sancov+=" -Cllvm-args=-sanitizer-coverage-trace-compares"
sancov+=" -Cllvm-args=-sanitizer-coverage-stack-depth --cfg fuzzing"

skip() { echo "fuzz: SKIPPED: $*"; exit 0; }
if ! command -v c++ >/dev/null; then
  skip "no C++ compiler (libfuzzer-sys builds libFuzzer from C++)"
fi
probe=$(mktemp -d)
echo 'pub fn f(x: u8) -> bool { x == 7 }' >"$probe/p.rs"
bootstrap=""
# shellcheck disable=SC2086 # the flags are words
if ! rustc $sancov -O --crate-type=lib --emit=obj "$probe/p.rs" -o "$probe/p.o" 2>"$probe/err"; then
  # shellcheck disable=SC2086
  if RUSTC_BOOTSTRAP=1 rustc $sancov -O --crate-type=lib --emit=obj "$probe/p.rs" -o "$probe/p.o" 2>/dev/null; then
    bootstrap=1
  else
    skip "$(rustc --version) refuses the SanitizerCoverage flags: $(head -1 "$probe/err")"
  fi
fi
rm -rf "$probe"
echo "fuzz: $(rustc --version) accepts the SanitizerCoverage flags${bootstrap:+ (with RUSTC_BOOTSTRAP=1)}"

# --target: RUSTFLAGS then apply to the targets' code only, not to build scripts and
# proc-macros (what cargo-fuzz does too).
echo "--- build"
# RUSTC_BOOTSTRAP only when the probe needed it: a changed value rebuilds every crate.
if [ -n "$bootstrap" ]; then export RUSTC_BOOTSTRAP=1; fi
RUSTFLAGS="$sancov" cargo build --manifest-path fuzz/Cargo.toml --release --locked --target "$host" --bins
built=$(date +%s)
echo "fuzz: built in $(( built - start )) s"

bin=fuzz/target/$host/release
# Two targets at a time (the machine has two cores; each target is one process), each
# reporting when it ends; a crash anywhere fails the step after all have run.
jobs=${FUZZ_JOBS:-2}
run_one() {
  local t=$1 work=fuzz/work/$1 art=fuzz/artifacts/$1/ log t0
  mkdir -p "$work" "$art"
  log=$(mktemp)
  # New inputs go to fuzz/work/<target> (not committed); fuzz/corpus/<target> is the seed.
  t0=$(date +%s)
  # shellcheck disable=SC2046 # the flags are words
  if "$bin/$t" "$work" "fuzz/corpus/$t" -max_total_time="$secs" -timeout=30 $(fuzz_len_flags "$t") \
      -artifact_prefix="$art" -print_final_stats=1 >"$log" 2>&1; then
    execs=$(fuzz_executions "$log")
    cov=$(fuzz_coverage "$log")
    echo "fuzz: $t: $execs executions in $(( $(date +%s) - t0 )) s," \
      "$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log") exec/s, $cov, no crash"
    rm -f "$log"
  else
    tail -60 "$log"
    for f in $(fuzz_units "$log"); do
      echo "fuzz: $t CRASHED; reproducer: $f"
      echo "fuzz: replay with: $bin/$t $f"
    done
    echo "fuzz: $t FAILED"
    rm -f "$log"
    return 1
  fi
}
echo "--- ${#targets[@]} targets, ${secs} s each, $jobs at a time"
failed=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do
  wait "$p" || failed=1
done
echo "fuzz: step took $(( $(date +%s) - start )) s (build $(( built - start )) s)"
if [ "$failed" != 0 ]; then
  echo "fuzz: FAILED (a target crashed; reproducers above)"
  exit 1
fi
