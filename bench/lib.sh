# Shared by the benchmark scripts under bench/ (sourced; defines functions only). Everything a run
# starts is recorded under its run folder and stopped by bench_stop_all, even when the run fails.
#
# Conventions: BENCH_OUT (default bench/out) holds one folder per run; BENCH_PG names the private
# PostgreSQL instance (scripts/pg --name); BENCH_PG_FAST=1 starts it with fsync off. BENCH_PORT_BASE
# (default 18000) is where the scripts start looking for free ports (admins from +80, executors from
# +1990, other helpers from +2500), so two benchmark runs side by side can keep apart; BENCH_PG_PORT_FROM
# picks the private PostgreSQL's port (first free from there) when it is started here.

BENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCH_OUT="${BENCH_OUT:-$BENCH_ROOT/bench/out}"
BENCH_BIN="${BENCH_BIN:-$BENCH_ROOT/build/release}"
BENCH_PG="${BENCH_PG:-bench}"
BENCH_PG_FAST="${BENCH_PG_FAST:-0}"
BENCH_APP="cronwheel-bench"
BENCH_PORT_BASE="${BENCH_PORT_BASE:-18000}"
BENCH_PIDS=()
BENCH_PG_STARTED=0  # 1 when this run started the private PostgreSQL (bench_cleanup stops it then)

bench_log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
bench_die() { bench_log "error: $*"; exit 1; }
bench_now_ms() { date +%s%3N; }
bench_secret() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# A free TCP port on 127.0.0.1, starting at $1.
bench_free_port() {
  local p="${1:-20000}"
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

# bench_admin_port / bench_executor_port / bench_helper_port: a free port for the next admin, executor
# (or stand-in) and helper process (fake admin), from BENCH_PORT_BASE.
bench_admin_port() { bench_free_port $((BENCH_PORT_BASE + 80)); }
bench_executor_port() { bench_free_port $((BENCH_PORT_BASE + 1990)); }
bench_helper_port() { bench_free_port $((BENCH_PORT_BASE + 2500)); }

# bench_pg_up: starts (or reuses) the private PostgreSQL; sets BENCH_PG_DSN (database "cronwheel"),
# BENCH_PG_PORT, BENCH_PG_DATA and BENCH_PG_PID (the postmaster). A server it starts is stopped by
# bench_cleanup; one that was already running is left running. BENCH_PGSS=1 loads pg_stat_statements.
bench_pg_up() {
  BENCH_PG_ARGS=(up --name "$BENCH_PG")
  ((BENCH_PG_FAST)) && BENCH_PG_ARGS+=(--fast)
  local running
  running=$("$BENCH_ROOT/scripts/pg" status --name "$BENCH_PG" 2>/dev/null || true)
  [[ "$running" == running* ]] || BENCH_PG_STARTED=1
  if [[ "$running" != running* ]] && [ -n "${BENCH_PG_PORT_FROM:-}" ]; then
    BENCH_PG_ARGS+=(--port "$(bench_free_port "$BENCH_PG_PORT_FROM")")
  fi
  if [[ "$running" == running* ]]; then
    # Restart if the fsync mode differs from what this run asks for.
    local fsync
    fsync=$(psql "${running#running }" -Atc 'SHOW fsync')
    if { ((BENCH_PG_FAST)) && [ "$fsync" = on ]; } || { ! ((BENCH_PG_FAST)) && [ "$fsync" = off ]; }; then
      "$BENCH_ROOT/scripts/pg" down --name "$BENCH_PG"
    fi
  fi
  BENCH_PG_DSN=$("$BENCH_ROOT/scripts/pg" "${BENCH_PG_ARGS[@]}")
  BENCH_PG_PORT=$(cat "$BENCH_ROOT/.pg/$BENCH_PG/port")
  BENCH_PG_ARGS=(up --name "$BENCH_PG" --port "$BENCH_PG_PORT")
  ((BENCH_PG_FAST)) && BENCH_PG_ARGS+=(--fast)
  BENCH_PG_DATA=$(readlink -f "$BENCH_ROOT/.pg/$BENCH_PG/data")
  bench_pg_pgss "${BENCH_PGSS:-0}"
}

# bench_pg_pgss <0|1>: loads (1) or unloads (0) pg_stat_statements on the running private server,
# restarting it when that changes (shared_preload_libraries is read at start only); sets BENCH_PGSS and
# BENCH_PG_PID. Unloaded it costs nothing; loaded it tracks every statement (profiling).
bench_pg_pgss() {
  BENCH_PGSS="$1"
  local loaded want
  loaded=$(bench_pg_super -Atc "SHOW shared_preload_libraries")
  if ((BENCH_PGSS)); then want=pg_stat_statements; else want=""; fi
  if [ "$loaded" != "$want" ]; then
    if [ -n "$want" ]; then
      bench_pg_super -qc "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'" >/dev/null
    else
      bench_pg_super -qc "ALTER SYSTEM RESET shared_preload_libraries" >/dev/null
    fi
    "$BENCH_ROOT/scripts/pg" down --name "$BENCH_PG"
    BENCH_PG_DSN=$("$BENCH_ROOT/scripts/pg" "${BENCH_PG_ARGS[@]}")
  fi
  BENCH_PG_PID=$(head -n1 "$BENCH_PG_DATA/postmaster.pid")
}

# bench_pgss_reset <database> / bench_pgss_dump <database> <file>: pg_stat_statements (BENCH_PGSS=1).
# bench_pgss_csv <database> <file>: every statement of the database as CSV (calls, total_exec_time in
# ms, rows, wal_bytes, wal_records, shared_blks_dirtied, shared_blks_hit, shared_blks_read, query with
# its white space folded), for bench/tools/pgss_cost.py.
bench_pgss_reset() {
  ((${BENCH_PGSS:-0})) || return 0
  bench_pg_super -d "$1" -qc "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" \
    -c "SELECT pg_stat_statements_reset()" >/dev/null
}
bench_pgss_dump() {
  ((${BENCH_PGSS:-0})) || return 0
  bench_pg_super -d "$1" -c "SELECT calls, round(total_exec_time::numeric, 1) AS total_ms,
      round(mean_exec_time::numeric, 3) AS mean_ms, rows, wal_bytes, left(regexp_replace(query, '\s+', ' ', 'g'), 160) AS query
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY total_exec_time DESC LIMIT 25" >"$2"
}

bench_pgss_csv() {
  ((${BENCH_PGSS:-0})) || return 0
  bench_pg_super -d "$1" -qc "COPY (SELECT calls, total_exec_time, rows, wal_bytes, wal_records,
      shared_blks_dirtied, shared_blks_hit, shared_blks_read, regexp_replace(query, '\s+', ' ', 'g') AS query
    FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY total_exec_time DESC) TO STDOUT CSV HEADER" >"$2"
}

