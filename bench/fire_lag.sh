#!/usr/bin/env bash
# fire-lag: N jobs '* * * * * ?' (all due at the same instant every second) on K admins sharing one
# database and one executor, for a measured window of S seconds after a warm-up. Measures, per scheduled
# instant, the lag from the instant to the executor receiving /run (the executor's run trace), and reports
# on-time fraction, p50/p90/p99/max, missed and duplicate fires, CPU and RSS, CPU per fire of each process,
# the database's cost per fire (pg_stat_statements) and, per admin, its scans and the fires it owned.
#
#   bench/fire_lag.sh [--n "1000 2000 5000 10000"] [--seconds 60] [--warmup 5] [--repeat 1]
#                     [--executor cronwheel|stub|both] [--admins 1|2|3] [--compare-admins "1 2 3"]
#                     [--pgss on|off|both] [--baseline FILE.jsonl] [--save-baseline NAME]
#                     [--find-knee "LO HI STEP"] [--knee-p99-ms MS]
#
# --executor       cronwheel (default): cronwheel-executor, noopJobHandler. stub: the admin alone against
#                  `xxl-stub --minimal` (tests/support/xxl_stub), the benchmark's own minimal executor: /run
#                  parses the body, writes a trace line and queues a success callback, nothing else.
#                  both: each N in both modes, one after the other (the order alternates with --repeat).
# --admins K       K admins (node ids bench-admin-1..K) on the one database; the executor registers with
#                  and calls back to all of them (tried in order, as XXL-JOB executors do: admin 1 records
#                  the callbacks while it answers). Each admin keeps its default executor_connections (32);
#                  the stub gets 32 * K + 32 threads (at least 64) so K admins' connections all get one
#                  (cpp-httplib holds a thread per open connection); cronwheel-executor keeps its default
#                  server_threads (2), as its connections hold no thread. Default 1.
# --compare-admins "1 2 3"  runs every N with each of these admin counts (replaces --admins), so the
#                  per-admin figures stand against one admin measured in the same invocation.
# --pgss           on: pg_stat_statements is loaded and the window's statements give the database's cost
#                  per fire; off: not loaded (costs nothing); both: each N with and without (its overhead).
#                  Default: on (BENCH_PGSS=0 in the environment makes it off).
# --baseline FILE  an earlier run's results.jsonl (e.g. bench/baselines/<name>.jsonl): the summary compares
#                  against it and the plot draws it beside this run.
# --save-baseline NAME  copies this run's results.jsonl to bench/baselines/NAME.jsonl at the end.
# --find-knee "LO HI STEP"  in place of --n: for each executor kind, the largest N of LO, LO+STEP, ... HI at
#                  which a run has 0 missed, 0 duplicates and p99 <= --knee-p99-ms (default 1000), found by a
#                  binary search over those steps (one run per probe: about log2 of the steps' count runs per
#                  kind, assuming a run that passes at N passes below it); prints each probe and the knee with
#                  its fires a second per core (N / cores: every job fires every second), into knee.txt too.
#                  "< LO" when LO fails, ">= HI" when HI passes. With --admins K, for K admins.
#
# The stub runs with --threads 64 for one admin (above), --listen-backlog 4096
# (the executor's backlog, SOMAXCONN), its default keep-alive (100 requests per connection, like the
# executor's); so neither the accept queue nor its threads limit what the admin can send.
#
# Environment: BENCH_ADMIN_FLAGS / BENCH_EXECUTOR_FLAGS / BENCH_STUB_FLAGS add flags to the admins /
# cronwheel-executor / xxl-stub (experiments); BENCH_PERF=1 records `perf record -a -e cpu-clock` over the
# window into the run folder (with BENCH_PERF_CALLGRAPH="--call-graph dwarf", call stacks too);
# BENCH_PG_FAST=1 measures on a PostgreSQL without fsync; BENCH_KEEP_LOGS=1 keeps the executor's job logs;
# BENCH_BIN runs other binaries (before/after); BENCH_CONSOLE_READS=R sends the first admin R console reads a
# second over the window (bench/tools/console_reads.py: each route's latency in the run folder and report).
# Results: bench/out/fire-lag/results.jsonl (one line per run; the baseline format), summary.tsv,
# fire-lag.png, and one folder per run (run trace, job_log export, CPU samples, each admin's /metrics at
# the window's start and end, pg_stat_statements).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ns="1000 2000 5000 10000"; seconds=60; warmup=5; repeat=1; executor_arg=cronwheel; admins_list=1
pgss_default=on; [ "${BENCH_PGSS:-1}" = 0 ] && pgss_default=off
pgss="$pgss_default"; baseline=""; save_baseline=""; admins_given=""; knee=""; knee_p99=1000
need() { (($# >= 2)) && [ -n "$2" ] || bench_die "fire_lag.sh: $1 needs a value"; }
is_count() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }
while (($#)); do
  case "$1" in
    --n) need "$@"; ns="$2"; shift 2 ;;
    --seconds) need "$@"; seconds="$2"; shift 2 ;;
    --warmup) need "$@"; warmup="$2"; shift 2 ;;
    --repeat) need "$@"; repeat="$2"; shift 2 ;;
    --executor) need "$@"; executor_arg="$2"; shift 2 ;;
    --admins) need "$@"; admins_given="--admins"; admins_list="$2"; shift 2 ;;
    --compare-admins) need "$@"; admins_given="--compare-admins"; admins_list="$2"; shift 2 ;;
    --pgss) need "$@"; pgss="$2"; shift 2 ;;
    --baseline) need "$@"; baseline="$2"; shift 2 ;;
    --save-baseline) need "$@"; save_baseline="$2"; shift 2 ;;
    --find-knee) need "$@"; knee="$2"; shift 2 ;;
    --knee-p99-ms) need "$@"; knee_p99="$2"; shift 2 ;;
    *) bench_die "fire_lag.sh: unknown option '$1' (valid: --n --seconds --warmup --repeat --executor --admins --compare-admins --pgss --baseline --save-baseline --find-knee --knee-p99-ms)" ;;
  esac
