#!/usr/bin/env bash
# Runs one Google Benchmark micro-benchmark of the release build and keeps its output.
#   bench/micro.sh NAME [Google Benchmark flags...]    (bench/ringwheel.sh, bench/protocol.sh)
# Runs $BENCH_BIN/bench/NAME/bench_NAME; results: bench/out/NAME/NAME.txt, with the machine and its load
# average before and after.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
name="$1"; shift
bin="$BENCH_BIN/bench/$name/bench_$name"
[ -x "$bin" ] || bench_die "$bin not built: scripts/build release bench_$name"
out="$BENCH_OUT/$name"; mkdir -p "$out"
{
  echo "machine: $(bench_machine)"
  "$bin" "$@"
  echo "load after: $(bench_load)"
} 2>&1 | tee "$out/$name.txt"
