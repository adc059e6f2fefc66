#!/usr/bin/env bash
# executor-cpu: cronwheel-executor's CPU per /run against the benchmarks' minimal server on the same HTTP
# library (`xxl-stub --minimal`: parses the request, writes a trace line, queues a success callback), under
# the same wrk load in one run. Goal (issue 14): cronwheel-executor / minimal <= 1.5.
#
#   bench/executor_cpu.sh [--repeat 3] [--seconds 10] [--warmup 3] [--jobs 1000] [--connections 32]
#                         [--threads 64] [--executor-threads N]
#
# 1. A fake admin (bench/tools/fake_admin.py: answers /api/callback and /api/registry with {"code":200}),
#    cronwheel-executor (noopJobHandler, --run-trace-file; its own server_threads, 2, unless
#    --executor-threads says otherwise) and xxl-stub --minimal (--threads, at least --connections: cpp-httplib
#    holds a thread per open connection; --listen-backlog 4096 like the executor's, --trace-file). The
#    executor's server reads connections without a thread each, and I/O threads beyond the cores only hand
#    completions from thread to thread: with --server-threads 64 on 2 cores it spent 43% of its CPU in
#    futex waits, wakes and task switches and cost 5.7x the minimal server per /run (docs/performance.md,
#    "The executor's server threads"), which is what this benchmark measured from 4e017cf to a1a4a1c. Both
#    register with and call back to the fake admin, in batches of up to 100 results from one thread, so
#    both do the same work per /run apart from what is under test. A Python server and not a real admin:
#    the callbacks are batched (a few tens of POSTs a second), so it needs little CPU, and no PostgreSQL
#    competes with the servers for the two cores; its CPU is recorded to show it.
# 2. Rounds (--repeat): each server in turn (the order alternates from round to round) gets wrk -t2
#    -c<connections> POST /run with a valid TriggerParam (unique logId, job ids cycling over 1..jobs; the
#    access-token header; bench/tools/run.lua): --warmup s, then --seconds measured. CPU time of the server
#    process (utime + stime of /proc/<pid>/stat, all threads) is read just before the measured wrk run and
#    0.5 s after it ends (so the window's callbacks are sent too) and divided by the /run requests the
#    server received in that wrk run (its run trace, by the run's logId range; wrk's own count is shown).
# 3. Per round: µs of CPU per /run of each, requests/s of each (wrk), the ratio executor / minimal; then
#    the median ratio over the rounds. /proc/loadavg is recorded with every window.
# Environment: BENCH_PERF=1 records `perf record -e cpu-clock -p <server>` of each measured window
# (perf-<server>-r<round>.data); BENCH_EXECUTOR_FLAGS / BENCH_STUB_FLAGS add flags; BENCH_BIN runs other
# binaries (before/after); BENCH_KEEP_LOGS=1 keeps the executor's job logs; BENCH_EXECUTOR_LOG_DIR puts
# them elsewhere (a tmpfs such as /dev/shm/x shows what the disk's file creation costs; not removed).
# Results: bench/out/executor-cpu/ (report.txt, results.json, windows.jsonl, wrk outputs, traces, logs).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

repeat=3; seconds=10; warmup=3; jobs=1000; connections=32; threads=64; executor_threads=
need() { (($# >= 2)) && [ -n "$2" ] || bench_die "executor_cpu.sh: $1 needs a value"; }
while (($#)); do
  case "$1" in
    --repeat) need "$@"; repeat="$2"; shift 2 ;;
    --seconds) need "$@"; seconds="$2"; shift 2 ;;
    --warmup) need "$@"; warmup="$2"; shift 2 ;;
    --jobs) need "$@"; jobs="$2"; shift 2 ;;
    --connections) need "$@"; connections="$2"; shift 2 ;;
    --threads) need "$@"; threads="$2"; shift 2 ;;
    --executor-threads) need "$@"; executor_threads="$2"; shift 2 ;;
    *) bench_die "executor_cpu.sh: unknown option '$1' (valid: --repeat --seconds --warmup --jobs --connections --threads --executor-threads)" ;;
  esac
done
for v in "repeat:$repeat" "seconds:$seconds" "warmup:$warmup" "jobs:$jobs" "connections:$connections" "threads:$threads"; do
  [[ "${v#*:}" =~ ^[1-9][0-9]*$ ]] || bench_die "--${v%%:*} '${v#*:}': a positive whole number"
done
[ -z "$executor_threads" ] || [[ "$executor_threads" =~ ^[1-9][0-9]*$ ]] ||
  bench_die "--executor-threads '$executor_threads': a positive whole number (the executor allows 1..64)"
executor_flags=()
[ -z "$executor_threads" ] || executor_flags=(--server-threads "$executor_threads")
((threads >= connections)) ||
  bench_die "--threads $threads is below --connections $connections: each open connection holds a server thread"
((${BENCH_CHECK_ONLY:-0})) && exit 0  # scripts/bench checks the options before it builds
command -v wrk >/dev/null || bench_die "wrk is not installed: scripts/setup --bench"
[ -x "$BENCH_BIN/executor/cronwheel-executor" ] ||
  bench_die "$BENCH_BIN/executor/cronwheel-executor not built: scripts/build release cronwheel-executor"
[ -x "$BENCH_BIN/tests/support/xxl-stub" ] || bench_die "$BENCH_BIN/tests/support/xxl-stub not built: scripts/build release xxl-stub"