# bench_fresh_db <name>: drops and creates database <name> on the private server; prints its DSN.
bench_fresh_db() {
  local name="$1"
  # Dropped as the superuser: FORCE must be able to end any session still in it (autovacuum included).
  bench_pg_super -q -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null
  psql "$BENCH_PG_DSN" -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE $name" >/dev/null
  echo "${BENCH_PG_DSN%/*}/$name"
}

# Superuser psql on the private server (for settings and statistics only).
bench_pg_super() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- psql -h "$BENCH_PG_DATA" -p "$BENCH_PG_PORT" -U postgres "$@")
  else
    psql -h "$BENCH_PG_DATA" -p "$BENCH_PG_PORT" -U postgres "$@"
  fi
}

# bench_start <name> <run dir> <command...>: background process, output in <run dir>/<name>.log.
bench_start() {
  local name="$1" dir="$2"; shift 2
  "$@" >>"$dir/$name.log" 2>&1 &
  local pid=$!
  BENCH_PIDS+=("$pid")
  echo "$pid" >"$dir/$name.pid"
}

# bench_stop <pid> [seconds]: SIGTERM, then SIGKILL after the grace time.
bench_stop() {
  local pid="$1" grace="${2:-20}"
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((grace * 10))); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  bench_log "pid $pid did not stop in ${grace} s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
}

bench_stop_all() {
  local pid
  for pid in "${BENCH_PIDS[@]}"; do bench_stop "$pid" 20; done
  BENCH_PIDS=()
}

# bench_cleanup: for `trap bench_cleanup EXIT`: stops the processes this run started, then the private
# PostgreSQL if this run started it. Signals are ignored meanwhile, so a second Ctrl-C cannot cut it short.
bench_cleanup() {
  trap '' INT TERM HUP
  bench_stop_all
  if ((BENCH_PG_STARTED)); then
    "$BENCH_ROOT/scripts/pg" down --name "$BENCH_PG" >/dev/null 2>&1 || true
    BENCH_PG_STARTED=0
  fi
}

