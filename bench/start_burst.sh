#!/usr/bin/env bash
# start-burst: how soon cronwheel-executor starts N fires held for one instant, with nothing else on the
# machine: no admin, no PostgreSQL. It is the floor under the start lag that fire-lag measures with the
# whole system on the same cores (docs/performance.md, "What this box allows").
#
#   bench/start_burst.sh [--n 10000] [--instants 6] [--lead-ms 1500]
#
# 1. A fake admin (bench/tools/fake_admin.py: answers /api/callback and /api/registry with {"code":200}) and
#    cronwheel-executor (noopJobHandler, --run-trace-file).
# 2. For each of --instants instants: N fires (job ids 1..N, one fire each) sent ahead in POST /runs of
#    1,000, each with runAtMs = the instant, as an admin sending ahead does; the next instant is a whole
#    second at least --lead-ms after the sending starts, so every fire is held before it
#    (bench/tools/start_burst.py send).
# 3. The executor is stopped (its run trace is then complete) and each instant's start lag is read from the
#    trace: the handler's start less the instant. Per instant: min, p50, p99, max, fires missing, answers
#    that were not "held", and the executor's CPU per fire from 100 ms before the instant to 900 ms after
#    (utime + stime of /proc/<pid>/stat: the start, the handler, the job log, the callback).
# Environment: BENCH_EXECUTOR_FLAGS adds flags; BENCH_BIN runs other binaries (before/after); BENCH_PERF=1
# records `perf record -k CLOCK_REALTIME -g` of the executor for the whole run (perf.data; the instants are
# in sent.jsonl, for `perf report --time`).
# Results: bench/out/start-burst/ (report.txt, sent.jsonl, trace, logs).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

n=10000; instants=6; lead_ms=1500
need() { (($# >= 2)) && [ -n "$2" ] || bench_die "start_burst.sh: $1 needs a value"; }
while (($#)); do
  case "$1" in
    --n) need "$@"; n="$2"; shift 2 ;;
    --instants) need "$@"; instants="$2"; shift 2 ;;
    --lead-ms) need "$@"; lead_ms="$2"; shift 2 ;;
    *) bench_die "start_burst.sh: unknown option '$1' (valid: --n --instants --lead-ms)" ;;
  esac
done
for v in "n:$n" "instants:$instants" "lead-ms:$lead_ms"; do
  [[ "${v#*:}" =~ ^[1-9][0-9]*$ ]] || bench_die "--${v%%:*} '${v#*:}': a positive whole number"
done
((n <= 100000)) || bench_die "--n $n: at most 100000"
((${BENCH_CHECK_ONLY:-0})) && exit 0  # scripts/bench checks the options before it builds
[ -x "$BENCH_BIN/executor/cronwheel-executor" ] ||
  bench_die "$BENCH_BIN/executor/cronwheel-executor not built: scripts/build release cronwheel-executor"

out="$BENCH_OUT/start-burst"
rm -rf "$out"; mkdir -p "$out"
BENCH_TOKEN=$(bench_secret)
bench_traps
bench_log "start-burst: $n fires held for each of $instants instants, sent ${lead_ms} ms or more ahead"
bench_log "machine: $(bench_machine)"

bench_start_fake_admin "$out"
fake_pid="$BENCH_FAKE_ADMIN_PID" fport="$BENCH_FAKE_ADMIN_PORT"

eport=$(bench_executor_port)
# shellcheck disable=SC2086
bench_start_executor "$out" "http://127.0.0.1:$fport" "$eport" --run-trace-file "$out/trace.txt" \
  ${BENCH_EXECUTOR_FLAGS:-}
exec_pid="$BENCH_EXECUTOR_PID" eport="$BENCH_EXECUTOR_PORT"

perf_pid=""
if ((${BENCH_PERF:-0})); then
  perf record -q -k CLOCK_REALTIME -F 2000 -g -p "$exec_pid" -o "$out/perf.data" >"$out/perf.log" 2>&1 &
  perf_pid=$!
  bench_track "$perf_pid"
fi
bench_log "load before: $(bench_load)"
python3 "$BENCH_ROOT/bench/tools/start_burst.py" send --port "$eport" --token "$BENCH_TOKEN" --n "$n" \
  --instants "$instants" --first-log-id 1000000000000 --lead-ms "$lead_ms" --pid "$exec_pid" \
  --out "$out/sent.jsonl"
bench_log "load after: $(bench_load)"
[ -z "$perf_pid" ] || { kill -INT "$perf_pid" 2>/dev/null || true; wait "$perf_pid" || true; }
bench_stop "$exec_pid" 60  # SIGTERM flushes the run trace
bench_stop "$fake_pid" 10
BENCH_PIDS=()
rm -rf "$out/executor-logs"
python3 "$BENCH_ROOT/bench/tools/start_burst.py" report --trace "$out/trace.txt" --sent "$out/sent.jsonl" |
  tee "$out/report.txt"
