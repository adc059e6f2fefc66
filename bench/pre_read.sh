#!/usr/bin/env bash
# pre-read: the admin's schedule scan with 1,000,000 jobs in PostgreSQL, 10,000 of them due every second,
# against the same scan of a table holding only the 10,000 (same run, interleaved second by second); the
# plan of the pre-read query (EXPLAIN (ANALYZE, BUFFERS)). See bench/admin/bench_pre_read.cpp.
#   bench/pre_read.sh [--jobs 1000000] [--due 10000] [--seconds 20] [--warmup 3] [--limit 3000]
# (scripts/bench pre-read builds bench_pre_read first.) Environment: BENCH_PG_FAST=1 measures on a
# PostgreSQL without fsync; BENCH_PGSS=0 leaves pg_stat_statements out (by default it is loaded and the
# big database's statements, fill included, are listed after the run: where a scan's time goes).
# Results: bench/out/pre-read/pre-read.txt, pg_stat_statements.txt.
set -euo pipefail
BENCH_PGSS="${BENCH_PGSS:-1}"
. "$(dirname "$0")/lib.sh"
bin="$BENCH_BIN/bench/admin/bench_pre_read"
[ -x "$bin" ] || bench_die "$bin not built: scripts/build release bench_pre_read"
out="$BENCH_OUT/pre-read"; mkdir -p "$out"
bench_traps
bench_pg_up
big=$(bench_fresh_db cwbench_preread)
ref=$(bench_fresh_db cwbench_preread_ref)
bench_pgss_reset cwbench_preread
{
  echo "machine: $(bench_machine); PostgreSQL fsync=$(psql "$BENCH_PG_DSN" -Atc 'SHOW fsync')"
  "$bin" --dsn "$big" --reference-dsn "$ref" "$@"
  echo "load after: $(bench_load)"
} 2>&1 | tee "$out/pre-read.txt"
bench_pgss_dump cwbench_preread "$out/pg_stat_statements.txt"
if [ -s "$out/pg_stat_statements.txt" ]; then
  echo "statements on the big database (pg_stat_statements; the two fill INSERTs and VACUUM are the set-up):"
  cat "$out/pg_stat_statements.txt"
fi
# The databases hold a million rows: drop them rather than leave them in .pg/bench.
# As the superuser: FORCE must be able to end any session still in them (autovacuum included).
bench_pg_super -qc "DROP DATABASE IF EXISTS cwbench_preread WITH (FORCE)" \
  -c "DROP DATABASE IF EXISTS cwbench_preread_ref WITH (FORCE)" >/dev/null
