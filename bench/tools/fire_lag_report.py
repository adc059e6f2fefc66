#!/usr/bin/env python3
"""Figures of one fire-lag run: every scheduled instant of the window against the executor's run trace.

  fire_lag_report.py --trace run-trace.txt --log job_log.csv --jobs jobs.txt --samples samples.csv
                     --t0 MS --seconds S --n N [--label L] [--json-out results.jsonl]

--log is `id,job_id,scheduled_ms,trigger_type,dispatch_ms,trigger_ms,trigger_code` of the CRON rows whose
scheduled instant is in the window; --jobs the job ids, one a line. The window is [t0, t0 + S s).

Lag = the executor's receive time of /run (trace) - the scheduled instant. An instant is
  missed     if no /run for it reached the executor (the reason is split: no row written, row never
             claimed, claimed too late and skipped as a misfire, trigger failed, sent but not in the trace);
  duplicate  for every extra /run of the same (job, instant) beyond the first;
  on time    if its first /run arrived no earlier than the instant and at most ON_TIME_MS after it.
Percentiles are nearest-rank over the first arrival of every instant that arrived.
"""
import argparse
import csv
import json
import math
import sys
from collections import defaultdict

ON_TIME_MS = 100


def pct(sorted_values, p):
    if not sorted_values:
        return float("nan")
    k = max(0, math.ceil(p / 100.0 * len(sorted_values)) - 1)
    return sorted_values[k]


