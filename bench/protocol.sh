#!/usr/bin/env bash
# Reading a POST /runs batch (Google Benchmark, release build): ParseTriggerBatch and ParseJson against
# nlohmann's plain json::parse of the same body; prints the ratios measured in the same run.
#   bench/protocol.sh [Google Benchmark flags...]       (scripts/bench protocol builds it first)
# Results: bench/out/protocol/protocol.txt (with the machine and its load average before and after).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
bin="$BENCH_BIN/bench/protocol/bench_protocol"
[ -x "$bin" ] || bench_die "$bin not built: scripts/build release bench_protocol"
out="$BENCH_OUT/protocol"; mkdir -p "$out"
{
  echo "machine: $(bench_machine)"
  "$bin" "$@"
  echo "load after: $(bench_load)"
} 2>&1 | tee "$out/protocol.txt"
