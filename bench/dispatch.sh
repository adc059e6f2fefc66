#!/usr/bin/env bash
# dispatch: how fast the admin sends fires to one executor, against how fast wrk alone can POST /run to
# that same executor, measured in the same run and at the same place (the executor's run trace).
#
#   bench/dispatch.sh [--jobs 10000] [--bursts 3] [--period 10] [--wrk-seconds 10] [--connections 32]
#                     [--executor cronwheel|stub]
#
# 1. One admin, one executor, a private PostgreSQL. The executor is cronwheel-executor (noopJobHandler,
#    --run-trace-file) or, with --executor stub, `xxl-stub --minimal` (64 threads, listen backlog 4096; with
#    BENCH_STUB_FLAGS="--keep-alive-max-count K" it closes each connection after K answers, as cpp-httplib's
#    default of 5 and HTTP/1.0 servers do: wrk then opens a connection per K requests too, so the ratio
#    compares the admin's connection opening with wrk's against the same executor).
# 2. wrk: --connections connections, 2 threads, POST /run with a valid TriggerParam (unique logId, job ids
#    cycling over 1..jobs, the access-token header; bench/tools/run.lua) for 3 s of warm-up, then
#    --wrk-seconds measured. The warm-up also starts the executor's job threads for every job id.
# 3. The admin: --jobs jobs, all due at the same instant every --period seconds ('0/10 * * * * ?'), for
#    --bursts bursts. The admin sends each burst as fast as it can: claim, trigger pools, HTTP client
#    (at most --connections requests in flight, the admin's executor_connections).
# Rate = requests received per second at the executor between the 5th and 95th percentile of a burst's
# receive times (the same for wrk's window). Ratio = admin / wrk. Goal (issue 9): >= 0.5.
# Environment: BENCH_PERF=1 records perf profiles (cpu-clock) of the executor during wrk's window and of
# the whole machine during the first burst (perf-wrk.data, perf-burst.data; `perf report -i ...`).
# BENCH_ADMIN_FLAGS / BENCH_EXECUTOR_FLAGS / BENCH_STUB_FLAGS add flags; BENCH_BIN runs other binaries (before/after).
# Results: bench/out/dispatch/ (report.txt, results.json, wrk.txt, logs, trace).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

jobs=10000; bursts=3; period=10; wrk_seconds=10; connections=32; executor=cronwheel
while (($#)); do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --bursts) bursts="$2"; shift 2 ;;
    --period) period="$2"; shift 2 ;;
    --wrk-seconds) wrk_seconds="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --executor) executor="$2"; shift 2 ;;
    *) bench_die "dispatch.sh: unknown option $1 (valid: --jobs --bursts --period --wrk-seconds --connections --executor)" ;;
  esac
done
((60 % period == 0)) || bench_die "--period must divide 60"
case "$executor" in cronwheel | stub) ;; *) bench_die "--executor '$executor': valid are cronwheel, stub" ;; esac
command -v wrk >/dev/null || bench_die "wrk is not installed: scripts/setup --bench"

out="$BENCH_OUT/dispatch"
rm -rf "$out"; mkdir -p "$out"
BENCH_TOKEN=$(bench_secret); BENCH_ADMIN_PASSWORD="Bench-$(bench_secret)"
bench_traps
bench_pg_up
bench_log "dispatch: $jobs jobs x $bursts bursts every ${period} s against wrk ${wrk_seconds} s, $connections connections, executor $executor ${BENCH_STUB_FLAGS:-}"
bench_log "machine: $(bench_machine)"

dsn=$(bench_fresh_db cwbench_dispatch)
aport=$(bench_admin_port); eport=$(bench_executor_port)
bench_start_admin "$out" "$dsn" "$aport" --executor-connections "$connections" ${BENCH_ADMIN_FLAGS:-}
aport="$BENCH_ADMIN_PORT"
if [ "$executor" = stub ]; then
  # shellcheck disable=SC2086
  bench_start_stub "$out" "$(bench_admin_urls "$aport")" "$eport" 64 "$out/trace.txt" "$BENCH_APP" \
    ${BENCH_STUB_FLAGS:-}
  eport="$BENCH_STUB_PORT"; epid="$BENCH_STUB_PID"
else
  # shellcheck disable=SC2086
  bench_start_executor "$out" "$aport" "$eport" --run-trace-file "$out/trace.txt" ${BENCH_EXECUTOR_FLAGS:-}
  eport="$BENCH_EXECUTOR_PORT"; epid="$BENCH_EXECUTOR_PID"
