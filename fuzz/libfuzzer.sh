# Sourced by .ci/fuzz.sh and fuzz/campaign.sh: what both need to know about running a target
# and reading libFuzzer's log.

# fuzz_len_flags TARGET: the generator targets (verify_batch, gift_wrap) read their whole input
# from the first run on; libFuzzer's length control would keep them to a few bytes, short of
# most of the generator, for minutes.
fuzz_len_flags() {
  case $1 in verify_batch | gift_wrap) echo "-len_control=0" ;; esac
}

# fuzz_executions LOG, fuzz_coverage LOG, fuzz_units LOG: the executions of the final
# statistics, the last "cov: N ft: M" line, and the inputs libFuzzer wrote (crashes, timeouts).
fuzz_executions() { sed -n 's/^stat::number_of_executed_units: *//p' "$1" | tail -1; }
fuzz_coverage() { grep -E '^#[0-9]+' "$1" | grep -oE 'cov: [0-9]+ ft: [0-9]+' | tail -1; }
fuzz_units() { sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$1"; }
