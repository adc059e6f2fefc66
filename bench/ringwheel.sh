#!/usr/bin/env bash
# ringwheel micro-benchmarks (Google Benchmark, release build): the hashed wheel against
# std::priority_queue and cron next-fire; prints the ratios measured in the same run.
#   bench/ringwheel.sh [Google Benchmark flags...]       (scripts/bench ringwheel builds it first)
# Results: bench/out/ringwheel/ringwheel.txt (with the machine and its load average before and after).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin="$BENCH_BIN/bench/ringwheel/bench_ringwheel"
[ -x "$bin" ] || bench_die "$bin not built: scripts/build release bench_ringwheel"
out="$BENCH_OUT/ringwheel"; mkdir -p "$out"
{
  echo "machine: $(bench_machine)"
  "$bin" "$@"
  echo "load after: $(bench_load)"
} 2>&1 | tee "$out/ringwheel.txt"
