#!/usr/bin/env bash
# ringwheel micro-benchmarks (Google Benchmark, release build): the hashed wheel against
# std::priority_queue and cron next-fire; prints the ratios measured in the same run.
#   bench/ringwheel.sh [Google Benchmark flags...]       (scripts/bench ringwheel builds it first)
# Results: bench/out/ringwheel/ringwheel.txt (with the machine and its load average before and after).
exec "$(dirname "$0")/micro.sh" ringwheel "$@"
