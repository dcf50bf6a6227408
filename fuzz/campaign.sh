#!/usr/bin/env bash
# A long fuzzing campaign with a CPU-time budget per target (not a CI step; docs/fuzzing.md).
#
#   bash fuzz/campaign.sh [target ...]        (default: all five)
#
# Each target runs as one libFuzzer process, JOBS (default 1) at a time, at `nice` NICE
# (default 10), until the process (all its threads) has used CPU_SECONDS (default 3600) of CPU
# time, read from /proc; it is then stopped with SIGINT, which makes libFuzzer print its final
# statistics. CPU time, not wall clock, because the machine is shared with builds: a wall-clock
# budget would say nothing about how much fuzzing was done. One summary line per target goes
# to stdout and to fuzz/work/campaign.log (targets, executions, CPU and wall seconds, exec per
# CPU second, coverage, corpus size, findings); the full libFuzzer log to
# fuzz/work/<target>.log. The targets must be built first (.ci/fuzz.sh builds them, or the
# cargo command in docs/fuzzing.md). A crash ends that target's run early and is reported.
# Do not pause the fuzzers with SIGSTOP (to time something else) for longer than libFuzzer's
# -timeout (30 s, wall clock): on SIGCONT the input being run is reported as a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
source fuzz/libfuzzer.sh
budget=${CPU_SECONDS:-3600}
jobs=${JOBS:-1}
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
  local t=$1 work=fuzz/work/$1 art=fuzz/artifacts/$1/ log=fuzz/work/$1.log pid used t0 rc
  mkdir -p "$work" "$art"
  [ -x "$bin/$t" ] || { echo "campaign: $t: no binary at $bin/$t (build the targets first)"; return 1; }
  t0=$(date +%s)
  nice -n "$nice" "$bin/$t" "$work" "fuzz/corpus/$t" -max_total_time=1000000 -timeout=30 \
    $(fuzz_len_flags "$t") -artifact_prefix="$art" -print_final_stats=1 >"$log" 2>&1 &
  pid=$!
  used=0
  while kill -0 "$pid" 2>/dev/null; do
    used=$(cpu_seconds "$pid")
    if [ "$used" -ge "$budget" ]; then kill -INT "$pid"; break; fi
    sleep 5
  done
  rc=0
  wait "$pid" || rc=$?
  local execs cov corpus crash=none
  execs=$(fuzz_executions "$log")
  cov=$(fuzz_coverage "$log")
  corpus=$(find "$work" -type f | wc -l)
  if grep -qE 'Test unit written to .*(crash|leak|timeout|oom)-' "$log"; then
    crash=$(fuzz_units "$log" | tr '\n' ' ')
  fi
  local line
  line="$(date -u +%FT%TZ) $t: ${execs:-?} executions, ${used} CPU s, $(( $(date +%s) - t0 )) s wall,"
  line+=" $(( ${execs:-0} / (used > 0 ? used : 1) )) exec per CPU s, ${cov:-cov ?}, corpus $corpus"
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