done
for n in $ns; do is_count "$n" || bench_die "--n '$ns': each N must be a positive whole number"; done
[ -n "${ns// /}" ] || bench_die "--n is empty: give at least one N, e.g. --n \"1000 2000\""
is_count "$seconds" || bench_die "--seconds '$seconds': a positive whole number of seconds"
[[ "$warmup" =~ ^[0-9]+$ ]] || bench_die "--warmup '$warmup': a whole number of seconds (0 or more)"
is_count "$repeat" || bench_die "--repeat '$repeat': a positive whole number"
if [ -n "$knee" ]; then
  read -r knee_lo knee_hi knee_step knee_extra <<<"$knee"
  { is_count "${knee_lo:-}" && is_count "${knee_hi:-}" && is_count "${knee_step:-}" && [ -z "${knee_extra:-}" ] &&
    ((knee_lo <= knee_hi)); } ||
    bench_die "--find-knee '$knee': three positive whole numbers \"LO HI STEP\" with LO <= HI, e.g. \"1000 20000 1000\""
  is_count "$knee_p99" || bench_die "--knee-p99-ms '$knee_p99': a positive whole number of milliseconds"
  [ "$admins_given" = --compare-admins ] && bench_die "--find-knee takes one admin count (--admins K), not --compare-admins"
  ((repeat == 1)) || bench_die "--find-knee runs each probe once: leave out --repeat"
  ns="$knee_lo"
fi
case "$executor_arg" in
  cronwheel) executors=(cronwheel) ;;
  stub) executors=(stub) ;;
  both) executors=(cronwheel stub) ;;
  *) bench_die "--executor '$executor_arg': valid are cronwheel, stub, both" ;;
