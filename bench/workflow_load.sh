#!/usr/bin/env bash
# workflow-load: workflows beside every-second jobs. One admin, one database and one cronwheel-executor
# (noopJobHandler everywhere) run --jobs J jobs '* * * * * ?' through two windows of S seconds each:
#
#   alone  the jobs only;
#   with   the jobs and, beside them, R workflows of N nodes (root -> N-2 nodes in parallel -> join; each
#          node its own job), workflow i on the cron '<i mod 60> * * * * ?': R runs a minute, spread over
#          the minute's seconds.
#
# For each window it reports the jobs' figures (bench/tools/fire_lag_report.py: lag from the instant to the
# executor receiving /run, missed and duplicate fires, CPU), and for the workflows' window every run
# scheduled in it: missed (no run, or not ended SUCCESS), each node's fire received by the executor once
# (missing, doubled), the root's lag and the run's duration. The verdict compares the jobs' p99 lag with
# workflows to the same jobs' alone, measured in the same invocation (issue 23's target: within 20%).
#
#   bench/workflow_load.sh [--jobs 2000] [--runs 1000] [--nodes 10] [--seconds 600] [--warmup 10]
#                          [--order alone-first|with-first]
#
# --order  which window comes first (default alone-first). The job log grows through both windows and the
#          second window runs on the larger table, so the default order puts any drift against the workflows.
# Environment as for fire_lag.sh: BENCH_ADMIN_FLAGS / BENCH_EXECUTOR_FLAGS, BENCH_PG_FAST, BENCH_BIN.
# Results: bench/out/workflow-load/ (report.txt, results.jsonl with one line per window, the run trace,
# each window's job_log rows of the jobs, and the workflows' runs and fires).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

jobs=2000; runs=1000; nodes=10; seconds=600; warmup=10; order=alone-first
need() { (($# >= 2)) && [ -n "$2" ] || bench_die "workflow_load.sh: $1 needs a value"; }
is_count() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }
while (($#)); do
  case "$1" in
    --jobs) need "$@"; jobs="$2"; shift 2 ;;
    --runs) need "$@"; runs="$2"; shift 2 ;;
    --nodes) need "$@"; nodes="$2"; shift 2 ;;
    --seconds) need "$@"; seconds="$2"; shift 2 ;;
    --warmup) need "$@"; warmup="$2"; shift 2 ;;
    --order) need "$@"; order="$2"; shift 2 ;;
    *) bench_die "workflow_load.sh: unknown option '$1' (valid: --jobs --runs --nodes --seconds --warmup --order)" ;;
  esac
done
is_count "$jobs" || bench_die "--jobs '$jobs': a positive whole number of every-second jobs"
is_count "$runs" || bench_die "--runs '$runs': a positive whole number of workflow runs a minute"
{ is_count "$nodes" && ((nodes >= 3 && nodes <= 1000)); } ||
  bench_die "--nodes '$nodes': 3 to 1000 nodes a workflow (a root, at least one middle node, a join)"
{ is_count "$seconds" && ((seconds >= 60)); } ||
  bench_die "--seconds '$seconds': a whole number of seconds, at least 60 (each workflow runs once a minute)"
[[ "$warmup" =~ ^[0-9]+$ ]] || bench_die "--warmup '$warmup': a whole number of seconds (0 or more)"
case "$order" in
  alone-first) windows=(alone with) ;;
  with-first) windows=(with alone) ;;
  *) bench_die "--order '$order': valid are alone-first, with-first" ;;
esac
((${BENCH_CHECK_ONLY:-0})) && exit 0  # scripts/bench checks the options before it builds

out="$BENCH_OUT/workflow-load"
rm -rf "$out"; mkdir -p "$out"
BENCH_TOKEN=$(bench_secret); BENCH_ADMIN_PASSWORD="Bench-$(bench_secret)"
bench_traps
BENCH_PGSS=0
bench_pg_up
fsync=$(psql "$BENCH_PG_DSN" -Atc 'SHOW fsync')
bench_log "workflow-load: $jobs every-second jobs; $runs runs a minute of a $nodes-node workflow;" \
  "windows ${windows[*]} of $seconds s after ${warmup} s warm-up; PostgreSQL fsync=$fsync"
bench_log "machine: $(bench_machine)"