fi
bench_await_registered "$dsn"
group=$(bench_add_group "$dsn")
bench_add_jobs "$dsn" "$group" "$jobs" "0/$period * * * * ?" 0 false
python3 "$BENCH_ROOT/bench/tools/procsample.py" --out "$out/samples.csv" --pg "$BENCH_PG_PID" \
  admin="$BENCH_ADMIN_PID" executor="$epid" &
sampler=$!
bench_track "$sampler"

url="http://127.0.0.1:$eport/run"
wrk_run() {  # <seconds> <first logId> <output>
  wrk -t2 -c"$connections" -d"$1s" --timeout 5s -s "$BENCH_ROOT/bench/tools/run.lua" \
    -H "XXL-JOB-ACCESS-TOKEN: $BENCH_TOKEN" "$url" -- "$jobs" "$2" >"$3" 2>&1
}
bench_log "wrk warm-up (3 s)"
wrk_run 3 1000000000000 "$out/wrk-warmup.txt"
bench_sleep 1
wrk_load_start=$(bench_load)
wrk_start=$(bench_now_ms); wrk_opens=$(bench_tcp_opens)
if ((${BENCH_PERF:-0})); then
  # Where the executor's CPU goes when wrk alone drives it (software clock: no hardware counters here).
  perf record -q -e cpu-clock -F 999 ${BENCH_PERF_CALLGRAPH:-} -p "$epid" -o "$out/perf-wrk.data" \
    -- sleep "$wrk_seconds" >"$out/perf-wrk.log" 2>&1 &
fi
wrk_run "$wrk_seconds" 2000000000000 "$out/wrk.txt"
wrk_end=$(bench_now_ms); wrk_opens=$(($(bench_tcp_opens) - wrk_opens))
bench_log "wrk: $(grep -h 'Requests/sec' "$out/wrk.txt"), load $wrk_load_start"

# The admin's bursts: the first instant a multiple of the period at least 8 s away (pre-read is 5 s).
now=$(bench_now_ms)
first=$(( (now + 8000 + period * 1000 - 1) / (period * 1000) * (period * 1000) ))
last=$(( first + (bursts - 1) * period * 1000 ))
psql "$dsn" -qc "UPDATE job SET enabled = true; UPDATE job_schedule SET next_fire_ms = $first" >/dev/null
bench_sleep_until "$((first - 500))"
if ((${BENCH_PERF:-0})); then
  # The whole machine during the first burst (admin, executor, PostgreSQL).
  perf record -q -a -e cpu-clock -F 999 ${BENCH_PERF_CALLGRAPH:-} -o "$out/perf-burst.data" -- sleep 3 \
    >"$out/perf-burst.log" 2>&1 &
fi
bench_sleep_until "$first"
admin_load_start=$(bench_load); admin_opens=$(bench_tcp_opens)
bench_log "admin bursts at $(date -u -d @$((first / 1000)) +%T)..$(date -u -d @$((last / 1000)) +%T) UTC, load $admin_load_start"
# Disabled just after the last instant, before the pre-read (5 s ahead) reads the next one; then the
# last burst has the rest of the period to arrive.
bench_sleep_until "$((last + 300))"
psql "$dsn" -qc "UPDATE job SET enabled = false" >/dev/null
bench_sleep_until "$((last + period * 1000 - 500))"
admin_load_end=$(bench_load); admin_opens=$(($(bench_tcp_opens) - admin_opens))
kill -TERM "$sampler"; wait "$sampler" || true
bench_stop "$epid" 60   # SIGTERM flushes the run trace
bench_stop "$BENCH_ADMIN_PID" 30
BENCH_PIDS=()
psql "$dsn" -qc "\\copy (SELECT id, job_id, scheduled_ms, dispatch_ms, trigger_ms, trigger_code FROM job_log
    WHERE trigger_type = 'CRON' AND scheduled_ms BETWEEN $first AND $last) TO '$out/job_log.csv' CSV HEADER"
rm -rf "$out/executor-logs"
python3 "$BENCH_ROOT/bench/tools/dispatch_report.py" --trace "$out/trace.txt" --wrk "$out/wrk.txt" \
  --wrk-start "$wrk_start" --wrk-end "$wrk_end" --wrk-first-log 2000000000000 --log "$out/job_log.csv" \
  --first "$first" --period "$period" --bursts "$bursts" --jobs "$jobs" --connections "$connections" \
  --samples "$out/samples.csv" --wrk-load "$wrk_load_start" --admin-load "$admin_load_start -> $admin_load_end" \
  --wrk-tcp-opens "$wrk_opens" --admin-tcp-opens "$admin_opens" --json-out "$out/results.json" | tee "$out/report.txt"