esac
[ -n "${admins_list// /}" ] || bench_die "$admins_given is empty: give admin counts, e.g. \"1 2 3\""
for k in $admins_list; do
  { is_count "$k" && ((k <= 8)); } || bench_die "${admins_given:---admins} '$admins_list': admin counts are 1 to 8"
done
[ "$admins_given" = --admins ] && [ "$(wc -w <<<"$admins_list")" -ne 1 ] &&
  bench_die "--admins '$admins_list': one count (1, 2 or 3); for several use --compare-admins \"1 2 3\""
case "$pgss" in
  on) pgss_modes=(1) ;;
  off) pgss_modes=(0) ;;
  both) pgss_modes=(1 0) ;;
  *) bench_die "--pgss '$pgss': valid are on, off, both" ;;
esac
if [ -n "$baseline" ]; then
  [ -s "$baseline" ] || bench_die "--baseline '$baseline': no such file (or empty); give a saved results.jsonl"
  baseline=$(readlink -f "$baseline")
fi
if [ -n "$save_baseline" ]; then
  [[ "$save_baseline" =~ ^[A-Za-z0-9._-]+$ ]] ||
    bench_die "--save-baseline '$save_baseline': a file name of letters, digits, '.', '_' and '-'"
fi
((${BENCH_CHECK_ONLY:-0})) && exit 0  # scripts/bench checks the options before it builds
for e in "${executors[@]}"; do
  if [ "$e" = stub ] && [ ! -x "$BENCH_BIN/tests/support/xxl-stub" ]; then
    bench_die "$BENCH_BIN/tests/support/xxl-stub not built: scripts/build release xxl-stub"
  fi
done

out="$BENCH_OUT/fire-lag"
mkdir -p "$out"
if [ -n "$baseline" ]; then
  # A copy in the run folder: the run stays self-contained, and a baseline that is this folder's own
  # results.jsonl (about to be rewritten) still works.
  baseline_label=$(basename "$baseline" .jsonl)
  [ "$baseline_label" = results ] && baseline_label="earlier run"
  cp "$baseline" "$out/baseline.jsonl.tmp" && mv "$out/baseline.jsonl.tmp" "$out/baseline.jsonl"
  baseline="$out/baseline.jsonl"
fi
BENCH_TOKEN=$(bench_secret); BENCH_ADMIN_PASSWORD="Bench-$(bench_secret)"
bench_traps
BENCH_PGSS="${pgss_modes[0]}"
bench_pg_up
fsync=$(psql "$BENCH_PG_DSN" -Atc 'SHOW fsync')
bench_log "fire-lag: N = $ns; executor ${executors[*]}; admins $admins_list; pg_stat_statements $pgss;" \
  "${seconds} s window after ${warmup} s warm-up, $repeat run(s) each; PostgreSQL fsync=$fsync"
bench_log "machine: $(bench_machine)"

