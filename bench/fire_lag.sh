#!/usr/bin/env bash
# fire-lag: N jobs '* * * * * ?' (all due at the same instant every second) on one admin and one
# cronwheel-executor (noopJobHandler), for a measured window of S seconds after a warm-up. Measures, per
# scheduled instant, the lag from the instant to the executor receiving /run (the executor's run trace),
# and reports on-time fraction, p50/p90/p99/max, missed and duplicate fires, CPU and RSS.
#
#   bench/fire_lag.sh [--n "1000 2000 5000 10000"] [--seconds 60] [--warmup 5] [--repeat 1]
#
# Environment: BENCH_ADMIN_FLAGS / BENCH_EXECUTOR_FLAGS add flags to the admin / executor (experiments);
# BENCH_PERF=1 records `perf record -a -e cpu-clock` over the window into the run folder (with
# BENCH_PERF_CALLGRAPH="--call-graph dwarf", call stacks too); BENCH_PG_FAST=1 measures on a PostgreSQL
# without fsync; BENCH_PGSS=1 loads pg_stat_statements and writes the window's top statements to the run
# folder; BENCH_KEEP_LOGS=1 keeps the executor's job logs.
# Results: bench/out/fire-lag/results.jsonl (one line per run), summary.tsv, fire-lag.png.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ns="1000 2000 5000 10000"; seconds=60; warmup=5; repeat=1
while (($#)); do
  case "$1" in
    --n) ns="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    *) bench_die "fire_lag.sh: unknown option $1 (valid: --n, --seconds, --warmup, --repeat)" ;;
  esac
done

out="$BENCH_OUT/fire-lag"
mkdir -p "$out"
BENCH_TOKEN=$(bench_secret); BENCH_ADMIN_PASSWORD="Bench-$(bench_secret)"
trap 'bench_cleanup' EXIT
bench_pg_up
fsync=$(psql "$BENCH_PG_DSN" -Atc 'SHOW fsync')
bench_log "fire-lag: N = $ns, ${seconds} s window after ${warmup} s warm-up, $repeat run(s) each; PostgreSQL fsync=$fsync"
bench_log "machine: $(bench_machine)"

one_run() {
  local n="$1" rep="$2"
  local run="$out/n$n-r$rep"
  rm -rf "$run"; mkdir -p "$run"
  local dsn aport eport
  dsn=$(bench_fresh_db cwbench_firelag)
  aport=$(bench_free_port 18080); eport=$(bench_free_port 19990)
  # shellcheck disable=SC2086
  bench_start_admin "$run" "$dsn" "$aport" ${BENCH_ADMIN_FLAGS:-}
  # shellcheck disable=SC2086
  bench_start_executor "$run" "$aport" "$eport" --run-trace-file "$run/trace.txt" ${BENCH_EXECUTOR_FLAGS:-}
  bench_await_registered "$dsn"
  local group t0 first end
  group=$(bench_add_group "$dsn")
  t0=$(( ( $(bench_now_ms) + warmup * 1000 + 3000 ) / 1000 * 1000 + 1000 ))
  first=$((t0 - warmup * 1000))
  bench_add_jobs "$dsn" "$group" "$n" '* * * * * ?' "$first"
  local dbname="${dsn##*/}"
  python3 "$BENCH_ROOT/bench/tools/procsample.py" --out "$run/samples.csv" --pg "$BENCH_PG_PID" \
    admin="$BENCH_ADMIN_PID" executor="$BENCH_EXECUTOR_PID" &
  local sampler=$!
  (sleep "$(python3 -c "print(max(0, ($t0 - $(bench_now_ms)) / 1000))")"; bench_pgss_reset "$dbname") &
  end=$((t0 + seconds * 1000))
  if ((${BENCH_PERF:-0})); then
    # Profile (software clock: no hardware counters here): the whole machine during the window.
    (sleep "$(python3 -c "print(max(0, ($t0 - $(bench_now_ms)) / 1000))")"
     exec perf record -q -a ${BENCH_PERF_CALLGRAPH:-} -e cpu-clock -F 499 -o "$run/perf.data" -- sleep "$seconds") \
      >"$run/perf.log" 2>&1 &
  fi
  local load_start load_end
  sleep "$(python3 -c "print(max(0, ($t0 - $(bench_now_ms)) / 1000))")"
  load_start=$(bench_load); local opens; opens=$(bench_tcp_opens)
  bench_log "N=$n run $rep: window $(date -u -d @$((t0 / 1000)) +%T)..$(date -u -d @$((end / 1000)) +%T) UTC, load $load_start"
  sleep "$(python3 -c "print(max(0, ($end - $(bench_now_ms)) / 1000 + 0.2))")"
  load_end=$(bench_load); opens=$(($(bench_tcp_opens) - opens))
  kill -TERM "$sampler"; wait "$sampler" || true
  bench_pgss_dump "$dbname" "$run/pg_stat_statements.txt"
  psql "$dsn" -qc "UPDATE job SET enabled = false" >/dev/null
  # Fires already in the ring (up to the pre-read horizon) are still sent: let them drain.
  sleep 8
  curl -fsS "http://127.0.0.1:$aport/api/v1/health" >"$run/health.json" || true
  bench_stop "$BENCH_EXECUTOR_PID" 60   # SIGTERM flushes the run trace
  bench_stop "$BENCH_ADMIN_PID" 30
  BENCH_PIDS=()
  psql "$dsn" -Atc "SELECT id FROM job ORDER BY id" >"$run/jobs.txt"
  psql "$dsn" -qc "\\copy (SELECT id, job_id, scheduled_ms, trigger_type, dispatch_ms, trigger_ms, trigger_code
      FROM job_log WHERE trigger_type = 'CRON' AND scheduled_ms >= $t0 AND scheduled_ms < $end) TO '$run/job_log.csv' CSV HEADER"
  ((${BENCH_KEEP_LOGS:-0})) || rm -rf "$run/executor-logs"
  python3 "$BENCH_ROOT/bench/tools/fire_lag_report.py" --trace "$run/trace.txt" --log "$run/job_log.csv" \
    --jobs "$run/jobs.txt" --samples "$run/samples.csv" --t0 "$t0" --seconds "$seconds" --n "$n" \
    --label "r$rep fsync=$fsync" --load-start "$load_start" --load-end "$load_end" --tcp-opens "$opens" \
    --json-out "$out/results.jsonl"
}

: >"$out/results.jsonl"
for rep in $(seq 1 "$repeat"); do
  for n in $ns; do one_run "$n" "$rep"; done
done
python3 "$BENCH_ROOT/bench/tools/fire_lag_summary.py" "$out/results.jsonl" "$out/summary.tsv"
if command -v gnuplot >/dev/null; then
  note="$(nproc) cores, admin + PostgreSQL + executor on one machine; ${seconds} s per N; $(date -u +%F)"
  gnuplot -e "data='$out/summary.tsv'; out='$out/fire-lag.png'; note='$note'" "$BENCH_ROOT/bench/tools/fire_lag.gp" &&
    bench_log "plot: $out/fire-lag.png"
fi