# bench_traps: bench_cleanup at exit, also on SIGINT, SIGTERM and SIGHUP (bash would otherwise die of
# SIGTERM without running the EXIT trap, and carry on after a SIGINT sent to it alone). Waits in the
# scripts use bench_sleep / bench_sleep_until, which a signal interrupts at once.
bench_traps() {
  trap bench_cleanup EXIT
  trap 'bench_log "interrupted (SIGINT): stopping what this run started"; exit 130' INT
  trap 'bench_log "interrupted (SIGTERM): stopping what this run started"; exit 143' TERM
  trap 'exit 129' HUP
}

# bench_sleep <seconds> / bench_sleep_until <epoch ms>: sleeps that a trapped signal interrupts (a
# foreground sleep would delay the trap until it ends).
bench_sleep() {
  sleep "$1" &
  wait $! || true
}
bench_sleep_until() { bench_sleep "$(python3 -c "print(max(0, ($1 - $(bench_now_ms)) / 1000))")"; }

# bench_track <pid>: a helper process (sampler, profiler) that bench_cleanup stops too.
bench_track() { BENCH_PIDS+=("$1"); }

# bench_tcp_opens: TCP connections opened so far in this network namespace (ActiveOpens of /proc/net/snmp):
# the difference over a window counts connection set-ups (machine-wide: includes anything else running).
bench_tcp_opens() { awk '/^Tcp:/ && $6 ~ /^[0-9]+$/ {print $6}' /proc/net/snmp; }

# bench_load: the 1, 5 and 15 minute load averages now (the machine is shared: record them with figures).
bench_load() { cut -d' ' -f1-3 /proc/loadavg; }

bench_wait_http() {
  local url="$1" secs="${2:-60}"
  for _ in $(seq 1 $((secs * 10))); do curl -fsS -o /dev/null "$url" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# bench_start_admin <run dir> <dsn> <port> [extra flags...]: one admin, node id bench-admin, log admin.log;
# sets BENCH_ADMIN_PID.
bench_start_admin() {
  local dir="$1" dsn="$2" port="$3"; shift 3
  bench_start_admin_as admin bench-admin "$dir" "$dsn" "$port" "$@"
}

# bench_start_admin_as <name> <node id> <run dir> <dsn> <port> [extra flags...]: an admin whose log is
# <name>.log (several admins on one database need distinct node ids); waits until it answers. Sets
# BENCH_ADMIN_PID and BENCH_ADMIN_PORT: the port may be a later one than asked for, see bench_listening.
bench_start_admin_as() {
  local name="$1" node="$2" dir="$3" dsn="$4" port="$5"; shift 5
  local attempt
  for attempt in 1 2 3 4 5; do
    CRONWHEEL_DSN="$dsn" CRONWHEEL_ACCESS_TOKEN="$BENCH_TOKEN" CRONWHEEL_ADMIN_PASSWORD="$BENCH_ADMIN_PASSWORD" \
      bench_start "$name" "$dir" "$BENCH_BIN/admin/cronwheel-admin" --listen "127.0.0.1:$port" \
      --node-id "$node" --log-retention-days 0 "$@"
    BENCH_ADMIN_PID=$(cat "$dir/$name.pid") BENCH_ADMIN_PORT="$port"
    bench_listening "$BENCH_ADMIN_PID" 120 http "http://127.0.0.1:$port/api/v1/health" && return 0
    kill -0 "$BENCH_ADMIN_PID" 2>/dev/null && break
    bench_log "$name could not listen on port $port (attempt $attempt): trying the next free port"
    port=$(bench_free_port $((port + 1)))
  done
  tail -n 20 "$dir/$name.log" >&2
  bench_die "$name did not start"
}

# bench_listening <pid> <seconds> http <url> | tcp <port> | log <file> <pattern>: until the process answers
# (an HTTP 2xx, a TCP connection, a line in its log); 1 at once if it exits, or after <seconds>. Ports are
# chosen free (bench_free_port), but one in the kernel's ephemeral range (32768-60999 here) can still be
# taken by a client's socket before the server binds it: the start-up functions then retry on the next.
bench_listening() {
  local pid="$1" secs="$2" how="$3"
  for _ in $(seq 1 $((secs * 10))); do
    case "$how" in
      http) curl -fsS -o /dev/null -m 2 "$4" 2>/dev/null && return 0 ;;
      tcp) (exec 3<>"/dev/tcp/127.0.0.1/$4") 2>/dev/null && return 0 ;;
      log) grep -q "$5" "$4" 2>/dev/null && return 0 ;;
    esac
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# bench_admin_urls <port...>: the admins' base URLs, comma-separated (executors try them in this order).
bench_admin_urls() {
  local p out=""
  for p in "$@"; do out+="${out:+,}http://127.0.0.1:$p"; done
  echo "$out"
}