# one_run <N> <repeat> <executor kind> <admins> <pgss 0|1>
one_run() {
  local n="$1" rep="$2" kind="$3" k="$4" ss="$5"
  local tag="n$n-$kind-a$k"
  ((${#pgss_modes[@]} > 1)) && tag+="-pgss$ss"
  local run="$out/$tag-r$rep"
  rm -rf "$run"; mkdir -p "$run"
  local dsn dbname threads i
  dsn=$(bench_fresh_db cwbench_firelag)
  dbname="${dsn##*/}"
  threads=$((32 * k + 32)); ((threads < 64)) && threads=64
  local aports=() apids=() nodes=() names=()
  for i in $(seq 1 "$k"); do
    local name="admin$i" node="bench-admin-$i" port
    ((k == 1)) && node=bench-admin
    port=$(bench_admin_port)
    # shellcheck disable=SC2086
    bench_start_admin_as "$name" "$node" "$run" "$dsn" "$port" ${BENCH_ADMIN_FLAGS:-}
    aports+=("$BENCH_ADMIN_PORT"); apids+=("$BENCH_ADMIN_PID"); nodes+=("$node"); names+=("$name")
  done
  local urls eport epid
  urls=$(bench_admin_urls "${aports[@]}")
  eport=$(bench_executor_port)
  if [ "$kind" = cronwheel ]; then
    # Its own server_threads (2): more I/O threads than cores only hand completions between threads
    # (docs/performance.md, "The executor's server threads").
    # shellcheck disable=SC2086
    bench_start_executor "$run" "$urls" "$eport" --run-trace-file "$run/trace.txt" ${BENCH_EXECUTOR_FLAGS:-}
    epid="$BENCH_EXECUTOR_PID"
  else
    # shellcheck disable=SC2086
    bench_start_stub "$run" "$urls" "$eport" "$threads" "$run/trace.txt" "$BENCH_APP" ${BENCH_STUB_FLAGS:-}
    epid="$BENCH_STUB_PID"
  fi
  bench_await_registered "$dsn"
  local group t0 first end
  group=$(bench_add_group "$dsn")
  t0=$(( ( $(bench_now_ms) + warmup * 1000 + 3000 ) / 1000 * 1000 + 1000 ))
  first=$((t0 - warmup * 1000))
  bench_add_jobs "$dsn" "$group" "$n" '* * * * * ?' "$first"
  local procs=(executor="$epid")
  for i in $(seq 0 $((k - 1))); do procs+=("${names[$i]}=${apids[$i]}"); done
  python3 "$BENCH_ROOT/bench/tools/procsample.py" --out "$run/samples.csv" --pg "$BENCH_PG_PID" "${procs[@]}" &
  local sampler=$!
  bench_track "$sampler"
  (bench_sleep_until "$t0"; bench_pgss_reset "$dbname") &
  bench_track $!
  end=$((t0 + seconds * 1000))
  if ((${BENCH_PERF:-0})); then
    # Profile (software clock: no hardware counters here): the whole machine during the window.
    # shellcheck disable=SC2086
    (bench_sleep_until "$t0"
     exec perf record -q -a ${BENCH_PERF_CALLGRAPH:-} -e cpu-clock -F 499 -o "$run/perf.data" -- sleep "$seconds") \
      >"$run/perf.log" 2>&1 &
    bench_track $!
  fi
  local reads=""
  if ((${BENCH_CONSOLE_READS:-0} > 0)); then
    # The console's reads beside the fires (docs/scaling.md): BENCH_CONSOLE_READS requests a second to the
    # first admin over the window.
    python3 "$BENCH_ROOT/bench/tools/console_reads.py" --port "${aports[0]}" --password "$BENCH_ADMIN_PASSWORD" \
      --rate "$BENCH_CONSOLE_READS" --from-ms "$t0" --until-ms "$end" --out "$run/console_reads.json" \
      >"$run/console_reads.txt" 2>&1 &
    reads=$!
    bench_track "$reads"
  fi
  local load_start load_end opens
  bench_sleep_until "$t0"
  for i in $(seq 0 $((k - 1))); do bench_metrics "${aports[$i]}" "$run/metrics-${names[$i]}-start.txt"; done
  load_start=$(bench_load); opens=$(bench_tcp_opens)
  bench_log "N=$n $kind executor, $k admin(s), pg_stat_statements $ss, run $rep:" \
    "window $(date -u -d @$((t0 / 1000)) +%T)..$(date -u -d @$((end / 1000)) +%T) UTC, load $load_start"
  bench_sleep_until "$end"
  for i in $(seq 0 $((k - 1))); do bench_metrics "${aports[$i]}" "$run/metrics-${names[$i]}-end.txt"; done
  bench_sleep 0.2
  load_end=$(bench_load); opens=$(($(bench_tcp_opens) - opens))
  kill -TERM "$sampler"; wait "$sampler" || true
  if [ -n "$reads" ]; then wait "$reads" || true; cat "$run/console_reads.txt"; fi
  bench_pgss_dump "$dbname" "$run/pg_stat_statements.txt"
  bench_pgss_csv "$dbname" "$run/pg_stat_statements.csv"
  # The jobs stay on until every instant of the window has passed its misfire threshold (5 s): an admin that
  # runs behind at saturation still claims, sends or misfires the window's last instants by their rule.
  # Stopping them at the window's end withdrew those instants' fires and counted them as missed
  # ("no_row", "not_claimed").
  bench_sleep_until $((end + 6000))
  # The admins' scans lock job rows too, in another order: a deadlock aborts one side, so try again.
  local tries=0
  until psql "$dsn" -qc "UPDATE job SET enabled = false" >/dev/null 2>"$run/stop-jobs.err"; do
    ((++tries < 20)) || { cat "$run/stop-jobs.err" >&2; bench_die "could not stop the jobs"; }
    bench_sleep 0.2
  done
  # Fires already in the ring (up to the pre-read horizon) are still sent: let them drain.
  bench_sleep 8
  bench_health "${aports[0]}" "$run/health.json" || true
  bench_stop "$epid" 60   # SIGTERM flushes the run trace
  for i in $(seq 0 $((k - 1))); do bench_stop "${apids[$i]}" 30; done
  BENCH_PIDS=()
  psql "$dsn" -Atc "SELECT id FROM job ORDER BY id" >"$run/jobs.txt"
  # owner_node names the admin that wrote the fire (NULL AS owner_node if a schema has no such column).
  local owner=owner_node
  [ "$(psql "$dsn" -Atc "SELECT count(*) FROM information_schema.columns
      WHERE table_name = 'job_log' AND column_name = 'owner_node'")" = 1 ] || owner="NULL AS owner_node"
  psql "$dsn" -qc "\\copy (SELECT id, job_id, scheduled_ms, trigger_type, dispatch_ms, trigger_ms, trigger_code,
      $owner, skipped FROM job_log WHERE trigger_type = 'CRON' AND scheduled_ms >= $t0 AND scheduled_ms < $end)
      TO '$run/job_log.csv' CSV HEADER"
  ((${BENCH_KEEP_LOGS:-0})) || rm -rf "$run/executor-logs"
  local admin_args=()
  for i in $(seq 0 $((k - 1))); do
    admin_args+=(--admin "${names[$i]}" "${nodes[$i]}" "$run/metrics-${names[$i]}-start.txt"
      "$run/metrics-${names[$i]}-end.txt")
  done
  local pgss_args=()
  [ -s "$run/pg_stat_statements.csv" ] && pgss_args=(--pgss-csv "$run/pg_stat_statements.csv")
  python3 "$BENCH_ROOT/bench/tools/fire_lag_report.py" --trace "$run/trace.txt" --log "$run/job_log.csv" \
    --jobs "$run/jobs.txt" --samples "$run/samples.csv" --t0 "$t0" --seconds "$seconds" --n "$n" \
    --label "r$rep fsync=$fsync" --load-start "$load_start" --load-end "$load_end" --tcp-opens "$opens" \
    --executor-kind "$kind" --executor-threads "$threads" --pgss "$ss" --run-dir "${run#"$BENCH_ROOT"/}" \
    "${admin_args[@]}" "${pgss_args[@]}" --json-out "$out/results.jsonl" | tee "$run/report.txt"
}

# The folder holds the last invocation: results.jsonl is rewritten, so its run folders go too.
rm -rf "$out"/n*-r*/
: >"$out/results.jsonl"

# --find-knee: whether the last run (the last line of results.jsonl) passed; prints its figures.
knee_passed() {
  python3 - "$out/results.jsonl" "$knee_p99" <<'PY'
import json, sys
last = json.loads(open(sys.argv[1]).read().splitlines()[-1])
ok = last["missed"] == 0 and last["duplicates"] == 0 and last["p99_ms"] is not None and last["p99_ms"] <= int(sys.argv[2])
print(f"N={last['n']}: missed {last['missed']}, duplicates {last['duplicates']}, p99 {last['p99_ms']} ms: "
      + ("passes" if ok else "fails"))
sys.exit(0 if ok else 1)
PY
}
if [ -n "$knee" ]; then
  steps=$(( (knee_hi - knee_lo) / knee_step ))
  cores=$(nproc)
  : >"$out/knee.txt"
  for kind in "${executors[@]}"; do
    # lo: the highest step known to pass (-1: none yet); hi: the highest step not known to fail.
    lo=-1; hi=$steps; probes=""
    # The lowest step first: if it fails there is no knee in the range.
    n=$knee_lo; one_run "$n" 1 "$kind" "$admins_list" "$BENCH_PGSS"
    if verdict=$(knee_passed); then lo=0; else hi=-1; fi
    probes+="  $verdict"$'\n'
    while ((lo < hi)); do
      mid=$(( (lo + hi + 1) / 2 )); n=$((knee_lo + mid * knee_step))
      one_run "$n" 1 "$kind" "$admins_list" "$BENCH_PGSS"
      if verdict=$(knee_passed); then lo=$mid; else hi=$((mid - 1)); fi
      probes+="  $verdict"$'\n'
    done
    if ((lo < 0)); then
      line="$kind executor, $admins_list admin(s): knee < $knee_lo (0 missed and p99 <= $knee_p99 ms failed at the lowest step)"
    else
      kn=$((knee_lo + lo * knee_step)); more=""
      ((lo == steps)) && more=" (>=: the highest step passed)"
      line="$kind executor, $admins_list admin(s): knee N = $kn$more, $((kn / cores)) fires a second per core ($cores cores; 0 missed, p99 <= $knee_p99 ms)"
    fi
    printf '%s\n%s' "$line" "$probes" | tee -a "$out/knee.txt"
  done
  bench_log "knee: $out/knee.txt"
  exit 0
fi
for rep in $(seq 1 "$repeat"); do
  # Every other round runs the modes in the opposite order, so a drift of the machine's load does not
  # always favour the same one.
  kinds=("${executors[@]}"); read -ra counts <<<"$admins_list"; modes=("${pgss_modes[@]}")
  if ((rep % 2 == 0)); then
    mapfile -t kinds < <(printf '%s\n' "${kinds[@]}" | tac)
    mapfile -t counts < <(printf '%s\n' "${counts[@]}" | tac)
    mapfile -t modes < <(printf '%s\n' "${modes[@]}" | tac)
  fi
  for ss in "${modes[@]}"; do
    [ "$ss" = "$BENCH_PGSS" ] || bench_pg_pgss "$ss"
    for n in $ns; do
      for k in "${counts[@]}"; do
        for kind in "${kinds[@]}"; do one_run "$n" "$rep" "$kind" "$k" "$ss"; done
      done
    done
  done
done
summary_args=("$out/results.jsonl" "$out/summary.tsv")
[ -n "$baseline" ] && summary_args+=(--baseline "$baseline" --baseline-label "$baseline_label")
python3 "$BENCH_ROOT/bench/tools/fire_lag_summary.py" "${summary_args[@]}" | tee "$out/summary.txt"
if [ -n "$save_baseline" ]; then
  mkdir -p "$BENCH_ROOT/bench/baselines"
  cp "$out/results.jsonl" "$BENCH_ROOT/bench/baselines/$save_baseline.jsonl"
  bench_log "baseline saved: bench/baselines/$save_baseline.jsonl"
fi
if command -v gnuplot >/dev/null; then
  note="$(nproc) cores, admins + PostgreSQL + executor on one machine; ${seconds} s per N; $(date -u +%F)"
  series=$(awk '/^# series /{print $3; exit}' "$out/summary.tsv")
  mine=$(awk '/^# series /{print $5; exit}' "$out/summary.tsv")
  gnuplot -e "data='$out/summary.tsv'; out='$out/fire-lag.png'; note='$note'; nseries=${series:-1}; nmine=${mine:-1}" \
    "$BENCH_ROOT/bench/tools/fire_lag.gp" && bench_log "plot: $out/fire-lag.png"
fi
