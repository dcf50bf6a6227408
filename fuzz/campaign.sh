#!/usr/bin/env bash
# A long fuzzing campaign with a CPU-time budget per target (not a CI step; docs/fuzzing.md).
#
#   bash fuzz/campaign.sh [target ...]        (default: all five)
#
# Each target runs as PROCS (default 1) libFuzzer processes sharing its corpus directory (as
# libFuzzer's own -jobs does: each reloads the others' new inputs), JOBS (default 1) targets at
# a time, at `nice` NICE (default 10), until its processes (all their threads, summed) have
# used CPU_SECONDS (default 3600) of CPU time, read from /proc; they are then stopped with
# SIGINT, which makes libFuzzer print its final statistics. PROCS=2 JOBS=1 gives one target
# both cores, so five one-hour targets take 2.5 hours of wall clock instead of three. CPU
# time, not wall clock, because the machine is shared with builds: a wall-clock budget would
# say nothing about how much fuzzing was done. One summary line per target goes
# to stdout and to fuzz/work/campaign.log (targets, executions, CPU and wall seconds, exec per
# CPU second, coverage, corpus size, findings; with PROCS > 1, executions summed and the
# coverage of the merged corpus); the full libFuzzer logs to fuzz/work/<target>.log (and
# <target>.2.log, ... for the other processes). The targets must be built first (.ci/fuzz.sh
# builds them, or the cargo command in docs/fuzzing.md). A crash ends that target's run early and is reported.
# Do not pause the fuzzers with SIGSTOP (to time something else) for longer than libFuzzer's
# -timeout (30 s, wall clock): on SIGCONT the input being run is reported as a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
source fuzz/libfuzzer.sh
budget=${CPU_SECONDS:-3600}
jobs=${JOBS:-1}
procs=${PROCS:-1}
nice=${NICE:-10}
host=$(rustc -vV | sed -n 's/^host: //p')
bin=fuzz/target/$host/release
if [ "$#" -gt 0 ]; then targets=("$@"); else
  targets=(verify_batch event_json relay_frame cli_line gift_wrap)
fi
mkdir -p fuzz/work
tick=$(getconf CLK_TCK)
summary=fuzz/work/campaign.log

cpu_seconds() { # utime + stime of a process and all its threads, in seconds
  awk -v t="$tick" '{ sub(/^.*\) /, ""); print int(($12 + $13) / t) }' "/proc/$1/stat" 2>/dev/null || echo -1
}

run_one() {
  local t=$1 work=fuzz/work/$1 art=fuzz/artifacts/$1/ pid used t0 rc i
  local -a pids=() logs=()
  mkdir -p "$work" "$art"
  [ -x "$bin/$t" ] || { echo "campaign: $t: no binary at $bin/$t (build the targets first)"; return 1; }
  t0=$(date +%s)
  logs=("fuzz/work/$t.log")
  for ((i = 2; i <= procs; i++)); do logs+=("fuzz/work/$t.$i.log"); done
  for log in "${logs[@]}"; do
    # shellcheck disable=SC2046 # the flags are words
    nice -n "$nice" "$bin/$t" "$work" "fuzz/corpus/$t" -max_total_time=1000000 -timeout=30 \
      $(fuzz_len_flags "$t") -artifact_prefix="$art" -print_final_stats=1 >"$log" 2>&1 &
    pids+=($!)
  done
  declare -A last=()
  used=0
  while :; do
    local alive=0 u
    used=0
    for pid in "${pids[@]}"; do
      if kill -0 "$pid" 2>/dev/null; then
        alive=1
        u=$(cpu_seconds "$pid")
        [ "$u" -ge 0 ] && last[$pid]=$u
      fi
      used=$((used + ${last[$pid]:-0}))
    done
    [ "$alive" = 1 ] || break
    if [ "$used" -ge "$budget" ]; then
      for pid in "${pids[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
      break
    fi
    sleep 5
  done
  rc=0
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  local execs=0 e cov corpus crash=none
  for log in "${logs[@]}"; do
    e=$(fuzz_executions "$log")
    execs=$((execs + ${e:-0}))
    if grep -qE 'Test unit written to .*(crash|leak|timeout|oom)-' "$log"; then
      crash="${crash/#none/}$(fuzz_units "$log" | tr '\n' ' ')"
    fi
  done
  if [ "$procs" -gt 1 ]; then
    # The coverage of the merged corpus: one pass over it, no fuzzing.
    local m
    m=$(mktemp)
    # shellcheck disable=SC2046
    "$bin/$t" "$work" -runs=0 $(fuzz_len_flags "$t") >"$m" 2>&1 || true
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$m" | tail -1)
    rm -f "$m"
  else
    cov=$(fuzz_coverage "${logs[0]}")
  fi
  corpus=$(find "$work" -type f | wc -l)
  local line
  line="$(date -u +%FT%TZ) $t: ${execs} executions, ${used} CPU s, $(( $(date +%s) - t0 )) s wall,"
  line+=" $procs process(es), $(( execs / (used > 0 ? used : 1) )) exec per CPU s, ${cov:-cov ?}, corpus $corpus"
  line+=" (+$(find "fuzz/corpus/$t" -type f | wc -l) seeds), exit $rc, findings: $crash"
  echo "$line" | tee -a "$summary"
}

running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true # the next target starts when any one ends
    running=$((running - 1))
  fi
done
wait