# bench_start_executor <run dir> <admin port | admin URLs> <executor port> [extra flags...]: the
# cronwheel-executor, log executor.log; waits until it accepts connections. Sets BENCH_EXECUTOR_PID and
# BENCH_EXECUTOR_PORT (a later port if the one asked for was taken meanwhile).
bench_start_executor() {
  local dir="$1" admins="$2" eport="$3"; shift 3
  [[ "$admins" == http* ]] || admins="http://127.0.0.1:$admins"
  local log_dir="${BENCH_EXECUTOR_LOG_DIR:-$dir/executor-logs}"  # e.g. a tmpfs, to see what the disk costs
  mkdir -p "$log_dir"
  local attempt
  for attempt in 1 2 3 4 5; do
    CRONWHEEL_ACCESS_TOKEN="$BENCH_TOKEN" bench_start executor "$dir" "$BENCH_BIN/executor/cronwheel-executor" \
      --app-name "$BENCH_APP" --admin-addresses "$admins" --listen "127.0.0.1:$eport" \
      --log-dir "$log_dir" --log-retention-days 0 --log-level warn "$@"
    BENCH_EXECUTOR_PID=$(cat "$dir/executor.pid") BENCH_EXECUTOR_PORT="$eport"
    bench_listening "$BENCH_EXECUTOR_PID" 60 tcp "$eport" && return 0
    kill -0 "$BENCH_EXECUTOR_PID" 2>/dev/null && break
    bench_log "the executor could not listen on port $eport (attempt $attempt): trying the next free port"
    eport=$(bench_free_port $((eport + 1)))
  done
  tail -n 20 "$dir/executor.log" >&2
  bench_die "the executor did not start"
}

# bench_start_fake_admin <run dir>: bench/tools/fake_admin.py (answers an executor's /api/callback and
# /api/registry with {"code":200}, counts the results at GET /stats) on a free helper port; log
# fake-admin.log. Sets BENCH_FAKE_ADMIN_PID and BENCH_FAKE_ADMIN_PORT.
bench_start_fake_admin() {
  local dir="$1" port attempt
  port=$(bench_helper_port)
  for attempt in 1 2 3 4 5; do
    bench_start fake-admin "$dir" python3 "$BENCH_ROOT/bench/tools/fake_admin.py" --port "$port"
    BENCH_FAKE_ADMIN_PID=$(cat "$dir/fake-admin.pid") BENCH_FAKE_ADMIN_PORT="$port"
    bench_listening "$BENCH_FAKE_ADMIN_PID" 30 http "http://127.0.0.1:$port/stats" && return 0
    kill -0 "$BENCH_FAKE_ADMIN_PID" 2>/dev/null || ((attempt == 5)) || { port=$(bench_free_port $((port + 1))); continue; }
    break
  done
  cat "$dir/fake-admin.log" >&2
  bench_die "the fake admin did not start"
}