dsn=$(bench_fresh_db cwbench_workflow)
port=$(bench_admin_port)
# shellcheck disable=SC2086
bench_start_admin "$out" "$dsn" "$port" ${BENCH_ADMIN_FLAGS:-}
apid="$BENCH_ADMIN_PID"; aport="$BENCH_ADMIN_PORT"
# shellcheck disable=SC2086
bench_start_executor "$out" "$aport" "$(bench_executor_port)" --run-trace-file "$out/trace.txt" \
  ${BENCH_EXECUTOR_FLAGS:-}
epid="$BENCH_EXECUTOR_PID"
bench_await_registered "$dsn"
group=$(bench_add_group "$dsn")

# The windows: [w0, w0 + S) and [w1, w1 + S), whole seconds, the first after the warm-up.
t_first=$(( ( $(bench_now_ms) + 5000 ) / 1000 * 1000 ))
w0=$((t_first + warmup * 1000))
w1=$((w0 + seconds * 1000))
if [ "${windows[0]}" = alone ]; then alone_t0=$w0 with_t0=$w1; else with_t0=$w0 alone_t0=$w1; fi
bench_add_jobs "$dsn" "$group" "$jobs" '* * * * * ?' "$t_first"

# The workflows' node jobs (never scheduled themselves) and the workflows, enabled with their first instant
# the first of their second in the with-window: the scan pre-reads 5 s ahead, so none starts before it.
psql "$dsn" -q -v ON_ERROR_STOP=1 <<SQL >/dev/null
INSERT INTO job (group_id, description, schedule_type, schedule_conf, time_zone, handler, route_strategy,
                 glue_updated_ms, enabled, created_ms, updated_ms)
SELECT $group, 'workflow node ' || i, 'NONE', '', 'UTC', 'noopJobHandler', 'ROUND', 0, false, 0, 0
  FROM generate_series(1, $runs * $nodes) AS i;
CREATE TEMP TABLE node_job AS
SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM job WHERE schedule_type = 'NONE';
-- Saved by the admin user: scheduled runs fire their nodes for whoever saved the workflow last.
INSERT INTO workflow (group_id, name, nodes, edges, schedule_type, schedule_conf, time_zone, enabled,
                      next_fire_ms, created_ms, updated_ms, run_as_user_id)
SELECT $group, 'bench workflow ' || w,
       (SELECT jsonb_agg(jsonb_build_object('key', CASE WHEN n.k % $nodes = 0 THEN 'root'
                                                        WHEN n.k % $nodes = $nodes - 1 THEN 'join'
                                                        ELSE 'n' || (n.k % $nodes) END,
                                            'job_id', n.id, 'param', NULL) ORDER BY n.k)
          FROM node_job n WHERE n.k / $nodes = w),
       (SELECT jsonb_agg(e) FROM (
          SELECT jsonb_build_object('from', 'root', 'to', 'n' || m, 'condition', 'SUCCESS') AS e
            FROM generate_series(1, $nodes - 2) AS m
          UNION ALL
          SELECT jsonb_build_object('from', 'n' || m, 'to', 'join', 'condition', 'SUCCESS')
            FROM generate_series(1, $nodes - 2) AS m) edges),
       'CRON', (w % 60) || ' * * * * ?', 'UTC', true,
       $with_t0 + ((w % 60 - ($with_t0 / 1000) % 60 + 60) % 60) * 1000, 0, 0,
       (SELECT id FROM app_user WHERE username = 'admin')
  FROM generate_series(0, $runs - 1) AS w;
SQL

python3 "$BENCH_ROOT/bench/tools/procsample.py" --out "$out/samples.csv" --pg "$BENCH_PG_PID" \
  admin="$apid" executor="$epid" &
