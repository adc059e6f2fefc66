#!/usr/bin/env bash
# guard: a short run of the three benchmarks the fire path's changes move, against the figures committed in
# bench/baselines/guard.json, saying which moved beyond the noise the run measured (issue 47: a regression
# of the executor's CPU per /run went unseen for ten days). About 5 minutes. Not in CI: timings are
# compared here, on one box, never asserted in a test. Run it before resolving any issue that touches the
# admin's dispatch, the executor or the store (docs/performance.md, "bench guard").
#
#   bench/guard.sh [--save] [--label TEXT]
#
# 1. executor-cpu, 3 rounds of 4 s (the ratio of each round);
# 2. dispatch, 2,000 jobs, 3 bursts, wrk 4 s (the ratio of each burst's steady rate to wrk's);
# 3. fire-lag, N = 5,000 every-second jobs on cronwheel-executor, 2 runs of 15 s (p99 of each; missed and
#    duplicate fires).
# Then bench/tools/guard_compare.py: each figure's median against the baseline's, allowed to differ by the
# larger of the two runs' spreads and a floor; exit 1 when one moved the wrong way. --save records this
# run's figures as the new baselines (commit bench/baselines/guard.json with the change that moved them,
# saying why in docs/performance.md).
# Environment: BENCH_BIN runs other binaries (a before/after pair, as the other benchmarks).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

save=0; label=""
while (($#)); do
  case "$1" in
    --save) save=1; shift ;;
    --label) (($# >= 2)) || bench_die "guard.sh: --label needs a value"; label="$2"; shift 2 ;;
    *) bench_die "guard.sh: unknown option '$1' (valid: --save --label)" ;;
  esac
done
((${BENCH_CHECK_ONLY:-0})) && exit 0

here="$(dirname "$0")"
start=$(date +%s)
bench_log "guard: executor-cpu"
bash "$here/executor_cpu.sh" --repeat 3 --seconds 4 --warmup 1 > /dev/null
bench_log "guard: dispatch"
bash "$here/dispatch.sh" --jobs 2000 --bursts 3 --wrk-seconds 4 > /dev/null
bench_log "guard: fire-lag"
bash "$here/fire_lag.sh" --n 5000 --seconds 15 --warmup 3 --repeat 2 --executor cronwheel > /dev/null
bench_log "guard: the three took $(($(date +%s) - start)) s"
args=(--out "$BENCH_OUT")
((save)) && args+=(--save --label "${label:-$(git -C "$BENCH_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}")
python3 "$BENCH_ROOT/bench/tools/guard_compare.py" "${args[@]}" | tee "$BENCH_OUT/guard-report.txt"
exit "${PIPESTATUS[0]}"