out="$BENCH_OUT/executor-cpu"
rm -rf "$out"; mkdir -p "$out"
BENCH_TOKEN=$(bench_secret)
bench_traps
bench_log "executor-cpu: wrk -t2 -c$connections, ${warmup} s warm-up + ${seconds} s measured per server, $repeat round(s), $jobs job ids, the stub's $threads threads, the executor's server_threads ${executor_threads:-2 (its default)}"
bench_log "machine: $(bench_machine)"

# The fake admin.
bench_start_fake_admin "$out"
fake_pid="$BENCH_FAKE_ADMIN_PID" fport="$BENCH_FAKE_ADMIN_PORT"
admin_url="http://127.0.0.1:$fport"

# The two servers.
eport=$(bench_executor_port)
# shellcheck disable=SC2086
bench_start_executor "$out" "$admin_url" "$eport" --run-trace-file "$out/executor-trace.txt" \
  "${executor_flags[@]}" ${BENCH_EXECUTOR_FLAGS:-}
exec_pid="$BENCH_EXECUTOR_PID" eport="$BENCH_EXECUTOR_PORT"
sport=$(bench_executor_port)
# shellcheck disable=SC2086
bench_start_stub "$out" "$admin_url" "$sport" "$threads" "$out/stub-trace.txt" cronwheel-bench-stub ${BENCH_STUB_FLAGS:-}
stub_pid="$BENCH_STUB_PID" sport="$BENCH_STUB_PORT"

wrk_run() {  # <port> <seconds> <first logId> <output>
  wrk -t2 -c"$connections" -d"$2s" --timeout 5s -s "$BENCH_ROOT/bench/tools/run.lua" \
    -H "XXL-JOB-ACCESS-TOKEN: $BENCH_TOKEN" "http://127.0.0.1:$1/run" -- "$jobs" "$3" >"$4" 2>&1
}
stats() { curl -fsS -m 5 "http://127.0.0.1:$fport/stats" || echo '{}'; }

window=0
measure() {  # <server: executor|minimal> <round>
  local server="$1" round="$2" pid port
  if [ "$server" = executor ]; then pid="$exec_pid"; port="$eport"; else pid="$stub_pid"; port="$sport"; fi
  kill -0 "$pid" 2>/dev/null || bench_die "the $server server (pid $pid) is gone: see $out/*.log"
  window=$((window + 1))
  wrk_run "$port" "$warmup" $((window * 1000000000000)) "$out/wrk-$server-r$round-warmup.txt"
  window=$((window + 1))
  local first=$((window * 1000000000000))
  bench_sleep 0.5
  local load_start cpu0 fcpu0 t0 stats0
  stats0=$(stats); load_start=$(bench_load)
  cpu0=$(bench_cpu_s "$pid"); fcpu0=$(bench_cpu_s "$fake_pid"); t0=$(bench_now_ms)
  local perf_pid=""
  if ((${BENCH_PERF:-0})); then
    # shellcheck disable=SC2086
    perf record -q -e cpu-clock -F 999 ${BENCH_PERF_CALLGRAPH:-} -p "$pid" -o "$out/perf-$server-r$round.data" \
      -- sleep "$seconds" >"$out/perf-$server-r$round.log" 2>&1 &
    perf_pid=$!
    bench_track "$perf_pid"
  fi
  wrk_run "$port" "$seconds" "$first" "$out/wrk-$server-r$round.txt"
  local t1; t1=$(bench_now_ms)
  bench_sleep 0.5
  local cpu1 fcpu1 t2 stats1 load_end
  cpu1=$(bench_cpu_s "$pid"); fcpu1=$(bench_cpu_s "$fake_pid"); t2=$(bench_now_ms)
  stats1=$(stats); load_end=$(bench_load)
  [ -z "$perf_pid" ] || wait "$perf_pid" || true
  printf '{"server":"%s","round":%d,"first_log_id":%d,"cpu_start_s":%s,"cpu_end_s":%s,"start_ms":%d,"wrk_end_ms":%d,"end_ms":%d,"fake_admin_cpu_s":%s,"fake_admin_start":%s,"fake_admin_end":%s,"load_start":"%s","load_end":"%s","wrk":"%s"}\n' \
    "$server" "$round" "$first" "$cpu0" "$cpu1" "$t0" "$t1" "$t2" \
    "$(awk -v a="$fcpu0" -v b="$fcpu1" 'BEGIN { printf "%.3f", b - a }')" "$stats0" "$stats1" \
    "$load_start" "$load_end" "wrk-$server-r$round.txt" >>"$out/windows.jsonl"
  bench_log "round $round $server: $(grep -h 'Requests/sec' "$out/wrk-$server-r$round.txt" | tr -s ' '), CPU $(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.2f", b - a }') s, load $load_start"
}

: >"$out/windows.jsonl"
for round in $(seq 1 "$repeat"); do
  if ((round % 2 == 1)); then order=(executor minimal); else order=(minimal executor); fi
  for server in "${order[@]}"; do measure "$server" "$round"; done
done

bench_stop "$exec_pid" 60   # SIGTERM flushes the run traces
bench_stop "$stub_pid" 60
bench_stop "$fake_pid" 10
BENCH_PIDS=()
((${BENCH_KEEP_LOGS:-0})) || rm -rf "$out/executor-logs"
python3 "$BENCH_ROOT/bench/tools/executor_cpu_report.py" --dir "$out" --connections "$connections" \
  --jobs "$jobs" --threads "$threads" --executor-threads "${executor_threads:-2 (its default)}" \
  --json-out "$out/results.json" | tee "$out/report.txt"