bench_track $!
sampler=$!
declare -A load_start load_end opens
for wname in "${windows[@]}"; do
  if [ "$wname" = alone ]; then t=$alone_t0; else t=$with_t0; fi
  bench_sleep_until "$t"
  bench_metrics "$aport" "$out/metrics-$wname-start.txt"
  load_start[$wname]=$(bench_load); opens[$wname]=$(bench_tcp_opens)
  bench_log "window '$wname': $(date -u -d @$((t / 1000)) +%T)..$(date -u -d @$(((t + seconds * 1000) / 1000)) +%T) UTC," \
    "load ${load_start[$wname]}"
  # The workflows stop with the with-window: no run is scheduled after it. The scan writes runs up to 5 s
  # ahead, so 7 s before the end the workflows whose next instant is past the end are disabled, and 1 s
  # after it the rest (whose last run was in the window and whose next instant is a minute later).
  if [ "$wname" = with ]; then
    (bench_sleep_until $((t + seconds * 1000 - 7000))
     psql "$dsn" -qc "UPDATE workflow SET enabled = false WHERE next_fire_ms >= $((t + seconds * 1000))" >/dev/null
     bench_sleep_until $((t + seconds * 1000 + 1000))
     psql "$dsn" -qc "UPDATE workflow SET enabled = false" >/dev/null) &
    bench_track $!
  fi
  bench_sleep_until $((t + seconds * 1000))
  bench_metrics "$aport" "$out/metrics-$wname-end.txt"
  load_end[$wname]=$(bench_load); opens[$wname]=$(($(bench_tcp_opens) - opens[$wname]))
done
psql "$dsn" -qc "UPDATE job SET enabled = false WHERE schedule_type = 'CRON'; UPDATE workflow SET enabled = false" \
  >/dev/null
# Fires in the ring and runs under way are still sent and ended: let them drain.
for _ in $(seq 1 60); do
  [ "$(psql "$dsn" -Atc "SELECT count(*) FROM workflow_run WHERE state = 'RUNNING'")" = 0 ] && break
  bench_sleep 1
done
bench_sleep 8
kill -TERM "$sampler"; wait "$sampler" || true
bench_stop "$epid" 60   # SIGTERM flushes the run trace
bench_stop "$apid" 30
BENCH_PIDS=()
rm -rf "$out/executor-logs"

psql "$dsn" -Atc "SELECT id FROM job WHERE schedule_type = 'CRON' ORDER BY id" >"$out/jobs.txt"
psql "$dsn" -qc "\\copy (SELECT id, workflow_id, trigger_type, scheduled_ms, state, start_ms, end_ms
    FROM workflow_run) TO '$out/workflow_run.csv' CSV HEADER"
psql "$dsn" -qc "\\copy (SELECT l.id, l.workflow_run_id, l.workflow_node, l.trigger_type, l.status, l.trigger_code
    FROM job_log l WHERE l.workflow_run_id <> 0) TO '$out/workflow_fires.csv' CSV HEADER"
psql "$dsn" -qc "\\copy (SELECT id, next_fire_ms, schedule_conf FROM workflow) TO '$out/workflows.csv' CSV HEADER"

: >"$out/results.jsonl"
for wname in "${windows[@]}"; do
  if [ "$wname" = alone ]; then t=$alone_t0; else t=$with_t0; fi
  bench_log "the jobs in window '$wname':"
  psql "$dsn" -qc "\\copy (SELECT id, job_id, scheduled_ms, trigger_type, dispatch_ms, trigger_ms, trigger_code,
      owner_node FROM job_log WHERE trigger_type = 'CRON' AND scheduled_ms >= $t AND scheduled_ms < $((t + seconds * 1000)))
      TO '$out/job_log-$wname.csv' CSV HEADER"
  python3 "$BENCH_ROOT/bench/tools/fire_lag_report.py" --trace "$out/trace.txt" --log "$out/job_log-$wname.csv" \
    --jobs "$out/jobs.txt" --samples "$out/samples.csv" --t0 "$t" --seconds "$seconds" --n "$jobs" \
    --label "$wname fsync=$fsync" --load-start "${load_start[$wname]}" --load-end "${load_end[$wname]}" \
    --tcp-opens "${opens[$wname]}" --executor-kind cronwheel \
    --admin admin bench-admin "$out/metrics-$wname-start.txt" "$out/metrics-$wname-end.txt" \
    --json-out "$out/results.jsonl" | tee "$out/report-jobs-$wname.txt"
done
python3 "$BENCH_ROOT/bench/tools/workflow_load_report.py" --trace "$out/trace.txt" \
  --runs "$out/workflow_run.csv" --fires "$out/workflow_fires.csv" --workflows "$out/workflows.csv" --nodes "$nodes" \
  --t0 "$with_t0" --seconds "$seconds" --jobs-results "$out/results.jsonl" | tee "$out/report.txt"
