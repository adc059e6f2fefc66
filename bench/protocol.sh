#!/usr/bin/env bash
# Reading a POST /runs batch (Google Benchmark, release build): ParseTriggerBatch and ParseJson against
# nlohmann's plain json::parse of the same body; prints the ratios measured in the same run.
#   bench/protocol.sh [Google Benchmark flags...]       (scripts/bench protocol builds it first)
# Results: bench/out/protocol/protocol.txt (with the machine and its load average before and after).
exec "$(dirname "$0")/micro.sh" protocol "$@"