# bench_start_stub <run dir> <admin URLs | ""> <port> <server threads> <trace file> [app name] [extra flags...]:
# the benchmarks' minimal executor, `xxl-stub --minimal` (tests/support/xxl_stub): /run parses the body,
# writes a run-trace line and queues a success callback, nothing else; callbacks go in batches of up to 100
# from one thread (like cronwheel-executor's). Listen backlog 4096 (the kernel's SOMAXCONN, as
# cronwheel-executor's) and the given server threads, so it is not the bottleneck. Log stub.log; sets
# BENCH_STUB_PID and BENCH_STUB_PORT. With admin URLs it registers as <app name> (default $BENCH_APP).
bench_start_stub() {
  local dir="$1" admins="$2" port="$3" threads="$4" trace="$5" app="${6:-$BENCH_APP}"
  shift 5
  if (($#)); then shift; fi
  local bin="$BENCH_BIN/tests/support/xxl-stub"
  [ -x "$bin" ] || bench_die "$bin not built: scripts/build release xxl-stub"
  local args=(--minimal --host 127.0.0.1 --threads "$threads" --listen-backlog 4096
    --access-token "$BENCH_TOKEN" --trace-file "$trace")
  [ -n "$admins" ] && args+=(--admin "$admins" --app-name "$app")
  local attempt
  for attempt in 1 2 3 4 5; do
    : >"$dir/stub.log"
    bench_start stub "$dir" "$bin" --port "$port" "${args[@]}" "$@"
    BENCH_STUB_PID=$(cat "$dir/stub.pid") BENCH_STUB_PORT="$port"
    bench_listening "$BENCH_STUB_PID" 30 log "$dir/stub.log" '^listening on' && return 0
    kill -0 "$BENCH_STUB_PID" 2>/dev/null && break
    bench_log "xxl-stub could not listen on port $port (attempt $attempt): trying the next free port"
    port=$(bench_free_port $((port + 1)))
  done
  tail -n 20 "$dir/stub.log" >&2
  bench_die "xxl-stub did not start"
}

# bench_metrics <port> <file>: the admin's (or executor's) GET /metrics exposition (loopback is allowed by
# default).
bench_metrics() { curl -fsS -m 5 -o "$2" "http://127.0.0.1:$1/metrics" || bench_log "GET /metrics of port $1 failed"; }

# bench_health <port> <file>: GET /api/v1/health with its details (the scheduler's and trigger pools'
# counters), which only an ADMIN's credentials get: signs in as admin and sends the session cookie.
bench_health() {
  local cookie
  cookie=$(curl -fsS -m 5 -D - -o /dev/null -H 'Content-Type: application/json' \
    -d "{\"username\":\"admin\",\"password\":\"$BENCH_ADMIN_PASSWORD\"}" "http://127.0.0.1:$1/api/v1/auth/login" |
    sed -n 's/^[Ss]et-[Cc]ookie: \(cw_session=[^;]*\).*/\1/p')
  curl -fsS -m 5 -o "$2" -H "Cookie: $cookie" "http://127.0.0.1:$1/api/v1/health" ||
    bench_log "GET /api/v1/health of port $1 failed"
}

# bench_cpu_s <pid>: CPU seconds (user + system, all threads, ended ones included) of a process so far.
bench_cpu_s() {
  local s
  s=$(cat "/proc/$1/stat") || return 1
  s="${s##*) }"
  # Fields after the command: state is 1, utime 12, stime 13 (fields 14 and 15 of stat(5)).
  awk -v tick="$(getconf CLK_TCK)" '{ printf "%.3f\n", ($12 + $13) / tick }' <<<"$s"
}

# bench_await_registered <dsn>: until the executor's registry row exists (the admin routes to it within
# its 1 s registry refresh after that).
bench_await_registered() {
  local dsn="$1"
  for _ in $(seq 1 300); do
    [ "$(psql "$dsn" -Atc "SELECT count(*) FROM executor_registry WHERE registry_key = '$BENCH_APP'" 2>/dev/null)" \
      -ge 1 ] 2>/dev/null && { sleep 1.5; return 0; }
    sleep 0.1
  done
  bench_die "the executor did not register"
}

# bench_add_group <dsn>: the AUTO group of the bench executor; prints its id.
bench_add_group() {
  psql "$1" -Atq -v ON_ERROR_STOP=1 -c "INSERT INTO job_group (app_name, title, address_type, created_ms, updated_ms)
    VALUES ('$BENCH_APP', 'benchmark executors', 'AUTO', 0, 0)
    ON CONFLICT (app_name) DO UPDATE SET title = EXCLUDED.title RETURNING id"
}

# bench_add_jobs <dsn> <group> <count> <cron> <first fire ms> [enabled true|false]: noopJobHandler jobs.
bench_add_jobs() {
  local dsn="$1" group="$2" n="$3" cron="$4" first="$5" enabled="${6:-true}"
  psql "$dsn" -q -v ON_ERROR_STOP=1 -c "WITH ins AS (
      INSERT INTO job (group_id, description, schedule_type, schedule_conf, time_zone, handler, route_strategy,
                       glue_updated_ms, enabled, created_ms, updated_ms)
      SELECT $group, 'bench ' || i, 'CRON', '$cron', 'UTC', 'noopJobHandler', 'FIRST', 0, $enabled, 0, 0
        FROM generate_series(1, $n) AS i RETURNING id)
    INSERT INTO job_schedule (job_id, next_fire_ms) SELECT id, CASE WHEN $enabled THEN $first ELSE 0 END FROM ins" \
    >/dev/null
}

# bench_machine: one line describing the machine and its load now.
bench_machine() {
  local model load
  model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
  load=$(bench_load)
  echo "nproc=$(nproc) cpu='$model' load=$load kernel=$(uname -r)"
}