def cpu_over(samples, name, t0, t1):
    rows = [r for r in samples if r[1] == name]
    if not rows:
        return float("nan"), 0
    before = [r for r in rows if r[0] <= t0] or rows[:1]
    after = [r for r in rows if r[0] >= t1] or rows[-1:]
    a, b = before[-1], after[0]
    secs = (b[0] - a[0]) / 1000.0
    used = b[2] - a[2]
    rss = max((r[3] for r in rows if t0 <= r[0] <= t1), default=0)
    return (100.0 * used / secs if secs > 0 else float("nan")), rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--t0", type=int, required=True)
    ap.add_argument("--seconds", type=int, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--load-start", default="", help="/proc/loadavg (1 5 15 min) when the window began")
    ap.add_argument("--load-end", default="", help="/proc/loadavg when it ended")
    ap.add_argument("--tcp-opens", type=int, default=-1, help="TCP connections opened in the window")
    ap.add_argument("--json-out")
    a = ap.parse_args()
    t0, t1 = a.t0, a.t0 + a.seconds * 1000

    jobs = [int(x) for x in open(a.jobs).read().split()]
    rows = {}  # log id -> (job, scheduled, dispatch_ms, trigger_ms, code)
    by_instant = defaultdict(list)
    with open(a.log) as f:
        for r in csv.DictReader(f):
            lid = int(r["id"])
            rec = (int(r["job_id"]), int(r["scheduled_ms"]), int(r["dispatch_ms"]), int(r["trigger_ms"]),
                   int(r["trigger_code"]))
            rows[lid] = rec
            by_instant[(rec[0], rec[1])].append(lid)

    received = defaultdict(list)  # log id -> receive times
    with open(a.trace) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3:
                continue
            lid = int(parts[0])
            if lid in rows:
                received[lid].append(int(parts[2]))

    expected = [(j, s) for j in jobs for s in range(t0, t1, 1000)]
    lags, early, dup = [], 0, 0
    missed = {"no_row": 0, "not_claimed": 0, "skipped_late": 0, "trigger_failed": 0, "not_in_trace": 0}
    queue_wait, http = [], []  # scheduled -> trigger start, trigger start -> received
    per_second_max = defaultdict(int)
    for inst in expected:
        lids = by_instant.get(inst, [])
        if not lids:
            missed["no_row"] += 1
            continue
        times = sorted(t for lid in lids for t in received[lid])
        if not times:
            rec = rows[lids[0]]
            if rec[2] == 0:
                missed["not_claimed"] += 1
            elif rec[4] == 0:
                missed["skipped_late"] += 1  # claimed more than the misfire threshold late: skipped
            elif rec[4] != 200:
                missed["trigger_failed"] += 1
            else:
                missed["not_in_trace"] += 1
            continue
        dup += len(times) - 1
        lag = times[0] - inst[1]
        if lag < 0:
            early += 1
        lags.append(lag)
        rec = rows[lids[0]]
        if rec[3] > 0:
            queue_wait.append(rec[3] - inst[1])
            http.append(times[0] - rec[3])
        per_second_max[inst[1]] = max(per_second_max[inst[1]], lag)
    lags.sort()
    queue_wait.sort()
    http.sort()
    n_missed = sum(missed.values())
    on_time = sum(1 for x in lags if 0 <= x <= ON_TIME_MS)
    within50 = sum(1 for x in lags if 0 <= x <= 50)

    samples = []
    with open(a.samples) as f:
        for r in csv.DictReader(f):
            samples.append((int(r["ms"]), r["name"], float(r["cpu_s"]), int(r["rss_kb"])))
    admin_cpu, admin_rss = cpu_over(samples, "admin", t0, t1)
    exec_cpu, exec_rss = cpu_over(samples, "executor", t0, t1)
    pg_cpu, _ = cpu_over(samples, "postgres", t0, t1)
    burst = sorted(per_second_max.values())

    res = {
        "label": a.label, "n": a.n, "seconds": a.seconds, "expected": len(expected),
        "arrived": len(lags), "on_time_pct": 100.0 * on_time / len(expected) if expected else 0,
        "within_50ms_pct": 100.0 * within50 / len(expected) if expected else 0,
        "p50_ms": pct(lags, 50), "p90_ms": pct(lags, 90), "p99_ms": pct(lags, 99), "max_ms": lags[-1] if lags else None,
        "early": early, "missed": n_missed, "missed_detail": missed, "duplicates": dup,
        "queue_wait_p50_ms": pct(queue_wait, 50), "queue_wait_p99_ms": pct(queue_wait, 99),
        "http_p50_ms": pct(http, 50), "http_p99_ms": pct(http, 99),
        "burst_end_p50_ms": pct(burst, 50), "burst_end_max_ms": burst[-1] if burst else None,
        "admin_cpu_pct": round(admin_cpu, 1), "admin_rss_mb": round(admin_rss / 1024, 1),
        "executor_cpu_pct": round(exec_cpu, 1), "executor_rss_mb": round(exec_rss / 1024, 1),
        "postgres_cpu_pct": round(pg_cpu, 1),
        "load_start": a.load_start, "load_end": a.load_end, "tcp_opens": a.tcp_opens,
    }
    print(f"fire-lag {a.label} N={a.n}: {len(expected)} instants in {a.seconds} s; "
          f"on time (0..{ON_TIME_MS} ms) {res['on_time_pct']:.2f}%, within 50 ms {res['within_50ms_pct']:.2f}%; "
          f"lag p50 {res['p50_ms']} ms, p90 {res['p90_ms']} ms, p99 {res['p99_ms']} ms, max {res['max_ms']} ms; "
          f"missed {n_missed} {missed}, duplicates {dup}, early {early}")
    print(f"  parts: scheduled->trigger start p50 {res['queue_wait_p50_ms']} p99 {res['queue_wait_p99_ms']} ms; "
          f"trigger start->executor p50 {res['http_p50_ms']} p99 {res['http_p99_ms']} ms; "
          f"last fire of a second: p50 {res['burst_end_p50_ms']} ms, max {res['burst_end_max_ms']} ms")
    print(f"  CPU (100% = one core): admin {res['admin_cpu_pct']}%, executor {res['executor_cpu_pct']}%, "
          f"PostgreSQL {res['postgres_cpu_pct']}%; RSS admin {res['admin_rss_mb']} MiB, "
          f"executor {res['executor_rss_mb']} MiB; load average {a.load_start} -> {a.load_end}")
    print(f"  TCP connections opened in the window (machine-wide): {a.tcp_opens} "
          f"({a.tcp_opens / max(1, len(expected)):.3f} per fire)")
    if a.json_out:
        with open(a.json_out, "a") as f:
            f.write(json.dumps(res) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
